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
            let mut want = vec![
                format!("c.{ext}"),
                format!("projects/p1/s1.{ext}"),
                format!("sessions/2025/01/02/rollout-a.{ext}"),
            ];
            if to.name() == "html" {
                // The pages' index (html_directory_gets_an_index_of_its_pages).
                want.insert(1, "index.html".to_owned());
            }
            assert_eq!(tree(&out), want, "{}", to.name());
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

/// `--to html --output-dir`: besides a page per input, `index.html` links
/// every page (each link leads to a file there), in input order, with its
/// outcome; names from the input are escaped in the text and encoded in
/// the link. An input whose page would be `index.html` keeps that name and
/// the index is left out, with a message.
#[test]
fn html_directory_gets_an_index_of_its_pages() {
    let src = scratch("html-index-src");
    let hostile = src.join("a <b> & \"c\" #1.jsonl");
    std::fs::copy(fixtures_dir().join("cursor/error-result.jsonl"), &hostile).unwrap();
    std::fs::create_dir_all(src.join("sub")).unwrap();
    std::fs::copy(fixtures_dir().join(CLAUDE), src.join("sub/claude.jsonl")).unwrap();
    let out = scratch("html-index-out");
    let run = cstream(&["--to", "html", "--output-dir", s(&out), s(&src)], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        tree(&out),
        ["a <b> & \"c\" #1.html", "index.html", "sub/claude.html"]
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.starts_with("<!DOCTYPE html>"), "{index}");
    assert!(
        index.contains("2 pages, 2 sessions, 1 failed or unfinished."),
        "{index}"
    );
    let hrefs: Vec<&str> = index
        .split("href=\"")
        .skip(1)
        .map(|h| &h[..h.find('"').unwrap()])
        .collect();
    assert_eq!(
        hrefs,
        ["a%20%3Cb%3E%20%26%20%22c%22%20%231.html", "sub/claude.html"]
    );
    for h in &hrefs {
        let mut bytes = Vec::new();
        let mut it = h.bytes();
        while let Some(b) = it.next() {
            if b == b'%' {
                let hex: String = [it.next().unwrap(), it.next().unwrap()]
                    .iter()
                    .map(|&c| c as char)
                    .collect();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap());
            } else {
                bytes.push(b);
            }
        }
        assert!(
            out.join(String::from_utf8(bytes).unwrap()).is_file(),
            "{h} leads nowhere"
        );
    }
    assert!(
        index.contains("a &lt;b&gt; &amp; &quot;c&quot; #1.jsonl</a>"),
        "{index}"
    );
    assert!(!index.contains("<b>"), "markup from a file name: {index}");
    let failed = index
        .find("✗ 1 failed, 0 unfinished")
        .expect("the failed page's outcome");
    let ok = index
        .find("✓ completed")
        .expect("the completed page's outcome");
    assert!(failed < ok, "not in input order: {index}");

    // Other formats get no index.
    let md = scratch("html-index-md");
    let run = cstream(&["--to", "markdown", "--output-dir", s(&md), s(&src)], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!md.join("index.html").exists() && !md.join("index.md").exists());

    // A page of that name wins; the index steps aside and says so.
    std::fs::copy(fixtures_dir().join(CLAUDE), src.join("index.jsonl")).unwrap();
    let out = scratch("html-index-taken");
    let run = cstream(&["--to", "html", "--output-dir", s(&out), s(&src)], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("index.html: a page has that name"),
        "{}",
        run.stderr
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        page.contains("<section class=\"session\""),
        "the page was replaced"
    );
}
