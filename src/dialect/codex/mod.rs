//! OpenAI Codex CLI `codex exec --json`, and the pre-0.44 `{"id","msg"}` form.
//!
//! The format is described in docs/dialects.md#codex; the real captures
//! in `shared/corpus/codex/` show the parts that shape this parser:
//! - `thread.started` opens the session; it names no model and no cwd;
//! - nothing streams until an item completes: `agent_message` and
//!   `reasoning` arrive whole in `item.completed`; a `command_execution`
//!   starts with `aggregated_output:""` and completes with the whole output
//!   (Windows builds write `\r\n`); an `item.updated` of a command, if one
//!   ever comes, is a cumulative snapshot ([`Item::OutputSnapshot`]);
//! - `file_change` items list paths and kinds but no diff (newer builds may
//!   add one per change, which becomes the `patch`);
//! - `turn.completed.usage` is the thread's running total ([`Item::UsageTotal`],
//!   never summed); the end of a turn is the session's `result`, so a
//!   thread's later turn begins a session of its own (same id);
//! - a failure is reported twice: a top-level `error` and then `turn.failed`
//!   with the same message (itself often an API error object as a JSON
//!   string). The `error` is held for one line so the message shows once;
//!   a non-fatal `error` item can come before `turn.started`.
//!
//! The legacy form (`{"id":…,"msg":{"type":…}}`, codex ≤ 0.43) streams
//! deltas (`agent_message_delta`, base64 `exec_command_output_delta` chunks)
//! and repeats whole messages afterwards (recaps).

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{
    base64_decode, count_patch_lines, join_argv, normalize_tool_name, render_todos,
};
use super::{Channel, Item, Out, Parser, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SessionStart, Str, SummaryPhase, Text, ToolEnd,
    ToolStart, Usage, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxInt, LaxStr, Members, S, raw_as_str};

/// One `exec --json` line.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    thread_id: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    item: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(borrow, default)]
    delta: LaxStr<'a>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    questions: Option<&'a RawValue>,
    /// The legacy form's payload.
    #[serde(borrow, default)]
    msg: Option<&'a RawValue>,
    // A legacy config summary line.
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    workdir: LaxStr<'a>,
    /// The legacy form's second line: the prompt.
    #[serde(borrow, default)]
    prompt: LaxStr<'a>,
}

/// An item (`item.started/updated/completed`): every item type's fields.
#[derive(Deserialize)]
struct ItemObj<'a> {
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    /// The 0.41–0.43 experimental form's name for `type`.
    #[serde(borrow, default)]
    item_type: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    aggregated_output: LaxStr<'a>,
    #[serde(default)]
    exit_code: LaxInt,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    changes: Option<&'a RawValue>,
    #[serde(borrow, default)]
    server: LaxStr<'a>,
    #[serde(borrow, default)]
    tool: LaxStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    query: LaxStr<'a>,
    #[serde(borrow, default)]
    prompt: LaxStr<'a>,
    #[serde(borrow, default)]
    items: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
}

/// Parser state for one Codex input.
#[derive(Default)]
pub struct CodexParser {
    started: bool,
    /// Tool items started and not completed, by id: whether their output
    /// was seen in an `item.updated` snapshot.
    open: CallTable<bool>,
    /// The last agent message (the result's text).
    last_message: Option<String>,
    /// The last running total, for the turn's own usage.
    last_total: Usage,
    /// A top-level `error` waiting to see whether `turn.failed` repeats it.
    pending_error: Option<String>,
    /// The last todo list shown (skip an identical snapshot).
    last_todos: Option<String>,
    /// The thread's id, for the sessions of its later turns.
    thread_id: Option<String>,
    /// A turn of this thread has ended: the next one is a new session.
    turn_done: bool,
    /// The thread's running total when the current session began.
    base: Usage,
}

impl Parser for CodexParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let ty = line.ty.as_deref();
        // The repeat of a held failure message is the only line that may
        // swallow it; anything else lets it out first.
        if let Some(msg) = self.pending_error.take() {
            let repeated = ty == Some("turn.failed")
                && line.error.and_then(error_message).is_some_and(|m| m == msg);
            if !repeated {
                out(Item::Event(Event::new(nonfatal(Cow::Owned(msg)))))?;
            }
        }
        if let Some(m) = line.msg {
            return self.legacy(rec, m, out);
        }
        match ty {
            Some("thread.started" | "session.created") => {
                self.started = true;
                self.turn_done = false;
                let id = line.thread_id.get().or(line.session_id.get());
                // The running total is the thread's: a resumed thread's goes
                // on from where it was, a new thread's starts from zero.
                if id.is_none() || id.as_deref() != self.thread_id.as_deref() {
                    self.last_total = Usage::default();
                }
                self.thread_id = id.as_deref().map(str::to_owned);
                self.base = self.last_total;
                out(Item::Event(Event::new(Kind::SessionStarted(
                    SessionStart {
                        session_id: id,
                        dialect: Cow::Borrowed("codex"),
                        ..SessionStart::default()
                    },
                ))))?;
            }
            Some("turn.started") => {
                // Each turn ends with the session's result (exec has no result
                // event), so a further turn of the same thread is a session
                // of its own: one result per session, as every format expects.
                if std::mem::take(&mut self.turn_done) {
                    self.next_turn(out)?;
                }
            }
            Some("item.started" | "item.updated" | "item.completed") => {
                let Some(item) = line
                    .item
                    .and_then(|i| serde_json::from_str::<ItemObj>(i.get()).ok())
                else {
                    return keep_unknown(rec, out);
                };
                let phase = match ty {
                    Some("item.started") => Phase::Started,
                    Some("item.updated") => Phase::Updated,
                    _ => Phase::Completed,
                };
                if !self.item(&item, line.item.expect("parsed above"), phase, out)? {
                    return keep_unknown(rec, out);
                }
            }
            Some("item.plan.delta") => {
                let text = line.delta.get().unwrap_or_default();
                out(Item::Event(Event::new(Kind::TextDelta { text })))?;
            }
            Some("request_user_input") => {
                let id = line.call_id.get().unwrap_or_default();
                let args = line.questions.map_or_else(json_null, Json::from);
                let start = ToolStart::new(id.clone(), Cow::Borrowed("question"), args);
                out(Item::Event(Event::new(Kind::started(start))))?;
                // exec writes no answer event: the question was put.
                out(Item::Event(Event::new(Kind::completed(ToolEnd::new(
                    id,
                    Cow::Borrowed("question"),
                    true,
                )))))?;
            }
            Some("turn.completed") => {
                let total = line
                    .usage
                    .and_then(Members::of)
                    .as_ref()
                    .and_then(openai_usage);
                let turn = total.map(|t| t.minus(&self.last_total));
                // The thread's running total, less what earlier sessions
                // (turns) of the thread already counted.
                let session = total.map(|t| t.minus(&self.base));
                if let (Some(t), Some(s)) = (total, session) {
                    out(Item::UsageTotal { ts: None, usage: s })?;
                    self.last_total = t;
                }
                out(Item::Event(Event::new(Kind::TurnEnded { usage: turn })))?;
                out(Item::Event(Event::new(Kind::Result(SessionResult {
                    ok: true,
                    text: self.last_message.take().map(Cow::Owned),
                    usage: session,
                    ..SessionResult::default()
                }))))?;
                self.turn_done = true;
            }
            Some("turn.failed") => {
                let error = line
                    .error
                    .and_then(error_message)
                    .unwrap_or_else(|| "the turn failed".to_owned());
                out(Item::Event(Event::new(Kind::TurnEnded { usage: None })))?;
                out(Item::Event(Event::new(Kind::Result(SessionResult {
                    ok: false,
                    error: Some(Cow::Owned(error)),
                    ..SessionResult::default()
                }))))?;
                self.turn_done = true;
            }
            Some("error") => {
                let msg = line
                    .message
                    .as_deref()
                    .map(readable_error)
                    .unwrap_or_default();
                self.pending_error = Some(msg);
            }
            None if line.prompt.0.is_some() => {
                // The prompt of a later task (legacy form) opens its session.
                if std::mem::take(&mut self.turn_done) {
                    self.next_turn(out)?;
                }
                let text = line.prompt.get().unwrap_or_default();
                out(Item::Event(Event::new(Kind::UserMessage { text })))?;
            }
            None if line.model.0.is_some() || line.workdir.0.is_some() => {
                // The legacy form's first line: a summary of the config.
                self.started = true;
                out(Item::Event(Event::new(Kind::SessionStarted(
                    SessionStart {
                        session_id: None,
                        dialect: Cow::Borrowed("codex"),
                        model: line.model.get(),
                        cwd: line.workdir.get(),
                        permission_mode: None,
                    },
                ))))?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if let Some(msg) = self.pending_error.take() {
            out(Item::Event(Event::new(nonfatal(Cow::Owned(msg)))))?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

fn nonfatal(message: Str<'_>) -> Kind<'_> {
    Kind::Error {
        message,
        fatal: false,
        source: None,
    }
}

impl CodexParser {
    /// A further turn of the same thread: a session of its own, whose usage
    /// counts from the thread's running total so far.
    fn next_turn(&mut self, out: Out<'_, '_>) -> io::Result<()> {
        self.base = self.last_total;
        out(Item::Event(Event::new(Kind::SessionStarted(
            SessionStart {
                session_id: self.thread_id.clone().map(Cow::Owned),
                dialect: Cow::Borrowed("codex"),
                ..SessionStart::default()
            },
        ))))
    }

    fn open_call(&mut self, id: &str) -> bool {
        if self.open.contains(id) {
            return false;
        }
        // Past the cap the oldest call is forgotten.
        self.open.insert(id, false);
        true
    }

    fn close_call(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some()
    }

    /// Emit a start for a tool item unless it is already open (an item may
    /// arrive only completed).
    fn ensure_start<'a>(&mut self, start: ToolStart<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.open_call(&start.call_id) {
            out(Item::Event(Event::new(Kind::started(start))))?;
        }
        Ok(())
    }

    /// One item event; false for an item type this parser does not know.
    fn item<'a>(
        &mut self,
        it: &ItemObj<'a>,
        raw: &'a RawValue,
        phase: Phase,
        out: Out<'_, 'a>,
    ) -> io::Result<bool> {
        let id = it.id.clone().get().unwrap_or_default();
        let ev = |k| Item::Event(Event::new(k));
        let ty = it.ty.as_deref().or(it.item_type.as_deref());
        match ty {
            Some("agent_message" | "assistant_message") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    self.last_message = Some(text.to_string());
                    out(ev(Kind::TextDelta { text }))?;
                }
            }
            Some("reasoning") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    out(ev(Kind::ThinkingDelta { text }))?;
                    out(ev(Kind::ThinkingCompleted { duration_ms: None }))?;
                }
            }
            Some("plan") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    out(Item::Recap {
                        ts: None,
                        channel: Channel::Text,
                        text,
                    })?;
                }
            }
            Some("command_execution") => {
                let command = it.command.and_then(command_text);
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("shell"),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.command = command;
                self.ensure_start(start, out)?;
                match phase {
                    Phase::Started => {}
                    Phase::Updated => {
                        if let Some(text) = it.aggregated_output.clone().get() {
                            // Open: `ensure_start` above opened it.
                            if let Some(updated) = self.open.get_mut(&id) {
                                *updated = true;
                            }
                            out(Item::OutputSnapshot {
                                ts: None,
                                call_id: id,
                                stream: OutStream::Stdout,
                                text,
                            })?;
                        }
                    }
                    Phase::Completed => {
                        let output = it.aggregated_output.clone().get();
                        if self.open.get(&id).copied().unwrap_or(false)
                            && let Some(text) = output.clone()
                        {
                            out(Item::OutputSnapshot {
                                ts: None,
                                call_id: id.clone(),
                                stream: OutStream::Stdout,
                                text,
                            })?;
                        }
                        self.close_call(&id);
                        let status = it.status.as_deref().unwrap_or("completed");
                        let mut end =
                            ToolEnd::new(id, Cow::Borrowed("shell"), status == "completed");
                        end.exit_code = it.exit_code.0;
                        end.ok = end.ok && end.exit_code.is_none_or(|c| c == 0);
                        if end.exit_code.is_none() && status == "completed" {
                            // Abandoned at turn end (exit_code null).
                            end.ok = false;
                        }
                        if !end.ok {
                            end.error = Some(Cow::Owned(match (status, end.exit_code) {
                                ("declined", _) => "declined".to_owned(),
                                (_, Some(c)) => format!("exit code {c}"),
                                (s, None) if s != "completed" => s.to_owned(),
                                _ => "no exit code".to_owned(),
                            }));
                        }
                        end.output = output.map(Text::from);
                        end.result = Some(Json::from(args_without(
                            raw,
                            &["id", "type", "command", "aggregated_output"],
                        )));
                        out(ev(Kind::completed(end)))?;
                    }
                }
            }
            Some("file_change") => {
                let changes = it.changes;
                let name = file_change_name(changes);
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Owned(name.clone()),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.path = changes.and_then(single_path);
                self.ensure_start(start, out)?;
                match phase {
                    Phase::Started => {}
                    Phase::Updated => {
                        if let Some(c) = changes {
                            out(ev(Kind::ToolCallProgress {
                                call_id: id,
                                partial: Json::from(c),
                            }))?;
                        }
                    }
                    Phase::Completed => {
                        self.close_call(&id);
                        let status = it.status.as_deref().unwrap_or("completed");
                        let mut end = ToolEnd::new(id, Cow::Owned(name), status == "completed");
                        if !end.ok {
                            end.error = Some(Cow::Owned(status.to_owned()));
                        }
                        if let Some(p) = changes.and_then(change_diffs) {
                            let (a, d) = count_patch_lines(&p);
                            end.lines_added = Some(a);
                            end.lines_removed = Some(d);
                            end.patch = Some(Cow::Owned(p));
                        }
                        end.result = Some(Json::from(args_without(raw, &["id", "type"])));
                        out(ev(Kind::completed(end)))?;
                    }
                }
            }
            Some("mcp_tool_call") => {
                let args = it.arguments.map_or_else(json_null, Json::from);
                let mut start = ToolStart::new(id.clone(), Cow::Borrowed("mcp"), args);
                start.mcp_server = it.server.clone().get();
                start.mcp_tool = it.tool.clone().get();
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    let err = it.error.and_then(error_message);
                    let status = it.status.as_deref().unwrap_or("completed");
                    let mut end = ToolEnd::new(
                        id,
                        Cow::Borrowed("mcp"),
                        status == "completed" && err.is_none(),
                    );
                    end.error = err
                        .map(Cow::Owned)
                        .or_else(|| (!end.ok).then(|| Cow::Owned(status.to_owned())));
                    end.result = it.result.map(Json::from);
                    out(ev(Kind::completed(end)))?;
                }
            }
            Some("web_search") => {
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("web_search"),
                    Json::from(args_without(raw, &["id", "type"])),
                );
                start.query = it.query.clone().get();
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    out(ev(Kind::completed(ToolEnd::new(
                        id,
                        Cow::Borrowed("web_search"),
                        true,
                    ))))?;
                }
            }
            Some("collab_tool_call") => {
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("task"),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.description = it.prompt.clone().get().or(it.tool.clone().get());
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    let status = it.status.as_deref().unwrap_or("completed");
                    let mut end = ToolEnd::new(id, Cow::Borrowed("task"), status == "completed");
                    if !end.ok {
                        end.error = Some(Cow::Owned(status.to_owned()));
                    }
                    end.result = Some(Json::from(raw));
                    out(ev(Kind::completed(end)))?;
                }
            }
            Some("todo_list") => {
                if let Some(text) = it
                    .items
                    .and_then(|i| render_todos(i, &["text", "content"], &["completed", "status"]))
                    && self.last_todos.as_deref() != Some(text.as_str())
                {
                    self.last_todos = Some(text.clone());
                    out(ev(Kind::Summary {
                        phase: SummaryPhase::Snapshot,
                        text: Some(Cow::Owned(text)),
                    }))?;
                }
            }
            Some("error") => {
                let message = it.message.clone().get().unwrap_or_default();
                out(ev(nonfatal(message)))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// The keys of an item that describe its state rather than its arguments.
const ITEM_STATE_KEYS: &[&str] = &["id", "type", "aggregated_output", "exit_code", "status"];

/// The item object without `drop` (its arguments, or its result).
fn args_without(raw: &RawValue, drop: &[&str]) -> Box<RawValue> {
    match Members::of(raw) {
        Some(m) => m.to_json_without(drop),
        None => raw.to_owned(),
    }
}

/// A command: a string, or an argv array joined.
fn command_text(raw: &RawValue) -> Option<Str<'_>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    let parts: Vec<S> = serde_json::from_str(raw.get()).ok()?;
    let parts: Vec<&str> = parts.iter().map(|s| s.0.as_ref()).collect();
    Some(Cow::Owned(join_argv(&parts)))
}

#[derive(Deserialize)]
struct Change<'a> {
    #[serde(borrow, default)]
    path: LaxStr<'a>,
    #[serde(borrow, default)]
    kind: LaxStr<'a>,
    #[serde(borrow, default)]
    diff: LaxStr<'a>,
    #[serde(borrow, default)]
    unified_diff: LaxStr<'a>,
}

/// `write` when every change adds a file, `delete` when every change
/// deletes one, else `edit`.
fn file_change_name(changes: Option<&RawValue>) -> String {
    let kinds: Vec<String> = changes
        .and_then(|c| serde_json::from_str::<Vec<Change>>(c.get()).ok())
        .map(|v| {
            v.iter()
                .map(|c| c.kind.as_deref().unwrap_or("update").to_owned())
                .collect()
        })
        .unwrap_or_default();
    let all = |k: &str| !kinds.is_empty() && kinds.iter().all(|x| x == k);
    if all("add") {
        "write".to_owned()
    } else if all("delete") {
        "delete".to_owned()
    } else {
        normalize_tool_name("edit")
    }
}

/// The path of a change list with exactly one change.
fn single_path(raw: &RawValue) -> Option<Str<'_>> {
    let mut v: Vec<Change> = serde_json::from_str(raw.get()).ok()?;
    if v.len() != 1 {
        return None;
    }
    v.pop()?.path.get()
}

/// The diffs newer builds attach to each change, joined.
fn change_diffs(raw: &RawValue) -> Option<String> {
    let v: Vec<Change> = serde_json::from_str(raw.get()).ok()?;
    let mut p = String::new();
    for c in &v {
        if let Some(d) = c.diff.as_deref().or(c.unified_diff.as_deref()) {
            p.push_str(d);
            if !p.ends_with('\n') {
                p.push('\n');
            }
        }
    }
    (!p.is_empty()).then_some(p)
}

/// `{input_tokens, cached_input_tokens, output_tokens, …}`: OpenAI's
/// convention, where `input_tokens` already includes the cached part.
fn openai_usage(m: &Members<'_>) -> Option<Usage> {
    let get = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    Some(Usage {
        input: get("input_tokens")?,
        output: get("output_tokens")?,
        cache_read: get("cached_input_tokens"),
        cache_write: get("cache_write_input_tokens"),
    })
}

/// The message of `{"message": …}` (or a bare string), made readable.
fn error_message(raw: &RawValue) -> Option<String> {
    let s = raw_as_str(raw).or_else(|| Members::of(raw).and_then(|m| m.str("message")))?;
    Some(readable_error(&s))
}

/// Codex passes API errors on as their JSON text
/// (`{"type":"error","status":400,"error":{"message":…}}`): the message
/// inside, else the text as it is.
fn readable_error(s: &str) -> String {
    let t = s.trim();
    if t.starts_with('{')
        && let Ok(raw) = serde_json::from_str::<&RawValue>(t)
        && let Some(m) = Members::of(raw)
    {
        let inner = m
            .obj("error")
            .and_then(|e| e.nonempty_str("message"))
            .or_else(|| m.nonempty_str("message"));
        if let Some(msg) = inner {
            return match m.int("status") {
                Some(code) => format!("{msg} (HTTP {code})"),
                None => msg.into_owned(),
            };
        }
    }
    s.to_owned()
}

// ---------------------------------------------------------------- legacy

/// The `msg` of a legacy line (every message type's fields).
#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(borrow, default)]
    delta: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(borrow, default)]
    stream: LaxStr<'a>,
    #[serde(borrow, default)]
    chunk: Option<&'a RawValue>,
    #[serde(borrow, default)]
    stdout: LaxStr<'a>,
    #[serde(borrow, default)]
    stderr: LaxStr<'a>,
    #[serde(borrow, default)]
    aggregated_output: LaxStr<'a>,
    #[serde(default)]
    exit_code: LaxInt,
    #[serde(borrow, default)]
    duration: Option<&'a RawValue>,
    #[serde(borrow, default)]
    changes: Option<&'a RawValue>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(borrow, default)]
    invocation: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    query: LaxStr<'a>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    last_agent_message: LaxStr<'a>,
    #[serde(borrow, default)]
    reason: LaxStr<'a>,
    #[serde(borrow, default)]
    plan: Option<&'a RawValue>,
}

impl CodexParser {
    fn legacy<'a>(
        &mut self,
        rec: &'a str,
        raw: &'a RawValue,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let Ok(m) = serde_json::from_str::<Msg<'a>>(raw.get()) else {
            return keep_unknown(rec, out);
        };
        let ev = |k| Item::Event(Event::new(k));
        match m.ty.as_deref() {
            Some("session_configured") => {
                self.started = true;
                self.turn_done = false;
                self.thread_id = m.session_id.as_deref().map(str::to_owned);
                self.last_total = Usage::default();
                self.base = Usage::default();
                out(ev(Kind::SessionStarted(SessionStart {
                    session_id: m.session_id.get(),
                    dialect: Cow::Borrowed("codex"),
                    model: m.model.get(),
                    ..SessionStart::default()
                })))?;
            }
            Some("task_started") => {
                // A task (turn) after one that completed is a session of its
                // own, as in the current form; `token_count` totals run over
                // the whole conversation, so it starts from their sum so far.
                if !self.started || std::mem::take(&mut self.turn_done) {
                    self.started = true;
                    self.base = self.last_total;
                    out(ev(Kind::SessionStarted(SessionStart {
                        session_id: self.thread_id.clone().map(Cow::Owned),
                        dialect: Cow::Borrowed("codex"),
                        ..SessionStart::default()
                    })))?;
                }
            }
            Some("user_message") => {
                out(ev(Kind::UserMessage {
                    text: m.message.get().unwrap_or_default(),
                }))?;
            }
            Some("agent_message_delta") => {
                out(ev(Kind::TextDelta {
                    text: m.delta.get().unwrap_or_default(),
                }))?;
            }
            Some("agent_message") => {
                let text = m.message.get().unwrap_or_default();
                self.last_message = Some(text.to_string());
                out(Item::Recap {
                    ts: None,
                    channel: Channel::Text,
                    text,
                })?;
            }
            Some("agent_reasoning_delta") => {
                out(ev(Kind::ThinkingDelta {
                    text: m.delta.get().unwrap_or_default(),
                }))?;
            }
            Some("agent_reasoning") => {
                out(Item::Recap {
                    ts: None,
                    channel: Channel::Thinking,
                    text: m.text.get().unwrap_or_default(),
                })?;
                out(ev(Kind::ThinkingCompleted { duration_ms: None }))?;
            }
            Some("exec_command_begin") => {
                let id = m.call_id.get().unwrap_or_default();
                let mut s = ToolStart::new(id, Cow::Borrowed("shell"), Json::from(raw));
                s.command = m.command.and_then(command_text);
                s.cwd = m.cwd.get();
                self.open_call(&s.call_id);
                out(ev(Kind::started(s)))?;
            }
            Some("exec_command_output_delta") => {
                let text = m.chunk.and_then(decode_chunk).unwrap_or_default();
                let stream = if m.stream.as_deref() == Some("stderr") {
                    OutStream::Stderr
                } else {
                    OutStream::Stdout
                };
                out(ev(Kind::ShellOutputDelta {
                    call_id: m.call_id.get().unwrap_or_default(),
                    stream,
                    text: Cow::Owned(text),
                }))?;
            }
            Some("exec_command_end") => {
                let id = m.call_id.get().unwrap_or_default();
                self.close_call(&id);
                let mut e = ToolEnd::new(id, Cow::Borrowed("shell"), true);
                e.exit_code = m.exit_code.0;
                e.ok = e.exit_code.is_none_or(|c| c == 0);
                if let Some(c) = e.exit_code.filter(|c| *c != 0) {
                    e.error = Some(Cow::Owned(format!("exit code {c}")));
                }
                e.output = m
                    .aggregated_output
                    .get()
                    .or_else(|| super::common::join_output(m.stdout.get(), m.stderr.get()))
                    .map(Text::from);
                e.duration_ms = m.duration.and_then(duration_ms);
                e.result = Members::of(raw).map(|mm| {
                    Json::from(mm.to_json_without(&[
                        "type",
                        "call_id",
                        "stdout",
                        "stderr",
                        "aggregated_output",
                        "formatted_output",
                    ]))
                });
                out(ev(Kind::completed(e)))?;
            }
            Some("patch_apply_begin") => {
                let id = m.call_id.get().unwrap_or_default();
                let args = m.changes.map_or_else(json_null, Json::from);
                let mut s = ToolStart::new(id, Cow::Borrowed("edit"), args);
                if let Some(c) = m.changes.and_then(Members::of)
                    && c.0.len() == 1
                {
                    s.path = Some(c.0[0].0.clone());
                }
                self.open_call(&s.call_id);
                out(ev(Kind::started(s)))?;
            }
            Some("patch_apply_end") => {
                let id = m.call_id.get().unwrap_or_default();
                self.close_call(&id);
                let mut e = ToolEnd::new(id, Cow::Borrowed("edit"), m.success.unwrap_or(true));
                if !e.ok {
                    e.error = m.stderr.get().filter(|s| !s.is_empty());
                }
                e.result = Some(Json::from(raw));
                out(ev(Kind::completed(e)))?;
            }
            Some("mcp_tool_call_begin" | "mcp_tool_call_end") => {
                let id = m.call_id.get().unwrap_or_default();
                let inv = m.invocation.and_then(Members::of);
                if m.ty.as_deref() == Some("mcp_tool_call_begin") {
                    let args = inv
                        .as_ref()
                        .and_then(|i| i.get("arguments"))
                        .map_or_else(json_null, Json::from);
                    let mut s = ToolStart::new(id, Cow::Borrowed("mcp"), args);
                    s.mcp_server = inv.as_ref().and_then(|i| i.str("server"));
                    s.mcp_tool = inv.as_ref().and_then(|i| i.str("tool"));
                    self.open_call(&s.call_id);
                    out(ev(Kind::started(s)))?;
                } else {
                    self.close_call(&id);
                    let failed = m
                        .result
                        .and_then(Members::of)
                        .is_some_and(|r| r.get("Err").is_some());
                    let mut e = ToolEnd::new(id, Cow::Borrowed("mcp"), !failed);
                    e.duration_ms = m.duration.and_then(duration_ms);
                    e.result = m.result.map(Json::from);
                    out(ev(Kind::completed(e)))?;
                }
            }
            Some("web_search_begin") => {
                let mut s = ToolStart::new(
                    m.call_id.get().unwrap_or_default(),
                    Cow::Borrowed("web_search"),
                    Json::from(raw),
                );
                s.query = m.query.get();
                out(ev(Kind::started(s)))?;
            }
            Some("web_search_end") => {
                let mut e = ToolEnd::new(
                    m.call_id.get().unwrap_or_default(),
                    Cow::Borrowed("web_search"),
                    true,
                );
                e.result = Some(Json::from(raw));
                out(ev(Kind::completed(e)))?;
            }
            Some("token_count") => {
                let info = m.info.and_then(Members::of);
                let total = info
                    .as_ref()
                    .and_then(|i| i.obj("total_token_usage"))
                    .as_ref()
                    .and_then(openai_usage)
                    .or_else(|| Members::of(raw).as_ref().and_then(openai_usage));
                if let Some(t) = total {
                    out(Item::UsageTotal {
                        ts: None,
                        usage: t.minus(&self.base),
                    })?;
                    self.last_total = t;
                }
            }
            Some("plan_update") => {
                let text = m
                    .plan
                    .and_then(|p| render_todos(p, &["step", "text"], &["status"]));
                out(ev(Kind::Summary {
                    phase: SummaryPhase::Snapshot,
                    text: text.map(Cow::Owned),
                }))?;
            }
            Some("task_complete") => {
                let text = m
                    .last_agent_message
                    .get()
                    .map(|t| t.into_owned())
                    .or_else(|| self.last_message.take());
                let usage = self.last_total.minus(&self.base);
                out(ev(Kind::TurnEnded { usage: None }))?;
                out(ev(Kind::Result(SessionResult {
                    ok: true,
                    text: text.map(Cow::Owned),
                    usage: (!usage.is_zero()).then_some(usage),
                    ..SessionResult::default()
                })))?;
                self.turn_done = true;
            }
            Some("turn_aborted") => {
                let reason = m.reason.as_deref().unwrap_or("interrupted");
                out(ev(Kind::TurnEnded { usage: None }))?;
                out(ev(Kind::Result(SessionResult {
                    ok: false,
                    error: Some(Cow::Owned(format!("turn aborted: {reason}"))),
                    ..SessionResult::default()
                })))?;
                self.turn_done = true;
            }
            Some("error" | "stream_error" | "background_event") => {
                let message = m.message.get().unwrap_or_default();
                if m.ty.as_deref() != Some("background_event") {
                    out(ev(nonfatal(message)))?;
                }
            }
            Some("turn_diff" | "exec_approval_request" | "apply_patch_approval_request") => {}
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}

/// A legacy output chunk: base64 of the raw bytes (or an array of bytes).
fn decode_chunk(raw: &RawValue) -> Option<String> {
    let bytes = match raw_as_str(raw) {
        Some(s) => base64_decode(&s)?,
        None => serde_json::from_str::<Vec<u8>>(raw.get()).ok()?,
    };
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `{secs, nanos}` in milliseconds.
fn duration_ms(raw: &RawValue) -> Option<u64> {
    let m = Members::of(raw)?;
    let secs = u64::try_from(m.int("secs")?).ok()?;
    let nanos = m
        .int("nanos")
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0);
    secs.checked_mul(1000)?.checked_add(nanos / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_become_readable() {
        let s = r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","message":"The model requires a newer version."}}"#;
        assert_eq!(
            readable_error(s),
            "The model requires a newer version. (HTTP 400)"
        );
        assert_eq!(readable_error("plain"), "plain");
    }

    #[test]
    fn file_change_names() {
        let raw = |s: &str| serde_json::from_str::<Box<RawValue>>(s).unwrap();
        assert_eq!(
            file_change_name(Some(&raw(r#"[{"path":"a","kind":"add"}]"#))),
            "write"
        );
        assert_eq!(
            file_change_name(Some(&raw(
                r#"[{"path":"a","kind":"add"},{"path":"b","kind":"update"}]"#
            ))),
            "edit"
        );
    }
}
