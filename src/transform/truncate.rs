//! `--truncate-shell SIZE` (docs/formats.md#truncate-shell): cap each tool call's shell output.
//!
//! A sink adapter between the normalizer and the output format, so it
//! applies to every format. Per call, live output (`shell_output_delta`)
//! passes until SIZE bytes have been written; the rest is withheld, and one
//! marker line saying how much was withheld goes out just before the call
//! completes. The completed result's `output` keeps its last SIZE bytes
//! behind a leading marker. Cuts fall on UTF-8 character boundaries.
//!
//! The markers are recognized when they come back in (`--from events` with
//! the same flag), so truncating twice gives the same bytes as once.

use std::borrow::Cow;
use std::io;

use crate::event::calls::CallTable;
use crate::event::{Adapter, Event, Kind, OutStream, Text, ToolEnd};
use crate::event::{Session, Sink};

/// Per-call accounting of live output.
struct CallOutput {
    written: usize,
    withheld: u64,
    /// The last byte written was a newline (or nothing was written).
    at_line_start: bool,
}

/// Caps shell output per tool call, then hands events on to `inner`.
pub struct Truncate<'s> {
    inner: Box<dyn Sink + 's>,
    cap: usize,
    /// Per call, by id; past the table's cap the oldest call's count goes.
    calls: CallTable<CallOutput>,
}

const LIVE_MARKER_START: &str = "[cstream: ";
const LIVE_MARKER_END: &str = " more bytes of output withheld (--truncate-shell)]\n";
const FINAL_MARKER_END: &str = " bytes of output withheld (--truncate-shell)]\n";

/// The largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i`.
fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// True for the marker this adapter writes when it withholds live output.
fn is_live_marker(text: &str) -> bool {
    let t = text.strip_prefix('\n').unwrap_or(text);
    t.strip_prefix(LIVE_MARKER_START)
        .and_then(|r| r.strip_suffix(LIVE_MARKER_END))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Split a completed output that already carries a leading marker into the
/// withheld count and the rest.
fn split_final_marker(out: &str) -> Option<(u64, &str)> {
    let rest = out.strip_prefix(LIVE_MARKER_START)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = rest[..digits].parse().ok()?;
    let tail = rest[digits..].strip_prefix(FINAL_MARKER_END)?;
    Some((n, tail))
}

/// Cap a completed call's output: its last `cap` bytes behind a marker.
pub fn cap_output(out: &str, cap: usize) -> Option<String> {
    let (already, body) = split_final_marker(out).unwrap_or((0, out));
    if body.len() <= cap {
        return None;
    }
    let start = ceil_boundary(body, body.len() - cap);
    // The count read back from the input can be anything: saturate.
    let withheld = already.saturating_add(start as u64);
    Some(format!(
        "{LIVE_MARKER_START}{withheld}{FINAL_MARKER_END}{}",
        &body[start..]
    ))
}

impl<'s> Truncate<'s> {
    /// Cap shell output at `cap` bytes per call.
    pub fn new(inner: Box<dyn Sink + 's>, cap: usize) -> Self {
        Truncate {
            inner,
            cap,
            calls: CallTable::default(),
        }
    }

    fn state(&mut self, call_id: &str) -> &mut CallOutput {
        if !self.calls.contains(call_id) {
            self.calls.insert(
                call_id,
                CallOutput {
                    written: 0,
                    withheld: 0,
                    at_line_start: true,
                },
            );
        }
        self.calls.get_mut(call_id).expect("just inserted")
    }

    fn delta(
        &mut self,
        s: &Session,
        ev: &Event<'_>,
        call_id: &str,
        stream: OutStream,
        text: &str,
    ) -> io::Result<()> {
        if is_live_marker(text) {
            return self.inner.event(s, ev);
        }
        let cap = self.cap;
        let st = self.state(call_id);
        if st.written >= cap {
            st.withheld += text.len() as u64;
            return Ok(());
        }
        let room = cap - st.written;
        if text.len() <= room {
            st.written += text.len();
            if !text.is_empty() {
                st.at_line_start = text.ends_with('\n');
            }
            return self.inner.event(s, ev);
        }
        let cut = floor_boundary(text, room);
        st.written = cap;
        st.withheld += (text.len() - cut) as u64;
        let kept = &text[..cut];
        if !kept.is_empty() {
            st.at_line_start = kept.ends_with('\n');
        }
        let part = Event::at(
            ev.ts,
            Kind::ShellOutputDelta {
                call_id: Cow::Borrowed(call_id),
                stream,
                text: Cow::Borrowed(kept),
            },
        );
        self.inner.event(s, &part)
    }

    fn completed(&mut self, s: &Session, ev: &Event<'_>, end: &ToolEnd<'_>) -> io::Result<()> {
        if let Some(st) = self.calls.remove(&end.call_id)
            && st.withheld > 0
        {
            let nl = if st.at_line_start { "" } else { "\n" };
            let marker = format!("{nl}{LIVE_MARKER_START}{}{LIVE_MARKER_END}", st.withheld);
            let m = Event::at(
                ev.ts,
                Kind::ShellOutputDelta {
                    call_id: Cow::Borrowed(&end.call_id),
                    stream: OutStream::Stdout,
                    text: Cow::Owned(marker),
                },
            );
            self.inner.event(s, &m)?;
        }
        match end
            .output
            .as_ref()
            .and_then(|o| cap_output(&o.as_str(), self.cap))
        {
            None => self.inner.event(s, ev),
            Some(capped) => {
                let mut end = end.clone();
                end.output = Some(Text::from(capped));
                self.inner.event(s, &Event::at(ev.ts, Kind::completed(end)))
            }
        }
    }
}

impl Adapter for Truncate<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.calls = CallTable::default();
        self.inner.begin(s)
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        match &ev.kind {
            Kind::ShellOutputDelta {
                call_id,
                stream,
                text,
            } => self.delta(s, ev, call_id, *stream, text),
            Kind::ToolCallCompleted(end) => self.completed(s, ev, end),
            _ => self.inner.event(s, ev),
        }
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.calls = CallTable::default();
        self.inner.end(s)
    }
}

/// Parse a size such as `64K`, `1M`, `1.5M`, `4096`, `2MiB` (binary units):
/// how the command line reads `--truncate-shell`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("not a size: {s:?} (try 64K or 1M)"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("unknown size unit in {s:?} (use K, M or G)")),
    };
    let bytes = n * mult;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < usize::MAX as f64) {
        return Err(format!("size out of range: {s:?}"));
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("100"), Ok(100));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("5Q").is_err());
    }

    #[test]
    fn completed_output_keeps_the_tail_on_a_char_boundary() {
        let out = "ééééé"; // 10 bytes
        let capped = cap_output(out, 5).unwrap();
        assert_eq!(
            capped,
            "[cstream: 6 bytes of output withheld (--truncate-shell)]\néé"
        );
        // Idempotent.
        assert_eq!(cap_output(&capped, 5), None);
        // A count read back at the top of its range does not overflow.
        let max = format!(
            "[cstream: {} bytes of output withheld (--truncate-shell)]\nabcdefgh",
            u64::MAX
        );
        assert_eq!(
            cap_output(&max, 4).unwrap(),
            format!(
                "[cstream: {} bytes of output withheld (--truncate-shell)]\nefgh",
                u64::MAX
            )
        );
        assert_eq!(cap_output("short", 5), None);
    }

    #[test]
    fn markers_are_recognized() {
        assert!(is_live_marker(
            "[cstream: 12 more bytes of output withheld (--truncate-shell)]\n"
        ));
        assert!(is_live_marker(
            "\n[cstream: 12 more bytes of output withheld (--truncate-shell)]\n"
        ));
        assert!(!is_live_marker(
            "[cstream: x more bytes of output withheld (--truncate-shell)]\n"
        ));
        assert_eq!(
            split_final_marker("[cstream: 7 bytes of output withheld (--truncate-shell)]\nabc"),
            Some((7, "abc"))
        );
    }
}
