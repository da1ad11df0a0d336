//! The framer's handler for one run: parse each record, normalize it and
//! hand it to the sink; then finish the output and make the report.

use std::cell::RefCell;
use std::io::{self, Write};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use super::{CallbackSink, Config, DIALECT_CHECK_RECORDS, ERROR_LINE_BYTES, Input, Report};
use crate::diag::{Diag, Warn};
use crate::dialect::archive::FileCounts;
use crate::dialect::{AutoParser, Dialect, Item};
use crate::event::Sink;
use crate::event::{Event, Kind};
use crate::input::{Framer, HUGE_RECORD_BYTES, Handler, Parsed};
use crate::output;
use crate::transform::Normalizer;
use crate::transform::coalesce::Coalesce;
use crate::transform::redact::{Redact, RedactCounts, Redactor};
use crate::transform::stats::{Counters, CountingSink, CountingWriter, Stats};
use crate::transform::summary::{RunSummary, SummarySink};
use crate::transform::truncate::Truncate;

/// The framer's handler: parse, normalize, write.
pub(super) struct Pipeline<'s> {
    pub(super) parser: AutoParser,
    pub(super) norm: Normalizer,
    pub(super) sink: Box<dyn Sink + 's>,
    pub(super) strict: bool,
    pub(super) line_buffered: bool,
    pub(super) stop: bool,
    /// The format writes one SSE stream per session: warn (once) when a
    /// second session begins, since most clients read only the first.
    pub(super) warn_sessions: bool,
    /// The input being read may pause (a pipe, a terminal): not a regular file.
    pub(super) live: bool,
    /// Regular files may be mapped rather than read (not `--no-mmap`).
    pub(super) mmap: bool,
    /// This input has had a record (a JSON line), so the stream has begun.
    pub(super) begun: bool,
    /// Lines that were not JSON before this input's stream began: an
    /// agent's own notices (stderr captured with stdout). They count as bad
    /// lines only if no stream follows (or with `--strict`).
    pub(super) notices: u64,
    /// `--stats`: the counting adapters' counters.
    pub(super) counters: Option<Rc<Counters>>,
    /// `--redact`: matches per kind.
    pub(super) redacted: Option<RedactCounts>,
    /// The `--since`/`--until` filter's counts, when it is on.
    pub(crate) window: Option<Rc<crate::transform::window::WindowCounts>>,
    pub(super) started: Instant,
    /// `-e`: report sessions that did not end well.
    pub(super) report_sessions: bool,
    /// The dialect `--from` forced (`None` with auto-detection).
    pub(super) forced: Option<Dialect>,
    /// Records of the current input, and those of them that only gave
    /// `unknown` events (counted with a forced dialect, until it is judged).
    pub(super) records: u64,
    pub(super) unknown_records: u64,
    /// The current input was checked against the forced dialect.
    pub(super) dialect_checked: bool,
    /// The items of a huge record, detached from it, each with its line,
    /// and the record's outcome: written by [`Handler::released`].
    pub(super) held: Vec<(u64, Item<'static>)>,
    pub(super) held_from: Option<Parsed>,
    /// `--summary`/`--outputs`: what the sessions came to, and the files
    /// it is appended to when the run ends.
    pub(super) summary: Option<Rc<RefCell<RunSummary>>>,
    pub(super) summary_file: Option<PathBuf>,
    pub(super) outputs_file: Option<PathBuf>,
    /// Redacts the `--summary`/`--outputs` text (on unless `--no-redact`):
    /// the events it was made from are redacted only with the transcripts
    /// or `--redact`, and the session header (id, model, directory) never.
    pub(super) summary_redactor: Option<Redactor>,
    /// Files read per dialect (when a directory was walked).
    pub(super) files: Option<FileCounts>,
    /// A `--jobs` worker's: session counts and endings go on its tape.
    pub(super) recorder: Option<super::jobs::Recorder>,
    /// Records this long or longer are detached ([`HUGE_RECORD_BYTES`];
    /// tests lower it to send every record that way).
    pub(super) huge: usize,
    /// The file the next input is read from (`None`: standard input or a
    /// reader): saved sessions find their side files beside it.
    pub(super) source: Option<PathBuf>,
    /// Of a session store, the one session to read (`--output-dir`).
    pub(super) stored_session: Option<String>,
}

impl<'s> Pipeline<'s> {
    /// The pipeline for `cfg`, writing to `out`: normalizer → truncation →
    /// coalescing → the format's sink.
    pub(super) fn new<W: Write + 's>(cfg: &Config, out: W) -> Self {
        let counters = cfg.stats.then(|| Rc::new(Counters::default()));
        let sink = match &counters {
            // Counted right at the format: events as the format gets them
            // (after truncation and coalescing), bytes as it writes them.
            Some(c) => Box::new(CountingSink::new(
                output::sink(
                    cfg.format,
                    &cfg.output,
                    CountingWriter::new(out, Rc::clone(c)),
                ),
                Rc::clone(c),
            )),
            None => output::sink(cfg.format, &cfg.output, out),
        };
        Pipeline::around(cfg, sink, counters)
    }

    /// The pipeline for `cfg` that hands each event to `f` in place of a
    /// format: normalizer → truncation → coalescing → `f`.
    pub(super) fn with_callback<F>(cfg: &Config, f: F) -> Self
    where
        F: FnMut(&str, &Event<'_>) -> io::Result<()> + 's,
    {
        let counters = cfg.stats.then(|| Rc::new(Counters::default()));
        let sink: Box<dyn Sink + 's> = match &counters {
            Some(c) => Box::new(CountingSink::new(Box::new(CallbackSink(f)), Rc::clone(c))),
            None => Box::new(CallbackSink(f)),
        };
        Pipeline::around(cfg, sink, counters)
    }

    /// The pipeline for `cfg` in front of `sink` (the format, counted when
    /// `counters` is set): the adapters `cfg` asks for wrap it.
    pub(super) fn around(
        cfg: &Config,
        mut sink: Box<dyn Sink + 's>,
        counters: Option<Rc<Counters>>,
    ) -> Self {
        let started = Instant::now();
        if let Some(mode) = cfg.coalesce {
            sink = Box::new(Coalesce::new(sink, mode));
        }
        if let Some(cap) = cfg.truncate_shell {
            sink = Box::new(Truncate::new(sink, cap));
        }
        // Sees the events as the normalizer made them (redacted only).
        let summary = (cfg.summary.is_some() || cfg.outputs.is_some())
            .then(|| Rc::new(RefCell::new(RunSummary::default())));
        if let Some(st) = &summary {
            sink = Box::new(SummarySink::new(sink, Rc::clone(st)));
        }
        if !cfg.keep_images {
            // Before the summary and every format: no payload carries an image.
            sink = Box::new(crate::transform::images::Images::new(sink));
        }
        // Before the summary and the formats: a session outside the window
        // is not counted anywhere.
        let mut window = None;
        if cfg.window != (None, None) {
            let w = crate::transform::window::Window::new(sink, cfg.window.0, cfg.window.1);
            window = Some(w.counts());
            sink = Box::new(w);
        }
        // Outermost, so that nothing downstream (the summary, coalescing,
        // truncation markers, the format) ever sees a secret.
        let mut redacted = None;
        if let Some(user) = cfg.redact.output(cfg.format) {
            let r = Redactor::new(user).expect("--redact-pattern checked on the command line");
            redacted = Some(r.counter());
            sink = Box::new(Redact::new(sink, r));
        }
        let mut parser = AutoParser::new(cfg.from);
        parser.reads = sink.reads();
        Pipeline {
            parser,
            norm: Normalizer::new(cfg.normalize),
            sink,
            strict: cfg.strict,
            line_buffered: cfg.line_buffered,
            stop: false,
            warn_sessions: cfg.format.is_sse(),
            live: true,
            mmap: !cfg.no_mmap,
            begun: false,
            notices: 0,
            counters,
            redacted,
            window,
            started,
            report_sessions: cfg.report_sessions,
            forced: cfg.from,
            records: 0,
            unknown_records: 0,
            dialect_checked: false,
            held: Vec::new(),
            held_from: None,
            huge: HUGE_RECORD_BYTES,
            recorder: None,
            files: cfg.files_skipped.map(|skipped| FileCounts {
                skipped,
                ..FileCounts::default()
            }),
            source: None,
            stored_session: None,
            summary,
            summary_file: cfg.summary.clone(),
            outputs_file: cfg.outputs.clone(),
            summary_redactor: (cfg.summary.is_some() || cfg.outputs.is_some())
                .then(|| cfg.redact.summary())
                .flatten()
                .map(|user| {
                    Redactor::new(user).expect("--redact-pattern checked on the command line")
                }),
        }
    }

    /// `--summary`: the sessions from here on come from input `i`.
    pub(super) fn summary_input(&self, cfg: &Config, inputs: &[Input], i: usize) {
        if let Some(st) = &self.summary {
            let name = match cfg.input_names.get(i) {
                Some(n) => n.clone(),
                None => inputs[i].short_name(),
            };
            st.borrow_mut().file = name;
        }
    }

    /// Report the sessions that ended badly since the last call (with
    /// `-e`), one line each. Called after every record: the check is
    /// inlined, the report is not.
    #[inline]
    pub(super) fn report_endings(&mut self, diag: &mut Diag) {
        if self.norm.has_ended() {
            self.report_ended(diag);
        }
    }

    #[cold]
    pub(super) fn report_ended(&mut self, diag: &mut Diag) {
        for e in self.norm.take_ended() {
            if !self.report_sessions {
                continue;
            }
            match &self.recorder {
                Some(r) => r.ended(e),
                None => report_ended_one(&e, diag),
            }
        }
    }

    /// With `--from`: warn once per input, as soon as its first records
    /// show that another dialect wrote them (the detection table says
    /// which). Then the count of unknown records below says nothing more.
    pub(super) fn wrong_dialect(&mut self, diag: &mut Diag) {
        let (Some(forced), Some(seen)) = (self.forced, self.parser.take_mismatch()) else {
            return;
        };
        self.dialect_checked = true;
        let file = diag.file.clone();
        diag.note(format_args!(
            "{file}: read as {} (--from) but its first records look like {}; \
             without --from the dialect is detected",
            forced.name(),
            seen.name()
        ));
    }

    /// With `--from`: warn once per input when most of its records are
    /// unknown to the dialect (`at_end`: the input is over).
    pub(super) fn check_dialect(&mut self, diag: &mut Diag, at_end: bool) {
        let Some(dialect) = self.forced else {
            return;
        };
        if self.dialect_checked || self.records == 0 {
            return;
        }
        if !at_end && self.records < DIALECT_CHECK_RECORDS {
            return;
        }
        self.dialect_checked = true;
        if self.unknown_records * 2 > self.records {
            let file = diag.file.clone();
            let name = dialect.name();
            let which = if at_end { "its" } else { "its first" };
            diag.note(format_args!(
                "{file}: {} of {which} {} records are unknown to the {name} reader (--from {name}); \
                 they are kept as unknown events. Without --from the dialect is detected",
                self.unknown_records, self.records
            ));
        }
    }

    /// Count the records the reader did not understand; with `--strict`,
    /// the first of them stops the run (a CI job learns the day a vendor
    /// changes its format).
    #[cold]
    pub(super) fn drifted(&mut self, drift: Vec<(u64, String, bool)>, diag: &mut Diag) {
        // cstream's own `unknown` events were counted by the run that made them.
        let dialect = match self.parser.chosen {
            Some(Dialect::Events) => return,
            Some(d) => d.name(),
            None => "unknown",
        };
        let own = self.parser.counts_drift();
        for (line, what, said) in drift {
            // A reader that counts its own never has its events counted.
            if own && !said {
                continue;
            }
            if self.strict && !self.stop {
                self.stop = true;
                diag.warn(
                    Warn::Format,
                    line,
                    format_args!(
                        "a record of type {} that the {dialect} reader does not understand; \
                         --strict stops here",
                        crate::diag::excerpt(&format!("{what:?}"), 80)
                    ),
                );
            }
            diag.not_understood(dialect, what, line);
        }
    }

    /// The `--stats` figures so far (None without `--stats`).
    pub(super) fn stats(&self, framer: &Framer, diag: &Diag) -> Option<Stats> {
        let c = self.counters.as_ref()?;
        let o = &self.norm.outcomes;
        Some(Stats {
            lines: framer.lines_in,
            bytes_in: framer.bytes_in,
            bytes_out: c.bytes_out(),
            skipped: diag.bad_lines,
            sessions: o.sessions,
            failed: o.failed,
            incomplete: o.incomplete,
            events: c.events(),
            redacted: self.redacted.as_ref().map(RedactCounts::nonzero),
            files: self.files.clone(),
            not_understood: diag.not_understood_count(),
            elapsed: self.started.elapsed(),
        })
    }

    /// Tell the normalizer the input's dialect, once known. A session of
    /// cstream's own events read back without its `session_started` came
    /// from an agent nobody named: `unknown`, not `events`.
    pub(super) fn name_dialect(&mut self) {
        // Once named, an input's dialect stays (after every record).
        if self.norm.has_dialect() {
            return;
        }
        match self.parser.chosen {
            Some(Dialect::Events) => self.norm.set_dialect("unknown"),
            Some(d) => self.norm.set_dialect(d.name()),
            None => {}
        }
    }

    pub(super) fn check_sessions(&mut self, diag: &mut Diag) {
        if let Some(r) = &self.recorder {
            // Whether it is the run's second session is known when the
            // tape is played.
            return r.sessions(self.norm.outcomes.sessions);
        }
        if self.warn_sessions && self.norm.outcomes.sessions > 1 {
            self.warn_sessions = false;
            let file = diag.file.clone();
            diag.note(format_args!(
                "{file}: a second session begins; writing one SSE stream per session \
                 (most clients read only the first)"
            ));
        }
    }

    /// Write the items of a huge record, detached from it (see `record`).
    #[cold]
    pub(super) fn release_held(&mut self, diag: &mut Diag) -> io::Result<()> {
        let Some(parsed) = self.held_from.take() else {
            return Ok(());
        };
        let mut intake = Intake::new();
        let mut held = std::mem::take(&mut self.held);
        for (line, mut item) in held.drain(..) {
            intake.item(&mut self.norm, &mut *self.sink, diag, line, &mut item)?;
        }
        // The emptied list keeps its (small) capacity for the next one.
        self.held = held;
        let only_unknown = self.taken(intake, diag);
        self.recorded(parsed, only_unknown, diag)
    }

    /// After the items of a record (or what a parser held to the end) went
    /// through `intake`: report the ones not understood. True when the
    /// items were all `unknown` events.
    #[inline(always)]
    pub(super) fn taken(&mut self, intake: Intake, diag: &mut Diag) -> bool {
        if !intake.drift.is_empty() {
            self.drifted(intake.drift, diag);
        }
        intake.unknown && !intake.known
    }

    /// After a record's items were written: what the pipeline does once per
    /// record (`unknown`: it gave only `unknown` events).
    #[inline(always)]
    pub(super) fn recorded(
        &mut self,
        parsed: Parsed,
        unknown: bool,
        diag: &mut Diag,
    ) -> io::Result<()> {
        self.name_dialect();
        if parsed == Parsed::Done {
            if !self.begun {
                self.begun = true;
                self.notices = 0;
            }
            // Counted only while a forced dialect is being judged.
            if self.forced.is_some() && !self.dialect_checked {
                self.wrong_dialect(diag);
                self.records += 1;
                self.unknown_records += u64::from(unknown);
                self.check_dialect(diag, false);
            }
        }
        self.report_endings(diag);
        self.check_sessions(diag);
        if self.line_buffered && parsed == Parsed::Done {
            self.sink.flush()?;
        }
        Ok(())
    }
}

/// Name a session that failed or ended without a result (`-e`).
pub(super) fn report_ended_one(e: &crate::transform::Ended, diag: &mut Diag) {
    let id = crate::diag::excerpt(&e.session_id, 80);
    let error = e.error.as_deref().map(|m| crate::diag::excerpt(m, 300));
    match (e.failed, error) {
        (true, Some(m)) => diag.session(format_args!("session {id} failed: {m}")),
        (true, None) => diag.session(format_args!(
            "session {id} failed (the agent gave no message)"
        )),
        (false, Some(m)) => diag.session(format_args!(
            "session {id} ended without a result; the last error was: {m}"
        )),
        (false, None) => diag.session(format_args!(
            "session {id} ended without a result (cut off?)"
        )),
    }
}

/// The one way an item a reader gives reaches the sink, whether it comes
/// from a record just read, from a huge record's held items, or from what a
/// parser still held when its input ended: sorted as known or `unknown`
/// (`recorded` counts it while a forced dialect is judged), noted when not
/// understood (for the drift report, docs/dialects.md#drift), an impossible
/// time dropped, then normalized.
pub(super) struct Intake {
    /// Some item was an `unknown` event; some was a known one.
    unknown: bool,
    known: bool,
    /// Line, record type, and whether the reader said so itself.
    drift: Vec<(u64, String, bool)>,
}

impl Intake {
    #[inline(always)]
    pub(super) fn new() -> Self {
        Intake {
            unknown: false,
            known: false,
            drift: Vec::new(),
        }
    }

    #[inline(always)]
    pub(super) fn item(
        &mut self,
        norm: &mut Normalizer,
        sink: &mut dyn Sink,
        diag: &mut Diag,
        line: u64,
        item: &mut Item<'_>,
    ) -> io::Result<()> {
        match item {
            Item::Event(Event {
                kind: Kind::Unknown { raw },
                ..
            }) => {
                self.unknown = true;
                let what = crate::dialect::record_kind(raw.get());
                self.drift.push((line, what, false));
            }
            Item::Event(_) => self.known = true,
            Item::NotUnderstood(what) => self.drift.push((line, what.to_string(), true)),
            _ => {}
        }
        drop_impossible_ts(item, line, diag);
        norm.line = line;
        norm.item(item, sink, diag)
    }
}

/// A record for [`Pipeline::record_in`]: for the parser's checked path,
/// as bytes nobody has validated yet, or validated.
enum Rec<'a> {
    Unchecked(&'a [u8]),
    Str(&'a str),
}

impl Pipeline<'_> {
    /// Parse a record that fits in memory as it is (not huge), through
    /// the parser's checked path (bytes not validated yet: `None` when it
    /// does not take the record, crate::input::Handler::record_checked) or
    /// its usual one.
    #[inline]
    fn record_in(
        &mut self,
        rec: Rec<'_>,
        line: u64,
        diag: &mut Diag,
    ) -> io::Result<Option<Parsed>> {
        let norm = &mut self.norm;
        let sink = &mut *self.sink;
        let mut intake = Intake::new();
        // Each item comes with the line of its record: a record detection
        // kept until a later one told the dialect is not this one.
        // Items come by reference: an event is not copied on its way.
        let mut each = |line, item: &mut Item<'_>| intake.item(norm, sink, diag, line, item);
        let parsed = match rec {
            Rec::Unchecked(rec) => match self.parser.parse_checked(rec, line, &mut each)? {
                Some(p) => p,
                None => return Ok(None),
            },
            Rec::Str(rec) => self.parser.parse(rec, line, &mut each)?,
        };
        let only_unknown = self.taken(intake, diag);
        self.recorded(parsed, only_unknown, diag)?;
        Ok(Some(parsed))
    }
}

impl Handler for Pipeline<'_> {
    fn stream_member(&mut self, head: &[u8], key: &[u8]) -> bool {
        // The dialect in use, else the one the head shows.
        let dialect = self.parser.chosen.or_else(|| {
            match std::str::from_utf8(head).map(crate::dialect::detect_record) {
                Ok(crate::dialect::Detected::Is(d)) => Some(d),
                _ => None,
            }
        });
        let streamed = dialect.is_some_and(|d| d.streams_member(key));
        if streamed {
            self.parser.set_document();
        }
        streamed
    }

    #[inline]
    fn record_checked(
        &mut self,
        bytes: &[u8],
        line: u64,
        diag: &mut Diag,
    ) -> io::Result<Option<Parsed>> {
        self.released(diag)?;
        // A reader with no checked path has the record validated once, in
        // `record`.
        if !self.parser.reads_checked() {
            return Ok(None);
        }
        // Huge records take the usual way (`record`), and so does one the
        // checked path refuses, invalid UTF-8 included.
        if bytes.len() >= self.huge {
            return Ok(None);
        }
        self.record_in(Rec::Unchecked(bytes), line, diag)
    }

    fn record(&mut self, bytes: &[u8], line: u64, diag: &mut Diag) -> io::Result<Parsed> {
        // Whatever an earlier record of this line held goes first.
        self.released(diag)?;
        // One validation of the whole record lets the parsers read it as
        // `str`, where serde_json does not check every string again.
        // Invalid UTF-8 goes back to the framer, which repairs it.
        let Ok(rec) = simdutf8::basic::from_utf8(bytes) else {
            return Ok(Parsed::Invalid);
        };
        if rec.len() >= self.huge {
            // Detached from the record and written once the framer has
            // given its buffer back: a text that had escapes was unescaped
            // into a copy of its own, and the outputs copy it once more
            // (documents keep the content for `finalContent`), so the line,
            // that copy and the outputs' would otherwise be held at once.
            let held = &mut self.held;
            let parsed = self.parser.parse(rec, line, &mut |line, item| {
                held.push((line, std::mem::replace(item, Item::Verbatim).into_owned()));
                Ok(())
            })?;
            self.held_from = Some(parsed);
            return Ok(parsed);
        }
        let parsed = self.record_in(Rec::Str(rec), line, diag)?;
        Ok(parsed.expect("the parser's `parse` reads every record"))
    }

    /// Called for every record: the check is inlined, the work is not.
    #[inline]
    fn released(&mut self, diag: &mut Diag) -> io::Result<()> {
        if self.held_from.is_none() {
            return Ok(());
        }
        self.release_held(diag)
    }

    fn bad_line(&mut self, text: &str, line: u64, diag: &mut Diag) -> io::Result<()> {
        // What a record before it on this line held goes first.
        self.released(diag)?;
        let cut = crate::strings::floor_char_boundary(text, ERROR_LINE_BYTES);
        let ev = Event::new(Kind::Error {
            message: text[..cut].into(),
            fatal: false,
            source: Some("stdout".into()),
        });
        self.norm.line = line;
        self.norm
            .item(&mut Item::Event(ev), &mut *self.sink, diag)?;
        self.report_endings(diag);
        self.check_sessions(diag);
        if self.strict {
            self.stop = true;
        } else if !self.begun {
            // Warned about already; whether it is a bad line (exit 1)
            // depends on whether a stream follows it: see `end_input`.
            diag.bad_lines -= 1;
            self.notices += 1;
        }
        if self.line_buffered {
            self.sink.flush()?;
        }
        Ok(())
    }

    fn idle(&mut self) -> io::Result<()> {
        debug_assert!(
            self.held_from.is_none(),
            "the framer releases every line before it reads on"
        );
        // A regular file pauses only between read blocks, where nothing is
        // waited for: the items before its init stay held for the init.
        if self.live {
            self.norm.idle(&mut *self.sink)?;
        }
        self.sink.idle()
    }

    fn stop(&self) -> bool {
        // A file of an agent cstream does not read is not read on.
        self.stop || self.parser.foreign().is_some()
    }
}

/// A timestamp beyond year 9999 or before year 0 is no time an agent wrote
/// down: no date format can carry it (documents' `created` would not be
/// RFC 3339), so it is dropped, with a warning, as if the line had none.
pub(super) fn drop_impossible_ts(item: &mut Item<'_>, line: u64, diag: &mut Diag) {
    if let Some(ts) = item.ts_mut()
        && let Some(ms) = *ts
        && !crate::time::TS_RANGE_MS.contains(&ms)
    {
        *ts = None;
        diag.warn(
            Warn::Format,
            line,
            format_args!("timestamp {ms} ms is outside years 0000-9999; ignored"),
        );
    }
}

/// End the run: finish the output (unless writing already failed), print
/// the warning counts and the `--stats` line, and make the report.
pub(super) fn finish(
    mut p: Pipeline<'_>,
    framer: &Framer,
    read: io::Result<()>,
    diag: &mut Diag,
) -> io::Result<Report> {
    let r = read.and_then(|()| p.sink.finish());
    // Also after a failed write: CI wants the verdict all the same.
    if let Some(st) = &p.summary {
        let mut st = st.borrow_mut();
        st.end_session();
        st.fold_saved();
        st.not_understood = diag
            .drift()
            .map(|(d, w, n)| (d.to_owned(), w.to_owned(), n.records))
            .collect();
        let redact = |text: String| match &p.summary_redactor {
            Some(r) => r.redact(&text).unwrap_or(text),
            None => text,
        };
        for (file, text) in [
            (
                &p.summary_file,
                p.summary_file.as_ref().map(|_| st.markdown(&redact)),
            ),
            (
                &p.outputs_file,
                p.outputs_file.as_ref().map(|_| redact(st.outputs())),
            ),
        ] {
            if let (Some(file), Some(text)) = (file, text)
                && let Err(e) = append(file, &text)
            {
                diag.error(format_args!("{}: {e}", file.display()));
            }
        }
    }
    if let Some(msg) = p.window.as_ref().and_then(|w| w.nothing_passed()) {
        diag.note(msg);
    }
    diag.finish();
    let stats = p.stats(framer, diag);
    if let Some(s) = &stats {
        // Also after a failed write (`cstream --stats … | head`): what was
        // done until then is still worth knowing.
        diag.info(format_args!("stats: {s}"));
    }
    r.map(|()| Report {
        outcomes: p.norm.outcomes,
        bad_lines: diag.bad_lines,
        fatal: diag.fatal,
        stopped: p.stop,
        stats,
    })
}

/// Append `text` to `file` (created if missing), as `$GITHUB_STEP_SUMMARY`
/// and `$GITHUB_OUTPUT` expect: other steps write there too.
fn append(file: &std::path::Path, text: &str) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    f.write_all(text.as_bytes())
}
