//! Antigravity CLI (`agy`): the live stream's usage and calls against agy's
//! own totals, and the saved transcript read as the file says it
//! (docs/dialects.md, the Antigravity sections).

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{cstream, cstream_file, events, fixtures_dir};

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

/// (input with the cache, output) summed over the `usage_delta` events.
fn usage_sums(evs: &[Value]) -> (u64, u64) {
    evs.iter()
        .filter(|e| ty(e) == "usage_delta")
        .fold((0, 0), |(i, o), e| {
            (
                i + e["deltaInput"].as_u64().unwrap_or(0),
                o + e["deltaOutput"].as_u64().unwrap_or(0),
            )
        })
}

#[test]
fn live_usage_adds_up_to_agys_result_with_its_cache_reads_added_back() {
    let path =
        fixtures_dir().join("antigravity/tools_parallel_error_subagent_context_v1.2.15.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    // agy's own totals: its input leaves the cache reads out.
    let result: Value = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "result")
        .expect("a result line");
    let u = &result["result"]["usage"];
    let input = u["input_tokens"].as_u64().unwrap() + u["cache_read_tokens"].as_u64().unwrap();
    let output = u["output_tokens"].as_u64().unwrap();
    let run = cstream_file(&["--to", "events"], &path);
    let evs = events(&run.out());
    assert_eq!(usage_sums(&evs), (input, output));
    let end = evs.iter().find(|e| ty(e) == "result").expect("a result");
    assert_eq!(end["ok"], true);
    assert_eq!(end["usage"]["inputTokens"].as_u64(), Some(input));
    assert_eq!(end["usage"]["cacheReadTokens"].as_u64(), Some(31488));
    // Every call started and completed once, by its step index.
    let started: Vec<&Value> = evs
        .iter()
        .filter(|e| ty(e) == "tool_call_started")
        .collect();
    let completed: Vec<&Value> = evs
        .iter()
        .filter(|e| ty(e) == "tool_call_completed")
        .collect();
    assert!(!started.is_empty());
    assert_eq!(started.len(), completed.len());
    for s in &started {
        let n = completed
            .iter()
            .filter(|c| c["callId"] == s["callId"])
            .count();
        assert_eq!(n, 1, "{s}");
    }
}

fn transcript() -> PathBuf {
    fixtures_dir().join("antigravity-transcript/tools_running-command_checkpoint_v1.2.15.jsonl")
}

#[test]
fn a_saved_transcript_is_read_as_the_file_says() {
    // Where agy keeps it: the session id is the brain directory's name.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("agy-brain/brain/3f1c2b7e-5d4a-4c3b-9e2f-1a0b9c8d7e6f/.system_generated/logs");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("transcript.jsonl");
    std::fs::copy(transcript(), &file).unwrap();
    let run = cstream_file(&["--to", "events"], &file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "antigravity-transcript");
    assert_eq!(evs[0]["sessionId"], "3f1c2b7e-5d4a-4c3b-9e2f-1a0b9c8d7e6f");
    // The prompts without agy's wrapping.
    let prompts: Vec<&str> = evs
        .iter()
        .filter(|e| ty(e) == "user_message")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        ["Why does the build fail?", "Start the dev server."]
    );
    // The call answered by the next step, and the backgrounded one whose
    // outcome the file does not have.
    let ends: Vec<&Value> = evs
        .iter()
        .filter(|e| ty(e) == "tool_call_completed")
        .collect();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["ok"], true);
    assert!(ends[0]["output"].as_str().unwrap().contains("E0425"));
    assert_eq!(ends[1]["outcomeUnknown"], true, "{}", ends[1]);
    // Usage: each model step's, its cache reads added to its input.
    let raw = std::fs::read_to_string(transcript()).unwrap();
    let (mut input, mut output) = (0, 0);
    for v in raw
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        input +=
            v["input_tokens"].as_u64().unwrap_or(0) + v["cache_read_tokens"].as_u64().unwrap_or(0);
        output += v["output_tokens"].as_u64().unwrap_or(0);
    }
    assert_eq!(usage_sums(&evs), (input, output));
    let end = evs.iter().find(|e| ty(e) == "result").unwrap();
    assert_eq!(end["usage"]["inputTokens"].as_u64(), Some(input));
    // The step type it does not know: kept, and said once at its line.
    assert_eq!(evs.iter().filter(|e| ty(e) == "unknown").count(), 1);
    assert!(
        run.stderr.contains(&format!(
            "antigravity-transcript: 1 record of type \"FUTURE_STEP\" not understood (kept as unknown events; first at {}:10)",
            file.display()
        )),
        "{}",
        run.stderr
    );
    // Detected without --from, from standard input too.
    let piped = cstream(&["--to", "events"], raw.as_bytes());
    assert!(
        piped
            .out()
            .contains(r#""dialect":"antigravity-transcript""#)
    );
}

const THREE_TURNS: &str = "antigravity/three-turns-one-process_stream-json-input_v1.2.15.jsonl";
const CUT_IN_THIRD: &str = "antigravity/three-turns_cut-in-third_v1.2.15.jsonl";

/// agy's per-turn figures, (input with the cache, output): what each
/// `result`'s running totals add to the previous one's.
fn agy_turns(raw: &str) -> Vec<(u64, u64)> {
    let mut prev = (0, 0);
    raw.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "result")
        .map(|v| {
            let u = &v["result"]["usage"];
            let now = (
                u["input_tokens"].as_u64().unwrap() + u["cache_read_tokens"].as_u64().unwrap(),
                u["output_tokens"].as_u64().unwrap(),
            );
            let turn = (now.0 - prev.0, now.1 - prev.1);
            prev = now;
            turn
        })
        .collect()
}

#[test]
fn several_turns_in_one_process_are_one_session_with_one_result() {
    let path = fixtures_dir().join(THREE_TURNS);
    let raw = std::fs::read_to_string(&path).unwrap();
    let want = agy_turns(&raw);
    assert_eq!(want.len(), 3);
    let evs = events(&cstream_file(&["--to", "events"], &path).out());
    assert_eq!(evs.iter().filter(|e| ty(e) == "session_started").count(), 1);
    // Each per-turn result ends its turn with what that turn used.
    let ended: Vec<(u64, u64)> = evs
        .iter()
        .filter(|e| ty(e) == "turn_ended")
        .map(|e| {
            let u = &e["usage"];
            (
                u["inputTokens"].as_u64().unwrap(),
                u["outputTokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ended, want);
    // One result, last, with the totals: the sum of the turns, and of the
    // usage_deltas.
    let results: Vec<&Value> = evs.iter().filter(|e| ty(e) == "result").collect();
    assert_eq!(results.len(), 1);
    assert_eq!(ty(evs.last().unwrap()), "result");
    let total = want.iter().fold((0, 0), |a, t| (a.0 + t.0, a.1 + t.1));
    assert_eq!(usage_sums(&evs), total);
    let u = &results[0]["usage"];
    assert_eq!(
        (
            u["inputTokens"].as_u64().unwrap(),
            u["outputTokens"].as_u64().unwrap()
        ),
        total
    );
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[0]["durationMs"], 14000);
    // No result before the last turn's: a chat client sees one answer end.
    let first_result = evs.iter().position(|e| ty(e) == "result").unwrap();
    let last_prompt = evs.iter().rposition(|e| ty(e) == "user_message").unwrap();
    assert!(first_result > last_prompt);
}

#[test]
fn summary_and_outputs_count_the_turns_and_chat_formats_end_once() {
    let path = fixtures_dir().join(THREE_TURNS);
    let dir = std::env::temp_dir().join(format!("cstream-agy-turns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (summary, outputs) = (dir.join("summary.md"), dir.join("outputs.txt"));
    let run = cstream_file(
        &[
            "--to",
            "openai-sse",
            "--include-usage",
            "--summary",
            summary.to_str().unwrap(),
            "--outputs",
            outputs.to_str().unwrap(),
        ],
        &path,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let outputs = std::fs::read_to_string(&outputs).unwrap();
    for want in [
        "turns=3",
        "sessions=1",
        "outcome=success",
        "tokens_in=70716",
        "tokens_out=232",
    ] {
        assert!(outputs.lines().any(|l| l == want), "{want} in {outputs}");
    }
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("**Totals:** 3 turns"), "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
    // openai-sse: one stop, one usage chunk with the total, one [DONE].
    let out = run.out();
    let chunks: Vec<Value> = out
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let stops = chunks
        .iter()
        .filter(|c| c["choices"][0]["finish_reason"].is_string())
        .count();
    assert_eq!(stops, 1);
    let usage: Vec<&Value> = chunks.iter().filter(|c| c["usage"].is_object()).collect();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["usage"]["prompt_tokens"], 70716);
    assert_eq!(usage[0]["usage"]["completion_tokens"], 232);
    assert_eq!(out.matches("data: [DONE]").count(), 1);
    // anthropic-sse too: one message_stop.
    let a = cstream_file(&["--to", "anthropic-sse"], &path).out();
    assert_eq!(a.matches("event: message_stop").count(), 1);
}

#[test]
fn a_process_that_ends_mid_turn_is_incomplete_without_a_result() {
    let path = fixtures_dir().join(CUT_IN_THIRD);
    let run = cstream_file(&["--to", "events"], &path);
    let evs = events(&run.out());
    assert!(!evs.iter().any(|e| ty(e) == "result"));
    // The two turns that ended keep their usage.
    assert_eq!(evs.iter().filter(|e| ty(e) == "turn_ended").count(), 2);
    let outputs = std::env::temp_dir().join(format!("cstream-agy-cut-{}.txt", std::process::id()));
    cstream_file(
        &["--to", "events", "--outputs", outputs.to_str().unwrap()],
        &path,
    );
    let o = std::fs::read_to_string(&outputs).unwrap();
    std::fs::remove_file(&outputs).unwrap();
    assert!(o.lines().any(|l| l == "outcome=incomplete"), "{o}");
    assert!(o.lines().any(|l| l == "turns=3"), "{o}");
}
