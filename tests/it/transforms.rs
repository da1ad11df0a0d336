//! `--coalesce` and `--truncate-shell` beyond the fixture snapshots.

use crate::common;

use std::io::Read;

use common::{cstream, events, fixtures_dir};

/// Hands out one line per read, like an agent writing to a pipe.
struct LinePerRead<'a>(&'a [u8]);

impl Read for LinePerRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self
            .0
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.0.len(), |i| i + 1);
        let n = n.min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn convert_with(args: &[&str], input: impl Read) -> String {
    let mut out = Vec::new();
    cstream::convert(input, &mut out, &common::config(args)).unwrap();
    String::from_utf8(out).unwrap()
}

fn types(out: &str) -> Vec<String> {
    events(out)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn burst_merges_what_was_read_together_and_stays_live_otherwise() {
    let input = std::fs::read(fixtures_dir().join("cursor/partial-output.jsonl")).unwrap();
    let args = ["--to", "events", "--coalesce=burst"];
    // All at once: each run of adjacent deltas becomes one event.
    let together = convert_with(&args, &input[..]);
    let t = types(&together);
    assert_eq!(
        t.iter().filter(|t| *t == "text_delta").count(),
        2,
        "{together}"
    );
    assert_eq!(t.iter().filter(|t| *t == "thinking_delta").count(), 1);
    // One line per read: nothing waits for the next line, so nothing merges.
    let live = convert_with(&args, LinePerRead(&input));
    let plain = convert_with(&["--to", "events"], &input[..]);
    assert_eq!(live, plain);
    // Merging loses no text.
    let text = |out: &str| -> String {
        events(out)
            .iter()
            .filter(|e| e["type"] == "text_delta")
            .map(|e| e["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(text(&together), text(&plain));
}

#[test]
fn whole_gives_whole_events_and_drops_nothing_else() {
    let path = fixtures_dir().join("cursor/partial-output.jsonl");
    let out = cstream(
        &["--to", "events", "--coalesce", path.to_str().unwrap()],
        b"",
    )
    .out();
    assert_eq!(
        types(&out),
        [
            "session_started",
            "user_message",
            "thinking",
            "assistant_message",
            "tool_call",
            "assistant_message",
            "usage_delta",
            "result"
        ]
    );
    let ev = events(&out);
    assert_eq!(ev[3]["text"], "Let me count them.\n\n");
    assert_eq!(ev[4]["command"], "grep -rn TODO src/ | wc -l");
    assert_eq!(ev[4]["exitCode"], 0);
    assert_eq!(ev[4]["output"], "7\n");
    assert_eq!(ev[2]["durationMs"], 800);
}

#[test]
fn coalesce_needs_events_output() {
    let r = cstream(&["--coalesce", "--to", "text"], b"");
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("--coalesce works with --to events only"),
        "{}",
        r.stderr
    );
    // `--coalesce FILE` does not take the file as its mode: the file is
    // read (and, missing, reported by its name).
    let r = cstream(
        &["--to", "events", "--coalesce", "/nonexistent/run.jsonl"],
        b"",
    );
    assert!(
        r.stderr.contains("cstream: error: /nonexistent/run.jsonl:"),
        "{}",
        r.stderr
    );
}

#[test]
fn truncating_twice_is_truncating_once() {
    let path = fixtures_dir().join("events/truncate-shell_live-and-completed.jsonl");
    let p = path.to_str().unwrap();
    let once = cstream(&["--to", "events", "--truncate-shell", "25", p], b"");
    let twice = cstream(
        &[
            "--to",
            "events",
            "--truncate-shell",
            "25",
            "--from",
            "events",
        ],
        &once.stdout,
    );
    assert_eq!(twice.out(), once.out());
    // Live output stops at the cap (plus one marker per call).
    let live: usize = events(&once.out())
        .iter()
        .filter(|e| {
            e["type"] == "shell_output_delta" && !e["text"].as_str().unwrap().contains("[cstream:")
        })
        .map(|e| e["text"].as_str().unwrap().len())
        .sum();
    assert_eq!(
        live,
        25 + 24,
        "two calls: 25 bytes, and 24 (the cap falls inside an é)"
    );
}

/// A running shell call that re-sends its whole output so far as `tool_call`
/// updates (the O(n²) pattern bench/gen_stream.py models for cursor-agent):
/// the events carry each line of output about twice (streamed once, and
/// once in the completion), not once per update.
#[test]
fn cumulative_cursor_updates_give_output_linear_in_the_real_output() {
    let sid = "cum";
    let mut input = String::new();
    input.push_str(&format!(
        r#"{{"type":"system","subtype":"init","session_id":"{sid}","model":"m","cwd":"/w"}}"#
    ));
    input.push('\n');
    let call = |sub: &str, out: &str, done: bool| {
        let result = if done {
            format!(
                r#","result":{{"success":{{"exitCode":0,"stdout":{o},"stderr":"","interleavedOutput":{o}}}}}"#,
                o = serde_json::to_string(out).unwrap()
            )
        } else if out.is_empty() {
            String::new()
        } else {
            format!(
                r#","result":{{"success":{{"stdout":{o},"interleavedOutput":{o}}}}}"#,
                o = serde_json::to_string(out).unwrap()
            )
        };
        format!(
            r#"{{"type":"tool_call","subtype":"{sub}","call_id":"c1","tool_call":{{"shellToolCall":{{"args":{{"command":"job"}}{result}}}}},"session_id":"{sid}"}}"#
        ) + "\n"
    };
    input.push_str(&call("started", "", false));
    let mut out = String::new();
    for i in 0..300 {
        out.push_str(&format!("line {i} of the job\n"));
        input.push_str(&call("progress", &out, false));
    }
    input.push_str(&call("completed", &out, true));
    input.push_str(&format!(
        r#"{{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"{sid}"}}"#
    ));
    input.push('\n');
    let events_out = cstream(&["--to", "events"], input.as_bytes()).out();
    assert!(input.len() > 100 * out.len(), "the input is quadratic");
    // Linear: each update adds its new line once plus one event envelope
    // (~150 bytes); the input re-sends everything every time.
    assert!(
        events_out.len() < 3 * out.len() + 150 * 300 + 4096,
        "{} bytes of events for {} bytes of output",
        events_out.len(),
        out.len()
    );
    // The streamed deltas rebuild the output exactly.
    let streamed: String = events(&events_out)
        .iter()
        .filter(|e| e["type"] == "shell_output_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(streamed, out);
    // --no-dedupe keeps every snapshot.
    let raw = cstream(&["--to", "events", "--no-dedupe"], input.as_bytes()).out();
    assert!(raw.len() > 100 * out.len());
}

/// A completion whose start was cut off (a capture cut at its head) gets one
/// start, made from the args it repeats; a call that did start gets none.
#[test]
fn a_completion_gets_a_start_only_when_its_call_is_not_open() {
    let started = r#"{"type":"tool_call","subtype":"started","call_id":"a","tool_call":{"shellToolCall":{"args":{"command":"ls"}}},"timestamp_ms":5}"#;
    let done = |id: &str| {
        format!(
            r#"{{"type":"tool_call","subtype":"completed","call_id":"{id}","tool_call":{{"shellToolCall":{{"args":{{"command":"ls"}},"result":{{"success":{{"exitCode":0}}}}}},"startedAtMs":"3"}},"timestamp_ms":9}}"#
        )
    };
    // Started and completed; then a completion whose start was cut off
    // (timed by its `startedAtMs`); then the same id completed again: a
    // call completes once, so the repeat is dropped (with a warning).
    let input = [started.to_owned(), done("a"), done("b"), done("b")].join("\n");
    let out = convert_with(&["--to", "events"], input.as_bytes());
    let calls: Vec<(String, String, Option<i64>)> = events(&out)
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("tool_call"))
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["callId"].as_str().unwrap().to_owned(),
                e["ts"].as_i64(),
            )
        })
        .collect();
    let want = [
        ("tool_call_started", "a", Some(5)),
        ("tool_call_completed", "a", Some(9)),
        ("tool_call_started", "b", Some(3)),
        ("tool_call_completed", "b", Some(9)),
    ];
    let want: Vec<_> = want
        .iter()
        .map(|(t, c, ts)| (t.to_string(), c.to_string(), *ts))
        .collect();
    assert_eq!(calls, want, "{out}");
    let b = events(&out)
        .into_iter()
        .find(|e| e["type"] == "tool_call_started" && e["callId"] == "b")
        .unwrap();
    assert_eq!(b["command"], "ls");
    assert_eq!(b["args"], serde_json::json!({"command": "ls"}));
}

/// `--line-buffered` says when output is flushed, never what it is: for
/// every fixture, `--coalesce=burst` writes the same events with and without
/// it, whether the input arrives all at once or one line per read.
#[test]
fn burst_events_do_not_depend_on_line_buffering() {
    for path in common::fixtures() {
        let input = std::fs::read(&path).unwrap();
        let extra = common::fixture_args(&path);
        let args = |line_buffered: bool| -> Vec<&str> {
            let mut a = vec!["--to", "events", "--coalesce=burst"];
            if line_buffered {
                a.push("--line-buffered");
            }
            a.extend(extra.iter().map(String::as_str));
            a
        };
        let together = convert_with(&args(false), &input[..]);
        assert_eq!(
            convert_with(&args(true), &input[..]),
            together,
            "{}: read all at once",
            path.display()
        );
        assert_eq!(
            convert_with(&args(true), LinePerRead(&input)),
            convert_with(&args(false), LinePerRead(&input)),
            "{}: one line per read",
            path.display()
        );
    }
    // The fixture written for this has runs to merge: the check is not empty.
    let burst = fixtures_dir().join("cursor/burst_delta-runs.jsonl");
    let input = std::fs::read(burst).unwrap();
    let merged = convert_with(
        &["--to", "events", "--coalesce=burst", "--line-buffered"],
        &input[..],
    );
    let plain = convert_with(&["--to", "events"], &input[..]);
    assert!(events(&merged).len() < events(&plain).len(), "{merged}");
}

/// Items before an init join the session it opens only when they come with
/// it: read together they do; after a pause in the input (a live pipe that
/// waits), they are written at once as a session of their own, so a stream
/// joined mid-run is never held back waiting for an init.
#[test]
fn events_before_init_join_it_only_when_read_together() {
    let input = std::fs::read(fixtures_dir().join("cursor/events-before-init.jsonl")).unwrap();
    let args = ["--to", "events", "--from", "cursor"];
    let starts = |out: &str| -> Vec<serde_json::Value> {
        events(out)
            .into_iter()
            .filter(|e| e["type"] == "session_started")
            .collect()
    };
    let together = convert_with(&args, &input[..]);
    let s = starts(&together);
    assert_eq!(s.len(), 1, "{together}");
    assert_eq!(s[0]["model"], "Auto");
    assert_eq!(types(&together)[1], "user_message", "{together}");
    let live = convert_with(&args, LinePerRead(&input));
    let s = starts(&live);
    assert_eq!(s.len(), 2, "{live}");
    assert_eq!(
        types(&live)[..2],
        ["session_started", "user_message"],
        "{live}"
    );
    assert_eq!(s[0]["sessionId"], s[1]["sessionId"]);
    // Nothing is lost or reordered either way, only the session boundary.
    let text = |out: &str| -> Vec<String> {
        events(out)
            .iter()
            .filter(|e| e["type"] != "session_started")
            .map(|e| e.to_string())
            .collect()
    };
    assert_eq!(text(&live), text(&together));
}

/// A completion the agent sends after its session's result (Claude Code's
/// `tool_result` after `result`, Codex `item.completed` after
/// `turn.completed`) is the call's real end: it is attached to the call,
/// not replaced by a cancellation, and only a repeat of a finished call is
/// dropped, with one warning.
#[test]
fn a_completion_after_the_result_is_attached_to_its_call() {
    for (fixture, late) in [
        (
            "claude/tool-results-with-tool-use-result_late-and-repeated.jsonl",
            "toolu_T1",
        ),
        (
            "codex/late-completion_resumed-and-new-thread.jsonl",
            "item_0",
        ),
    ] {
        let run = crate::common::cstream_file(&["--to", "events"], &fixtures_dir().join(fixture));
        let evs = events(&run.out());
        let ends: Vec<_> = evs
            .iter()
            .filter(|e| e["type"] == "tool_call_completed" && e["callId"] == late)
            .collect();
        assert_eq!(ends.len(), 1, "{fixture}: {ends:?}");
        assert_eq!(ends[0]["ok"], true, "{fixture}: {}", ends[0]);
        assert!(ends[0].get("cancelled").is_none(), "{fixture}: {}", ends[0]);
        let result_at = evs.iter().position(|e| e["type"] == "result").unwrap();
        let end_at = evs.iter().position(|e| std::ptr::eq(e, ends[0])).unwrap();
        assert!(
            end_at > result_at,
            "{fixture}: the late completion keeps its place"
        );
        assert_eq!(
            run.stderr.matches("warning").count(),
            1,
            "{fixture}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("which already completed: dropped"),
            "{fixture}"
        );
    }
}
