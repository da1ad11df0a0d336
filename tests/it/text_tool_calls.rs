//! cursor-agent: tool calls a model wrote as text (`[TOOL_CALL]name[ARGS]{…}`,
//! docs/dialects.md#cursor-agent) become calls and never reach the answer's
//! text, whole or split across deltas, streamed or only recapped.

use serde_json::{Value, json};

use crate::common::{cstream, cstream_file, events, fixtures_dir};

const WHOLE_AND_SPLIT: &str = "cursor/v2026-08_text-tool-call-markers_whole-and-split.jsonl";
const NO_PARTIAL: &str = "cursor/v2026-08_text-tool-call-markers_no-partial.jsonl";
const REPEATS_FRAME: &str = "cursor/v2026-08_text-tool-call-marker_repeats-frame_malformed.jsonl";

const ANSWER: &str = "Let me search first. Then read it. Both are requested.";

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

fn run_events(rel: &str) -> Vec<Value> {
    let run = cstream_file(&["--to", "events"], &fixtures_dir().join(rel));
    assert_eq!(run.code, 0, "{}", run.stderr);
    events(&run.out())
}

fn text(evs: &[Value]) -> String {
    evs.iter()
        .filter(|e| ty(e) == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

/// (call id, tool, args) of every start, and the ids of every completion.
fn calls(evs: &[Value]) -> (Vec<(String, String, Value)>, Vec<String>) {
    let s = evs
        .iter()
        .filter(|e| ty(e) == "tool_call_started")
        .map(|e| {
            (
                e["callId"].as_str().unwrap().to_owned(),
                e["toolName"].as_str().unwrap().to_owned(),
                e["args"].clone(),
            )
        })
        .collect();
    let c = evs
        .iter()
        .filter(|e| ty(e) == "tool_call_completed")
        .map(|e| e["callId"].as_str().unwrap().to_owned())
        .collect();
    (s, c)
}

fn two_text_calls() -> Vec<(String, String, Value)> {
    vec![
        (
            "text-call-1".into(),
            "grep".into(),
            json!({"pattern": "fn main", "path": "src"}),
        ),
        (
            "text-call-2".into(),
            "read".into(),
            json!({"path": "src/main.rs"}),
        ),
    ]
}

#[test]
fn markers_whole_and_split_become_calls_and_leave_the_text() {
    for rel in [WHOLE_AND_SPLIT, NO_PARTIAL] {
        let evs = run_events(rel);
        assert_eq!(text(&evs), ANSWER, "{rel}");
        let (started, completed) = calls(&evs);
        assert_eq!(started, two_text_calls(), "{rel}");
        assert_eq!(completed, ["text-call-1", "text-call-2"], "{rel}");
        // Nobody here ran them: the outcome and the time are unknown, not 0.
        for c in evs.iter().filter(|e| ty(e) == "tool_call_completed") {
            assert_eq!(c["outcomeUnknown"], true, "{rel}");
            assert!(c.get("durationMs").is_none_or(Value::is_null), "{rel}: {c}");
        }
        // Each call sits where the model wrote it: between the two stretches of text.
        let order: Vec<&str> = evs
            .iter()
            .filter(|e| matches!(ty(e), "text_delta" | "tool_call_started"))
            .map(ty)
            .collect();
        let first_call = order
            .iter()
            .position(|t| *t == "tool_call_started")
            .unwrap();
        assert!(first_call > 0 && order[first_call - 1] == "text_delta");
        assert!(!evs.iter().any(|e| ty(e) == "error"), "{rel}: no notice");
        let result = evs.iter().find(|e| ty(e) == "result").unwrap();
        assert_eq!(result["text"], ANSWER, "{rel}");
    }
}

/// The message of the fixture, cut into deltas at `cuts`, then recapped
/// and ended by a result, as cursor-agent writes it with partial output.
fn stream_cut_at(message: &str, cuts: &[usize]) -> String {
    let sid = "3f0a6c1e-2b7d-4e58-9c14-8a5e2d7b0f63";
    let mut lines = vec![
        json!({"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":sid,"model":"Auto","permissionMode":"default"}),
        json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"Where is main?"}]},"session_id":sid}),
    ];
    let mut from = 0;
    for (i, &to) in cuts.iter().chain([message.len()].iter()).enumerate() {
        lines.push(json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":&message[from..to]}]},"session_id":sid,"timestamp_ms":1_787_000_000_000_i64 + i as i64}));
        from = to;
    }
    lines.push(json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":message}]},"session_id":sid,"model_call_id":"m-0","timestamp_ms":1_787_000_001_000_i64}));
    lines.push(json!({"type":"result","subtype":"success","duration_ms":10,"is_error":false,"result":message,"session_id":sid}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_marker_split_anywhere_gives_the_same_text_and_calls() {
    let message = concat!(
        "Let me search first.",
        r#"[TOOL_CALL]grep[ARGS]{"pattern":"fn main","path":"src"}"#,
        " Then read it.",
        r#"[TOOL_CALL]read_file[ARGS]{"path":"src/main.rs"}"#,
        " Both are requested."
    );
    let cuts: Vec<usize> = (1..message.len()).collect();
    for &a in &cuts {
        for b in [a + 3, a + 17].into_iter().filter(|&b| b < message.len()) {
            let input = stream_cut_at(message, &[a, b]);
            let run = cstream(&["--from", "cursor", "--to", "events"], input.as_bytes());
            let evs = events(&run.out());
            assert_eq!(text(&evs), ANSWER, "cut at {a}, {b}");
            let (started, completed) = calls(&evs);
            assert_eq!(started, two_text_calls(), "cut at {a}, {b}");
            assert_eq!(completed.len(), 2, "cut at {a}, {b}");
        }
    }
}

#[test]
fn a_marker_that_repeats_a_frame_is_a_notice_and_a_malformed_one_stays_text() {
    let evs = run_events(REPEATS_FRAME);
    let (started, completed) = calls(&evs);
    // The structural call only, once.
    assert_eq!(started.len(), 1);
    assert_eq!(started[0].0, "toolu_01Xq7rT2mN8bV4cL6pD9sE3w");
    assert_eq!(completed, ["toolu_01Xq7rT2mN8bV4cL6pD9sE3w"]);
    let notices: Vec<&str> = evs
        .iter()
        .filter(|e| ty(e) == "error")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices[0].contains("toolu_01Xq7rT2mN8bV4cL6pD9sE3w"));
    assert!(notices[1].contains("not valid JSON"));
    assert!(
        evs.iter()
            .filter(|e| ty(e) == "error")
            .all(|e| e["fatal"] == false)
    );
    assert_eq!(
        text(&evs),
        r#"Searching.Found it in src/main.rs.[TOOL_CALL]read_file[ARGS]{"path":"src/main.rs",}"#
    );
}

#[test]
fn chat_formats_carry_no_marker_in_their_content() {
    for rel in [WHOLE_AND_SPLIT, NO_PARTIAL] {
        let run = cstream_file(&["--to", "openai-sse"], &fixtures_dir().join(rel));
        let mut content = String::new();
        let mut stops = 0;
        for l in run.out().lines() {
            let Some(d) = l.strip_prefix("data: ").filter(|d| *d != "[DONE]") else {
                continue;
            };
            let v: Value = serde_json::from_str(d).unwrap();
            let c = &v["choices"][0];
            content.push_str(c["delta"]["content"].as_str().unwrap_or(""));
            stops += usize::from(c["finish_reason"].is_string());
        }
        assert!(!content.contains("[TOOL_CALL]"), "{rel}: {content}");
        assert!(content.contains("Then read it."), "{rel}: {content}");
        assert_eq!(stops, 1, "{rel}");
    }
}
