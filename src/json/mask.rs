//! Which bytes of a JSON string's text are special (`"`, `\` or a control
//! character), 16 at a time: the input's string scanner stops at them and
//! the writer escapes them, so both read the same mask.

/// Is `c` a byte that ends a run of plain string bytes: `"`, `\` or a
/// control character?
#[inline]
pub(crate) fn special(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// The [`special`] bytes of the 16 bytes of `b` at `i` (`i + 16 <=
/// b.len()`), as a mask: bit `k` is byte `i + k`. With SSE2 (part of every
/// x86_64) the three tests are OR-ed into one compare per block; the string
/// walks of the input scanner (crate::input::scan) and of the Claude reader
/// (`dialect::claude::fast`) and the JSON string writer share it.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn specials16(b: &[u8], i: usize) -> u32 {
    block_mask::<false>(b, i)
}

/// [`specials16`] with the bytes of 0x80 and up flagged too: the scanner
/// that validates UTF-8 as it goes (crate::input::scan) stops at the first
/// byte that is not ASCII.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn specials_or_high16(b: &[u8], i: usize) -> u32 {
    block_mask::<true>(b, i)
}

/// Both block masks; `HIGH` flags the bytes of 0x80 and up, for one more
/// OR: SSE2's byte mask is each byte's top bit, so a byte's own top bit
/// joins the compare results.
#[cfg(target_arch = "x86_64")]
#[inline]
fn block_mask<const HIGH: bool>(b: &[u8], i: usize) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    assert!(i + 16 <= b.len());
    // SAFETY: SSE2 is always present on x86_64, and the unaligned load
    // reads `b[i..i + 16]`, in bounds by the assert above.
    unsafe {
        let x = _mm_loadu_si128(b.as_ptr().add(i).cast());
        // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
        let mut m = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8)),
            ),
            _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x),
        );
        if HIGH {
            m = _mm_or_si128(m, x);
        }
        _mm_movemask_epi8(m) as u32 & 0xffff
    }
}

/// [`specials_or_high16`] a byte at a time (no SSE2, and the tests).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
pub(crate) fn specials_or_high16_bytes(b: &[u8], i: usize) -> u32 {
    b[i..i + 16]
        .iter()
        .rev()
        .fold(0, |m, &c| m << 1 | u32::from(special(c) || c >= 0x80))
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use specials_or_high16_bytes as specials_or_high16;

/// [`specials16`] a byte at a time, where there is no SSE2 (and the unit
/// tests' measure of it).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
pub(crate) fn specials16_bytes(b: &[u8], i: usize) -> u32 {
    b[i..i + 16]
        .iter()
        .rev()
        .fold(0, |m, &c| m << 1 | u32::from(special(c)))
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use specials16_bytes as specials16;
