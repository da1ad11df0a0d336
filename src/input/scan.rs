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

/// The closing quote of the string whose body starts `body` (the bytes
/// after its opening quote): its index, and whether the body has a
/// backslash escape. `None` when the string does not end within `body`.
#[inline]
pub fn string_end(body: &[u8]) -> Option<(usize, bool)> {
    // The jumps between `"` and `\` see every backslash, so whether there
    // is an escape is known without a second pass over the body.
    let mut i = 0;
    let mut escaped = false;
    loop {
        let j = i + memchr2(b'"', b'\\', body.get(i..)?)?;
        if body[j] == b'"' {
            return Some((j, escaped));
        }
        escaped = true;
        i = j + 2;
    }
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

    #[test]
    fn string_ends() {
        assert_eq!(string_end(br#"abc" rest"#), Some((3, false)));
        assert_eq!(string_end(br#"a\"b" rest"#), Some((4, true)));
        assert_eq!(string_end(br#"a\\" rest"#), Some((3, true)));
        assert_eq!(string_end(br#"" rest"#), Some((0, false)));
        assert_eq!(string_end("é🙏\"".as_bytes()), Some((6, false)));
        assert_eq!(string_end(br#"a\""#), None);
        assert_eq!(string_end(br"a\"), None);
        assert_eq!(string_end(b"abc"), None);
    }
}
