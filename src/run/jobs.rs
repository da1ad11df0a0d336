//! `--jobs N`: the files of a run read by N threads, written in input order,
//! byte for byte what one thread writes (docs/ARCHITECTURE.md#jobs).
//!
//! Each worker takes the next file, and reads it through its own pipeline
//! (framing, dialect reader, normalizer) up to the sink: there a tape sink
//! records the sink calls (sessions, events, flushes), and the file's
//! diagnostics are recorded on the same tape in the order they were made.
//! The main thread plays the tapes, file after file, into the one sink
//! chain of the run (redaction, summary, truncation, coalescing, counting,
//! the format) and the run's diagnostics: the formats and the warning caps
//! see exactly the calls a single pipeline would have made.
//!
//! When the run's format writes each event on its own and nothing in the
//! chain sees the run as a whole (`--to events` without the summary,
//! `--stats`, redaction, a time window, coalescing or truncation), a worker
//! runs that chain itself and its tape carries the bytes it wrote instead of
//! the events ([`renders`]): the main thread only writes them out, in order.
//! A session whose id is made up from its place in the run goes on tape as
//! events all the same.
//!
//! For `--to usage` with nothing in the chain that sees the run as a whole,
//! a worker goes further still ([`reduces`]): it reduces each session of
//! its file to its row, and the tape carries the rows; the main thread only
//! keeps them (copies of one saved session counted once) and writes them
//! when the run ends.
//!
//! What depends on the files before it is settled when the tape is played,
//! not when it is made: a session's ordinal (and the `session-N` id of a
//! session without one) is counted from zero per file and shifted by the
//! sessions before it; the note that an SSE format got a second session
//! is made from the run's count; `-e` reports are worded at play time.
//!
//! Memory stays bounded: a tape goes to the main thread in chunks (a chunk
//! per two read blocks of input, or per 2,048 recorded calls) through a channel
//! that holds at most [`CHUNKS_IN_FLIGHT`] of them. The file being written
//! drains its channel as it goes; a worker ahead of it fills its own and
//! then waits, and no worker takes a file more than a window ahead of the
//! one being written (`pool::window`, sixteen per job; 64 per job when the
//! workers send rows only, `pool::window_for_rows`). So at most that many
//! files are in flight, each holding at most `CHUNKS_IN_FLIGHT` chunks,
//! whatever the size of the archive.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

use super::pool::Ordered;
use super::{Config, Input, Pipeline, Report, finish, one_file};
use crate::diag::{Diag, Message};
use crate::dialect::Dialect;
use crate::event::{Event, Reads, Session, Sink, Starts};
use crate::input::Framer;
use crate::output::usage::{Row, UsageOptions, UsageSink};
use crate::transform::{Ended, NormalizeOptions, Outcomes};

/// A chunk of tape is sent once this many blocks of input (of up to
/// `READ_BUFFER_BYTES`, 128 KiB) were read since the last… The framer tells
/// the sink before it reads a block (`Sink::idle`): counting those instead
/// of the bytes spares a counting reader, which, not being able to read
/// into memory not yet written, made the framer zero its 128 KiB buffer
/// for every file.
const CHUNK_BLOCKS: u32 = 2;
/// …or once it holds this many calls…
const CHUNK_CALLS: usize = 2048;
/// …or this much output written by the worker. Kept under the C
/// allocator's mmap threshold (128 KiB), so that a chunk's buffer comes from
/// and goes back to the heap instead of costing a map, page faults and an
/// unmap per chunk.
const CHUNK_OUTPUT_BYTES: usize = 64 * 1024;
/// Chunks a file's channel holds before its worker waits.
pub const CHUNKS_IN_FLIGHT: usize = 16;

/// One recorded call.
enum Tape {
    /// Output the worker wrote itself (see [`renders`]).
    Bytes(Vec<u8>),
    /// A session begins; `anonymous`: its id is the made-up `session-N`.
    Begin {
        session: Session,
        anonymous: bool,
    },
    Event(Event<'static>),
    /// A title learned after the session's start ([`Sink::title`]).
    Title(String),
    End,
    Flush,
    Idle,
    Diag(Message),
    /// A session that ended badly, for `-e`.
    Ended(Ended),
    /// The file's session count changed (for the SSE note).
    Sessions(u64),
    /// A session reduced to its row by the worker ([`reduces`]), with its
    /// ordinal in the file when its id is the made-up `session-N`.
    Row(Box<Row>, Option<usize>),
    /// The file is over: what it adds to the run's report.
    Done(Box<FileDone>),
}

/// What one file adds to the run's figures.
struct FileDone {
    lines_in: u64,
    bytes_in: u64,
    bad_lines: u64,
    outcomes: Outcomes,
    /// The file was opened, and the dialect it was read as.
    read: Option<Option<Dialect>>,
    /// A walked file that the sniffing rule skipped.
    skipped: bool,
    stop: bool,
}

/// What a worker needs of the run's configuration (the parts before the
/// sink; [`Config`] itself is not `Sync`).
#[derive(Clone)]
struct WorkerConfig {
    from: Option<Dialect>,
    normalize: NormalizeOptions,
    strict: bool,
    line_buffered: bool,
    report_sessions: bool,
    starts: Starts,
    reads: Reads,
    /// The workers write the output themselves ([`renders`]); without
    /// `--keep-images`, their chain replaces the images.
    render: Option<bool>,
    /// The workers reduce each session to its usage row ([`reduces`]).
    rows: Option<UsageOptions>,
    /// `--no-mmap`.
    no_mmap: bool,
}

impl WorkerConfig {
    fn config(&self) -> Config {
        Config {
            from: self.from,
            normalize: self.normalize,
            strict: self.strict,
            line_buffered: self.line_buffered,
            report_sessions: self.report_sessions,
            no_mmap: self.no_mmap,
            // Images are the sink chain's to replace: the run's chain on the
            // main thread, or the worker's own when it renders.
            keep_images: true,
            ..Config::default()
        }
    }
}

/// Whether the workers can write the run's output themselves instead of
/// recording events for the main thread to write: the format writes each
/// event on its own (`events`), and nothing in the run's chain sees the run
/// as a whole (the summary, `--stats` counting, redaction counts, the time
/// window's counts) or holds events across calls (`--coalesce`,
/// `--truncate-shell`). Then a file's bytes do not depend on the files
/// before it, except through the made-up `session-N` id of a session
/// without one, which the worker records on tape instead
/// ([`RenderSink`]). This saves the copy of every event into the tape and
/// its trip to the other thread, the larger part of what a second job
/// cost.
fn renders(cfg: &Config) -> bool {
    cfg.format == crate::output::Format::Events && per_file_chain(cfg)
}

/// Whether nothing in the run's chain before the format sees the run as a
/// whole or holds events across calls: no summary, `--outputs`, `--stats`,
/// time window, coalescing, truncation or redaction. Then a worker may run
/// the format's own work on its file ([`renders`], [`reduces`]).
fn per_file_chain(cfg: &Config) -> bool {
    cfg.summary.is_none()
        && cfg.outputs.is_none()
        && !cfg.stats
        && cfg.window == (None, None)
        && cfg.coalesce.is_none()
        && cfg.truncate_shell.is_none()
        && cfg.redact.output(cfg.format).is_none()
}

/// Whether the workers can reduce each session to its `--to usage` row
/// instead of recording its events: nothing in the run's chain sees the
/// events but the usage sink (no summary, `--stats`, redaction, time
/// window, coalescing or truncation). A row depends on its session alone,
/// except for the made-up `session-N` id, settled at play time; what
/// depends on the other files (copies of one saved session counting once,
/// the groups) is the main thread's, which keeps the rows in input order
/// exactly as its own usage sink would have made them. Image placeholders
/// are not made in the worker: a row holds counts, never a payload.
fn reduces(cfg: &Config) -> bool {
    cfg.format == crate::output::Format::Usage && per_file_chain(cfg)
}

/// The tape of one file being made, shared by its sink, its diagnostics
/// and the pipeline.
struct Recording {
    calls: RefCell<Vec<Tape>>,
    /// Output written by the worker's own chain since the last call.
    bytes: RefCell<Vec<u8>>,
    /// Where its buffers come from.
    pool: Arc<Pool>,
    /// Blocks of input read since the last chunk sent.
    blocks: Cell<u32>,
    tx: SyncSender<Vec<Tape>>,
    /// The next session the normalizer opens has a made-up id.
    anonymous: Rc<Cell<bool>>,
    /// The session count last recorded.
    sessions: Cell<u64>,
}

impl Recording {
    fn push(&self, t: Tape) {
        // What the worker wrote before this call comes before it.
        self.take_bytes();
        self.calls.borrow_mut().push(t);
    }

    /// Put the output written so far on the tape.
    fn take_bytes(&self) {
        let mut bytes = self.bytes.borrow_mut();
        if !bytes.is_empty() {
            let b = std::mem::replace(&mut *bytes, self.pool.take());
            self.calls.borrow_mut().push(Tape::Bytes(b));
        }
    }

    /// Send what was recorded when it is a chunk's worth.
    fn maybe_send(&self) -> io::Result<()> {
        let due = self.calls.borrow().len() >= CHUNK_CALLS
            || self.blocks.get() >= CHUNK_BLOCKS
            || self.bytes.borrow().len() >= CHUNK_OUTPUT_BYTES;
        if due { self.send() } else { Ok(()) }
    }

    /// The framer is about to read a block of input ([`CHUNK_BLOCKS`]).
    fn block(&self) -> io::Result<()> {
        self.blocks.set(self.blocks.get() + 1);
        self.maybe_send()
    }

    fn send(&self) -> io::Result<()> {
        self.blocks.set(0);
        self.take_bytes();
        let chunk = std::mem::take(&mut *self.calls.borrow_mut());
        // The main thread hung up: the run stopped (a failed write,
        // `--strict`); this file is not wanted any more.
        self.tx
            .send(chunk)
            .map_err(|_| io::Error::other("the run stopped"))
    }
}

/// The pipeline's hooks into the recording (`Pipeline::recorder`).
pub(super) struct Recorder(Rc<Recording>);

impl Recorder {
    /// The normalizer's session count, recorded when it changed.
    pub(super) fn sessions(&self, n: u64) {
        if self.0.sessions.replace(n) != n {
            self.0.push(Tape::Sessions(n));
        }
    }

    /// A session that ended badly.
    pub(super) fn ended(&self, e: Ended) {
        self.0.push(Tape::Ended(e));
    }
}

/// The sink a worker's pipeline writes to.
struct TapeSink {
    rec: Rc<Recording>,
    starts: Starts,
    reads: Reads,
}

impl Sink for TapeSink {
    fn starts(&self) -> Starts {
        self.starts
    }

    fn reads(&self) -> Reads {
        self.reads
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        let anonymous = self.rec.anonymous.get();
        self.rec.push(Tape::Begin {
            session: s.clone(),
            anonymous,
        });
        self.rec.maybe_send()
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.rec.push(Tape::Event(ev.clone().into_owned()));
        self.rec.maybe_send()
    }

    fn title(&mut self, _s: &Session, title: &str) -> io::Result<()> {
        self.rec.push(Tape::Title(title.to_owned()));
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        self.rec.push(Tape::End);
        self.rec.maybe_send()
    }

    fn flush(&mut self) -> io::Result<()> {
        // Two flushes in a row write what one does.
        let mut calls = self.rec.calls.borrow_mut();
        if !matches!(calls.last(), Some(Tape::Flush)) {
            calls.push(Tape::Flush);
        }
        Ok(())
    }

    fn idle(&mut self) -> io::Result<()> {
        self.rec.push(Tape::Idle);
        self.rec.block()
    }

    fn finish(&mut self) -> io::Result<()> {
        // The run's finish is the main thread's.
        Ok(())
    }
}

/// Output buffers the main thread hands back once written, so that the
/// workers write into memory already mapped instead of faulting in fresh
/// pages for every chunk (a buffer that grew past a huge event is dropped).
#[derive(Default)]
struct Pool(Mutex<Vec<Vec<u8>>>);

impl Pool {
    /// Buffers kept at most, and the capacity past which one is not kept.
    const KEEP: usize = 8;
    const MAX_CAPACITY: usize = 4 * CHUNK_OUTPUT_BYTES;

    fn take(&self) -> Vec<u8> {
        let reused = self.0.lock().ok().and_then(|mut v| v.pop());
        reused.unwrap_or_else(|| Vec::with_capacity(CHUNK_OUTPUT_BYTES + 16 * 1024))
    }

    fn give(&self, mut b: Vec<u8>) {
        if b.capacity() > Self::MAX_CAPACITY {
            return;
        }
        b.clear();
        if let Ok(mut v) = self.0.lock()
            && v.len() < Self::KEEP
        {
            v.push(b);
        }
    }
}

/// The worker's output, written into its recording.
struct RecWriter(Rc<Recording>);

impl Write for RecWriter {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut b = self.0.bytes.borrow_mut();
        if buf.len() <= b.capacity() - b.len() || b.is_empty() {
            b.extend_from_slice(buf);
        } else {
            drop(b);
            self.spill(buf);
        }
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write(buf).map(drop)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl RecWriter {
    /// A write the buffer has no room for: what is written so far goes on
    /// the tape as it is, and the write starts a buffer of its own. Growing
    /// the buffer would copy all of it (a long tool output, written a piece
    /// at a time, grew a chunk's buffer several times, each time copied
    /// whole, and past the pool's size it was dropped for a fresh one).
    #[cold]
    #[inline(never)]
    fn spill(&self, buf: &[u8]) {
        self.0.take_bytes();
        self.0.bytes.borrow_mut().extend_from_slice(buf);
    }
}

/// The sink of a worker that renders ([`renders`]): each session goes
/// whole either to the worker's own chain (the run's format, writing into
/// the recording) or, when its id is made up from its place in the run,
/// onto the tape for the main thread's chain, which knows that place.
struct RenderSink<'s> {
    own: Box<dyn Sink + 's>,
    tape: TapeSink,
    /// The session under way is on tape.
    taping: bool,
}

impl Sink for RenderSink<'_> {
    fn starts(&self) -> Starts {
        self.tape.starts
    }

    fn reads(&self) -> Reads {
        self.tape.reads
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.taping = self.tape.rec.anonymous.get();
        if self.taping {
            return self.tape.begin(s);
        }
        self.own.begin(s)?;
        self.tape.rec.maybe_send()
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.taping {
            return self.tape.event(s, ev);
        }
        self.own.event(s, ev)?;
        self.tape.rec.maybe_send()
    }

    fn title(&mut self, s: &Session, title: &str) -> io::Result<()> {
        if self.taping {
            return self.tape.title(s, title);
        }
        self.own.title(s, title)
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        if self.taping {
            return self.tape.end(s);
        }
        self.own.end(s)?;
        self.tape.rec.maybe_send()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.own.flush()?;
        self.tape.rec.take_bytes();
        self.tape.flush()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.own.idle()?;
        self.tape.idle()
    }

    fn finish(&mut self) -> io::Result<()> {
        // The run's finish is the main thread's; the format writes nothing
        // of its own at the end ([`renders`]).
        Ok(())
    }
}

/// The sink of a worker that reduces sessions to rows ([`reduces`]): the
/// run's usage sink in its worker form, whose rows go on the tape as each
/// session ends. Flushes and pauses are not recorded: the usage sink
/// writes nothing before the run ends.
struct RowSink {
    usage: UsageSink<io::Sink>,
    rec: Rc<Recording>,
    /// The session under way has a made-up id: its ordinal in the file.
    anonymous: Option<usize>,
}

impl RowSink {
    fn take_rows(&mut self) {
        for row in self.usage.take_rows() {
            self.rec.push(Tape::Row(Box::new(row), self.anonymous));
        }
    }
}

impl Sink for RowSink {
    fn starts(&self) -> Starts {
        self.usage.starts()
    }

    fn reads(&self) -> Reads {
        self.usage.reads()
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        // A session still open ends here (never, the normalizer closes
        // each one), with the id it had.
        self.usage.begin(s)?;
        self.take_rows();
        self.anonymous = self.rec.anonymous.get().then_some(s.ordinal);
        self.rec.maybe_send()
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.usage.event(s, ev)?;
        self.rec.maybe_send()
    }

    fn title(&mut self, s: &Session, title: &str) -> io::Result<()> {
        self.usage.title(s, title)
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.usage.end(s)?;
        self.take_rows();
        self.rec.maybe_send()
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Blocks read are not counted: the rows are sent as sessions end, and
    /// a chunk sent every few blocks would be empty. A file's channel holds
    /// [`CHUNKS_IN_FLIGHT`] chunks, so a worker ahead of the consumer on a
    /// file of more than that many blocks waited for it, its core idle (a
    /// Codex rollout of several megabytes; docs/performance.md, "Rows
    /// without empty chunks"). Diagnostics still go in chunks of
    /// [`CHUNK_CALLS`].
    fn idle(&mut self) -> io::Result<()> {
        self.rec.maybe_send()
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A sink shared by the run's chain and the main thread, which hands the
/// workers' rows to it.
struct SharedSink<S>(Rc<RefCell<S>>);

impl<S: Sink> Sink for SharedSink<S> {
    fn starts(&self) -> Starts {
        self.0.borrow().starts()
    }

    fn reads(&self) -> Reads {
        self.0.borrow().reads()
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.0.borrow_mut().begin(s)
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.0.borrow_mut().event(s, ev)
    }

    fn title(&mut self, s: &Session, title: &str) -> io::Result<()> {
        self.0.borrow_mut().title(s, title)
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.0.borrow_mut().end(s)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.0.borrow_mut().idle()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.0.borrow_mut().finish()
    }
}

/// Whether `inputs` are for [`run`]: several, and all files that are not
/// live (a pipe or terminal is read as it comes, by one thread). A path
/// that cannot be looked at is reported by the worker that opens it.
pub(super) fn parallel(cfg: &Config, inputs: &[Input]) -> bool {
    cfg.jobs > 1
        && inputs.len() > 1
        && inputs.iter().all(|i| match i {
            Input::Stdin => false,
            Input::Path(p) => !std::fs::metadata(p).is_ok_and(|m| !m.is_file()),
            // The walk found it a regular file.
            Input::Found(_) => true,
            // Read whole by --output-dir only.
            Input::Stored { .. } => false,
        })
}

/// Read one file into a tape sent on `tx`.
fn record_file(wc: &WorkerConfig, input: &Input, tx: SyncSender<Vec<Tape>>, pool: &Arc<Pool>) {
    let (Input::Path(path) | Input::Found(path)) = input else {
        unreachable!("parallel runs read files only")
    };
    let anonymous = Rc::new(Cell::new(false));
    let rec = Rc::new(Recording {
        calls: RefCell::new(Vec::new()),
        bytes: RefCell::new(Vec::new()),
        pool: Arc::clone(pool),
        blocks: Cell::new(0),
        tx,
        anonymous: Rc::clone(&anonymous),
        sessions: Cell::new(0),
    });
    let tape = TapeSink {
        rec: Rc::clone(&rec),
        starts: wc.starts,
        reads: wc.reads,
    };
    let sink: Box<dyn Sink> = match (&wc.rows, wc.render) {
        (Some(opts), _) => Box::new(RowSink {
            usage: UsageSink::worker(opts),
            rec: Rc::clone(&rec),
            anonymous: None,
        }),
        (None, None) => Box::new(tape),
        (None, Some(keep_images)) => {
            let mut own = crate::output::sink(
                crate::output::Format::Events,
                &crate::output::OutputOptions::default(),
                RecWriter(Rc::clone(&rec)),
            );
            if !keep_images {
                own = Box::new(crate::transform::images::Images::new(own));
            }
            Box::new(RenderSink {
                own,
                tape,
                taping: false,
            })
        }
    };
    let mut p = Pipeline::around(&wc.config(), sink, None);
    p.norm.tell_anonymous = Some(anonymous);
    p.source = Some(path.clone());
    p.recorder = Some(Recorder(Rc::clone(&rec)));
    let to_tape = Rc::clone(&rec);
    let mut diag = Diag::recording(Box::new(move |m| to_tape.push(Tape::Diag(m))));
    diag.file = input.display_name();
    // The worker's framer, kept from its last file: a long line's buffer is
    // not grown again for every file. Its counts are this file's.
    let mut framer = FRAMER.take().unwrap_or_default();
    framer.lines_in = 0;
    framer.bytes_in = 0;
    let (read, skipped) = match File::open(path) {
        Ok(f) => {
            let regular = crate::input::mapped::regular_len(&f);
            p.live = regular.is_none();
            let sniff = matches!(input, Input::Found(_));
            let Ok(was_read) = one_file(&mut p, &mut framer, &f, regular, &mut diag, sniff) else {
                // Only the tape's own send fails (the run stopped).
                return;
            };
            (Some(p.parser.chosen), !was_read)
        }
        Err(e) => {
            let name = std::mem::take(&mut diag.file);
            diag.error(format_args!("{name}: {e}"));
            (None, false)
        }
    };
    rec.push(Tape::Done(Box::new(FileDone {
        lines_in: framer.lines_in,
        bytes_in: framer.bytes_in,
        bad_lines: diag.bad_lines,
        outcomes: p.norm.outcomes,
        read,
        skipped,
        stop: p.stop,
    })));
    FRAMER.set(Some(framer));
    let _ = rec.send();
}

thread_local! {
    /// A worker's framer, for its next file.
    static FRAMER: Cell<Option<Framer>> = const { Cell::new(None) };
}

/// A writer shared by the run's chain and the workers' output.
struct Shared<W>(Rc<RefCell<W>>);

impl<W: Write> Write for Shared<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.borrow_mut().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

/// Where the main thread puts what the workers made themselves: the output
/// they wrote (their buffers then go back to the pool), the usage rows
/// they reduced sessions to (kept by the run's usage sink).
struct Raw<'p, W> {
    out: W,
    pool: &'p Pool,
    keep: &'p mut dyn FnMut(Row),
}

impl<W: Write> Raw<'_, W> {
    fn write(&mut self, b: Vec<u8>) -> io::Result<()> {
        self.out.write_all(&b)?;
        self.pool.give(b);
        Ok(())
    }
}

/// The inputs of a run with jobs.
pub(super) enum RunInputs<'a> {
    /// Known before the run starts.
    Known(&'a [Input]),
    /// The session files of these directories, walked on the main thread
    /// while the workers convert the files already found
    /// (docs/performance.md, "The walk beside the workers").
    #[cfg(feature = "walk")]
    Walk(&'a [std::path::PathBuf]),
}

/// Convert `inputs` with `jobs` threads (see the module's comment).
pub(super) fn run<W: Write>(
    cfg: &Config,
    inputs: RunInputs<'_>,
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    // The workers' own output goes to the same writer as the chain's.
    let out = Rc::new(RefCell::new(out));
    // The run's usage sink, kept at hand to take the workers' rows.
    let usage = reduces(cfg).then(|| {
        Rc::new(RefCell::new(UsageSink::new(
            Shared(Rc::clone(&out)),
            &cfg.output.usage,
        )))
    });
    let mut p = match &usage {
        Some(u) => Pipeline::around(cfg, Box::new(SharedSink(Rc::clone(u))), None),
        None => Pipeline::new(cfg, Shared(Rc::clone(&out))),
    };
    let mut framer = Framer::new();
    let wc = WorkerConfig {
        from: cfg.from,
        normalize: cfg.normalize,
        strict: cfg.strict,
        line_buffered: cfg.line_buffered,
        report_sessions: cfg.report_sessions,
        // The workers read: with two threads, each unmap of a file's
        // mapping interrupts the other core to flush its TLB, and on the
        // real Claude tree `-j 2` took 11 % more CPU mapping its files
        // than reading them (docs/performance.md, "Mapped input").
        no_mmap: true,
        starts: p.sink.starts(),
        reads: p.sink.reads(),
        render: renders(cfg).then_some(cfg.keep_images),
        rows: usage.is_some().then(|| cfg.output.usage.clone()),
    };
    let pool = Arc::new(Pool::default());
    let work = |_, input: &Input, tx| record_file(&wc, input, tx, &pool);
    #[cfg_attr(not(feature = "walk"), allow(clippy::infallible_destructuring_match))]
    let source = match inputs {
        RunInputs::Known(inputs) => super::pool::Source::All(inputs),
        #[cfg(feature = "walk")]
        RunInputs::Walk(_) => super::pool::Source::Fed {
            ahead: WALKING_AHEAD,
        },
    };
    let consume = |receivers: &mut Ordered<Vec<Tape>>| {
        #[cfg(feature = "walk")]
        let walked;
        #[cfg_attr(not(feature = "walk"), allow(clippy::infallible_destructuring_match))]
        let inputs: &[Input] = match inputs {
            RunInputs::Known(inputs) => inputs,
            #[cfg(feature = "walk")]
            RunInputs::Walk(dirs) => {
                // Its warnings come before any file's, as when the walk
                // ends before the run: the files' are on their tapes.
                let found = crate::walk::expand_each(dirs, false, diag, &mut |input| {
                    receivers.feed(input.clone());
                });
                receivers.fed_all();
                // Files skipped, for `--stats` (which today keeps the walk
                // before the run: it sees the run as a whole).
                p.files.get_or_insert_default().skipped = found.skipped;
                walked = found.inputs;
                &walked
            }
        };
        let mut keep = |row| match &usage {
            Some(u) => u.borrow_mut().add_row(row),
            None => unreachable!("rows come only when the workers reduce"),
        };
        let raw = Raw {
            out: Shared(Rc::clone(&out)),
            pool: &pool,
            keep: &mut keep,
        };
        play(&mut p, raw, &mut framer, inputs, receivers, diag, cfg)
    };
    // A stop (a closed pipe, --strict) drops the receivers: the workers
    // stop at their next chunk.
    let r = super::pool::in_order(
        source,
        cfg.jobs,
        ahead(cfg),
        CHUNKS_IN_FLIGHT,
        work,
        consume,
        None,
    );
    finish(p, &framer, r, diag)
}

/// Whether a run's trees are walked while its workers read the files
/// found ([`RunInputs::Walk`]): when the workers reduce files to rows.
/// The main thread plays nothing while it walks, so the workers go on only
/// as far as their window: a run's own window of rows is a few
/// milliseconds of work, and one of rendered output cannot be much wider
/// (a file's output may be [`CHUNKS_IN_FLIGHT`] chunks). For `--to events`
/// the walk, slowed by the workers beside it, cost more than it saved: 5 %
/// on the real Claude tree, whose walk is 14 ms (docs/performance.md, "The
/// walk beside the workers").
#[cfg(feature = "walk")]
pub(super) fn walks_beside(cfg: &Config) -> bool {
    reduces(cfg)
}

/// How many files the workers may take ahead of the first while the main
/// thread walks the trees ([`walks_beside`]): enough for what two workers
/// read during a walk of thousands of files (about 400 files on the real
/// Claude tree); each holds its rows and its channel, a kilobyte or two.
#[cfg(feature = "walk")]
const WALKING_AHEAD: usize = 4096;

/// How many files the workers may take ahead of the one being played: a
/// wider window when they send rows only (`pool::window_for_rows`).
fn ahead(cfg: &Config) -> usize {
    if reduces(cfg) {
        super::pool::window_for_rows(cfg.jobs)
    } else {
        super::pool::window(cfg.jobs)
    }
}

/// Play the tapes in input order into `p`'s sink and `diag`.
fn play(
    p: &mut Pipeline<'_>,
    mut raw: Raw<'_, impl Write>,
    framer: &mut Framer,
    inputs: &[Input],
    receivers: &mut Ordered<Vec<Tape>>,
    diag: &mut Diag,
    cfg: &Config,
) -> io::Result<()> {
    let progress = &cfg.progress;
    // Sessions of the files already written.
    let mut base = 0u64;
    let mut outcomes = Outcomes::default();
    let mut waiter = super::pool::Waiter::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(rx) = receivers.next() else {
            return Err(io::Error::other("a conversion thread stopped"));
        };
        diag.file = input.display_name();
        p.summary_input(cfg, inputs, i);
        let mut cur: Option<Session> = None;
        let done = 'file: loop {
            let Ok(chunk) = waiter.recv(rx) else {
                // A worker that stopped without finishing its file
                // panicked; the scope passes its panic on.
                return Err(io::Error::other("a conversion thread stopped"));
            };
            for call in chunk {
                match call {
                    Tape::Bytes(b) => raw.write(b)?,
                    Tape::Begin {
                        mut session,
                        anonymous,
                    } => {
                        session.ordinal += base as usize;
                        if anonymous {
                            session.id = format!("session-{}", session.ordinal);
                        }
                        p.sink.begin(&session)?;
                        cur = Some(session);
                    }
                    Tape::Event(ev) => {
                        let s = cur.as_ref().expect("events come inside a session");
                        p.sink.event(s, &ev)?;
                    }
                    Tape::Title(t) => {
                        let s = cur.as_ref().expect("a title comes inside a session");
                        p.sink.title(s, &t)?;
                    }
                    Tape::End => {
                        let s = cur.take().expect("an end follows a begin");
                        p.sink.end(&s)?;
                    }
                    Tape::Flush => p.sink.flush()?,
                    Tape::Idle => p.sink.idle()?,
                    Tape::Diag(m) => diag.replay(m),
                    Tape::Ended(mut e) => {
                        if e.anonymous {
                            e.session_id = format!("session-{}", e.ordinal + base as usize);
                        }
                        super::report_ended_one(&e, diag);
                    }
                    Tape::Sessions(n) => {
                        p.norm.outcomes.sessions = outcomes.sessions + n;
                        p.check_sessions(diag);
                    }
                    Tape::Row(mut row, anonymous) => {
                        if let Some(ordinal) = anonymous {
                            row.set_id(format!("session-{}", ordinal + base as usize));
                        }
                        (raw.keep)(*row);
                    }
                    Tape::Done(d) => break 'file d,
                }
            }
        };
        if let Some(progress) = &progress {
            (progress.0)(done.bytes_in);
        }
        framer.lines_in += done.lines_in;
        framer.bytes_in += done.bytes_in;
        diag.bad_lines += done.bad_lines;
        outcomes.sessions += done.outcomes.sessions;
        outcomes.failed += done.outcomes.failed;
        outcomes.incomplete += done.outcomes.incomplete;
        p.norm.outcomes = outcomes;
        base = outcomes.sessions;
        match (&mut p.files, done.read) {
            (Some(files), _) if done.skipped => files.skipped += 1,
            (Some(files), Some(dialect)) => files.count(dialect),
            _ => {}
        }
        if done.stop {
            p.stop = true;
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Format;

    /// Rows are reduced in the workers only when the usage sink is the one
    /// thing that sees the events: anything that counts or changes them on
    /// the run's chain keeps the tape of events.
    #[test]
    fn rows_only_when_nothing_else_sees_the_events() {
        let usage = Config {
            format: Format::Usage,
            ..Config::default()
        };
        assert!(reduces(&usage));
        assert!(!renders(&usage));
        let with = |f: fn(&mut Config)| {
            let mut c = usage.clone();
            f(&mut c);
            reduces(&c)
        };
        assert!(!with(|c| c.stats = true));
        assert!(!with(|c| c.summary = Some("s.md".into())));
        assert!(!with(|c| c.outputs = Some("o".into())));
        assert!(!with(|c| c.window = (Some(0), None)));
        assert!(!with(|c| c.format = Format::Events));
        // Images are not replaced in the worker: a row holds no payload.
        assert!(with(|c| c.keep_images = false));
        // Only rows get the wider window: a file of events in flight may
        // hold its channel's chunks.
        let jobs = Config { jobs: 3, ..usage };
        assert_eq!(ahead(&jobs), super::super::pool::window_for_rows(3));
        let events = Config {
            format: Format::Events,
            ..jobs
        };
        assert_eq!(ahead(&events), super::super::pool::window(3));
    }

    /// The chunks a worker sends for one file of one session, about 2 MiB
    /// (sixteen blocks of input) long.
    fn chunks_of_a_long_file(rows: bool) -> Vec<Vec<Tape>> {
        let dir = std::env::temp_dir().join(format!("cstream-jobs-{}-{rows}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("long.jsonl");
        let mut text =
            String::from(r#"{"type":"system","subtype":"init","session_id":"s1","model":"gpt-5"}"#);
        text.push('\n');
        let said = "x".repeat(1000);
        while text.len() < 2 << 20 {
            text.push_str(&format!(
                r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"{said}"}}]}},"session_id":"s1"}}"#
            ));
            text.push('\n');
        }
        text.push_str(r#"{"type":"result","subtype":"success","session_id":"s1","duration_ms":5}"#);
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let cfg = Config {
            format: if rows { Format::Usage } else { Format::Events },
            ..Config::default()
        };
        let sink = crate::output::sink(cfg.format, &cfg.output, io::sink());
        let wc = WorkerConfig {
            from: None,
            normalize: cfg.normalize,
            strict: false,
            line_buffered: false,
            report_sessions: false,
            starts: sink.starts(),
            reads: sink.reads(),
            render: None,
            rows: rows.then(|| cfg.output.usage.clone()),
            no_mmap: true,
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1024);
        record_file(&wc, &Input::Path(path), tx, &Arc::new(Pool::default()));
        std::fs::remove_dir_all(&dir).unwrap();
        rx.try_iter().collect()
    }

    /// A write the recording's buffer has no room for starts a buffer of
    /// its own: the output before it goes on the tape as it was, never
    /// copied into a grown buffer (a long tool output is written a piece at
    /// a time, and each growth copied the whole chunk so far).
    #[test]
    fn a_write_past_the_buffer_starts_another() {
        let pool = Arc::new(Pool::default());
        let (tx, _rx) = std::sync::mpsc::sync_channel(1);
        let rec = Rc::new(Recording {
            calls: RefCell::default(),
            bytes: RefCell::new(pool.take()),
            pool: Arc::clone(&pool),
            blocks: Cell::new(0),
            tx,
            anonymous: Rc::default(),
            sessions: Cell::new(0),
        });
        let cap = rec.bytes.borrow().capacity();
        let mut w = RecWriter(Rc::clone(&rec));
        let mut want = vec![b'a'; CHUNK_OUTPUT_BYTES];
        w.write_all(&want).unwrap();
        for i in 0..64u8 {
            let piece = [b'0' + i % 10; 1024];
            w.write_all(&piece).unwrap();
            want.extend_from_slice(&piece);
        }
        rec.take_bytes();
        let calls = rec.calls.borrow();
        let bufs: Vec<&Vec<u8>> = calls
            .iter()
            .map(|t| match t {
                Tape::Bytes(b) => b,
                _ => panic!("only bytes were written"),
            })
            .collect();
        assert!(bufs.iter().all(|b| b.capacity() == cap), "a buffer grew");
        let bufs: Vec<&[u8]> = bufs.iter().map(|b| b.as_slice()).collect();
        assert_eq!(bufs.concat(), want);
        assert!(bufs.len() >= 2, "{} buffers", bufs.len());
    }

    /// A worker reducing to rows sends a long file's rows, and its end, in
    /// one chunk, not an empty chunk every few blocks read (a worker ahead
    /// of the consumer waited on its channel full of them); a worker that
    /// sends the events sends them as it reads.
    #[test]
    fn rows_go_in_one_chunk_however_long_the_file() {
        let rows = chunks_of_a_long_file(true);
        assert_eq!(rows.len(), 1, "{} chunks", rows.len());
        assert!(rows[0].iter().any(|t| matches!(t, Tape::Row(..))));
        assert!(matches!(rows[0].last(), Some(Tape::Done(_))));
        let events = chunks_of_a_long_file(false);
        assert!(
            events.len() > CHUNKS_IN_FLIGHT / 2,
            "{} chunks",
            events.len()
        );
    }
}
