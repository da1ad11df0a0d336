//! `--to events`: the normalized event model as compact NDJSON
//! (docs/events.md#wire-format).

use std::io::{self, Write};

use super::{Session, Sink};
use crate::event::{Event, Kind, write_event_quoted};
use crate::json::{TsDigits, write_str};

/// Writes one JSON line per event.
pub struct EventsSink<W: Write> {
    w: W,
    /// The current session's ordinal and its id, quoted and escaped once.
    sid: (usize, Vec<u8>),
    /// The digits of the last timestamp's second.
    ts: TsDigits,
}

impl<W: Write> EventsSink<W> {
    pub fn new(w: W) -> Self {
        EventsSink {
            w,
            sid: (0, Vec::new()),
            ts: TsDigits::default(),
        }
    }
}

impl<W: Write> Sink for EventsSink<W> {
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.sid.0 != s.ordinal || self.sid.1.is_empty() {
            self.sid.0 = s.ordinal;
            self.sid.1.clear();
            write_str(&mut self.sid.1, &s.id)?;
        }
        if !s.dedupe && matches!(ev.kind, Kind::SessionStarted(_)) {
            // The stream says what it carries, so that reading it back
            // (`--from events`) does not dedupe it a second time.
            let mut line = Vec::new();
            write_event_quoted(&mut line, &self.sid.1, &mut self.ts, ev)?;
            if let Some(body) = line.strip_suffix(b"}\n") {
                self.w.write_all(body)?;
                return self.w.write_all(b",\"dedupe\":false}\n");
            }
            return self.w.write_all(&line);
        }
        write_event_quoted(&mut self.w, &self.sid.1, &mut self.ts, ev)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
