//! The Cursor TypeScript SDK (`@cursor/sdk`): its `InteractionUpdate`
//! deltas (`onDelta`, kebab-case `type`s) and, as the fallback form, its
//! `SDKMessage` run stream (snake_case, `agent_id` + `run_id` on every
//! message, optionally wrapped as `{"type":"sdk_message","message":…}`).
//!
//! The format is described in docs/dialects.md#cursor-sdk (checked against
//! the package's own type definitions, 1.0.32). What shapes this parser:
//! - neither form has an init event with a session id: the session opens
//!   at the first line (`user-message-appended.userMessage.session_id`
//!   names it when that comes first);
//! - `shell-output-delta` is `{event:{case, value}}` with `case` `stdout`,
//!   `stderr`, `exit` or `start`, and carries no call id: it belongs to the
//!   shell call in flight;
//! - `partial-tool-call` carries the arguments so far (a snapshot):
//!   `tool_call_progress`;
//! - `turn-ended.usage` is the turn's own usage (`inputTokens` excludes the
//!   cache counts: the SDK's `totalTokens` adds all four); the end of a turn
//!   is the session's `result`;
//! - `token-delta` is a running estimate that `turn-ended` supersedes, and
//!   `step-*` / `tool-requests-listed` carry nothing to show;
//! - `tool-call-delta` nests one update of a sub-agent (`task`) call: its
//!   tool calls are real calls, its text is progress of the parent call.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{
    camel_usage, count_patch_lines, error_text, fill_start, join_output, normalize_tool_name,
    raw_object1,
};
use super::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SessionStart, SummaryPhase, Text, ToolEnd,
    ToolStart, Usage, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxInt, LaxStr, Members, raw_as_str};

/// One line of either form: the union of the fields the parser reads.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(rename = "thinkingDurationMs", default)]
    thinking_duration_ms_camel: LaxInt,
    #[serde(rename = "callId", borrow, default)]
    call_id_camel: LaxStr<'a>,
    #[serde(rename = "toolCall", borrow, default)]
    tool_call: Option<&'a RawValue>,
    #[serde(rename = "taskUpdate", borrow, default)]
    task_update: Option<&'a RawValue>,
    #[serde(rename = "userMessage", borrow, default)]
    user_message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: LaxStr<'a>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    // SDKMessage fields.
    #[serde(borrow, default)]
    agent_id: LaxStr<'a>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    thinking_duration_ms: LaxInt,
    #[serde(rename = "errorCode", borrow, default)]
    error_code: LaxStr<'a>,
}

/// `toolCall`: `{type, args, result?}`.
#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ShellEvent<'a> {
    #[serde(rename = "case", borrow, default)]
    case: LaxStr<'a>,
    #[serde(borrow, default)]
    value: Option<&'a RawValue>,
}

/// The kebab-case `type`s of the SDK's `InteractionUpdate`.
const UPDATE_TYPES: &[&str] = &[
    "text-delta",
    "thinking-delta",
    "thinking-completed",
    "tool-call-started",
    "partial-tool-call",
    "tool-call-completed",
    "tool-call-delta",
    "user-message-appended",
    "token-delta",
    "summary-started",
    "summary-completed",
    "shell-output-delta",
    "turn-ended",
    "step-started",
    "step-completed",
    "tool-requests-listed",
];

/// Detection: an `InteractionUpdate` type (or a `summary` update), or the
/// run stream's agent and run ids (snake or camel case).
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    let ty = p.ty();
    UPDATE_TYPES.contains(&ty)
        || (ty == "summary" && p.summary.is_some())
        || (p.agent_id.is_some() && p.run_id.is_some())
        || (p.agent_id_camel.is_some() && p.run_id_camel.is_some())
}

/// Parser state for one Cursor SDK input.
#[derive(Default)]
pub struct CursorSdkParser {
    started: bool,
    /// Shell calls in flight, by id, most recent last.
    shells: CallTable<()>,
    /// Exit codes reported by `shell-output-delta` `exit`, per call.
    exits: CallTable<i64>,
    /// The session's usage so far (the sum of its turns).
    total: Option<Usage>,
    /// A run-stream `status` gave the result the envelope's `result` repeats.
    status_result: bool,
    /// A turn ended (its result was given): the next turn's first line opens
    /// a session of its own, with the same id and usage of its own.
    turn_done: bool,
    session_id: Option<String>,
}

impl Parser for CursorSdkParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        // The run stream's envelope: read the message inside it.
        if line.ty.as_deref() == Some("sdk_message")
            && let Some(m) = line.message
        {
            let inner: Line<'a> = match serde_json::from_str(m.get()) {
                Ok(l) => l,
                Err(_) => return keep_unknown(rec, out),
            };
            return Ok(if self.line(&inner, false, out)? {
                Parsed::Done
            } else {
                keep_unknown(m.get(), out)?
            });
        }
        if self.line(&line, false, out)? {
            Ok(Parsed::Done)
        } else {
            keep_unknown(rec, out)
        }
    }
}

impl CursorSdkParser {
    /// Open the session at the first line.
    fn start_session<'a>(&mut self, line: &Line<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.started {
            let next_turn = matches!(
                line.ty.as_deref(),
                Some(
                    "user-message-appended"
                        | "step-started"
                        | "text-delta"
                        | "thinking-delta"
                        | "tool-call-started"
                        | "assistant"
                        | "user"
                )
            );
            if self.turn_done && next_turn {
                self.turn_done = false;
                self.total = None;
                return out(Item::Event(Event::new(Kind::SessionStarted(
                    SessionStart {
                        session_id: self.session_id.clone().map(Cow::Owned),
                        dialect: Cow::Borrowed("cursor-sdk"),
                        ..SessionStart::default()
                    },
                ))));
            }
            return Ok(());
        }
        self.started = true;
        let session_id = line
            .user_message
            .and_then(Members::of)
            .and_then(|m| m.nonempty_str("session_id"))
            .or_else(|| line.agent_id.0.clone());
        let model = line.model.and_then(|m| {
            raw_as_str(m).or_else(|| Members::of(m).and_then(|mm| mm.nonempty_str("id")))
        });
        self.session_id = session_id.as_deref().map(str::to_owned);
        out(Item::Event(Event::new(Kind::SessionStarted(
            SessionStart {
                session_id,
                dialect: Cow::Borrowed("cursor-sdk"),
                model,
                ..SessionStart::default()
            },
        ))))
    }

    /// One update (or SDK message); false when its type is not known.
    /// `nested`: inside a `tool-call-delta` of call `parent`.
    fn line<'a>(&mut self, line: &Line<'a>, nested: bool, out: Out<'_, 'a>) -> io::Result<bool> {
        let ty = line.ty.as_deref().unwrap_or("");
        if !nested {
            // An SDKMessage `system` init opens the session with its model.
            self.start_session(line, out)?;
        }
        let ev = |k| Item::Event(Event::new(k));
        match ty {
            "text-delta" => out(ev(Kind::TextDelta {
                text: line.text.clone().get().unwrap_or_default(),
            }))?,
            "thinking-delta" => out(ev(Kind::ThinkingDelta {
                text: line.text.clone().get().unwrap_or_default(),
            }))?,
            "thinking-completed" => out(ev(Kind::ThinkingCompleted {
                duration_ms: line
                    .thinking_duration_ms_camel
                    .0
                    .and_then(|d| u64::try_from(d).ok()),
            }))?,
            "tool-call-started" | "partial-tool-call" | "tool-call-completed" => {
                let id = line.call_id_camel.clone().get().unwrap_or_default();
                let Some(raw) = line.tool_call else {
                    return Ok(false);
                };
                let Ok(tc) = serde_json::from_str::<ToolCall<'a>>(raw.get()) else {
                    return Ok(false);
                };
                let name = normalize_tool_name(tc.ty.as_deref().unwrap_or("unknown"));
                match ty {
                    "tool-call-started" => {
                        if name == "shell" {
                            self.shells.insert(&id, ());
                        }
                        out(ev(Kind::started(start(id, name, tc.args))))?;
                    }
                    "partial-tool-call" => out(ev(Kind::ToolCallProgress {
                        call_id: id,
                        partial: tc.args.map_or_else(json_null, Json::from),
                    }))?,
                    _ => {
                        self.shells.remove(&id);
                        let exit = self.exits.remove(&id);
                        let mut end = end(id, name, tc.result);
                        if end.exit_code.is_none() {
                            end.exit_code = exit;
                            if let Some(c) = exit {
                                end.ok = end.ok && c == 0;
                            }
                        }
                        out(ev(Kind::completed(end)))?;
                    }
                }
            }
            "tool-call-delta" => {
                let parent = line.call_id_camel.clone().get().unwrap_or_default();
                let Some(inner) = line
                    .task_update
                    .and_then(|t| serde_json::from_str::<Line<'a>>(t.get()).ok())
                else {
                    return Ok(false);
                };
                match inner.ty.as_deref() {
                    Some("text-delta") => {
                        let text = inner.text.as_deref().unwrap_or("");
                        out(ev(Kind::ToolCallProgress {
                            call_id: parent,
                            partial: Json::from(raw_object1("text", text)),
                        }))?;
                    }
                    Some("tool-call-started" | "tool-call-completed" | "partial-tool-call")
                        if !nested =>
                    {
                        return self.line(&inner, true, out);
                    }
                    // The sub-agent's thinking and steps stay inside it.
                    _ => {}
                }
            }
            "user-message-appended" => {
                let text = line
                    .user_message
                    .and_then(Members::of)
                    .and_then(|m| m.str("text"))
                    .unwrap_or_default();
                out(ev(Kind::UserMessage { text }))?;
            }
            "summary-started" => out(ev(Kind::Summary {
                phase: SummaryPhase::Started,
                text: None,
            }))?,
            "summary" => out(ev(Kind::Summary {
                phase: SummaryPhase::Snapshot,
                text: line.summary.clone().get(),
            }))?,
            "summary-completed" => out(ev(Kind::Summary {
                phase: SummaryPhase::Completed,
                text: None,
            }))?,
            "shell-output-delta" => return self.shell_delta(line, out),
            "turn-ended" => {
                let usage = line
                    .usage
                    .and_then(Members::of)
                    .as_ref()
                    .and_then(camel_usage);
                self.turn_end(usage, out)?;
            }
            "token-delta"
            | "step-started"
            | "step-completed"
            | "tool-requests-listed"
            | "heartbeat" => {}
            // ---- the SDKMessage run stream
            "system" => {}
            "assistant" => {
                let Some(content) = line
                    .message
                    .and_then(Members::of)
                    .and_then(|m| m.get("content"))
                else {
                    return Ok(true);
                };
                if let Some(s) = raw_as_str(content) {
                    out(ev(Kind::TextDelta { text: s }))?;
                    return Ok(true);
                }
                let blocks: Vec<&RawValue> =
                    serde_json::from_str(content.get()).unwrap_or_default();
                for b in blocks {
                    let Some(m) = Members::of(b) else { continue };
                    match m.str("type").as_deref() {
                        Some("text") => out(ev(Kind::TextDelta {
                            text: m.str("text").unwrap_or_default(),
                        }))?,
                        // The matching `tool_call` message carries the call.
                        Some("tool_use") => {}
                        _ => out(ev(Kind::Unknown { raw: Json::from(b) }))?,
                    }
                }
            }
            "user" => {
                let text = line.message.and_then(|m| {
                    let c = Members::of(m)?.get("content")?;
                    raw_as_str(c).or_else(|| text_blocks(c))
                });
                out(ev(Kind::UserMessage {
                    text: text.unwrap_or_default(),
                }))?;
            }
            "tool_call" => {
                let id = line.call_id.clone().get().unwrap_or_default();
                let name = normalize_tool_name(line.name.as_deref().unwrap_or("unknown"));
                match line.status.as_deref() {
                    Some("running") => {
                        out(ev(Kind::started(start(id, name, line.args))))?;
                    }
                    Some(s @ ("completed" | "error")) => {
                        let mut e = end(id, name, line.result);
                        if s == "error" {
                            e.ok = false;
                            if e.error.is_none() {
                                e.error = line
                                    .result
                                    .and_then(raw_as_str)
                                    .or(Some(Cow::Borrowed("error")));
                            }
                        }
                        out(ev(Kind::completed(e)))?;
                    }
                    _ => return Ok(false),
                }
            }
            "thinking" => {
                out(ev(Kind::ThinkingDelta {
                    text: line.text.clone().get().unwrap_or_default(),
                }))?;
                out(ev(Kind::ThinkingCompleted {
                    duration_ms: line
                        .thinking_duration_ms
                        .0
                        .and_then(|d| u64::try_from(d).ok()),
                }))?;
            }
            "status" => match line.status.as_deref() {
                Some(st @ ("FINISHED" | "ERROR" | "CANCELLED" | "EXPIRED")) => {
                    let err = (st != "FINISHED").then(|| match line.message.and_then(raw_as_str) {
                        Some(m) => format!("{}: {m}", st.to_lowercase()),
                        None => st.to_lowercase(),
                    });
                    self.status_result = true;
                    self.result(err.is_none(), err, out)?;
                }
                Some(_) => {}
                None => return Ok(false),
            },
            "usage" => {
                // Per-turn usage, once at the end of each turn.
                let usage = line
                    .usage
                    .and_then(Members::of)
                    .as_ref()
                    .and_then(camel_usage);
                if let Some(u) = usage {
                    self.total = Some(self.total.map_or(u, |t| t.add(&u)));
                    out(ev(Kind::UsageDelta(u)))?;
                }
                out(ev(Kind::TurnEnded { usage }))?;
            }
            "task" => {
                let text = line.text.clone().get();
                if text.is_some() {
                    out(ev(Kind::Summary {
                        phase: SummaryPhase::Snapshot,
                        text,
                    }))?;
                }
            }
            "request" | "done" => {}
            "result" => {
                // The run stream envelope's end (`status` of the run); a
                // `status` message before it already gave the result.
                if std::mem::take(&mut self.status_result) {
                    return Ok(true);
                }
                let status = line.status.as_deref().unwrap_or("");
                let ok = matches!(status, "finished" | "FINISHED" | "completed" | "success");
                let err = (!ok).then(|| {
                    let mut m = format!("run {}", status.to_lowercase());
                    if let Some(c) = line.error_code.as_deref() {
                        m.push_str(&format!(" ({c})"));
                    }
                    m
                });
                self.result(ok, err, out)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `shell-output-delta`: output of the shell call in flight.
    fn shell_delta<'a>(&mut self, line: &Line<'a>, out: Out<'_, 'a>) -> io::Result<bool> {
        let Some(e) = line
            .event
            .and_then(|e| serde_json::from_str::<ShellEvent<'a>>(e.get()).ok())
        else {
            return Ok(false);
        };
        let call_id = line
            .call_id_camel
            .clone()
            .get()
            .or_else(|| self.shells.newest().map(|(s, _)| Cow::Owned(s.to_owned())));
        let value = e.value.and_then(Members::of);
        match e.case.as_deref() {
            Some(c @ ("stdout" | "stderr")) => {
                let Some(call_id) = call_id else {
                    return Ok(false);
                };
                let text = value
                    .as_ref()
                    .and_then(|v| v.str("data"))
                    .unwrap_or_default();
                out(Item::Event(Event::new(Kind::ShellOutputDelta {
                    call_id,
                    stream: if c == "stderr" {
                        OutStream::Stderr
                    } else {
                        OutStream::Stdout
                    },
                    text,
                })))?;
            }
            Some("exit") => {
                if let (Some(id), Some(code)) =
                    (call_id, value.as_ref().and_then(|v| v.int("code")))
                {
                    // The first code reported for a call is the one it keeps.
                    if !self.exits.contains(&id) {
                        self.exits.insert(&id, code);
                    }
                }
            }
            Some("start") => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The end of a turn: its usage, `turn_ended`, and the session's result.
    fn turn_end<'a>(&mut self, usage: Option<Usage>, out: Out<'_, 'a>) -> io::Result<()> {
        if let Some(u) = usage {
            self.total = Some(self.total.map_or(u, |t| t.add(&u)));
            out(Item::Event(Event::new(Kind::UsageDelta(u))))?;
        }
        out(Item::Event(Event::new(Kind::TurnEnded { usage })))?;
        self.result(true, None, out)
    }

    /// The session's result (its usage: the sum of the turns so far).
    fn result<'a>(&mut self, ok: bool, error: Option<String>, out: Out<'_, 'a>) -> io::Result<()> {
        self.turn_done = true;
        out(Item::Event(Event::new(Kind::Result(SessionResult {
            ok,
            usage: self.total,
            error: error.map(Cow::Owned),
            ..SessionResult::default()
        }))))
    }
}

/// Text blocks of a content array, joined.
fn text_blocks(raw: &RawValue) -> Option<Cow<'_, str>> {
    let blocks: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    let mut out = String::new();
    for b in blocks {
        if let Some(t) = Members::of(b).and_then(|m| m.str("text")) {
            out.push_str(&t);
        }
    }
    Some(Cow::Owned(out))
}

fn start<'a>(id: Cow<'a, str>, name: String, args: Option<&'a RawValue>) -> ToolStart<'a> {
    let mut t = ToolStart::new(
        id,
        Cow::Owned(name),
        args.map_or_else(json_null, Json::from),
    );
    if let Some(m) = args.and_then(Members::of) {
        fill_start(&mut t, &m);
    }
    t
}

/// A completion from `result`: `{status:"success", value}` or
/// `{status:"error", error}` (the run stream's `result` may be anything).
fn end<'a>(id: Cow<'a, str>, name: String, result: Option<&'a RawValue>) -> ToolEnd<'a> {
    let mut t = ToolEnd::new(id, Cow::Owned(name), true);
    let Some(raw) = result else { return t };
    let Some(r) = Members::of(raw) else {
        t.result = Some(Json::from(raw));
        return t;
    };
    let shell = t.tool_name == "shell";
    match r.str("status").as_deref() {
        Some("error") => {
            t.ok = false;
            t.error = r.get("error").and_then(error_text);
            if t.error.is_none() {
                t.error = Some(Cow::Borrowed("error"));
            }
        }
        _ => {
            if let Some(v) = r.obj("value") {
                t.exit_code = v.int("exitCode");
                if let Some(c) = t.exit_code {
                    t.ok = c == 0;
                    if c != 0 {
                        t.error = Some(Cow::Owned(format!("exit code {c}")));
                    }
                }
                if shell {
                    t.output = join_output(v.str("stdout"), v.str("stderr")).map(Text::from);
                    t.duration_ms = v.int("executionTime").and_then(|d| u64::try_from(d).ok());
                }
                t.patch = v.nonempty_str("diffString");
                t.lines_added = v
                    .int("linesAdded")
                    .or_else(|| v.int("linesCreated"))
                    .and_then(|n| u64::try_from(n).ok());
                t.lines_removed = v.int("linesRemoved").and_then(|n| u64::try_from(n).ok());
                if t.lines_added.is_none()
                    && let Some(p) = &t.patch
                {
                    let (a, d) = count_patch_lines(p);
                    t.lines_added = Some(a);
                    t.lines_removed = Some(d);
                }
            }
        }
    }
    t.result = Some(if shell && t.output.is_some() {
        // The output is in `output`; the result keeps everything else.
        Json::from(r.to_json_with(|k, v| {
            if k == "value" {
                Members::of(v).map(|m| Cow::Owned(m.to_json_without(&["stdout", "stderr"])))
            } else {
                Some(Cow::Borrowed(v))
            }
        }))
    } else {
        Json::from(raw)
    });
    t
}
