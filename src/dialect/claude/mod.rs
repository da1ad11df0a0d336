//! Claude Code `claude -p --output-format stream-json --verbose
//! [--include-partial-messages]`.
//!
//! The format is described in docs/dialects.md#claude-code; the real captures
//! in `shared/corpus/claude-code/` confirm the parts that shape this parser:
//! - one API message with several content blocks is written as several
//!   `assistant` lines sharing `message.id`, one block each, each repeating
//!   the message's `usage`: usage is remembered per message id (the latest
//!   snapshot wins), never summed per line;
//! - that per-line `usage` is taken when the message starts (its
//!   `output_tokens` is far below the final count) and `modelUsage` can
//!   disagree with `usage`: `result.usage` (the turn's totals, main loop
//!   only; docs/verified-sources.md#claude-code) is what the result carries,
//!   and the transform emits the remainder before it;
//! - with `--include-partial-messages`, `stream_event` lines carry the
//!   Anthropic SSE deltas and the whole `assistant` lines still follow:
//!   their text and thinking become [`Item::Recap`]s (the transform emits
//!   only what they add) and their `tool_use` blocks are recognised by id;
//!   a streamed `tool_use` starts when its block stops, with the arguments
//!   its `input_json_delta`s built;
//! - `user` lines carry `tool_result` blocks and, beside them, the tool's own
//!   result object (`tool_use_result`: Bash `{stdout, stderr, …}`, Edit's
//!   `structuredPatch`, …): the block's `content` is what the model saw and
//!   is the call's result; the object only adds what the text lacks (Bash's
//!   stdout/stderr split and exit code, a patch);
//! - a session's turns each begin with an init (same `session_id`) and end
//!   with a `result` whose `usage` is the turn's, while `total_cost_usd` is
//!   the running cost of the process: each turn is a session of its own,
//!   whose cost is its share of that running figure;
//! - hook lines (`system`/`hook_*`) can come before `system`/`init`; they
//!   join the session that follows (a failing hook is a non-fatal error).
//!
//! Lines of a sub-agent (`parent_tool_use_id` set) keep their tool calls;
//! their text becomes `tool_call_progress` of the parent `Task` call, so the
//! main answer is not interleaved with the sub-agent's. Their usage is not
//! counted: `result.usage` is the main loop's only (the SDK's changelog says
//! so), and counting them would overshoot it, where increments cannot go
//! back. `total_cost_usd` covers them.
//! `control_request`/`control_response` (permission prompts of the SDK
//! control channel) carry nothing the event model shows and are skipped.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{
    anthropic_usage, anthropic_usage_read, count_patch_lines, error_text, fill_start,
    fill_start_owned, join_lines, join_output, normalize_tool_name, raw_object1, split_mcp_name,
    strip_persisted, without_output,
};
use super::{Channel, Has, Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::dialect::tape;
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, Reads, SessionResult, SessionStart, Str, SummaryPhase, Text, ToolEnd,
    ToolStart, Usage, UserEventKind, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxF64, LaxInt, LaxStr, Members, S, raw_as_str};
use crate::time::iso_ms;

pub mod offload;
pub mod project;
mod stream;
pub mod subagent;
mod usage;

use stream::{OpenBlock, StreamedMsg};
use usage::MessageUsage;

/// One Claude Code line: the union of the fields the parser reads.
#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    subtype: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parent_tool_use_id: LaxStr<'a>,
    /// Saved transcripts spell it `toolUseResult`.
    #[serde(borrow, default, alias = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(rename = "permissionMode", borrow, default)]
    permission_mode: LaxStr<'a>,
    #[serde(default)]
    is_error: LaxBool,
    #[serde(default)]
    duration_ms: LaxInt,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(default)]
    total_cost_usd: LaxF64,
    #[serde(borrow, default)]
    errors: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    hook_name: LaxStr<'a>,
    #[serde(borrow, default)]
    outcome: LaxStr<'a>,
    #[serde(default)]
    exit_code: LaxInt,
    #[serde(borrow, default)]
    stderr: LaxStr<'a>,
    #[serde(borrow, default)]
    output: LaxStr<'a>,
    #[serde(default)]
    attempt: LaxInt,
    #[serde(default)]
    max_retries: LaxInt,
    #[serde(borrow, default)]
    rate_limit_info: Option<&'a RawValue>,
    /// `result`: per model, the running totals of the process.
    #[serde(rename = "modelUsage", borrow, default)]
    model_usage: Option<&'a RawValue>,
    /// `system`/`task_*`: the task, the call that spawned it, what changed.
    #[serde(borrow, default)]
    task_id: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_use_id: LaxStr<'a>,
    #[serde(borrow, default)]
    patch: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: LaxStr<'a>,
    #[serde(borrow, default)]
    description: LaxStr<'a>,
}

/// The fields of [`Line`] that an `assistant` or `user` line of a saved
/// transcript is read for, when the transcript reader hands it on
/// ([`ClaudeParser::preset`]): that reader has taken its envelope, so the
/// other thirty-odd names of [`Line`] need not be looked for in it (it
/// chose only `assistant` and `user` lines; the rest of a line is the same
/// keys either way).
#[derive(Deserialize)]
struct HeldLine<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parent_tool_use_id: LaxStr<'a>,
    #[serde(borrow, default, alias = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
}

impl<'a> HeldLine<'a> {
    fn line(self) -> Line<'a> {
        Line {
            ty: self.ty,
            session_id: self.session_id,
            message: self.message,
            parent_tool_use_id: self.parent_tool_use_id,
            tool_use_result: self.tool_use_result,
            ..Line::default()
        }
    }
}

/// An Anthropic Messages API message (`assistant`/`user` lines), also read
/// by the saved-transcript reader.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Message<'a> {
    #[serde(borrow, default)]
    pub(crate) id: LaxStr<'a>,
    #[serde(borrow, default)]
    pub(crate) model: LaxStr<'a>,
    #[serde(borrow, default)]
    pub(crate) content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) usage: Option<&'a RawValue>,
    /// `null` until the message's last line (saved transcripts).
    #[serde(borrow, default)]
    pub(crate) stop_reason: LaxStr<'a>,
}

/// One content block (every block type's fields).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
    /// A thinking block's signature: since 2.1.69 a saved transcript keeps
    /// only this, with the text empty.
    #[serde(borrow, default)]
    signature: LaxStr<'a>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: LaxBool,
}

/// A content block read for the figures only ([`Reads::Figures`]): its
/// texts are passed over by the string scanner, not unescaped, and only
/// whether each is empty is kept ([`LeanBlock::block`]).
#[derive(Deserialize)]
struct LeanBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thinking: Option<&'a RawValue>,
    #[serde(borrow, default)]
    signature: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_use_id: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: LaxBool,
}

/// What stands for a text that was not read: a non-empty string, so that
/// every rule that asks whether there was text answers as it would have.
const NOT_READ: &str = "…";

impl<'a> LeanBlock<'a> {
    /// The block as [`Block`] with its texts replaced: a string stays a
    /// string, empty or [`NOT_READ`]; the arguments are not read.
    fn block(self) -> Block<'a> {
        let lean = |raw: Option<&RawValue>| {
            LaxStr(raw.and_then(|r| match r.get() {
                "\"\"" => Some(Cow::Borrowed("")),
                t if t.starts_with('"') => Some(Cow::Borrowed(NOT_READ)),
                _ => None,
            }))
        };
        Block {
            ty: self.ty,
            text: lean(self.text),
            thinking: lean(self.thinking),
            signature: lean(self.signature),
            id: self.id,
            name: self.name,
            input: None,
            tool_use_id: self.tool_use_id,
            content: self.content,
            is_error: self.is_error,
        }
    }
}

/// Keys of an `assistant`/`user` line's `message` that only Claude Code
/// (an Anthropic Messages API message) has.
#[derive(Deserialize)]
struct MessageProbe {
    #[serde(default)]
    id: Has,
    #[serde(default)]
    model: Has,
    #[serde(default)]
    usage: Has,
    #[serde(default)]
    stop_reason: Has,
}

/// Detection: line types only Claude Code writes, and the `system`,
/// `assistant`, `user` and `result` lines it shares with cursor-agent when
/// they carry a key only Claude Code writes (a "mark"), an Anthropic
/// message, an ISO `timestamp`, or a `system` subtype of its own. It comes
/// before cursor-agent's rule in the table, which is what tells a
/// `system`/`init` with a mark from cursor-agent's.
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    let marked = p.claude_code_version.is_some()
        || p.tools.is_some()
        || p.mcp_servers.is_some()
        || p.uuid.is_some()
        || p.output_style.is_some()
        || p.slash_commands.is_some()
        || p.agents.is_some()
        || p.skills.is_some()
        || p.plugins.is_some()
        || p.parent_tool_use_id.is_some()
        || p.tool_use_result.is_some()
        || p.num_turns.is_some()
        || p.total_cost_usd.is_some()
        || p.model_usage.is_some();
    match p.ty() {
        "stream_event"
        | "control_request"
        | "control_response"
        | "control_cancel_request"
        | "command_lifecycle"
        | "rate_limit_event" => true,
        "system" => {
            marked
                || matches!(
                    p.sub(),
                    "hook_started"
                        | "hook_progress"
                        | "hook_response"
                        | "status"
                        | "compact_boundary"
                        | "thinking_tokens"
                        | "api_retry"
                        | "task_started"
                        | "task_progress"
                        | "task_updated"
                        | "task_notification"
                )
                || QUIET_SYSTEM.contains(&p.sub())
        }
        "assistant" | "user" => {
            marked
                || p.iso_ts()
                || p.message
                    .and_then(|m| serde_json::from_str::<MessageProbe>(m.get()).ok())
                    .is_some_and(|m| {
                        m.id.is_some()
                            || m.model.is_some()
                            || m.usage.is_some()
                            || m.stop_reason.is_some()
                    })
        }
        "result" => marked,
        _ => false,
    }
}

/// `system` subtypes that carry nothing the events show (2.1.218 to
/// 2.1.278, read from published captures).
const QUIET_SYSTEM: &[&str] = &[
    "code_change_published",
    "vcs_state_changed",
    "cloud_session_delta",
    "dev_intent",
    "turn_handoff_available",
    "turn_preempted",
    "peer_message_hold",
];

/// Tasks remembered at a time (a task's lines come within minutes).
const TASKS: usize = 64;

/// A sub-agent task, by the id its `task_*` lines share.
struct Task {
    id: String,
    /// The call its lines attach to: the `Task`/`Bash` call that spawned it
    /// (`tool_use_id`), or, for a task no call spawned, the task's own call.
    call: Option<String>,
    /// The call is the task's own (started from its `task_started`).
    own: bool,
    description: Option<String>,
    /// Its end was said: the own call completed, or a failure noticed.
    ended: bool,
}

/// Parser state for one Claude Code input.
#[derive(Default)]
pub struct ClaudeParser {
    hinted: bool,
    /// Open tool calls: normalized name by id.
    calls: CallTable<String>,
    /// Blocks being streamed.
    blocks: Vec<OpenBlock>,
    /// The message each stream (main, or a sub-agent's) is in: parent, id.
    stream_msg: Vec<(Option<String>, String)>,
    /// Messages that were streamed as deltas, with their text blocks.
    streamed: Vec<StreamedMsg>,
    usage: MessageUsage,
    /// The sub-agents' messages (`parent_tool_use_id` set): counted into the
    /// running total, and added to `result.usage`, which leaves them out.
    sub_usage: MessageUsage,
    /// `modelUsage` of the session's last result, per model: the process's
    /// running totals, whose change is a turn's usage.
    model_usage: Vec<(String, Usage)>,
    /// Sub-agent tasks (`system`/`task_*`), oldest first, at most [`TASKS`].
    tasks: Vec<Task>,
    /// `task_*` lines read between a turn's result and the next init: they
    /// belong to the turn that init begins (a forked skill starts before it).
    held_tasks: Vec<String>,
    /// The main agent's message in progress, and the last one that ended.
    open_msg: Option<String>,
    closed_msg: Option<String>,
    /// The session the last init opened, and whether its turn has ended
    /// (a `result` came): an init after that is a new turn, an init before
    /// it repeats the turn's own.
    session: Option<String>,
    in_turn: bool,
    /// The last `total_cost_usd` of this session: Claude Code reports the
    /// cost of the whole process (every turn so far), not the turn's.
    last_cost: Option<f64>,
    /// An init without `model`, held for one line: the messages name it.
    pending_init: Option<Event<'static>>,
    /// Only the figures are read ([`Reads::Figures`]): the texts, tool
    /// arguments and results of whole messages are skipped. Every read,
    /// lean or not, takes the line from its walk ([`tape::Tape`]).
    lean: bool,
    /// The current line's walk, when the one-pass reader accepted it
    /// ([`tape::Tape`]); the address of the text it is of.
    tape: tape::Tape,
    taped: Option<usize>,
    /// The saved-transcript reader walked the next line already, and read
    /// its timestamp.
    preset: bool,
    preset_ts: Option<i64>,
    /// The saved-transcript reader counts the messages' usage itself and
    /// reads only the figures: the running totals, which it drops, and the
    /// turn ends' usage, which no figure reads, are not worked out.
    usage_elsewhere: bool,
}

impl ClaudeParser {
    /// Emit the init held for its model (named by the line after it, if so).
    fn flush_init<'a>(&mut self, model: Option<String>, out: Out<'_, 'a>) -> io::Result<()> {
        let Some(mut ev) = self.pending_init.take() else {
            return Ok(());
        };
        if let Kind::SessionStarted(s) = &mut ev.kind
            && s.model.is_none()
        {
            s.model = model.map(Cow::Owned);
        }
        out(Item::Event(ev))?;
        self.release_tasks(out)
    }

    /// The `task_*` lines held for the turn that has now begun.
    fn release_tasks<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        for rec in std::mem::take(&mut self.held_tasks) {
            if let Ok(line) = serde_json::from_str::<Line>(&rec) {
                let ts = line.timestamp.as_deref().and_then(iso_ms);
                self.task_line(&line, &rec, ts, &mut |i| out(i.into_owned()))?;
            }
        }
        Ok(())
    }

    /// A new turn: usage and message tracking start again (the turn's
    /// result reports the turn's own usage).
    fn new_turn(&mut self) {
        self.usage = MessageUsage::default();
        self.sub_usage = MessageUsage::default();
        self.open_msg = None;
        self.closed_msg = None;
        self.stream_msg.clear();
        self.blocks.clear();
        self.in_turn = true;
    }

    /// The turn's share of `total_cost_usd`, which is the running cost of the
    /// process: this figure less the session's previous one. A figure below
    /// the previous one means the count started again (a new process).
    fn turn_cost(&mut self, cost: f64) -> f64 {
        match self.last_cost.replace(cost) {
            // Rounded to a billionth of a dollar: the difference of two
            // decimal figures would otherwise print as 0.015000000000000001.
            Some(prev) if cost >= prev => ((cost - prev) * 1e9).round() / 1e9,
            _ => cost,
        }
    }

    fn started(&self, id: &str) -> bool {
        self.calls.contains(id)
    }

    fn remember_call(&mut self, id: &str, name: &str) {
        // Callers check `started` first; past the cap the oldest goes.
        self.calls.insert(id, name.to_owned());
    }

    fn take_call(&mut self, id: &str) -> Option<String> {
        self.calls.remove(id)
    }

    /// The main agent's message `id` is (still) the one in progress; a
    /// different one ends the previous model turn.
    fn enter_message<'a>(
        &mut self,
        id: Option<&str>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Some(id) = id else { return Ok(()) };
        if self.open_msg.as_deref() == Some(id) || self.closed_msg.as_deref() == Some(id) {
            return Ok(());
        }
        self.end_message(ts, out)?;
        self.open_msg = Some(id.to_owned());
        Ok(())
    }

    /// End the main agent's message in progress: one model turn ended.
    fn end_message<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if let Some(id) = self.open_msg.take() {
            let usage = self.usage.final_of(&id);
            self.closed_msg = Some(id);
            out(Item::Event(Event::at(ts, Kind::TurnEnded { usage })))?;
        }
        Ok(())
    }

    /// A message's usage snapshot: the main agent's, or (`sub`) a
    /// sub-agent's. The running total is both.
    fn usage_snapshot<'a>(
        &mut self,
        id: &str,
        raw: Option<&RawValue>,
        last: bool,
        sub: bool,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        if self.usage_elsewhere {
            return Ok(());
        }
        // From the line's walk when only the figures are read; the
        // members when the counts cannot be read as a struct.
        let counts = |r| anthropic_usage_read(self.read(r).ok(), || self.read::<Members>(r).ok());
        let Some(u) = raw.and_then(counts) else {
            return Ok(());
        };
        if sub {
            self.sub_usage.update(id, u, last);
        } else {
            self.usage.update(id, u, last);
        }
        let total = self.usage.total().add(&self.sub_usage.total());
        out(Item::UsageTotal { ts, usage: total })
    }

    /// The turn's usage: what `modelUsage` (every model call of the process
    /// so far, sub-agents', compaction's and the main loop's) added since the
    /// session's previous result; without it, `result.usage` (the main
    /// loop's) plus the sub-agents' messages. Never below the running total
    /// already reported (its increments cannot be taken back).
    fn turn_usage(&mut self, line: &Line<'_>, main: Option<Usage>) -> Option<Usage> {
        let reported = match line.model_usage.and_then(model_usage) {
            Some(now) => {
                let prev = std::mem::replace(&mut self.model_usage, now);
                Some(usage_added(&prev, &self.model_usage))
            }
            None => main.map(|u| u.add(&self.sub_usage.total())),
        }?;
        let running = self.usage.total().add(&self.sub_usage.total());
        Some(usage::max_usage(&reported, &running))
    }

    /// A `system`/`task_*` line: the sub-agent's lifecycle, on the call that
    /// spawned it or on a call of its own (docs/dialects.md#claude-code).
    fn task_line<'a>(
        &mut self,
        line: &Line<'_>,
        rec: &'a str,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Ok(raw) = serde_json::from_str::<&'a RawValue>(rec) else {
            return Ok(());
        };
        let sub = line.subtype.as_deref().unwrap_or("");
        let id = line.task_id.as_deref().unwrap_or("").to_owned();
        let at = match self.tasks.iter().position(|t| t.id == id) {
            Some(at) => at,
            None => {
                if self.tasks.len() >= TASKS {
                    self.tasks.remove(0);
                }
                self.tasks.push(Task {
                    id: id.clone(),
                    call: None,
                    own: false,
                    description: None,
                    ended: false,
                });
                self.tasks.len() - 1
            }
        };
        let t = &mut self.tasks[at];
        if t.call.is_none()
            && let Some(c) = line.tool_use_id.as_deref().filter(|c| !c.is_empty())
        {
            t.call = Some(c.to_owned());
        }
        if t.description.is_none() {
            t.description = line.description.as_deref().map(str::to_owned);
        }
        let patch = line.patch.and_then(Members::of);
        // completed, failed, stopped (a notification); completed, failed,
        // killed (an update's patch); a running or paused task has none.
        let status = match sub {
            "task_notification" => line.status.as_deref().map(str::to_owned),
            "task_updated" => patch
                .as_ref()
                .and_then(|p| p.str("status"))
                .map(Cow::into_owned)
                .filter(|s| matches!(s.as_str(), "completed" | "failed" | "killed" | "stopped")),
            _ => None,
        };
        let call = match &t.call {
            Some(c) => c.clone(),
            None => {
                // No call spawned it (a forked skill, a workflow): the task
                // is a call of its own, with the arguments a `Task` call has.
                t.call = Some(id.clone());
                t.own = true;
                let mut start = ToolStart::new(
                    Cow::Owned(id.clone()),
                    Cow::Borrowed("task"),
                    task_args(raw),
                );
                if let Some(m) = Members::of(raw) {
                    fill_start_owned(&mut start, &m);
                }
                out(Item::Event(Event::at(ts, Kind::started(start))))?;
                if sub == "task_started" {
                    return Ok(());
                }
                id.clone()
            }
        };
        let failed = matches!(status.as_deref(), Some("failed"));
        if t.own && !t.ended && status.is_some() {
            t.ended = true;
            let ok = status.as_deref() == Some("completed");
            let mut end = ToolEnd::new(Cow::Owned(call), Cow::Borrowed("task"), ok);
            // What the task said of its end, or the line as written.
            end.result = Some(match line.summary.as_deref().filter(|s| !s.is_empty()) {
                Some(sum) => Json::assembled(crate::json::quote(sum)),
                None => Json::from(raw),
            });
            if !ok {
                end.error = Some(Cow::Owned(task_failure(line, patch.as_ref(), t, status)));
            }
            return out(Item::Event(Event::at(ts, Kind::completed(end))));
        }
        out(Item::Event(Event::at(
            ts,
            Kind::ToolCallProgress {
                call_id: Cow::Owned(call.clone()),
                partial: Json::from(raw),
            },
        )))?;
        // A task that fails after its call returned (a background agent or
        // command) has no other place to say so.
        if failed && !t.own && !t.ended && !self.calls.contains(&call) {
            let t = &mut self.tasks[at];
            t.ended = true;
            let message = task_failure(line, patch.as_ref(), t, status);
            out(Item::Event(Event::at(
                ts,
                Kind::Error {
                    message: Cow::Owned(message),
                    fatal: false,
                    source: Some(Cow::Borrowed("task")),
                },
            )))?;
        }
        Ok(())
    }
}

impl Parser for ClaudeParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let preset = std::mem::take(&mut self.preset);
        self.taped = (preset || self.tape.build(rec)).then_some(rec.as_ptr() as usize);
        let fast = self.taped.and_then(|base| {
            if preset {
                self.tape.read::<HeldLine>(base, rec).map(HeldLine::line)
            } else {
                self.tape.read(base, rec)
            }
        });
        let line: Line<'a> = match fast {
            Some(l) => l,
            None => match read_line(rec, out)? {
                Ok(l) => l,
                Err(done) => return Ok(done),
            },
        };
        if !self.hinted
            && let Some(sid) = line.session_id.as_deref()
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(sid.to_owned())))?;
        }
        if self.pending_init.is_some() {
            self.flush_init(line_model(&line), out)?;
        }
        // The saved-transcript reader read the same field of the same line.
        let ts = if preset {
            self.preset_ts
        } else {
            line.timestamp.as_deref().and_then(iso_ms)
        };
        let ev = |kind| Item::Event(Event::at(ts, kind));
        let parent = line.parent_tool_use_id.0.clone();
        match (line.ty.as_deref(), line.subtype.as_deref()) {
            (Some("system"), Some("init")) => {
                let sid = line.session_id.as_deref();
                // Claude Code writes an init for every turn of a session (a
                // relay feeding prompts, a `--resume`): one after the turn's
                // result begins the next turn, with baselines of its own; one
                // before it, in the same session, repeats the turn's init.
                if self.in_turn && sid.is_some() && sid == self.session.as_deref() {
                    return Ok(Parsed::Done);
                }
                self.end_message(ts, out)?;
                if sid != self.session.as_deref() {
                    self.session = sid.map(str::to_owned);
                    self.last_cost = None;
                    self.model_usage.clear();
                }
                self.new_turn();
                let has_model = line.model.0.is_some();
                let start = Event::at(
                    ts,
                    Kind::SessionStarted(SessionStart {
                        session_id: line.session_id.get(),
                        dialect: Cow::Borrowed("claude"),
                        model: line.model.get(),
                        cwd: line.cwd.get(),
                        permission_mode: line.permission_mode.get(),
                        title: None,
                        parent: None,
                    }),
                );
                if has_model {
                    out(Item::Event(start))?;
                    self.release_tasks(out)?;
                } else {
                    // Some inits lack the model every message names: wait
                    // one line for it rather than call it unknown.
                    self.pending_init = Some(start.into_owned());
                }
            }
            (Some("rate_limit_event"), _) => {
                // Sent when the account's limits change: only a limit that
                // is hit or near is worth saying.
                if let Some(message) = line.rate_limit_info.and_then(rate_limit_notice) {
                    out(ev(Kind::Error {
                        message: Cow::Owned(message),
                        fatal: false,
                        source: Some(Cow::Borrowed("rate_limit")),
                    }))?;
                }
            }
            (Some("system"), Some("hook_started" | "hook_progress" | "thinking_tokens")) => {}
            // Known, nothing to show: an input command's progress
            // (`queued`, `started`, `completed`, 2.1.218 on), and the
            // newer `system` notices about the session's surroundings
            // (published code changes, the repository's state, a cloud
            // session's changes, intents and hand-offs between turns).
            (Some("command_lifecycle"), _) => {}
            (Some("system"), Some(sub)) if QUIET_SYSTEM.contains(&sub) => {}
            (
                Some("system"),
                Some("task_started" | "task_progress" | "task_updated" | "task_notification"),
            ) => {
                if self.session.is_some() && !self.in_turn {
                    self.held_tasks.push(rec.to_owned());
                } else {
                    self.task_line(&line, rec, ts, out)?;
                }
            }
            (Some("system"), Some("hook_response")) => {
                let failed = line.outcome.as_deref().is_some_and(|o| o != "success")
                    || line.exit_code.0.is_some_and(|c| c != 0);
                if failed {
                    let mut msg = format!(
                        "hook {} failed",
                        line.hook_name.as_deref().unwrap_or("(unnamed)")
                    );
                    if let Some(c) = line.exit_code.0 {
                        msg.push_str(&format!(" (exit {c})"));
                    }
                    if let Some(d) = line
                        .stderr
                        .as_deref()
                        .filter(|s| !s.trim().is_empty())
                        .or(line.output.as_deref().filter(|s| !s.trim().is_empty()))
                    {
                        msg.push_str(": ");
                        msg.push_str(d.trim_end());
                    }
                    out(ev(Kind::Error {
                        message: Cow::Owned(msg),
                        fatal: false,
                        source: Some(Cow::Borrowed("hook")),
                    }))?;
                }
            }
            (Some("system"), Some("status")) => {
                if line.status.as_deref() == Some("compacting") {
                    out(ev(Kind::Summary {
                        phase: SummaryPhase::Started,
                        text: None,
                    }))?;
                }
            }
            (Some("system"), Some("compact_boundary")) => {
                out(ev(Kind::Summary {
                    phase: SummaryPhase::Completed,
                    text: None,
                }))?;
            }
            (Some("system"), Some("api_retry")) => {
                let mut msg = String::from("API request failed; retrying");
                if let (Some(a), Some(m)) = (line.attempt.0, line.max_retries.0) {
                    msg.push_str(&format!(" ({a}/{m})"));
                }
                if let Some(e) = line.error.and_then(error_text) {
                    msg.push_str(": ");
                    msg.push_str(&e);
                }
                out(ev(Kind::Error {
                    message: Cow::Owned(msg),
                    fatal: false,
                    source: Some(Cow::Borrowed("api")),
                }))?;
            }
            (Some("assistant"), _) => {
                let Some(msg) = line.message.and_then(|m| self.read::<Message>(m).ok()) else {
                    return keep_unknown(rec, out);
                };
                if parent.is_none() {
                    self.enter_message(msg.id.as_deref(), ts, out)?;
                }
                self.assistant(&msg, parent.as_deref(), ts, out)?;
                if let Some(id) = msg.id.as_deref() {
                    self.usage_snapshot(id, msg.usage, false, parent.is_some(), ts, out)?;
                }
            }
            (Some("user"), _) => {
                if parent.is_none() {
                    self.end_message(ts, out)?;
                }
                let Some(msg) = line.message.and_then(|m| self.read::<Message>(m).ok()) else {
                    return keep_unknown(rec, out);
                };
                self.user(&msg, line.tool_use_result, parent.is_some(), ts, out)?;
            }
            (Some("stream_event"), _) => {
                let Some(event) = line.event else {
                    return keep_unknown(rec, out);
                };
                if !self.stream_event(event, parent, ts, out)? {
                    return keep_unknown(rec, out);
                }
            }
            (Some("control_request" | "control_response" | "control_cancel_request"), _) => {}
            (Some("result"), _) => {
                self.end_message(ts, out)?;
                let mut r = result(&line);
                r.cost_usd = r.cost_usd.map(|c| self.turn_cost(c));
                r.usage = self.turn_usage(&line, r.usage);
                self.in_turn = false;
                out(ev(Kind::Result(r)))?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }

    fn set_reads(&mut self, reads: Reads) {
        self.lean = reads == Reads::Figures;
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        self.flush_init(None, out)?;
        // No init came after them: they stay with the turn they followed.
        self.release_tasks(out)
    }
}

impl ClaudeParser {
    /// `T` from `raw`, a part of the current line: from its walk when the
    /// one-pass reader accepts it ([`tape`]), else with serde_json, whose
    /// answer (and error) it is either way. serde_json would pass over the
    /// part's strings once more for each level of it read on its own (the
    /// line, its message, the message's blocks): on the real Claude tree
    /// those passes were over half of `--to events` (docs/performance.md,
    /// "Every Claude line read from its walk").
    fn read<'a, T: Deserialize<'a>>(&self, raw: &'a RawValue) -> serde_json::Result<T> {
        if let Some(base) = self.taped
            && let Some(t) = self.tape.read(base, raw.get())
        {
            return Ok(t);
        }
        // Not on the tape: a part that is no container (a message's
        // content as one string), one nested deeper than the tape records,
        // or a line the walk refused. One walk of the part alone, then.
        if let Some(t) = tape::from_raw(raw.get()) {
            return Ok(t);
        }
        serde_json::from_str(raw.get())
    }

    /// The text of a `tool_result`'s content: a string, or its text
    /// blocks joined, read as [`ClaudeParser::read`] reads (serde_json's
    /// answer; a block list is nested deeper than the line's walk records,
    /// so it is walked alone: serde_json read it in 9 % of `--to events`'
    /// instructions on the real Claude tree).
    fn content_text<'a>(&self, raw: &'a RawValue) -> Option<Str<'a>> {
        if let Some(s) = raw_as_str(raw) {
            return Some(s);
        }
        let blocks: Vec<Block> = self.read(raw).ok()?;
        join_lines(
            blocks
                .into_iter()
                .filter(|b| b.ty.as_deref() == Some("text"))
                .filter_map(|b| b.text.get()),
        )
    }

    /// The next line was walked already (`tape`, of a copy of it).
    pub(super) fn preset(&mut self, tape: &mut tape::Tape, ts: Option<i64>) {
        std::mem::swap(&mut self.tape, tape);
        self.preset = true;
        self.preset_ts = ts;
    }

    /// The content blocks of a whole `assistant` line.
    fn assistant<'a>(
        &mut self,
        msg: &Message<'a>,
        parent: Option<&str>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Some(content) = msg.content else {
            return Ok(());
        };
        let streamed = msg
            .id
            .as_deref()
            .and_then(|id| self.streamed.iter().position(|s| s.id == id));
        let text = if self.lean && streamed.is_none() && content.get().starts_with('"') {
            Some(Cow::Borrowed(if content.get() == "\"\"" {
                ""
            } else {
                NOT_READ
            }))
        } else {
            raw_as_str(content)
        };
        if let Some(text) = text {
            return match (parent, streamed) {
                (None, Some(si)) => self.whole_block(si, Channel::Text, text, ts, out),
                _ => text_out(text, parent, streamed.is_some(), ts, out),
            };
        }
        let Ok(blocks) = self.read::<Vec<&'a RawValue>>(content) else {
            return Ok(());
        };
        // A streamed message's blocks are compared with what was streamed:
        // they are read whole.
        let lean = self.lean && streamed.is_none();
        for raw in blocks {
            let b = if lean {
                self.read::<LeanBlock<'a>>(raw).map(LeanBlock::block)
            } else {
                self.read::<Block<'a>>(raw)
            };
            let Ok(b) = b else {
                out(Item::Event(Event::at(
                    ts,
                    Kind::Unknown {
                        raw: Json::from(raw),
                    },
                )))?;
                continue;
            };
            match b.ty.as_deref() {
                Some("text") => {
                    let text = b.text.get().unwrap_or_default();
                    match (parent, streamed) {
                        (None, Some(si)) => self.whole_block(si, Channel::Text, text, ts, out)?,
                        _ => text_out(text, parent, streamed.is_some(), ts, out)?,
                    }
                }
                Some("thinking") => {
                    if parent.is_some() {
                        continue;
                    }
                    let text = b.thinking.get().unwrap_or_default();
                    if streamed.is_none()
                        && text.is_empty()
                        && b.signature.as_deref().is_some_and(|s| !s.is_empty())
                    {
                        // The model thought, but only the signature was
                        // kept: say so rather than show nothing.
                        out(Item::Event(Event::at(
                            ts,
                            Kind::Error {
                                message: Cow::Borrowed(
                                    "thinking not saved: the transcript keeps only its signature",
                                ),
                                fatal: false,
                                source: Some(Cow::Borrowed("thinking")),
                            },
                        )))?;
                        continue;
                    }
                    if let Some(si) = streamed {
                        self.whole_block(si, Channel::Thinking, text, ts, out)?;
                    } else {
                        out(Item::Event(Event::at(ts, Kind::ThinkingDelta { text })))?;
                        out(Item::Event(Event::at(
                            ts,
                            Kind::ThinkingCompleted { duration_ms: None },
                        )))?;
                    }
                }
                Some("redacted_thinking") => {}
                Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
                    let id = b.id.get().unwrap_or_default();
                    if self.started(&id) {
                        continue;
                    }
                    let name = b.name.get().unwrap_or_default();
                    // Not read for the figures: `input` is `None`.
                    let args = b.input.map_or_else(json_null, Json::from);
                    let start = tool_start(id, &name, args);
                    self.remember_call(&start.call_id, &start.tool_name);
                    out(Item::Event(Event::at(ts, Kind::started(start))))?;
                }
                Some(t) if t.ends_with("_tool_result") => {
                    // A server tool's result (web search…) inside the message.
                    let id = b.tool_use_id.get().unwrap_or_default();
                    let name = self
                        .take_call(&id)
                        .unwrap_or_else(|| normalize_tool_name(t));
                    let mut end = ToolEnd::new(id, Cow::Owned(name), true);
                    end.result = b.content.map(Json::from);
                    out(Item::Event(Event::at(ts, Kind::completed(end))))?;
                }
                _ => out(Item::Event(Event::at(
                    ts,
                    Kind::Unknown {
                        raw: Json::from(raw),
                    },
                )))?,
            }
        }
        Ok(())
    }

    /// A `user` line: tool results, or a prompt.
    fn user<'a>(
        &mut self,
        msg: &Message<'a>,
        tool_use_result: Option<&'a RawValue>,
        subagent: bool,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Some(content) = msg.content else {
            return Ok(());
        };
        if let Some(text) = raw_as_str(content) {
            if !subagent {
                user_text_out(text, ts, out)?;
            }
            return Ok(());
        }
        let blocks = if self.lean {
            // The prompts' texts are read (what a user text is depends on
            // it); the results' are skipped.
            self.read::<Vec<LeanBlock<'a>>>(content).map(|bs| {
                bs.into_iter()
                    .map(|b| {
                        let text = match b.ty.as_deref() {
                            Some("text") => LaxStr(b.text.and_then(raw_as_str)),
                            _ => LaxStr(None),
                        };
                        Block { text, ..b.block() }
                    })
                    .collect::<Vec<_>>()
            })
        } else {
            self.read::<Vec<Block<'a>>>(content)
        };
        let Ok(blocks) = blocks else {
            return Ok(());
        };
        let results = blocks
            .iter()
            .filter(|b| b.ty.as_deref() == Some("tool_result"))
            .count();
        for b in blocks {
            match b.ty.as_deref() {
                Some("tool_result") => {
                    // `tool_use_result` belongs to the line's only result.
                    let tur = if results == 1 { tool_use_result } else { None };
                    let end = self.tool_end(&b, tur);
                    out(Item::Event(Event::at(ts, Kind::completed(end))))?;
                }
                Some("text") if !subagent => {
                    let text = b.text.get().unwrap_or_default();
                    user_text_out(text, ts, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A `tool_result` block (with the tool's own result object, if any).
    fn tool_end<'a>(&mut self, b: &Block<'a>, tur: Option<&'a RawValue>) -> ToolEnd<'a> {
        let id = b.tool_use_id.clone().get().unwrap_or_default();
        let name = self.take_call(&id).unwrap_or_else(|| "unknown".to_owned());
        let failed = b.is_error.0 == Some(true);
        if self.lean && name != "shell" {
            // Figures only: the outcome, and the error of a failed call;
            // the output and the tool's own object are not read.
            let mut t = ToolEnd::new(id, Cow::Owned(name), !failed);
            if failed {
                t.error = b
                    .content
                    .and_then(|c| self.content_text(c))
                    .filter(|s| !s.is_empty());
            }
            return t;
        }
        if self.lean {
            // Figures only, a shell call: its exit code, and a failed
            // call's error, as below; not its output, nor the tool's own
            // object without it (which cost an unescaped copy of each
            // output, often twice, and the object written again). The
            // object's members come from the line's walk.
            let mut t = ToolEnd::new(id, Cow::Owned(name), !failed);
            // A failed call's result is often a string: not read as an
            // object, where each refusal cost serde_json an error message
            // (docs/performance.md, "Refusals without error messages").
            let code = tur
                .filter(|r| r.get().starts_with('{'))
                .and_then(|r| self.read::<Members>(r).ok())
                .and_then(|m| m.int("exitCode").or_else(|| m.int("exit_code")));
            // The text only where it can tell: a failed call's error, or an
            // exit code the object did not give.
            let text = (failed || (code.is_none() && may_start_with_exit_code(b.content)))
                .then(|| b.content.and_then(|c| self.content_text(c)))
                .flatten();
            if failed {
                t.error = text.clone().filter(|s| !s.is_empty());
            }
            t.exit_code = code.or_else(|| exit_code_in(text.as_deref()?));
            exit_error(&mut t, failed);
            return t;
        }
        let text = b.content.and_then(|c| self.content_text(c));
        // From the line's walk; only an object has members (a string, a
        // failed call's usual result, is not offered to serde_json).
        let tur_m = tur
            .filter(|r| r.get().starts_with('{'))
            .and_then(|r| self.read::<Members>(r).ok());
        let mut t = ToolEnd::new(id, Cow::Owned(name), !failed);
        if failed {
            t.error = text.clone().filter(|s| !s.is_empty());
        }
        if t.tool_name == "shell" {
            // The tool's stdout/stderr, unless both are empty where the
            // model saw a text (a command sent to the background: "Command
            // running in background with ID: …").
            let from_tur = tur_m
                .as_ref()
                .and_then(|m| join_output(m.str("stdout"), m.str("stderr")))
                .filter(|o| !o.is_empty() || text.as_deref().is_none_or(str::is_empty));
            let output = from_tur.or(text.clone());
            t.output = output.map(|o| match strip_persisted(&o) {
                Some(p) => Text::from(p),
                None => Text::from(o),
            });
            t.exit_code = tur_m
                .as_ref()
                .and_then(|m| m.int("exitCode").or_else(|| m.int("exit_code")))
                .or_else(|| exit_code_in(text.as_deref()?));
            exit_error(&mut t, failed);
            t.result = tur.map(|r| without_output(r).map_or(Json::from(r), Json::from));
        } else {
            // The model-visible `content` is the tool's output; the tool's
            // own object (`tool_use_result`: Read's file, Edit's original
            // file, Task's totals…) is metadata, used below where it adds
            // (a patch), and the result only when there is no content.
            t.result = b.content.or(tur).map(Json::from);
        }
        if let Some(m) = &tur_m {
            if let Some(hunks) = m.get("structuredPatch") {
                let path = m.str("filePath").unwrap_or_default();
                if let Some(p) = structured_patch(&path, hunks) {
                    let (add, del) = count_patch_lines(&p);
                    t.lines_added = Some(add);
                    t.lines_removed = Some(del);
                    t.patch = Some(Cow::Owned(p));
                }
            }
            if t.patch.is_none()
                && m.str("type").as_deref() == Some("create")
                && let Some(c) = m.str("content")
            {
                t.lines_added = Some(c.lines().count() as u64);
                t.lines_removed = Some(0);
            }
        }
        t
    }
}

/// The exit code a failed Bash call's content starts with ("Exit code N").
fn exit_code_in(text: &str) -> Option<i64> {
    let s = text.strip_prefix("Exit code ")?;
    let n: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    n.parse().ok()
}

/// Whether the text of a tool result's `content` may start "Exit code ",
/// told from its raw JSON without unescaping it: a string whose first ten
/// bytes hold no escape is its own text there; anything else (an escape
/// among them, content blocks) may, and is read.
fn may_start_with_exit_code(content: Option<&RawValue>) -> bool {
    const PREFIX: &[u8] = b"Exit code ";
    let Some(raw) = content.map(|c| c.get().as_bytes()) else {
        return false;
    };
    match raw.strip_prefix(b"\"") {
        Some(body) => {
            let head = &body[..body.len().min(PREFIX.len())];
            head.contains(&b'\\') || body.starts_with(PREFIX)
        }
        None => true,
    }
}

/// A failed shell call's error "Exit code N\n<stderr>": the code is in
/// `exit_code` now, so the error is the rest.
fn exit_error(t: &mut ToolEnd<'_>, failed: bool) {
    if failed && let (Some(c), Some(e)) = (t.exit_code, t.error.as_deref()) {
        let rest = e.split_once('\n').map_or("", |(_, r)| r).trim_end();
        t.error = Some(Cow::Owned(if rest.is_empty() {
            format!("exit code {c}")
        } else {
            rest.to_owned()
        }));
    }
}

/// What a user-side text of Claude Code is (docs/dialects.md#claude-code).
#[derive(Debug, PartialEq)]
pub(crate) enum UserText {
    /// A prompt the user typed.
    Prompt,
    /// Not a prompt: a command's echo, its output, an interruption, text
    /// Claude Code put there itself; the text to show.
    Event(UserEventKind, String),
    /// A command's empty output: nothing to show.
    Nothing,
}

/// The text between `<tag>` and `</tag>`.
fn tagged<'t>(text: &'t str, tag: &str) -> Option<&'t str> {
    let open = format!("<{tag}>");
    let from = text.find(&open)? + open.len();
    let to = from + text[from..].find(&format!("</{tag}>"))?;
    Some(&text[from..to])
}

/// Sort a user-side text: Claude Code writes a slash command's echo
/// (`<command-name>`), a local command's output (`<local-command-stdout>`),
/// the interruption notices, the caveat before local commands, the summary a
/// compaction continues from, task notifications and lines of nothing but
/// `<system-reminder>`s as user lines; none of them was typed as a prompt.
/// Each is recognised by the whole text (a prompt that quotes one is a
/// prompt).
pub(crate) fn user_text(text: &str) -> UserText {
    let t = text.trim();
    let event = |k, s: &str| UserText::Event(k, s.to_owned());
    if t == "[Request interrupted by user]" || t == "[Request interrupted by user for tool use]" {
        return event(UserEventKind::Interrupt, t);
    }
    if t.starts_with("<command-")
        && let Some(name) = tagged(t, "command-name").map(str::trim)
    {
        let mut cmd = String::new();
        if !name.starts_with('/') {
            cmd.push('/');
        }
        cmd.push_str(name);
        if let Some(args) = tagged(t, "command-args")
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            cmd.push(' ');
            cmd.push_str(args);
        }
        return UserText::Event(UserEventKind::Command, cmd);
    }
    for tag in ["local-command-stdout", "local-command-stderr"] {
        // `<tag>` without building it: this runs for every user text.
        let opens = t
            .strip_prefix('<')
            .and_then(|r| r.strip_prefix(tag))
            .is_some_and(|r| r.starts_with('>'));
        if opens {
            let inner = tagged(t, tag).unwrap_or(t).trim();
            return if inner.is_empty() {
                UserText::Nothing
            } else {
                event(UserEventKind::CommandOutput, inner)
            };
        }
    }
    if t.starts_with("<local-command-caveat>") {
        return event(
            UserEventKind::Context,
            tagged(t, "local-command-caveat").unwrap_or(t),
        );
    }
    const CONTEXT: [&str; 3] = [
        "Caveat: The messages below were generated by the user while running local commands",
        "This session is being continued from a previous conversation",
        "<task-notification>",
    ];
    if CONTEXT.iter().any(|p| t.starts_with(p)) || reminders_only(t) {
        return event(UserEventKind::Context, t);
    }
    UserText::Prompt
}

/// The text is `<system-reminder>` blocks and nothing else.
fn reminders_only(t: &str) -> bool {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let mut rest = t;
    let mut any = false;
    while let Some(r) = rest.trim_start().strip_prefix(OPEN) {
        let Some(end) = r.find(CLOSE) else {
            return false;
        };
        rest = &r[end + CLOSE.len()..];
        any = true;
    }
    any && rest.trim().is_empty()
}

/// A user-side text as what it is: a prompt, or a `user_event`.
fn user_text_out<'a>(text: Str<'a>, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
    let kind = match user_text(&text) {
        UserText::Prompt => Kind::UserMessage { text },
        UserText::Event(what, t) => Kind::UserEvent {
            what,
            text: Cow::Owned(t),
        },
        UserText::Nothing => return Ok(()),
    };
    out(Item::Event(Event::at(ts, kind)))
}

/// Assistant text: a delta, a recap of streamed text, or (a sub-agent's)
/// progress of the parent call.
fn text_out<'a>(
    text: Str<'a>,
    parent: Option<&str>,
    recap: bool,
    ts: Option<i64>,
    out: Out<'_, 'a>,
) -> io::Result<()> {
    let item = match parent {
        Some(p) => {
            if text.is_empty() || recap {
                return Ok(());
            }
            Item::Event(Event::at(
                ts,
                Kind::ToolCallProgress {
                    call_id: Cow::Owned(p.to_owned()),
                    partial: Json::from(raw_object1("text", &text)),
                },
            ))
        }
        None if recap => Item::Recap {
            ts,
            channel: Channel::Text,
            text,
        },
        None => Item::Event(Event::at(ts, Kind::TextDelta { text })),
    };
    out(item)
}

/// A `tool_call_started` for a `tool_use` block.
fn tool_start<'a>(id: Str<'a>, name: &str, args: crate::event::Json<'a>) -> ToolStart<'a> {
    let mcp = split_mcp_name(name);
    let norm = if mcp.is_some() {
        "mcp".to_owned()
    } else {
        normalize_tool_name(name)
    };
    let mut t = ToolStart::new(id, Cow::Owned(norm), args);
    // Only an object has members: the arguments a figures-only read
    // leaves out (`null`) cost serde_json an error message each.
    if let Some(a) = t.args.borrowed()
        && a.trim_start().starts_with('{')
        && let Some(m) = Members::parse(a)
    {
        fill_start(&mut t, &m);
    }
    if let Some((server, tool)) = mcp {
        t.mcp_server = Some(Cow::Owned(server.to_owned()));
        t.mcp_tool = Some(Cow::Owned(tool.to_owned()));
    }
    t
}

/// The model a line names: an `assistant` message's or a `message_start`'s
/// (not `<synthetic>`, the name of messages Claude Code writes itself).
fn line_model(line: &Line<'_>) -> Option<String> {
    let raw = match line.ty.as_deref() {
        Some("assistant") => line.message,
        Some("stream_event") => line.event.and_then(stream::start_message),
        _ => None,
    }?;
    let m: Message = serde_json::from_str(raw.get()).ok()?;
    m.model
        .as_deref()
        .filter(|m| !m.is_empty() && !m.starts_with('<'))
        .map(str::to_owned)
}

/// The notice for a `rate_limit_event`'s `rate_limit_info`, unless the
/// status is `allowed` (nothing to say).
fn rate_limit_notice(raw: &RawValue) -> Option<String> {
    let m = Members::of(raw)?;
    let status = m.nonempty_str("status")?;
    if status == "allowed" {
        return None;
    }
    let mut msg = status.into_owned();
    if let Some(kind) = m.nonempty_str("rateLimitType") {
        msg.push_str(&format!(" ({kind})"));
    }
    if let Some(at) = m.int("resetsAt") {
        msg.push_str(&format!(", resets at {}", crate::time::iso8601(at)));
    }
    Some(msg)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hunk<'a> {
    #[serde(default)]
    old_start: LaxInt,
    #[serde(default)]
    old_lines: LaxInt,
    #[serde(default)]
    new_start: LaxInt,
    #[serde(default)]
    new_lines: LaxInt,
    #[serde(borrow, default)]
    lines: Vec<S<'a>>,
}

/// Claude Code's `structuredPatch` hunks as a unified diff.
fn structured_patch(path: &str, raw: &RawValue) -> Option<String> {
    let hunks: Vec<Hunk> = serde_json::from_str(raw.get()).ok()?;
    if hunks.is_empty() {
        return None;
    }
    let path = path.trim_start_matches('/');
    let mut p = format!("--- a/{path}\n+++ b/{path}\n");
    for h in hunks {
        p.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            h.old_start.0.unwrap_or(0),
            h.old_lines.0.unwrap_or(0),
            h.new_start.0.unwrap_or(0),
            h.new_lines.0.unwrap_or(0)
        ));
        for l in h.lines {
            p.push_str(&l.0);
            p.push('\n');
        }
    }
    Some(p)
}

/// The arguments of a task's own call: the fields of its line that a
/// `Task` call's arguments have (`description`, `prompt`, `subagent_type`),
/// and what kind of task it is.
fn task_args(raw: &RawValue) -> Json<'static> {
    let mut args = serde_json::Map::new();
    if let Ok(serde_json::Value::Object(line)) = serde_json::from_str(raw.get()) {
        for key in [
            "description",
            "prompt",
            "subagent_type",
            "task_type",
            "task_id",
        ] {
            if let Some(v) = line.get(key) {
                args.insert(key.to_owned(), v.clone());
            }
        }
    }
    Json::assembled(serde_json::Value::Object(args).to_string())
}

/// What a task's failure says: the notification's summary, else the
/// update's error, with the task's description.
fn task_failure(
    line: &Line<'_>,
    patch: Option<&Members<'_>>,
    t: &Task,
    status: Option<String>,
) -> String {
    if let Some(s) = line.summary.as_deref().filter(|s| !s.is_empty()) {
        return s.to_owned();
    }
    let what = t
        .description
        .as_deref()
        .map_or_else(|| format!("task {}", t.id), |d| format!("task \"{d}\""));
    let status = status.as_deref().unwrap_or("failed");
    match patch.and_then(|p| p.nonempty_str("error")) {
        Some(e) => format!("{what} {status}: {e}"),
        None => format!("{what} {status}"),
    }
}

/// `modelUsage` per model (`inputTokens` leaves the cache reads and writes
/// out, as the API's `input_tokens` does).
fn model_usage(raw: &RawValue) -> Option<Vec<(String, Usage)>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct M {
        #[serde(default)]
        input_tokens: LaxInt,
        #[serde(default)]
        output_tokens: LaxInt,
        #[serde(default)]
        cache_read_input_tokens: LaxInt,
        #[serde(default)]
        cache_creation_input_tokens: LaxInt,
    }
    let map: Vec<(String, M)> =
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw.get())
            .ok()?
            .into_iter()
            .filter_map(|(k, v)| Some((k, serde_json::from_value::<M>(v).ok()?)))
            .collect();
    let n = |v: LaxInt| v.0.and_then(|v| u64::try_from(v).ok());
    Some(
        map.into_iter()
            .map(|(k, m)| {
                let u = Usage::cache_apart(
                    n(m.input_tokens).unwrap_or(0),
                    n(m.output_tokens).unwrap_or(0),
                    n(m.cache_read_input_tokens),
                    n(m.cache_creation_input_tokens),
                );
                (k, u)
            })
            .collect(),
    )
}

/// What the running totals `now` add to `prev`, over all models. A model
/// whose total went down means the count started again (a new process, a
/// `/clear`): then `now` is all this turn's.
fn usage_added(prev: &[(String, Usage)], now: &[(String, Usage)]) -> Usage {
    let before = |k: &str| prev.iter().find(|(p, _)| p == k).map(|(_, u)| *u);
    let restarted = now
        .iter()
        .any(|(k, u)| before(k).is_some_and(|b| u.input < b.input || u.output < b.output));
    now.iter().fold(Usage::default(), |acc, (k, u)| {
        let add = match before(k) {
            Some(b) if !restarted => u.minus(&b),
            _ => *u,
        };
        acc.add(&add)
    })
}

/// The `result` line.
fn result<'a>(line: &Line<'a>) -> SessionResult<'a> {
    let text = line.result.and_then(raw_as_str);
    let failed = line.is_error.0 == Some(true)
        || line
            .subtype
            .as_deref()
            .is_some_and(|s| s.starts_with("error"));
    let error = if failed {
        line.errors
            .and_then(|e| serde_json::from_str::<Vec<S>>(e.get()).ok())
            .filter(|v| !v.is_empty())
            .map(|v| {
                Cow::Owned(
                    v.iter()
                        .map(|s| s.0.as_ref())
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            })
            .or_else(|| text.clone().filter(|t| !t.is_empty()))
            .or_else(|| line.subtype.0.clone())
    } else {
        None
    };
    SessionResult {
        ok: !failed,
        text,
        duration_ms: line.duration_ms.0.and_then(|v| u64::try_from(v).ok()),
        usage: line
            .usage
            .and_then(Members::of)
            .as_ref()
            .and_then(anthropic_usage),
        cost_usd: line.total_cost_usd.0,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Usage;

    fn parse_all(lines: &[&str]) -> Vec<Item<'static>> {
        let mut p = ClaudeParser::default();
        let mut items = Vec::new();
        for l in lines {
            let r = p
                .parse(l, &mut |i| {
                    items.push(i.into_owned());
                    Ok(())
                })
                .unwrap();
            assert_eq!(r, Parsed::Done, "{l}");
        }
        items
            .into_iter()
            .filter(|i| !matches!(i, Item::IdHint(_)))
            .collect()
    }

    /// Every line read whole and read for the figures only.
    fn parse_both(lines: &[String]) -> [Vec<Item<'static>>; 2] {
        [Reads::Whole, Reads::Figures].map(|reads| {
            let mut p = ClaudeParser::default();
            p.set_reads(reads);
            let mut items = Vec::new();
            for l in lines {
                p.parse(l, &mut |i| {
                    items.push(i.into_owned());
                    Ok(())
                })
                .unwrap();
            }
            items
        })
    }

    /// A shell call's completion read for the figures keeps what a whole
    /// read gives it but the output and the tool's own object (its exit
    /// code, the error of a failed call as rewritten from "Exit code N",
    /// its outcome), whatever the content's shape and escapes and whether
    /// the tool's object names the code; and each line's usage (read from
    /// the line's walk) is the whole read's.
    #[test]
    fn shell_results_read_for_the_figures_keep_code_error_and_outcome() {
        const CONTENTS: &[&str] = &[
            r#""Exit code 2\nboom""#,
            r#""Exit code 2""#,
            r#""Exit code 3\nran on""#,
            r#""\u0045xit code 4\nescaped in the prefix""#,
            r#""Exit\u0020code 6""#,
            r#""Exit code ""#,
            r#""Exit co""#,
            r#""Exit code 99999999999999999999""#,
            r#""""#,
            r#""plain \"output\"\n""#,
            r#"[{"type":"text","text":"Exit code 5\nerr"}]"#,
            r#"[{"type":"text","text":"fine"},{"type":"text","text":"Exit code 8"}]"#,
            r#"[]"#,
            r#"null"#,
            r#"17"#,
        ];
        const OBJECTS: &[&str] = &[
            "",
            r#","toolUseResult":{"stdout":"a\"b","stderr":"e","interrupted":false}"#,
            r#","toolUseResult":{"stdout":"","stderr":"","exitCode":7}"#,
            r#","toolUseResult":{"exit_code":"9","stdout":"x"}"#,
            r#","toolUseResult":{"exitCode":0,"stdout":"Exit code 1"}"#,
            r#","toolUseResult":"Error: Exit code 3""#,
        ];
        let mut lines = Vec::new();
        let mut n = 0;
        for content in CONTENTS {
            for object in OBJECTS {
                for error in ["", r#","is_error":true"#, r#","is_error":false"#] {
                    n += 1;
                    lines.push(format!(
                        r#"{{"type":"assistant","message":{{"id":"m{n}","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{"command":"ls"}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":{n},"cache_read_input_tokens":3,"cache_creation_input_tokens":2,"cache_creation":{{"ephemeral_1h_input_tokens":1}},"output_tokens":5}}}}}}"#
                    ));
                    lines.push(format!(
                        r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{n}","content":{content}{error}}}]}}{object}}}"#
                    ));
                }
            }
        }
        let [whole, lean] = parse_both(&lines);
        let figures = |items: &[Item<'_>]| -> Vec<String> {
            items
                .iter()
                .filter_map(|i| match i {
                    Item::Event(Event {
                        kind: Kind::ToolCallCompleted(e),
                        ..
                    }) => Some(format!(
                        "{} {} ok={} code={:?} error={:?} failed={}",
                        e.call_id,
                        e.tool_name,
                        e.ok,
                        e.exit_code,
                        e.error,
                        crate::event::figures::failed(e)
                    )),
                    Item::UsageTotal { usage, .. } => Some(format!("{usage:?}")),
                    _ => None,
                })
                .collect()
        };
        let (w, l) = (figures(&whole), figures(&lean));
        assert_eq!(w.len(), 2 * n, "{w:#?}");
        for (a, b) in w.iter().zip(&l) {
            assert_eq!(a, b);
        }
        assert_eq!(w.len(), l.len());
        // The cases were met: codes from the object and from the text, and
        // errors rewritten.
        let all = w.join("\n");
        for want in [
            "code=Some(7)",
            "code=Some(4)",
            "code=Some(9)",
            "exit code 2",
            "code=Some(5)",
        ] {
            assert!(all.contains(want), "{want}: {all}");
        }
    }

    #[test]
    fn usage_is_per_message_not_per_line() {
        let a = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"x"}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":8}}}"#;
        let b = r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"y"}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":8}}}"#;
        let totals: Vec<Usage> = parse_all(&[a, b])
            .into_iter()
            .filter_map(|i| match i {
                Item::UsageTotal { usage, .. } => Some(usage),
                _ => None,
            })
            .collect();
        assert_eq!(totals.len(), 2);
        assert_eq!(totals[0], totals[1]);
        assert_eq!(totals[1].input, 110);
    }

    #[test]
    fn streamed_tool_use_starts_with_its_arguments_once() {
        let items = parse_all(&[
            r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":3,"output_tokens":1}}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"Bash","input":{}}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"and\":\"ls\"}"}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#,
        ]);
        let starts: Vec<_> = items
            .iter()
            .filter_map(|i| match i {
                Item::Event(Event {
                    kind: Kind::ToolCallStarted(t),
                    ..
                }) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(starts.len(), 1);
        assert_eq!(starts[0].tool_name, "shell");
        assert_eq!(starts[0].command.as_deref(), Some("ls"));
        assert_eq!(starts[0].args.get(), r#"{"command":"ls"}"#);
    }
}
