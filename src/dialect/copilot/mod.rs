//! GitHub Copilot CLI: its saved sessions
//! (`~/.copilot/session-state/<id>/events.jsonl`) and its live output
//! (`copilot -p … --output-format json`). Both are the same session events,
//! read here as the published schema describes them (`session-events.schema.json`,
//! generated into github/copilot-sdk's `nodejs/src/generated/session-events.ts`):
//! every line is `{type, data, id, timestamp, parentId, agentId?, ephemeral?}`
//! with a dotted `type`. The saved file keeps the persisted events only; the
//! live output adds the ephemeral ones (text and reasoning deltas, per-call
//! `assistant.usage`, partial tool output) and ends with a
//! `{type: "result", sessionId, exitCode, usage}` line of its own.
//!
//! - **The session**: `session.start` (`sessionId`, `selectedModel`,
//!   `context.cwd`); a later `session.start` with another id begins the next
//!   session of the input. `session.resume` begins a new segment of the same
//!   session (the file grows by one segment per `copilot --resume`).
//! - **Text once**: `assistant.message_delta` pieces are the text as it
//!   came; the `assistant.message` that follows repeats it whole (same
//!   `messageId`) and adds only what the pieces did not carry. A saved file
//!   has no pieces: the message is the text. Reasoning likewise
//!   (`assistant.reasoning_delta`, `assistant.reasoning`, or the message's
//!   `reasoningText`).
//! - **Tool calls**: `tool.execution_start` starts one, `tool.execution_complete`
//!   completes it (`success`, `result.content`, `error.message`); a shell
//!   call's exit code is the `<exited with exit code N>` its output ends with.
//!   The calls an `assistant.message` requests (`toolRequests`) are noted, so
//!   a completion whose start is not in the input still has its name.
//! - **Sub-agents**: a line with `agentId` (or the older `parentToolCallId`)
//!   is a sub-agent's. Its tool calls are kept; its messages become
//!   `tool_call_progress` of the call that spawned it, so the main answer is
//!   not interleaved with them; its prompt is that call's argument already.
//!   `subagent.started` / `completed` / `failed` are progress of that call.
//! - **Usage** is authoritative only in `session.shutdown.modelMetrics`:
//!   per model, the segment's totals (Copilot starts counting again on every
//!   resume, so the segments add up). The live output's per-call
//!   `assistant.usage` lines are increments; a shutdown after them adds only
//!   what they missed. A segment without a shutdown (the process was killed)
//!   has no usage: the figure is unknown, never 0, and a notice says so.
//!   `inputTokens` includes the cache reads (OpenAI's convention, as every
//!   sample shows: it is never below `cacheReadTokens`).
//! - **Outcome**: the live `result` line (`exitCode`), else the last
//!   segment's shutdown (`shutdownType` `routine` or `error`). A session whose
//!   last segment has neither ended without saying how: no result, so its
//!   outcome is incomplete.
//! - Event types that carry nothing the events show (hooks, permissions,
//!   titles, checkpoints, …) are known and skipped; any other type is kept
//!   as an `unknown` event.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::{SavedHead, fill_start_owned, normalize_tool_name, raw_object1};
use crate::dialect::{Channel, Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{
    Event, Json, Kind, SessionResult, SummaryPhase, ToolEnd, ToolStart, Usage, UserEventKind,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxInt, LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "copilot";

/// The prefixes of Copilot's dotted event types.
const PREFIXES: &[&str] = &[
    "session.",
    "user.",
    "assistant.",
    "tool.",
    "subagent.",
    "hook.",
    "system.",
    "skill.",
    "permission.",
    "model.",
];

/// Types that carry nothing the events show: known, and skipped.
const SKIPPED: &[&str] = &[
    "session.idle",
    "session.title_changed",
    "session.info",
    "session.mode_changed",
    "session.plan_changed",
    "session.todos_changed",
    "session.workspace_file_changed",
    "session.handoff",
    "session.truncation",
    "session.snapshot_rewind",
    "session.usage_checkpoint",
    "session.context_changed",
    "session.usage_info",
    "session.context_cleared",
    "session.task_complete",
    "session.remote_steerable_changed",
    "session.permissions_changed",
    "session.session_limits_changed",
    "session.autopilot_objective_changed",
    "session.schedule_created",
    "session.schedule_cancelled",
    "session.schedule_rearmed",
    "session.binary_asset",
    "session.auto_mode_resolved",
    "session.skills_loaded",
    "session.custom_agents_updated",
    "session.mcp_servers_loaded",
    "session.mcp_server_status_changed",
    "session.extensions_loaded",
    "session.tools_updated",
    "session.background_tasks_changed",
    "session.managed_settings_resolved",
    "session.managed_settings_enforced",
    "session.custom_notification",
    "pending_messages.modified",
    "assistant.turn_start",
    "assistant.intent",
    "assistant.message_start",
    "assistant.tool_call_delta",
    "assistant.streaming_delta",
    "assistant.server_tool_progress",
    "assistant.idle",
    "tool.user_requested",
    "tool_search.activated",
    "skill.invoked",
    "subagent.selected",
    "subagent.deselected",
    "hook.start",
    "hook.end",
    "hook.progress",
    "system.message",
    "system.notification",
    "permission.requested",
    "permission.completed",
    "user_input.requested",
    "user_input.completed",
    "elicitation.requested",
    "elicitation.completed",
    "external_tool.requested",
    "external_tool.completed",
    "command.queued",
    "command.execute",
    "command.completed",
    "commands.changed",
    "capabilities.changed",
];

/// Detection: a dotted type of Copilot's with a `data` object, or the live
/// output's last line (`result` with an `exitCode`).
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    let ty = p.ty();
    if ty == "result" {
        return p.exit_code.is_some();
    }
    p.data.is_some() && PREFIXES.iter().any(|pre| ty.starts_with(pre))
}

/// Every line.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: LaxStr<'a>,
    // The live output's `result`.
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(rename = "exitCode", default)]
    exit_code: LaxInt,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// The members of `data` this reader reads (each event type has some).
#[derive(Deserialize, Default)]
struct Data<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(rename = "selectedModel", borrow, default)]
    selected_model: LaxStr<'a>,
    #[serde(borrow, default)]
    context: Option<&'a RawValue>,
    #[serde(rename = "newModel", borrow, default)]
    new_model: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    source: LaxStr<'a>,
    #[serde(rename = "messageId", borrow, default)]
    message_id: LaxStr<'a>,
    #[serde(rename = "deltaContent", borrow, default)]
    delta_content: LaxStr<'a>,
    #[serde(rename = "reasoningId", borrow, default)]
    reasoning_id: LaxStr<'a>,
    #[serde(rename = "reasoningText", borrow, default)]
    reasoning_text: LaxStr<'a>,
    #[serde(rename = "toolRequests", borrow, default)]
    tool_requests: Option<&'a RawValue>,
    #[serde(rename = "parentToolCallId", borrow, default)]
    parent_tool_call_id: LaxStr<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LaxStr<'a>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: LaxStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "mcpServerName", borrow, default)]
    mcp_server_name: LaxStr<'a>,
    #[serde(rename = "mcpToolName", borrow, default)]
    mcp_tool_name: LaxStr<'a>,
    #[serde(default)]
    success: LaxBool,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(rename = "partialOutput", borrow, default)]
    partial_output: LaxStr<'a>,
    #[serde(rename = "modelMetrics", borrow, default)]
    model_metrics: Option<&'a RawValue>,
    #[serde(rename = "shutdownType", borrow, default)]
    shutdown_type: LaxStr<'a>,
    #[serde(rename = "errorReason", borrow, default)]
    error_reason: LaxStr<'a>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(rename = "errorType", borrow, default)]
    error_type: LaxStr<'a>,
    #[serde(rename = "warningType", borrow, default)]
    warning_type: LaxStr<'a>,
    #[serde(rename = "errorMessage", borrow, default)]
    error_message: LaxStr<'a>,
    #[serde(borrow, default)]
    reason: LaxStr<'a>,
    #[serde(rename = "summaryContent", borrow, default)]
    summary_content: LaxStr<'a>,
    #[serde(rename = "inputTokens", default)]
    input_tokens: LaxInt,
    #[serde(rename = "outputTokens", default)]
    output_tokens: LaxInt,
    #[serde(rename = "cacheReadTokens", default)]
    cache_read_tokens: LaxInt,
    #[serde(rename = "cacheWriteTokens", default)]
    cache_write_tokens: LaxInt,
}

/// Copilot's tool names that the shared table does not know.
fn tool_name(name: &str) -> String {
    match name {
        "create" => "write".to_owned(),
        "str_replace_editor" | "str_replace" => "edit".to_owned(),
        "read_bash" | "write_bash" | "stop_bash" => snake(name),
        _ => normalize_tool_name(name),
    }
}

fn snake(name: &str) -> String {
    crate::dialect::common::snake_case(name)
}

/// The text of a tool result's `content` (a string), or of its `contents`
/// text blocks; a whole `result` given as a string is its own text.
fn result_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    let m = Members::of(raw)?;
    m.str("content")
}

/// The exit code a shell call's output ends with (`<exited with exit code N>`),
/// and the output without that trailer.
fn exit_code_of(text: &str) -> Option<(i64, &str)> {
    let rest = text.trim_end().strip_suffix('>')?;
    let (body, code) = rest.rsplit_once("<exited with exit code ")?;
    let code = code.trim().parse().ok()?;
    Some((code, body.strip_suffix('\n').unwrap_or(body)))
}

/// One model's `usage` in `modelMetrics`, or one `assistant.usage`.
fn usage_of(m: &Members<'_>) -> Option<Usage> {
    let n = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    let (input, output) = (n("inputTokens"), n("outputTokens"));
    if input.is_none() && output.is_none() {
        return None;
    }
    Some(Usage::new(
        input.unwrap_or(0),
        output.unwrap_or(0),
        n("cacheReadTokens"),
        n("cacheWriteTokens"),
    ))
}

/// The sum over `modelMetrics` (`None`: no model has counts).
fn metrics_total(raw: &RawValue) -> Option<Usage> {
    let models = Members::of(raw)?;
    let mut total: Option<Usage> = None;
    for (_, metric) in &models.0 {
        let Some(u) = Members::of(metric)
            .and_then(|m| m.obj("usage"))
            .and_then(|u| usage_of(&u))
        else {
            continue;
        };
        total = Some(total.map_or(u, |t| t.add(&u)));
    }
    total
}

/// How the last segment ended.
#[derive(Default, Clone, PartialEq)]
enum SegmentEnd {
    /// Still going, or cut off: no shutdown yet.
    #[default]
    Open,
    /// `session.shutdown` with `shutdownType` `routine`.
    Routine,
    /// `session.shutdown` with `shutdownType` `error`, and its reason.
    Error(Option<String>),
}

/// Parser state for one input.
#[derive(Default)]
pub struct CopilotParser {
    /// Its session's header, and whether its `session_started` was written.
    head: SavedHead,
    /// A `session.start` was read (its session waits for a model).
    headed: bool,
    last_ts: Option<i64>,
    /// A prompt or an answer was shown (later model changes are commands).
    conversed: bool,
    /// Bytes of text streamed per message id.
    streamed: HashMap<String, usize>,
    /// Bytes of reasoning streamed per reasoning id.
    reasoned: HashMap<String, usize>,
    /// A thinking phase is open (pieces came, not yet closed).
    thinking_open: bool,
    /// Reasoning was shown since the last assistant message.
    reasoning_since_message: bool,
    /// Sub-agents: `agentId` → the call that spawned it.
    agents: HashMap<String, String>,
    /// Calls requested by a message: id → normalized name.
    requested: HashMap<String, String>,
    /// Calls started and not completed: id → normalized name.
    open_calls: HashMap<String, String>,
    /// A model turn is open (`assistant.turn_start` … `turn_end`).
    turn_open: bool,
    /// The shutdown totals of the segments so far.
    shutdown_total: Option<Usage>,
    /// Segments that ended without counts (killed, or an empty `modelMetrics`).
    segments_without_usage: u32,
    /// Usage was seen in this segment (per-call `assistant.usage`).
    segment_calls: bool,
    /// The segment has had any event since its start (a segment with
    /// nothing in it spent nothing).
    segment_active: bool,
    end: SegmentEnd,
    /// The live output's `result` line was read.
    resulted: bool,
}

impl CopilotParser {
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        self.head.open(NAME, || None, out)?;
        Ok(())
    }

    fn emit<'a>(&mut self, ts: Option<i64>, kind: Kind<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(out)?;
        out(Item::Event(Event::at(ts, kind)))
    }

    /// Close an open thinking phase.
    fn close_thinking<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if std::mem::take(&mut self.thinking_open) {
            self.emit(ts, Kind::ThinkingCompleted { duration_ms: None }, out)?;
        }
        Ok(())
    }

    /// The segment's counts are not in the input: say so once per segment.
    fn segment_unknown(&mut self) {
        if self.segment_active && !self.segment_calls {
            self.segments_without_usage += 1;
        }
    }

    /// The call a sub-agent's line belongs to: its `parentToolCallId`, else
    /// the call that spawned the agent its `agentId` names.
    fn parent_call<'d>(&self, line: &Line<'d>, d: &Data<'d>) -> Option<Cow<'d, str>> {
        if let Some(p) = d.parent_tool_call_id.as_deref().filter(|s| !s.is_empty()) {
            return Some(Cow::Owned(p.to_owned()));
        }
        let agent = line.agent_id.as_deref().filter(|s| !s.is_empty())?;
        Some(Cow::Owned(
            self.agents
                .get(agent)
                .cloned()
                .unwrap_or_else(|| agent.to_owned()),
        ))
    }

    /// The end of a session: its result (or none, when it ended without
    /// saying how) and the notice about usage the input lacks.
    fn finish_session<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if !self.headed && !self.head.started {
            return Ok(());
        }
        self.open(out)?;
        let ts = self.last_ts;
        self.close_thinking(ts, out)?;
        if self.end == SegmentEnd::Open {
            self.segment_unknown();
        }
        if self.segments_without_usage > 0 {
            let n = self.segments_without_usage;
            let message = if self.shutdown_total.is_some() {
                format!(
                    "{n} {} of this session ended without a shutdown record (the process was \
                     stopped, or Copilot wrote no counts): their token usage is not in the input, \
                     and the tokens shown are those of the other segments only",
                    if n == 1 { "segment" } else { "segments" }
                )
            } else {
                "the session ended without a shutdown record (the process was stopped, or \
                 Copilot wrote no counts): its token usage is not in the input"
                    .to_owned()
            };
            self.emit(
                ts,
                Kind::Error {
                    message: Cow::Owned(message),
                    fatal: false,
                    source: Some(Cow::Borrowed("usage")),
                },
                out,
            )?;
        }
        if self.resulted {
            return Ok(());
        }
        let usage = self
            .shutdown_total
            .filter(|_| self.segments_without_usage == 0);
        match std::mem::take(&mut self.end) {
            SegmentEnd::Open => Ok(()),
            SegmentEnd::Routine => out(Item::Event(crate::dialect::common::file_result(
                self.head.start_ts,
                ts,
                usage,
            ))),
            SegmentEnd::Error(reason) => {
                let mut r = crate::dialect::common::file_result(self.head.start_ts, ts, usage);
                if let Kind::Result(res) = &mut r.kind {
                    res.ok = false;
                    res.error =
                        Some(Cow::Owned(reason.unwrap_or_else(|| {
                            "the session shut down with an error".to_owned()
                        })));
                }
                out(Item::Event(r))
            }
        }
    }

    fn line<'a>(&mut self, rec: &'a str, line: Line<'a>, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let ts = line.timestamp.as_deref().and_then(iso_ms);
        if ts.is_some() {
            self.last_ts = self.last_ts.max(ts);
        }
        let ty = line.ty.as_deref().unwrap_or("");
        if ty == "result" {
            return self.result(ts, &line, out).map(|_| Parsed::Done);
        }
        let d: Data<'a> = match line.data.map(|d| serde_json::from_str(d.get())) {
            Some(Ok(d)) => d,
            None => Data::default(),
            Some(Err(_)) => return keep_unknown(rec, out),
        };
        if ty != "session.start" && ty != "session.resume" && ty != "session.shutdown" {
            self.segment_active = true;
        }
        if ty == "subagent.started"
            && let (Some(agent), Some(call)) = (line.agent_id.as_deref(), d.tool_call_id.as_deref())
        {
            self.agents.insert(agent.to_owned(), call.to_owned());
        }
        let sub = if ty.starts_with("subagent.") {
            None
        } else {
            self.parent_call(&line, &d)
        };
        match ty {
            "session.start" => {
                let id = d.session_id.as_deref().map(str::to_owned);
                if self.headed && id.is_some() && id != self.head.session_id {
                    // Another session's file follows in the same input.
                    self.finish_session(out)?;
                    *self = CopilotParser::default();
                }
                self.headed = true;
                self.head.session_id = id;
                self.head.start_ts = ts;
                self.head.model = d.selected_model.as_deref().map(str::to_owned);
                self.head.cwd = d
                    .context
                    .and_then(Members::of)
                    .and_then(|c| c.nonempty_str("cwd"))
                    .map(Cow::into_owned);
                if self.head.model.is_some() {
                    self.open(out)?;
                }
                Ok(Parsed::Done)
            }
            "session.resume" => {
                if self.end == SegmentEnd::Open {
                    self.segment_unknown();
                }
                self.end = SegmentEnd::Open;
                self.segment_calls = false;
                self.segment_active = false;
                Ok(Parsed::Done)
            }
            "session.model_change" => {
                let model = d.new_model.as_deref().unwrap_or("");
                if !self.head.started {
                    if !model.is_empty() {
                        self.head.model = Some(model.to_owned());
                    }
                    return Ok(Parsed::Done);
                }
                if !self.conversed {
                    return Ok(Parsed::Done);
                }
                self.emit(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Command,
                        text: Cow::Owned(format!("model: {model}")),
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "user.message" => {
                if sub.is_some() {
                    // A sub-agent's prompt: the spawning call's argument.
                    return Ok(Parsed::Done);
                }
                let text = d.content.and_then(raw_as_str).unwrap_or_default();
                self.close_thinking(ts, out)?;
                self.conversed = true;
                let kind = match d.source.as_deref() {
                    Some(s) if !s.is_empty() && s != "user" => Kind::UserEvent {
                        what: UserEventKind::Context,
                        text,
                    },
                    _ => Kind::UserMessage { text },
                };
                self.emit(ts, kind, out)?;
                Ok(Parsed::Done)
            }
            "assistant.message_delta" => {
                if sub.is_some() {
                    // The sub-agent's whole message follows.
                    return Ok(Parsed::Done);
                }
                let text = d.delta_content.get().unwrap_or_default();
                if let Some(id) = d.message_id.as_deref() {
                    *self.streamed.entry(id.to_owned()).or_default() += text.len();
                }
                self.close_thinking(ts, out)?;
                self.conversed = true;
                if !text.is_empty() {
                    self.emit(ts, Kind::TextDelta { text }, out)?;
                }
                Ok(Parsed::Done)
            }
            "assistant.message" => self.message(ts, d, sub, out).map(|_| Parsed::Done),
            "assistant.reasoning_delta" => {
                if sub.is_some() {
                    return Ok(Parsed::Done);
                }
                let text = d.delta_content.get().unwrap_or_default();
                if let Some(id) = d.reasoning_id.as_deref() {
                    *self.reasoned.entry(id.to_owned()).or_default() += text.len();
                }
                if !text.is_empty() {
                    self.thinking_open = true;
                    self.reasoning_since_message = true;
                    self.emit(ts, Kind::ThinkingDelta { text }, out)?;
                }
                Ok(Parsed::Done)
            }
            "assistant.reasoning" => {
                if sub.is_some() {
                    return Ok(Parsed::Done);
                }
                let text = d.content.and_then(raw_as_str).unwrap_or_default();
                let known = d
                    .reasoning_id
                    .as_deref()
                    .and_then(|id| self.reasoned.remove(id))
                    .unwrap_or(0);
                if !text.is_empty() {
                    self.open(out)?;
                    let known = floor_char(&text, known);
                    out(Item::BlockRecap {
                        ts,
                        channel: Channel::Thinking,
                        text,
                        known,
                    })?;
                    self.thinking_open = true;
                    self.reasoning_since_message = true;
                }
                self.close_thinking(ts, out)?;
                Ok(Parsed::Done)
            }
            "assistant.turn_end" => {
                if sub.is_none() && std::mem::take(&mut self.turn_open) {
                    self.close_thinking(ts, out)?;
                    self.emit(ts, Kind::TurnEnded { usage: None }, out)?;
                }
                Ok(Parsed::Done)
            }
            "assistant.usage" => {
                let u = Usage::new(
                    d.input_tokens
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                        .unwrap_or(0),
                    d.output_tokens
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                        .unwrap_or(0),
                    d.cache_read_tokens.0.and_then(|v| u64::try_from(v).ok()),
                    d.cache_write_tokens.0.and_then(|v| u64::try_from(v).ok()),
                );
                if d.input_tokens.0.is_none() && d.output_tokens.0.is_none() {
                    return Ok(Parsed::Done);
                }
                self.segment_calls = true;
                self.emit(ts, Kind::UsageDelta(u), out)?;
                Ok(Parsed::Done)
            }
            "tool.execution_start" => {
                let id = d.tool_call_id.get().unwrap_or_default();
                let name = tool_name(d.tool_name.as_deref().unwrap_or(""));
                let args = d.arguments.map_or_else(crate::event::json_null, Json::from);
                let mut start = ToolStart::new(id.clone(), Cow::Owned(name.clone()), args);
                if let Some(a) = d.arguments.and_then(Members::of) {
                    fill_start_owned(&mut start, &a);
                }
                if let Some(s) = d.mcp_server_name.get() {
                    start.mcp_server = Some(s);
                    start.mcp_tool = d.mcp_tool_name.get();
                }
                self.close_thinking(ts, out)?;
                self.conversed = true;
                self.open_calls.insert(id.to_string(), name);
                self.emit(ts, Kind::started(start), out)?;
                Ok(Parsed::Done)
            }
            "tool.execution_partial_result" => {
                let (Some(id), Some(text)) = (d.tool_call_id.get(), d.partial_output.get()) else {
                    return keep_unknown(rec, out);
                };
                self.open(out)?;
                out(Item::OutputSnapshot {
                    ts,
                    call_id: id,
                    stream: crate::event::OutStream::Stdout,
                    text,
                })?;
                Ok(Parsed::Done)
            }
            "tool.execution_complete" => self.complete(ts, d, out).map(|_| Parsed::Done),
            // A sub-agent's life is progress of the call that started it.
            "tool.execution_progress"
            | "subagent.started"
            | "subagent.completed"
            | "subagent.failed" => {
                let (Some(id), Some(data)) = (d.tool_call_id.get(), line.data) else {
                    return keep_unknown(rec, out);
                };
                self.emit(
                    ts,
                    Kind::ToolCallProgress {
                        call_id: id,
                        partial: Json::from(data),
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "session.error" | "session.warning" | "model.call_failure" => {
                let message = d
                    .message
                    .get()
                    .or_else(|| d.error_message.get())
                    .filter(|m| !m.is_empty())
                    .unwrap_or(Cow::Borrowed(match ty {
                        "session.warning" => "a warning",
                        "model.call_failure" => "a model call failed",
                        _ => "an error",
                    }));
                let source = match ty {
                    "session.warning" => d.warning_type.get().or(Some(Cow::Borrowed("warning"))),
                    "model.call_failure" => Some(Cow::Borrowed("model")),
                    _ => d.error_type.get(),
                };
                self.emit(
                    ts,
                    Kind::Error {
                        message,
                        fatal: false,
                        source,
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "abort" => {
                let reason = d.reason.as_deref().unwrap_or("");
                let text = if reason.is_empty() {
                    Cow::Borrowed("aborted")
                } else {
                    Cow::Owned(format!("aborted: {reason}"))
                };
                self.emit(
                    ts,
                    Kind::UserEvent {
                        what: UserEventKind::Interrupt,
                        text,
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "session.compaction_start" => {
                self.emit(
                    ts,
                    Kind::Summary {
                        phase: SummaryPhase::Started,
                        text: None,
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "session.compaction_complete" => {
                let text = d
                    .summary_content
                    .get()
                    .filter(|s| !s.is_empty())
                    .or(Some(Cow::Borrowed("context compacted")));
                self.emit(
                    ts,
                    Kind::Summary {
                        phase: SummaryPhase::Completed,
                        text,
                    },
                    out,
                )?;
                Ok(Parsed::Done)
            }
            "session.shutdown" => {
                self.open(out)?;
                match d.model_metrics.and_then(metrics_total) {
                    Some(seg) => {
                        let total = self.shutdown_total.map_or(seg, |t| t.add(&seg));
                        self.shutdown_total = Some(total);
                        out(Item::UsageTotal { ts, usage: total })?;
                    }
                    None => self.segment_unknown(),
                }
                self.end = if d.shutdown_type.as_deref() == Some("error") {
                    SegmentEnd::Error(d.error_reason.get().map(Cow::into_owned))
                } else {
                    SegmentEnd::Routine
                };
                self.segment_active = false;
                self.segment_calls = false;
                Ok(Parsed::Done)
            }
            t if SKIPPED.contains(&t) => {
                if t == "assistant.turn_start" && sub.is_none() {
                    self.turn_open = true;
                }
                Ok(Parsed::Done)
            }
            _ => {
                self.open(out)?;
                keep_unknown(rec, out)
            }
        }
    }

    /// An `assistant.message`: text (once), reasoning, and the calls it
    /// requests.
    fn message<'a>(
        &mut self,
        ts: Option<i64>,
        d: Data<'a>,
        sub: Option<Cow<'a, str>>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        if let Some(reqs) = d.tool_requests {
            let reqs: Vec<&RawValue> = serde_json::from_str(reqs.get()).unwrap_or_default();
            for r in reqs.into_iter().filter_map(Members::of) {
                if let (Some(id), Some(name)) = (r.nonempty_str("toolCallId"), r.str("name")) {
                    self.requested.insert(id.into_owned(), tool_name(&name));
                }
            }
        }
        let text = d.content.and_then(raw_as_str).unwrap_or_default();
        if let Some(parent) = sub {
            if !text.is_empty() {
                self.emit(
                    ts,
                    Kind::ToolCallProgress {
                        call_id: parent,
                        partial: Json::from(raw_object1("text", &text)),
                    },
                    out,
                )?;
            }
            return Ok(());
        }
        self.conversed = true;
        let reasoning_shown = std::mem::take(&mut self.reasoning_since_message);
        if !reasoning_shown && let Some(r) = d.reasoning_text.get().filter(|r| !r.is_empty()) {
            self.emit(ts, Kind::ThinkingDelta { text: r }, out)?;
            self.thinking_open = true;
        }
        self.close_thinking(ts, out)?;
        let known = d
            .message_id
            .as_deref()
            .and_then(|id| self.streamed.remove(id));
        if text.is_empty() {
            return self.open(out);
        }
        self.open(out)?;
        match known {
            Some(known) => {
                let known = floor_char(&text, known);
                out(Item::BlockRecap {
                    ts,
                    channel: Channel::Text,
                    text,
                    known,
                })
            }
            None => out(Item::Event(Event::at(ts, Kind::TextDelta { text }))),
        }
    }

    /// A `tool.execution_complete`.
    fn complete<'a>(&mut self, ts: Option<i64>, d: Data<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        let id = d.tool_call_id.get().unwrap_or_default();
        self.open(out)?;
        let name = match self.open_calls.remove(id.as_ref()) {
            Some(n) => n,
            None => {
                // Its start is not in the input: start it from what is known.
                let name = self
                    .requested
                    .get(id.as_ref())
                    .cloned()
                    .unwrap_or_else(|| tool_name(d.tool_name.as_deref().unwrap_or("unknown")));
                let start = ToolStart::new(
                    id.clone(),
                    Cow::Owned(name.clone()),
                    crate::event::json_null(),
                );
                out(Item::StartIfNew(Event::at(ts, Kind::started(start))))?;
                name
            }
        };
        let ok = d.success.0 == Some(true);
        let text = d.result.and_then(result_text);
        let mut end = ToolEnd::new(id, Cow::Owned(name), ok);
        if end.tool_name == "shell"
            && let Some(t) = &text
        {
            // The exit code goes in its own field, not twice.
            let (code, body) = match exit_code_of(t) {
                Some((code, body)) => (Some(code), body),
                None => (None, t.as_ref()),
            };
            end.exit_code = code;
            // Copilot says a command that ran and exited non-zero
            // succeeded; a failed call is one that exited non-zero, as in
            // every other dialect (docs/events.md#session-figures).
            if code.is_some_and(|c| c != 0) {
                end.ok = false;
            }
            end.output = Some(crate::event::Text::from(body.to_owned()));
        }
        if !ok {
            let error = d
                .error
                .and_then(crate::dialect::common::error_text)
                .or_else(|| text.clone().filter(|t| !t.is_empty()))
                .unwrap_or(Cow::Borrowed("the tool call failed"));
            end.error = Some(error);
        }
        end.result = d.result.map(Json::from);
        out(Item::Event(Event::at(ts, Kind::completed(end))))
    }

    /// The live output's last line.
    fn result<'a>(&mut self, ts: Option<i64>, line: &Line<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if let Some(id) = line.session_id.as_deref().filter(|s| !s.is_empty()) {
            if self.head.session_id.is_none() && !self.head.started {
                self.head.session_id = Some(id.to_owned());
            }
            out(Item::IdHint(Cow::Owned(id.to_owned())))?;
        }
        self.open(out)?;
        self.close_thinking(ts, out)?;
        let code = line.exit_code.0;
        let usage = line.usage.and_then(Members::of);
        let duration_ms = usage
            .as_ref()
            .and_then(|u| u.int("sessionDurationMs"))
            .and_then(|v| u64::try_from(v).ok());
        let ok = code == Some(0);
        self.resulted = true;
        out(Item::Event(Event::at(
            ts,
            Kind::Result(SessionResult {
                ok,
                text: None,
                duration_ms,
                usage: None,
                cost_usd: None,
                error: (!ok).then(|| match code {
                    Some(c) => Cow::Owned(format!("copilot exited with code {c}")),
                    None => Cow::Borrowed("copilot gave no exit code"),
                }),
            }),
        )))
    }
}

/// `at` moved down to a char boundary of `s` (and at most its length).
fn floor_char(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

impl Parser for CopilotParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        self.line(rec, line, out)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        self.finish_session(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(
            exit_code_of("a\nb\n<exited with exit code 2>"),
            Some((2, "a\nb"))
        );
        assert_eq!(
            exit_code_of("ok\n<exited with exit code 0>\n"),
            Some((0, "ok"))
        );
        assert_eq!(exit_code_of("no trailer"), None);
    }

    #[test]
    fn metrics_add_up_over_models() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"{"a":{"usage":{"inputTokens":10,"outputTokens":2,"cacheReadTokens":4,"cacheWriteTokens":0}},
                "b":{"usage":{"inputTokens":5,"outputTokens":1,"cacheReadTokens":0,"cacheWriteTokens":1}}}"#,
        )
        .unwrap();
        let u = metrics_total(&raw).unwrap();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_write),
            (15, 3, Some(4), Some(1))
        );
        let empty: Box<RawValue> = serde_json::from_str("{}").unwrap();
        assert!(metrics_total(&empty).is_none());
    }
}
