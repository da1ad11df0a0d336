//! Saved session files (archives): what is read from them, checked on the
//! fixtures written from the documented shapes and on the real files in
//! `../shared/corpus/sessions/` (which must be there when CI is set).

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{corpus, cstream_file, events, fixtures_dir};
use serde_json::Value;

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The fixtures and real files of one kind of saved session.
fn inputs(fixture_dir: &str, corpus_dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join(fixture_dir))
        .expect("fixture folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "json"))
        .collect();
    files.sort();
    let real = corpus(corpus_dir);
    files.extend(real.into_iter().filter(|p| !p.ends_with("SOURCES.md")));
    files
}

/// Token counts as (input with cache, output, cache read, cache write).
type Counts = (u64, u64, u64, u64);

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// What a Claude Code transcript itself says was used, read here
/// independently of cstream: each API message once (by `message.id`, else
/// `requestId`), its input and cache counts from its first line, its output
/// count from a line with a `stop_reason`, else the largest count of its
/// lines when that grew past the first line's (a count that never grew is
/// the streaming placeholder: none). Sidechain lines in a main transcript
/// are another agent's.
fn claude_transcript_usage(raw: &str) -> Counts {
    // Per message: its counts, whether a stop line gave the output, and
    // its first and largest output counts.
    let mut msgs: HashMap<String, (Counts, bool, u64, u64)> = HashMap::new();
    let mut sidechain_file = None;
    let mut anon: Option<(String, (u64, u64, u64))> = None;
    for line in raw.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["uuid"].is_null() {
            continue;
        }
        let side = v["isSidechain"] == true;
        if side && !*sidechain_file.get_or_insert(side) {
            continue;
        }
        sidechain_file.get_or_insert(side);
        let m = &v["message"];
        if v["type"] != "assistant" || !m["usage"].is_object() {
            continue;
        }
        let u = &m["usage"];
        let (cr, cw) = (
            n(&u["cache_read_input_tokens"]),
            n(&u["cache_creation_input_tokens"]),
        );
        // A line with neither id is a message of its own, unless it follows
        // such a line with the same input and cache counts (its next block).
        let input = (n(&u["input_tokens"]), cr, cw);
        let id = match m["id"].as_str().or(v["requestId"].as_str()) {
            Some(id) => {
                anon = None;
                id.to_owned()
            }
            None => match &anon {
                Some((k, at)) if *at == input => k.clone(),
                _ => {
                    let k = format!("\0{}", msgs.len());
                    anon = Some((k.clone(), input));
                    k
                }
            },
        };
        let fin = !m["stop_reason"].is_null();
        let out = n(&u["output_tokens"]);
        let e = msgs.entry(id).or_insert((
            (n(&u["input_tokens"]) + cr + cw, 0, cr, cw),
            false,
            out,
            out,
        ));
        e.3 = e.3.max(out);
        if fin && !e.1 {
            e.0.1 = out;
            e.1 = true;
        }
    }
    msgs.values()
        .fold((0, 0, 0, 0), |a, ((i, o, r, w), fin, first, largest)| {
            let o = if *fin || largest <= first {
                *o
            } else {
                *largest
            };
            (a.0 + i, a.1 + o, a.2 + r, a.3 + w)
        })
}

/// The sum of the run's `usage_delta`s.
fn delta_sums(evs: &[Value]) -> Counts {
    evs.iter()
        .filter(|e| ty(e) == "usage_delta")
        .fold((0, 0, 0, 0), |a, e| {
            (
                a.0 + n(&e["deltaInput"]),
                a.1 + n(&e["deltaOutput"]),
                a.2 + n(&e["deltaCacheRead"]),
                a.3 + n(&e["deltaCacheWrite"]),
            )
        })
}

/// Every Claude Code transcript (fixtures and real files) is recognised
/// without `--from`, read without a warning or an `unknown` event, and its
/// usage is each message counted once with no placeholder output count.
#[test]
fn claude_transcripts_count_each_message_once_without_placeholders() {
    for path in inputs("claude-project", "sessions/claude-code") {
        let name = name(&path);
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 0, "{name}: exit {}: {}", run.code, run.stderr);
        // The only warnings allowed are for offloaded outputs that are not
        // there (checked in claude_offloaded_outputs_are_read_from_beside_the_transcript).
        let other: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| !l.contains("is missing: showing the preview"))
            // Records not understood, in the fixture made to have them
            // (checked in drift.rs).
            .filter(|l| !(name.contains("unknown-lines") && l.contains(" not understood (kept")))
            .collect();
        assert!(other.is_empty(), "{name}: warned: {}", run.stderr);
        let evs = events(&run.out());
        assert_eq!(
            evs.first().map(|e| e["dialect"].clone()),
            Some(Value::from("claude-project")),
            "{name}: not read as a Claude Code transcript"
        );
        // One fixture holds records this reader does not know, on purpose
        // (tests/it/drift.rs checks them).
        assert!(
            name.contains("unknown-lines") || !evs.iter().any(|e| ty(e) == "unknown"),
            "{name}: bookkeeping records became unknown events"
        );
        let raw = std::fs::read_to_string(&path).unwrap();
        let want = claude_transcript_usage(&raw);
        assert_eq!(delta_sums(&evs), want, "{name}: usage_delta sums");
        let result = evs.iter().find(|e| ty(e) == "result").expect("a result");
        let u = &result["usage"];
        assert_eq!(
            (n(&u["inputTokens"]), n(&u["outputTokens"])),
            (want.0, want.1),
            "{name}: result usage {u}"
        );
    }
}

/// A sub-agent file of the older layout carries its parent's `sessionId`:
/// it is a session of its own, never merged into the parent's.
/// A message saved without a `stop_reason` on any line: its count that grew
/// past the first line's placeholder is counted (the model's update), one
/// that never grew is not, and the notice counts only that one.
#[test]
fn claude_grown_output_counts_count_placeholders_do_not() {
    let path =
        fixtures_dir().join("claude-project/grown-output-count_placeholder-only-message.jsonl");
    let run = cstream_file(&["--to", "events"], &path);
    let evs = events(&run.out());
    let outputs: Vec<u64> = evs
        .iter()
        .filter(|e| ty(e) == "usage_delta")
        .map(|e| n(&e["deltaOutput"]))
        .collect();
    // msg_g1: 4, 4, 395 without a stop_reason; msg_g2: 11, 11; msg_g3: 58, final.
    assert_eq!(outputs, [395, 0, 58]);
    let result = evs.iter().find(|e| ty(e) == "result").expect("a result");
    assert_eq!(n(&result["usage"]["outputTokens"]), 453);
    let notices: Vec<&str> = evs
        .iter()
        .filter(|e| ty(e) == "error" && e["source"] == "usage")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert_eq!(notices.len(), 1);
    assert!(notices[0].starts_with("1 of 3 messages"), "{}", notices[0]);
}

#[test]
fn claude_sidechain_files_are_sessions_of_their_own() {
    for path in inputs("claude-project", "sessions/claude-code") {
        let raw = std::fs::read_to_string(&path).unwrap();
        let Some(first) = raw
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["uuid"].is_string())
        else {
            continue;
        };
        let run = cstream_file(&["--to", "events"], &path);
        let evs = events(&run.out());
        let sid = evs[0]["sessionId"].as_str().unwrap().to_owned();
        let parent = first["sessionId"].as_str().unwrap();
        if first["isSidechain"] == true {
            let agent = first["agentId"].as_str().expect("agentId");
            assert_eq!(sid, format!("{parent}/agent-{agent}"), "{}", name(&path));
        } else {
            assert_eq!(sid, parent, "{}", name(&path));
        }
    }
}

/// The offloaded outputs a transcript's tool results name, read here
/// independently of cstream: (call id, path as written) for every
/// `tool_result` whose text is a `<persisted-output>` stub.
fn offload_stubs(raw: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in raw.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] != "tool_result" {
                continue;
            }
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => continue,
            };
            let Some(at) = text.find("<persisted-output>") else {
                continue;
            };
            let Some(p) = text[at..].split("saved to: ").nth(1) else {
                continue;
            };
            let p = p.split(['\n', '<']).next().unwrap().trim().to_owned();
            found.push((b["tool_use_id"].as_str().unwrap().to_owned(), p));
        }
    }
    found
}

/// A tool result Claude Code offloaded to `<session>/tool-results/` shows
/// the saved file's text when the file is beside the transcript, and
/// otherwise the preview the record holds with a warning naming the
/// transcript and the missing file; every transcript (fixtures and real
/// files) is checked, and the fixtures hold both cases.
#[test]
fn claude_offloaded_outputs_are_read_from_beside_the_transcript() {
    let (mut read, mut missing) = (0, 0);
    for path in inputs("claude-project", "sessions/claude-code") {
        let name = name(&path);
        let raw = std::fs::read_to_string(&path).unwrap();
        let stubs = offload_stubs(&raw);
        if stubs.is_empty() {
            continue;
        }
        let run = cstream_file(&["--to", "events"], &path);
        let evs = events(&run.out());
        let dir = path.with_extension("").join("tool-results");
        for (id, written) in stubs {
            let file = dir.join(written.rsplit(['/', '\\']).next().unwrap());
            let end = evs
                .iter()
                .find(|e| ty(e) == "tool_call_completed" && e["callId"] == id.as_str())
                .unwrap_or_else(|| panic!("{name}: no completion for {id}"));
            // The model-visible output: a shell's `output`, another tool's `result`.
            let shown = end["output"]
                .as_str()
                .or(end["result"].as_str())
                .unwrap_or_default();
            match std::fs::read_to_string(&file) {
                Ok(saved) => {
                    read += 1;
                    assert_eq!(shown, saved, "{name}: {id} is not the saved output");
                    assert!(!run.stderr.contains(&id), "{name}: warned about {id}");
                }
                Err(_) => {
                    missing += 1;
                    assert!(shown.contains("persisted"), "{name}: {id}: {shown}");
                    let warning = run
                        .stderr
                        .lines()
                        .find(|l| l.contains(&format!("tool call {id} ")))
                        .unwrap_or_else(|| panic!("{name}: no warning for {id}: {}", run.stderr));
                    assert!(warning.contains(&name), "{warning}");
                    assert!(warning.contains(&file.display().to_string()), "{warning}");
                }
            }
        }
    }
    assert!(read > 0 && missing > 0, "read {read}, missing {missing}");
}

/// Every `.jsonl` under `dir`, at any depth (sub-agents sit in folders).
fn all_jsonl(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_jsonl(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The call in the parent transcript that spawned a sub-agent, read here
/// independently of cstream: the parent is the transcript whose folder
/// holds `subagents/`, or `<sessionId>.jsonl` beside the file; the call is
/// the tool result whose `toolUseResult.agentId` is the sub-agent's, else
/// the `tool_use` whose `input.prompt` is its first prompt.
fn spawning_call(sub: &Path, first: &Value, prompt: &str) -> Option<String> {
    let dir = sub.parent()?;
    let parent = if dir.ends_with("subagents") {
        dir.parent()?.with_extension("jsonl")
    } else {
        dir.join(format!("{}.jsonl", first["sessionId"].as_str()?))
    };
    let raw = std::fs::read_to_string(parent).ok()?;
    let lines: Vec<Value> = raw
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let content = |v: &Value| {
        v["message"]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    lines
        .iter()
        .filter(|v| v["type"] == "user" && v["toolUseResult"]["agentId"] == first["agentId"])
        .flat_map(content)
        .find(|b| b["type"] == "tool_result")
        .and_then(|b| b["tool_use_id"].as_str().map(str::to_owned))
        .or_else(|| {
            lines
                .iter()
                .filter(|v| v["type"] == "assistant")
                .flat_map(content)
                .find(|b| b["type"] == "tool_use" && b["input"]["prompt"] == prompt)
                .and_then(|b| b["id"].as_str().map(str::to_owned))
        })
}

/// A sub-agent's transcript (newer layout `<session>/subagents/`, older
/// `agent-<id>.jsonl` beside the session) stays a session of its own, and
/// its `session_started` (and documents' metadata) links it to the parent
/// session and to the call that spawned it whenever the parent's
/// transcript is there to say which; fixtures cover both layouts and both
/// linking keys.
#[test]
fn claude_subagent_sessions_link_to_their_spawning_call() {
    let mut files = Vec::new();
    all_jsonl(&fixtures_dir().join("claude-project"), &mut files);
    files.sort();
    files.extend(
        corpus("sessions/claude-code")
            .into_iter()
            .filter(|p| !p.ends_with("SOURCES.md")),
    );
    let mut linked = 0;
    for path in files {
        let raw = std::fs::read_to_string(&path).unwrap();
        let Some(first) = raw
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["uuid"].is_string())
        else {
            continue;
        };
        if first["isSidechain"] != true {
            continue;
        }
        let name = name(&path);
        let prompt = first["message"]["content"].as_str().unwrap_or_default();
        let want = spawning_call(&path, &first, prompt);
        let evs = events(&cstream_file(&["--to", "events"], &path).out());
        let start = &evs[0];
        assert_eq!(start["parentSessionId"], first["sessionId"], "{name}");
        assert_ne!(
            start["sessionId"], first["sessionId"],
            "{name}: merged into its parent"
        );
        assert_eq!(start["parentCallId"].as_str(), want.as_deref(), "{name}");
        let doc = cstream_file(&["--to", "documents"], &path).out();
        let doc: Value = serde_json::from_str(&doc).expect("one document");
        assert_eq!(
            doc["metadata"]["parentToolCallId"].as_str(),
            want.as_deref(),
            "{name}: documents"
        );
        linked += usize::from(want.is_some());
    }
    assert!(linked >= 2, "only {linked} sub-agents linked");
}

fn text(path: &Path) -> String {
    let run = cstream_file(&["--to", "events"], path);
    events(&run.out())
        .iter()
        .filter(|e| matches!(ty(e), "text_delta" | "user_message"))
        .map(|e| e["text"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("|")
}

/// A rewound turn is not part of the conversation that went on; the turns
/// before and after it are, each once.
#[test]
fn claude_rewound_turns_are_left_out() {
    let dir = fixtures_dir().join("claude-project");
    let t = text(&dir.join("rewind_parallel-results_placeholder-usage.jsonl"));
    assert!(!t.contains("Rust"), "the abandoned turn was shown: {t}");
    assert_eq!(t.matches("Fix it, please.").count(), 1, "{t}");
    assert_eq!(t.matches("The total ignores quantities.").count(), 1, "{t}");

    // A rewind past a turn already written: the turn still held is dropped,
    // and a notice says what could not be taken back.
    let path = dir.join("compaction_late-rewind_sidechain-lines_repeated-record.jsonl");
    let t = text(&path);
    assert!(!t.contains("Done with the second."), "{t}");
    assert!(!t.contains("sub-agent chatter"), "{t}");
    assert_eq!(t.matches("There are two TODOs.").count(), 1, "{t}");
    let evs = events(&cstream_file(&["--to", "events"], &path).out());
    assert!(
        evs.iter()
            .any(|e| ty(e) == "error" && e["source"] == "rewind" && e["fatal"] == false),
        "no rewind notice"
    );
    // The compaction summary is a summary, not a prompt.
    assert!(!t.contains("being continued"), "{t}");
    assert!(evs.iter().any(|e| {
        ty(e) == "summary"
            && e["phase"] == "completed"
            && e["text"]
                .as_str()
                .is_some_and(|s| s.contains("being continued"))
    }));
}

/// The rollout's items, wrapped (`{type, payload}`) or bare (the older
/// shape), each with its time in milliseconds when it has one.
fn rollout_items(raw: &str) -> Vec<(String, Value, Option<i64>)> {
    let ms = |v: &Value| {
        let t = v["timestamp"].as_str()?;
        // 2026-03-04T10:00:01.000Z: only times within a day are compared.
        let (h, m, s) = (t.get(11..13)?, t.get(14..16)?, t.get(17..23)?);
        let secs: f64 = s.parse().ok()?;
        Some(
            (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60) * 1000
                + (secs * 1000.0) as i64,
        )
    };
    raw.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| match v["payload"].is_object() {
            true => (
                v["type"].as_str().unwrap_or("").to_owned(),
                v["payload"].clone(),
                ms(&v),
            ),
            false => ("response_item".to_owned(), v.clone(), ms(&v)),
        })
        .collect()
}

/// What a rollout shows, read here independently of cstream: the
/// assistant text and typed prompts of the turns that were not rolled back
/// (a rollback takes back the newest turn; one reaching further is only
/// noted), leaving out the copy of its parent a fork begins with (the
/// records after the parent's `session_meta` written in one burst), and
/// the usage spent after that copy (input, output), from the running totals.
struct CodexExpected {
    text: String,
    prompts: usize,
    usage: (u64, u64),
    rollback_notes: usize,
}

fn codex_expected(raw: &str) -> CodexExpected {
    let mut turns: Vec<(String, usize)> = vec![(String::new(), 0)];
    let (mut metas, mut fork_ts, mut forked, mut spawned) = (0, None, false, false);
    let mut copying: Option<Option<i64>> = None;
    // A spawned sub-agent's copy ends with its parent's turn still open;
    // its own first turn starts while it is.
    let mut copied_turn_open = false;
    // The first running total after a copy: one that is all its own
    // (`last_token_usage` equal to the total) starts again from zero.
    let mut first_own = false;
    let (mut base, mut last) = ((0, 0), (0, 0));
    // What was counted before a running total went down (a counter that
    // restarted from zero: docs/events.md#usage).
    let mut spent = (0, 0);
    let mut rollback_notes = 0;
    for (kind, p, ts) in rollout_items(raw) {
        let total = || {
            let t = &p["info"]["total_token_usage"];
            t.is_object()
                .then(|| (n(&t["input_tokens"]), n(&t["output_tokens"])))
        };
        if kind == "session_meta" {
            metas += 1;
            if metas == 1 {
                spawned = p["source"]["subagent"]["thread_spawn"]["parent_thread_id"].is_string();
                forked = p["forked_from_id"].is_string() || spawned;
                fork_ts = ts;
            } else if forked {
                copying = Some(ts);
            }
            continue;
        }
        if copying.is_some() {
            let event = (kind == "event_msg").then(|| p["type"].as_str().unwrap_or(""));
            if spawned {
                match event {
                    Some("task_started") if copied_turn_open => {
                        copying = None;
                        copied_turn_open = false;
                    }
                    Some("task_started") => copied_turn_open = true,
                    Some("task_complete" | "turn_aborted") => copied_turn_open = false,
                    _ => {}
                }
            }
        }
        if let Some(prev) = copying {
            let burst = match (ts, prev, fork_ts) {
                (Some(t), _, Some(f)) if t < f => true,
                (Some(t), Some(p), _) => t - p <= 1000,
                _ => true,
            };
            if burst {
                copying = Some(ts.or(prev));
                if kind == "event_msg" && p["type"] == "token_count" {
                    base = total().unwrap_or(base);
                    last = base;
                    first_own = true;
                }
                continue;
            }
            copying = None;
        }
        match (kind.as_str(), p["type"].as_str().unwrap_or("")) {
            ("event_msg", "user_message") => turns.push((String::new(), 1)),
            ("event_msg", "token_count") => {
                let Some(t) = total() else { continue };
                let own = &p["info"]["last_token_usage"];
                if std::mem::take(&mut first_own)
                    && base != (0, 0)
                    && own.is_object()
                    && (n(&own["input_tokens"]), n(&own["output_tokens"])) == t
                {
                    base = (0, 0);
                } else if t.0 < last.0 || t.1 < last.1 {
                    spent = (spent.0 + last.0 - base.0, spent.1 + last.1 - base.1);
                    base = (0, 0);
                }
                last = t;
            }
            ("event_msg", "thread_rolled_back") => {
                let n = p["num_turns"].as_u64().unwrap_or(1);
                let held = u64::from(turns.len() > 1);
                if held == 1 {
                    turns.pop();
                }
                rollback_notes += usize::from(n > held);
            }
            ("response_item", "message") if p["role"] == "assistant" => {
                for part in p["content"].as_array().into_iter().flatten() {
                    turns
                        .last_mut()
                        .unwrap()
                        .0
                        .push_str(part["text"].as_str().unwrap_or(""));
                }
            }
            _ => {}
        }
    }
    CodexExpected {
        text: turns.iter().map(|t| t.0.as_str()).collect(),
        prompts: turns.iter().map(|t| t.1).sum(),
        usage: (spent.0 + last.0 - base.0, spent.1 + last.1 - base.1),
        rollback_notes,
    }
}

/// Every Codex rollout (fixtures and real files) is recognised without
/// `--from` and read without a warning or an `unknown` event; the text the
/// history and the interface's events both carry is shown once, without
/// rolled-back turns or a fork's copy of its parent; usage adds up to the
/// rollout's own running totals since that copy (never a total summed
/// twice, never the parent's).
#[test]
fn codex_rollouts_show_content_once_and_usage_from_running_totals() {
    for path in inputs("codex-rollout", "sessions/codex") {
        let name = name(&path);
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 0, "{name}: exit {}: {}", run.code, run.stderr);
        assert!(run.stderr.is_empty(), "{name}: warned: {}", run.stderr);
        let evs = events(&run.out());
        assert_eq!(
            evs.first().map(|e| e["dialect"].clone()),
            Some(Value::from("codex-rollout")),
            "{name}: not read as a Codex rollout"
        );
        assert!(
            !evs.iter().any(|e| ty(e) == "unknown"),
            "{name}: records became unknown events"
        );
        let raw = std::fs::read_to_string(&path).unwrap();
        let want = codex_expected(&raw);
        let text: String = evs
            .iter()
            .filter(|e| ty(e) == "text_delta")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(text, want.text, "{name}: assistant text");
        let (i, o, _, _) = delta_sums(&evs);
        assert_eq!((i, o), want.usage, "{name}: usage_delta sums");
        let notes = evs
            .iter()
            .filter(|e| ty(e) == "error" && e["source"] == "rollback")
            .count();
        assert_eq!(notes, want.rollback_notes, "{name}: rollback notices");
        // A prompt once, and never the injected context.
        let prompts: Vec<&str> = evs
            .iter()
            .filter(|e| ty(e) == "user_message")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert!(
            !prompts.iter().any(
                |p| p.contains("<environment_context>") || p.contains("AGENTS.md instructions")
            ),
            "{name}: injected context shown as a prompt"
        );
        if want.prompts > 0 {
            assert_eq!(prompts.len(), want.prompts, "{name}: prompts");
        }
    }
}

/// A forked rollout is its own session (the first `session_meta` names it,
/// not the parent's copied after it), says which session it was forked
/// from, and notes the copy it leaves out.
#[test]
fn codex_forks_are_their_own_session_linked_to_the_parent() {
    let path = fixtures_dir().join("codex-rollout/fork_parent-prefix-copied_usage-from-fork.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    let metas: Vec<Value> = rollout_items(&raw)
        .into_iter()
        .filter(|(k, _, _)| k == "session_meta")
        .map(|(_, p, _)| p)
        .collect();
    assert_eq!(metas.len(), 2);
    let evs = events(&cstream_file(&["--to", "events"], &path).out());
    assert!(evs.iter().all(|e| e["sessionId"] == metas[0]["id"]));
    assert_eq!(evs[0]["forkedFrom"], metas[1]["id"]);
    assert_eq!(evs[0]["forkedFrom"], metas[0]["forked_from_id"]);
    assert!(
        evs.iter()
            .any(|e| ty(e) == "error" && e["source"] == "fork"),
        "no notice of the inherited records"
    );
    let t = text(&path);
    assert!(
        !t.contains("Round half up"),
        "the parent's turns were shown: {t}"
    );
    assert!(t.contains("Now add a test"), "{t}");
}

/// A compaction's copy of the history is not shown again.
#[test]
fn codex_compacted_history_is_not_repeated() {
    let path = fixtures_dir()
        .join("codex-rollout/rollout_events-and-history-once_token-totals_compacted.jsonl");
    let t = text(&path);
    assert_eq!(t.matches("Why do the cart tests fail?").count(), 1, "{t}");
    assert_eq!(
        t.matches("The total ignored quantities; fixed.").count(),
        1,
        "{t}"
    );
}

/// What a Gemini CLI chat itself holds, read here independently of
/// cstream: its prompts, the model's text, its tool calls by status, and
/// the token counts of its responses (input with the tool-use prompt,
/// output with the thoughts, cached).
fn gemini_chat_facts(raw: &str) -> (Vec<String>, String, usize, usize, Counts) {
    let doc: Value = serde_json::from_str(raw).expect("a whole chat");
    let text_of = |c: &Value| -> String {
        match c {
            Value::String(s) => s.clone(),
            Value::Array(parts) => {
                let mut t = String::new();
                for p in parts {
                    if let Some(s) = p["text"].as_str().or(p.as_str()) {
                        t.push_str(s);
                    } else if let Some(data) = p["inlineData"]["data"].as_str() {
                        // An attached image: a placeholder with its decoded size.
                        let kib = (data.trim_end_matches('=').len() * 3 / 4) as f64 / 1024.0;
                        let mime = p["inlineData"]["mimeType"].as_str().unwrap_or("");
                        t.push_str(&format!("\n[image: {mime}, {kib:.1} KiB]"));
                    }
                }
                t
            }
            _ => String::new(),
        }
    };
    let (mut prompts, mut text, mut calls, mut done) = (Vec::new(), String::new(), 0, 0);
    let mut usage = (0, 0, 0, 0);
    for m in doc["messages"].as_array().expect("messages") {
        match m["type"].as_str() {
            Some("user") => prompts.push(text_of(if m["displayContent"].is_null() {
                &m["content"]
            } else {
                &m["displayContent"]
            })),
            Some("gemini") => {
                text.push_str(&text_of(&m["content"]));
                for c in m["toolCalls"].as_array().into_iter().flatten() {
                    calls += 1;
                    done += usize::from(matches!(
                        c["status"].as_str(),
                        Some("success" | "error" | "cancelled")
                    ));
                }
                let t = &m["tokens"];
                if t.is_object() {
                    usage.0 += n(&t["input"]) + n(&t["tool"]);
                    usage.1 += n(&t["output"]) + n(&t["thoughts"]);
                    usage.2 += n(&t["cached"]);
                }
            }
            _ => {}
        }
    }
    (prompts, text, calls, done, usage)
}

/// Every whole Gemini CLI chat (the fixtures that are complete and the real
/// files) is recognised without `--from`, read without a warning or an
/// `unknown` event, each message once: the prompts, the model's text, a
/// start and an outcome for each tool call, and each response's tokens
/// counted once.
#[test]
fn gemini_chats_show_each_message_once_and_each_response_usage_once() {
    let files: Vec<PathBuf> = inputs("gemini-chat", "sessions/gemini")
        .into_iter()
        .filter(|p| {
            let n = name(p);
            // The JSONL form is checked in tests/it/drift.rs.
            !n.starts_with("cut-short")
                && !n.starts_with("unknown-type")
                && !n.starts_with("jsonl_")
        })
        .collect();
    assert!(files.len() >= 2, "no Gemini chats: {files:?}");
    for path in files {
        let name = name(&path);
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 0, "{name}: exit {}: {}", run.code, run.stderr);
        assert!(run.stderr.is_empty(), "{name}: warned: {}", run.stderr);
        let evs = events(&run.out());
        assert_eq!(
            evs.first().map(|e| e["dialect"].clone()),
            Some(Value::from("gemini-chat")),
            "{name}: not read as a Gemini CLI chat"
        );
        assert!(
            !evs.iter().any(|e| ty(e) == "unknown"),
            "{name}: messages became unknown events"
        );
        let raw = std::fs::read_to_string(&path).unwrap();
        let (prompts, text, calls, done, usage) = gemini_chat_facts(&raw);
        let got: Vec<String> = evs
            .iter()
            .filter(|e| ty(e) == "user_message")
            .map(|e| e["text"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(got, prompts, "{name}: prompts");
        let got: String = evs
            .iter()
            .filter(|e| ty(e) == "text_delta")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(got, text, "{name}: the model's text");
        let count = |t: &str| evs.iter().filter(|e| ty(e) == t).count();
        assert_eq!(count("tool_call_started"), calls, "{name}: tool calls");
        let completed: Vec<&Value> = evs
            .iter()
            .filter(|e| ty(e) == "tool_call_completed")
            .collect();
        assert_eq!(completed.len(), calls, "{name}: every call ends");
        assert_eq!(
            completed.iter().filter(|e| e["cancelled"] != true).count(),
            done,
            "{name}: calls with an outcome in the file"
        );
        let (i, o, r, _) = delta_sums(&evs);
        assert_eq!((i, o, r), (usage.0, usage.1, usage.2), "{name}: usage");
        let result = evs.last().expect("events");
        assert_eq!(ty(result), "result", "{name}: the file's end is the result");
        assert_eq!(n(&result["usage"]["inputTokens"]), usage.0, "{name}");
    }
}

/// A chat cut short (the CLI was rewriting it while it was read) gives
/// everything complete before the cut, one warning naming the file and the
/// byte where it ends, and exit 1; an unknown message type or a message
/// that is not an object is kept as an `unknown` event.
#[test]
fn gemini_chat_cut_short_or_odd_keeps_what_it_can() {
    let dir = fixtures_dir().join("gemini-chat");
    let cut = dir.join("cut-short_inside-a-message.json");
    let size = std::fs::metadata(&cut).unwrap().len();
    let run = cstream_file(&["--to", "events"], &cut);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("cut-short_inside-a-message.json:")
            && run.stderr.contains(&format!("cut short at byte {size}")),
        "{}",
        run.stderr
    );
    let evs = events(&run.out());
    let types: Vec<&str> = evs.iter().map(ty).collect();
    assert_eq!(
        types.iter().filter(|t| **t == "user_message").count(),
        2,
        "{types:?}"
    );
    assert_eq!(types.iter().filter(|t| **t == "text_delta").count(), 1);
    assert_eq!(types.iter().filter(|t| **t == "usage_delta").count(), 1);

    let odd = dir.join("unknown-type_not-an-object_invalid-utf8.json");
    let run = cstream_file(&["--to", "events"], &odd);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    let unknown: Vec<&Value> = evs.iter().filter(|e| ty(e) == "unknown").collect();
    assert_eq!(unknown.len(), 2);
    assert_eq!(unknown[0]["raw"]["type"], "compression");
    assert_eq!(unknown[1]["raw"], "not a message");
    assert!(run.stderr.contains(":21: invalid UTF-8"), "{}", run.stderr);
}

/// What a cursor-agent transcript itself holds, read here independently
/// of cstream: its prompts (inside `<user_query>`), the assistant's text,
/// its `tool_use` blocks and its `tool_result` blocks.
fn cursor_transcript_facts(raw: &str) -> (Vec<String>, String, usize, usize) {
    let (mut prompts, mut text, mut uses, mut results) = (Vec::new(), String::new(), 0, 0);
    for line in raw.lines() {
        let v: Value = serde_json::from_str(line).expect("JSON lines");
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            match (v["role"].as_str(), b["type"].as_str()) {
                (Some("user"), Some("text")) => {
                    let t = b["text"].as_str().unwrap_or("");
                    let q = match (t.find("<user_query>"), t.find("</user_query>")) {
                        (Some(a), Some(z)) => &t[a + "<user_query>".len()..z],
                        _ => t,
                    };
                    prompts.push(q.trim().to_owned());
                }
                (Some("assistant"), Some("text")) => {
                    text.push_str(b["text"].as_str().unwrap_or(""))
                }
                (_, Some("tool_use")) => uses += 1,
                (_, Some("tool_result")) => results += 1,
                _ => {}
            }
        }
    }
    (prompts, text, uses, results)
}

/// Every cursor-agent transcript (fixtures and real files) is recognised
/// without `--from`; its prompts lose their tags; each `tool_use` is one
/// call with one completion, and a call the file has no result for says
/// its outcome is unknown (no result, no error, not a failure); the file
/// has no usage, so no `usage_delta` and a result without `usage`.
#[test]
fn cursor_transcripts_say_what_they_do_not_record() {
    for path in inputs("cursor-transcript", "sessions/cursor-agent") {
        let name = name(&path);
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 0, "{name}: exit {}: {}", run.code, run.stderr);
        // Only the fixture with a block of an unknown type says so.
        let drift = "cstream: warning: cursor-transcript: 1 record of type \"redacted_thinking\" not understood";
        let warned: Vec<&str> = run.stderr.lines().collect();
        if name.contains("unknown-block") {
            assert!(
                warned.len() == 1 && warned[0].starts_with(drift),
                "{name}: {warned:?}"
            );
        } else {
            assert!(warned.is_empty(), "{name}: warned: {}", run.stderr);
        }
        let evs = events(&run.out());
        assert_eq!(
            evs.first().map(|e| e["dialect"].clone()),
            Some(Value::from("cursor-transcript")),
            "{name}: not read as a cursor-agent transcript"
        );
        let raw = std::fs::read_to_string(&path).unwrap();
        let (prompts, text, uses, results) = cursor_transcript_facts(&raw);
        let got: Vec<&str> = evs
            .iter()
            .filter(|e| ty(e) == "user_message")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(got, prompts, "{name}: prompts");
        assert!(
            !got.iter().any(|p| p.contains('<')),
            "{name}: tags left in {got:?}"
        );
        let got: String = evs
            .iter()
            .filter(|e| ty(e) == "text_delta")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(got, text, "{name}: assistant text");
        let started = evs.iter().filter(|e| ty(e) == "tool_call_started").count();
        let completed: Vec<&Value> = evs
            .iter()
            .filter(|e| ty(e) == "tool_call_completed")
            .collect();
        assert_eq!((started, completed.len()), (uses, uses), "{name}: calls");
        let unknown: Vec<&&Value> = completed
            .iter()
            .filter(|e| e["outcomeUnknown"] == true)
            .collect();
        assert_eq!(
            unknown.len(),
            uses - results,
            "{name}: calls without a result"
        );
        for e in unknown {
            assert_eq!(e["ok"], true, "{name}: {e}");
            assert!(
                e["result"].is_null() && e.get("error").is_none() && e.get("cancelled").is_none(),
                "{name}: {e}"
            );
        }
        assert!(
            !evs.iter().any(|e| ty(e) == "usage_delta"),
            "{name}: usage made up"
        );
        let result = evs.last().unwrap();
        assert_eq!(ty(result), "result", "{name}");
        assert!(
            result.get("usage").is_none(),
            "{name}: usage made up: {result}"
        );
        // The transcripts for people must not turn "not recorded" into a
        // verdict either: no success mark on those calls.
        if uses > results {
            for (to, success) in [
                ("markdown", "✓ outcome not recorded"),
                ("html", "ok\">✓ outcome"),
            ] {
                let page = cstream_file(&["--to", to], &path).out();
                assert!(page.contains("outcome not recorded"), "{name} --to {to}");
                assert!(
                    !page.contains(success),
                    "{name} --to {to}: shown as a success"
                );
            }
        }
    }
}

/// A Codex rollout with one 8 MB record (a tool's whole output, as a
/// rollout saves it): read like any other, no warning, the output whole
/// in the events, and every other record converted as without it.
#[test]
fn codex_rollout_with_an_8_mb_record() {
    let path = fixtures_dir()
        .join("codex-rollout/rollout_events-and-history-once_token-totals_compacted.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    let big: String = "0123456789abcdef\n".repeat(8 * 1024 * 1024 / 17);
    let mut with = String::new();
    for line in raw.lines() {
        with.push_str(line);
        with.push('\n');
        if line.contains("\"type\":\"function_call\"") && line.contains("call_A1") {
            let rec = serde_json::json!({
                "timestamp": "2026-03-02T09:00:06.000Z",
                "type": "response_item",
                "payload": {"type": "function_call", "name": "exec_command",
                    "arguments": "{\"cmd\":\"cat big.log\"}", "call_id": "call_BIG"},
            });
            with.push_str(&format!("{rec}\n"));
            let rec = serde_json::json!({
                "timestamp": "2026-03-02T09:00:07.000Z",
                "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": "call_BIG", "output": big},
            });
            with.push_str(&format!("{rec}\n"));
        }
    }
    assert!(
        with.len() > raw.len() + 8_000_000,
        "the record was not planted"
    );
    let plain = common::cstream(&["--to", "events"], raw.as_bytes());
    let run = common::cstream(&["--to", "events"], with.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "warned: {}", run.stderr);
    let evs = events(&run.out());
    let done = evs
        .iter()
        .find(|e| ty(e) == "tool_call_completed" && e["callId"] == "call_BIG")
        .expect("the big call completes");
    assert!(
        done.to_string()
            .contains(&serde_json::to_string(&big).unwrap()[1..1000]),
        "the output is not there"
    );
    let others = |evs: &[Value]| -> Vec<String> {
        evs.iter()
            .filter(|e| e["callId"] != "call_BIG")
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().unwrap().remove("ts");
                e.to_string()
            })
            .collect()
    };
    let (a, b) = (others(&events(&plain.out())), others(&evs));
    assert_eq!(a, b, "events beside the big record changed");
}

/// A Gemini CLI chat names its model on each response, not in its head:
/// the session names the first response's model (it read "unknown").
#[test]
fn gemini_chats_name_the_model_their_responses_name() {
    let mut checked = 0;
    for path in inputs("gemini-chat", "sessions/gemini") {
        let name = name(&path);
        let raw = std::fs::read(&path).unwrap();
        // A JSONL chat, or one document (cut-short and invalid ones are
        // read as far as they go).
        let text = String::from_utf8_lossy(&raw);
        let first_model = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| {
                v["messages"].as_array().and_then(|ms| {
                    ms.iter()
                        .find(|m| m["type"] == "gemini")
                        .and_then(|m| m["model"].as_str().map(str::to_owned))
                })
            })
            .or_else(|| {
                text.lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find(|m| m["type"] == "gemini")
                    .and_then(|m| m["model"].as_str().map(str::to_owned))
            });
        let Some(want) = first_model else { continue };
        let evs = events(&cstream_file(&["--to", "events"], &path).out());
        let started = evs.iter().find(|e| ty(e) == "session_started").unwrap();
        assert_eq!(started["model"], want.as_str(), "{name}");
        assert_eq!(
            ty(&evs[0]),
            "session_started",
            "{name}: the session begins first"
        );
        checked += 1;
    }
    assert!(checked >= 2, "{checked} chats with a model");
}
