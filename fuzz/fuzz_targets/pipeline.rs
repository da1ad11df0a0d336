//! The whole pipeline from arbitrary bytes: framing, every dialect (and
//! detection), every output format, with option combinations picked by the
//! first four bytes. Besides "no panic", every output must be well formed
//! for its format (tests/common/wellformed.rs) and stay within a generous
//! multiple of the input's size.
//!
//! Header (then the input itself):
//! - byte 0: the format, an index into `Format::ALL` taken modulo its length
//!   plus two: the two codes past the list are events --coalesce and events
//!   --coalesce=burst
//! - byte 1: --from, modulo `Dialect::ALL`'s length plus one: 0 is auto, `i`
//!   is `Dialect::ALL[i - 1]`
//! - byte 2: bit 0 --no-dedupe; bit 1 --strict; bit 2 -c; bit 3
//!   --include-usage; bit 4 --thinking; bit 5 --color always (text); bits 6-7
//!   --tool-calls
//! - byte 3: bits 0-1 --reasoning-field
//! - byte 4: ≥ 128: --truncate-shell (byte & 127) + 1
//! - byte 5: read size (0: whatever the reader asks for)
//!
//! The lists come from the library, so a new format or dialect is fuzzed
//! without touching this file.
#![no_main]

use std::io::{self, Read};

use cstream::{CoalesceMode, Config, Dialect, Format, ReasoningField, ToolCallMode, convert};
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

fn config(h: [u8; HEADER]) -> (Config, &'static str, bool) {
    let code = usize::from(h[0]) % (Format::ALL.len() + 2);
    let (format, coalesce) = match code.checked_sub(Format::ALL.len()) {
        None => (Format::ALL[code], None),
        Some(0) => (Format::Events, Some(CoalesceMode::Whole)),
        Some(_) => (Format::Events, Some(CoalesceMode::Burst)),
    };
    let flags = h[2];
    let color = flags & 32 != 0 && format == Format::Text;
    // A fixed clock: the run must not depend on when it happens.
    let mut cfg = Config::new(format)
        .dedupe(flags & 1 == 0)
        .strict(flags & 2 != 0)
        .compact(flags & 4 != 0)
        .include_usage(flags & 8 != 0)
        .thinking(flags & 16 != 0)
        .color(color)
        .tool_calls(match flags >> 6 {
            0 => ToolCallMode::Reasoning,
            1 => ToolCallMode::Content,
            2 => ToolCallMode::Omit,
            _ => ToolCallMode::Calls,
        })
        .reasoning_field(match h[3] & 3 {
            1 => ReasoningField::Reasoning,
            2 => ReasoningField::None,
            _ => ReasoningField::ReasoningContent,
        })
        .run_start(1_700_000_000);
    if let Some(mode) = coalesce {
        cfg = cfg.coalesce(mode);
    }
    let from = usize::from(h[1]) % (Dialect::ALL.len() + 1);
    if let Some(i) = from.checked_sub(1) {
        cfg = cfg.from(Dialect::ALL[i]);
    }
    if h[4] >= 128 {
        cfg = cfg.truncate_shell(usize::from(h[4] & 127) + 1);
    }
    (cfg, format.name(), color)
}

/// Bytes of option header before the input.
const HEADER: usize = 6;

fuzz_target!(|data: &[u8]| {
    let Some((h, input)) = data.split_first_chunk::<HEADER>() else {
        return;
    };
    let (cfg, name, color) = config(*h);
    let mut out = Vec::new();
    let reader = Chunks {
        data: input,
        n: if h[5] == 0 {
            usize::MAX
        } else {
            usize::from(h[5])
        },
    };
    convert(reader, &mut out, &cfg).expect("writing to a Vec cannot fail");
    if let Err(e) = wellformed::check(name, color, &out) {
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
