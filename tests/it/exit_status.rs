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
        let dialect = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap();
        if !matches!(
            dialect,
            "cursor" | "claude" | "codex" | "gemini" | "acp" | "cursor-sdk" | "events"
        ) {
            continue;
        }
        let auto = run_fixture(&path, &["--to", "events", "-e"]);
        let explicit = run_fixture(&path, &["--to", "events", "-e", "--from", dialect]);
        assert_eq!(auto.code, explicit.code, "{}", path.display());
    }
}
