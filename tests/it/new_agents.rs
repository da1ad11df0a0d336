//! Today's agents (issue 27): each new reader checked against an
//! independent reading of the raw file.

use crate::common;

use std::collections::{HashMap, HashSet};

use common::{cstream_file, events, fixtures_dir};
use serde_json::Value;

/// Pi: the path from the root to the last entry, read here from the raw
/// lines; its texts and tool calls must be what the events show, every call
/// paired once, and the usage the sum over every entry of the file.
#[test]
fn pi_tree_path_texts_calls_and_usage() {
    let path = fixtures_dir().join("pi/tree-branches_compaction_tools_v3.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id: HashMap<&str, &Value> = lines
        .iter()
        .filter_map(|l| Some((l["id"].as_str()?, l)))
        .collect();
    let leaf = lines.last().unwrap();
    let mut on_path = HashSet::new();
    let mut at = Some(leaf);
    while let Some(e) = at {
        on_path.insert(e["id"].as_str().unwrap());
        at = e["parentId"].as_str().and_then(|p| by_id.get(p).copied());
    }
    let (mut texts, mut calls, mut input, mut output) = (String::new(), Vec::new(), 0, 0);
    let mut left_out = 0;
    for l in lines.iter().skip(1) {
        let usage = l["message"]["usage"].as_object().or(l["usage"].as_object());
        if let Some(u) = usage {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            input += n("input") + n("cacheRead") + n("cacheWrite");
            output += n("output");
        }
        if !on_path.contains(l["id"].as_str().unwrap()) {
            left_out += 1;
            continue;
        }
        if l["message"]["role"] == "assistant" {
            for b in l["message"]["content"].as_array().unwrap() {
                match b["type"].as_str().unwrap() {
                    "text" => texts.push_str(b["text"].as_str().unwrap()),
                    "toolCall" => calls.push(b["id"].as_str().unwrap().to_owned()),
                    _ => {}
                }
            }
        }
    }
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "pi");
    let text: String = evs
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, texts);
    let ids = |t: &str| -> Vec<String> {
        evs.iter()
            .filter(|e| e["type"] == t)
            .map(|e| e["callId"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids("tool_call_started"), calls);
    let mut done = ids("tool_call_completed");
    done.sort();
    let mut want = calls.clone();
    want.sort();
    assert_eq!(done, want, "every call completed once");
    let result = evs.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], input);
    assert_eq!(result["usage"]["outputTokens"], output);
    assert_eq!(left_out, 4);
    assert!(evs.iter().any(
        |e| e["source"] == "branch" && e["message"].as_str().unwrap().starts_with("4 entries")
    ));
}

/// Pi: a line that is not JSON, an unknown entry type and a cut-off last
/// line each warn with file and line; nothing else is lost.
#[test]
fn pi_bad_input_names_file_and_line() {
    let path = fixtures_dir().join("pi/bad-lines_unknown-entry_aborted_cut-short_v3.jsonl");
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 1);
    let name = path.display().to_string();
    assert!(
        run.stderr.contains(&format!(
            "pi: 1 record of type \"future_checkpoint\" not understood (kept as unknown events; first at {name}:7)"
        )),
        "{}",
        run.stderr
    );
    for line in [":4:", ":10:"] {
        assert!(
            run.stderr.contains(&format!("{name}{line}")),
            "no warning at {line}: {}",
            run.stderr
        );
    }
    let evs = events(&run.out());
    assert_eq!(evs.iter().filter(|e| e["type"] == "unknown").count(), 1);
    assert_eq!(
        evs.iter().filter(|e| e["type"] == "user_message").count(),
        2
    );
    assert_eq!(
        evs.iter()
            .filter(|e| e["type"] == "tool_call_completed")
            .count(),
        2
    );
    let result = evs.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], 640);
}
