//! How a run names its inputs to a reader: the HTML index of
//! `--to html --output-dir` and the `--summary` table name each file as the
//! user named it, under the directory argument it was found in (a file
//! argument by its name, standard input `-`), never by the path this
//! machine reads it from. Where the index is laid out in a real browser
//! (long names wrap, the outcome stays on screen) is
//! scripts/check-html.mjs's part.

use std::path::{Path, PathBuf};

use crate::common;

use common::{cstream, fixtures_dir};

/// A fresh scratch directory, under an absolute path, for one test.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("names-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A tree of two sessions, one of them two directories down and failed,
/// and a file outside it named on its own.
fn tree(name: &str) -> (PathBuf, PathBuf) {
    let src = scratch(name);
    let deep = src.join("projects/-home-runner-work-repo");
    std::fs::create_dir_all(&deep).unwrap();
    let f = fixtures_dir();
    std::fs::copy(
        f.join("claude-project/two-messages-one-turn_2.1.214.jsonl"),
        src.join("first.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        f.join("cursor/error-result.jsonl"),
        deep.join("failed.jsonl"),
    )
    .unwrap();
    let alone = scratch(&format!("{name}-alone")).join("alone.jsonl");
    std::fs::copy(f.join("codex/exec.jsonl"), &alone).unwrap();
    (src, alone)
}

/// The text of each link of the index, in order.
fn link_texts(index: &str) -> Vec<&str> {
    index
        .split("<a href=\"")
        .skip(1)
        .map(|h| {
            let h = &h[h.find("\">").unwrap() + 2..];
            &h[..h.find("</a>").unwrap()]
        })
        .collect()
}

#[test]
fn the_index_names_pages_under_the_directory_argument() {
    let (src, alone) = tree("index-src");
    let out = scratch("index-out");
    let run = cstream(
        &["--to", "html", "--output-dir", s(&out), s(&src), s(&alone)],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        link_texts(&index),
        [
            "first.jsonl",
            "projects/-home-runner-work-repo/failed.jsonl",
            "alone.jsonl"
        ],
        "{index}"
    );
    // Neither the directory argument nor the lone file's directory shows.
    assert!(!index.contains(s(&src)), "{index}");
    assert!(!index.contains(s(alone.parent().unwrap())), "{index}");
    // Every link is relative to the index, so the folder can be moved.
    for href in index.split("href=\"").skip(1) {
        let href = &href[..href.find('"').unwrap()];
        assert!(!href.starts_with('/') && !href.contains(':'), "{href}");
        assert!(out.join(href).is_file(), "{href} leads nowhere");
    }
    // Long names wrap in their cell instead of widening the table.
    assert!(index.contains("<table class=\"index\">"), "{index}");
    assert!(
        index.contains("table.index td:first-child{overflow-wrap:anywhere"),
        "{index}"
    );
}

/// The summary of a run: `--summary` into `dir`, with `args` and `stdin`.
fn summary(dir: &Path, args: &[&str], stdin: &[u8]) -> String {
    let file = dir.join("summary.md");
    // The summary is appended to its file: one run's alone.
    let _ = std::fs::remove_file(&file);
    let mut all = vec!["--summary", s(&file), "--to", "events"];
    all.extend_from_slice(args);
    cstream(&all, stdin);
    std::fs::read_to_string(&file).unwrap()
}

/// The `file` column of each row of the summary's table.
fn file_column(summary: &str) -> Vec<String> {
    let mut lines = summary.lines();
    let head: Vec<&str> = lines
        .find(|l| l.starts_with("| session |"))
        .expect("the table")
        .split(" | ")
        .collect();
    let col = head
        .iter()
        .position(|h| *h == "file")
        .expect("a file column");
    lines
        .skip(1)
        .take_while(|l| l.starts_with("| "))
        .map(|l| l.split(" | ").nth(col).unwrap().to_owned())
        .collect()
}

#[test]
fn the_summary_names_each_sessions_file() {
    let (src, alone) = tree("summary-src");
    let dir = scratch("summary-out");
    let stdin = std::fs::read(fixtures_dir().join("cursor/basic.jsonl")).unwrap();
    let text = summary(&dir, &[s(&src), s(&alone), "-"], &stdin);
    assert_eq!(
        file_column(&text),
        [
            "`first.jsonl`",
            "`projects/-home-runner-work-repo/failed.jsonl`",
            "`alone.jsonl`",
            "`-`"
        ],
        "{text}"
    );
    assert!(!text.contains(s(&src)), "{text}");
    // The same with the files read by several threads.
    let jobs = summary(&dir, &["--jobs", "3", s(&src), s(&alone), "-"], &stdin);
    assert_eq!(jobs, text);
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!("summary_file_column", text);
    });
}

/// Standard input alone, and a file named with its directories: `-`, and
/// the file's name.
#[test]
fn the_summary_names_stdin_and_file_arguments() {
    let dir = scratch("summary-args");
    let stdin = std::fs::read(fixtures_dir().join("cursor/basic.jsonl")).unwrap();
    assert_eq!(file_column(&summary(&dir, &[], &stdin)), ["`-`"]);
    let file = fixtures_dir().join("codex/exec.jsonl");
    assert_eq!(
        file_column(&summary(&dir, &[s(&file)], b"")),
        ["`exec.jsonl`"]
    );
}
