//! The form codex wrote before 0.44: `{"id": …, "msg": {"type": …}}` lines
//! that stream deltas (`agent_message_delta`, base64
//! `exec_command_output_delta` chunks) and repeat whole messages afterwards.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{CodexParser, Line, command_text, nonfatal};
use crate::dialect::common::{base64_decode, join_output, openai_usage, render_todos};
use crate::dialect::{Channel, Item, Out, keep_unknown};
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SummaryPhase, Text, ToolEnd, ToolStart, Usage,
    json_null,
};
use crate::input::Parsed;
use crate::json::{LaxInt, LaxStr, Members, raw_as_str};

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
    /// A line of the legacy form without `msg`: the config summary that
    /// opens the stream, or the prompt of a later task.
    pub(super) fn legacy_preamble<'a>(
        &mut self,
        rec: &'a str,
        line: Line<'a>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        if line.prompt.0.is_some() {
            // The prompt of a later task (legacy form) opens its session.
            if std::mem::take(&mut self.turn_done) {
                self.next_turn(out)?;
            }
            let text = line.prompt.get().unwrap_or_default();
            out(Item::Event(Event::new(Kind::UserMessage { text })))?;
        } else if line.model.0.is_some() || line.workdir.0.is_some() {
            // The legacy form's first line: a summary of the config.
            self.started = true;
            out(super::session_started(
                None,
                line.model.get(),
                line.workdir.get(),
            ))?;
        } else {
            return keep_unknown(rec, out);
        }
        Ok(Parsed::Done)
    }

    pub(super) fn legacy<'a>(
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
                out(super::session_started(
                    m.session_id.get(),
                    m.model.get(),
                    None,
                ))?;
            }
            Some("task_started") => {
                // A task (turn) after one that completed is a session of its
                // own, as in the current form; `token_count` totals run over
                // the whole conversation, so it starts from their sum so far.
                if !self.started || std::mem::take(&mut self.turn_done) {
                    self.started = true;
                    self.base = self.last_total;
                    out(super::session_started(
                        self.thread_id.clone().map(Cow::Owned),
                        None,
                        None,
                    ))?;
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
                    .or_else(|| join_output(m.stdout.get(), m.stderr.get()))
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
