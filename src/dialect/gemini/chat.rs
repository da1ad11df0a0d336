//! Gemini CLI's saved chats (`~/.gemini/tmp/<project hash>/chats/session-*.json`).
//!
//! A chat is one JSON object, `{sessionId, projectHash, startTime,
//! lastUpdated, messages: [...], summary?, directories?, kind?}`, usually
//! written pretty-printed and rewritten whole as the session grows. The
//! input stage reads it member by member (`crate::input`'s document
//! framing, which this dialect asks for through [`streams_member`]): the
//! members before `messages` arrive as one record (the head), then each
//! message as a record of its own, then the members after the array. A
//! chat written on one line arrives as one record and is read the same way.
//!
//! **The JSONL form** (`session-*.jsonl`, gemini-cli's
//! `chatRecordingService`, 0.43 on; sub-agents' chats in
//! `chats/<parent session id>/<session id>.jsonl`) is an append-only log:
//! the head (with `kind`: `main` or `subagent`), then each message as a
//! line, a message written again in full under its `id` whenever it changes
//! (its tool calls, their results, its tokens), `{"$set": {…}}` metadata
//! updates (`lastUpdated`, `summary`, `directories`; a `messages` list is a
//! checkpoint that replaces the history, as Gemini CLI itself reloads it)
//! and `{"$rewindTo": id}`, which removes that message and every one after
//! it. So messages are held, by id, until the end of the file (or until
//! [`HOLD_BYTES`] of them, when they are written out and a later change to
//! them can only be reported); removed messages are not shown, but their
//! usage still counts (it was spent). The whole-JSON form is read the same
//! way (its ids never repeat).
//! - The chat's `summary` is its title (`session_started.title`); the first
//!   of its `directories` its working directory.
//!
//! - A message is `{id, timestamp, type, content}`; `type` is `user`,
//!   `gemini` (one model response), `info`, `warning` or `error`. `content`
//!   is a string or a list of parts (`{text}`, `{inlineData}`, …).
//! - A `gemini` message may carry `thoughts` (summaries: `subject`,
//!   `description`), `toolCalls` (each with its `args`, its `result` as
//!   function-response parts, its `status` and a `resultDisplay`), the
//!   `model`, and `tokens`: the usage of that one response (prompt,
//!   candidates, cached, thoughts, tool-use prompt, total), so each is an
//!   increment, counted once.
//! - `info`, `warning` and `error` messages are the interface's notices:
//!   non-fatal `error` events whose source says which.
//! - The file has no outcome: its end is the session's `result` (`ok`,
//!   with the usage summed over its responses, absent when none had any).

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::{SavedHead, count_patch_lines, fill_start_owned, normalize_tool_name};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{Event, Json, Kind, SessionParent, Text, ToolEnd, ToolStart, Usage, json_null};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "gemini-chat";

/// Detection: the chat's head (or the whole chat on one line), which alone
/// has both `sessionId` and `projectHash`.
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    p.project_hash.is_some() && p.session_id_camel.is_some()
}

/// The top-level member whose array the input stage reads element by element.
pub(in crate::dialect) fn streams_member(key: &[u8]) -> bool {
    key == b"messages"
}

/// A record of a chat: its head (or the whole chat), its tail, or a message.
#[derive(Deserialize)]
struct Rec<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(rename = "projectHash", default)]
    project_hash: crate::dialect::common::Present,
    #[serde(rename = "startTime", borrow, default)]
    start_time: LaxStr<'a>,
    #[serde(rename = "lastUpdated", borrow, default)]
    last_updated: LaxStr<'a>,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    summary: LaxStr<'a>,
    #[serde(borrow, default)]
    directories: Option<Vec<LaxStr<'a>>>,
    #[serde(borrow, default)]
    kind: LaxStr<'a>,
    /// The JSONL form's metadata update.
    #[serde(rename = "$set", borrow, default)]
    set: Option<&'a RawValue>,
    /// The JSONL form's rewind: this message and every one after it go.
    #[serde(rename = "$rewindTo", borrow, default)]
    rewind_to: LaxStr<'a>,
}

/// Messages held, at most this many bytes, before they are written out
/// (a later change to one of them can then only be reported).
pub const HOLD_BYTES: usize = 8 * 1024 * 1024;

/// What is held until the chat's end: a message (by id), or the usage of
/// messages a rewind or a checkpoint removed, or a notice.
enum Held {
    Message {
        id: String,
        rec: String,
    },
    Spent(Option<i64>, Usage),
    Notice(Option<i64>, String),
    /// A record of another shape, kept as `unknown` in its place.
    Unknown(String),
}

/// A message of the chat.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "displayContent", borrow, default)]
    display_content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thoughts: Option<Vec<Thought<'a>>>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
    #[serde(default)]
    tokens: Option<Tokens>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
}

#[derive(Deserialize)]
struct Thought<'a> {
    #[serde(borrow, default)]
    subject: LaxStr<'a>,
    #[serde(borrow, default)]
    description: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(rename = "resultDisplay", borrow, default)]
    result_display: Option<&'a RawValue>,
}

/// One response's token counts (the API's usage metadata, renamed).
#[derive(Deserialize, Default)]
struct Tokens {
    #[serde(default)]
    input: Option<u64>,
    #[serde(default)]
    output: Option<u64>,
    #[serde(default)]
    cached: Option<u64>,
    #[serde(default)]
    thoughts: Option<u64>,
    #[serde(default)]
    tool: Option<u64>,
}

impl Tokens {
    /// Google's prompt count includes the cached part, as the normalized
    /// input does; the tool-use prompt is counted apart from it (the total
    /// is prompt + candidates + thoughts + tool-use prompt), so it is added
    /// to the input, and the thoughts to the output.
    fn usage(&self) -> Option<Usage> {
        let input = self.input?;
        Some(Usage {
            input: input.saturating_add(self.tool.unwrap_or(0)),
            output: self
                .output
                .unwrap_or(0)
                .saturating_add(self.thoughts.unwrap_or(0)),
            cache_read: self.cached,
            cache_write: None,
            // The thoughts, now a part of the output.
            reasoning: self.thoughts,
            ..Usage::default()
        })
    }
}

/// Events held before the first response names the model, at most (then
/// the session begins without it).
const HELD_ITEMS: usize = 64;

/// Parser state for one saved chat.
#[derive(Default)]
pub struct GeminiChatParser {
    /// A `.json` chat read message by message: a snapshot, whose messages
    /// are not rewritten, so they are held only until the first response
    /// names the model (the JSONL form is held for its rewrites).
    document: bool,
    /// A response is among the held messages.
    held_response: bool,
    /// Its session's header, and whether its `session_started` was written.
    head: SavedHead,
    /// The chat's head was read (its session begins once its model is known).
    headed: bool,
    /// What came before the first response, held until it names the model.
    held: Vec<Item<'static>>,
    last_ts: Option<i64>,
    /// A model response came since the last prompt (its turn is open).
    turn_open: bool,
    /// Usage summed over the responses, once one had any.
    total: Option<Usage>,
    /// Messages (and what removing some left) held until the end.
    held_msgs: Vec<Held>,
    held_bytes: usize,
    /// Ids of messages written out before the end.
    written: HashSet<String>,
    /// Messages without an id, numbered (each is its own).
    anonymous: u64,
    /// The head says `kind: subagent`.
    subagent: bool,
    source: Option<PathBuf>,
}

/// The text of a `content`: a string, or the `text` of its parts.
fn content_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    let parts: Vec<&RawValue> = match serde_json::from_str(raw.get()) {
        Ok(v) => v,
        // A single part.
        Err(_) => vec![raw],
    };
    let mut text = String::new();
    for p in parts {
        if let Some(s) = raw_as_str(p) {
            text.push_str(&s);
        } else if let Some(m) = Members::of(p) {
            if let Some(t) = m.str("text") {
                text.push_str(&t);
            } else if let Some(d) = m.obj("inlineData") {
                // An attached image: its kind and size, never its bytes.
                let mime = d.str("mimeType").unwrap_or_default();
                let data = d.str("data").unwrap_or_default();
                if !text.is_empty() && !text.ends_with(char::is_whitespace) {
                    text.push('\n');
                }
                text.push_str(&crate::strings::image_placeholder(&mime, &data));
            }
        }
    }
    Some(Cow::Owned(text))
}

impl GeminiChatParser {
    /// Begin the session, then write what was held for it.
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        // A sub-agent's chat is in a folder named after its parent session.
        let parent = || {
            self.subagent
                .then(|| self.source.as_deref().and_then(parent_session))
                .flatten()
                .map(|p| SessionParent::subagent(Cow::Owned(p), None))
        };
        if !self.head.open(NAME, parent, out)? {
            return Ok(());
        }
        self.headed = true;
        for item in std::mem::take(&mut self.held) {
            out(item)?;
        }
        Ok(())
    }

    fn emit<'a>(&mut self, ts: Option<i64>, kind: Kind<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if !self.head.started && self.head.model.is_none() && self.held.len() < HELD_ITEMS {
            // The model is named by the first response only: the prompt
            // before it waits for it, so that the session names its model.
            self.held
                .push(Item::Event(Event::at(ts, kind)).into_owned());
            return Ok(());
        }
        self.open(out)?;
        out(Item::Event(Event::at(ts, kind)))
    }

    /// The head of a chat (its members before `messages`), or the whole
    /// chat on one line.
    fn head<'a>(&mut self, r: Rec<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.headed {
            // A second chat in the same input: close the first.
            self.end(out)?;
            let source = self.source.take();
            let document = self.document;
            *self = GeminiChatParser::default();
            self.source = source;
            self.document = document;
        }
        self.headed = true;
        self.head.session_id = r.session_id.as_deref().map(str::to_owned);
        self.head.start_ts = r.start_time.as_deref().and_then(iso_ms);
        self.last_ts = r.last_updated.as_deref().and_then(iso_ms);
        self.subagent = r.kind.as_deref() == Some("subagent");
        self.metadata(&r);
        for m in r.messages.unwrap_or_default() {
            self.hold(m.get(), out)?;
        }
        Ok(())
    }

    /// The title and working directory a head, a tail or a `$set` gives.
    fn metadata(&mut self, r: &Rec<'_>) {
        if let Some(t) = r.summary.as_deref().filter(|t| !t.trim().is_empty()) {
            self.head.title = Some(t.to_owned());
        }
        if self.head.cwd.is_none()
            && let Some(d) = r.directories.as_ref().and_then(|d| d.first())
        {
            self.head.cwd = d.as_deref().map(str::to_owned);
        }
        if let Some(t) = r.last_updated.as_deref().and_then(iso_ms) {
            self.last_ts = self.last_ts.max(Some(t));
        }
    }

    /// Hold a message until the end: a message whose id is held already is
    /// that message written again (it replaces it where it was).
    fn hold<'a>(&mut self, rec: &str, out: Out<'_, 'a>) -> io::Result<()> {
        let id = match serde_json::from_str::<Rec>(rec)
            .ok()
            .and_then(|r| r.id.get())
        {
            Some(id) => id.into_owned(),
            None => {
                self.anonymous += 1;
                // NUL: no real id has one.
                format!("\0{}", self.anonymous)
            }
        };
        // Whether it is a message this reader shows is known now; its
        // `unknown` event, if any, comes when the held messages are written.
        let ty = serde_json::from_str::<Message>(rec)
            .ok()
            .and_then(|m| m.ty.as_deref().map(str::to_owned));
        let shown = matches!(
            ty.as_deref(),
            Some("user" | "gemini" | "info" | "warning" | "error")
        );
        self.held_response |= ty.as_deref() == Some("gemini");
        if !shown {
            not_understood(rec, out)?;
        }
        if self.written.contains(&id) {
            let ts = serde_json::from_str::<Message>(rec)
                .ok()
                .and_then(|m| m.timestamp.as_deref().and_then(iso_ms));
            let text = format!(
                "message {id} was written again after it was shown \
                 (the chat held more than the reader keeps): the change is not shown"
            );
            self.held_msgs.push(Held::Notice(ts, text));
            return Ok(());
        }
        self.held_bytes += rec.len();
        let at = self
            .held_msgs
            .iter()
            .position(|h| matches!(h, Held::Message { id: i, .. } if *i == id));
        match at {
            Some(at) => {
                self.held_msgs[at] = Held::Message {
                    id,
                    rec: rec.to_owned(),
                }
            }
            None => self.held_msgs.push(Held::Message {
                id,
                rec: rec.to_owned(),
            }),
        }
        if self.held_bytes > HOLD_BYTES || (self.document && self.held_response) {
            self.flush_held(out)?;
        }
        Ok(())
    }

    /// Write out what is held.
    fn flush_held<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        self.held_bytes = 0;
        let held = std::mem::take(&mut self.held_msgs);
        // The session names the model of the first response held.
        if self.head.model.is_none() {
            self.head.model = held.iter().find_map(|h| match h {
                Held::Message { rec, .. } => serde_json::from_str::<Message>(rec)
                    .ok()
                    .filter(|m| m.ty.as_deref() == Some("gemini"))
                    .and_then(|m| m.model.as_deref().map(str::to_owned)),
                _ => None,
            });
        }
        for h in &held {
            match h {
                Held::Message { id, rec } => {
                    self.written.insert(id.clone());
                    self.message(rec, &mut |i| out(i.into_owned()))?;
                }
                Held::Spent(ts, u) => self.add_usage(*ts, *u, &mut |i| out(i.into_owned()))?,
                Held::Unknown(rec) => {
                    self.open(&mut |i| out(i.into_owned()))?;
                    keep_unknown(rec, &mut |i| out(i.into_owned()))?;
                }
                Held::Notice(ts, text) => {
                    let kind = Kind::Error {
                        message: Cow::Owned(text.clone()),
                        fatal: false,
                        source: Some(Cow::Borrowed("rewind")),
                    };
                    self.emit(*ts, kind, &mut |i| out(i.into_owned()))?;
                }
            }
        }
        Ok(())
    }

    /// Remove the held messages from index `from` on: not shown, their
    /// usage still counted where they were.
    fn remove_from(&mut self, from: usize, ts: Option<i64>) -> usize {
        let mut spent: Option<Usage> = None;
        let mut removed = 0;
        let mut kept = Vec::new();
        for h in self.held_msgs.drain(from..) {
            match h {
                Held::Message { rec, .. } => {
                    removed += 1;
                    self.held_bytes = self.held_bytes.saturating_sub(rec.len());
                    if let Some(u) = usage_of(&rec) {
                        spent = Some(spent.map_or(u, |s| s.add(&u)));
                    }
                }
                Held::Spent(_, u) => spent = Some(spent.map_or(u, |s| s.add(&u))),
                n @ (Held::Notice(..) | Held::Unknown(_)) => kept.push(n),
            }
        }
        self.held_msgs.extend(kept);
        if let Some(u) = spent {
            self.held_msgs.push(Held::Spent(ts, u));
        }
        removed
    }

    /// `{"$rewindTo": id}`: that message and every one after it go.
    fn rewind(&mut self, id: &str) {
        let at = self
            .held_msgs
            .iter()
            .position(|h| matches!(h, Held::Message { id: i, .. } if i == id));
        let ts = self.last_ts;
        match at {
            Some(at) => {
                self.remove_from(at, ts);
            }
            None => {
                // Gemini CLI clears the whole history for a target it does
                // not have; one written out already can only be reported.
                self.remove_from(0, ts);
                let text = if self.written.contains(id) {
                    format!(
                        "the chat was rewound to message {id}, which was shown already: \
                         what was shown after it was abandoned"
                    )
                } else {
                    format!(
                        "the chat was rewound to message {id}, which it does not have: \
                         its history was cleared"
                    )
                };
                self.held_msgs.push(Held::Notice(ts, text));
            }
        }
    }

    /// `{"$set": {…}}`: metadata, or with `messages` a checkpoint that
    /// replaces the history.
    fn set<'a>(&mut self, rec: &'a str, raw: &'a RawValue, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let Ok(r) = serde_json::from_str::<Rec>(raw.get()) else {
            not_understood(rec, out)?;
            return keep_unknown(rec, out);
        };
        self.metadata(&r);
        if self.head.session_id.is_none() {
            self.head.session_id = r.session_id.as_deref().map(str::to_owned);
        }
        let Some(messages) = r.messages else {
            return Ok(Parsed::Done);
        };
        let ids: HashSet<String> = messages
            .iter()
            .filter_map(|m| serde_json::from_str::<Rec>(m.get()).ok()?.id.get())
            .map(Cow::into_owned)
            .collect();
        // The messages the checkpoint keeps are replaced in place; those it
        // drops are gone (their usage counted where they were); the rest
        // are added.
        let ts = self.last_ts;
        let mut dropped = 0;
        for h in std::mem::take(&mut self.held_msgs) {
            match h {
                Held::Message { id, rec } if !ids.contains(&id) => {
                    dropped += 1;
                    self.held_bytes = self.held_bytes.saturating_sub(rec.len());
                    if let Some(u) = usage_of(&rec) {
                        self.held_msgs.push(Held::Spent(ts, u));
                    }
                }
                h => self.held_msgs.push(h),
            }
        }
        if dropped > 0 {
            self.held_msgs.push(Held::Notice(
                self.last_ts,
                format!(
                    "a checkpoint replaced the chat's history (a compression or a \
                     rolled-back turn): {dropped} earlier {} not shown",
                    if dropped == 1 {
                        "message is"
                    } else {
                        "messages are"
                    }
                ),
            ));
        }
        for m in messages {
            self.hold(m.get(), out)?;
        }
        Ok(Parsed::Done)
    }

    fn add_usage<'a>(&mut self, ts: Option<i64>, u: Usage, out: Out<'_, 'a>) -> io::Result<()> {
        // A count no message gave stays unknown in the total (not 0).
        let t = self.total.get_or_insert_with(Usage::default);
        *t = t.add(&u);
        self.emit(ts, Kind::UsageDelta(u), out)
    }

    /// One message of the chat.
    fn message<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        self.headed = true;
        let m: Message<'a> = match serde_json::from_str(rec) {
            Ok(m) => m,
            Err(_) => {
                // What is said about it comes after the session's start.
                self.open(out)?;
                match read_line::<Message<'a>>(rec, out)? {
                    Ok(m) => m,
                    Err(done) => return Ok(done),
                }
            }
        };
        let ts = m.timestamp.as_deref().and_then(iso_ms);
        if ts.is_some() {
            self.last_ts = self.last_ts.max(ts);
        }
        let text = || m.content.and_then(content_text).filter(|t| !t.is_empty());
        match m.ty.as_deref() {
            Some("user") => {
                self.end_turn(ts, out)?;
                let shown = m.display_content.and_then(content_text);
                let text = shown.filter(|t| !t.is_empty()).or_else(text);
                self.emit(
                    ts,
                    Kind::UserMessage {
                        text: text.unwrap_or_default(),
                    },
                    out,
                )?;
            }
            Some("gemini") => {
                if self.head.model.is_none() {
                    self.head.model = m.model.as_deref().map(str::to_owned);
                }
                self.turn_open = true;
                for t in m.thoughts.iter().flatten() {
                    let ts = t.timestamp.as_deref().and_then(iso_ms).or(ts);
                    let subject = t.subject.as_deref().unwrap_or("").trim();
                    let body = t.description.as_deref().unwrap_or("").trim();
                    let text = match (subject.is_empty(), body.is_empty()) {
                        (false, false) => Cow::Owned(format!("{subject}\n\n{body}")),
                        (false, true) => Cow::Owned(subject.to_owned()),
                        _ => Cow::Owned(body.to_owned()),
                    };
                    self.emit(ts, Kind::ThinkingDelta { text }, out)?;
                    self.emit(ts, Kind::ThinkingCompleted { duration_ms: None }, out)?;
                }
                if let Some(text) = text() {
                    self.emit(ts, Kind::TextDelta { text }, out)?;
                }
                for c in m.tool_calls.unwrap_or_default() {
                    self.tool_call(c, ts, out)?;
                }
                if let Some(u) = m.tokens.as_ref().and_then(Tokens::usage) {
                    self.add_usage(ts, u, out)?;
                }
            }
            Some(source @ ("info" | "warning" | "error")) => {
                let source: &'static str = match source {
                    "info" => "info",
                    "warning" => "warning",
                    _ => "error",
                };
                let message = text().unwrap_or(Cow::Borrowed(source));
                let kind = Kind::Error {
                    message,
                    fatal: false,
                    source: Some(Cow::Borrowed(source)),
                };
                self.emit(ts, kind, out)?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }

    /// A tool call of a response, with its outcome when it has one (a call
    /// still running when the file was written has none: the session's end
    /// closes it).
    ///
    /// The call's own `timestamp` is when its result was recorded; it
    /// starts at its message's. When the two are the same instant the file
    /// does not say how long the call took: the completion then carries no
    /// time, so no duration is made up from them.
    fn tool_call<'a>(
        &mut self,
        c: ToolCall<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let done_ts = c.timestamp.as_deref().and_then(iso_ms);
        let (ts, done_ts) = match (ts, done_ts) {
            (Some(a), Some(b)) if b > a => (Some(a), Some(b)),
            (Some(a), _) => (Some(a), None),
            (None, b) => (b, None),
        };
        let id = c.id.get().unwrap_or_default();
        let name = normalize_tool_name(c.name.as_deref().unwrap_or(""));
        let args = c.args.map_or_else(json_null, Json::from);
        let mut start = ToolStart::new(id.clone(), Cow::Owned(name.clone()), args);
        if let Some(m) = c.args.and_then(Members::of) {
            fill_start_owned(&mut start, &m);
        }
        self.emit(ts, Kind::started(start), out)?;
        let ok = match c.status.as_deref() {
            Some("success") => true,
            Some("error" | "cancelled") => false,
            // validating, scheduled, executing, awaiting_approval: not done.
            _ => return Ok(()),
        };
        let mut end = ToolEnd::new(id, Cow::Owned(name), ok);
        // The function responses: `response.output` or `response.error`.
        let mut output = String::new();
        let mut error = None;
        let parts: Vec<&RawValue> = c
            .result
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default();
        for p in &parts {
            let Some(resp) = Members::of(p)
                .and_then(|m| m.obj("functionResponse"))
                .and_then(|f| f.obj("response"))
            else {
                continue;
            };
            if let Some(o) = resp.str("output") {
                output.push_str(&o);
            }
            if let Some(e) = resp.nonempty_str("error") {
                error = Some(e);
            }
        }
        let display = c.result_display.and_then(Members::of);
        if let Some(diff) = display.as_ref().and_then(|d| d.nonempty_str("fileDiff")) {
            let (added, removed) = count_patch_lines(&diff);
            end.lines_added = Some(added);
            end.lines_removed = Some(removed);
            end.patch = Some(Cow::Owned(diff.into_owned()));
        }
        if !ok {
            end.error = error.or_else(|| {
                c.result_display
                    .and_then(raw_as_str)
                    .filter(|s| !s.is_empty())
                    .or(Some(Cow::Borrowed(
                        if c.status.as_deref() == Some("cancelled") {
                            "cancelled"
                        } else {
                            "error"
                        },
                    )))
            });
        }
        if end.tool_name == "shell" && !output.is_empty() {
            end.output = Some(Text::from(output));
        }
        end.result = c.result.map(Json::from);
        self.emit(done_ts, Kind::completed(end), out)
    }

    /// A prompt or the end: the model's turn before it is over.
    fn end_turn<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if std::mem::take(&mut self.turn_open) {
            self.emit(ts, Kind::TurnEnded { usage: None }, out)?;
        }
        Ok(())
    }

    /// The chat is over: its last turn ends, and the file's end is the
    /// session's result.
    fn end<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        self.flush_held(out)?;
        let ts = self.last_ts;
        self.end_turn(ts, out)?;
        self.open(out)?;
        let result = crate::dialect::common::file_result(self.head.start_ts, ts, self.total);
        self.emit(ts, result.kind, out)
    }
}

/// Say, at the record's own line, that the record is one this reader does
/// not understand: its `unknown` event may be written with the messages it
/// holds, at the end (docs/dialects.md#drift).
fn not_understood(rec: &str, out: Out<'_, '_>) -> io::Result<()> {
    out(Item::NotUnderstood(Cow::Owned(
        crate::dialect::record_kind(rec),
    )))
}

impl Parser for GeminiChatParser {
    fn set_document(&mut self) {
        self.document = true;
    }

    fn counts_drift(&self) -> bool {
        // Messages are held until the file ends: counted when read.
        true
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let r: Rec<'a> = match serde_json::from_str(rec) {
            Ok(r) => r,
            // Valid JSON of another shape: kept, in its place.
            Err(e)
                if e.is_data() && self.headed && serde_json::from_str::<&RawValue>(rec).is_ok() =>
            {
                not_understood(rec, out)?;
                self.held_msgs.push(Held::Unknown(rec.to_owned()));
                return Ok(Parsed::Done);
            }
            Err(_) => match read_line(rec, out)? {
                Ok(r) => r,
                Err(Parsed::Done) => {
                    not_understood(rec, out)?;
                    return Ok(Parsed::Done);
                }
                Err(done) => return Ok(done),
            },
        };
        if let Some(set) = r.set {
            return self.set(rec, set, out);
        }
        if let Some(id) = r.rewind_to.as_deref() {
            self.rewind(id);
            return Ok(Parsed::Done);
        }
        if r.project_hash.0 || r.messages.is_some() {
            self.head(r, out)?;
            return Ok(Parsed::Done);
        }
        if r.ty.0.is_some() || r.id.0.is_some() {
            self.headed = true;
            self.hold(rec, out)?;
            return Ok(Parsed::Done);
        }
        if r.session_id.0.is_none() && r.start_time.0.is_none() {
            // The members after `messages`: the title, the directories.
            self.metadata(&r);
            return Ok(Parsed::Done);
        }
        self.open(out)?;
        not_understood(rec, out)?;
        keep_unknown(rec, out)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if !self.headed {
            return Ok(());
        }
        self.end(out)
    }

    fn set_source(&mut self, path: &Path) {
        self.source = Some(path.to_path_buf());
    }
}

/// A held message's usage.
fn usage_of(rec: &str) -> Option<Usage> {
    serde_json::from_str::<Message>(rec)
        .ok()?
        .tokens
        .as_ref()
        .and_then(Tokens::usage)
}

/// A sub-agent's chat, `chats/<parent session id>/<session id>.jsonl`: the
/// parent session's id (its folder's name), unless the folder is `chats`.
fn parent_session(path: &Path) -> Option<String> {
    let dir = path.parent()?.file_name()?.to_str()?;
    (dir != "chats").then(|| dir.to_owned())
}
