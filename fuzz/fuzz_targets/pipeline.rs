//! The whole pipeline from arbitrary bytes: framing, every dialect (and
//! detection), every output format, with option combinations picked by the
//! first four bytes. Besides "no panic", every output must be well formed
//! for its format (tests/common/wellformed.rs) and stay within a generous
//! multiple of the input's size.
//!
//! Header (then the input itself):
//! - byte 0: bits 0-2 the format (6: events --coalesce, 7: events
//!   --coalesce=burst); bit 3 --no-dedupe; bit 4 --strict; bit 5 -c;
//!   bit 6 --include-usage; bit 7 --thinking
//! - byte 1: bits 0-2 --from (0: auto); bits 3-4 --tool-calls; bits 5-6
//!   --reasoning-field; bit 7 --color always (text)
//! - byte 2: ≥ 128: --truncate-shell (byte & 127) + 1
//! - byte 3: read size (0: whatever the reader asks for)
#![no_main]

use std::io::{self, Read};

use cstream::diag::Diag;
use cstream::dialect::Dialect;
use cstream::output::{Format, ReasoningField, ToolCallMode};
use cstream::run::{Config, convert};
use cstream::transform::coalesce::CoalesceMode;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/wellformed.rs"]
mod wellformed;

/// Hands out the input `n` bytes per read.
struct Chunks<'a> {
    data: &'a [u8],
    n: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.n.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn config(h: [u8; 4]) -> (Config, &'static str) {
    let mut cfg = Config::default();
    let (format, name, coalesce) = match h[0] & 7 {
        0 => (Format::Text, "text", None),
        1 => (Format::Events, "events", None),
        2 => (Format::OpenAiSse, "openai-sse", None),
        3 => (Format::OpenAiJson, "openai-json", None),
        4 => (Format::Documents, "documents", None),
        5 => (Format::DocumentsSse, "documents-sse", None),
        6 => (Format::Events, "events", Some(CoalesceMode::Whole)),
        _ => (Format::Events, "events", Some(CoalesceMode::Burst)),
    };
    cfg.format = format;
    cfg.coalesce = coalesce;
    cfg.normalize.dedupe = h[0] & 8 == 0;
    cfg.strict = h[0] & 16 != 0;
    cfg.output.compact = h[0] & 32 != 0;
    cfg.output.include_usage = h[0] & 64 != 0;
    cfg.output.thinking = h[0] & 128 != 0;
    cfg.from = match h[1] & 7 {
        0 => None,
        1 => Some(Dialect::Cursor),
        2 => Some(Dialect::Claude),
        3 => Some(Dialect::Codex),
        4 => Some(Dialect::Gemini),
        5 => Some(Dialect::Acp),
        6 => Some(Dialect::CursorSdk),
        _ => Some(Dialect::Events),
    };
    cfg.output.tool_calls = match (h[1] >> 3) & 3 {
        0 => ToolCallMode::Reasoning,
        1 => ToolCallMode::Content,
        2 => ToolCallMode::Omit,
        _ => ToolCallMode::Calls,
    };
    cfg.output.reasoning_field = match (h[1] >> 5) & 3 {
        1 => ReasoningField::Reasoning,
        2 => ReasoningField::None,
        _ => ReasoningField::ReasoningContent,
    };
    cfg.output.color = h[1] & 128 != 0 && format == Format::Text;
    // A fixed clock: the run must not depend on when it happens.
    cfg.output.run_start = Some(1_700_000_000);
    if h[2] >= 128 {
        cfg.truncate_shell = Some(usize::from(h[2] & 127) + 1);
    }
    (cfg, name)
}

fuzz_target!(|data: &[u8]| {
    let Some((h, input)) = data.split_first_chunk::<4>() else {
        return;
    };
    let (cfg, name) = config(*h);
    let mut out = Vec::new();
    let reader = Chunks {
        data: input,
        n: if h[3] == 0 {
            usize::MAX
        } else {
            usize::from(h[3])
        },
    };
    convert(&cfg, reader, &mut out, &mut Diag::sink()).expect("writing to a Vec cannot fail");
    if let Err(e) = wellformed::check(name, cfg.output.color, &out) {
        panic!(
            "{name}: malformed output: {e}\n--- output ---\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    // Pretty layouts indent (32 levels at most) and every bad line becomes an
    // error event: a few dozen times the input, never more.
    let bound = 64 * 1024 + 128 * input.len();
    assert!(
        out.len() <= bound,
        "{name}: {} bytes of output for {} bytes of input",
        out.len(),
        input.len()
    );
});
