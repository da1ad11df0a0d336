//! Shared test helpers: run the built cstream binary with a command line,
//! and the table of output formats every fixture is snapshotted in.
#![allow(dead_code)]

pub mod wellformed;

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Every output format with the flags that select it. Snapshot, round-trip
/// and invariant tests run each fixture through every row; a new format adds
/// its row here.
pub const FORMATS: &[(&str, &[&str])] = &[
    ("events", &["--to", "events"]),
    ("events_coalesced", &["--to", "events", "--coalesce"]),
    ("text", &["--to", "text", "--color", "never"]),
    ("text_color", &["--to", "text", "--color", "always"]),
    (
        "openai_sse",
        &["--to", "openai-sse", "--created", "1700000000"],
    ),
    (
        "openai_sse_calls",
        &[
            "--to",
            "openai-sse",
            "--created",
            "1700000000",
            "--tool-calls",
            "calls",
            "--include-usage",
        ],
    ),
    (
        "openai_json",
        &["--to", "openai-json", "--created", "1700000000"],
    ),
    (
        "openai_json_calls",
        &[
            "--to",
            "openai-json",
            "-c",
            "--created",
            "1700000000",
            "--tool-calls",
            "calls",
        ],
    ),
    (
        "openai_responses_calls",
        &[
            "--to",
            "openai-responses",
            "--created",
            "1700000000",
            "--tool-calls",
            "calls",
        ],
    ),
    (
        "openai_responses_json",
        &["--to", "openai-responses-json", "--created", "1700000000"],
    ),
    (
        "anthropic_sse",
        &["--to", "anthropic-sse", "--created", "1700000000"],
    ),
    (
        "anthropic_json_calls",
        &[
            "--to",
            "anthropic-json",
            "-c",
            "--created",
            "1700000000",
            "--tool-calls",
            "calls",
        ],
    ),
    (
        "documents",
        &["--to", "documents", "--created", "1700000000"],
    ),
    (
        "documents_compact",
        &["--to", "documents", "-c", "--created", "1700000000"],
    ),
    (
        "documents_sse",
        &["--to", "documents-sse", "--created", "1700000000"],
    ),
    ("markdown", &["--to", "markdown"]),
    ("html", &["--to", "html"]),
    ("messages", &["--to", "messages"]),
    ("rows", &["--to", "rows"]),
    (
        "otlp_json",
        &["--to", "otlp-json", "--created", "1700000000"],
    ),
    ("usage", &["--to", "usage"]),
    ("atif", &["--to", "atif"]),
];

/// Every `--to` value, from the library's one list of formats.
pub fn to_values() -> impl Iterator<Item = &'static str> {
    cstream::Format::ALL.into_iter().map(|f| f.name())
}

/// Every `--from` value: `auto`, then the library's one list of dialects.
pub fn from_values() -> Vec<&'static str> {
    std::iter::once("auto")
        .chain(cstream::Dialect::ALL.into_iter().map(|d| d.name()))
        .collect()
}

/// The `--to` value and colour of a [`FORMATS`] row.
pub fn format_of(args: &[&str]) -> (&'static str, bool) {
    let to = args
        .iter()
        .position(|a| *a == "--to")
        .map(|i| args[i + 1])
        .expect("every row names its format");
    let name = to_values().find(|n| *n == to).expect("a known format");
    (name, args.contains(&"always"))
}

/// What a run produced.
#[derive(Debug)]
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub code: u8,
}

impl Run {
    pub fn out(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("output is UTF-8")
    }
}

/// A writer a test can look into while the run is going on.
#[derive(Clone, Default)]
pub struct Shared(pub Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The environment variables the binary's colour and terminal decisions
/// read (and a few its dependencies do): removed, so that a test's output
/// does not depend on the shell that runs `cargo test`.
pub const TERMINAL_ENV: [&str; 6] = [
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "TERM",
    "COLUMNS",
    "LINES",
];

/// The built binary, with [`TERMINAL_ENV`] removed.
pub fn command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cstream"));
    for v in TERMINAL_ENV {
        c.env_remove(v);
    }
    c
}

/// Run the cstream binary: `args` as on the command line, `stdin` as
/// standard input, standard output and error pipes (no terminal), no
/// colour variables set.
pub fn cstream(args: &[&str], stdin: &[u8]) -> Run {
    use std::process::Stdio;
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the cstream binary runs");
    let mut input = child.stdin.take().expect("a piped stdin");
    let output = std::thread::scope(|s| {
        // Written while the output is read: a large input would otherwise
        // fill both pipes and stop both processes.
        s.spawn(move || {
            // The binary may stop reading early (a usage error): its
            // exit status says so.
            let _ = input.write_all(stdin);
        });
        child.wait_with_output().expect("the cstream binary ends")
    });
    let code = output
        .status
        .code()
        .unwrap_or_else(|| panic!("cstream {args:?} was killed: {}", output.status));
    Run {
        stdout: output.stdout,
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        code: u8::try_from(code).expect("an exit status fits a byte"),
    }
}

/// Run cstream on a file with extra arguments.
pub fn cstream_file(args: &[&str], file: &Path) -> Run {
    let mut all: Vec<&str> = args.to_vec();
    let f = file.to_str().expect("UTF-8 path");
    all.push(f);
    cstream(&all, b"")
}

/// The repository's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The `--from` name of the dialect a fixture is written in, from its
/// folder (`fixtures/<dialect>/`); `None` for the other folders.
pub fn fixture_dialect(path: &Path) -> Option<&'static str> {
    let folder = path.parent()?.file_name()?.to_str()?;
    cstream::Dialect::ALL
        .into_iter()
        .map(|d| d.name())
        .find(|n| *n == folder)
}

/// Every fixture file (`*.jsonl`, `*.json`), sorted; but the files of an
/// OpenCode storage directory ([`storage_fixtures`]), which are no
/// sessions one by one.
pub fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(&fixtures_dir(), &mut out);
    out.sort();
    out
}

/// Whether `dir` is an OpenCode storage directory (pre-1.2 sessions: one
/// JSON file per session, message and part), read as a whole.
pub fn is_storage_tree(dir: &Path) -> bool {
    dir.join("session").is_dir() && dir.join("message").is_dir()
}

/// Whether `path` lies inside an OpenCode storage directory.
pub fn in_storage_tree(path: &Path) -> bool {
    path.ancestors().skip(1).any(is_storage_tree)
}

/// The OpenCode storage directories among the fixtures, sorted.
pub fn storage_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(fixtures_dir().join("opencode")) else {
        return out;
    };
    for e in rd.flatten() {
        let tree = e.path().join("storage");
        if is_storage_tree(&tree) {
            out.push(tree);
        }
    }
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if is_storage_tree(&p) {
                continue;
            }
            walk(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "json")
        ) {
            out.push(p);
        }
    }
}

/// Extra flags for a fixture, from a sibling `<name>.args` file (one per line).
pub fn fixture_args(path: &Path) -> Vec<String> {
    let args = path.with_extension("args");
    std::fs::read_to_string(args)
        .map(|s| {
            s.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Run a fixture in one format (with the fixture's own extra flags).
/// What converting `path` with `format_args` (and the fixture's own
/// `.args`) writes, computed in-process through the public API
/// (`cstream::convert_file`, which reads a file as the command line reads a
/// file argument). For the sweeps that compare outputs of every fixture in
/// every format, thousands of runs: starting the binary for each costs
/// about 5 ms. The snapshots (`snapshots.rs`) run the binary, so the
/// command line's own output is pinned there.
pub fn convert_fixture(path: &Path, format_args: &[&str]) -> Vec<u8> {
    let extra = fixture_args(path);
    let mut args: Vec<&str> = format_args.to_vec();
    args.extend(extra.iter().map(String::as_str));
    let mut out = Vec::new();
    cstream::convert_file(path, &mut out, &config(&args), &mut |_| {}).expect("writing to a Vec");
    out
}

/// What converting `stdin` with `args` writes, in-process: standard input
/// read as the binary reads a pipe (live, [`cstream::convert`]).
pub fn convert_stdin(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    cstream::convert(stdin, &mut out, &config(args)).expect("writing to a Vec");
    out
}

pub fn run_fixture(path: &Path, format_args: &[&str]) -> Run {
    let extra = fixture_args(path);
    let mut args: Vec<&str> = format_args.to_vec();
    args.extend(extra.iter().map(String::as_str));
    cstream_file(&args, path)
}

/// Make terminal escapes readable in snapshots.
pub fn show_escapes(s: &str) -> String {
    s.replace('\u{1b}', "\\e")
}

/// The real captures in `../shared/corpus/<dialect>/` (the shared folder that
/// sits beside a checkout; it is not part of the repository).
///
/// A fresh clone on a developer's machine may not have it, and then the corpus
/// checks are skipped with a note. Where it is expected (`CI` is set, as
/// `.ci/run` does, or `CSTREAM_CORPUS_REQUIRED`), a missing folder fails the test
/// instead of skipping it. A dialect folder that is missing while the corpus
/// is there fails too: the captures were moved, and the checks would
/// otherwise pass on nothing.
pub fn corpus(dialect: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !root.is_dir() {
        let expected = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
            || std::env::var_os("CSTREAM_CORPUS_REQUIRED").is_some();
        assert!(
            !expected,
            "{} is missing, but the corpus is expected here (CI or CSTREAM_CORPUS_REQUIRED is set)",
            root.display()
        );
        eprintln!("{} not found: corpus checks skipped", root.display());
        return Vec::new();
    }
    let dir = root.join(dialect);
    assert!(dir.is_dir(), "{} is missing from the corpus", dir.display());
    let mut out = Vec::new();
    walk(&dir, &mut out);
    out.sort();
    out
}

/// The events a run wrote, parsed.
pub fn events(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {e}: {l}")))
        .collect()
}

/// One session's answer as `--to events` carries it: its text split into
/// turns, and its result event.
#[derive(Debug, Default, Clone)]
pub struct Answer {
    pub session_id: String,
    /// The text events' texts, one string per turn: a turn ends at anything
    /// that interrupts the answer (a tool call, thinking, a prompt, the end
    /// of a turn, an error). Usage and progress do not.
    pub turns: Vec<String>,
    pub result: Option<serde_json::Value>,
}

impl Answer {
    /// The text as one string, the way the chat formats write it: the turns
    /// joined by a blank line (no newline added where the text already
    /// ends with enough).
    pub fn chat_text(&self) -> String {
        join_paragraphs(self.turns.iter().map(String::as_str))
    }
}

/// Texts joined so that a blank line separates each from the next.
pub fn join_paragraphs<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for p in parts.into_iter().filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            let nl = out.bytes().rev().take_while(|&b| b == b'\n').count();
            out.push_str(&"\n\n"[nl.min(2)..]);
        }
        out.push_str(p);
    }
    out
}

/// Per session, its answer's turns and its result, from `--to events` output.
pub fn answers(events_out: &str) -> Vec<Answer> {
    let mut out: Vec<Answer> = Vec::new();
    let mut brk = false;
    for e in events(events_out) {
        let sid = e["sessionId"].as_str().expect("sessionId").to_owned();
        let ty = e["type"].as_str().expect("type");
        if out.last().is_none_or(|a| a.session_id != sid) || ty == "session_started" {
            out.push(Answer {
                session_id: sid,
                ..Answer::default()
            });
            brk = false;
        }
        let cur = out.last_mut().unwrap();
        match ty {
            "text_delta" | "assistant_message" => {
                let t = e["text"].as_str().expect("text");
                if cur.turns.is_empty() || brk {
                    cur.turns.push(String::new());
                }
                brk = false;
                cur.turns.last_mut().unwrap().push_str(t);
            }
            "result" => cur.result = Some(e.clone()),
            "tool_call_started"
            | "tool_call_completed"
            | "tool_call"
            | "thinking"
            | "thinking_delta"
            | "thinking_completed"
            | "user_message"
            | "turn_ended"
            | "error" => brk = true,
            _ => {}
        }
    }
    out
}

/// The corpus folders of live stream captures, one per agent.
pub const LIVE_CORPUS: [&str; 6] = [
    "cursor-agent",
    "claude-code",
    "codex",
    "gemini",
    "acp",
    "cursor-sdk",
];

/// Every live stream capture in the corpus, folder by folder.
pub fn live_corpus() -> Vec<PathBuf> {
    LIVE_CORPUS.into_iter().flat_map(corpus).collect()
}

/// Input lines joined into a stream, each ending with a newline.
pub fn lines(ls: &[&str]) -> String {
    ls.iter().map(|l| format!("{l}\n")).collect()
}

/// Per session of a fixture: the answer text its events carry, as a chat
/// format writes it ([`Answer::chat_text`]: the turns as paragraphs), and
/// whether its result was ok — what a chat format's client must rebuild.
pub fn session_texts(path: &Path) -> Vec<(String, bool)> {
    answers(&run_fixture(path, &["--to", "events"]).out())
        .into_iter()
        .map(|a| {
            let ok = a.result.as_ref().is_some_and(|r| r["ok"] == true);
            (a.chat_text(), ok)
        })
        .collect()
}

/// The library [`cstream::Config`] a command line asks for, for the tests
/// that feed the library a reader of their own (read sizes, pauses), built
/// with the public builder as an embedder would: `--to`, `--from`,
/// `--color`, and the flags of [`FORMATS`] and the fixtures' `.args` files.
/// A flag it does not know fails the test, so a test cannot quietly run
/// with less than it asked for. Output as to a pipe (no terminal).
pub fn config(args: &[&str]) -> cstream::Config {
    use cstream::{CoalesceMode, Config, Dialect, Format, ToolCallMode};
    let mut c = Config::new(Format::Text);
    let mut it = args.iter().copied();
    let value = |flag: &str, it: &mut dyn Iterator<Item = &str>| -> String {
        it.next()
            .unwrap_or_else(|| panic!("{flag} needs a value"))
            .to_owned()
    };
    // The format is set first: the other setters keep it.
    if let Some(i) = args.iter().position(|a| *a == "--to") {
        c = Config::new(Format::from_name(args[i + 1]).expect("a known --to"));
    }
    while let Some(a) = it.next() {
        c = match a {
            "--to" => {
                value(a, &mut it);
                c
            }
            "--from" => match value(a, &mut it).as_str() {
                "auto" => c,
                d => c.from(Dialect::from_name(d).expect("a known --from")),
            },
            "--color" => match value(a, &mut it).as_str() {
                "always" => c.color(true),
                // Not a terminal: `auto` does not colour.
                "never" | "auto" => c.color(false),
                other => panic!("--color {other}"),
            },
            "--coalesce" | "--coalesce=whole" => c.coalesce(CoalesceMode::Whole),
            "--coalesce=burst" => c.coalesce(CoalesceMode::Burst),
            "--created" => c.created(value(a, &mut it).parse().expect("--created N")),
            "--tool-calls" => c.tool_calls(match value(a, &mut it).as_str() {
                "reasoning" => ToolCallMode::Reasoning,
                "content" => ToolCallMode::Content,
                "omit" => ToolCallMode::Omit,
                "calls" => ToolCallMode::Calls,
                other => panic!("--tool-calls {other}"),
            }),
            "--include-usage" => c.include_usage(true),
            "-c" | "--compact" => c.compact(true),
            "--thinking" => c.thinking(true),
            "--line-buffered" => c.line_buffered(true),
            "--no-dedupe" => c.dedupe(false),
            "--keep-images" => c.keep_images(true),
            "--truncate-shell" => {
                c.truncate_shell(cstream::parse_size(&value(a, &mut it)).expect("a size"))
            }
            "--redact" => c.redact(true),
            "--redact-pattern" => c
                .redact_patterns(vec![value(a, &mut it)])
                .expect("a valid pattern"),
            other => panic!("common::config does not know {other}"),
        };
    }
    c
}

/// A cursor-agent session's first lines for [`live`]: its init…
pub const LIVE_INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","apiKeySource":"login","model":"m","cwd":"/x","permissionMode":"default"}"#;
/// …and one thinking delta, whose text is `hmm`.
pub const LIVE_THINKING: &str =
    r#"{"type":"thinking","subtype":"delta","text":"hmm","session_id":"s1","timestamp_ms":1}"#;

/// The real binary with `args`, its stdin fed [`LIVE_INIT`] and
/// [`LIVE_THINKING`] and left open, as a live stream's is; what it writes
/// to stdout comes through the receiver as it is read (a thread reads
/// it), so a test can wait for output while the input is still open.
pub fn live(
    args: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<Vec<u8>>,
) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cstream"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{LIVE_INIT}\n{LIVE_THINKING}").unwrap();
    stdin.flush().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}
