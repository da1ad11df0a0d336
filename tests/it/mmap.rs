//! Mapped input (src/input/mapped.rs): a regular file framed where it lies
//! in a mapping gives the output, diagnostics and exit status the read
//! paths give (`--no-mmap`: a file read whole, or a buffer at a time past
//! 4 MiB and from standard input), byte for byte, by name, as standard
//! input (`< file`), and walked.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{Run, command, cstream, fixtures};

/// Files are mapped from this size on (`MIN_MAPPED_BYTES`).
const MAPPED_FROM: usize = 64 * 1024;

/// Run the binary with `file` as standard input.
fn with_stdin_file(args: &[&str], file: &Path) -> Run {
    let out = command()
        .args(args)
        .stdin(Stdio::from(std::fs::File::open(file).unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Run {
        stdout: out.stdout,
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: u8::try_from(out.status.code().unwrap()).unwrap(),
    }
}

#[track_caller]
fn same(a: &Run, b: &Run, what: &str) {
    assert_eq!(a.code, b.code, "{what}: exit status");
    assert_eq!(a.stderr, b.stderr, "{what}: stderr");
    assert!(a.stdout == b.stdout, "{what}: stdout differs");
}

/// `file` named, mapped and not, to `--to events` and `--to usage`: the
/// same output.
#[track_caller]
fn named_mapped_as_read(file: &Path, what: &str) {
    let name = file.to_str().unwrap();
    for to in ["events", "usage"] {
        let mapped = cstream(&["--to", to, name], b"");
        let read = cstream(&["--no-mmap", "--to", to, name], b"");
        same(&mapped, &read, &format!("{what} --to {to}"));
    }
}

/// `data` repeated until it is large enough to be mapped, and then past
/// the ends of the first reads (64 KiB, then 128 KiB steps).
fn grown(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < 3 * MAPPED_FROM + 12_345 {
        out.extend_from_slice(data);
        if data.is_empty() {
            break;
        }
    }
    out
}

/// Every fixture, and every file of the shared corpus, grown past the
/// mapping threshold: the same output mapped and read.
#[test]
fn mapped_files_convert_as_read_files() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    assert!(corpus.is_dir(), "{} is missing", corpus.display());
    let mut files: Vec<PathBuf> = fixtures();
    let mut stack = vec![corpus];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let tmp = std::env::temp_dir().join(format!("cstream-mmap-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (i, src) in files.iter().enumerate() {
        let data = std::fs::read(src).unwrap();
        let ext = src.extension().and_then(|e| e.to_str()).unwrap_or("jsonl");
        let big = tmp.join(format!("{i}.{ext}"));
        std::fs::write(&big, grown(&data)).unwrap();
        let what = src.display().to_string();
        named_mapped_as_read(&big, &what);
        let mapped = with_stdin_file(&["--to", "events"], &big);
        let read = with_stdin_file(&["--no-mmap", "--to", "events"], &big);
        same(&mapped, &read, &format!("{what} < file"));
        std::fs::remove_file(&big).unwrap();
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Standard input named twice: the second `-` finds it read to its end,
/// mapped or not.
#[test]
fn stdin_named_twice_is_read_once() {
    let tmp = std::env::temp_dir().join(format!("cstream-mmap-twice-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let src =
        crate::common::fixtures_dir().join("claude/multi-turn_repeated-init_rate-limit.jsonl");
    let big = tmp.join("in.jsonl");
    std::fs::write(&big, grown(&std::fs::read(&src).unwrap())).unwrap();
    let mapped = with_stdin_file(&["--to", "events", "-", "-"], &big);
    let read = with_stdin_file(&["--no-mmap", "--to", "events", "-", "-"], &big);
    same(&mapped, &read, "- -");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A walked directory (files sniffed by their first block, one byte past
/// it) with large and small sessions and a file that is no session, with
/// one job and two: the same output mapped and read.
#[test]
fn walked_files_mapped_as_read() {
    let tmp = std::env::temp_dir().join(format!("cstream-mmap-walk-{}", std::process::id()));
    let dir = tmp.join("projects/p");
    std::fs::create_dir_all(&dir).unwrap();
    let claude: Vec<PathBuf> = fixtures()
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("claude")))
        .take(6)
        .collect();
    assert!(!claude.is_empty());
    for (i, src) in claude.iter().enumerate() {
        let data = std::fs::read(src).unwrap();
        let body = if i % 2 == 0 { grown(&data) } else { data };
        std::fs::write(dir.join(format!("s{i}.jsonl")), body).unwrap();
    }
    // Exactly one full first block, and not a session.
    std::fs::write(dir.join("notes.jsonl"), vec![b'x'; MAPPED_FROM]).unwrap();
    let root = tmp.to_str().unwrap();
    for jobs in ["1", "2"] {
        for to in ["events", "usage"] {
            let mapped = cstream(&["-j", jobs, "--to", to, root], b"");
            let read = cstream(&["--no-mmap", "-j", jobs, "--to", to, root], b"");
            same(&mapped, &read, &format!("-j {jobs} --to {to}"));
        }
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Files are read whole below this size, and a buffer at a time from it
/// (`WHOLE_READ_BYTES`).
const WHOLE_READ: usize = 4 * 1024 * 1024;

/// Named and not mapped, a file below [`WHOLE_READ`] is read whole (the
/// tests above); one past it is read a buffer at a time, and the mapped
/// file must agree with that too.
#[test]
fn files_past_the_whole_read_size_read_as_mapped() {
    let tmp = std::env::temp_dir().join(format!("cstream-mmap-large-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut picked = Vec::new();
    for agent in ["claude", "claude-project", "codex-rollout", "cursor", "pi"] {
        let files: Vec<PathBuf> = fixtures()
            .into_iter()
            .filter(|p| p.parent().is_some_and(|d| d.ends_with(agent)))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .take(2)
            .collect();
        assert!(!files.is_empty(), "no {agent} fixture");
        picked.extend(files);
    }
    for (i, src) in picked.iter().enumerate() {
        let data = std::fs::read(src).unwrap();
        let mut body = Vec::new();
        while body.len() <= WHOLE_READ {
            body.extend_from_slice(&data);
        }
        let big = tmp.join(format!("{i}.jsonl"));
        std::fs::write(&big, body).unwrap();
        let what = src.display().to_string();
        named_mapped_as_read(&big, &what);
        std::fs::remove_file(&big).unwrap();
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}
