//! Small JSON helpers shared by readers and writers: escaping strings
//! straight into a writer, and borrowed, lenient field types for the typed
//! line parsers.

pub(crate) mod blocks;
pub mod layout;
pub(crate) mod mask;

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use mask::{BLOCK, next_special, specials_from};

// ---------------------------------------------------------------- writing

/// For each byte: the escape it needs inside a JSON string, or 0.
/// `u` means `\u00XX`; the rest are the letter after the backslash.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Write `s` as a quoted JSON string (same escapes as serde_json).
pub fn write_str<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    w.write_all(b"\"")?;
    write_str_body(w, s)?;
    w.write_all(b"\"")
}

/// Write the escaped contents of a JSON string, without the quotes.
pub fn write_str_body<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    let bytes = s.as_bytes();
    // Bytes before `start` are written; bytes before `i` are checked.
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // The bytes to escape among the 16 from `i`, as a mask (one SSE2
        // compare per block, shared with the input's string scanner).
        let mask = specials_from::<false>(bytes, i);
        let mut m = mask;
        while m != 0 {
            let k = i + m.trailing_zeros() as usize;
            m &= m - 1;
            if start < k {
                w.write_all(&bytes[start..k])?;
            }
            let b = bytes[k];
            match ESCAPE[b as usize] {
                b'u' => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    w.write_all(&[
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[(b >> 4) as usize],
                        HEX[(b & 0xf) as usize],
                    ])?;
                }
                esc => w.write_all(&[b'\\', esc])?,
            }
            start = k + 1;
        }
        i += BLOCK;
    }
    w.write_all(&bytes[start..])
}

/// Write an unsigned integer.
pub fn write_u64<W: Write + ?Sized>(w: &mut W, v: u64) -> io::Result<()> {
    w.write_all(itoa::Buffer::new().format(v).as_bytes())
}

/// Write a signed integer.
pub fn write_i64<W: Write + ?Sized>(w: &mut W, v: i64) -> io::Result<()> {
    w.write_all(itoa::Buffer::new().format(v).as_bytes())
}

/// Epoch-millisecond timestamps for a writer of many (one per event): the
/// digits of the current second are kept, so a timestamp in the same second
/// as the last costs its three millisecond digits, and any 13-digit one
/// (2001-09-09 to 2286-11-20) is written as one fixed-size copy, not through
/// itoa and a variable-length `write_all` (a `memmove` call). Any other
/// value is written as [`write_i64`] writes it.
#[derive(Debug, Clone, Default)]
pub struct TsDigits {
    /// The second whose ten digits `digits` starts with (0: none yet, as no
    /// 13-digit timestamp has a zero second).
    secs: i64,
    digits: [u8; 13],
}

impl TsDigits {
    /// Write `ts` (as [`write_i64`] would).
    #[inline]
    pub fn write<W: Write + ?Sized>(&mut self, w: &mut W, ts: i64) -> io::Result<()> {
        if !(1_000_000_000_000..10_000_000_000_000).contains(&ts) {
            return write_i64(w, ts);
        }
        let (secs, ms) = (ts / 1000, (ts % 1000) as u16);
        if secs != self.secs {
            // 10^9 <= secs < 10^10: exactly ten digits.
            self.digits[..10].copy_from_slice(itoa::Buffer::new().format(secs).as_bytes());
            self.secs = secs;
        }
        self.digits[10] = b'0' + (ms / 100) as u8;
        self.digits[11] = b'0' + (ms / 10 % 10) as u8;
        self.digits[12] = b'0' + (ms % 10) as u8;
        w.write_all(&self.digits)
    }
}

/// Write a float as serde_json would (`null` when not finite).
pub fn write_f64<W: Write + ?Sized>(w: &mut W, v: f64) -> io::Result<()> {
    if v.is_finite() {
        let s = serde_json::to_string(&v).map_err(io::Error::other)?;
        w.write_all(s.as_bytes())
    } else {
        w.write_all(b"null")
    }
}

/// A JSON string literal for `s` (quoted and escaped).
pub fn quote(s: &str) -> String {
    let mut v = Vec::with_capacity(s.len() + 2);
    write_str(&mut v, s).expect("writing to a Vec cannot fail");
    String::from_utf8(v).expect("escaping keeps UTF-8")
}

// ---------------------------------------------------------------- reading

/// A string field that borrows from the line when it has no escapes.
///
/// A newtype because `Option<Cow<str>>` fields never borrow under serde's
/// derive; through a newtype they do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct S<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for S<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = S<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<S<'de>, E> {
                Ok(S(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<S<'de>, E> {
                Ok(S(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<S<'de>, E> {
                Ok(S(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A field that is a string when it is one, and `None` for any other JSON
/// value, so a surprising type never makes a whole line unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LaxStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LaxStr<'a> {
    /// The string, if the field was one.
    pub fn get(self) -> Option<Cow<'a, str>> {
        self.0
    }

    /// The string, if the field was one (borrowed).
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// Accepts any JSON value; keeps strings (borrowed when possible), numbers
/// and booleans as what they are, and skips everything else.
enum Lax<'de> {
    Str(Cow<'de, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Other,
}

impl<'de> Deserialize<'de> for Lax<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lax<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Lax<'de>, E> {
                Ok(Lax::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Lax<'de>, E> {
                Ok(Lax::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Lax<'de>, E> {
                Ok(Lax::Str(Cow::Owned(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lax<'de>, E> {
                Ok(Lax::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lax<'de>, E> {
                Ok(i64::try_from(v).map_or(Lax::Float(v as f64), Lax::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lax<'de>, E> {
                Ok(Lax::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Lax<'de>, E> {
                Ok(Lax::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Lax<'de>, E> {
                Ok(Lax::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Lax<'de>, E> {
                Ok(Lax::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Lax<'de>, D::Error> {
                Lax::deserialize(d)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Lax<'de>, A::Error> {
                while a.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Lax::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Lax<'de>, A::Error> {
                while a.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Lax::Other)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LaxStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Taken raw and unescaped here: serde_json would unescape a long
        // string into a scratch buffer that grows by doubling and then copy
        // it, holding up to three times the text at once; this holds it
        // once (borrowed when it has no escapes).
        let raw = <&'a RawValue>::deserialize(d)?;
        Ok(LaxStr(raw_as_str(raw)))
    }
}

/// The string inside a raw JSON value, if it is a string.
pub fn raw_as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let t = raw.get();
    if !t.starts_with('"') {
        return None;
    }
    unescape_literal(t)
}

/// The text of a JSON string literal (quotes included) read from valid JSON;
/// borrowed when it has no escapes. `None` for what is not a string literal.
#[inline]
pub fn unescape_literal(lit: &str) -> Option<Cow<'_, str>> {
    // As many lines as there are: the head is the whole text.
    unescape_literal_head(lit, usize::MAX)
}

/// The text of a JSON string literal read from valid JSON as far as its
/// `lines`-th newline (that newline included), or all of it when it has
/// fewer: for a reader that looks only at a text's first lines, without
/// copying a long tool output whole. A literal without escapes has no
/// newline, and is borrowed whole. `lines` is at least one.
pub fn unescape_literal_head(lit: &str, lines: usize) -> Option<Cow<'_, str>> {
    let lines = lines.max(1);
    let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
    if !has_backslash(inner.as_bytes()) {
        return Some(Cow::Borrowed(inner));
    }
    // Shell output is one escape (`\n`) every few dozen bytes: copying the
    // runs between escapes whole is several times faster than serde_json's
    // string parser, which makes up most of the cost of re-sent cumulative
    // output. Anything unusual (a lone surrogate, an invalid escape) goes to
    // serde_json, so the answer is always serde_json's.
    match unescape_fast(inner, lines) {
        Some(s) => Some(Cow::Owned(s)),
        None => serde_json::from_str::<String>(lit).ok().map(|mut s| {
            if lines < usize::MAX
                && let Some((at, _)) = s.match_indices('\n').nth(lines - 1)
            {
                s.truncate(at + 1);
            }
            Cow::Owned(s)
        }),
    }
}

/// Whether `b` holds a backslash. Most strings read are short (ids, names,
/// timestamps), where `memchr`'s setup cost more than the search: up to 64
/// bytes are looked at eight at a time, the last eight overlapping.
#[inline]
fn has_backslash(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero exactly where `b` has a backslash, and
    // `(x - ONES) & !x & HIGHS` is non-zero exactly when some byte is zero.
    let zero_in = |w: &[u8]| {
        let x = u64::from_le_bytes(w.try_into().expect("eight bytes")) ^ (ONES * u64::from(b'\\'));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    match b.len() {
        0..8 => b.contains(&b'\\'),
        8..=64 => {
            let chunks = b.chunks_exact(8);
            let last = zero_in(&b[b.len() - 8..]);
            chunks.fold(last, |acc, w| acc | zero_in(w)) != 0
        }
        _ => memchr::memchr(b'\\', b).is_some(),
    }
}

/// Unescape the inside of a string literal, stopping after its `newlines`-th
/// newline; `None` where serde_json must decide.
fn unescape_fast(inner: &str, mut newlines: usize) -> Option<String> {
    let b = inner.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    loop {
        // A valid literal's next special byte is a backslash.
        let at = next_special::<false>(b, i);
        // Both ends are ASCII (a special byte, or the start/end), so the run
        // is whole characters.
        out.push_str(&inner[i..at]);
        match b.get(at) {
            None => return Some(out),
            Some(b'\\') => {}
            // A raw quote or control character: not a valid literal's.
            Some(_) => return None,
        }
        i = at + 1;
        let c = *b.get(i)?;
        i += 1;
        let c = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = hex4(b, i)?;
                i += 4;
                match hi {
                    0xD800..=0xDBFF => {
                        let lo = match b.get(i..i + 2)? {
                            [b'\\', b'u'] => hex4(b, i + 2)?,
                            _ => return None,
                        };
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        i += 6;
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                    }
                    _ => char::from_u32(hi)?,
                }
            }
            _ => return None,
        };
        out.push(c);
        if c == '\n' {
            newlines -= 1;
            if newlines == 0 {
                return Some(out);
            }
        }
    }
}

/// The value of the four hex digits at `b[i..i + 4]`.
pub(crate) fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let d = b.get(i..i + 4)?;
    d.iter()
        .try_fold(0u32, |v, &c| Some(v << 4 | char::from(c).to_digit(16)?))
}

/// A number field read leniently: integers, floats (truncated) and numeric
/// strings (cursor-agent 2026.07 writes `startedAtMs` as a string) all count;
/// anything else is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaxInt(pub Option<i64>);

impl<'de> Deserialize<'de> for LaxInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LaxInt(match Lax::deserialize(d)? {
            Lax::Int(i) => Some(i),
            Lax::Float(f) => float_to_i64(f),
            Lax::Str(s) => str_to_i64(&s),
            _ => None,
        }))
    }
}

fn float_to_i64(f: f64) -> Option<i64> {
    (f.is_finite() && f.abs() < 9.2e18).then_some(f as i64)
}

fn str_to_i64(t: &str) -> Option<i64> {
    t.parse::<i64>()
        .ok()
        .or_else(|| t.parse::<f64>().ok().and_then(float_to_i64))
}

/// The integer inside a raw JSON value (number or numeric string).
pub fn raw_as_i64(raw: &RawValue) -> Option<i64> {
    let t = raw.get();
    let t = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t);
    str_to_i64(t)
}

/// A float field read leniently: numbers and numeric strings count,
/// anything else is `None` (costs, durations in seconds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaxF64(pub Option<f64>);

impl<'de> Deserialize<'de> for LaxF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LaxF64(match Lax::deserialize(d)? {
            Lax::Int(i) => Some(i as f64),
            Lax::Float(f) if f.is_finite() => Some(f),
            Lax::Str(s) => s.parse::<f64>().ok().filter(|f| f.is_finite()),
            _ => None,
        }))
    }
}

/// A boolean field read leniently (`None` unless `true`/`false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaxBool(pub Option<bool>);

impl<'de> Deserialize<'de> for LaxBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LaxBool(match Lax::deserialize(d)? {
            Lax::Bool(b) => Some(b),
            _ => None,
        }))
    }
}

/// The members of a JSON object in source order, values kept raw.
/// Deserializing anything but an object yields an error.
#[derive(Debug, Default)]
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// Parse the members of the object in `raw` (None when it is not an object).
    pub fn of(raw: &'a RawValue) -> Option<Members<'a>> {
        Members::parse(raw.get())
    }

    /// Parse the members of the object in the JSON text `json`.
    pub fn parse(json: &'a str) -> Option<Members<'a>> {
        serde_json::from_str(json).ok()
    }

    /// The value of the first member named `key`.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The string member `key`, if it is a string.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(raw_as_str)
    }

    /// A non-empty string member `key`.
    pub fn nonempty_str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.str(key).filter(|s| !s.is_empty())
    }

    /// The integer member `key`.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(raw_as_i64)
    }

    /// The object member `key`, parsed.
    pub fn obj(&self, key: &str) -> Option<Members<'a>> {
        self.get(key).and_then(Members::of)
    }

    /// Re-serialize the object without the members named in `drop`.
    pub fn to_json_without(&self, drop: &[&str]) -> Box<RawValue> {
        self.to_json_with(|k, v| {
            if drop.contains(&k) {
                None
            } else {
                Some(Cow::Borrowed(v))
            }
        })
    }

    /// Re-serialize the object, replacing or dropping members through `f`.
    pub fn to_json_with<'b>(
        &'b self,
        mut f: impl FnMut(&str, &'b RawValue) -> Option<Cow<'b, RawValue>>,
    ) -> Box<RawValue> {
        let kept: Vec<(&str, Cow<'b, RawValue>)> = self
            .0
            .iter()
            .filter_map(|(k, v)| f(k, v).map(|v| (k.as_ref(), v)))
            .collect();
        assembled(&Entries(&kept))
    }
}

/// Object members to serialize: keys escaped, values copied verbatim.
struct Entries<'e, 'b>(&'e [(&'b str, Cow<'b, RawValue>)]);

impl serde::Serialize for Entries<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, &**v)?;
        }
        m.end()
    }
}

/// A raw value serialized from valid pieces. serde_json's `to_raw_value`
/// does not parse its own output again, unlike `RawValue::from_string`.
pub fn assembled<T: serde::Serialize + ?Sized>(v: &T) -> Box<RawValue> {
    serde_json::value::to_raw_value(v).expect("serializing raw values and strings cannot fail")
}

/// A one-member object `{"key": "value"}` as a raw value.
pub fn object1(key: &str, value: &str) -> Box<RawValue> {
    assembled(
        &[(key, value)]
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    )
}

/// Visitor methods that take any scalar (and `null`) as `$default`, for
/// values read leniently: an unexpected type is passed over, not an error
/// that would make the whole line unreadable.
macro_rules! lenient_scalars {
    ($default:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($default)
        }
    };
}
pub(crate) use lenient_scalars;

/// A JSON value read in one pass for what cstream needs from it: an
/// object's members (values kept raw), a string, or anything else (skipped,
/// not kept). Reading an object this way scans it once, where taking it as
/// a `&RawValue` and then its members would scan it twice.
#[derive(Debug)]
pub enum Val<'a> {
    Obj(Members<'a>),
    Str(Cow<'a, str>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Val<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Val<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Val<'de>, A::Error> {
                members(m).map(Val::Obj)
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Val<'de>, E> {
                Ok(Val::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Val<'de>, E> {
                Ok(Val::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Val<'de>, E> {
                Ok(Val::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Val<'de>, A::Error> {
                while a.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Val::Other)
            }
            lenient_scalars!(Val::Other);
        }
        d.deserialize_any(V)
    }
}

/// Collect the members of a map being deserialized (values kept raw).
fn members<'de, A: MapAccess<'de>>(mut m: A) -> Result<Members<'de>, A::Error> {
    let mut v = Vec::with_capacity(m.size_hint().unwrap_or(8));
    while let Some(k) = m.next_key::<S<'de>>()? {
        let val: &'de RawValue = m.next_value()?;
        v.push((k.0, val));
    }
    Ok(Members(v))
}

/// Write `m` as a compact JSON object, leaving out the members named in `drop`.
pub fn write_members(out: &mut Vec<u8>, m: &Members<'_>, drop: &[&str]) {
    out.push(b'{');
    let mut first = true;
    for (k, v) in &m.0 {
        if drop.contains(&k.as_ref()) {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        write_str(out, k).expect("Vec write");
        out.push(b':');
        out.extend_from_slice(v.get().as_bytes());
    }
    out.push(b'}');
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Members<'de>, A::Error> {
                members(m)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    /// Timestamps written through the kept digits read as itoa writes
    /// them: in and out of the 13-digit range, negative, at the range's
    /// ends, the same second repeated and revisited.
    #[test]
    fn ts_digits_write_what_itoa_writes() {
        let edge = [
            0,
            -1,
            999,
            i64::MIN,
            i64::MAX,
            999_999_999_999,
            1_000_000_000_000,
            1_000_000_000_999,
            9_999_999_999_999,
            10_000_000_000_000,
            1_763_800_000_011,
            1_763_800_000_042,
            1_763_800_001_000,
            1_763_800_000_999,
            1_763_800_000_011,
        ];
        let mut d = super::TsDigits::default();
        let mut got = Vec::new();
        let mut want = Vec::new();
        for ts in edge {
            d.write(&mut got, ts).unwrap();
            got.push(b' ');
            want.extend_from_slice(format!("{ts} ").as_bytes());
        }
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
        let around = prop_oneof![
            1_000_000_000_000i64..10_000_000_000_000,
            1_763_800_000_000i64..1_763_800_005_000,
            any::<i64>(),
        ];
        proptest!(ProptestConfig::with_cases(500), |(ts in proptest::collection::vec(around, 1..40))| {
            let mut d = super::TsDigits::default();
            for t in ts {
                let mut got = Vec::new();
                d.write(&mut got, t).unwrap();
                prop_assert_eq!(got, t.to_string().into_bytes());
            }
        });
    }

    use super::*;
    use proptest::prelude::*;

    /// The word-at-a-time backslash check agrees with a byte search for a
    /// backslash at every place of every length up to past the word path,
    /// among bytes that differ from it in one bit (and 0xDC, whose
    /// difference is the high bit alone, the carry case of the trick).
    #[test]
    fn has_backslash_agrees_with_a_byte_search() {
        for len in 0..80 {
            for fill in [b'a', b'\\' ^ 1, b'\\' ^ 0x80, 0xff, 0, b'\\' - 1, b'\\' + 1] {
                let plain = vec![fill; len];
                assert_eq!(
                    has_backslash(&plain),
                    plain.contains(&b'\\'),
                    "{len} {fill}"
                );
                for at in 0..len {
                    let mut b = plain.clone();
                    b[at] = b'\\';
                    assert!(has_backslash(&b), "{len} {fill} at {at}");
                }
            }
        }
    }

    /// What serde_json makes of a literal (`None`: it refuses it).
    fn serde_text(lit: &str) -> Option<String> {
        serde_json::from_str::<String>(lit).ok()
    }

    #[test]
    fn unescapes_like_serde_json() {
        for lit in [
            r#""""#,
            r#""plain""#,
            r#""a\nb\tc\r\b\f\/\\\"""#,
            r#""caf\u00e9 \u00E9 \u20AC \ud83d\ude00 \uD83D\uDE00""#,
            r#""lone \ud83d end""#,
            r#""lone \ude00 low""#,
            r#""hi then hi \ud83d\ud83d""#,
            r#""hi then other \ud83d\n""#,
            r#""\u00""#,
            r#""\x41""#,
            r#""\uZZZZ""#,
            r#""\u0000 nul""#,
        ] {
            assert_eq!(
                unescape_literal(lit).map(Cow::into_owned),
                serde_text(lit),
                "{lit}"
            );
        }
        assert_eq!(unescape_literal("12"), None);
        // Where serde_json refuses, so does this (the fast path must not
        // invent an answer).
        assert_eq!(unescape_literal(r#""lone \ud83d end""#), None);
        assert_eq!(unescape_fast(r"lone \ud83d end", usize::MAX), None);
        assert_eq!(unescape_fast(r"\x41", usize::MAX), None);
        assert_eq!(
            unescape_fast(r"a\nb\u00e9\ud83d\ude00", usize::MAX).as_deref(),
            Some("a\nbé😀")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Any string serde_json writes reads back the same.
        #[test]
        fn unescape_reverses_serde_json(s in any::<String>()) {
            let lit = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(unescape_literal(&lit).map(Cow::into_owned), Some(s));
        }

        /// A literal's first lines are the start of its whole text, cut
        /// after the newline that ends the last of them.
        #[test]
        fn a_head_is_the_text_cut_after_its_lines(
            parts in proptest::collection::vec(
                prop_oneof![Just("\n"), Just("\r\n"), Just("ab"), Just("\""), Just("é"), Just("\u{1}")],
                0..30,
            ),
            lines in 1usize..8,
        ) {
            let s = parts.concat();
            let lit = serde_json::to_string(&s).unwrap();
            let want = match s.match_indices('\n').nth(lines - 1) {
                Some((at, _)) => &s[..=at],
                None => &s[..],
            };
            let head = unescape_literal_head(&lit, lines).unwrap();
            prop_assert_eq!(head.as_ref(), want);
            // Written with `\u000a` for a newline: the same.
            let spelled = lit.replace("\\n", "\\u000a");
            let head = unescape_literal_head(&spelled, lines).unwrap();
            prop_assert_eq!(head.as_ref(), want);
        }

        /// Escaping by blocks writes what serde_json writes, for strings of
        /// every length with characters to escape anywhere (block edges too).
        #[test]
        fn write_str_agrees_with_serde_json(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("\""), Just("\\"), Just("\n"), Just("\u{1}"), Just("\u{1f}"),
                    Just("\u{7f}"), Just("a"), Just("0123456789abcdef"), Just("é"), Just("🙏"),
                ],
                0..40,
            )
        ) {
            let s = parts.concat();
            prop_assert_eq!(quote(&s), serde_json::to_string(&s).unwrap());
            // The input's string scanner finds the end of what was written.
            let lit = quote(&s);
            prop_assert_eq!(
                crate::input::scan::checked_string_end(&lit.as_bytes()[1..]),
                Some((lit.len() - 2, lit.contains('\\')))
            );
        }

        /// Pieces of escapes, valid or not, put together at random: the same
        /// answer as serde_json.
        #[test]
        fn unescape_agrees_with_serde_json_on_any_escape(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(r"\n"), Just(r#"\""#), Just(r"\\"), Just(r"\/"), Just(r"\u00e9"),
                    Just(r"\ud83d"), Just(r"\ude00"), Just(r"\u"), Just(r"\x"), Just(r"\u12"),
                    Just("é"), Just("ab"), Just("12"), Just(r"\uDBFF\uDFFF"), Just(r"\t\r"),
                    // Runs across the 16-byte blocks the search tests.
                    Just("0123456789abcdefghi"), Just("0123456789abcdef"),
                ],
                0..24,
            )
        ) {
            let lit = format!("\"{}\"", parts.concat());
            prop_assert_eq!(unescape_literal(&lit).map(Cow::into_owned), serde_text(&lit), "{}", lit);
        }
    }

    #[test]
    fn escapes_like_serde_json() {
        for s in [
            "plain",
            "quote \" and \\ backslash",
            "ctl \u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1b}\u{1f}",
            "unicode ✓ \u{2028} é",
            "",
        ] {
            assert_eq!(quote(s), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    /// Each escaped byte at every offset of a block, beside plain and
    /// non-ASCII bytes (whose high bit must not hide one).
    #[test]
    fn escapes_at_every_offset_like_serde_json() {
        for c in [
            '"', '\\', '\u{0}', '\n', '\u{1f}', 'é', '\u{7f}', ' ', '!', '#', '[',
        ] {
            for at in 0..20 {
                for len in [at + 1, at + 8, 24] {
                    let s: String = (0..len.max(at + 1))
                        .map(|i| {
                            if i == at {
                                c
                            } else if i % 5 == 4 {
                                'ü'
                            } else {
                                'a'
                            }
                        })
                        .collect();
                    assert_eq!(quote(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
                }
            }
        }
    }

    /// Every length from empty to three blocks, with a byte to escape at
    /// every offset, alone or twice in a block: the short string's padded
    /// copy, the last block read overlapping the one before, and several
    /// escapes of one block's mask all write what serde_json writes.
    #[test]
    fn escapes_in_every_block_shape_like_serde_json() {
        for c in ['"', '\\', '\u{0}', '\n', '\u{1f}', '\u{7f}', 'é'] {
            for len in 0..=48 {
                for at in 0..len {
                    for second in [None, Some(at + 1), Some(at + 3), Some(len - 1)] {
                        let s: String = (0..len)
                            .map(|i| {
                                if i == at || Some(i) == second {
                                    c
                                } else if i % 7 == 6 {
                                    'ü'
                                } else {
                                    'a'
                                }
                            })
                            .collect();
                        assert_eq!(quote(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
                    }
                }
                let plain = "b".repeat(len);
                assert_eq!(quote(&plain), serde_json::to_string(&plain).unwrap());
            }
        }
    }

    proptest! {
        #[test]
        fn any_string_escapes_like_serde_json(s in "(?s).{0,40}") {
            prop_assert_eq!(quote(&s), serde_json::to_string(&s).unwrap());
        }
    }

    #[test]
    fn lax_fields_tolerate_other_types() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: LaxStr<'a>,
            b: LaxInt,
            c: LaxInt,
            d: LaxBool,
        }
        let t: T =
            serde_json::from_str(r#"{"a":5,"b":"1785547476498","c":12.7,"d":"yes"}"#).unwrap();
        assert_eq!(t.a.0, None);
        assert_eq!(t.b.0, Some(1785547476498));
        assert_eq!(t.c.0, Some(12));
        assert_eq!(t.d.0, None);
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let j = r#"{"a":"plain","b":"esc\naped"}"#;
        let m: Members = serde_json::from_str(j).unwrap();
        assert!(matches!(m.str("a"), Some(Cow::Borrowed("plain"))));
        assert_eq!(m.str("b").as_deref(), Some("esc\naped"));
        assert!(matches!(m.str("b"), Some(Cow::Owned(_))));
    }

    #[test]
    fn members_keep_order_and_drop() {
        let raw: Box<RawValue> =
            serde_json::from_str(r#"{"z":1,"a":{"x":[1,2]},"m":"s"}"#).unwrap();
        let m = Members::of(&raw).unwrap();
        assert_eq!(m.to_json_without(&["a"]).get(), r#"{"z":1,"m":"s"}"#);
        assert!(Members::of(&serde_json::from_str::<Box<RawValue>>("[1]").unwrap()).is_none());
    }
}
