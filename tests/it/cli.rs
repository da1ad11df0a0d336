//! The built `cstream` binary, as a user runs it: exit codes, diagnostics on
//! stderr, files, colour, closed pipes, huge lines and streaming.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::lines;
use assert_cmd::Command;
use predicates::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_cstream");

/// How long to wait for output that must arrive; generous, since the test
/// asserts ordering (output before the next input), not speed.
const PATIENCE: Duration = Duration::from_secs(10);

/// The binary, run from the repository root with no colour variables set.
fn cstream() -> Command {
    let mut c = Command::new(BIN);
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    c
}

fn std_cstream() -> StdCommand {
    let mut c = StdCommand::new(BIN);
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE");
    c
}

/// A scratch file under cargo's per-test-target temporary directory.
fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"))
}

const OK: &str = "fixtures/cursor/no-partial_single-segment.jsonl";
const GARBAGE: &str = "fixtures/cursor/garbage-lines.jsonl";
const FAILED: &str = "fixtures/cursor/error-result.jsonl";
const CUT_OFF: &str = "fixtures/cursor/cut-off_open-tool-call.jsonl";
const ONLY_T: &str = "fixtures/cursor/only-T-line.jsonl";
const MISSING: &str = "fixtures/cursor/does-not-exist.jsonl";

const INIT: &str = r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"s1","model":"Auto","permissionMode":"default"}"#;
const DELTA: &str = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}]},"session_id":"s1","timestamp_ms":1770000000000}"#;
const START: &str = r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"make"}}},"session_id":"s1","timestamp_ms":1770000000001}"#;
const RESULT: &str = r#"{"type":"result","subtype":"success","duration_ms":5,"is_error":false,"result":"Hi","session_id":"s1"}"#;

// ------------------------------------------------------------ exit codes

#[test]
fn exit_0_when_every_line_is_understood() {
    cstream().arg(OK).assert().code(0).stderr("");
    // Unknown-but-valid records are kept (exit 0), and said once at the end.
    cstream()
        .write_stdin(lines(&[INIT, r#"{"type":"brand_new","x":1}"#, RESULT]))
        .assert()
        .code(0)
        .stderr(
            "cstream: warning: cursor: 1 record of type \"brand_new\" not understood \
             (kept as unknown events; first at -:2)\n",
        );
}

#[test]
fn exit_1_when_some_lines_are_not_input() {
    cstream().arg(GARBAGE).assert().code(1);
    cstream().arg(ONLY_T).assert().code(1);
}

#[test]
fn exit_2_for_usage_errors_and_missing_files() {
    cstream().arg("--no-such-flag").assert().code(2);
    cstream().args(["--to", "nonsense"]).assert().code(2);
    cstream()
        .arg(MISSING)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::starts_with(format!(
            "cstream: error: {MISSING}: "
        )));
}

#[test]
fn exit_3_with_e_for_failed_and_cut_off_sessions() {
    for f in [FAILED, CUT_OFF] {
        cstream().arg(f).assert().code(0);
        cstream().args(["-e", f]).assert().code(3);
        cstream().args(["--exit-status", f]).assert().code(3);
    }
    cstream().args(["-e", OK]).assert().code(0);
    // An input with no events at all is a session that ended without a
    // result, and the transcript says so as it says it for a cut-off one.
    let incomplete = "● unknown  (session session-1)\n\
                      ── incomplete: the stream ended without a result · 0 tool calls\n";
    cstream()
        .args(["-e", "--color", "never"])
        .write_stdin("")
        .assert()
        .code(3)
        .stdout(incomplete);
    cstream()
        .args(["--color", "never"])
        .write_stdin("")
        .assert()
        .code(0)
        .stdout(incomplete);
}

/// `-e` says why it exits 3: one line per session, with the agent's words.
#[test]
fn e_names_failed_and_cut_off_sessions_with_the_agents_error() {
    let f = "fixtures/cursor/failed-and-cut-off.jsonl";
    cstream().args(["-e", f]).assert().code(3).stderr(format!(
        "cstream: {f}: session a1b2c3d4-4444-4e5f-8a6b-000000000001 failed: \
         Agent stopped: the model provider returned 529 overloaded\n\
         cstream: warning: {f}:7: not JSON: T: Connection lost: the agent process was killed\n\
         cstream: {f}: session a1b2c3d4-4444-4e5f-8a6b-000000000002 ended without a result; \
         the last error was: T: Connection lost: the agent process was killed\n"
    ));
    cstream()
        .args(["-e", CUT_OFF])
        .assert()
        .code(3)
        .stderr(predicate::str::ends_with(
            " ended without a result (cut off?)\n",
        ));
    // Without -e the transcript tells; stderr has only the bad line.
    cstream()
        .arg(f)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(": session ").not());
}

/// A forced `--from` that does not fit the input says so, once per file.
#[test]
fn a_forced_dialect_that_fits_nothing_warns_once_per_file() {
    let f = "fixtures/cursor/basic.jsonl";
    let warning = format!(
        "cstream: warning: {f}: read as codex (--from) but its first records look like \
         cursor; without --from the dialect is detected\n"
    );
    // Then, at the end, what the records were.
    let drift: String = [
        ("assistant", 3),
        ("result/success", 4),
        ("system/init", 1),
        ("user", 2),
    ]
    .iter()
    .map(|(what, line)| {
        format!(
            "cstream: warning: codex: 2 records of type \"{what}\" not understood \
             (kept as unknown events; first at {f}:{line})\n"
        )
    })
    .collect();
    cstream()
        .args(["--from", "codex", f, f])
        .assert()
        .code(0)
        .stderr(format!("{warning}{warning}{drift}"));
    cstream()
        .args(["--from", "cursor", f])
        .assert()
        .code(0)
        .stderr("");
    cstream().arg(f).assert().code(0).stderr("");
    // A long stream hears it after the first records, not at its end.
    let mut child = std_cstream()
        .args(["--from", "codex"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Records no dialect claims: a wrong --from would be told at once.
    for _ in 0..cstream::limits::DIALECT_CHECK_RECORDS {
        writeln!(stdin, "{{\"foo\":1}}").unwrap();
    }
    stdin.flush().unwrap();
    // Read while standard input is still open: the warning must come
    // before the end of the input (other warnings may come first).
    let err = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in err.lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    while !seen.contains("64 of its first 64 records are unknown to the codex reader") {
        let line = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no warning while the input is open: {seen}"));
        seen.push_str(&line);
        seen.push('\n');
    }
    drop(stdin);
    child.wait().unwrap();
}

#[test]
fn exit_code_precedence_is_2_then_3_then_1() {
    // 2 beats 3 beats 1.
    cstream()
        .args(["-e", MISSING, FAILED, GARBAGE])
        .assert()
        .code(2);
    // 3 beats 1: a lone T: line is a bad line and a session without a result.
    cstream().args(["-e", ONLY_T]).assert().code(3);
    cstream().args(["-e", GARBAGE, FAILED]).assert().code(3);
    // Without -e, a failed session does not change the status.
    cstream().args([GARBAGE, FAILED]).assert().code(1);
    cstream().args([MISSING, GARBAGE]).assert().code(2);
}

// ------------------------------------------------------------ diagnostics

#[test]
fn warnings_name_file_and_line() {
    let out = cstream().arg(GARBAGE).assert().code(1).get_output().clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let at: Vec<&str> = stderr
        .lines()
        // The end-of-run drift lines name the first place (checked in
        // not_understood.rs).
        .filter(|l| !l.contains(" not understood (kept as unknown events"))
        .map(|l| {
            let rest = l.strip_prefix("cstream: warning: ").expect(l);
            let (file_line, _) = rest.split_once(": ").expect(l);
            file_line
        })
        .collect();
    assert_eq!(
        at,
        [
            format!("{GARBAGE}:2"),
            format!("{GARBAGE}:5"),
            format!("{GARBAGE}:7"),
            format!("{GARBAGE}:13"),
        ]
    );
    // Diagnostics never go to stdout.
    assert!(
        !String::from_utf8(out.stdout)
            .unwrap()
            .contains("cstream: warning")
    );
}

#[test]
fn standard_input_is_named_dash_and_lines_count_per_file() {
    let input = lines(&[INIT, "", "oops", DELTA, "T: stop"]);
    cstream()
        .write_stdin(input.clone())
        .assert()
        .code(1)
        .stderr(
            "cstream: warning: -:3: not JSON: oops\ncstream: warning: -:5: not JSON: T: stop\n",
        );
    // `-` among files; numbering restarts for each input.
    let f = scratch("per-file.jsonl");
    std::fs::write(&f, "{\"type\":\"result\",\"result\":\"\"}\nbad\n").unwrap();
    let f = f.to_str().unwrap();
    cstream()
        .args([f, "-", f])
        .write_stdin(input)
        .assert()
        .code(1)
        .stderr(format!(
            "cstream: warning: {f}:2: not JSON: bad\n\
             cstream: warning: -:3: not JSON: oops\n\
             cstream: warning: -:5: not JSON: T: stop\n\
             cstream: warning: {f}:2: not JSON: bad\n"
        ));
}

#[test]
fn repeated_warnings_are_capped_with_a_count() {
    let input: String = (0..25).map(|i| format!("junk {i}\n")).collect();
    let out = cstream()
        .write_stdin(input)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("not JSON: junk").count(), 20);
    assert!(
        stderr
            .ends_with("cstream: warning: 5 more lines that are not JSON not shown (25 in all)\n")
    );
}

#[test]
fn a_missing_file_does_not_stop_the_others() {
    let out = cstream()
        .args(["--to", "events", OK, MISSING, CUT_OFF])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "cstream: error: {MISSING}: "
        )))
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.matches("\"type\":\"session_started\"").count(), 2);
    assert!(
        stdout.contains("\"cancelled\":true"),
        "the file after the missing one was read"
    );
}

#[test]
fn control_characters_in_file_names_are_escaped_in_messages() {
    // A file name reaches the terminal in every warning: an escape sequence
    // in it must not.
    let dir = std::env::temp_dir().join(format!("cstream-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("a\u{1b}[31mb.jsonl");
    std::fs::write(&bad, "not json\n").unwrap();
    let missing = dir.join("gone\u{7}.jsonl");
    let out = cstream()
        .args(["--to", "events"])
        .arg(&bad)
        .arg(&missing)
        .assert()
        .code(2)
        .get_output()
        .clone();
    std::fs::remove_dir_all(&dir).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("a\\u{1b}[31mb.jsonl:1: not JSON"), "{err}");
    assert!(err.contains("gone\\u{7}.jsonl: "), "{err}");
}

// ------------------------------------------------------------ --strict

#[test]
fn strict_stops_at_the_first_bad_line_and_finishes_as_cut_off() {
    let input = lines(&[
        INIT,
        DELTA,
        START,
        "T: out of credits",
        DELTA,
        RESULT,
        "also bad",
    ]);
    let out = cstream()
        .args(["--strict", "--to", "events"])
        .write_stdin(input.clone())
        .assert()
        .code(1)
        .stderr("cstream: warning: -:4: not JSON: T: out of credits\n")
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let types: Vec<&str> = stdout
        .lines()
        .map(|l| l.split('"').nth(3).unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "session_started",
            "text_delta",
            "tool_call_started",
            "error",
            "tool_call_completed"
        ]
    );
    assert!(stdout.contains("\"cancelled\":true"));
    // The text transcript ends as for a cut-off stream.
    cstream()
        .args(["--strict", "--color", "never"])
        .write_stdin(input.clone())
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("⊘ shell  make  cancelled\n── incomplete: the stream ended")
                .and(predicate::str::ends_with(" · 1 tool call\n")),
        );
    // The session ended without a result: -e makes that 3, which beats 1.
    cstream()
        .args(["--strict", "-e"])
        .write_stdin(input.clone())
        .assert()
        .code(3);
    // Without --strict the run goes on.
    cstream()
        .args(["--to", "events"])
        .write_stdin(input)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("\"type\":\"result\""));
}

#[test]
fn strict_stops_inside_a_failed_join_too() {
    // An unfinished value followed by a complete object: the unfinished line
    // is the first bad one; the object after it must not be read.
    let input = lines(&[INIT, "{\"type\":\"assistant\",", RESULT]);
    cstream()
        .args(["--strict", "--to", "events"])
        .write_stdin(input)
        .assert()
        .code(1)
        .stderr("cstream: warning: -:2: not JSON: {\"type\":\"assistant\",\n")
        .stdout(predicate::str::contains("\"type\":\"result\"").not());
}

#[test]
fn strict_stops_inside_a_top_level_array() {
    let input = format!("[{INIT},\n{{\"type\": nope}}, {DELTA},\n{RESULT}]\n");
    cstream()
        .args(["--strict", "--to", "events"])
        .write_stdin(input)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "cstream: warning: -:2: not JSON: {\"type\": nope}\n",
        ))
        .stdout(predicate::str::contains("text_delta").not());
}

#[test]
fn strict_stops_the_run_not_just_the_file() {
    let out = cstream()
        .args(["--strict", "--to", "events", GARBAGE, OK])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.matches("session_started").count(), 1);
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}

// ------------------------------------------------------------ output

#[test]
fn output_file() {
    let path = scratch("out.ndjson");
    let _ = std::fs::remove_file(&path);
    cstream()
        .args(["--to", "events", "-o", path.to_str().unwrap(), OK])
        .assert()
        .code(0)
        .stdout("")
        .stderr("");
    let direct = cstream().args(["--to", "events", OK]).output().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), direct.stdout);
    // --output to a file is never a terminal: no colour with auto.
    cstream()
        .args(["--output", path.to_str().unwrap(), OK])
        .assert()
        .code(0);
    assert!(!std::fs::read(&path).unwrap().contains(&0x1b));
    // A file that cannot be created is a fatal error.
    cstream()
        .args(["-o", "no/such/dir/out.txt", OK])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "cstream: error: no/such/dir/out.txt: ",
        ));
}

/// `--summary FILE` and `--outputs FILE` append to FILE: a FILE that holds
/// JSON (the session given where the report's file was meant) or is an
/// input is refused with exit 2, and keeps every byte; a Markdown file is
/// appended to.
#[test]
fn reports_are_not_appended_to_a_session() {
    let original = std::fs::read(OK).unwrap();
    let session = scratch("report-session.jsonl");
    std::fs::write(&session, &original).unwrap();
    let name = session.to_str().unwrap();
    for flag in ["--summary", "--outputs"] {
        // `cstream --summary session.jsonl`: standard input is the input.
        std_cstream()
            .args([flag, name])
            .stdin(std::process::Stdio::null())
            .output()
            .map(|o| {
                assert_eq!(o.status.code(), Some(2), "{flag}");
                assert_eq!(
                    String::from_utf8_lossy(&o.stderr),
                    format!(
                        "cstream: error: {flag} {name}: it holds JSON (a session or a stream?), not a report; refusing to append to it (nothing was read or written)\n"
                    )
                );
            })
            .unwrap();
        assert_eq!(std::fs::read(&session).unwrap(), original, "{flag}");
    }
    let md = scratch("report-summary.md");
    std::fs::write(&md, "# CI\n").unwrap();
    cstream()
        .args(["--summary", md.to_str().unwrap(), OK])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# CI\n") && text.len() > 10, "{text}");
}

/// Invariant: an output that is one of the inputs (the same file, however
/// it is named) is refused with exit 2 before anything is written, and the
/// input keeps every byte.
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let original = std::fs::read(OK).unwrap();
    let input = scratch("clobber-in.jsonl");
    let fresh = || std::fs::write(&input, &original).unwrap();
    let link = scratch("clobber-link.jsonl");
    let hard = scratch("clobber-hard.jsonl");
    fresh();
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_file(&hard);
    std::os::unix::fs::symlink(&input, &link).unwrap();
    std::fs::hard_link(&input, &hard).unwrap();
    let name = input.to_str().unwrap();
    // The same name, a symlink, a hard link, the input second among several.
    for (out, files) in [
        (name, vec![name]),
        (link.to_str().unwrap(), vec![name]),
        (hard.to_str().unwrap(), vec![name]),
        (name, vec![OK, link.to_str().unwrap()]),
    ] {
        cstream()
            .args(["--to", "events", "-o", out])
            .args(&files)
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                predicate::str::starts_with(format!("cstream: error: -o {out} is the input "))
                    .and(predicate::str::contains("refusing to write over it")),
            );
        assert_eq!(
            std::fs::read(&input).unwrap(),
            original,
            "-o {out} {files:?}"
        );
    }
    // Standard input redirected from the file named by -o.
    std_cstream()
        .args(["--to", "events", "-o", name])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .map(|o| {
            assert_eq!(o.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&o.stderr).contains("is the input -;"));
        })
        .unwrap();
    assert_eq!(std::fs::read(&input).unwrap(), original);
    // Standard output appended to an input (`cstream f >> f`), which would
    // otherwise read its own output.
    let append = std::fs::OpenOptions::new()
        .append(true)
        .open(&input)
        .unwrap();
    let o = std_cstream()
        .args(["--to", "events", name])
        .stdout(append)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "cstream: error: standard output is the input {name}; refusing to write over it (nothing was written)\n"
        )
    );
    assert_eq!(std::fs::read(&input).unwrap(), original);
    // Another file is fine, and so is one device that is both standard
    // input and output (a terminal, /dev/null): only regular files count.
    let other = scratch("clobber-out.jsonl");
    cstream()
        .args(["--to", "events", "-o", other.to_str().unwrap(), name])
        .assert()
        .code(0);
    let null = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .unwrap()
    };
    let o = std_cstream().stdin(null()).stdout(null()).output().unwrap();
    assert_eq!((o.status.code(), &o.stderr[..]), (Some(0), &b""[..]));
}

/// One rule for an input with no events at all, in every format and in
/// the exit status: it is a session that ended without a result.
#[test]
fn an_input_without_events_is_an_incomplete_session_everywhere() {
    let empty = scratch("empty.jsonl");
    std::fs::write(&empty, "\n\n").unwrap();
    let empty = empty.to_str().unwrap();
    cstream()
        .args(["--color", "never", empty])
        .assert()
        .code(0)
        .stdout(
            "● unknown  (session session-1)\n\
             ── incomplete: the stream ended without a result · 0 tool calls\n",
        );
    cstream()
        .args(["--to", "events", empty])
        .assert()
        .code(0)
        .stdout(
            "{\"type\":\"session_started\",\"sessionId\":\"session-1\",\"dialect\":\"unknown\",\"schemaVersion\":1}\n",
        );
    cstream()
        .args(["--to", "events", "--from", "claude", empty])
        .assert()
        .stdout(predicates::str::contains("\"dialect\":\"claude\""));
    let stats = cstream().args(["--stats", "-e", empty]).assert().code(3);
    let err = String::from_utf8(stats.get_output().stderr.clone()).unwrap();
    assert!(err.contains(" sessions=1 failed=0 incomplete=1 "), "{err}");
    // Between two inputs it is one more session, in text as in documents.
    let text = cstream()
        .args(["--color", "never", OK, empty, OK])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(text.stdout)
            .unwrap()
            .matches("● ")
            .count(),
        3
    );
    let docs = cstream()
        .args(["--to", "documents", "-c", OK, empty, OK])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(docs.stdout).unwrap().lines().count(), 3);
}

fn has_escape(out: &[u8]) -> bool {
    out.contains(&0x1b)
}

#[test]
fn colour_on_and_off() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = cstream();
        c.args(args).arg(OK);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        has_escape(&out.stdout)
    };
    assert!(run(&["--color", "always"], &[]));
    assert!(
        run(&["--color", "always"], &[("NO_COLOR", "1")]),
        "always beats NO_COLOR"
    );
    assert!(!run(&["--color", "never"], &[]));
    assert!(!run(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]));
    // auto, piped: off, unless CLICOLOR_FORCE asks for it; NO_COLOR wins over it.
    assert!(!run(&[], &[]));
    assert!(!run(&["--color", "auto"], &[("NO_COLOR", "1")]));
    assert!(run(&["--color", "auto"], &[("CLICOLOR_FORCE", "1")]));
    assert!(!run(&[], &[("CLICOLOR_FORCE", "0")]));
    assert!(!run(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
    // Only text is ever coloured.
    assert!(!run(&["--to", "events", "--color", "always"], &[]));
}

#[test]
fn a_closed_output_pipe_ends_the_run_quietly() {
    // Enough input that cstream is still writing when the reader goes away.
    let path = scratch("head-input.jsonl");
    let mut input = lines(&[INIT]);
    for i in 0..60_000 {
        input.push_str(&format!(
            "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"token {i} \"}}]}},\"session_id\":\"s1\",\"timestamp_ms\":{}}}\n",
            1770000000000u64 + i
        ));
    }
    std::fs::write(&path, input).unwrap();
    for format in ["events", "text"] {
        let mut child = std_cstream()
            .args(["--to", format, path.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        drop(out); // `| head -1`
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {err}");
        assert_eq!(err, "", "{format}");
    }
}

#[test]
fn a_huge_single_line() {
    // 20 MB of assistant text in one line, with escapes along the way; the
    // result repeats it and adds a tail, which must be emitted once.
    let chunk = "lorem \\\"ipsum\\\" dolor\\n";
    let text: String = chunk.repeat(20 * 1024 * 1024 / chunk.len());
    let path = scratch("huge-line.jsonl");
    let input = lines(&[
        INIT,
        &format!(
            "{{\"type\":\"assistant\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}},\"session_id\":\"s1\"}}"
        ),
        &format!(
            "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"{text} (end)\",\"session_id\":\"s1\"}}"
        ),
    ]);
    assert!(input.len() > 40 * 1024 * 1024);
    std::fs::write(&path, &input).unwrap();
    let out = cstream()
        .args(["--to", "events", path.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // cstream escapes exactly as the input did, so the expected bytes are known.
    let want = format!(
        "{{\"type\":\"session_started\",\"sessionId\":\"s1\",\"dialect\":\"cursor\",\"schemaVersion\":1,\"model\":\"Auto\",\"cwd\":\"/w\",\"permissionMode\":\"default\"}}\n\
         {{\"type\":\"text_delta\",\"sessionId\":\"s1\",\"text\":\"{text}\"}}\n\
         {{\"type\":\"text_delta\",\"sessionId\":\"s1\",\"text\":\" (end)\"}}\n\
         {{\"type\":\"result\",\"sessionId\":\"s1\",\"ok\":true,\"text\":\"{text} (end)\"}}\n"
    );
    // Not assert_eq: a 40 MB diff helps nobody.
    assert!(
        out.stdout.len() == want.len(),
        "{} bytes, want {}",
        out.stdout.len(),
        want.len()
    );
    assert!(out.stdout == want.as_bytes(), "output differs");
}

// ------------------------------------------------------------ streaming

/// Spawn cstream on pipes; a thread forwards each output line to a channel.
fn spawn_streaming(args: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = std_cstream()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

#[test]
fn each_line_is_output_before_the_next_is_read() {
    let (mut child, rx) = spawn_streaming(&["--to", "events"]);
    let mut stdin = child.stdin.take().unwrap();
    for (line, want) in [
        (INIT, "session_started"),
        (DELTA, "text_delta"),
        (START, "tool_call_started"),
    ] {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        // The next line is written only after this one's output arrived.
        let got = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no output for {want} before the next input: {e}"));
        assert!(got.starts_with(&format!("{{\"type\":\"{want}\"")), "{got}");
    }
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(
        rest.len(),
        1,
        "the open call is cancelled at the end: {rest:?}"
    );
    assert!(rest[0].contains("\"cancelled\":true"));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A pipe joined mid-run (`tail -f run.jsonl | cstream`) has no init line:
/// each event still comes out before the next line is written, under the
/// session id its lines carry, with `--from` as with detection.
#[test]
fn a_stream_joined_mid_run_is_live_without_an_init() {
    let fixture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/cursor/joined-mid-run.jsonl"),
    )
    .unwrap();
    let input: Vec<&str> = fixture.lines().collect();
    for from in [&["--from", "cursor"][..], &[]] {
        let mut args = vec!["--to", "events"];
        args.extend(from);
        let (mut child, rx) = spawn_streaming(&args);
        let mut stdin = child.stdin.take().unwrap();
        let mut seen: Vec<String> = Vec::new();
        // The tool call's start (line 7) tells the dialect when none is given.
        for (i, line) in input.iter().enumerate().take(8) {
            writeln!(stdin, "{line}").unwrap();
            stdin.flush().unwrap();
            if from.is_empty() && i < 6 {
                continue;
            }
            // The next line is written only after this one's event arrived
            // (each line of the fixture has its own timestamp).
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let ts = format!("\"ts\":{},", v["timestamp_ms"]);
            while !seen.last().is_some_and(|l| l.contains(&ts)) {
                let got = rx.recv_timeout(PATIENCE).unwrap_or_else(|e| {
                    panic!(
                        "{args:?}: no output for line {} before the next: {e}\n{seen:?}",
                        i + 1
                    )
                });
                seen.push(got);
            }
        }
        assert!(
            seen[0].starts_with(
                r#"{"type":"session_started","sessionId":"5f607182-93a4-4bb5-8c26-e7f8091a2b3c","dialect":"cursor","schemaVersion":1}"#
            ),
            "{args:?}: {seen:?}"
        );
        drop(stdin);
        let rest: Vec<String> = rx.iter().collect();
        assert!(rest.is_empty(), "{args:?}: {rest:?}");
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }
}

#[test]
fn the_text_transcript_streams_too() {
    let (mut child, rx) = spawn_streaming(&["--color", "never"]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INIT}").unwrap();
    stdin.flush().unwrap();
    let header = rx
        .recv_timeout(PATIENCE)
        .expect("header before the next input");
    assert!(header.starts_with("● cursor · Auto · /w"), "{header}");
    writeln!(stdin, "T: slow down").unwrap();
    stdin.flush().unwrap();
    let warn = rx
        .recv_timeout(PATIENCE)
        .expect("error line before the next input");
    assert_eq!(warn, "! stdout: T: slow down");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1));
}

// ------------------------------------------------------------ --stats

/// The `cstream: stats: …` line of a run's stderr, as `key=value` pairs in order.
fn stats_pairs(stderr: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("cstream: stats: "))
        .collect();
    assert_eq!(lines.len(), 1, "exactly one stats line: {stderr}");
    assert!(
        stderr.ends_with(&format!("{}\n", lines[0])),
        "the stats line is the last line: {stderr}"
    );
    lines[0]["cstream: stats: ".len()..]
        .split(' ')
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .unwrap_or_else(|| panic!("not key=value: {kv:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn stat(pairs: &[(String, String)], key: &str) -> u64 {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key} in {pairs:?}"))
        .1
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e}"))
}

#[test]
fn stats_line_format() {
    let out = cstream()
        .args(["--stats", "--to", "events", OK])
        .assert()
        .code(0)
        .get_output()
        .clone();
    let pairs = stats_pairs(&String::from_utf8(out.stderr).unwrap());
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    // Fixed keys first, in this order; then event types; elapsed last.
    assert_eq!(
        keys[..8],
        [
            "lines",
            "bytes_in",
            "bytes_out",
            "skipped",
            "sessions",
            "failed",
            "incomplete",
            "events"
        ]
    );
    assert_eq!(*keys.last().unwrap(), "elapsed");
    let elapsed = &pairs.last().unwrap().1;
    let secs = elapsed.strip_suffix('s').expect("elapsed in seconds");
    assert!(
        secs.split_once('.').is_some_and(|(a, b)| !a.is_empty()
            && b.len() == 3
            && (a.to_owned() + b).bytes().all(|c| c.is_ascii_digit())),
        "elapsed={elapsed}"
    );
    for (k, v) in &pairs[..pairs.len() - 1] {
        assert!(
            k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{k}"
        );
        assert!(v.parse::<u64>().is_ok(), "{k}={v}");
    }
}

#[test]
fn stats_count_what_the_run_read_and_wrote() {
    // Bad lines, two files (one of them empty: a session without a result),
    // a failed session.
    let files = [GARBAGE, FAILED, "fixtures/cursor/empty.jsonl"];
    let out = cstream()
        .args(["--stats", "--to", "events"])
        .args(files)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let pairs = stats_pairs(&String::from_utf8(out.stderr).unwrap());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let input: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect();
    let bytes_in: usize = input.iter().map(Vec::len).sum();
    // Physical lines, a last line without a newline included.
    let lines: usize = input
        .iter()
        .map(|b| {
            b.iter().filter(|&&c| c == b'\n').count()
                + usize::from(b.last().is_some_and(|&c| c != b'\n'))
        })
        .sum();
    assert_eq!(stat(&pairs, "bytes_in"), bytes_in as u64);
    assert_eq!(stat(&pairs, "lines"), lines as u64);
    assert_eq!(stat(&pairs, "bytes_out"), out.stdout.len() as u64);
    assert_eq!(stat(&pairs, "skipped"), 4, "garbage-lines has 4 bad lines");
    assert_eq!(stat(&pairs, "sessions"), 3);
    assert_eq!(stat(&pairs, "failed"), 1);
    assert_eq!(stat(&pairs, "incomplete"), 1);
    // Events by type are exactly what --to events wrote.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut by_type: Vec<(String, u64)> = Vec::new();
    for l in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let t = v["type"].as_str().unwrap().to_owned();
        match by_type.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => by_type.push((t, 1)),
        }
    }
    assert_eq!(stat(&pairs, "events"), stdout.lines().count() as u64);
    for (t, n) in &by_type {
        assert_eq!(stat(&pairs, t), *n, "{t}");
    }
    // …and no other type is listed.
    let listed = pairs.len() - 9 - usize::from(pairs.iter().any(|(k, _)| *k == "not_understood"));
    assert_eq!(listed, by_type.len(), "{pairs:?}");
}

#[test]
fn stats_in_every_format_and_on_standard_input() {
    for to in crate::common::to_values() {
        let out = cstream()
            .args(["--stats", "--to", to])
            .write_stdin(lines(&[INIT, DELTA, START, RESULT]))
            .assert()
            .code(0)
            .get_output()
            .clone();
        let pairs = stats_pairs(&String::from_utf8(out.stderr).unwrap());
        assert_eq!(stat(&pairs, "lines"), 4, "{to}");
        assert_eq!(stat(&pairs, "bytes_out"), out.stdout.len() as u64, "{to}");
        assert_eq!(stat(&pairs, "sessions"), 1, "{to}");
        assert_eq!(stat(&pairs, "text_delta"), 1, "{to}");
        // The open call is closed (cancelled) when the result arrives.
        assert_eq!(stat(&pairs, "tool_call_completed"), 1, "{to}");
    }
}

#[test]
fn no_stats_without_the_flag() {
    cstream()
        .args(["--to", "events", OK])
        .assert()
        .code(0)
        .stderr("");
    cstream()
        .args(["--to", "events", GARBAGE])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("stats").not());
}

#[test]
fn stats_after_a_closed_output_pipe() {
    // The reader goes away early: the run still says what it did until then.
    let mut big = String::from(INIT);
    big.push('\n');
    for _ in 0..20_000 {
        big.push_str(DELTA);
        big.push('\n');
    }
    let mut child = std_cstream()
        .args(["--stats", "--to", "events"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(big.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    stats_pairs(&stderr);
}

// ------------------------------------------------------------ help in a terminal

/// `--help` as a user sees it in an 80-column terminal: a real pty (util-linux
/// `script`, present wherever util-linux is, with `stty` setting the size),
/// since clap wraps help to the terminal's width.
fn help_in_a_terminal(cols: u16) -> String {
    let out = StdCommand::new("script")
        .args(["-qec"])
        .arg(format!("stty cols {cols} rows 50; exec '{BIN}' --help"))
        .arg("/dev/null")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("util-linux script(1) runs the help in a pty");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n")
}

/// Invariant: at 80 columns every example command of `--help` is on one
/// line, whole, and no line of the examples, exit statuses or environment
/// is wrapped.
#[test]
fn help_examples_fit_an_80_column_terminal() {
    let help = help_in_a_terminal(80);
    let epilogue = help
        .split("Examples:\n")
        .nth(1)
        .expect("an Examples section");
    let mut commands = 0;
    for line in epilogue.lines() {
        assert!(
            line.chars().count() <= 80,
            "wider than 80 columns: {line:?}"
        );
        if let Some(cmd) = line.strip_prefix("    ") {
            // A command line: it ends where the command ends.
            assert!(
                cmd.contains("cstream") && !cmd.ends_with('\\') && !cmd.ends_with('|'),
                "a broken example: {line:?}"
            );
            commands += 1;
        } else {
            // Descriptions and tables are indented by two, never more (a
            // wrapped line would be).
            assert!(
                line.is_empty() || !line.starts_with("   "),
                "a wrapped line: {line:?}"
            );
        }
    }
    assert!(commands >= 5, "{commands} examples in\n{help}");
    assert!(epilogue.contains("Exit status:\n") && epilogue.contains("Environment:\n"));
}
