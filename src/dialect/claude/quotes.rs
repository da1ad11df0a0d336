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

/// The bits of a 64-byte block: its quotes, its backslashes, and whether
/// any byte of it is below 0x20.
#[derive(Clone, Copy)]
struct Block {
    quotes: u64,
    slashes: u64,
    control: bool,
}

const EVEN: u64 = 0x5555_5555_5555_5555;

/// The index kept from line to line at most: 1 MiB, for lines to 4 MiB.
const KEPT_WORDS: usize = 1 << 16;

/// Whether this CPU has AVX2, found out once per run: the choice of block
/// compare (here and in the fast reader's string walk), made once, not per
/// line or string.
#[inline]
pub(super) fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *WIDE.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The bytes of a block that a backslash escapes, given its backslashes and
/// `carry`, 1 when the last block ended in a run of backslashes that
/// escapes this block's first byte (set for the next block on return).
///
/// A run of backslashes escapes every other byte from its second on, and
/// the byte after it when it is odd. Adding the run to its own first bit
/// when that bit is odd-placed carries out to the run's end, which turns
/// "odd run from an odd place" into a parity flip against the even-place
/// pattern; this is the way simdjson finds escaped bytes.
#[inline(always)]
fn escaped(slashes: u64, carry: &mut u64) -> u64 {
    // A backslash escaped by the last block's run starts nothing.
    let slashes = slashes & !*carry;
    let follows = slashes << 1 | *carry;
    let odd_starts = slashes & !EVEN & !follows;
    let (sum, over) = odd_starts.overflowing_add(slashes);
    *carry = u64::from(over);
    (EVEN ^ (sum << 1)) & follows
}

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
        if b.control {
            return false;
        }
        let esc = escaped(b.slashes, carry);
        let mut e = esc;
        while e != 0 {
            let p = at + e.trailing_zeros() as usize;
            e &= e - 1;
            // `p` is the escaped byte, its backslash the one before (past
            // the end, for a line that ends in a backslash, is refused).
            if escape_len(s, p - 1).is_none() {
                return false;
            }
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

/// The length of the escape at `s[j]` (a `\\`): 2, or 6 for `\\uXXXX`;
/// `None` for what this reader leaves to serde_json (an escape JSON does
/// not have, a surrogate, paired or not).
#[inline(always)]
pub(super) fn escape_len(s: &[u8], j: usize) -> Option<usize> {
    match *s.get(j + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let v = crate::json::hex4(s, j + 2)?;
            (!(0xD800..=0xDFFF).contains(&v)).then_some(6)
        }
        _ => None,
    }
}

/// The bits of the block at `s[i..i + 64]` a byte at a time (the tests'
/// measure, and the way where there is no SSE2).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(s: &[u8], i: usize) -> Block {
    let mut b = Block {
        quotes: 0,
        slashes: 0,
        control: false,
    };
    for (k, &c) in s[i..i + 64].iter().enumerate() {
        b.quotes |= u64::from(c == b'"') << k;
        b.slashes |= u64::from(c == b'\\') << k;
        b.control |= c < 0x20;
    }
    b
}

#[cfg(not(target_arch = "x86_64"))]
use classify_bytes as classify_sse;

/// The bits of the block at `s[i..i + 64]`, 16 bytes a compare (SSE2 is
/// part of every x86_64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_sse(s: &[u8], i: usize) -> Block {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128,
    };
    assert!(i + 64 <= s.len());
    let (mut quotes, mut slashes) = (0, 0);
    // SAFETY: SSE2 is always present on x86_64, and the loads read
    // `s[i..i + 64]`, in bounds by the assert above.
    unsafe {
        let mut control = _mm_setzero_si128();
        for k in 0..4 {
            let x = _mm_loadu_si128(s.as_ptr().add(i + 16 * k).cast());
            let q = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8)));
            let b = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8)));
            // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
            let c = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
            control = _mm_or_si128(control, c);
            quotes |= u64::from(q as u16) << (16 * k);
            slashes |= u64::from(b as u16) << (16 * k);
        }
        Block {
            quotes,
            slashes,
            control: _mm_movemask_epi8(control) != 0,
        }
    }
}

/// The index with AVX2: 32 bytes a compare.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };

    use super::{Block, Quotes};

    /// [`Quotes::index`] by 32-byte compares.
    #[target_feature(enable = "avx2")]
    pub(super) fn index(q: &mut Quotes, s: &[u8]) -> bool {
        q.index_by(s, |s, i| classify(s, i))
    }

    /// [`classify`], for the tests.
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(super) fn classify_for_tests(s: &[u8], i: usize) -> Block {
        classify(s, i)
    }

    /// The bits of the block at `s[i..i + 64]`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn classify(s: &[u8], i: usize) -> Block {
        assert!(i + 64 <= s.len());
        // SAFETY: the loads read `s[i..i + 64]`, in bounds by the assert
        // above; AVX2 is enabled for this function, which is only reached
        // where the CPU has it.
        unsafe {
            let lo: __m256i = _mm256_loadu_si256(s.as_ptr().add(i).cast());
            let hi: __m256i = _mm256_loadu_si256(s.as_ptr().add(i + 32).cast());
            let quote = _mm256_set1_epi8(b'"' as i8);
            let slash = _mm256_set1_epi8(b'\\' as i8);
            let low = _mm256_set1_epi8(0x1f);
            let bits = |v: __m256i| u64::from(_mm256_movemask_epi8(v) as u32);
            let control = _mm256_or_si256(
                _mm256_cmpeq_epi8(_mm256_min_epu8(lo, low), lo),
                _mm256_cmpeq_epi8(_mm256_min_epu8(hi, low), hi),
            );
            Block {
                quotes: bits(_mm256_cmpeq_epi8(lo, quote))
                    | bits(_mm256_cmpeq_epi8(hi, quote)) << 32,
                slashes: bits(_mm256_cmpeq_epi8(lo, slash))
                    | bits(_mm256_cmpeq_epi8(hi, slash)) << 32,
                control: _mm256_movemask_epi8(control) != 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{KEPT_WORDS, Quotes, classify_bytes, classify_sse, escape_len, escaped};

    /// xorshift: the same texts on every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Which bytes a backslash escapes, a byte at a time.
    fn escaped_bytes(s: &[u8]) -> Vec<bool> {
        let mut out = vec![false; s.len() + 1];
        let mut i = 0;
        while i < s.len() {
            if s[i] == b'\\' {
                out[i + 1] = true;
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }

    /// The carry arithmetic marks the bytes a byte-at-a-time walk marks,
    /// for runs of backslashes of every length, across block edges.
    #[test]
    fn escaped_bytes_are_found_across_blocks() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..5000 {
            let len = 64 * (1 + rng.next(4));
            let dense = 1 + rng.next(4);
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.next(dense + 1) != 0 {
                        b'\\'
                    } else {
                        b'a'
                    }
                })
                .collect();
            let want = escaped_bytes(&s);
            let mut carry = 0;
            for (w, block) in s.chunks(64).enumerate() {
                let slashes = classify_bytes(block, 0).slashes;
                let got = escaped(slashes, &mut carry);
                for k in 0..64 {
                    assert_eq!(got >> k & 1 == 1, want[64 * w + k], "{k} of block {w}");
                }
            }
            assert_eq!(carry == 1, want[len], "carry out");
        }
    }

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

    /// Each way of comparing a block gives the bits a byte walk gives.
    #[test]
    fn block_compares_agree_with_a_byte_walk() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut s = vec![0u8; 256];
        for _ in 0..2000 {
            for c in s.iter_mut() {
                *c = match rng.next(6) {
                    0 => b'"',
                    1 => b'\\',
                    2 => rng.next(256) as u8,
                    _ => b'x',
                };
            }
            for i in 0..=192 {
                let want = classify_bytes(&s, i);
                let sse = classify_sse(&s, i);
                assert_eq!(
                    (sse.quotes, sse.slashes, sse.control),
                    (want.quotes, want.slashes, want.control)
                );
                #[cfg(target_arch = "x86_64")]
                if super::wide() {
                    // SAFETY: the CPU has AVX2 (checked above).
                    let wide = unsafe { super::avx2::classify_for_tests(&s, i) };
                    assert_eq!(
                        (wide.quotes, wide.slashes, wide.control),
                        (want.quotes, want.slashes, want.control)
                    );
                }
            }
        }
    }
}
