//! OpenCode (`opencode`, sst/opencode, now anomalyco/opencode): its live
//! stream, its exported sessions and its session store, read as its own
//! source writes them (`packages/opencode/src/cli/cmd/run.ts`,
//! `cli/cmd/export.ts`, `session/message-v2.ts`, `session/session.sql.ts`).
//!
//! Three inputs, one reader; every one is made of OpenCode's message
//! *parts* (`MessageV2.Part`):
//!
//! - **`opencode run --format json`** writes one line per finished part,
//!   `{type, timestamp, sessionID, part}`: `step_start`, `text` (a text part
//!   once it has ended: no deltas), `reasoning` (with `--thinking`),
//!   `tool_use` (a call once it completed or failed: input and output in
//!   one part), `step_finish` (`reason`, `tokens`, `cost`), `error`
//!   (`{type, timestamp, sessionID, error}`) and, from 2026 releases,
//!   `done` (`reason: "idle"`). The stream carries no user prompt and no
//!   model name. `done` is its result; a stream without it that ended on a
//!   step finished for `stop` (older releases write no `done`) ends well
//!   too; any other end is a cut-off session.
//! - **`opencode export <id>`** writes one pretty-printed JSON document,
//!   `{info, messages: [{info, parts}], todos}`. The input stage reads it
//!   member by member ([`streams_member`]): the session's `info` first,
//!   then each message with its parts, then `todos`.
//! - **The SQLite store** (`~/.local/share/opencode/opencode.db`, v1.2 on):
//!   its rows are handed to this reader as the same records as an export
//!   ([`db`]): a session's `info`, then each message with its parts. The
//!   store keeps the message and session ids in table columns, not in the
//!   JSON.
//!
//! The parts: `text` (the user's prompt in a user message, `synthetic`
//! ones being context OpenCode added; the answer in an assistant message),
//! `reasoning`, `tool` (`state.status` pending, running, completed or
//! error; a call OpenCode could not run as asked, a denied or malformed
//! one, is a *completed* call to a tool named `invalid` whose input names
//! the tool the model asked for: read as that tool, failed), `step-start`,
//! `step-finish` (the usage and cost of one model call), `file`, `agent`,
//! `subtask`, `compaction` (the user's side of a summary; the assistant
//! message after it, marked `summary`, holds the summary text), `retry`,
//! `patch` and `snapshot` (workspace bookkeeping: nothing to show).
//!
//! - **Usage** is per step: `tokens {input, output, reasoning, cache {read,
//!   write}}`, where `input` leaves out the cache and `output` the
//!   reasoning (a step's `total` is their sum). Each step is one
//!   increment. A message with no step-finish part (older sessions) counts
//!   its own `tokens` instead, unless they are all zero (unknown, not zero).
//! - **Cost** is what OpenCode itself priced each step at (its model
//!   catalogue, not a bill): summed into the result's `cost_usd`.
//! - A session's `parentID` makes it a sub-agent's (a `task` call's).

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::{
    Present, SavedHead, count_patch_lines, fill_start, normalize_tool_name,
};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{
    Event, Json, Kind, SessionParent, SummaryPhase, Text, ToolEnd, ToolStart, Usage, UserEventKind,
    json_null,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxF64, LaxInt, LaxStr, Members, raw_as_str};

#[cfg(feature = "sqlite")]
pub mod db;
pub mod storage;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "opencode";

/// The file name of OpenCode's session store, which a directory walk reads.
#[cfg_attr(not(feature = "walk"), allow(dead_code))]
pub const STORE_NAME: &str = "opencode.db";

/// The first bytes of an SQLite database file.
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether an input's first bytes are an SQLite database's.
pub fn is_sqlite(head: &[u8]) -> bool {
    head.starts_with(SQLITE_MAGIC)
}

/// A stored session's own fields: the SQLite store's `session` columns, or
/// a storage directory's session file.
pub(crate) struct StoreHead<'a> {
    pub id: &'a str,
    pub project: Option<&'a str>,
    pub parent: Option<&'a str>,
    pub directory: Option<&'a str>,
    pub title: Option<&'a str>,
    pub version: Option<&'a str>,
    pub created: Option<i64>,
    pub updated: Option<i64>,
}

/// The head record of a stored session, as an export's `{"info": …}`: the
/// same for both stores, so that they read the same.
pub(crate) fn store_head(h: StoreHead<'_>) -> String {
    serde_json::json!({
        "info": {
            "id": h.id,
            "projectID": h.project,
            "parentID": h.parent,
            "directory": h.directory,
            "title": h.title,
            "version": h.version,
            "time": {"created": h.created, "updated": h.updated},
        }
    })
    .to_string()
}

/// The line types of `opencode run --format json`.
const LIVE_TYPES: &[&str] = &[
    "step_start",
    "text",
    "reasoning",
    "tool_use",
    "step_finish",
    "error",
    "done",
];

/// Detection: a live line (one of its types with `sessionID` and a `part`,
/// or an `error`), or an export's record: the session's `info` (an object
/// with `projectID` and `directory`) or a message (`info` with a `role`,
/// and `parts`).
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    if p.session_id_upper.is_some() && LIVE_TYPES.contains(&p.ty()) {
        return p.part.is_some() || p.ty() == "error" || p.ty() == "done";
    }
    let Some(info) = p.info.and_then(Members::of) else {
        return false;
    };
    if p.parts.is_some() {
        return info.get("role").is_some();
    }
    info.get("projectID").is_some() && info.get("directory").is_some() && info.get("id").is_some()
}

/// The top-level member of an export whose array the input stage reads
/// element by element.
pub(in crate::dialect) fn streams_member(key: &[u8]) -> bool {
    key == b"messages"
}

/// A record: a live line, an export's head (`info`, maybe with the
/// `messages` when written on one line), a message, or the export's tail.
#[derive(Deserialize)]
struct Rec<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(default)]
    timestamp: LaxInt,
    #[serde(rename = "sessionID", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    part: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parts: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    todos: Present,
}

/// A session's or a message's `info`.
#[derive(Deserialize)]
struct Info<'a> {
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    role: LaxStr<'a>,
    #[serde(default)]
    time: Option<Times>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(rename = "modelID", borrow, default)]
    model_id: LaxStr<'a>,
    /// A user message's model, `{providerID, modelID}`.
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    /// An assistant message that is a compaction's summary (`true`).
    #[serde(default)]
    summary: Option<&'a RawValue>,
    #[serde(default)]
    cost: LaxF64,
    #[serde(borrow, default)]
    tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    path: Option<&'a RawValue>,
    // The session's own.
    #[serde(borrow, default)]
    directory: LaxStr<'a>,
    #[serde(rename = "parentID", borrow, default)]
    parent_id: LaxStr<'a>,
}

#[derive(Deserialize, Default)]
struct Times {
    #[serde(default)]
    created: LaxInt,
    #[serde(default)]
    updated: LaxInt,
    #[serde(default)]
    completed: LaxInt,
    #[serde(default)]
    start: LaxInt,
    #[serde(default)]
    end: LaxInt,
}

/// A message part (`MessageV2.Part`).
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(default)]
    synthetic: LaxBool,
    #[serde(default)]
    ignored: LaxBool,
    #[serde(default)]
    time: Option<Times>,
    #[serde(rename = "callID", borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    tool: LaxStr<'a>,
    #[serde(borrow, default)]
    state: Option<State<'a>>,
    #[serde(borrow, default)]
    reason: LaxStr<'a>,
    #[serde(default)]
    cost: LaxF64,
    #[serde(borrow, default)]
    tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    mime: LaxStr<'a>,
    #[serde(borrow, default)]
    filename: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    prompt: LaxStr<'a>,
    #[serde(borrow, default)]
    description: LaxStr<'a>,
    #[serde(borrow, default)]
    agent: LaxStr<'a>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// A tool part's state.
#[derive(Deserialize)]
struct State<'a> {
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: LaxStr<'a>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
    #[serde(default)]
    time: Option<Times>,
}

/// A step's (or a message's) `tokens`: `input` without the cache,
/// `output` without the reasoning.
fn tokens_usage(raw: &RawValue) -> Option<Usage> {
    let m = Members::of(raw)?;
    let n = |m: &Members<'_>, k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    let (input, output) = (n(&m, "input"), n(&m, "output"));
    if input.is_none() && output.is_none() {
        return None;
    }
    let cache = m.obj("cache");
    let read = cache.as_ref().and_then(|c| n(c, "read"));
    let write = cache.as_ref().and_then(|c| n(c, "write"));
    // OpenCode counts reasoning apart from the output (its `total` adds
    // both): the output here includes it, and keeps the part apart too.
    let reasoning = n(&m, "reasoning");
    let output = output.unwrap_or(0).saturating_add(reasoning.unwrap_or(0));
    Some(Usage::cache_apart(input.unwrap_or(0), output, read, write).with_reasoning(reasoning))
}

/// The message of an OpenCode error value, `{name, data: {message}}`.
fn error_message(raw: &RawValue) -> (Cow<'_, str>, Option<Cow<'_, str>>) {
    let Some(m) = Members::of(raw) else {
        let text = raw_as_str(raw).unwrap_or(Cow::Borrowed("error"));
        return (text, None);
    };
    let name = m.nonempty_str("name");
    let message = m
        .obj("data")
        .and_then(|d| d.nonempty_str("message"))
        .or_else(|| m.nonempty_str("message"))
        .or_else(|| name.clone())
        .unwrap_or(Cow::Borrowed("error"));
    (message, name)
}

/// Parser state for one OpenCode input.
#[derive(Default)]
pub struct OpenCodeParser {
    /// Its session's header, and whether its `session_started` was written.
    head: SavedHead,
    /// A session's head (export or store) was read; its session is open
    /// until the next head or the input's end.
    headed: bool,
    /// Live lines were read.
    live: bool,
    parent: Option<String>,
    last_ts: Option<i64>,
    /// An assistant message came since the last prompt (its turn is open).
    turn_open: bool,
    /// Usage summed over the steps, once one had any.
    total: Option<Usage>,
    /// OpenCode's own cost, summed over the steps, once one had any.
    cost: Option<f64>,
    /// The live stream's last step finished for this reason.
    last_reason: Option<String>,
    /// The live stream reported an error.
    error: Option<String>,
    /// The session's result was written (a live `done`).
    ended: bool,
    /// The message being read had a step-finish part.
    stepped: bool,
}

impl OpenCodeParser {
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        let parent = || {
            self.parent
                .clone()
                .map(|p| SessionParent::subagent(Cow::Owned(p), None))
        };
        self.head.open(NAME, parent, out)?;
        Ok(())
    }

    fn emit<'a>(&mut self, ts: Option<i64>, kind: Kind<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(out)?;
        if ts.is_some() {
            self.last_ts = self.last_ts.max(ts);
        }
        out(Item::Event(Event::at(ts, kind)))
    }

    fn add_usage<'a>(&mut self, ts: Option<i64>, u: Usage, out: Out<'_, 'a>) -> io::Result<()> {
        self.total = Some(self.total.map_or(u, |t| t.add(&u)));
        self.emit(ts, Kind::UsageDelta(u), out)
    }

    fn add_cost(&mut self, cost: Option<f64>) {
        if let Some(c) = cost {
            let sum = self.cost.unwrap_or(0.0) + c;
            // Rounded to 1e-10 dollars: the sum of a few hundred binary
            // fractions should not print as 0.029879999999999997.
            self.cost = Some((sum * 1e10).round() / 1e10);
        }
    }

    fn end_turn<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if std::mem::take(&mut self.turn_open) {
            self.emit(ts, Kind::TurnEnded { usage: None }, out)?;
        }
        Ok(())
    }

    /// The session is over: its turn ends and its result is written.
    fn end<'a>(&mut self, ok: bool, error: Option<String>, out: Out<'_, 'a>) -> io::Result<()> {
        let ts = self.last_ts;
        self.end_turn(ts, out)?;
        self.open(out)?;
        let mut ev = crate::dialect::common::file_result(self.head.start_ts, ts, self.total);
        if let Kind::Result(r) = &mut ev.kind {
            r.ok = ok;
            r.cost_usd = self.cost;
            r.error = error.map(Cow::Owned);
        }
        self.ended = true;
        out(Item::Event(ev))
    }

    // ------------------------------------------------------------ live

    fn live_line<'a>(&mut self, rec: &'a str, r: Rec<'a>, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if self.headed || (self.ended && self.live) {
            // Another session after this one: close it, start over.
            if !self.ended {
                self.end(true, None, out)?;
            }
            *self = OpenCodeParser::default();
        }
        self.live = true;
        let ts = r.timestamp.0;
        if self.head.session_id.is_none() {
            self.head.session_id = r.session_id.as_deref().map(str::to_owned);
            self.head.start_ts = ts;
        }
        match r.ty.as_deref().unwrap_or("") {
            "error" => {
                let (message, name) = match r.error {
                    Some(e) => error_message(e),
                    None => (Cow::Borrowed("error"), None),
                };
                let text = message.clone().into_owned();
                self.error = Some(match self.error.take() {
                    Some(prev) => format!("{prev}\n{text}"),
                    None => text,
                });
                self.emit(
                    ts,
                    Kind::Error {
                        message,
                        fatal: false,
                        source: name,
                    },
                    out,
                )?;
            }
            "done" => {
                if ts.is_some() {
                    self.last_ts = self.last_ts.max(ts);
                }
                let error = self.error.take();
                self.end(error.is_none(), error, out)?;
            }
            _ => match r.part {
                Some(part) => return self.part(part, ts, ts, true, out),
                None => {
                    self.open(out)?;
                    return keep_unknown(rec, out);
                }
            },
        }
        Ok(Parsed::Done)
    }

    // ------------------------------------------------ export and store

    fn head<'a>(&mut self, r: Rec<'a>, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if self.headed || self.live {
            if !self.ended {
                self.end(true, None, out)?;
            }
            *self = OpenCodeParser::default();
        }
        self.headed = true;
        if let Some(info) = r
            .info
            .and_then(|i| serde_json::from_str::<Info>(i.get()).ok())
        {
            self.head.session_id = info.id.as_deref().map(str::to_owned);
            self.head.cwd = info.directory.as_deref().map(str::to_owned);
            self.parent = info.parent_id.as_deref().map(str::to_owned);
            if let Some(t) = &info.time {
                self.head.start_ts = t.created.0;
                self.last_ts = t.updated.0.or(t.created.0);
            }
        }
        for m in r.messages.unwrap_or_default() {
            self.message_rec(m.get(), out)?;
        }
        Ok(Parsed::Done)
    }

    fn message_rec<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let r: Rec<'a> = match serde_json::from_str(rec) {
            Ok(r) => r,
            Err(_) => {
                self.open(out)?;
                return match read_line::<Rec<'a>>(rec, out)? {
                    Ok(_) => keep_unknown(rec, out),
                    Err(done) => Ok(done),
                };
            }
        };
        self.message(rec, r, out)
    }

    fn message<'a>(&mut self, rec: &'a str, r: Rec<'a>, out: Out<'_, 'a>) -> io::Result<Parsed> {
        self.headed = true;
        let Some(info) = r
            .info
            .and_then(|i| serde_json::from_str::<Info<'a>>(i.get()).ok())
        else {
            self.open(out)?;
            return keep_unknown(rec, out);
        };
        let ts = info.time.as_ref().and_then(|t| t.created.0.or(t.start.0));
        let done_ts = info.time.as_ref().and_then(|t| t.completed.0).or(ts);
        if self.head.model.is_none() {
            self.head.model = info.model_id.get().map(Cow::into_owned).or_else(|| {
                info.model
                    .and_then(Members::of)
                    .and_then(|m| m.nonempty_str("modelID"))
                    .map(Cow::into_owned)
            });
        }
        if self.head.cwd.is_none() {
            self.head.cwd = info
                .path
                .and_then(Members::of)
                .and_then(|p| p.nonempty_str("cwd"))
                .map(Cow::into_owned);
        }
        if self.head.start_ts.is_none() {
            self.head.start_ts = ts;
        }
        let parts = r.parts.unwrap_or_default();
        match info.role.as_deref() {
            Some("user") => self.user(ts, &parts, out)?,
            Some("assistant") => {
                self.turn_open = true;
                let summary = info.summary.is_some_and(|s| s.get() == "true");
                self.stepped = false;
                for p in &parts {
                    if summary
                        && let Ok(part) = serde_json::from_str::<Part<'a>>(p.get())
                        && part.ty.as_deref() == Some("text")
                    {
                        let t = part.time.as_ref().and_then(|t| t.end.0).or(ts);
                        let text = part.text.get().filter(|t| !t.is_empty());
                        let kind = Kind::Summary {
                            phase: SummaryPhase::Completed,
                            text,
                        };
                        self.emit(t, kind, out)?;
                        continue;
                    }
                    self.part(p, ts, done_ts, false, out)?;
                }
                if !self.stepped {
                    // No step recorded: the message's own figures.
                    let usage = info
                        .tokens
                        .and_then(tokens_usage)
                        .filter(|u| u.input > 0 || u.output > 0 || u.cache_read.unwrap_or(0) > 0);
                    if let Some(u) = usage {
                        self.add_usage(done_ts, u, out)?;
                        self.add_cost(info.cost.0);
                    }
                }
                if let Some(e) = info.error {
                    let (message, name) = error_message(e);
                    let source = match name.as_deref() {
                        Some("MessageAbortedError") => Some(Cow::Borrowed("aborted")),
                        _ => name,
                    };
                    let kind = Kind::Error {
                        message,
                        fatal: false,
                        source,
                    };
                    self.emit(done_ts, kind, out)?;
                }
            }
            _ => {
                self.open(out)?;
                return keep_unknown(rec, out);
            }
        }
        Ok(Parsed::Done)
    }

    /// A user message: its typed text is the prompt; what OpenCode added
    /// to it (synthetic text, files, agent mentions) is context.
    fn user<'a>(
        &mut self,
        ts: Option<i64>,
        parts: &[&'a RawValue],
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        self.end_turn(ts, out)?;
        let mut prompt = String::new();
        let mut context: Vec<(UserEventKind, String)> = Vec::new();
        let mut unknown: Vec<&'a RawValue> = Vec::new();
        let mut compaction = false;
        for raw in parts {
            let Ok(p) = serde_json::from_str::<Part<'a>>(raw.get()) else {
                unknown.push(raw);
                continue;
            };
            let text = p.text.as_deref().unwrap_or("");
            match p.ty.as_deref() {
                Some("text") if p.synthetic.0 != Some(true) && p.ignored.0 != Some(true) => {
                    if !prompt.is_empty() {
                        prompt.push('\n');
                    }
                    prompt.push_str(text);
                }
                Some("text") => {
                    if !text.is_empty() {
                        context.push((UserEventKind::Context, text.to_owned()));
                    }
                }
                Some("file") => {
                    let name = p.filename.as_deref().unwrap_or("file");
                    let mime = p.mime.as_deref().unwrap_or("");
                    context.push((UserEventKind::Context, format!("[file {name} ({mime})]")));
                }
                Some("agent") => {
                    let name = p.name.as_deref().unwrap_or("");
                    context.push((UserEventKind::Context, format!("@{name}")));
                }
                Some("subtask") => {
                    let agent = p.agent.as_deref().unwrap_or("");
                    let what = p
                        .description
                        .as_deref()
                        .filter(|d| !d.is_empty())
                        .or(p.prompt.as_deref())
                        .unwrap_or("");
                    context.push((UserEventKind::Command, format!("subtask @{agent}: {what}")));
                }
                Some("compaction") => compaction = true,
                Some("patch" | "snapshot" | "step-start") => {}
                _ => unknown.push(raw),
            }
        }
        if compaction {
            let kind = Kind::Summary {
                phase: SummaryPhase::Started,
                text: None,
            };
            self.emit(ts, kind, out)?;
        }
        if !prompt.is_empty() || (context.is_empty() && !compaction) {
            self.emit(
                ts,
                Kind::UserMessage {
                    text: Cow::Owned(prompt),
                },
                out,
            )?;
        }
        for (what, text) in context {
            let kind = Kind::UserEvent {
                what,
                text: Cow::Owned(text),
            };
            self.emit(ts, kind, out)?;
        }
        for raw in unknown {
            keep_unknown(raw.get(), out)?;
        }
        Ok(())
    }

    /// One part of an assistant message, or of a live line. `ts`: the
    /// line's time (live) or the message's.
    fn part<'a>(
        &mut self,
        raw: &'a RawValue,
        ts: Option<i64>,
        done_ts: Option<i64>,
        live: bool,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let Ok(p) = serde_json::from_str::<Part<'a>>(raw.get()) else {
            self.open(out)?;
            return keep_unknown(raw.get(), out);
        };
        let span = p.time.as_ref();
        match p.ty.as_deref() {
            Some("step-start") => self.open(out)?,
            Some("text") => {
                let t = if live {
                    ts
                } else {
                    span.and_then(|t| t.start.0).or(ts)
                };
                if let Some(text) = p.text.get().filter(|t| !t.is_empty()) {
                    self.emit(t, Kind::TextDelta { text }, out)?;
                }
            }
            Some("reasoning") => {
                let t = if live {
                    ts
                } else {
                    span.and_then(|t| t.start.0).or(ts)
                };
                let end = if live {
                    ts
                } else {
                    span.and_then(|s| s.end.0).or(t)
                };
                if let Some(text) = p.text.get().filter(|t| !t.trim().is_empty()) {
                    let duration_ms = span.and_then(|s| match (s.start.0, s.end.0) {
                        (Some(a), Some(b)) if b >= a => u64::try_from(b - a).ok(),
                        _ => None,
                    });
                    self.emit(t, Kind::ThinkingDelta { text }, out)?;
                    self.emit(end, Kind::ThinkingCompleted { duration_ms }, out)?;
                }
            }
            Some("tool") => return self.tool(raw, p, ts, out),
            Some("step-finish") => {
                self.stepped = true;
                if live {
                    self.turn_open = true;
                    self.last_reason = p.reason.get().map(Cow::into_owned);
                }
                match p.tokens.and_then(tokens_usage) {
                    Some(u) => self.add_usage(done_ts, u, out)?,
                    None => self.open(out)?,
                }
                self.add_cost(p.cost.0);
            }
            Some("retry") => {
                let (message, _) = match p.error {
                    Some(e) => error_message(e),
                    None => (Cow::Borrowed("retry"), None),
                };
                let t = span.and_then(|t| t.created.0).or(ts);
                let kind = Kind::Error {
                    message,
                    fatal: false,
                    source: Some(Cow::Borrowed("retry")),
                };
                self.emit(t, kind, out)?;
            }
            // Workspace bookkeeping; a prompt's parts inside an answer.
            Some("patch" | "snapshot" | "compaction" | "agent" | "file" | "subtask") => {
                self.open(out)?
            }
            _ => {
                self.open(out)?;
                return keep_unknown(raw.get(), out);
            }
        }
        Ok(Parsed::Done)
    }

    /// A tool part: its start, and its end once it has one.
    fn tool<'a>(
        &mut self,
        raw: &'a RawValue,
        p: Part<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let Some(st) = p.state else {
            self.open(out)?;
            return keep_unknown(raw.get(), out);
        };
        let input = st.input.and_then(Members::of);
        let asked = p.tool.as_deref().unwrap_or("");
        // A call OpenCode refused or could not parse: `invalid`, its input
        // naming the tool the model asked for.
        let invalid = asked == "invalid";
        let name = match (invalid, input.as_ref().and_then(|m| m.nonempty_str("tool"))) {
            (true, Some(t)) => normalize_tool_name(&t),
            _ => normalize_tool_name(asked),
        };
        let id = p.call_id.get().unwrap_or_default();
        let args = st.input.map_or_else(json_null, Json::from);
        let mut start = ToolStart::new(id.clone(), Cow::Owned(name.clone()), args);
        if let Some(m) = &input {
            fill_start(&mut start, m);
        }
        let span = st.time.as_ref();
        let t0 = span.and_then(|t| t.start.0).or(ts);
        self.emit(t0, Kind::started(start), out)?;
        let status = st.status.as_deref().unwrap_or("");
        let ok = match status {
            "completed" => !invalid,
            "error" => false,
            // pending, running: not done (the session's end closes it).
            _ => return Ok(Parsed::Done),
        };
        let t1 = span.and_then(|t| t.end.0).or(ts);
        let mut end = ToolEnd::new(id, Cow::Owned(name), ok);
        end.duration_ms = match (t0, t1) {
            (Some(a), Some(b)) if b >= a => u64::try_from(b - a).ok(),
            _ => None,
        };
        let output = st.output.and_then(raw_as_str);
        let meta = st.metadata.and_then(Members::of);
        if !ok {
            end.error = st
                .error
                .get()
                .filter(|e| !e.is_empty())
                .or_else(|| output.clone().filter(|o| !o.is_empty()))
                .or(Some(Cow::Borrowed("error")));
            end.cancelled = status == "error"
                && meta
                    .as_ref()
                    .and_then(|m| m.get("interrupted"))
                    .is_some_and(|v| v.get() == "true");
        }
        if end.tool_name == "shell" {
            let shown = output.clone().or_else(|| {
                meta.as_ref()
                    .and_then(|m| m.str("output"))
                    .filter(|_| status == "error")
            });
            if let Some(o) = shown.filter(|o| !o.is_empty()) {
                end.output = Some(Text::from(o));
            }
            end.exit_code = meta.as_ref().and_then(|m| m.int("exit"));
        }
        if let Some(diff) = meta.as_ref().and_then(|m| m.nonempty_str("diff")) {
            let (added, removed) = count_patch_lines(&diff);
            end.lines_added = Some(added);
            end.lines_removed = Some(removed);
            end.patch = Some(diff);
        }
        end.result = st.output.map(Json::from);
        self.emit(t1, Kind::completed(end), out)?;
        Ok(Parsed::Done)
    }
}

impl Parser for OpenCodeParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let r: Rec<'a> = match read_line(rec, out)? {
            Ok(r) => r,
            Err(done) => return Ok(done),
        };
        if r.ty.0.is_some() && (r.session_id.0.is_some() || r.part.is_some()) {
            return self.live_line(rec, r, out);
        }
        if r.info.is_some() && r.parts.is_some() {
            if !self.headed && !self.head.started && self.live {
                *self = OpenCodeParser::default();
            }
            return self.message(rec, r, out);
        }
        if r.info.is_some() {
            return self.head(r, out);
        }
        if r.todos.0 && r.ty.0.is_none() {
            // The export's tail: the session's todo list, nothing to show.
            return Ok(Parsed::Done);
        }
        self.open(out)?;
        keep_unknown(rec, out)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if self.ended || !(self.headed || self.live) {
            return Ok(());
        }
        if self.live {
            // No `done`: an end on a step finished for `stop` (releases
            // before `done`) ends well; anything else was cut off.
            if self.last_reason.as_deref() == Some("stop") {
                let error = self.error.take();
                return self.end(error.is_none(), error, out);
            }
            let ts = self.last_ts;
            return self.end_turn(ts, out);
        }
        self.end(true, None, out)
    }
}
