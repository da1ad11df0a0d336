//! Dialect detection and parsing: one JSON record in, normalized [`Item`]s out.
//!
//! Each agent's stream format is a [`Parser`]. `--from auto` picks one per
//! input from its first JSON records ([`AutoParser`]: records that do not
//! tell are kept until one does, docs/dialects.md#detection). Parsers are stateless about
//! sessions, dedupe and usage arithmetic: they report what the line says,
//! marking snapshots as such ([`Item::Recap`], [`Item::UsageTotal`]), and the
//! transform stage turns that into the event stream (`crate::transform`).

pub mod acp;
pub mod antigravity;
pub(crate) mod archive;
pub mod claude;
pub mod codex;
pub mod common;
pub mod copilot;
pub mod cursor;
pub mod cursor_sdk;
pub mod events;
pub(crate) mod foreign;
pub mod gemini;
pub mod opencode;
pub mod pi;
pub(crate) mod tape;

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::event::{Event, OutStream, Reads, Str, Usage};
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
    /// A problem with the input that the parser worked around (the run
    /// reports it as a warning at the record's line; nothing is emitted).
    Warning(Str<'a>),
    /// The record, of the type named, is one the reader does not understand
    /// (docs/dialects.md#drift): counted at the record's line by the run. A
    /// reader that keeps records to emit later says so when it reads them,
    /// and declares [`Parser::counts_drift`] so that the `unknown` events it
    /// emits then are not counted again.
    NotUnderstood(Str<'a>),
    /// A `tool_call_started` made from what a completion repeats (its args),
    /// sent just before that completion: the transform passes it on only when
    /// the call is not open, so a completion whose start was cut off (a
    /// capture cut at its head) still gets exactly one start.
    StartIfNew(Event<'a>),
    /// The open session's title, learned after its `session_started` was
    /// emitted: only under [`Reads::Figures`](crate::event::Reads), for
    /// [`Sink::title`](crate::event::Sink::title).
    Title(Str<'a>),
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
            Item::Resume { .. }
            | Item::IdHint(_)
            | Item::Verbatim
            | Item::Warning(_)
            | Item::NotUnderstood(_)
            | Item::Title(_) => None,
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
            Item::Warning(s) => Item::Warning(own(s)),
            Item::NotUnderstood(s) => Item::NotUnderstood(own(s)),
            Item::Title(s) => Item::Title(own(s)),
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

    /// Parse a record whose lone surrogate escapes the framer has not
    /// replaced yet and whose bytes nobody has validated as UTF-8, by a
    /// path that sees every escape of it: `Some` when that path read the
    /// record (and found no surrogate escape in it, and checked that it is
    /// valid UTF-8), `None`, with nothing emitted and no state changed, to
    /// have the record validated, repaired and given to [`Parser::parse`]
    /// (crate::input::Handler::record_checked). The default reads nothing.
    fn parse_checked<'a>(
        &mut self,
        _rec: &'a [u8],
        _out: Out<'_, 'a>,
    ) -> io::Result<Option<Parsed>> {
        Ok(None)
    }

    /// Whether [`Parser::parse_checked`] reads anything: for a reader that
    /// does not, the framer goes straight to validating each record for
    /// [`Parser::parse`].
    fn reads_checked(&self) -> bool {
        false
    }

    /// The input ended: emit anything still held back (a parser that waits
    /// for the next line to decide, like Codex's repeated failure message).
    fn finish(&mut self, _out: Out<'_, 'static>) -> io::Result<()> {
        Ok(())
    }

    /// The input is the file at `path` (not called for standard input).
    /// Saved sessions keep parts of themselves in files beside the
    /// transcript; the stream dialects ignore this.
    fn set_source(&mut self, _path: &Path) {}

    /// The input is one JSON document whose array is read element by
    /// element ([`Dialect::streams_member`]): a snapshot, whose elements are
    /// never written again, so a reader need not hold them.
    fn set_document(&mut self) {}

    /// What the sink needs read ([`Reads`]): with [`Reads::Figures`] a
    /// reader may skip the texts no figure is made of.
    fn set_reads(&mut self, _reads: Reads) {}

    /// The input is `text` (`None`: no longer): until this is called again,
    /// records handed to [`Parser::parse`] that lie in it are slices of it,
    /// which is not changed meanwhile, so a reader that holds records back
    /// may keep where they are instead of copies.
    fn set_text(&mut self, _text: Option<crate::input::WholeText>) {}

    /// The reader reports the records it does not understand itself, with
    /// [`Item::NotUnderstood`] at their lines, so the `unknown` events it
    /// emits are not counted again (a reader that holds its records until
    /// the end, where an event's line is the last one).
    fn counts_drift(&self) -> bool {
        false
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

/// What a record that no rule understood is, for the drift report
/// (docs/dialects.md#drift): its `type` (with the `subtype`, or a Codex
/// `payload`'s `type`, after a `/`), else its `event`, `kind` or `method`,
/// else its keys. Read only for records kept as `unknown`, so off the hot
/// path.
pub fn record_kind(raw: &str) -> String {
    use serde_json::Value;
    let Ok(Value::Object(m)) = serde_json::from_str::<Value>(raw) else {
        return match serde_json::from_str::<Value>(raw) {
            Ok(Value::Array(_)) => "(an array)".to_owned(),
            _ => "(not an object)".to_owned(),
        };
    };
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    for key in ["type", "event", "kind", "method", "record_type"] {
        if let Some(t) = s(m.get(key)) {
            let payload = m.get("payload");
            let sub = s(m.get("subtype"))
                .or_else(|| s(payload.and_then(|p| p.get("type"))))
                // Antigravity's `{"event": "step_update", "step_update": {"step_type": …}}`.
                .or_else(|| s(m.get(t.as_str()).and_then(|b| b.get("step_type"))));
            // Codex's `item_completed` names its item's type too.
            let item = s(payload
                .and_then(|p| p.get("item"))
                .and_then(|i| i.get("type")));
            return match (sub, item) {
                (Some(sub), Some(item)) => format!("{t}/{sub}/{item}"),
                (Some(sub), None) => format!("{t}/{sub}"),
                (None, _) => t,
            };
        }
    }
    let mut keys: Vec<&str> = m.keys().map(String::as_str).take(4).collect();
    if m.len() > 4 {
        keys.push("…");
    }
    format!("{{{}}}", keys.join(", "))
}

/// The input dialects (`--from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Codex's saved rollouts (`~/.codex/sessions`).
    CodexRollout,
    /// Gemini CLI's saved chats (`~/.gemini/tmp/*/chats`).
    GeminiChat,
    /// cursor-agent's saved transcripts (`~/.cursor/projects/*/agent-transcripts`).
    CursorTranscript,
    /// Pi's saved sessions (`~/.pi/agent/sessions`).
    Pi,
    /// GitHub Copilot CLI: saved sessions (`~/.copilot/session-state`) and
    /// `copilot -p --output-format json`.
    Copilot,
    /// OpenCode: `run --format json`, `export` documents and its SQLite
    /// session store.
    OpenCode,
    /// Antigravity CLI `agy -p … --output-format stream-json`.
    Antigravity,
    /// Antigravity CLI's saved transcripts
    /// (`~/.gemini/antigravity-cli/brain/*/.system_generated/logs/transcript.jsonl`).
    AntigravityTranscript,
}

impl Dialect {
    /// Every dialect, in the order `--help` lists them (after `auto`). The
    /// command line, the man page, the completions and the tests derive
    /// from this list.
    pub const ALL: [Dialect; 16] = [
        Dialect::Cursor,
        Dialect::Claude,
        Dialect::Codex,
        Dialect::Gemini,
        Dialect::Acp,
        Dialect::CursorSdk,
        Dialect::Events,
        Dialect::ClaudeProject,
        Dialect::CodexRollout,
        Dialect::GeminiChat,
        Dialect::CursorTranscript,
        Dialect::Pi,
        Dialect::Copilot,
        Dialect::OpenCode,
        Dialect::Antigravity,
        Dialect::AntigravityTranscript,
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
            Dialect::CodexRollout => {
                "Codex saved rollouts (~/.codex/sessions/**/rollout-*.jsonl, .jsonl.zst)"
            }
            Dialect::GeminiChat => "Gemini CLI saved chats (~/.gemini/tmp/*/chats/session-*.json)",
            Dialect::CursorTranscript => {
                "cursor-agent saved transcripts (~/.cursor/projects/*/agent-transcripts/*/*.jsonl)"
            }
            Dialect::Pi => "Pi saved sessions (~/.pi/agent/sessions/*/*.jsonl)",
            Dialect::Copilot => {
                "GitHub Copilot CLI saved sessions (~/.copilot/session-state/*/events.jsonl) or -p --output-format json"
            }
            Dialect::OpenCode => {
                "OpenCode run --format json, export JSON, or its opencode.db store"
            }
            Dialect::Antigravity => "Antigravity CLI agy -p --output-format stream-json",
            Dialect::AntigravityTranscript => {
                "Antigravity CLI saved transcripts (~/.gemini/antigravity-cli/brain/*/.system_generated/logs/transcript.jsonl)"
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
            Dialect::ClaudeProject => claude::project::NAME,
            Dialect::CodexRollout => codex::rollout::NAME,
            Dialect::GeminiChat => gemini::chat::NAME,
            Dialect::CursorTranscript => cursor::transcript::NAME,
            Dialect::Pi => pi::NAME,
            Dialect::Copilot => copilot::NAME,
            Dialect::OpenCode => opencode::NAME,
            Dialect::Antigravity => antigravity::NAME,
            Dialect::AntigravityTranscript => antigravity::transcript::NAME,
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
            Dialect::ClaudeProject => Box::new(claude::project::ClaudeProjectParser::default()),
            Dialect::CodexRollout => Box::new(codex::rollout::CodexRolloutParser::default()),
            Dialect::GeminiChat => Box::new(gemini::chat::GeminiChatParser::default()),
            Dialect::CursorTranscript => {
                Box::new(cursor::transcript::CursorTranscriptParser::default())
            }
            Dialect::Pi => Box::new(pi::PiParser::default()),
            Dialect::Copilot => Box::new(copilot::CopilotParser::default()),
            Dialect::OpenCode => Box::new(opencode::OpenCodeParser::default()),
            Dialect::Antigravity => Box::new(antigravity::AntigravityParser::default()),
            Dialect::AntigravityTranscript => {
                Box::new(antigravity::transcript::AntigravityTranscriptParser::default())
            }
        }
    }

    /// A file of this dialect is one JSON document whose top-level member
    /// `key` is an array to read element by element (the input stage's
    /// document framing), rather than a stream of records.
    pub fn streams_member(self, key: &[u8]) -> bool {
        match self {
            Dialect::GeminiChat => gemini::chat::streams_member(key),
            Dialect::OpenCode => opencode::streams_member(key),
            _ => false,
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
    parent_uuid: common::Present,
    #[serde(rename = "leafUuid", default)]
    leaf_uuid: Has,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Has,
    #[serde(default)]
    payload: Has,
    #[serde(default)]
    record_type: Has,
    #[serde(default)]
    instructions: Has,
    #[serde(default)]
    id: Has,
    #[serde(rename = "projectHash", default)]
    project_hash: Has,
    #[serde(default)]
    role: Has,
    // Pi.
    #[serde(default)]
    version: Has,
    #[serde(default)]
    cwd: Has,
    #[serde(rename = "parentId", default)]
    parent_id: common::Present,
    // GitHub Copilot CLI.
    #[serde(default)]
    data: Has,
    #[serde(rename = "exitCode", default)]
    exit_code: Has,
    // OpenCode.
    #[serde(rename = "sessionID", default)]
    session_id_upper: Has,
    #[serde(default)]
    part: Has,
    #[serde(borrow, default)]
    info: Option<&'a RawValue>,
    #[serde(default)]
    parts: Has,
    // Antigravity CLI.
    #[serde(borrow, default)]
    event: LaxStr<'a>,
    #[serde(default)]
    step_update: Has,
    #[serde(default)]
    init: Has,
    #[serde(default)]
    conversation_id: Has,
    #[serde(borrow, default)]
    source: LaxStr<'a>,
    #[serde(borrow, default)]
    created_at: LaxStr<'a>,
}

impl Probe<'_> {
    /// The record's `type` (empty when it has none, or not a string).
    fn ty(&self) -> &str {
        self.ty.as_deref().unwrap_or("")
    }

    /// The record's `subtype` (empty when it has none).
    fn sub(&self) -> &str {
        self.subtype.as_deref().unwrap_or("")
    }

    /// The record has an ISO 8601 `timestamp` (Gemini CLI's and Claude
    /// Code's lines; cursor-agent writes `timestamp_ms`).
    fn iso_ts(&self) -> bool {
        self.timestamp
            .as_deref()
            .is_some_and(|t| crate::time::iso_ms(t).is_some())
    }
}

/// A detection rule: true when a record is surely its dialect's.
type Rule = fn(&Probe<'_>) -> bool;

/// The detection table (docs/dialects.md#detection), tried in this order:
/// the first rule that claims a record decides its input's dialect, and a
/// record no rule claims is undecided. Each rule sits beside its dialect's
/// parser and only says yes to what that dialect alone writes; where two
/// dialects share a shape, the order settles it: Claude Code's rule comes
/// before cursor-agent's, since a line of the shapes they share is
/// cursor-agent's only when it has none of Claude Code's keys.
const DETECTION: &[(Dialect, Rule)] = &[
    (Dialect::Acp, acp::sniff),
    (Dialect::Antigravity, antigravity::sniff),
    (
        Dialect::AntigravityTranscript,
        antigravity::transcript::sniff,
    ),
    (Dialect::ClaudeProject, claude::project::sniff),
    (Dialect::CodexRollout, codex::rollout::sniff),
    (Dialect::GeminiChat, gemini::chat::sniff),
    (Dialect::CursorTranscript, cursor::transcript::sniff),
    (Dialect::Pi, pi::sniff),
    (Dialect::Copilot, copilot::sniff),
    (Dialect::OpenCode, opencode::sniff),
    (Dialect::Events, events::sniff),
    (Dialect::Codex, codex::sniff),
    (Dialect::CursorSdk, cursor_sdk::sniff),
    (Dialect::Gemini, gemini::sniff),
    (Dialect::Claude, claude::sniff),
    (Dialect::Cursor, cursor::sniff),
];

/// What one record says about its dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    /// The record shows which agent wrote it.
    Is(Dialect),
    /// The record is from an agent cstream does not read (named).
    Foreign(&'static str),
    /// Valid JSON, but shared by several dialects (or unknown to all).
    Undecided,
    /// Not a complete JSON value yet (it may continue on the next line).
    Incomplete,
    /// Not JSON.
    Invalid,
}

/// What `rec` says about its dialect: the first rule of the `DETECTION` table
/// that claims it. No single key decides where dialects share a shape
/// (Claude Code and cursor-agent both write `system`/`init`, `assistant`
/// and `result` lines): a line with none of the keys that tell them apart
/// is left undecided for the next lines to settle.
pub fn detect_record(rec: &str) -> Detected {
    // First: agents whose lines look like a supported one's.
    if let Some(agent) = foreign::sniff(rec) {
        return Detected::Foreign(agent);
    }
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
    match DETECTION.iter().find(|(_, rule)| rule(&p)) {
        Some(&(d, _)) => Detected::Is(d),
        None => Detected::Undecided,
    }
}

/// Receives the items read from an input, each with the input line of the
/// record it came from (a record that spans lines: its first line).
pub type LineOut<'o, 'a> = &'o mut dyn FnMut(u64, &mut Item<'a>) -> io::Result<()>;

/// A parser that picks its dialect from the first records it sees, and
/// says which input line each item comes from.
///
/// Records that do not tell (a `system` init shortened to keys both
/// cursor-agent and Claude Code write, a `user` echo…) are kept, up to
/// [`DETECT_RECORDS`], with their line numbers, and read by the dialect a
/// later record shows; if none does, cursor-agent is assumed (and
/// [`AutoParser::guessed_at`] says so). What they give is reported at their
/// own lines, so a warning about one names it, not the line that settled
/// the dialect.
pub struct AutoParser {
    fixed: Option<Dialect>,
    inner: Option<Box<dyn Parser>>,
    /// Undecided records and their lines, kept until the dialect is known.
    held: Vec<(u64, String)>,
    held_bytes: usize,
    /// The line of the last record read (what a parser still holds at the
    /// end came from there or before).
    last_line: u64,
    /// The dialect in use, once known.
    pub chosen: Option<Dialect>,
    /// When detection failed and cursor-agent was assumed: the line of the
    /// first record that was read so (for one warning).
    guessed: Option<u64>,
    /// The file being read, when it is one ([`Parser::set_source`]).
    source: Option<PathBuf>,
    /// The input is a document read element by element ([`Parser::set_document`]).
    document: bool,
    /// The input is from an agent cstream does not read: which, and the
    /// line that showed it. Nothing of it is read.
    foreign: Option<(&'static str, u64)>,
    /// With `--from`: the first records are still run through detection
    /// (how many undecided ones so far), to tell a wrong `--from`.
    forced_undecided: usize,
    forced_checked: bool,
    /// The dialect the first records of a `--from` input showed, when it
    /// is another one (taken once by [`AutoParser::take_mismatch`]).
    mismatch: Option<Dialect>,
    /// What the sink needs read ([`Parser::set_reads`]).
    pub reads: Reads,
    /// The input's whole text, when it was read whole ([`Parser::set_text`]).
    text: Option<crate::input::WholeText>,
    /// The parser in use reads records offered before the framer's check
    /// for lone surrogate escapes ([`Parser::reads_checked`]): asked per
    /// record, so kept here rather than asked of the parser each time.
    checked: bool,
    /// A record of the text whose dialect is already known (its address,
    /// its length, the dialect): the sniff of a walked file detected it
    /// ([`AutoParser::told`]).
    told: Option<(usize, usize, Dialect)>,
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
            last_line: 0,
            chosen: fixed,
            guessed: None,
            source: None,
            foreign: None,
            document: false,
            forced_undecided: 0,
            forced_checked: false,
            mismatch: None,
            reads: Reads::Whole,
            text: None,
            checked: false,
            told: None,
        }
    }

    /// The input is `text` (`None`: no longer), for the parser now or when
    /// it is chosen ([`Parser::set_text`]).
    pub fn set_text(&mut self, text: Option<crate::input::WholeText>) {
        if let Some(p) = self.inner.as_mut() {
            p.set_text(text.clone());
        }
        if text.is_none() {
            self.told = None;
        }
        self.text = text;
    }

    /// The record at address `at`, `len` bytes long, of the text now set
    /// ([`AutoParser::set_text`]) is of dialect `d`: detection tells that
    /// record so without reading it again. Kept until the text is let go
    /// of; the text is not changed meanwhile, so a record handed over at
    /// that place is those very bytes.
    pub fn told(&mut self, at: usize, len: usize, d: Dialect) {
        if self.text.is_some() {
            self.told = Some((at, len, d));
        }
    }

    /// What detection makes of `rec`: what [`AutoParser::told`] said of
    /// it, or [`detect_record`].
    fn detect(&self, rec: &str) -> Detected {
        match self.told {
            Some((at, len, d)) if at == rec.as_ptr() as usize && len == rec.len() => {
                Detected::Is(d)
            }
            _ => detect_record(rec),
        }
    }

    /// With `--from`: the dialect the input's first records belong to,
    /// when it is not the one forced. Given once per input, as soon as a
    /// record shows it.
    pub fn take_mismatch(&mut self) -> Option<Dialect> {
        self.mismatch.take()
    }

    /// With `--from d`: run detection over the first records until one of
    /// them tells a dialect (or [`DETECT_RECORDS`] did not), as it would
    /// have without `--from`. Only the first records pay for it.
    #[cold]
    fn check_forced(&mut self, rec: &str, forced: Dialect) {
        match detect_record(rec) {
            Detected::Is(d) => {
                self.forced_checked = true;
                if d != forced {
                    self.mismatch = Some(d);
                }
            }
            Detected::Incomplete => {}
            Detected::Foreign(_) | Detected::Invalid | Detected::Undecided => {
                self.forced_undecided += 1;
                if self.forced_undecided >= DETECT_RECORDS {
                    self.forced_checked = true;
                }
            }
        }
    }

    /// The input is a document read element by element: the parser is told
    /// (now, or when it is chosen).
    pub fn set_document(&mut self) {
        self.document = true;
        if let Some(p) = self.inner.as_mut() {
            p.set_document();
        }
    }

    /// The dialect is detected (not given with `--from`).
    pub fn detecting(&self) -> bool {
        self.fixed.is_none()
    }

    /// The input is from an agent cstream does not read: the agent it looks
    /// like, and the line that showed it.
    pub fn foreign(&self) -> Option<(&'static str, u64)> {
        self.foreign
    }

    /// Start over for a new input (read from the file at `source`, or from
    /// standard input).
    pub fn reset(&mut self, source: Option<&Path>) {
        *self = AutoParser {
            reads: self.reads,
            ..AutoParser::new(self.fixed)
        };
        self.source = source.map(Path::to_path_buf);
    }

    /// When JSON was read but its dialect could not be told: the line of
    /// the first record read as cursor-agent for want of a dialect.
    pub fn guessed_at(&self) -> Option<u64> {
        self.guessed
    }

    /// Settle on `d` (`guessed`: for want of a better one) and read the
    /// records kept so far with it.
    fn choose<'a>(&mut self, d: Dialect, guessed: bool, out: LineOut<'_, 'a>) -> io::Result<()> {
        self.chosen = Some(d);
        if guessed {
            self.guessed = self.held.first().map(|(line, _)| *line);
        }
        let mut p = d.parser();
        if let Some(src) = &self.source {
            p.set_source(src);
        }
        if self.document {
            p.set_document();
        }
        p.set_reads(self.reads);
        if self.text.is_some() {
            p.set_text(self.text.clone());
        }
        self.checked = p.reads_checked();
        let held = std::mem::take(&mut self.held);
        self.held_bytes = 0;
        for (line, rec) in &held {
            // The kept records do not live as long as the current one: what
            // they produce is detached from them.
            p.parse(rec, &mut |i| out(*line, &mut i.into_owned()))?;
        }
        self.inner = Some(p);
        Ok(())
    }

    /// Read the record at `line`: detect the dialect while it is not known,
    /// then parse with it.
    #[inline(always)]
    pub fn parse<'a>(
        &mut self,
        rec: &'a str,
        line: u64,
        out: LineOut<'_, 'a>,
    ) -> io::Result<Parsed> {
        if let Some(forced) = self.fixed
            && !self.forced_checked
        {
            self.check_forced(rec, forced);
        }
        if self.inner.is_none() {
            if self.foreign.is_some() {
                return Ok(Parsed::Done);
            }
            let d = match self.fixed {
                Some(d) => d,
                None => match self.detect(rec) {
                    Detected::Is(d) => d,
                    Detected::Foreign(agent) => {
                        // What was kept is that agent's too: dropped with it.
                        self.foreign = Some((agent, line));
                        self.held.clear();
                        self.held_bytes = 0;
                        return Ok(Parsed::Done);
                    }
                    Detected::Incomplete => return Ok(Parsed::Incomplete),
                    Detected::Invalid => return Ok(Parsed::Invalid),
                    Detected::Undecided => {
                        self.last_line = line;
                        self.held_bytes += rec.len();
                        self.held.push((line, rec.to_owned()));
                        if self.held.len() >= DETECT_RECORDS || self.held_bytes > DETECT_BYTES {
                            self.choose(Dialect::Cursor, true, out)?;
                        }
                        return Ok(Parsed::Done);
                    }
                },
            };
            self.choose(d, false, out)?;
        }
        self.last_line = line;
        let inner = self.inner.as_mut().expect("set above");
        inner.parse(rec, &mut |mut i| out(line, &mut i))
    }

    /// Whether [`AutoParser::parse_checked`] would offer a record to the
    /// dialect in use, and that dialect's reader reads it
    /// ([`Parser::reads_checked`]).
    #[inline]
    pub fn reads_checked(&self) -> bool {
        (self.fixed.is_none() || self.forced_checked) && self.checked
    }

    /// [`Parser::parse_checked`] of the dialect in use; `None` while the
    /// dialect is not chosen yet or a forced one is still being checked.
    #[inline]
    pub fn parse_checked<'a>(
        &mut self,
        rec: &'a [u8],
        line: u64,
        out: LineOut<'_, 'a>,
    ) -> io::Result<Option<Parsed>> {
        if self.fixed.is_some() && !self.forced_checked {
            return Ok(None);
        }
        let Some(inner) = self.inner.as_mut() else {
            return Ok(None);
        };
        let parsed = inner.parse_checked(rec, &mut |mut i| out(line, &mut i))?;
        if parsed.is_some() {
            self.last_line = line;
        }
        Ok(parsed)
    }

    /// The dialect's reader counts its own records not understood
    /// ([`Parser::counts_drift`]).
    pub fn counts_drift(&self) -> bool {
        self.inner.as_ref().is_some_and(|p| p.counts_drift())
    }

    /// The input ended: read what is still kept, and emit what the parser
    /// still holds back.
    pub fn finish(&mut self, out: LineOut<'_, 'static>) -> io::Result<()> {
        if self.inner.is_none() && self.foreign.is_none() && !self.held.is_empty() {
            self.choose(Dialect::Cursor, true, out)?;
        }
        let line = self.last_line;
        match self.inner.as_mut() {
            Some(p) => p.finish(&mut |mut i| out(line, &mut i)),
            None => Ok(()),
        }
    }
}

/// The corpus folder `rel` of `../shared/corpus` beside the crate, for the
/// unit tests that read it too: a missing one fails where `CI` or
/// `CSTREAM_CORPUS_REQUIRED` says the corpus is expected, else is `None`.
#[cfg(test)]
pub(crate) fn test_corpus(rel: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(rel);
    let expected = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var_os("CSTREAM_CORPUS_REQUIRED").is_some();
    assert!(dir.is_dir() || !expected, "{} is missing", dir.display());
    dir.is_dir().then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_has_one_detection_rule() {
        for d in Dialect::ALL {
            let rows = DETECTION.iter().filter(|(r, _)| *r == d).count();
            assert_eq!(rows, 1, "{} has {rows} rows in DETECTION", d.name());
        }
        assert_eq!(DETECTION.len(), Dialect::ALL.len());
    }

    /// A record the sniff of a walked file detected is not detected again:
    /// what it told holds for those very bytes of the text, and for
    /// nothing else.
    #[test]
    fn a_told_record_is_not_detected_again() {
        // cursor-agent's by its content; told to be Claude's.
        let rec = r#"{"type":"system","subtype":"init","apiKeySource":"login"}"#;
        let chosen = |told: bool, at_copy: bool, let_go: bool| {
            let text = crate::input::WholeText::from(rec.as_bytes().to_vec());
            let copy = rec.to_owned();
            let mut p = AutoParser::new(None);
            p.set_text(Some(text.clone()));
            if told {
                p.told(text.as_ptr() as usize, text.len(), Dialect::Claude);
            }
            if let_go {
                p.set_text(None);
            }
            let framed = std::str::from_utf8(&text).unwrap();
            let r = if at_copy { copy.as_str() } else { framed };
            p.parse(r, 1, &mut |_, _| Ok(())).unwrap();
            p.chosen
        };
        assert_eq!(chosen(false, false, false), Some(Dialect::Cursor));
        assert_eq!(chosen(true, false, false), Some(Dialect::Claude));
        // The same bytes elsewhere, or the text let go of: detected.
        assert_eq!(chosen(true, true, false), Some(Dialect::Cursor));
        assert_eq!(chosen(true, false, true), Some(Dialect::Cursor));
        // Told without a text: nothing to hold it to.
        let mut p = AutoParser::new(None);
        p.told(rec.as_ptr() as usize, rec.len(), Dialect::Claude);
        p.parse(rec, 1, &mut |_, _| Ok(())).unwrap();
        assert_eq!(p.chosen, Some(Dialect::Cursor));
    }

    #[test]
    fn claude_is_tried_before_cursor() {
        // The shapes they share are cursor-agent's only without Claude's keys.
        let at = |d| DETECTION.iter().position(|(r, _)| *r == d);
        assert!(at(Dialect::Claude) < at(Dialect::Cursor));
        let shared = r#"{"type":"system","subtype":"init","apiKeySource":"login","tools":[]}"#;
        assert_eq!(detect_record(shared), Detected::Is(Dialect::Claude));
        let cursor = r#"{"type":"system","subtype":"init","apiKeySource":"login"}"#;
        assert_eq!(detect_record(cursor), Detected::Is(Dialect::Cursor));
    }

    #[test]
    fn record_kinds_name_what_a_reader_would_switch_on() {
        assert_eq!(
            record_kind(r#"{"type":"system","subtype":"new_one"}"#),
            "system/new_one"
        );
        assert_eq!(
            record_kind(r#"{"type":"event_msg","payload":{"type":"item_completed"}}"#),
            "event_msg/item_completed"
        );
        assert_eq!(
            record_kind(
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"Plan"}}}"#
            ),
            "event_msg/item_completed/Plan"
        );
        assert_eq!(
            record_kind(r#"{"event":"step_update","step_update":{}}"#),
            "step_update"
        );
        assert_eq!(
            record_kind(r#"{"event":"step_update","step_update":{"step_type":"unknown"}}"#),
            "step_update/unknown"
        );
        assert_eq!(record_kind(r#"{"$set":{"a":1}}"#), "{$set}");
        assert_eq!(
            record_kind(r#"{"e":1,"d":2,"c":3,"b":4,"a":5}"#),
            "{a, b, c, d, …}"
        );
        assert_eq!(record_kind("[1,2]"), "(an array)");
        assert_eq!(record_kind("42"), "(not an object)");
    }
}
