//! One escaper for the JSON strings the table formats write (rows, atif,
//! messages, otlp-json): the bytes serde_json writes for a string, appended
//! to a `Vec<u8>`.
//!
//! Why not [`crate::json::write_str`]: it walks a block that holds an escape
//! byte by byte and hands every run and every escape to the writer, about
//! ten instructions per byte on JSON text (a tool call's arguments, written
//! as a string in rows' `data` column, has a quote or a backslash every
//! dozen bytes). Here a block of 16 bytes gives one bit mask of the bytes to
//! escape (SSE2, part of every x86_64); between two escapes the block is
//! copied by one 16-byte store whose surplus the next write overwrites, so an
//! escape costs a handful of instructions whatever the run before it.

/// Input bytes escaped per reservation: the output of one is at most six
/// times as long (`\u00XX`), plus one block of surplus.
const CHUNK: usize = 4096;

/// `s` as a quoted JSON string, appended to `out`.
#[inline]
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    push_body(out, s);
    out.push(b'"');
}

/// The escaped characters of `s`, without quotes, appended to `out`.
pub fn push_body(out: &mut Vec<u8>, s: &str) {
    let mut rest = s.as_bytes();
    while !rest.is_empty() {
        let n = rest.len().min(CHUNK);
        let (chunk, tail) = rest.split_at(n);
        out.reserve(n * 6 + 16);
        let len = out.len();
        // SAFETY: `out` has room for `n * 6 + 16` bytes after `len`, which
        // bounds everything `escape` stores (see there); it returns how many
        // of them it initialized, all from `chunk` or ASCII escapes.
        unsafe {
            let written = escape(chunk, out.as_mut_ptr().add(len));
            out.set_len(len + written);
        }
        rest = tail;
    }
}

/// Per byte: its escape sequence (up to 6 bytes) and, in the last byte,
/// that sequence's length; length 0 for a byte written as it is. These are
/// serde_json's escapes: the short forms `\" \\ \b \t \n \f \r`, `\u00xx`
/// in lower-case hex for the other control characters, nothing else
/// (not DEL, not non-ASCII, not U+2028).
static SEQ: [[u8; 8]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 8]; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = [b'\\', b'u', b'0', b'0', HEX[i >> 4], HEX[i & 0xf], 0, 6];
        i += 1;
    }
    t[0x08] = [b'\\', b'b', 0, 0, 0, 0, 0, 2];
    t[0x09] = [b'\\', b't', 0, 0, 0, 0, 0, 2];
    t[0x0a] = [b'\\', b'n', 0, 0, 0, 0, 0, 2];
    t[0x0c] = [b'\\', b'f', 0, 0, 0, 0, 0, 2];
    t[0x0d] = [b'\\', b'r', 0, 0, 0, 0, 0, 2];
    t[b'"' as usize] = [b'\\', b'"', 0, 0, 0, 0, 0, 2];
    t[b'\\' as usize] = [b'\\', b'\\', 0, 0, 0, 0, 0, 2];
    t
};

/// Escape `src` into `dst`; returns the bytes written.
///
/// # Safety
/// `dst` must be valid for `src.len() * 6 + 16` bytes: the output is at
/// most six bytes per input byte, and a store may run up to 16 bytes past
/// the output's end (surplus that a later write or the caller's length
/// leaves out).
#[cfg(target_arch = "x86_64")]
unsafe fn escape(src: &[u8], dst0: *mut u8) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_storeu_si128,
    };
    // SAFETY (whole body): SSE2 is always present on x86_64; loads read
    // `src` only within its length (a short last block is copied into a
    // padded array first) or the 32-byte `tmp` within its length; stores
    // stay within the caller's bound as argued above.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let ctl = _mm_set1_epi8(0x1f);
        // A block with escapes, followed by 16 bytes of slack, so that a
        // 16-byte load from any of its first 17 positions stays inside.
        let mut tmp = [0u8; 32];
        let mut dst = dst0;
        let mut i = 0;
        while i < src.len() {
            let n = (src.len() - i).min(16);
            let x: __m128i = if n == 16 {
                _mm_loadu_si128(src.as_ptr().add(i).cast())
            } else {
                // Spaces: nothing to escape, and never counted in `dst`.
                let mut pad = [b' '; 16];
                pad[..n].copy_from_slice(&src[i..]);
                _mm_loadu_si128(pad.as_ptr().cast())
            };
            // x <= 0x1f (unsigned) exactly when min(x, 0x1f) == x.
            let hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x),
            );
            let mut m = _mm_movemask_epi8(hit) as u32;
            if m == 0 {
                _mm_storeu_si128(dst.cast(), x);
                dst = dst.add(n);
            } else {
                _mm_storeu_si128(tmp.as_mut_ptr().cast(), x);
                let mut start = 0;
                while m != 0 {
                    let t = m.trailing_zeros() as usize;
                    // The run before the escape, and surplus that the
                    // escape overwrites.
                    _mm_storeu_si128(dst.cast(), _mm_loadu_si128(tmp.as_ptr().add(start).cast()));
                    dst = dst.add(t - start);
                    let seq = &SEQ[tmp[t] as usize];
                    std::ptr::copy_nonoverlapping(seq.as_ptr(), dst, 8);
                    dst = dst.add(seq[7] as usize);
                    start = t + 1;
                    m &= m - 1;
                }
                _mm_storeu_si128(dst.cast(), _mm_loadu_si128(tmp.as_ptr().add(start).cast()));
                dst = dst.add(n - start);
            }
            i += n;
        }
        dst.offset_from(dst0) as usize
    }
}

/// Elsewhere: the crate's portable escaper, through a slice of `dst`.
///
/// # Safety
/// As the x86_64 version.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn escape(src: &[u8], dst0: *mut u8) -> usize {
    let mut v = Vec::with_capacity(src.len() * 6);
    // Byte by byte: a chunk boundary may split a character, which is
    // harmless, as no byte of a non-ASCII character is escaped.
    for &b in src {
        let seq = &SEQ[b as usize];
        match seq[7] {
            0 => v.push(b),
            n => v.extend_from_slice(&seq[..n as usize]),
        }
    }
    // SAFETY: `v.len() <= src.len() * 6`, within the caller's bound.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), dst0, v.len()) };
    v.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(s: &str) -> String {
        let mut v = Vec::new();
        push_str(&mut v, s);
        String::from_utf8(v).expect("escaping keeps UTF-8")
    }

    #[test]
    fn every_byte_value_as_serde_json() {
        for c in (0u32..0x80).chain([0xe9, 0x2028, 0x2029, 0xfeff, 0x1f680]) {
            let c = char::from_u32(c).unwrap();
            // At every offset of a block, beside plain text, and at both
            // sides of a chunk boundary.
            for at in (0..40).chain(CHUNK - 20..CHUNK + 20) {
                let s = format!("{}{c}{}", "x".repeat(at), "y".repeat(at % 23));
                assert_eq!(
                    ours(&s),
                    serde_json::to_string(&s).unwrap(),
                    "{c:?} at {at}"
                );
            }
        }
    }

    /// A block that is all escapes, a run of each escape, long text.
    #[test]
    fn dense_and_long_texts_as_serde_json() {
        for s in [
            String::new(),
            "\"".repeat(16),
            "\\".repeat(33),
            "\u{1}".repeat(17),
            "\n\"".repeat(5000),
            "é\u{0}".repeat(3000),
            "{\"a\":\"b\\\\c\",\"d\":[1,2]}\n".repeat(700),
        ] {
            assert_eq!(ours(&s), serde_json::to_string(&s).unwrap());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Random text from pieces that need each kind of escape, none, or
        /// are non-ASCII (U+2028 included, which serde_json leaves as it is).
        #[test]
        fn writes_what_serde_json_writes(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("\""), Just("\\"), Just("\n"), Just("\r"), Just("\t"), Just("\u{8}"),
                    Just("\u{c}"), Just("\u{0}"), Just("\u{1}"), Just("\u{1b}"), Just("\u{1f}"),
                    Just("\u{7f}"), Just(" "), Just("a"), Just("0123456789abcdef"), Just("é"),
                    Just("\u{2028}"), Just("🙏"), Just("{\"k\":[1,\"v\"]}"),
                ],
                0..80,
            )
        ) {
            let s = parts.concat();
            prop_assert_eq!(ours(&s), serde_json::to_string(&s).unwrap(), "{:?}", s);
        }

        /// Any string at all (proptest's `String` strategy mixes control
        /// characters and every plane), appended after bytes already held.
        #[test]
        fn any_string_as_serde_json(s in any::<String>(), held in "[a-z\"]{0,20}") {
            let mut v = held.clone().into_bytes();
            push_str(&mut v, &s);
            let mut want = held.into_bytes();
            want.extend_from_slice(serde_json::to_string(&s).unwrap().as_bytes());
            prop_assert_eq!(v, want);
        }
    }
}
