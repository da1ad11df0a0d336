//! `--to otlp-json` (one OTLP/JSON `ExportTraceServiceRequest` per session,
//! GenAI agent spans) and `--otlp-endpoint` (docs/formats.md#otlp-json).
//! Every fixture is also snapshotted in the format by the snapshot tests;
//! scripts/check-otlp.py has opentelemetry-proto and Phoenix read it.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common::{cstream, cstream_file, fixtures, fixtures_dir};

const CREATED: &str = "1700000000";

fn otlp(path: &str, extra: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["--to", "otlp-json", "--created", CREATED];
    args.extend_from_slice(extra);
    let run = cstream_file(&args, &fixtures_dir().join(path));
    let out = run.out();
    let reqs = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON request a line"))
        .collect();
    (reqs, out)
}

fn spans(req: &Value) -> &Vec<Value> {
    req["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .expect("spans")
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn root(req: &Value) -> &Value {
    let roots: Vec<&Value> = spans(req)
        .iter()
        .filter(|s| s.get("parentSpanId").is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one root span per session");
    roots[0]
}

/// Every fixture: one request a line, one root per request, named
/// `invoke_agent`, every parent in the request, one trace id, hex ids of
/// the lengths OTLP needs, 64-bit times as strings, no span ending before
/// it starts or outside its root.
#[test]
fn every_fixture_is_one_well_formed_trace_per_session() {
    let mut requests = 0;
    for f in fixtures() {
        let run = cstream_file(&["--to", "otlp-json", "--created", CREATED], &f);
        for line in run.out().lines() {
            requests += 1;
            let req: Value = serde_json::from_str(line).unwrap();
            let spans = spans(&req);
            let r = root(&req);
            let name = r["name"].as_str().unwrap();
            assert!(name.starts_with("invoke_agent "), "{}: {name}", f.display());
            let ids: HashSet<&str> = spans
                .iter()
                .map(|s| s["spanId"].as_str().unwrap())
                .collect();
            assert_eq!(ids.len(), spans.len(), "{}: span ids repeat", f.display());
            let t = |s: &Value, k: &str| -> u128 { s[k].as_str().unwrap().parse().unwrap() };
            for s in spans {
                assert_eq!(s["traceId"], r["traceId"], "{}", f.display());
                let (tid, sid) = (
                    s["traceId"].as_str().unwrap(),
                    s["spanId"].as_str().unwrap(),
                );
                assert!(tid.len() == 32 && sid.len() == 16, "{}", f.display());
                assert!(
                    tid.bytes()
                        .chain(sid.bytes())
                        .all(|b| b.is_ascii_hexdigit())
                );
                assert!(t(s, "endTimeUnixNano") >= t(s, "startTimeUnixNano"));
                if let Some(p) = s.get("parentSpanId") {
                    assert!(ids.contains(p.as_str().unwrap()), "{}", f.display());
                    assert!(t(s, "startTimeUnixNano") >= t(r, "startTimeUnixNano"));
                    assert!(t(s, "endTimeUnixNano") <= t(r, "endTimeUnixNano"));
                }
            }
        }
    }
    assert!(requests > 150, "only {requests} sessions");
}

/// A Claude Code session: the root carries the session's figures, a chat
/// span per model response the file marks, a tool span per call, the
/// failed shell call's span in error with its exit code.
#[test]
fn claude_session_spans_and_figures() {
    let (reqs, _) = otlp(
        "claude-project/rewind_parallel-results_placeholder-usage.jsonl",
        &[],
    );
    assert_eq!(reqs.len(), 1);
    let r = root(&reqs[0]);
    assert_eq!(r["name"], "invoke_agent claude-code");
    assert_eq!(r["kind"], 1);
    assert_eq!(
        attr(r, "gen_ai.conversation.id").unwrap()["stringValue"],
        "7f3e2a10-0000-4000-8000-000000000001"
    );
    assert_eq!(
        attr(r, "gen_ai.provider.name").unwrap()["stringValue"],
        "anthropic"
    );
    assert_eq!(
        attr(r, "gen_ai.usage.input_tokens").unwrap()["intValue"],
        "8261"
    );
    // The output count is a lower bound here (a placeholder-only message):
    // not written as the count, flagged, and kept under its own name.
    assert!(attr(r, "gen_ai.usage.output_tokens").is_none());
    assert_eq!(
        attr(r, "cstream.usage.output_incomplete").unwrap()["boolValue"],
        true
    );
    assert_eq!(
        attr(r, "cstream.usage.output_tokens_min").unwrap()["intValue"],
        "74"
    );
    assert_eq!(
        attr(r, "gen_ai.usage.cache_read.input_tokens").unwrap()["intValue"],
        "7800"
    );
    assert_eq!(attr(r, "cstream.tool_calls").unwrap()["intValue"], "3");
    assert_eq!(
        attr(r, "cstream.failed_tool_calls").unwrap()["intValue"],
        "1"
    );
    // The agent's own duration: 125 s.
    let t = |k: &str| -> u64 { r[k].as_str().unwrap().parse().unwrap() };
    assert_eq!(
        t("endTimeUnixNano") - t("startTimeUnixNano"),
        125_000_000_000
    );
    assert_eq!(t("startTimeUnixNano"), 1_770_717_600_000_000_000);
    let names: Vec<&str> = spans(&reqs[0])
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "chat claude-opus-4-6")
            .count(),
        3,
        "{names:?}"
    );
    let shell = spans(&reqs[0])
        .iter()
        .find(|s| s["name"] == "execute_tool shell")
        .expect("the shell call's span");
    assert_eq!(shell["status"]["code"], 2);
    assert_eq!(
        attr(shell, "error.type").unwrap()["stringValue"],
        "tool_error"
    );
    assert_eq!(
        attr(shell, "gen_ai.tool.call.id").unwrap()["stringValue"],
        "toolu_02"
    );
    let read = spans(&reqs[0])
        .iter()
        .find(|s| s["name"] == "execute_tool read")
        .unwrap();
    assert!(
        read.get("status").is_none(),
        "a call that worked has no error status"
    );
}

/// A session without usage has no token attribute at all (unknown, not 0).
#[test]
fn unknown_usage_is_left_out() {
    let (reqs, _) = otlp("cursor/one-shell-call.jsonl", &[]);
    let r = root(&reqs[0]);
    let usage = crate::common::cstream_file(
        &["--to", "events"],
        &fixtures_dir().join("cursor/one-shell-call.jsonl"),
    )
    .out()
    .contains("usage_delta");
    for k in ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"] {
        assert_eq!(attr(r, k).is_some(), usage, "{k}");
    }
    let no_usage = fixtures()
        .into_iter()
        .find(|f| {
            let ev = cstream_file(&["--to", "events"], f).out();
            ev.contains("\"type\":\"result\"") && !ev.contains("usage_delta")
        })
        .expect("a fixture without usage");
    let run = cstream_file(&["--to", "otlp-json"], &no_usage);
    let req: Value = serde_json::from_str(run.out().lines().next().unwrap()).unwrap();
    for s in spans(&req) {
        let a = s["attributes"].to_string();
        assert!(!a.contains("gen_ai.usage."), "{}: {a}", no_usage.display());
        assert!(
            !a.contains("llm.token_count"),
            "{}: {a}",
            no_usage.display()
        );
    }
}

/// Ids come from the session id (and its first time): the same input gives
/// the same bytes, a session's trace id is the same whatever else is in
/// the run, two sessions have two trace ids.
#[test]
fn ids_are_derived_from_the_session() {
    let (a, out_a) = otlp("cursor/two-sessions.jsonl", &[]);
    let (_, out_b) = otlp("cursor/two-sessions.jsonl", &[]);
    assert_eq!(out_a, out_b);
    assert_eq!(a.len(), 2);
    assert_ne!(root(&a[0])["traceId"], root(&a[1])["traceId"]);
    // The second session alone, as the first line of another run: the same
    // ids.
    let text = std::fs::read_to_string(fixtures_dir().join("cursor/two-sessions.jsonl")).unwrap();
    let second_id = attr(root(&a[1]), "gen_ai.conversation.id").unwrap()["stringValue"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = text
        .lines()
        .position(|l| l.contains("\"subtype\":\"init\"") && l.contains(&second_id))
        .expect("the second session's init");
    let tail: String = text.lines().skip(at).map(|l| format!("{l}\n")).collect();
    let run = cstream(
        &["--to", "otlp-json", "--created", CREATED],
        tail.as_bytes(),
    );
    let alone: Value = serde_json::from_str(run.out().lines().next().unwrap()).unwrap();
    assert_eq!(root(&alone)["traceId"], root(&a[1])["traceId"]);
    assert_eq!(root(&alone)["spanId"], root(&a[1])["spanId"]);
    // A different session id, a different trace.
    let other = tail.replace(&second_id, "another-session");
    let run = cstream(
        &["--to", "otlp-json", "--created", CREATED],
        other.as_bytes(),
    );
    let moved: Value = serde_json::from_str(run.out().lines().next().unwrap()).unwrap();
    assert_ne!(root(&moved)["traceId"], root(&a[1])["traceId"]);
}

/// Times come from the input; a session without any uses `--created`.
#[test]
fn times_without_timestamps_use_created() {
    let (reqs, _) = otlp("cursor/one-shell-call.jsonl", &[]);
    let events = cstream_file(
        &["--to", "events"],
        &fixtures_dir().join("cursor/one-shell-call.jsonl"),
    )
    .out();
    let r = root(&reqs[0]);
    if !events.contains("\"ts\":") {
        assert_eq!(r["startTimeUnixNano"], "1700000000000000000");
    }
    let (reqs, _) = otlp("cursor/one-shell-call.jsonl", &[]);
    assert_eq!(root(&reqs[0])["startTimeUnixNano"], r["startTimeUnixNano"]);
}

/// A failed session's root is in error with the agent's message.
#[test]
fn a_failed_session_is_an_error_root() {
    let (reqs, _) = otlp("cursor/error-result.jsonl", &[]);
    let r = root(&reqs[0]);
    assert_eq!(r["status"]["code"], 2, "{r}");
    assert_eq!(
        attr(r, "cstream.outcome").unwrap()["stringValue"],
        "failure"
    );
    assert_eq!(attr(r, "error.type").unwrap()["stringValue"], "agent_error");
}

/// Redacted by default, as the formats people share are: an error message
/// that quotes a key.
#[test]
fn redacted_unless_no_redact() {
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrs-ABCDEFGHIJ";
    let input = format!(
        "{}\n{}\n",
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#,
        serde_json::json!({"type":"result","subtype":"error","is_error":true,"result":format!("failed with key {key}"),"session_id":"s1"})
    );
    let run = cstream(&["--to", "otlp-json"], input.as_bytes());
    assert!(!run.out().contains(key), "{}", run.out());
    assert!(run.out().contains("[REDACTED"), "{}", run.out());
    let run = cstream(&["--to", "otlp-json", "--no-redact"], input.as_bytes());
    assert!(run.out().contains(key), "{}", run.out());
}

// ------------------------------------------------- --otlp-endpoint

/// A request a stub receiver got.
#[derive(Debug, Clone)]
struct Got {
    path: String,
    content_type: String,
    body: String,
}

/// A receiver on a free localhost port answering every request with
/// `status`; what it got is in the returned list.
fn receiver(status: u16) -> (String, Arc<Mutex<Vec<Got>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            answer(conn, status, &seen);
        }
    });
    (url, got)
}

/// Records the request before replying: the client may finish as soon as
/// it has the reply, so a record pushed after it could be missed.
fn answer(conn: TcpStream, status: u16, seen: &Mutex<Vec<Got>>) -> Option<()> {
    let mut r = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let path = line.split(' ').nth(1)?.to_owned();
    let (mut len, mut content_type) = (0usize, String::new());
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        match k.to_ascii_lowercase().as_str() {
            "content-length" => len = v.trim().parse().ok()?,
            "content-type" => content_type = v.trim().to_owned(),
            _ => {}
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    seen.lock().unwrap().push(Got {
        path,
        content_type,
        body: String::from_utf8(body).ok()?,
    });
    let mut w = conn;
    let reply =
        format!("HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}");
    w.write_all(reply.as_bytes()).ok()
}

/// The binary (the endpoint is the command line's, not the library's).
fn binary(args: &[&str]) -> (u8, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cstream"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1) as u8,
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn two_sessions() -> String {
    fixtures_dir()
        .join("cursor/two-sessions.jsonl")
        .to_string_lossy()
        .into_owned()
}

/// `--to otlp-json` of `file`, posted to `url`.
fn send_to(url: &str, file: &str) -> (u8, String, String) {
    binary(&[
        "--to",
        "otlp-json",
        "--created",
        CREATED,
        "--otlp-endpoint",
        url,
        file,
    ])
}

#[test]
fn endpoint_gets_each_session_as_written() {
    let (url, got) = receiver(200);
    let f = two_sessions();
    let (code, out, err) = send_to(&url, &f);
    assert_eq!(code, 0, "{err}");
    let got = got.lock().unwrap().clone();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 2, "{got:?}");
    for (g, l) in got.iter().zip(&lines) {
        assert_eq!(g.path, "/v1/traces");
        assert_eq!(g.content_type, "application/json");
        assert_eq!(g.body, *l);
    }
}

/// 500: retried 5 times, then the receiver is taken as down: the second
/// session is not sent; reported, exit 4, the output whole.
#[test]
fn a_failing_receiver_is_retried_then_reported() {
    let (url, got) = receiver(500);
    let f = two_sessions();
    let plain = binary(&["--to", "otlp-json", "--created", CREATED, &f]).1;
    let (code, out, err) = send_to(&url, &f);
    assert_eq!(code, 4, "{err}");
    assert_eq!(out, plain);
    assert_eq!(got.lock().unwrap().len(), 5);
    assert!(err.contains("2 of 2 sessions were not accepted"), "{err}");
    assert!(err.contains("HTTP 500") && err.contains("5 tries"), "{err}");
}

/// 400: that session is refused, not retried; the next one is sent.
#[test]
fn a_refusal_is_not_retried() {
    let (url, got) = receiver(400);
    let f = two_sessions();
    let (code, out, err) = send_to(&url, &f);
    assert_eq!(code, 4, "{err}");
    assert_eq!(out.lines().count(), 2);
    assert_eq!(got.lock().unwrap().len(), 2);
    assert!(err.contains("HTTP 400"), "{err}");
}

/// Nothing listening: retried, reported, exit 4, and `-o` has every session.
#[test]
fn a_receiver_that_is_down_loses_nothing() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let file = std::env::temp_dir().join(format!("cstream-otlp-down-{}.jsonl", std::process::id()));
    let f = two_sessions();
    let url = format!("http://127.0.0.1:{port}");
    let (code, _, err) = binary(&[
        "--to",
        "otlp-json",
        "--created",
        CREATED,
        "--otlp-endpoint",
        &url,
        "-o",
        file.to_str().unwrap(),
        &f,
    ]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("5 tries"), "{err}");
    let plain = binary(&["--to", "otlp-json", "--created", CREATED, &f]).1;
    let written = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(written, plain);
}

#[test]
fn endpoint_needs_otlp_json_and_http() {
    let f = two_sessions();
    let (code, _, err) = binary(&[
        "--to",
        "events",
        "--otlp-endpoint",
        "http://127.0.0.1:1",
        &f,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--to otlp-json"), "{err}");
    let (code, _, err) = binary(&[
        "--to",
        "otlp-json",
        "--created",
        CREATED,
        "--otlp-endpoint",
        "https://x/v1/traces",
        &f,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("https is not supported"), "{err}");
}

/// Spans per name in the Codex rollout: the model responses and tool calls
/// the file records.
#[test]
fn codex_rollout_spans() {
    let (reqs, _) = otlp(
        "codex-rollout/item-completed_prompt-reasoning-command-answer-once_0.147.jsonl",
        &[],
    );
    let r = root(&reqs[0]);
    assert_eq!(r["name"], "invoke_agent codex");
    assert_eq!(
        attr(r, "gen_ai.provider.name").unwrap()["stringValue"],
        "openai"
    );
    let mut kinds: HashMap<String, usize> = HashMap::new();
    for s in spans(&reqs[0]) {
        let op = attr(s, "gen_ai.operation.name").unwrap()["stringValue"]
            .as_str()
            .unwrap()
            .to_owned();
        *kinds.entry(op).or_default() += 1;
    }
    assert_eq!(kinds["invoke_agent"], 1);
    assert!(
        kinds.get("execute_tool").copied().unwrap_or(0) >= 1,
        "{kinds:?}"
    );
}
