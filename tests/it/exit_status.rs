//! `-e/--exit-status` (docs/ARCHITECTURE.md#exit-status) on every fixture,
//! in every format and for every dialect: exit 3 exactly when a session reported failure (an
//! error result, a fatal error) or ended without a result (an input with no
//! events counts as one), judged independently from the `--to events`
//! output; 2 still wins over 3, and 3 over 1; the format never changes the
//! status.

use crate::common;

use common::{FORMATS, Run, fixtures, run_fixture};
use serde_json::Value;

/// What the events say about the sessions: (any failed, any incomplete).
fn outcome(events_out: &str) -> (bool, bool) {
    let mut sessions: Vec<Vec<Value>> = Vec::new();
    for line in events_out.lines() {
        let e: Value = serde_json::from_str(line).expect("events are JSON");
        if e["type"] == "session_started" || sessions.is_empty() {
            sessions.push(Vec::new());
        }
        sessions.last_mut().unwrap().push(e);
    }
    if sessions.is_empty() {
        // No events at all: a session that ended without a result.
        return (false, true);
    }
    let failed = sessions.iter().any(|s| {
        s.iter().any(|e| {
            (e["type"] == "result" && e["ok"] == false)
                || (e["type"] == "error" && e["fatal"] == true)
        })
    });
    let incomplete = sessions
        .iter()
        .any(|s| !s.iter().any(|e| e["type"] == "result"));
    (failed, incomplete)
}

#[test]
fn exit_3_exactly_when_a_session_failed_or_did_not_finish() {
    let mut threes = 0;
    let mut checked = 0;
    for path in fixtures() {
        let name = path.display().to_string();
        let plain = run_fixture(&path, &["--to", "events"]);
        let (failed, incomplete) = outcome(&plain.out());
        let base = plain.code;
        assert!(base <= 2, "{name}: exit {base} without -e");
        let want_e = if base == 2 {
            2
        } else if failed || incomplete {
            3
        } else {
            base
        };
        threes += usize::from(want_e == 3);
        for (row, args) in FORMATS {
            let without = run_fixture(&path, args);
            assert_eq!(
                without.code, base,
                "{name} {row}: the format changed the status"
            );
            let mut a = args.to_vec();
            a.push("-e");
            let with: Run = run_fixture(&path, &a);
            assert_eq!(
                with.code, want_e,
                "{name} {row} -e (failed {failed}, incomplete {incomplete})"
            );
            checked += 1;
        }
    }
    // The fixtures cover both answers.
    assert!(
        threes > 5 && checked > threes * FORMATS.len(),
        "{threes} of {checked}"
    );
}

/// The same judgement for each dialect's fixtures read with an explicit
/// `--from` (detection must not matter).
#[test]
fn exit_status_does_not_depend_on_detection() {
    for path in fixtures() {
        let Some(dialect) = common::fixture_dialect(&path) else {
            continue;
        };
        let auto = run_fixture(&path, &["--to", "events", "-e"]);
        let explicit = run_fixture(&path, &["--to", "events", "-e", "--from", dialect]);
        assert_eq!(auto.code, explicit.code, "{}", path.display());
    }
}

/// Invariant: a warning about a line names that line, whether the dialect
/// was detected (records that do not tell it are kept until one does, and
/// read then) or given with `--from` (each record read as it comes).
#[test]
fn warnings_name_the_same_lines_with_or_without_detection() {
    let mut compared = 0;
    for path in fixtures() {
        let Some(dialect) = common::fixture_dialect(&path) else {
            continue;
        };
        let prefix = format!("cstream: warning: {}:", path.display());
        // The warnings that name a line, less the one only detection gives.
        let numbered = |stderr: &str| -> Vec<String> {
            stderr
                .lines()
                .filter(|l| {
                    l.strip_prefix(&prefix)
                        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                        && !l.contains("could not tell which agent")
                })
                .map(str::to_owned)
                .collect()
        };
        let auto = run_fixture(&path, &["--to", "events"]);
        let explicit = run_fixture(&path, &["--to", "events", "--from", dialect]);
        let (a, e) = (numbered(&auto.stderr), numbered(&explicit.stderr));
        assert_eq!(a, e, "{}", path.display());
        compared += usize::from(!a.is_empty());
    }
    assert!(compared > 5, "only {compared} fixtures have warnings");
}

/// Invariant: with `-e`, each session that failed or ended without a result
/// is named on stderr once (up to the cap of 20), counted as `--stats`
/// counts them; without `-e` none is.
#[test]
fn e_names_each_failed_or_incomplete_session() {
    let is_ending = |l: &&str| {
        l.contains(": session ") && (l.contains(" failed") || l.contains(" ended without a result"))
    };
    let mut named = 0;
    for path in fixtures() {
        let name = path.display().to_string();
        let run = run_fixture(&path, &["--to", "events", "-e", "--stats"]);
        let stats = run
            .stderr
            .lines()
            .find(|l| l.starts_with("cstream: stats: "))
            .unwrap();
        let count = |key: &str| -> usize {
            stats
                .split(' ')
                .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let bad = count("failed") + count("incomplete");
        let lines: Vec<&str> = run.stderr.lines().filter(is_ending).collect();
        assert_eq!(lines.len(), bad.min(20), "{name}: {}", run.stderr);
        // Each names a session of the output (when there is one).
        for l in &lines {
            let id = l
                .split(": session ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            assert!(
                run.out().is_empty() || run.out().contains(&format!("\"sessionId\":\"{id}\"")),
                "{name}: {l}"
            );
        }
        named += lines.len();
        let without = run_fixture(&path, &["--to", "events"]);
        assert_eq!(
            without.stderr.lines().filter(is_ending).count(),
            0,
            "{name}"
        );
    }
    assert!(named > 5, "{named}");
}

/// Lines that are not JSON before an input's stream begins (an agent's own
/// notices, printed before the stream when stdout and stderr are captured
/// together) are warned about but do not make the exit status 1, unless
/// `--strict`; without a stream after them they are bad input as before.
/// Checked for every fixture: its status with the notices prepended is its
/// status without them, and every notice is still warned about and kept.
#[test]
fn notice_lines_before_the_stream_only_warn() {
    const NOTICES: &str = "Loaded cached credentials.\n(node:1) Warning: something\n";
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for path in fixtures() {
        let original = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let with = dir.join(format!("notices-{name}"));
        let mut bytes = NOTICES.as_bytes().to_vec();
        // A byte-order mark belongs at the start of the file, before the notices.
        bytes.extend_from_slice(original.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&original));
        std::fs::write(&with, &bytes).unwrap();
        let before = run_fixture(&path, &["--to", "events"]);
        // A binary input stays binary with notices in front: skipped unread.
        if before.stderr.contains("; skipping this input") {
            continue;
        }
        let after = run_fixture(&with, &["--to", "events"]);
        // A fixture with no record at all has no stream for the notices to precede.
        let has_record = before.out().lines().any(|l| {
            !l.contains(r#""source":"stdout""#) && !l.starts_with(r#"{"type":"session_started""#)
        });
        let want = if has_record || before.code == 1 {
            before.code
        } else {
            1
        };
        assert_eq!(after.code, want, "{}\n{}", path.display(), after.stderr);
        assert_eq!(
            after.stderr.matches("not JSON").count(),
            before.stderr.matches("not JSON").count() + 2,
            "{}",
            after.stderr
        );
        assert_eq!(
            after.out().matches(r#""source":"stdout""#).count(),
            before.out().matches(r#""source":"stdout""#).count() + 2
        );
        let strict = run_fixture(&with, &["--to", "events", "--strict"]);
        assert_eq!(strict.code, 1, "{}", path.display());
    }
    let gemini = common::fixtures_dir().join("gemini/notice-lines-before-stream.jsonl");
    let r = run_fixture(&gemini, &["--to", "text"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr.matches("not JSON").count(), 3);
    assert_eq!(r.out().matches("● ").count(), 1, "one session: {}", r.out());
}
