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
