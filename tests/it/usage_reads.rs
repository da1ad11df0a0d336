//! `--to usage` reads only what the figures are made of (`Sink::reads`:
//! the Claude readers and the Codex rollout reader skip texts, tool
//! arguments and results with the string scanner). Its rows must be the
//! ones a whole read gives: every fixture and corpus file is converted both
//! ways and the rows compared byte for byte, and so are the `--stats`
//! counts (the events of each kind, the sessions that failed or are
//! incomplete): the same events, whatever was left unread. The whole read is forced by `--outputs`, whose summary
//! stage lists failed calls by their text and so asks for whole records
//! (`transform::forwarding` checks that it does).

use std::path::Path;

use crate::common::{self, corpus, cstream, fixture_args, fixtures};

/// The `--stats` line of a run's stderr, less its time.
fn stats(err: &str) -> String {
    let line = err
        .lines()
        .find(|l| l.starts_with("cstream: stats:"))
        .expect("a --stats line");
    line.split(' ')
        .filter(|w| !w.starts_with("elapsed="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The usage rows of `args` and the run's event counts, read for the
/// figures only and read whole.
fn both(name: &str, args: &[&str]) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("cstream-usage-reads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outputs = dir.join(format!("{}.outputs", name.replace(['/', '.'], "_")));
    let lean = cstream(&[&["--to", "usage", "--stats"], args].concat(), b"");
    let whole_args = [
        &[
            "--to",
            "usage",
            "--stats",
            "--outputs",
            outputs.to_str().unwrap(),
        ],
        args,
    ]
    .concat();
    let whole = cstream(&whole_args, b"");
    let _ = std::fs::remove_file(&outputs);
    let counted = |r: &common::Run| format!("{}\n{}", stats(&r.stderr), r.out());
    (counted(&lean), counted(&whole))
}

fn same(name: &str, args: &[&str]) -> usize {
    let (lean, whole) = both(name, args);
    assert_eq!(
        lean, whole,
        "{name}: rows read for the figures vs read whole"
    );
    // The first line is the counts.
    lean.lines().count() - 1
}

#[test]
fn every_fixture_gives_the_same_rows_read_for_the_figures() {
    let mut rows = 0;
    for f in fixtures() {
        let mut args = fixture_args(&f);
        args.push(f.to_str().unwrap().to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        rows += same(&f.display().to_string(), &args);
    }
    assert!(rows > 50, "only {rows} rows from the fixtures");
}

#[test]
fn the_fixture_trees_give_the_same_rows_with_two_jobs() {
    let root = common::fixtures_dir();
    for d in ["claude-project", "claude", "codex-rollout"] {
        let dir = root.join(d);
        let n = same(d, &["-j", "2", dir.to_str().unwrap()]);
        assert!(n > 3, "{d}: {n} rows");
    }
}

#[test]
fn every_corpus_file_gives_the_same_rows_read_for_the_figures() {
    let mut files = common::live_corpus();
    for d in ["sessions/claude-code", "sessions/codex"] {
        files.extend(corpus(d));
    }
    for f in &files {
        same(&f.display().to_string(), &[f.to_str().unwrap()]);
    }
    // The saved Claude Code transcripts are what the figures-only read is for.
    let claude = files
        .iter()
        .filter(|f| {
            f.parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "claude-code")
        })
        .count();
    assert!(
        files.is_empty() || claude >= 5,
        "{claude} Claude Code transcripts"
    );
    // So are the Codex rollouts.
    let codex = files
        .iter()
        .filter(|f| {
            f.parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == "codex")
        })
        .count();
    assert!(files.is_empty() || codex >= 3, "{codex} Codex rollouts");
}
