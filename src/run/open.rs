//! Reading one input through the pipeline: a plain or zstd-compressed
//! stream, a walked file sniffed by its first block, or one session of a
//! session store (SQLite or the storage directory).

use super::pipeline::{Intake, Pipeline};
use super::{BINARY_SNIFF_BYTES, NOT_AGENT_OUTPUT};
use crate::diag::{Diag, Warn};
use crate::dialect::archive::Told;
use crate::input::mapped::{MappedFile, regular_len};
use crate::input::{FrameError, Framer, ReadEnds};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Read one input through `p`. `sniff`: a walked file ([`Input::Found`](super::Input::Found)),
/// read only if its first block passes the sniffing rule. `Ok(false)`: it
/// did not, and nothing of it was read (counted as skipped).
pub(super) fn one_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> io::Result<bool> {
    let storage = p.source.as_deref().and_then(storage_of);
    read_input(p, framer, reader, diag, sniff, storage)
}

/// [`one_input`] once it is known whether the input is (of) an OpenCode
/// storage directory.
fn read_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    mut reader: R,
    diag: &mut Diag,
    sniff: bool,
    storage: Option<(PathBuf, Option<String>)>,
) -> io::Result<bool> {
    begin_input(p);
    let framed = match storage {
        Some((root, only)) => storage_input(p, framer, &root, only, diag),
        None => match first_block(&mut reader, p.live) {
            Err(e) => Err(FrameError::Read(e)),
            Ok(first) if crate::input::zstd::is_zstd(&first) => {
                match compressed_input(p, framer, first, reader, diag, sniff) {
                    Some(r) => r,
                    None => return Ok(false),
                }
            }
            Ok(first) if crate::dialect::opencode::is_sqlite(&first) => {
                sqlite_input(p, framer, diag)
            }
            Ok(first) => match plain_input(p, framer, first, reader, diag, sniff) {
                Some(r) => r,
                None => return Ok(false),
            },
        },
    };
    end_input(p, framed, diag)
}

/// [`one_input`] of an open file (a named or walked one, or standard input
/// when it is a regular file): mapped and framed in place when it is a
/// regular file worth mapping ([`MappedFile`]) that is neither compressed
/// nor a database nor part of a session store, else read. The output is
/// the same either way. `regular` is the file's length when the caller's
/// `fstat` found a regular file (it asked already, to tell a live input).
pub(super) fn one_file(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    file: &File,
    regular: Option<u64>,
    diag: &mut Diag,
    sniff: bool,
) -> io::Result<bool> {
    // A walked file is read: a tree's files are mostly small, and mapping
    // them saved no system time there (docs/performance.md, "Mapped input").
    // A regular file is no directory: one `stat` a file fewer in a walk.
    let storage = p.source.as_deref().and_then(|path| match regular {
        Some(_) => {
            crate::dialect::opencode::storage::session_file(path).map(|(root, id)| (root, Some(id)))
        }
        None => storage_of(path),
    });
    let map = match (p.mmap && !sniff && storage.is_none(), regular) {
        (true, Some(len)) => MappedFile::open(file, len),
        _ => None,
    };
    let Some(map) = map else {
        // A finished file (a walked one, above all) small enough is read
        // whole and framed in place: read a buffer at a time, every line
        // that straddled two reads, and the first block, were copied once
        // more (docs/performance.md, "Files read whole").
        return match regular {
            Some(len) if storage.is_none() && !p.live && len < WHOLE_READ_BYTES as u64 => {
                whole_file(p, framer, file, len as usize, diag, sniff)
            }
            _ => read_input(p, framer, file, diag, sniff, storage),
        };
    };
    let data = map.bytes();
    let first = &data[..data.len().min(BINARY_SNIFF_BYTES)];
    if crate::input::zstd::is_zstd(first) || crate::dialect::opencode::is_sqlite(first) {
        drop(map);
        return read_input(p, framer, file, diag, sniff, storage);
    }
    begin_input(p);
    let whole = data.len() == first.len();
    let framed = match plain_checks(p, first, || whole, diag, sniff, &mut None) {
        Checked::Skipped => return Ok(false),
        Checked::Done(r) => r,
        Checked::Frame => {
            // A walked file's sniff read one byte past a full first block.
            let extra = usize::from(sniff && !whole);
            let ends = ReadEnds::new(first.len(), extra);
            framer.run_slice(data, ends, &mut |a, b| map.release(a, b), p, diag)
        }
    };
    end_input(p, framed, diag)
}

/// The largest file [`one_file`] reads whole: a buffer of a worker's that
/// it keeps (and only ever grows to this), for its next file.
const WHOLE_READ_BYTES: usize = 4 * 1024 * 1024;

/// [`one_file`] of a regular file `len` bytes long (when it was opened) that
/// is not mapped: read whole into the thread's buffer, then framed where it
/// lies as a mapped file is. Only the first block (and a byte more) is read
/// before the checks, so a walked file that is no session is skipped
/// having read no more of it than [`read_input`] reads. A file that grew
/// past [`WHOLE_READ_BYTES`] meanwhile, or a read error after the first
/// block, has what was read framed and then the rest read on, as
/// [`Framer::run`] reads any input.
fn whole_file(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    mut file: &File,
    len: usize,
    diag: &mut Diag,
    sniff: bool,
) -> io::Result<bool> {
    let mut whole = Whole::take(len + 1);
    if let Err(e) = whole.fill(&mut file, BINARY_SNIFF_BYTES + 1) {
        begin_input(p);
        return end_input(p, Err(FrameError::Read(e)), diag);
    }
    let first_len = whole.len.min(BINARY_SNIFF_BYTES);
    let first = &whole.buf[..first_len];
    if crate::input::zstd::is_zstd(first) || crate::dialect::opencode::is_sqlite(first) {
        // Read as any other input of its kind, from its start.
        drop(whole);
        if let Err(e) = io::Seek::rewind(&mut file) {
            begin_input(p);
            return end_input(p, Err(FrameError::Read(e)), diag);
        }
        return read_input(p, framer, file, diag, sniff, None);
    }
    begin_input(p);
    // The byte past the first block was read when there is one.
    let at_end = whole.len <= BINARY_SNIFF_BYTES;
    // The record whose detection told the sniff its dialect, if any.
    let mut told = None;
    let framed = match plain_checks(p, first, || at_end, diag, sniff, &mut told) {
        Checked::Skipped => return Ok(false),
        Checked::Done(r) => r,
        Checked::Frame => match whole.fill(&mut file, WHOLE_READ_BYTES) {
            Ok(true) => {
                // The reads `read_input` makes: the first block, for a
                // walked file the byte it sniffs past it, then buffers.
                let extra = usize::from(sniff && !at_end);
                let ends = ReadEnds::new(first_len, extra);
                // The parser may keep the places of the records it holds
                // back in the text rather than copies (until its end).
                let text = crate::input::WholeText::new(std::mem::take(&mut whole.buf), whole.len);
                p.parser.set_text(Some(text.clone()));
                // The sniff read these very bytes (the first block is the
                // start of the text): its detection is not made again.
                if let Some((at, d)) = told {
                    p.parser
                        .told(text.as_ptr() as usize + at.start, at.len(), d);
                }
                let framed = framer.run_slice(&text, ends, &mut |_, _| {}, p, diag);
                let done = end_input(p, framed, diag);
                p.parser.set_text(None);
                // Back to the thread for its next file (the parser kept no
                // share of it).
                whole.buf = text.into_buf();
                return done;
            }
            _ => {
                let head = io::Cursor::new(&whole.buf[..whole.len]);
                framer.run(head.chain(file), p, diag)
            }
        },
    };
    end_input(p, framed, diag)
}

thread_local! {
    /// The buffer of the thread's last file read whole, for its next.
    static WHOLE_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A file read whole ([`whole_file`]): `buf[..len]` read so far. The
/// buffer is zeroed only when it grows (reads never look past `len`),
/// and given back to the thread when dropped.
struct Whole {
    buf: Vec<u8>,
    len: usize,
    /// A read found the end of the file.
    eof: bool,
}

impl Whole {
    /// The thread's buffer, of at least `size` bytes (at most
    /// [`WHOLE_READ_BYTES`] + 1).
    fn take(size: usize) -> Whole {
        let mut buf = WHOLE_BUFFER.with(std::cell::Cell::take);
        if buf.len() < size {
            // A new buffer, at least twice the old: growing this one
            // would copy its old bytes, and growing it a little for each
            // larger file would touch fresh memory each time.
            let grown = (buf.len() * 2).min(WHOLE_READ_BYTES + 1).max(size);
            drop(buf);
            buf = vec![0; grown];
        }
        Whole {
            buf,
            len: 0,
            eof: false,
        }
    }

    /// Read on until at least `upto` bytes are in (`Ok(false)`: more may
    /// come) or the file ends (`Ok(true)`). A read fills what the buffer
    /// has room for; the buffer grows when full, never past `upto`.
    fn fill(&mut self, file: &mut impl Read, upto: usize) -> io::Result<bool> {
        while !self.eof && self.len < upto {
            if self.len == self.buf.len() {
                let size = (self.buf.len() * 2).clamp(BINARY_SNIFF_BYTES, upto);
                self.buf.resize(size, 0);
            }
            match file.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.eof)
    }
}

impl Drop for Whole {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        if buf.len() <= WHOLE_READ_BYTES + 1 {
            // At the thread's end the buffer goes with it.
            let _ = WHOLE_BUFFER.try_with(|b| b.set(buf));
        }
    }
}

/// Standard input as a file, when the run may map it
/// ([`Config::map_stdin`](super::Config::map_stdin)) and it is a regular
/// file not read from yet (`cstream < file`): a duplicate of descriptor 0,
/// which shares its offset, and its length.
#[cfg(unix)]
pub(super) fn stdin_file(cfg: &super::Config) -> Option<(File, u64)> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    if !cfg.map_stdin || cfg.no_mmap {
        return None;
    }
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let mut file = File::from(fd);
    let len = regular_len(&file)?;
    (file.stream_position().ok()? == 0).then_some((file, len))
}

/// Elsewhere standard input is always read.
#[cfg(not(unix))]
pub(super) fn stdin_file(_: &super::Config) -> Option<(File, u64)> {
    None
}

/// [`one_file`] of standard input (`file`, from [`stdin_file`]); its
/// offset is then moved to the end, where reading it would have left it,
/// so that a second `-` reads nothing, as before.
pub(super) fn one_stdin_file(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    file: &File,
    len: u64,
    diag: &mut Diag,
) -> io::Result<bool> {
    use std::io::Seek;
    let r = one_file(p, framer, file, Some(len), diag, false);
    let mut f = file;
    let _ = f.seek(io::SeekFrom::End(0));
    r
}

/// What every input starts with: the parser and the counts of the input
/// before are reset.
fn begin_input(p: &mut Pipeline<'_>) {
    p.parser.reset(p.source.as_deref());
    p.begun = false;
    p.notices = 0;
    p.records = 0;
    p.unknown_records = 0;
    p.dialect_checked = false;
}

/// What every input that was read ends with: the records its parser still
/// holds, its warnings, its sessions' endings.
fn end_input(
    p: &mut Pipeline<'_>,
    framed: Result<(), FrameError>,
    diag: &mut Diag,
) -> io::Result<bool> {
    match framed {
        Ok(()) => {}
        Err(FrameError::Read(e)) => {
            let file = diag.file.clone();
            diag.error(format_args!("{file}: {e}"));
        }
        Err(FrameError::Write(e)) => return Err(e),
    }
    {
        // Records a parser still holds (undecided ones, a failure message
        // waiting for its repeat) belong to this input.
        let norm = &mut p.norm;
        let sink = &mut *p.sink;
        let mut intake = Intake::new();
        p.parser
            .finish(&mut |line, item| intake.item(norm, sink, diag, line, item))?;
        p.taken(intake, diag);
    }
    if let Some((agent, line)) = p.parser.foreign() {
        not_read(agent, line, diag);
    }
    if let Some(line) = p.parser.guessed_at() {
        diag.warn(
            Warn::Format,
            line,
            "could not tell which agent wrote this input; reading it as cursor-agent (use --from to say)",
        );
    }
    p.check_dialect(diag, true);
    // Lines that were not JSON and no stream after them: bad input after all.
    diag.bad_lines += std::mem::take(&mut p.notices);
    // `--from` names the dialect of an input that had no records at all.
    p.name_dialect();
    p.norm.end_input(&mut *p.sink, diag)?;
    p.report_endings(diag);
    p.check_sessions(diag);
    if let Some(files) = &mut p.files {
        files.count(p.parser.chosen);
    }
    Ok(true)
}

/// Skip an input of an agent cstream does not read, as a binary one is
/// (exit status 1): reading it as another agent would make nonsense of it.
fn not_read(agent: &str, line: u64, diag: &mut Diag) {
    diag.bad_lines += 1;
    diag.warn(
        Warn::Format,
        line,
        format_args!(
            "not a format cstream reads: this looks like {agent}; skipping this input \
             (docs/dialects.md#not-a-format-cstream-reads)"
        ),
    );
}

/// Frame an input whose first block is `first` (and the rest `reader`):
/// skipped unread when it is binary, or when it is a walked file (`sniff`)
/// that is not a session (`None`: counted as skipped).
fn plain_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    first: First,
    mut reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    let mut rest = Vec::new();
    let whole = || whole_input(&first, &mut reader, &mut rest);
    match plain_checks(p, &first, whole, diag, sniff, &mut None) {
        Checked::Skipped => None,
        Checked::Done(r) => Some(r),
        // A whole input in its first block (a finished file shorter than
        // the block: most of a transcript tree) is framed where it lies.
        // Read through the block, it was copied into the framer's read
        // buffer first; framed in place, `--to usage` over a Claude tree
        // runs 2.3 % fewer instructions (docs/performance.md, "Small files
        // framed in their first block"). The output is the same
        // (`Framer::run_slice` hears the reads a read framer would make).
        Checked::Frame if !p.live && first.len() < BINARY_SNIFF_BYTES => {
            let ends = ReadEnds::new(first.len(), 0);
            Some(framer.run_slice(&first, ends, &mut |_, _| {}, p, diag))
        }
        Checked::Frame => {
            let head = io::Cursor::new(first).chain(io::Cursor::new(rest));
            Some(framer.run(head.chain(reader), p, diag))
        }
    }
}

/// What [`plain_checks`] made of an input's first block.
enum Checked {
    /// A walked file that is not a session: skipped, counted, nothing read.
    Skipped,
    /// Not read on (binary, or another agent's): already reported.
    Done(Result<(), FrameError>),
    /// To be framed.
    Frame,
}

/// The checks of an uncompressed input's first block `first`, before it
/// is framed: a walked file (`sniff`) must look like a session (`whole`:
/// whether the block is all of it), an input of an agent cstream does not
/// read or with a NUL byte is reported and not read.
fn plain_checks(
    p: &mut Pipeline<'_>,
    first: &[u8],
    whole: impl FnOnce() -> bool,
    diag: &mut Diag,
    sniff: bool,
    told: &mut Option<Told>,
) -> Checked {
    if sniff && !is_session(first, whole(), told) {
        // Not a session: skipped and counted, as if the walk had not
        // listed it.
        if let Some(files) = &mut p.files {
            files.skipped += 1;
        }
        let file = diag.file.clone();
        diag.skipped_file(file, NOT_AGENT_OUTPUT);
        return Checked::Skipped;
    }
    if p.parser.detecting()
        && let Some(agent) = crate::dialect::foreign::sniff_text(first)
    {
        not_read(agent, 1, diag);
        return Checked::Done(Ok(()));
    }
    match memchr::memchr(0, first) {
        // Not valid input: counted like a bad line (exit status 1), and
        // nothing of it is read; it ends like an input without events
        // (a session without a result), so every format still gives
        // one well-formed, empty session for it.
        Some(at) => {
            let line = 1 + memchr::memchr_iter(b'\n', &first[..at]).count() as u64;
            diag.bad_lines += 1;
            diag.warn(
                Warn::NotJson,
                line,
                format_args!("binary data (a NUL byte at offset {at}); skipping this input"),
            );
            Checked::Done(Ok(()))
        }
        None => Checked::Frame,
    }
}

/// A zstd-compressed input (`crate::input::zstd`): decompressed as it is
/// read, and from then on read as [`plain_input`] reads any other (its
/// first block sniffed, its lines framed). A decompression error is a read
/// error naming the file, after the records before it.
#[cfg(feature = "zstd")]
fn compressed_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    first: First,
    reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    let source = io::BufReader::with_capacity(
        crate::input::READ_BUFFER_BYTES,
        io::Cursor::new(first).chain(reader),
    );
    let mut decoded = crate::input::zstd::Decompress::new(source);
    match first_block(&mut decoded, p.live) {
        Err(e) => Some(Err(FrameError::Read(e))),
        Ok(first) => plain_input(p, framer, first, decoded, diag, sniff),
    }
}

/// Without the `zstd` feature a compressed input is reported and skipped
/// (a walked one is named in the one line of the files skipped).
#[cfg(not(feature = "zstd"))]
fn compressed_input<R: Read>(
    p: &mut Pipeline<'_>,
    _: &mut Framer,
    _: First,
    _: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    if sniff {
        if let Some(files) = &mut p.files {
            files.skipped += 1;
        }
        let file = diag.file.clone();
        diag.skipped_file(file, "zstd-compressed, and this build reads none");
        return None;
    }
    diag.bad_lines += 1;
    diag.warn(
        Warn::NotJson,
        1,
        "zstd-compressed input, and this build reads none (cargo feature `zstd`); skipping this input",
    );
    Some(Ok(()))
}

/// An SQLite database (OpenCode's session store): its sessions read as
/// records by `crate::dialect::opencode::db`, framed like any input. What
/// cannot be read of it is an error naming the file; the sessions read
/// before that are kept.
#[cfg(feature = "sqlite")]
fn sqlite_input(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    let Some(path) = p.source.clone() else {
        let file = diag.file.clone();
        diag.error(format_args!(
            "{file}: an SQLite database can only be read from a file, not a pipe; skipped"
        ));
        return Ok(());
    };
    let only = p.stored_session.clone();
    let mut records = crate::dialect::opencode::db::Records::open(&path, only);
    let r = framer.run(&mut records, p, diag);
    if let Err(e) = records.finish() {
        let file = diag.file.clone();
        diag.error(format_args!("{file}: {e}"));
    }
    r
}

/// OpenCode's storage directory (before v1.2) and the one session to read
/// of it, when `path` is that directory or one of its session files.
fn storage_of(path: &Path) -> Option<(PathBuf, Option<String>)> {
    use crate::dialect::opencode::storage;
    if path.is_dir() {
        return storage::is_root(path).then(|| (path.to_path_buf(), None));
    }
    storage::session_file(path).map(|(root, id)| (root, Some(id)))
}

/// OpenCode's storage directory: its sessions read as records by
/// `crate::dialect::opencode::storage`, framed like any input. Each file
/// that is damaged or dangling is a warning naming it (at the record it
/// belongs with); the rest is read.
fn storage_input(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    root: &Path,
    only: Option<String>,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    // A directory read as a whole, however it was opened.
    p.live = false;
    let only = p.stored_session.clone().or(only);
    let mut records = match crate::dialect::opencode::storage::Records::open(root, only.as_deref())
    {
        Ok(r) => r,
        Err(e) => return Err(FrameError::Read(e)),
    };
    let r = framer.run(&mut records, p, diag);
    for problem in records.problems() {
        if problem.lost {
            diag.bad_lines += 1;
        }
        diag.warn(Warn::Format, problem.line, problem.message);
    }
    r
}

/// Built without the `sqlite` feature: an SQLite database is reported and
/// skipped.
#[cfg(not(feature = "sqlite"))]
fn sqlite_input(
    _p: &mut Pipeline<'_>,
    _framer: &mut Framer,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    let file = diag.file.clone();
    diag.error(format_args!(
        "{file}: an SQLite database, and this build reads none (the `sqlite` feature is off); skipped"
    ));
    Ok(())
}

/// Whether the first block `first` is all of its input: the sniffing rule
/// of walked files wants to know whether the file goes on past the block,
/// so one byte more is read when the block is full (kept in `rest`).
fn whole_input<R: Read>(first: &[u8], reader: &mut R, rest: &mut Vec<u8>) -> bool {
    first.len() < BINARY_SNIFF_BYTES || {
        // A read error here shows when the file is read on.
        let _ = reader.by_ref().take(1).read_to_end(rest);
        rest.is_empty()
    }
}

/// Whether a walked file whose first block is `first` (`whole`: all of
/// it) is a session.
fn is_session(first: &[u8], whole: bool, told: &mut Option<Told>) -> bool {
    let (sniffed, t) = crate::dialect::archive::sniff_told(first, whole);
    *told = t;
    // Another agent's file is opened, to be said to be one.
    !matches!(sniffed, crate::dialect::archive::Sniff::Skip(_))
}

/// The first block of an input: for a live stream, one read of up to
/// [`BINARY_SNIFF_BYTES`] (retried when interrupted), which never waits
/// for more than the first bytes it has to give; for a whole input, reads
/// until the block is full or the input ends, so that how the reads fall
/// does not change what is sniffed.
fn first_block<R: Read>(reader: &mut R, live: bool) -> io::Result<First> {
    let mut first = First::take();
    loop {
        match reader.read(&mut first.buf[first.len..]) {
            Ok(n) => {
                first.len += n;
                if live || n == 0 || first.len == BINARY_SNIFF_BYTES {
                    return Ok(first);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

thread_local! {
    /// The buffer of the thread's last first block, for its next input.
    static FIRST_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// An input's first block, read into a buffer of the thread's that is
/// zeroed once and then reused: a `--jobs` worker or a walk over thousands
/// of small files would otherwise clear 64 KiB for each (its old bytes
/// past `len` are never looked at). Given back when dropped.
pub(super) struct First {
    buf: Vec<u8>,
    len: usize,
}

impl First {
    fn take() -> First {
        let mut buf = FIRST_BUFFER.with(std::cell::Cell::take);
        if buf.len() != BINARY_SNIFF_BYTES {
            buf = vec![0; BINARY_SNIFF_BYTES];
        }
        First { buf, len: 0 }
    }
}

impl std::ops::Deref for First {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl AsRef<[u8]> for First {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for First {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        // At the thread's end the buffer goes with it.
        let _ = FIRST_BUFFER.try_with(|b| b.set(buf));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives `step` bytes a read at most, after an
    /// interruption before each.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        interrupt: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// The first block and a byte, then the rest to its end; a buffer made
    /// too small for the file (it grew after it was measured) grows.
    #[test]
    fn a_file_is_read_whole_by_short_reads() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        for (step, size) in [(7_001, data.len() + 1), (65_536, 10), (1 << 20, 1)] {
            let mut whole = Whole::take(size);
            let mut r = Trickle {
                data: &data,
                step,
                interrupt: false,
            };
            assert!(!whole.fill(&mut r, BINARY_SNIFF_BYTES + 1).unwrap());
            assert!(whole.len > BINARY_SNIFF_BYTES);
            assert!(whole.fill(&mut r, WHOLE_READ_BYTES).unwrap());
            assert_eq!(&whole.buf[..whole.len], &data[..], "step {step}");
        }
    }

    /// A file shorter than the first block ends in the first fill; one
    /// longer than the limit stops at it, with more to come, its buffer
    /// grown to the limit only (or as large as it was given).
    #[test]
    fn the_fill_stops_at_the_end_or_the_limit() {
        let mut whole = Whole::take(11);
        let mut r: &[u8] = b"0123456789";
        assert!(whole.fill(&mut r, BINARY_SNIFF_BYTES + 1).unwrap());
        assert_eq!(&whole.buf[..whole.len], b"0123456789");
        assert!(whole.fill(&mut r, WHOLE_READ_BYTES).unwrap());
        drop(whole);

        let data = vec![b'a'; 3 * BINARY_SNIFF_BYTES];
        let mut whole = Whole::take(1);
        let mut r: &[u8] = &data;
        assert!(!whole.fill(&mut r, 2 * BINARY_SNIFF_BYTES).unwrap());
        assert!(whole.len >= 2 * BINARY_SNIFF_BYTES);
        assert_eq!(whole.len + r.len(), data.len());
        assert!(whole.buf.len() <= 200_001, "grown no larger than asked");
    }
}
