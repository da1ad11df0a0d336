//! `--summary FILE` and `--outputs FILE`: the CI summary of a run.
//!
//! - with any `--to`, the format's output is the same with or without them
//!   (every fixture, every format);
//! - `--outputs` is always well formed for `$GITHUB_OUTPUT` (`key=value`, or
//!   `key<<DELIM` … `DELIM` for a value with line breaks), and its outcome
//!   agrees with `-e` (exit 3 exactly when it is not `success`);
//! - an error session names its error; several sessions add up;
//! - the summary stays within 1 MiB, and both files are appended to.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::common;

use common::{cstream, fixture_args, fixtures, to_values};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cstream-summary-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run with `--summary` and `--outputs` into `dir`; (stdout, summary, outputs, exit code).
fn with_summary(args: &[&str], stdin: &[u8], dir: &Path) -> (Vec<u8>, String, String, u8) {
    let (s, o) = (dir.join("summary.md"), dir.join("outputs.txt"));
    let _ = std::fs::remove_file(&s);
    let _ = std::fs::remove_file(&o);
    let mut all = vec![
        "--summary",
        s.to_str().unwrap(),
        "--outputs",
        o.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let run = cstream(&all, stdin);
    (
        run.stdout,
        std::fs::read_to_string(&s).unwrap(),
        std::fs::read_to_string(&o).unwrap(),
        run.code,
    )
}

/// Parse `$GITHUB_OUTPUT` text the way the runner does; panics on a line
/// it would refuse.
fn parse_outputs(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            loop {
                let l = lines
                    .next()
                    .unwrap_or_else(|| panic!("{k}: no closing {delim}"));
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_owned(), v.join("\n"));
        } else {
            let (k, v) = line
                .split_once('=')
                .unwrap_or_else(|| panic!("not key=value: {line:?}"));
            assert!(!k.is_empty() && !k.contains(' '), "bad key in {line:?}");
            out.insert(k.to_owned(), v.to_owned());
        }
    }
    out
}

#[test]
fn summary_never_changes_the_output_and_outputs_are_well_formed() {
    let dir = scratch("every");
    for file in fixtures() {
        let input = std::fs::read(&file).unwrap();
        let extra = fixture_args(&file);
        for to in to_values() {
            let mut args: Vec<&str> = extra.iter().map(String::as_str).collect();
            args.extend(["--to", to, "-e", "--created", "1700000000"]);
            let plain = cstream(&args, &input);
            let (out, summary, outputs, code) = with_summary(&args, &input, &dir);
            let name = format!("{} --to {to}", file.display());
            assert_eq!(out, plain.stdout, "{name}: --summary changed the output");
            assert_eq!(
                code, plain.code,
                "{name}: --summary changed the exit status"
            );
            let o = parse_outputs(&outputs);
            for key in [
                "outcome",
                "sessions",
                "turns",
                "tool_calls",
                "tokens_in",
                "tokens_out",
                "tokens_cached",
                "tokens_reasoning",
                "cost_usd",
                "duration_ms",
                "error",
            ] {
                assert!(o.contains_key(key), "{name}: no {key} in {outputs}");
            }
            // -e follows the same verdict.
            assert_eq!(
                o["outcome"] != "success",
                code == 3,
                "{name}: outcome {} but exit {code}",
                o["outcome"]
            );
            assert!(summary.len() <= 1024 * 1024);
            assert!(
                summary.starts_with("### ") && summary.contains(&o["outcome"]),
                "{name}: {summary}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_error_session_names_its_error_and_failed_command() {
    let dir = scratch("error");
    let input = std::fs::read(common::fixtures_dir().join("cursor/error-result.jsonl")).unwrap();
    let (_, summary, outputs, code) = with_summary(&["--to", "text", "-e"], &input, &dir);
    let o = parse_outputs(&outputs);
    assert_eq!(o["outcome"], "failure");
    assert_eq!(o["failed"], "1");
    assert_eq!(o["failed_calls"], "1");
    assert_eq!(
        o["error"],
        "Agent stopped: the model provider returned 529 overloaded"
    );
    assert_eq!(code, 3);
    assert!(summary.contains("### ❌ cstream: failure"), "{summary}");
    assert!(
        summary.contains("```text\nAgent stopped: the model provider returned 529 overloaded\n```"),
        "{summary}"
    );
    assert!(
        summary.contains("shell `./deploy.sh staging` exited 1"),
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sessions_of_several_inputs_add_up() {
    let dir = scratch("multi");
    let f = |p: &str| common::fixtures_dir().join(p);
    let (a, b) = (
        f("claude/multi-turn_repeated-init_rate-limit.jsonl"),
        f("codex/exec.jsonl"),
    );
    let (_, summary, outputs, _) = with_summary(
        &["--to", "events", a.to_str().unwrap(), b.to_str().unwrap()],
        b"",
        &dir,
    );
    let o = parse_outputs(&outputs);
    // Each input's sessions, as the events show them.
    let events = cstream(
        &["--to", "events", a.to_str().unwrap(), b.to_str().unwrap()],
        b"",
    );
    let evs = common::events(&events.out());
    let count = |ty: &str| evs.iter().filter(|e| e["type"] == ty).count();
    assert_eq!(o["sessions"], count("session_started").to_string());
    assert!(count("session_started") >= 3, "{}", events.out());
    assert_eq!(o["tool_calls"], count("tool_call_started").to_string());
    let sum = |k: &str| -> u64 {
        evs.iter()
            .filter(|e| e["type"] == "usage_delta")
            .map(|e| e[k].as_u64().unwrap_or(0))
            .sum()
    };
    assert_eq!(o["tokens_in"], sum("deltaInput").to_string());
    assert_eq!(o["tokens_out"], sum("deltaOutput").to_string());
    let rows = summary.lines().filter(|l| l.starts_with("| `")).count();
    assert_eq!(rows.to_string(), o["sessions"], "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_multi_line_error_uses_the_heredoc_form_and_files_are_appended_to() {
    let dir = scratch("append");
    let input = br#"{"type":"system","subtype":"init","session_id":"m1","model":"Auto","cwd":"/w"}
{"type":"result","subtype":"error","is_error":true,"duration_ms":5,"error":{"message":"tests failed:\n  2 failing\nEOF"},"session_id":"m1"}
"#;
    let out = dir.join("outputs.txt");
    std::fs::write(&out, "earlier=kept\n").unwrap();
    let o = out.to_str().unwrap();
    let run = cstream(&["--outputs", o, "--to", "events"], input);
    assert_eq!(
        run.code, 0,
        "without -e the verdict does not change the exit status"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("earlier=kept\n"), "{text}");
    assert!(text.contains("error<<CSTREAM_EOF\n"), "{text}");
    let parsed = parse_outputs(&text);
    assert_eq!(parsed["earlier"], "kept");
    assert_eq!(parsed["error"], "tests failed:\n  2 failing\nEOF");
    assert_eq!(parsed["outcome"], "failure");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_summary_stays_within_a_mebibyte() {
    let dir = scratch("big");
    // 120 sessions of 20 failed commands, each listed with its first 512
    // bytes: more than a step summary may hold.
    let mut input = String::new();
    let cmd = "x".repeat(1024);
    for s in 0..120 {
        input.push_str(&format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s{s}\",\"model\":\"Auto\",\"cwd\":\"/w\"}}\n"
        ));
        for c in 0..20 {
            let args = format!(r#"{{"command":"{c} {cmd}","workingDirectory":""}}"#);
            input.push_str(&format!(
                "{{\"type\":\"tool_call\",\"subtype\":\"started\",\"call_id\":\"c{c}\",\"tool_call\":{{\"shellToolCall\":{{\"args\":{args}}}}},\"session_id\":\"s{s}\"}}\n\
                 {{\"type\":\"tool_call\",\"subtype\":\"completed\",\"call_id\":\"c{c}\",\"tool_call\":{{\"shellToolCall\":{{\"args\":{args},\"result\":{{\"failure\":{{\"exitCode\":2,\"stdout\":\"\",\"stderr\":\"no\"}}}}}}}},\"session_id\":\"s{s}\"}}\n"
            ));
        }
        input.push_str(&format!(
            "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"\",\"session_id\":\"s{s}\"}}\n"
        ));
    }
    let (_, summary, outputs, _) = with_summary(&["--to", "events"], input.as_bytes(), &dir);
    assert!(
        summary.len() <= 1024 * 1024,
        "summary of {} bytes",
        summary.len()
    );
    assert!(
        summary.ends_with("_(summary cut at 1 MiB)_\n"),
        "{}",
        &summary[summary.len() - 200..]
    );
    assert_eq!(parse_outputs(&outputs)["failed_calls"], "2400");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same saved session read twice in one run (an `archived_sessions/`
/// copy beside the active file, a copied transcript) counts once in the
/// totals: the copy that recorded more, whichever comes first; the table
/// lists both. Live streams with one id add up (a resumed session streams
/// its new turns under its old id).
#[test]
fn a_saved_session_read_twice_counts_once() {
    let dir = scratch("dupes");
    let f = |p: &str| common::fixtures_dir().join(p);
    let claude = f("claude-project/rewind_parallel-results_placeholder-usage.jsonl");
    let codex = f("codex-rollout/rollout_events-and-history-once_token-totals_compacted.jsonl");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let once = |files: &[String]| {
        let mut a: Vec<&str> = vec!["--to", "events"];
        a.extend(files.iter().map(String::as_str));
        parse_outputs(&with_summary(&a, b"", &dir).2)
    };
    let single = once(&[s(&claude), s(&codex)]);
    assert_ne!(single["tokens_in"], "0", "the fixtures carry usage");
    // A shorter save of the Codex session: its first half.
    let raw = std::fs::read_to_string(&codex).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    let short = dir.join("archived-rollout.jsonl");
    std::fs::write(&short, lines[..lines.len() / 2].join("\n") + "\n").unwrap();
    for files in [
        vec![s(&claude), s(&codex), s(&claude), s(&short)],
        vec![s(&short), s(&claude), s(&codex), s(&claude)],
    ] {
        let (_, summary, outputs, _) = {
            let mut a: Vec<&str> = vec!["--to", "events"];
            a.extend(files.iter().map(String::as_str));
            with_summary(&a, b"", &dir)
        };
        let o = parse_outputs(&outputs);
        for k in [
            "sessions",
            "tokens_in",
            "tokens_out",
            "tokens_cached",
            "tokens_reasoning",
            "cost_usd",
            "turns",
            "tool_calls",
        ] {
            assert_eq!(o[k], single[k], "{k} with {files:?}");
        }
        assert_eq!(o["duplicates"], "2", "{files:?}");
        assert!(
            summary.contains("2 saved sessions were read again"),
            "{summary}"
        );
        let rows = summary.lines().filter(|l| l.starts_with("| `")).count();
        assert_eq!(rows, 4, "{summary}");
    }
    // A live stream read twice is two runs of turns: they add up.
    let live = s(&f("claude/multi-turn_repeated-init_rate-limit.jsonl"));
    let one = once(std::slice::from_ref(&live));
    let two = once(&[live.clone(), live]);
    assert_eq!(two["duplicates"], "0");
    let n = |o: &HashMap<String, String>, k: &str| o[k].parse::<u64>().unwrap();
    assert_eq!(n(&two, "tokens_in"), 2 * n(&one, "tokens_in"));
    std::fs::remove_dir_all(&dir).unwrap();
}
