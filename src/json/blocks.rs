//! JSON string text 64 bytes at a time: its quotes, backslashes, control
//! bytes and non-ASCII bytes as a bit per byte, and which bytes the
//! backslashes escape, found for the whole block at once (docs/performance.md,
//! "One pass for the quotes" and "Long strings a block at a time").
//!
//! Two users: the Claude reader's quote index of a whole line
//! (`dialect::tape::quotes`) and the input scanner's walk of a long string
//! (crate::input::scan). A tool's output has an escape (`\n`, `\"`) every
//! few dozen bytes; a walk that stops at each one and looks at what it
//! escapes spends most of its time in the stops (a branch per escape the
//! CPU cannot foresee). Here a block's escaped bytes follow from its
//! backslash mask by carry arithmetic, the end of a string is its first
//! quote not escaped, and the escapes left to check are those before it.

/// The bits of a 64-byte block: bit `k` is byte `k`.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub(crate) quotes: u64,
    pub(crate) slashes: u64,
    /// Bytes below 0x20, which no string may hold raw.
    pub(crate) control: u64,
    /// Bytes of 0x80 and up.
    pub(crate) high: u64,
}

const EVEN: u64 = 0x5555_5555_5555_5555;

/// Whether this CPU has AVX2, found out once per run: the choice of block
/// compare, made once, not per line or string.
#[inline]
pub(crate) fn wide() -> bool {
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
pub(crate) fn escaped(slashes: u64, carry: &mut u64) -> u64 {
    // A backslash escaped by the last block's run starts nothing.
    let slashes = slashes & !*carry;
    let follows = slashes << 1 | *carry;
    let odd_starts = slashes & !EVEN & !follows;
    let (sum, over) = odd_starts.overflowing_add(slashes);
    *carry = u64::from(over);
    (EVEN ^ (sum << 1)) & follows
}

/// The length of the escape at `s[j]` (a `\\`): 2, or 6 for `\\uXXXX`;
/// `None` for what the fast readers leave to serde_json (an escape JSON
/// does not have, a surrogate, paired or not).
#[inline(always)]
pub(crate) fn escape_len(s: &[u8], j: usize) -> Option<usize> {
    match *s.get(j + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let v = super::hex4(s, j + 2)?;
            (!(0xD800..=0xDFFF).contains(&v)).then_some(6)
        }
        _ => None,
    }
}

/// The bits of the block at `s[i..i + 64]` a byte at a time (the tests'
/// measure, and the way where there is no SSE2).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) fn classify_bytes(s: &[u8], i: usize) -> Block {
    let mut b = Block {
        quotes: 0,
        slashes: 0,
        control: 0,
        high: 0,
    };
    for (k, &c) in s[i..i + 64].iter().enumerate() {
        b.quotes |= u64::from(c == b'"') << k;
        b.slashes |= u64::from(c == b'\\') << k;
        b.control |= u64::from(c < 0x20) << k;
        b.high |= u64::from(c >= 0x80) << k;
    }
    b
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use classify_bytes as classify_sse;

/// The bits of the block at `s[i..i + 64]`, 16 bytes a compare (SSE2 is
/// part of every x86_64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn classify_sse(s: &[u8], i: usize) -> Block {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };
    assert!(i + 64 <= s.len());
    let mut b = Block {
        quotes: 0,
        slashes: 0,
        control: 0,
        high: 0,
    };
    // SAFETY: SSE2 is always present on x86_64, and the loads read
    // `s[i..i + 64]`, in bounds by the assert above.
    unsafe {
        for k in 0..4 {
            let x = _mm_loadu_si128(s.as_ptr().add(i + 16 * k).cast());
            let bits = |v| u64::from(_mm_movemask_epi8(v) as u16) << (16 * k);
            b.quotes |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8)));
            b.slashes |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8)));
            // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
            b.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x));
            // The byte mask is each byte's top bit.
            b.high |= bits(x);
        }
    }
    b
}

/// The end of the JSON string whose body starts at `s[from]` (the index of
/// its closing quote) and whether its body holds an escape; `None` for a
/// string with a raw byte below 0x20, an escape [`escape_len`] refuses, or
/// no closing quote. With `UTF8` the body is also refused when it is not
/// UTF-8 (checked in one pass, once its end is known, when it has a byte
/// of 0x80 or up). By 64-byte blocks: meant for strings past their first
/// few bytes (a short one ends in the caller's first compare).
#[inline]
pub(crate) fn string_end<const UTF8: bool>(s: &[u8], from: usize) -> Option<(usize, bool)> {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: `wide` found AVX2 on this CPU.
        return unsafe { avx2::string_end::<UTF8>(s, from) };
    }
    string_end_by::<UTF8>(s, from, classify_sse, escapes_ok_bytes)
}

/// The 64 bytes of `s` from `i` by `f` (a block compare), where fewer may be
/// left: then the last 64 bytes of `s`, their bits before `i` shifted out
/// (no bit is set past the end), or, when `s` is shorter than a block, a
/// copy padded with spaces (which are nothing special). Strings near a
/// line's end (a delta's text) need no copy.
#[inline(always)]
fn at_most_64<T>(
    s: &[u8],
    i: usize,
    f: impl Fn(&[u8], usize) -> T,
    shr: impl Fn(T, u32) -> T,
) -> T {
    if i + 64 <= s.len() {
        f(s, i)
    } else if s.len() >= 64 {
        let base = s.len() - 64;
        // `i - base` is below 64: `i` is within `s`.
        shr(f(s, base), (i - base) as u32)
    } else {
        let mut pad = [b' '; 64];
        pad[..s.len() - i].copy_from_slice(&s[i..]);
        f(&pad, 0)
    }
}

impl Block {
    fn shr(self, n: u32) -> Block {
        Block {
            quotes: self.quotes >> n,
            slashes: self.slashes >> n,
            control: self.control >> n,
            high: self.high >> n,
        }
    }
}

/// Whether each escaped byte of `esc` (bit `k` for byte `i + k`) makes an
/// escape [`escape_len`] takes, one at a time: the way without AVX2.
#[inline(always)]
pub(crate) fn escapes_ok_bytes(s: &[u8], i: usize, mut esc: u64) -> bool {
    while esc != 0 {
        // `p` is the escaped byte, its backslash the one before (one past
        // the text, for a text that ends in a backslash, has no escape and
        // is refused).
        let p = i + esc.trailing_zeros() as usize;
        esc &= esc - 1;
        if escape_len(s, p - 1).is_none() {
            return false;
        }
    }
    true
}

/// [`string_end`] with `classify` for a whole block at `s[i..]` and
/// `escapes_ok` for the escapes of one.
#[inline(always)]
pub(crate) fn string_end_by<const UTF8: bool>(
    s: &[u8],
    from: usize,
    classify: impl Fn(&[u8], usize) -> Block,
    escapes_ok: impl Fn(&[u8], usize, u64) -> bool,
) -> Option<(usize, bool)> {
    let mut carry = 0;
    let mut i = from;
    let (mut slash, mut high) = (false, false);
    while i < s.len() {
        let b = at_most_64(s, i, &classify, Block::shr);
        let esc = escaped(b.slashes, &mut carry);
        let ends = b.quotes & !esc;
        // The bytes before the first end, all of them when none is here.
        let body = ends.wrapping_sub(1) & !ends;
        if b.control & body != 0 {
            return None;
        }
        if esc & body != 0 && !escapes_ok(s, i, esc & body) {
            return None;
        }
        slash |= b.slashes & body != 0;
        high |= UTF8 && b.high & body != 0;
        if ends != 0 {
            let end = i + ends.trailing_zeros() as usize;
            if high {
                simdutf8::basic::from_utf8(&s[from..end]).ok()?;
            }
            return Some((end, slash));
        }
        i += 64;
    }
    None
}

/// The block compare with AVX2: 32 bytes a compare.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm_loadu_si128, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8,
        _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8, _mm256_set1_epi8,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
    };

    use super::Block;

    /// [`super::string_end`] by 32-byte compares.
    #[target_feature(enable = "avx2")]
    pub(crate) fn string_end<const UTF8: bool>(s: &[u8], from: usize) -> Option<(usize, bool)> {
        super::string_end_by::<UTF8>(
            s,
            from,
            |s, i| classify(s, i),
            |s, i, esc| escapes_ok(s, i, esc),
        )
    }

    /// Whether each escaped byte of `esc` (bit `k` for byte `i + k`, all
    /// within the text) makes an escape [`super::escape_len`] takes: the
    /// simple ones are checked for the block at once, by a nibble lookup of
    /// the nine letters an escape may have (`"`, `\\`, `/`, `b`, `f`, `n`,
    /// `r`, `t`, `u`), and only `\\u` escapes one at a time (their digits).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn escapes_ok(s: &[u8], i: usize, esc: u64) -> bool {
        let (letters, u) = super::at_most_64(
            s,
            i,
            |s, i| escape_letters(s, i),
            |(l, u), n| (l >> n, u >> n),
        );
        esc & !letters == 0 && super::escapes_ok_bytes(s, i, esc & u)
    }

    /// The bytes of the block at `s[i..i + 64]` that an escape may have as
    /// its letter, and those that are `u`. Each letter is found by its two
    /// nibbles: a table for each gives the bits of the letters with that
    /// low (high) nibble, one bit per high nibble the letters have (2, 5,
    /// 6, 7), and a byte is a letter when its two lookups share a bit.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn escape_letters(s: &[u8], i: usize) -> (u64, u64) {
        assert!(i + 64 <= s.len());
        // Bits: 1 = high nibble 2 (`"` 0x22, `/` 0x2f), 2 = 5 (`\\` 0x5c),
        // 4 = 6 (`b` 0x62, `f` 0x66, `n` 0x6e), 8 = 7 (`r` 0x72, `t` 0x74,
        // `u` 0x75).
        const LOW: [i8; 16] = [0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1];
        const HIGH: [i8; 16] = [0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0];
        // SAFETY: the loads read `s[i..i + 64]`, in bounds by the assert
        // above; AVX2 is enabled for this function, which is only reached
        // where the CPU has it.
        unsafe {
            let table = |t: &[i8; 16]| {
                let x = _mm_loadu_si128(t.as_ptr().cast());
                _mm256_broadcastsi128_si256(x)
            };
            let (lo_t, hi_t) = (table(&LOW), table(&HIGH));
            let nib = _mm256_set1_epi8(0x0f);
            let u = _mm256_set1_epi8(b'u' as i8);
            let mut letters = 0;
            let mut us = 0;
            for k in 0..2 {
                let x: __m256i = _mm256_loadu_si256(s.as_ptr().add(i + 32 * k).cast());
                let lo = _mm256_shuffle_epi8(lo_t, _mm256_and_si256(x, nib));
                let hi = _mm256_shuffle_epi8(hi_t, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib));
                let none = _mm256_cmpeq_epi8(_mm256_and_si256(lo, hi), _mm256_setzero_si256());
                letters |= u64::from(!(_mm256_movemask_epi8(none) as u32)) << (32 * k);
                us |= u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, u)) as u32) << (32 * k);
            }
            (letters, us)
        }
    }

    /// [`escape_letters`], for the tests.
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(crate) fn escape_letters_for_tests(s: &[u8], i: usize) -> (u64, u64) {
        escape_letters(s, i)
    }

    /// [`classify`], for the tests.
    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(crate) fn classify_for_tests(s: &[u8], i: usize) -> Block {
        classify(s, i)
    }

    /// The bits of the block at `s[i..i + 64]`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn classify(s: &[u8], i: usize) -> Block {
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
            let bits = |lo: __m256i, hi: __m256i| {
                u64::from(_mm256_movemask_epi8(lo) as u32)
                    | u64::from(_mm256_movemask_epi8(hi) as u32) << 32
            };
            Block {
                quotes: bits(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
                slashes: bits(_mm256_cmpeq_epi8(lo, slash), _mm256_cmpeq_epi8(hi, slash)),
                // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
                control: bits(
                    _mm256_cmpeq_epi8(_mm256_min_epu8(lo, low), lo),
                    _mm256_cmpeq_epi8(_mm256_min_epu8(hi, low), hi),
                ),
                high: bits(lo, hi),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// xorshift: the same texts on every run.
    pub(crate) struct Rng(pub(crate) u64);
    impl Rng {
        pub(crate) fn next(&mut self, n: usize) -> usize {
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
                let bits = |b: Block| (b.quotes, b.slashes, b.control, b.high);
                assert_eq!(bits(sse), bits(want));
                #[cfg(target_arch = "x86_64")]
                if wide() {
                    // SAFETY: the CPU has AVX2 (checked above).
                    let wide = unsafe { avx2::classify_for_tests(&s, i) };
                    assert_eq!(bits(wide), bits(want));
                }
            }
        }
    }

    /// Where a byte-at-a-time walk ends the string whose body starts at
    /// `s[from]`, as [`string_end`] answers.
    fn walk(s: &[u8], from: usize, utf8: bool) -> Option<(usize, bool)> {
        let (mut i, mut slash) = (from, false);
        while i < s.len() {
            match s[i] {
                b'"' => {
                    if utf8 {
                        std::str::from_utf8(&s[from..i]).ok()?;
                    }
                    return Some((i, slash));
                }
                b'\\' => {
                    slash = true;
                    i += escape_len(s, i)?;
                }
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
        None
    }

    /// Every way of walking a string (SSE2 and AVX2 compares, the escapes
    /// checked one at a time and a block at once, with and without the
    /// UTF-8 check) ends it where a byte walk does and refuses what it
    /// refuses: texts of escapes good and bad, control bytes, quotes,
    /// UTF-8 and bytes that are not, from every start, as long as a few
    /// blocks and as short as none, so that their ends fall at every place
    /// of a block, the last one (shifted or padded) included.
    #[test]
    fn strings_end_where_a_byte_walk_ends_them() {
        const PIECES: &[&[u8]] = &[
            b"a",
            b"plain text, a few words ",
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\\\\\\\",
            b"\\/",
            b"\\t\\r\\b\\f",
            b"\\u00e9",
            b"\\uD83D",
            b"\\u12",
            b"\\x",
            b"\\e",
            b"\n",
            b"\x1f",
            "\u{e9}\u{1f64f}".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\"",
        ];
        let mut rng = Rng(0x0bad_5eed_1234_5678);
        let (mut ends, mut refused) = (0, 0);
        for _ in 0..6000 {
            let mut s = Vec::new();
            for _ in 0..rng.next(40) {
                let p = PIECES[rng.next(PIECES.len())];
                // Bad pieces rarer, so that most texts have a string to end.
                let bad =
                    !p.is_ascii() && p.len() == 1 || matches!(p, b"\\x" | b"\\e" | b"\n" | b"\x1f");
                if bad && rng.next(8) != 0 {
                    continue;
                }
                s.extend_from_slice(p);
            }
            for from in 0..=s.len() {
                for utf8 in [false, true] {
                    let want = walk(&s, from, utf8);
                    match want {
                        Some(_) => ends += 1,
                        None => refused += 1,
                    }
                    let got = if utf8 {
                        (
                            string_end::<true>(&s, from),
                            string_end_by::<true>(&s, from, classify_bytes, escapes_ok_bytes),
                        )
                    } else {
                        (
                            string_end::<false>(&s, from),
                            string_end_by::<false>(&s, from, classify_sse, escapes_ok_bytes),
                        )
                    };
                    assert_eq!(
                        got,
                        (want, want),
                        "{:?} from {from}",
                        String::from_utf8_lossy(&s)
                    );
                }
            }
        }
        assert!(ends > 100_000 && refused > 100_000, "{ends} {refused}");
    }

    /// The escapes a block's nibble lookup takes are those [`escape_len`]
    /// takes a letter of: every byte value, at every place of a block.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn escape_letters_are_the_nine() {
        if !wide() {
            return;
        }
        for c in 0..=255u8 {
            for at in 0..64 {
                let mut s = [b'x'; 64];
                s[at] = c;
                // SAFETY: the CPU has AVX2 (checked above).
                let (letters, u) = unsafe { avx2::escape_letters_for_tests(&s, 0) };
                let want = matches!(
                    c,
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'
                );
                assert_eq!(letters >> at & 1 == 1, want, "{c:#x} at {at}");
                assert_eq!(u >> at & 1 == 1, c == b'u', "{c:#x} at {at}");
                assert_eq!(letters & !(1 << at), 0, "{c:#x} at {at}");
            }
        }
    }
}
