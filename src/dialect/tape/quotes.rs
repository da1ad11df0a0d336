//! Where a line's strings end, found for the whole line in one pass before
//! its walk (docs/performance.md, "One pass for the quotes").
//!
//! The walk of a line (the fast reader's `Tape`) used to look for the end of
//! each string from its opening quote: a block compare for the first 32
//! bytes, then one per 64, then a stop at every escape. A Claude line has
//! dozens of short strings and a few long ones full of escapes, so most of
//! that work was getting each search going. Here every 64-byte block of the
//! line is compared once: its quotes, its backslashes and its bytes below
//! 0x20. Which bytes a backslash escapes follows from the backslash mask by
//! carry arithmetic (a run of backslashes escapes the byte after it when
//! the run is odd), so a quote that ends a string is a quote not escaped,
//! and a string's end is the next such quote: a look at a word or two.
//!
//! What the index refuses is what the string walk refuses, for any line the
//! walk accepts: a byte below 0x20 anywhere (the walk takes none between
//! tokens either), an escape other than the simple ones or `\uXXXX` outside
//! the surrogates. A backslash outside a string would be read here as an
//! escape, but the walk refuses the line at it before that matters.

/// The end of every string of one line, as a bit per byte.
#[derive(Default)]
pub(crate) struct Quotes {
    /// For each 64 bytes: bit `k` of the first word is set when byte `k`
    /// is a quote no backslash escapes, of the second when it is a
    /// backslash (kept side by side: a key's end and its backslashes are
    /// looked up together).
    words: Vec<[u64; 2]>,
}

/// The index kept from line to line at most: 1 MiB, for lines to 4 MiB.
const KEPT_WORDS: usize = 1 << 16;

#[cfg(target_arch = "x86_64")]
use crate::json::blocks::wide;
use crate::json::blocks::{Block, classify_sse, escaped, escapes_ok_bytes};

impl Quotes {
    /// Index the line `s`: `false` when it holds a byte below 0x20 or an
    /// escape the walk refuses (then nothing of the index is to be read).
    pub(crate) fn index(&mut self, s: &[u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if wide() {
            // SAFETY: `wide` found AVX2 on this CPU.
            return unsafe { avx2::index(self, s) };
        }
        self.index_by(s, classify_sse)
    }

    /// [`Quotes::index`] with `classify` for a whole block at `s[i..]`.
    #[inline(always)]
    fn index_by(&mut self, s: &[u8], classify: impl Fn(&[u8], usize) -> Block) -> bool {
        self.words.clear();
        self.words.reserve(s.len() / 64 + 1);
        let mut carry = 0;
        let mut i = 0;
        while i + 64 <= s.len() {
            if !self.push(s, i, classify(s, i), &mut carry) {
                return false;
            }
            i += 64;
        }
        // The last bytes, padded with spaces (which are nothing special).
        let mut pad = [b' '; 64];
        pad[..s.len() - i].copy_from_slice(&s[i..]);
        self.push(s, i, classify(&pad, 0), &mut carry) && carry == 0
    }

    /// Record the block at `s[at..]`, after checking its escapes.
    #[inline(always)]
    fn push(&mut self, s: &[u8], at: usize, b: Block, carry: &mut u64) -> bool {
        if b.control != 0 {
            return false;
        }
        let esc = escaped(b.slashes, carry);
        // One escape at a time: a Claude line's blocks have few, and the
        // block-at-once check of crate::json::blocks, handed in as a
        // closure, was not inlined into this walk (2 % more instructions
        // for `--to usage`).
        if !escapes_ok_bytes(s, at, esc) {
            return false;
        }
        self.words.push([b.quotes & !esc, b.slashes]);
        true
    }

    /// Let go of an index grown for a line much longer than most, so that
    /// a thread does not keep a quarter of its longest line for good.
    pub(crate) fn trim(&mut self) {
        if self.words.capacity() > KEPT_WORDS {
            self.words = Vec::new();
        }
    }

    /// The end (past its closing quote) of the string whose body starts at
    /// `i`; `None` when no quote closes it.
    #[inline(always)]
    pub(crate) fn string_end(&self, i: usize) -> Option<usize> {
        let mut w = i / 64;
        let mut m = self.words.get(w)?[0] & (u64::MAX << (i % 64));
        while m == 0 {
            w += 1;
            m = self.words.get(w)?[0];
        }
        Some(w * 64 + m.trailing_zeros() as usize + 1)
    }

    /// Whether a backslash is among bytes `from..to` (`to` no further than
    /// a [`Quotes::string_end`] found).
    #[inline(always)]
    pub(crate) fn any_slash(&self, from: usize, to: usize) -> bool {
        if from >= to {
            return false;
        }
        let (fw, tw) = (from / 64, (to - 1) / 64);
        let low = u64::MAX << (from % 64);
        let high = u64::MAX >> (63 - (to - 1) % 64);
        if fw == tw {
            return self.words[fw][1] & low & high != 0;
        }
        self.words[fw][1] & low != 0
            || self.words[fw + 1..tw].iter().any(|w| w[1] != 0)
            || self.words[tw][1] & high != 0
    }
}

/// The index with AVX2: 32 bytes a compare.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Quotes;
    use crate::json::blocks::avx2::classify;

    /// [`Quotes::index`] by 32-byte compares.
    #[target_feature(enable = "avx2")]
    pub(super) fn index(q: &mut Quotes, s: &[u8]) -> bool {
        q.index_by(s, |s, i| classify(s, i))
    }
}

#[cfg(test)]
mod tests {
    use super::{KEPT_WORDS, Quotes};
    use crate::json::blocks::tests::Rng;
    use crate::json::blocks::{classify_sse, escape_len};

    /// Whether a byte-at-a-time walk refuses `s`: a byte below 0x20, or an
    /// escape the fast reader leaves to serde_json.
    fn refused_bytes(s: &[u8]) -> bool {
        let mut i = 0;
        while i < s.len() {
            match s[i] {
                b'\\' => match escape_len(s, i) {
                    Some(n) => i += n,
                    None => return true,
                },
                c if c < 0x20 => return true,
                _ => i += 1,
            }
        }
        false
    }

    /// Strings of pieces (escapes of both lengths, bad and surrogate
    /// escapes, control bytes, quotes, UTF-8) up to a few blocks long,
    /// several to a text: the index refuses what a byte walk refuses, and
    /// each string ends where the input module's checked scan ends it.
    #[test]
    fn strings_end_where_the_checked_scan_ends_them() {
        const PIECES: &[&str] = &[
            "a",
            "plain text ",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\u00e9",
            "\\uD83D",
            "\\u12",
            "\\x",
            "\n",
            "\u{1f}",
            "é",
            "0123456789abcdefghijklmnopqrstuvwxyz",
            "\",\"",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut q, mut sse) = (Quotes::default(), Quotes::default());
        let (mut ends, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut t = String::from("{\"");
            for _ in 0..rng.next(24) {
                let p = PIECES[rng.next(PIECES.len())];
                if matches!(p, "\n" | "\u{1f}" | "\\x" | "\\u12" | "\\uD83D") && rng.next(20) != 0 {
                    continue;
                }
                t.push_str(p);
            }
            if rng.next(8) != 0 {
                t.push_str("\"}");
            }
            let b = t.as_bytes();
            let accepted = q.index(b);
            assert_eq!(accepted, !refused_bytes(b), "{t:?}");
            // The way without AVX2 indexes the same.
            assert_eq!(sse.index_by(b, classify_sse), accepted, "{t:?}");
            if accepted {
                assert_eq!(sse.words, q.words, "{t:?}");
            }
            if !accepted {
                refused += 1;
                continue;
            }
            // Each string in turn, from the first.
            let mut i = 2;
            loop {
                let want =
                    crate::input::scan::checked_string_end(&b[i..]).map(|(k, e)| (i + k + 1, e));
                let got = q.string_end(i).map(|end| (end, q.any_slash(i, end - 1)));
                assert_eq!(got, want, "{t:?} from {i}");
                let Some((end, _)) = want else { break };
                ends += 1;
                // The next string, when `","` follows.
                if b[end..].starts_with(b",\"") {
                    i = end + 2;
                } else {
                    break;
                }
            }
        }
        assert!(ends > 20_000 && refused > 1_000, "{ends} {refused}");
    }

    /// The index of a line past 4 MiB is not kept for the next line; one
    /// of a line below it is.
    #[test]
    fn only_an_index_of_a_common_size_is_kept() {
        let mut q = Quotes::default();
        let line = format!("{{\"a\":\"{}\"}}", "x".repeat(64 * KEPT_WORDS + 64));
        assert!(q.index(line.as_bytes()));
        assert!(q.words.capacity() > KEPT_WORDS);
        q.trim();
        assert_eq!(q.words.capacity(), 0);
        assert!(q.index(br#"{"a":"b"}"#));
        let kept = q.words.capacity();
        q.trim();
        assert_eq!(q.words.capacity(), kept);
        assert!(kept > 0);
    }
}
