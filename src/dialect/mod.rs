//! Dialect detection and parsing: one JSON record in, normalized [`Item`]s out.
//!
//! Each agent's stream format is a [`Parser`]. `--from auto` picks one per
//! input from its first JSON object ([`detect`]). Parsers are stateless about
//! sessions, dedupe and usage arithmetic: they report what the line says,
//! marking snapshots as such ([`Item::Recap`], [`Item::UsageTotal`]), and the
//! transform stage turns that into the event stream (`crate::transform`).

pub mod cursor;
pub mod events;

use std::io;

use serde::Deserialize;

use crate::event::{Event, Str, Usage};
use crate::input::Parsed;
use crate::json::LaxStr;

/// Which text channel a recap repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Text,
    Thinking,
}

/// What a parser makes of one record.
// Items are built and consumed one at a time on the hot path; boxing the
// large `Event` variant would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Item<'a> {
    /// A normalized event.
    Event(Event<'a>),
    /// A snapshot repeating text that may already have been streamed as
    /// deltas; the transform emits only what it adds (SPEC §4).
    Recap {
        ts: Option<i64>,
        channel: Channel,
        text: Str<'a>,
    },
    /// A running total of the session's usage so far; the transform turns
    /// it into an increment.
    UsageTotal { ts: Option<i64>, usage: Usage },
    /// Start a new session with this id without a `session_started` event
    /// (cstream's own events, where an anonymous session's id is explicit).
    Resume { session_id: Str<'a> },
    /// The session id the source put on its lines, for a session that has no
    /// init event (the first one seen in an input).
    IdHint(Str<'a>),
}

/// Receives the items parsed from a record, in order.
pub type Out<'o, 'a> = &'o mut dyn FnMut(Item<'a>) -> io::Result<()>;

/// A dialect's line parser.
pub trait Parser {
    /// Parse one record and emit its items. `Incomplete`/`Invalid` mean the
    /// record was not JSON, and nothing was emitted.
    fn parse<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Parsed>;
}

/// Keep a valid JSON record that no rule understood as an `unknown` event.
pub(crate) fn keep_unknown<'a>(rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Parsed> {
    match serde_json::from_slice::<&serde_json::value::RawValue>(rec) {
        Ok(raw) => {
            out(Item::Event(Event::new(crate::event::Kind::Unknown {
                raw: std::borrow::Cow::Borrowed(raw),
            })))?;
            Ok(Parsed::Done)
        }
        Err(e) if e.is_eof() => Ok(Parsed::Incomplete),
        Err(_) => Ok(Parsed::Invalid),
    }
}

/// The input dialects (`--from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// cursor-agent `--output-format stream-json`.
    Cursor,
    /// cstream's own `--to events` output.
    Events,
}

impl Dialect {
    /// The name `session_started.dialect` and `--from` use.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Cursor => "cursor",
            Dialect::Events => "events",
        }
    }

    /// A fresh parser for one input.
    pub fn parser(self) -> Box<dyn Parser> {
        match self {
            Dialect::Cursor => Box::new(cursor::CursorParser::default()),
            Dialect::Events => Box::new(events::EventsParser::default()),
        }
    }
}

/// The keys detection looks at.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(rename = "sessionId", default)]
    session_id_camel: Option<serde::de::IgnoredAny>,
}

/// Tell the dialect from one JSON object, or `None` when it cannot be told.
pub fn detect(rec: &[u8]) -> Option<Dialect> {
    let p: Probe = serde_json::from_slice(rec).ok()?;
    let ty = p.ty.get()?;
    if p.session_id_camel.is_some() && events::is_event_type(&ty) {
        return Some(Dialect::Events);
    }
    match ty.as_ref() {
        "system" | "user" | "assistant" | "thinking" | "tool_call" | "result" => {
            Some(Dialect::Cursor)
        }
        _ => None,
    }
}

/// A parser that picks its dialect from the first JSON object it sees.
pub struct AutoParser {
    fixed: Option<Dialect>,
    inner: Option<Box<dyn Parser>>,
    /// Records seen before the dialect could be told.
    undecided: u64,
    /// The dialect in use, once known.
    pub chosen: Option<Dialect>,
    /// Set when detection failed and cursor-agent was assumed (for one warning).
    pub guessed: bool,
}

/// How many JSON records detection may look at before it assumes cursor-agent.
const DETECT_RECORDS: u64 = 3;

impl AutoParser {
    /// `fixed`: the dialect given with `--from`, or `None` for `auto`.
    pub fn new(fixed: Option<Dialect>) -> Self {
        AutoParser {
            fixed,
            inner: None,
            undecided: 0,
            chosen: fixed,
            guessed: false,
        }
    }

    /// Start over for a new input.
    pub fn reset(&mut self) {
        *self = AutoParser::new(self.fixed);
    }

    /// True when JSON was read but its dialect could not be told.
    pub fn undecided(&self) -> bool {
        self.guessed || (self.chosen.is_none() && self.undecided > 0)
    }
}

impl Parser for AutoParser {
    fn parse<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Parsed> {
        if self.inner.is_none() {
            let d = match self.fixed.or_else(|| detect(rec)) {
                Some(d) => d,
                None => {
                    // Not decidable from this record: a cursor parser reads it
                    // (keeping what it does not know as `unknown`), and a
                    // later record decides.
                    let mut p = Dialect::Cursor.parser();
                    let r = p.parse(rec, out)?;
                    if r == Parsed::Done {
                        self.undecided += 1;
                        if self.undecided >= DETECT_RECORDS {
                            self.guessed = true;
                            self.chosen = Some(Dialect::Cursor);
                            self.inner = Some(p);
                        }
                    }
                    return Ok(r);
                }
            };
            self.chosen = Some(d);
            self.inner = Some(d.parser());
        }
        self.inner.as_mut().expect("set above").parse(rec, out)
    }
}
