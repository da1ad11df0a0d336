//! Agent Client Protocol traffic: JSON-RPC 2.0 messages between an editor
//! and an agent, as a client logs them (or just the `update` objects).
//!
//! The format is described in docs/dialects.md#acp. What shapes this
//! parser:
//! - the session opens with the `session/new` (or `session/load`) exchange,
//!   or with the first `session/update` naming a `sessionId`; the
//!   `initialize` exchange before it carries nothing to show;
//! - `agent_message_chunk` / `agent_thought_chunk` are deltas;
//!   `user_message_chunk` and the `session/prompt` request's text are the prompt;
//! - `tool_call` starts a call; claude-agent-acp first sends it `pending`
//!   with no `rawInput` and the arguments in the next `tool_call_update`, so a
//!   call without arguments starts at its first update;
//! - `tool_call_update.content` **replaces** the previous content: for a
//!   shell call it is the whole output so far (codex-acp without the
//!   `terminal_output` capability re-sends it every time: O(n²) input), so
//!   it becomes an [`Item::OutputSnapshot`] and the transform emits only what
//!   each adds;
//! - codex-acp's `_meta.terminal_output.data` chunks are incremental;
//!   claude-agent-acp's `_meta.claudeCode.toolResponse` (and its single
//!   `terminal_output`) repeat output that `content` carries again, fenced:
//!   fences are stripped, `<persisted-output>` stubs turned into a note, and
//!   all of it deduped per call;
//! - `plan` updates are whole snapshots; the `session/prompt` response's
//!   `stopReason` ends the turn and is the session's result, and a JSON-RPC
//!   error answering the prompt is a fatal one.
//!
//! Requests the agent makes of the client (`session/request_permission`,
//! `fs/*`, `terminal/*`, `elicitation/create`) and their answers are
//! protocol plumbing and produce no events.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::common::{
    clean_output, error_text, fill_start, join_lines, join_output, normalize_tool_name,
    render_todos, split_mcp_name, unified_diff, without_output,
};
use super::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SessionStart, Str, SummaryPhase, Text, ToolEnd,
    ToolStart, Usage, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, raw_as_str};

/// One JSON-RPC message (or a bare update object).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    jsonrpc: Option<IgnoredAny>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: LaxStr<'a>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(rename = "sessionUpdate", default)]
    session_update: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    update: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(borrow, default)]
    prompt: Option<&'a RawValue>,
}

/// A `session/update` payload: every update kind's fields.
#[derive(Deserialize)]
struct Update<'a> {
    #[serde(rename = "sessionUpdate", borrow, default)]
    kind_of: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    title: LaxStr<'a>,
    #[serde(borrow, default)]
    kind: LaxStr<'a>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(rename = "rawInput", borrow, default)]
    raw_input: Option<&'a RawValue>,
    #[serde(rename = "rawOutput", borrow, default)]
    raw_output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    locations: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    entries: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "claudeCode", borrow, default)]
    claude_code: Option<&'a RawValue>,
    #[serde(borrow, default)]
    terminal_output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    terminal_info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    terminal_exit: Option<&'a RawValue>,
}

/// A content block (`{type:"text", text}`, …) or a tool-call content item
/// (`{type:"content", content}`, `{type:"diff", path, oldText, newText}`).
#[derive(Deserialize)]
struct ContentItem<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    path: LaxStr<'a>,
    #[serde(rename = "oldText", borrow, default)]
    old_text: LaxStr<'a>,
    #[serde(rename = "newText", borrow, default)]
    new_text: LaxStr<'a>,
}

/// What the parser remembers of an open tool call.
struct Call {
    id: String,
    name: String,
    title: Option<String>,
    started: bool,
    exit_code: Option<i64>,
    /// A `toolResponse` gave its output: `content` repeats it.
    has_response: bool,
    /// Output was emitted (streamed or snapshot) before completion.
    had_output: bool,
    /// claude-agent-acp's call (`_meta.claudeCode`): its `content` before
    /// completion is a description, not output.
    claude: bool,
    /// The unified diff of its `diff` content, when it had one.
    patch: Option<(String, u64, u64)>,
}

/// A diff kept for a call's completion is capped at this many bytes.
const MAX_PATCH: usize = 4 * 1024 * 1024;

/// Detection: JSON-RPC traffic (a `jsonrpc` key), or a bare `session/update`
/// notification or update (a `method` starting with `session/`, a
/// `sessionUpdate` key).
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    p.jsonrpc.is_some()
        || p.session_update.is_some()
        || p.method
            .as_deref()
            .is_some_and(|m| m.starts_with("session/"))
}

/// Parser state for one ACP input.
#[derive(Default)]
pub struct AcpParser {
    /// The open session's id (`Some("")` for one without an id).
    session: Option<String>,
    /// `session/new` / `session/load` requests awaiting their response.
    new_ids: Vec<String>,
    /// `session/prompt` requests awaiting their response.
    prompt_ids: Vec<String>,
    /// The cwd the client asked for.
    cwd: Option<String>,
    /// Any request from the client was seen (responses can be matched).
    saw_requests: bool,
    /// Calls seen and not completed, by id, oldest first.
    calls: CallTable<Call>,
    in_thought: bool,
    /// The prompt turn ended (its response was the result): the next
    /// prompt, or the next update with content, opens the next session.
    turn_done: bool,
    /// The model the session was opened with (its later turns keep it).
    model: Option<String>,
}

impl Parser for AcpParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        // A bare update object, as some clients log them.
        if line.jsonrpc.is_none() && line.session_update.is_some() {
            let raw: &RawValue = match serde_json::from_str(rec) {
                Ok(r) => r,
                Err(_) => return Ok(Parsed::Invalid),
            };
            self.open(None, out)?;
            if !self.update(raw, out)? {
                return keep_unknown(rec, out);
            }
            return Ok(Parsed::Done);
        }
        let params = line
            .params
            .and_then(|p| serde_json::from_str::<Params>(p.get()).ok());
        let id = line.id.map(|i| i.get().to_owned());
        match (line.method.as_deref(), id) {
            (Some("session/update"), _) => {
                let Some(p) = params else {
                    return keep_unknown(rec, out);
                };
                self.open(p.session_id.as_deref(), out)?;
                let Some(u) = p.update else {
                    return keep_unknown(rec, out);
                };
                if !self.update(u, out)? {
                    return keep_unknown(rec, out);
                }
            }
            (Some(m @ ("session/new" | "session/load")), Some(id)) => {
                self.saw_requests = true;
                self.new_ids.push(id);
                if let Some(p) = &params {
                    self.cwd = p.cwd.0.as_deref().map(str::to_owned);
                    if m == "session/load"
                        && let Some(sid) = p.session_id.as_deref()
                    {
                        self.open(Some(sid), out)?;
                    }
                }
            }
            (Some("session/prompt"), Some(id)) => {
                self.saw_requests = true;
                self.prompt_ids.push(id);
                let sid = params.as_ref().and_then(|p| p.session_id.as_deref());
                self.next_turn(sid, out)?;
                if let Some(p) = params {
                    self.open(p.session_id.as_deref(), out)?;
                    if let Some(text) = p.prompt.and_then(blocks_text) {
                        out(Item::Event(Event::new(Kind::UserMessage { text })))?;
                    }
                }
            }
            (Some(m), _) if is_plumbing(m) => {
                // The client's own requests show that its side is logged,
                // so responses can be matched to what they answer.
                if matches!(
                    m,
                    "initialize" | "authenticate" | "session/cancel" | "session/set_mode"
                ) {
                    self.saw_requests = true;
                }
            }
            (None, Some(id)) => {
                if let Some(err) = line.error {
                    self.error_response(&id, err, out)?;
                } else if let Some(res) = line.result {
                    self.response(&id, res, out)?;
                }
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}

/// Methods that are protocol plumbing: they produce no events.
fn is_plumbing(m: &str) -> bool {
    matches!(
        m,
        "initialize"
            | "authenticate"
            | "session/cancel"
            | "session/set_mode"
            | "session/set_model"
            | "session/set_config_option"
            | "session/request_permission"
            | "session/list"
            | "elicitation/create"
    ) || m.starts_with("fs/")
        || m.starts_with("terminal/")
}

#[derive(Deserialize)]
struct NewSessionResult<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    models: Option<&'a RawValue>,
    #[serde(borrow, default)]
    modes: Option<&'a RawValue>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: LaxStr<'a>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// The turn's usage on a `session/prompt` response: the protocol's `usage`
/// (`inputTokens` without the cache, `cachedReadTokens`,
/// `cachedWriteTokens`, `outputTokens`: claude-agent-acp and codex-acp send
/// the turn's own), or gemini-cli's `_meta.quota.token_count`
/// (`input_tokens` with the cache, as Gemini counts).
fn prompt_usage(r: &NewSessionResult<'_>) -> Option<Usage> {
    if let Some(m) = r.usage.and_then(Members::of) {
        let get = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
        let input = get("inputTokens")?;
        let output = get("outputTokens")?;
        // Cursor's names, read before the protocol's were checked, still count.
        let read = get("cachedReadTokens").or_else(|| get("cacheReadTokens"));
        let write = get("cachedWriteTokens").or_else(|| get("cacheWriteTokens"));
        return Some(Usage::cache_apart(input, output, read, write));
    }
    let tc = Members::of(r.meta?)?.obj("quota")?.obj("token_count")?;
    let get = |k: &str| tc.int(k).and_then(|v| u64::try_from(v).ok());
    Some(Usage {
        input: get("input_tokens")?,
        output: get("output_tokens")?,
        ..Usage::default()
    })
}

impl AcpParser {
    /// After a turn's result, a new turn of the same ACP session is a session
    /// of its own (one result each, usage of its own).
    /// (`sid`: the session the new turn names, if it names one; another
    /// session than the open one is opened by [`Self::open`] anyway.)
    fn next_turn<'a>(&mut self, sid: Option<&str>, out: Out<'_, 'a>) -> io::Result<()> {
        if !std::mem::take(&mut self.turn_done)
            || sid.is_some_and(|s| Some(s) != self.session.as_deref())
        {
            return Ok(());
        }
        let sid = self.session.take().filter(|s| !s.is_empty());
        let model = self.model.clone().map(Cow::Owned);
        self.open_with(sid.as_deref(), model, None, out)
    }

    /// Open a session for `sid` unless it is the one open.
    fn open<'a>(&mut self, sid: Option<&str>, out: Out<'_, 'a>) -> io::Result<()> {
        self.open_with(sid, None, None, out)
    }

    fn open_with<'a>(
        &mut self,
        sid: Option<&str>,
        model: Option<Str<'a>>,
        mode: Option<Str<'a>>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        match (&self.session, sid) {
            (Some(cur), Some(s)) if cur == s => return Ok(()),
            (Some(_), None) => return Ok(()),
            _ => {}
        }
        self.session = Some(sid.unwrap_or("").to_owned());
        self.model = model.as_deref().map(str::to_owned);
        self.calls = CallTable::default();
        self.in_thought = false;
        out(Item::Event(Event::new(Kind::SessionStarted(
            SessionStart {
                session_id: sid.map(|s| Cow::Owned(s.to_owned())),
                dialect: Cow::Borrowed("acp"),
                model,
                cwd: self.cwd.clone().map(Cow::Owned),
                permission_mode: mode,
                title: None,
                parent: None,
            },
        ))))
    }

    /// A result response: the session opened, or the prompt turn ended.
    fn response<'a>(&mut self, id: &str, res: &'a RawValue, out: Out<'_, 'a>) -> io::Result<()> {
        let r = serde_json::from_str::<NewSessionResult>(res.get()).ok();
        if let Some(i) = self.new_ids.iter().position(|x| x == id) {
            self.new_ids.remove(i);
            if let Some(r) = r
                && let Some(sid) = r.session_id.as_deref()
            {
                let model = r
                    .models
                    .and_then(Members::of)
                    .and_then(|m| m.nonempty_str("currentModelId"));
                let mode = r
                    .modes
                    .and_then(Members::of)
                    .and_then(|m| m.nonempty_str("currentModeId"));
                self.open_with(Some(sid), model, mode, out)?;
            }
            return Ok(());
        }
        let was_prompt = match self.prompt_ids.iter().position(|x| x == id) {
            Some(i) => {
                self.prompt_ids.remove(i);
                true
            }
            None => false,
        };
        let Some(r) = r else { return Ok(()) };
        // The prompt's response, or (when the client's side is not logged)
        // any response with a stop reason.
        let Some(stop) = r.stop_reason.clone().get() else {
            return Ok(());
        };
        let _ = was_prompt;
        self.open(None, out)?;
        self.end_thought(out)?;
        let usage = prompt_usage(&r);
        out(Item::Event(Event::new(Kind::TurnEnded { usage })))?;
        self.turn_done = true;
        let ok = stop == "end_turn";
        out(Item::Event(Event::new(Kind::Result(SessionResult {
            ok,
            usage,
            error: (!ok).then(|| Cow::Owned(format!("stopped: {stop}"))),
            ..SessionResult::default()
        }))))
    }

    /// An error response: fatal when it answers the prompt.
    fn error_response<'a>(
        &mut self,
        id: &str,
        err: &'a RawValue,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let m = Members::of(err);
        let mut message = error_text(err).unwrap_or(Cow::Borrowed("JSON-RPC error"));
        if let Some(code) = m.as_ref().and_then(|m| m.int("code")) {
            message = Cow::Owned(format!("{message} (JSON-RPC {code})"));
        }
        let to_prompt = match self.prompt_ids.iter().position(|x| x == id) {
            Some(i) => {
                self.prompt_ids.remove(i);
                true
            }
            None => !self.saw_requests && self.session.is_some(),
        };
        if let Some(i) = self.new_ids.iter().position(|x| x == id) {
            self.new_ids.remove(i);
        }
        if to_prompt {
            self.end_thought(out)?;
            out(Item::Event(Event::new(Kind::TurnEnded { usage: None })))?;
            self.turn_done = true;
            out(Item::Event(Event::new(Kind::Result(SessionResult {
                ok: false,
                error: Some(message),
                ..SessionResult::default()
            }))))
        } else {
            out(Item::Event(Event::new(Kind::Error {
                message,
                fatal: false,
                source: Some(Cow::Borrowed("jsonrpc")),
            })))
        }
    }

    fn end_thought<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if self.in_thought {
            self.in_thought = false;
            out(Item::Event(Event::new(Kind::ThinkingCompleted {
                duration_ms: None,
            })))?;
        }
        Ok(())
    }

    /// One update object; false for an update kind this parser does not know.
    fn update<'a>(&mut self, raw: &'a RawValue, out: Out<'_, 'a>) -> io::Result<bool> {
        let Ok(u) = serde_json::from_str::<Update<'a>>(raw.get()) else {
            return Ok(false);
        };
        let kind = u.kind_of.as_deref().unwrap_or("");
        if kind != "agent_thought_chunk" {
            self.end_thought(out)?;
        }
        if matches!(
            kind,
            "agent_message_chunk"
                | "agent_thought_chunk"
                | "user_message_chunk"
                | "tool_call"
                | "plan"
        ) {
            self.next_turn(None, out)?;
        }
        let ev = |k| Item::Event(Event::new(k));
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
                let Some(c) = u.content else { return Ok(true) };
                let Ok(b) = serde_json::from_str::<ContentItem<'a>>(c.get()) else {
                    return Ok(false);
                };
                if b.ty.as_deref().is_some_and(|t| t != "text") {
                    out(ev(Kind::Unknown {
                        raw: Json::from(raw),
                    }))?;
                    return Ok(true);
                }
                let text = b.text.get().unwrap_or_default();
                out(ev(match kind {
                    "agent_message_chunk" => Kind::TextDelta { text },
                    "user_message_chunk" => Kind::UserMessage { text },
                    _ => {
                        self.in_thought = true;
                        Kind::ThinkingDelta { text }
                    }
                }))?;
            }
            "tool_call" | "tool_call_update" => self.tool(&u, kind == "tool_call", out)?,
            "plan" => {
                let text = u
                    .entries
                    .and_then(|e| render_todos(e, &["content"], &["status"]));
                out(ev(Kind::Summary {
                    phase: SummaryPhase::Snapshot,
                    text: text.map(Cow::Owned),
                }))?;
            }
            "available_commands_update"
            | "current_mode_update"
            | "config_option_update"
            | "session_info_update"
            | "usage_update" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `tool_call` and `tool_call_update`.
    fn tool<'a>(&mut self, u: &Update<'a>, initial: bool, out: Out<'_, 'a>) -> io::Result<()> {
        let id = u.tool_call_id.as_deref().unwrap_or("").to_owned();
        let meta = u
            .meta
            .and_then(|m| serde_json::from_str::<Meta<'a>>(m.get()).ok());
        let claude = meta
            .as_ref()
            .and_then(|m| m.claude_code)
            .and_then(Members::of);
        if !self.calls.contains(&id) {
            let name = tool_name(
                claude.as_ref().and_then(|c| c.str("toolName")).as_deref(),
                u.kind.as_deref(),
            );
            // Past the table's cap the oldest call is forgotten.
            self.calls.insert(
                &id,
                Call {
                    id: id.clone(),
                    name,
                    title: None,
                    started: false,
                    exit_code: None,
                    has_response: false,
                    had_output: false,
                    claude: false,
                    patch: None,
                },
            );
        }
        let call = self.calls.get_mut(&id).expect("just inserted");
        if let Some(t) = u.title.as_deref() {
            call.title = Some(t.to_owned());
        }
        if claude.is_some() {
            call.claude = true;
        }
        let has_input = u.raw_input.is_some_and(|r| !is_empty_json(r));
        let status = u.status.as_deref();
        if !call.started {
            // A pending call without arguments waits for the update that
            // brings them.
            let wait = initial && !has_input && matches!(status, None | Some("pending"));
            if !wait {
                call.started = true;
                let start = Self::start(call, u, meta.as_ref());
                out(Item::Event(Event::new(Kind::started(start))))?;
            }
        } else if has_input && let Some(r) = u.raw_input {
            out(Item::Event(Event::new(Kind::ToolCallProgress {
                call_id: Cow::Owned(id.clone()),
                partial: Json::from(r),
            })))?;
        }
        let shell = call.name == "shell";
        let call_id = || Cow::Owned(id.clone());
        if let Some(m) = &meta {
            if let Some(code) = m
                .terminal_exit
                .and_then(Members::of)
                .and_then(|t| t.int("exit_code").or_else(|| t.int("exitCode")))
            {
                call.exit_code = Some(code);
            }
            if let Some(resp) = claude.as_ref().and_then(|c| c.get("toolResponse"))
                && shell
                && let Some(text) = response_text(resp)
            {
                call.has_response = true;
                call.had_output = true;
                out(Item::OutputSnapshot {
                    ts: None,
                    call_id: call_id(),
                    stream: OutStream::Stdout,
                    text: Cow::Owned(clean_output(&text).into_owned()),
                })?;
            }
            if let Some(data) = m
                .terminal_output
                .and_then(Members::of)
                .and_then(|t| t.str("data"))
            {
                call.had_output = true;
                if call.has_response {
                    // claude-agent-acp: the whole output once, already seen.
                    out(Item::OutputSnapshot {
                        ts: None,
                        call_id: call_id(),
                        stream: OutStream::Stdout,
                        text: data,
                    })?;
                } else {
                    out(Item::Event(Event::new(Kind::ShellOutputDelta {
                        call_id: call_id(),
                        stream: OutStream::Stdout,
                        text: data,
                    })))?;
                }
            }
        }
        let items: Vec<ContentItem<'a>> = u
            .content
            .and_then(|c| serde_json::from_str(c.get()).ok())
            .unwrap_or_default();
        let mut text: Option<String> = None;
        for it in &items {
            match it.ty.as_deref() {
                Some("content") => {
                    if let Some(t) = it.content.and_then(blocks_text) {
                        match &mut text {
                            None => text = Some(t.into_owned()),
                            Some(s) => {
                                s.push('\n');
                                s.push_str(&t);
                            }
                        }
                    }
                }
                Some("diff") => {
                    let path = it.path.as_deref().unwrap_or("");
                    let old = it.old_text.as_deref().unwrap_or("");
                    let new = it.new_text.as_deref().unwrap_or("");
                    if old.len() + new.len() <= MAX_PATCH {
                        let (p, a, d) = unified_diff(path, old, new);
                        // Content replaces content: the latest diff is the call's.
                        call.patch = Some((p, a, d));
                    }
                }
                _ => {}
            }
        }
        let text = text.map(|t| clean_output(&t).into_owned());
        let finished = matches!(status, Some("completed" | "failed"));
        let c = &*call;
        // The content of the `tool_call` that announces a call describes it
        // (claude-agent-acp puts a Bash call's `description` there, a Task's
        // prompt): it is not output.
        let describes = initial && !finished;
        let snapshot = shell && !describes && !c.has_response && (!c.claude || finished);
        if snapshot && let Some(t) = &text {
            // The whole output so far (codex-acp re-sends it every time).
            if !finished || call.had_output {
                call.had_output = true;
                out(Item::OutputSnapshot {
                    ts: None,
                    call_id: call_id(),
                    stream: OutStream::Stdout,
                    text: Cow::Owned(t.clone()),
                })?;
            }
        }
        if finished {
            let mut call = self.calls.remove(&id).expect("in the table");
            if !call.started {
                // Completed without ever starting: start it now.
                call.started = true;
                let start = Self::start(&call, u, meta.as_ref());
                out(Item::Event(Event::new(Kind::started(start))))?;
            }
            return self.complete(call, u, text, out);
        }
        Ok(())
    }

    /// The start of call `c`, from the update that starts it.
    fn start<'a>(c: &Call, u: &Update<'a>, meta: Option<&Meta<'a>>) -> ToolStart<'a> {
        let args: Json<'a> = u
            .raw_input
            .filter(|r| !is_empty_json(r))
            .map_or_else(json_null, Json::from);
        let mut t = ToolStart::new(Cow::Owned(c.id.clone()), Cow::Owned(c.name.clone()), args);
        if let Some(m) = u.raw_input.and_then(Members::of) {
            fill_start(&mut t, &m);
        }
        if t.tool_name == "mcp"
            && let Some((s, tool)) = meta
                .and_then(|m| m.claude_code)
                .and_then(Members::of)
                .and_then(|cc| cc.str("toolName"))
                .as_deref()
                .and_then(split_mcp_name)
        {
            t.mcp_server = Some(Cow::Owned(s.to_owned()));
            t.mcp_tool = Some(Cow::Owned(tool.to_owned()));
        }
        if t.cwd.is_none() {
            t.cwd = meta
                .and_then(|m| m.terminal_info)
                .and_then(Members::of)
                .and_then(|ti| ti.nonempty_str("cwd"));
        }
        if t.path.is_none() {
            t.path = u.locations.and_then(first_location);
        }
        let title = c.title.clone().map(Cow::Owned);
        if t.tool_name == "shell" && t.command.is_none() {
            t.command = title.clone();
        } else if t.description.is_none() {
            t.description = title;
        }
        t
    }

    /// The completion of `call` from its final update.
    fn complete<'a>(
        &mut self,
        call: Call,
        u: &Update<'a>,
        text: Option<String>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let shell = call.name == "shell";
        let raw_m = u.raw_output.and_then(Members::of);
        let exit_code = call.exit_code.or_else(|| {
            raw_m
                .as_ref()
                .and_then(|m| m.int("exit_code").or_else(|| m.int("exitCode")))
        });
        let completed = u.status.as_deref() == Some("completed");
        let mut t = ToolEnd::new(Cow::Owned(call.id), Cow::Owned(call.name), completed);
        t.exit_code = exit_code;
        if let Some(c) = exit_code {
            t.ok = t.ok && c == 0;
        }
        if shell {
            t.output = text
                .clone()
                .map(Text::from)
                .or_else(|| {
                    u.raw_output
                        .and_then(raw_as_str)
                        .map(|s| clean_output(&s).into_owned().into())
                })
                .or_else(|| {
                    raw_m
                        .as_ref()
                        .and_then(|m| join_output(m.str("stdout"), m.str("stderr")))
                        .or_else(|| raw_m.as_ref().and_then(|m| m.str("aggregated_output")))
                        .map(|s| Text::from(clean_output(&s).into_owned()))
                });
            t.result = u
                .raw_output
                .filter(|r| !r.get().starts_with('"'))
                .map(|r| without_output(r).map_or(Json::from(r), Json::from));
        } else {
            t.result = u.raw_output.or(u.content).map(Json::from);
        }
        if !t.ok {
            t.error = Some(match (completed, exit_code) {
                (true, Some(c)) => Cow::Owned(format!("exit code {c}")),
                _ => u
                    .raw_output
                    .and_then(raw_as_str)
                    .filter(|s| !s.is_empty())
                    .or_else(|| text.map(Cow::Owned))
                    .unwrap_or(Cow::Borrowed("failed")),
            });
        }
        if let Some((p, a, d)) = call.patch {
            t.patch = Some(Cow::Owned(p));
            t.lines_added = Some(a);
            t.lines_removed = Some(d);
        }
        out(Item::Event(Event::new(Kind::completed(t))))
    }
}

/// The normalized name of an ACP tool: claude-agent-acp's own tool name when
/// it gives one, else the ACP `kind`.
fn tool_name(claude: Option<&str>, kind: Option<&str>) -> String {
    if let Some(n) = claude {
        if split_mcp_name(n).is_some() {
            return "mcp".to_owned();
        }
        return normalize_tool_name(n);
    }
    match kind {
        Some("execute") => "shell".to_owned(),
        Some("fetch") => "web_fetch".to_owned(),
        Some(k @ ("read" | "edit" | "delete" | "search")) => k.to_owned(),
        Some(k) => normalize_tool_name(k),
        None => "other".to_owned(),
    }
}

/// `null`, `{}` or `[]`.
fn is_empty_json(r: &RawValue) -> bool {
    let t: String = r.get().chars().filter(|c| !c.is_whitespace()).collect();
    matches!(t.as_str(), "null" | "{}" | "[]")
}

/// The text of one content block or an array of them (text blocks joined).
fn blocks_text(raw: &RawValue) -> Option<Str<'_>> {
    // An array must not be read as one block: serde reads a struct from an
    // array too (field by position), which found no text in a prompt's
    // `[{type, text}]` and lost the prompt.
    let array = raw.get().starts_with('[');
    if !array && let Ok(b) = serde_json::from_str::<ContentItem>(raw.get()) {
        return match b.ty.as_deref() {
            Some("text") | None => b.text.get(),
            _ => None,
        };
    }
    let v: Vec<ContentItem> = serde_json::from_str(raw.get()).ok()?;
    join_lines(
        v.into_iter()
            .filter(|b| b.ty.as_deref().is_none_or(|t| t == "text"))
            .filter_map(|b| b.text.get()),
    )
}

/// The output a `toolResponse` carries: `stdout` (+`stderr`), a `content`
/// string, text blocks, or a plain string.
fn response_text(raw: &RawValue) -> Option<String> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s.into_owned());
    }
    if let Some(m) = Members::of(raw) {
        if let Some(o) = join_output(m.str("stdout"), m.str("stderr")) {
            return Some(o.into_owned());
        }
        return m.str("content").map(Cow::into_owned);
    }
    blocks_text(raw).map(Cow::into_owned)
}

/// The first `locations[].path`.
fn first_location(raw: &RawValue) -> Option<Str<'_>> {
    let v: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    v.first()
        .and_then(|l| Members::of(l))
        .and_then(|m| m.nonempty_str("path"))
}
