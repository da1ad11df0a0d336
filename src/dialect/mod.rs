//! Dialect detection and parsing: one JSON record in, normalized [`Item`]s out.
//!
//! Each agent's stream format is a [`Parser`]. `--from auto` picks one per
//! input from its first JSON records ([`AutoParser`]: records that do not
//! tell are kept until one does, docs/dialects.md#detection). Parsers are stateless about
//! sessions, dedupe and usage arithmetic: they report what the line says,
//! marking snapshots as such ([`Item::Recap`], [`Item::UsageTotal`]), and the
//! transform stage turns that into the event stream (`crate::transform`).

pub mod acp;
pub mod claude;
pub mod codex;
pub mod common;
pub mod cursor;
pub mod cursor_sdk;
pub mod events;
pub mod gemini;
pub mod sessions;

use std::io;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::event::{Event, OutStream, Str, Usage};
use crate::input::Parsed;
use crate::json::LaxStr;

/// Which text channel a recap repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Text,
    Thinking,
}

/// What a parser makes of one record.
// Items are built and consumed one at a time on the hot path; boxing the
// large `Event` variant would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Item<'a> {
    /// A normalized event.
    Event(Event<'a>),
    /// A snapshot repeating text that may already have been streamed as
    /// deltas; the transform emits only what it adds
    /// (docs/events.md#text-rebuilt-once).
    Recap {
        ts: Option<i64>,
        channel: Channel,
        text: Str<'a>,
    },
    /// A whole block repeating one that was streamed as deltas, whose first
    /// `known` bytes those deltas already emitted (a char boundary): the
    /// transform emits the rest (all of it with `--no-dedupe`).
    BlockRecap {
        ts: Option<i64>,
        channel: Channel,
        text: Str<'a>,
        known: usize,
    },
    /// A running total of the session's usage so far; the transform turns
    /// it into an increment.
    UsageTotal { ts: Option<i64>, usage: Usage },
    /// Start a new session with this id without a `session_started` event
    /// (cstream's own events, where an anonymous session's id is explicit).
    Resume { session_id: Str<'a> },
    /// The next session's events were written without recap dedupe (an
    /// events stream made with `--no-dedupe`): pass them on as they are.
    Verbatim,
    /// The session id the source put on its lines, for a session that has no
    /// init event (the first one seen in an input).
    IdHint(Str<'a>),
    /// The whole output of tool call `call_id` so far (a cumulative
    /// snapshot): the transform emits only what it adds to the output already
    /// emitted for that call, or a replacement when it does not extend it
    /// (docs/events.md#cumulative-tool-output).
    OutputSnapshot {
        ts: Option<i64>,
        call_id: Str<'a>,
        stream: OutStream,
        text: Str<'a>,
    },
    /// A `tool_call_started` made from what a completion repeats (its args),
    /// sent just before that completion: the transform passes it on only when
    /// the call is not open, so a completion whose start was cut off (a
    /// capture cut at its head) still gets exactly one start.
    StartIfNew(Event<'a>),
}

impl Item<'_> {
    /// The item's timestamp, where it has one.
    pub fn ts_mut(&mut self) -> Option<&mut Option<i64>> {
        match self {
            Item::Event(e) | Item::StartIfNew(e) => Some(&mut e.ts),
            Item::Recap { ts, .. }
            | Item::BlockRecap { ts, .. }
            | Item::UsageTotal { ts, .. }
            | Item::OutputSnapshot { ts, .. } => Some(ts),
            Item::Resume { .. } | Item::IdHint(_) | Item::Verbatim => None,
        }
    }

    /// Detach the item from the record it borrows from.
    pub fn into_owned(self) -> Item<'static> {
        let own = |s: Str<'_>| -> Str<'static> { std::borrow::Cow::Owned(s.into_owned()) };
        match self {
            Item::Event(e) => Item::Event(e.into_owned()),
            Item::StartIfNew(e) => Item::StartIfNew(e.into_owned()),
            Item::Recap { ts, channel, text } => Item::Recap {
                ts,
                channel,
                text: own(text),
            },
            Item::BlockRecap {
                ts,
                channel,
                text,
                known,
            } => Item::BlockRecap {
                ts,
                channel,
                text: own(text),
                known,
            },
            Item::UsageTotal { ts, usage } => Item::UsageTotal { ts, usage },
            Item::Resume { session_id } => Item::Resume {
                session_id: own(session_id),
            },
            Item::IdHint(s) => Item::IdHint(own(s)),
            Item::Verbatim => Item::Verbatim,
            Item::OutputSnapshot {
                ts,
                call_id,
                stream,
                text,
            } => Item::OutputSnapshot {
                ts,
                call_id: own(call_id),
                stream,
                text: own(text),
            },
        }
    }
}

/// Receives the items parsed from a record, in order.
pub type Out<'o, 'a> = &'o mut dyn FnMut(Item<'a>) -> io::Result<()>;

/// A dialect's line parser.
pub trait Parser {
    /// Parse one record and emit its items. `Incomplete`/`Invalid` mean the
    /// record was not JSON, and nothing was emitted.
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed>;

    /// The input ended: emit anything still held back (a parser that waits
    /// for the next line to decide, like Codex's repeated failure message).
    fn finish(&mut self, _out: Out<'_, 'static>) -> io::Result<()> {
        Ok(())
    }
}

/// Read a record as a dialect's line type `T`, or say what the record is
/// when it is not one: a value cut short waits for the lines that complete
/// it, valid JSON of another shape is kept as `unknown` (emitted here), and
/// anything else is not JSON. Every parser reads its lines through this, so
/// the three outcomes mean the same in every dialect.
pub(crate) fn read_line<'a, T: Deserialize<'a>>(
    rec: &'a str,
    out: Out<'_, 'a>,
) -> io::Result<Result<T, Parsed>> {
    match serde_json::from_str(rec) {
        Ok(l) => Ok(Ok(l)),
        Err(e) if e.is_eof() => Ok(Err(Parsed::Incomplete)),
        Err(e) if e.is_data() => keep_unknown(rec, out).map(Err),
        Err(_) => Ok(Err(Parsed::Invalid)),
    }
}

/// Keep a valid JSON record that no rule understood as an `unknown` event.
pub(crate) fn keep_unknown<'a>(rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
    match serde_json::from_str::<&serde_json::value::RawValue>(rec) {
        Ok(raw) => {
            out(Item::Event(Event::new(crate::event::Kind::Unknown {
                raw: crate::event::Json::from(raw),
            })))?;
            Ok(Parsed::Done)
        }
        Err(e) if e.is_eof() => Ok(Parsed::Incomplete),
        Err(_) => Ok(Parsed::Invalid),
    }
}

/// The input dialects (`--from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// cursor-agent `--output-format stream-json`.
    Cursor,
    /// Claude Code `-p --output-format stream-json --verbose`.
    Claude,
    /// Codex `exec --json` (and the pre-0.44 `{"id","msg"}` form).
    Codex,
    /// Gemini CLI `--output-format stream-json`.
    Gemini,
    /// Agent Client Protocol traffic (`session/update` notifications).
    Acp,
    /// Cursor SDK `InteractionUpdate` deltas or its `SDKMessage` run stream.
    CursorSdk,
    /// cstream's own `--to events` output.
    Events,
    /// Claude Code's saved project transcripts (`~/.claude/projects`).
    ClaudeProject,
}

impl Dialect {
    /// Every dialect, in the order `--help` lists them (after `auto`). The
    /// command line, the man page, the completions and the tests derive
    /// from this list.
    pub const ALL: [Dialect; 8] = [
        Dialect::Cursor,
        Dialect::Claude,
        Dialect::Codex,
        Dialect::Gemini,
        Dialect::Acp,
        Dialect::CursorSdk,
        Dialect::Events,
        Dialect::ClaudeProject,
    ];

    /// One line for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Dialect::Cursor => "cursor-agent --output-format stream-json",
            Dialect::Claude => "Claude Code -p --output-format stream-json --verbose",
            Dialect::Codex => "Codex exec --json",
            Dialect::Gemini => "Gemini CLI --output-format stream-json",
            Dialect::Acp => "Agent Client Protocol traffic (JSON-RPC session/update)",
            Dialect::CursorSdk => "Cursor SDK InteractionUpdate deltas or SDKMessage run stream",
            Dialect::Events => "cstream's own --to events output",
            Dialect::ClaudeProject => {
                "Claude Code saved transcripts (~/.claude/projects/*/*.jsonl)"
            }
        }
    }

    /// The dialect called `name` (as `--from` spells it).
    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The name `session_started.dialect` and `--from` use.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Cursor => "cursor",
            Dialect::Claude => "claude",
            Dialect::Codex => "codex",
            Dialect::Gemini => "gemini",
            Dialect::Acp => "acp",
            Dialect::CursorSdk => "cursor-sdk",
            Dialect::Events => "events",
            Dialect::ClaudeProject => sessions::claude_project::NAME,
        }
    }

    /// A fresh parser for one input.
    pub fn parser(self) -> Box<dyn Parser> {
        match self {
            Dialect::Cursor => Box::new(cursor::CursorParser::default()),
            Dialect::Claude => Box::new(claude::ClaudeParser::default()),
            Dialect::Codex => Box::new(codex::CodexParser::default()),
            Dialect::Gemini => Box::new(gemini::GeminiParser::default()),
            Dialect::Acp => Box::new(acp::AcpParser::default()),
            Dialect::CursorSdk => Box::new(cursor_sdk::CursorSdkParser::default()),
            Dialect::Events => Box::new(events::EventsParser::default()),
            Dialect::ClaudeProject => {
                Box::new(sessions::claude_project::ClaudeProjectParser::default())
            }
        }
    }
}

/// Present-or-absent marker for a key whose value detection ignores.
type Has = Option<IgnoredAny>;

/// The keys detection looks at (one borrowed pass over the record).
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    subtype: LaxStr<'a>,
    #[serde(rename = "sessionId", default)]
    session_id_camel: Has,
    #[serde(default)]
    session_id: Has,
    #[serde(default)]
    jsonrpc: Has,
    #[serde(rename = "sessionUpdate", default)]
    session_update: Has,
    #[serde(borrow, default)]
    method: LaxStr<'a>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    msg: Option<&'a RawValue>,
    #[serde(default)]
    agent_id: Has,
    #[serde(default)]
    run_id: Has,
    #[serde(rename = "agentId", default)]
    agent_id_camel: Has,
    #[serde(rename = "runId", default)]
    run_id_camel: Has,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(default)]
    timestamp_ms: Has,
    #[serde(default)]
    model_call_id: Has,
    #[serde(default)]
    call_id: Has,
    #[serde(default)]
    tool_call: Has,
    #[serde(rename = "apiKeySource", default)]
    api_key_source: Has,
    #[serde(rename = "permissionMode", default)]
    permission_mode: Has,
    // Keys only Claude Code's lines carry.
    #[serde(default)]
    claude_code_version: Has,
    #[serde(default)]
    tools: Has,
    #[serde(default)]
    mcp_servers: Has,
    #[serde(default)]
    uuid: Has,
    #[serde(default)]
    output_style: Has,
    #[serde(default)]
    slash_commands: Has,
    #[serde(default)]
    agents: Has,
    #[serde(default)]
    skills: Has,
    #[serde(default)]
    plugins: Has,
    #[serde(default)]
    parent_tool_use_id: Has,
    #[serde(default)]
    tool_use_result: Has,
    #[serde(default)]
    num_turns: Has,
    #[serde(default)]
    total_cost_usd: Has,
    #[serde(rename = "modelUsage", default)]
    model_usage: Has,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    // Gemini CLI.
    #[serde(default)]
    severity: Has,
    #[serde(default)]
    stats: Has,
    #[serde(default)]
    status: Has,
    #[serde(default)]
    summary: Has,
    // Saved session files.
    #[serde(rename = "parentUuid", default)]
    parent_uuid: sessions::Present,
    #[serde(rename = "leafUuid", default)]
    leaf_uuid: Has,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Has,
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

/// The kebab-case `type`s of the Cursor SDK's `InteractionUpdate`.
const CURSOR_SDK_TYPES: &[&str] = &[
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

/// What one record says about its dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// The record shows which agent wrote it.
    Is(Dialect),
    /// Valid JSON, but shared by several dialects (or unknown to all).
    Undecided,
    /// Not a complete JSON value yet (it may continue on the next line).
    Incomplete,
    /// Not JSON.
    Invalid,
}

/// Tell the dialect from one JSON object, or `None` when it cannot be told.
pub fn detect(rec: &str) -> Option<Dialect> {
    match detect_record(rec) {
        Detected::Is(d) => Some(d),
        _ => None,
    }
}

/// The detection table (docs/dialects.md#detection). No single key decides
/// where dialects share a shape: Claude Code and cursor-agent both write
/// `system`/`init`, `assistant` and `result` lines, so those are told apart
/// by any of several keys only one of them writes, and a line with none of
/// them is left undecided for the next lines to settle.
pub fn detect_record(rec: &str) -> Detected {
    let p: Probe = match serde_json::from_str(rec) {
        Ok(p) => p,
        Err(e) if e.is_eof() => return Detected::Incomplete,
        Err(e) if e.is_data() => {
            // Valid JSON that is not an object (or has a key of a surprising
            // shape): nothing to tell from it.
            return if serde_json::from_str::<IgnoredAny>(rec).is_ok() {
                Detected::Undecided
            } else {
                Detected::Invalid
            };
        }
        Err(_) => return Detected::Invalid,
    };
    use Dialect::*;
    let ty = p.ty.as_deref().unwrap_or("");
    let sub = p.subtype.as_deref().unwrap_or("");
    if p.jsonrpc.is_some()
        || p.session_update.is_some()
        || p.method
            .as_deref()
            .is_some_and(|m| m.starts_with("session/"))
    {
        return Detected::Is(Acp);
    }
    if let Some(d) = sessions_rule(&p, ty) {
        return Detected::Is(d);
    }
    if p.session_id_camel.is_some() && events::is_event_type(ty) {
        return Detected::Is(Events);
    }
    if ty.contains('.') {
        return Detected::Is(Codex);
    }
    if let Some(m) = p.msg
        && m.get().starts_with('{')
    {
        return Detected::Is(Codex);
    }
    if CURSOR_SDK_TYPES.contains(&ty) || (ty == "summary" && p.summary.is_some()) {
        return Detected::Is(CursorSdk);
    }
    if (p.agent_id.is_some() && p.run_id.is_some())
        || (p.agent_id_camel.is_some() && p.run_id_camel.is_some())
    {
        return Detected::Is(CursorSdk);
    }
    let iso_ts = p
        .timestamp
        .as_deref()
        .is_some_and(|t| crate::time::iso_ms(t).is_some());
    let claude_marks = [
        p.claude_code_version.is_some(),
        p.tools.is_some(),
        p.mcp_servers.is_some(),
        p.uuid.is_some(),
        p.output_style.is_some(),
        p.slash_commands.is_some(),
        p.agents.is_some(),
        p.skills.is_some(),
        p.plugins.is_some(),
        p.parent_tool_use_id.is_some(),
        p.tool_use_result.is_some(),
        p.num_turns.is_some(),
        p.total_cost_usd.is_some(),
        p.model_usage.is_some(),
    ]
    .into_iter()
    .filter(|b| *b)
    .count();
    let cursor_marks = p.timestamp_ms.is_some() || p.model_call_id.is_some();
    match ty {
        "init" if iso_ts || p.session_id.is_some() => Detected::Is(Gemini),
        "message" | "tool_use" | "tool_result" if iso_ts => Detected::Is(Gemini),
        "error" if p.severity.is_some() => Detected::Is(Gemini),
        "result" if p.stats.is_some() || (p.status.is_some() && p.subtype.0.is_none()) => {
            Detected::Is(Gemini)
        }
        "stream_event"
        | "control_request"
        | "control_response"
        | "control_cancel_request"
        | "rate_limit_event" => Detected::Is(Claude),
        "system" => match sub {
            _ if claude_marks > 0 => Detected::Is(Claude),
            "init" if p.api_key_source.is_some() || p.permission_mode.is_some() => {
                Detected::Is(Cursor)
            }
            "hook_started" | "hook_progress" | "hook_response" | "status" | "compact_boundary"
            | "thinking_tokens" | "api_retry" => Detected::Is(Claude),
            _ => Detected::Undecided,
        },
        "assistant" | "user" => {
            let claude_msg = p
                .message
                .and_then(|m| serde_json::from_str::<MessageProbe>(m.get()).ok())
                .is_some_and(|m| {
                    m.id.is_some()
                        || m.model.is_some()
                        || m.usage.is_some()
                        || m.stop_reason.is_some()
                });
            if claude_marks > 0 || claude_msg || iso_ts {
                Detected::Is(Claude)
            } else if cursor_marks {
                Detected::Is(Cursor)
            } else {
                Detected::Undecided
            }
        }
        "thinking" | "tool_call"
            if cursor_marks || p.call_id.is_some() || p.tool_call.is_some() =>
        {
            Detected::Is(Cursor)
        }
        "result" => {
            if claude_marks > 0 {
                Detected::Is(Claude)
            } else if p.result.is_some() || sub == "success" || sub.starts_with("error") {
                // cursor-agent's result has neither Claude's cost nor turns.
                Detected::Is(Cursor)
            } else {
                Detected::Undecided
            }
        }
        _ => Detected::Undecided,
    }
}

/// The saved session files: a Claude Code transcript's records carry their
/// place in the conversation's chain (`parentUuid`, `isSidechain`) or are
/// its bookkeeping (`summary` with `leafUuid`, file snapshots, queue
/// operations), which no live stream writes.
fn sessions_rule(p: &Probe<'_>, ty: &str) -> Option<Dialect> {
    let claude_project = p.parent_uuid.0
        || p.leaf_uuid.is_some()
        || p.is_sidechain.is_some()
        || matches!(ty, "file-history-snapshot" | "queue-operation");
    claude_project.then_some(Dialect::ClaudeProject)
}

/// A parser that picks its dialect from the first records it sees.
///
/// Records that do not tell (a `system` init shortened to keys both
/// cursor-agent and Claude Code write, a `user` echo…) are kept, up to
/// [`DETECT_RECORDS`], and read by the dialect a later record shows; if none
/// does, cursor-agent is assumed (and [`AutoParser::undecided`] says so).
pub struct AutoParser {
    fixed: Option<Dialect>,
    inner: Option<Box<dyn Parser>>,
    /// Undecided records, kept until the dialect is known.
    held: Vec<String>,
    held_bytes: usize,
    /// The dialect in use, once known.
    pub chosen: Option<Dialect>,
    /// Set when detection failed and cursor-agent was assumed (for one warning).
    pub guessed: bool,
}

/// How many undecided JSON records detection keeps before it assumes cursor-agent.
pub const DETECT_RECORDS: usize = 8;
/// …and how many bytes of them.
pub const DETECT_BYTES: usize = 4 * 1024 * 1024;

impl AutoParser {
    /// `fixed`: the dialect given with `--from`, or `None` for `auto`.
    pub fn new(fixed: Option<Dialect>) -> Self {
        AutoParser {
            fixed,
            inner: None,
            held: Vec::new(),
            held_bytes: 0,
            chosen: fixed,
            guessed: false,
        }
    }

    /// Start over for a new input.
    pub fn reset(&mut self) {
        *self = AutoParser::new(self.fixed);
    }

    /// True when JSON was read but its dialect could not be told.
    pub fn undecided(&self) -> bool {
        self.guessed
    }

    /// Settle on `d` and read the records kept so far with it.
    fn choose<'a>(&mut self, d: Dialect, out: Out<'_, 'a>) -> io::Result<()> {
        self.chosen = Some(d);
        let mut p = d.parser();
        let held = std::mem::take(&mut self.held);
        self.held_bytes = 0;
        for rec in &held {
            // The kept records do not live as long as the current one: what
            // they produce is detached from them.
            p.parse(rec, &mut |i| out(i.into_owned()))?;
        }
        self.inner = Some(p);
        Ok(())
    }
}

impl Parser for AutoParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        if self.inner.is_none() {
            let d = match self.fixed {
                Some(d) => d,
                None => match detect_record(rec) {
                    Detected::Is(d) => d,
                    Detected::Incomplete => return Ok(Parsed::Incomplete),
                    Detected::Invalid => return Ok(Parsed::Invalid),
                    Detected::Undecided => {
                        self.held_bytes += rec.len();
                        self.held.push(rec.to_owned());
                        if self.held.len() >= DETECT_RECORDS || self.held_bytes > DETECT_BYTES {
                            self.guessed = true;
                            self.choose(Dialect::Cursor, out)?;
                        }
                        return Ok(Parsed::Done);
                    }
                },
            };
            self.choose(d, out)?;
        }
        self.inner.as_mut().expect("set above").parse(rec, out)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if self.inner.is_none() && !self.held.is_empty() {
            self.guessed = true;
            self.choose(Dialect::Cursor, out)?;
        }
        match self.inner.as_mut() {
            Some(p) => p.finish(out),
            None => Ok(()),
        }
    }
}
