//! `--to openai-sse` and `--to openai-json`: a strict SSE reader that checks
//! the client rules of docs/formats.md#openai-sse on every output of every
//! fixture (and of the real captures when `../shared/corpus` exists), the
//! content rebuilt from the chunks against the events and the agent's
//! result, the JSON form against the SSE form, liveness, and the derived
//! header values.

use crate::common;

use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::Path;
use std::rc::Rc;

use common::{
    Answer, FORMATS, answers, corpus, cstream, cstream_file, fixture_args, fixtures, lines,
    run_fixture,
};
use cstream::{Config, Dialect, Format, ToolCallMode, convert};
use serde_json::{Value, json};

/// One SSE stream (one session), as a client would rebuild it.
#[derive(Debug, Default, Clone)]
struct Stream {
    id: String,
    created: i64,
    model: String,
    content: String,
    reasoning: String,
    /// (id, name, arguments) per tool-call index.
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: Option<Value>,
    /// The `error` object of an error record.
    error: Option<Value>,
}

/// Read `out` as a sequence of OpenAI SSE streams, asserting every rule of
/// the §6 checklist on the way. `field` is the reasoning key in use.
fn read_sse(out: &str, field: &str, ctx: &str) -> Vec<Stream> {
    // Framing: only `data: <one line>` records, each followed by one blank
    // line; LF only; nothing else.
    assert!(!out.contains('\r'), "{ctx}: CR in output");
    assert!(
        out.ends_with("\n\n"),
        "{ctx}: output does not end with a blank line"
    );
    let mut records = Vec::new();
    let mut lines = out.split('\n').peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() && lines.peek().is_none() {
            break;
        }
        let data = line
            .strip_prefix("data: ")
            .unwrap_or_else(|| panic!("{ctx}: not a data line: {line:?}"));
        assert_eq!(
            lines.next(),
            Some(""),
            "{ctx}: record not followed by a blank line"
        );
        records.push(data);
    }
    let mut streams = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for r in records {
        if r == "[DONE]" {
            streams.push(check_stream(&cur, field, ctx));
            cur.clear();
        } else {
            cur.push(r);
        }
    }
    assert!(cur.is_empty(), "{ctx}: records after the last [DONE]");
    assert!(!streams.is_empty(), "{ctx}: no stream");
    streams
}

fn check_stream(records: &[&str], field: &str, ctx: &str) -> Stream {
    let vals: Vec<Value> = records
        .iter()
        .map(|r| serde_json::from_str(r).unwrap_or_else(|e| panic!("{ctx}: not JSON ({e}): {r}")))
        .collect();
    assert!(!vals.is_empty(), "{ctx}: a stream with only [DONE]");
    let mut s = Stream::default();
    // The role chunk comes first.
    let first = &vals[0];
    assert!(
        first.get("error").is_none(),
        "{ctx}: error record before the role chunk"
    );
    assert_eq!(
        first["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""}),
        "{ctx}: first chunk is not the role chunk"
    );
    s.id = first["id"].as_str().expect("id is a string").to_owned();
    s.created = first["created"].as_i64().expect("created is an integer");
    s.model = first["model"]
        .as_str()
        .expect("model is a string")
        .to_owned();
    assert!(
        !s.id.is_empty() && !s.model.is_empty(),
        "{ctx}: empty id or model"
    );
    // Tool-call state: arguments so far per index.
    let mut last_was_call = false;
    let mut finished = false;
    for (i, v) in vals.iter().enumerate() {
        if let Some(err) = v.get("error") {
            assert_eq!(
                i,
                vals.len() - 1,
                "{ctx}: error record is not the last before [DONE]"
            );
            assert!(!finished, "{ctx}: error record after a finish chunk");
            assert_eq!(
                v.as_object().unwrap().len(),
                1,
                "{ctx}: error record has other keys"
            );
            assert!(
                err["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{ctx}: error without a message"
            );
            assert!(
                matches!(
                    err["type"].as_str(),
                    Some("agent_error" | "incomplete_stream")
                ),
                "{ctx}: error type {}",
                err["type"]
            );
            assert_eq!(err["code"], Value::Null, "{ctx}: error code");
            s.error = Some(err.clone());
            continue;
        }
        assert_eq!(v["object"], "chat.completion.chunk", "{ctx}: object");
        assert_eq!(v["id"], s.id.as_str(), "{ctx}: id changes within a stream");
        assert_eq!(
            v["created"], s.created,
            "{ctx}: created changes within a stream"
        );
        assert_eq!(
            v["model"],
            s.model.as_str(),
            "{ctx}: model changes within a stream"
        );
        let choices = v["choices"]
            .as_array()
            .unwrap_or_else(|| panic!("{ctx}: no choices array: {v}"));
        if let Some(u) = v.get("usage") {
            assert!(finished, "{ctx}: usage chunk before the finish chunk");
            assert!(choices.is_empty(), "{ctx}: usage chunk with choices");
            assert_eq!(
                i,
                vals.len() - 1,
                "{ctx}: usage chunk is not the last before [DONE]"
            );
            let p = u["prompt_tokens"].as_u64().expect("prompt_tokens");
            let c = u["completion_tokens"].as_u64().expect("completion_tokens");
            // Saturating: fixtures/regression/*_usage-at-i64-max hit the top.
            assert_eq!(
                u["total_tokens"].as_u64(),
                Some(p.saturating_add(c)),
                "{ctx}: total_tokens"
            );
            if let Some(d) = u.get("prompt_tokens_details") {
                assert!(
                    d["cached_tokens"].as_u64().expect("cached_tokens") <= p,
                    "{ctx}: cached > prompt"
                );
            }
            s.usage = Some(u.clone());
            continue;
        }
        assert!(!finished, "{ctx}: chunk after the finish chunk: {v}");
        assert_eq!(choices.len(), 1, "{ctx}: one choice per chunk");
        let ch = &choices[0];
        assert_eq!(ch["index"], 0, "{ctx}: choice index");
        let delta = ch["delta"]
            .as_object()
            .unwrap_or_else(|| panic!("{ctx}: delta is not an object"));
        assert!(
            ch.get("finish_reason").is_some(),
            "{ctx}: finish_reason key missing"
        );
        if let Some(reason) = ch["finish_reason"].as_str() {
            assert!(
                delta.is_empty(),
                "{ctx}: finish chunk with a non-empty delta"
            );
            let want = if last_was_call { "tool_calls" } else { "stop" };
            assert_eq!(reason, want, "{ctx}: finish_reason");
            s.finish = Some(reason.to_owned());
            finished = true;
            continue;
        }
        if i == 0 {
            continue;
        }
        assert!(
            delta.get("role").is_none(),
            "{ctx}: role repeated after the first chunk"
        );
        assert_eq!(delta.len(), 1, "{ctx}: one thing per delta: {v}");
        let (k, val) = delta.iter().next().unwrap();
        match k.as_str() {
            "content" => {
                let t = val.as_str().expect("content is a string");
                assert!(!t.is_empty(), "{ctx}: empty content delta");
                s.content.push_str(t);
                last_was_call = false;
            }
            k if k == field => {
                let t = val.as_str().expect("reasoning is a string");
                assert!(!t.is_empty(), "{ctx}: empty reasoning delta");
                s.reasoning.push_str(t);
                last_was_call = false;
            }
            "tool_calls" => {
                let tc = val.as_array().expect("tool_calls is an array");
                assert_eq!(tc.len(), 1, "{ctx}: one call per delta");
                let tc = &tc[0];
                let idx = tc["index"].as_u64().expect("index is required") as usize;
                let f = tc["function"]
                    .as_object()
                    .unwrap_or_else(|| panic!("{ctx}: fragment without function: {tc}"));
                let args = f["arguments"].as_str().expect("arguments is a string");
                if idx == s.calls.len() {
                    // First delta of an index: id, type, name, empty arguments.
                    let id = tc["id"].as_str().expect("first delta has an id");
                    assert!(!id.is_empty(), "{ctx}: empty call id");
                    assert_eq!(tc["type"], "function", "{ctx}: call type");
                    let name = f["name"].as_str().expect("first delta has a name");
                    assert_eq!(args, "", "{ctx}: first delta carries arguments");
                    s.calls
                        .push((id.to_owned(), name.to_owned(), String::new()));
                } else {
                    assert!(idx < s.calls.len(), "{ctx}: index {idx} skips ahead");
                    assert_eq!(
                        tc.as_object().unwrap().len(),
                        2,
                        "{ctx}: later fragment with more than index+function: {tc}"
                    );
                    assert_eq!(
                        f.len(),
                        1,
                        "{ctx}: later fragment function has more than arguments"
                    );
                    let acc = &mut s.calls[idx].2;
                    // A client that finishes a call as soon as its arguments
                    // parse must not see a complete prefix.
                    assert!(
                        acc.is_empty() || serde_json::from_str::<Value>(acc).is_err(),
                        "{ctx}: arguments already complete JSON before more fragments"
                    );
                    acc.push_str(args);
                }
                last_was_call = true;
            }
            other => panic!("{ctx}: unexpected delta key {other}"),
        }
    }
    for (id, _, args) in &s.calls {
        serde_json::from_str::<Value>(args)
            .unwrap_or_else(|e| panic!("{ctx}: arguments of {id} are not JSON ({e}): {args}"));
    }
    assert!(
        s.finish.is_some() != s.error.is_some(),
        "{ctx}: a stream ends with exactly one of finish chunk or error record"
    );
    s
}

/// Every row of FORMATS that writes SSE, with its reasoning field.
fn sse_rows() -> Vec<(&'static str, &'static [&'static str])> {
    let rows: Vec<_> = FORMATS
        .iter()
        .filter(|(_, a)| a.windows(2).any(|w| w == ["--to", "openai-sse"]))
        .copied()
        .collect();
    assert!(rows.len() >= 2, "FORMATS lost its openai-sse rows");
    rows
}

/// The reasoning key a command line selects.
fn field_of(args: &[&str]) -> &'static str {
    match args
        .windows(2)
        .find(|w| w[0] == "--reasoning-field")
        .map(|w| w[1])
    {
        Some("reasoning") => "reasoning",
        Some("none") => "-",
        _ => "reasoning_content",
    }
}

/// Per session (in order): the text the events carry, and the result.
fn expected(events_out: &str) -> Vec<Answer> {
    answers(events_out)
}

/// Rebuilt content equals the events' text, its turns joined by a blank
/// line; with an ok result, a finish chunk; and without one, an error record.
fn check_against_events(streams: &[Stream], exp: &[Answer], ctx: &str) {
    // Sessions with no events at all (empty input) have no events to match.
    let with_events: Vec<&Stream> = streams
        .iter()
        .filter(|s| {
            exp.iter()
                .any(|e| s.id == format!("chatcmpl-{}", e.session_id))
        })
        .collect();
    assert_eq!(
        with_events.len(),
        exp.len(),
        "{ctx}: one stream per session"
    );
    for (s, e) in with_events.iter().zip(exp) {
        assert_eq!(
            s.content,
            e.chat_text(),
            "{ctx}: content rebuilt from the chunks"
        );
        let ok = e.result.as_ref().is_some_and(|r| r["ok"] == true);
        assert_eq!(
            s.finish.is_some(),
            ok,
            "{ctx}: finish chunk iff an ok result"
        );
    }
}

#[test]
fn every_fixture_passes_the_sse_checklist() {
    let mut checked = 0;
    for path in fixtures() {
        let ev = run_fixture(&path, &["--to", "events"]);
        let exp = expected(&ev.out());
        for (name, args) in sse_rows() {
            let run = run_fixture(&path, args);
            let ctx = format!("{name} {}", path.display());
            let streams = read_sse(&run.out(), field_of(args), &ctx);
            if !fixture_args(&path).iter().any(|a| a == "--tool-calls")
                && !args.contains(&"content")
            {
                check_against_events(&streams, &exp, &ctx);
            }
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// Content rebuilt from the SSE chunks is the agent's own result text with a
/// blank line between its turns (cursor-agent's result joins them without
/// one): on every cursor fixture with an ok result, and on the real captures.
fn content_equals_result(path: &Path, extra: &[&str]) -> usize {
    let mut args = vec!["--to", "openai-sse"];
    args.extend(extra);
    let run = cstream_file(&args, path);
    let ctx = path.display().to_string();
    let streams = read_sse(&run.out(), "reasoning_content", &ctx);
    let exp = expected(&cstream_file(&["--to", "events"], path).out());
    let mut n = 0;
    for e in exp {
        let Some(r) = e.result.as_ref().filter(|r| r["ok"] == true) else {
            continue;
        };
        let Some(text) = r["text"].as_str() else {
            continue;
        };
        let s = streams
            .iter()
            .find(|s| s.id == format!("chatcmpl-{}", e.session_id))
            .unwrap_or_else(|| panic!("{ctx}: no stream for {}", e.session_id));
        assert_eq!(e.turns.concat(), text, "{ctx}: the turns vs the result");
        assert_eq!(s.content, e.chat_text(), "{ctx}: rebuilt content vs result");
        n += 1;
    }
    n
}

#[test]
fn rebuilt_content_equals_the_result_on_cursor_fixtures() {
    let mut n = 0;
    for path in fixtures() {
        let in_cursor = path.parent().is_some_and(|p| p.ends_with("cursor"));
        let args = fixture_args(&path);
        let name = path.file_name().unwrap().to_str().unwrap();
        if !in_cursor
            || args.iter().any(|a| a == "--no-dedupe")
            || RESULT_DOES_NOT_EXTEND.contains(&name)
        {
            continue;
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        n += content_equals_result(&path, &args);
    }
    assert!(
        n >= 4,
        "only {n} cursor sessions with a result were checked"
    );
}

/// Upstream authors trimmed this capture and set its result to "done", which
/// does not extend the text (then nothing is added: docs/events.md#text-rebuilt-once).
/// The fixture `divergent-result.jsonl` exercises the same rule on purpose.
const RESULT_DOES_NOT_EXTEND: &[&str] = &[
    "cursor-hack_full-session_author-trimmed-fixture_shell.jsonl",
    "divergent-result.jsonl",
];

#[test]
fn real_captures_pass_the_checklist_and_rebuild_the_result() {
    let files = corpus("cursor-agent");
    if files.is_empty() {
        eprintln!("../shared/corpus/cursor-agent not found; skipping");
        return;
    }
    let mut n = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        for args in [
            &["--to", "openai-sse"][..],
            &[
                "--to",
                "openai-sse",
                "--tool-calls",
                "calls",
                "--include-usage",
            ],
            &[
                "--to",
                "openai-sse",
                "--reasoning-field",
                "reasoning",
                "--tool-calls",
                "content",
            ],
        ] {
            let run = cstream_file(args, path);
            read_sse(&run.out(), field_of(args), &format!("{name} {args:?}"));
        }
        if RESULT_DOES_NOT_EXTEND.contains(&name) {
            continue;
        }
        n += content_equals_result(path, &[]);
    }
    assert!(
        n >= 5,
        "only {n} captured sessions with a result were checked"
    );
    // All captures in one run: one stream each, one warning.
    let mut args = vec!["--to", "openai-sse"];
    let names: Vec<String> = files
        .iter()
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    args.extend(names.iter().map(String::as_str));
    let run = cstream(&args, b"");
    assert_eq!(
        read_sse(&run.out(), "reasoning_content", "all captures").len(),
        files.len()
    );
    assert_eq!(
        run.stderr.matches("second session").count(),
        1,
        "{}",
        run.stderr
    );
}

fn unix_now() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_secs()).expect("seconds fit")
}

/// Parse a run of JSON values (pretty or compact).
fn json_values(out: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(out)
        .into_iter::<Value>()
        .map(|v| v.expect("openai-json output is JSON"))
        .collect()
}

#[test]
fn openai_json_agrees_with_the_sse_stream() {
    for path in fixtures() {
        for mode in ["reasoning", "calls", "content"] {
            let before = unix_now();
            let sse = run_fixture(
                &path,
                &[
                    "--to",
                    "openai-sse",
                    "--include-usage",
                    "--tool-calls",
                    mode,
                ],
            );
            let ctx = format!("{} --tool-calls {mode}", path.display());
            let streams = read_sse(&sse.out(), "reasoning_content", &ctx);
            let json = run_fixture(&path, &["--to", "openai-json", "--tool-calls", mode]);
            let compact = run_fixture(&path, &["--to", "openai-json", "-c", "--tool-calls", mode]);
            let after = unix_now();
            let vals = json_values(&json.out());
            assert_eq!(vals.len(), streams.len(), "{ctx}: one value per session");
            let mut lines: Vec<Value> = compact
                .out()
                .lines()
                .map(|l| serde_json::from_str(l).expect("JSON line"))
                .collect();
            // A session without timestamps takes each run's start time; the
            // two runs may straddle a second (checked against the clock below).
            for (l, v) in lines.iter_mut().zip(&vals) {
                if let (Some(a), Some(b)) = (l.get("created"), v.get("created"))
                    && a != b
                    && [a, b].iter().all(|t| {
                        t.as_i64()
                            .is_some_and(|t| (before..=unix_now()).contains(&t))
                    })
                {
                    l["created"] = b.clone();
                }
            }
            assert_eq!(lines, vals, "{ctx}: -c is the same values, one per line");
            for (v, s) in vals.iter().zip(&streams) {
                if let Some(err) = &s.error {
                    assert_eq!(v, &json!({ "error": err }), "{ctx}: error value");
                    continue;
                }
                assert_eq!(v["object"], "chat.completion", "{ctx}");
                assert_eq!(
                    (v["id"].as_str(), v["model"].as_str()),
                    (Some(&*s.id), Some(&*s.model)),
                    "{ctx}"
                );
                // Equal, unless the stream has no time and each run took its
                // own start time (the two runs may straddle a second).
                let created = v["created"].as_i64().expect("created");
                let clock = before..=after;
                assert!(
                    created == s.created
                        || (clock.contains(&created) && clock.contains(&s.created)),
                    "{ctx}: created {created} vs {}",
                    s.created
                );
                let ch = &v["choices"].as_array().expect("choices")[0];
                assert_eq!(ch["index"], 0);
                assert_eq!(ch["finish_reason"].as_str(), s.finish.as_deref(), "{ctx}");
                let m = &ch["message"];
                assert_eq!(m["role"], "assistant");
                match m["content"].as_str() {
                    Some(c) => assert_eq!(c, s.content, "{ctx}: content"),
                    None => assert!(
                        s.content.is_empty() && !s.calls.is_empty(),
                        "{ctx}: null content"
                    ),
                }
                assert_eq!(
                    m.get("reasoning_content")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                    s.reasoning,
                    "{ctx}: reasoning"
                );
                let calls: Vec<(String, String, String)> = m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|c| {
                                assert_eq!(c["type"], "function");
                                (
                                    c["id"].as_str().unwrap().to_owned(),
                                    c["function"]["name"].as_str().unwrap().to_owned(),
                                    c["function"]["arguments"].as_str().unwrap().to_owned(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(calls, s.calls, "{ctx}: tool calls");
                assert_eq!(v.get("usage"), s.usage.as_ref(), "{ctx}: usage");
            }
        }
    }
}

// ------------------------------------------------------------ behaviour

fn sse(args: &[&str], input: &str) -> (Vec<Stream>, String) {
    let mut a = vec!["--to", "openai-sse"];
    a.extend(args);
    let run = cstream(&a, input.as_bytes());
    let field = field_of(args);
    (
        read_sse(&run.out(), field, &format!("{args:?}")),
        run.stderr,
    )
}

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"M1"}"#;
const RESULT: &str =
    r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1"}"#;

#[test]
fn header_values_are_derived_and_overridable() {
    let input = lines(&[
        INIT,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1","timestamp_ms":1750000000999}"#,
        RESULT,
    ]);
    let (s, _) = sse(&[], &input);
    assert_eq!(
        (s[0].id.as_str(), s[0].model.as_str(), s[0].created),
        ("chatcmpl-s1", "M1", 1750000000)
    );
    let (s, _) = sse(
        &["--id", "X", "--model", "gpt-test", "--created", "42"],
        &input,
    );
    assert_eq!(
        (s[0].id.as_str(), s[0].model.as_str(), s[0].created),
        ("X", "gpt-test", 42)
    );
}

/// `created` is the first timestamp seen up to the first chunk; a timestamp
/// that arrives later does not count, and without one the run's start time is
/// used.
#[test]
fn created_falls_back_to_the_run_start() {
    let run = |input: &str| {
        let cfg = Config::new(Format::OpenAiSse).run_start(1234);
        let mut out = Vec::new();
        convert(input.as_bytes(), &mut out, &cfg).unwrap();
        read_sse(&String::from_utf8(out).unwrap(), "reasoning_content", input)
    };
    let late_ts = lines(&[
        INIT,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}"#,
        r#"{"type":"thinking","subtype":"completed","session_id":"s1","timestamp_ms":1750000000000}"#,
        RESULT,
    ]);
    assert_eq!(run(&late_ts)[0].created, 1234);
    assert_eq!(run("")[0].created, 1234);
    let early_ts = lines(&[
        INIT,
        r#"{"type":"thinking","subtype":"completed","session_id":"s1","timestamp_ms":1750000000000}"#,
        r#"{"type":"thinking","subtype":"completed","session_id":"s1","timestamp_ms":1750000009000}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}"#,
        RESULT,
    ]);
    assert_eq!(run(&early_ts)[0].created, 1750000000);
}

#[test]
fn errors_end_the_stream_as_spec_section_3_says() {
    // Empty input: a session without a result.
    let (s, _) = sse(&[], "");
    assert_eq!(s[0].error.as_ref().unwrap()["type"], "incomplete_stream");
    // A `T: …` line and nothing else: the agent's own message.
    let (s, _) = sse(&[], "T: Named models are not available on your plan\n");
    let e = s[0].error.as_ref().unwrap();
    assert_eq!(e["type"], "incomplete_stream");
    assert_eq!(
        e["message"],
        "T: Named models are not available on your plan"
    );
    assert!(
        s[0].reasoning.contains("T: Named models"),
        "non-fatal errors go to reasoning"
    );
    // An error result.
    let (s, _) = sse(
        &["--include-usage"],
        &lines(&[
            INIT,
            r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"quota"},"usage":{"inputTokens":1,"outputTokens":1},"session_id":"s1"}"#,
        ]),
    );
    assert_eq!(
        s[0].error.as_ref().unwrap(),
        &json!({"message":"quota","type":"agent_error","code":null})
    );
    assert!(s[0].usage.is_none() && s[0].finish.is_none());
}

#[test]
fn a_session_without_content_still_gets_role_then_finish() {
    let (s, _) = sse(
        &["--include-usage"],
        &lines(&[INIT, RESULT.replace("\"hi\"", "\"\"").as_str()]),
    );
    assert_eq!(s[0].finish.as_deref(), Some("stop"));
    assert_eq!(s[0].content, "");
    // No usage known: no usage chunk, even when asked for.
    assert!(s[0].usage.is_none());
}

#[test]
fn usage_maps_cache_reads_and_writes_into_prompt_tokens() {
    let (s, _) = sse(
        &["--include-usage"],
        &lines(&[
            INIT,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"","usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":50,"cacheWriteTokens":5},"session_id":"s1"}"#,
        ]),
    );
    assert_eq!(
        s[0].usage.as_ref().unwrap(),
        &json!({"prompt_tokens":155,"completion_tokens":7,"total_tokens":162,"prompt_tokens_details":{"cached_tokens":50}})
    );
    // Without --include-usage there is no usage chunk.
    let (s, _) = sse(&[], &lines(&[INIT, RESULT]));
    assert!(s[0].usage.is_none());
}

const TOOL: &[&str] = &[
    r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"}}},"session_id":"s1"}"#,
    r#"{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"ls -la"},"result":{"success":{"exitCode":0,"stdout":"x\n"}}}},"session_id":"s1"}"#,
];

#[test]
fn tool_call_modes() {
    let input = lines(&[
        INIT,
        TOOL[0],
        TOOL[1],
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s1"}"#,
    ]);
    let (s, _) = sse(&[], &input);
    assert_eq!(s[0].reasoning, "shell: ls -la → exit 0\n");
    assert_eq!(
        (s[0].content.as_str(), s[0].finish.as_deref()),
        ("", Some("stop"))
    );
    let (s, _) = sse(&["--reasoning-field", "reasoning"], &input);
    assert_eq!(s[0].reasoning, "shell: ls -la → exit 0\n");
    // No reasoning channel: the default falls back to omit.
    let (s, _) = sse(&["--reasoning-field", "none"], &input);
    assert_eq!((s[0].reasoning.as_str(), s[0].content.as_str()), ("", ""));
    let (s, _) = sse(&["--tool-calls", "content"], &input);
    assert_eq!(s[0].content, "shell: ls -la → exit 0\n");
    let (s, _) = sse(&["--tool-calls", "omit"], &input);
    assert_eq!((s[0].reasoning.as_str(), s[0].content.as_str()), ("", ""));
    // Forwarded: the stream ends on the call, so the finish says so.
    let (s, _) = sse(&["--tool-calls", "calls"], &input);
    assert_eq!(
        s[0].calls,
        vec![(
            "c1".into(),
            "shell".into(),
            r#"{"command":"ls -la"}"#.into()
        )]
    );
    assert_eq!(s[0].finish.as_deref(), Some("tool_calls"));
    // Text after the call: stop.
    let input = lines(&[INIT, TOOL[0], TOOL[1], RESULT]);
    let (s, _) = sse(&["--tool-calls", "calls"], &input);
    assert_eq!(
        (s[0].content.as_str(), s[0].finish.as_deref()),
        ("hi", Some("stop"))
    );
}

#[test]
fn several_sessions_one_stream_each_and_one_warning() {
    let other = |id: &str| lines(&[&INIT.replace("s1", id), &RESULT.replace("s1", id)]);
    let input = format!("{}{}{}", other("a"), other("b"), other("c"));
    let (s, stderr) = sse(&[], &input);
    assert_eq!(
        s.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["chatcmpl-a", "chatcmpl-b", "chatcmpl-c"]
    );
    assert_eq!(stderr.matches("warning").count(), 1, "{stderr}");
    assert!(stderr.contains("second session"), "{stderr}");
    // One session: no warning; other formats: no warning.
    assert_eq!(sse(&[], &other("a")).1, "");
    assert_eq!(
        cstream(&["--to", "openai-json"], input.as_bytes()).stderr,
        ""
    );
}

/// Each delta leaves (and is flushed) before the next input line is read, in
/// every streaming chat format.
#[test]
fn every_delta_is_written_before_the_next_line_is_read() {
    #[derive(Clone, Default)]
    struct Out {
        written: Rc<RefCell<Vec<u8>>>,
        flushed: Rc<RefCell<usize>>,
    }
    impl Write for Out {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.written.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            *self.flushed.borrow_mut() = self.written.borrow().len();
            Ok(())
        }
    }
    /// Hands out one line per read and checks that what the previous line
    /// should have produced was flushed by then.
    struct Drip {
        lines: Vec<(String, Option<String>)>,
        next: usize,
        out: Out,
    }
    impl Read for Drip {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.next > 0
                && let Some(want) = &self.lines[self.next - 1].1
            {
                let w = self.out.written.borrow();
                let flushed =
                    String::from_utf8_lossy(&w[..*self.out.flushed.borrow()]).into_owned();
                assert!(
                    flushed.contains(want.as_str()),
                    "{want:?} not flushed before the next read:\n{flushed}"
                );
            }
            let Some((line, _)) = self.lines.get(self.next) else {
                return Ok(0);
            };
            let n = line.len();
            assert!(n <= buf.len());
            buf[..n].copy_from_slice(line.as_bytes());
            self.next += 1;
            Ok(n)
        }
    }
    let mut lines = vec![(format!("{INIT}\n"), None)];
    for i in 0..20 {
        let (ty, text) = if i % 2 == 0 {
            ("thinking", format!("t{i}"))
        } else {
            ("assistant", format!("w{i}"))
        };
        let line = if ty == "thinking" {
            format!(
                r#"{{"type":"thinking","subtype":"delta","text":"{text}","session_id":"s1","timestamp_ms":{i}}}"#
            )
        } else {
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{text}"}}]}},"session_id":"s1","timestamp_ms":{i}}}"#
            )
        };
        // The text ends a JSON string (a new turn's text starts with a
        // paragraph break).
        lines.push((format!("{line}\n"), Some(format!("{text}\""))));
    }
    // Every streaming chat format, on the same chat core.
    for format in [
        Format::OpenAiSse,
        Format::OpenAiResponses,
        Format::AnthropicSse,
    ] {
        let out = Out::default();
        let drip = Drip {
            lines: lines.clone(),
            next: 0,
            out: out.clone(),
        };
        let cfg = Config::new(format);
        convert(drip, out.clone(), &cfg).unwrap();
        let all = String::from_utf8(out.written.borrow().clone()).unwrap();
        if format == Format::OpenAiSse {
            let s = read_sse(&all, "reasoning_content", "drip");
            assert_eq!(s[0].error.as_ref().unwrap()["type"], "incomplete_stream");
            assert_eq!(all.matches("\"delta\":{\"reasoning_content\"").count(), 10);
        }
    }
}

/// The SSE sink keeps no per-delta state: a long stream costs no memory
/// that grows with it (checked indirectly: a 20k-delta stream converts and
/// every delta is a chunk of its own).
#[test]
fn long_streams_are_chunked_one_delta_each() {
    let mut input = String::from(INIT);
    input.push('\n');
    let mut want = String::new();
    for i in 0..20_000 {
        let t = format!("w{i} ");
        want.push_str(&t);
        input.push_str(&format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{t}"}}]}},"session_id":"s1","timestamp_ms":{i}}}"#
        ));
        input.push('\n');
    }
    input.push_str(&RESULT.replace("\"hi\"", &format!("{want:?}")));
    input.push('\n');
    let run = cstream(&["--to", "openai-sse"], input.as_bytes());
    let out = run.out();
    assert_eq!(out.matches("\"delta\":{\"content\"").count(), 20_000);
    assert_eq!(read_sse(&out, "reasoning_content", "long")[0].content, want);
}

/// The `created` derived from timestamps (and every other derived value)
/// is the same when the stream is read back from `--to events`. The run
/// start is pinned so sessions without timestamps compare too.
#[test]
fn derived_values_survive_the_events_round_trip() {
    let conv = |from: Option<Dialect>, format: Format, calls: bool, input: &[u8]| {
        let mut cfg = Config::new(format).run_start(99).include_usage(true);
        if let Some(d) = from {
            cfg = cfg.from(d);
        }
        if calls {
            cfg = cfg.tool_calls(ToolCallMode::Calls);
        }
        let mut out = Vec::new();
        convert(input, &mut out, &cfg).unwrap();
        String::from_utf8(out).unwrap()
    };
    let mut n = 0;
    for path in fixtures() {
        if !fixture_args(&path).is_empty() {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        let ev = conv(None, Format::Events, false, &input);
        for (format, calls) in [(Format::OpenAiSse, false), (Format::OpenAiJson, true)] {
            let direct = conv(None, format, calls, &input);
            let via = conv(Some(Dialect::Events), format, calls, ev.as_bytes());
            assert_eq!(via, direct, "{format:?} {}", path.display());
            n += 1;
        }
    }
    assert!(n > 0);
}
