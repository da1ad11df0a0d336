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
//! string it cannot read, a `\u` escape of a UTF-16 surrogate) returns
//! `None`, and the general serde parser reads the line instead, so the fast
//! path can only be a shortcut, never a different answer. Both readers here
//! scan every byte of a line they accept, escapes included: a line they
//! accept holds no surrogate escape. They read bytes, not yet known to be
//! UTF-8: their string scans validate each string's bytes, and every byte
//! outside a string is one of the ASCII tokens they match, so a line they
//! accept is valid UTF-8 and needs no pass of its own for it. `tests` and a
//! property test in `tests/it/properties.rs` check that both paths agree.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::{Part, ResultParts, ToolBody, ToolCallObj, outcome_kind};
// These refuse surrogate escapes: a line either path reads is then known
// to hold none, so the framer's pass looking for lone ones can be spared
// for it (`CursorParser::parse_checked`).
use crate::input::scan::{checked_utf8_string_end, skip_ws, utf8_value_end};
use crate::json::{LaxStr, Members, Val, raw_as_i64, raw_as_str};

/// A delta line read by the fast path.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct FastDelta<'a> {
    /// A thinking delta (else assistant text).
    pub thinking: bool,
    pub text: Cow<'a, str>,
    pub session_id: &'a str,
    pub ts: i64,
}

const THINKING: &[u8] = br#"{"type":"thinking","subtype":"delta","text":"#;
const ASSISTANT: &[u8] =
    br#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"#;
const ASSISTANT_END: &[u8] = br#"}]}"#;
const SESSION: &[u8] = br#","session_id":"#;
const TIMESTAMP: &[u8] = br#","timestamp_ms":"#;

/// Bytes this module has checked as UTF-8, as `str`.
///
/// Every caller passes a slice made only of string bodies read by
/// [`checked_utf8_string_end`] or values read by [`utf8_value_end`] (both
/// refuse invalid UTF-8) and of ASCII bytes matched one by one; the slice's
/// ends are at ASCII bytes, so no character is cut. The debug assertion
/// (every test build) holds each caller to that.
#[inline]
fn checked_str(b: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(b).is_ok(), "{b:?}");
    // SAFETY: valid UTF-8, as said above.
    unsafe { std::str::from_utf8_unchecked(b) }
}

/// Read `rec` if it is one of the two delta shapes, exactly.
pub(super) fn delta(rec: &[u8]) -> Option<FastDelta<'_>> {
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
    let digits = rest.strip_prefix(TIMESTAMP)?.strip_suffix(b"}")?;
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 18 digits, all checked above: the value fits an i64.
    let ts = digits
        .iter()
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
/// (unterminated, a raw control character, an invalid escape, bytes that
/// are not UTF-8).
fn string(s: &[u8]) -> Option<(Cow<'_, str>, &[u8])> {
    let body = s.strip_prefix(b"\"")?;
    // One pass finds the end and refuses raw control characters, bad
    // escapes and invalid UTF-8, as serde_json would.
    let (end, escaped) = checked_utf8_string_end(body)?;
    let raw = checked_str(&body[..end]);
    let rest = &body[end + 1..];
    if !escaped {
        return Some((Cow::Borrowed(raw), rest));
    }
    // `s` starts with the opening quote, so this is the literal with both quotes.
    let literal = checked_str(&s[..end + 2]);
    // The crate's unescaper gives serde_json's answer (it hands anything
    // unusual to serde_json) without parsing the literal a second time.
    let value = crate::json::unescape_literal(literal)?;
    Some((Cow::Owned(value.into_owned()), rest))
}

/// A `tool_call` line read by the tool fast path: the fields of the
/// general path's `Line` that a tool call uses, read as it reads them.
pub(super) struct FastTool<'a> {
    pub subtype: Cow<'a, str>,
    pub call_id: LaxStr<'a>,
    pub session_id: LaxStr<'a>,
    pub ts: Option<i64>,
    pub tool_call: ToolCallObj<'a>,
    /// The whole line, every byte of it checked.
    pub line: &'a str,
}

/// The keys of a `tool_call` line this path reads; any other key (or one
/// of these twice, which the general parser refuses) leaves the line to it.
const TOOL_LINE_KEYS: [&str; 7] = [
    "type",
    "subtype",
    "call_id",
    "tool_call",
    "session_id",
    "timestamp_ms",
    "model_call_id",
];

/// Read `rec` if it is a `tool_call` line whose every part this path reads
/// exactly as serde_json and the general parser would; `None` otherwise.
///
/// Tool results are most of a stream's bytes outside deltas. serde_json
/// skips the strings in them a byte or eight at a time and checks each
/// byte; here each byte of the line is scanned once, 16 at a time
/// ([`checked_string_end`]), and the values are kept as the raw slices
/// they are. Whatever this path is unsure of (an escaped key, an integer
/// string with escapes, nesting past the scanner's depth limit, any
/// byte serde_json would refuse) returns `None`, and the general parser
/// reads the line: a shortcut, never a different answer (the property
/// test in `tests` checks it on mutated lines).
pub(super) fn tool_line(rec: &[u8]) -> Option<FastTool<'_>> {
    if !rec.starts_with(br#"{"type":"tool_call","#) {
        return None;
    }
    let mut seen = [false; TOOL_LINE_KEYS.len()];
    let mut subtype = None;
    let mut call_id = LaxStr(None);
    let mut session_id = LaxStr(None);
    let mut ts = None;
    let mut tool_call = None;
    let end = object(rec, 0, |k, i| {
        let slot = TOOL_LINE_KEYS.iter().position(|&n| n == k)?;
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        if k == "tool_call" {
            let (t, end) = tool_call_obj(rec, i)?;
            tool_call = Some(t);
            return Some(end);
        }
        let (v, end) = skip(rec, i)?;
        match k {
            "type" if v != br#""tool_call""# => return None,
            "subtype" => subtype = Some(raw_as_str(raw(v))?),
            "call_id" => call_id = LaxStr(raw_as_str(raw(v))),
            "session_id" => session_id = LaxStr(raw_as_str(raw(v))),
            "timestamp_ms" => ts = lax_int(v)?,
            // type, checked; model_call_id: only whether it is there
            // matters, and not to a tool call.
            _ => {}
        }
        Some(end)
    })?;
    if skip_ws(rec, end) != rec.len() {
        return None;
    }
    Some(FastTool {
        subtype: subtype?,
        call_id,
        session_id,
        ts,
        tool_call: tool_call?,
        // The object walk read every byte up to `end`, and ASCII
        // whitespace follows.
        line: checked_str(rec),
    })
}

/// A raw JSON value the scanner checked, as serde_json's `RawValue`.
fn raw(json: &[u8]) -> &RawValue {
    let json = checked_str(json);
    // SAFETY: `RawValue` is a `#[repr(transparent)]` wrapper of `str`
    // (serde_json makes its own borrowed raw values by this same cast), and
    // `json` is one whole JSON value, checked by `value_end` as strictly as
    // serde_json checks the values it hands out this way. The test
    // `raw_values_match_serde_json` holds the layout to serde_json's.
    unsafe { &*(std::ptr::from_ref::<str>(json) as *const RawValue) }
}

/// The value at `s[i..]`, checked: its bytes and the index past it.
fn skip(s: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let end = utf8_value_end(s, i)?;
    Some((&s[i..end], end))
}

/// Walk the object at `s[i..]`: `f` gets each key (keys with escapes are
/// left to the general path) and the index of its value, reads the value
/// and returns the index past it. The index past the object; `None` when
/// it is not an object, a part does not scan, or `f` says `None`.
fn object<'a>(
    b: &'a [u8],
    i: usize,
    mut f: impl FnMut(&'a str, usize) -> Option<usize>,
) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Some(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return None;
        }
        let (len, escaped) = checked_utf8_string_end(&b[j + 1..])?;
        if escaped {
            return None;
        }
        let key = checked_str(&b[j + 1..j + 1 + len]);
        j = skip_ws(b, j + len + 2);
        if b.get(j) != Some(&b':') {
            return None;
        }
        j = skip_ws(b, f(key, skip_ws(b, j + 1))?);
        match *b.get(j)? {
            b',' => j = skip_ws(b, j + 1),
            b'}' => return Some(j + 1),
            _ => return None,
        }
    }
}

/// `Members` of the object at `s[i..]`.
fn members(s: &[u8], i: usize) -> Option<(Members<'_>, usize)> {
    let mut m = Vec::with_capacity(8);
    let end = object(s, i, |k, i| {
        let (v, end) = skip(s, i)?;
        m.push((Cow::Borrowed(k), raw(v)));
        Some(end)
    })?;
    Some((Members(m), end))
}

/// `LaxInt` of a raw value: `None` inside when it is no integer, `None`
/// outside for a string with escapes (left to the general path).
fn lax_int(v: &[u8]) -> Option<Option<i64>> {
    if v.contains(&b'\\') || !short_int_if_number(v) {
        return None;
    }
    Some(raw_as_i64(raw(v)))
}

/// False for a number other than `-?[0-9]{1,18}`. serde_json skips any
/// number it is not asked for, but parses one that a `LaxInt`, a `Val` or
/// a `ResultParts` is read from, and refuses some (`1e999` is out of
/// range): those are left to the general path.
fn short_int_if_number(v: &[u8]) -> bool {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    if !v.starts_with(b"-") && !v.first().is_some_and(u8::is_ascii_digit) {
        return true;
    }
    (1..=18).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit)
}

/// `Val` of the value at `s[i..]`.
fn val(s: &[u8], i: usize) -> Option<(Val<'_>, usize)> {
    if s.get(i) == Some(&b'{') {
        let (m, end) = members(s, i)?;
        return Some((Val::Obj(m), end));
    }
    let (v, end) = skip(s, i)?;
    if !short_int_if_number(v) {
        return None;
    }
    let val = match raw_as_str(raw(v)) {
        Some(t) => Val::Str(t),
        None => Val::Other,
    };
    Some((val, end))
}

/// `ToolCallObj` of the object at `s[i..]`, as its `Deserialize` reads it.
fn tool_call_obj(s: &[u8], i: usize) -> Option<(ToolCallObj<'_>, usize)> {
    let mut t = ToolCallObj::default();
    let end = object(s, i, |k, i| {
        if t.key.is_none() && (k.ends_with("ToolCall") || k == "function") {
            t.key = Some(Cow::Borrowed(k));
            if s[i..].starts_with(b"null") {
                return skip(s, i).map(|(_, end)| end);
            }
            let (b, end) = tool_body(s, i)?;
            t.body = b;
            return Some(end);
        }
        let (v, end) = skip(s, i)?;
        match k {
            "toolCallId" => t.tool_call_id = raw_as_str(raw(v)),
            "startedAtMs" => t.started_at = lax_int(v)?,
            "completedAtMs" => t.completed_at = lax_int(v)?,
            _ => {}
        }
        Some(end)
    })?;
    Some((t, end))
}

/// `ToolBody` of the object at `s[i..]` (its derived `Deserialize` refuses
/// a key given twice: so does this, leaving the line to the general path).
fn tool_body(s: &[u8], i: usize) -> Option<(ToolBody<'_>, usize)> {
    let mut b = ToolBody::default();
    let mut seen = [false; 4];
    let end = object(s, i, |k, i| {
        let slot = ["args", "result", "name", "arguments"]
            .iter()
            .position(|&n| n == k);
        if let Some(slot) = slot
            && std::mem::replace(&mut seen[slot], true)
        {
            return None;
        }
        let null = s[i..].starts_with(b"null");
        match k {
            "args" if !null => {
                let (v, end) = val(s, i)?;
                b.args = Some(v);
                return Some(end);
            }
            "result" if !null => {
                let (r, end) = result_parts(s, i)?;
                b.result = Some(r);
                return Some(end);
            }
            _ => {}
        }
        let (v, end) = skip(s, i)?;
        match k {
            "name" => b.name = LaxStr(raw_as_str(raw(v))),
            "arguments" if !null => b.arguments = Some(raw(v)),
            _ => {}
        }
        Some(end)
    })?;
    Some((b, end))
}

/// `ResultParts` of the value at `s[i..]`: the first outcome member read
/// as a `Val`, the others raw; anything but an object is unusual.
fn result_parts(s: &[u8], i: usize) -> Option<(ResultParts<'_>, usize)> {
    if s.get(i) != Some(&b'{') {
        let (v, end) = skip(s, i)?;
        return short_int_if_number(v).then_some((ResultParts::unusual(), end));
    }
    let mut members = Vec::with_capacity(4);
    let mut have_outcome = false;
    let end = object(s, i, |k, i| {
        let (part, end) = if !have_outcome && outcome_kind(k).is_some() {
            have_outcome = true;
            let (v, end) = val(s, i)?;
            (Part::Outcome(v), end)
        } else {
            let (v, end) = skip(s, i)?;
            (Part::Raw(raw(v)), end)
        };
        members.push((Cow::Borrowed(k), part));
        Some(end)
    })?;
    Some((
        ResultParts {
            members,
            not_object: false,
        },
        end,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes() {
        let t = delta(
            br#"{"type":"thinking","subtype":"delta","text":" read","session_id":"s-1","timestamp_ms":1763800006589}"#,
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
        let a = delta(r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"a\n\"b\" \u00e9 🙏"}]},"session_id":"s","timestamp_ms":7}"#.as_bytes()).unwrap();
        assert!(!a.thinking);
        assert_eq!(a.text, "a\n\"b\" é 🙏");
        assert_eq!(a.ts, 7);
    }

    #[test]
    fn surrogate_escapes_are_left_to_the_general_parser() {
        // Paired or lone, in the text or the session id, any case: a line
        // the fast paths take holds none (`CursorParser::parse_checked`).
        for esc in [r"\ud83d\ude4f", r"\uD800", r"\udfff", r"\uDc00x"] {
            let text = format!(
                r#"{{"type":"thinking","subtype":"delta","text":"a{esc}","session_id":"s","timestamp_ms":7}}"#
            );
            assert_eq!(delta(text.as_bytes()), None, "{text}");
            let sid = format!(
                r#"{{"type":"thinking","subtype":"delta","text":"a","session_id":"s{esc}","timestamp_ms":7}}"#
            );
            assert_eq!(delta(sid.as_bytes()), None, "{sid}");
            let tool = format!(
                r#"{{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{{"readToolCall":{{"args":{{"path":"p{esc}"}}}}}}}}"#
            );
            assert!(tool_line(tool.as_bytes()).is_none(), "{tool}");
            assert!(
                tool_line(tool.replace(esc, "").as_bytes()).is_some(),
                "{tool}"
            );
            let key = tool.replace("\"path\"", &format!("\"k{esc}\""));
            assert!(tool_line(key.as_bytes()).is_none(), "{key}");
        }
        // Escapes that only look alike are read: `\\ud800` is a backslash
        // and text, `\u0d80` and `\ud7ff` are no surrogates.
        for esc in [r"\\ud800", r"\u0d80", r"\ud7ff", r"\uDAFx"] {
            let line = format!(
                r#"{{"type":"thinking","subtype":"delta","text":"a{esc}","session_id":"s","timestamp_ms":7}}"#
            );
            let want = serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .map(|v| v["text"].as_str().unwrap().to_owned());
            assert_eq!(
                delta(line.as_bytes()).map(|d| d.text.into_owned()),
                want,
                "{line}"
            );
        }
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
            assert_eq!(delta(line.as_bytes()), None, "{line}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_left_to_the_general_parser() {
        // In the text, the session id, a key, a tool result, after a
        // valid non-ASCII character and past the first 16-byte block.
        let good = [
            r#"{"type":"thinking","subtype":"delta","text":"é TEXT","session_id":"s ü","timestamp_ms":7}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"0123456789abcdef TEXT"}]},"session_id":"s","timestamp_ms":7}"#,
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"p"},"result":{"success":{"content":"0123456789abcdef é TEXT"}}}},"session_id":"s"}"#,
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{"TEXT":"p"}}},"session_id":"s"}"#,
        ];
        for line in good {
            let fast = delta(line.as_bytes()).is_some() || tool_line(line.as_bytes()).is_some();
            assert!(fast, "{line}");
            for bad in [
                &b"\xff"[..],
                b"\xc3",
                b"\xe2\x82",
                b"\xed\xa0\x80",
                b"\xc0\xaf",
            ] {
                let mut b = Vec::new();
                let (head, tail) = line.split_once("TEXT").unwrap();
                b.extend_from_slice(head.as_bytes());
                b.extend_from_slice(bad);
                b.extend_from_slice(tail.as_bytes());
                assert!(delta(&b).is_none(), "{b:?}");
                assert!(tool_line(&b).is_none(), "{b:?}");
            }
        }
    }

    #[test]
    fn escaped_quote_before_the_end_is_not_the_end() {
        let t = delta(br#"{"type":"thinking","subtype":"delta","text":"say \"hi\\","session_id":"s","timestamp_ms":1}"#).unwrap();
        assert_eq!(t.text, "say \"hi\\");
    }

    /// Everything the tool path reads from a line, written out, from
    /// either path (the fields the general parser's `Line` holds).
    fn describe_call(t: Option<&ToolCallObj<'_>>) -> String {
        let Some(t) = t else {
            return "no call".to_owned();
        };
        let b = &t.body;
        let result = b.result.as_ref().map(|r| {
            let parts: Vec<String> = r
                .members
                .iter()
                .map(|(k, p)| match p {
                    Part::Raw(v) => format!("{k}=raw {}", v.get()),
                    Part::RawOutcome(v) => format!("{k}=raw outcome {}", v.get()),
                    Part::Outcome(v) => format!("{k}=outcome {v:?}"),
                })
                .collect();
            (parts, r.not_object)
        });
        format!(
            "key {:?} id {:?} at {:?}..{:?} args {:?} result {:?} name {:?} arguments {:?}",
            t.key,
            t.tool_call_id,
            t.started_at,
            t.completed_at,
            b.args,
            result,
            b.name.as_deref(),
            b.arguments.map(RawValue::get),
        )
    }

    /// The general path's reading of a tool line, described; `None` when it
    /// would not take the tool-call arm with these fields.
    fn general(line: &str) -> Option<String> {
        let l: super::super::Line<'_> = serde_json::from_str(line).ok()?;
        if l.ty.as_deref() != Some("tool_call") {
            return None;
        }
        Some(format!(
            "{:?} {:?} {:?} {:?} {}",
            l.subtype.as_deref()?,
            l.call_id.as_deref(),
            l.session_id.as_deref(),
            l.timestamp_ms.0,
            describe_call(l.tool_call.as_ref()),
        ))
    }

    fn fast_described(line: &str) -> Option<String> {
        let t = tool_line(line.as_bytes())?;
        Some(format!(
            "{:?} {:?} {:?} {:?} {}",
            t.subtype.as_ref(),
            t.call_id.as_deref(),
            t.session_id.as_deref(),
            t.ts,
            describe_call(Some(&t.tool_call)),
        ))
    }

    /// Every `tool_call` line of the cursor fixtures (the repository's own
    /// files: a missing folder fails the test).
    fn fixture_tool_lines() -> Vec<String> {
        let mut lines = Vec::new();
        for dir in ["fixtures/cursor", "fixtures/regression"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for e in std::fs::read_dir(&dir).expect("the fixtures folder") {
                let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
                lines.extend(
                    text.lines()
                        .filter(|l| l.starts_with(r#"{"type":"tool_call""#))
                        .map(str::to_owned),
                );
            }
        }
        assert!(lines.len() > 50, "only {} tool lines", lines.len());
        lines
    }

    #[test]
    fn raw_values_match_serde_json() {
        assert_eq!(
            std::mem::size_of::<&RawValue>(),
            std::mem::size_of::<&str>()
        );
        for v in [r#""a\"b""#, "12", r#"{"a":[1,{"b":null}]}"#, "null"] {
            let theirs: &RawValue = serde_json::from_str(v).unwrap();
            assert_eq!(raw(v.as_bytes()).get(), theirs.get());
            assert_eq!(format!("{:?}", raw(v.as_bytes())), format!("{theirs:?}"));
        }
    }

    #[test]
    fn tool_lines_read_as_the_general_path_reads_them() {
        let mut fast = 0;
        for line in fixture_tool_lines() {
            let ours = fast_described(&line);
            if ours.is_some() {
                fast += 1;
                assert_eq!(ours, general(&line), "{line}");
            }
        }
        // Most real lines take the fast path (else it would test nothing).
        assert!(fast > 50, "{fast}");
        // Shapes that are left to the general path.
        for line in [
            r#"{"type":"tool_call","subtype":"started","subtype":"x","tool_call":{"readToolCall":{}}}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"readToolCall":{"args":{},"args":{}}}}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"readToolCall":[1]}}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"read\u0054oolCall":{}}}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"readToolCall":{}},"result":"x"}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"readToolCall":{}}} x"#,
            r#"{"type":"tool_call","subtype":7,"tool_call":{"readToolCall":{}}}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":null}"#,
            r#"{"type":"tool_call","subtype":"started","tool_call":{"readToolCall":{"args":{"a":01}}}}"#,
        ] {
            assert!(tool_line(line.as_bytes()).is_none(), "{line}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// A fixture line with a few bytes replaced, inserted or removed:
        /// the fast path reads it exactly as the general path does, or
        /// leaves it to it.
        #[test]
        fn mutated_tool_lines_agree(
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            edits in proptest::collection::vec(
                (proptest::prelude::any::<proptest::sample::Index>(), 0u8..3, proptest::sample::select(
                    br#""\{}[],:0-1.eE tnu/ab"#.to_vec().into_iter().chain([b'\n', 0x01, 0x80, 0xc3, 0xe2, 0xff]).collect::<Vec<u8>>())),
                1..4,
            ),
        ) {
            let lines = FIXTURE_LINES.get_or_init(fixture_tool_lines);
            let mut b = lines[pick.index(lines.len())].clone().into_bytes();
            for (at, op, byte) in edits {
                let i = at.index(b.len() + 1);
                match op {
                    0 if i < b.len() => b[i] = byte,
                    1 => b.insert(i, byte),
                    _ if i < b.len() => { b.remove(i); }
                    _ => {}
                }
            }
            // Bytes that are not UTF-8 (a cut or stray byte): both fast
            // paths refuse the line, which is then validated and repaired.
            let Ok(line) = String::from_utf8(b.clone()) else {
                proptest::prop_assert!(tool_line(&b).is_none(), "{:?}", b);
                proptest::prop_assert!(delta(&b).is_none(), "{:?}", b);
                return Ok(());
            };
            if let Some(ours) = fast_described(&line) {
                proptest::prop_assert_eq!(Some(ours), general(&line), "{}", line);
            }
        }
    }

    static FIXTURE_LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
}
