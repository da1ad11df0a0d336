//! `--stats`: what a run read and wrote, summed up in one line on stderr.
//!
//! Counting costs nothing unless asked for: with `--stats` the pipeline puts
//! a [`CountingSink`] right in front of the format's sink (one array
//! increment per event, indexed by kind) and a [`CountingWriter`] under it
//! (one addition per write); the framer counts input lines and bytes always
//! (one addition per line).

use std::cell::Cell;
use std::fmt;
use std::io::{self, Write};
use std::rc::Rc;
use std::time::Duration;

use crate::dialect::archive::FileCounts;
use crate::event::{Adapter, Event, TYPE_NAMES};
use crate::event::{Session, Sink};

/// How many event types there are.
pub const KINDS: usize = TYPE_NAMES.len();

/// The figures of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Input lines read (physical lines, blank ones included).
    pub lines: u64,
    /// Input bytes read.
    pub bytes_in: u64,
    /// Output bytes written.
    pub bytes_out: u64,
    /// Lines that were not valid input.
    pub skipped: u64,
    /// Sessions seen, and how many failed or ended without a result.
    pub sessions: u64,
    pub failed: u64,
    pub incomplete: u64,
    /// Events handed to the output format, per type (indexed as [`TYPE_NAMES`]).
    pub events: [u64; KINDS],
    /// `--redact`: secrets replaced, per kind (`None` without `--redact`).
    pub redacted: Option<Vec<(&'static str, u64)>>,
    /// Files read per dialect and skipped (`None` unless a directory was
    /// walked).
    pub files: Option<FileCounts>,
    /// Records the readers did not understand (kept as `unknown` events;
    /// the warnings at the end of the run name their dialects and types).
    pub not_understood: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Stats {
    /// Add the figures of another part of the run (`--output-dir`: one
    /// file's); `elapsed` stays the run's.
    pub fn add(&mut self, o: &Stats) {
        self.lines += o.lines;
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.skipped += o.skipped;
        self.sessions += o.sessions;
        self.failed += o.failed;
        self.incomplete += o.incomplete;
        self.not_understood += o.not_understood;
        for (a, b) in self.events.iter_mut().zip(o.events) {
            *a += b;
        }
        if let Some(theirs) = &o.redacted {
            let mine = self.redacted.get_or_insert_with(Vec::new);
            for (kind, n) in theirs {
                match mine.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, m)) => *m += n,
                    None => mine.push((kind, *n)),
                }
            }
        }
    }

    /// All events, whatever their type.
    pub fn total_events(&self) -> u64 {
        self.events.iter().sum()
    }

    /// The events of the type named `name` (0 for an unknown name).
    #[cfg(test)]
    pub fn events_of(&self, name: &str) -> u64 {
        TYPE_NAMES
            .iter()
            .position(|n| *n == name)
            .map_or(0, |i| self.events[i])
    }
}

/// `lines=… bytes_in=… bytes_out=… skipped=… sessions=… failed=…
/// incomplete=… events=… <type>=<count>… elapsed=…s`: `key=value` pairs,
/// event types only when they occurred, in a fixed order.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lines={} bytes_in={} bytes_out={} skipped={} sessions={} failed={} incomplete={} events={}",
            self.lines,
            self.bytes_in,
            self.bytes_out,
            self.skipped,
            self.sessions,
            self.failed,
            self.incomplete,
            self.total_events()
        )?;
        for (name, n) in TYPE_NAMES.iter().zip(self.events) {
            if n > 0 {
                write!(f, " {name}={n}")?;
            }
        }
        if let Some(r) = &self.redacted {
            write!(f, " redacted={}", r.iter().map(|(_, n)| n).sum::<u64>())?;
            for (kind, n) in r {
                write!(f, " redacted_{kind}={n}")?;
            }
        }
        if self.not_understood > 0 {
            write!(f, " not_understood={}", self.not_understood)?;
        }
        if let Some(files) = &self.files {
            write!(f, " {files}")?;
        }
        write!(f, " elapsed={:.3}s", self.elapsed.as_secs_f64())
    }
}

/// Counters shared between the pipeline and its counting adapters.
#[derive(Debug, Default)]
pub struct Counters {
    events: [Cell<u64>; KINDS],
    bytes_out: Cell<u64>,
}

impl Counters {
    /// Events counted per type.
    pub fn events(&self) -> [u64; KINDS] {
        std::array::from_fn(|i| self.events[i].get())
    }

    /// Bytes counted on the way out.
    pub fn bytes_out(&self) -> u64 {
        self.bytes_out.get()
    }
}

/// A writer that counts the bytes it passes on.
pub struct CountingWriter<W> {
    inner: W,
    counters: Rc<Counters>,
}

impl<W: Write> CountingWriter<W> {
    /// Count what goes to `inner` in `counters`.
    pub fn new(inner: W, counters: Rc<Counters>) -> Self {
        CountingWriter { inner, counters }
    }
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let c = &self.counters.bytes_out;
        c.set(c.get() + n as u64);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        let c = &self.counters.bytes_out;
        c.set(c.get() + buf.len() as u64);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A sink adapter that counts events by type before passing them on.
pub struct CountingSink<'s> {
    inner: Box<dyn Sink + 's>,
    counters: Rc<Counters>,
}

impl<'s> CountingSink<'s> {
    /// Count what goes to `inner` in `counters`.
    pub fn new(inner: Box<dyn Sink + 's>, counters: Rc<Counters>) -> Self {
        CountingSink { inner, counters }
    }
}

impl Adapter for CountingSink<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let c = &self.counters.events[ev.kind.index()];
        c.set(c.get() + 1);
        self.inner.event(s, ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Kind;
    use std::borrow::Cow;

    #[test]
    fn every_type_is_counted_under_its_wire_name() {
        let kinds = [
            Kind::TextDelta {
                text: Cow::Borrowed("x"),
            },
            Kind::ThinkingCompleted { duration_ms: None },
            Kind::Error {
                message: Cow::Borrowed("m"),
                fatal: false,
                source: None,
            },
            Kind::TurnEnded { usage: None },
        ];
        for (i, k) in kinds.iter().enumerate() {
            let mut s = Stats::default();
            s.events[k.index()] = i as u64 + 1;
            assert_eq!(s.events_of(k.type_name()), i as u64 + 1);
        }
        // Names are distinct, so a name finds one counter.
        let mut names = TYPE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS);
    }

    #[test]
    fn line_lists_only_types_that_occurred() {
        let mut s = Stats {
            lines: 3,
            bytes_in: 100,
            bytes_out: 250,
            skipped: 1,
            sessions: 1,
            incomplete: 1,
            elapsed: Duration::from_millis(1500),
            ..Stats::default()
        };
        s.events[4] = 2;
        s.events[0] = 1;
        assert_eq!(
            s.to_string(),
            "lines=3 bytes_in=100 bytes_out=250 skipped=1 sessions=1 failed=0 incomplete=1 \
             events=3 session_started=1 text_delta=2 elapsed=1.500s"
        );
        assert_eq!(s.events_of("text_delta"), 2);
    }
}
