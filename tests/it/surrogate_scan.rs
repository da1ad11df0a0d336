//! Lone UTF-16 surrogate escapes are found wherever they are, whichever
//! reader takes the line. The cursor fast paths spare the framer's own
//! pass looking for them (they refuse any surrogate escape while they
//! scan, `Handler::record_checked`), so this checks the outcome is what
//! that pass gives: each lone surrogate read as U+FFFD, with a warning.

use crate::common;

use common::{cstream, fixtures_dir};

/// `line` with `esc` put at the start of its `k`-th string value (a
/// string opened right after a `:`); `None` when the line has fewer.
fn inject(line: &str, k: usize, esc: &str) -> Option<String> {
    let b = line.as_bytes();
    let (mut in_str, mut escaped, mut seen) = (false, false, 0);
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if c != b'"' {
            continue;
        }
        in_str = true;
        if i > 0 && b[i - 1] == b':' {
            if seen == k {
                return Some(format!("{}{esc}{}", &line[..=i], &line[i + 1..]));
            }
            seen += 1;
        }
    }
    None
}

/// Every JSON line of `text` with `esc` injected at its `k`-th string
/// value (lines with fewer values, and lines that are no JSON, which are
/// shown as they came, unchanged), and how many lines changed.
fn inject_all(text: &str, k: usize, esc: &str) -> (String, usize) {
    let mut n = 0;
    let mut out = String::new();
    for line in text.lines() {
        let json = serde_json::from_str::<serde_json::Value>(line).is_ok();
        match inject(line, k, esc).filter(|_| json) {
            Some(l) => {
                n += 1;
                out.push_str(&l);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    (out, n)
}

const WARNING: &str = "lone UTF-16 surrogate escape replaced with U+FFFD";

/// For each of the string values `ks` of the lines of `text`: a lone low
/// half, a lone high half (upper case) and a whole pair, which is no lone
/// surrogate, injected there. `check` gets the text with the escape, the
/// same text with what it should read as (`\ufffd`, or the pair itself:
/// raw values keep it escaped, so its output is not compared with the
/// emoji's), a name for messages, and whether the escape is lone. The
/// number of lines changed.
fn each_injection(
    text: &str,
    ks: &[usize],
    name: &str,
    mut check: impl FnMut(&str, &str, &str, bool),
) -> usize {
    let mut injected = 0;
    for &k in ks {
        for (esc, same_as) in [
            (r"\udc00", r"\ufffd"),
            (r"\uD83D", r"\ufffd"),
            (r"\ud83d\ude00", r"\ud83d\ude00"),
        ] {
            let (with, n) = inject_all(text, k, esc);
            if n == 0 {
                continue;
            }
            injected += n;
            let (want, _) = inject_all(text, k, same_as);
            check(&with, &want, &format!("{name} k={k} {esc}"), same_as != esc);
        }
    }
    injected
}

/// `got` (with the escape) reads as `expected` (with what it stands for),
/// and warns exactly when the escape was lone.
fn same_but_the_warning(got: &common::Run, expected: &common::Run, name: &str, lone: bool) {
    assert_eq!(got.code, expected.code, "{name}: {}", got.stderr);
    assert_eq!(got.out(), expected.out(), "{name}");
    assert_eq!(got.stderr.contains(WARNING), lone, "{name}: {}", got.stderr);
    assert!(!expected.stderr.contains(WARNING), "{name}");
}

#[test]
fn lone_surrogates_anywhere_in_cursor_lines_read_as_replacement_characters() {
    let dir = fixtures_dir().join("cursor");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/cursor")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() > 20, "{} cursor fixtures", files.len());
    let mut injected = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.display().to_string();
        injected += each_injection(&text, &[0, 1, 2, 3, 4], &name, |with, want, name, lone| {
            let got = cstream(&["--to", "events"], with.as_bytes());
            let expected = cstream(&["--to", "events"], want.as_bytes());
            same_but_the_warning(&got, &expected, name, lone);
        });
    }
    // Deltas and tool lines (the fast paths' lines) among them.
    assert!(injected > 1000, "{injected} lines changed");
}

/// The same for Claude Code transcripts read for the figures (`--to
/// usage`), whose walk of each line also refuses any surrogate escape
/// and so spares the framer's pass: from standard input, and from a file
/// read whole (whose records are held in place).
#[test]
fn lone_surrogates_in_claude_transcripts_read_for_the_figures_are_repaired() {
    let dir = fixtures_dir().join("claude-project");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/claude-project")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} transcript fixtures", files.len());
    let tmp = std::env::temp_dir().join(format!("cstream-surrogate-claude-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let file = tmp.join("session.jsonl");
    let mut injected = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.display().to_string();
        injected += each_injection(&text, &[0, 2, 5], &name, |with, want, name, lone| {
            let [got, expected] = [with, want].map(|t| cstream(&["--to", "usage"], t.as_bytes()));
            same_but_the_warning(&got, &expected, name, lone);
            let [got, expected] = [with, want].map(|t| {
                std::fs::write(&file, t).unwrap();
                common::cstream_file(&["--to", "usage"], &file)
            });
            same_but_the_warning(&got, &expected, &format!("{name} (file)"), lone);
        });
    }
    std::fs::remove_dir_all(&tmp).unwrap();
    assert!(injected > 100, "{injected} lines changed");
}
