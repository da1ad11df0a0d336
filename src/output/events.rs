//! `--to events`: the normalized event model as compact NDJSON (SPEC §2).

use std::io::{self, Write};

use super::{Session, Sink};
use crate::event::{Event, write_event};

/// Writes one JSON line per event.
pub struct EventsSink<W: Write> {
    w: W,
}

impl<W: Write> EventsSink<W> {
    pub fn new(w: W) -> Self {
        EventsSink { w }
    }
}

impl<W: Write> Sink for EventsSink<W> {
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        write_event(&mut self.w, &s.id, ev)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
