//! zstd-compressed input: Codex (0.137 and later) rewrites a rollout that has
//! been idle for a week as `rollout-*.jsonl.zst` and deletes the plain file.
//!
//! An input is compressed when its first bytes are the zstd frame magic
//! (`28 B5 2F FD`), whatever it is called: the run decompresses it as it
//! reads ([`Decompress`]), and everything after (binary sniffing, the walk's
//! session rule, dialect detection, framing) sees the decompressed lines.
//! The decoder holds one frame's window (at most [`MAX_WINDOW_BYTES`]) and
//! one block, never the file.
//!
//! A file cut short or corrupt ends in a read error naming it; the records
//! decompressed before that point have been read and converted already.
//! Without the `zstd` feature (a library built without default features), a
//! compressed input is reported and skipped.

/// The zstd frame magic number, as it is written (little-endian `0xFD2FB528`).
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// A frame asking for a larger window than this is refused (the decoder
/// would allocate it). `zstd` at any ordinary level uses at most 8 MiB;
/// `--long` 128 MiB.
#[cfg(feature = "zstd")]
pub const MAX_WINDOW_BYTES: u64 = 128 * 1024 * 1024;

/// Whether a block of input begins with a zstd frame.
pub fn is_zstd(block: &[u8]) -> bool {
    block.starts_with(&MAGIC)
}

#[cfg(feature = "zstd")]
pub use imp::Decompress;

#[cfg(feature = "zstd")]
mod imp {
    use std::io::{self, BufRead, Read};

    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

    /// The decompressed bytes of a zstd stream: one frame after another
    /// (skippable frames skipped), each frame's checksum verified when it
    /// has one. A stream that ends inside a frame, or does not decode, is a
    /// read error of kind `InvalidData`.
    pub struct Decompress<R: BufRead> {
        source: R,
        frame: FrameDecoder,
        /// A frame has been begun and not finished.
        in_frame: bool,
        /// Frames finished so far.
        frames: u64,
        /// Compressed bytes read by the finished frames (for the error
        /// message's offset).
        consumed: u64,
    }

    impl<R: BufRead> Decompress<R> {
        /// Decompress `source` (which begins with a frame).
        pub fn new(source: R) -> Self {
            let mut frame = FrameDecoder::new();
            frame.set_max_window_size(super::MAX_WINDOW_BYTES);
            Decompress {
                source,
                frame,
                in_frame: false,
                frames: 0,
                consumed: 0,
            }
        }

        fn corrupt(&self, what: impl std::fmt::Display) -> io::Error {
            let at = self.consumed + self.frame.bytes_read_from_source();
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "zstd-compressed input is truncated or corrupt: {what} (frame {}, near compressed byte {at}); the records before it were read",
                    self.frames + 1
                ),
            )
        }

        /// A decoding error, said plainly when it is the end of the data.
        fn decode_error(&self, e: FrameDecoderError) -> io::Error {
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            while let Some(c) = cause {
                if c.downcast_ref::<io::Error>()
                    .is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof)
                {
                    return self.corrupt("the compressed data ends in the middle of a frame");
                }
                cause = c.source();
            }
            // Some of the decoder's errors carry the I/O error only in
            // their text.
            if format!("{e:?}").contains("UnexpectedEof") {
                return self.corrupt("the compressed data ends in the middle of a frame");
            }
            self.corrupt(e)
        }

        /// Begin the next frame; false at the end of the stream.
        fn next_frame(&mut self) -> io::Result<bool> {
            loop {
                if self.source.fill_buf()?.is_empty() {
                    return Ok(false);
                }
                match self.frame.reset(&mut self.source) {
                    Ok(()) => {
                        self.in_frame = true;
                        return Ok(true);
                    }
                    Err(FrameDecoderError::ReadFrameHeaderError(
                        ReadFrameHeaderError::SkipFrame { length, .. },
                    )) => {
                        let want = u64::from(length);
                        let skipped =
                            io::copy(&mut (&mut self.source).take(want), &mut io::sink())?;
                        if skipped < want {
                            return Err(self.corrupt("a skippable frame is cut short"));
                        }
                        self.consumed += 8 + want;
                    }
                    Err(e) => return Err(self.decode_error(e)),
                }
            }
        }

        /// The frame is decoded and drained: check its checksum.
        fn end_frame(&mut self) -> io::Result<()> {
            self.in_frame = false;
            if let Some(stored) = self.frame.get_checksum_from_data()
                && let Some(computed) = self.frame.get_calculated_checksum()
                && stored != computed
            {
                return Err(self.corrupt("content checksum mismatch"));
            }
            self.consumed += self.frame.bytes_read_from_source();
            self.frames += 1;
            Ok(())
        }
    }

    impl<R: BufRead> Read for Decompress<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if buf.is_empty() {
                return Ok(0);
            }
            loop {
                if !self.in_frame && !self.next_frame()? {
                    return Ok(0);
                }
                if self.frame.can_collect() == 0 && !self.frame.is_finished() {
                    if let Err(e) = self
                        .frame
                        .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                    {
                        return Err(self.decode_error(e));
                    }
                    continue;
                }
                let n = self.frame.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                if self.frame.is_finished() && self.frame.can_collect() == 0 {
                    self.end_frame()?;
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// `printf '{"a":1}\n' | zstd -19 --check`: a single-segment frame
        /// with one raw block and a content checksum.
        const FRAME: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68, 0x41, 0x00, 0x00, 0x7b, 0x22, 0x61, 0x22, 0x3a,
            0x31, 0x7d, 0x0a, 0xe2, 0xef, 0xec, 0xe0,
        ];

        fn all(bytes: &[u8]) -> io::Result<Vec<u8>> {
            let mut out = Vec::new();
            Decompress::new(io::BufReader::new(bytes)).read_to_end(&mut out)?;
            Ok(out)
        }

        #[test]
        fn one_frame_and_concatenated_frames() {
            assert_eq!(all(FRAME).unwrap(), b"{\"a\":1}\n");
            let two = [FRAME, FRAME].concat();
            assert_eq!(all(&two).unwrap(), b"{\"a\":1}\n{\"a\":1}\n");
            // A skippable frame (magic 0x184D2A50, 3 bytes) between them.
            let skip = [0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
            let with_skip = [FRAME, &skip, FRAME].concat();
            assert_eq!(all(&with_skip).unwrap(), b"{\"a\":1}\n{\"a\":1}\n");
        }

        #[test]
        fn cut_or_corrupt_is_an_error() {
            for cut in 5..FRAME.len() {
                let e = all(&FRAME[..cut]).unwrap_err();
                assert_eq!(e.kind(), io::ErrorKind::InvalidData, "cut at {cut}");
                assert!(e.to_string().contains("truncated or corrupt"), "{e}");
            }
            let mut bad = FRAME.to_vec();
            let n = bad.len();
            bad[n - 1] ^= 0xff;
            let e = all(&bad).unwrap_err();
            assert!(e.to_string().contains("checksum"), "{e}");
        }
    }
}
