//! cursor-agent `--output-format stream-json [--stream-partial-output]`.
//!
//! The format is described in docs/dialects.md#cursor-agent. The parts
//! that shape this parser:
//! - an `assistant` event is a delta iff it has `timestamp_ms` and no
//!   `model_call_id`; anything else repeats text (a recap) and is handed to
//!   the dedupe transform as [`Item::Recap`];
//! - `tool_call` holds one key ending in `ToolCall` (or `function`) naming
//!   the tool; 2026.07 builds put other keys beside it, so the key is found
//!   by its name, never by position;
//! - shell results carry the output twice (`stdout` and `interleavedOutput`):
//!   the normalized `output` has it once and `result` keeps neither copy;
//! - usage appears only on `result` (session totals);
//! - a model may write a tool call as text (`[TOOL_CALL]name[ARGS]{…}`):
//!   [`marker`] takes it out of the text and it becomes a call.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::common::error_text;
use super::{Channel, Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::dialect::common::{fill_start_owned, normalize_tool_name};
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SessionStart, Str, ToolEnd, ToolStart, Usage,
    json_null,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxInt, LaxStr, Members, S, Val, lenient_scalars};

/// One cursor-agent line: the union of the fields of every event type.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    subtype: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(default)]
    timestamp_ms: LaxInt,
    #[serde(default)]
    model_call_id: Option<IgnoredAny>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<MessageText<'a>>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_call: Option<ToolCallObj<'a>>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(rename = "permissionMode", borrow, default)]
    permission_mode: LaxStr<'a>,
    #[serde(borrow, default)]
    result: LaxStr<'a>,
    #[serde(default)]
    is_error: LaxBool,
    #[serde(default)]
    duration_ms: LaxInt,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

mod call;
mod fast;
mod marker;
pub mod transcript;

use call::tool_call;

/// Detection: `thinking` and `tool_call` lines, and the lines cursor-agent
/// shares with Claude Code (tried after Claude Code's rule) when they carry
/// what only cursor-agent writes: `timestamp_ms`, `model_call_id`, an
/// init's `apiKeySource`/`permissionMode`, a result's `result` or outcome.
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    let marked = p.timestamp_ms.is_some() || p.model_call_id.is_some();
    let sub = p.sub();
    match p.ty() {
        "system" => sub == "init" && (p.api_key_source.is_some() || p.permission_mode.is_some()),
        "assistant" | "user" => marked,
        "thinking" | "tool_call" => marked || p.call_id.is_some() || p.tool_call.is_some(),
        "result" => p.result.is_some() || sub == "success" || sub.starts_with("error"),
        _ => false,
    }
}

/// Parser state for one cursor-agent input.
#[derive(Default)]
pub struct CursorParser {
    /// When the current thinking phase began (for `thinking_completed.durationMs`).
    thinking_since: Option<i64>,
    /// Whether the first `session_id` was passed on as a hint yet.
    hinted: bool,
    /// Text deltas scanned for tool calls written as text.
    scan: marker::Scanner,
    /// Such calls made from deltas since the last text recap (their marker
    /// text), which the recap repeats and must not make again.
    from_deltas: VecDeque<String>,
    /// Text deltas came since the last text recap.
    deltas_seen: bool,
    /// Calls made from markers so far (for their ids).
    text_calls: u32,
    /// The latest structural tool-call starts of the turn (tool, args, id),
    /// which a marker of the same call repeats.
    structural: VecDeque<(String, String, String)>,
    /// `parse_checked` found the fast paths refuse the record that
    /// `parse` is given next.
    fast_refused: bool,
}

/// How many recent structural calls a marker is compared with.
const RECENT_CALLS: usize = 16;

/// Where scanned text came from.
#[derive(Clone, Copy, PartialEq)]
enum From {
    Delta,
    Recap,
}

impl CursorParser {
    /// The fast paths (fast.rs): `None`, with nothing emitted, for a line
    /// neither takes.
    #[inline]
    fn parse_fast<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Option<Parsed>> {
        if let Some(d) = fast::delta(rec) {
            return self.fast_delta(d, out).map(Some);
        }
        let Some(t) = fast::tool_line(rec) else {
            return Ok(None);
        };
        // What the general path does for the same line.
        if !self.hinted
            && let Some(sid) = t.session_id.as_deref()
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(sid.to_owned())))?;
        }
        self.flush(t.ts, out)?;
        self.tool_call_line(&t.subtype, Some(t.tool_call), t.call_id, t.line, t.ts, out)
            .map(Some)
    }

    /// Emit a delta read by the fast path: the same items the general path
    /// gives for the same line.
    fn fast_delta<'a>(&mut self, d: fast::FastDelta<'a>, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if !self.hinted {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(d.session_id.to_owned())))?;
        }
        let ts = Some(d.ts);
        if d.thinking {
            self.flush(ts, out)?;
            if self.thinking_since.is_none() {
                self.thinking_since = ts;
            }
            out(Item::Event(Event::at(
                ts,
                Kind::ThinkingDelta { text: d.text },
            )))?;
        } else {
            self.text_delta(ts, d.text, out)?;
        }
        Ok(Parsed::Done)
    }

    /// A `tool_call` line (read by either path): a start, a completion or
    /// an update of a call in flight.
    fn tool_call_line<'a>(
        &mut self,
        sub: &str,
        obj: Option<ToolCallObj<'a>>,
        call_id: LaxStr<'a>,
        rec: &'a str,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let ev = |kind| Item::Event(Event::at(ts, kind));
        let Some((mut call, call_id)) = tool_call(obj, call_id, rec) else {
            return keep_unknown(rec, out);
        };
        match sub {
            "started" => {
                let start = call.start(call_id);
                if self.structural.len() == RECENT_CALLS {
                    self.structural.pop_front();
                }
                self.structural.push_back((
                    start.tool_name.to_string(),
                    start.args.get().to_owned(),
                    start.call_id.to_string(),
                ));
                out(ev(Kind::started(start)))?;
            }
            "completed" => {
                // A capture cut at its head holds completions whose
                // start never came; the one made from the args the
                // completion repeats is timed by the 2026.07
                // `startedAtMs` when given, untimed otherwise (the
                // completion's own time would make a false 0 ms).
                let start = Kind::started(call.start(call_id.clone()));
                out(Item::StartIfNew(Event::at(call.started_at, start)))?;
                out(ev(Kind::completed(call.end(call_id))))?;
            }
            // Updates of a call in flight. cursor-agent documents
            // none; a running shell call re-sending its whole output
            // so far (the shape bench/gen_stream.py models) is a
            // cumulative snapshot, anything else is progress.
            _ => match call.output_so_far() {
                Some(text) => out(Item::OutputSnapshot {
                    ts,
                    call_id,
                    stream: OutStream::Stdout,
                    text,
                })?,
                None => out(ev(Kind::ToolCallProgress {
                    call_id,
                    partial: call.args,
                }))?,
            },
        }
        Ok(Parsed::Done)
    }

    /// A text delta: passed on as it is unless it has (or continues) a
    /// marker, the usual case costing one scan for `[`.
    fn text_delta<'a>(
        &mut self,
        ts: Option<i64>,
        text: Str<'a>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        self.deltas_seen = true;
        if self.scan.passes(&text) {
            return out(Item::Event(Event::at(ts, Kind::TextDelta { text })));
        }
        let mut pieces = Vec::new();
        self.scan.feed(&text, &mut pieces);
        self.pieces(ts, pieces, From::Delta, out)
    }

    /// The message's text ended (any line but a text delta): what the
    /// scanner holds is decided now.
    fn flush(&mut self, ts: Option<i64>, out: Out<'_, '_>) -> io::Result<()> {
        if !self.scan.holds() {
            return Ok(());
        }
        let mut pieces = Vec::new();
        self.scan.flush(&mut pieces);
        self.pieces(ts, pieces, From::Delta, out)
    }

    /// Emit scanned pieces: text as deltas (or as one recap per stretch
    /// between calls), calls as calls, malformed markers as text and a notice.
    fn pieces(
        &mut self,
        ts: Option<i64>,
        pieces: Vec<marker::Piece>,
        from: From,
        out: Out<'_, '_>,
    ) -> io::Result<()> {
        let text = |t: String| {
            let text = Cow::Owned(t);
            match from {
                From::Delta => Item::Event(Event::at(ts, Kind::TextDelta { text })),
                From::Recap => Item::Recap {
                    ts,
                    channel: Channel::Text,
                    text,
                },
            }
        };
        let mut recap = String::new();
        for p in pieces {
            match p {
                marker::Piece::Text(t) if from == From::Recap => recap.push_str(&t),
                marker::Piece::Text(t) => out(text(t))?,
                marker::Piece::Call { name, args, raw } => {
                    if from == From::Recap {
                        out(text(std::mem::take(&mut recap)))?;
                    }
                    self.text_call(ts, &name, args, out)?;
                    if from == From::Delta && self.from_deltas.len() < RECENT_CALLS {
                        self.from_deltas.push_back(raw);
                    }
                }
                marker::Piece::Malformed { text: t, why } => {
                    // A recap repeats what its deltas said already.
                    if from == From::Delta || !self.deltas_seen {
                        out(notice(
                            ts,
                            format!(
                                "text that opens a tool call written as text ({}) is not one: {why}; \
                                 kept as text",
                                marker::OPEN
                            ),
                        ))?;
                    }
                    match from {
                        From::Recap => recap.push_str(&t),
                        From::Delta => out(text(t))?,
                    }
                }
            }
        }
        if from == From::Recap {
            out(text(recap))?;
        }
        Ok(())
    }

    /// A tool call the model wrote as text: a call started and completed
    /// (nobody here ran it, so its outcome is unknown), or a notice when it
    /// repeats a structural call of the turn.
    fn text_call(
        &mut self,
        ts: Option<i64>,
        name: &str,
        args: String,
        out: Out<'_, '_>,
    ) -> io::Result<()> {
        let tool = normalize_tool_name(name);
        let value = serde_json::from_str::<serde_json::Value>(&args).ok();
        let same = self.structural.iter().find(|(t, a, _)| {
            *t == tool && serde_json::from_str::<serde_json::Value>(a).ok() == value
        });
        if let Some((_, _, id)) = same {
            let message = format!(
                "the model wrote tool call {id} ({tool}) also as text ({}…): taken out of the text, \
                 not counted twice",
                marker::OPEN
            );
            return out(notice(ts, message));
        }
        self.text_calls += 1;
        let id: Str<'static> = Cow::Owned(format!("text-call-{}", self.text_calls));
        let mut start = ToolStart::new(id.clone(), Cow::Owned(tool.clone()), json_null());
        if let Some(m) = Members::parse(&args) {
            fill_start_owned(&mut start, &m);
        }
        start.args = Json::assembled(args);
        let mut end = ToolEnd::new(id, Cow::Owned(tool), true);
        end.outcome_unknown = true;
        out(Item::Event(Event::at(ts, Kind::started(start))))?;
        // Untimed: nothing says when, or whether, the call ran, and the
        // start's time again would make a false 0 ms.
        out(Item::Event(Event::new(Kind::completed(end))))
    }

    /// A text recap: markers in it that the deltas made calls of already
    /// close the stretch of text before them (it was emitted before the
    /// call); the rest is read as in deltas, one recap per stretch.
    fn text_recap<'a>(
        &mut self,
        ts: Option<i64>,
        text: Str<'a>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let deltas_seen = std::mem::take(&mut self.deltas_seen);
        let known = std::mem::take(&mut self.from_deltas);
        if !text.contains(marker::OPEN) {
            return out(Item::Recap {
                ts,
                channel: Channel::Text,
                text,
            });
        }
        let mut pieces = marker::split(&text);
        let mut known = known.into_iter().peekable();
        let mut last_known = None;
        for (i, p) in pieces.iter().enumerate() {
            if let marker::Piece::Call { raw, .. } = p
                && known.peek() == Some(raw)
            {
                known.next();
                last_known = Some(i);
            }
        }
        if let Some(i) = last_known {
            pieces.drain(..=i);
        }
        self.deltas_seen = deltas_seen;
        self.pieces(ts, pieces, From::Recap, out)?;
        self.deltas_seen = false;
        Ok(())
    }
}

/// A notice: not an error of the session, a remark about its input.
fn notice(ts: Option<i64>, message: String) -> Item<'static> {
    Item::Event(Event::at(
        ts,
        Kind::Error {
            message: Cow::Owned(message),
            fatal: false,
            source: Some(Cow::Borrowed("cursor")),
        },
    ))
}

impl Parser for CursorParser {
    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        self.flush(None, out)
    }

    fn reads_checked(&self) -> bool {
        true
    }

    fn parse_checked<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Option<Parsed>> {
        // Both fast paths scan every escape of the lines they take and
        // refuse surrogate escapes (fast.rs), which is all the framer's own
        // pass looks for; and they validate the UTF-8 of every byte they
        // take, so the record needs no validation of its own.
        if let Some(p) = self.parse_fast(rec, out)? {
            return Ok(Some(p));
        }
        // The framer gives the same record to `parse` next: no use trying
        // the fast paths on it again.
        self.fast_refused = true;
        Ok(None)
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if !std::mem::take(&mut self.fast_refused)
            && let Some(p) = self.parse_fast(rec.as_bytes(), out)?
        {
            return Ok(p);
        }
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        if !self.hinted
            && let Some(sid) = line.session_id.as_deref()
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(sid.to_owned())))?;
        }
        let ts = line.timestamp_ms.0;
        let ev = |kind| Item::Event(Event::at(ts, kind));
        let text_delta = line.ty.as_deref() == Some("assistant")
            && ts.is_some()
            && line.model_call_id.is_none()
            && line.message.as_ref().is_some_and(|m| m.thinking.is_none());
        if !text_delta {
            self.flush(ts, out)?;
        }
        match (line.ty.as_deref(), line.subtype.as_deref()) {
            (Some("system"), Some("init")) => {
                out(ev(Kind::SessionStarted(SessionStart {
                    session_id: line.session_id.get(),
                    dialect: Cow::Borrowed("cursor"),
                    model: line.model.get(),
                    cwd: line.cwd.get(),
                    permission_mode: line.permission_mode.get(),
                    title: None,
                    parent: None,
                })))?;
            }
            (Some("user"), _) => {
                let text = line.message.and_then(|m| m.text);
                out(ev(Kind::UserMessage {
                    text: text.unwrap_or_default(),
                }))?;
            }
            (Some("thinking"), Some("delta")) => {
                if self.thinking_since.is_none() {
                    self.thinking_since = ts;
                }
                out(ev(Kind::ThinkingDelta {
                    text: line.text.get().unwrap_or_default(),
                }))?;
            }
            (Some("thinking"), Some("completed")) => {
                let since = self.thinking_since.take();
                let duration_ms = match (since, ts) {
                    (Some(a), Some(b)) => b.checked_sub(a).and_then(|d| u64::try_from(d).ok()),
                    _ => None,
                };
                out(ev(Kind::ThinkingCompleted { duration_ms }))?;
            }
            (Some("assistant"), _) => {
                let (text, thinking) = line.message.map_or((None, None), |m| (m.text, m.thinking));
                // Delta iff it has a timestamp and no model_call_id
                // (docs/dialects.md#cursor-agent).
                let delta = ts.is_some() && line.model_call_id.is_none();
                if let Some(t) = thinking {
                    out(if delta {
                        ev(Kind::ThinkingDelta { text: t })
                    } else {
                        Item::Recap {
                            ts,
                            channel: Channel::Thinking,
                            text: t,
                        }
                    })?;
                }
                let text = text.unwrap_or_default();
                if delta {
                    self.text_delta(ts, text, out)?;
                } else {
                    self.text_recap(ts, text, out)?;
                }
            }
            (Some("tool_call"), Some(sub)) => {
                return self.tool_call_line(sub, line.tool_call, line.call_id, rec, ts, out);
            }
            (Some("result"), _) => {
                self.structural.clear();
                self.from_deltas.clear();
                self.deltas_seen = false;
                let mut r = result(&line);
                // The final text repeats the answer, markers and all: read
                // without them, as the answer was.
                if let Some(t) = r.text.as_deref()
                    && t.contains(marker::OPEN)
                {
                    let kept: String = marker::split(t)
                        .into_iter()
                        .filter_map(|p| match p {
                            marker::Piece::Text(t) | marker::Piece::Malformed { text: t, .. } => {
                                Some(t)
                            }
                            marker::Piece::Call { .. } => None,
                        })
                        .collect();
                    r.text = Some(Cow::Owned(kept));
                }
                out(Item::Event(Event::at(ts, Kind::Result(r))))?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}

/// The text and thinking of a `message`, read in the line's one pass: its
/// `text` (and `thinking`) blocks joined, or a plain string `content`. A
/// single block (the usual delta) borrows from the line.
#[derive(Default)]
struct MessageText<'a> {
    text: Option<Str<'a>>,
    thinking: Option<Str<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for MessageText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MessageText<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut msg = MessageText::default();
                while let Some(k) = m.next_key::<S<'de>>()? {
                    if k.0 == "content" {
                        msg = m.next_value::<Content<'de>>()?.0;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(msg)
            }
            // Anything but an object has no text; it does not make the line unreadable.
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MessageText::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MessageText::default())
            }
            lenient_scalars!(MessageText::default());
        }
        d.deserialize_any(V)
    }
}

/// `message.content`: a string, or blocks whose text is joined per channel.
struct Content<'a>(MessageText<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content(MessageText {
                    text: Some(Cow::Borrowed(v)),
                    thinking: None,
                }))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content(MessageText {
                    text: Some(Cow::Owned(v.to_owned())),
                    thinking: None,
                }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut msg = MessageText::default();
                while let Some(b) = a.next_element::<Block<'de>>()? {
                    let (slot, piece) = match b.ty.as_deref() {
                        Some("thinking") => (&mut msg.thinking, b.thinking.or(b.text)),
                        Some("text") | None => (&mut msg.text, b.text),
                        Some(_) => continue,
                    };
                    if let Some(p) = piece {
                        match slot {
                            None => *slot = Some(p),
                            Some(s) => s.to_mut().push_str(&p),
                        }
                    }
                }
                Ok(Content(msg))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content(MessageText::default()))
            }
            lenient_scalars!(Content(MessageText::default()));
        }
        d.deserialize_any(V)
    }
}

/// One content block: `{type, text}` or `{type:"thinking", thinking}`.
/// Anything but an object is an empty block (skipped, not an error).
#[derive(Default)]
struct Block<'a> {
    ty: Option<Cow<'a, str>>,
    text: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Block<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Block<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut b = Block::default();
                while let Some(k) = m.next_key::<S<'de>>()? {
                    match k.0.as_ref() {
                        "type" => b.ty = m.next_value::<LaxStr<'de>>()?.get(),
                        "text" => b.text = m.next_value::<LaxStr<'de>>()?.get(),
                        "thinking" => b.thinking = m.next_value::<LaxStr<'de>>()?.get(),
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(b)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Block::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Block::default())
            }
            lenient_scalars!(Block::default());
        }
        d.deserialize_any(V)
    }
}

/// The `tool_call` object, read in one pass: the key naming the tool (the
/// one ending in `ToolCall`, or `function`), its body, and the 2026.07 keys
/// beside it.
#[derive(Default)]
struct ToolCallObj<'a> {
    key: Option<Cow<'a, str>>,
    body: ToolBody<'a>,
    tool_call_id: Option<Cow<'a, str>>,
    started_at: Option<i64>,
    completed_at: Option<i64>,
}

/// `{args, result}` (or `function`'s `{name, arguments}`).
#[derive(Deserialize, Default)]
struct ToolBody<'a> {
    #[serde(borrow, default)]
    args: Option<Val<'a>>,
    #[serde(borrow, default)]
    result: Option<ResultParts<'a>>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ToolCallObj<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ToolCallObj<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tool_call object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut t = ToolCallObj::default();
                while let Some(k) = m.next_key::<S<'de>>()? {
                    let k = k.0;
                    if t.key.is_none() && (k.ends_with("ToolCall") || k == "function") {
                        t.body = m.next_value::<Option<ToolBody<'de>>>()?.unwrap_or_default();
                        t.key = Some(k);
                        continue;
                    }
                    match k.as_ref() {
                        "toolCallId" => t.tool_call_id = m.next_value::<LaxStr<'de>>()?.get(),
                        "startedAtMs" => t.started_at = m.next_value::<LaxInt>()?.0,
                        "completedAtMs" => t.completed_at = m.next_value::<LaxInt>()?.0,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(t)
            }
        }
        d.deserialize_map(V)
    }
}

/// A tool's `result`: its members, the outcome (`success`, `failure`,
/// `error` or `rejected`) read as an object or a string, the rest raw.
struct ResultParts<'a> {
    members: Vec<(Cow<'a, str>, Part<'a>)>,
    /// The result was not an object: its raw text, when known.
    not_object: bool,
}

enum Part<'a> {
    Raw(&'a RawValue),
    Outcome(Val<'a>),
    /// An outcome kept verbatim (the slow path, for unusual shapes).
    RawOutcome(&'a RawValue),
}

/// The members of cursor-agent's tool-result unions (the `result` oneof of
/// `ShellResult`, `ReadResult`, `EditResult`, `WriteResult`, `DeleteResult`,
/// `LsResult`, `McpResult`, … in the agent's protobuf schema, written with
/// JSON names), and whether each is a success. Every other member is a
/// failure of its own kind.
const OUTCOMES: [(&str, bool); 22] = [
    ("success", true),
    ("accepted", true),
    ("approved", true),
    ("modified", true),
    ("complete", true),
    ("failure", false),
    ("error", false),
    ("rejected", false),
    ("timeout", false),
    ("spawnError", false),
    ("permissionDenied", false),
    ("readPermissionDenied", false),
    ("writePermissionDenied", false),
    ("fileNotFound", false),
    ("notFile", false),
    ("fileBusy", false),
    ("noSpace", false),
    ("invalidFile", false),
    ("notFound", false),
    ("toolNotFound", false),
    ("serverNotFound", false),
    ("sandboxUnsupported", false),
];

/// The union member `k` names (its JSON name, or the schema's snake_case
/// one), and whether it is a success.
fn outcome_kind(k: &str) -> Option<(&'static str, bool)> {
    OUTCOMES.iter().copied().find(|(name, _)| {
        let (mut a, mut b) = (name.chars(), k.chars().filter(|c| *c != '_'));
        loop {
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if x.eq_ignore_ascii_case(&y) => {}
                _ => return false,
            }
        }
    })
}

impl<'de: 'a, 'a> Deserialize<'de> for ResultParts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResultParts<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tool result")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(4);
                let mut have_outcome = false;
                while let Some(k) = m.next_key::<S<'de>>()? {
                    let k = k.0;
                    let part = if !have_outcome && outcome_kind(&k).is_some() {
                        have_outcome = true;
                        Part::Outcome(m.next_value::<Val<'de>>()?)
                    } else {
                        Part::Raw(m.next_value::<&'de RawValue>()?)
                    };
                    members.push((k, part));
                }
                Ok(ResultParts {
                    members,
                    not_object: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ResultParts::unusual())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ResultParts::unusual())
            }
            lenient_scalars!(ResultParts::unusual());
        }
        d.deserialize_any(V)
    }
}

impl ResultParts<'_> {
    fn unusual() -> Self {
        ResultParts {
            members: Vec::new(),
            not_object: true,
        }
    }

    /// True when a part could not be read in one pass.
    fn needs_slow_path(&self) -> bool {
        self.not_object
            || self
                .members
                .iter()
                .any(|(_, p)| matches!(p, Part::Outcome(Val::Other)))
    }
}

/// The `result` event.
fn result<'a>(line: &Line<'a>) -> SessionResult<'a> {
    let text = line.result.0.clone();
    let failed = line.is_error.0 == Some(true)
        || line
            .subtype
            .as_deref()
            .is_some_and(|s| s.starts_with("error"));
    let error = if failed {
        line.error
            .and_then(error_text)
            .or_else(|| text.clone().filter(|t| !t.is_empty()))
            .or_else(|| line.subtype.0.clone())
    } else {
        None
    };
    SessionResult {
        ok: !failed,
        text,
        duration_ms: line.duration_ms.0.and_then(|v| u64::try_from(v).ok()),
        usage: line.usage.and_then(usage),
        cost_usd: None,
        error,
    }
}

/// `usage` on a result: `{inputTokens, outputTokens, cacheReadTokens,
/// cacheWriteTokens}` (snake_case accepted too). cursor-agent's `inputTokens`
/// is taken to exclude cache reads and writes (the Anthropic convention; an
/// assumption, see docs/dialects.md#cursor-agent), so the normalized input adds them.
fn usage(raw: &RawValue) -> Option<Usage> {
    let m = Members::of(raw)?;
    let get = |a: &str, b: &str| {
        m.int(a)
            .or_else(|| m.int(b))
            .and_then(|v| u64::try_from(v).ok())
    };
    let input = get("inputTokens", "input_tokens")?;
    let output = get("outputTokens", "output_tokens")?;
    let cache_read = get("cacheReadTokens", "cache_read_tokens");
    let cache_write = get("cacheWriteTokens", "cache_write_tokens");
    Some(Usage::cache_apart(input, output, cache_read, cache_write))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::common::normalize_tool_name;

    fn parse(line: &str) -> Vec<Item<'static>> {
        parse_lines(&[line])
    }

    /// The items of several lines read by one parser.
    fn parse_lines(lines: &[&str]) -> Vec<Item<'static>> {
        let mut p = CursorParser::default();
        let mut items = Vec::new();
        for line in lines {
            let r = p
                .parse(line, &mut |i| {
                    items.push(i.into_owned());
                    Ok(())
                })
                .unwrap();
            assert_eq!(r, Parsed::Done);
        }
        items
            .into_iter()
            .filter(|i| !matches!(i, Item::IdHint(_)))
            .collect()
    }

    /// The line's last event (a completion comes after the start made for it).
    fn kind<'x>(items: &'x [Item<'static>]) -> &'x Kind<'static> {
        match items.last().expect("an item") {
            Item::Event(e) => &e.kind,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn assistant_shapes() {
        let delta = parse(
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}]},"session_id":"s","timestamp_ms":5}"#,
        );
        assert!(matches!(kind(&delta), Kind::TextDelta { text } if text == "Hi"));
        let recap = parse(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hi"}]},"session_id":"s","model_call_id":"m","timestamp_ms":5}"#,
        );
        assert!(
            matches!(&recap[0], Item::Recap { channel: Channel::Text, text, .. } if text == "Hi")
        );
        let last = parse(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]}}"#,
        );
        assert!(matches!(&last[0], Item::Recap { text, .. } if text == "AB"));
    }

    #[test]
    fn tool_key_is_found_among_2026_07_extra_keys() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"hookAdditionalContexts":[],"toolCallId":"c1","readToolCall":{"args":{"path":"/a.txt"}},"startedAtMs":"10"},"session_id":"s","timestamp_ms":7}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.tool_name, "read");
        assert_eq!(t.path.as_deref(), Some("/a.txt"));
        assert_eq!(t.args.get(), r#"{"path":"/a.txt"}"#);
    }

    #[test]
    fn a_completion_offers_a_start_made_from_its_args() {
        // Timed by `startedAtMs` when given, untimed otherwise; the transform
        // keeps it only when the call is not open (tests/it/transforms.rs).
        for (extra, ts) in [(r#","startedAtMs":"3""#, Some(3)), ("", None)] {
            let line = format!(
                r#"{{"type":"tool_call","subtype":"completed","call_id":"b","tool_call":{{"shellToolCall":{{"args":{{"command":"ls"}},"result":{{"success":{{"exitCode":0}}}}}}{extra}}},"timestamp_ms":9}}"#
            );
            let items = parse(&line);
            assert_eq!(items.len(), 2, "{items:?}");
            let Item::StartIfNew(e) = &items[0] else {
                panic!("{:?}", items[0])
            };
            assert_eq!(e.ts, ts);
            let Kind::ToolCallStarted(t) = &e.kind else {
                panic!()
            };
            assert_eq!(t.call_id, "b");
            assert_eq!(t.command.as_deref(), Some("ls"));
            assert_eq!(t.args.get(), r#"{"command":"ls"}"#);
            assert!(matches!(kind(&items), Kind::ToolCallCompleted(_)));
        }
    }

    #[test]
    fn shell_output_once_and_stripped_from_result() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"ls","workingDirectory":"/w"},"result":{"success":{"command":"ls","exitCode":0,"stdout":"a\n","stderr":"","executionTime":12,"interleavedOutput":"a\n"},"isBackground":false}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&items) else {
            panic!()
        };
        assert!(t.ok);
        assert_eq!(t.exit_code, Some(0));
        assert_eq!(t.output.as_ref().unwrap().as_str(), "a\n");
        assert_eq!(t.duration_ms, Some(12));
        assert_eq!(
            t.result.as_ref().unwrap().get(),
            r#"{"success":{"command":"ls","exitCode":0,"executionTime":12},"isBackground":false}"#
        );
    }

    #[test]
    fn failures_errors_and_rejections() {
        let f = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"false"},"result":{"failure":{"exitCode":1,"stdout":"","stderr":"boom"}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&f) else {
            panic!()
        };
        assert!(!t.ok);
        assert_eq!(t.exit_code, Some(1));
        assert_eq!(t.output.as_ref().unwrap().as_str(), "boom");
        let e = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"error":{"message":"no such file"}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&e) else {
            panic!()
        };
        assert!(!t.ok);
        assert_eq!(t.error.as_deref(), Some("no such file"));
        let r = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"editToolCall":{"args":{"path":"x"},"result":{"rejected":{}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&r) else {
            panic!()
        };
        assert_eq!(t.error.as_deref(), Some("rejected"));
    }

    #[test]
    fn unusual_payload_shapes_are_kept_verbatim() {
        // A result that is not an object, an outcome that is an array, args
        // that are an array: the slow path keeps them as they came.
        let items = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":[1, 2],"result":"done"}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.result.as_ref().unwrap().get(), r#""done""#);
        let items = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"p"},"result":{"success":[1, 2],"x":1}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&items) else {
            panic!()
        };
        assert!(t.ok);
        assert_eq!(
            t.result.as_ref().unwrap().get(),
            r#"{"success":[1, 2],"x":1}"#
        );
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":[1, 2]}}}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.args.get(), "[1, 2]");
    }

    #[test]
    fn function_and_mcp_tools() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"WebFetch","arguments":"{\"url\":\"https://x.org\"}"}}}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.tool_name, "web_fetch");
        assert_eq!(t.url.as_deref(), Some("https://x.org"));
        assert_eq!(t.args.get(), r#"{"url":"https://x.org"}"#);
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":{"name":"gh-list","toolName":"list","serverIdentifier":"gh","args":{}}}}}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(
            (
                t.tool_name.as_ref(),
                t.mcp_server.as_deref(),
                t.mcp_tool.as_deref()
            ),
            ("mcp", Some("gh"), Some("list"))
        );
    }

    #[test]
    fn edit_todo_plan_and_question_details() {
        let start = |line: &str| match kind(&parse(line)) {
            Kind::ToolCallStarted(t) => t.details.as_deref().cloned().unwrap_or_default(),
            other => panic!("not a start: {other:?}"),
        };
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"search_replace","arguments":"{\"file_path\":\"a.py\",\"old_string\":\"x\",\"new_string\":\"\"}"}}}"#,
        );
        assert_eq!(
            (d.old_string.as_deref(), d.new_string.as_deref()),
            (Some("x"), Some(""))
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"writeToolCall":{"args":{"path":"a","fileText":"hi\n"}}}}"#,
        );
        assert_eq!(d.file_content.as_deref(), Some("hi\n"));
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"updateTodosToolCall":{"args":{"todos":[{"id":"a","content":"A","status":"TODO_STATUS_IN_PROGRESS"},{"id":7,"content":"B"},3],"merge":true}}}}"#,
        );
        let todos = d.todos.unwrap();
        assert_eq!(todos.len(), 2);
        assert_eq!(
            (todos[0].id.as_deref(), todos[0].status.as_ref()),
            (Some("a"), "in_progress")
        );
        assert_eq!(
            (todos[1].id.as_deref(), todos[1].status.as_ref()),
            (Some("7"), "pending")
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"createPlanToolCall":{"args":{"name":"P","overview":"O","plan":"- P"}}}}"#,
        );
        assert_eq!(
            (d.title.as_deref(), d.overview.as_deref(), d.plan.as_deref()),
            (Some("P"), Some("O"), Some("- P"))
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"askQuestionToolCall":{"args":{"title":"T","questions":[{"id":"q","prompt":"Which?","options":[{"id":"a","label":"A"},"B"]}]}}}}"#,
        );
        let q = &d.questions.unwrap()[0];
        assert_eq!((q.id.as_deref(), q.text.as_ref()), (Some("q"), "Which?"));
        assert_eq!(q.options[1].label, "B");
        assert_eq!(q.options[1].id, None);
        // Other tools get no details at all.
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"a"}}}}"#,
        );
        assert!(matches!(kind(&items), Kind::ToolCallStarted(t) if t.details.is_none()));
    }

    #[test]
    fn todo_statuses() {
        for (a, b) in [
            ("TODO_STATUS_COMPLETED", "completed"),
            ("in-progress", "in_progress"),
            ("Done", "completed"),
            ("canceled", "cancelled"),
            ("", "pending"),
            ("Blocked", "blocked"),
        ] {
            assert_eq!(crate::event::normalize_todo_status(a), b);
        }
    }

    #[test]
    fn tool_names() {
        for (k, v) in [
            ("shell", "shell"),
            ("semSearch", "search"),
            ("updateTodos", "todo"),
            ("readLints", "lints"),
            ("getMcpTools", "get_mcp_tools"),
            ("webSearch", "web_search"),
            ("listMcpResources", "list_mcp_resources"),
        ] {
            assert_eq!(normalize_tool_name(k), v);
        }
    }

    #[test]
    fn result_with_usage_and_error() {
        let items = parse(
            r#"{"type":"result","subtype":"success","duration_ms":10,"is_error":false,"result":"pong","usage":{"inputTokens":100,"outputTokens":4,"cacheReadTokens":20,"cacheWriteTokens":3}}"#,
        );
        let Kind::Result(r) = kind(&items) else {
            panic!()
        };
        assert!(r.ok);
        assert_eq!(r.text.as_deref(), Some("pong"));
        assert_eq!(
            r.usage,
            Some(Usage {
                input: 123,
                output: 4,
                cache_read: Some(20),
                cache_write: Some(3),
                ..Usage::default()
            })
        );
        let items = parse(
            r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"quota"}}"#,
        );
        let Kind::Result(r) = kind(&items) else {
            panic!()
        };
        assert!(!r.ok);
        assert_eq!(r.error.as_deref(), Some("quota"));
    }

    #[test]
    fn unknown_and_mistyped_lines_are_kept() {
        let items = parse(r#"{"type":"interaction_query","x":1}"#);
        assert!(
            matches!(kind(&items), Kind::Unknown { raw } if raw.get() == r#"{"type":"interaction_query","x":1}"#)
        );
        let items = parse(r#"[1,2]"#);
        assert!(matches!(kind(&items), Kind::Unknown { .. }));
        // A surprising field type does not make the line unreadable.
        let items = parse(r#"{"type":"thinking","subtype":"delta","text":7,"timestamp_ms":"12"}"#);
        assert!(matches!(kind(&items), Kind::ThinkingDelta { text } if text.is_empty()));
    }
}
