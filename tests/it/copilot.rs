//! GitHub Copilot CLI (`--from copilot`): each fixture checked against an
//! independent reading of its raw lines: the main agent's text once, every
//! call started and completed once, sub-agents kept apart, and usage that is
//! the agent's own shutdown totals (unknown, never 0, without them).

use crate::common;

use std::collections::HashSet;

use common::{cstream, cstream_file, events, fixtures_dir};
use serde_json::Value;

fn raw_lines(name: &str) -> Vec<Value> {
    let raw = std::fs::read_to_string(fixtures_dir().join("copilot").join(name)).unwrap();
    raw.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn run_events(name: &str) -> Vec<Value> {
    let run = cstream_file(
        &["--to", "events"],
        &fixtures_dir().join("copilot").join(name),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    events(&run.out())
}

fn of_type<'a>(evs: &'a [Value], t: &str) -> Vec<&'a Value> {
    evs.iter().filter(|e| e["type"] == t).collect()
}

fn text_of(evs: &[Value]) -> String {
    of_type(evs, "text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

/// The main agent's lines: no `agentId`, no `parentToolCallId`.
fn main_agent(l: &Value) -> bool {
    l.get("agentId").is_none() && l["data"].get("parentToolCallId").is_none()
}

/// Token counts of every model of a shutdown's `modelMetrics`.
fn metrics(l: &Value) -> (u64, u64, u64) {
    let mut t = (0, 0, 0);
    for m in l["data"]["modelMetrics"].as_object().unwrap().values() {
        let u = &m["usage"];
        t.0 += u["inputTokens"].as_u64().unwrap();
        t.1 += u["outputTokens"].as_u64().unwrap();
        t.2 += u["cacheReadTokens"].as_u64().unwrap();
    }
    t
}

fn usage_sum(evs: &[Value]) -> (u64, u64, u64) {
    let mut t = (0, 0, 0);
    for e in of_type(evs, "usage_delta") {
        t.0 += e["deltaInput"].as_u64().unwrap();
        t.1 += e["deltaOutput"].as_u64().unwrap();
        t.2 += e["deltaCacheRead"].as_u64().unwrap_or(0);
    }
    t
}

/// Every call started once and completed once, and the started ones are
/// the input's `tool.execution_start` lines (sub-agents' included).
fn calls_paired(lines: &[Value], evs: &[Value]) {
    let want: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "tool.execution_start")
        .map(|l| l["data"]["toolCallId"].as_str().unwrap())
        .collect();
    let started: Vec<&str> = of_type(evs, "tool_call_started")
        .iter()
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(started, want);
    let done: Vec<&str> = of_type(evs, "tool_call_completed")
        .iter()
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(done.len(), want.len(), "{done:?}");
    let done: HashSet<&str> = done.into_iter().collect();
    assert_eq!(
        done,
        want.into_iter().collect(),
        "every call completed once"
    );
}

#[test]
fn saved_session_texts_calls_subagent_and_segment_usage() {
    let name = "tools_subagent_resume_v1.0.88.jsonl";
    let lines = raw_lines(name);
    let evs = run_events(name);
    let start = &evs[0];
    assert_eq!(start["dialect"], "copilot");
    assert_eq!(start["sessionId"], lines[0]["data"]["sessionId"]);
    assert_eq!(start["cwd"], "/home/dev/ledger");
    // No selectedModel: the model change before the first prompt names it.
    assert_eq!(start["model"], "claude-sonnet-4.6");

    let main_text: String = lines
        .iter()
        .filter(|l| l["type"] == "assistant.message" && main_agent(l))
        .map(|l| l["data"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(text_of(&evs), main_text);
    // The sub-agent's messages are progress of the call that spawned it.
    let progress: Vec<&Value> = of_type(&evs, "tool_call_progress")
        .into_iter()
        .filter(|e| e["partial"].get("text").is_some())
        .collect();
    assert_eq!(progress.len(), 2);
    assert!(progress.iter().all(|e| e["callId"] == "toolu_task1"));
    // The sub-agent's prompt is no prompt of the session.
    assert_eq!(of_type(&evs, "user_message").len(), 3);

    calls_paired(&lines, &evs);
    let shell = of_type(&evs, "tool_call_completed")
        .into_iter()
        .find(|e| e["callId"] == "toolu_run1")
        .unwrap();
    assert_eq!(shell["exitCode"], 101);
    assert!(!shell["output"].as_str().unwrap().contains("<exited"));
    let missing = of_type(&evs, "tool_call_completed")
        .into_iter()
        .find(|e| e["callId"] == "toolu_view2")
        .unwrap();
    assert_eq!(missing["ok"], false);

    // Usage: the two segments' shutdowns, added.
    let mut want = (0, 0, 0);
    for l in lines.iter().filter(|l| l["type"] == "session.shutdown") {
        let m = metrics(l);
        want = (want.0 + m.0, want.1 + m.1, want.2 + m.2);
    }
    assert_eq!(usage_sum(&evs), want);
    let result = of_type(&evs, "result")[0];
    assert_eq!(result["ok"], true);
    assert_eq!(result["usage"]["inputTokens"], want.0);
    assert_eq!(result["usage"]["outputTokens"], want.1);
    assert_eq!(of_type(&evs, "unknown").len(), 1);
}

#[test]
fn killed_session_has_no_usage_and_no_outcome() {
    let name = "killed_no-shutdown_v1.0.88.jsonl";
    let evs = run_events(name);
    assert!(
        of_type(&evs, "usage_delta").is_empty(),
        "usage is unknown, not 0"
    );
    assert!(of_type(&evs, "result").is_empty());
    assert!(
        of_type(&evs, "error")
            .iter()
            .any(|e| e["source"] == "usage" && e["fatal"] == false)
    );
    // The running call is closed once, as cancelled.
    let done = of_type(&evs, "tool_call_completed");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["cancelled"], true);
    let run = cstream_file(&[], &fixtures_dir().join("copilot").join(name));
    let last = run.out().lines().last().unwrap().to_owned();
    assert!(last.contains("incomplete"), "{last}");
    assert!(!last.contains("tokens"), "{last}");
}

#[test]
fn live_output_text_once_usage_per_call_and_result() {
    let name = "live_deltas_partial-output_v1.0.88.jsonl";
    let lines = raw_lines(name);
    let evs = run_events(name);
    let whole: String = lines
        .iter()
        .filter(|l| l["type"] == "assistant.message")
        .map(|l| l["data"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        text_of(&evs),
        whole,
        "deltas and the whole message: text once"
    );
    let thinking: String = of_type(&evs, "thinking_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(thinking, "Count the lines with wc.");
    calls_paired(&lines, &evs);
    let shell: String = of_type(&evs, "shell_output_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(shell, "212 README.md\n", "cumulative partial output, once");
    let mut want = (0, 0, 0);
    for l in lines.iter().filter(|l| l["type"] == "assistant.usage") {
        let d = &l["data"];
        want.0 += d["inputTokens"].as_u64().unwrap();
        want.1 += d["outputTokens"].as_u64().unwrap();
        want.2 += d["cacheReadTokens"].as_u64().unwrap();
    }
    assert_eq!(usage_sum(&evs), want);
    let result = of_type(&evs, "result")[0];
    assert_eq!(result["ok"], true);
    assert_eq!(result["durationMs"], 2210);
}

#[test]
fn error_shutdown_fails_and_empty_metrics_are_unknown() {
    let name = "error-shutdown_empty-metrics_compaction_v1.0.88.jsonl";
    let evs = run_events(name);
    let result = of_type(&evs, "result")[0];
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"], "Rate limit exceeded");
    // One segment's counts are missing: no session total is claimed.
    assert!(result.get("usage").is_none());
    assert!(
        of_type(&evs, "error")
            .iter()
            .any(|e| e["source"] == "usage")
    );
    assert_eq!(usage_sum(&evs).0, 120400);
    assert_eq!(
        of_type(&evs, "summary")
            .iter()
            .filter(|e| e["phase"] == "completed")
            .count(),
        1
    );
    assert!(
        of_type(&evs, "user_event")
            .iter()
            .any(|e| e["what"] == "interrupt")
    );
}

/// A shutdown after per-call usage adds only what the calls missed: the
/// session's tokens are the shutdown's, not twice.
#[test]
fn shutdown_after_per_call_usage_is_not_counted_twice() {
    let input = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s1","version":1,"producer":"copilot-agent","copilotVersion":"1.0.88","startTime":"2026-09-01T00:00:00Z","selectedModel":"gpt-5.4","context":{"cwd":"/"}},"id":"a","timestamp":"2026-09-01T00:00:00Z","parentId":null}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"hi"},"id":"b","timestamp":"2026-09-01T00:00:01Z","parentId":"a"}"#,
        "\n",
        r#"{"type":"assistant.message","data":{"messageId":"m","content":"hello"},"id":"c","timestamp":"2026-09-01T00:00:02Z","parentId":"b"}"#,
        "\n",
        r#"{"type":"assistant.usage","data":{"model":"gpt-5.4","inputTokens":100,"outputTokens":5,"cacheReadTokens":0,"cacheWriteTokens":0},"ephemeral":true,"id":"d","timestamp":"2026-09-01T00:00:02Z","parentId":"c"}"#,
        "\n",
        r#"{"type":"session.shutdown","data":{"shutdownType":"routine","modelMetrics":{"gpt-5.4":{"requests":{"count":2},"usage":{"inputTokens":130,"outputTokens":7,"cacheReadTokens":0,"cacheWriteTokens":0}}}},"id":"e","timestamp":"2026-09-01T00:00:03Z","parentId":"d"}"#,
        "\n",
    );
    let run = cstream(&["--to", "events"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "copilot", "detected");
    assert_eq!(usage_sum(&evs), (130, 7, 0));
    let result = of_type(&evs, "result")[0];
    assert_eq!(result["usage"]["inputTokens"], 130);
}

/// Bad input: a line that is not JSON, a `data` that is no object, a
/// cut-off last line. Each is reported or kept; nothing else is lost, and
/// a `source` of `user` is still a prompt.
#[test]
fn bad_lines_are_reported_or_kept() {
    let input = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s9","version":1,"producer":"copilot-agent","copilotVersion":"1.0.88","startTime":"2026-09-01T00:00:00Z","selectedModel":"gpt-5.4","context":{"cwd":"/"}},"id":"a","timestamp":"2026-09-01T00:00:00Z","parentId":null}"#,
        "\n",
        "not json at all\n",
        r#"{"type":"assistant.message","data":5,"id":"b","timestamp":"2026-09-01T00:00:01Z","parentId":"a"}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"hi","source":"user"},"id":"c","timestamp":"2026-09-01T00:00:02Z","parentId":"b"}"#,
        "\n",
        r#"{"type":"assistant.message","data":{"messageId":"m","content":"cut"#,
    );
    let run = cstream(&["--to", "events"], input.as_bytes());
    assert_eq!(run.code, 1, "bad lines make the run's status 1");
    assert!(run.stderr.contains(":2: not JSON"), "{}", run.stderr);
    assert!(run.stderr.contains(":5: not JSON"), "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["model"], "gpt-5.4");
    assert_eq!(of_type(&evs, "unknown").len(), 1);
    assert_eq!(of_type(&evs, "user_message").len(), 1);
    assert!(of_type(&evs, "result").is_empty());
}
