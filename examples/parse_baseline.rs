//! Baselines for `bench/run.sh`: what it costs to read a stream without
//! converting it, so cstream's throughput can be stated as a ratio.
//!
//! ```text
//! parse_baseline lines  < stream.jsonl   # split lines only (reused buffer)
//! parse_baseline typed  < stream.jsonl   # + serde_json into a small borrowed struct
//! parse_baseline value  < stream.jsonl   # + serde_json into a generic serde_json::Value
//! parse_baseline skip        # serde_json, the same struct with message/tool_call skipped
//! parse_baseline simd-skip   # simd-json's serde, the same struct, message/tool_call skipped
//! parse_baseline simd-tape   # simd-json's tape (structure only), the upper bound for simd-json
//! ```
//!
//! The `simd-*` modes answer the design question whether simd-json would
//! make cstream faster than serde_json on this mix: simd-json's serde path
//! cannot hand out `&RawValue`s, so it is compared with `skip`, the
//! serde_json parse of the same struct that skips the same payloads.
//!
//! `typed` is the bar cstream's streaming formats are measured against: every
//! line parsed with serde_json into the handful of fields a converter needs
//! (`type`, `subtype`, `session_id`, `timestamp_ms`, `model_call_id`,
//! `text`), with `message` and `tool_call` kept as unparsed `&RawValue`s.
//! Strings borrow from the line unless they contain escapes. Nothing is
//! written; a summary goes to stderr so the work cannot be optimized away.
//! Reads standard input, or the file named after the mode.
//!
//! Built with `--features simd-baseline` (simd-json is an optional
//! dependency of that feature, so that `cargo test` does not compile it):
//! `cargo build --release --features simd-baseline --example parse_baseline`.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::hint::black_box;
use std::io::{self, BufRead, BufReader, Read};
use std::process::ExitCode;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

/// Same read buffer size as cstream's input framing.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// A string that borrows from the input when it has no escapes.
///
/// `Option<Cow<'a, str>>` with `#[serde(borrow)]` still allocates for every
/// string (serde's derive only borrows a bare `Cow` field); deserializing
/// through this newtype's own visitor keeps the borrow.
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The fields a stateless converter reads from one cursor-agent line.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Str<'a>>,
    #[serde(borrow)]
    subtype: Option<Str<'a>>,
    #[serde(borrow)]
    session_id: Option<Str<'a>>,
    timestamp_ms: Option<i64>,
    #[serde(borrow)]
    model_call_id: Option<Str<'a>>,
    #[serde(borrow)]
    text: Option<Str<'a>>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_call: Option<&'a RawValue>,
}

/// What a run counted (printed to stderr).
#[derive(Default)]
struct Counts {
    lines: u64,
    bytes: u64,
    parsed: u64,
    failed: u64,
    /// Lines whose strings had to be copied (escapes): shows the borrow works.
    owned: u64,
    /// A checksum over what was parsed, so no field is dead.
    sum: u64,
}

/// The same fields with the payloads skipped (comparable across parsers).
#[derive(Deserialize)]
struct SkipLine<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Str<'a>>,
    #[serde(borrow)]
    subtype: Option<Str<'a>>,
    #[serde(borrow)]
    session_id: Option<Str<'a>>,
    timestamp_ms: Option<i64>,
    #[serde(borrow)]
    model_call_id: Option<Str<'a>>,
    #[serde(borrow)]
    text: Option<Str<'a>>,
    #[allow(dead_code)]
    message: Option<de::IgnoredAny>,
    #[allow(dead_code)]
    tool_call: Option<de::IgnoredAny>,
}

#[derive(Clone, Copy)]
enum Mode {
    Lines,
    Typed,
    Value,
    Skip,
    SimdSkip,
    SimdTape,
}

fn skip_sum(l: &SkipLine<'_>) -> u64 {
    [&l.ty, &l.subtype, &l.session_id, &l.model_call_id, &l.text]
        .iter()
        .map(|s| len_of(s))
        .sum::<u64>()
        + l.timestamp_ms.unwrap_or(0) as u64
}

fn len_of(s: &Option<Str<'_>>) -> u64 {
    s.as_ref().map_or(0, |s| s.0.len() as u64)
}

fn owned(s: &Option<Str<'_>>) -> bool {
    matches!(s, Some(Str(Cow::Owned(_))))
}

fn run(mode: Mode, input: impl Read) -> io::Result<Counts> {
    let mut r = BufReader::with_capacity(READ_BUFFER_BYTES, input);
    let mut buf = Vec::with_capacity(READ_BUFFER_BYTES);
    let mut c = Counts::default();
    let mut simd_buffers = simd_json::Buffers::default();
    loop {
        buf.clear();
        let n = r.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(c);
        }
        c.lines += 1;
        c.bytes += n as u64;
        let line = black_box(&buf[..]);
        match mode {
            Mode::Lines => c.sum = c.sum.wrapping_add(line.len() as u64),
            Mode::Typed => match serde_json::from_slice::<Line>(line) {
                Ok(l) => {
                    c.parsed += 1;
                    let strs = [&l.ty, &l.subtype, &l.session_id, &l.model_call_id, &l.text];
                    c.owned += u64::from(strs.iter().any(|s| owned(s)));
                    c.sum = c.sum.wrapping_add(
                        strs.iter().map(|s| len_of(s)).sum::<u64>()
                            + l.timestamp_ms.unwrap_or(0) as u64
                            + l.message.map_or(0, |m| m.get().len() as u64)
                            + l.tool_call.map_or(0, |t| t.get().len() as u64),
                    );
                }
                Err(_) => c.failed += 1,
            },
            Mode::Skip => match serde_json::from_slice::<SkipLine>(line) {
                Ok(l) => {
                    c.parsed += 1;
                    c.sum = c.sum.wrapping_add(skip_sum(&l));
                }
                Err(_) => c.failed += 1,
            },
            // simd-json parses in place: it needs the line mutable (its own
            // copy, as cstream would need to keep the line for raw payloads).
            Mode::SimdSkip => match simd_json::serde::from_slice_with_buffers::<SkipLine>(
                &mut buf,
                &mut simd_buffers,
            ) {
                Ok(l) => {
                    c.parsed += 1;
                    c.sum = c.sum.wrapping_add(skip_sum(&l));
                }
                Err(_) => c.failed += 1,
            },
            Mode::SimdTape => match simd_json::to_tape_with_buffers(&mut buf, &mut simd_buffers) {
                Ok(t) => {
                    c.parsed += 1;
                    c.sum = c.sum.wrapping_add(t.0.len() as u64);
                }
                Err(_) => c.failed += 1,
            },
            Mode::Value => match serde_json::from_slice::<serde_json::Value>(line) {
                Ok(v) => {
                    c.parsed += 1;
                    c.sum = c
                        .sum
                        .wrapping_add(v.as_object().map_or(0, |o| o.len() as u64));
                    black_box(v);
                }
                Err(_) => c.failed += 1,
            },
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = match args.first().map(String::as_str) {
        Some("lines") => Mode::Lines,
        Some("typed") => Mode::Typed,
        Some("value") => Mode::Value,
        Some("skip") => Mode::Skip,
        Some("simd-skip") => Mode::SimdSkip,
        Some("simd-tape") => Mode::SimdTape,
        _ => {
            eprintln!(
                "usage: parse_baseline lines|typed|value|skip|simd-skip|simd-tape [FILE]  (default: standard input)"
            );
            return ExitCode::from(2);
        }
    };
    let counts = match args.get(1) {
        Some(path) => File::open(path).and_then(|f| run(mode, f)),
        None => run(mode, io::stdin().lock()),
    };
    match counts {
        Ok(c) => {
            eprintln!(
                "parse_baseline: {} lines, {} bytes, {} parsed, {} not parsed, {} with copied strings, checksum {}",
                c.lines, c.bytes, c.parsed, c.failed, c.owned, c.sum
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("parse_baseline: {e}");
            ExitCode::from(2)
        }
    }
}
