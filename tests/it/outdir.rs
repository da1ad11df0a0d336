//! `--output-dir`: one output per input file, named after it, each one
//! complete or absent.

use std::path::{Path, PathBuf};

use crate::common::{cstream, fixtures_dir};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("outdir-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

const CLAUDE: &str = "claude-project/rewind_parallel-results_placeholder-usage.jsonl";
const CODEX: &str = "codex-rollout/rollout_events-and-history-once_token-totals_compacted.jsonl";
const CURSOR: &str = "cursor/two-sessions-partial.jsonl";

fn archive(name: &str) -> PathBuf {
    let d = scratch(name).join("in");
    for (from, to) in [
        (CLAUDE, "projects/p1/s1.jsonl"),
        (CODEX, "sessions/2025/01/02/rollout-a.jsonl"),
        (CURSOR, "c.jsonl"),
    ] {
        let to = d.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixtures_dir().join(from), to).unwrap();
    }
    d
}

/// Each input's output is what converting it alone writes, under its path
/// in the tree with the format's extension; no temporary file is left; and
/// the number of jobs changes nothing.
#[test]
fn one_output_per_input_named_after_it() {
    let input = archive("tree");
    for to in cstream::Format::ALL {
        for jobs in ["1", "3"] {
            let out = input
                .parent()
                .unwrap()
                .join(format!("out-{}-{jobs}", to.name()));
            let r = cstream(
                &[
                    "--to",
                    to.name(),
                    "--created",
                    "1",
                    "-j",
                    jobs,
                    "--output-dir",
                    s(&out),
                    s(&input),
                ],
                b"",
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(r.stdout.is_empty());
            let ext = to.extension();
            assert_eq!(
                tree(&out),
                [
                    format!("c.{ext}"),
                    format!("projects/p1/s1.{ext}"),
                    format!("sessions/2025/01/02/rollout-a.{ext}"),
                ],
                "{}",
                to.name()
            );
            for (name, rel) in [
                ("c", "c.jsonl"),
                ("projects/p1/s1", "projects/p1/s1.jsonl"),
                (
                    "sessions/2025/01/02/rollout-a",
                    "sessions/2025/01/02/rollout-a.jsonl",
                ),
            ] {
                let alone = cstream(
                    &["--to", to.name(), "--created", "1", s(&input.join(rel))],
                    b"",
                );
                let written = std::fs::read(out.join(format!("{name}.{ext}"))).unwrap();
                assert!(written == alone.stdout, "{} {name}", to.name());
            }
        }
    }
}

/// A file that cannot be read leaves no output and no temporary file (an
/// error, exit 2); one with bad lines is converted whole (exit 1); after
/// `--strict` stops the run, the later files have no output.
#[cfg(unix)]
#[test]
fn failing_inputs_leave_no_output_or_a_whole_one() {
    let input = archive("bad");
    std::os::unix::fs::symlink(input.join("nowhere.jsonl"), input.join("b-dangling.jsonl"))
        .unwrap();
    let mut cut = std::fs::read(fixtures_dir().join(CURSOR)).unwrap();
    cut.extend_from_slice(b"{\"type\":\"assistant\",\"mess\n");
    std::fs::write(input.join("a-cut.jsonl"), &cut).unwrap();
    let out = input.parent().unwrap().join("out");
    let r = cstream(&["--to", "events", "--output-dir", s(&out), s(&input)], b"");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("b-dangling.jsonl"), "{}", r.stderr);
    assert_eq!(
        tree(&out),
        [
            "a-cut.ndjson",
            "c.ndjson",
            "projects/p1/s1.ndjson",
            "sessions/2025/01/02/rollout-a.ndjson"
        ]
    );
    let whole = cstream(&["--to", "events", s(&input.join("a-cut.jsonl"))], b"");
    assert_eq!(
        std::fs::read(out.join("a-cut.ndjson")).unwrap(),
        whole.stdout
    );
    std::fs::remove_file(input.join("b-dangling.jsonl")).unwrap();
    let out = input.parent().unwrap().join("out-strict");
    for jobs in ["1", "4"] {
        let _ = std::fs::remove_dir_all(&out);
        let r = cstream(
            &[
                "--to",
                "events",
                "--strict",
                "-j",
                jobs,
                "--output-dir",
                s(&out),
                s(&input),
            ],
            b"",
        );
        assert_eq!(r.code, 1, "{}", r.stderr);
        // a-cut.jsonl comes first and stops the run.
        assert_eq!(tree(&out), ["a-cut.ndjson"], "-j {jobs}");
    }
}

/// Two inputs that would have one output name: the second is skipped with
/// an error, the first written.
#[test]
fn two_inputs_one_name() {
    let d = scratch("same-name");
    let a = fixtures_dir().join("cursor/basic.jsonl");
    let b = fixtures_dir().join("acp/updates-only.jsonl");
    std::fs::create_dir_all(d.join("x")).unwrap();
    let b2 = d.join("x/basic.jsonl");
    std::fs::copy(b, &b2).unwrap();
    let out = d.join("out");
    let r = cstream(&["--output-dir", s(&out), s(&a), s(&b2)], b"");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is also the output of"), "{}", r.stderr);
    assert_eq!(tree(&out), ["basic.txt"]);
    let alone = cstream(&[s(&a)], b"");
    assert_eq!(std::fs::read(out.join("basic.txt")).unwrap(), alone.stdout);
}
