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

/// One transcript line: `extra` members after the envelope.
fn rec(n: u32, parent: Option<u32>, extra: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"u{p}\""));
    format!(
        r#"{{"parentUuid":{parent},"isSidechain":false,"sessionId":"s1","cwd":"/w","uuid":"u{n}","timestamp":"2026-01-01T00:00:{n:02}Z",{extra}}}"#
    )
}

/// Lines of every shape the figures-only reader meets or falls back on:
/// escapes and unicode, a sub-agent's `usage` inside a tool's own result
/// (never counted), a field of a surprising type, spaces, a tab between
/// tokens, an escaped key, duplicate keys, a line that is not JSON, a huge
/// text. The rows and the warnings are those of a whole read.
#[test]
fn lines_of_every_shape_give_the_rows_and_warnings_of_a_whole_read() {
    let huge = "x\\\"y\\n\u{e9}".repeat(300_000);
    let lines = [
        rec(
            1,
            None,
            r#""type":"user","message":{"role":"user","content":"go \"now\" \u00e9 😀"}"#,
        ),
        rec(
            2,
            Some(1),
            r#""type":"assistant","requestId":"r1","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"prompt":"p\\n"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7}}"#,
        ),
        rec(
            3,
            Some(2),
            r#""type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"done\\t"}]}]},"toolUseResult":{"status":"completed","usage":{"input_tokens":9999,"output_tokens":9999},"totalTokens":19998}"#,
        ),
        rec(
            4,
            Some(3),
            &format!(
                r#""type":"assistant","message":{{"id":"m2","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"{huge}"}}],"stop_reason":"end_turn","usage":{{"input_tokens":20,"output_tokens":6}}}}"#
            ),
        ),
        rec(
            5,
            Some(4),
            r#""type" : "user" , "message" : { "role":"user", "content" : "spaced" }"#,
        ),
        rec(
            6,
            Some(5),
            "\"type\":\"assistant\",\t\"message\":{\"id\":\"m3\",\"content\":[],\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}",
        ),
        rec(
            7,
            Some(6),
            r#""ty\u0070e":"assistant","message":{"id":"m4","content":[],"stop_reason":"end_turn","usage":{"input_tokens":4,"output_tokens":2}}"#,
        ),
        rec(
            8,
            Some(7),
            r#""type":"assistant","type":"assistant","message":{"id":"m5","content":[],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":3}}"#,
        ),
        rec(
            9,
            Some(8),
            r#""type":"assistant","message":{"id":7,"model":["x"],"content":"plain","stop_reason":"end_turn","usage":{"input_tokens":6,"output_tokens":4}}"#,
        ),
        "{\"type\":\"assistant\", not json".to_owned(),
        rec(
            10,
            Some(9),
            r#""type":"assistant","message":{"id":"m6","content":[{"type":"thinking","thinking":"","signature":"c2ln"}],"stop_reason":"end_turn","usage":{"input_tokens":1e2,"output_tokens":1}}"#,
        ),
    ];
    let dir = std::env::temp_dir().join(format!("cstream-usage-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("shapes.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let outputs = dir.join("shapes.outputs");
    let f = file.to_str().unwrap();
    let lean = cstream(&["--to", "usage", f], b"");
    let whole = cstream(
        &["--to", "usage", "--outputs", outputs.to_str().unwrap(), f],
        b"",
    );
    assert_eq!(lean.out(), whole.out(), "rows");
    assert_eq!(lean.stderr, whole.stderr, "warnings");
    assert!(lean.stderr.contains("not JSON"), "{}", lean.stderr);
    // The Task's own `usage` (9999) is the sub-agent's, not this session's.
    let row: serde_json::Value = serde_json::from_str(lean.out().lines().next().unwrap()).unwrap();
    let tin = row["tokens_in"].as_u64().unwrap();
    assert!(tin < 9999, "{row}");
    assert_eq!(row["tool_calls"], 1, "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A title written after the turns is read without a second pass over
/// the file (the usage sink takes it at the session's end): the rows are
/// those of a whole read, with one job or two, and a copy of the session
/// in another file is one row. The events name it at the session's start,
/// the file walked (read whole) or named (mapped, or read with `--no-mmap`).
#[test]
fn a_title_after_the_turns_gives_the_rows_of_a_whole_read_with_any_jobs() {
    let prompt = |n, parent| {
        rec(
            n,
            parent,
            r#""type":"user","message":{"role":"user","content":"go"}"#,
        )
    };
    let answer = |n, id: &str| {
        rec(
            n,
            Some(n - 1),
            &format!(
                r#""type":"assistant","message":{{"id":"{id}","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"ok"}}],"stop_reason":"end_turn","usage":{{"input_tokens":10,"output_tokens":{n}}}}}"#
            ),
        )
    };
    let title = |ty: &str, key: &str, t: &str| {
        format!(r#"{{"type":"{ty}","{key}":"{t}","sessionId":"s1"}}"#)
    };
    let late = [
        prompt(1, None),
        title("ai-title", "aiTitle", "first title"),
        answer(2, "m1"),
        prompt(3, Some(2)),
        answer(4, "m2"),
        prompt(5, Some(4)),
        answer(6, "m3"),
        title("ai-title", "aiTitle", "second title"),
        title("custom-title", "customTitle", "the user's title"),
        title("ai-title", "aiTitle", "third title"),
    ];
    // The same session cut before its late titles: a copy, counted once.
    let copy = &late[..5];
    let dir = std::env::temp_dir().join(format!("cstream-usage-titles-{}", std::process::id()));
    let proj = dir.join("projects").join("-w");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("a.jsonl"), late.join("\n") + "\n").unwrap();
    std::fs::write(proj.join("b.jsonl"), copy.join("\n") + "\n").unwrap();
    let only_ai = [
        prompt(1, None),
        answer(2, "n1"),
        prompt(3, Some(2)),
        answer(4, "n2"),
        title("ai-title", "aiTitle", "named at the end"),
    ]
    .map(|l| l.replace("\"s1\"", "\"s2\""));
    std::fs::write(proj.join("c.jsonl"), only_ai.join("\n") + "\n").unwrap();
    let tree = dir.join("projects");
    let tree = tree.to_str().unwrap();
    let one = same("titles -j 1", &["-j", "1", tree]);
    let two = same("titles -j 2", &["-j", "2", tree]);
    assert_eq!(one, 2, "two sessions");
    assert_eq!(two, 2, "two sessions");
    let rows = |j: &str| cstream(&["--to", "usage", "-j", j, tree], b"").out();
    let rows1 = rows("1");
    assert_eq!(rows1, rows("2"), "-j 1 vs -j 2");
    let titles: Vec<String> = rows1
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["title"].as_str().unwrap_or("").to_owned()
        })
        .collect();
    assert_eq!(titles, ["the user's title", "named at the end"], "{rows1}");
    // Every session's start names the file's last title, though written
    // after the turns: looked for in the text read when the file was read
    // whole (walked), in the file read again when it was mapped (named).
    let starts = |args: &[&str]| -> Vec<String> {
        cstream(args, b"")
            .out()
            .lines()
            .filter(|l| l.contains(r#""type":"session_started""#))
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["title"].as_str().unwrap_or("").to_owned()
            })
            .collect()
    };
    let want = ["the user's title", "first title", "named at the end"];
    let files: Vec<String> = ["a", "b", "c"]
        .map(|f| proj.join(format!("{f}.jsonl")).to_str().unwrap().to_owned())
        .into();
    for j in ["1", "2"] {
        assert_eq!(
            starts(&["--to", "events", "-j", j, tree]),
            want,
            "walked, -j {j}"
        );
        let mut named = vec!["--to", "events", "-j", j];
        named.extend(files.iter().map(String::as_str));
        assert_eq!(starts(&named), want, "named, -j {j}");
        named.push("--no-mmap");
        assert_eq!(starts(&named), want, "named, read, -j {j}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Tool results whose texts put escapes, runs of backslashes before a
/// quote, and damage (a raw control byte, an escape JSON lacks, a
/// surrogate escape) at every offset of the blocks the string walk reads
/// (the first 32 bytes, then 32-byte blocks, or 64-byte ones with AVX2),
/// beside errors, texts in arrays and images: the rows, the
/// `--stats` counts and the warnings are those of a whole read.
#[test]
fn tool_results_with_escapes_at_every_block_offset_read_as_a_whole_read() {
    const TAILS: &[&str] = &[
        r#"\n"#,
        r#"\"q\""#,
        r#"\\\\"#,
        r#"\\\\\"x"#,
        r#"\u00e9\u2028"#,
        r#"\/\b\f\r\t"#,
        // Damage: the fast reader leaves each of these lines to
        // serde_json, which refuses or reads it as the whole read does.
        "\t",
        r#"\x"#,
        r#"\ud800"#,
        r#"\u12"#,
    ];
    let mut lines = vec![rec(
        1,
        None,
        r#""type":"user","message":{"role":"user","content":"go"}"#,
    )];
    let mut n = 1;
    // Past the first 32 bytes the walk takes 64 at a time (AVX2): every
    // offset of the first block and of the first wide one after it.
    for pad in 0..100 {
        for (t, tail) in TAILS.iter().enumerate() {
            let text = format!("{}{tail}{}", "a".repeat(pad), "b".repeat(t * 3));
            let id = format!("t{pad}_{t}");
            lines.push(rec(
                n + 1,
                Some(n),
                &format!(
                    r#""type":"assistant","message":{{"id":"m{n}","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"{text}"}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":{pad},"output_tokens":{t}}}}}"#
                ),
            ));
            let content = match (pad + t) % 3 {
                0 => format!(r#""{text}""#),
                1 => format!(
                    r#"[{{"type":"text","text":"{text}"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}}}]"#
                ),
                _ => format!(r#"[{{"type":"text","text":"{text}"}}]"#),
            };
            let error = if pad % 4 == 0 { "true" } else { "false" };
            lines.push(rec(
                n + 2,
                Some(n + 1),
                &format!(
                    r#""type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{content},"is_error":{error}}}]}},"toolUseResult":{{"stdout":"{text}","stderr":"","interrupted":false}}"#
                ),
            ));
            n += 2;
        }
    }
    let dir = std::env::temp_dir().join(format!("cstream-usage-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("blocks.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let outputs = dir.join("blocks.outputs");
    let f = file.to_str().unwrap();
    let lean = cstream(&["--to", "usage", "--stats", f], b"");
    let whole = cstream(
        &[
            "--to",
            "usage",
            "--stats",
            "--outputs",
            outputs.to_str().unwrap(),
            f,
        ],
        b"",
    );
    assert_eq!(lean.out(), whole.out(), "rows");
    assert_eq!(stats(&lean.stderr), stats(&whole.stderr), "counts");
    fn warnings(e: &str) -> Vec<&str> {
        e.lines()
            .filter(|l| !l.starts_with("cstream: stats:"))
            .collect()
    }
    assert_eq!(warnings(&lean.stderr), warnings(&whole.stderr), "warnings");
    // The damaged lines were met (and warned about), the others counted:
    // a call for each good pair.
    assert!(lean.stderr.contains("not JSON"), "{}", lean.stderr);
    let row = lean
        .out()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["session_id"] == "s1")
        .expect("the session's row");
    assert!(row["tool_calls"].as_u64().unwrap() >= 100 * 6, "{row}");
    assert!(
        row["tool_calls"].as_u64().unwrap() >= 100 * 6,
        "{row}\n{}",
        lean.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
