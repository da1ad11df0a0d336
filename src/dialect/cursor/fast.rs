//! A fast path for the two line shapes that make up almost every event of a
//! `--stream-partial-output` stream (98 % of events, over half of the bytes):
//!
//! ```text
//! {"type":"thinking","subtype":"delta","text":"…","session_id":"…","timestamp_ms":N}
//! {"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"…"}]},"session_id":"…","timestamp_ms":N}
//! ```
//!
//! cursor-agent writes these keys in this order with no whitespace. The fast
//! path matches that exact layout byte by byte and reads the two strings and
//! the number; any difference at all (another key, another order, spaces, a
//! string it cannot read) returns `None`, and the general serde parser reads
//! the line instead, so the fast path can only be a shortcut, never a
//! different answer. `tests` and a property test in `tests/it/properties.rs`
//! check that both paths agree.

use std::borrow::Cow;

use crate::input::scan::string_end;

/// A delta line read by the fast path.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FastDelta<'a> {
    /// A thinking delta (else assistant text).
    pub thinking: bool,
    pub text: Cow<'a, str>,
    pub session_id: &'a str,
    pub ts: i64,
}

const THINKING: &str = r#"{"type":"thinking","subtype":"delta","text":"#;
const ASSISTANT: &str =
    r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"#;
const ASSISTANT_END: &str = r#"}]}"#;
const SESSION: &str = r#","session_id":"#;
const TIMESTAMP: &str = r#","timestamp_ms":"#;

/// Read `rec` if it is one of the two delta shapes, exactly.
pub(super) fn delta(rec: &str) -> Option<FastDelta<'_>> {
    let (thinking, rest) = if let Some(r) = rec.strip_prefix(THINKING) {
        (true, r)
    } else if let Some(r) = rec.strip_prefix(ASSISTANT) {
        (false, r)
    } else {
        return None;
    };
    let (text, rest) = string(rest)?;
    let rest = if thinking {
        rest
    } else {
        rest.strip_prefix(ASSISTANT_END)?
    };
    let (sid, rest) = string(rest.strip_prefix(SESSION)?)?;
    let Cow::Borrowed(session_id) = sid else {
        // An escaped session id is rare; the general parser handles it.
        return None;
    };
    let digits = rest.strip_prefix(TIMESTAMP)?.strip_suffix('}')?;
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // At most 18 digits, all checked above: the value fits an i64.
    let ts = digits
        .bytes()
        .fold(0i64, |v, d| v * 10 + i64::from(d - b'0'));
    Some(FastDelta {
        thinking,
        text,
        session_id,
        ts,
    })
}

/// A JSON string at the start of `s` (which must begin with `"`): its value
/// and what follows it. `None` when it is not a string this path reads
/// (unterminated, a raw control character, an invalid escape).
fn string(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let body = s.strip_prefix('"')?;
    let (end, escaped) = string_end(body.as_bytes())?;
    let raw = &body[..end];
    // JSON does not allow raw control characters inside strings.
    if crate::json::has_control(raw.as_bytes()) {
        return None;
    }
    let rest = &body[end + 1..];
    if !escaped {
        return Some((Cow::Borrowed(raw), rest));
    }
    // `s` starts with the opening quote, so this is the literal with both quotes.
    let literal = &s[..end + 2];
    // The crate's unescaper gives serde_json's answer (it hands anything
    // unusual to serde_json) without parsing the literal a second time.
    let value = crate::json::unescape_literal(literal)?;
    Some((Cow::Owned(value.into_owned()), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes() {
        let t = delta(
            r#"{"type":"thinking","subtype":"delta","text":" read","session_id":"s-1","timestamp_ms":1763800006589}"#,
        );
        assert_eq!(
            t,
            Some(FastDelta {
                thinking: true,
                text: Cow::Borrowed(" read"),
                session_id: "s-1",
                ts: 1763800006589
            })
        );
        let a = delta(r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"a\n\"b\" \u00e9 \ud83d\ude4f"}]},"session_id":"s","timestamp_ms":7}"#).unwrap();
        assert!(!a.thinking);
        assert_eq!(a.text, "a\n\"b\" é 🙏");
        assert_eq!(a.ts, 7);
    }

    #[test]
    fn anything_else_is_left_to_the_general_parser() {
        for line in [
            // A recap (model_call_id), a final recap (no timestamp).
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"x"}]},"session_id":"s","model_call_id":"m","timestamp_ms":7}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"x"}]},"session_id":"s"}"#,
            // Two blocks, another key order, whitespace.
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},"session_id":"s","timestamp_ms":7}"#,
            r#"{"type":"thinking","subtype":"delta","session_id":"s","text":"x","timestamp_ms":7}"#,
            r#"{"type":"thinking","subtype":"delta","text":"x","session_id":"s","timestamp_ms": 7}"#,
            // A number that is not a plain integer, or too big.
            r#"{"type":"thinking","subtype":"delta","text":"x","session_id":"s","timestamp_ms":7.5}"#,
            r#"{"type":"thinking","subtype":"delta","text":"x","session_id":"s","timestamp_ms":99999999999999999999}"#,
            // Strings this path does not read: raw control character, bad escape, unterminated.
            "{\"type\":\"thinking\",\"subtype\":\"delta\",\"text\":\"a\tb\",\"session_id\":\"s\",\"timestamp_ms\":7}",
            r#"{"type":"thinking","subtype":"delta","text":"a\qb","session_id":"s","timestamp_ms":7}"#,
            r#"{"type":"thinking","subtype":"delta","text":"ab\"#,
            r#"{"type":"thinking","subtype":"delta","text":"x","session_id":"s\u0041","timestamp_ms":7}"#,
            // Trailing bytes after the object.
            r#"{"type":"thinking","subtype":"delta","text":"x","session_id":"s","timestamp_ms":7}}"#,
        ] {
            assert_eq!(delta(line), None, "{line}");
        }
    }

    #[test]
    fn escaped_quote_before_the_end_is_not_the_end() {
        let t = delta(r#"{"type":"thinking","subtype":"delta","text":"say \"hi\\","session_id":"s","timestamp_ms":1}"#).unwrap();
        assert_eq!(t.text, "say \"hi\\");
    }
}
