//! Hostile input (docs/ARCHITECTURE.md#error-model): no input may make
//! cstream panic, hang, overflow its stack or grow without bound, and a
//! cut-off stream still gives well-formed output. Big inputs are generated here; the tests assert
//! sizes and validity, never time.
//!
//! Every run goes through every output format (the `FORMATS` table) and is
//! checked with `common::wellformed`, the same checker the fuzz target uses.

use crate::common;

use std::thread;

use common::{FORMATS, Run, cstream, events, format_of, wellformed};
use serde_json::{Value, json};

/// Run `input` with `extra` flags in every format, check each output is
/// well formed and hand it to `f` (one output at a time: some are big).
fn each_format(extra: &[&str], input: &[u8], f: impl FnMut(&'static str, Run)) {
    rows(FORMATS.iter(), extra, input, f)
}

/// [`each_format`] for each format's first row alone, without the variant
/// rows (for the biggest inputs, to keep `cargo test` quick).
fn each_base_format(extra: &[&str], input: &[u8], f: impl FnMut(&'static str, Run)) {
    let mut seen = Vec::new();
    let first_rows = FORMATS.iter().filter(|(_, args)| {
        let to = format_of(args).0;
        let first = !seen.contains(&to);
        seen.push(to);
        first
    });
    rows(first_rows, extra, input, f)
}

fn rows<'r>(
    rows: impl Iterator<Item = &'r (&'static str, &'static [&'static str])>,
    extra: &[&str],
    input: &[u8],
    mut f: impl FnMut(&'static str, Run),
) {
    for (name, args) in rows {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        let run = cstream(&a, input);
        let (to, color) = format_of(args);
        if let Err(e) = wellformed::check(to, color, &run.stdout) {
            panic!("{name} {extra:?}: {e}");
        }
        assert!(run.code <= 3, "{name}: exit {}", run.code);
        f(name, run);
    }
}

/// [`each_format`], keeping the runs by row name.
fn every_format(extra: &[&str], input: &[u8]) -> Vec<(&'static str, Run)> {
    let mut runs = Vec::new();
    each_format(extra, input, |name, run| runs.push((name, run)));
    runs
}

/// Run `f` on a thread with a small stack (1 MiB, half a test thread's):
/// any recursion that grows with the input overflows it.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .expect("the run panicked (or overflowed its stack)")
}

fn init(sid: &str) -> String {
    json!({"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":sid,"model":"Auto","permissionMode":"default"}).to_string()
}

fn lines(ls: &[String]) -> Vec<u8> {
    let mut v = Vec::new();
    for l in ls {
        v.extend_from_slice(l.as_bytes());
        v.push(b'\n');
    }
    v
}

// ------------------------------------------------------------ huge lines

const BIG: usize = 64 * 1024 * 1024;

/// `len` bytes of text with a JSON escape every few bytes, as the JSON
/// string body (escaped) and as the text it stands for.
fn big_text(len: usize) -> (String, String) {
    let piece = "The quick brown fox jumps over the \\\"lazy\\\" dog; caf\\u00e9\\n";
    let plain = "The quick brown fox jumps over the \"lazy\" dog; café\n";
    let n = len / plain.len() + 1;
    (piece.repeat(n), plain.repeat(n))
}

/// One 64 MB assistant delta, then a result without text: every format
/// carries the whole text once.
#[test]
fn a_64_mb_text_delta_in_every_format() {
    let (json_body, text) = big_text(BIG);
    let input = format!(
        "{}\n{{\"type\":\"assistant\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{json_body}\"}}]}},\"session_id\":\"s\",\"timestamp_ms\":1770000000000}}\n\
         {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s\"}}\n",
        init("s")
    );
    drop(json_body);
    assert!(input.len() > BIG);
    each_base_format(&[], input.as_bytes(), |name, run| {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        // `usage` and `otlp-json` write figures, never the text: a row or
        // a trace of a few spans, whatever its size.
        if name == "usage" || name == "otlp_json" {
            assert!(
                run.stdout.len() < 4096,
                "{name}: {} bytes",
                run.stdout.len()
            );
            return;
        }
        assert!(
            run.stdout.len() > text.len(),
            "{name}: {} bytes out for {} bytes of text",
            run.stdout.len(),
            text.len()
        );
        // No format may write more than a few copies of the text. The
        // Responses stream repeats it by design: the delta, then
        // `output_text.done`, `content_part.done`, `output_item.done` and
        // the final response each carry it whole.
        let copies = if name.starts_with("openai_responses") {
            6
        } else {
            4
        };
        assert!(
            run.stdout.len() < copies * input.len(),
            "{name}: {} bytes out",
            run.stdout.len()
        );
        if name == "events" {
            let out = run.out();
            let evs = events(&out);
            let got: String = evs
                .iter()
                .filter(|e| e["type"] == "text_delta")
                .map(|e| e["text"].as_str().unwrap())
                .collect();
            assert!(got == text, "events: the text differs");
        }
    });
}

/// A shell call whose completed output is one 64 MB string, in every
/// format, and with `--truncate-shell`, which keeps its last bytes.
#[test]
fn a_64_mb_shell_output_in_every_format() {
    let (json_body, text) = big_text(BIG);
    let input = format!(
        "{}\n{}\n{{\"type\":\"tool_call\",\"subtype\":\"completed\",\"call_id\":\"c\",\"tool_call\":{{\"shellToolCall\":{{\"args\":{{\"command\":\"yes\"}},\"result\":{{\"success\":{{\"exitCode\":0,\"stdout\":\"{json_body}\",\"stderr\":\"\"}}}}}}}},\"session_id\":\"s\"}}\n\
         {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"\",\"session_id\":\"s\"}}\n",
        init("s"),
        json!({"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"yes"}}},"session_id":"s"}),
    );
    drop(json_body);
    each_base_format(&[], input.as_bytes(), |name, run| {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.stdout.len() < 4 * input.len(),
            "{name}: {} bytes out",
            run.stdout.len()
        );
        if name == "events" {
            let out = run.out();
            let done = events(&out)
                .into_iter()
                .find(|e| e["type"] == "tool_call_completed")
                .unwrap();
            assert!(done["output"].as_str() == Some(text.as_str()));
        }
    });
    each_base_format(
        &["--truncate-shell", "1K"],
        input.as_bytes(),
        |name, run| {
            assert_eq!(run.code, 0, "{name}: {}", run.stderr);
            assert!(
                run.stdout.len() < 64 * 1024,
                "{name} --truncate-shell 1K: {} bytes out",
                run.stdout.len()
            );
        },
    );
}

// ------------------------------------------------------------ nesting

const DEEP: usize = 200_000;

/// Inputs nested 200,000 deep, closed and unclosed, as whole lines, as
/// payloads the dialects copy verbatim, and inside a top-level array.
fn deep_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let arr = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let obj = |n| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    let shapes: Vec<(&'static str, String)> = vec![
        ("array", arr(DEEP)),
        ("object", obj(DEEP)),
        ("unclosed array", "[".repeat(DEEP)),
        ("unclosed object", "{\"a\":".repeat(DEEP)),
        (
            "cursor args",
            format!(
                "{{\"type\":\"tool_call\",\"subtype\":\"started\",\"call_id\":\"c\",\"tool_call\":{{\"shellToolCall\":{{\"args\":{}}}}},\"session_id\":\"s\"}}",
                arr(DEEP)
            ),
        ),
        (
            "cursor tool_call",
            format!(
                "{{\"type\":\"tool_call\",\"subtype\":\"completed\",\"call_id\":\"c\",\"tool_call\":{},\"session_id\":\"s\"}}",
                obj(DEEP)
            ),
        ),
        (
            "cursor message",
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"content\":{}}},\"session_id\":\"s\",\"timestamp_ms\":1}}",
                arr(DEEP)
            ),
        ),
        (
            "acp update",
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s\",\"update\":{{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c\",\"rawInput\":{}}}}}}}",
                obj(DEEP)
            ),
        ),
        (
            "events unknown",
            format!(
                "{{\"type\":\"unknown\",\"sessionId\":\"s\",\"raw\":{}}}",
                arr(DEEP)
            ),
        ),
        (
            "claude tool_use",
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{}}}]}},\"session_id\":\"s\"}}",
                obj(DEEP)
            ),
        ),
        ("array of deep", format!("[{},{}]", arr(DEEP), obj(DEEP))),
    ];
    shapes
        .into_iter()
        .map(|(n, s)| {
            (
                n,
                format!("{}\n{s}\n{}\n", init("s"), init("t")).into_bytes(),
            )
        })
        .collect()
}

#[test]
fn deep_nesting_never_overflows_the_stack() {
    small_stack(|| {
        for (shape, input) in deep_inputs() {
            for from in common::from_values() {
                each_format(&["--from", from], &input, |name, run| {
                    assert!(
                        run.code <= 1,
                        "{shape} --from {from} {name}: exit {}",
                        run.code
                    );
                    // Linear in the input (pretty layouts indent only so deep).
                    assert!(
                        run.stdout.len() < 8 * input.len(),
                        "{shape} --from {from} {name}: {} bytes out",
                        run.stdout.len()
                    );
                });
            }
        }
    });
}

// ------------------------------------------------------------ odd JSON

fn delta(sid: &str, text_json: &str) -> String {
    format!(
        "{{\"type\":\"assistant\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{text_json}}}]}},\"session_id\":\"{sid}\",\"timestamp_ms\":1770000000000}}"
    )
}

fn result_line(sid: &str, text_json: &str) -> String {
    format!(
        "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":{text_json},\"session_id\":\"{sid}\"}}"
    )
}

fn text_deltas(run: &Run) -> String {
    run.out()
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"text_delta\""))
        .map(|l| {
            let e: Value = serde_json::from_str(l).unwrap();
            e["text"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Raw NUL bytes after the first block (the binary check looks no
/// further, as ripgrep's does) are bad lines like any other.
#[test]
fn nul_bytes_raw_and_escaped() {
    let pad = format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}},\"session_id\":\"s\"}}",
        "p".repeat(cstream::limits::BINARY_SNIFF_BYTES)
    );
    let input = [
        init("s").into_bytes(),
        pad.into_bytes(),
        delta("s", r#""a\u0000b""#).into_bytes(),
        b"{\"type\":\"assistant\",\"x\":\"\0\"}".to_vec(),
        b"\0\0\0".to_vec(),
        b"{\"type\":\0\"result\"}".to_vec(),
        result_line("s", r#""a\u0000b""#).into_bytes(),
    ]
    .join(&b'\n');
    let runs = every_format(&[], &input);
    for (name, run) in &runs {
        // Raw NULs are not JSON: three bad lines, each an error event.
        assert_eq!(run.code, 1, "{name}");
        assert!(!run.stdout.contains(&0), "{name}: a raw NUL in the output");
    }
    let ev = &runs.iter().find(|(n, _)| *n == "events").unwrap().1;
    assert_eq!(text_deltas(ev), "a\0b");
    let errors = events(&ev.out())
        .iter()
        .filter(|e| e["type"] == "error")
        .count();
    assert_eq!(errors, 3);
    let text = &runs.iter().find(|(n, _)| *n == "text").unwrap().1;
    assert!(text.out().contains("a\\u{0}b"), "{}", text.out());
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    let input = lines(&[
        init("s"),
        delta("s", r#""cut \ud83d""#),
        delta("s", r#"" \ude00 and \uD800\uD83D\uDE00 ok""#),
        result_line("s", r#""cut \ud83d \ude00 and \uD800\uD83D\uDE00 ok""#),
    ]);
    let runs = every_format(&[], &input);
    let want = "cut \u{fffd} \u{fffd} and \u{fffd}\u{1f600} ok";
    for (name, run) in &runs {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("lone UTF-16 surrogate escape replaced with U+FFFD"),
            "{name}: {}",
            run.stderr
        );
    }
    let ev = &runs.iter().find(|(n, _)| *n == "events").unwrap().1;
    assert_eq!(text_deltas(ev), want);
    let res = events(&ev.out())
        .into_iter()
        .find(|e| e["type"] == "result")
        .unwrap();
    assert_eq!(res["text"], want);
}

#[test]
fn numbers_beyond_a_double() {
    let input = lines(&[
        init("s"),
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s","timestamp_ms":1e999}"#.to_owned(),
        json!({"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"x"}}},"session_id":"s"}).to_string()
            .replace("\"command\":\"x\"", "\"command\":\"x\",\"timeout\":-1E+400"),
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"hi\",\"duration_ms\":1e999,\"usage\":{\"inputTokens\":1e999,\"outputTokens\":2},\"session_id\":\"s\"}".to_owned(),
    ]);
    let runs = every_format(&[], &input);
    for (name, run) in &runs {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(run.stderr.contains("number out of range"), "{name}");
        // Fields cstream reads are null; a payload it copies is copied
        // (valid JSON by the grammar, though a double cannot hold it).
        assert!(!run.out().contains("e999"), "{name}");
    }
    let ev = &runs.iter().find(|(n, _)| *n == "events").unwrap().1;
    assert!(ev.out().contains("\"timeout\":-1E+400"), "{}", ev.out());
    let ev = &runs.iter().find(|(n, _)| *n == "events").unwrap().1;
    assert_eq!(text_deltas(ev), "hi");
}

#[test]
fn duplicate_keys() {
    let input = lines(&[
        init("s"),
        r#"{"type":"assistant","type":"result","message":{"content":[{"type":"text","text":"x"}]},"session_id":"s"}"#.to_owned(),
        r#"{"type":"result","subtype":"success","subtype":"error","is_error":false,"is_error":true,"result":"a","result":"b","session_id":"s"}"#.to_owned(),
        r#"{"type":"tool_call","subtype":"started","call_id":"a","call_id":"b","tool_call":{"shellToolCall":{"args":{"command":"x"}},"shellToolCall":{}},"session_id":"s"}"#.to_owned(),
    ]);
    for from in common::from_values() {
        for (name, run) in every_format(&["--from", from], &input) {
            // Kept (as unknown events or read one way), never "not JSON".
            assert!(run.code == 0, "--from {from} {name}: {}", run.stderr);
        }
    }
}

// ------------------------------------------------------------ cumulative output

const SNAPSHOTS: usize = 300;

/// The generated output and its cumulative snapshots, each a line of `so_far`.
fn growing() -> (String, Vec<String>) {
    let mut so_far = String::new();
    let mut snaps = Vec::new();
    for i in 0..SNAPSHOTS {
        so_far.push_str(&format!("line {i:05} of a long build log\n"));
        snaps.push(so_far.clone());
    }
    (so_far, snaps)
}

/// Quadratic input (every update re-sends the whole output so far) must
/// give output linear in the real output, in every format.
fn check_linear(input: &[u8], real: usize, what: &str) {
    assert!(input.len() > 100 * real, "{what}: the input is quadratic");
    for (name, run) in every_format(&[], input) {
        assert_eq!(run.code, 0, "{what} {name}: {}", run.stderr);
        assert!(
            run.stdout.len() < 4 * real + 200 * SNAPSHOTS + 64 * 1024,
            "{what} {name}: {} bytes out for {real} bytes of real output",
            run.stdout.len()
        );
    }
}

#[test]
fn cumulative_acp_snapshots_stay_linear() {
    let (so_far, snaps) = growing();
    let mut ls = vec![json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"make","kind":"execute","status":"in_progress","rawInput":{"command":"make"}}}}).to_string()];
    for s in &snaps {
        ls.push(json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":s}}]}}}).to_string());
    }
    ls.push(json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","rawOutput":{"exit_code":0}}}}).to_string());
    ls.push(json!({"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}).to_string());
    check_linear(&lines(&ls), so_far.len(), "acp");
}

#[test]
fn cumulative_cursor_progress_stays_linear() {
    let (so_far, snaps) = growing();
    let call = |sub: &str, out: Option<&str>| {
        let mut tc = json!({"shellToolCall":{"args":{"command":"make"}}});
        if let Some(o) = out {
            tc["shellToolCall"]["result"] = json!({"success":{"command":"make","exitCode":0,"stdout":o,"stderr":"","interleavedOutput":o}});
        }
        json!({"type":"tool_call","subtype":sub,"call_id":"c","tool_call":tc,"session_id":"s","timestamp_ms":1770000000000u64}).to_string()
    };
    let mut ls = vec![init("s"), call("started", None)];
    for s in &snaps {
        ls.push(call("progress", Some(s)));
    }
    ls.push(call("completed", Some(&so_far)));
    ls.push(result_line("s", "\"done\""));
    let input = lines(&ls);
    check_linear(&input, so_far.len(), "cursor");
    // The snapshots become the output's deltas, once each.
    let ev = cstream(&["--to", "events"], &input);
    let streamed: String = events(&ev.out())
        .iter()
        .filter(|e| e["type"] == "shell_output_delta")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(streamed, so_far);
}

// ------------------------------------------------------------ garbage

/// xorshift64*: deterministic bytes without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, n: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let r = self.next();
                if alphabet.is_empty() {
                    (r >> 32) as u8
                } else {
                    alphabet[(r >> 32) as usize % alphabet.len()]
                }
            })
            .collect()
    }
}

#[test]
fn binary_garbage() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let inputs = [
        rng.bytes(256 * 1024, &[]),
        // JSON-ish: brackets, quotes, escapes and newlines in a mess.
        rng.bytes(
            256 * 1024,
            b"{}[]\":,\\\n\r u0123456789abcdefnrt\x00\xff\xc3\xa9",
        ),
    ];
    for input in &inputs {
        // Without NULs, or the binary check would skip it all unread.
        let input: Vec<u8> = input.iter().map(|&b| b.max(1)).collect();
        for from in common::from_values() {
            for (name, run) in every_format(&["--from", from], &input) {
                assert!(run.code <= 1, "--from {from} {name}: exit {}", run.code);
            }
        }
    }
}

/// Invariant: an input with a NUL byte in its first block is binary: it is
/// skipped with one warning naming the file and line, nothing of it is
/// read (every format writes what it writes for an empty input), the exit
/// status is 1, and the run goes on.
#[test]
fn a_binary_input_is_skipped_with_a_warning() {
    let mut binary = lines(&[init("b")]);
    binary.extend_from_slice(b"PK\x03\x04\x00\x00");
    binary.extend(Rng(7).bytes(3 * cstream::limits::BINARY_SNIFF_BYTES, &[]));
    let empty = every_format(&[], b"");
    for ((name, run), (_, nothing)) in every_format(&[], &binary).iter().zip(&empty) {
        assert_eq!(run.code, 1, "{name}");
        assert_eq!(run.out(), nothing.out(), "{name}");
        assert_eq!(
            run.stderr,
            format!(
                "cstream: warning: -:2: binary data (a NUL byte at offset {}); skipping this input\n",
                init("b").len() + 5
            ),
            "{name}"
        );
    }
    // Among other inputs: only the binary one is skipped.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let bin = dir.join("hostile-binary.jsonl");
    std::fs::write(&bin, &binary).unwrap();
    let ok = common::fixtures_dir().join("cursor/basic.jsonl");
    let nothing = dir.join("hostile-empty.jsonl");
    std::fs::write(&nothing, b"").unwrap();
    let alone = cstream(
        &[
            "--to",
            "events",
            nothing.to_str().unwrap(),
            ok.to_str().unwrap(),
        ],
        b"",
    );
    let both = cstream(
        &[
            "--to",
            "events",
            bin.to_str().unwrap(),
            ok.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(both.out(), alone.out());
    assert_eq!(both.code, 1);
}

// ------------------------------------------------------------ cut-off streams

/// A stream cut off after text and an open tool call, in the middle of a
/// line, with no result: every format still ends its output properly,
/// and `-e` says the session did not finish.
#[test]
fn an_interrupted_stream_is_still_well_formed() {
    let full = lines(&[
        init("s"),
        delta("s", r#""Let me check.""#),
        json!({"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"make"}}},"session_id":"s"}).to_string(),
        delta("s", r#""Still going""#),
    ]);
    // Every cut point, from nothing to the whole, through the middle of lines.
    for cut in (0..=full.len()).step_by(17).chain([full.len() - 5]) {
        let input = &full[..cut];
        for (name, run) in every_format(&["-e"], input) {
            // No result (and maybe a cut line): -e's 3 wins over 1.
            assert_eq!(run.code, 3, "cut at {cut}, {name}");
        }
    }
    let runs = every_format(&["-e"], &full);
    for (name, run) in &runs {
        assert_eq!(run.code, 3, "{name}");
    }
    let out = |n: &str| runs.iter().find(|(k, _)| *k == n).unwrap().1.out();
    // The open call is closed as cancelled, and the whole-value formats say
    // the session ended without a result.
    assert!(out("events").contains("\"cancelled\":true"));
    assert!(out("openai_sse").ends_with("data: [DONE]\n\n"));
    let doc: Value = serde_json::from_str(&out("documents")).unwrap();
    assert_ne!(doc["status"], "completed", "{doc}");
}

// ------------------------------------------------------------ terminal safety

/// What a terminal would interpret, everywhere text comes from the stream.
const NASTY: &str = "A\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7} \u{9b}2J \r over \u{8}\u{7f} \u{202e}evil\u{202c} \u{2066}iso\u{2069} zero\u{200b}width \u{feff}";

#[test]
fn control_bidi_and_ansi_are_escaped() {
    let input = lines(&[
        json!({"type":"system","subtype":"init","session_id":NASTY,"model":NASTY,"cwd":NASTY,"permissionMode":NASTY}).to_string(),
        json!({"type":"user","message":{"content":[{"type":"text","text":NASTY}]},"session_id":NASTY}).to_string(),
        json!({"type":"thinking","subtype":"delta","text":NASTY,"session_id":NASTY,"timestamp_ms":1}).to_string(),
        json!({"type":"thinking","subtype":"completed","session_id":NASTY,"timestamp_ms":2}).to_string(),
        json!({"type":"assistant","message":{"content":[{"type":"text","text":NASTY}]},"session_id":NASTY,"timestamp_ms":3}).to_string(),
        json!({"type":"tool_call","subtype":"started","call_id":NASTY,"tool_call":{"shellToolCall":{"args":{"command":NASTY,"workingDirectory":NASTY}}},"session_id":NASTY}).to_string(),
        json!({"type":"tool_call","subtype":"completed","call_id":NASTY,"tool_call":{"shellToolCall":{"args":{"command":NASTY},"result":{"failure":{"exitCode":1,"stdout":NASTY,"stderr":NASTY}}}},"session_id":NASTY}).to_string(),
        json!({"type":"tool_call","subtype":"started","call_id":"e","tool_call":{"editToolCall":{"args":{"path":NASTY,"oldString":NASTY,"newString":NASTY}}},"session_id":NASTY}).to_string(),
        json!({"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"args":{"path":NASTY},"result":{"error":{"message":NASTY}}}},"session_id":NASTY}).to_string(),
        json!({"type":"tool_call","subtype":"started","call_id":"m","tool_call":{"mcpToolCall":{"args":{"name":NASTY,"toolName":NASTY,"serverIdentifier":NASTY,"args":{}}}},"session_id":NASTY}).to_string(),
        format!("T: {NASTY}"),
        json!({"type":"result","subtype":"error","is_error":true,"result":NASTY,"error":{"message":NASTY},"session_id":NASTY}).to_string(),
    ]);
    for (name, run) in every_format(&["--thinking"], &input) {
        // The checker refuses raw controls and bidi characters in text
        // (other than SGR colour), and raw controls inside JSON strings.
        assert!(
            !run.stdout.contains(&0x1b) || name == "text_color",
            "{name}: a raw ESC"
        );
        if name.starts_with("text") {
            assert!(run.out().contains("\\u{1b}[31mred"), "{name}");
            assert!(run.out().contains("\\u{202e}evil"), "{name}");
            // Inert invisible characters are text, kept as they are.
            assert!(run.out().contains("zero\u{200b}width \u{feff}"), "{name}");
        }
    }
    // Diagnostics escape them too.
    let run = cstream(&[], &input);
    assert!(!run.stderr.contains('\u{1b}'), "{}", run.stderr);
    assert!(!run.stderr.contains('\u{202e}'), "{}", run.stderr);
}

// ------------------------------------------------------------ the checker

/// The checker every test above (and the fuzz target) relies on must see
/// what is wrong.
#[test]
fn the_checker_refuses_malformed_output() {
    let bad: &[(&str, bool, &[u8])] = &[
        ("events", false, b"{\"type\":\"x\"}\n{\"type\":\"y\",}\n"),
        ("events", false, b"{\"sessionId\":\"s\",\"type\":\"x\"}\n"),
        ("events", false, b"{\"type\":\"x\",\"t\":\"a\x1bb\"}\n"),
        ("events", false, b"{\"type\":\"x\"}"),
        ("text", false, b"red \x1b[31mx\n"),
        ("text", true, b"title \x1b]0;x\x07\n"),
        ("text", false, "bidi \u{202e}x\n".as_bytes()),
        ("text", false, b"bad \xff utf8\n"),
        ("openai-sse", false, b"data: {\"a\":1}\n\n"),
        ("openai-sse", false, b"data: {\"a\":1}\ndata: [DONE]\n\n"),
        ("openai-sse", false, b"data: {\"a\":1\n\ndata: [DONE]\n\n"),
        (
            "documents-sse",
            false,
            b"event: Bad Name\ndata: {}\n\ndata: [DONE]\n\n",
        ),
        ("openai-json", false, b"{\"a\":1}\n[1]\n"),
        (
            "anthropic-sse",
            false,
            b"event: ping\ndata: {\"type\":\"pong\"}\n\n",
        ),
        ("anthropic-sse", false, b"data: {\"type\":\"ping\"}\n\n"),
        (
            "anthropic-sse",
            false,
            b"event: ping\ndata: {\"type\":\"ping\"}\n\ndata: [DONE]\n\n",
        ),
        ("documents", false, b"{\"a\":01}\n"),
        ("documents", false, b"{\"a\":\"\\x\"}\n"),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><p><img src=x onerror=alert(1)></p></html>\n",
        ),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><p onclick=\"x\">a</p></html>\n",
        ),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><a href=\"https://x\">a</a></html>\n",
        ),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><p>a &copy; b</p></html>\n",
        ),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><div><p>a</div></p></html>\n",
        ),
        ("html", false, b"<!DOCTYPE html>\n<html><p>a</p>\n"),
        ("html", false, b"<html><p>a</p></html>\n"),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html><script>x</script></html>\n",
        ),
    ];
    for (format, color, out) in bad {
        assert!(
            wellformed::check(format, *color, out).is_err(),
            "{format}: accepted {:?}",
            String::from_utf8_lossy(out)
        );
    }
    let deep = format!(
        "{{\"type\":\"x\",\"a\":{}{}}}\n",
        "[".repeat(DEEP),
        "]".repeat(DEEP)
    );
    let good: &[(&str, bool, &[u8])] = &[
        ("events", false, deep.as_bytes()),
        ("events", false, b""),
        ("text", true, b"\x1b[1;31mred\x1b[0m\ttab\n"),
        (
            "openai-sse",
            false,
            b"data: {\"a\":\"\\ud800\"}\n\ndata: [DONE]\n\n",
        ),
        (
            "documents-sse",
            false,
            b"event: done\ndata: {}\n\ndata: [DONE]\n\n",
        ),
        (
            "documents",
            false,
            b"{\n  \"a\": [1.5e-3, -0, true, null]\n}\n{}\n",
        ),
        (
            "anthropic-sse",
            false,
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n",
        ),
        (
            "html",
            false,
            b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><style>a{b:c}</style></head><body><a href=\"#t1\">&lt;x&gt; &amp;</a></body></html>\n",
        ),
    ];
    for (format, color, out) in good {
        if let Err(e) = wellformed::check(format, *color, out) {
            panic!("{format}: refused: {e}");
        }
    }
}

// ------------------------------------------------------------ open calls

/// More calls open at once than the call table holds: each start still
/// gets exactly one completion, the calls past the cap are closed as
/// cancelled oldest first, and the rest at the session's end in the order
/// they started; every format stays well formed.
#[test]
fn more_open_calls_than_the_cap_close_oldest_first() {
    const CAP: usize = 4096;
    const OVER: usize = 50;
    let mut input = String::from(
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/w"}"#,
    );
    input.push('\n');
    for i in 0..CAP + OVER {
        input.push_str(&format!(
            r#"{{"type":"tool_call","subtype":"started","call_id":"c{i}","tool_call":{{"shellToolCall":{{"args":{{"command":"sleep {i}"}}}}}},"session_id":"s1"}}"#
        ));
        input.push('\n');
    }
    input.push_str(r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"result":"","session_id":"s1"}"#);
    input.push('\n');
    let run = cstream(&["--to", "events"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&String::from_utf8(run.stdout).unwrap());
    let ids = |ty: &str| -> Vec<String> {
        evs.iter()
            .filter(|e| e["type"] == ty)
            .map(|e| e["callId"].as_str().unwrap().to_owned())
            .collect()
    };
    let started = ids("tool_call_started");
    let completed = ids("tool_call_completed");
    let want: Vec<String> = (0..CAP + OVER).map(|i| format!("c{i}")).collect();
    assert_eq!(started, want);
    assert_eq!(completed, want, "closed oldest first, once each");
    // The first OVER are closed as the cap is passed (each just before the
    // start that passes it), the rest only at the session's end.
    let at = |ty: &str, id: &str| {
        evs.iter()
            .position(|e| e["type"] == ty && e["callId"] == id)
            .unwrap()
    };
    assert_eq!(
        at("tool_call_completed", "c0") + 1,
        at("tool_call_started", &format!("c{CAP}"))
    );
    let last = format!("c{}", CAP + OVER - 1);
    assert!(at("tool_call_completed", &format!("c{}", OVER - 1)) < at("tool_call_started", &last));
    assert!(at("tool_call_completed", &format!("c{OVER}")) > at("tool_call_started", &last));
    assert!(
        evs.iter()
            .filter(|e| e["type"] == "tool_call_completed")
            .all(|e| e["cancelled"] == true)
    );
    each_base_format(&[], input.as_bytes(), |name, run| {
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    });
}
