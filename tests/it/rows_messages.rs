//! `--to rows` and `--to messages` over every fixture and the corpus: the
//! rows' fixed columns and schema, one row per event; the messages' shape
//! (one row per session, every tool message answering an earlier call, every
//! call answered once); and their redaction defaults.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use crate::common::{self, cstream, run_fixture};
use crate::schema::{inputs, invalid, validator};

/// The documented columns, in order (docs/formats.md#rows).
const COLUMNS: [&str; 26] = [
    "session",
    "session_n",
    "seq",
    "time",
    "type",
    "role",
    "text",
    "tool",
    "call_id",
    "data",
    "ok",
    "failed",
    "exit_code",
    "duration_ms",
    "error",
    "fatal",
    "tokens_in",
    "tokens_out",
    "cache_read",
    "cache_write",
    "reasoning",
    "output_incomplete",
    "cost_usd",
    "model",
    "dialect",
    "detail",
];

/// Lines split at `\n` only (a string may hold U+2028), each parsed.
fn lines(out: &str) -> Vec<serde_json::Map<String, Value>> {
    out.split_terminator('\n')
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The line has exactly the keys `keys`, in that order at its top level: a
/// key written as `,"k":` can only be a member name there, since a quote
/// inside a string is escaped.
fn keys_in_order(line: &str, keys: &[&str]) {
    assert!(line.starts_with(&format!("{{\"{}\":", keys[0])), "{line}");
    let mut at = 0;
    for k in &keys[1..] {
        let pat = format!(",\"{k}\":");
        let i = line[at..]
            .find(&pat)
            .unwrap_or_else(|| panic!("no {k} after byte {at}: {line}"));
        at += i + pat.len();
    }
}

#[test]
fn every_rows_line_has_every_column_in_order_and_validates() {
    let schema = validator("rows");
    let mut n = 0;
    for path in inputs() {
        let name = path.display();
        let rows = run_fixture(&path, &["--to", "rows"]).out();
        let events = common::events(&run_fixture(&path, &["--to", "events"]).out());
        for line in rows.split_terminator('\n') {
            keys_in_order(line, &COLUMNS);
        }
        let rows = lines(&rows);
        // One row per event, in the same order.
        assert_eq!(rows.len(), events.len(), "{name}: rows vs events");
        let mut seq = HashMap::<u64, u64>::new();
        for (row, ev) in rows.iter().zip(&events) {
            assert_eq!(row.len(), COLUMNS.len(), "{name}: columns of {row:?}");
            let v = Value::Object(row.clone());
            if let Some(why) = invalid(&schema, &v) {
                panic!("{name}: {why}\n{v}");
            }
            assert_eq!(row["type"], ev["type"], "{name}");
            assert_eq!(row["session"], ev["sessionId"], "{name}");
            let s = row["session_n"].as_u64().unwrap();
            let next = seq.entry(s).or_default();
            *next += 1;
            assert_eq!(row["seq"].as_u64(), Some(*next), "{name}: seq of {v}");
            // Tokens only on usage rows, with the events' counts; an output
            // count the source lacked is unknown, not 0.
            if ev["type"] == "usage_delta" {
                assert_eq!(row["tokens_in"], ev["deltaInput"], "{name}");
                let incomplete = ev["outputIncomplete"] == true;
                if incomplete && ev["deltaOutput"] == 0 {
                    assert!(row["tokens_out"].is_null(), "{name}: {v}");
                } else {
                    assert_eq!(row["tokens_out"], ev["deltaOutput"], "{name}");
                }
                assert_eq!(row["output_incomplete"], incomplete, "{name}");
            } else {
                assert!(
                    row["tokens_in"].is_null() && row["tokens_out"].is_null(),
                    "{name}"
                );
            }
            n += 1;
        }
    }
    assert!(n > 1000, "only {n} rows checked");
}

#[test]
fn rows_times_are_the_events_times_in_rfc3339() {
    let input = concat!(
        r#"{"type":"session_started","sessionId":"s","ts":1786178495559,"dialect":"claude","schemaVersion":1}"#,
        "\n",
        r#"{"type":"user_message","sessionId":"s","ts":-1,"text":"hi"}"#,
        "\n",
        r#"{"type":"text_delta","sessionId":"s","text":"hello"}"#,
        "\n",
    );
    let rows = lines(&cstream(&["--to", "rows"], input.as_bytes()).out());
    let times: Vec<&Value> = rows.iter().map(|r| &r["time"]).collect();
    assert_eq!(
        times,
        [
            &Value::from("2026-08-08T08:41:35.559Z"),
            &Value::from("1969-12-31T23:59:59.999Z"),
            &Value::Null
        ]
    );
}

/// Checks one `--to messages` row: its keys, every content a string, every
/// tool message answering a call made before it, every call answered once,
/// and the tools listing exactly the functions called.
fn check_row(name: &str, row: &serde_json::Map<String, Value>) {
    // serde_json's map sorts its keys; the order is checked on the line.
    let mut keys: Vec<&str> = row.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["agent", "id", "messages", "model", "tools"],
        "{name}"
    );
    let mut called = BTreeSet::new();
    let mut answered = BTreeSet::new();
    let mut names = BTreeSet::new();
    for m in row["messages"].as_array().unwrap() {
        assert!(m["content"].is_string(), "{name}: content of {m}");
        match m["role"].as_str().unwrap() {
            "user" => {}
            "assistant" => {
                assert!(m.get("tool_call_id").is_none(), "{name}: {m}");
                if let Some(r) = m.get("reasoning_content") {
                    assert!(r.as_str().is_some_and(|r| !r.is_empty()), "{name}: {m}");
                }
                for c in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    assert_eq!(c["type"], "function", "{name}");
                    let args = c["function"]["arguments"].as_str().unwrap();
                    serde_json::from_str::<Value>(args)
                        .unwrap_or_else(|e| panic!("{name}: arguments {args:?}: {e}"));
                    let id = c["id"].as_str().unwrap().to_owned();
                    names.insert(c["function"]["name"].as_str().unwrap().to_owned());
                    assert!(called.insert(id), "{name}: a call made twice");
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(
                    called.contains(id),
                    "{name}: {id:?} answers no earlier call"
                );
                assert!(
                    answered.insert(id.to_owned()),
                    "{name}: {id:?} answered twice"
                );
            }
            other => panic!("{name}: role {other}"),
        }
    }
    assert_eq!(called, answered, "{name}: every call is answered");
    let tools: BTreeSet<String> = row["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["function"]["parameters"]["type"], "object", "{name}");
            t["function"]["name"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(tools, names, "{name}: tools vs the functions called");
}

#[test]
fn every_messages_row_answers_each_call_once_after_it() {
    let mut rows_seen = 0;
    let mut tool_msgs = 0;
    for path in inputs() {
        let name = path.display().to_string();
        let out = run_fixture(&path, &["--to", "messages"]).out();
        let events = common::events(&run_fixture(&path, &["--to", "events"]).out());
        let sessions = events
            .iter()
            .filter(|e| e["type"] == "session_started")
            .count();
        for line in out.split_terminator('\n') {
            keys_in_order(line, &["id", "agent", "model", "messages", "tools"]);
        }
        let rows = lines(&out);
        assert_eq!(rows.len(), sessions, "{name}: one row per session");
        for row in &rows {
            check_row(&name, row);
            tool_msgs += row["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .count();
        }
        rows_seen += rows.len();
    }
    assert!(
        rows_seen > 100 && tool_msgs > 100,
        "{rows_seen} rows, {tool_msgs} tool messages"
    );
}

/// A parallel pair of calls, a result without its call, text after the
/// results: the calls share one assistant message, each result follows it,
/// and the orphan result gets a call with unknown (`null`) arguments.
#[test]
fn messages_put_results_after_their_calls() {
    let input = concat!(
        r#"{"type":"session_started","sessionId":"s","dialect":"claude","schemaVersion":1,"model":"m1"}"#,
        "\n",
        r#"{"type":"user_message","sessionId":"s","text":"go"}"#,
        "\n",
        r#"{"type":"thinking_delta","sessionId":"s","text":"plan"}"#,
        "\n",
        r#"{"type":"tool_call_started","sessionId":"s","callId":"a","toolName":"read","args":{"path":"x","limit":3}}"#,
        "\n",
        r#"{"type":"tool_call_started","sessionId":"s","callId":"b","toolName":"read","args":{"path":"y"}}"#,
        "\n",
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"b","toolName":"read","ok":true,"result":"Y"}"#,
        "\n",
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"a","toolName":"read","ok":false,"result":null,"error":"no such file"}"#,
        "\n",
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"c","toolName":"shell","ok":true,"result":null,"output":"done"}"#,
        "\n",
        r#"{"type":"text_delta","sessionId":"s","text":"ok"}"#,
        "\n",
    );
    let out = cstream(&["--to", "messages"], input.as_bytes()).out();
    let row: Value = serde_json::from_str(out.trim_end()).unwrap();
    check_row("inline", row.as_object().unwrap());
    let m = row["messages"].as_array().unwrap();
    let shape: Vec<(&str, &str)> = m
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m.get("tool_call_id").and_then(Value::as_str).unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("user", ""),
            ("assistant", ""),
            ("tool", "b"),
            ("tool", "a"),
            ("assistant", ""),
            ("tool", "c"),
            ("assistant", ""),
        ]
    );
    assert_eq!(m[1]["reasoning_content"], "plan");
    assert_eq!(m[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(m[2]["content"], "Y");
    assert_eq!(m[3]["content"], "no such file");
    assert_eq!(m[4]["tool_calls"][0]["function"]["arguments"], "null");
    assert_eq!(m[5]["content"], "done");
    assert_eq!(m[6]["content"], "ok");
    assert_eq!(row["model"], "m1");
    // `path` was in both calls, `limit` in one.
    let read = &row["tools"][0]["function"];
    assert_eq!(read["name"], "read");
    assert_eq!(
        read["parameters"],
        serde_json::json!({
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "path": {"type": "string"}},
            "required": ["path"],
        })
    );
}

const SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

fn secret_input() -> String {
    format!(
        "{}\n{}\n",
        r#"{"type":"session_started","sessionId":"s","dialect":"claude","schemaVersion":1}"#,
        format_args!(r#"{{"type":"user_message","sessionId":"s","text":"use {SECRET}"}}"#),
    )
}

/// `messages` is made to be shared: redacted unless `--no-redact`; `rows`
/// as every other format: only with `--redact`.
#[test]
fn messages_are_redacted_by_default_and_rows_are_not() {
    let input = secret_input();
    let run = |args: &[&str]| cstream(args, input.as_bytes()).out();
    let messages = run(&["--to", "messages"]);
    assert!(!messages.contains(SECRET), "{messages}");
    assert!(messages.contains("[REDACTED:anthropic_key]"), "{messages}");
    assert!(run(&["--to", "messages", "--no-redact"]).contains(SECRET));
    assert!(run(&["--to", "rows"]).contains(SECRET));
    let rows = run(&["--to", "rows", "--redact"]);
    assert!(
        !rows.contains(SECRET) && rows.contains("[REDACTED:anthropic_key]"),
        "{rows}"
    );
}
