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
/// count only from a line with a `stop_reason` (the others hold streaming
/// placeholders). Sidechain lines in a main transcript are another agent's.
fn claude_transcript_usage(raw: &str) -> Counts {
    let mut msgs: HashMap<String, (Counts, bool)> = HashMap::new();
    let mut sidechain_file = None;
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
        let id = m["id"]
            .as_str()
            .or(v["requestId"].as_str())
            .unwrap_or_default()
            .to_owned();
        let u = &m["usage"];
        let (cr, cw) = (
            n(&u["cache_read_input_tokens"]),
            n(&u["cache_creation_input_tokens"]),
        );
        let fin = !m["stop_reason"].is_null();
        let out = if fin { n(&u["output_tokens"]) } else { 0 };
        let e = msgs
            .entry(id)
            .or_insert(((n(&u["input_tokens"]) + cr + cw, 0, cr, cw), false));
        if fin && !e.1 {
            e.0.1 = out;
            e.1 = true;
        }
    }
    msgs.values().fold((0, 0, 0, 0), |a, ((i, o, r, w), _)| {
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
            .collect();
        assert!(other.is_empty(), "{name}: warned: {}", run.stderr);
        let evs = events(&run.out());
        assert_eq!(
            evs.first().map(|e| e["dialect"].clone()),
            Some(Value::from("claude-project")),
            "{name}: not read as a Claude Code transcript"
        );
        assert!(
            !evs.iter().any(|e| ty(e) == "unknown"),
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

/// The rollout's items, wrapped (`{type, payload}`) or bare (the older shape).
fn rollout_items(raw: &str) -> Vec<(String, Value)> {
    raw.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| match v["payload"].is_object() {
            true => (
                v["type"].as_str().unwrap_or("").to_owned(),
                v["payload"].clone(),
            ),
            false => ("response_item".to_owned(), v),
        })
        .collect()
}

/// The assistant's text as the model's history holds it, read here
/// independently of cstream.
fn codex_history_text(raw: &str) -> String {
    let mut s = String::new();
    for (kind, p) in rollout_items(raw) {
        if kind == "response_item" && p["type"] == "message" && p["role"] == "assistant" {
            for part in p["content"].as_array().into_iter().flatten() {
                s.push_str(part["text"].as_str().unwrap_or(""));
            }
        }
    }
    s
}

/// The rollout's last running total (input, output), if it has one.
fn codex_last_total(raw: &str) -> Option<(u64, u64)> {
    rollout_items(raw)
        .into_iter()
        .filter(|(k, p)| k == "event_msg" && p["type"] == "token_count")
        .filter_map(|(_, p)| {
            let t = &p["info"]["total_token_usage"];
            t.is_object()
                .then(|| (n(&t["input_tokens"]), n(&t["output_tokens"])))
        })
        .next_back()
}

/// Every Codex rollout (fixtures and real files) is recognised without
/// `--from` and read without a warning or an `unknown` event; the text the
/// history and the interface's events both carry is shown once; usage adds
/// up to the rollout's own last running total (never a total summed twice).
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
        let text: String = evs
            .iter()
            .filter(|e| ty(e) == "text_delta")
            .map(|e| e["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(text, codex_history_text(&raw), "{name}: assistant text");
        let (i, o, _, _) = delta_sums(&evs);
        assert_eq!(
            (i, o),
            codex_last_total(&raw).unwrap_or((0, 0)),
            "{name}: usage_delta sums"
        );
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
        let typed = rollout_items(&raw)
            .iter()
            .filter(|(k, p)| k == "event_msg" && p["type"] == "user_message")
            .count();
        if typed > 0 {
            assert_eq!(prompts.len(), typed, "{name}: prompts");
        }
    }
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
            !n.starts_with("cut-short") && !n.starts_with("unknown-type")
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
        assert!(run.stderr.is_empty(), "{name}: warned: {}", run.stderr);
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
    }
}
