//! Regular files read through a read-only memory mapping
//! (docs/ARCHITECTURE.md#input-framing): the framer takes each line where
//! it lies in the mapping ([`super::Framer::run_slice`]), so the kernel
//! does not copy the file into a read buffer and no line is copied out of
//! one. Pipes, terminals, sockets and compressed inputs are read as
//! before; so is a file when mapping it fails, and with `--no-mmap`.
//!
//! The mapping covers the size the file had when it was opened, never
//! more: a file that grows while it is read is read as it was (bytes
//! appended later are not seen, as a read that had reached the end would
//! not see them). A file that *shrinks* while mapped makes the pages past
//! its new end unreadable, and touching one raises SIGBUS, which ends the
//! process. Transcripts are only ever appended to, so the risk is a file
//! truncated or rewritten in place during the run; `--no-mmap` avoids it
//! (docs/cli.md, "Reading files").

use std::fs::File;

use memmap2::{Advice, Mmap, MmapOptions, UncheckedAdvice};

/// Files smaller than this are read, not mapped: for a file of a few
/// pages, setting up and tearing down a mapping (and faulting its pages
/// in) costs more than the copy it saves (docs/performance.md, "Mapped
/// input").
pub const MIN_MAPPED_BYTES: u64 = 64 * 1024;

/// The length of `file` when it is a regular file (not a FIFO, a device,
/// a `<(…)`), the only kind worth mapping: one `fstat`, whose answer also
/// tells a live input from a finished one.
pub fn regular_len(file: &File) -> Option<u64> {
    file.metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// A regular file mapped read-only, as long as it was when opened.
pub struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    /// Map the `len` bytes of `file` from its start, or `None` when it is
    /// better read: not a regular file, smaller than [`MIN_MAPPED_BYTES`],
    /// larger than the address space, or the mapping failed.
    pub fn open(file: &File, len: u64) -> Option<MappedFile> {
        if len < MIN_MAPPED_BYTES {
            return None;
        }
        let len = usize::try_from(len).ok()?;
        // SAFETY: the mapping is read-only and private to this process's
        // reading; what `Mmap::map` cannot promise is that the file does
        // not change under it. It covers only the `len` bytes the file had
        // at open (never past its end then). Another process appending
        // changes no mapped byte; one rewriting the file in place changes
        // bytes the framer may be reading (as a plain read could see a
        // half-written file too: the framer treats them as any input,
        // never trusting them); one truncating it makes the pages past the
        // new end raise SIGBUS (the module's comment: accepted and
        // documented, with `--no-mmap` to avoid it).
        let map = unsafe { MmapOptions::new().len(len).map(file) }.ok()?;
        // Read once, front to back: the kernel may read ahead further.
        let _ = map.advise(Advice::Sequential);
        Some(MappedFile { map })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The bytes in `from..to` are done with: give their pages back, so
    /// that the pages of a large file read from front to back do not all
    /// stay counted against the process (its peak memory then does not
    /// grow with the file). `from` and `to` are multiples of the page size
    /// (the framer's `RELEASE_BYTES`).
    pub fn release(&self, from: usize, to: usize) {
        if to <= from || to > self.map.len() {
            return;
        }
        // SAFETY: MADV_DONTNEED on a shared, read-only file mapping only
        // drops this process's page-table entries for the range; the pages
        // stay in the page cache, and touching the range again maps the
        // file's bytes back in (the same bytes, the file not changing). No
        // memory is freed that Rust still refers to as something else: the
        // mapping itself stays, and the framer has handed on every line
        // before `to` and holds no reference into the range.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, from, to - from)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Framer, Handler, Parsed, READ_BUFFER_BYTES, ReadEnds};
    use crate::diag::Diag;
    use crate::run::BINARY_SNIFF_BYTES;
    use std::io::{self, Read};

    /// Everything the framer tells its handler, in order, idles included
    /// (they are where output is flushed and bursts end).
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Handler for Log {
        fn record(&mut self, bytes: &[u8], line: u64, _: &mut Diag) -> io::Result<Parsed> {
            match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(v) => {
                    self.0.push(format!("{line}: {v}"));
                    Ok(Parsed::Done)
                }
                Err(e) if e.is_eof() => Ok(Parsed::Incomplete),
                Err(_) => Ok(Parsed::Invalid),
            }
        }
        fn bad_line(&mut self, text: &str, line: u64, _: &mut Diag) -> io::Result<()> {
            self.0.push(format!("{line} bad: {text}"));
            Ok(())
        }
        fn idle(&mut self) -> io::Result<()> {
            self.0.push("idle".to_owned());
            Ok(())
        }
    }

    /// What the handler heard, the lines and bytes counted, the bad lines
    /// and the warnings written.
    type Heard = (Vec<String>, u64, u64, u64, Vec<u8>);

    /// The read framer on `data` as a regular file is read (the first
    /// block, one byte more when `extra`, then the rest), and the in-place
    /// framer on the same bytes: what the handler hears, the warnings, the
    /// counts.
    fn both(data: &[u8], extra: bool) -> [Heard; 2] {
        let first = data.len().min(BINARY_SNIFF_BYTES);
        let extra = usize::from(extra && data.len() > first);
        let run = |mapped: bool| {
            let mut log = Log::default();
            let mut warnings = Vec::new();
            let mut diag = Diag::new(Box::new(&mut warnings));
            let mut framer = Framer::new();
            if mapped {
                let mut released = 0;
                let mut release = |a: usize, b: usize| {
                    assert_eq!(a, released, "released in order, once");
                    assert!(b > a && b.is_multiple_of(super::super::RELEASE_BYTES));
                    released = b;
                };
                let ends = ReadEnds::new(first, extra);
                framer
                    .run_slice(data, ends, &mut release, &mut log, &mut diag)
                    .unwrap();
            } else {
                let reader = (&data[..first])
                    .chain(&data[first..first + extra])
                    .chain(&data[first + extra..]);
                framer.run(reader, &mut log, &mut diag).unwrap();
            }
            let bad = diag.bad_lines;
            drop(diag);
            (log.0, framer.lines_in, framer.bytes_in, bad, warnings)
        };
        [run(false), run(true)]
    }

    #[track_caller]
    fn same(data: &[u8]) {
        for extra in [false, true] {
            let [read, mapped] = both(data, extra);
            assert_eq!(read, mapped, "extra {extra}");
        }
    }

    #[test]
    fn empty_and_tiny_inputs() {
        same(b"");
        same(b"\n");
        same(b"{\"a\":1}");
        same(b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n{\"b\":\n2}\n[1,\n2]\nnot json\r");
    }

    /// Lines that end just before, at and just after every read's end,
    /// with and without a last newline, CRLF or LF.
    #[test]
    fn lines_at_every_read_edge() {
        let edges = [
            BINARY_SNIFF_BYTES,
            BINARY_SNIFF_BYTES + 1,
            BINARY_SNIFF_BYTES + READ_BUFFER_BYTES,
            BINARY_SNIFF_BYTES + 1 + READ_BUFFER_BYTES,
        ];
        for edge in edges {
            for shift in [-2i64, -1, 0, 1, 2] {
                for crlf in [false, true] {
                    for last_newline in [false, true] {
                        let at = (edge as i64 + shift) as usize;
                        let mut data = filler(at, crlf);
                        data.extend_from_slice(b"{\"x\":\"end\"}");
                        if last_newline {
                            data.push(b'\n');
                        }
                        same(&data);
                        // The file ends exactly at the edge.
                        same(&filler(at, crlf));
                    }
                }
            }
        }
    }

    /// JSON lines of about 100 bytes making exactly `len` bytes, the last
    /// ending with a newline (unless `len` is 0).
    fn filler(len: usize, crlf: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let end: &[u8] = if crlf { b"\"}\r\n" } else { b"\"}\n" };
        while out.len() < len {
            let left = len - out.len();
            let body = if left < 200 { left } else { 100 };
            let start = b"{\"t\":\"";
            if body < start.len() + end.len() {
                out.extend(std::iter::repeat_n(b'\n', body));
                continue;
            }
            out.extend_from_slice(start);
            out.extend(std::iter::repeat_n(b'a', body - start.len() - end.len()));
            out.extend_from_slice(end);
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// Random layouts of lines (records, blank lines, values over
        /// several lines, arrays, CRLF, invalid UTF-8, long lines that
        /// straddle reads), with or without the sniff's extra byte: the
        /// in-place framer hears and counts what the read framer does.
        #[test]
        fn in_place_frames_as_reads_do(
            parts in proptest::collection::vec((0u8..8, 0usize..40_000), 0..40),
            last_newline in proptest::bool::ANY,
        ) {
            let mut data = Vec::new();
            for (kind, n) in parts {
                match kind {
                    0 => data.extend_from_slice(b"\n"),
                    1 => data.extend_from_slice(b"{\"a\":\n1}\n"),
                    2 => data.extend_from_slice(b"[{\"b\":2},\n3]\r\n"),
                    3 => data.extend_from_slice(b"{\"bad\xff\":1}\n"),
                    4 => data.extend_from_slice(b"nope\n"),
                    _ => {
                        data.extend_from_slice(b"{\"s\":\"");
                        data.extend(std::iter::repeat_n(b'x', n * (kind as usize - 4)));
                        data.extend_from_slice(if kind == 7 { b"\"}\r\n" } else { b"\"}\n" });
                    }
                }
            }
            if !last_newline && data.last() == Some(&b'\n') {
                data.pop();
            }
            for extra in [false, true] {
                let [read, mapped] = both(&data, extra);
                proptest::prop_assert_eq!(read, mapped);
            }
        }
    }

    /// A file mapped as the command line maps it: what it holds, and its
    /// pages given back without changing them.
    #[test]
    fn maps_a_file_and_gives_pages_back() {
        let dir = std::env::temp_dir().join(format!("cstream-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.jsonl");
        let data = filler(3 * super::super::RELEASE_BYTES + 123, false);
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert!(super::MappedFile::open(&file, super::MIN_MAPPED_BYTES - 1).is_none());
        let map = super::MappedFile::open(&file, data.len() as u64).unwrap();
        assert_eq!(map.bytes(), &data[..]);
        map.release(0, 2 * super::super::RELEASE_BYTES);
        // Out of range or empty: nothing done.
        map.release(0, data.len() + 1);
        map.release(5, 5);
        assert_eq!(map.bytes(), &data[..]);
        drop(map);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
