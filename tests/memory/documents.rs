//! `documents-sse` keeps its memory bounded: the peak heap use for a
//! session ten times longer stays about the same. `documents` holds one
//! session's documents, so its peak grows with the session (which also shows
//! that the measurement sees growth when there is some).
//!
//! A session whose answer is one huge line stays within twice that line.
//!
//! The counting global allocator (tests/memory/counting.rs) measures the
//! peak of live heap bytes; the test holds `exclusive()` so that no other
//! test allocates meanwhile.

use std::io::Write;

use cstream::{Config, Format, convert};

use crate::counting::{exclusive, peak_during};

/// A cursor-agent session with `calls` rounds of streamed text (with a code
/// block) followed by a shell call with some output.
fn session(calls: usize) -> Vec<u8> {
    let mut v = Vec::new();
    let s = "mem-0000";
    writeln!(
        v,
        r#"{{"type":"system","subtype":"init","session_id":"{s}","model":"Auto","cwd":"/w"}}"#
    )
    .unwrap();
    let mut ts = 1_700_000_000_000u64;
    for i in 0..calls {
        for piece in [
            "Now step ",
            "number one.\\n",
            "```sh\\n",
            "echo step\\n",
            "```\\n",
            "Running it.",
        ] {
            ts += 1;
            writeln!(
                v,
                r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{piece}"}}]}},"session_id":"{s}","timestamp_ms":{ts}}}"#
            )
            .unwrap();
        }
        let args = format!(r#"{{"command":"echo {i}","workingDirectory":"/w"}}"#);
        writeln!(v, r#"{{"type":"tool_call","subtype":"started","call_id":"c{i}","tool_call":{{"shellToolCall":{{"args":{args}}}}},"session_id":"{s}","timestamp_ms":{ts}}}"#).unwrap();
        writeln!(v, r#"{{"type":"tool_call","subtype":"completed","call_id":"c{i}","tool_call":{{"shellToolCall":{{"args":{args},"result":{{"success":{{"exitCode":0,"stdout":"{i} lorem ipsum dolor sit amet\n","executionTime":3}}}}}}}},"session_id":"{s}","timestamp_ms":{}}}"#, ts + 3).unwrap();
    }
    writeln!(v, r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"result":"","session_id":"{s}"}}"#).unwrap();
    v
}

/// Peak live heap bytes while converting `input`, above what was live before.
fn peak(format: Format, input: &[u8]) -> usize {
    let cfg = Config::new(format).created(0);
    peak_during(|| convert(input, std::io::sink(), &cfg).unwrap()).0
}

#[test]
fn documents_sse_memory_does_not_grow_with_the_session() {
    let _alone = exclusive();
    let small = session(200);
    let large = session(2000);
    let sse_small = peak(Format::DocumentsSse, &small);
    let sse_large = peak(Format::DocumentsSse, &large);
    let docs_small = peak(Format::Documents, &small);
    let docs_large = peak(Format::Documents, &large);
    eprintln!("peak bytes: sse {sse_small} → {sse_large}; documents {docs_small} → {docs_large}");
    assert!(
        sse_large < sse_small + sse_small / 4,
        "documents-sse grew from {sse_small} to {sse_large} bytes"
    );
    assert!(
        docs_large > docs_small * 5,
        "documents should hold the session ({docs_small} → {docs_large}): the measurement is broken"
    );
    // In the same test: the counter is global, so nothing may run meanwhile.
    documents_sse_memory_is_within_twice_the_longest_line();
}

/// A session whose answer is one huge line: the peak heap use of
/// `documents-sse` (and of the other formats that write as they read) stays
/// within twice the line (the streaming formats'
/// budget: the line as read, plus the document's content kept for its
/// `finalContent`). Text with escapes is unescaped into a copy of its own,
/// so the line is given back before the document copies it: the same
/// budget holds for it.
fn documents_sse_memory_is_within_twice_the_longest_line() {
    const TEXT: usize = 8 * 1024 * 1024;
    const FIXED: usize = 1024 * 1024;
    let line = |unit: &str, fenced: bool| -> Vec<u8> {
        let s = "mem-0001";
        let mut v = Vec::new();
        writeln!(
            v,
            r#"{{"type":"system","subtype":"init","session_id":"{s}","model":"Auto","cwd":"/w"}}"#
        )
        .unwrap();
        let mut text = String::with_capacity(TEXT + 64);
        if fenced {
            text.push_str("Here it is:\\n```rust\\n");
        }
        while text.len() < TEXT {
            text.push_str(unit);
        }
        if fenced {
            text.push_str("```\\nDone.");
        }
        writeln!(
            v,
            r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{text}"}}]}},"session_id":"{s}","timestamp_ms":1700000000000}}"#
        )
        .unwrap();
        writeln!(v, r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"result":"","session_id":"{s}"}}"#).unwrap();
        v
    };
    for (what, input) in [
        ("prose", line("lorem ipsum dolor sit amet ", false)),
        (
            "code with escapes",
            line("let x = \\\"lorem\\\"; // dolor sit amet\\n", true),
        ),
        (
            "prose with escapes",
            line("\\\"lorem\\\" ipsum\\tdolor \\u00e9 sit amet\\n", false),
        ),
    ] {
        let longest = input.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap();
        // The other formats that write as they read keep to the same budget.
        for format in [
            Format::DocumentsSse,
            Format::Text,
            Format::Events,
            Format::OpenAiSse,
        ] {
            let used = peak(format, &input);
            let ratio = used as f64 / longest as f64;
            eprintln!(
                "{}, {what}: peak {used} bytes for a {longest}-byte line ({ratio:.2}x)",
                format.name()
            );
            // The contract: a fixed budget (buffers of a few hundred KiB)
            // plus twice the longest line.
            let allowed = 2 * longest + FIXED;
            assert!(
                used <= allowed,
                "{}, {what}: peak {used} bytes is over twice the longest line ({longest} bytes) plus {FIXED}",
                format.name()
            );
        }
    }
}
