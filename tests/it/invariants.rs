//! Properties every conversion must have, checked on every fixture and (when
//! `../shared/corpus/cursor-agent` exists) on every real capture:
//!
//! - every `events` line is a JSON object whose first key is `type` and
//!   second `sessionId`; a session's events are contiguous;
//! - the concatenated `text_delta` text of a session equals its `result.text`
//!   (allow-listed exceptions below must really diverge, and then nothing
//!   may have been added);
//! - every `tool_call_started` has exactly one `tool_call_completed` with the
//!   same `callId` after it (synthesized ones say `cancelled:true`), and a
//!   call completes once (a completion without a start too);
//! - the `usage_delta`s of a session add up to its `result.usage`, and those
//!   of each turn to what the agent itself reports for that turn, however
//!   many turns an input has (`usage_sums_equal_the_agents_own_totals…`);
//! - reading the events back (`--from events`) gives the same bytes.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::{Run, corpus, cstream, cstream_file, events, fixtures, run_fixture};
use serde_json::Value;

/// Inputs whose `result.result` deliberately does not extend the assistant
/// text: the result is kept as it is and nothing is added to the text.
const DIVERGENT_RESULT: &[(&str, &str)] = &[
    (
        "divergent-result.jsonl",
        "hand-written: the result (\"42\") is not an extension of the answer text",
    ),
    (
        "cursor-hack_full-session_author-trimmed-fixture_shell.jsonl",
        "corpus: the upstream authors trimmed this capture's result to \"done\"",
    ),
];

/// One session's events, in order.
struct Session {
    id: String,
    events: Vec<Value>,
}

/// The dialect named by the session's `session_started` (cursor if none).
fn dialect(s: &Session) -> &str {
    s.events
        .iter()
        .find(|e| ty(e) == "session_started")
        .and_then(|e| e["dialect"].as_str())
        .unwrap_or("cursor")
}

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

/// Check the wire form of every line and split the events into sessions.
fn sessions(name: &str, out: &str) -> Vec<Session> {
    for line in out.lines() {
        // `type` first, `sessionId` second, as docs/events.md#wire-format fixes the order.
        let rest = line
            .strip_prefix("{\"type\":\"")
            .unwrap_or_else(|| panic!("{name}: line does not start with type: {line}"));
        let end = rest.find('"').expect("type value ends");
        assert!(
            rest[end..].starts_with("\",\"sessionId\":\""),
            "{name}: sessionId is not the second key: {line}"
        );
    }
    let mut out_sessions: Vec<Session> = Vec::new();
    for e in events(out) {
        assert!(e.is_object(), "{name}: event is not an object: {e}");
        let id = e["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no string sessionId: {e}"))
            .to_owned();
        // A session begins with session_started (several sessions may share
        // an id, e.g. turns of one Codex thread), or where the id changes.
        let starts = e["type"] == "session_started";
        match out_sessions.last_mut() {
            Some(s) if s.id == id && !starts => s.events.push(e),
            _ => {
                assert!(
                    starts || out_sessions.iter().all(|s| s.id != id),
                    "{name}: session {id} is not contiguous"
                );
                out_sessions.push(Session {
                    id,
                    events: vec![e],
                });
            }
        }
    }
    out_sessions
}

fn text_of(s: &Session) -> String {
    s.events
        .iter()
        // A coalesced `assistant_message` (read back with --from events) is text too.
        .filter(|e| matches!(ty(e), "text_delta" | "assistant_message"))
        .map(|e| e["text"].as_str().expect("text events have text"))
        .collect()
}

/// Check every invariant on the `--to events` output of `file` (called `name`).
fn check(name: &str, run: &Run) {
    let out = run.out();
    let divergent = DIVERGENT_RESULT.iter().any(|(n, _)| *n == name);
    let mut diverged = false;
    for s in sessions(name, &out) {
        let ctx = format!("{name} (session {})", s.id);
        let results: Vec<&Value> = s.events.iter().filter(|e| ty(e) == "result").collect();
        assert!(results.len() <= 1, "{ctx}: more than one result");

        // Text: the deltas rebuild the authoritative result text (of a
        // successful result: an error result's text is not the answer).
        if let Some(want) = results
            .first()
            .filter(|r| r["ok"] == true)
            .and_then(|r| r["text"].as_str())
        {
            let got = text_of(&s);
            if divergent {
                diverged |= got != want;
                // Nothing may be added to make them agree.
                assert!(
                    got == want || !got.ends_with(want),
                    "{ctx}: result text was appended to a divergent session: {got:?}"
                );
            } else if dialect(&s) == "cursor" {
                assert_eq!(got, want, "{ctx}: text_delta concatenation != result.text");
            } else {
                // Other agents' result text is their last message (Claude
                // Code, Codex, Gemini): the session's text ends with it.
                assert!(
                    got.ends_with(want),
                    "{ctx}: text {got:?} does not end with the result {want:?}"
                );
            }
        }

        // Tool calls: each start has exactly one completion after it, and a
        // call completes once.
        let mut open: HashMap<String, &str> = HashMap::new();
        let mut completed: HashMap<String, usize> = HashMap::new();
        for e in &s.events {
            match ty(e) {
                "tool_call_started" => {
                    let id = e["callId"].as_str().expect("callId");
                    let name = e["toolName"].as_str().expect("toolName");
                    assert!(
                        open.insert(id.to_owned(), name).is_none(),
                        "{ctx}: call {id:?} started twice without completing"
                    );
                }
                "tool_call_completed" => {
                    let id = e["callId"].as_str().expect("callId");
                    let n = completed.entry(id.to_owned()).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "{ctx}: call {id:?} completed more than once");
                    let started = open.remove(id);
                    if e["cancelled"] == Value::Bool(true) {
                        assert!(
                            started.is_some(),
                            "{ctx}: cancelled completion for a call that was not open: {e}"
                        );
                        assert_eq!(e["ok"], Value::Bool(false), "{ctx}: cancelled but ok");
                    }
                    if let Some(tool) = started {
                        assert_eq!(e["toolName"], tool, "{ctx}: toolName changed for {id:?}");
                    }
                    // A completion whose start was never seen (a capture that
                    // begins mid-call) is passed through as it is.
                }
                // Calls may still be open at the result: an agent can send a
                // completion after it (it is attached to its call); by the
                // session's end every call has completed, checked below.
                _ => {}
            }
        }
        assert!(
            open.is_empty(),
            "{ctx}: calls never completed: {:?}",
            open.keys().collect::<Vec<_>>()
        );

        // Usage: the increments add up to the session totals.
        if let Some(total) = results
            .first()
            .map(|r| &r["usage"])
            .filter(|u| u.is_object())
        {
            let sum = |k: &str| -> u64 {
                s.events
                    .iter()
                    .filter(|e| ty(e) == "usage_delta")
                    .map(|e| e[k].as_u64().unwrap_or(0))
                    .sum()
            };
            assert_eq!(
                sum("deltaInput"),
                total["inputTokens"].as_u64().unwrap(),
                "{ctx}: input"
            );
            assert_eq!(
                sum("deltaOutput"),
                total["outputTokens"].as_u64().unwrap(),
                "{ctx}: output"
            );
        }
    }
    if divergent {
        assert!(
            diverged,
            "{name} is allow-listed as divergent but its result matches: remove it"
        );
    }
}

/// Converting the events back gives the same events.
fn check_roundtrip(name: &str, run: &Run) {
    let back = cstream(&["--from", "events", "--to", "events"], &run.stdout);
    assert_eq!(
        back.out(),
        run.out(),
        "{name}: events via --from events differ"
    );
}

fn file_name(p: &Path) -> &str {
    p.file_name()
        .and_then(|n| n.to_str())
        .expect("UTF-8 file name")
}

#[test]
fn every_fixture_holds_the_invariants() {
    let all = fixtures();
    assert!(all.len() >= 20, "fixtures missing: found {}", all.len());
    for path in all {
        let run = run_fixture(&path, &["--to", "events"]);
        check(file_name(&path), &run);
        check_roundtrip(file_name(&path), &run);
    }
}

/// The real captures, when the shared corpus is there (it is not part of the
/// repository: skipped on a clone without it, required where `CI` is set).
/// What the agent itself says each turn used, in order: one `(input,
/// output)` per turn that reports usage, read from the raw input with the
/// agent's own conventions (independently of the readers): per-turn figures
/// as they are, running totals (Codex's per thread) as differences. Input
/// counts include the cache, as cstream's do. `None` for inputs that are
/// not an agent's stream (cstream's own events).
fn agent_turn_usage(dialect: &str, raw: &str) -> Option<Vec<(u64, u64)>> {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let sum = |v: &Value, keys: &[&str]| keys.iter().fold(0u64, |a, k| a.saturating_add(n(&v[*k])));
    let lines = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.is_object());
    let mut turns = Vec::new();
    match dialect {
        "claude" => {
            // A turn used what `modelUsage` (per model, the process's running
            // totals, sub-agents included) added since the session's previous
            // result (all of it when a total went down: a new process);
            // without it, `result.usage` (the main loop's) plus the
            // sub-agents' messages (`parent_tool_use_id`), each message's
            // largest snapshot.
            let api_in = |u: &Value| {
                sum(
                    u,
                    &[
                        "input_tokens",
                        "cache_read_input_tokens",
                        "cache_creation_input_tokens",
                    ],
                )
            };
            let (mut sid, mut prev) = (None::<String>, HashMap::<String, (u64, u64)>::new());
            let mut sub = HashMap::<String, (u64, u64)>::new();
            for v in lines {
                let t = v["type"].as_str().unwrap_or("");
                if t == "system" && v["subtype"] == "init" {
                    let id = v["session_id"].as_str().map(str::to_owned);
                    if id != sid {
                        prev.clear();
                    }
                    sid = id;
                } else if t == "assistant" && v["parent_tool_use_id"].is_string() {
                    let u = &v["message"]["usage"];
                    if let (Some(id), true) = (v["message"]["id"].as_str(), u.is_object()) {
                        let e = sub.entry(id.to_owned()).or_default();
                        *e = (e.0.max(api_in(u)), e.1.max(n(&u["output_tokens"])));
                    }
                } else if t == "result" {
                    let mu = &v["modelUsage"];
                    if let Some(m) = mu.as_object() {
                        let now: HashMap<String, (u64, u64)> = m
                            .iter()
                            .map(|(k, u)| {
                                let i = sum(
                                    u,
                                    &[
                                        "inputTokens",
                                        "cacheReadInputTokens",
                                        "cacheCreationInputTokens",
                                    ],
                                );
                                (k.clone(), (i, n(&u["outputTokens"])))
                            })
                            .collect();
                        let down = now.iter().any(|(k, (i, o))| {
                            prev.get(k).is_some_and(|(pi, po)| i < pi || o < po)
                        });
                        let turn = now.iter().fold((0, 0), |(ai, ao), (k, (i, o))| {
                            let (pi, po) = if down {
                                (0, 0)
                            } else {
                                prev.get(k).copied().unwrap_or((0, 0))
                            };
                            (ai + i - pi, ao + o - po)
                        });
                        turns.push(turn);
                        prev = now;
                    } else if v["usage"].is_object() {
                        let u = &v["usage"];
                        let (si, so) = sub.values().fold((0, 0), |(a, b), (i, o)| (a + i, b + o));
                        turns.push((api_in(u) + si, n(&u["output_tokens"]) + so));
                    }
                    sub.clear();
                }
            }
        }
        "codex" => {
            // Running totals per thread (current form) or per conversation
            // (legacy `token_count`): a turn used what its total adds.
            let (mut thread, mut last, mut total) = (None::<String>, (0, 0), (0, 0));
            for v in lines {
                let t = v["type"].as_str().unwrap_or("");
                let msg_t = v["msg"]["type"].as_str().unwrap_or("");
                if t == "thread.started" {
                    let id = v["thread_id"].as_str().map(str::to_owned);
                    if id != thread {
                        (last, total) = ((0, 0), (0, 0));
                    }
                    thread = id;
                } else if t == "turn.completed" && v["usage"].is_object() {
                    let u = &v["usage"];
                    total = (n(&u["input_tokens"]), n(&u["output_tokens"]));
                    turns.push((
                        total.0.saturating_sub(last.0),
                        total.1.saturating_sub(last.1),
                    ));
                    last = total;
                } else if msg_t == "token_count" {
                    let u = &v["msg"]["info"]["total_token_usage"];
                    total = (n(&u["input_tokens"]), n(&u["output_tokens"]));
                } else if msg_t == "task_complete" && total != last {
                    turns.push((
                        total.0.saturating_sub(last.0),
                        total.1.saturating_sub(last.1),
                    ));
                    last = total;
                }
            }
        }
        "gemini" => {
            for v in lines.filter(|v| v["type"] == "result" && v["stats"].is_object()) {
                let st = &v["stats"];
                turns.push((n(&st["input_tokens"]), n(&st["output_tokens"])));
            }
        }
        "cursor" => {
            for v in lines.filter(|v| v["type"] == "result" && v["usage"].is_object()) {
                let u = &v["usage"];
                let input = sum(u, &["inputTokens", "cacheReadTokens", "cacheWriteTokens"]);
                turns.push((input, n(&u["outputTokens"])));
            }
        }
        "cursor-sdk" => {
            // `turn-ended` ends a turn with its usage; in the run stream,
            // `usage` messages count per model turn until `status` ends the run.
            let mut run: Option<(u64, u64)> = None;
            for v in lines {
                let v = if v["type"] == "sdk_message" {
                    &v["message"]
                } else {
                    &v
                };
                let u = &v["usage"];
                let this = || {
                    let input = sum(u, &["inputTokens", "cacheReadTokens", "cacheWriteTokens"]);
                    (input, n(&u["outputTokens"]))
                };
                match v["type"].as_str().unwrap_or("") {
                    "turn-ended" if u.is_object() => turns.push(this()),
                    "usage" if u.is_object() => {
                        let (i, o) = this();
                        let (ri, ro) = run.unwrap_or((0, 0));
                        run = Some((ri.saturating_add(i), ro.saturating_add(o)));
                    }
                    "status" if v["status"] != "RUNNING" && v["status"] != "CREATING" => {
                        turns.extend(run.take());
                    }
                    _ => {}
                }
            }
        }
        "antigravity" => {
            // agy's `result` totals run over the conversation (earlier
            // processes and turns included): a process used what its last
            // result adds to the conversation's totals before it began.
            // A process that resumed a conversation read elsewhere (first
            // step above 0, no earlier process here) has no usage to compare,
            // nor has one that ended mid-turn.
            let api = |u: &Value| {
                (
                    sum(u, &["input_tokens", "cache_read_tokens"]),
                    n(&u["output_tokens"]),
                )
            };
            let mut prior = HashMap::<String, (u64, u64)>::new();
            let (mut conv, mut base, mut first, mut last) = (
                String::new(),
                None::<(u64, u64)>,
                None::<u64>,
                None::<(u64, u64)>,
            );
            let end = |prior: &mut HashMap<String, (u64, u64)>,
                       conv: &str,
                       base: Option<(u64, u64)>,
                       first: Option<u64>,
                       last: Option<(u64, u64)>,
                       turns: &mut Vec<(u64, u64)>| {
                let Some(l) = last else { return };
                match base {
                    Some(b) => turns.push((l.0 - b.0, l.1 - b.1)),
                    None if first.is_none_or(|f| f == 0) => turns.push(l),
                    None => {}
                }
                prior.insert(conv.to_owned(), l);
            };
            for v in lines {
                match v["event"].as_str().unwrap_or("") {
                    "init" => {
                        end(&mut prior, &conv, base, first, last, &mut turns);
                        conv = v["conversation_id"].as_str().unwrap_or("").to_owned();
                        base = prior.get(&conv).copied();
                        (first, last) = (None, None);
                    }
                    "step_update" => {
                        first = first.or(v["step_update"]["step_index"].as_u64());
                        // A turn begun after the last result and never
                        // ended: the process has no final figure.
                        if v["step_update"]["step_type"] != "checkpoint" {
                            last = None;
                        }
                    }
                    "result" if v["result"]["usage"].is_object() => {
                        last = Some(api(&v["result"]["usage"]));
                    }
                    _ => {}
                }
            }
            end(&mut prior, &conv, base, first, last, &mut turns);
        }
        "acp" => {
            for v in lines.filter(|v| v["result"]["stopReason"].is_string()) {
                let r = &v["result"];
                let u = &r["usage"];
                let q = &r["_meta"]["quota"]["token_count"];
                if u.is_object() {
                    let input = sum(u, &["inputTokens", "cachedReadTokens", "cachedWriteTokens"]);
                    turns.push((input, n(&u["outputTokens"])));
                } else if q.is_object() {
                    turns.push((n(&q["input_tokens"]), n(&q["output_tokens"])));
                }
            }
        }
        _ => return None,
    }
    Some(turns)
}

/// The sum of `usage_delta`s of each session whose result reports usage.
fn output_turn_usage(name: &str, out: &str) -> Vec<(u64, u64)> {
    sessions(name, out)
        .iter()
        .filter(|s| {
            s.events
                .iter()
                .any(|e| ty(e) == "result" && e["usage"].is_object())
        })
        .map(|s| {
            let deltas = s.events.iter().filter(|e| ty(e) == "usage_delta");
            deltas.fold((0u64, 0u64), |(i, o), e| {
                (
                    i.saturating_add(e["deltaInput"].as_u64().unwrap_or(0)),
                    o.saturating_add(e["deltaOutput"].as_u64().unwrap_or(0)),
                )
            })
        })
        .collect()
}

fn check_turn_usage(name: &str, path: &Path, run: &Run) {
    let out = run.out();
    let Some(dialect) = sessions(name, &out).first().map(|s| dialect(s).to_owned()) else {
        return;
    };
    let raw = std::fs::read(path).expect("input is readable");
    let raw = String::from_utf8_lossy(&raw);
    // cstream's own events (top-level `sessionId`) carry no agent figures.
    let own_events = raw
        .lines()
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .is_some_and(|v| v.get("sessionId").is_some());
    if own_events {
        return;
    }
    let Some(want) = agent_turn_usage(&dialect, &raw) else {
        return;
    };
    assert_eq!(
        output_turn_usage(name, &out),
        want,
        "{name}: the usage_delta sums of its turns (input, output) differ from the agent's own"
    );
}

/// The sum of a session's `usage_delta`s equals what the agent really used,
/// turn by turn, whatever the number of turns (Claude Code's init and
/// result per turn, Codex threads resumed or new, ACP prompts…): a running
/// total is never counted twice and never restarts mid-turn.
#[test]
fn usage_sums_equal_the_agents_own_totals_across_turns() {
    let all = fixtures();
    assert!(all.len() >= 20, "fixtures missing: found {}", all.len());
    for path in all {
        let run = run_fixture(&path, &["--to", "events"]);
        check_turn_usage(file_name(&path), &path, &run);
    }
    for d in ["cursor-agent", "claude-code", "codex"] {
        for path in corpus(d) {
            let run = cstream_file(&["--to", "events"], &path);
            check_turn_usage(file_name(&path), &path, &run);
        }
    }
}

#[test]
fn corpus_captures_hold_the_invariants() {
    let mut files = corpus("cursor-agent");
    if files.is_empty() {
        eprintln!("no ../shared/corpus/cursor-agent captures: skipped");
        return;
    }
    files.extend(corpus("claude-code"));
    files.extend(corpus("codex"));
    // Saved sessions (read with auto-detection, like the live captures).
    files.extend(corpus("sessions/claude-code"));
    files.extend(corpus("sessions/codex"));
    for path in files {
        let run = cstream_file(&["--to", "events"], &path);
        let name = file_name(&path);
        // Captures are whole, valid streams: nothing on them is a bad line.
        assert_eq!(run.code, 0, "{name}: exit {}: {}", run.code, run.stderr);
        check(name, &run);
        check_roundtrip(name, &run);
    }
}

#[test]
fn the_allow_list_names_files_that_exist() {
    let fixture_names: Vec<String> = fixtures().iter().map(|p| file_name(p).to_owned()).collect();
    let corpus_names: Vec<String> = corpus("cursor-agent")
        .iter()
        .map(|p| file_name(p).to_owned())
        .collect();
    for (name, why) in DIVERGENT_RESULT {
        let is_corpus = why.starts_with("corpus:");
        if is_corpus && corpus_names.is_empty() {
            continue;
        }
        let names = if is_corpus {
            &corpus_names
        } else {
            &fixture_names
        };
        assert!(
            names.iter().any(|n| n == name),
            "allow-listed {name} not found"
        );
    }
}

fn fixture(rel: &str) -> std::path::PathBuf {
    common::fixtures_dir().join(rel)
}

fn texts(run: &Run) -> Vec<String> {
    events(&run.out())
        .iter()
        .filter(|e| ty(e) == "text_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn no_dedupe_keeps_recap_text() {
    // Deltas, a recap with model_call_id before the tool call, deltas, a final
    // recap without timestamp_ms: with --no-dedupe every segment comes twice.
    let path = fixture("cursor/partial_deltas_recap-before-tools_final-recap.jsonl");
    let kept = cstream_file(&["--to", "events", "--no-dedupe"], &path);
    assert_eq!(
        texts(&kept).concat(),
        "I'll run the failing test.I'll run the failing test.The test passes now.The test passes now."
    );
    let deduped = cstream_file(&["--to", "events"], &path);
    assert_eq!(
        texts(&deduped).concat(),
        "I'll run the failing test.The test passes now."
    );
    // Without dedupe the result does not add its tail either.
    let path = fixture("cursor/partial_recap-longer-than-deltas.jsonl");
    let kept = cstream_file(&["--to", "events", "--no-dedupe"], &path);
    assert_eq!(
        texts(&kept),
        [
            "Let me",
            " look",
            "Let me look at the sitemap generator.",
            "Let me look at the sitemap generator.",
            "Yes",
            ": both",
            "Yes: both files changed in the same commit."
        ]
    );
}

#[test]
fn a_recap_longer_than_its_deltas_adds_its_tail_once() {
    let run = run_fixture(
        &fixture("cursor/partial_recap-longer-than-deltas.jsonl"),
        &["--to", "events"],
    );
    assert_eq!(
        texts(&run),
        [
            "Let me",
            " look",
            " at the sitemap generator.",
            "Yes",
            ": both",
            " files changed in the same commit."
        ]
    );
}

#[test]
fn repeated_and_whitespace_deltas_are_never_dropped() {
    let path = fixture("cursor/partial_repeated-and-whitespace-deltas.jsonl");
    let input = std::fs::read_to_string(&path).unwrap();
    // Every assistant line with timestamp_ms (and no model_call_id) is a delta.
    let sent: Vec<String> = input
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "assistant" && v.get("timestamp_ms").is_some())
        .map(|v| {
            v["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(sent.iter().any(|t| t == "```") && sent.iter().any(|t| t == "\n\n"));
    assert!(
        sent.windows(2).any(|w| w[0] == w[1]),
        "fixture has no back-to-back repeat"
    );
    let run = run_fixture(&path, &["--to", "events"]);
    assert_eq!(texts(&run), sent);
}

#[test]
fn cut_off_sessions_close_open_calls_as_cancelled() {
    for (rel, call) in [
        ("cursor/cut-off_open-tool-call.jsonl", "call_build"),
        ("cursor/two-sessions_first-cut-off.jsonl", "call_tail"),
    ] {
        let run = run_fixture(&fixture(rel), &["--to", "events"]);
        let evs = events(&run.out());
        let cancelled: Vec<&Value> = evs
            .iter()
            .filter(|e| ty(e) == "tool_call_completed" && e["cancelled"] == Value::Bool(true))
            .collect();
        assert_eq!(cancelled.len(), 1, "{rel}");
        assert_eq!(cancelled[0]["callId"], call, "{rel}");
        assert_eq!(cancelled[0]["ok"], Value::Bool(false), "{rel}");
    }
}

#[test]
fn parallel_calls_complete_in_finish_order_with_their_own_ids() {
    let run = run_fixture(
        &fixture("cursor/parallel-tools_out-of-order_newline-in-call-id.jsonl"),
        &["--to", "events"],
    );
    let evs = events(&run.out());
    let order: Vec<(&str, &str)> = evs
        .iter()
        .filter(|e| ty(e).starts_with("tool_call_"))
        .map(|e| (ty(e), e["callId"].as_str().unwrap()))
        .collect();
    assert_eq!(order.len(), 4);
    // The newline inside the id survives (escaped on the wire).
    assert!(order.iter().all(|(_, id)| id.contains('\n')));
    assert_eq!(order[0].1, order[3].1, "first started completes last");
    assert_eq!(order[1].1, order[2].1, "second started completes first");
}
