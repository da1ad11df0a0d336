//! Pi's saved sessions (`~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`),
//! read as the project's own spec describes them
//! (`packages/coding-agent/docs/session-format.md`, session version 3) and
//! as its session manager writes them (`src/core/session-manager.ts`).
//!
//! - **The header** is the first line, `{type: "session", version, id,
//!   timestamp, cwd, parentSession?}`: the session's id, start and working
//!   directory. It names no model: the first `model_change` entry (or the
//!   first assistant message) does.
//! - **The conversation is a tree.** Every other line is an entry with its
//!   own `id` and its parent's (`parentId`). Going back in `/tree` and going
//!   on from there leaves the abandoned branch in the file. Pi resumes a
//!   session at its last entry: the conversation shown is the path from the
//!   root to the file's last entry. The file is held (up to [`HOLD_BYTES`])
//!   until its end says which path that is; the entries on other branches
//!   are left out, and a non-fatal notice (`source: "branch"`) says how many.
//!   Their usage still counts: those tokens were spent. Past the bound, the
//!   path so far is written out and a later branch back past it can only be
//!   reported.
//! - **Messages** (`type: "message"`): `user` (a prompt), `assistant` (text,
//!   thinking and tool calls, with that one response's `usage`, counted once
//!   as an increment), `toolResult` (a call's outcome, paired by
//!   `toolCallId`), `bashExecution` (a command the user ran with `!`),
//!   `custom` (an extension's message in the context).
//! - Pi's usage counts the cache apart (`input` leaves out `cacheRead` and
//!   `cacheWrite`), as Anthropic's does. Usage on a compaction, a branch
//!   summary or a tool result (work an LLM did for it) counts too.
//! - `compaction` and `branch_summary` entries are completed `summary`
//!   events. A compaction's `retainedTail` repeats messages already in the
//!   file: it is not read again.
//! - `model_change` and `thinking_level_change` before the first message
//!   set the session up; later ones are `user_event` commands.
//!   `custom` (extension state), `label` and `session_info` entries carry
//!   nothing the events show: known, and skipped.
//! - The file has no outcome: its end is the session's `result` (`ok`, the
//!   usage summed, absent when no message had any).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::{SavedHead, fill_start_owned, normalize_tool_name};
use crate::dialect::{Item, Out, Parser, Probe, read_line};
use crate::event::{
    Event, Json, Kind, SessionParent, SummaryPhase, Text, ToolEnd, ToolStart, Usage, UserEventKind,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "pi";

/// The file is held until its end, at most this many bytes; past them the
/// path to the latest entry so far is written out.
pub const HOLD_BYTES: usize = 64 * 1024 * 1024;

/// Entries read before the session begins without a model named.
const WAIT_FOR_MODEL: usize = 64;

/// The entry types the spec lists.
const ENTRY_TYPES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// Detection: the header (`type: "session"` with a `version` and a `cwd`),
/// or an entry of one of Pi's types that carries `parentId` (even `null`)
/// beside an `id` and an ISO timestamp. Placed before Gemini CLI's stream
/// rule, which would take a `message` entry with its ISO timestamp.
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    match p.ty() {
        "session" => p.version.is_some() && p.cwd.is_some() && p.id.is_some(),
        t => ENTRY_TYPES.contains(&t) && p.parent_id.0 && p.id.is_some() && p.iso_ts(),
    }
}

/// The envelope of every line.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(rename = "parentSession", borrow, default)]
    parent_session: LaxStr<'a>,
    #[serde(rename = "modelId", borrow, default)]
    model_id: LaxStr<'a>,
    #[serde(borrow, default)]
    provider: LaxStr<'a>,
    #[serde(rename = "thinkingLevel", borrow, default)]
    thinking_level: LaxStr<'a>,
    #[serde(borrow, default)]
    summary: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// A message (`AgentMessage`).
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: LaxStr<'a>,
    #[serde(rename = "errorMessage", borrow, default)]
    error_message: LaxStr<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LaxStr<'a>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: LaxStr<'a>,
    #[serde(rename = "isError", default)]
    is_error: LaxBool,
    #[serde(borrow, default)]
    details: Option<&'a RawValue>,
    #[serde(borrow, default)]
    command: LaxStr<'a>,
    #[serde(borrow, default)]
    output: LaxStr<'a>,
    #[serde(borrow, default)]
    summary: LaxStr<'a>,
}

/// A content block of a message.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "mimeType", borrow, default)]
    mime_type: LaxStr<'a>,
    #[serde(borrow, default)]
    data: LaxStr<'a>,
}

/// Pi's `Usage`: `input` leaves out the cache reads and writes.
fn usage_of(raw: Option<&RawValue>) -> Option<Usage> {
    let m = Members::of(raw?)?;
    let n = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    let (input, output) = (n("input"), n("output"));
    if input.is_none() && output.is_none() {
        return None;
    }
    Some(Usage::cache_apart(
        input.unwrap_or(0),
        output.unwrap_or(0),
        n("cacheRead"),
        n("cacheWrite"),
    ))
}

/// The usage an entry's line carries: an assistant message's or a tool
/// result's, a compaction's or a branch summary's.
fn line_usage(rec: &str) -> Option<Usage> {
    let e: Envelope = serde_json::from_str(rec).ok()?;
    match e.ty.as_deref()? {
        "message" => {
            let m: Message = serde_json::from_str(e.message?.get()).ok()?;
            usage_of(m.usage)
        }
        "compaction" | "branch_summary" => usage_of(e.usage),
        _ => None,
    }
}

/// The text of a `content`: a string, or its text blocks (an image as a
/// placeholder naming its kind and size).
fn content_text(raw: Option<&RawValue>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    if let Some(s) = raw_as_str(raw) {
        return s.into_owned();
    }
    let blocks: Vec<Block> = serde_json::from_str(raw.get()).unwrap_or_default();
    let mut text = String::new();
    for b in blocks {
        match b.ty.as_deref() {
            Some("text") => text.push_str(b.text.as_deref().unwrap_or("")),
            Some("image") => {
                if !text.is_empty() && !text.ends_with(char::is_whitespace) {
                    text.push('\n');
                }
                text.push_str(&crate::strings::image_placeholder(
                    b.mime_type.as_deref().unwrap_or(""),
                    b.data.as_deref().unwrap_or(""),
                ));
            }
            _ => {}
        }
    }
    text
}

/// One line held until the file's end.
struct Held {
    rec: String,
    /// Its entry id (`None`: the header or a line that is no tree entry,
    /// always shown).
    id: Option<String>,
    parent: Option<String>,
}

/// Parser state for one saved session.
#[derive(Default)]
pub struct PiParser {
    /// Its session's header, and whether its `session_started` was written.
    head: SavedHead,
    /// The header was read.
    headed: bool,
    /// The session this one was forked from (`parentSession`: its file).
    parent_session: Option<String>,
    last_ts: Option<i64>,
    /// Entries read while the session waits for its model.
    waited: usize,
    held: Vec<Held>,
    held_bytes: usize,
    /// The last entry of the path written out when the hold overflowed.
    written_tail: Option<String>,
    /// Ids of entries written out (a branch back to one of them is reported).
    written: std::collections::HashSet<String>,
    /// A model response came since the last prompt.
    turn_open: bool,
    /// A message was shown (later model or thinking changes are commands).
    conversed: bool,
    /// Tool calls started and not completed: id → normalized name.
    open_calls: HashMap<String, String>,
    total: Option<Usage>,
    left_out: u64,
}

impl PiParser {
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        let parent = || {
            self.parent_session
                .clone()
                .map(|p| SessionParent::fork(Cow::Owned(p)))
        };
        self.head.open(NAME, parent, out)?;
        Ok(())
    }

    fn add_usage<'a>(&mut self, u: Usage, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        self.total = Some(self.total.map_or(u, |t| t.add(&u)));
        out(Item::Event(Event::at(ts, Kind::UsageDelta(u))))
    }

    fn end_turn<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if std::mem::take(&mut self.turn_open) {
            out(Item::Event(Event::at(ts, Kind::TurnEnded { usage: None })))?;
        }
        Ok(())
    }

    /// Write the held lines out: the path from the root to the latest entry,
    /// and the usage of the entries on other branches.
    fn settle<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.held_bytes = 0;
        let index: HashMap<&str, usize> = held
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.id.as_deref().map(|id| (id, i)))
            .collect();
        let mut on_path = vec![false; held.len()];
        let leaf = held.iter().rposition(|h| h.id.is_some());
        let mut root_parent = None;
        if let Some(mut at) = leaf {
            let mut steps = 0;
            loop {
                if on_path[at] || steps > held.len() {
                    break; // a cycle: not a tree Pi writes
                }
                on_path[at] = true;
                steps += 1;
                match held[at].parent.as_deref() {
                    Some(p) => match index.get(p) {
                        Some(&i) => at = i,
                        None => {
                            root_parent = Some(p.to_owned());
                            break;
                        }
                    },
                    None => break,
                }
            }
        }
        if let Some(p) = &root_parent
            && Some(p) != self.written_tail.as_ref()
            && self.written.contains(p)
        {
            self.open(out)?;
            out(Item::Event(Event::new(Kind::Error {
                message: Cow::Borrowed(
                    "the conversation went back to an earlier entry; entries written above \
                     this point were on a branch it left",
                ),
                fatal: false,
                source: Some(Cow::Borrowed("branch")),
            })))?;
        }
        for (i, h) in held.iter().enumerate() {
            if h.id.is_none() || on_path[i] {
                self.entry(&h.rec, &mut |it| out(it.into_owned()))?;
                if let Some(id) = &h.id {
                    self.written.insert(id.clone());
                    self.written_tail = Some(id.clone());
                }
            } else {
                self.left_out += 1;
                if let Some(u) = line_usage(&h.rec) {
                    let ts = serde_json::from_str::<Envelope>(&h.rec)
                        .ok()
                        .and_then(|e| e.timestamp.as_deref().and_then(iso_ms));
                    self.open(out)?;
                    self.add_usage(u, ts, out)?;
                }
            }
        }
        Ok(())
    }

    /// One entry of the path.
    fn entry<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(out)?;
        let e: Envelope<'a> = match serde_json::from_str(rec) {
            Ok(e) => e,
            Err(_) => return crate::dialect::keep_unknown(rec, out).map(|_| ()),
        };
        let ts = e.timestamp.as_deref().and_then(iso_ms);
        match e.ty.as_deref() {
            Some("session") => Ok(()),
            Some("message") => {
                let m = e
                    .message
                    .and_then(|m| serde_json::from_str::<Message<'a>>(m.get()).ok());
                match m {
                    Some(m) => self.message(rec, m, ts, out),
                    None => crate::dialect::keep_unknown(rec, out).map(|_| ()),
                }
            }
            Some(t @ ("compaction" | "branch_summary")) => {
                self.end_turn(ts, out)?;
                let text =
                    e.summary.get().filter(|s| !s.is_empty()).or_else(|| {
                        (t == "compaction").then_some(Cow::Borrowed("context compacted"))
                    });
                out(Item::Event(Event::at(
                    ts,
                    Kind::Summary {
                        phase: SummaryPhase::Completed,
                        text,
                    },
                )))?;
                if let Some(u) = usage_of(e.usage) {
                    self.add_usage(u, ts, out)?;
                }
                Ok(())
            }
            Some("custom_message") => {
                let text = content_text(e.content);
                if text.is_empty() {
                    return Ok(());
                }
                self.conversed = true;
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Context,
                        text: Cow::Owned(text),
                    },
                )))
            }
            Some("model_change") => {
                if !self.conversed {
                    return Ok(());
                }
                let model = match (e.provider.as_deref(), e.model_id.as_deref()) {
                    (Some(p), Some(m)) => format!("{p}/{m}"),
                    (_, Some(m)) => m.to_owned(),
                    _ => "unknown".to_owned(),
                };
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Command,
                        text: Cow::Owned(format!("model: {model}")),
                    },
                )))
            }
            Some("thinking_level_change") => {
                if !self.conversed {
                    return Ok(());
                }
                let level = e.thinking_level.as_deref().unwrap_or("unknown");
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Command,
                        text: Cow::Owned(format!("thinking level: {level}")),
                    },
                )))
            }
            Some("custom" | "label" | "session_info") => Ok(()),
            _ => crate::dialect::keep_unknown(rec, out).map(|_| ()),
        }
    }

    /// A `message` entry on the path.
    fn message<'a>(
        &mut self,
        rec: &'a str,
        m: Message<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        self.conversed = true;
        match m.role.as_deref() {
            Some("user") => {
                self.end_turn(ts, out)?;
                self.close_unanswered(ts, "a new prompt came before its result", out)?;
                let text = content_text(m.content);
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserMessage {
                        text: Cow::Owned(text),
                    },
                )))
            }
            Some("assistant") => {
                self.turn_open = true;
                let blocks: Vec<Block<'a>> = m
                    .content
                    .and_then(|c| serde_json::from_str(c.get()).ok())
                    .unwrap_or_default();
                let mut calls = Vec::new();
                for b in blocks {
                    match b.ty.as_deref() {
                        Some("thinking") => {
                            if let Some(t) = b.thinking.get().filter(|t| !t.is_empty()) {
                                out(Item::Event(Event::at(ts, Kind::ThinkingDelta { text: t })))?;
                                out(Item::Event(Event::at(
                                    ts,
                                    Kind::ThinkingCompleted { duration_ms: None },
                                )))?;
                            }
                        }
                        Some("text") => {
                            if let Some(t) = b.text.get().filter(|t| !t.is_empty()) {
                                out(Item::Event(Event::at(ts, Kind::TextDelta { text: t })))?;
                            }
                        }
                        Some("toolCall") => {
                            let id = b.id.get().unwrap_or_default();
                            let name = normalize_tool_name(b.name.as_deref().unwrap_or(""));
                            let args = b.arguments.map_or_else(crate::event::json_null, Json::from);
                            let mut start =
                                ToolStart::new(id.clone(), Cow::Owned(name.clone()), args);
                            if let Some(a) = b.arguments.and_then(Members::of) {
                                fill_start_owned(&mut start, &a);
                                pi_edit_details(&mut start, &a);
                            }
                            self.open_calls.insert(id.to_string(), name);
                            calls.push(id.into_owned());
                            out(Item::Event(Event::at(ts, Kind::started(start))))?;
                        }
                        _ => {}
                    }
                }
                if let Some(u) = usage_of(m.usage) {
                    self.add_usage(u, ts, out)?;
                }
                let stop = m.stop_reason.as_deref().unwrap_or("");
                if matches!(stop, "error" | "aborted") {
                    let message =
                        m.error_message
                            .get()
                            .filter(|s| !s.is_empty())
                            .unwrap_or(Cow::Borrowed(if stop == "aborted" {
                                "the response was aborted"
                            } else {
                                "the response ended with an error"
                            }));
                    out(Item::Event(Event::at(
                        ts,
                        Kind::Error {
                            message,
                            fatal: false,
                            source: Some(Cow::Borrowed(if stop == "aborted" {
                                "aborted"
                            } else {
                                "assistant"
                            })),
                        },
                    )))?;
                    // Pi runs no tool call of such a response.
                    for id in calls {
                        self.cancel(id, ts, "not run: the response ended before it", out)?;
                    }
                }
                Ok(())
            }
            Some("toolResult") => {
                let id = m.tool_call_id.get().unwrap_or_default();
                let name = self
                    .open_calls
                    .remove(id.as_ref())
                    .unwrap_or_else(|| normalize_tool_name(m.tool_name.as_deref().unwrap_or("")));
                let ok = m.is_error.0 != Some(true);
                let text = content_text(m.content);
                let mut end = ToolEnd::new(id, Cow::Owned(name), ok);
                if end.tool_name == "shell" {
                    // A failed command's text ends with its exit code.
                    if let Some(code) = text
                        .rsplit_once("Command exited with code ")
                        .and_then(|(_, c)| c.trim().parse::<i64>().ok())
                    {
                        end.exit_code = Some(code);
                    } else if ok {
                        end.exit_code = Some(0);
                    }
                    end.output = Some(Text::from(text.clone()));
                }
                if let Some(diff) = m
                    .details
                    .and_then(Members::of)
                    .and_then(|d| d.nonempty_str("diff"))
                {
                    let (added, removed) = pi_diff_lines(&diff);
                    end.lines_added = Some(added);
                    end.lines_removed = Some(removed);
                }
                if !ok {
                    end.error = Some(Cow::Owned(if text.is_empty() {
                        "error".to_owned()
                    } else {
                        text
                    }));
                }
                end.result = m.content.map(Json::from);
                out(Item::Event(Event::at(ts, Kind::completed(end))))?;
                if let Some(u) = usage_of(m.usage) {
                    self.add_usage(u, ts, out)?;
                }
                Ok(())
            }
            Some("bashExecution") => {
                let command = m.command.get().unwrap_or_default();
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Command,
                        text: Cow::Owned(format!("!{command}")),
                    },
                )))?;
                if let Some(o) = m.output.get().filter(|o| !o.is_empty()) {
                    out(Item::Event(Event::at(
                        ts,
                        Kind::UserEvent {
                            what: UserEventKind::CommandOutput,
                            text: o,
                        },
                    )))?;
                }
                Ok(())
            }
            Some("custom") => {
                let text = content_text(m.content);
                if text.is_empty() {
                    return Ok(());
                }
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Context,
                        text: Cow::Owned(text),
                    },
                )))
            }
            Some("branchSummary" | "compactionSummary") => out(Item::Event(Event::at(
                ts,
                Kind::Summary {
                    phase: SummaryPhase::Completed,
                    text: m.summary.get(),
                },
            ))),
            _ => crate::dialect::keep_unknown(rec, out).map(|_| ()),
        }
    }

    /// Complete call `id` as not run.
    fn cancel<'a>(
        &mut self,
        id: String,
        ts: Option<i64>,
        why: &'static str,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Some(name) = self.open_calls.remove(&id) else {
            return Ok(());
        };
        let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), false);
        end.cancelled = true;
        end.error = Some(Cow::Borrowed(why));
        out(Item::Event(Event::at(ts, Kind::completed(end))))
    }

    /// Calls of the previous turn that never got a result.
    fn close_unanswered<'a>(
        &mut self,
        ts: Option<i64>,
        why: &'static str,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let ids: Vec<String> = self.open_calls.keys().cloned().collect();
        let mut ids = ids;
        ids.sort();
        for id in ids {
            self.cancel(id, ts, why, out)?;
        }
        Ok(())
    }
}

/// The session id in a session file's name (`<timestamp>_<id>.jsonl`).
fn session_id_of_path(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let id = stem.rsplit_once('_').map_or(stem, |(_, id)| id);
    (!id.is_empty()).then_some(id)
}

/// Pi's edit tool names its strings `oldText` and `newText`; its write
/// tool names the file's text `content`.
fn pi_edit_details(start: &mut ToolStart<'_>, a: &Members<'_>) {
    if start.tool_name == "write"
        && let Some(content) = a.str("content")
    {
        let d = start.details.get_or_insert_with(Default::default);
        if d.file_content.is_none() {
            d.file_content = Some(Cow::Owned(content.into_owned()));
        }
        return;
    }
    if start.tool_name != "edit" {
        return;
    }
    let (Some(old), Some(new)) = (a.str("oldText"), a.str("newText")) else {
        return;
    };
    let d = start.details.get_or_insert_with(Default::default);
    if d.old_string.is_none() {
        d.old_string = Some(Cow::Owned(old.into_owned()));
    }
    if d.new_string.is_none() {
        d.new_string = Some(Cow::Owned(new.into_owned()));
    }
}

/// Lines added and removed in the diff Pi's edit tool returns (lines that
/// begin with `+` or `-` followed by a line number).
fn pi_diff_lines(diff: &str) -> (u64, u64) {
    let (mut added, mut removed) = (0, 0);
    for l in diff.lines() {
        let mut c = l.chars();
        let sign = c.next();
        let numbered = c
            .as_str()
            .trim_start()
            .starts_with(|ch: char| ch.is_ascii_digit());
        match sign {
            Some('+') if numbered => added += 1,
            Some('-') if numbered => removed += 1,
            _ => {}
        }
    }
    (added, removed)
}

impl Parser for PiParser {
    fn counts_drift(&self) -> bool {
        // Entries are emitted when the path is read, at the end.
        true
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let e: Envelope<'a> = match read_line(rec, out)? {
            Ok(e) => e,
            Err(Parsed::Done) => {
                // Kept as unknown now; counted here, as this reader does.
                out(Item::NotUnderstood(Cow::Owned(
                    crate::dialect::record_kind(rec),
                )))?;
                return Ok(Parsed::Done);
            }
            Err(other) => return Ok(other),
        };
        let ts = e.timestamp.as_deref().and_then(iso_ms);
        if ts.is_some() {
            self.last_ts = self.last_ts.max(ts);
        }
        let ty = e.ty.as_deref().unwrap_or("");
        if ty == "session" {
            if self.headed {
                // A second header: a second session in the same input.
                self.finish_session(out)?;
                *self = PiParser::default();
            }
            self.headed = true;
            self.head.session_id = e.id.as_deref().map(str::to_owned);
            self.head.cwd = e.cwd.as_deref().map(str::to_owned);
            self.head.start_ts = ts;
            self.parent_session = e
                .parent_session
                .as_deref()
                .and_then(session_id_of_path)
                .map(str::to_owned);
            return Ok(Parsed::Done);
        }
        self.headed = true;
        if self.head.start_ts.is_none() {
            self.head.start_ts = ts;
        }
        if !ENTRY_TYPES.contains(&ty) {
            // Its unknown event comes when the path is read, at the end.
            out(Item::NotUnderstood(Cow::Owned(ty.to_owned())))?;
        }
        if !self.head.started {
            if self.head.model.is_none() {
                self.head.model = match ty {
                    "model_change" => e.model_id.as_deref().map(str::to_owned),
                    "message" => e
                        .message
                        .and_then(|m| serde_json::from_str::<Message>(m.get()).ok())
                        .filter(|m| m.role.as_deref() == Some("assistant"))
                        .and_then(|m| m.model.get().map(Cow::into_owned)),
                    _ => None,
                };
            }
            self.waited += 1;
            if self.head.model.is_some() || self.waited >= WAIT_FOR_MODEL {
                self.open(out)?;
            }
        }
        self.held_bytes += rec.len();
        self.held.push(Held {
            rec: rec.to_owned(),
            id: e.id.get().map(Cow::into_owned),
            parent: e.parent_id.get().map(Cow::into_owned),
        });
        if self.held_bytes > HOLD_BYTES {
            self.settle(out)?;
        }
        Ok(Parsed::Done)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if !self.headed {
            return Ok(());
        }
        self.finish_session(out)
    }
}

impl PiParser {
    /// The file (or one session of it) ended: write the path out, then the
    /// notice and the result.
    fn finish_session<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(out)?;
        self.settle(out)?;
        let ts = self.last_ts;
        self.end_turn(ts, out)?;
        self.close_unanswered(ts, "the session ended before its result was saved", out)?;
        if self.left_out > 0 {
            let n = self.left_out;
            let message = format!(
                "{n} {} on other branches of the conversation tree left out \
                 (shown: the path to the file's last entry; their usage is counted)",
                if n == 1 { "entry" } else { "entries" }
            );
            out(Item::Event(Event::at(
                ts,
                Kind::Error {
                    message: Cow::Owned(message),
                    fatal: false,
                    source: Some(Cow::Borrowed("branch")),
                },
            )))?;
        }
        let result = crate::dialect::common::file_result(self.head.start_ts, ts, self.total);
        out(Item::Event(result))
    }
}
