//! Input framing (docs/ARCHITECTURE.md#input-framing): bytes in, one JSON record at a time out.
//!
//! Lines are read into one reused buffer. LF and CRLF endings, a UTF-8 BOM,
//! blank lines and a last line without a newline are all handled here, so
//! dialect parsers only ever see one candidate JSON value. Two repairs happen
//! here too, each with a warning: a value split over several lines is joined
//! back (bounded), and invalid UTF-8 is replaced with U+FFFD. A top-level
//! JSON array is read element by element instead of as one huge value.
//!
//! Before the reader would block waiting for more input, it calls the
//! handler's `idle`, which flushes output: a live pipe sees every event at
//! once, while a file is still processed in large blocks.

use std::io::{self, BufRead, BufReader, Read};

use std::sync::LazyLock;

use memchr::{memchr, memmem};

use crate::diag::{Diag, Warn, excerpt};
use crate::json::hex4;
use scan::Strings;

mod document;

/// The whole of an input read into memory, shared with its parser while
/// it is framed ([`Parser::set_text`](crate::dialect::Parser::set_text)):
/// the records handed to the parser are slices of it (or copies, for a
/// record the framer repaired). It derefs to the text; the buffer it is
/// read into may run on past it (a reused buffer is not cut down, which
/// would have it zeroed again for a longer file).
#[derive(Clone)]
pub struct WholeText {
    buf: std::rc::Rc<Vec<u8>>,
    len: usize,
}

impl WholeText {
    /// The first `len` bytes of `buf` (all of it when it is shorter).
    pub fn new(buf: Vec<u8>, len: usize) -> WholeText {
        let len = len.min(buf.len());
        WholeText {
            buf: std::rc::Rc::new(buf),
            len,
        }
    }

    /// The buffer back, when no other share of it is left (else empty).
    pub fn into_buf(self) -> Vec<u8> {
        std::rc::Rc::try_unwrap(self.buf).unwrap_or_default()
    }
}

impl From<Vec<u8>> for WholeText {
    fn from(buf: Vec<u8>) -> WholeText {
        let len = buf.len();
        WholeText::new(buf, len)
    }
}

impl std::ops::Deref for WholeText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}
pub mod mapped;
pub(crate) mod scan;
pub mod zstd;

/// Read buffer size.
pub const READ_BUFFER_BYTES: usize = 128 * 1024;
/// A mapped input's pages are given back this many bytes at a time, behind
/// the line being read ([`Framer::run_slice`]): its peak memory stays about
/// this much however large the file. A power of two and a multiple of the
/// page size.
pub const RELEASE_BYTES: usize = 1024 * 1024;
/// A single line longer than this is skipped (reported, not stored).
pub const MAX_LINE_BYTES: usize = 512 * 1024 * 1024;
/// A value joined from several lines may span at most this many lines…
pub const MAX_JOIN_LINES: usize = 1000;
/// …and this many bytes. The same cap applies to one element of a top-level array.
pub const MAX_JOIN_BYTES: usize = 64 * 1024 * 1024;
/// A record at least this long is huge: its handler detaches what it parsed
/// from it, and the framer gives the buffer that held it back before
/// [`Handler::released`] writes it (so the line and the outputs' copy of
/// its text are never held at once). Buffers are kept for reuse below this.
pub const HUGE_RECORD_BYTES: usize = 4 * READ_BUFFER_BYTES;

/// What a handler made of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// Understood (events were emitted, possibly `unknown`).
    Done,
    /// Not valid JSON because it ended too early: maybe the start of a value
    /// that continues on the next lines. Nothing was emitted.
    Incomplete,
    /// Not valid JSON. Nothing was emitted.
    Invalid,
}

/// Receives framed records.
pub trait Handler {
    /// Parse one candidate JSON value (`line` is where it starts).
    fn record(&mut self, bytes: &[u8], line: u64, diag: &mut Diag) -> io::Result<Parsed>;
    /// Parse one record whose lone UTF-16 surrogate escapes have not been
    /// replaced yet, by a path that looks at every escape of the record
    /// and refuses it at any surrogate escape: `Some` when that path read
    /// it (then the framer's own pass looking for lone surrogates would
    /// have found none), `None`, with nothing emitted and no state
    /// changed, to have the framer check the record and hand it to
    /// [`Handler::record`]. Saves the hot path a pass over every record;
    /// the default takes nothing.
    fn record_checked(
        &mut self,
        _bytes: &[u8],
        _line: u64,
        _diag: &mut Diag,
    ) -> io::Result<Option<Parsed>> {
        Ok(None)
    }
    /// A line that is not valid input (already reported on stderr).
    fn bad_line(&mut self, text: &str, line: u64, diag: &mut Diag) -> io::Result<()>;
    /// Input has nothing more buffered: a good moment to flush output.
    fn idle(&mut self) -> io::Result<()>;
    /// True when the run must stop reading (`--strict` after a bad line).
    fn stop(&self) -> bool {
        false
    }
    /// The line just framed is done with, and the framer gave back the
    /// buffers a huge record ([`HUGE_RECORD_BYTES`]) held: the handler
    /// writes what it held back from such records. Called after every line,
    /// before anything more is read.
    fn released(&mut self, _diag: &mut Diag) -> io::Result<()> {
        Ok(())
    }
    /// An object spread over lines has a top-level member `key` whose value
    /// is an array, after the members `head` (an object, compacted): true
    /// to read that array element by element (docs/ARCHITECTURE.md#input-framing),
    /// handing on `head`, then each element, then the members after the
    /// array, each as a record. False (the default) joins the object whole.
    fn stream_member(&mut self, _head: &[u8], _key: &[u8]) -> bool {
        false
    }
}

/// Why reading an input ended early.
#[derive(Debug)]
pub enum FrameError {
    /// Reading the input failed (the file is abandoned, the run goes on).
    Read(io::Error),
    /// Writing output failed (the run ends).
    Write(io::Error),
}

/// Reads lines from a buffered reader, telling the caller before it blocks.
struct LineReader<R> {
    inner: BufReader<R>,
    /// Bytes consumed so far (`--stats`).
    consumed: u64,
}

enum LineRead {
    Line,
    /// The line was longer than [`MAX_LINE_BYTES`]; it was consumed, not kept.
    TooLong(u64),
    Eof,
}

impl<R: Read> LineReader<R> {
    fn new(r: R) -> Self {
        LineReader {
            inner: BufReader::with_capacity(READ_BUFFER_BYTES, r),
            consumed: 0,
        }
    }

    /// Read the next line (without its `\n`) into `buf`, which is cleared first.
    fn read_line<H: Handler>(
        &mut self,
        buf: &mut Vec<u8>,
        h: &mut H,
    ) -> Result<LineRead, FrameError> {
        buf.clear();
        let mut total: u64 = 0;
        let mut any = false;
        loop {
            if self.inner.buffer().is_empty() {
                h.idle().map_err(FrameError::Write)?;
            }
            let avail = match self.inner.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FrameError::Read(e)),
            };
            if avail.is_empty() {
                return Ok(if !any {
                    LineRead::Eof
                } else if total as usize > buf.len() {
                    LineRead::TooLong(total)
                } else {
                    LineRead::Line
                });
            }
            any = true;
            let (take, done) = match memchr(b'\n', avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            total += take as u64;
            if total as usize <= MAX_LINE_BYTES {
                buf.extend_from_slice(&avail[..take]);
            } else if !buf.is_empty() {
                // Give the memory back at once: the line will not be kept.
                *buf = Vec::new();
            }
            let used = if done { take + 1 } else { take };
            self.inner.consume(used);
            self.consumed += used as u64;
            if done {
                if buf.capacity() > READ_BUFFER_BYTES {
                    // A line longer than the read buffer grew `buf` by
                    // doubling: give back what it does not use, so a huge
                    // line is held once while it is converted.
                    buf.shrink_to_fit();
                }
                return Ok(if total as usize > MAX_LINE_BYTES {
                    LineRead::TooLong(total)
                } else {
                    LineRead::Line
                });
            }
        }
    }
}

/// Where the reads of a regular file would end, for [`Framer::run_slice`]:
/// the first block (the sniffed [`BINARY_SNIFF_BYTES`](crate::run::BINARY_SNIFF_BYTES)
/// or the whole file if shorter), the one byte more a walked file's sniff
/// reads when the block is full, then one read buffer
/// ([`READ_BUFFER_BYTES`]) at a time.
#[derive(Debug, Clone, Copy)]
pub struct ReadEnds {
    first: usize,
    extra: usize,
}

impl ReadEnds {
    /// Reads of a first block of `first` bytes, then of `extra` bytes (0
    /// or 1), then of read buffers.
    pub fn new(first: usize, extra: usize) -> ReadEnds {
        ReadEnds { first, extra }
    }

    /// Where the read that starts at `at` (where one ended) ends.
    fn after(&self, at: usize) -> usize {
        if at < self.first {
            self.first
        } else if at < self.first + self.extra {
            self.first + self.extra
        } else {
            at + READ_BUFFER_BYTES
        }
    }
}

/// Tracks JSON structure byte by byte: nesting depth and whether we are
/// inside a string. Used only off the hot path (joins and arrays).
#[derive(Debug, Clone, Copy, Default)]
struct Scan {
    depth: u64,
    strings: Strings,
    /// A closing bracket appeared with nothing open: cannot be completed.
    broken: bool,
}

impl Scan {
    fn feed(&mut self, b: u8) {
        if self.strings.feed(b) {
            return;
        }
        match b {
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                if self.depth == 0 {
                    self.broken = true;
                } else {
                    self.depth -= 1;
                }
            }
            _ => {}
        }
    }

    /// Feed all of `bytes`, passing over strings a run at a time.
    fn feed_all(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            i = self.strings.skip(bytes, i);
            if let Some(&b) = bytes.get(i) {
                self.feed(b);
                i += 1;
            }
        }
    }

    fn in_str(&self) -> bool {
        self.strings.in_string()
    }

    fn complete(&self) -> bool {
        self.depth == 0 && !self.in_str() && !self.broken
    }
}

/// A value being joined from several lines.
#[derive(Default)]
struct Join {
    /// The original lines, separated by `\n` (what is reported if the join fails).
    raw: Vec<u8>,
    /// The joined candidate: a newline inside a string is escaped as `\n`.
    joined: Vec<u8>,
    first_line: u64,
    lines: usize,
    scan: Scan,
}

impl Join {
    fn active(&self) -> bool {
        self.lines > 0
    }

    fn start(&mut self, line: &[u8], no: u64) {
        self.raw.clear();
        self.joined.clear();
        self.scan = Scan::default();
        self.first_line = no;
        self.lines = 0;
        self.push(line);
    }

    fn push(&mut self, line: &[u8]) {
        if self.lines > 0 {
            self.raw.push(b'\n');
            if self.scan.in_str() {
                // A raw newline inside a string: keep it as the escape it stood for.
                self.joined.extend_from_slice(b"\\n");
            } else {
                self.joined.push(b'\n');
            }
        }
        self.raw.extend_from_slice(line);
        self.joined.extend_from_slice(line);
        self.scan.feed_all(line);
        self.lines += 1;
    }

    fn over_limit(&self) -> bool {
        self.lines >= MAX_JOIN_LINES || self.raw.len() > MAX_JOIN_BYTES
    }

    fn clear(&mut self) {
        self.lines = 0;
        // Keep small buffers for reuse, release big ones.
        if self.raw.capacity() > READ_BUFFER_BYTES {
            self.raw = Vec::new();
            self.joined = Vec::new();
        }
    }
}

/// Where we are inside a top-level JSON array.
#[derive(Default)]
struct ArrayState {
    active: bool,
    /// Expecting an element (after `[` or `,`).
    want_elem: bool,
    /// Just after `[`: `]` may close an empty array.
    at_open: bool,
    elem: Vec<u8>,
    elem_line: u64,
    in_elem: bool,
    /// The element is a bare scalar (number, literal), which ends at `,`, `]` or space.
    scalar: bool,
    scan: Scan,
    /// The element outgrew [`MAX_JOIN_BYTES`]; its bytes are being skipped.
    overflow: bool,
    /// The element spans several lines (its whitespace is compacted).
    multiline: bool,
}

/// Frames one input after another, reusing its buffers.
#[derive(Default)]
pub struct Framer {
    line: Vec<u8>,
    repaired: String,
    /// A record with its lone surrogate escapes replaced.
    unpaired: Vec<u8>,
    /// A joined value with the whitespace between its tokens removed.
    compacted: Vec<u8>,
    join: Join,
    array: ArrayState,
    /// The members of an object being joined, watched for an array to read
    /// element by element (a whole-document file).
    members: document::Members,
    /// The array being read is a document's member: the members after it
    /// follow, then the object's `}`.
    doc_array: bool,
    /// Elements of the document's array read so far.
    doc_elems: u64,
    /// The document's members after its array.
    tail: document::Tail,
    /// Physical lines read, over every input (`--stats`).
    pub lines_in: u64,
    /// Bytes read, over every input (`--stats`).
    pub bytes_in: u64,
}

fn trim_ascii_ws(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// Copy `src` to `dst` without the whitespace between JSON tokens.
///
/// A value joined from several lines keeps its line breaks and indentation
/// between tokens, and parsers copy payloads (`args`, `result`, `raw`)
/// verbatim: without this, one `--to events` record would span many output
/// lines. Whitespace inside strings is kept; between two bare tokens (`1 2`)
/// one space stays, so input that was not valid JSON does not become valid.
fn compact_ws(src: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    dst.extend_from_slice(src);
    compact_in_place(dst);
}

/// [`compact_ws`] within `buf` itself: it only ever drops bytes (a space
/// kept between bare tokens stands for at least one that was dropped), so
/// each byte is written at or before where it was read, and a big value is
/// not held twice.
fn compact_in_place(buf: &mut Vec<u8>) {
    // Bytes that can end or start a number or literal (not structural, not a quote).
    let bare = |b: u8| !matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"');
    let mut strings = Strings::default();
    let mut gap = false;
    let (mut r, mut w) = (0, 0);
    while r < buf.len() {
        if strings.in_string() {
            // A string is kept whole: move it as one run.
            let end = strings.skip(buf, r);
            buf.copy_within(r..end, w);
            w += end - r;
            r = end;
            continue;
        }
        let b = buf[r];
        r += 1;
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            gap = true;
            continue;
        }
        if gap && bare(b) && w > 0 && bare(buf[w - 1]) {
            buf[w] = b' ';
            w += 1;
        }
        gap = false;
        strings.feed(b);
        buf[w] = b;
        w += 1;
    }
    buf.truncate(w);
}

/// If `t` has `\uXXXX` escapes that are lone UTF-16 surrogates (a high one
/// not followed by a low one, or a low one on its own), copy `t` to `out`
/// with each of them replaced by `\ufffd` (same length) and return true.
///
/// JavaScript writes lone surrogates this way when a string is cut inside a
/// surrogate pair (an emoji sliced in half), and every agent CLI but Codex
/// is JavaScript. One `memmem` pass over the record when it has no `\u`.
fn repair_surrogates(t: &[u8], out: &mut Vec<u8>) -> bool {
    // Built once: making a searcher costs more than most lines' search.
    static UNICODE_ESCAPE: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\\u"));
    let mut found = false;
    let mut skip_to = 0;
    for i in UNICODE_ESCAPE.find_iter(t) {
        if i < skip_to {
            continue;
        }
        // An escaped backslash followed by `u` is no escape: count the run.
        let run = t[..i].iter().rev().take_while(|&&b| b == b'\\').count();
        if run % 2 == 1 {
            continue;
        }
        let lone = match hex4(t, i + 2) {
            Some(0xD800..=0xDBFF) => {
                let paired = t.get(i + 6..i + 8) == Some(b"\\u")
                    && matches!(hex4(t, i + 8), Some(0xDC00..=0xDFFF));
                if paired {
                    skip_to = i + 12;
                }
                !paired
            }
            Some(0xDC00..=0xDFFF) => true,
            _ => false,
        };
        if lone {
            if !found {
                out.clear();
                out.extend_from_slice(t);
                found = true;
            }
            out[i + 2..i + 6].copy_from_slice(b"fffd");
        }
    }
    found
}

/// Copy `t` to `out` with every number literal that overflows a double
/// (`1e999`, `-1e400`) replaced by `null`; false when there is none.
fn null_huge_numbers(t: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut found = false;
    let mut strings = Strings::default();
    let mut i = 0;
    while i < t.len() {
        if strings.in_string() {
            let end = strings.skip(t, i);
            out.extend_from_slice(&t[i..end]);
            i = end;
            continue;
        }
        let b = t[i];
        if b == b'-' || b.is_ascii_digit() {
            let len = t[i..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
                .count();
            let tok = &t[i..i + len];
            let huge = std::str::from_utf8(tok)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .is_some_and(f64::is_infinite);
            if huge {
                out.extend_from_slice(b"null");
                found = true;
            } else {
                out.extend_from_slice(tok);
            }
            i += len;
            continue;
        }
        strings.feed(b);
        out.push(b);
        i += 1;
    }
    found
}

/// Line `no` of an input without what is not its content: a byte-order
/// mark before the first line, the `\r` of a CRLF ending.
fn bare(line: &[u8], no: u64) -> &[u8] {
    let line = if no == 1 {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
        line
    };
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Framer {
    /// A framer with empty buffers.
    pub fn new() -> Self {
        Framer::default()
    }

    /// Read `reader` to its end, passing each record to `h`.
    pub fn run<R: Read, H: Handler>(
        &mut self,
        reader: R,
        h: &mut H,
        diag: &mut Diag,
    ) -> Result<(), FrameError> {
        let mut lines = LineReader::new(reader);
        let mut line = std::mem::take(&mut self.line);
        let mut no: u64 = 0;
        self.start_input();
        let result = loop {
            if h.stop() {
                break Ok(());
            }
            // Fast path: the whole line is in the read buffer already, so it
            // is framed where it lies, without copying it out.
            let buffered = lines.inner.buffer();
            if let Some(i) = memchr(b'\n', buffered) {
                no += 1;
                let bytes = bare(&buffered[..i], no);
                let r = self
                    .line_in(bytes, no, h, diag)
                    .and_then(|()| h.released(diag));
                lines.inner.consume(i + 1);
                lines.consumed += i as u64 + 1;
                self.lines_in += 1;
                if let Err(e) = r {
                    break Err(FrameError::Write(e));
                }
                continue;
            }
            let read = match lines.read_line(&mut line, h) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            no += 1;
            match read {
                LineRead::Eof => break Ok(()),
                LineRead::TooLong(n) => {
                    self.lines_in += 1;
                    if let Err(e) = self.too_long(n, no, h, diag) {
                        break Err(FrameError::Write(e));
                    }
                    continue;
                }
                LineRead::Line => self.lines_in += 1,
            }
            let r = self.line_in(bare(&line, no), no, h, diag);
            // A huge line's events were detached from it: it is given back
            // before they are written, which is when the outputs copy them.
            if line.capacity() >= HUGE_RECORD_BYTES {
                line = Vec::new();
            }
            self.give_back_scratch();
            if let Err(e) = r.and_then(|()| h.released(diag)) {
                break Err(FrameError::Write(e));
            }
        };
        let tail = if result.is_ok() || matches!(result, Err(FrameError::Read(_))) {
            // At the end (or a read error), whatever is pending is reported, never dropped.
            self.end_input(no, lines.consumed, h, diag)
        } else {
            Ok(())
        };
        self.bytes_in += lines.consumed;
        self.line = line;
        if self.line.capacity() >= HUGE_RECORD_BYTES {
            self.line = Vec::new();
        }
        self.give_back_scratch();
        result.and(tail)
    }

    /// Frame `data`, an input that is wholly in memory (a mapped file,
    /// [`mapped::MappedFile`]), each line where it lies: no read buffer,
    /// no copy of a line that would have straddled two reads. Everything
    /// else is what [`Framer::run`] does with the same bytes read from a
    /// regular file whose reads end at `reads` (the handler hears `idle` at
    /// the same places, so `--coalesce burst`, redaction and live output
    /// see the same pauses), and `release(n)` is told, now and then, that
    /// the first `n` bytes are done with (a mapping gives their pages back).
    pub fn run_slice<H: Handler>(
        &mut self,
        data: &[u8],
        reads: ReadEnds,
        release: &mut dyn FnMut(usize, usize),
        h: &mut H,
        diag: &mut Diag,
    ) -> Result<(), FrameError> {
        let mut no: u64 = 0;
        self.start_input();
        // Where the next read of a read framer would start: it would call
        // `idle` just before it, when it ran out of bytes there.
        let mut next_read = 0usize;
        let mut at = 0usize;
        let mut released = 0usize;
        let end = data.len();
        let result: Result<(), FrameError> = (|| {
            while at < end {
                if h.stop() {
                    return Ok(());
                }
                let (nl, stop) = match memchr(b'\n', &data[at..]) {
                    Some(i) => (at + i, at + i + 1),
                    None => (end, end),
                };
                // The reads a read framer would make before it had the line.
                while next_read <= nl && next_read < end {
                    h.idle().map_err(FrameError::Write)?;
                    next_read = reads.after(next_read);
                }
                if nl == end {
                    // The last line, without a newline: the read framer
                    // found the end of the input before it had it whole.
                    h.idle().map_err(FrameError::Write)?;
                }
                no += 1;
                self.lines_in += 1;
                let len = nl - at;
                let r = if len > MAX_LINE_BYTES {
                    self.too_long(len as u64, no, h, diag)
                } else {
                    let r = self.line_in(bare(&data[at..nl], no), no, h, diag);
                    self.give_back_scratch();
                    r.and_then(|()| h.released(diag))
                };
                at = stop;
                r.map_err(FrameError::Write)?;
                if at - released >= RELEASE_BYTES {
                    // Whole pages only: the line being read may share the last.
                    let upto = at & !(RELEASE_BYTES - 1);
                    release(released, upto);
                    released = upto;
                }
            }
            // The read framer's last read, which found the end.
            if !h.stop() {
                h.idle().map_err(FrameError::Write)?;
            }
            Ok(())
        })();
        let tail = if result.is_ok() {
            self.end_input(no, at as u64, h, diag)
        } else {
            Ok(())
        };
        self.bytes_in += at as u64;
        self.give_back_scratch();
        result.and(tail)
    }

    /// Forget the state of the input before: each input is framed alone.
    fn start_input(&mut self) {
        self.join.lines = 0;
        self.array = ArrayState::default();
        self.doc_array = false;
        self.doc_elems = 0;
        self.tail.active = false;
    }

    /// The end of an input after `no` lines and `consumed` bytes: what is
    /// pending (a join, an array) is reported, never dropped.
    fn end_input<H: Handler>(
        &mut self,
        no: u64,
        consumed: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> Result<(), FrameError> {
        self.finish(no, consumed, h, diag)
            .and_then(|()| {
                self.give_back_scratch();
                h.released(diag)
            })
            .map_err(FrameError::Write)
    }

    /// A line longer than [`MAX_LINE_BYTES`]: skipped, reported, handed
    /// on as a bad line.
    fn too_long<H: Handler>(
        &mut self,
        n: u64,
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        self.flush_join(h, diag)?;
        if h.stop() {
            return Ok(());
        }
        diag.warn(
            Warn::NotJson,
            no,
            format!(
                "line of {n} bytes is longer than the limit of {MAX_LINE_BYTES} bytes; skipped"
            ),
        );
        diag.bad_lines += 1;
        let msg = format!("line of {n} bytes skipped (longer than {MAX_LINE_BYTES} bytes)");
        h.bad_line(&msg, no, diag)
    }

    /// A line of an object being joined (`first`: its first line, which
    /// the join does not hold yet): if a top-level member of the object
    /// opens an array on it and the handler reads that array element by
    /// element, hand on the members before it and start reading the array.
    /// True when the line was taken so; false leaves it to the join.
    fn stream_document<H: Handler>(
        &mut self,
        bytes: &[u8],
        no: u64,
        first: bool,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<bool> {
        let mut from = 0;
        while let Some(m) = self.members.line(&bytes[from..]) {
            let (key_at, open_at) = (from + m.key_at, from + m.open_at);
            from = open_at + 1;
            // The object so far, up to the key: its members before the array.
            let mut before = Vec::new();
            if !first {
                before.extend_from_slice(&self.join.joined);
                before.extend_from_slice(if self.join.scan.in_str() {
                    b"\\n"
                } else {
                    b"\n"
                });
            }
            before.extend_from_slice(&bytes[..key_at]);
            let mut head = std::mem::take(&mut self.compacted);
            compact_ws(&document::head(&before), &mut head);
            if !h.stream_member(&head, self.members.key()) {
                self.compacted = head;
                continue;
            }
            let head_line = if first { no } else { self.join.first_line };
            self.join.lines = 0;
            self.join.clear();
            let p = if head.as_slice() == b"{}" {
                Ok(Parsed::Done)
            } else {
                self.parse(&head, head_line, h, diag)
            };
            let r = match p? {
                Parsed::Done => Ok(()),
                _ => self.bad(&head, head_line, h, diag),
            };
            self.compacted = head;
            r?;
            self.array = ArrayState {
                active: true,
                want_elem: true,
                at_open: true,
                ..std::mem::take(&mut self.array)
            };
            self.array.elem.clear();
            self.doc_array = true;
            self.doc_elems = 0;
            self.array_bytes(&bytes[from..], no, h, diag)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Bytes of a line after a document's array: its last members, then
    /// the object's `}`, handed on as one record.
    fn tail_bytes<H: Handler>(
        &mut self,
        bytes: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        let Some(n) = self.tail.feed(bytes) else {
            if self.tail.bytes.len() > MAX_JOIN_BYTES {
                self.tail.active = false;
                let line = self.tail.line;
                self.tail.bytes = Vec::new();
                diag.warn(
                    Warn::NotJson,
                    line,
                    format_args!("members after the document's array longer than {MAX_JOIN_BYTES} bytes; skipped"),
                );
                diag.bad_lines += 1;
                return h.bad_line("document members skipped (too large)", line, diag);
            }
            return Ok(());
        };
        if let Some(rec) = self.tail.record() {
            let line = self.tail.line;
            let mut c = std::mem::take(&mut self.compacted);
            compact_ws(&rec, &mut c);
            let p = self.parse(&c, line, h, diag);
            let r = match p? {
                Parsed::Done => Ok(()),
                _ => self.bad(&c, line, h, diag),
            };
            self.compacted = c;
            r?;
        }
        self.line_in(&bytes[n..], no, h, diag)
    }

    /// The input ended inside a document read element by element (the file
    /// was cut, or is being rewritten while read): one warning with where
    /// it ends; what was complete before has been handed on already.
    fn document_cut<H: Handler>(
        &mut self,
        last_line: u64,
        size: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        let what = if self.tail.active {
            "after its array, before the closing brace".to_owned()
        } else if self.array.in_elem {
            format!("inside element {} of its array", self.doc_elems + 1)
        } else {
            format!("after element {} of its array", self.doc_elems)
        };
        let line = if self.array.in_elem && !self.tail.active {
            self.array.elem_line
        } else {
            last_line
        };
        self.array = ArrayState::default();
        self.doc_array = false;
        self.tail.active = false;
        let msg = format!(
            "JSON document cut short at byte {size}, {what}: the file ends early (still being written or rewritten?); the {} complete elements before it were read",
            self.doc_elems
        );
        diag.warn(Warn::NotJson, line, &msg);
        diag.bad_lines += 1;
        h.bad_line(&msg, line, diag)
    }

    /// Give back the per-record scratch buffers that a huge record grew.
    fn give_back_scratch(&mut self) {
        if self.compacted.capacity() >= HUGE_RECORD_BYTES {
            self.compacted = Vec::new();
        }
        if self.unpaired.capacity() >= HUGE_RECORD_BYTES {
            self.unpaired = Vec::new();
        }
        if self.repaired.capacity() >= HUGE_RECORD_BYTES {
            self.repaired = String::new();
        }
    }

    /// Handle one physical line (without its line ending).
    fn line_in<H: Handler>(
        &mut self,
        bytes: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        if self.tail.active {
            return self.tail_bytes(bytes, no, h, diag);
        }
        if self.array.active {
            return self.array_bytes(bytes, no, h, diag);
        }
        if self.join.active() {
            return self.join_line(bytes, no, h, diag);
        }
        let t = trim_ascii_ws(bytes);
        if t.is_empty() {
            return Ok(());
        }
        if t[0] == b'[' {
            self.array = ArrayState {
                active: true,
                want_elem: true,
                at_open: true,
                ..std::mem::take(&mut self.array)
            };
            self.array.elem.clear();
            let after = &t[1..];
            return self.array_bytes(after, no, h, diag);
        }
        match self.parse(t, no, h, diag)? {
            Parsed::Done => Ok(()),
            Parsed::Incomplete if t[0] == b'{' => {
                self.members.reset();
                if self.stream_document(t, no, true, h, diag)? {
                    return Ok(());
                }
                self.join.start(t, no);
                Ok(())
            }
            _ => self.bad(t, no, h, diag),
        }
    }

    /// Parse a record, repairing invalid UTF-8 once if that is what failed.
    ///
    /// Lone UTF-16 surrogates in `\u` escapes are repaired first, always:
    /// serde_json refuses them in strings, and a parser that reads a payload
    /// leniently would drop the whole string without a word. A handler
    /// whose reader sees every escape anyway takes the record before that
    /// pass ([`Handler::record_checked`]) when it holds no surrogate escape.
    fn parse<H: Handler>(
        &mut self,
        t: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<Parsed> {
        if let Some(p) = h.record_checked(t, no, diag)? {
            return Ok(p);
        }
        if !repair_surrogates(t, &mut self.unpaired) {
            return self.parse_utf8(t, no, h, diag);
        }
        let fixed = std::mem::take(&mut self.unpaired);
        let p = self.parse_utf8(&fixed, no, h, diag);
        self.unpaired = fixed;
        if matches!(p, Ok(Parsed::Done)) {
            diag.warn(
                Warn::InvalidUtf8,
                no,
                "lone UTF-16 surrogate escape replaced with U+FFFD",
            );
        }
        p
    }

    #[inline]
    fn parse_utf8<H: Handler>(
        &mut self,
        t: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<Parsed> {
        let p = h.record(t, no, diag)?;
        if p == Parsed::Invalid && std::str::from_utf8(t).is_ok() {
            return self.parse_huge_numbers(t, no, h, diag);
        }
        if p == Parsed::Done || std::str::from_utf8(t).is_ok() {
            return Ok(p);
        }
        let mut s = std::mem::take(&mut self.repaired);
        s.clear();
        s.push_str(&String::from_utf8_lossy(t));
        let p = h.record(s.as_bytes(), no, diag)?;
        if p == Parsed::Done {
            diag.warn(Warn::InvalidUtf8, no, "invalid UTF-8 replaced with U+FFFD");
        }
        self.repaired = s;
        Ok(p)
    }

    /// After a failed parse: a record that is valid JSON by the grammar but
    /// has a number too large for a double (`1e999`), which serde_json
    /// refuses, is parsed again with such numbers as `null`.
    fn parse_huge_numbers<H: Handler>(
        &mut self,
        t: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<Parsed> {
        if serde_json::from_slice::<serde::de::IgnoredAny>(t).is_err() {
            return Ok(Parsed::Invalid);
        }
        let mut fixed = std::mem::take(&mut self.unpaired);
        if !null_huge_numbers(t, &mut fixed) {
            self.unpaired = fixed;
            return Ok(Parsed::Invalid);
        }
        let p = h.record(&fixed, no, diag);
        self.unpaired = fixed;
        if matches!(p, Ok(Parsed::Done)) {
            diag.warn(
                Warn::Format,
                no,
                "number out of range (beyond a double) read as null",
            );
        }
        p
    }

    /// Report a line that is not valid input and hand it on as an error event.
    fn bad<H: Handler>(&mut self, t: &[u8], no: u64, h: &mut H, diag: &mut Diag) -> io::Result<()> {
        let text = String::from_utf8_lossy(t);
        diag.warn(
            Warn::NotJson,
            no,
            format_args!("not JSON: {}", excerpt(&text, 80)),
        );
        diag.bad_lines += 1;
        h.bad_line(&text, no, diag)
    }

    /// A line while a multi-line value is being joined.
    fn join_line<H: Handler>(
        &mut self,
        bytes: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        let t = trim_ascii_ws(bytes);
        // A following line that is itself a complete object starts a new record.
        if t.first() == Some(&b'{') && {
            let mut s = Scan::default();
            t.iter().for_each(|&b| s.feed(b));
            s.complete()
        } {
            self.flush_join(h, diag)?;
            if h.stop() {
                // `--strict`: the failed join was the first bad line.
                return Ok(());
            }
            return self.line_in(bytes, no, h, diag);
        }
        if self.stream_document(bytes, no, false, h, diag)? {
            return Ok(());
        }
        self.join.push(bytes);
        if self.join.scan.complete() {
            let mut c = std::mem::take(&mut self.compacted);
            compact_ws(&self.join.joined, &mut c);
            let first = self.join.first_line;
            let p = self.parse(&c, first, h, diag);
            self.compacted = c;
            let p = p?;
            if p == Parsed::Done {
                diag.warn(
                    Warn::Joined,
                    first,
                    format_args!("a JSON value spread over lines {first}-{no} was joined"),
                );
                self.join.clear();
                return Ok(());
            }
            return self.flush_join(h, diag);
        }
        if self.join.over_limit() || self.join.scan.broken {
            return self.flush_join(h, diag);
        }
        Ok(())
    }

    /// Give up on a pending join: every line in it is reported as not JSON.
    fn flush_join<H: Handler>(&mut self, h: &mut H, diag: &mut Diag) -> io::Result<()> {
        if !self.join.active() {
            return Ok(());
        }
        let raw = std::mem::take(&mut self.join.raw);
        let first = self.join.first_line;
        self.join.lines = 0;
        for (i, l) in raw.split(|&b| b == b'\n').enumerate() {
            let t = trim_ascii_ws(l);
            if !t.is_empty() && !h.stop() {
                self.bad(t, first + i as u64, h, diag)?;
            }
        }
        self.join.raw = raw;
        self.join.clear();
        Ok(())
    }

    /// Bytes of a line inside a top-level array.
    fn array_bytes<H: Handler>(
        &mut self,
        mut rest: &[u8],
        no: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        while !rest.is_empty() {
            if h.stop() {
                // `--strict` after a bad element: nothing more is read.
                return Ok(());
            }
            let a = &mut self.array;
            if !a.in_elem {
                let t = rest.trim_ascii_start();
                let Some(&b) = t.first() else { return Ok(()) };
                rest = &t[1..];
                match b {
                    b']' if !a.want_elem || a.at_open => {
                        a.active = false;
                        if self.doc_array {
                            // The document's members after its array follow.
                            self.doc_array = false;
                            self.tail.start(no);
                            return self.tail_bytes(rest, no, h, diag);
                        }
                        // Anything after the array on this line is read normally.
                        return self.line_in(rest, no, h, diag);
                    }
                    b',' if !a.want_elem => a.want_elem = true,
                    _ if a.want_elem => {
                        a.in_elem = true;
                        a.want_elem = false;
                        a.at_open = false;
                        a.elem.clear();
                        a.elem_line = no;
                        a.scan = Scan::default();
                        a.overflow = false;
                        a.multiline = false;
                        a.scalar = !matches!(b, b'{' | b'[' | b'"');
                        a.elem.push(b);
                        a.scan.feed(b);
                        if !a.scalar && a.scan.complete() {
                            // Cannot happen for an opening bracket or quote.
                            self.array_elem_done(h, diag)?;
                        }
                    }
                    _ => {
                        a.active = false;
                        diag.warn(
                            Warn::NotJson,
                            no,
                            format_args!("unexpected {:?} in a top-level JSON array; reading on line by line", b as char),
                        );
                        diag.bad_lines += 1;
                        let mut s = vec![b];
                        s.extend_from_slice(rest);
                        return h.bad_line(&String::from_utf8_lossy(&s), no, diag);
                    }
                }
                continue;
            }
            // Inside an element: find where it ends on this line.
            let mut end = None;
            for (i, &b) in rest.iter().enumerate() {
                if a.scalar {
                    if matches!(b, b',' | b']') || b.is_ascii_whitespace() {
                        end = Some((i, false));
                        break;
                    }
                } else {
                    a.scan.feed(b);
                    if a.scan.complete() {
                        end = Some((i + 1, true));
                        break;
                    }
                }
            }
            let (take, done) = match end {
                Some((n, _)) => (n, true),
                None => (rest.len(), false),
            };
            if !a.overflow {
                if a.elem.len() + take > MAX_JOIN_BYTES {
                    a.overflow = true;
                    a.elem = Vec::new();
                } else {
                    a.elem.extend_from_slice(&rest[..take]);
                }
            }
            rest = &rest[take..];
            if done {
                self.array_elem_done(h, diag)?;
            } else if !a.overflow {
                // As in joins: a raw newline inside a string stands for `\n`.
                if a.scan.in_str() {
                    a.elem.extend_from_slice(b"\\n");
                } else {
                    a.elem.push(b'\n');
                }
                a.multiline = true;
            }
        }
        // An element that is a bare scalar ends at the end of its line.
        if self.array.in_elem && self.array.scalar {
            self.array_elem_done(h, diag)?;
        }
        Ok(())
    }

    fn array_elem_done<H: Handler>(&mut self, h: &mut H, diag: &mut Diag) -> io::Result<()> {
        let a = &mut self.array;
        a.in_elem = false;
        self.doc_elems += u64::from(self.doc_array);
        let line = a.elem_line;
        if a.overflow {
            diag.warn(
                Warn::NotJson,
                line,
                format_args!("array element longer than {MAX_JOIN_BYTES} bytes; skipped"),
            );
            diag.bad_lines += 1;
            return h.bad_line("array element skipped (too large)", line, diag);
        }
        let multiline = a.multiline;
        let mut elem = std::mem::take(&mut a.elem);
        if multiline {
            // In place: a document's element may be most of a huge message.
            compact_in_place(&mut elem);
        }
        let t = trim_ascii_ws(&elem);
        let r = match self.parse(t, line, h, diag)? {
            Parsed::Done => Ok(()),
            _ => self.bad(t, line, h, diag),
        };
        // A huge element's buffer is given back before its events are written.
        if elem.capacity() < HUGE_RECORD_BYTES {
            self.array.elem = elem;
        }
        r
    }

    /// End of input (after `size` bytes): report anything still pending.
    fn finish<H: Handler>(
        &mut self,
        last_line: u64,
        size: u64,
        h: &mut H,
        diag: &mut Diag,
    ) -> io::Result<()> {
        self.flush_join(h, diag)?;
        if self.array.active && self.doc_array || self.tail.active {
            return self.document_cut(last_line, size, h, diag);
        }
        if self.array.active && h.stop() {
            // The handler stopped reading (`--strict`, another agent's
            // file): the array was not cut short, reading it was.
            self.array = ArrayState::default();
        }
        if self.array.active {
            if self.array.in_elem && !self.array.elem.is_empty() {
                let elem = std::mem::take(&mut self.array.elem);
                let line = self.array.elem_line;
                self.bad(trim_ascii_ws(&elem), line, h, diag)?;
            }
            diag.warn(
                Warn::NotJson,
                last_line,
                "input ended inside a top-level JSON array",
            );
            self.array = ArrayState::default();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what the framer hands on; "parses" with serde_json.
    #[derive(Default)]
    struct Rec {
        got: Vec<(u64, String)>,
        bad: Vec<(u64, String)>,
        idles: usize,
    }

    impl Handler for Rec {
        fn record(&mut self, bytes: &[u8], line: u64, _: &mut Diag) -> io::Result<Parsed> {
            match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(v) => {
                    self.got.push((line, v.to_string()));
                    Ok(Parsed::Done)
                }
                Err(e) if e.is_eof() => Ok(Parsed::Incomplete),
                Err(_) => Ok(Parsed::Invalid),
            }
        }
        fn bad_line(&mut self, text: &str, line: u64, _: &mut Diag) -> io::Result<()> {
            self.bad.push((line, text.to_owned()));
            Ok(())
        }
        fn idle(&mut self) -> io::Result<()> {
            self.idles += 1;
            Ok(())
        }
    }

    fn frame(input: &[u8]) -> (Rec, Diag<'static>) {
        let mut r = Rec::default();
        let mut d = Diag::sink();
        Framer::new().run(input, &mut r, &mut d).unwrap();
        (r, d)
    }

    fn got(r: &Rec) -> Vec<(u64, &str)> {
        r.got.iter().map(|(l, s)| (*l, s.as_str())).collect()
    }

    #[test]
    fn lines_crlf_bom_blank_and_last_line() {
        let (r, d) = frame(b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n   \n{\"b\":2}\n{\"c\":3}");
        assert_eq!(
            got(&r),
            vec![(1, r#"{"a":1}"#), (4, r#"{"b":2}"#), (5, r#"{"c":3}"#)]
        );
        assert!(r.bad.is_empty());
        assert_eq!(d.bad_lines, 0);
    }

    #[test]
    fn non_json_lines_are_bad_and_counted() {
        let (r, d) = frame(b"T: model not available\n{\"a\":1}\n");
        assert_eq!(r.bad, vec![(1, "T: model not available".to_owned())]);
        assert_eq!(got(&r), vec![(2, r#"{"a":1}"#)]);
        assert_eq!(d.bad_lines, 1);
    }

    #[test]
    fn pretty_printed_values_are_joined() {
        let (r, d) = frame(b"{\n  \"a\": [1,\n 2]\n}\n{\"b\":2}\n");
        assert_eq!(got(&r), vec![(1, r#"{"a":[1,2]}"#), (5, r#"{"b":2}"#)]);
        assert_eq!(d.count(Warn::Joined), 1);
        assert_eq!(d.bad_lines, 0);
    }

    #[test]
    fn raw_newline_inside_a_string_is_joined_as_an_escape() {
        let (r, _) = frame(b"{\"t\":\"hello\nworld\"}\n");
        assert_eq!(got(&r), vec![(1, r#"{"t":"hello\nworld"}"#)]);
    }

    #[test]
    fn complete_object_after_a_broken_one_starts_a_new_record() {
        let (r, d) = frame(b"{\"a\":\n{\"b\":2}\n");
        assert_eq!(got(&r), vec![(2, r#"{"b":2}"#)]);
        assert_eq!(r.bad, vec![(1, "{\"a\":".to_owned())]);
        assert_eq!(d.bad_lines, 1);
    }

    #[test]
    fn unfinished_value_at_eof_reports_every_line() {
        let (r, d) = frame(b"{\"a\":\n\"x\",\n");
        assert!(r.got.is_empty());
        assert_eq!(r.bad.len(), 2);
        assert_eq!(d.bad_lines, 2);
    }

    #[test]
    fn join_is_bounded_in_lines() {
        let mut input = b"{\"a\":[\n".to_vec();
        for _ in 0..1200 {
            input.extend_from_slice(b"1,\n");
        }
        let (r, d) = frame(&input);
        assert!(r.got.is_empty());
        // The first MAX_JOIN_LINES lines are given up on; the rest are bad on their own.
        assert_eq!(d.bad_lines, 1201);
        assert_eq!(r.bad.len(), 1201);
    }

    #[test]
    fn top_level_array_is_read_element_by_element() {
        let (r, d) = frame(b"[{\"a\":1}, {\"b\":\"]\"},\n  {\"c\":\n 3}, 7, \"s\"]\n{\"d\":4}\n");
        assert_eq!(
            got(&r),
            vec![
                (1, r#"{"a":1}"#),
                (1, r#"{"b":"]"}"#),
                (2, r#"{"c":3}"#),
                (3, "7"),
                (3, r#""s""#),
                (4, r#"{"d":4}"#)
            ]
        );
        assert_eq!(d.bad_lines, 0);
    }

    #[test]
    fn pretty_printed_array() {
        let (r, _) = frame(b"[\n  {\n    \"a\": 1\n  },\n  {\"b\": 2}\n]\n");
        assert_eq!(got(&r), vec![(2, r#"{"a":1}"#), (5, r#"{"b":2}"#)]);
    }

    #[test]
    fn empty_and_unclosed_arrays() {
        let (r, d) = frame(b"[]\n");
        assert!(r.got.is_empty() && r.bad.is_empty());
        assert_eq!(d.bad_lines, 0);
        let (r, d) = frame(b"[{\"a\":1},{\"b\":");
        assert_eq!(got(&r), vec![(1, r#"{"a":1}"#)]);
        assert_eq!(r.bad.len(), 1);
        assert_eq!(d.bad_lines, 1);
    }

    /// `input`, one line, is framed as `want` after one repair: one
    /// invalid-UTF-8 warning, and the line is not a bad one.
    fn assert_repaired(input: &[u8], want: &str) {
        let (r, d) = frame(input);
        assert_eq!(got(&r), vec![(1, want)]);
        assert_eq!(d.count(Warn::InvalidUtf8), 1);
        assert_eq!(d.bad_lines, 0);
    }

    #[test]
    fn invalid_utf8_is_replaced_with_a_warning() {
        assert_repaired(b"{\"t\":\"a\xffb\"}\n", "{\"t\":\"a\u{fffd}b\"}");
    }

    #[test]
    fn lone_surrogate_escapes_are_replaced() {
        let fix = |s: &str| {
            let mut out = Vec::new();
            repair_surrogates(s.as_bytes(), &mut out).then(|| String::from_utf8(out).unwrap())
        };
        assert_eq!(
            fix(r#"{"t":"a\ud800b"}"#).as_deref(),
            Some(r#"{"t":"a\ufffdb"}"#)
        );
        assert_eq!(
            fix(r#"{"t":"\uDC00\uD83D"}"#).as_deref(),
            Some(r#"{"t":"\ufffd\ufffd"}"#)
        );
        // A high surrogate before a pair: only it is lone.
        assert_eq!(
            fix(r#"["\ud83d\ud83d\ude00"]"#).as_deref(),
            Some(r#"["\ufffd\ud83d\ude00"]"#)
        );
        // Pairs, other escapes and escaped backslashes are left alone.
        assert_eq!(fix(r#"{"t":"\ud83d\ude00 \u00e9 \\ud800 \\\\u"}"#), None);
        assert_eq!(
            fix(r#"{"t":"\\\ud800"}"#).as_deref(),
            Some(r#"{"t":"\\\ufffd"}"#)
        );
        assert_eq!(fix(r#"{"t":"\ud8"}"#), None);
        // Repaired, the record parses, and the rest of the string is kept.
        assert_repaired(b"{\"t\":\"a\\ud800b\"}\n", "{\"t\":\"a\u{fffd}b\"}");
    }

    #[test]
    fn numbers_beyond_a_double_are_read_as_null() {
        let mut out = Vec::new();
        assert!(null_huge_numbers(
            br#"{"a":1e999,"b":[-1E+400,1.5,"1e999"],"c":1e-999}"#,
            &mut out
        ));
        assert_eq!(out, br#"{"a":null,"b":[null,1.5,"1e999"],"c":1e-999}"#);
        assert!(!null_huge_numbers(
            br#"{"a":18446744073709551616}"#,
            &mut out
        ));
        let (r, d) = frame(b"{\"t\":1e999}\n{\"t\":1e999\n");
        assert_eq!(got(&r), vec![(1, r#"{"t":null}"#)]);
        assert_eq!(d.count(Warn::Format), 1);
        assert_eq!(d.bad_lines, 1);
    }

    #[test]
    fn compaction_and_huge_numbers_leave_strings_alone() {
        // Whitespace and digits inside strings stay, escaped quotes and a
        // backslash before the closing quote included.
        let src = b"{ \"a b\\\" 1e999 \" : [ 1 , 2 ] ,\n \"c\\\\\" : \" x \" , \"n\": -1e999 }";
        let mut out = Vec::new();
        compact_ws(src, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            r#"{"a b\" 1e999 ":[1,2],"c\\":" x ","n":-1e999}"#
        );
        let mut fixed = Vec::new();
        assert!(null_huge_numbers(&out, &mut fixed));
        assert_eq!(
            String::from_utf8_lossy(&fixed),
            r#"{"a b\" 1e999 ":[1,2],"c\\":" x ","n":null}"#
        );
    }

    #[test]
    fn joined_values_are_compacted_to_one_line() {
        let mut c = Vec::new();
        compact_ws(
            b"{\n  \"a b\": [1,\n   2],\n  \"s\": \"x \\\" y\"\n}",
            &mut c,
        );
        assert_eq!(c, br#"{"a b":[1,2],"s":"x \" y"}"#);
        // Bare tokens stay apart, so invalid input stays invalid.
        compact_ws(b"{\"a\": 1\n 2, \"b\": tr ue}", &mut c);
        assert_eq!(c, br#"{"a":1 2,"b":tr ue}"#);
    }

    /// Records the raw bytes each record was handed over as.
    struct Raw(Vec<Vec<u8>>);
    impl Handler for Raw {
        fn record(&mut self, bytes: &[u8], _: u64, _: &mut Diag) -> io::Result<Parsed> {
            match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(_) => {
                    self.0.push(bytes.to_vec());
                    Ok(Parsed::Done)
                }
                Err(e) if e.is_eof() => Ok(Parsed::Incomplete),
                Err(_) => Ok(Parsed::Invalid),
            }
        }
        fn bad_line(&mut self, _: &str, _: u64, _: &mut Diag) -> io::Result<()> {
            Ok(())
        }
        fn idle(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn joined_and_multiline_array_records_have_no_line_breaks() {
        let input = b"{\n  \"a\": {\n    \"b\": [1, 2]\n  }\n}\n[{\"c\":\n  {\"d\": \"x\ny\"}}]\n";
        let mut r = Raw(Vec::new());
        Framer::new()
            .run(&input[..], &mut r, &mut Diag::sink())
            .unwrap();
        assert_eq!(
            r.0,
            vec![
                br#"{"a":{"b":[1,2]}}"#.to_vec(),
                br#"{"c":{"d":"x\ny"}}"#.to_vec()
            ]
        );
    }

    #[test]
    fn idle_is_called_before_blocking() {
        let (r, _) = frame(b"{\"a\":1}\n{\"b\":2}\n");
        assert!(r.idles >= 1);
    }

    /// Reads `messages` arrays element by element.
    #[derive(Default)]
    struct Doc(Rec);
    impl Handler for Doc {
        fn record(&mut self, bytes: &[u8], line: u64, d: &mut Diag) -> io::Result<Parsed> {
            self.0.record(bytes, line, d)
        }
        fn bad_line(&mut self, text: &str, line: u64, d: &mut Diag) -> io::Result<()> {
            self.0.bad_line(text, line, d)
        }
        fn idle(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn stream_member(&mut self, head: &[u8], key: &[u8]) -> bool {
            serde_json::from_slice::<serde_json::Value>(head).unwrap();
            key == b"messages"
        }
    }

    fn frame_doc(input: &[u8]) -> (Rec, Diag<'static>) {
        let mut r = Doc::default();
        let mut d = Diag::sink();
        Framer::new().run(input, &mut r, &mut d).unwrap();
        (r.0, d)
    }

    const DOC: &[u8] = b"{\n  \"id\": \"s\",\n  \"tools\": [1,\n 2],\n  \"messages\": [\n    {\n      \"a\": \"x\ny\"\n    },\n    {\"b\": [2]}, 3\n  ],\n  \"kind\": \"main\"\n}\n{\"after\":1}\n";

    #[test]
    fn a_document_array_is_read_element_by_element() {
        let (r, d) = frame_doc(DOC);
        assert_eq!(
            got(&r),
            vec![
                (1, r#"{"id":"s","tools":[1,2]}"#),
                (6, r#"{"a":"x\ny"}"#),
                (10, r#"{"b":[2]}"#),
                (10, "3"),
                (11, r#"{"kind":"main"}"#),
                (14, r#"{"after":1}"#),
            ]
        );
        assert!(r.bad.is_empty());
        assert_eq!(d.bad_lines, 0);
        assert_eq!(d.count(Warn::Joined), 0);
        // A handler that does not stream documents joins the object whole.
        let (r, d) = frame(b"{\n \"messages\": [1,\n 2]\n}\n");
        assert_eq!(got(&r), vec![(1, r#"{"messages":[1,2]}"#)]);
        assert_eq!(d.count(Warn::Joined), 1);
    }

    #[test]
    fn a_document_cut_short_keeps_what_was_complete() {
        for cut in 1..DOC.len() {
            let (r, d) = frame_doc(&DOC[..cut]);
            let complete = got(&frame_doc(DOC).0)
                .into_iter()
                .filter(|(_, s)| r.got.iter().any(|(_, g)| g == s))
                .count();
            assert_eq!(complete, r.got.len(), "cut at {cut}: {:?}", r.got);
            let open = DOC
                .windows(13)
                .position(|w| w == b"\"messages\": [")
                .unwrap()
                + 12;
            let close = DOC.windows(3).position(|w| w == b"}\n{").unwrap();
            if cut > open && cut <= close {
                // Past the head and before the closing brace: one warning with the offset.
                assert_eq!(d.bad_lines, 1, "cut at {cut}: {:?}", r.bad);
                assert!(r.bad[0].1.contains(&format!("byte {cut}")), "{:?}", r.bad);
            }
        }
        let after_first = DOC.windows(2).position(|w| w == b"},").unwrap() + 1;
        let (r, _) = frame_doc(&DOC[..after_first]);
        assert_eq!(
            got(&r),
            vec![(1, r#"{"id":"s","tools":[1,2]}"#), (6, r#"{"a":"x\ny"}"#)]
        );
    }

    #[test]
    fn a_one_line_document_is_one_record() {
        let (r, d) = frame_doc(b"{\"id\":\"s\",\"messages\":[{\"a\":1}]}\n");
        assert_eq!(got(&r), vec![(1, r#"{"id":"s","messages":[{"a":1}]}"#)]);
        assert_eq!(d.bad_lines, 0);
    }

    /// A reader that returns one byte per read, like a slow pipe.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn framing_does_not_depend_on_read_sizes() {
        let input = b"[{\"a\":1},\n{\"b\":[1,\n2]}]\n{\n\"c\":3}\nnot json\n{\"d\":\"x\xffy\"}";
        let (whole, _) = frame(input);
        let mut r = Rec::default();
        let mut d = Diag::sink();
        Framer::new().run(Trickle(input), &mut r, &mut d).unwrap();
        assert_eq!(r.got, whole.got);
        assert_eq!(r.bad, whole.bad);
        assert!(r.idles > input.len() / 2);
    }
}
