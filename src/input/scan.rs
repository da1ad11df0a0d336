//! The one JSON string scanner: where strings start and end, escapes skipped.
//!
//! Framing (joins, arrays, documents), whitespace compaction, the huge-number
//! repair and the cursor readers all need to know whether a byte is inside a
//! string, and a string's end is the first `"` not escaped by a backslash. The
//! state survives between calls, so a string may be split across lines or
//! read chunks at any byte (even between a backslash and what it escapes).
//! Only `"` and `\` matter inside a string, so [`Strings::skip`] jumps between
//! them with `memchr2` instead of looking at every byte.

use memchr::memchr2;

/// Whether the scan is inside a JSON string, and just after a backslash there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Strings {
    in_str: bool,
    esc: bool,
}

impl Strings {
    /// Inside a string (its opening quote seen, its closing one not yet).
    pub fn in_string(&self) -> bool {
        self.in_str
    }

    /// Take one byte; true when it belongs to a string, its quotes included
    /// (false for every byte between strings).
    #[inline]
    pub fn feed(&mut self, b: u8) -> bool {
        if self.in_str {
            if self.esc {
                self.esc = false;
            } else if b == b'\\' {
                self.esc = true;
            } else if b == b'"' {
                self.in_str = false;
            }
            true
        } else {
            self.in_str = b == b'"';
            self.in_str
        }
    }

    /// Inside a string, pass over its bytes from `buf[from..]`: the index just
    /// after its closing quote, or `buf.len()` when the string goes on past
    /// the end of `buf` (then the next call continues it). Outside a string,
    /// `from` unchanged.
    #[inline]
    pub fn skip(&mut self, buf: &[u8], from: usize) -> usize {
        let mut i = from;
        if !self.in_str {
            return i;
        }
        if self.esc {
            if i >= buf.len() {
                return i;
            }
            self.esc = false;
            i += 1;
        }
        loop {
            let Some(k) = buf.get(i..).and_then(|rest| memchr2(b'"', b'\\', rest)) else {
                return buf.len();
            };
            let j = i + k;
            if buf[j] == b'"' {
                self.in_str = false;
                return j + 1;
            }
            if j + 1 == buf.len() {
                // The escaped byte is in the next chunk.
                self.esc = true;
                return buf.len();
            }
            i = j + 2;
        }
    }
}

// The block mask lives with the JSON writer, which escapes by it too
// (crate::json::mask): `json` is below `input` in the module order.
use crate::json::mask::{BLOCK, specials_from};

/// The closing quote of the string whose body starts `body` (the bytes
/// after its opening quote): its index, and whether the body has a
/// backslash escape. Refuses, in the same pass, what serde_json
/// refuses inside a string read from a `&str`: a raw control character
/// (below U+0020) or an escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
/// `None` for those and for a string that does not end within `body`, so a
/// caller that gets `Some` holds a string serde_json would read too.
///
/// Also refused: every `\u` escape of a UTF-16 surrogate (`\uD800` to
/// `\uDFFF`, paired or not). The framer replaces lone surrogates before a
/// record is parsed, by a pass of its own over the record; a reader whose
/// scan sees every escape of a record anyway spares that pass: a record it
/// reads with this holds no surrogate escape, so the framer's pass would
/// have changed nothing (crate::input, `Handler::record_checked`).
/// Surrogate escapes are rare (JavaScript's `JSON.stringify` writes them
/// only for a lone half of a pair), so refusing them costs nothing that
/// counts.
#[inline]
pub fn checked_string_end(body: &[u8]) -> Option<(usize, bool)> {
    string_end::<false>(body)
}

/// [`checked_string_end`] for bytes not yet known to be UTF-8: the body is
/// also refused when it is not valid UTF-8 (escapes are ASCII, so the
/// body's raw bytes are valid exactly when the text it stands for is). A
/// reader that takes a record only when every byte of it is either in a
/// string read by this or an ASCII byte it matched spares the record's
/// separate validation (`Parser::parse_checked`, crate::dialect).
#[inline]
pub fn checked_utf8_string_end(body: &[u8]) -> Option<(usize, bool)> {
    string_end::<true>(body)
}

/// Both string scanners: `UTF8` checks the body's non-ASCII bytes too.
/// Most strings are short (a key, a delta's few words, a 36-byte session
/// id on every line) and end within [`PLAIN_RUN`] bytes, where the first
/// of the specials is the closing quote: a 16-byte compare or a few.
/// Any other string is walked 64 bytes at a time from the block where its
/// first other special is, its escapes found for a whole block at once
/// (crate::json::blocks): a tool's output has one every few dozen bytes,
/// and a walk stopping at each spent more on the stops than on the bytes.
#[inline]
fn string_end<const UTF8: bool>(body: &[u8]) -> Option<(usize, bool)> {
    let mut i = 0;
    while i < PLAIN_RUN {
        let m = specials_from::<UTF8>(body, i);
        if m != 0 {
            let j = i + m.trailing_zeros() as usize;
            if body[j] == b'"' {
                return Some((j, false));
            }
            break;
        }
        i += BLOCK;
        if i >= body.len() {
            // No closing quote.
            return None;
        }
    }
    // The bytes before `i` are plain (no quote, backslash, control or
    // high byte), so the walk may start there with nothing carried.
    crate::json::blocks::string_end::<UTF8>(body, i)
}

/// How far [`string_end`] looks by 16-byte compares before it hands a
/// string to the block walk: a session id (36 bytes, on every line of a
/// live stream) took the walk's setup, twice the compares' cost, when
/// this was 16.
const PLAIN_RUN: usize = 4 * BLOCK;

/// How deep [`value_end`] follows nested arrays and objects before it gives
/// up (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 100;

/// JSON's whitespace between tokens.
#[inline]
pub fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(i) {
        i += 1;
    }
    i
}

/// The end (index just past it) of the JSON value starting at `s[i]`,
/// checked as strictly as serde_json checks a value it skips: string
/// contents as in [`checked_string_end`], the number grammar, no trailing
/// commas. `None` for anything else, including nesting deeper than
/// [`MAX_DEPTH`] and a surrogate escape in any string of the value (as in
/// [`checked_string_end`]), so `Some` is only ever given for a value
/// serde_json accepts (a caller falls back to serde_json on `None`).
pub fn value_end(s: &[u8], i: usize) -> Option<usize> {
    value_end_at::<false>(s, i, 0)
}

/// [`value_end`] for bytes not yet known to be UTF-8: its strings are read
/// by [`checked_utf8_string_end`], and every byte outside them is one of
/// JSON's ASCII tokens, so `Some` also says that `s[i..end]` is valid UTF-8.
pub fn utf8_value_end(s: &[u8], i: usize) -> Option<usize> {
    value_end_at::<true>(s, i, 0)
}

fn value_end_at<const UTF8: bool>(s: &[u8], i: usize, depth: u32) -> Option<usize> {
    match *s.get(i)? {
        b'"' => string_end::<UTF8>(&s[i + 1..]).map(|(e, _)| i + e + 2),
        b'{' => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let mut j = skip_ws(s, i + 1);
            if s.get(j) == Some(&b'}') {
                return Some(j + 1);
            }
            loop {
                if s.get(j) != Some(&b'"') {
                    return None;
                }
                j = value_end_at::<UTF8>(s, j, depth + 1)?;
                j = skip_ws(s, j);
                if s.get(j) != Some(&b':') {
                    return None;
                }
                j = value_end_at::<UTF8>(s, skip_ws(s, j + 1), depth + 1)?;
                j = skip_ws(s, j);
                match *s.get(j)? {
                    b',' => j = skip_ws(s, j + 1),
                    b'}' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let mut j = skip_ws(s, i + 1);
            if s.get(j) == Some(&b']') {
                return Some(j + 1);
            }
            loop {
                j = value_end_at::<UTF8>(s, j, depth + 1)?;
                j = skip_ws(s, j);
                match *s.get(j)? {
                    b',' => j = skip_ws(s, j + 1),
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b't' => s[i..].starts_with(b"true").then_some(i + 4),
        b'f' => s[i..].starts_with(b"false").then_some(i + 5),
        b'n' => s[i..].starts_with(b"null").then_some(i + 4),
        b'-' | b'0'..=b'9' => number_end(s, i),
        _ => None,
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` from `s[i]`.
fn number_end(s: &[u8], mut i: usize) -> Option<usize> {
    let digits = |s: &[u8], i: usize| {
        let n = s[i.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (n > 0).then_some(i + n)
    };
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match s.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(s, i)?,
        _ => return None,
    };
    if s.get(i) == Some(&b'.') {
        i = digits(s, i + 1)?;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = s.get(i) {
            i += 1;
        }
        i = digits(s, i)?;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which bytes of `s` are string bytes, by `feed`.
    fn mask(s: &[u8]) -> Vec<bool> {
        let mut st = Strings::default();
        s.iter().map(|&b| st.feed(b)).collect()
    }

    /// The same mask from `skip` over `s` cut into the given pieces.
    fn mask_by_skip(pieces: &[&[u8]]) -> Vec<bool> {
        let mut st = Strings::default();
        let mut out = Vec::new();
        for p in pieces {
            let mut i = 0;
            while i < p.len() {
                if st.in_string() {
                    let end = st.skip(p, i);
                    out.extend(std::iter::repeat_n(true, end - i));
                    i = end;
                } else {
                    out.push(st.feed(p[i]));
                    i += 1;
                }
            }
        }
        out
    }

    #[test]
    fn quotes_escapes_and_backslash_runs() {
        let s = br#"{"a":"x\"y","b\\":"\\","c":"\\\"",d}"#;
        let m = mask(s);
        let inside: String = s
            .iter()
            .zip(&m)
            .map(|(&b, &i)| if i { b as char } else { '_' })
            .collect();
        assert_eq!(inside, r#"_"a"_"x\"y"_"b\\"_"\\"_"c"_"\\\""___"#);
    }

    #[test]
    fn skip_agrees_with_feed_wherever_the_input_is_cut() {
        let s = "[\"é \\\\\\\" \\u00e9 🙏\",\"\\\\\",{\"k\":\"v\\\"\"},1]".as_bytes();
        let want = mask(s);
        for cut in 0..=s.len() {
            assert_eq!(mask_by_skip(&[&s[..cut], &s[cut..]]), want, "cut at {cut}");
        }
        for a in 0..=s.len() {
            for b in a..=s.len() {
                assert_eq!(
                    mask_by_skip(&[&s[..a], &s[a..b], &s[b..]]),
                    want,
                    "cuts {a} {b}"
                );
            }
        }
    }

    /// serde_json's verdict on a whole JSON text.
    fn serde_accepts(s: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
    }

    #[test]
    fn checked_string_ends() {
        assert_eq!(checked_string_end(br#"a\\" rest"#), Some((3, true)));
        assert_eq!(checked_string_end(br#"" rest"#), Some((0, false)));
        assert_eq!(checked_string_end("é🙏\"".as_bytes()), Some((6, false)));
        assert_eq!(checked_string_end(br#"abc" rest"#), Some((3, false)));
        assert_eq!(checked_string_end(br#"a\"b" rest"#), Some((4, true)));
        assert_eq!(checked_string_end(br#"a\u00E9\/" x"#), Some((9, true)));
        // Escapes and multi-byte characters past the first blocks.
        let long = format!("{}\\\\{}\"", "x".repeat(40), "é".repeat(20));
        assert_eq!(checked_string_end(long.as_bytes()), Some((82, true)));
        for bad in [
            &br#"a\qb""#[..],
            br#"a\u00g0""#,
            br"a\u00",
            br"a\",
            b"ab",
            b"a\tb\"",
        ] {
            assert_eq!(
                checked_string_end(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // Surrogate escapes, paired or lone, any case, past the first
        // block too; escapes that only look alike are read.
        for bad in [
            r"\ud83d\ude4f",
            r"\uD800",
            r"\udfff",
            r"\uDBFF",
            "0123456789abcdef\\udc00",
        ] {
            assert_eq!(
                checked_string_end(format!("{bad}\"").as_bytes()),
                None,
                "{bad}"
            );
            let v = format!("{{\"a\":[\"x\",\"{bad}\"]}}");
            assert_eq!(value_end(v.as_bytes(), 0), None, "{v}");
        }
        for good in [r"\\ud800", r"\ud7ff", r"\ue000", r"\u0d80", r"\uFFFD"] {
            let lit = format!("{good}\"");
            assert_eq!(
                checked_string_end(lit.as_bytes()),
                Some((good.len(), true)),
                "{good}"
            );
        }
        // A control byte past the first block.
        let late = format!("{}\n{}\"", "y".repeat(33), "z");
        assert_eq!(checked_string_end(late.as_bytes()), None);
    }

    /// Whether the string body `b` has a `\\u` escape of a surrogate, by
    /// a plain byte-by-byte walk.
    fn has_surrogate_escape(b: &[u8]) -> bool {
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' {
                if b.get(i + 1) == Some(&b'u')
                    && let Some(h) = b.get(i + 2..i + 6)
                    && let Ok(h) = std::str::from_utf8(h)
                    && let Ok(v) = u16::from_str_radix(h, 16)
                    && (0xD800..=0xDFFF).contains(&v)
                {
                    return true;
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        false
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Pieces of strings and escapes at any offset (block edges too):
        /// the scanner reads a string exactly when serde_json reads it and
        /// it has no surrogate escape, and finds the same end.
        #[test]
        fn string_ends_agree_with_serde_json(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    r"\ud83d\ude4f", r"\ud800", r"\uDC00", r"\udbff", r"\\ud800", r"\ud7ff",
                    r"\ue000", r"\u00e9", r"\n", r#"\""#, r"\\", r"\u12", r"\x", "é", "🙏",
                    "abcdefghij", "0123456789abcdef", "\t", "x",
                ]),
                0..48,
            )
        ) {
            let body = parts.concat();
            let lit = format!("\"{body}\"");
            let serde = serde_json::from_str::<String>(&lit).is_ok();
            let want = (serde && !has_surrogate_escape(body.as_bytes()))
                .then_some((body.len(), body.contains('\\')));
            let tail = format!("{body}\" ,1");
            proptest::prop_assert_eq!(checked_string_end(tail.as_bytes()), want, "{}", lit);
        }
    }

    #[test]
    fn value_ends_agree_with_serde_json() {
        for v in [
            "0",
            "-0",
            "12",
            "-1.5e+3",
            "1E9",
            "0.25",
            "true",
            "false",
            "null",
            r#""s""#,
            "[]",
            "[ 1 , 2 ]",
            "{}",
            r#"{ "a" : [ {"b":null} ] , "c":"\u0041\n" }"#,
            // Refused by serde_json, so by the scanner too.
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "[1,]",
            "[,]",
            r#"{"a":1,}"#,
            r#"{"a"}"#,
            r#"{a:1}"#,
            "tru",
            "nul",
            "[1 2]",
            r#"{"a":1 "b":2}"#,
            "\"\t\"",
        ] {
            let ours = value_end(v.as_bytes(), 0) == Some(v.len());
            assert_eq!(ours, serde_accepts(v), "{v}");
        }
        assert_eq!(value_end(b"12,", 0), Some(2));
        assert_eq!(value_end(br#"{"a":"}"} x"#, 0), Some(9));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert_eq!(value_end(deep.as_bytes(), 0), None);
    }

    /// serde_json's verdict on bytes, as `from_slice` gives it (invalid
    /// UTF-8 refused).
    fn serde_accepts_bytes(b: &[u8]) -> bool {
        serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok()
    }

    #[test]
    fn utf8_scans_refuse_what_is_not_utf8() {
        // Cut characters, stray continuation bytes, overlong forms, encoded
        // surrogates and bytes past U+10FFFF, before, inside and after the
        // first 16-byte block, and after a valid non-ASCII character.
        let bad: [&[u8]; 7] = [
            b"\xc3",
            b"\x80",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xff",
            b"\xe2\x82",
        ];
        for b in bad {
            for pre in [
                "",
                "0123456789abcdefg",
                // Plain runs into the third and fourth 16-byte compare.
                "0123456789abcdef0123456789abcdefg",
                "0123456789abcdef0123456789abcdef0123456789abcdefgh",
                r"\u00e9 é",
                "é",
                "🙏 0123456789abcdef",
            ] {
                let mut body = pre.as_bytes().to_vec();
                body.extend_from_slice(b);
                body.extend_from_slice(b"tail\" ,1");
                assert_eq!(checked_utf8_string_end(&body), None, "{body:?}");
                assert!(checked_string_end(&body).is_some(), "{body:?}");
                let mut v = b"{\"k\":[1,\"".to_vec();
                v.extend_from_slice(&body);
                v.extend_from_slice(b"]}");
                assert_eq!(utf8_value_end(&v, 0), None, "{v:?}");
                assert!(value_end(&v, 0).is_some(), "{v:?}");
            }
        }
        let good = r#"x é 🙏 \u00e9 0123456789abcdef ü" ,"#;
        assert_eq!(
            checked_utf8_string_end(good.as_bytes()),
            checked_string_end(good.as_bytes())
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Bytes of every kind, valid UTF-8 or not, at any offset: the
        /// UTF-8 scanners give what the plain ones give when the string or
        /// value they end is valid UTF-8, and `None` otherwise; so a value
        /// they read is one serde_json reads from the same bytes.
        #[test]
        fn utf8_scans_are_the_plain_ones_on_utf8(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"abc"[..], b"0123456789abcdef", "é".as_bytes(), "🙏".as_bytes(),
                    "€".as_bytes(), b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf0\x9f",
                    b"\xff", br"\n", br#"\""#, br"\u00e9", b"\"", b",", b"[", b"]",
                    b"{", b"}", b":", b"1", b" ",
                ]),
                0..64,
            )
        ) {
            let body = parts.concat();
            let plain = checked_string_end(&body);
            let want = plain.filter(|&(end, _)| std::str::from_utf8(&body[..end]).is_ok());
            proptest::prop_assert_eq!(checked_utf8_string_end(&body), want);
            let plain = value_end(&body, 0);
            let want = plain.filter(|&end| std::str::from_utf8(&body[..end]).is_ok());
            let ours = utf8_value_end(&body, 0);
            proptest::prop_assert_eq!(ours, want);
            if let Some(end) = ours {
                proptest::prop_assert!(serde_accepts_bytes(&body[..end]));
            }
        }
    }
}
