//! The reasoning part of the output tokens (docs/events.md#usage): where an
//! agent counts it apart, every output that shows usage carries the same
//! figure (`--to usage`, `--to rows`, `--outputs`, the events' `result`);
//! where it does not, the figure is unknown (`null`, empty), never 0.

use serde_json::Value;

use crate::common::{cstream, cstream_file, fixtures_dir};

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The session's reasoning count as each output shows it: `--to usage`,
/// the sum of `--to rows`' `reasoning` (unknown when no row knows it), the
/// `result`'s `reasoningTokens` in `--to events`, `--outputs`, and the
/// root span's `gen_ai.usage.reasoning.output_tokens` in `--to otlp-json`.
fn shown(rel: &str) -> [Option<u64>; 5] {
    let f = fixtures_dir().join(rel);
    let usage = json_lines(&cstream_file(&["--to", "usage"], &f).out());
    assert_eq!(usage.len(), 1, "{rel}: one session");
    let from_usage = usage[0]["tokens_reasoning"].as_u64();
    assert!(
        from_usage.is_some() || usage[0]["tokens_reasoning"].is_null(),
        "{rel}: {}",
        usage[0]
    );

    let rows = json_lines(&cstream_file(&["--to", "rows"], &f).out());
    let from_rows = rows
        .iter()
        .filter_map(|r| r["reasoning"].as_u64())
        .fold(None, |a: Option<u64>, n| Some(a.unwrap_or(0) + n));

    let events = json_lines(&cstream_file(&["--to", "events"], &f).out());
    let result = events
        .iter()
        .rfind(|e| e["type"] == "result")
        .unwrap_or_else(|| panic!("{rel}: a result"));
    let from_events = result["usage"]["reasoningTokens"].as_u64();

    let dir = std::env::temp_dir().join(format!(
        "cstream-reasoning-{}-{}",
        std::process::id(),
        rel.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let o = dir.join("outputs");
    cstream(
        &["--outputs", o.to_str().unwrap(), f.to_str().unwrap()],
        b"",
    )
    .out();
    let text = std::fs::read_to_string(&o).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("tokens_reasoning="))
        .unwrap_or_else(|| panic!("{rel}: tokens_reasoning in {text}"));
    let from_outputs = (!line.is_empty()).then(|| line.parse().unwrap());

    let otlp = json_lines(&cstream_file(&["--to", "otlp-json"], &f).out());
    assert_eq!(otlp.len(), 1, "{rel}: one trace request");
    let spans = otlp[0]["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap_or_else(|| panic!("{rel}: spans"));
    let root = spans
        .iter()
        .find(|s| s["parentSpanId"].as_str().is_none_or(str::is_empty))
        .unwrap_or_else(|| panic!("{rel}: a root span"));
    let from_otlp = root["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "gen_ai.usage.reasoning.output_tokens")
        .map(|a| {
            a["value"]["intValue"]
                .as_str()
                .unwrap_or_else(|| panic!("{rel}: an int value: {a}"))
                .parse()
                .unwrap()
        });

    [from_usage, from_rows, from_events, from_outputs, from_otlp]
}

#[track_caller]
fn check(rel: &str, want: Option<u64>) {
    assert_eq!(
        shown(rel),
        [want; 5],
        "{rel}: usage, rows, events, --outputs, otlp-json"
    );
}

#[test]
fn codex_reasoning_output_tokens_are_carried() {
    // `exec --json`: the turn's `turn.completed.usage`.
    check("codex/exec.jsonl", Some(128));
    // A rollout's `token_count` running total.
    check(
        "codex-rollout/content-item-kinds_typed-vs-injected_0.150.jsonl",
        Some(64),
    );
}

#[test]
fn gemini_thoughts_are_carried_inside_the_output() {
    let f = "gemini-chat/one-line_whole-chat.json";
    check(f, Some(20));
    // The thoughts are added to the candidates: 30 + 20 + 40 + 0.
    let usage = json_lines(&cstream_file(&["--to", "usage"], &fixtures_dir().join(f)).out());
    assert_eq!(usage[0]["tokens_out"].as_u64(), Some(90));
}

#[test]
fn opencode_reasoning_is_carried() {
    check(
        "opencode/run-json_tools_reasoning_done_src-00f9806c.jsonl",
        Some(15),
    );
}

#[test]
fn cursor_sdk_reasoning_tokens_are_carried() {
    check("cursor-sdk/deltas.jsonl", Some(90));
}

#[test]
fn antigravity_thinking_tokens_are_carried() {
    check(
        "antigravity/plain-text_cache_thinking_v1.1.12.jsonl",
        Some(287),
    );
}

#[test]
fn claude_has_no_reasoning_count_and_shows_it_unknown() {
    check(
        "claude-project/grown-output-count_placeholder-only-message.jsonl",
        None,
    );
}

/// agy refused the model before sending anything: its zeros are counts
/// (nothing was used or billed), not a missing figure
/// (docs/dialects.md, Antigravity's usage).
#[test]
fn a_refused_antigravity_request_used_zero_tokens() {
    let rel = "antigravity/bad-model_no-init_v1.1.12.jsonl";
    check(rel, Some(0));
    let usage = json_lines(&cstream_file(&["--to", "usage"], &fixtures_dir().join(rel)).out());
    let r = &usage[0];
    assert_eq!(r["tokens_in"].as_u64(), Some(0), "{r}");
    assert_eq!(r["tokens_out"].as_u64(), Some(0), "{r}");
    assert_eq!(r["tokens_complete"], true, "{r}");
    // No model is named, so there is nothing to price it with.
    assert!(r["cost_usd"].is_null(), "{r}");
}
