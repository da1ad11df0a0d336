//! Antigravity CLI (`agy`), Google's successor to Gemini CLI.
//!
//! Two inputs, each its own dialect (docs/dialects.md#antigravity-cli):
//!
//! - **The live stream**, `agy -p … --output-format stream-json` (1.1.8 and
//!   later; the same lines with `--input-format stream-json`), read here.
//! - **The saved transcript**,
//!   `~/.gemini/antigravity-cli/brain/<id>/.system_generated/logs/transcript.jsonl`
//!   (and `transcript_full.jsonl`), read by [`transcript`].
//!
//! The stream's lines carry no `type`: each is `{"event": E, E: {…}}`.
//!
//! - `init` (one per process): `conversation_id` beside the payload, which
//!   has `model` (only when `--model` was given), `cwd`, `permission_mode`.
//! - `step_update`: `{conversation_id, step_index, state, step_type, …}`.
//!   `state` is `ACTIVE`, then `DONE` (or `ERROR` for a failed tool). The
//!   step types:
//!   - `user_input`: the prompt echoed (`text_delta`), one per turn;
//!   - `agent_response`: the model's text as `text_delta` pieces; the
//!     closing `DONE` step carries text too (its last piece; a reply of one
//!     piece has only the `DONE`). Its `usage` is that one model call's.
//!     The text is rebuilt once: should a closing step ever repeat the
//!     pieces already streamed, only what it adds is written
//!     ([`Item::BlockRecap`]);
//!   - `tool`: `tool_name` and `tool_info {name, parameters, output, error}`.
//!     A call has no id of its own: its step index names it (`callId`), its
//!     `ACTIVE` step starts it, its `DONE`/`ERROR` step completes it (a call
//!     seen only at its end gets its start then). A step still open when its
//!     turn's `result` comes never completes (agy was interrupted): it is
//!     closed there as cancelled;
//!   - `subagent` (or `subagent_info` on a step): a sub-agent run, shown as a
//!     `task` call;
//!   - `system_message` (context agy injects, e.g. on resume) is a
//!     `user_event` of kind `context`; `error_message` an `error`;
//!     `checkpoint` carries nothing to show; `unknown` (what agy writes for
//!     `ask_question`, with no details) is kept as an `unknown` event.
//! - `result` (one per turn): `status` (`SUCCESS`; `ERROR`, `CANCELLED`… are
//!   failures), `response`, `error`, `duration_seconds`, `num_turns`,
//!   `usage`. Its counts are the conversation's running totals. It ends
//!   its turn (`turn_ended` with what the turn used); the session's own
//!   `result` is the process's last turn's, written when the process ends,
//!   so that several turns in one process (`--input-format stream-json`)
//!   are one session with one result.
//!
//! Usage: `{input_tokens, output_tokens, thinking_tokens, cache_read_tokens,
//! total_tokens}`. `input_tokens` leaves the cache reads out (the cache is
//! counted apart, as Anthropic's), so the normalized input adds
//! `cache_read_tokens` back; `output_tokens` already includes the thinking
//! tokens (`thinking_tokens` is the part of it spent thinking; no thinking
//! text is streamed). Each `agent_response` step's usage is one increment
//! (a step that reports usage twice adds only what it grew by); the
//! `result`'s totals are the session's, and the normalizer reconciles them.

pub mod transcript;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{error_text, fill_start_owned, normalize_tool_name};
use super::{Channel, Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, SessionResult, SessionStart, Text, ToolEnd, ToolStart, Usage, UserEventKind,
    json_null,
};
use crate::input::Parsed;
use crate::json::{LaxF64, LaxInt, LaxStr, Members, raw_as_str};

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "antigravity";

/// Text kept per open `agent_response` step (to tell a repeat from a new
/// piece); past this, the step's closing text is taken as a piece.
const TEXT_HOLD: usize = 8 * 1024 * 1024;

/// Detection: agy's envelope, `event` naming the member that holds the
/// payload. No other dialect writes a string `event`.
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    match p.event.as_deref() {
        Some("step_update") => p.step_update.is_some(),
        Some("init") => p.init.is_some() || p.conversation_id.is_some(),
        Some("result") => p.result.is_some_and(|r| r.get().starts_with('{')),
        _ => false,
    }
}

/// One line of the stream.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    event: LaxStr<'a>,
    #[serde(borrow, default)]
    conversation_id: LaxStr<'a>,
    #[serde(borrow, default)]
    init: Option<&'a RawValue>,
    #[serde(borrow, default)]
    step_update: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Init<'a> {
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(borrow, default)]
    permission_mode: LaxStr<'a>,
}

#[derive(Deserialize)]
struct Step<'a> {
    #[serde(borrow, default)]
    conversation_id: LaxStr<'a>,
    #[serde(default)]
    step_index: LaxInt,
    #[serde(borrow, default)]
    state: LaxStr<'a>,
    #[serde(borrow, default)]
    step_type: LaxStr<'a>,
    #[serde(borrow, default)]
    text_delta: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_name: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_info: Option<&'a RawValue>,
    #[serde(borrow, default)]
    subagent_info: Option<&'a RawValue>,
    #[serde(default)]
    duration_seconds: LaxF64,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResultLine<'a> {
    #[serde(borrow, default)]
    conversation_id: LaxStr<'a>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    response: LaxStr<'a>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(default)]
    duration_seconds: LaxF64,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

/// agy's usage object: `input_tokens` leaves out `cache_read_tokens`, and
/// `output_tokens` includes `thinking_tokens`. `None` without an input or
/// output count (a `total_tokens` alone says too little).
pub(crate) fn usage_of(raw: Option<&RawValue>) -> Option<Usage> {
    let m = Members::of(raw?)?;
    let n = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    if input.is_none() && output.is_none() {
        return None;
    }
    Some(
        Usage::cache_apart(
            input.unwrap_or(0),
            output.unwrap_or(0),
            n("cache_read_tokens"),
            None,
        )
        .with_reasoning(n("thinking_tokens")),
    )
}

/// Seconds (a float) as whole milliseconds.
pub(crate) fn seconds_ms(s: LaxF64) -> Option<u64> {
    s.0.filter(|s| *s >= 0.0 && *s < 1e12)
        .map(|s| (s * 1000.0).round() as u64)
}

/// The normalized start fields agy's own argument names carry (it writes
/// them in PascalCase: `CommandLine`, `AbsolutePath`, `TargetFile`…), for
/// what the shared spellings did not find.
pub(crate) fn agy_fields(t: &mut ToolStart<'_>, a: &Members<'_>) {
    let own = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| a.nonempty_str(k))
            .map(|s| Cow::Owned(s.into_owned()))
    };
    if t.command.is_none() {
        t.command = own(&["CommandLine", "Command"]);
    }
    if t.cwd.is_none() {
        t.cwd = own(&["Cwd", "WorkingDirectory"]);
    }
    if t.path.is_none() {
        t.path = own(&[
            "AbsolutePath",
            "TargetFile",
            "FilePath",
            "DirectoryPath",
            "SearchPath",
            "SearchDirectory",
        ]);
    }
    if t.pattern.is_none() {
        t.pattern = own(&["Pattern", "Query"]).filter(|_| matches!(&*t.tool_name, "grep" | "glob"));
    }
    if t.url.is_none() {
        t.url = own(&["Url", "URL"]);
    }
    if t.query.is_none() && !matches!(&*t.tool_name, "grep" | "glob") {
        t.query = own(&["Query", "SearchQuery"]);
    }
    if t.tool_name == "mcp" {
        if t.mcp_server.is_none() {
            t.mcp_server = own(&["ServerName"]);
        }
        if t.mcp_tool.is_none() {
            t.mcp_tool = own(&["ToolName"]);
        }
    }
    if t.description.is_none() {
        t.description = own(&["Description", "Prompt", "Role", "TaskName"]);
    }
}

/// Parser state for one agy stream.
#[derive(Default)]
pub struct AntigravityParser {
    /// The session id given by an `init` or seen on a line.
    hinted: bool,
    /// Tool steps started and not completed: normalized name by step index.
    calls: CallTable<String>,
    /// The text streamed so far by each open `agent_response` step.
    texts: HashMap<i64, String>,
    texts_bytes: usize,
    /// The usage each step reported last (this turn's steps).
    step_usage: HashMap<i64, Usage>,
    /// The `user_input` step last shown (its prompt is echoed once).
    last_prompt_step: Option<i64>,
    /// This process's conversation id (its `init`'s).
    conversation: Option<String>,
    /// The first step index this process showed: above 0, the process
    /// resumed a conversation (`--conversation`) that began before it.
    first_step: Option<i64>,
    /// The conversation's totals when this process began, when an earlier
    /// process of it was read in the same input.
    base: Option<Totals>,
    /// Each conversation's last totals (its last `result`), across
    /// processes: the base of a process that resumes it.
    prior: HashMap<String, Totals>,
    /// The running usage total of this process's previous `result` (agy's
    /// figure): the next turn used what the next result adds to it.
    last_turn_total: Option<Usage>,
    /// The result of this process's latest turn, written as the session's
    /// once the process ends with it (`--input-format stream-json` runs
    /// several turns in one process, one `result` each).
    pending: Option<SessionResult<'static>>,
    /// A turn began after the pending result: unless another result comes,
    /// the process ended mid-turn and the session is incomplete.
    turn_open: bool,
    /// The notice about a resumed conversation's totals was given.
    resumed_told: bool,
}

/// A `result`'s running totals.
#[derive(Clone, Copy, Default)]
struct Totals {
    usage: Option<Usage>,
    duration_ms: Option<u64>,
}

impl AntigravityParser {
    fn step<'a>(&mut self, rec: &'a str, raw: &'a RawValue, out: Out<'_, 'a>) -> io::Result<()> {
        let s: Step<'a> = match serde_json::from_str(raw.get()) {
            Ok(s) => s,
            Err(_) => return keep_unknown(rec, out).map(|_| ()),
        };
        if !self.hinted
            && let Some(id) = s.conversation_id.as_deref().filter(|s| !s.is_empty())
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(id.to_owned())))?;
        }
        let index = s.step_index.0;
        if self.first_step.is_none() {
            self.first_step = index;
        }
        let kind = s.step_type.as_deref().unwrap_or("");
        if self.pending.is_some() && !self.turn_open && kind != "checkpoint" {
            self.turn_open = true;
            self.earlier_turn_failed(out)?;
        }
        let state = s.state.as_deref().unwrap_or("");
        let closing = matches!(state, "DONE" | "ERROR");
        let known = self.step_kind(&s, kind, index, state, closing, out)?;
        if let (Some(u), Some(i)) = (usage_of(s.usage), index) {
            self.step_usage(i, u, out)?;
        }
        if !known {
            // agy's own `unknown` (ask_question) and any new step type.
            keep_unknown(rec, out)?;
        }
        Ok(())
    }

    /// What a step shows, by its type; false for a type this reader does
    /// not know.
    fn step_kind<'a>(
        &mut self,
        s: &Step<'a>,
        kind: &str,
        index: Option<i64>,
        state: &str,
        closing: bool,
        out: Out<'_, 'a>,
    ) -> io::Result<bool> {
        let ev = |kind| Item::Event(Event::new(kind));
        match kind {
            "user_input" => {
                let text = s.text_delta.clone().get().unwrap_or_default();
                if !text.is_empty() && (index.is_none() || self.last_prompt_step != index) {
                    self.last_prompt_step = index;
                    out(ev(Kind::UserMessage { text }))?;
                }
            }
            "agent_response" => {
                self.response_text(index, closing, s.text_delta.clone().get(), out)?
            }
            "tool" | "subagent" => self.tool(s, index, state, out)?,
            _ if s.subagent_info.is_some() => self.tool(s, index, state, out)?,
            "system_message" => {
                if let Some(text) = s.text_delta.clone().get().filter(|t| !t.is_empty()) {
                    out(ev(Kind::UserEvent {
                        what: UserEventKind::Context,
                        text,
                    }))?;
                }
            }
            "error_message" => {
                let message = s
                    .text_delta
                    .clone()
                    .get()
                    .filter(|t| !t.is_empty())
                    .or_else(|| s.error.and_then(error_text))
                    .unwrap_or(Cow::Borrowed("agy reported an error step"));
                out(ev(Kind::Error {
                    message,
                    fatal: false,
                    source: Some(Cow::Borrowed("agent")),
                }))?;
            }
            // A step with nothing to show (a checkpoint of the context).
            "checkpoint" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A step's usage: the first report is an increment; a later report of
    /// the same step adds only what it grew by.
    fn step_usage<'a>(&mut self, index: i64, u: Usage, out: Out<'_, 'a>) -> io::Result<()> {
        let (inc, first) = match self.step_usage.get(&index) {
            Some(prev) => (u.minus(prev), false),
            None => (u, true),
        };
        if self.step_usage.len() >= 4096 {
            self.step_usage.clear();
        }
        self.step_usage.insert(index, u);
        if !first && inc.is_zero() {
            return Ok(());
        }
        out(Item::Event(Event::new(Kind::UsageDelta(inc))))
    }

    /// An `agent_response` step's text: pieces as they come; a closing text
    /// that repeats the pieces already streamed adds only its rest.
    fn response_text<'a>(
        &mut self,
        index: Option<i64>,
        closing: bool,
        text: Option<Cow<'a, str>>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let text = text.filter(|t| !t.is_empty());
        let Some(i) = index else {
            if let Some(text) = text {
                out(Item::Event(Event::new(Kind::TextDelta { text })))?;
            }
            return Ok(());
        };
        if closing {
            let known = self.texts.remove(&i);
            if let Some(k) = &known {
                self.texts_bytes -= k.len();
            }
            let Some(text) = text else { return Ok(()) };
            match known {
                Some(k) if !k.is_empty() && text.starts_with(k.as_str()) => {
                    out(Item::BlockRecap {
                        ts: None,
                        channel: Channel::Text,
                        text,
                        known: k.len(),
                    })?;
                }
                _ => out(Item::Event(Event::new(Kind::TextDelta { text })))?,
            }
            return Ok(());
        }
        let Some(text) = text else { return Ok(()) };
        if self.texts_bytes + text.len() <= TEXT_HOLD {
            self.texts_bytes += text.len();
            self.texts.entry(i).or_default().push_str(&text);
        } else if let Some(k) = self.texts.remove(&i) {
            // Too long to compare: its closing text is taken as a piece.
            self.texts_bytes -= k.len();
        }
        out(Item::Event(Event::new(Kind::TextDelta { text })))
    }

    /// The start of the call a tool (or sub-agent) step describes.
    fn start_of<'a>(s: &Step<'a>, id: &str) -> ToolStart<'a> {
        let info = s.tool_info.and_then(Members::of);
        let sub = s.subagent_info.and_then(Members::of);
        let raw_name = s
            .tool_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .or_else(|| {
                info.as_ref()
                    .and_then(|i| i.nonempty_str("name"))
                    .map(Cow::into_owned)
            })
            .unwrap_or_else(|| {
                if sub.is_some() || s.step_type.as_deref() == Some("subagent") {
                    "subagent".to_owned()
                } else {
                    "unknown".to_owned()
                }
            });
        let name = normalize_tool_name(&raw_name);
        let params = info
            .as_ref()
            .and_then(|i| i.get("parameters").or_else(|| i.get("input")));
        let args = params
            .or(s.subagent_info)
            .map_or_else(json_null, Json::from);
        let mut t = ToolStart::new(Cow::Owned(id.to_owned()), Cow::Owned(name), args);
        if let Some(a) = params.and_then(Members::of) {
            fill_start_owned(&mut t, &a);
            agy_fields(&mut t, &a);
        }
        if t.description.is_none()
            && let Some(first) = sub.as_ref().and_then(|m| m.get("subagents")).and_then(|l| {
                serde_json::from_str::<Vec<&RawValue>>(l.get())
                    .ok()?
                    .into_iter()
                    .next()
            })
            && let Some(m) = Members::of(first)
        {
            t.description = ["role", "type_name", "initial_prompt"]
                .iter()
                .find_map(|k| m.nonempty_str(k))
                .map(|s| Cow::Owned(s.into_owned()));
        }
        t
    }

    fn tool<'a>(
        &mut self,
        s: &Step<'a>,
        index: Option<i64>,
        state: &str,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let id = index.map_or_else(|| "step".to_owned(), |i| i.to_string());
        let closing = matches!(state, "DONE" | "ERROR");
        if !closing {
            if !self.calls.contains(&id) {
                let t = Self::start_of(s, &id);
                self.calls.insert(&id, t.tool_name.to_string());
                out(Item::Event(Event::new(Kind::started(t))))?;
            }
            return Ok(());
        }
        let name = match self.calls.remove(&id) {
            Some(name) => name,
            None => {
                // Seen only at its end: its start comes from the same step.
                let t = Self::start_of(s, &id);
                let name = t.tool_name.to_string();
                out(Item::StartIfNew(Event::new(Kind::started(t))))?;
                name
            }
        };
        let info = s.tool_info.and_then(Members::of);
        let error = info.as_ref().and_then(|i| i.get("error")).or(s.error);
        let ok = state != "ERROR" && error.is_none();
        let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), ok);
        end.duration_ms = seconds_ms(s.duration_seconds);
        let output = info.as_ref().and_then(|i| i.get("output"));
        if end.tool_name == "shell" {
            end.output = output.and_then(raw_as_str).map(Text::from);
        } else {
            end.result = output.map(Json::from);
        }
        if let Some(e) = error {
            end.error = Some(error_text(e).unwrap_or(Cow::Borrowed("the tool failed")));
            if end.result.is_none() {
                end.result = Some(Json::from(e));
            }
        } else if !ok {
            end.error = Some(Cow::Borrowed("the tool step ended in state ERROR"));
        }
        out(Item::Event(Event::new(Kind::completed(end))))
    }

    /// A turn's `result`: calls still open are closed, then the result.
    fn result<'a>(&mut self, raw: &'a RawValue, rec: &'a str, out: Out<'_, 'a>) -> io::Result<()> {
        let r: ResultLine<'a> = match serde_json::from_str(raw.get()) {
            Ok(r) => r,
            Err(_) => return keep_unknown(rec, out).map(|_| ()),
        };
        if !self.hinted
            && let Some(id) = r.conversation_id.as_deref().filter(|s| !s.is_empty())
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(id.to_owned())))?;
        }
        while let Some((id, name)) = self.calls.pop_oldest() {
            let mut end = ToolEnd::new(Cow::Owned(id.to_string()), Cow::Owned(name), false);
            end.cancelled = true;
            end.error = Some(Cow::Borrowed(
                "the turn ended before the step finished (agy was interrupted or failed)",
            ));
            out(Item::Event(Event::new(Kind::completed(end))))?;
        }
        self.texts.clear();
        self.texts_bytes = 0;
        self.step_usage.clear();
        let status = r.status.as_deref().unwrap_or("");
        let ok = status == "SUCCESS";
        let error = r.error.and_then(error_text);
        let error = if ok {
            None
        } else {
            Some(error.unwrap_or_else(|| {
                Cow::Owned(if status.is_empty() {
                    "agy's result has no status".to_owned()
                } else {
                    format!("agy's result has status {status}")
                })
            }))
        };
        let now = Totals {
            usage: usage_of(r.usage),
            duration_ms: seconds_ms(r.duration_seconds),
        };
        let conversation = self
            .conversation
            .clone()
            .or_else(|| r.conversation_id.as_deref().map(str::to_owned))
            .filter(|c| !c.is_empty());
        if let Some(c) = &conversation {
            if self.prior.len() >= 1024 {
                self.prior.clear();
            }
            self.prior.insert(c.clone(), now);
        }
        // agy's figures run over the whole conversation, earlier processes
        // included: this process's share is what they grew by since it began.
        let resumed = self.first_step.is_some_and(|i| i > 0);
        let (usage, duration_ms) = match (resumed, self.base) {
            (_, Some(base)) => (
                now.usage.map(|u| base.usage.map_or(u, |b| u.minus(&b))),
                now.duration_ms
                    .map(|d| base.duration_ms.map_or(d, |b| d.saturating_sub(b))),
            ),
            (true, None) => {
                if let Some(u) = now.usage.filter(|_| !self.resumed_told) {
                    self.resumed_told = true;
                    let message = format!(
                        "this agy process resumed a conversation begun before the input: its \
                         result's totals (input {}, output {}) include earlier processes, so \
                         the session's usage is what its own steps reported",
                        u.input, u.output
                    );
                    out(Item::Event(Event::new(Kind::Error {
                        message: Cow::Owned(message),
                        fatal: false,
                        source: Some(Cow::Borrowed("usage")),
                    })))?;
                }
                (None, None)
            }
            (false, None) => (now.usage, now.duration_ms),
        };
        // The turn used what this result's running total adds to the
        // previous turn's (to the process's start for its first turn). A
        // total below the previous one is read as the turn's own figure.
        let turn = match (now.usage, self.last_turn_total) {
            (Some(n), Some(p)) if n.input >= p.input && n.output >= p.output => Some(n.minus(&p)),
            (Some(n), Some(_)) => Some(n),
            (Some(_), None) => usage,
            (None, _) => None,
        };
        if now.usage.is_some() {
            self.last_turn_total = now.usage;
        }
        if let Some(u) = usage {
            out(Item::UsageTotal { ts: None, usage: u })?;
        }
        out(Item::Event(Event::new(Kind::TurnEnded { usage: turn })))?;
        // The session's result is the process's last turn's, with the
        // process's totals: held until the process ends.
        self.turn_open = false;
        self.pending = Some(SessionResult {
            ok,
            text: r
                .response
                .get()
                .filter(|t| !t.is_empty())
                .map(|t| Cow::Owned(t.into_owned())),
            duration_ms,
            usage,
            cost_usd: None,
            error: error.map(|e| Cow::Owned(e.into_owned())),
        });
        Ok(())
    }

    /// A turn that failed before another began: the session's result will be
    /// the later turn's, so its failure is said now.
    fn earlier_turn_failed(&mut self, out: Out<'_, '_>) -> io::Result<()> {
        let Some(error) = self
            .pending
            .as_ref()
            .filter(|r| !r.ok)
            .and_then(|r| r.error.clone())
        else {
            return Ok(());
        };
        out(Item::Event(Event::new(Kind::Error {
            message: Cow::Owned(format!("a turn failed: {error}")),
            fatal: false,
            source: Some(Cow::Borrowed("agent")),
        })))
    }

    /// The process ended (the input did, or another process began): its
    /// last turn's result is the session's, unless a turn began after it.
    fn end_process(&mut self, out: Out<'_, '_>) -> io::Result<()> {
        let pending = self.pending.take();
        if std::mem::take(&mut self.turn_open) {
            return Ok(());
        }
        match pending {
            Some(r) => out(Item::Event(Event::new(Kind::Result(r)))),
            None => Ok(()),
        }
    }
}

impl Parser for AntigravityParser {
    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        self.end_process(out)
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        match (
            line.event.as_deref(),
            line.init,
            line.step_update,
            line.result,
        ) {
            (Some("init"), init, _, _) => {
                let i: Init<'a> = init
                    .and_then(|i| serde_json::from_str(i.get()).ok())
                    .unwrap_or_default();
                self.end_process(out)?;
                let prior = std::mem::take(&mut self.prior);
                *self = AntigravityParser::default();
                let session_id = line.conversation_id.get().filter(|s| !s.is_empty());
                self.hinted = session_id.is_some();
                self.conversation = session_id.as_deref().map(str::to_owned);
                self.base = session_id.as_deref().and_then(|c| prior.get(c).copied());
                self.prior = prior;
                out(Item::Event(Event::new(Kind::SessionStarted(
                    SessionStart {
                        session_id,
                        dialect: Cow::Borrowed(NAME),
                        model: i.model.get().filter(|s| !s.is_empty()),
                        cwd: i.cwd.get().filter(|s| !s.is_empty()),
                        permission_mode: i.permission_mode.get().filter(|s| !s.is_empty()),
                        ..SessionStart::default()
                    },
                ))))?;
            }
            (Some("step_update"), _, Some(s), _) => self.step(rec, s, out)?,
            (Some("result"), _, _, Some(r)) => self.result(r, rec, out)?,
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}
