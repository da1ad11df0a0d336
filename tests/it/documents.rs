//! Invariants of `--to documents` and `--to documents-sse`, over every
//! fixture and every real capture in `../shared/corpus/cursor-agent/`:
//! - sequences are dense from 1 and ids are `doc_001`, `doc_002`, …;
//! - the `content_delta`s of a document add up to its `finalContent`;
//! - `toolCallCount` is the number of tool calls in the input;
//! - the documents rebuilt from `documents-sse` equal `--to documents`;
//! - pretty and compact `documents` are the same values;
//! - SSE records are well formed (`event: T` + `data: {"type":"T",…}`, each
//!   session ending with `data: [DONE]`).

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use common::{corpus, cstream, cstream_file, fixture_args, fixtures};
use cstream::{Config, Format, convert};
use serde_json::{Map, Value, json};

const CREATED: &str = "1700000000";

fn inputs() -> Vec<PathBuf> {
    let mut all = fixtures();
    all.extend(corpus("cursor-agent"));
    assert!(all.len() > 5, "fixtures missing");
    all
}

fn run(path: &Path, args: &[&str]) -> String {
    let extra = fixture_args(path);
    let mut a: Vec<&str> = args.to_vec();
    a.extend(["--created", CREATED]);
    for e in &extra {
        if !a.contains(&e.as_str()) {
            a.push(e);
        }
    }
    let r = cstream_file(&a, path);
    r.out()
}

/// Every JSON value in `s`, one after another (pretty or JSON Lines).
fn values(s: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(s)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not a JSON value stream: {e}\n{s}"))
}

/// Rebuild each session's `ChatResponse` from a documents-sse stream,
/// checking the stream's own rules on the way.
fn rebuild(sse: &str, what: &str) -> Vec<Value> {
    let mut sessions = Vec::new();
    let mut docs: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut deltas: BTreeMap<String, String> = BTreeMap::new();
    let mut open: HashSet<String> = HashSet::new();
    let mut done: Option<Map<String, Value>> = None;
    assert!(
        sse.is_empty() || sse.ends_with("\n\n"),
        "{what}: unterminated record"
    );
    for rec in sse.split_terminator("\n\n") {
        if rec == "data: [DONE]" {
            let mut resp = done
                .take()
                .unwrap_or_else(|| panic!("{what}: [DONE] without done"));
            assert!(open.is_empty(), "{what}: documents left open: {open:?}");
            // `documents` goes right after `status`, as in --to documents.
            let mut out = Map::new();
            for (k, v) in std::mem::take(&mut resp) {
                out.insert(k.clone(), v);
                if k == "status" {
                    let list: Vec<Value> = std::mem::take(&mut docs)
                        .into_values()
                        .map(Value::Object)
                        .collect();
                    out.insert("documents".into(), Value::Array(list));
                }
            }
            sessions.push(Value::Object(out));
            deltas.clear();
            continue;
        }
        let (ev, data) = rec
            .strip_prefix("event: ")
            .and_then(|r| r.split_once("\ndata: "))
            .unwrap_or_else(|| panic!("{what}: malformed record {rec:?}"));
        assert!(!data.contains('\n'), "{what}: multi-line data");
        let v: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{what}: {e}: {data}"));
        assert_eq!(v["type"], ev, "{what}: type differs from event name");
        assert!(done.is_none(), "{what}: {ev} after done");
        let id = v["documentId"].as_str().map(str::to_owned);
        match ev {
            "document_start" => {
                let d = &v["document"];
                let id = d["id"].as_str().unwrap().to_owned();
                assert!(open.insert(id.clone()), "{what}: {id} started twice");
                let seq = d["sequence"].as_u64().unwrap();
                let mut m = Map::new();
                m.insert("id".into(), d["id"].clone());
                m.insert("type".into(), d["type"].clone());
                m.insert("sequence".into(), d["sequence"].clone());
                assert!(d["metadata"].is_object(), "{what}: start metadata");
                assert!(
                    docs.insert(seq, m).is_none(),
                    "{what}: sequence {seq} reused"
                );
            }
            "content_delta" => {
                let id = id.unwrap();
                assert!(
                    open.contains(&id),
                    "{what}: delta for {id} which is not open"
                );
                let delta = v["delta"].as_str().unwrap();
                assert!(!delta.is_empty(), "{what}: empty delta");
                deltas.entry(id).or_default().push_str(delta);
            }
            "tool_call_start" | "tool_call_arguments" | "tool_result" => {
                let id = id.unwrap();
                assert!(
                    open.contains(&id),
                    "{what}: {ev} for {id} which is not open"
                );
            }
            "document_end" => {
                let id = id.unwrap();
                assert!(open.remove(&id), "{what}: end of {id} which is not open");
                let seq: u64 = id.strip_prefix("doc_").unwrap().parse().unwrap();
                let d = docs.get_mut(&seq).unwrap();
                let fin = v["finalContent"].clone();
                // The deltas of every document add up to its final content.
                match (&fin, deltas.remove(&id)) {
                    (Value::String(f), Some(got)) => assert_eq!(&got, f, "{what}: deltas of {id}"),
                    (Value::String(f), None) => assert_eq!(f, "", "{what}: {id} had no deltas"),
                    (Value::Null, None) => {}
                    (f, got) => panic!("{what}: {id} final {f:?} deltas {got:?}"),
                }
                d.insert("content".into(), fin);
                d.insert("metadata".into(), v["metadata"].clone());
            }
            "done" => {
                let mut m = v.as_object().unwrap().clone();
                m.remove("type");
                assert!(!m.contains_key("documents"));
                done = Some(m);
            }
            other => panic!("{what}: unknown event {other}"),
        }
    }
    assert!(done.is_none(), "{what}: done without [DONE]");
    sessions
}

/// Tool calls in a cursor-agent capture: starts, plus completions never started.
fn tool_calls_in(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let mut started = HashSet::new();
    let mut frames = Vec::new();
    let mut n = 0;
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["type"] == "result" {
            n += text_calls_in(v["result"].as_str().unwrap_or(""), &frames);
        }
        if v["type"] != "tool_call" {
            continue;
        }
        if let Some(args) = v["tool_call"]
            .as_object()
            .and_then(|o| o.iter().find(|(k, _)| k.ends_with("ToolCall")))
            .map(|(_, c)| c["args"].clone())
        {
            frames.push(args);
        }
        let id = v["call_id"].as_str().unwrap_or("").to_owned();
        match v["subtype"].as_str() {
            // A call started again (a repeated line) is still one call.
            Some("started") if started.insert(id.clone()) => n += 1,
            Some("completed") if !started.contains(&id) => n += 1,
            _ => {}
        }
    }
    n
}

/// Tool calls a model wrote as text in a cursor-agent answer
/// (`[TOOL_CALL]name[ARGS]{…}`, docs/dialects.md#cursor-agent): whole ones
/// whose arguments are not those of a `tool_call` frame (`frames`) of the
/// session (a repeat is not a second call).
fn text_calls_in(answer: &str, frames: &[Value]) -> u64 {
    let mut n = 0;
    for (i, _) in answer.match_indices("[TOOL_CALL]") {
        let rest = &answer[i + "[TOOL_CALL]".len()..];
        let Some(a) = rest.find("[ARGS]") else {
            continue;
        };
        if a == 0 || rest[..a].contains(['[', ']']) {
            continue;
        }
        let mut args =
            serde_json::Deserializer::from_str(&rest[a + "[ARGS]".len()..]).into_iter::<Value>();
        if let Some(Ok(v)) = args.next()
            && v.is_object()
            && !frames.contains(&v)
        {
            n += 1;
        }
    }
    n
}

#[test]
fn documents_invariants_on_every_input() {
    for path in inputs() {
        for thinking in [false, true] {
            let what = format!(
                "{}{}",
                path.display(),
                if thinking { " --thinking" } else { "" }
            );
            let mut base = vec!["--to", "documents"];
            if thinking {
                base.push("--thinking");
            }
            let compact = values(&run(&path, &[&base[..], &["-c"]].concat()));
            let pretty = values(&run(&path, &base));
            assert_eq!(pretty, compact, "{what}: pretty and compact differ");
            let compact_text = run(&path, &[&base[..], &["-c"]].concat());
            assert_eq!(
                compact_text.lines().count(),
                compact.len(),
                "{what}: compact is not one line per session"
            );
            assert!(!compact.is_empty(), "{what}: no session");

            let mut sse_args = vec!["--to", "documents-sse"];
            if thinking {
                sse_args.push("--thinking");
            }
            let rebuilt = rebuild(&run(&path, &sse_args), &what);
            assert_eq!(
                rebuilt, compact,
                "{what}: rebuilt from SSE differs from documents"
            );

            let mut calls = 0;
            for resp in &compact {
                let docs = resp["documents"].as_array().unwrap();
                for (i, d) in docs.iter().enumerate() {
                    let seq = i as u64 + 1;
                    assert_eq!(d["sequence"], seq, "{what}: sequence");
                    assert_eq!(d["id"], format!("doc_{seq:03}"), "{what}: id");
                    assert_eq!(
                        d.as_object().unwrap().keys().collect::<Vec<_>>(),
                        ["content", "id", "metadata", "sequence", "type"],
                        "{what}: document fields"
                    );
                    if d["type"] == "text" {
                        let c = d["content"].as_str().unwrap();
                        assert!(!c.trim().is_empty(), "{what}: blank text document");
                        assert_eq!(c.trim_end(), c, "{what}: trailing whitespace");
                        assert!(!c.starts_with('\n'), "{what}: leading blank line");
                    }
                    if d["type"] == "thinking" {
                        let asked =
                            thinking || fixture_args(&path).iter().any(|a| a == "--thinking");
                        assert!(asked, "{what}: thinking without --thinking");
                    }
                }
                let status = resp["status"].as_str().unwrap();
                let incomplete = docs
                    .iter()
                    .any(|d| d["metadata"]["errorCode"] == "INCOMPLETE_STREAM");
                assert!(
                    !incomplete || status == "error",
                    "{what}: cut off but {status}"
                );
                if let Some(u) = resp["usage"].as_object() {
                    // Counts are written whole, up to u64::MAX, where the
                    // sum saturates (fixtures/regression/*_usage-at-i64-max).
                    let n = |k: &str| u128::from(u[k].as_u64().unwrap());
                    let sum = n("promptTokens") + n("completionTokens");
                    assert_eq!(n("totalTokens"), sum.min(u64::MAX as u128), "{what}");
                }
                calls += resp["metadata"]["toolCallCount"].as_u64().unwrap();
            }
            // The input's own tool calls can be counted directly for cursor-agent
            // fixtures (the `cursor/` folder, not `cursor-sdk/`).
            if path.parent().is_some_and(|p| p.ends_with("cursor")) {
                assert_eq!(calls, tool_calls_in(&path), "{what}: toolCallCount");
            }
        }
    }
}

#[test]
fn empty_input_is_a_session_without_result() {
    let r = cstream(&["--to", "documents", "-c", "--created", "0"], b"");
    let v: Value = serde_json::from_str(&r.out()).unwrap();
    assert_eq!(v["status"], "error");
    assert_eq!(v["created"], "1970-01-01T00:00:00Z");
    assert_eq!(v["usage"], Value::Null);
    assert_eq!(
        v["metadata"],
        json!({"duration_ms": null, "toolCallCount": 0, "turnCount": 0, "schemaVersion": 1})
    );
    assert_eq!(
        v["documents"][0]["metadata"]["errorCode"],
        "INCOMPLETE_STREAM"
    );
    let sse = cstream(&["--to", "documents-sse", "--created", "0"], b"").out();
    assert_eq!(rebuild(&sse, "empty"), vec![v]);
}

#[test]
fn overrides_and_derived_fields() {
    let input = br#"{"type":"system","subtype":"init","session_id":"s1","model":"Auto","cwd":"/w"}
{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1","timestamp_ms":1700000123456}
{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1"}
"#;
    let v: Value = serde_json::from_str(&cstream(&["-t", "documents", "-c"], input).out()).unwrap();
    assert_eq!(v["id"], "chat_s1");
    assert_eq!(v["conversationId"], "s1");
    assert_eq!(v["model"], "Auto");
    assert_eq!(v["mode"], "agent");
    // The first timestamp of the session, in seconds.
    assert_eq!(v["created"], "2023-11-14T22:15:23Z");
    assert_eq!(v["status"], "completed");
    let v: Value = serde_json::from_str(
        &cstream(
            &[
                "-t",
                "documents",
                "-c",
                "--model",
                "m",
                "--id",
                "resp-1",
                "--created",
                "86400",
            ],
            input,
        )
        .out(),
    )
    .unwrap();
    assert_eq!(
        (&v["id"], &v["model"], &v["created"]),
        (
            &json!("resp-1"),
            &json!("m"),
            &json!("1970-01-02T00:00:00Z")
        )
    );
    // The conversation keeps the session id.
    assert_eq!(v["conversationId"], "s1");
}

#[test]
fn several_sessions_warn_once_for_sse() {
    let path = common::fixtures_dir().join("cursor/two-sessions.jsonl");
    let r = cstream_file(&["--to", "documents-sse", "--created", CREATED], &path);
    assert_eq!(r.out().matches("data: [DONE]").count(), 2);
    assert_eq!(r.stderr.matches("SSE stream").count(), 1, "{}", r.stderr);
    let r = cstream_file(&["--to", "documents", "--created", CREATED], &path);
    assert!(r.stderr.is_empty());
}

use crate::common::Shared;

/// Gives one line per read, and records what had been written by then.
struct Trickle {
    lines: Vec<Vec<u8>>,
    next: usize,
    out: Shared,
    seen: Vec<String>,
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.seen
            .push(String::from_utf8_lossy(&self.out.0.borrow()).into_owned());
        let Some(line) = self.lines.get(self.next) else {
            return Ok(0);
        };
        assert!(buf.len() >= line.len());
        buf[..line.len()].copy_from_slice(line);
        self.next += 1;
        Ok(line.len())
    }
}

#[test]
fn sse_streams_code_blocks_live() {
    let texts = ["Here:\n", "```py", "\nx = 1\n", "y = 2\n```\n", "Done."];
    let mut lines: Vec<Vec<u8>> =
        vec![br#"{"type":"system","subtype":"init","session_id":"s","model":"Auto"}"#.to_vec()];
    for (i, t) in texts.iter().enumerate() {
        let l = json!({"type":"assistant","message":{"content":[{"type":"text","text":t}]},"session_id":"s","timestamp_ms":1000 + i});
        lines.push(l.to_string().into_bytes());
    }
    for l in &mut lines {
        l.push(b'\n');
    }
    let out = Shared::default();
    let mut reader = Trickle {
        lines,
        next: 0,
        out: out.clone(),
        seen: Vec::new(),
    };
    let cfg = Config::new(Format::DocumentsSse).created(0);
    convert(&mut reader, out.clone(), &cfg).unwrap();
    // seen[k]: the output before line k was read.
    let seen = &reader.seen;
    assert!(
        seen[2].contains(r#""delta":"Here:""#),
        "text before the fence line is sent"
    );
    assert!(!seen[2].contains("code_block"));
    // A fence line is held until it ends (its info string may go on).
    assert!(!seen[3].contains("code_block"));
    assert!(
        seen[4].contains(r#""type":"code_block""#),
        "the fence opens its document at once"
    );
    assert!(
        seen[4].contains(r#""type":"document_end","documentId":"doc_001""#),
        "and ends the text"
    );
    assert!(seen[4].contains(r#""delta":"x = 1""#), "code lines stream");
    assert!(!seen[4].contains(r#""finalContent":"x = 1"#));
    assert!(
        seen[5].contains(r#""finalContent":"x = 1\ny = 2""#),
        "closing fence ends it"
    );
    let all = String::from_utf8(out.0.borrow().clone()).unwrap();
    assert!(all.ends_with("data: [DONE]\n\n"));
}

/// True for `YYYY-MM-DDThh:mm:ssZ` with every field in its range: what
/// RFC 3339 allows for the `created` cstream writes.
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let d = b.get(r)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0, |n, &c| n * 10 + u32::from(c - b'0')))
    };
    let shape = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    shape
        && num(0..4).is_some()
        && num(5..7).is_some_and(|m| (1..=12).contains(&m))
        && num(8..10).is_some_and(|d| (1..=31).contains(&d))
        && num(11..13).is_some_and(|h| h < 24)
        && num(14..16).is_some_and(|m| m < 60)
        && num(17..19).is_some_and(|s| s < 60)
}

/// `created` is RFC 3339 for every input, whatever timestamps it carries
/// (year 10000, i64 extremes): taken from the stream, not from `--created`.
#[test]
fn created_is_always_rfc3339() {
    assert!(is_rfc3339("9999-12-31T23:59:59Z") && is_rfc3339("0000-01-01T00:00:00Z"));
    assert!(!is_rfc3339("10000-01-01T00:00:00Z") && !is_rfc3339("-292275055-05-16T16:47:04Z"));
    for path in inputs() {
        let extra = fixture_args(&path);
        let mut args = vec!["--to", "documents", "-c"];
        args.extend(extra.iter().map(String::as_str));
        let out = cstream_file(&args, &path).out();
        for v in values(&out) {
            let created = v["created"].as_str().expect("created is a string");
            assert!(is_rfc3339(created), "{}: {created}", path.display());
        }
        let mut args = vec!["--to", "documents-sse"];
        args.extend(extra.iter().map(String::as_str));
        let sse = cstream_file(&args, &path).out();
        for v in rebuild(&sse, &path.display().to_string()) {
            let created = v["created"].as_str().expect("created is a string");
            assert!(is_rfc3339(created), "{}: {created}", path.display());
        }
    }
    // The timestamp past 9999 is dropped with a warning naming its line;
    // the one just before the end of 9999 is kept.
    let far = common::fixtures_dir().join("cursor/year-10000-timestamps.jsonl");
    let r = cstream_file(&["--to", "documents", "-c"], &far);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr
            .contains("year-10000-timestamps.jsonl:2: timestamp 253402300800000 ms is outside"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.out()).unwrap();
    assert_eq!(v["created"], "9999-12-31T23:59:59Z");
    // `--created` takes only what RFC 3339 can write.
    let parse = |v: &str| {
        let r = common::cstream(&["--to", "documents", "--created", v], b"");
        match r.code {
            0 => Ok(()),
            2 if r.stderr.contains("invalid value") => Err(r.stderr),
            _ => panic!("--created {v}: {r:?}"),
        }
    };
    assert!(parse("253402300799").is_ok() && parse("-62167219200").is_ok());
    assert!(parse("253402300800").is_err() && parse("-62167219201").is_err());
}

/// `--to documents` over several sessions is JSON Lines, which a plain
/// JSON reader takes line by line (pretty values back to back were not
/// JSON); one session stays one pretty-printed value.
#[test]
fn several_sessions_of_documents_are_json_lines() {
    let several = common::fixtures_dir().join("claude/multi-turn_repeated-init_rate-limit.jsonl");
    let out = common::cstream_file(&["--to", "documents"], &several).out();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 2, "{out}");
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["documents"].is_array());
    }
    // Two files, one session each: the same.
    let a = common::fixtures_dir().join("cursor/basic.jsonl");
    let b = common::fixtures_dir().join("cursor/one-shell-call.jsonl");
    let out = common::cstream(
        &[
            "--to",
            "documents",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        b"",
    )
    .out();
    assert_eq!(out.lines().count(), 2, "{out}");
    // One session: the pretty value as before, one JSON document.
    let one = common::cstream_file(&["--to", "documents"], &a).out();
    assert!(one.starts_with("{\n  \""), "{one}");
    serde_json::from_str::<serde_json::Value>(&one).expect("one JSON document");
}
