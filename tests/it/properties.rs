//! Property tests over generated cursor-agent streams (bounded case counts so
//! `cargo test` stays quick):
//! - output does not depend on how the input is split into reads;
//! - converting via `--from events` gives the same bytes, in every format;
//! - recap dedupe never loses or doubles a character of `result.result`;
//! - every events record is one JSON object with `type` first;
//! - `--truncate-shell N` never splits a UTF-8 character: what it keeps of
//!   live output is a prefix of the output, and of a completed output a
//!   suffix, each at most N bytes and cut on a character boundary;
//! - every output of every format is well formed (`common::wellformed`), on
//!   generated streams and on fixtures with random bytes mutated.

use crate::common;

use std::io::Read;

use proptest::prelude::*;
use serde_json::json;

use common::{FORMATS, events, fixtures, format_of, wellformed};

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
    let mut out = Vec::new();
    cstream::convert(input, &mut out, &common::config(args)).unwrap();
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

// ------------------------------------------------------------ truncation

/// Multibyte text: 1- to 4-byte characters, newlines.
fn multibyte() -> impl Strategy<Value = String> {
    "[a\n\u{e9}\u{416}\u{2713}\u{6f22}\u{1F600}\u{10FFFF}]{0,40}"
}

/// One shell call as cstream events: its live output in `chunks`, then the
/// completion carrying the whole output.
fn shell_call(chunks: &[String]) -> (Vec<u8>, String) {
    let whole: String = chunks.concat();
    let mut lines = vec![
        json!({"type":"session_started","sessionId":"t","dialect":"cursor"}),
        json!({"type":"tool_call_started","sessionId":"t","callId":"c","toolName":"shell","args":{"command":"x"},"command":"x"}),
    ];
    for c in chunks {
        lines.push(json!({"type":"shell_output_delta","sessionId":"t","callId":"c","stream":"stdout","text":c}));
    }
    lines.push(json!({"type":"tool_call_completed","sessionId":"t","callId":"c","toolName":"shell","ok":true,"result":null,"exitCode":0,"output":whole}));
    lines.push(json!({"type":"result","sessionId":"t","ok":true}));
    let mut input = Vec::new();
    for l in lines {
        input.extend_from_slice(l.to_string().as_bytes());
        input.push(b'\n');
    }
    (input, whole)
}

const LIVE_MARKER: &str = " more bytes of output withheld (--truncate-shell)]\n";
const FINAL_MARKER: &str = " bytes of output withheld (--truncate-shell)]\n";

/// The withheld count of a `[cstream: N …]` marker ending in `end`.
fn marker_count(s: &str, end: &str) -> Option<u64> {
    s.strip_prefix('\n')
        .unwrap_or(s)
        .strip_prefix("[cstream: ")?
        .strip_suffix(end)?
        .parse()
        .ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn truncation_never_splits_a_character(
        chunks in prop::collection::vec(multibyte(), 0..6),
        cap in 1usize..64,
    ) {
        let (input, whole) = shell_call(&chunks);
        let cap_s = cap.to_string();
        let out = run_reader(&["--to", "events", "--from", "events", "--truncate-shell", &cap_s], &input[..]);
        // Valid UTF-8 (a split character would not be), with no U+FFFD added.
        let out = String::from_utf8(out).expect("UTF-8 output");
        prop_assert!(!out.contains(char::REPLACEMENT_CHARACTER), "U+FFFD in {}", out);
        let mut live = String::new();
        let mut withheld_live = 0u64;
        let mut completed = None;
        for ev in events(&out) {
            match ev["type"].as_str().unwrap() {
                "shell_output_delta" => {
                    let t = ev["text"].as_str().unwrap();
                    match marker_count(t, LIVE_MARKER) {
                        Some(n) => withheld_live += n,
                        None => live.push_str(t),
                    }
                }
                "tool_call_completed" => completed = ev["output"].as_str().map(str::to_owned),
                _ => {}
            }
        }
        // Live: a prefix of the output, at most `cap` bytes, as long as a
        // character boundary allows; the marker counts the rest.
        prop_assert!(whole.starts_with(&live), "live {:?} is not a prefix of {:?}", live, whole);
        prop_assert!(live.len() <= cap);
        if whole.len() > cap {
            prop_assert!(live.len() + 4 > cap, "kept {} of cap {}", live.len(), cap);
        }
        prop_assert_eq!(live.len() as u64 + withheld_live, whole.len() as u64);
        // Completed: the last bytes of the output behind a marker.
        let completed = completed.expect("a completion");
        if whole.len() <= cap {
            prop_assert_eq!(completed, whole);
        } else {
            let (head, tail) = completed.split_once('\n').expect("marker line");
            let n = marker_count(&format!("{head}\n"), FINAL_MARKER).expect("marker");
            prop_assert!(whole.ends_with(tail), "tail {:?} of {:?}", tail, whole);
            prop_assert!(whole.is_char_boundary(whole.len() - tail.len()));
            prop_assert!(tail.len() <= cap && tail.len() + 4 > cap);
            prop_assert_eq!(n + tail.len() as u64, whole.len() as u64);
        }
    }
}

// ------------------------------------------------------------ well-formed output

fn check_every_format(extra: &[&str], input: &[u8]) -> Result<(), TestCaseError> {
    for (name, args) in FORMATS {
        let mut a = args.to_vec();
        a.extend_from_slice(extra);
        let out = run_reader(&a, input);
        let (to, color) = format_of(args);
        if let Err(e) = wellformed::check(to, color, &out) {
            return Err(TestCaseError::fail(format!(
                "{name} {extra:?}: {e}\ninput:\n{}",
                String::from_utf8_lossy(input)
            )));
        }
    }
    Ok(())
}

/// One edit of a fixture's bytes; positions are taken modulo its length.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let token = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..4),
        Just(b"\n".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"{".to_vec()),
        Just(b"]".to_vec()),
        Just(b"\\ud800".to_vec()),
        Just(b"\\u001b[31m".to_vec()),
        Just(b"1e999".to_vec()),
        Just(b"\xe2\x80\xae".to_vec()),
        Just(b"\xff".to_vec()),
        Just(b"\0".to_vec()),
    ];
    prop_oneof![
        3 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        3 => (any::<usize>(), token).prop_map(|(p, t)| Mutation::Insert(p, t)),
        2 => (any::<usize>(), 1usize..40).prop_map(|(p, n)| Mutation::Delete(p, n)),
        1 => (any::<usize>(), 1usize..200).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(mut b: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let len = b.len().max(1);
        match m {
            Mutation::Flip(p, x) if !b.is_empty() => b[p % len] ^= x | 1,
            Mutation::Insert(p, t) => {
                let at = p % (b.len() + 1);
                b.splice(at..at, t.iter().copied());
            }
            Mutation::Delete(p, n) if !b.is_empty() => {
                let at = p % len;
                let end = (at + n).min(b.len());
                b.drain(at..end);
            }
            Mutation::Duplicate(p, n) if !b.is_empty() => {
                let at = p % len;
                let end = (at + n).min(b.len());
                let piece = b[at..end].to_vec();
                b.splice(end..end, piece);
            }
            Mutation::Truncate(p) => b.truncate(p % (b.len() + 1)),
            _ => {}
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn generated_streams_give_well_formed_output((input, _) in stream_strategy()) {
        check_every_format(&[], &input)?;
        check_every_format(&["--no-dedupe", "--truncate-shell", "7"], &input)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_give_well_formed_output(
        pick in any::<prop::sample::Index>(),
        from in 0..common::from_values().len(),
        muts in prop::collection::vec(mutation(), 1..8),
    ) {
        let all = fixtures();
        let path = pick.get(&all);
        let input = mutate(std::fs::read(path).unwrap(), &muts);
        check_every_format(&["--from", common::from_values()[from]], &input)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", path.display())))?;
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
