//! `--to openai-responses` and `--to openai-responses-json`: a strict reader
//! of the Responses event stream that holds it to what the official client's
//! accumulator checks (docs/formats.md#openai-responses), on every fixture in
//! every `--tool-calls` mode and on the real captures: `response.created`
//! first, `sequence_number` counting from 0, every item announced before its
//! content events and finished (same id and type) before the response,
//! distinct output indexes in order, text deltas with `logprobs`, `done`
//! texts equal to their deltas, function-call arguments that parse, usage
//! with every detail field, `response.completed` or `response.failed` last;
//! the answer rebuilt equals the events' text, one message item per run of
//! answer text; the JSON form is the final response of the stream.

use crate::common;

use common::{corpus, cstream, fixture_args, fixtures, lines, run_fixture};
use serde_json::{Value, json};

/// One response (one session), as a client rebuilds it from the deltas.
#[derive(Debug, Default, Clone)]
struct Response {
    /// The terminal event's response object.
    last: Value,
    /// The items rebuilt from the deltas, finished.
    items: Vec<Value>,
}

impl Response {
    /// The answer: the message items' texts, each item a paragraph (an
    /// item starts without the separator a single string would need).
    fn text(&self) -> String {
        common::join_paragraphs(
            self.items
                .iter()
                .filter(|i| i["type"] == "message")
                .map(|i| i["content"][0]["text"].as_str().unwrap()),
        )
    }
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn check_usage(u: &Value, ctx: &str) {
    if u.is_null() {
        return;
    }
    let (i, o) = (count(&u["input_tokens"]), count(&u["output_tokens"]));
    assert_eq!(
        count(&u["total_tokens"]),
        i.saturating_add(o),
        "{ctx}: total"
    );
    assert!(
        count(&u["input_tokens_details"]["cached_tokens"]) <= i,
        "{ctx}"
    );
    count(&u["input_tokens_details"]["cache_write_tokens"]);
    count(&u["output_tokens_details"]["reasoning_tokens"]);
}

/// Read `out` as a sequence of Responses streams, asserting the rules.
fn read_sse(out: &str, ctx: &str) -> Vec<Response> {
    assert!(
        !out.contains("[DONE]"),
        "{ctx}: [DONE] in a Responses stream"
    );
    let mut all: Vec<Response> = Vec::new();
    let mut seq = 0u64;
    let mut open: Option<usize> = None;
    let mut over = true;
    let mut id = String::new();
    // The message of the `error` event just read: only `response.failed`
    // (with the same message) may follow it.
    let mut error: Option<String> = None;
    for rec in out.split_terminator("\n\n") {
        let (head, data) = rec
            .split_once('\n')
            .unwrap_or_else(|| panic!("{ctx}: record {rec:?}"));
        let name = head.strip_prefix("event: ").expect("event line");
        let v: Value = serde_json::from_str(data.strip_prefix("data: ").expect("data line"))
            .unwrap_or_else(|e| panic!("{ctx}: not JSON ({e}): {data}"));
        assert_eq!(v["type"], name, "{ctx}: event name vs type");
        if name == "response.created" {
            assert!(over, "{ctx}: response.created inside a response");
            over = false;
            seq = 0;
            id = v["response"]["id"].as_str().expect("id").to_owned();
            all.push(Response::default());
        }
        assert!(!over, "{ctx}: {name} outside a response");
        assert!(
            error.is_none() || name == "response.failed",
            "{ctx}: {name} after the error event"
        );
        assert_eq!(count(&v["sequence_number"]), seq, "{ctx}: sequence_number");
        seq += 1;
        let r = all.last_mut().unwrap();
        let at = |v: &Value, r: &Response| -> usize {
            let i = count(&v["output_index"]) as usize;
            assert_eq!(
                Some(i),
                open,
                "{ctx}: {name} for an item that is not the open one"
            );
            assert_eq!(v["item_id"], r.items[i]["id"], "{ctx}: item_id");
            i
        };
        match name {
            "error" => {
                // The flat shape: a nested `error` key makes openai-python
                // raise before the event is seen.
                assert!(v.get("error").is_none(), "{ctx}: nested error: {v}");
                assert_eq!(v["code"], "server_error", "{ctx}");
                assert!(v["param"].is_null(), "{ctx}");
                let m = v["message"].as_str().expect("error message");
                error = Some(m.to_owned());
            }
            "response.created" | "response.in_progress" => {
                let resp = &v["response"];
                assert_eq!(resp["id"], id.as_str(), "{ctx}");
                assert_eq!(resp["status"], "in_progress", "{ctx}");
                assert_eq!(resp["output"], json!([]), "{ctx}");
            }
            "response.output_item.added" => {
                assert!(open.is_none(), "{ctx}: items interleave");
                let i = count(&v["output_index"]) as usize;
                assert_eq!(i, r.items.len(), "{ctx}: output_index");
                let item = v["item"].clone();
                assert!(item["id"].as_str().is_some_and(|s| !s.is_empty()), "{ctx}");
                assert!(
                    r.items.iter().all(|x| x["id"] != item["id"]),
                    "{ctx}: item id reused"
                );
                match item["type"].as_str().unwrap() {
                    "message" => {
                        assert_eq!(item["content"], json!([]), "{ctx}");
                        assert_eq!(item["role"], "assistant", "{ctx}");
                    }
                    "reasoning" => assert_eq!(item["summary"], json!([]), "{ctx}"),
                    "function_call" => {
                        assert_eq!(item["arguments"], "", "{ctx}");
                        assert!(item["call_id"].as_str().is_some_and(|s| !s.is_empty()));
                        assert!(item["name"].is_string());
                    }
                    t => panic!("{ctx}: item type {t}"),
                }
                r.items.push(item);
                open = Some(i);
            }
            "response.content_part.added" | "response.reasoning_summary_part.added" => {
                let i = at(&v, r);
                let (key, index, part) = if name == "response.content_part.added" {
                    (
                        "content",
                        "content_index",
                        json!({"type":"output_text","text":"","annotations":[],"logprobs":[]}),
                    )
                } else {
                    (
                        "summary",
                        "summary_index",
                        json!({"type":"summary_text","text":""}),
                    )
                };
                assert_eq!(v["part"], part, "{ctx}");
                assert_eq!(v[index], 0, "{ctx}");
                let parts = r.items[i][key].as_array_mut().expect("an item with parts");
                assert!(parts.is_empty(), "{ctx}: a second part");
                parts.push(part);
            }
            "response.output_text.delta" | "response.reasoning_summary_text.delta" => {
                let i = at(&v, r);
                let key = if name == "response.output_text.delta" {
                    assert_eq!(v["logprobs"], json!([]), "{ctx}: logprobs");
                    assert_eq!(v["content_index"], 0);
                    "content"
                } else {
                    assert_eq!(v["summary_index"], 0);
                    "summary"
                };
                let d = v["delta"].as_str().expect("delta");
                assert!(!d.is_empty(), "{ctx}: empty delta");
                let part = &mut r.items[i][key][0];
                assert!(part.is_object(), "{ctx}: a delta before its part");
                part["text"] = Value::String(part["text"].as_str().unwrap().to_owned() + d);
            }
            "response.function_call_arguments.delta" => {
                let i = at(&v, r);
                let cur = r.items[i]["arguments"].as_str().unwrap().to_owned();
                r.items[i]["arguments"] = Value::String(cur + v["delta"].as_str().unwrap());
            }
            "response.output_text.done" | "response.reasoning_summary_text.done" => {
                let i = at(&v, r);
                let key = if name == "response.output_text.done" {
                    "content"
                } else {
                    "summary"
                };
                assert_eq!(
                    v["text"], r.items[i][key][0]["text"],
                    "{ctx}: done text vs deltas"
                );
            }
            "response.content_part.done" | "response.reasoning_summary_part.done" => {
                let i = at(&v, r);
                let key = if name == "response.content_part.done" {
                    "content"
                } else {
                    "summary"
                };
                assert_eq!(v["part"], r.items[i][key][0], "{ctx}: done part vs deltas");
            }
            "response.function_call_arguments.done" => {
                let i = at(&v, r);
                assert_eq!(v["arguments"], r.items[i]["arguments"], "{ctx}");
                let args = v["arguments"].as_str().unwrap();
                serde_json::from_str::<Value>(args)
                    .unwrap_or_else(|e| panic!("{ctx}: arguments are not JSON ({e}): {args}"));
            }
            "response.output_item.done" => {
                let i = count(&v["output_index"]) as usize;
                assert_eq!(Some(i), open, "{ctx}: done for an item that is not open");
                let item = &mut r.items[i];
                if item["type"] != "reasoning" {
                    item["status"] = json!("completed");
                }
                assert_eq!(&v["item"], item, "{ctx}: the finished item vs its events");
                open = None;
            }
            "response.completed" | "response.failed" => {
                assert!(open.is_none(), "{ctx}: an item left open");
                let resp = &v["response"];
                assert_eq!(resp["id"], id.as_str(), "{ctx}");
                assert_eq!(
                    resp["output"],
                    json!(r.items),
                    "{ctx}: final output vs the items"
                );
                if name == "response.completed" {
                    assert!(error.is_none(), "{ctx}: an error event, then completed");
                    assert_eq!(resp["status"], "completed");
                    assert!(resp["error"].is_null());
                    check_usage(&resp["usage"], ctx);
                } else {
                    assert_eq!(resp["status"], "failed");
                    let e = &resp["error"];
                    assert_eq!(
                        error.take().as_deref(),
                        e["message"].as_str(),
                        "{ctx}: response.failed without the error event before it"
                    );
                    assert!(
                        e["code"] == "server_error"
                            && e["message"].as_str().is_some_and(|m| !m.is_empty())
                            && matches!(
                                e["type"].as_str(),
                                Some("agent_error" | "incomplete_stream")
                            ),
                        "{ctx}: {e}"
                    );
                }
                for k in [
                    "created_at",
                    "model",
                    "object",
                    "parallel_tool_calls",
                    "tool_choice",
                    "tools",
                ] {
                    assert!(!resp[k].is_null(), "{ctx}: response without {k}");
                }
                r.last = resp.clone();
                over = true;
            }
            other => panic!("{ctx}: unexpected event {other}"),
        }
    }
    assert!(over, "{ctx}: the last response has no end");
    assert!(!all.is_empty(), "{ctx}: no response");
    all
}

#[test]
fn every_fixture_passes_the_stream_rules_and_the_json_agrees() {
    let mut n = 0;
    for path in fixtures() {
        let exp = common::session_texts(&path);
        let own_mode = fixture_args(&path).iter().any(|a| a == "--tool-calls");
        for mode in ["reasoning", "content", "omit", "calls"] {
            let ctx = format!("{} --tool-calls {mode}", path.display());
            let sse = run_fixture(&path, &["--to", "openai-responses", "--tool-calls", mode]);
            let all = read_sse(&sse.out(), &ctx);
            if !own_mode && mode != "content" && !exp.is_empty() {
                assert_eq!(all.len(), exp.len(), "{ctx}: one response per session");
                for (r, (text, ok)) in all.iter().zip(&exp) {
                    assert_eq!(&r.text(), text, "{ctx}: text rebuilt from the deltas");
                    assert_eq!(
                        r.last["status"] == "completed",
                        *ok,
                        "{ctx}: completed iff ok"
                    );
                }
            }
            // Neighbouring items are never two messages: one per run of text.
            for r in &all {
                for pair in r.items.windows(2) {
                    assert!(
                        pair[0]["type"] != pair[1]["type"] || pair[0]["type"] == "function_call",
                        "{ctx}: two {} items in a row",
                        pair[0]["type"]
                    );
                }
            }
            let json = run_fixture(
                &path,
                &["--to", "openai-responses-json", "--tool-calls", mode],
            );
            let vals: Vec<Value> = serde_json::Deserializer::from_str(&json.out())
                .into_iter::<Value>()
                .map(|v| v.expect("openai-responses-json is JSON"))
                .collect();
            assert_eq!(vals.len(), all.len(), "{ctx}: one value per session");
            for (v, r) in vals.iter().zip(&all) {
                let (mut v, mut last) = (v.clone(), r.last.clone());
                // Without timestamps each run takes its own start time.
                v["created_at"] = Value::Null;
                last["created_at"] = Value::Null;
                assert_eq!(
                    v, last,
                    "{ctx}: the JSON form vs the stream's final response"
                );
            }
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn real_captures_pass_the_stream_rules() {
    for dialect in common::LIVE_CORPUS {
        for path in corpus(dialect) {
            for mode in ["reasoning", "calls"] {
                let run = common::cstream_file(
                    &["--to", "openai-responses", "--tool-calls", mode],
                    &path,
                );
                read_sse(&run.out(), &format!("{} {mode}", path.display()));
            }
        }
    }
}

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"M1"}"#;

fn sse(args: &[&str], input: &str) -> Vec<Response> {
    let mut a = vec!["--to", "openai-responses"];
    a.extend(args);
    read_sse(&cstream(&a, input.as_bytes()).out(), &format!("{args:?}"))
}

#[test]
fn usage_ids_and_header() {
    let input = lines(&[
        INIT,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1","timestamp_ms":1750000000999}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":50,"cacheWriteTokens":5},"session_id":"s1"}"#,
    ]);
    let r = &sse(&[], &input)[0];
    assert_eq!(
        r.last["usage"],
        json!({"input_tokens":155,"input_tokens_details":{"cached_tokens":50,"cache_write_tokens":5},
               "output_tokens":7,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":162})
    );
    assert_eq!(
        (&r.last["id"], &r.last["model"], &r.last["created_at"]),
        (&json!("resp_s1"), &json!("M1"), &json!(1750000000))
    );
    assert_eq!(r.items[0]["id"], "msg_s1_0");
}

#[test]
fn tool_calls_become_function_call_items_or_lines() {
    let input = lines(&[
        INIT,
        r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"}}},"session_id":"s1"}"#,
        r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"},"result":{"success":{"exitCode":0,"stdout":"x\n"}}}},"session_id":"s1"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s1"}"#,
    ]);
    let r = &sse(&[], &input)[0];
    assert_eq!(
        r.items,
        vec![
            json!({"type":"reasoning","id":"rs_s1_0","summary":[{"type":"summary_text","text":"shell: ls -la → exit 0\n"}]})
        ]
    );
    assert_eq!(
        sse(&["--tool-calls", "content"], &input)[0].text(),
        "shell: ls -la → exit 0\n"
    );
    assert!(sse(&["--tool-calls", "omit"], &input)[0].items.is_empty());
    assert!(
        sse(&["--reasoning-field", "none"], &input)[0]
            .items
            .is_empty()
    );
    let r = &sse(&["--tool-calls", "calls"], &input)[0];
    assert_eq!(
        r.items,
        vec![
            json!({"type":"function_call","id":"fc_s1_0","status":"completed","call_id":"c1",
                    "name":"shell","arguments":"{\"command\":\"ls -la\"}"})
        ]
    );
}

#[test]
fn a_failed_session_ends_with_response_failed() {
    let r = &sse(&[], "")[0];
    assert_eq!(r.last["error"]["type"], "incomplete_stream");
    let input = lines(&[
        INIT,
        r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"quota"},"session_id":"s1"}"#,
    ]);
    let r = &sse(&[], &input)[0];
    assert_eq!(
        r.last["error"],
        json!({"code":"server_error","message":"quota","type":"agent_error"})
    );
    assert!(r.last["usage"].is_null());
}

#[test]
fn several_sessions_one_response_each_and_one_warning() {
    let one = |id: &str| {
        lines(&[
            &INIT.replace("s1", id),
            &r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1"}"#
                .replace("s1", id),
        ])
    };
    let input = format!("{}{}", one("a"), one("b"));
    let run = cstream(&["--to", "openai-responses"], input.as_bytes());
    let ids: Vec<Value> = read_sse(&run.out(), "two")
        .into_iter()
        .map(|r| r.last["id"].clone())
        .collect();
    assert_eq!(ids, [json!("resp_a"), json!("resp_b")]);
    assert_eq!(
        run.stderr.matches("second session").count(),
        1,
        "{}",
        run.stderr
    );
}
