//! Regression tests for problems found in review, named after what they pin.

use crate::common;

use common::{cstream, events};

/// Two inputs without init events that carry the same session id are two
/// sessions, and stay two when their events are read back.
#[test]
fn init_less_sessions_with_one_id_stay_apart_through_events() {
    let dir = std::env::temp_dir().join(format!("cstream-reg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = |t: &str| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{t}\"}}]}},\"session_id\":\"X\"}}\n\
             {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"{t}\",\"session_id\":\"X\"}}\n"
        )
    };
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, line("one")).unwrap();
    std::fs::write(&b, line("two")).unwrap();
    let files = [a.to_str().unwrap(), b.to_str().unwrap()];
    for fmt in [["--to", "events"], ["--to", "text"]] {
        let direct = cstream(&[&fmt[..], &files[..]].concat(), b"");
        let ev = cstream(&[&["--to", "events"][..], &files[..]].concat(), b"");
        let via = cstream(&[&fmt[..], &["--from", "events"][..]].concat(), &ev.stdout);
        assert_eq!(via.out(), direct.out(), "{fmt:?}");
    }
    let ev = cstream(&[&["--to", "events"][..], &files[..]].concat(), b"");
    let starts = events(&ev.out())
        .iter()
        .filter(|e| e["type"] == "session_started")
        .count();
    assert_eq!(
        starts, 2,
        "each init-less session begins with session_started"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A second start for a call that is still open is passed on as progress, so
/// the call keeps exactly one start and one completion.
#[test]
fn repeated_start_becomes_progress() {
    let input = br#"{"type":"system","subtype":"init","session_id":"s","model":"m","cwd":"/"}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"}}},"session_id":"s"}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a","limit":5}}},"session_id":"s"}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"},"result":{"success":{}}}},"session_id":"s"}
"#;
    let out = cstream(&["--to", "events"], input).out();
    let types: Vec<String> = events(&out)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "session_started",
            "tool_call_started",
            "tool_call_progress",
            "tool_call_completed"
        ]
    );
    assert!(out.contains(r#""partial":{"path":"a","limit":5}"#), "{out}");
}

/// A warning about an item held for an init names the line the item came
/// from: the repeated start on line 3, not the init on line 5 that
/// released it (issue 26 #13).
#[test]
fn a_held_items_warning_names_its_own_line() {
    let f = crate::common::fixtures_dir()
        .join("cursor/repeated-call-before-init_warning-names-the-repeat.jsonl");
    let run = crate::common::cstream_file(&["--to", "events"], &f);
    assert!(
        run.stderr
            .contains("repeated-call-before-init_warning-names-the-repeat.jsonl:3: start of call"),
        "{}",
        run.stderr
    );
}
