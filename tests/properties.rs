//! Property tests over generated cursor-agent streams (bounded case counts so
//! `cargo test` stays quick):
//! - output does not depend on how the input is split into reads;
//! - converting via `--from events` gives the same bytes, in every format;
//! - recap dedupe never loses or doubles a character of `result.result`;
//! - every events record is one JSON object with `type` first.

mod common;

use std::io::Read;

use clap::Parser;
use cstream::cli::{Cli, ColorEnv};
use cstream::diag::Diag;
use cstream::run::convert;
use proptest::prelude::*;
use serde_json::json;

use common::{FORMATS, events};

/// One piece of a generated turn.
#[derive(Debug, Clone)]
enum Piece {
    /// Assistant text, sent as deltas; `recap` then repeats what was said
    /// the way `--stream-partial-output` does: the whole segment since the
    /// last tool call plus `extra` (text the deltas missed), or only what
    /// came since the last recap.
    Text {
        deltas: Vec<String>,
        recap: Recap,
        extra: String,
    },
    Thinking(Vec<String>),
    /// Parallel tool calls, completed in a shuffled order.
    Tools {
        cmds: Vec<(String, String)>,
        order: Vec<usize>,
    },
    /// A line that is not JSON.
    Garbage(String),
}

#[derive(Debug, Clone, Copy)]
enum Recap {
    None,
    /// The segment since the last tool call, plus `extra`, with a model_call_id.
    Segment,
    /// The same, as the final recap (no timestamp_ms).
    SegmentFinal,
    /// Only the text since the last recap (no extra).
    SinceLast,
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        Just("\n\n".to_owned()),
        Just(" ".to_owned()),
        Just("```".to_owned()),
        Just("**".to_owned()),
        "[é✓漢\u{1F600}]{1,3}",
        Just("quote \" back\\slash \u{1b}[31m".to_owned()),
    ]
}

fn piece_strategy() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => (
            prop::collection::vec(text_strategy(), 1..6),
            prop_oneof![
                Just(Recap::None),
                Just(Recap::Segment),
                Just(Recap::SegmentFinal),
                Just(Recap::SinceLast)
            ],
            prop_oneof![3 => Just(String::new()), 1 => "[a-z]{1,5}"],
        )
            .prop_map(|(deltas, recap, extra)| Piece::Text { deltas, recap, extra }),
        1 => prop::collection::vec("[a-z ]{0,8}", 1..4).prop_map(Piece::Thinking),
        2 => prop::collection::vec(("[a-z]{1,6}", "[a-z\n]{0,20}"), 1..4).prop_flat_map(|cmds| {
            let n = cmds.len();
            (Just(cmds), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
        .prop_map(|(cmds, order)| Piece::Tools { cmds, order }),
        1 => "[A-Z]: [a-z ]{0,10}".prop_map(Piece::Garbage),
    ]
}

/// A session's lines and the text its result reports.
fn render(sid: &str, pieces: &[Piece], with_result: bool) -> (Vec<String>, String) {
    let mut lines = vec![
        json!({"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":sid,"model":"M","permissionMode":"default"}).to_string(),
        json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"go"}]},"session_id":sid}).to_string(),
    ];
    let mut result = String::new();
    let mut ts = 1_770_000_000_000i64;
    let mut call = 0;
    let (mut since_tool, mut since_recap) = (String::new(), String::new());
    for p in pieces {
        ts += 10;
        match p {
            Piece::Text {
                deltas,
                recap,
                extra,
            } => {
                for d in deltas {
                    since_tool.push_str(d);
                    since_recap.push_str(d);
                    result.push_str(d);
                    lines.push(json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":d}]},"session_id":sid,"timestamp_ms":ts}).to_string());
                }
                let (text, final_) = match recap {
                    Recap::None => continue,
                    Recap::Segment | Recap::SegmentFinal => {
                        // Text the deltas missed reaches the result only through a recap.
                        result.push_str(extra);
                        since_tool.push_str(extra);
                        (since_tool.clone(), matches!(recap, Recap::SegmentFinal))
                    }
                    Recap::SinceLast => (since_recap.clone(), false),
                };
                since_recap.clear();
                lines.push(if final_ {
                    json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]},"session_id":sid})
                } else {
                    json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]},"session_id":sid,"model_call_id":"m-0-x","timestamp_ms":ts})
                }.to_string());
            }
            Piece::Thinking(ds) => {
                for d in ds {
                    lines.push(json!({"type":"thinking","subtype":"delta","text":d,"session_id":sid,"timestamp_ms":ts}).to_string());
                }
                lines.push(json!({"type":"thinking","subtype":"completed","session_id":sid,"timestamp_ms":ts + 5}).to_string());
            }
            Piece::Tools { cmds, order } => {
                since_tool.clear();
                since_recap.clear();
                let ids: Vec<String> = cmds
                    .iter()
                    .map(|_| {
                        call += 1;
                        format!("call_{call}\nfc_{call}")
                    })
                    .collect();
                for ((cmd, _), id) in cmds.iter().zip(&ids) {
                    lines.push(json!({"type":"tool_call","subtype":"started","call_id":id,"tool_call":{"shellToolCall":{"args":{"command":cmd}}},"model_call_id":"m-1-y","session_id":sid,"timestamp_ms":ts}).to_string());
                }
                for &i in order {
                    let (cmd, out) = &cmds[i];
                    lines.push(json!({"type":"tool_call","subtype":"completed","call_id":ids[i],"tool_call":{"shellToolCall":{"args":{"command":cmd},"result":{"success":{"command":cmd,"exitCode":0,"stdout":out,"stderr":"","executionTime":3,"interleavedOutput":out}}}},"model_call_id":"m-1-y","session_id":sid,"timestamp_ms":ts + 7}).to_string());
                }
            }
            Piece::Garbage(g) => lines.push(g.clone()),
        }
    }
    if with_result {
        lines.push(json!({"type":"result","subtype":"success","duration_ms":99,"is_error":false,"result":result,"session_id":sid}).to_string());
    }
    (lines, result)
}

fn stream_strategy() -> impl Strategy<Value = (Vec<u8>, Vec<String>)> {
    prop::collection::vec(
        (
            prop::collection::vec(piece_strategy(), 0..8),
            prop::bool::weighted(0.8),
        ),
        1..3,
    )
    .prop_map(|sessions| {
        let mut bytes = Vec::new();
        let mut results = Vec::new();
        for (i, (pieces, with_result)) in sessions.iter().enumerate() {
            let (lines, result) = render(&format!("s{i}"), pieces, *with_result);
            for l in lines {
                bytes.extend_from_slice(l.as_bytes());
                bytes.push(b'\n');
            }
            if *with_result {
                results.push(result);
            }
        }
        (bytes, results)
    })
}

/// A reader that hands out the input in the given chunk sizes.
struct Chunked<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    i: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.data.is_empty() {
            return Ok(0);
        }
        let want = self.sizes[self.i % self.sizes.len()].max(1);
        self.i += 1;
        let n = want.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn run_reader(args: &[&str], input: impl Read) -> Vec<u8> {
    let cli = Cli::try_parse_from(std::iter::once("cstream").chain(args.iter().copied())).unwrap();
    let cfg = cli.config(false, &ColorEnv::default());
    let mut out = Vec::new();
    convert(&cfg, input, &mut out, &mut Diag::sink()).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn output_does_not_depend_on_read_sizes(
        (input, _) in stream_strategy(),
        sizes in prop::collection::vec(1usize..64, 1..8),
    ) {
        for (name, args) in FORMATS {
            let whole = run_reader(args, &input[..]);
            let bytewise = run_reader(args, Chunked { data: &input, sizes: vec![1], i: 0 });
            prop_assert_eq!(&bytewise, &whole, "{} one byte at a time", name);
            let chunked = run_reader(args, Chunked { data: &input, sizes: sizes.clone(), i: 0 });
            prop_assert_eq!(&chunked, &whole, "{} in chunks {:?}", name, sizes);
        }
    }

    #[test]
    fn every_format_via_events_is_identical((input, _) in stream_strategy()) {
        let ev = run_reader(&["--to", "events"], &input[..]);
        for (name, args) in FORMATS {
            let direct = run_reader(args, &input[..]);
            let mut a = args.to_vec();
            a.extend(["--from", "events"]);
            let via = run_reader(&a, &ev[..]);
            prop_assert_eq!(String::from_utf8_lossy(&via), String::from_utf8_lossy(&direct), "{}", name);
        }
    }

    #[test]
    fn dedupe_rebuilds_the_result_exactly((input, results) in stream_strategy()) {
        let out = String::from_utf8(run_reader(&["--to", "events"], &input[..])).unwrap();
        let mut text = String::new();
        let mut got = Vec::new();
        for ev in events(&out) {
            let first_key = out.lines().next().map(|l| l.starts_with("{\"type\":")).unwrap_or(true);
            prop_assert!(first_key);
            prop_assert!(ev.get("sessionId").is_some());
            match ev["type"].as_str().unwrap() {
                "session_started" => text.clear(),
                "text_delta" => text.push_str(ev["text"].as_str().unwrap()),
                "result" => got.push(std::mem::take(&mut text)),
                _ => {}
            }
        }
        prop_assert_eq!(got, results, "input:\n{}", String::from_utf8_lossy(&input));
    }
}

fn delta_text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        ".{0,8}",
        Just("say \"hi\" \\ back\\slash".to_owned()),
        Just("tab\tnew\nline\u{1}ctl".to_owned()),
        "[é✓漢\u{1F600}\u{2028}]{1,4}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// cursor-agent's two delta shapes take a byte-exact fast path; a space
    /// after the opening brace sends the same line through the general
    /// parser. Both must give the same events.
    #[test]
    fn delta_fast_path_agrees_with_the_general_parser(
        text in delta_text_strategy(),
        sid in prop_oneof!["[a-f0-9-]{1,36}", Just("s\"q".to_owned())],
        ts in 0i64..=i64::MAX,
        thinking in any::<bool>(),
    ) {
        // Keys in cursor-agent's order (serde_json's map would sort them).
        let body = if thinking {
            format!(
                r#"{{"type":"thinking","subtype":"delta","text":{},"session_id":{},"timestamp_ms":{ts}}}"#,
                serde_json::to_string(&text).unwrap(),
                serde_json::to_string(&sid).unwrap()
            )
        } else {
            format!(
                r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}]}},"session_id":{},"timestamp_ms":{ts}}}"#,
                serde_json::to_string(&text).unwrap(),
                serde_json::to_string(&sid).unwrap()
            )
        };
        let slow = format!("{{ {}", &body[1..]);
        for (_, args) in FORMATS {
            let fast_out = run_reader(args, format!("{body}\n").as_bytes());
            let slow_out = run_reader(args, format!("{slow}\n").as_bytes());
            prop_assert_eq!(String::from_utf8_lossy(&fast_out), String::from_utf8_lossy(&slow_out));
        }
    }
}
