//! The benchmark generator (`bench/gen_stream.py`) against cstream: its streams
//! must be deterministic and must go through cstream's real conversion path
//! (nothing unknown, no warnings), or the benchmark measures the wrong thing.
//! Skipped when `python3` is not installed.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{FORMATS, cstream};

/// `gen_stream.py ARGS` output, or `None` without python3.
fn generate(args: &[&str]) -> Option<Vec<u8>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_stream.py");
    let out = match Command::new("python3").arg(script).args(args).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "gen_stream.py {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}

#[test]
fn mixed_stream_is_deterministic_and_fully_understood() {
    let Some(input) = generate(&["--mb", "1", "--seed", "7"]) else {
        return;
    };
    assert_eq!(
        Some(&input),
        generate(&["--mb", "1", "--seed", "7"]).as_ref()
    );
    assert_ne!(
        Some(&input),
        generate(&["--mb", "1", "--seed", "8"]).as_ref()
    );
    assert!(input.len() >= 1024 * 1024);

    let events = cstream(&["--to", "events"], &input);
    assert_eq!((events.code, events.stderr.as_str()), (0, ""));
    let mut types = std::collections::BTreeSet::new();
    for line in events.out().lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("events are JSON");
        types.insert(v["type"].as_str().expect("a type").to_owned());
    }
    for t in ["unknown", "error"] {
        assert!(
            !types.contains(t),
            "the generated stream produced {t} events"
        );
    }
    for t in [
        "session_started",
        "user_message",
        "thinking_delta",
        "thinking_completed",
        "text_delta",
        "tool_call_started",
        "tool_call_completed",
        "usage_delta",
        "result",
    ] {
        assert!(types.contains(t), "no {t} event in {types:?}");
    }

    for (name, args) in FORMATS {
        let direct = cstream(args, &input);
        assert_eq!(direct.code, 0, "{name}");
        // The only diagnostic allowed: SSE formats warn once that the input
        // holds several sessions.
        let stderr = direct
            .stderr
            .lines()
            .filter(|l| !l.contains("a second session begins"))
            .count();
        assert_eq!(stderr, 0, "{name}: {}", direct.stderr);
        let mut via_args = args.to_vec();
        via_args.extend(["--from", "events"]);
        let via = cstream(&via_args, &events.stdout);
        assert!(
            via.stdout == direct.stdout,
            "{name} via events differs from direct"
        );
    }
}

#[test]
fn shell_delta_flood_is_cstream_events_byte_for_byte() {
    let Some(input) = generate(&["--shell-deltas", "40", "--delta-kb", "16", "--seed", "1"]) else {
        return;
    };
    let lines: Vec<&[u8]> = input
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 44);
    let delta: serde_json::Value = serde_json::from_slice(lines[2]).expect("JSON");
    assert_eq!(delta["type"], "shell_output_delta");
    assert_eq!(delta["text"].as_str().map(str::len), Some(16 * 1024));

    let run = cstream(&["--from", "events", "--to", "events"], &input);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert!(
        run.stdout == input,
        "events read back are not written back unchanged"
    );
}

#[test]
fn cumulative_stream_grows_one_call() {
    let args = ["--cumulative-shell", "20", "--cumulative-lines", "200"];
    let Some(input) = generate(&args) else {
        return;
    };
    let lines: Vec<serde_json::Value> = input
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("JSON"))
        .collect();
    let calls: Vec<&serde_json::Value> =
        lines.iter().filter(|v| v["type"] == "tool_call").collect();
    assert_eq!(calls.len(), 21); // started, 19 progress, completed
    assert_eq!(calls[0]["subtype"], "started");
    assert!(calls[1..20].iter().all(|v| v["subtype"] == "progress"));
    assert_eq!(calls[20]["subtype"], "completed");
    let stdout = |v: &serde_json::Value| {
        v["tool_call"]["shellToolCall"]["result"]["success"]["stdout"]
            .as_str()
            .expect("stdout")
            .to_owned()
    };
    for pair in calls[1..].windows(2) {
        assert!(
            stdout(pair[1]).starts_with(&stdout(pair[0])),
            "each re-send extends the last"
        );
    }
    assert_eq!(stdout(calls[20]).lines().count(), 200);
    let run = cstream(&["--to", "events"], &input);
    assert_eq!(run.code, 0);
}

/// `gen_archive.py OUT ARGS`: the composition it prints, or `None` without
/// python3.
fn generate_archive(out: &Path, args: &[&str]) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_archive.py");
    let run = match Command::new("python3")
        .arg(script)
        .arg(out)
        .args(args)
        .arg("--stats")
        .output()
    {
        Ok(run) => run,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return None;
        }
    };
    assert!(
        run.status.success(),
        "gen_archive.py {args:?} failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    Some(String::from_utf8(run.stderr).expect("UTF-8 stats"))
}

fn session_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("generated folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            session_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The archive generator is deterministic, and every session file it writes
/// (Claude Code transcripts, sub-agents, Codex rollouts, forks, archived
/// copies) is recognised and read without a warning or an `unknown` event,
/// so the archive benchmark measures cstream's real path.
#[test]
fn archive_is_deterministic_and_fully_understood() {
    let root = std::env::temp_dir().join(format!("cstream-gen-archive-{}", std::process::id()));
    let (a, b, c) = (root.join("a"), root.join("b"), root.join("c"));
    let Some(stats) = generate_archive(&a, &["--mb", "3", "--seed", "5"]) else {
        return;
    };
    let md5 = |s: &str| s.rsplit("md5 ").next().map(str::trim).map(str::to_owned);
    assert_eq!(
        md5(&stats),
        md5(&generate_archive(&b, &["--mb", "3", "--seed", "5"]).unwrap())
    );
    assert_ne!(
        md5(&stats),
        md5(&generate_archive(&c, &["--mb", "3", "--seed", "6"]).unwrap())
    );
    let mut files = Vec::new();
    session_files(&a, &mut files);
    files.sort();
    let mut dialects = std::collections::BTreeSet::new();
    for f in &files {
        let run = common::cstream_file(&["--to", "events"], f);
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{}", f.display());
        for line in run.out().lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("events are JSON");
            assert_ne!(v["type"], "unknown", "{}: {line}", f.display());
            if v["type"] == "session_started" {
                dialects.insert(v["dialect"].as_str().unwrap_or("").to_owned());
            }
        }
    }
    std::fs::remove_dir_all(&root).ok();
    assert!(
        dialects.contains("claude-project") && dialects.contains("codex-rollout"),
        "{dialects:?}"
    );
}

/// Every bench script answers `--help` with the whole comment block at its top (the
/// usage a reader edits there), from any working directory, without building or
/// running anything. A fixed line range once cut two of them short as the text grew.
#[test]
fn bench_scripts_print_their_whole_header_for_help() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let mut scripts: Vec<_> = std::fs::read_dir(&bench)
        .expect("bench/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 8, "{scripts:?}");
    for script in scripts {
        let text = std::fs::read_to_string(&script).expect("a script");
        let out = Command::new("bash")
            .arg(&script)
            .arg("--help")
            .current_dir(std::env::temp_dir())
            .output()
            .expect("bash runs");
        let name = script.display();
        assert!(out.status.success(), "{name} --help: {out:?}");
        let stdout = String::from_utf8(out.stdout).expect("UTF-8 help");
        // run.sh has its own usage text (a heredoc); the others print their header.
        if text.contains("usage() {") {
            assert!(
                stdout.starts_with("usage: bench/run.sh"),
                "{name}: {stdout}"
            );
            continue;
        }
        let header: Vec<&str> = text
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with('#'))
            .collect();
        let printed: Vec<&str> = stdout.lines().collect();
        assert_eq!(printed.len(), header.len(), "{name}: {stdout}");
        let last = header.last().expect("a header");
        assert_eq!(
            printed.last().map(|l| l.trim()),
            Some(last.trim_start_matches('#').trim()),
            "{name}"
        );
    }
}
