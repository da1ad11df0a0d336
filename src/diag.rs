//! Diagnostics: warnings and errors on stderr, and the counters that decide
//! the exit status.
//!
//! Like ripgrep's message module, a problem with one line or one file never
//! aborts the run: it is reported (`cstream: warning: FILE:LINE: …`),
//! remembered, and reflected in the exit status at the end. Each kind of
//! warning is shown at most [`WARNINGS_SHOWN_PER_KIND`] times; the rest are
//! counted and summarized once at the end.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;

use crate::terminal::SharedLine;
/// Warnings quote input (and file names) through the terminal module's one
/// escaping rule.
pub use crate::terminal::excerpt;

/// How many warnings of one kind are printed before the rest are only counted.
pub const WARNINGS_SHOWN_PER_KIND: u64 = 20;

/// The kinds of warning, each capped separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warn {
    /// A line that is not JSON (exit 1).
    NotJson,
    /// Invalid UTF-8 replaced by U+FFFD (a repair: exit status unchanged).
    InvalidUtf8,
    /// A value joined back from several lines (a repair).
    Joined,
    /// A dialect-level problem: a line that is JSON but breaks the format's rules.
    Format,
    /// Something about the run as a whole (several SSE sessions, held events…).
    Run,
    /// With `-e`: a session that failed or ended without a result.
    Session,
}

const KINDS: usize = 6;

impl Warn {
    fn index(self) -> usize {
        self as usize
    }

    fn label(self) -> &'static str {
        match self {
            Warn::NotJson => "lines that are not JSON",
            Warn::InvalidUtf8 => "lines with invalid UTF-8",
            Warn::Joined => "values joined from several lines",
            Warn::Format => "format warnings",
            Warn::Run => "run warnings",
            Warn::Session => "failed or incomplete sessions",
        }
    }
}

/// Rewrites a diagnostic line before it is printed (`None`: unchanged).
pub type Redact = Box<dyn Fn(&str) -> Option<String>>;

/// Print one line to `out`, redacted when `redact` is set.
fn put(out: &mut dyn Write, redact: &Option<Redact>, line: std::fmt::Arguments<'_>) {
    // A failed stderr write must not abort the run (ripgrep #1966).
    match redact {
        None => {
            let _ = writeln!(out, "{line}");
        }
        Some(r) => {
            let s = line.to_string();
            let _ = writeln!(out, "{}", r(&s).unwrap_or(s));
        }
    }
}

/// One diagnostic, recorded instead of written ([`Diag::recording`]), to be
/// written later by [`Diag::replay`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Warn(Warn, u64, String),
    Note(String),
    Session(String),
    Error(String),
    /// A record its dialect's reader did not understand (kept as an
    /// `unknown` event): the dialect, what the record is, and its line.
    NotUnderstood {
        dialect: &'static str,
        what: String,
        line: u64,
    },
    /// A file a directory walk found and did not read, and why.
    Skipped(String, &'static str),
}

/// How many skipped files [`Diag::finish`] names for each reason before it
/// only counts the rest.
pub const SKIPPED_NAMED: usize = 5;

/// The records of one dialect and type that were not understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// How many.
    pub records: u64,
    /// The first one: its file and line.
    pub first: (String, u64),
}

/// Collects diagnostics for one run, written to `out` (which lives for `'w`:
/// an embedder may pass a borrowed writer).
pub struct Diag<'w> {
    out: Box<dyn Write + 'w>,
    counts: [u64; KINDS],
    /// Input lines that were not valid input (exit status 1).
    pub(crate) bad_lines: u64,
    /// A file could not be read or an output write failed (exit status 2).
    pub(crate) fatal: bool,
    /// Display name of the input being read (`-` for standard input).
    pub(crate) file: String,
    /// `-q`: warnings are only counted, one line per kind at the end.
    pub(crate) quiet: bool,
    /// The terminal the transcript shares with these messages, if it does.
    pub(crate) shared_terminal: Option<SharedLine>,
    /// Replaces secrets in every line printed (warnings quote the input).
    pub(crate) redact: Option<Redact>,
    /// Messages go here, uncounted and uncapped, instead of to `out`.
    record: Option<Box<dyn FnMut(Message) + 'w>>,
    /// Records not understood, per dialect and record type
    /// (docs/dialects.md#drift): reported once, at the end.
    drift: BTreeMap<(&'static str, String), Drift>,
    /// Files a directory walk did not read, per reason (in the order the
    /// reasons came up): how many, and the first [`SKIPPED_NAMED`] names.
    skipped: Vec<(&'static str, u64, Vec<String>)>,
}

impl<'w> Diag<'w> {
    /// Warnings written to `out` (the command line's: standard error).
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Diag {
            out,
            counts: [0; KINDS],
            bad_lines: 0,
            fatal: false,
            file: "-".to_owned(),
            quiet: false,
            shared_terminal: None,
            redact: None,
            record: None,
            drift: BTreeMap::new(),
            skipped: Vec::new(),
        }
    }

    /// Diagnostics handed to `record` as they are made, neither counted
    /// nor capped: the diagnostics of one file read by a `--jobs` worker,
    /// written later, in order, by the run's own [`Diag::replay`].
    pub(crate) fn recording(record: Box<dyn FnMut(Message) + 'w>) -> Self {
        let mut d = Diag::sink();
        d.record = Some(record);
        d
    }

    /// Write a recorded message as if it were made now (warnings and
    /// session reports name the current [`Diag::file`]).
    pub(crate) fn replay(&mut self, m: Message) {
        match m {
            Message::Warn(kind, line, msg) => self.warn(kind, line, msg),
            Message::Note(msg) => self.note(msg),
            Message::Session(msg) => self.session(msg),
            Message::Error(msg) => self.error(msg),
            Message::NotUnderstood {
                dialect,
                what,
                line,
            } => self.not_understood(dialect, what, line),
            Message::Skipped(name, why) => self.skipped_file(name, why),
        }
    }

    /// A file a directory walk found and did not read (`why`: the reason,
    /// shared by the files it is said of). Nothing is printed now:
    /// [`Diag::finish`] says in one line per reason how many there were and
    /// names the first ones, even with `-q`, as it does for drift.
    pub(crate) fn skipped_file(&mut self, name: String, why: &'static str) {
        if let Some(r) = &mut self.record {
            return r(Message::Skipped(name, why));
        }
        let at = match self.skipped.iter().position(|(w, ..)| *w == why) {
            Some(at) => at,
            None => {
                self.skipped.push((why, 0, Vec::new()));
                self.skipped.len() - 1
            }
        };
        let (_, n, names) = &mut self.skipped[at];
        *n += 1;
        if names.len() < SKIPPED_NAMED {
            names.push(name);
        }
    }

    /// Write from now on to `out` (the command line's progress bar: lines
    /// written above it).
    pub fn redirect(&mut self, out: Box<dyn Write + 'w>) {
        self.out = out;
    }

    /// Warnings that go nowhere (only counted).
    pub fn sink() -> Self {
        Diag::new(Box::new(std::io::sink()))
    }

    /// Start a message on a line of its own when the transcript left one
    /// unfinished on the terminal they share.
    fn own_line(&mut self) {
        if self
            .shared_terminal
            .as_ref()
            .is_some_and(SharedLine::break_for_message)
        {
            let _ = self.out.write_all(b"\n");
        }
    }

    /// How many warnings of one kind are printed one by one.
    fn shown_per_kind(&self) -> u64 {
        if self.quiet {
            0
        } else {
            WARNINGS_SHOWN_PER_KIND
        }
    }

    /// Report a problem at `line` of the current file.
    pub(crate) fn warn(&mut self, kind: Warn, line: u64, msg: impl Display) {
        if let Some(r) = &mut self.record {
            return r(Message::Warn(kind, line, msg.to_string()));
        }
        let cap = self.shown_per_kind();
        let n = &mut self.counts[kind.index()];
        *n += 1;
        if *n <= cap {
            self.own_line();
            put(
                &mut self.out,
                &self.redact,
                format_args!("cstream: warning: {}:{line}: {msg}", self.file),
            );
        }
    }

    /// Report something about the run that has no line.
    pub(crate) fn note(&mut self, msg: impl Display) {
        if let Some(r) = &mut self.record {
            return r(Message::Note(msg.to_string()));
        }
        let cap = self.shown_per_kind();
        let n = &mut self.counts[Warn::Run.index()];
        *n += 1;
        if *n <= cap {
            self.own_line();
            put(
                &mut self.out,
                &self.redact,
                format_args!("cstream: warning: {msg}"),
            );
        }
    }

    /// Report a session that failed or ended without a result (`-e`):
    /// `cstream: FILE: MSG`, capped like a warning.
    pub(crate) fn session(&mut self, msg: impl Display) {
        if let Some(r) = &mut self.record {
            return r(Message::Session(msg.to_string()));
        }
        let n = &mut self.counts[Warn::Session.index()];
        *n += 1;
        if *n <= WARNINGS_SHOWN_PER_KIND {
            put(
                &mut self.out,
                &self.redact,
                format_args!("cstream: {}: {msg}", self.file),
            );
        }
    }

    /// Write `cstream: error: MSG`: a problem that makes the run fail (exit
    /// status 2), such as an output that cannot be created.
    pub fn error(&mut self, msg: impl Display) {
        self.fatal = true;
        if let Some(r) = &mut self.record {
            return r(Message::Error(msg.to_string()));
        }
        self.own_line();
        put(
            &mut self.out,
            &self.redact,
            format_args!("cstream: error: {msg}"),
        );
    }

    /// Count a record of `dialect` at `line` of the current file that its
    /// reader did not understand (`what`: the record's type, as
    /// [`crate::dialect::record_kind`] names it). Nothing is printed now:
    /// [`Diag::finish`] says once per dialect and type how many there were.
    pub(crate) fn not_understood(&mut self, dialect: &'static str, what: String, line: u64) {
        if let Some(r) = &mut self.record {
            return r(Message::NotUnderstood {
                dialect,
                what,
                line,
            });
        }
        let file = &self.file;
        self.drift
            .entry((dialect, what))
            .and_modify(|d| d.records += 1)
            .or_insert_with(|| Drift {
                records: 1,
                first: (file.clone(), line),
            });
    }

    /// The records not understood so far, per dialect and type, in name order.
    pub(crate) fn drift(&self) -> impl Iterator<Item = (&'static str, &str, &Drift)> {
        self.drift.iter().map(|((d, w), n)| (*d, w.as_str(), n))
    }

    /// How many records were not understood in all.
    pub(crate) fn not_understood_count(&self) -> u64 {
        self.drift.values().map(|d| d.records).sum()
    }

    /// Print an informational line (`cstream: MSG`), never capped.
    pub(crate) fn info(&mut self, msg: impl Display) {
        self.own_line();
        let _ = writeln!(self.out, "cstream: {msg}");
        let _ = self.out.flush();
    }

    /// Print one line per capped kind saying how many were not shown
    /// (with `quiet`, one line per kind that occurred at all).
    pub(crate) fn finish(&mut self) {
        let cap = self.shown_per_kind();
        self.own_line();
        // Drift first: one line per dialect and record type, even with
        // `-q` (a vendor's format change is never silent).
        for ((dialect, what), d) in &self.drift {
            let (file, line) = &d.first;
            let records = if d.records == 1 { "record" } else { "records" };
            put(
                &mut self.out,
                &self.redact,
                format_args!(
                    "cstream: warning: {dialect}: {} {records} of type {} not understood \
                     (kept as unknown events; first at {file}:{line})",
                    d.records,
                    crate::diag::excerpt(&format!("{what:?}"), 80),
                ),
            );
        }
        for (why, n, names) in std::mem::take(&mut self.skipped) {
            let files = if n == 1 { "file" } else { "files" };
            let mut list = names.join(", ");
            let more = n - names.len() as u64;
            if more > 0 {
                list.push_str(&format!(", …and {more} more"));
            }
            put(
                &mut self.out,
                &self.redact,
                format_args!("cstream: warning: {n} {files} skipped: {why}: {list}"),
            );
        }
        for kind in [
            Warn::NotJson,
            Warn::InvalidUtf8,
            Warn::Joined,
            Warn::Format,
            Warn::Run,
            Warn::Session,
        ] {
            let n = self.counts[kind.index()];
            if n > 0 && self.quiet {
                let _ = writeln!(self.out, "cstream: warning: {}: {n}", kind.label());
            } else if n > cap {
                let _ = writeln!(
                    self.out,
                    "cstream: warning: {} more {} not shown ({n} in all)",
                    n - cap,
                    kind.label()
                );
            }
        }
        let _ = self.out.flush();
    }

    /// How many warnings of `kind` were reported.
    #[cfg(test)]
    pub(crate) fn count(&self, kind: Warn) -> u64 {
        self.counts[kind.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn warnings_are_capped_per_kind() {
        let buf = Buf::default();
        let mut d = Diag::new(Box::new(buf.clone()));
        d.file = "x.jsonl".into();
        for i in 1..=25 {
            d.warn(Warn::NotJson, i, "line is not JSON");
        }
        d.warn(Warn::InvalidUtf8, 30, "bad utf8");
        d.finish();
        let s = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(s.matches("line is not JSON").count(), 20);
        assert!(s.contains("cstream: warning: x.jsonl:1: line is not JSON\n"));
        assert!(s.contains("x.jsonl:30: bad utf8"));
        assert!(s.contains("5 more lines that are not JSON not shown (25 in all)"));
    }

    #[test]
    fn quiet_counts_instead_of_showing() {
        let buf = Buf::default();
        let mut d = Diag::new(Box::new(buf.clone()));
        d.quiet = true;
        for i in 1..=3 {
            d.warn(Warn::NotJson, i, "line is not JSON");
        }
        d.note("a second session begins");
        d.finish();
        let s = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            s,
            "cstream: warning: lines that are not JSON: 3\ncstream: warning: run warnings: 1\n"
        );
        assert_eq!(d.count(Warn::NotJson), 3);
    }
}
