//! `--to anthropic-sse` and `--to anthropic-json`: a strict reader of the
//! Messages stream that checks what clients rely on (docs/formats.md#anthropic-sse)
//! on every fixture in every `--tool-calls` mode and on the real captures:
//! `message_start` first with integer usage, blocks that start empty (text,
//! thinking) and never interleave, one index per block, `input_json_delta`
//! fragments that concatenate to a JSON object, `message_delta` with a stop
//! reason and integer `output_tokens`, `message_stop` or an `error` event
//! last, no `[DONE]`, thinking blocks with the empty `signature` the typed
//! models require and no invented one; the text rebuilt equals the
//! events' text; the whole Message agrees with the stream.

use crate::common;

use common::{corpus, cstream, fixture_args, fixtures, lines, run_fixture};
use serde_json::{Value, json};

/// One message (one session), as a client rebuilds it.
#[derive(Debug, Default, Clone, PartialEq)]
struct Message {
    id: String,
    model: String,
    /// The finished blocks, in index order, as the whole Message spells them.
    content: Vec<Value>,
    stop_reason: Option<String>,
    /// `message_delta.usage`.
    usage: Option<Value>,
    error: Option<Value>,
}

impl Message {
    /// The answer: the text blocks' texts, each block a paragraph (a block
    /// starts without the separator a single string would need).
    fn text(&self) -> String {
        common::join_paragraphs(
            self.content
                .iter()
                .filter(|b| b["type"] == "text")
                .map(|b| b["text"].as_str().unwrap()),
        )
    }
}

fn is_count(v: &Value) -> bool {
    v.as_u64().is_some()
}

/// Read `out` as a sequence of Messages streams, asserting the rules.
fn read_sse(out: &str, ctx: &str) -> Vec<Message> {
    assert!(
        !out.contains("[DONE]"),
        "{ctx}: [DONE] in an Anthropic stream"
    );
    let mut msgs: Vec<Message> = Vec::new();
    // The open block: (index, value being rebuilt, partial JSON for tool_use).
    let mut open: Option<(usize, Value, String)> = None;
    // The stream is over (message_stop or error): only message_start may follow.
    let mut over = true;
    let mut finished = false;
    for rec in out.split_terminator("\n\n") {
        let (head, data) = rec
            .split_once('\n')
            .unwrap_or_else(|| panic!("{ctx}: record {rec:?}"));
        let name = head.strip_prefix("event: ").expect("event line");
        let v: Value = serde_json::from_str(data.strip_prefix("data: ").expect("data line"))
            .unwrap_or_else(|e| panic!("{ctx}: not JSON ({e}): {data}"));
        assert_eq!(v["type"], name, "{ctx}: event name vs type");
        if name == "message_start" {
            assert!(over, "{ctx}: message_start inside a message");
            over = false;
            finished = false;
            let m = &v["message"];
            assert_eq!(
                (&m["type"], &m["role"], &m["content"]),
                (&json!("message"), &json!("assistant"), &json!([])),
                "{ctx}"
            );
            assert!(m["stop_reason"].is_null() && m["stop_sequence"].is_null());
            assert!(
                is_count(&m["usage"]["input_tokens"]) && is_count(&m["usage"]["output_tokens"]),
                "{ctx}: message_start usage must be integers: {m}"
            );
            msgs.push(Message {
                id: m["id"].as_str().expect("id").to_owned(),
                model: m["model"].as_str().expect("model").to_owned(),
                ..Message::default()
            });
            assert!(!msgs.last().unwrap().id.is_empty());
            continue;
        }
        assert!(!over, "{ctx}: {name} outside a message");
        let msg = msgs.last_mut().unwrap();
        match name {
            "ping" => assert!(!finished, "{ctx}: ping after message_delta"),
            "content_block_start" => {
                assert!(open.is_none(), "{ctx}: blocks interleave");
                assert!(!finished, "{ctx}: block after message_delta");
                let i = v["index"].as_u64().expect("index") as usize;
                assert_eq!(i, msg.content.len(), "{ctx}: block index");
                let b = v["content_block"].clone();
                match b["type"].as_str().unwrap() {
                    "text" => assert_eq!(b, json!({"type":"text","text":""}), "{ctx}"),
                    "thinking" => {
                        assert_eq!(
                            b,
                            json!({"type":"thinking","thinking":"","signature":""}),
                            "{ctx}"
                        )
                    }
                    "tool_use" => {
                        assert_eq!(b["input"], json!({}), "{ctx}: tool_use starts with {{}}");
                        assert!(
                            b["id"].as_str().is_some_and(|s| !s.is_empty())
                                && b["name"].is_string(),
                            "{ctx}: {b}"
                        );
                    }
                    t => panic!("{ctx}: block type {t}"),
                }
                open = Some((i, b, String::new()));
            }
            "content_block_delta" => {
                let (i, b, json) = open.as_mut().expect("a delta outside a block");
                assert_eq!(v["index"], *i as u64, "{ctx}: delta index");
                let d = &v["delta"];
                let (key, field) = match (b["type"].as_str().unwrap(), d["type"].as_str()) {
                    ("text", Some("text_delta")) => ("text", "text"),
                    ("thinking", Some("thinking_delta")) => ("thinking", "thinking"),
                    ("tool_use", Some("input_json_delta")) => {
                        json.push_str(d["partial_json"].as_str().expect("partial_json"));
                        continue;
                    }
                    (t, d) => panic!("{ctx}: {d:?} in a {t} block"),
                };
                let t = d[field].as_str().expect("delta text");
                assert!(!t.is_empty(), "{ctx}: empty delta");
                let cur = b[key].as_str().unwrap().to_owned();
                b[key] = Value::String(cur + t);
            }
            "content_block_stop" => {
                let (i, mut b, json) = open.take().expect("a stop outside a block");
                assert_eq!(v["index"], i as u64, "{ctx}: stop index");
                if b["type"] == "tool_use" {
                    let input: Value = serde_json::from_str(&json).unwrap_or_else(|e| {
                        panic!("{ctx}: input_json_delta fragments are not JSON ({e}): {json:?}")
                    });
                    assert!(input.is_object(), "{ctx}: tool input is not an object");
                    b["input"] = input;
                }
                msg.content.push(b);
            }
            "message_delta" => {
                assert!(open.is_none(), "{ctx}: message_delta inside a block");
                assert!(!finished, "{ctx}: two message_delta");
                finished = true;
                let reason = v["delta"]["stop_reason"].as_str().expect("stop_reason");
                let ends_on_call = msg.content.last().is_some_and(|b| b["type"] == "tool_use");
                assert_eq!(
                    reason,
                    if ends_on_call { "tool_use" } else { "end_turn" },
                    "{ctx}: stop_reason"
                );
                assert!(v["delta"]["stop_sequence"].is_null());
                let u = &v["usage"];
                assert!(is_count(&u["output_tokens"]), "{ctx}: usage {u}");
                msg.stop_reason = Some(reason.to_owned());
                msg.usage = Some(u.clone());
            }
            "message_stop" => {
                assert!(finished, "{ctx}: message_stop without message_delta");
                over = true;
            }
            "error" => {
                assert!(!finished, "{ctx}: error after message_delta");
                assert!(open.is_none(), "{ctx}: error inside a block");
                let e = &v["error"];
                assert!(
                    matches!(e["type"].as_str(), Some("api_error"))
                        && e["message"].as_str().is_some_and(|m| !m.is_empty()),
                    "{ctx}: {v}"
                );
                msg.error = Some(v.clone());
                over = true;
            }
            other => panic!("{ctx}: unexpected event {other}"),
        }
    }
    assert!(over, "{ctx}: the last message has no end");
    assert!(!msgs.is_empty(), "{ctx}: no message");
    msgs
}

const MODES: [&str; 4] = ["reasoning", "content", "omit", "calls"];

#[test]
fn every_fixture_passes_the_stream_rules_and_the_json_agrees() {
    let mut n = 0;
    for path in fixtures() {
        let exp = common::session_texts(&path);
        let own_mode = fixture_args(&path).iter().any(|a| a == "--tool-calls");
        for mode in MODES {
            let ctx = format!("{} --tool-calls {mode}", path.display());
            let sse = run_fixture(&path, &["--to", "anthropic-sse", "--tool-calls", mode]);
            let msgs = read_sse(&sse.out(), &ctx);
            let with_events: Vec<&Message> = if exp.is_empty() {
                Vec::new()
            } else {
                msgs.iter().collect()
            };
            if !own_mode && mode != "content" {
                assert_eq!(
                    with_events.len(),
                    exp.len(),
                    "{ctx}: one message per session"
                );
                for (m, (text, ok)) in with_events.iter().zip(&exp) {
                    assert_eq!(&m.text(), text, "{ctx}: text rebuilt from the deltas");
                    assert_eq!(m.stop_reason.is_some(), *ok, "{ctx}: finish iff ok result");
                }
            }
            let json = run_fixture(&path, &["--to", "anthropic-json", "--tool-calls", mode]);
            let vals: Vec<Value> = serde_json::Deserializer::from_str(&json.out())
                .into_iter::<Value>()
                .map(|v| v.expect("anthropic-json is JSON"))
                .collect();
            assert_eq!(vals.len(), msgs.len(), "{ctx}: one value per session");
            for (v, m) in vals.iter().zip(&msgs) {
                if let Some(e) = &m.error {
                    assert_eq!(v, e, "{ctx}: the error value is the stream's error event");
                    continue;
                }
                let want = json!({
                    "id": m.id, "type": "message", "role": "assistant", "model": m.model,
                    "content": m.content, "stop_reason": m.stop_reason,
                    "stop_sequence": null, "usage": m.usage,
                });
                assert_eq!(v, &want, "{ctx}: the Message vs the stream");
            }
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn real_captures_pass_the_stream_rules() {
    let mut n = 0;
    for dialect in common::LIVE_CORPUS {
        for path in corpus(dialect) {
            for mode in ["reasoning", "calls"] {
                let run =
                    common::cstream_file(&["--to", "anthropic-sse", "--tool-calls", mode], &path);
                read_sse(&run.out(), &format!("{} {mode}", path.display()));
                n += 1;
            }
        }
    }
    if n == 0 {
        eprintln!("no corpus: skipped");
    }
}

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"M1"}"#;

fn sse(args: &[&str], input: &str) -> Vec<Message> {
    let mut a = vec!["--to", "anthropic-sse"];
    a.extend(args);
    read_sse(&cstream(&a, input.as_bytes()).out(), &format!("{args:?}"))
}

/// Cache reads and writes have fields of their own; `input_tokens` is what
/// is left; usage goes in `message_delta`, and `message_start` has zeros.
#[test]
fn usage_splits_the_cache_counts_out() {
    let input = lines(&[
        INIT,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":50,"cacheWriteTokens":5},"session_id":"s1"}"#,
    ]);
    let m = &sse(&[], &input)[0];
    assert_eq!(
        m.usage.as_ref().unwrap(),
        &json!({"input_tokens":100,"output_tokens":7,"cache_creation_input_tokens":5,"cache_read_input_tokens":50})
    );
    let out = cstream(&["--to", "anthropic-sse"], input.as_bytes()).out();
    assert!(
        out.contains(r#""usage":{"input_tokens":0,"output_tokens":0}}}"#),
        "{out}"
    );
}

#[test]
fn tool_calls_become_tool_use_blocks_or_lines() {
    let input = lines(&[
        INIT,
        r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"}}},"session_id":"s1"}"#,
        r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"},"result":{"success":{"exitCode":0,"stdout":"x\n"}}}},"session_id":"s1"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s1"}"#,
    ]);
    let m = &sse(&[], &input)[0];
    assert_eq!(
        m.content,
        vec![json!({"type":"thinking","thinking":"shell: ls -la → exit 0\n","signature":""})]
    );
    assert_eq!(m.stop_reason.as_deref(), Some("end_turn"));
    let m = &sse(&["--tool-calls", "content"], &input)[0];
    assert_eq!(m.text(), "shell: ls -la → exit 0\n");
    let m = &sse(&["--tool-calls", "omit"], &input)[0];
    assert!(m.content.is_empty());
    let m = &sse(&["--reasoning-field", "none"], &input)[0];
    assert!(m.content.is_empty(), "no thinking channel: no lines");
    let m = &sse(&["--tool-calls", "calls"], &input)[0];
    assert_eq!(
        m.content,
        vec![json!({"type":"tool_use","id":"c1","name":"shell","input":{"command":"ls -la"}})]
    );
    assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
}

/// A failed or cut-off session ends with an `error` event after
/// `message_start`, and the whole form is the same error object.
#[test]
fn a_failed_session_ends_with_an_error_event() {
    let m = &sse(&[], "")[0];
    assert_eq!(m.error.as_ref().unwrap()["error"]["type"], "api_error");
    let input = lines(&[
        INIT,
        r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"quota"},"session_id":"s1"}"#,
    ]);
    let m = &sse(&[], &input)[0];
    let want = json!({"type":"error","error":{"type":"api_error","message":"quota"}});
    assert_eq!(m.error.as_ref().unwrap(), &want);
    let json = cstream(&["--to", "anthropic-json", "-c"], input.as_bytes()).out();
    assert_eq!(serde_json::from_str::<Value>(&json).unwrap(), want);
}

#[test]
fn several_sessions_one_message_each_and_one_warning() {
    let one = |id: &str| {
        lines(&[
            &INIT.replace("s1", id),
            &r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1"}"#
                .replace("s1", id),
        ])
    };
    let input = format!("{}{}", one("a"), one("b"));
    let run = cstream(&["--to", "anthropic-sse"], input.as_bytes());
    let ids: Vec<String> = read_sse(&run.out(), "two")
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["msg_a", "msg_b"]);
    assert_eq!(
        run.stderr.matches("second session").count(),
        1,
        "{}",
        run.stderr
    );
}

/// A thinking block starts with `"signature": ""`, as the API's does
/// (anthropic-python's `ThinkingBlock` and `@ai-sdk/anthropic`'s `Message`
/// schema require the field), in the stream and whole; no `signature_delta`
/// follows, and a signature the input carried is not passed on (the block's
/// text is cstream's run of reasoning, which that signature does not sign).
#[test]
fn thinking_blocks_carry_an_empty_signature() {
    let input = lines(&[
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-x","tools":[]}"#,
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"thinking","thinking":"Let me look.","signature":"EqQBCkYIBxgCKkA"}],"usage":{"input_tokens":3,"output_tokens":1}},"session_id":"s1"}"#,
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":3,"output_tokens":5}},"session_id":"s1"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s1"}"#,
    ]);
    let out = cstream(&["--to", "anthropic-sse"], input.as_bytes()).out();
    assert!(
        out.contains(r#""content_block":{"type":"thinking","thinking":"","signature":""}"#),
        "{out}"
    );
    assert!(!out.contains("signature_delta"), "{out}");
    assert!(!out.contains("EqQBCkYIBxgCKkA"), "{out}");
    let json = cstream(&["--to", "anthropic-json", "-c"], input.as_bytes()).out();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["content"][0],
        json!({"type":"thinking","thinking":"Let me look.","signature":""})
    );
}

/// `tool_use.input` is always a JSON object (anthropic-python's `ToolUseBlock`
/// requires one): arguments that are JSON but not an object, as a saved Codex
/// session with redacted arguments has, are kept under `arguments`.
#[test]
fn tool_use_input_is_an_object_even_when_the_arguments_are_not() {
    let input = lines(&[
        r#"{"type":"session_started","sessionId":"s","dialect":"codex","schemaVersion":1}"#,
        r#"{"type":"tool_call_started","sessionId":"s","callId":"c1","toolName":"shell","args":"[REDACTED_ARGUMENTS len=46]"}"#,
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"c1","toolName":"shell","ok":true}"#,
        r#"{"type":"result","sessionId":"s","ok":true}"#,
    ]);
    let want = json!({"type":"tool_use","id":"c1","name":"shell","input":{"arguments":"[REDACTED_ARGUMENTS len=46]"}});
    let m = &sse(&["--tool-calls", "calls"], &input)[0];
    assert_eq!(m.content, vec![want.clone()]);
    let json = cstream(
        &["--to", "anthropic-json", "-c", "--tool-calls", "calls"],
        input.as_bytes(),
    )
    .out();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["content"][0], want);
}
