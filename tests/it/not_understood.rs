//! Drift is never silent (docs/dialects.md#drift): a record its reader does
//! not understand is kept as an `unknown` event, counted per dialect and
//! type, reported once at the end of the run on stderr, in `--stats` and in
//! `--summary`, the same with `--jobs` and `--output-dir`; `--strict` makes
//! the first one stop the run.

use std::path::{Path, PathBuf};

use crate::common::{cstream, fixtures_dir};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("drift-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A Pi session with two entries of a type its reader does not know and
/// one of another, after its last entry (lines 26, 27 and 28).
fn drifted_session(dir: &Path, name: &str) -> PathBuf {
    let base =
        std::fs::read_to_string(fixtures_dir().join("pi/tree-branches_compaction_tools_v3.jsonl"))
            .unwrap();
    let extra = [
        r#"{"type":"brand_new_thing","id":"x1","parentId":"s0000001","timestamp":"2026-09-02T09:04:12.000Z"}"#,
        r#"{"type":"v4_record","id":"x2","parentId":"x1","timestamp":"2026-09-02T09:04:13.000Z"}"#,
        r#"{"type":"brand_new_thing","id":"x3","parentId":"x2","timestamp":"2026-09-02T09:04:14.000Z"}"#,
    ];
    let path = dir.join(name);
    std::fs::write(&path, base + &extra.join("\n") + "\n").unwrap();
    path
}

fn drift_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("not understood"))
        .collect()
}

#[test]
fn each_dialect_and_type_is_reported_once_with_its_first_place() {
    let dir = scratch("once");
    let f = drifted_session(&dir, "a.jsonl");
    let r = cstream(&["--to", "events", "--stats", s(&f)], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = drift_lines(&r.stderr);
    assert_eq!(
        lines,
        [
            format!(
                "cstream: warning: pi: 2 records of type \"brand_new_thing\" not understood (kept as unknown events; first at {}:26)",
                s(&f)
            ),
            format!(
                "cstream: warning: pi: 1 record of type \"v4_record\" not understood (kept as unknown events; first at {}:27)",
                s(&f)
            ),
        ],
        "{}",
        r.stderr
    );
    // Nothing lost: each is in the output as an unknown event.
    assert_eq!(r.out().matches(r#""type":"unknown""#).count(), 3);
    assert!(r.stderr.contains(" not_understood=3 "), "{}", r.stderr);
    // `-q` still says it: a format change is never silent.
    let q = cstream(&["--to", "events", "-q", s(&f)], b"");
    assert_eq!(drift_lines(&q.stderr).len(), 2, "{}", q.stderr);
}

#[test]
fn the_counts_are_the_runs_with_jobs_and_an_output_directory() {
    let dir = scratch("jobs");
    let a = drifted_session(&dir, "a.jsonl");
    let _b = drifted_session(&dir, "b.jsonl");
    let want = format!(
        "cstream: warning: pi: 4 records of type \"brand_new_thing\" not understood (kept as unknown events; first at {}:26)",
        s(&a)
    );
    for jobs in ["1", "2"] {
        let r = cstream(&["--to", "text", "-j", jobs, "--stats", s(&dir)], b"");
        let lines = drift_lines(&r.stderr);
        assert_eq!(lines.len(), 2, "-j {jobs}: {}", r.stderr);
        assert_eq!(lines[0], want, "-j {jobs}");
        assert!(r.stderr.contains(" not_understood=6 "), "{}", r.stderr);
    }
    let out = scratch("jobs-out");
    let r = cstream(
        &[
            "--to",
            "markdown",
            "--stats",
            "--output-dir",
            s(&out),
            s(&dir),
        ],
        b"",
    );
    let lines = drift_lines(&r.stderr);
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert_eq!(lines[0], want);
    assert!(r.stderr.contains(" not_understood=6 "), "{}", r.stderr);
}

#[test]
fn the_summary_lists_them() {
    let dir = scratch("summary");
    let f = drifted_session(&dir, "a.jsonl");
    let summary = dir.join("summary.md");
    let r = cstream(&["--to", "events", "--summary", s(&summary), s(&f)], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("**Not understood**"), "{md}");
    assert!(
        md.contains("- pi: 2 records of type `brand_new_thing`"),
        "{md}"
    );
    assert!(md.contains("- pi: 1 record of type `v4_record`"), "{md}");
}

#[test]
fn strict_stops_at_the_first_record_not_understood() {
    let dir = scratch("strict");
    let f = drifted_session(&dir, "a.jsonl");
    let r = cstream(&["--to", "events", "--strict", s(&f)], b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "{}:26: a record of type \"brand_new_thing\" that the pi reader does not understand; --strict stops here",
            s(&f)
        )),
        "{}",
        r.stderr
    );
    // Stopped there: the records after it were not read.
    let events = r.out();
    assert!(!events.contains("v4_record"), "{events}");
    // A file every record of which is understood passes --strict.
    let clean = fixtures_dir().join("pi/tree-branches_compaction_tools_v3.jsonl");
    let r = cstream(&["--to", "events", "--strict", s(&clean)], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(drift_lines(&r.stderr).is_empty(), "{}", r.stderr);
}

#[test]
fn cstreams_own_unknown_events_read_back_are_not_counted_again() {
    let dir = scratch("events");
    let f = drifted_session(&dir, "a.jsonl");
    let first = cstream(&["--to", "events", s(&f)], b"");
    let again = cstream(&["--to", "events", "--stats"], &first.stdout);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(drift_lines(&again.stderr).is_empty(), "{}", again.stderr);
    assert!(
        !again.stderr.contains("not_understood="),
        "{}",
        again.stderr
    );
    assert_eq!(again.out().matches(r#""type":"unknown""#).count(), 3);
}

/// A file read with nothing of a conversation in it says so: a session
/// whose prompts have no answer read (here the answer is in a shape the
/// reader does not know), or one with neither; a session whose error
/// explains it does not.
#[test]
fn a_session_with_no_answer_read_is_said_to_be_one() {
    let prompt = r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"7f3e2a10-0000-4000-8000-0000000000aa","version":"2.9.0","type":"user","message":{"role":"user","content":"List the TODOs."},"uuid":"b0000000-0000-4000-8000-000000000001","timestamp":"2026-11-15T09:00:00.000Z"}"#;
    let answer = r#"{"parentUuid":"b0000000-0000-4000-8000-000000000001","isSidechain":false,"userType":"external","cwd":"/w","sessionId":"7f3e2a10-0000-4000-8000-0000000000aa","version":"2.9.0","type":"assistant_turn","turn":{"text":"Two TODOs."},"uuid":"b0000000-0000-4000-8000-000000000002","timestamp":"2026-11-15T09:00:02.000Z"}"#;
    let r = cstream(
        &["--to", "events"],
        format!("{prompt}\n{answer}\n").as_bytes(),
    );
    assert!(
        r.stderr.contains(
            "-:2: session 7f3e2a10-0000-4000-8000-0000000000aa: 1 prompt but no answer read"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("claude-project: 1 record of type \"assistant_turn\" not understood"),
        "{}",
        r.stderr
    );
    // Neither a prompt nor an answer.
    let init = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","apiKeySource":"login"}"#;
    let result =
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":""}"#;
    let r = cstream(
        &["--to", "events"],
        format!("{init}\n{result}\n").as_bytes(),
    );
    assert!(
        r.stderr
            .contains("-:2: session s1: no prompt and no answer read"),
        "{}",
        r.stderr
    );
    // An error says why there is no answer: nothing more to say.
    let failed = r#"{"type":"result","subtype":"error","is_error":true,"session_id":"s1","result":"auth failed"}"#;
    let r = cstream(
        &["--to", "events"],
        format!("{init}\n{failed}\n").as_bytes(),
    );
    assert!(!r.stderr.contains("no answer read"), "{}", r.stderr);
    // Nothing read at all (an empty input) is not a session read wrongly.
    let r = cstream(&["--to", "events"], b"");
    assert!(!r.stderr.contains("no answer read"), "{}", r.stderr);
}
