//! A directory walk names the files it skips (issue 31 #6): one line per
//! reason at the end, the first names and how many more, with `-q` too
//! (as the drift report); a file that is one agent line cut short is read
//! and warned about, not skipped.

use std::path::{Path, PathBuf};

use crate::common::{cstream, fixtures_dir};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sk-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// An assistant line of cursor-agent's, killed before it ended (no session
/// id in what was written).
const CUT: &str =
    r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hel"#;

/// A tree with one session, six junk files and a cut agent line.
fn tree(name: &str) -> PathBuf {
    let d = scratch(name);
    std::fs::copy(fixtures_dir().join("cursor/basic.jsonl"), d.join("s.jsonl")).unwrap();
    std::fs::write(d.join("a.txt"), "notes\n").unwrap();
    std::fs::write(d.join("b.json"), "{\n  \"name\": \"x\"\n}\n").unwrap();
    std::fs::write(d.join("c.jsonl"), b"").unwrap();
    std::fs::write(d.join("d.jsonl"), b"{\"a\":\x00}\n").unwrap();
    std::fs::write(d.join("e.jsonl"), "# not json\n").unwrap();
    std::fs::write(d.join("f.ndjson"), "{\"x\":1}\n").unwrap();
    std::fs::write(d.join("cut.jsonl"), CUT).unwrap();
    d
}

fn skipped_line(d: &Path) -> String {
    let names = ["a.txt", "b.json", "c.jsonl", "d.jsonl", "e.jsonl"];
    let shown: Vec<String> = names.iter().map(|n| s(&d.join(n)).to_owned()).collect();
    format!(
        "cstream: warning: 6 files skipped: not agent output: {}, …and 1 more\n",
        shown.join(", ")
    )
}

#[test]
fn a_walk_names_the_files_it_skips_in_one_line() {
    let d = tree("walk");
    let out = scratch("walk-out");
    let cut = s(&d.join("cut.jsonl")).to_owned();
    for args in [
        vec!["--to", "events"],
        vec!["--to", "events", "-q"],
        vec!["--to", "events", "--jobs", "2"],
        vec!["--to", "markdown", "--output-dir", s(&out)],
    ] {
        let mut all = args.clone();
        all.push(s(&d));
        let run = cstream(&all, b"");
        let line = skipped_line(&d);
        assert_eq!(
            run.stderr.matches(&line).count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
        // Said once, however many threads read the files.
        assert!(
            run.stderr.matches("files skipped").count() == 1,
            "{args:?}: {}",
            run.stderr
        );
        // The cut line is read: the run says where its file ends.
        if !args.contains(&"-q") {
            assert!(
                run.stderr.contains(&format!("{cut}:1:")),
                "{args:?}: {}",
                run.stderr
            );
        }
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
    }
}

/// Named files are no walk: a file that is not a session is read (and
/// warned about) as it is, and no line says files were skipped.
#[test]
fn named_files_are_never_said_to_be_skipped() {
    let d = tree("named");
    let run = cstream(&[s(&d.join("b.json")), s(&d.join("s.jsonl"))], b"");
    assert!(!run.stderr.contains("files skipped"), "{}", run.stderr);
}

/// The outputs Claude Code saved beside a transcript
/// (`<session>/tool-results/*.txt`) are read with it: a walk of a projects
/// tree neither skips nor names them; the same files with no transcript
/// beside their folder are not agent output, and said so.
#[test]
fn saved_outputs_beside_a_transcript_are_part_of_it() {
    let src = fixtures_dir().join("claude-project");
    let d = scratch("offload");
    std::fs::copy(
        src.join("offload_tool-results-dir.jsonl"),
        d.join("offload_tool-results-dir.jsonl"),
    )
    .unwrap();
    let outputs = d.join("offload_tool-results-dir/tool-results");
    std::fs::create_dir_all(&outputs).unwrap();
    let stray = d.join("no-transcript/tool-results");
    std::fs::create_dir_all(&stray).unwrap();
    for f in std::fs::read_dir(src.join("offload_tool-results-dir/tool-results")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, outputs.join(f.file_name().unwrap())).unwrap();
        std::fs::copy(&f, stray.join(f.file_name().unwrap())).unwrap();
    }
    let run = cstream(&["--to", "events", "--stats", s(&d)], b"");
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("skipped: not agent output"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        line.starts_with("cstream: warning: 2 files skipped"),
        "{line}"
    );
    assert!(line.contains("no-transcript"), "{line}");
    assert!(!line.contains("offload_tool-results-dir/"), "{line}");
    // The transcript still reads its saved outputs from there.
    let saved = std::fs::read_to_string(outputs.join("b7k2m9q4x.txt")).unwrap();
    let first = saved.lines().next().unwrap();
    let shown = serde_json::to_string(first).unwrap();
    assert!(run.out().contains(shown.trim_matches('"')), "{first}");
}
