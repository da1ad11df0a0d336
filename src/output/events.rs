//! `--to events`: the normalized event model as compact NDJSON
//! (docs/events.md#wire-format).

use std::io::{self, Write};

use super::{Session, Sink};
use crate::event::{Event, write_event_quoted};
use crate::json::write_str;

/// Writes one JSON line per event.
pub struct EventsSink<W: Write> {
    w: W,
    /// The current session's ordinal and its id, quoted and escaped once.
    sid: (usize, Vec<u8>),
}

impl<W: Write> EventsSink<W> {
    pub fn new(w: W) -> Self {
        EventsSink {
            w,
            sid: (0, Vec::new()),
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
        write_event_quoted(&mut self.w, &self.sid.1, ev)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
