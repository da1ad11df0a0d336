//! A `--from` that names the wrong dialect says so (issue 31 #8): one
//! warning per input, naming the file, the forced dialect and the one its
//! first records show, as soon as they show it.

use crate::common::{cstream, cstream_file, fixture_dialect, fixtures};

/// The fixtures whose first records no detection rule claims: read as
/// cursor-agent for want of a dialect, so no `--from` can be told wrong.
fn undetectable(stderr: &str) -> bool {
    stderr.contains("could not tell which agent wrote this input")
}

/// Fixtures without one complete JSON record: nothing in them to detect.
const NO_RECORD: &[&str] = &[
    "cursor/empty.jsonl",
    "cursor/only-T-line.jsonl",
    "cursor/plain-text-error-line.jsonl",
    // A chat document cut short: its one record never ends.
    "gemini-chat/cut-short_inside-a-message.json",
];

#[test]
fn every_fixture_forced_to_another_dialect_warns_and_to_its_own_does_not() {
    let dialects: Vec<&str> = cstream::Dialect::ALL
        .into_iter()
        .map(|d| d.name())
        .collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for f in fixtures() {
        let Some(own) = fixture_dialect(&f) else {
            continue;
        };
        let name = f.display().to_string();
        let auto = cstream_file(&["--to", "events"], &f);
        if undetectable(&auto.stderr) || NO_RECORD.iter().any(|n| name.ends_with(n)) {
            continue;
        }
        for forced in &dialects {
            let run = cstream_file(&["--to", "events", "--from", forced], &f);
            let warned = format!(
                "cstream: warning: {name}: read as {forced} (--from) but its first records look like {own};"
            );
            let fine = if forced == &own {
                !run.stderr.contains("(--from) but its first records")
            } else {
                run.stderr.matches(&warned).count() == 1
            };
            if !fine {
                wrong.push(format!("{name} --from {forced}: {}", run.stderr));
            }
            checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // Most fixtures are detected: the loop above did look at them.
    assert!(checked > 1000, "only {checked} runs checked");
}

/// The count of records a forced dialect does not know names the reader
/// (it used to say "not events events" with `--from events`).
#[test]
fn records_unknown_to_a_forced_reader_are_counted_in_words_that_read() {
    let lines = "{\"foo\":1}\n{\"foo\":2}\n{\"foo\":3}\n";
    let run = cstream(&["--from", "codex"], lines.as_bytes());
    assert!(
        run.stderr
            .contains("3 of its 3 records are unknown to the codex reader (--from codex)"),
        "{}",
        run.stderr
    );
    // No record showed another dialect, so nothing says one did.
    assert!(!run.stderr.contains("look like"), "{}", run.stderr);
}
