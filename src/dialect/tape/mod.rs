//! A one-pass reader of a line's JSON, for the readers whose lines are
//! long and mostly strings kept raw (Claude Code's lines, Codex's
//! payloads): the same `Deserialize` types as serde_json gives, from one
//! scan of the text. First built for Claude's figures-only read
//! ([`Reads::Figures`]), then used for every Claude read and for Codex.
//!
//! serde_json passes over a string a byte (or a word) at a time, and a
//! field kept raw (`&RawValue`) is passed over once to find its end and
//! again when it is read. Here the structure is walked with the input
//! module's string scanner (a block at a time) or a line's quote index
//! ([`quotes`]), each member's value is cut out as a slice, and only the
//! fields a type asks for are handed on: a raw field is that slice as it
//! is, any other one goes to serde_json on its few bytes.
//!
//! The answer is serde_json's or none: any text this reader does not fully
//! accept (a byte below 0x20 anywhere, an escape other than the simple
//! ones or `\uXXXX` outside the surrogates, a key with an escape, bad
//! nesting or literals, numbers outside JSON's grammar, nesting deeper than
//! [`MAX_DEPTH`], a field serde_json refuses) gives `None`, and the caller
//! reads it with serde_json as before, warnings and all.
//!
//! [`Reads::Figures`]: crate::event::Reads::Figures

use std::fmt;

use serde::Deserialize;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

mod quotes;

use crate::input::scan::checked_string_end;
use quotes::Quotes;

/// serde_json's name for a raw value: its `&RawValue` asks a deserializer
/// for a newtype struct of this name, then reads the raw text as a borrowed
/// string (serde_json 1.x, `src/raw.rs`; the unit tests check it still does).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Deeper nesting is left to serde_json (whose own limit is 128).
const MAX_DEPTH: u32 = 100;

type Error = serde_json::Error;

fn refuse() -> Error {
    de::Error::custom("not read by the fast reader")
}

/// `json` read as `T`, when this reader accepts it whole; `None` means
/// "ask serde_json" (the tests' way in without a tape).
#[cfg(test)]
pub(crate) fn from_str<'a, T: Deserialize<'a>>(json: &'a str) -> Option<T> {
    // A byte below 0x20 is an error inside a string and whitespace outside
    // one: either way serde_json decides.
    if has_control(json.as_bytes()) {
        return None;
    }
    let t = json.trim_matches(' ');
    T::deserialize(Value {
        s: t,
        checked: false,
    })
    .ok()
}

/// `raw` read as `T`, as [`from_str`] would: a raw value is valid JSON,
/// so a byte below 0x20 in it can only be whitespace outside a string,
/// which the walk refuses where it meets it.
pub(crate) fn from_raw<'a, T: Deserialize<'a>>(raw: &'a str) -> Option<T> {
    T::deserialize(Value {
        s: raw,
        checked: true,
    })
    .ok()
}

/// Whether any byte is below 0x20: a whole block at a time (no early exit
/// inside one), which the compiler turns into vector compares.
#[cfg(test)]
fn has_control(b: &[u8]) -> bool {
    b.chunks(64)
        .any(|c| c.iter().fold(0u8, |a, &x| a | u8::from(x < 0x20)) != 0)
}

/// The end (just past its closing quote) of the string whose body starts at
/// `s[i]`, and whether it held an escape; `None` for a string this reader
/// leaves to serde_json: a raw byte below 0x20, an escape serde_json
/// refuses or a surrogate one, or no closing quote. The input module's
/// scanner, which the other readers use: a tool's output, kilobytes with
/// an escape every few dozen bytes, is walked a block at a time.
#[inline]
fn string_end(s: &[u8], i: usize) -> Option<(usize, bool)> {
    let (end, escaped) = checked_string_end(s.get(i..)?)?;
    Some((i + end + 1, escaped))
}

/// A scan position in a JSON text that starts with the value being walked.
struct Scan<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
    /// The text's quote index, when it was made (a whole line's walk).
    quotes: Option<&'a Quotes>,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn lit(&mut self, l: &[u8]) -> Option<()> {
        let end = self.i + l.len();
        (self.s.get(self.i..end)? == l).then(|| self.i = end)
    }

    /// Past a string at `i` (its `"`).
    #[inline(always)]
    fn string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        self.i = match self.quotes {
            Some(q) => q.string_end(self.i)?,
            None => string_end(self.s, self.i)?.0,
        };
        Some(())
    }

    /// Past a key at `i` (its `"`); whether it held an escape.
    #[inline(always)]
    fn key(&mut self) -> Option<bool> {
        self.eat(b'"')?;
        let from = self.i;
        Some(match self.quotes {
            Some(q) => {
                self.i = q.string_end(from)?;
                q.any_slash(from, self.i - 1)
            }
            None => {
                let (end, escaped) = string_end(self.s, from)?;
                self.i = end;
                escaped
            }
        })
    }

    fn digits(&mut self) -> usize {
        let from = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - from
    }

    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// Past one value at `i`, checked.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string(),
            b'{' => self.container(b'}'),
            b'[' => self.container(b']'),
            b't' => self.lit(b"true"),
            b'f' => self.lit(b"false"),
            b'n' => self.lit(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// After a member or element: past a `,` (`true`: another follows) or
    /// past `close` (`false`); `None` for anything else.
    fn next_or_close(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    fn container(&mut self, close: u8) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.eat(close).is_none() {
            loop {
                if close == b'}' {
                    self.key()?;
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                }
                self.value()?;
                if !self.next_or_close(close)? {
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(())
    }
}

/// One JSON value's text, exactly (no space around it).
struct Value<'a> {
    s: &'a str,
    /// Cut out of its parent, which checked it; a whole text is checked as
    /// it is walked, or before it is handed on.
    checked: bool,
}

impl<'a> Value<'a> {
    /// Hand the value to serde_json (a scalar, or a type that asked for
    /// something this reader does not walk).
    fn json<V, F>(self, f: F) -> Result<V, Error>
    where
        F: FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'a>>) -> Result<V, Error>,
    {
        // A whole text left to serde_json is checked here first, so that
        // one this reader would refuse is never serde_json's alone.
        self.check()?;
        let mut de = serde_json::Deserializer::from_str(self.s);
        let v = f(&mut de)?;
        de.end()?;
        Ok(v)
    }

    /// Check a text not cut out of a checked parent.
    fn check(&self) -> Result<(), Error> {
        if self.checked {
            return Ok(());
        }
        let mut sc = Scan {
            s: self.s.as_bytes(),
            i: 0,
            depth: 0,
            quotes: None,
        };
        sc.value().ok_or_else(refuse)?;
        if sc.i == self.s.len() {
            Ok(())
        } else {
            Err(refuse())
        }
    }

    fn walk(&self) -> Walk<'a> {
        Walk {
            sc: Scan {
                s: self.s.as_bytes(),
                i: 1,
                depth: 1,
                quotes: None,
            },
            src: self.s,
            first: true,
        }
    }
}

/// The members of an object or the elements of an array, walked once.
struct Walk<'a> {
    sc: Scan<'a>,
    src: &'a str,
    first: bool,
}

impl<'a> Walk<'a> {
    /// Before the next member or element: `false` at the closing bracket,
    /// which must end the text.
    fn more(&mut self, close: u8) -> Result<bool, Error> {
        self.sc.ws();
        if self.first {
            self.first = false;
            if self.sc.eat(close).is_none() {
                return Ok(true);
            }
        } else {
            match self.sc.peek() {
                Some(b',') => {
                    self.sc.i += 1;
                    self.sc.ws();
                    return Ok(true);
                }
                Some(c) if c == close => self.sc.i += 1,
                _ => return Err(refuse()),
            }
        }
        if self.sc.i == self.src.len() {
            Ok(false)
        } else {
            Err(refuse())
        }
    }

    /// The next value's text, checked.
    fn next_value(&mut self) -> Result<Value<'a>, Error> {
        let from = self.sc.i;
        self.sc.value().ok_or_else(refuse)?;
        Ok(Value {
            s: &self.src[from..self.sc.i],
            checked: true,
        })
    }
}

impl<'de> MapAccess<'de> for Walk<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if !self.more(b'}')? {
            return Ok(None);
        }
        let from = self.sc.i;
        if self.sc.key().ok_or_else(refuse)? {
            // An escaped key is serde_json's to unescape.
            return Err(refuse());
        }
        let key = &self.src[from + 1..self.sc.i - 1];
        self.sc.ws();
        self.sc.eat(b':').ok_or_else(refuse)?;
        self.sc.ws();
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let v = self.next_value()?;
        seed.deserialize(v)
    }
}

impl<'de> SeqAccess<'de> for Walk<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if !self.more(b']')? {
            return Ok(None);
        }
        let v = self.next_value()?;
        seed.deserialize(v).map(Some)
    }
}

/// serde_json's raw value handshake: one key, the token, whose value is
/// the raw text.
struct Raw<'a> {
    s: Option<&'a str>,
}

impl<'de> MapAccess<'de> for Raw<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.s.is_none() {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(RAW_TOKEN))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let s = self.s.take().ok_or_else(refuse)?;
        seed.deserialize(BorrowedStrDeserializer::new(s))
    }
}

/// The `Deserializer` methods that this reader does not walk itself,
/// passed on through `self.$via(|d| …)` to the deserializer behind it
/// (serde_json for a [`Value`], a [`Value`] for a [`Taped`]).
macro_rules! pass_on {
    ($via:ident; $($m:ident($($arg:ident: $t:ty),*))*) => {
        $(fn $m<V: Visitor<'de>>(self, $($arg: $t,)* v: V) -> Result<V::Value, Error> {
            self.$via(|d| d.$m($($arg,)* v))
        })*
    };
}

/// The methods both deserializers pass on: scalars, and the shapes this
/// reader does not walk.
macro_rules! pass_on_scalars {
    ($via:ident) => {
        pass_on! { $via;
            deserialize_unit_struct(name: &'static str)
            deserialize_tuple(len: usize)
            deserialize_tuple_struct(name: &'static str, len: usize)
            deserialize_enum(name: &'static str, variants: &'static [&'static str])
            deserialize_bool() deserialize_i8() deserialize_i16() deserialize_i32() deserialize_i64()
            deserialize_i128() deserialize_u8() deserialize_u16() deserialize_u32() deserialize_u64()
            deserialize_u128() deserialize_f32() deserialize_f64() deserialize_char()
            deserialize_str() deserialize_string() deserialize_bytes() deserialize_byte_buf()
            deserialize_unit() deserialize_identifier()
        }
    };
}

impl<'de> Deserializer<'de> for Value<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.s.as_bytes().first() {
            Some(b'{') => v.visit_map(self.walk()),
            Some(b'[') => v.visit_seq(self.walk()),
            _ => self.json(|d| d.deserialize_any(v)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.s.as_bytes().first() {
            Some(b'{') => v.visit_map(self.walk()),
            _ => self.json(|d| d.deserialize_map(v)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match self.s.as_bytes().first() {
            Some(b'{') => v.visit_map(self.walk()),
            // serde_json also reads a struct from an array; rare enough
            // to leave to it.
            _ => self.json(|d| d.deserialize_struct(name, fields, v)),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.s.as_bytes().first() {
            Some(b'[') => v.visit_seq(self.walk()),
            _ => self.json(|d| d.deserialize_seq(v)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        if self.s == "null" {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        if name == RAW_TOKEN {
            self.check()?;
            return v.visit_map(Raw { s: Some(self.s) });
        }
        self.json(|d| d.deserialize_newtype_struct(name, v))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        // Nothing to read: a value cut out of its parent was checked then.
        self.check()?;
        v.visit_unit()
    }

    pass_on_scalars!(json);
}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.s)
    }
}

thread_local! {
    /// The quote index of the line being walked, its buffers kept from
    /// line to line.
    static QUOTES: std::cell::RefCell<Quotes> = std::cell::RefCell::default();
}

/// Containers recorded on a [`Tape`] down to this depth (the line, its
/// `message`, the message's `content`, a content block).
const RECORD: u32 = 4;

/// One member (or element) of a recorded container: where its key and
/// value are in the text, and its own members when it is recorded too.
#[derive(Clone, Copy)]
#[cfg_attr(test, derive(PartialEq, Debug))]
struct Node {
    key: (u32, u32),
    val: (u32, u32),
    kids: Option<(u32, u32)>,
}

/// One walk of a line, kept: the members of its containers down to
/// [`RECORD`] levels, so that the line's envelope, its message and the
/// message's blocks are each read from it without another pass over their
/// texts. Offsets are the text's own, so a copy of the line reads with the
/// tape of the original.
#[derive(Clone, Default)]
pub(crate) struct Tape {
    /// The members of each recorded container, one run per container.
    nodes: Vec<Node>,
    /// The recorded containers: where each starts and ends, its run.
    index: Vec<(u32, u32, (u32, u32))>,
    /// The members of the containers being walked.
    stack: Vec<Node>,
    /// The length of the text it was built from.
    len: usize,
}

impl Tape {
    /// Whether its buffers are of a size worth keeping for another line.
    pub(crate) fn small(&self) -> bool {
        self.nodes.capacity() + self.index.capacity() + self.stack.capacity() <= 4096
    }

    /// Walk the object `text` (a whole line): `false` when this reader does
    /// not accept it (then serde_json reads the line).
    pub(crate) fn build(&mut self, text: &str) -> bool {
        QUOTES.with(|q| {
            let mut q = q.borrow_mut();
            let walked = q.index(text.as_bytes()) && self.build_with(text, Some(&q));
            q.trim();
            walked
        })
    }

    /// [`Tape::build`], with the line's quote index or (`None`) by a search
    /// for each string's end from its start.
    fn build_with(&mut self, text: &str, quotes: Option<&Quotes>) -> bool {
        self.nodes.clear();
        self.index.clear();
        self.stack.clear();
        self.len = text.len();
        let b = text.as_bytes();
        // No pass for bytes below 0x20 first: the string walk refuses them
        // inside strings, and the walk takes none between tokens (only
        // spaces), so a line holding one is refused either way (the quote
        // index refuses it before the walk).
        if b.len() >= u32::MAX as usize || b.first() != Some(&b'{') {
            return false;
        }
        let mut sc = Scan {
            s: b,
            i: 0,
            depth: 0,
            quotes,
        };
        let Some(kids) = self.container(&mut sc, 1) else {
            return false;
        };
        if sc.i != b.len() {
            return false;
        }
        self.index.push((0, sc.i as u32, kids));
        self.index.sort_unstable_by_key(|e| e.0);
        true
    }

    /// Walk the container at `sc.i`, recording its members; their run.
    fn container(&mut self, sc: &mut Scan<'_>, depth: u32) -> Option<(u32, u32)> {
        let close = if sc.peek()? == b'{' { b'}' } else { b']' };
        sc.depth += 1;
        if sc.depth > MAX_DEPTH {
            return None;
        }
        sc.i += 1;
        sc.ws();
        let base = self.stack.len();
        if sc.eat(close).is_none() {
            loop {
                let key = if close == b'}' {
                    let from = sc.i;
                    if sc.key()? {
                        return None;
                    }
                    let k = (from as u32 + 1, sc.i as u32 - 1);
                    sc.ws();
                    sc.eat(b':')?;
                    sc.ws();
                    k
                } else {
                    (0, 0)
                };
                let from = sc.i;
                let kids = match sc.peek()? {
                    b'{' | b'[' if depth < RECORD => {
                        let k = self.container(sc, depth + 1)?;
                        self.index.push((from as u32, sc.i as u32, k));
                        Some(k)
                    }
                    _ => {
                        sc.value()?;
                        None
                    }
                };
                self.stack.push(Node {
                    key,
                    val: (from as u32, sc.i as u32),
                    kids,
                });
                if !sc.next_or_close(close)? {
                    break;
                }
            }
        }
        sc.depth -= 1;
        let first = self.nodes.len() as u32;
        self.nodes.extend(self.stack.drain(base..));
        Some((first, self.nodes.len() as u32 - first))
    }

    /// `raw`, a container inside the text at address `base` the tape was
    /// built from, read as `T` from the tape; `None` when it is not a
    /// recorded container of it, or a field is refused.
    pub(crate) fn read<'de, T: Deserialize<'de>>(&self, base: usize, raw: &'de str) -> Option<T> {
        let off = (raw.as_ptr() as usize).checked_sub(base)?;
        if off + raw.len() > self.len {
            return None;
        }
        let at = self
            .index
            .binary_search_by_key(&(off as u32), |e| e.0)
            .ok()?;
        let (_, end, kids) = self.index[at];
        if end as usize != off + raw.len() {
            return None;
        }
        T::deserialize(Taped {
            s: raw,
            off: off as u32,
            tape: self,
            kids: Some(kids),
        })
        .ok()
    }
}

/// A value read from a [`Tape`]: its text, where it starts in the line,
/// and its members when they were recorded.
struct Taped<'t, 'de> {
    s: &'de str,
    off: u32,
    tape: &'t Tape,
    kids: Option<(u32, u32)>,
}

impl<'de> Taped<'_, 'de> {
    fn plain(self) -> Value<'de> {
        Value {
            s: self.s,
            checked: true,
        }
    }

    /// `f` of the value read as plain text (for [`pass_on!`]).
    fn via_plain<R>(self, f: impl FnOnce(Value<'de>) -> Result<R, Error>) -> Result<R, Error> {
        f(self.plain())
    }

    fn members(&self, (first, n): (u32, u32)) -> Members<'_, 'de> {
        Members {
            s: self.s,
            off: self.off,
            tape: self.tape,
            at: first,
            end: first + n,
        }
    }
}

/// The recorded members of a container.
struct Members<'t, 'de> {
    s: &'de str,
    off: u32,
    tape: &'t Tape,
    at: u32,
    end: u32,
}

impl<'t, 'de> Members<'t, 'de> {
    fn slice(&self, (a, b): (u32, u32)) -> &'de str {
        &self.s[(a - self.off) as usize..(b - self.off) as usize]
    }

    fn take(&mut self) -> Option<Taped<'t, 'de>> {
        if self.at == self.end {
            return None;
        }
        let n = self.tape.nodes[self.at as usize];
        self.at += 1;
        Some(Taped {
            s: self.slice(n.val),
            off: n.val.0,
            tape: self.tape,
            kids: n.kids,
        })
    }
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.at == self.end {
            return Ok(None);
        }
        let key = self.slice(self.tape.nodes[self.at as usize].key);
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(self.take().ok_or_else(refuse)?)
    }
}

impl<'de> SeqAccess<'de> for Members<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.take() {
            Some(v) => seed.deserialize(v).map(Some),
            None => Ok(None),
        }
    }
}

impl<'de> Deserializer<'de> for Taped<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match (self.kids, self.s.as_bytes().first()) {
            (Some(k), Some(b'{')) => v.visit_map(self.members(k)),
            (Some(k), Some(b'[')) => v.visit_seq(self.members(k)),
            _ => self.plain().deserialize_any(v),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match (self.kids, self.s.as_bytes().first()) {
            (Some(k), Some(b'{')) => v.visit_map(self.members(k)),
            _ => self.plain().deserialize_map(v),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        match (self.kids, self.s.as_bytes().first()) {
            (Some(k), Some(b'{')) => v.visit_map(self.members(k)),
            _ => self.plain().deserialize_struct(name, fields, v),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match (self.kids, self.s.as_bytes().first()) {
            (Some(k), Some(b'[')) => v.visit_seq(self.members(k)),
            _ => self.plain().deserialize_seq(v),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        if self.s == "null" {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    pass_on_scalars!(via_plain);
    pass_on! { via_plain;
        deserialize_newtype_struct(name: &'static str) deserialize_ignored_any()
    }
}

#[cfg(test)]
mod tests {
    //! The one-pass reader's answer is serde_json's or none: over every line
    //! of the Claude fixtures, whole and randomly damaged, each type the
    //! readers use (and `serde_json::Value`, which asks for everything) is
    //! read both ways and compared.

    use std::fmt::Debug;

    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::{Tape, from_raw, from_str};

    /// A line's message, kept raw.
    #[derive(Deserialize)]
    struct MessageOf<'a> {
        #[serde(borrow, default)]
        message: Option<&'a RawValue>,
    }

    fn lines() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut out = Vec::new();
        for d in ["claude-project", "claude"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(d))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            files.sort();
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                out.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned));
            }
        }
        assert!(out.len() > 200, "only {} fixture lines", out.len());
        out
    }

    /// The tape's reading of `line` as `T`, checked against serde_json's;
    /// whether the tape read it.
    fn same<'a, T: Deserialize<'a> + Debug>(tape: &mut Tape, line: &'a str) -> bool {
        let serde = serde_json::from_str::<T>(line);
        let plain = from_str::<T>(line);
        if let Some(p) = &plain {
            let s = serde.as_ref().expect("accepted what serde_json refuses");
            assert_eq!(format!("{p:?}"), format!("{s:?}"), "{line}");
        }
        // The walk by the line's quote index and the walk by a search from
        // each string's start accept the same lines, with the same tapes.
        let mut searched = Tape::default();
        let by_search = searched.build_with(line, None);
        assert_eq!(by_search, tape.build(line), "{line}");
        if !by_search {
            return false;
        }
        assert_eq!(searched.nodes, tape.nodes, "{line}");
        assert_eq!(searched.index, tape.index, "{line}");
        let Some(t) = tape.read::<T>(line.as_ptr() as usize, line) else {
            return false;
        };
        let s = serde.expect("the tape accepted what serde_json refuses");
        assert_eq!(format!("{t:?}"), format!("{s:?}"), "{line}");
        // A recorded part, read from the tape and from its own text.
        if let Ok(m) = serde_json::from_str::<MessageOf<'_>>(line)
            && let Some(msg) = m.message
        {
            let s = serde_json::from_str::<crate::dialect::claude::Message<'_>>(msg.get());
            if let Some(t) =
                tape.read::<crate::dialect::claude::Message<'_>>(line.as_ptr() as usize, msg.get())
            {
                assert_eq!(
                    format!("{t:?}"),
                    format!("{:?}", s.as_ref().unwrap()),
                    "{line}"
                );
            }
            if let Some(r) = from_raw::<crate::dialect::claude::Message<'_>>(msg.get()) {
                assert_eq!(
                    format!("{r:?}"),
                    format!("{:?}", s.as_ref().unwrap()),
                    "{line}"
                );
            }
        }
        true
    }

    /// A part of `line` (`part` is a slice of it) read as `T` from the
    /// line's walk and from its own text, each checked against serde_json
    /// where the reader took it; whether the walk took it.
    fn same_part<'a, T: Deserialize<'a> + Debug>(
        tape: &Tape,
        line: &'a str,
        part: &'a str,
    ) -> bool {
        // serde_json's answer, which either fast read must give when it
        // gives one (a refusal is `None`, never an error of its own).
        let want = serde_json::from_str::<T>(part)
            .ok()
            .map(|v| format!("{v:?}"));
        if let Some(r) = from_raw::<T>(part) {
            assert_eq!(Some(format!("{r:?}")), want, "{line}");
        }
        let Some(t) = tape.read::<T>(line.as_ptr() as usize, part) else {
            return false;
        };
        assert_eq!(Some(format!("{t:?}")), want, "{line}");
        true
    }

    /// The content blocks of every fixture message, as the stream reader
    /// reads them for every output (all at once, and one at a time from
    /// their raw texts), read from the line's walk as serde_json reads them.
    #[test]
    fn every_fixture_block_reads_as_serde_json_reads_it() {
        use crate::dialect::claude::{Block, Message};
        let (mut blocks, mut taken) = (0, 0);
        let mut tape = Tape::default();
        for line in lines() {
            if !tape.build(&line) {
                continue;
            }
            let Ok(m) = serde_json::from_str::<MessageOf<'_>>(&line) else {
                continue;
            };
            let Some(msg) = m
                .message
                .and_then(|m| serde_json::from_str::<Message<'_>>(m.get()).ok())
            else {
                continue;
            };
            let Some(content) = msg.content.filter(|c| c.get().starts_with('[')) else {
                continue;
            };
            same_part::<Vec<Block<'_>>>(&tape, &line, content.get());
            for raw in serde_json::from_str::<Vec<&RawValue>>(content.get()).unwrap() {
                blocks += 1;
                taken += usize::from(same_part::<Block<'_>>(&tape, &line, raw.get()));
            }
        }
        assert!(blocks >= 100, "only {blocks} blocks");
        assert!(taken * 10 >= blocks * 9, "{taken} of {blocks}");
    }

    fn all(tape: &mut Tape, line: &str) -> bool {
        let a = same::<serde_json::Value>(tape, line);
        let b = same::<crate::dialect::claude::Line<'_>>(tape, line);
        let c = same::<crate::dialect::claude::project::Line<'_>>(tape, line);
        let d = same::<Vec<&RawValue>>(tape, line);
        let _ = d;
        a && b && c
    }

    #[test]
    fn every_fixture_line_reads_as_serde_json_reads_it() {
        let lines = lines();
        let mut tape = Tape::default();
        let taken = lines.iter().filter(|l| all(&mut tape, l)).count();
        // Nearly every real line is the fast reader's (the others fall back).
        assert!(taken * 10 >= lines.len() * 9, "{taken} of {}", lines.len());
    }

    /// xorshift: the same damage on every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    #[test]
    fn damaged_lines_fall_back_or_read_as_serde_json_reads_them() {
        const BITS: &[&str] = &[
            "\\",
            "\"",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\n",
            "\t",
            "\u{1}",
            "0",
            "-",
            "e",
            ".",
            "1e999",
            "\\u",
            "\\ud83d",
            "\\u00e9",
            "n",
            "t",
            "null",
            "é",
            "\"usage\":{}",
            "\"type\":\"x\",",
        ];
        let lines = lines();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut tape = Tape::default();
        let (mut taken, mut tried) = (0, 0);
        for line in &lines {
            for _ in 0..20 {
                let mut l = line.clone();
                for _ in 0..1 + rng.next(3) {
                    let mut at = rng.next(l.len() + 1);
                    while !l.is_char_boundary(at) {
                        at -= 1;
                    }
                    match rng.next(3) {
                        0 => l.insert_str(at, BITS[rng.next(BITS.len())]),
                        1 => {
                            let mut end = (at + 1 + rng.next(8)).min(l.len());
                            while !l.is_char_boundary(end) {
                                end -= 1;
                            }
                            l.replace_range(at..end, "");
                        }
                        _ => {
                            let mut end = (at + 1 + rng.next(40)).min(l.len());
                            while !l.is_char_boundary(end) {
                                end -= 1;
                            }
                            let dup = l[at..end].to_owned();
                            l.insert_str(end, &dup);
                        }
                    }
                }
                tried += 1;
                if all(&mut tape, &l) {
                    taken += 1;
                }
            }
        }
        // The damage must leave lines both ways, or the test tests nothing.
        assert!(taken > tried / 20 && taken < tried, "{taken} of {tried}");
    }

    #[test]
    fn shapes_read_as_serde_json_reads_them() {
        let mut tape = Tape::default();
        for l in [
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"a\"b\\c\u00e9\n"}]},"toolUseResult":{"usage":{"input_tokens":5}}}"#,
            r#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":2},"content":[{"type":"text","text":"\u2028 é 😀"}]}}"#,
            r#"{ "type" : "assistant" , "message" : { "id" : "m" } }"#,
            r#"{"type":"x","n":-0.5e+3,"a":[],"o":{},"t":true,"f":false,"z":null}"#,
            r#"{"type":"x","type":"y"}"#,
            r#"{"ty\u0070e":"x"}"#,
            r#"{"type":"x"} trailing"#,
            r#"{"type":"x","n":01}"#,
            r#"{"type":"\ud83d\ude00"}"#,
            r#"{"timestamp":1e999}"#,
            r#"[1,2]"#,
        ] {
            all(&mut tape, l);
        }
        // Deeper than the walk goes: left to serde_json, which refuses it too.
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert!(!all(&mut tape, &deep));
        // A huge line: one text of 20 MB with an escape every 40 bytes.
        let big = format!(
            r#"{{"type":"user","message":{{"content":"{}"}}}}"#,
            "0123456789abcdefghijklmnopqrstuvwxyz\\n".repeat(500_000)
        );
        assert!(all(&mut tape, &big));
        // Escaped keys are serde_json's.
        assert!(!tape.build(r#"{"ty\u0070e":"x"}"#));
    }
}
