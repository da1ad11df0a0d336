//! The input dialects end to end: detection, the real captures in
//! `../shared/corpus` (when that folder exists), and the cumulative-output
//! dedupe on a generated stream.

use crate::common;

use std::collections::HashMap;

use common::{corpus, cstream, cstream_file, events};
use serde_json::{Value, json};

/// What a real capture must give: the dialect detected, text rebuilt equal
/// to the result's text (where the dialect has one), every tool start paired
/// with exactly one completion, and no `unknown` event.
fn check_capture(path: &std::path::Path, dialect: &str) -> String {
    let run = cstream_file(&["--to", "events"], path);
    assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
    assert!(run.stderr.is_empty(), "{}: {}", path.display(), run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["type"], "session_started", "{}", path.display());
    assert_eq!(evs[0]["dialect"], dialect, "{}", path.display());
    let mut text = String::new();
    let mut starts: HashMap<String, usize> = HashMap::new();
    let mut ends: HashMap<String, usize> = HashMap::new();
    let mut result: Option<Value> = None;
    for e in &evs {
        match e["type"].as_str().unwrap() {
            "text_delta" => text.push_str(e["text"].as_str().unwrap()),
            "tool_call_started" => *starts.entry(e["callId"].to_string()).or_default() += 1,
            "tool_call_completed" => {
                assert_ne!(e["cancelled"], true, "{}: {e}", path.display());
                *ends.entry(e["callId"].to_string()).or_default() += 1;
            }
            "unknown" => panic!("{}: unknown event {e}", path.display()),
            "result" => result = Some(e.clone()),
            _ => {}
        }
    }
    assert_eq!(
        starts,
        ends,
        "{}: starts and completions differ",
        path.display()
    );
    assert!(starts.values().all(|n| *n == 1), "{}", path.display());
    let result = result.unwrap_or_else(|| panic!("{}: no result", path.display()));
    if let Some(t) = result["text"].as_str() {
        assert!(
            text.ends_with(t),
            "{}: rebuilt text {text:?} does not end with the result {t:?}",
            path.display()
        );
    }
    format!(
        "{}: {} tool call(s) paired, text {} chars, ok={}",
        path.file_name().unwrap().to_string_lossy(),
        starts.len(),
        text.len(),
        result["ok"]
    )
}

#[test]
fn real_claude_code_captures() {
    for p in corpus("claude-code") {
        eprintln!("{}", check_capture(&p, "claude"));
    }
}

#[test]
fn real_codex_captures() {
    for p in corpus("codex") {
        eprintln!("{}", check_capture(&p, "codex"));
    }
}

#[test]
fn codex_failure_message_shows_once() {
    let lines = [
        json!({"type":"thread.started","thread_id":"t"}),
        json!({"type":"turn.started"}),
        json!({"type":"error","message":"boom"}),
        json!({"type":"turn.failed","error":{"message":"boom"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = cstream(&["--to", "events"], input.as_bytes()).out();
    assert_eq!(out.matches("boom").count(), 1, "{out}");
    assert!(
        out.contains(r#""type":"result","sessionId":"t","ok":false,"error":"boom""#),
        "{out}"
    );
    // A different message is not swallowed, and a lone error at the end is kept.
    let input = "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"error\",\"message\":\"retrying\"}\n";
    let out = cstream(&["--to", "events"], input.as_bytes()).out();
    assert!(
        out.contains(r#""type":"error","sessionId":"t","message":"retrying","fatal":false"#),
        "{out}"
    );
}

#[test]
fn every_dialect_is_detected_from_its_first_lines() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"type":"system","subtype":"init","apiKeySource":"login","session_id":"s","model":"m","permissionMode":"default"}"#,
            "cursor",
        ),
        (
            r#"{"type":"system","subtype":"init","session_id":"s","tools":["Bash"]}"#,
            "claude",
        ),
        (
            r#"{"type":"system","subtype":"hook_started","hook_name":"x","session_id":"s"}
{"type":"system","subtype":"init","session_id":"s","cwd":"/"}"#,
            "claude",
        ),
        (r#"{"type":"thread.started","thread_id":"t"}"#, "codex"),
        (
            r#"{"event":"init","conversation_id":"c","init":{"cwd":"/"}}"#,
            "antigravity",
        ),
        (
            r#"{"event":"step_update","step_update":{"conversation_id":"c","step_index":0,"state":"DONE","step_type":"user_input","text_delta":"hi"}}"#,
            "antigravity",
        ),
        (
            r#"{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-07-17T09:00:00Z","content":"hi"}"#,
            "antigravity-transcript",
        ),
        (
            r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}"#,
            "pi",
        ),
        // A Pi entry alone (its header cut off): Gemini's rule would take it.
        (
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#,
            "pi",
        ),
        // OpenCode's live line, an export's head, one of its messages.
        (
            r#"{"type":"text","timestamp":1,"sessionID":"ses_1","part":{"type":"text","text":"hi"}}"#,
            "opencode",
        ),
        (
            r#"{"info":{"id":"ses_1","projectID":"p","directory":"/","title":"t","time":{"created":1}}}"#,
            "opencode",
        ),
        (
            r#"{"info":{"role":"user","time":{"created":1}},"parts":[{"type":"text","text":"hi"}]}"#,
            "opencode",
        ),
        (r#"{"id":"0","msg":{"type":"task_started"}}"#, "codex"),
        // GitHub Copilot CLI: a saved session's first line, a live line
        // without the envelope's ids, and the live output's last line.
        (
            r#"{"type":"session.start","data":{"sessionId":"c","version":1,"producer":"copilot-agent","copilotVersion":"1.0.88","startTime":"2026-01-01T00:00:00Z","context":{"cwd":"/"}},"id":"e1","timestamp":"2026-01-01T00:00:00Z","parentId":null}"#,
            "copilot",
        ),
        (
            r#"{"type":"assistant.message_delta","data":{"messageId":"m","deltaContent":"hi"}}"#,
            "copilot",
        ),
        (
            r#"{"type":"result","sessionId":"c","exitCode":0,"usage":{"premiumRequests":1}}"#,
            "copilot",
        ),
        (
            r#"{"type":"init","timestamp":"2026-01-01T00:00:00Z","session_id":"g","model":"gemini-2.5-pro"}"#,
            "gemini",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#,
            "acp",
        ),
        (
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"a"}}"#,
            "acp",
        ),
        (r#"{"type":"text-delta","text":"x"}"#, "cursor-sdk"),
        (
            r#"{"type":"system","subtype":"init","agent_id":"a","run_id":"r"}"#,
            "cursor-sdk",
        ),
        // Undecided lines first; a later line settles it.
        (
            r#"{"type":"system","subtype":"init","session_id":"s"}
{"type":"user","message":{"role":"user","content":"hi"},"session_id":"s"}
{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"x"}]},"session_id":"s"}"#,
            "claude",
        ),
    ];
    for (input, dialect) in cases {
        let run = cstream(&["--to", "events"], input.as_bytes());
        let first = events(&run.out()).into_iter().next().unwrap_or(Value::Null);
        assert_eq!(first["dialect"], *dialect, "{input}\n{}", run.out());
        // A one-line saved session (a header, a prompt) says it has no
        // answer (not_understood.rs); nothing else is said.
        let other: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| {
                !l.ends_with("1 prompt but no answer read")
                    && !l.ends_with("no prompt and no answer read")
            })
            .collect();
        assert!(other.is_empty(), "{input}: {}", run.stderr);
    }
    // Nothing tells: read as cursor-agent, with one warning.
    let run = cstream(
        &["--to", "events"],
        br#"{"type":"user","message":{"content":"hi"}}"#,
    );
    assert!(run.stderr.contains("could not tell"), "{}", run.stderr);
    // …which names the first record read so, not the first line: an
    // agent's notice can come before its stream.
    let run = cstream(
        &["--to", "events"],
        b"Warning: a notice the agent printed\n{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n",
    );
    assert!(
        run.stderr
            .contains("-:2: could not tell which agent wrote this input"),
        "{}",
        run.stderr
    );
}

/// codex-acp without the `terminal_output` capability re-sends the whole
/// output so far in every update. Converted, the output must be linear in
/// the real output, not in the (quadratic) input.
#[test]
fn cumulative_output_is_linear_in_the_real_output() {
    const UPDATES: usize = 400;
    let mut input = String::new();
    let mut push = |v: Value| {
        input.push_str(&v.to_string());
        input.push('\n');
    };
    push(
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":
        {"sessionUpdate":"tool_call","toolCallId":"c","title":"seq","kind":"execute","status":"in_progress","rawInput":{"command":"seq 400"}}}}),
    );
    let mut so_far = String::new();
    for i in 0..UPDATES {
        so_far.push_str(&format!("line {i:05} of the generated output\n"));
        push(
            json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":
            {"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress",
             "content":[{"type":"content","content":{"type":"text","text":so_far}}]}}}),
        );
    }
    push(
        json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":
        {"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","rawOutput":{"exit_code":0}}}}),
    );
    push(json!({"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}));
    let real = so_far.len();
    assert!(
        input.len() > 100 * real,
        "the input is quadratic: {} vs {real}",
        input.len()
    );

    let run = cstream(&["--to", "events"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out = run.out();
    // Every delta is the new tail, once: together they are the output.
    let streamed: String = events(&out)
        .iter()
        .filter(|e| e["type"] == "shell_output_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(streamed, so_far);
    assert!(
        out.len() < 4 * real + 200 * UPDATES,
        "output {} bytes for {real} bytes of real output",
        out.len()
    );
    assert!(
        !out.contains("tool_call_progress"),
        "no replacement expected"
    );

    // --no-dedupe keeps every snapshot as it came (as progress snapshots).
    let raw = cstream(&["--to", "events", "--no-dedupe"], input.as_bytes()).out();
    assert_eq!(raw.matches("tool_call_progress").count(), UPDATES);
    assert!(raw.len() > 100 * real);
}

/// A snapshot that does not extend the output so far becomes one
/// replacement, and the stream goes on from it.
#[test]
fn a_snapshot_that_does_not_extend_is_a_replacement() {
    let upd = |text: &str| {
        json!({"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":text}}]})
            .to_string()
    };
    let input = [
        json!({"sessionUpdate":"tool_call","toolCallId":"c","kind":"execute","status":"in_progress","rawInput":{"command":"x"}}).to_string(),
        upd("abc\n"),
        upd("abc\ndef\n"),
        upd("XYZ\n"),
        upd("XYZ\nmore\n"),
    ]
    .join("\n");
    let evs = events(&cstream(&["--to", "events"], input.as_bytes()).out());
    let shown: Vec<String> = evs
        .iter()
        .filter_map(|e| match e["type"].as_str()? {
            "shell_output_delta" => Some(format!("+{}", e["text"].as_str()?)),
            "tool_call_progress" => Some(format!("={}", e["partial"]["output"].as_str()?)),
            _ => None,
        })
        .collect();
    assert_eq!(shown, ["+abc\n", "+def\n", "=XYZ\n", "+more\n"]);
}

/// claude-agent-acp: the toolResponse, the single terminal_output and the
/// fenced content all carry the same output; it is emitted once.
#[test]
fn claude_agent_acp_output_once() {
    let out = cstream_file(
        &["--to", "events"],
        &common::fixtures_dir().join("acp/claude-agent-acp.jsonl"),
    )
    .out();
    let deltas = out
        .lines()
        .filter(|l| l.contains("shell_output_delta") && l.contains("running 2 tests"))
        .count();
    assert_eq!(deltas, 1, "{out}");
    assert!(!out.contains("<persisted-output>"));
    assert!(!out.contains("```console"));
}

/// Invariant: a fixture read with `--from` its own dialect never gets a
/// warning that it is another's (or unknown to the reader), and read as a dialect whose shapes it
/// does not share (codex for cursor-agent and the rest, cursor for codex),
/// it does.
#[test]
fn forcing_the_right_dialect_never_warns_and_a_foreign_one_does() {
    let mut foreign_warned = 0;
    for path in common::fixtures() {
        let Some(dialect) = common::fixture_dialect(&path) else {
            continue;
        };
        let own = common::run_fixture(&path, &["--to", "events", "--from", dialect]);
        let warned = |stderr: &str| {
            stderr.contains(" reader (--from ")
                || stderr.contains(" (--from) but its first records")
        };
        assert!(!warned(&own.stderr), "{}: {}", path.display(), own.stderr);
        let foreign = if dialect == "codex" {
            "cursor"
        } else {
            "codex"
        };
        let other = common::run_fixture(&path, &["--to", "events", "--from", foreign]);
        foreign_warned += usize::from(warned(&other.stderr));
    }
    assert!(foreign_warned > 20, "{foreign_warned}");
}

/// Claude Code inputs: every fixture of the dialect and every real capture.
fn claude_inputs() -> Vec<std::path::PathBuf> {
    let mut all: Vec<_> = common::fixtures()
        .into_iter()
        .filter(|p| common::fixture_dialect(p) == Some("claude"))
        .collect();
    all.extend(corpus("claude-code"));
    all
}

/// The input's JSON lines.
fn input_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The text a `tool_result` block shows the model: its string content, or
/// its text parts joined.
fn tool_result_text(block: &Value) -> Option<String> {
    match &block["content"] {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
        _ => None,
    }
}

/// A Claude `tool_result`'s model-visible text is the call's output, whether
/// or not the line also carries the structured `tool_use_result`: for every
/// tool_result with text in every Claude input, the completion of its call
/// carries that text (in `result` or, for shell calls, `output`).
#[test]
fn claude_tool_results_keep_the_model_visible_text() {
    let mut checked = 0;
    for path in claude_inputs() {
        let mut want: HashMap<String, String> = HashMap::new();
        for line in input_lines(&path) {
            let Some(blocks) = line["message"]["content"].as_array() else {
                continue;
            };
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                if let (Some(id), Some(text)) = (b["tool_use_id"].as_str(), tool_result_text(b))
                    && !text.trim().is_empty()
                {
                    want.entry(id.to_owned()).or_insert(text);
                }
            }
        }
        let evs = events(&cstream_file(&["--to", "events"], &path).out());
        for (id, text) in want {
            let Some(end) = evs
                .iter()
                .find(|e| e["type"] == "tool_call_completed" && e["callId"] == id.as_str())
            else {
                continue; // a call cut off before its start: covered elsewhere
            };
            let shown = format!("{}{}", end["result"], end["output"]);
            // Some line of the text must be there, as the event writes it
            // (JSON-escaped): a `<persisted-output>` stub loses its tags,
            // and a shell call's "Exit code N" becomes `exitCode`.
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !(l.is_empty() || l.starts_with('<') && l.ends_with('>')))
                .collect();
            let found = lines.iter().any(|l| {
                let escaped = serde_json::to_string(l).unwrap();
                shown.contains(escaped.trim_matches('"'))
            });
            assert!(
                found,
                "{}: call {id}: none of the tool_result text {lines:?} is in {end}",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 3, "only {checked} tool results checked");
}

/// `rate_limit_event` is a known Claude Code line: never an `unknown`
/// event; a status other than `allowed` is a notice (a non-fatal error from
/// `rate_limit`).
#[test]
fn claude_rate_limit_events_are_known() {
    let mut notices = 0;
    for path in claude_inputs() {
        let limited = input_lines(&path)
            .iter()
            .filter(|l| l["type"] == "rate_limit_event")
            .filter(|l| {
                let info = &l["rate_limit_info"];
                info["status"] != "allowed" && l["status"] != "allowed" && !info.is_null()
            })
            .count();
        let evs = events(&cstream_file(&["--to", "events"], &path).out());
        for e in &evs {
            assert!(
                !(e["type"] == "unknown" && e["raw"]["type"] == "rate_limit_event"),
                "{}: {e}",
                path.display()
            );
        }
        let shown = evs
            .iter()
            .filter(|e| e["type"] == "error" && e["source"] == "rate_limit")
            .count();
        assert!(
            shown >= limited.min(1),
            "{}: no rate-limit notice",
            path.display()
        );
        notices += shown;
    }
    assert!(notices > 0, "no fixture shows a rate-limit notice");
}

/// The model a Claude session names: the init's, else the model the
/// message right after the init names (never `unknown` then). The init is
/// held for that one line only, so nothing else waits for it; a prompt echo
/// between the two (`--replay-user-messages`) still leaves it unknown.
#[test]
fn claude_model_comes_from_the_messages_when_the_init_lacks_it() {
    let model_of = |l: &Value| {
        let m = l["message"]["model"]
            .as_str()
            .or(l["event"]["message"]["model"].as_str())?;
        (m != "<synthetic>" && !m.is_empty()).then(|| m.to_owned())
    };
    let mut checked = 0;
    for path in claude_inputs() {
        let lines = input_lines(&path);
        let named = lines.windows(2).any(|w| {
            w[0]["type"] == "system" && w[0]["subtype"] == "init" && model_of(&w[1]).is_some()
        });
        if !named {
            continue;
        }
        checked += 1;
        let evs = events(&cstream_file(&["--to", "events"], &path).out());
        for s in evs.iter().filter(|e| e["type"] == "session_started") {
            let model = s["model"].as_str().unwrap_or("unknown");
            assert_ne!(model, "unknown", "{}: {s}", path.display());
        }
    }
    assert!(
        checked > 0,
        "no Claude input names its model after the init"
    );
}
