//! A file that is one JSON document (a Gemini CLI saved chat) is read
//! element by element: the peak heap use while converting it stays about
//! one message, however many messages the file holds. `documents`, which
//! keeps a whole session, grows with it (which also shows that the
//! measurement sees growth when there is some).
//!
//! The counting global allocator (tests/memory/counting.rs) measures the
//! peak of live heap bytes; the test holds `exclusive()` so that no other
//! test allocates meanwhile.

use std::io::Write;

use cstream::{Config, Format, convert};

use crate::counting::{exclusive, peak_during};

/// The text of the one big answer every chat has.
const BIG: usize = 2 * 1024 * 1024;

/// A pretty-printed Gemini CLI chat (as the CLI writes it, two-space
/// indents) of `rounds` prompts, each answered with a tool call, thoughts,
/// text and token counts, plus one answer of [`BIG`] bytes in the middle.
fn chat(rounds: usize) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(
        b"{\n  \"sessionId\": \"mem-chat\",\n  \"projectHash\": \"0123abcd\",\n  \"startTime\": \"2026-01-01T00:00:00.000Z\",\n  \"lastUpdated\": \"2026-01-01T01:00:00.000Z\",\n  \"messages\": [\n",
    );
    let filler = "lorem ipsum dolor sit amet, ".repeat(60);
    for i in 0..rounds {
        let text = if i == rounds / 2 {
            "x".repeat(BIG)
        } else {
            format!("Step {i}: {filler}")
        };
        write!(
            v,
            r#"    {{
      "id": "u{i}",
      "timestamp": "2026-01-01T00:00:01.000Z",
      "type": "user",
      "content": "Please do step {i}\nthen report"
    }},
    {{
      "id": "g{i}",
      "timestamp": "2026-01-01T00:00:02.000Z",
      "type": "gemini",
      "content": "{text}",
      "toolCalls": [
        {{
          "id": "run_shell_command-{i}",
          "name": "run_shell_command",
          "args": {{
            "command": "echo {i}"
          }},
          "result": [
            {{
              "functionResponse": {{
                "id": "run_shell_command-{i}",
                "name": "run_shell_command",
                "response": {{
                  "output": "Output: {i} {filler}"
                }}
              }}
            }}
          ],
          "status": "success",
          "timestamp": "2026-01-01T00:00:03.000Z"
        }}
      ],
      "thoughts": [
        {{
          "subject": "Step {i}",
          "description": "{filler}",
          "timestamp": "2026-01-01T00:00:02.000Z"
        }}
      ],
      "tokens": {{
        "input": 1000,
        "output": 10,
        "cached": 0,
        "thoughts": 5,
        "tool": 0,
        "total": 1015
      }},
      "model": "gemini-2.5-pro"
    }}{}
"#,
            if i + 1 == rounds { "" } else { "," }
        )
        .unwrap();
    }
    v.extend_from_slice(b"  ],\n  \"kind\": \"main\"\n}\n");
    v
}

/// Peak live heap bytes while converting `input`, above what was live
/// before, and the output.
fn peak(format: Format, input: &[u8]) -> (usize, Vec<u8>) {
    let cfg = Config::new(format).created(0);
    // The output grows with the input: reserved before measuring.
    let mut out = Vec::with_capacity(input.len() * 2);
    let (peak, _) = peak_during(|| convert(input, &mut out, &cfg).unwrap());
    (peak, out)
}

#[test]
fn a_document_is_read_in_about_one_message_of_memory() {
    let _alone = exclusive();
    let small = chat(200);
    let large = chat(4000);
    let (ev_small, out) = peak(Format::Events, &small);
    let (ev_large, out_large) = peak(Format::Events, &large);
    // It was read as a chat, each message once.
    let text = String::from_utf8(out_large).unwrap();
    assert!(text.starts_with(r#"{"type":"session_started","sessionId":"mem-chat""#));
    assert_eq!(text.matches(r#""type":"user_message""#).count(), 4000);
    assert_eq!(
        text.matches(r#""type":"tool_call_completed""#).count(),
        4000
    );
    assert!(
        !String::from_utf8(out)
            .unwrap()
            .contains(r#""type":"error""#)
    );
    let (docs_small, _) = peak(Format::Documents, &small);
    let (docs_large, _) = peak(Format::Documents, &large);
    eprintln!(
        "input {} → {} bytes; peak bytes: events {ev_small} → {ev_large}; documents {docs_small} → {docs_large}",
        small.len(),
        large.len()
    );
    assert!(
        ev_large < ev_small + ev_small / 4,
        "events grew from {ev_small} to {ev_large} bytes"
    );
    // The biggest message is held (as written, compacted, and as its
    // event's text): a few times its size, not the file's.
    assert!(
        ev_large < 4 * BIG + 1024 * 1024,
        "events peak {ev_large} bytes for a {} byte file whose biggest message is {BIG}",
        large.len()
    );
    assert!(
        docs_large > docs_small * 5,
        "documents should hold the session ({docs_small} → {docs_large}): the measurement is broken"
    );
}
