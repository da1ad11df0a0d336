//! Codex's saved rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`,
//! and `archived_sessions/`).
//!
//! Each line is `{timestamp, type, payload}` with `type` one of
//! `session_meta`, `turn_context`, `response_item`, `event_msg` and
//! `compacted`. Rollouts written before the wrapper (September 2025 and
//! earlier) begin with a bare `{id, timestamp, instructions}` line, mark
//! state with `{"record_type": "state"}` and write the response items
//! themselves, one per line.
//!
//! - **Once, not twice.** The model's history (`response_item`: messages,
//!   reasoning summaries, tool calls and their outputs) and the interface's
//!   events (`event_msg`: `agent_message`, `agent_reasoning`,
//!   `exec_command_end`, …) say the same things. The history is read; of
//!   the events only those the history lacks: the prompt as the user typed
//!   it (`user_message`; the history's user messages also hold the injected
//!   AGENTS.md and environment context), the token counts, the end of a
//!   task, an aborted turn, an error. In the older shape, which has no
//!   events, the history's user messages are the prompts, less the injected
//!   ones.
//! - **Usage** comes as running totals (`token_count.info.total_token_usage`,
//!   often written twice in a row): each is a total, which the transform
//!   turns into increments, so a repeated total adds nothing.
//! - **Compaction** (`compacted`) carries the summary and a copy of the
//!   history it replaces: the summary becomes a `summary` event; the copy is
//!   not shown again.
//! - **No result line**: the file is the whole saved session, so its end is
//!   the session's `result` (`ok`, the last running total, or no usage when
//!   the file has no running total), unless its last prompt's turn never
//!   ended (no `task_complete` or `turn_aborted`, in a rollout that writes
//!   them): then, as for a live stream cut off, there is no `result`.
//! - **Unified exec**: an `exec_command` whose process outlives its call
//!   returns `Process running with session ID N`; `write_stdin` polls it,
//!   and `exec_command_end` (same `call_id`) says how it ended. The
//!   command's completion waits for that event; a poll is a call of its own
//!   that names the process it polls.
//! - **Spawned sub-agents** (`session_meta.source.subagent.thread_spawn`)
//!   are linked to their parent thread and may begin with a copy of its
//!   history, left out as a fork's is.
//! - **Forks** (`session_meta.forked_from_id`): Codex writes the fork's own
//!   `session_meta`, then copies the parent's rollout records as they are
//!   (its `session_meta` included), all in one burst at the fork, then the
//!   fork's own turns. The first `session_meta` names the session; the copy
//!   (from the parent's `session_meta` to the first record written after a
//!   pause, or dated before the fork) is the parent's and is not shown again:
//!   a notice says how many records were inherited, and its last running
//!   total is the base the fork's own usage is counted from.
//! - **Rollbacks** (`event_msg`/`thread_rolled_back {num_turns}`) drop the
//!   newest turns from the conversation, as Codex rebuilds it. Each turn (a
//!   typed prompt up to the next one) is held back until the next prompt
//!   comes, so a rollback drops it; a rollback reaching past the held turn
//!   is said with a notice. The dropped turns' usage still counts.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::Present;
use crate::dialect::common::{
    fill_start_owned, normalize_tool_name, openai_usage, split_mcp_name, split_mcp_namespace,
};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{Event, Json, Kind, Reads, Str, SummaryPhase, Text, ToolEnd, ToolStart, Usage};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
/// The `event_msg` types of Codex's protocol (codex-rs/protocol) that repeat
/// what the history records (messages, reasoning, calls and their ends), or
/// are the interface's own state (deltas, approvals, listings, startup): read
/// and left out. A type on no list is kept as `unknown`.
const EVENTS_SHOWN_ELSEWHERE: &[&str] = &[
    "agent_message",
    "agent_message_delta",
    "agent_message_content_delta",
    "agent_reasoning",
    "agent_reasoning_delta",
    "agent_reasoning_raw_content",
    "agent_reasoning_raw_content_delta",
    "agent_reasoning_section_break",
    "reasoning_content_delta",
    "reasoning_raw_content_delta",
    "session_configured",
    "thread_settings_applied",
    "thread_name_updated",
    "model_reroute",
    "mcp_startup_update",
    "mcp_startup_complete",
    "mcp_tool_call_begin",
    "mcp_tool_call_end",
    "mcp_list_tools_response",
    "web_search_begin",
    "web_search_end",
    "image_generation_begin",
    "image_generation_end",
    "exec_command_begin",
    "exec_command_output_delta",
    "terminal_interaction",
    "view_image_tool_call",
    "exec_approval_request",
    "apply_patch_approval_request",
    "request_permissions",
    "request_user_input",
    "elicitation_request",
    "dynamic_tool_call_request",
    "dynamic_tool_call_response",
    "patch_apply_begin",
    "patch_apply_end",
    "turn_diff",
    "plan_update",
    "plan_delta",
    "get_history_entry_response",
    "list_custom_prompts_response",
    "list_skills_response",
    "list_remote_skills_response",
    "remote_skill_downloaded",
    "skills_update_available",
    "deprecation_notice",
    "background_event",
    "stream_error",
    "warning",
    "undo_started",
    "undo_completed",
    "context_compacted",
    "thread_rolled_back",
    "shutdown_complete",
    "entered_review_mode",
    "exited_review_mode",
    "raw_response_item",
    "item_started",
    "hook_started",
    "hook_completed",
    "conversation_path",
    "collab_agent_spawn_begin",
    "collab_agent_spawn_end",
    "collab_agent_interaction_begin",
    "collab_agent_interaction_end",
    "collab_waiting_begin",
    "collab_waiting_end",
    "collab_close_begin",
    "collab_close_end",
    "collab_resume_begin",
    "collab_resume_end",
    "realtime_conversation_started",
    "realtime_conversation_realtime",
    "realtime_conversation_closed",
    "token_count",
];

pub const NAME: &str = "codex-rollout";

/// The wrapper's `type`s.
const WRAPPED: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
    "token_usage_record",
];

/// Detection: a wrapped line (`{type, payload}` with one of the rollout's
/// types), the older shape's state marker, or its bare first line (an `id`
/// and `instructions`, no `type`).
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    (p.payload.is_some() && WRAPPED.contains(&p.ty()))
        || p.record_type.is_some()
        || (p.instructions.is_some() && p.id.is_some() && p.ty.0.is_none())
}

/// One rollout line: the wrapper, or the older shape's bare lines.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(borrow, default)]
    payload: Option<Lit<'a>>,
    #[serde(default)]
    record_type: Present,
    #[serde(default)]
    instructions: Present,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
}

/// A JSON value's text as it is written: read as serde_json's `RawValue`,
/// or found by [`quick_line`].
#[derive(Clone, Copy)]
struct Lit<'a>(&'a str);

impl<'de: 'a, 'a> Deserialize<'de> for Lit<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|r| Lit(r.get()))
    }
}

/// The wrapper of a rollout line (`{"timestamp":…,"type":…,"payload":…}`,
/// in any order) read without serde_json: the payload is passed over with
/// the string scanner (16 bytes a step) instead of serde_json's, which
/// reads it again anyway as the [`Payload`]. `None` for anything unusual
/// (an escape in a key or in the type or time, a member the older shape
/// has, a repeated member, a `null` payload, text serde_json would
/// refuse), which serde_json then reads, so that what it says of such a
/// line stays word for word.
fn quick_line(rec: &str) -> Option<Line<'_>> {
    use crate::input::scan::{checked_string_end, skip_ws, value_end};
    let s = rec.as_bytes();
    // A plain string from `s[i]` (its opening quote): its text and end.
    let plain = |i: usize| -> Option<(&str, usize)> {
        if s.get(i) != Some(&b'"') {
            return None;
        }
        let (len, escaped) = checked_string_end(&s[i + 1..])?;
        (!escaped).then(|| (&rec[i + 1..i + 1 + len], i + len + 2))
    };
    let mut line = Line {
        ty: LaxStr(None),
        timestamp: LaxStr(None),
        payload: None,
        record_type: Present(false),
        instructions: Present(false),
        id: LaxStr(None),
    };
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(s, i + 1);
    if s.get(i) == Some(&b'}') {
        // `{}`: serde_json reads it.
        return None;
    }
    loop {
        let (key, after) = plain(i)?;
        i = skip_ws(s, after);
        if s.get(i) != Some(&b':') {
            return None;
        }
        let at = skip_ws(s, i + 1);
        let end = value_end(s, at)?;
        match key {
            "type" | "timestamp" => {
                let (text, _) = plain(at)?;
                let field = if key == "type" {
                    &mut line.ty
                } else {
                    &mut line.timestamp
                };
                if field.0.is_some() {
                    return None;
                }
                field.0 = Some(Cow::Borrowed(text));
            }
            "payload" => {
                if line.payload.is_some() || s[at] == b'n' {
                    return None;
                }
                line.payload = Some(Lit(&rec[at..end]));
            }
            "record_type" | "instructions" | "id" => return None,
            // Serde_json passes other members over (checked as `value_end` checks them).
            _ => {}
        }
        i = skip_ws(s, end);
        match *s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            b'}' => break,
            _ => return None,
        }
    }
    // Nothing but whitespace may follow the object.
    (skip_ws(s, i + 1) == s.len()).then_some(line)
}

/// A payload: a response item, an event, the session's or a turn's
/// context (the union of the fields read).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug))]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    role: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    // The three texts that may be long are kept as their literals and
    // unescaped where they are used ([`Reads::Figures`] uses little of them).
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    action: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    // session_meta, turn_context
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    approval_policy: LaxStr<'a>,
    #[serde(borrow, default)]
    forked_from_id: LaxStr<'a>,
    #[serde(default)]
    num_turns: crate::json::LaxInt,
    // event_msg, compacted
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reason: LaxStr<'a>,
    // function_call (newer MCP calls: `mcp__<server>[__<prefix>]`)
    #[serde(borrow, default)]
    namespace: LaxStr<'a>,
    // session_meta: who started the session (a spawned sub-agent's parent)
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
    // exec_command_end
    #[serde(default)]
    exit_code: crate::json::LaxInt,
    #[serde(borrow, default)]
    aggregated_output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    duration: Option<&'a RawValue>,
    // task_started (Unix seconds, newer builds)
    #[serde(default)]
    started_at: crate::json::LaxInt,
    // session_meta: when the session was created
    #[serde(borrow, default, rename = "timestamp")]
    created: LaxStr<'a>,
    // session_meta: the version of Codex that wrote the rollout
    #[serde(borrow, default)]
    cli_version: LaxStr<'a>,
    // item_completed (0.147 and later)
    #[serde(borrow, default)]
    item: Option<&'a RawValue>,
    // a user message's origin labels (`content_item_kinds`, 0.150 and later)
    #[serde(borrow, default)]
    internal_chat_message_metadata_passthrough: Option<&'a RawValue>,
}

/// Parser state for one rollout.
#[derive(Default)]
pub struct CodexRolloutParser {
    started: bool,
    /// The last event written was assistant text: a message that follows
    /// is another message (the commentary, then the final answer), which
    /// a `turn_ended` keeps from running into it.
    after_text: bool,
    /// The file has the wrapper (and so the interface's events).
    wrapped: bool,
    session_id: Option<String>,
    /// The id in the file's name (`rollout-<time>-<id>.jsonl`), for a
    /// rollout whose `session_meta` is missing or names none: Codex names
    /// the file after the thread it holds.
    file_id: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    approval: Option<String>,
    start_ts: Option<i64>,
    last_ts: Option<i64>,
    /// A prompt that came before the turn's context named the model.
    pending_prompt: Option<(Option<i64>, String)>,
    /// Open tool calls by call id.
    calls: CallTable<Open>,
    total: Usage,
    /// A running total was read (a rollout without any has no usage:
    /// unknown, not zero).
    usage_seen: bool,
    /// Unified exec: commands whose output said their process was still
    /// running, completed by their `exec_command_end` (in call order).
    running: Vec<Running>,
    /// Unified exec: the command each process id was started by (call id,
    /// command line), kept after it ends for the polls that name it.
    processes: std::collections::HashMap<String, (String, Option<String>)>,
    /// Open `write_stdin` polls: the process id each polls.
    polls: std::collections::HashMap<String, String>,
    /// `exec_command_end`s that came before their call's output.
    early_ends: std::collections::BTreeMap<String, ExecEnd>,
    /// The rollout writes the ends of turns (`task_started` /
    /// `task_complete`; older versions persisted neither).
    turn_markers: bool,
    /// The last prompt's turn has not ended (no `task_complete` or
    /// `turn_aborted` after it).
    turn_open: bool,
    /// A spawned sub-agent: its parent thread's id
    /// (`session_meta.source.subagent.thread_spawn.parent_thread_id`).
    spawned_by: Option<String>,
    /// In the copy of its parent a spawned sub-agent begins with, a copied
    /// turn is open (the parent's turn that spawned it).
    copy_turn_open: bool,
    /// When a spawned sub-agent was created (`session_meta.timestamp`, in
    /// Unix seconds).
    created_s: Option<i64>,
    /// The first running total after a fork's or sub-agent's copy is still
    /// to come (it says whether the child's totals go on from the copy's or
    /// start again from zero).
    first_own_total: bool,
    /// Calls without an id of their own (web searches), numbered.
    anonymous: u64,
    /// The first `session_meta` was read (later ones are a fork's copy of
    /// its parent's).
    has_meta: bool,
    /// The session this one was forked from.
    forked_from: Option<String>,
    /// Reading the copy of the parent a fork begins with: the time of the
    /// fork and of the last copied record, and how many were copied.
    inherited: Option<(Option<i64>, Option<i64>, u64)>,
    /// The running total the fork's copy ended with (its own usage is
    /// counted from there).
    base: Usage,
    /// The current turn's items, held until the next prompt (a rollback
    /// drops them), and their rough size.
    turn: Vec<Item<'static>>,
    turn_bytes: usize,
    /// Records a fork copied from its parent, not yet said.
    copied: u64,
    /// The typed prompt just written (the history's user message and the
    /// `user_message` or `item_completed` event that follows it say it
    /// twice): a repeat right after it is the same prompt.
    last_prompt: Option<String>,
    /// A prompt came as an event (`user_message`, `item_completed`
    /// `UserMessage`): the history's user messages are not prompts.
    event_prompts: bool,
    /// The rollout was written by Codex 0.148 or later (or names no
    /// version), where the typed prompt may be only in the history.
    history_prompts: bool,
    /// Texts of this turn's assistant messages and reasoning, by source
    /// (hashes): the history and `item_completed` items say them both, in
    /// either order; each copy is written once.
    history_texts: Vec<u64>,
    item_texts: Vec<u64>,
    /// Calls of this turn already completed (an `item_completed` command
    /// repeats the history's call, or stands in for it).
    done_calls: CallTable<()>,
    /// `token_usage_record`s are the usage (0.151 and later): the
    /// `token_count` totals beside them count the same responses.
    usage_records: bool,
    /// Responses whose usage record was counted (a record is repeated in
    /// a compaction's copy and in a resumed thread's history).
    responses: CallTable<()>,
    /// Only the figures are read ([`Reads::Figures`]): texts, tool
    /// arguments and outputs that no figure needs are left unread.
    lean: bool,
}

/// An open call: its normalized name, and a shell call's command line.
struct Open {
    name: String,
    command: Option<String>,
}

/// A unified-exec command whose process was still running when its call
/// returned (`Process running with session ID N`).
struct Running {
    call_id: String,
    name: String,
    /// What the call returned (the first chunk of the output).
    first_output: Option<String>,
    /// The exit code a `write_stdin` poll reported (`Process exited with
    /// code N`) and the poll's time, for rollouts that lack the
    /// `exec_command_end`.
    exited: Option<(i64, Option<i64>)>,
}

/// An `exec_command_end`: how a command ended, in the event's words.
struct ExecEnd {
    exit_code: Option<i64>,
    status: Option<String>,
    output: Option<String>,
    duration_ms: Option<u64>,
}

impl ExecEnd {
    /// `lean`: read for the figures only, the output left unread.
    fn of(p: &Payload<'_>, lean: bool) -> ExecEnd {
        // `duration` is a Rust `Duration`: `{"secs", "nanos"}`.
        let duration_ms = p.duration.and_then(Members::of).and_then(|d| {
            let secs = u64::try_from(d.int("secs")?).ok()?;
            let nanos = u64::try_from(d.int("nanos").unwrap_or(0)).ok()?;
            Some(secs * 1000 + nanos / 1_000_000)
        });
        ExecEnd {
            exit_code: p.exit_code.0,
            status: p.status.as_deref().map(str::to_owned),
            output: p
                .aggregated_output
                .filter(|_| !lean)
                .and_then(raw_as_str)
                .map(Cow::into_owned),
            duration_ms,
        }
    }

    /// The command's completion: `completed` with exit code 0 is a
    /// success; `failed` (a non-zero exit code, or -1 when the process
    /// could not be run) and `declined` are failures.
    fn into_end(self, call_id: String, name: String) -> ToolEnd<'static> {
        let ok = self
            .status
            .as_deref()
            .map_or(self.exit_code == Some(0), |s| s == "completed")
            && self.exit_code.is_none_or(|c| c == 0);
        let mut end = ToolEnd::new(Cow::Owned(call_id), Cow::Owned(name), ok);
        end.exit_code = self.exit_code;
        end.duration_ms = self.duration_ms;
        end.output = self.output.map(|o| Text::from(Cow::Owned(o)));
        if !ok {
            end.error = Some(Cow::Owned(match (self.status.as_deref(), self.exit_code) {
                (Some("declined"), _) => "declined".to_owned(),
                (_, Some(c)) => format!("exit code {c}"),
                (Some(s), None) => s.to_owned(),
                (None, None) => "no exit code".to_owned(),
            }));
        }
        end
    }
}

/// The process id a unified-exec output says is still running
/// (`Process running with session ID N`).
fn running_process(text: &str) -> Option<&str> {
    text.lines()
        .take(HEAD_LINES)
        .find_map(|l| l.strip_prefix("Process running with session ID "))
        .map(str::trim)
        .filter(|n| !n.is_empty())
}

/// The thread id Codex puts at the end of a rollout's file name:
/// `rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl`
/// (or `.jsonl.zst`). A name without one gives `None`.
fn id_in_file_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".zst").unwrap_or(name);
    let stem = stem.strip_suffix(".jsonl")?;
    let id = stem.get(stem.len().checked_sub(36)?..)?;
    let shape = id.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    });
    (shape && stem.starts_with("rollout-")).then_some(id)
}

/// The exit code an exec output reports (`Exit code: N`, `Process exited
/// with code N`).
fn exit_line(text: &str) -> Option<i64> {
    text.lines().take(HEAD_LINES).find_map(|l| {
        let n = l
            .strip_prefix("Exit code: ")
            .or_else(|| l.strip_prefix("Process exited with code "))?;
        n.trim().parse().ok()
    })
}

/// A fork's copy of its parent is written in one burst: a record more than
/// this long after the previous one is the fork's own.
const FORK_BURST_MS: i64 = 1000;

/// A held turn longer than this is written before its end is known (a
/// rollback of it is then reported, not undone).
const HOLD_BYTES: usize = 8 * 1024 * 1024;

impl CodexRolloutParser {
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        if self.session_id.is_none() {
            self.session_id = self.file_id.clone();
        }
        out(crate::dialect::common::saved_session_started(
            self.start_ts,
            NAME,
            &self.session_id,
            &self.model,
            &self.cwd,
            &self.approval,
            &None,
            self.parent(),
        ))?;
        self.inherited_notice(out)?;
        if let Some((ts, text)) = self.pending_prompt.take() {
            out(Item::Event(Event::at(
                ts,
                Kind::UserMessage {
                    text: Cow::Owned(text),
                },
            )))?;
        }
        Ok(())
    }

    /// The session this one came from: a spawned sub-agent's parent (a
    /// sub-agent, even when its history was forked from the parent's), or
    /// the session a fork copied.
    fn parent(&self) -> Option<crate::event::SessionParent<'static>> {
        use crate::event::SessionParent;
        if let Some(p) = &self.spawned_by {
            return Some(SessionParent::subagent(Cow::Owned(p.clone()), None));
        }
        self.forked_from
            .clone()
            .map(|f| SessionParent::fork(Cow::Owned(f)))
    }

    fn emit<'a>(&mut self, ts: Option<i64>, kind: Kind<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(out)?;
        if !matches!(kind, Kind::UserMessage { .. }) {
            self.last_prompt = None;
        }
        self.after_text = matches!(kind, Kind::TextDelta { .. });
        out(Item::Event(Event::at(ts, kind)))
    }

    /// A typed prompt, from whichever record says it (once when two say it
    /// one after the other).
    fn prompt<'a>(&mut self, ts: Option<i64>, text: Str<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.last_prompt.as_deref() == Some(text.as_ref()) {
            return Ok(());
        }
        self.last_prompt = Some(text.to_string());
        self.history_texts.clear();
        self.item_texts.clear();
        self.done_calls = CallTable::default();
        self.turn_open = true;
        if !self.started && self.model.is_none() {
            // The turn's context (with the model) follows the prompt: hold
            // the prompt until then.
            self.pending_prompt = Some((ts, text.into_owned()));
            return Ok(());
        }
        self.emit(ts, Kind::UserMessage { text }, out)
    }

    /// A payload of the interface's events.
    fn event_msg<'a>(
        &mut self,
        rec: &'a str,
        p: Payload<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        match p.ty.as_deref() {
            Some("user_message") => {
                self.event_prompts = true;
                let text = p.message.get().unwrap_or_default();
                self.prompt(ts, text, out)
            }
            Some("item_completed") => self.item_completed(rec, p.item, ts, out),
            Some("token_count") if self.usage_records => {
                // The usage records count the same responses.
                Ok(())
            }
            Some("token_count") => {
                let Some(total) = p
                    .info
                    .and_then(Members::of)
                    .and_then(|m| m.obj("total_token_usage"))
                    .and_then(|t| openai_usage(&t))
                else {
                    // `info: null` (rate limits only).
                    return Ok(());
                };
                if self.inherited.is_some() {
                    self.base = total;
                    self.first_own_total = true;
                    return Ok(());
                }
                if std::mem::take(&mut self.first_own_total) && restarted(&p, &total, &self.base) {
                    // The child's own totals start again from zero rather
                    // than going on from the copy's.
                    self.base = Usage::default();
                }
                self.usage_seen = true;
                self.total = total.minus(&self.base);
                self.open(out)?;
                out(Item::UsageTotal {
                    ts,
                    usage: self.total,
                })
            }
            // `turn_started` / `turn_complete` are the v2 names Codex also
            // accepts for them.
            Some("task_started" | "turn_started") => {
                self.turn_markers = true;
                self.turn_open = true;
                Ok(())
            }
            Some("task_complete" | "turn_complete") => {
                self.turn_markers = true;
                self.turn_open = false;
                self.settle(false, ts, out)?;
                self.emit(ts, Kind::TurnEnded { usage: None }, out)
            }
            Some("exec_command_end") => self.exec_end(&p, ts, out),
            Some("turn_aborted") => {
                self.turn_open = false;
                self.settle(false, ts, out)?;
                let reason = p.reason.as_deref().unwrap_or("aborted");
                let message = Cow::Owned(format!("turn aborted: {reason}"));
                self.emit(ts, nonfatal(message, "turn_aborted"), out)
            }
            Some("error") => {
                let message = p.message.get().unwrap_or(Cow::Borrowed("error"));
                self.emit(ts, nonfatal(message, "codex"), out)
            }
            // The rest repeats the history (`agent_message`,
            // `agent_reasoning`, `patch_apply_*`, `mcp_tool_call_end`, …) or
            // is the interface's own state (rate limits).
            Some(t) if EVENTS_SHOWN_ELSEWHERE.contains(&t) => Ok(()),
            // A type of Codex's protocol this reader does not know: kept,
            // and counted (docs/dialects.md#drift).
            _ => {
                self.open(out)?;
                keep_unknown(rec, out).map(drop)
            }
        }
    }

    /// One item of the model's history.
    fn response_item<'a>(
        &mut self,
        rec: &'a str,
        p: Payload<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        match p.ty.as_deref() {
            Some("message") => {
                let Some(content) = p.content else {
                    return Ok(Parsed::Done);
                };
                match p.role.as_deref() {
                    Some("assistant") => {
                        let parts: Vec<Str<'a>> = texts(content).collect();
                        if said_by_other(&mut self.item_texts, &mut self.history_texts, &parts) {
                            return Ok(Parsed::Done);
                        }
                        self.assistant_text(ts, parts, out)?;
                    }
                    // The wrapped shape's prompts are its `user_message`
                    // events; the older shape has only these.
                    Some("user") if !self.wrapped => {
                        let text = texts(content).fold(String::new(), |mut a, t| {
                            a.push_str(&t);
                            a
                        });
                        if !injected(&text) {
                            self.emit(
                                ts,
                                Kind::UserMessage {
                                    text: Cow::Owned(text),
                                },
                                out,
                            )?;
                        }
                    }
                    // From 0.148 on the typed prompt may be only here; the
                    // origin labels (0.150) tell it from injected context.
                    Some("user") => {
                        if let Some(text) = self.typed_prompt(&p) {
                            self.prompt(ts, Cow::Owned(text), out)?;
                        }
                    }
                    // Developer and system instructions are the agent's own.
                    _ => {}
                }
            }
            Some("reasoning") => {
                let parts: Vec<Str<'a>> = p.summary.into_iter().flat_map(texts).collect();
                if said_by_other(&mut self.item_texts, &mut self.history_texts, &parts) {
                    return Ok(Parsed::Done);
                }
                self.thinking(ts, parts, out)?;
            }
            Some("function_call") => {
                let id = p.call_id.get().unwrap_or_default();
                let name = p.name.as_deref().unwrap_or("");
                // For the figures a call's arguments are not read, but for
                // a shell command's and a poll's: they pair the unified-exec
                // processes with the calls whose exit codes they report.
                let args = match p.arguments {
                    Some(_) if self.lean && !pairs_processes(name) => Cow::Borrowed("{}"),
                    Some(raw) => raw_as_str(raw).unwrap_or(Cow::Borrowed("{}")),
                    None => Cow::Borrowed("{}"),
                };
                let args = args.as_ref();
                let mut start = tool_start(id, name, p.namespace.as_deref(), args);
                if name == "write_stdin" {
                    self.describe_poll(&mut start, args);
                }
                self.start(ts, start, out)?;
            }
            Some("custom_tool_call") => {
                let id = p.call_id.get().unwrap_or_default();
                let name = p.name.as_deref().unwrap_or("");
                // A free-form input (apply_patch's patch text): the
                // arguments are `{"input": …}`, as Codex names it.
                if self.lean {
                    let start = ToolStart::new(
                        id,
                        Cow::Owned(normalize_tool_name(name)),
                        crate::event::json_null(),
                    );
                    self.start(ts, start, out)?;
                    return Ok(Parsed::Done);
                }
                let input = p.input.and_then(raw_as_str).unwrap_or_default();
                let input = input.as_ref();
                let mut start = ToolStart::new(
                    id,
                    Cow::Owned(normalize_tool_name(name)),
                    Json::assembled(format!("{{\"input\":{}}}", crate::json::quote(input))),
                );
                if let Some(first) = input.lines().find_map(patch_path) {
                    start.path = Some(Cow::Owned(first.to_owned()));
                }
                self.start(ts, start, out)?;
            }
            Some("local_shell_call") => {
                let id = p.call_id.get().unwrap_or_default();
                let args = p.action.map_or("{}", RawValue::get);
                let start = tool_start(id, "local_shell", None, args);
                self.start(ts, start, out)?;
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let id = p.call_id.get().unwrap_or_default();
                self.output(id, p.output, ts, out)?;
            }
            Some("web_search_call") => {
                // No call id: the search is started and ended here.
                self.anonymous += 1;
                let id: Str<'a> = Cow::Owned(format!("web_search-{}", self.anonymous));
                let args = p.action.map_or("{}", RawValue::get);
                let start = tool_start(id.clone(), "web_search", None, args);
                self.emit(ts, Kind::started(start), out)?;
                let ok = p.status.as_deref() != Some("failed");
                let end = ToolEnd::new(id, Cow::Borrowed("web_search"), ok);
                self.emit(ts, Kind::completed(end), out)?;
            }
            _ => {
                self.open(out)?;
                return keep_unknown(rec, out);
            }
        }
        Ok(Parsed::Done)
    }

    fn start<'a>(
        &mut self,
        ts: Option<i64>,
        start: ToolStart<'a>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        if self.calls.contains(&start.call_id) || self.done_calls.contains(&start.call_id) {
            return Ok(());
        }
        let open = Open {
            name: start.tool_name.to_string(),
            command: start.command.as_deref().map(str::to_owned),
        };
        self.calls.insert(&start.call_id, open);
        self.emit(ts, Kind::started(start), out)
    }

    /// A `write_stdin` call polls (or writes to) a process a unified-exec
    /// command started: it says which, and the command, so that it is not
    /// mistaken for the command itself.
    fn describe_poll(&mut self, start: &mut ToolStart<'_>, args: &str) {
        let Some(m) = Members::parse(args) else {
            return;
        };
        let pid = ["session_id", "process_id"].iter().find_map(|k| {
            m.int(k)
                .map(|n| n.to_string())
                .or_else(|| m.str(k).map(Cow::into_owned))
        });
        let Some(pid) = pid else {
            return;
        };
        let verb = if m.str("chars").is_some_and(|c| !c.is_empty()) {
            "writes to"
        } else {
            "polls"
        };
        let command = self.processes.get(&pid).and_then(|(_, c)| c.as_deref());
        start.description = Some(Cow::Owned(match command {
            Some(c) => format!("{verb} process {pid} ({c})"),
            None => format!("{verb} process {pid}"),
        }));
        self.polls.insert(start.call_id.to_string(), pid);
    }

    /// A call's output. A unified-exec command whose process is still
    /// running is held until its `exec_command_end`; a `write_stdin` poll
    /// ends as itself (the exit code it reports is the polled command's).
    fn output<'a>(
        &mut self,
        id: Str<'a>,
        output: Option<&'a RawValue>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let open = self.calls.remove(&id);
        if open.is_none() && self.done_calls.contains(&id) {
            // Completed already (by an `item_completed` command).
            return Ok(());
        }
        if !id.is_empty() {
            self.done_calls.insert(&id, ());
        }
        let early = self.early_ends.remove(id.as_ref());
        // For the figures, an output that can say no exit code and belongs
        // to no unified-exec process is not read.
        let unread = self.lean
            && open.as_ref().is_none_or(|o| o.name != "shell")
            && !self.polls.contains_key(id.as_ref())
            && output.is_none_or(|o| !may_say_exit_code(o.get()));
        let text = if unread {
            None
        } else if self.lean {
            output.and_then(output_head)
        } else {
            output.and_then(output_text)
        };
        if let Some(open) = &open
            && open.name == "shell"
            && let Some(pid) = text.as_deref().and_then(running_process)
        {
            self.processes
                .insert(pid.to_owned(), (id.to_string(), open.command.clone()));
            if let Some(end) = early {
                // The process ended before its first output was recorded.
                let end = end.into_end(id.into_owned(), open.name.clone());
                return self.emit(ts, Kind::completed(end), out);
            }
            self.running.push(Running {
                call_id: id.into_owned(),
                name: open.name.clone(),
                first_output: text.map(Cow::into_owned),
                exited: None,
            });
            return Ok(());
        }
        if let Some(pid) = self.polls.remove(id.as_ref()) {
            if let Some(code) = text.as_deref().and_then(exit_line)
                && let Some((call, _)) = self.processes.get(&pid)
                && let Some(r) = self.running.iter_mut().find(|r| &r.call_id == call)
            {
                r.exited = Some((code, ts));
            }
            let name = open.map_or_else(|| "unknown".to_owned(), |o| o.name);
            let mut end = ToolEnd::new(id, Cow::Owned(name), true);
            end.result = output.map(Json::from);
            return self.emit(ts, Kind::completed(end), out);
        }
        let name = open.map_or_else(|| "unknown".to_owned(), |o| o.name);
        let mut end = tool_end(id, name, output, text);
        if self.lean {
            end.result = None;
            end.output = None;
        }
        self.emit(ts, Kind::completed(end), out)
    }

    /// `exec_command_end`: the end of a held unified-exec command. One
    /// for a call whose output has not come yet is kept for it; the others
    /// repeat what the history says.
    fn exec_end<'a>(
        &mut self,
        p: &Payload<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let Some(id) = p.call_id.as_deref() else {
            return Ok(());
        };
        if let Some(i) = self.running.iter().position(|r| r.call_id == id) {
            let r = self.running.remove(i);
            let end = ExecEnd::of(p, self.lean).into_end(r.call_id, r.name);
            return self.emit(ts, Kind::completed(end), out);
        }
        if self.calls.get(id).is_some_and(|o| o.name == "shell") {
            self.early_ends
                .insert(id.to_owned(), ExecEnd::of(p, self.lean));
        }
        Ok(())
    }

    /// Complete the held commands a poll saw exit without an
    /// `exec_command_end` (rollouts that do not persist it), at the end of
    /// their turn; with `all`, at the end of the file, also the commands
    /// still running: their outcome is not in the file.
    fn settle<'a>(&mut self, all: bool, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        let mut keep = Vec::new();
        for r in std::mem::take(&mut self.running) {
            let (at, end) = match r.exited {
                Some((code, when)) => {
                    // Known to have ended by the poll that said so.
                    let mut end =
                        ToolEnd::new(Cow::Owned(r.call_id), Cow::Owned(r.name), code == 0);
                    end.exit_code = Some(code);
                    if code != 0 {
                        end.error = Some(Cow::Owned(format!("exit code {code}")));
                    }
                    (when.or(ts), end)
                }
                None if all => {
                    let mut end = ToolEnd::new(Cow::Owned(r.call_id), Cow::Owned(r.name), true);
                    end.outcome_unknown = true;
                    end.output = r.first_output.map(Text::from);
                    // An end not in the file has no time (a time would make
                    // up a duration).
                    (None, end)
                }
                None => {
                    keep.push(r);
                    continue;
                }
            };
            self.emit(at, Kind::completed(end), out)?;
        }
        self.running = keep;
        Ok(())
    }
}

/// What stands for a text read for the figures only: a non-empty string,
/// so that every rule asking whether there was text answers as it would.
const NOT_READ: &str = "…";

/// Whether a call's output (its JSON) may report an exit code: it names
/// one (`Exit code: N`, `Process exited with code N`, a `metadata`
/// `exit_code`), or has a `\u` escape, which could spell one. Without any
/// of these its exit code is unknown, read or not.
fn may_say_exit_code(raw: &str) -> bool {
    let b = raw.as_bytes();
    [
        "Exit code: ",
        "Process exited with code ",
        "exit_code",
        "\\u",
    ]
    .iter()
    .any(|k| memchr::memmem::find(b, k.as_bytes()).is_some())
}

/// Whether a function call's arguments are read for the figures: a shell
/// command's (its output may name the process it left running) and a
/// `write_stdin` poll's (it names the process whose exit it reports).
fn pairs_processes(name: &str) -> bool {
    name == "write_stdin" || normalize_tool_name(shell_alias(name)) == "shell"
}

impl CodexRolloutParser {
    /// A text of an event, or what stands for it when only the figures
    /// are read.
    fn unread<'a>(&self, text: Str<'a>) -> Str<'a> {
        if self.lean && !text.is_empty() {
            Cow::Borrowed(NOT_READ)
        } else {
            text
        }
    }

    /// An assistant message's text (a paragraph of its own after another).
    fn assistant_text<'a>(
        &mut self,
        ts: Option<i64>,
        parts: Vec<Str<'a>>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        if self.after_text {
            // One message ended and another begins: two paragraphs, never
            // "Looking now.All done.".
            self.emit(ts, Kind::TurnEnded { usage: None }, out)?;
        }
        for text in parts {
            let text = self.unread(text);
            self.emit(ts, Kind::TextDelta { text }, out)?;
        }
        Ok(())
    }

    /// A reasoning summary.
    fn thinking<'a>(
        &mut self,
        ts: Option<i64>,
        parts: Vec<Str<'a>>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let any = !parts.is_empty();
        for text in parts {
            let text = self.unread(text);
            self.emit(ts, Kind::ThinkingDelta { text }, out)?;
        }
        if any {
            self.emit(ts, Kind::ThinkingCompleted { duration_ms: None }, out)?;
        }
        Ok(())
    }

    /// The typed prompt a history user message holds, if it is one: with
    /// origin labels (`content_item_kinds`, one per content part), its
    /// `user.text` parts; without them, in a rollout of 0.148 or later that
    /// gives no prompt events, the message unless it is injected context.
    fn typed_prompt(&self, p: &Payload<'_>) -> Option<String> {
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(borrow, default)]
            text: LaxStr<'a>,
        }
        let parts: Vec<Part> = serde_json::from_str(p.content?.get()).ok()?;
        let kinds: Option<Vec<crate::json::S>> = p
            .internal_chat_message_metadata_passthrough
            .and_then(Members::of)
            .and_then(|m| m.get("content_item_kinds"))
            .and_then(|k| serde_json::from_str(k.get()).ok())
            .filter(|k: &Vec<crate::json::S>| k.len() == parts.len());
        if let Some(kinds) = kinds {
            let text: String = parts
                .iter()
                .zip(&kinds)
                .filter(|(_, k)| k.0 == "user.text")
                .filter_map(|(p, _)| p.text.as_deref())
                .collect();
            return (!text.is_empty()).then_some(text);
        }
        // A rollout without `session_meta` is of a newer build.
        let newer = self.history_prompts || !self.has_meta;
        if self.event_prompts || !newer {
            return None;
        }
        let text: String = parts.iter().filter_map(|p| p.text.as_deref()).collect();
        (!injected(&text)).then_some(text)
    }

    /// `event_msg` `item_completed` (0.147 and later): the interface's
    /// items, PascalCase (`UserMessage`, `AgentMessage`, `Reasoning`,
    /// `CommandExecution`, …). Most repeat the history; what the history
    /// lacks (the prompt, an item whose history copy is missing) is read.
    fn item_completed<'a>(
        &mut self,
        rec: &'a str,
        item: Option<&'a RawValue>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct It<'a> {
            #[serde(rename = "type", borrow, default)]
            ty: LaxStr<'a>,
            #[serde(borrow, default)]
            id: LaxStr<'a>,
            #[serde(borrow, default)]
            content: Option<&'a RawValue>,
            #[serde(borrow, default, rename = "summary_text")]
            summary_text: Option<&'a RawValue>,
            #[serde(borrow, default, rename = "raw_content")]
            raw_content: Option<&'a RawValue>,
            #[serde(borrow, default)]
            command: Option<&'a RawValue>,
            #[serde(borrow, default)]
            status: LaxStr<'a>,
            #[serde(borrow, default)]
            aggregated_output: Option<&'a RawValue>,
            #[serde(default)]
            exit_code: crate::json::LaxInt,
            #[serde(borrow, default)]
            duration: Option<&'a RawValue>,
        }
        let Some(it) = item.and_then(|i| serde_json::from_str::<It<'a>>(i.get()).ok()) else {
            self.open(out)?;
            return keep_unknown(rec, out).map(drop);
        };
        let strings = |raw: Option<&'a RawValue>| -> Vec<Str<'a>> {
            raw.and_then(|r| serde_json::from_str::<Vec<crate::json::S<'a>>>(r.get()).ok())
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.0)
                .filter(|s| !s.is_empty())
                .collect()
        };
        let id = it.id.as_deref().unwrap_or_default();
        match it.ty.as_deref() {
            Some("UserMessage") => {
                // The typed prompt (`UserInput` parts: text, images).
                self.event_prompts = true;
                let text: String = it.content.map(texts).into_iter().flatten().collect();
                self.prompt(ts, Cow::Owned(text), out)
            }
            Some("AgentMessage") => {
                let parts: Vec<Str<'a>> = it.content.map(texts).into_iter().flatten().collect();
                if said_by_other(&mut self.history_texts, &mut self.item_texts, &parts) {
                    return Ok(());
                }
                self.assistant_text(ts, parts, out)
            }
            Some("Reasoning") => {
                let mut parts = strings(it.summary_text);
                if parts.is_empty() {
                    parts = strings(it.raw_content);
                }
                if said_by_other(&mut self.history_texts, &mut self.item_texts, &parts) {
                    return Ok(());
                }
                self.thinking(ts, parts, out)
            }
            Some("CommandExecution") => {
                if id.is_empty() || self.calls.contains(id) || self.done_calls.contains(id) {
                    // The history's call (or its end, still to come, which
                    // then ends it).
                    return Ok(());
                }
                self.done_calls.insert(id, ());
                let command = it
                    .command
                    .and_then(shell_script)
                    .or_else(|| it.command.and_then(super::command_text));
                let args = match &command {
                    Some(c) => format!("{{\"cmd\":{}}}", crate::json::quote(c)),
                    None => "{}".to_owned(),
                };
                let mut start = ToolStart::new(
                    Cow::Owned(id.to_owned()),
                    Cow::Borrowed("shell"),
                    Json::assembled(args),
                );
                start.command = command;
                self.emit(ts, Kind::started(start), out)?;
                let mut end = ExecEnd {
                    exit_code: it.exit_code.0,
                    status: it.status.as_deref().map(str::to_owned),
                    output: it
                        .aggregated_output
                        .filter(|_| !self.lean)
                        .and_then(raw_as_str)
                        .map(Cow::into_owned),
                    duration_ms: it.duration.and_then(duration_ms),
                };
                if end.status.as_deref() == Some("inProgress") {
                    end.status = None;
                }
                let end = end.into_end(id.to_owned(), "shell".to_owned());
                self.emit(ts, Kind::completed(end), out)
            }
            // The compaction's summary is the `compacted` record.
            Some("ContextCompaction") => Ok(()),
            // A tool item the history already called by this id.
            _ if !id.is_empty() && (self.calls.contains(id) || self.done_calls.contains(id)) => {
                Ok(())
            }
            _ => {
                self.open(out)?;
                keep_unknown(rec, out).map(drop)
            }
        }
    }

    /// `token_usage_record` (0.151 and later): one response's usage
    /// (`usage`) and the thread's running total after it
    /// (`thread_token_usage`). The total is read (the response's usage
    /// added to the last total when there is none); a response counted
    /// already is not counted again; and from the first record on, the
    /// `token_count` totals (the same responses) are left out.
    fn usage_record<'a>(
        &mut self,
        payload: Lit<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let raw = serde_json::from_str::<&RawValue>(payload.0).ok();
        let Some(m) = raw.and_then(Members::of) else {
            return Ok(());
        };
        if let (Some(thread), Some(own)) = (m.str("thread_id"), self.session_id.as_deref())
            && thread != own
            && self.inherited.is_none()
        {
            // Another thread's response (a sub-agent's, recorded here).
            return Ok(());
        }
        if let Some(r) = m.str("response_id") {
            if self.responses.contains(&r) {
                return Ok(());
            }
            self.responses.insert(&r, ());
        }
        let usage = |k: &str| m.obj(k).and_then(|u| openai_usage(&u));
        let total = match (usage("thread_token_usage"), usage("usage")) {
            (Some(t), _) => t,
            (None, Some(u)) => self.total.add(&self.base).add(&u),
            (None, None) => return Ok(()),
        };
        self.usage_records = true;
        if self.inherited.is_some() {
            self.base = total;
            self.first_own_total = true;
            return Ok(());
        }
        if std::mem::take(&mut self.first_own_total)
            && (total.input < self.base.input || total.output < self.base.output)
        {
            self.base = Usage::default();
        }
        self.usage_seen = true;
        self.total = total.minus(&self.base);
        self.open(out)?;
        out(Item::UsageTotal {
            ts,
            usage: self.total,
        })
    }
}

/// The script of a command run through a shell (`["/bin/bash", "-lc",
/// "cargo test"]`), as the history's call names it.
fn shell_script(raw: &RawValue) -> Option<Str<'_>> {
    let argv: Vec<crate::json::S> = serde_json::from_str(raw.get()).ok()?;
    match argv.as_slice() {
        [sh, flag, script]
            if ["bash", "zsh", "sh"]
                .iter()
                .any(|s| sh.0.rsplit('/').next() == Some(s))
                && matches!(flag.0.as_ref(), "-lc" | "-c") =>
        {
            Some(script.0.clone())
        }
        _ => None,
    }
}

/// A Rust `Duration` as serde writes it (`{"secs", "nanos"}`), in ms.
fn duration_ms(raw: &RawValue) -> Option<u64> {
    let d = Members::of(raw)?;
    let secs = u64::try_from(d.int("secs")?).ok()?;
    let nanos = u64::try_from(d.int("nanos").unwrap_or(0)).ok()?;
    Some(secs * 1000 + nanos / 1_000_000)
}

/// Whether a text (its parts) was said already by the other source of the
/// turn (`theirs`): then that copy is used up; else it is remembered as
/// said by this one (`ours`). Bounded: a turn keeps its last 256 texts.
fn said_by_other(theirs: &mut Vec<u64>, ours: &mut Vec<u64>, parts: &[Str<'_>]) -> bool {
    use std::hash::{Hash, Hasher};
    if parts.is_empty() {
        return false;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in parts {
        p.as_ref().hash(&mut h);
    }
    let h = h.finish();
    if let Some(i) = theirs.iter().position(|x| *x == h) {
        theirs.remove(i);
        return true;
    }
    if ours.len() >= 256 {
        ours.remove(0);
    }
    ours.push(h);
    false
}

/// Whether a version (`0.150.0`, `0.148.1-alpha.2`) is `0.minor` or later.
fn at_least(version: &str, minor: u64) -> bool {
    let mut it = version.split(['.', '-']);
    let major: u64 = it.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let min: u64 = it.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    major > 0 || min >= minor
}

/// A call's output: text, and the exit code the shell tools write into
/// it (`Exit code: N`, `Process exited with code N`, or the older
/// `{"output", "metadata": {"exit_code"}}` JSON text).
fn tool_end<'a>(
    id: Str<'a>,
    name: String,
    output: Option<&'a RawValue>,
    text: Option<Str<'a>>,
) -> ToolEnd<'a> {
    let mut exit_code = None;
    // The text is moved, never copied: a huge output is held once.
    let mut shown = text;
    let mut unwrapped = None;
    if let Some(t) = shown.as_deref() {
        if let Ok(raw) = serde_json::from_str::<&RawValue>(t)
            && let Some(m) = Members::of(raw)
            && let Some(o) = m.str("output")
        {
            exit_code = m.obj("metadata").and_then(|md| md.int("exit_code"));
            unwrapped = Some(o.into_owned());
        } else {
            exit_code = exit_line(t);
        }
    }
    if let Some(o) = unwrapped {
        shown = Some(Cow::Owned(o));
    }
    let ok = exit_code.is_none_or(|c| c == 0);
    let mut end = ToolEnd::new(id, Cow::Owned(name.clone()), ok);
    end.exit_code = exit_code;
    if name == "shell" {
        end.output = shown.map(Text::from);
    } else {
        end.result = output.map(Json::from);
    }
    if !ok {
        end.error = Some(Cow::Owned(format!("exit code {}", exit_code.unwrap_or(1))));
    }
    end
}

/// The parent thread of a spawned sub-agent, from its `session_meta`'s
/// `source` (`{"subagent": {"thread_spawn": {"parent_thread_id", "depth",
/// …}}}`; other sources are strings such as `"cli"`, or other sub-agent
/// kinds such as `{"subagent": "review"}`).
fn spawning_thread(source: &RawValue) -> Option<String> {
    let m = Members::of(source)?;
    let sub = m.obj("subagent").or_else(|| m.obj("sub_agent"))?;
    let id = sub.obj("thread_spawn")?.str("parent_thread_id")?;
    (!id.is_empty()).then(|| id.into_owned())
}

/// Whether a child's first own running total starts again from zero
/// rather than going on from the total its copy of the parent ended with:
/// its `last_token_usage` is the whole of it, or it is below the copy's.
fn restarted(p: &Payload<'_>, total: &Usage, base: &Usage) -> bool {
    if base.is_zero() {
        return false;
    }
    let last = p
        .info
        .and_then(Members::of)
        .and_then(|m| m.obj("last_token_usage"))
        .and_then(|t| openai_usage(&t));
    match last {
        Some(last) => last.input == total.input && last.output == total.output,
        None => total.input < base.input || total.output < base.output,
    }
}

fn nonfatal<'a>(message: Str<'a>, source: &'static str) -> Kind<'a> {
    Kind::Error {
        message,
        fatal: false,
        source: Some(Cow::Borrowed(source)),
    }
}

/// A tool start from a function call's name and its JSON arguments text.
/// Newer rollouts give an MCP call's server in a `namespace` beside the
/// name (`mcp__codex_apps__github` + `_fetch_pr`).
fn tool_start<'a>(id: Str<'a>, name: &str, namespace: Option<&str>, args: &str) -> ToolStart<'a> {
    let mcp = match namespace.and_then(|ns| split_mcp_namespace(ns, name)) {
        Some(st) => Some(st),
        None => split_mcp_name(name).map(|(s, t)| (s.to_owned(), t.to_owned())),
    };
    let tool = match mcp {
        Some(_) => "mcp".to_owned(),
        None => normalize_tool_name(shell_alias(name)),
    };
    let raw = RawValue::from_string(args.to_owned()) // Arguments that are not JSON are kept as a JSON string.
        .or_else(|_| RawValue::from_string(crate::json::quote(args)))
        .unwrap_or_else(|_| Box::<RawValue>::default());
    let mut start = ToolStart::new(id, Cow::Owned(tool), crate::event::json_null());
    if let Some(m) = Members::of(&raw) {
        fill_start_owned(&mut start, &m);
    }
    start.args = Json::from(raw);
    if let Some((server, tool)) = mcp {
        start.mcp_server = Some(Cow::Owned(server));
        start.mcp_tool = Some(Cow::Owned(tool));
    }
    start
}

/// Codex's shell tools under their several names.
fn shell_alias(name: &str) -> &str {
    match name {
        "exec_command" | "local_shell" | "container.exec" | "shell_command" => "shell",
        n => n,
    }
}

/// The path of an apply_patch text's first file.
fn patch_path(line: &str) -> Option<&str> {
    ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
        .iter()
        .find_map(|p| line.strip_prefix(p))
        .map(str::trim)
}

/// A function output: a string, or content items whose text is joined.
fn output_text(raw: &RawValue) -> Option<Str<'_>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    if let Some(m) = Members::of(raw) {
        return m.str("content");
    }
    let joined: String = texts(raw).collect();
    Some(Cow::Owned(joined))
}

/// The lines of an exec output that say whether its process is still
/// running and how it exited ([`running_process`], [`exit_line`]).
const HEAD_LINES: usize = 6;

/// What the figures read of a call's output ([`output_text`]): its first
/// [`HEAD_LINES`] lines, all that [`running_process`] and [`exit_line`] look
/// at, rather than a copy of the whole (outputs are much of a rollout's
/// bytes). A text that may be JSON (`{"output": …, "metadata": {"exit_code":
/// …}}`, read whole by `tool_end`) is read whole.
fn output_head(raw: &RawValue) -> Option<Str<'_>> {
    let lit = raw.get();
    if lit.starts_with('"') {
        match output_start(lit) {
            OutputStart::Text => return crate::json::unescape_literal_head(lit, HEAD_LINES),
            OutputStart::BraceOrBlank => {}
            OutputStart::Unsure => {
                let head = crate::json::unescape_literal_head(lit, HEAD_LINES)?;
                let first = head.trim_start_matches([' ', '\n', '\t', '\r']);
                if !first.is_empty() && !first.starts_with('{') {
                    return Some(head);
                }
            }
        }
    }
    output_text(raw)
}

/// How an output's text starts, told from its JSON literal before anything
/// is unescaped, so that a text read whole is not unescaped a first time
/// for its head.
#[derive(Debug, PartialEq, Eq)]
enum OutputStart {
    /// Past blank space, something other than `{`: the head will do.
    Text,
    /// `{` past blank space, or nothing but blank space: read whole.
    BraceOrBlank,
    /// Another escape first (`\u0020`, `\"`…), or the head's lines are all
    /// blank: the head tells.
    Unsure,
}

/// [`OutputStart`] of the string literal `lit` (its quotes included):
/// blank space is what `output_head` trims, written as itself (a space) or
/// as a `\n`, `\t`, `\r` escape (JSON has no raw control bytes in strings).
fn output_start(lit: &str) -> OutputStart {
    let b = lit.as_bytes();
    let mut i = 1;
    let mut newlines = 0;
    loop {
        match b.get(i) {
            Some(b' ') => i += 1,
            Some(b'\\') => match b.get(i + 1) {
                Some(b'n') if newlines + 1 < HEAD_LINES => {
                    newlines += 1;
                    i += 2;
                }
                Some(b't' | b'r') => i += 2,
                _ => return OutputStart::Unsure,
            },
            // The closing quote: an unescaped quote ends a literal.
            Some(b'{' | b'"') => return OutputStart::BraceOrBlank,
            Some(_) => return OutputStart::Text,
            None => return OutputStart::Unsure,
        }
    }
}

/// The texts of a content array (`input_text`, `output_text`,
/// `summary_text`, `text` parts); images and other parts are left out.
fn texts(raw: &RawValue) -> impl Iterator<Item = Str<'_>> {
    #[derive(Deserialize)]
    struct Part<'a> {
        #[serde(borrow, default)]
        text: LaxStr<'a>,
    }
    serde_json::from_str::<Vec<Part>>(raw.get())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| p.text.get())
}

/// Context Codex puts into the history as user messages: the AGENTS.md
/// instructions and the environment description, not typed by the user.
fn injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<user_instructions>")
        || t.starts_with("<environment_context>")
        || t.starts_with("# AGENTS.md instructions")
        || t.is_empty()
}

impl CodexRolloutParser {
    /// Write the held turn out.
    fn flush_turn(&mut self, out: Out<'_, '_>) -> io::Result<()> {
        self.turn_bytes = 0;
        for item in std::mem::take(&mut self.turn) {
            out(item)?;
        }
        Ok(())
    }

    /// `thread_rolled_back`: the newest `n` turns are no longer part of the
    /// conversation. The held one is dropped (its last running total is
    /// kept: those tokens were spent); turns already written are reported.
    fn roll_back<'a>(&mut self, n: u64, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        let held = std::mem::take(&mut self.turn);
        self.turn_bytes = 0;
        // The prompt may be typed again after it.
        self.last_prompt = None;
        let had_turn = held.iter().any(|i| {
            matches!(
                i,
                Item::Event(Event {
                    kind: Kind::UserMessage { .. },
                    ..
                })
            )
        });
        // What is not the turn's own (the session's start, before its
        // first prompt) stays; so does the last running total.
        let mut last_total = None;
        let mut in_turn = false;
        for item in held {
            match item {
                Item::Event(Event {
                    kind: Kind::UserMessage { .. },
                    ..
                }) => in_turn = true,
                Item::UsageTotal { .. } => last_total = Some(item),
                i if !in_turn => out(i)?,
                _ => {}
            }
        }
        if let Some(t) = last_total {
            out(t)?;
        }
        let past = n.saturating_sub(u64::from(had_turn));
        if past > 0 {
            let message = format!(
                "the thread was rolled back {n} turn(s); {past} of them were written above already"
            );
            self.emit(ts, nonfatal(Cow::Owned(message), "rollback"), out)?;
        }
        Ok(())
    }

    /// Whether a record belongs to the copy of the parent a fork begins
    /// with (and, past it, say how much was left out).
    fn inherited(&mut self, ts: Option<i64>) -> io::Result<bool> {
        let Some((fork_ts, prev, n)) = self.inherited else {
            return Ok(false);
        };
        let copied = match (ts, prev, fork_ts) {
            (Some(t), _, Some(f)) if t < f => true,
            (Some(t), Some(p), _) => t - p <= FORK_BURST_MS,
            _ => true,
        };
        if copied {
            self.inherited = Some((fork_ts, ts.or(prev), n + 1));
            return Ok(true);
        }
        // Said once the session has begun (its own first turn names the
        // model).
        self.inherited = None;
        self.copied = n;
        Ok(false)
    }

    fn inherited_notice<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        let n = std::mem::take(&mut self.copied);
        // A sub-agent spawned without its parent's history has only the
        // parent's `session_meta` before its own records: nothing to say.
        if n == 0 || (n == 1 && self.spawned_by.is_some()) {
            return Ok(());
        }
        let (message, source) = match (&self.spawned_by, &self.forked_from) {
            (Some(parent), _) => (
                format!(
                    "spawned by session {parent}: the {n} records of the parent's history this \
                     sub-agent begins with are not shown again (they are in the parent's rollout)"
                ),
                "subagent",
            ),
            (None, parent) => (
                format!(
                    "forked from session {}: the {n} records copied from it are not shown again \
                     (they are in its own rollout)",
                    parent.as_deref().unwrap_or("its parent")
                ),
                "fork",
            ),
        };
        out(Item::Event(Event::new(nonfatal(
            Cow::Owned(message),
            source,
        ))))
    }

    fn parse_record<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let payload = read_payload(&line);
        self.record(rec, line, payload, out)
    }

    /// A record whose line (and, for a wrapped line, payload) is read
    /// already: `payload` is [`read_payload`]'s answer for this `line`.
    fn record<'a>(
        &mut self,
        rec: &'a str,
        line: Line<'a>,
        payload: Option<Result<Payload<'a>, ()>>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let ts = line.timestamp.as_deref().and_then(iso_ms);
        if self.start_ts.is_none() {
            self.start_ts = ts;
        }
        if ts.is_some() {
            self.last_ts = ts;
        }
        if line.record_type.0 {
            return Ok(Parsed::Done);
        }
        if line.ty.0.is_none() && line.instructions.0 {
            // The older shape's first line: the session.
            self.session_id = line.id.as_deref().map(str::to_owned);
            return Ok(Parsed::Done);
        }
        let Some(p) = payload else {
            // The older shape: the line is a response item itself.
            let Ok(p) = serde_json::from_str::<Payload<'a>>(rec) else {
                self.open(out)?;
                return keep_unknown(rec, out);
            };
            return self.response_item(rec, p, ts, out);
        };
        self.wrapped = true;
        let payload = line.payload.expect("a wrapped line has a payload");
        let Ok(p) = p else {
            self.open(out)?;
            return keep_unknown(rec, out);
        };
        if line.ty.as_deref() == Some("session_meta") && self.has_meta {
            // A fork's copy of its parent begins with the parent's own
            // `session_meta`.
            if (self.forked_from.is_some() || self.spawned_by.is_some()) && self.inherited.is_none()
            {
                self.inherited = Some((self.start_ts, ts, 1));
            }
            return Ok(Parsed::Done);
        }
        let event = match line.ty.as_deref() {
            Some("event_msg") => p.ty.as_deref(),
            _ => None,
        };
        if self.inherited.is_some() && self.spawned_by.is_some() {
            // A sub-agent is spawned in the middle of its parent's turn:
            // the copy ends with that turn still open, and the sub-agent's
            // own first turn begins while it is (often within the second
            // of the copy, which the burst rule alone would take for part
            // of it).
            // A turn that started at or after the sub-agent was created
            // (`started_at`, Unix seconds, in newer builds) is its own too,
            // which also ends an empty copy (a spawn without the parent's
            // history still writes the parent's `session_meta`).
            let own = |p: &Payload<'_>| {
                p.started_at
                    .0
                    .zip(self.created_s)
                    .is_some_and(|(t, c)| t >= c)
            };
            match event {
                Some("task_started" | "turn_started") if self.copy_turn_open || own(&p) => {
                    self.copy_turn_open = false;
                    if let Some((_, _, n)) = self.inherited.take() {
                        self.copied = n;
                    }
                }
                Some("task_started" | "turn_started") => self.copy_turn_open = true,
                Some("task_complete" | "turn_complete" | "turn_aborted") => {
                    self.copy_turn_open = false;
                }
                _ => {}
            }
        }
        if self.inherited(ts)? {
            if event == Some("token_count") {
                self.event_msg(rec, p, ts, out)?;
            } else if line.ty.as_deref() == Some("token_usage_record") {
                self.usage_record(payload, ts, out)?;
            }
            return Ok(Parsed::Done);
        }
        match line.ty.as_deref() {
            Some("session_meta") => {
                self.has_meta = true;
                self.session_id = p.id.as_deref().map(str::to_owned);
                self.cwd = p.cwd.as_deref().map(str::to_owned);
                self.forked_from = p.forked_from_id.as_deref().map(str::to_owned);
                self.spawned_by = p.source.and_then(spawning_thread);
                self.created_s = p.created.as_deref().and_then(iso_ms).map(|ms| ms / 1000);
                self.history_prompts = p.cli_version.as_deref().is_none_or(|v| at_least(v, 148));
            }
            Some("turn_context") => {
                if let Some(m) = p.model.as_deref() {
                    self.model.get_or_insert_with(|| m.to_owned());
                }
                if let Some(a) = p.approval_policy.as_deref() {
                    self.approval.get_or_insert_with(|| a.to_owned());
                }
                if self.cwd.is_none() {
                    self.cwd = p.cwd.as_deref().map(str::to_owned);
                }
                if self.pending_prompt.is_some() {
                    self.open(out)?;
                }
            }
            Some("event_msg") => self.event_msg(rec, p, ts, out)?,
            Some("token_usage_record") => self.usage_record(payload, ts, out)?,
            Some("compacted") => {
                // The summary; the history copied beside it was shown already.
                let text = p.message.get().filter(|m| !m.is_empty());
                self.emit(
                    ts,
                    Kind::Summary {
                        phase: SummaryPhase::Completed,
                        text,
                    },
                    out,
                )?;
            }
            _ => return self.response_item(rec, p, ts, out),
        }
        Ok(Parsed::Done)
    }
}

/// Whether a line is wrapped (`{type, payload}` with one of the rollout's
/// types) and, if so, its payload read: `Err` when the payload is not one
/// (a record kept as `unknown`). `None` for the older shape's bare lines.
fn read_payload<'a>(line: &Line<'a>) -> Option<Result<Payload<'a>, ()>> {
    let payload = line.payload?;
    if !line.ty.as_deref().is_some_and(|t| WRAPPED.contains(&t)) {
        return None;
    }
    Some(read_payload_text(payload.0).ok_or(()))
}

/// A payload's text (valid JSON: a value the line's read cut out) read as
/// serde_json reads it, by the one-pass reader where it takes it: serde_json
/// passes over a raw field (`output`, `aggregated_output`, `arguments`,
/// `content`) a word at a time and stops at every escape, which cost
/// a third of a Codex archive's conversion.
fn read_payload_text(raw: &str) -> Option<Payload<'_>> {
    crate::dialect::tape::from_raw(raw).or_else(|| serde_json::from_str(raw).ok())
}

/// Say, at the record's own line, that an `unknown` event is a record this
/// reader did not understand: the event itself may be held with its turn
/// (docs/dialects.md#drift).
fn said_not_understood(item: &Item<'_>, out: Out<'_, '_>) -> io::Result<()> {
    if let Item::Event(Event {
        kind: Kind::Unknown { raw },
        ..
    }) = item
    {
        out(Item::NotUnderstood(Cow::Owned(
            crate::dialect::record_kind(raw.get()),
        )))?;
    }
    Ok(())
}

impl CodexRolloutParser {
    /// A new turn (the typed prompt) lets the held one go; a rollback
    /// drops it. Only those two records are looked at for this. `Some` for
    /// a record handled here (a rollback).
    fn turn_start(
        &mut self,
        rec: &str,
        line: &Line<'_>,
        p: &Payload<'_>,
        out: Out<'_, '_>,
    ) -> io::Result<Option<Parsed>> {
        let prompt = match (line.ty.as_deref(), p.ty.as_deref()) {
            (Some("event_msg"), Some("user_message")) => p.message.as_deref().map(str::to_owned),
            (Some("event_msg"), Some("item_completed")) => p
                .item
                .and_then(Members::of)
                .filter(|m| m.str("type").as_deref() == Some("UserMessage"))
                .map(|m| m.get("content").map(texts).into_iter().flatten().collect()),
            (Some("response_item"), Some("message")) if p.role.as_deref() == Some("user") => {
                self.typed_prompt(p)
            }
            _ => None,
        };
        // A new prompt, not the repeat of the one just written.
        let new_prompt = prompt.is_some_and(|t| self.last_prompt.as_deref() != Some(&t));
        // The records that begin or roll back a turn are those whose text
        // names `"event_msg"` or `"user"` (asked last: few records get
        // that far).
        let named = || {
            let found = |k: &[u8]| memchr::memmem::find(rec.as_bytes(), k).is_some();
            found(b"\"event_msg\"") || found(b"\"user\"")
        };
        match p.ty.as_deref() {
            _ if new_prompt && self.inherited.is_none() && named() => {
                // The commands of the ending turn a poll saw exit end
                // with it.
                let ts = line.timestamp.as_deref().and_then(iso_ms);
                let mut turn = std::mem::take(&mut self.turn);
                self.settle(false, ts, &mut |i| {
                    turn.push(i.into_owned());
                    Ok(())
                })?;
                self.turn = turn;
                self.flush_turn(out)?;
            }
            Some("thread_rolled_back") if self.inherited.is_none() && named() => {
                let ts = line.timestamp.as_deref().and_then(iso_ms);
                if ts.is_some() {
                    self.last_ts = ts;
                }
                let n = p
                    .num_turns
                    .0
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(1);
                self.roll_back(n, ts, out)?;
                return Ok(Some(Parsed::Done));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Read a record into the held turn (written when the next turn
    /// begins, or once the turn holds more than [`HOLD_BYTES`]).
    fn hold<'a>(
        &mut self,
        rec: &'a str,
        out: Out<'_, 'a>,
        read: impl FnOnce(&mut Self, Out<'_, 'a>) -> io::Result<Parsed>,
    ) -> io::Result<Parsed> {
        let mut turn = std::mem::take(&mut self.turn);
        let before = turn.len();
        let r = read(self, &mut |i| {
            // Counted now, at its line, though written with its turn.
            said_not_understood(&i, out)?;
            turn.push(i.into_owned());
            Ok(())
        });
        if turn.len() > before {
            self.turn_bytes += rec.len();
        }
        self.turn = turn;
        if self.turn_bytes > HOLD_BYTES {
            self.flush_turn(out)?;
        }
        r
    }
}

impl Parser for CodexRolloutParser {
    fn counts_drift(&self) -> bool {
        // Its records are held with their turn: counted when read.
        true
    }

    fn set_reads(&mut self, reads: Reads) {
        self.lean = reads == Reads::Figures;
    }

    fn set_source(&mut self, path: &std::path::Path) {
        self.file_id = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(id_in_file_name)
            .map(str::to_owned);
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if !self.wrapped && !rec.contains("\"payload\"") {
            // The older shape has no prompts events to hold turns by.
            return self.parse_record(rec, &mut |i| {
                said_not_understood(&i, out)?;
                out(i)
            });
        }
        // The line is read once: to see whether it begins a turn, then for
        // its events.
        let Some(line) = quick_line(rec).or_else(|| serde_json::from_str::<Line<'a>>(rec).ok())
        else {
            // Not a record: `read_line` says what it is.
            return self.hold(rec, out, |s, o| s.parse_record(rec, o));
        };
        let payload = read_payload(&line);
        let other;
        let p = match &payload {
            Some(p) => p.as_ref().ok(),
            // A line with a payload but not one of the wrapper's types is
            // looked at too (as it was when this test read the line apart).
            None => {
                other = line.payload.and_then(|raw| read_payload_text(raw.0));
                other.as_ref()
            }
        };
        if let Some(p) = p
            && let Some(done) = self.turn_start(rec, &line, p, out)?
        {
            return Ok(done);
        }
        self.hold(rec, out, |s, o| s.record(rec, line, payload, o))
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        self.flush_turn(out)?;
        if !self.started && self.session_id.is_none() && self.pending_prompt.is_none() {
            return Ok(());
        }
        self.open(out)?;
        if let Some((_, _, n)) = self.inherited.take() {
            self.copied = n;
            self.inherited_notice(out)?;
        }
        // Calls whose `exec_command_end` came but not their output (the
        // file was cut between the two) end as the event says.
        let ends = std::mem::take(&mut self.early_ends);
        for (id, end) in ends {
            if let Some(open) = self.calls.remove(&id) {
                let end = end.into_end(id, open.name);
                self.emit(self.last_ts, Kind::completed(end), out)?;
            }
        }
        self.settle(true, self.last_ts, out)?;
        if self.wrapped && self.turn_markers && self.turn_open {
            // Like a live stream cut off: no `result`, so the session reads
            // as incomplete (its usage increments still add up).
            let message = "the rollout ends before its last turn completed \
                           (no task_complete after the last prompt)";
            return self.emit(
                self.last_ts,
                nonfatal(Cow::Borrowed(message), "codex-rollout"),
                out,
            );
        }
        out(Item::Event(crate::dialect::common::file_result(
            self.start_ts,
            self.last_ts,
            self.usage_seen.then_some(self.total),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::path::{Path, PathBuf};

    impl CodexRolloutParser {
        /// The reader as it was before each line was read once: the test
        /// for a new turn read the line and its payload by itself, then
        /// `parse_record` read them again. The reference `parse` is held to.
        fn parse_twice<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
            if !self.wrapped && !rec.contains("\"payload\"") {
                return self.parse_record(rec, &mut |i| {
                    said_not_understood(&i, out)?;
                    out(i)
                });
            }
            let found = |k: &[u8]| memchr::memmem::find(rec.as_bytes(), k).is_some();
            if (found(b"\"event_msg\"") || found(b"\"user\""))
                && let Ok(line) = serde_json::from_str::<Line>(rec)
                && let Some(payload) = line.payload
                && let Ok(p) = serde_json::from_str::<Payload>(payload.0)
                && let Some(done) = self.turn_start(rec, &line, &p, out)?
            {
                return Ok(done);
            }
            self.hold(rec, out, |s, o| s.parse_record(rec, o))
        }
    }

    /// Every Codex rollout fixture and corpus file (the corpus is required
    /// where `CI` or `CSTREAM_CORPUS_REQUIRED` says it is expected).
    fn rollouts() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let corpus = crate::dialect::test_corpus("sessions/codex");
        for dir in std::iter::once(root.join("fixtures/codex-rollout")).chain(corpus) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries {
                let p = e.unwrap().path();
                let name = p.to_string_lossy();
                if name.ends_with(".jsonl") || name.ends_with(".jsonl.zst") {
                    files.push(p);
                }
            }
        }
        files.sort();
        files
    }

    fn text_of(path: &Path) -> String {
        let bytes = std::fs::read(path).unwrap();
        if !path.to_string_lossy().ends_with(".zst") {
            return String::from_utf8(bytes).unwrap();
        }
        #[cfg(feature = "zstd")]
        {
            use std::io::Read;
            let mut text = String::new();
            crate::input::zstd::Decompress::new(&bytes[..])
                .read_to_string(&mut text)
                .unwrap();
            text
        }
        #[cfg(not(feature = "zstd"))]
        String::new()
    }

    /// What the reader makes of `text`'s lines: each item, and each line's
    /// answer, written out.
    fn read(text: &str, reads: Reads, once: bool) -> Vec<String> {
        let mut p = CodexRolloutParser::default();
        p.set_reads(reads);
        let mut said = Vec::new();
        for rec in text.lines() {
            let mut items = Vec::new();
            let mut out = |i: Item<'_>| {
                items.push(format!("{i:?}"));
                Ok(())
            };
            let r = if once {
                p.parse(rec, &mut out)
            } else {
                p.parse_twice(rec, &mut out)
            };
            said.extend(items);
            said.push(format!("{r:?}"));
        }
        p.finish(&mut |i| {
            said.push(format!("{i:?}"));
            Ok(())
        })
        .unwrap();
        said
    }

    #[test]
    fn a_line_read_once_gives_what_reading_it_twice_gave() {
        let files = rollouts();
        assert!(files.len() >= 17, "only {} rollouts", files.len());
        let (mut turns, mut quick) = (0, 0);
        for f in &files {
            let text = text_of(f);
            // The wrapper read by hand is the one serde_json reads.
            for rec in text.lines() {
                if let Some(l) = quick_line(rec) {
                    let serde: Line = serde_json::from_str(rec).unwrap();
                    assert_eq!(fields(&l), fields(&serde), "{rec}");
                    quick += 1;
                }
            }
            for reads in [Reads::Whole, Reads::Figures] {
                let once = read(&text, reads, true);
                assert_eq!(once, read(&text, reads, false), "{}", f.display());
                turns += once.iter().filter(|i| i.contains("TurnEnded")).count();
            }
        }
        assert!(turns > 20, "only {turns} turns ended");
        assert!(quick > 500, "only {quick} lines read by the quick wrapper");
    }

    /// Every payload of every rollout line reads by the one-pass reader as
    /// serde_json reads it, or is left to serde_json; most are read by it.
    #[test]
    fn payloads_read_by_the_tape_are_what_serde_json_reads() {
        let (mut taped, mut lines) = (0, 0);
        for f in &rollouts() {
            let text = text_of(f);
            for rec in text.lines() {
                let Some(payload) = serde_json::from_str::<Line>(rec)
                    .ok()
                    .and_then(|l| l.payload)
                else {
                    continue;
                };
                lines += 1;
                let serde = serde_json::from_str::<Payload>(payload.0).ok();
                if let Some(p) = crate::dialect::tape::from_raw::<Payload>(payload.0) {
                    assert_eq!(
                        Some(format!("{p:?}")),
                        serde.map(|s| format!("{s:?}")),
                        "{rec}"
                    );
                    taped += 1;
                }
                // Whatever the reader takes, the caller's answer is serde_json's.
                assert_eq!(
                    read_payload_text(payload.0).map(|p| format!("{p:?}")),
                    serde_json::from_str::<Payload>(payload.0)
                        .ok()
                        .map(|s| format!("{s:?}")),
                    "{rec}"
                );
            }
        }
        assert!(
            taped > 400 && taped * 10 > lines * 9,
            "{taped} of {lines} payloads taped"
        );
    }

    /// A line as serde_json reads it, written out.
    fn fields(l: &Line<'_>) -> String {
        format!(
            "{:?} {:?} {:?} {} {} {:?}",
            l.ty.0,
            l.timestamp.0,
            l.payload.map(|p| p.0),
            l.record_type.0,
            l.instructions.0,
            l.id.0
        )
    }

    #[test]
    fn the_quick_wrapper_leaves_the_unusual_to_serde_json() {
        let line = r#" {"timestamp":"2025-01-01T00:00:00Z","type":"event_msg","payload":{"type":"x","n":[1,2.5e3,true,null,"a\"b"]}} "#;
        let quick = quick_line(line).expect("a plain wrapper");
        assert_eq!(fields(&quick), fields(&serde_json::from_str(line).unwrap()));
        for unusual in [
            r#"{"type":"event_msg","payload":{},"type":"x"}"#,
            r#"{"typ\u0065":"event_msg","payload":{}}"#,
            r#"{"type":"ev\u0065nt_msg","payload":{}}"#,
            r#"{"type":"event_msg","payload":null}"#,
            r#"{"type":"event_msg","payload":{},"id":"x"}"#,
            r#"{"record_type":"state"}"#,
            r#"{"type":"event_msg","payload":{}} x"#,
            r#"{"type":"event_msg","payload":{"a":"tab	in"}}"#,
            r#"{"type":"event_msg","payload":{"a":1,}}"#,
            r#"{"type":5,"payload":{}}"#,
            "{}",
            "[]",
        ] {
            assert!(quick_line(unusual).is_none(), "{unusual}");
        }
    }

    /// `output_head` as it was before it looked at the literal first: the
    /// head unescaped, then the whole text when the head starts with `{` or
    /// is blank.
    fn output_head_by_unescaping(raw: &RawValue) -> Option<Str<'_>> {
        if raw.get().starts_with('"') {
            let head = crate::json::unescape_literal_head(raw.get(), HEAD_LINES)?;
            let first = head.trim_start_matches([' ', '\n', '\t', '\r']);
            if !first.is_empty() && !first.starts_with('{') {
                return Some(head);
            }
        }
        output_text(raw)
    }

    #[test]
    fn output_starts() {
        for (lit, want) in [
            (r#""a\nb""#, OutputStart::Text),
            (r#"" \t\r\n{\"output\":1}""#, OutputStart::BraceOrBlank),
            (r#"" \n ""#, OutputStart::BraceOrBlank),
            (r#""""#, OutputStart::BraceOrBlank),
            (r#""\u0020{""#, OutputStart::Unsure),
            (r#""\"a""#, OutputStart::Unsure),
            (r#""\n\n\n\n\n\nabc""#, OutputStart::Unsure),
            (r#""\n\n\n\n\nabc""#, OutputStart::Text),
        ] {
            assert_eq!(output_start(lit), want, "{lit}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Looking at the literal first changes nothing that is read.
        #[test]
        fn output_heads_are_what_unescaping_first_gave(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    " ", r"\n", r"\t", r"\r", "{", "}", "a", r"\u0020", r"\u007b", r#"\""#,
                    r#"\"output\":"#, "Exit code: 1", "Process running", "é",
                ]),
                0..14,
            )
        ) {
            let lit = format!("\"{}\"", parts.concat());
            let raw: &RawValue = serde_json::from_str(&lit).unwrap();
            prop_assert_eq!(output_head(raw), output_head_by_unescaping(raw), "{}", lit);
        }

        /// Lines put together from pieces, well formed or not: where the
        /// quick wrapper answers, serde_json reads the line and the same
        /// fields.
        #[test]
        fn the_quick_wrapper_agrees_with_serde_json(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just(r#""type":"response_item""#), Just(r#""type":"event_msg""#),
                    Just(r#""timestamp":"2025-10-01T10:00:00.123Z""#), Just(r#""id":"a""#),
                    Just(r#""payload":{"type":"message","content":[{"text":"a\nb"}]}"#),
                    Just(r#""payload":"s""#), Just(r#""payload":null"#), Just(r#""payload":[1,-0.5]"#),
                    Just(r#""payload":{"output":"\u00e9\ud83d\ude00"}"#),
                    Just(r#""payload":{"a":01}"#), Just(r#""payload":{"a":"\x"}"#),
                    Just(r#""other":{"type":"x"}"#), Just(r#""record_type":"state""#),
                    Just(r#""type":"#), Just("\"ty\\u0070e\":\"x\""), Just(r#""x":tru"#),
                    Just(","), Just(" "), Just("\n"), Just(":"), Just("}"),
                ],
                0..8,
            ),
            sep in prop_oneof![Just(","), Just(", "), Just(" , ")],
            close in prop_oneof![Just("}"), Just("} "), Just(""), Just("}}")],
        ) {
            let rec = format!("{{{}{close}", parts.join(sep));
            if let Some(quick) = quick_line(&rec) {
                let serde: Line = serde_json::from_str(&rec)
                    .map_err(|e| TestCaseError::fail(format!("{rec}: {e}")))?;
                prop_assert_eq!(fields(&quick), fields(&serde), "{}", rec);
            }
        }
    }
}
