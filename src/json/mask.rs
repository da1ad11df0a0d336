//! Which bytes of a JSON string's text are special (`"`, `\` or a control
//! character), 16 at a time: the input's string scanner stops at them and
//! the writer escapes them, so both read the same mask.

/// Is `c` a byte that ends a run of plain string bytes: `"`, `\` or a
/// control character?
#[inline]
pub(crate) fn special(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// Bytes tested at once by the block masks.
pub(crate) const BLOCK: usize = 16;

/// The [`special`] bytes of the 16 bytes of `b` at `i` (`i + 16 <=
/// b.len()`), as a mask: bit `k` is byte `i + k`; with `HIGH` the bytes of
/// 0x80 and up too (the scanner that validates UTF-8 as it goes,
/// crate::input::scan, stops at the first byte that is not ASCII). The
/// input scanner's string walk (every reader's) and the JSON string writer
/// share it. With SSE2
/// (part of every x86_64) the three tests are OR-ed into one compare per
/// block, and `HIGH` is one more OR: SSE2's byte mask is each byte's top
/// bit, so a byte's own top bit joins the compare results.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn block<const HIGH: bool>(b: &[u8], i: usize) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    assert!(i + BLOCK <= b.len());
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

/// [`block`] a byte at a time: where there is no SSE2, and the unit tests'
/// measure of it.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline]
pub(crate) fn block_bytes<const HIGH: bool>(b: &[u8], i: usize) -> u32 {
    b[i..i + BLOCK].iter().rev().fold(0, |m, &c| {
        m << 1 | u32::from(special(c) || HIGH && c >= 0x80)
    })
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) use block_bytes as block;

/// The block mask of `b` from `i` (`i <= b.len()`) where fewer than 16
/// bytes may be left: bit `k` is byte `i + k`, and no bit is set past the
/// end. Most strings are short (a delta's few words), and walking their
/// last, partial block a byte at a time cost more than the blocks before
/// it: that block is tested at once too, as the last 16 bytes of `b` with
/// the bits of the bytes before `i` shifted out, or, when `b` is shorter
/// than 16 bytes, as a copy padded with plain bytes.
#[inline]
pub(crate) fn specials_from<const HIGH: bool>(b: &[u8], i: usize) -> u32 {
    debug_assert!(i <= b.len());
    if i + BLOCK <= b.len() {
        block::<HIGH>(b, i)
    } else if b.len() >= BLOCK {
        let base = b.len() - BLOCK;
        // `i - base` is at most 16, which shifts out all 16 bits.
        block::<HIGH>(b, base) >> (i - base)
    } else {
        let mut pad = [b'a'; BLOCK];
        pad[..b.len() - i].copy_from_slice(&b[i..]);
        block::<HIGH>(&pad, 0)
    }
}

/// The index of the first [`special`] byte of `b` from `i` (with `HIGH`,
/// or byte of 0x80 and up), or `b.len()`: the string scanner's step
/// (crate::input::scan) and the unescaper's (crate::json). Escapes in code
/// and shell output come every few dozen bytes, where a `memchr` call per
/// escape cost more in setting up than in searching: blocks are tested
/// inline, the last one by [`specials_from`].
#[inline]
pub(crate) fn next_special<const HIGH: bool>(b: &[u8], mut i: usize) -> usize {
    while i + BLOCK <= b.len() {
        let m = block::<HIGH>(b, i);
        if m != 0 {
            return i + m.trailing_zeros() as usize;
        }
        i += BLOCK;
    }
    match specials_from::<HIGH>(b, i) {
        0 => b.len(),
        m => i + m.trailing_zeros() as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block mask flags exactly the bytes [`special`] flags (with
    /// `HIGH`, and those of 0x80 and up): every byte value at every position
    /// of a block, among plain bytes, from several starts.
    #[test]
    fn block_agrees_with_a_byte_walk() {
        for c in 0..=255u8 {
            for at in 0..BLOCK {
                let mut b = [b'a'; BLOCK + 4];
                b[at + 2] = c;
                for i in 0..=4 {
                    assert_eq!(
                        block::<false>(&b, i),
                        block_bytes::<false>(&b, i),
                        "{c:#x} at {at}"
                    );
                    assert_eq!(
                        block::<true>(&b, i),
                        block_bytes::<true>(&b, i),
                        "{c:#x} at {at}"
                    );
                    // and the byte walk is the definition
                    let want = |high: bool| {
                        (0..BLOCK)
                            .filter(|&k| special(b[i + k]) || high && b[i + k] >= 0x80)
                            .fold(0u32, |m, k| m | 1 << k)
                    };
                    assert_eq!(block_bytes::<false>(&b, i), want(false));
                    assert_eq!(block_bytes::<true>(&b, i), want(true));
                }
            }
        }
    }

    /// [`next_special`] and [`specials_from`] find what a byte walk finds,
    /// from every start, in buffers shorter than, as long as and longer
    /// than a block, with the byte in every position, the last included.
    #[test]
    fn next_special_agrees_with_a_byte_walk() {
        for c in [b'"', b'\\', 0x00, 0x1f, b'\n', 0x80, 0xff, b'a'] {
            for len in 0..40 {
                for at in 0..len.max(1) {
                    let mut b = vec![b'x'; len];
                    if at < len {
                        b[at] = c;
                    }
                    for i in 0..=len {
                        let walk = |high: bool| {
                            (i..len)
                                .find(|&k| special(b[k]) || high && b[k] >= 0x80)
                                .unwrap_or(len)
                        };
                        assert_eq!(
                            next_special::<false>(&b, i),
                            walk(false),
                            "{c:#x} {len} {at} {i}"
                        );
                        assert_eq!(
                            next_special::<true>(&b, i),
                            walk(true),
                            "{c:#x} {len} {at} {i}"
                        );
                        let bits = |high: bool| {
                            (i..len.min(i + BLOCK))
                                .filter(|&k| special(b[k]) || high && b[k] >= 0x80)
                                .fold(0u32, |m, k| m | 1 << (k - i))
                        };
                        assert_eq!(specials_from::<false>(&b, i), bits(false));
                        assert_eq!(specials_from::<true>(&b, i), bits(true));
                    }
                }
            }
        }
    }
}
