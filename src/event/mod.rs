//! The normalized event model: what every dialect reader produces and every
//! output format consumes (docs/events.md).
//!
//! Events borrow from the input line they were parsed from (`Cow` strings and
//! raw JSON payloads), so the common path copies nothing; [`Event::into_owned`]
//! detaches one when it has to outlive its line (events held before a
//! session's init). The normalized fields beside `args`/`result` are the only
//! thing output formats read, so no format ever re-parses a dialect's payload.

pub(crate) mod calls;
pub mod figures;
pub(crate) mod sink;
mod write;

use std::borrow::Cow;

use serde_json::value::RawValue;

pub(crate) use sink::{Adapter, Reads, Session, Sink, Starts};
pub(crate) use write::write_event_quoted;

/// A string that usually borrows from the input line.
pub type Str<'a> = Cow<'a, str>;
/// A JSON value kept verbatim (an object, array, string, number…): the text
/// of a value that was valid JSON when it was read or that cstream built
/// itself. Unlike `Cow<RawValue>`, building one from text cstream assembled
/// (a result without its output copies) does not parse it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Json<'a>(Cow<'a, str>);

impl<'a> Json<'a> {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// JSON text cstream assembled from valid pieces (not checked again).
    pub(crate) fn assembled(text: String) -> Json<'static> {
        Json(Cow::Owned(text))
    }

    /// Detach from the input line.
    pub fn into_owned(self) -> Json<'static> {
        Json(Cow::Owned(self.0.into_owned()))
    }

    /// The text, when it borrows from the input line (for views that must
    /// borrow from the line too).
    pub(crate) fn borrowed(&self) -> Option<&'a str> {
        match self.0 {
            Cow::Borrowed(s) => Some(s),
            Cow::Owned(_) => None,
        }
    }
}

impl<'a> From<&'a RawValue> for Json<'a> {
    fn from(r: &'a RawValue) -> Self {
        Json(Cow::Borrowed(r.get()))
    }
}

impl<'a> From<Box<RawValue>> for Json<'a> {
    fn from(r: Box<RawValue>) -> Self {
        Json(Cow::Owned(String::from(Box::<str>::from(r))))
    }
}

/// Text that may still be the JSON string literal it was read as (quotes
/// included), unescaped only when a consumer needs the characters. Large
/// payloads such as shell output then go from input to `events` output as
/// one copy, without being unescaped and escaped again.
#[derive(Debug, Clone)]
pub enum Text<'a> {
    /// The characters themselves.
    Plain(Cow<'a, str>),
    /// A JSON string literal from the input, e.g. `"a\nb"` (owned once
    /// detached from its line: kept as the literal, so that it is still
    /// copied, not unescaped and escaped again, on its way out).
    Json(Cow<'a, str>),
}

impl<'a> Text<'a> {
    /// The characters (unescaping a literal, which allocates only if it has escapes).
    pub fn as_str(&self) -> Cow<'_, str> {
        match self {
            Text::Plain(s) => Cow::Borrowed(s),
            Text::Json(lit) => unescape_literal(lit),
        }
    }

    /// A JSON string literal read from the input (quotes included).
    pub fn literal(lit: &'a str) -> Self {
        Text::Json(Cow::Borrowed(lit))
    }

    /// Detach from the input line.
    pub fn into_owned(self) -> Text<'static> {
        match self {
            Text::Plain(s) => Text::Plain(Cow::Owned(s.into_owned())),
            Text::Json(lit) => Text::Json(Cow::Owned(lit.into_owned())),
        }
    }

    /// The characters, borrowing from the input line where they can.
    pub fn into_str(self) -> Cow<'a, str> {
        match self {
            Text::Plain(s) => s,
            Text::Json(Cow::Borrowed(lit)) => unescape_literal(lit),
            Text::Json(Cow::Owned(lit)) => Cow::Owned(unescape_literal(&lit).into_owned()),
        }
    }

    /// True when there are no characters.
    pub fn is_empty(&self) -> bool {
        match self {
            Text::Plain(s) => s.is_empty(),
            Text::Json(lit) => lit.len() <= 2,
        }
    }

    /// Bytes of the text as stored (an estimate for a literal).
    pub(crate) fn stored_len(&self) -> usize {
        match self {
            Text::Plain(s) => s.len(),
            Text::Json(lit) => lit.len(),
        }
    }
}

/// The characters of a JSON string literal (quotes included).
fn unescape_literal(lit: &str) -> Cow<'_, str> {
    // Only literals read from valid JSON become `Text::Json`, so this parses.
    crate::json::unescape_literal(lit).unwrap_or_default()
}

impl<'a> From<Cow<'a, str>> for Text<'a> {
    fn from(s: Cow<'a, str>) -> Self {
        Text::Plain(s)
    }
}

impl<'a> From<String> for Text<'a> {
    fn from(s: String) -> Self {
        Text::Plain(Cow::Owned(s))
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(s: &'a str) -> Self {
        Text::Plain(Cow::Borrowed(s))
    }
}

/// One normalized event with its source timestamp (epoch milliseconds).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Event<'a> {
    /// When the source gave a time for this event.
    pub ts: Option<i64>,
    /// What happened.
    pub kind: Kind<'a>,
}

// The schema version as a literal, so that `concat!` can put it into
// `VERSION`: the number is written once, here.
macro_rules! schema_version {
    () => {
        1
    };
}

/// The version of the `events` and `documents` schemas this build writes
/// (`schemaVersion` on `session_started` and in the documents metadata). It
/// changes only when a change would break a reader: a field removed,
/// renamed or retyped, or a meaning changed; new optional fields and new
/// event types leave it as it is.
pub const SCHEMA_VERSION: u32 = schema_version!();

/// What `cstream --version` prints after the command's name: the crate's
/// version, then the events schema version this build writes
/// ([`SCHEMA_VERSION`]), e.g. `0.1.0 (events schema 1)`. A reader of the
/// events learns from it which `schemaVersion` to expect without running a
/// conversion; docs/release.md says when each of the two changes.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (events schema ",
    schema_version!(),
    ")"
);

// One list gives both tables, so a line's head cannot name another type.
macro_rules! type_names {
    ($($name:literal),* $(,)?) => {
        /// Every event type's wire name, in [`Kind::index`] order (the `--stats`
        /// line lists them in this order).
        pub(crate) const TYPE_NAMES: [&str; 19] = [$($name),*];

        /// How an `events` line of each type starts, up to its session id,
        /// in [`Kind::index`] order: one write per line instead of three.
        pub(crate) const WIRE_HEADS: [&[u8]; 19] =
            [$(concat!("{\"type\":\"", $name, "\",\"sessionId\":").as_bytes()),*];
    };
}

type_names![
    "session_started",
    "user_message",
    "thinking_delta",
    "thinking_completed",
    "text_delta",
    "tool_call_started",
    "tool_call_progress",
    "shell_output_delta",
    "tool_call_completed",
    "usage_delta",
    "summary",
    "turn_ended",
    "result",
    "error",
    "unknown",
    "assistant_message",
    "thinking",
    "tool_call",
    "user_event",
];

/// The event vocabulary (`type` on the wire, snake_case; docs/events.md
/// in the repository describes each type and its fields).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Kind<'a> {
    /// A session begins (from the dialect's init event).
    SessionStarted(SessionStart<'a>),
    /// The prompt, echoed by the agent.
    UserMessage {
        /// The prompt's text.
        text: Str<'a>,
    },
    /// A fragment of the model's thinking.
    ThinkingDelta {
        /// The fragment.
        text: Str<'a>,
    },
    /// A thinking phase ended.
    ThinkingCompleted {
        /// How long it took, when the source says.
        duration_ms: Option<u64>,
    },
    /// A fragment of assistant text.
    TextDelta {
        /// The fragment.
        text: Str<'a>,
    },
    /// A tool call began.
    ToolCallStarted(Box<ToolStart<'a>>),
    /// Partial arguments or a progress snapshot of a running call.
    ToolCallProgress {
        /// The call's id.
        call_id: Str<'a>,
        /// The source's partial payload, verbatim.
        partial: Json<'a>,
    },
    /// Live output of a running shell call.
    ShellOutputDelta {
        /// The call's id.
        call_id: Str<'a>,
        /// Standard output or standard error.
        stream: OutStream,
        /// The output fragment.
        text: Str<'a>,
    },
    /// A tool call ended.
    ToolCallCompleted(Box<ToolEnd<'a>>),
    /// Token counts, always as increments.
    UsageDelta(Usage),
    /// Summarisation phases and plan snapshots.
    Summary {
        /// Which phase.
        phase: SummaryPhase,
        /// The summary or plan text, when there is one.
        text: Option<Str<'a>>,
    },
    /// One model turn ended.
    TurnEnded {
        /// The turn's token counts, when the source gives them.
        usage: Option<Usage>,
    },
    /// The session's final result.
    Result(SessionResult<'a>),
    /// An error the agent reported, or an input line that was not JSON.
    Error {
        /// The error's text (for a bad input line: the line, cut).
        message: Str<'a>,
        /// The session cannot go on.
        fatal: bool,
        /// Where it came from (`stdout` for a bad input line), when known.
        source: Option<Str<'a>>,
    },
    /// Valid JSON that no rule understood, kept unchanged.
    Unknown {
        /// The record as it came.
        raw: Json<'a>,
    },
    /// `--coalesce`: a whole assistant message.
    AssistantMessage {
        /// The message's text.
        text: Str<'a>,
    },
    /// `--coalesce`: a whole thinking phase.
    Thinking {
        /// The thinking text.
        text: Str<'a>,
        /// How long it took, when the source says.
        duration_ms: Option<u64>,
    },
    /// `--coalesce`: a whole tool call (start and end merged).
    ToolCall(Box<(ToolStart<'a>, ToolEnd<'a>)>),
    /// Something on the user's side of the conversation that is not a
    /// prompt: a slash command, its local output, an interruption, or text
    /// the agent put there itself. It does not begin a turn.
    UserEvent {
        /// Which of these it is.
        what: UserEventKind,
        /// Its text (the command line, the output, the agent's note).
        text: Str<'a>,
    },
}

/// `session_started` fields.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SessionStart<'a> {
    /// The id the source gave the session (goes on every event as `sessionId`).
    pub session_id: Option<Str<'a>>,
    /// Which input dialect was read (`cursor`, `claude`, …).
    pub dialect: Str<'a>,
    /// The model the agent named at the start.
    pub model: Option<Str<'a>>,
    /// The agent's working directory.
    pub cwd: Option<Str<'a>>,
    /// The agent's permission (approval) mode, in its own words.
    pub permission_mode: Option<Str<'a>>,
    /// The session's title, where the source gives one (a title the agent
    /// made or the user set, a saved chat's one-line summary).
    pub title: Option<Str<'a>>,
    /// The session this one came from: a sub-agent's parent session (and
    /// the tool call that spawned it, when known), or the session a fork
    /// copied. Sessions stay separate; this only links them.
    pub parent: Option<SessionParent<'a>>,
}

/// How a session is linked to the one it came from (`session_started`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionParent<'a> {
    /// The parent session's id.
    pub session_id: Str<'a>,
    /// A sub-agent: the parent's tool call that spawned it, when known.
    pub call_id: Option<Str<'a>>,
    /// A fork: the session began as a copy of the parent's (not a sub-agent).
    pub fork: bool,
}

impl<'a> SessionParent<'a> {
    /// A sub-agent of `session_id`, spawned by `call_id` when known.
    pub fn subagent(session_id: Str<'a>, call_id: Option<Str<'a>>) -> Self {
        SessionParent {
            session_id,
            call_id,
            fork: false,
        }
    }

    /// A fork of `session_id`.
    pub fn fork(session_id: Str<'a>) -> Self {
        SessionParent {
            session_id,
            call_id: None,
            fork: true,
        }
    }

    fn into_owned(self) -> SessionParent<'static> {
        SessionParent {
            session_id: Cow::Owned(self.session_id.into_owned()),
            call_id: self.call_id.map(|c| Cow::Owned(c.into_owned())),
            fork: self.fork,
        }
    }
}

/// `tool_call_started` fields: the source's own `args` plus normalized ones.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolStart<'a> {
    /// The call's id, which its progress and completion repeat.
    pub call_id: Str<'a>,
    /// From the closed vocabulary (`shell`, `read`, …) or the source's name in snake_case.
    pub tool_name: Str<'a>,
    /// The source's arguments, verbatim.
    pub args: Json<'a>,
    /// `shell`: the command line.
    pub command: Option<Str<'a>>,
    /// `shell`: the directory it runs in.
    pub cwd: Option<Str<'a>>,
    /// The file or folder the call works on.
    pub path: Option<Str<'a>>,
    /// A search's pattern.
    pub pattern: Option<Str<'a>>,
    /// A fetch's address.
    pub url: Option<Str<'a>>,
    /// A web search's query.
    pub query: Option<Str<'a>>,
    /// What the agent says the call is for.
    pub description: Option<Str<'a>>,
    /// An MCP call's server.
    pub mcp_server: Option<Str<'a>>,
    /// An MCP call's tool.
    pub mcp_tool: Option<Str<'a>>,
    /// Normalized arguments of edit, write, move, todo, plan and question
    /// tools; boxed because few calls have them.
    pub details: Option<Box<ToolDetails<'a>>>,
}

/// Normalized arguments that only some tools have (wire names in brackets).
/// A dialect fills what its tool gives; every field is optional.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolDetails<'a> {
    /// `edit`: the text that is replaced (`oldString`).
    pub old_string: Option<Str<'a>>,
    /// `edit`: the text that replaces it (`newString`).
    pub new_string: Option<Str<'a>>,
    /// `write` (or an edit that sends the whole file): the full text the
    /// file gets (`fileContent`).
    pub file_content: Option<Str<'a>>,
    /// A move or rename: the destination path (`newPath`).
    pub new_path: Option<Str<'a>>,
    /// `plan`: the plan itself, markdown (`plan`).
    pub plan: Option<Str<'a>>,
    /// `plan`: its title; `question`: the line introducing the questions (`title`).
    pub title: Option<Str<'a>>,
    /// `plan`: a short overview (`overview`).
    pub overview: Option<Str<'a>>,
    /// `todo` (the list as written by the call) and `plan` (its steps) (`todos`).
    pub todos: Option<Vec<Todo<'a>>>,
    /// `question`: what the agent asks the user (`questions`).
    pub questions: Option<Vec<Question<'a>>>,
}

/// One entry of a todo list: `{"id"?, "content", "status"}` on the wire.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Todo<'a> {
    /// The source's id for the entry, when it gives one.
    pub id: Option<Str<'a>>,
    /// What is to be done.
    pub content: Str<'a>,
    /// `pending`, `in_progress`, `completed`, `cancelled` (each source's
    /// words mapped onto these), or the source's own word, lowercased.
    pub status: Str<'a>,
}

/// One question of a `question` tool: `{"id"?, "text", "options":[{"id"?, "label"}]}`.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Question<'a> {
    /// The source's id for the question, when it gives one.
    pub id: Option<Str<'a>>,
    /// The question.
    pub text: Str<'a>,
    /// The answers it offers.
    pub options: Vec<Choice<'a>>,
}

/// One answer a question offers.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Choice<'a> {
    /// The source's id for the answer, when it gives one.
    pub id: Option<Str<'a>>,
    /// The answer as shown.
    pub label: Str<'a>,
}

/// Map a source's todo status onto `pending` / `in_progress` / `completed` /
/// `cancelled` (`TODO_STATUS_IN_PROGRESS`, `in-progress`, `done`, …); an
/// unrecognised word is kept, lowercased.
pub(crate) fn normalize_todo_status(s: &str) -> Str<'static> {
    let lower = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    let word = lower.strip_prefix("todo_status_").unwrap_or(&lower);
    Cow::Borrowed(match word {
        "pending" | "todo" | "not_started" | "open" | "unspecified" | "" => "pending",
        "in_progress" | "inprogress" | "active" | "running" | "started" => "in_progress",
        "completed" | "complete" | "done" | "finished" => "completed",
        "cancelled" | "canceled" | "skipped" => "cancelled",
        _ => return Cow::Owned(word.to_owned()),
    })
}

impl<'a> ToolDetails<'a> {
    /// True when no field is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolDetails::default()
    }

    /// Detach from the input line.
    pub fn into_owned(self) -> ToolDetails<'static> {
        ToolDetails {
            old_string: own_opt(self.old_string),
            new_string: own_opt(self.new_string),
            file_content: own_opt(self.file_content),
            new_path: own_opt(self.new_path),
            plan: own_opt(self.plan),
            title: own_opt(self.title),
            overview: own_opt(self.overview),
            todos: self.todos.map(|v| {
                v.into_iter()
                    .map(|t| Todo {
                        id: own_opt(t.id),
                        content: own(t.content),
                        status: own(t.status),
                    })
                    .collect()
            }),
            questions: self.questions.map(|v| {
                v.into_iter()
                    .map(|q| Question {
                        id: own_opt(q.id),
                        text: own(q.text),
                        options: q
                            .options
                            .into_iter()
                            .map(|c| Choice {
                                id: own_opt(c.id),
                                label: own(c.label),
                            })
                            .collect(),
                    })
                    .collect()
            }),
        }
    }
}

impl<'a> ToolStart<'a> {
    /// A start with only the required fields set.
    pub(crate) fn new(call_id: Str<'a>, tool_name: Str<'a>, args: Json<'a>) -> Self {
        ToolStart {
            call_id,
            tool_name,
            args,
            command: None,
            cwd: None,
            path: None,
            pattern: None,
            url: None,
            query: None,
            description: None,
            mcp_server: None,
            mcp_tool: None,
            details: None,
        }
    }

    /// A detached copy with only what a one-line label reads: the id, the
    /// tool name and the fields [`ToolStart::key_arg`] chooses from
    /// (`Starts::Label`); the arguments are `null`.
    pub(crate) fn label_copy(&self) -> ToolStart<'static> {
        let own = |s: &Option<Str<'_>>| s.as_deref().map(|s| Cow::Owned(s.to_owned()));
        ToolStart {
            command: own(&self.command),
            pattern: own(&self.pattern),
            path: own(&self.path),
            url: own(&self.url),
            query: own(&self.query),
            description: own(&self.description),
            mcp_server: own(&self.mcp_server),
            mcp_tool: own(&self.mcp_tool),
            ..ToolStart::new(
                Cow::Owned(self.call_id.to_string()),
                Cow::Owned(self.tool_name.to_string()),
                json_null(),
            )
        }
    }

    /// The argument a one-line summary shows: command, pattern, path, …
    /// (a search's pattern says more than the folder it searched).
    pub fn key_arg(&self) -> Option<&str> {
        [
            &self.command,
            &self.pattern,
            &self.path,
            &self.url,
            &self.query,
            &self.description,
        ]
        .into_iter()
        .find_map(|f| f.as_deref())
        .or_else(|| match (&self.mcp_server, &self.mcp_tool) {
            (_, Some(t)) => Some(t.as_ref()),
            (Some(s), None) => Some(s.as_ref()),
            _ => None,
        })
    }
}

/// `tool_call_completed` fields: the source's own `result` plus normalized ones.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolEnd<'a> {
    /// The call's id, as its start gave it.
    pub call_id: Str<'a>,
    /// The tool's name, as its start gave it.
    pub tool_name: Str<'a>,
    /// The call succeeded.
    pub ok: bool,
    /// The source's result payload (`None` writes `null`).
    pub result: Option<Json<'a>>,
    /// How long the call took, when the source says.
    pub duration_ms: Option<u64>,
    /// `shell`: the command's exit code.
    pub exit_code: Option<i64>,
    /// Shell output, once (interleaved when the source has it).
    pub output: Option<Text<'a>>,
    /// A unified diff.
    pub patch: Option<Str<'a>>,
    /// An edit: lines added.
    pub lines_added: Option<u64>,
    /// An edit: lines removed.
    pub lines_removed: Option<u64>,
    /// Why the call failed, in the source's words.
    pub error: Option<Str<'a>>,
    /// Synthesized for a call still open when its session ended.
    pub cancelled: bool,
    /// The source records the call but not how it ended (cursor-agent's
    /// saved transcripts keep only the inputs): `ok` then means only "not
    /// known to have failed", and no result or error is made up.
    pub outcome_unknown: bool,
    /// The call's start, handed on by the normalizer to the sinks that ask
    /// for it (`Sink::starts`), so that no format keeps its own table of
    /// starts: `None` when the start never came (a capture cut before it)
    /// or no sink asked (`for_each_event` does not). Never written by the
    /// events format.
    pub start: Option<Box<ToolStart<'a>>>,
    /// Live output (`shell_output_delta`) of the call went out while it was
    /// open, so its `output` repeats it. Set only with [`ToolEnd::start`]
    /// (when a sink asked for starts).
    pub streamed: bool,
}

impl<'a> ToolEnd<'a> {
    /// An end with only the required fields set.
    pub(crate) fn new(call_id: Str<'a>, tool_name: Str<'a>, ok: bool) -> Self {
        ToolEnd {
            call_id,
            tool_name,
            ok,
            result: None,
            duration_ms: None,
            exit_code: None,
            output: None,
            patch: None,
            lines_added: None,
            lines_removed: None,
            error: None,
            cancelled: false,
            outcome_unknown: false,
            start: None,
            streamed: false,
        }
    }
}

/// Which stream a shell output fragment came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl OutStream {
    /// The wire name: `stdout` or `stderr`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutStream::Stdout => "stdout",
            OutStream::Stderr => "stderr",
        }
    }
}

/// What a `user_event` is (docs/events.md#user_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserEventKind {
    /// A command the user ran in the agent's interface (`/clear`,
    /// `/model sonnet`): not sent to the model as a prompt.
    Command,
    /// What a local command printed.
    CommandOutput,
    /// The user interrupted the agent.
    Interrupt,
    /// Text the agent or a hook wrote on the user's side (caveats, system
    /// reminders, injected instructions): not typed by the user.
    Context,
}

impl UserEventKind {
    /// The wire name: `command`, `command_output`, `interrupt` or `context`.
    pub fn as_str(self) -> &'static str {
        match self {
            UserEventKind::Command => "command",
            UserEventKind::CommandOutput => "command_output",
            UserEventKind::Interrupt => "interrupt",
            UserEventKind::Context => "context",
        }
    }

    /// The kind a wire name names.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "command" => UserEventKind::Command,
            "command_output" => UserEventKind::CommandOutput,
            "interrupt" => UserEventKind::Interrupt,
            "context" => UserEventKind::Context,
            _ => return None,
        })
    }
}

/// Phase of a `summary` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SummaryPhase {
    /// The agent began summarising its context.
    Started,
    /// The summary is done (its text, when the source gives it).
    Completed,
    /// A snapshot of the agent's plan.
    Snapshot,
}

impl SummaryPhase {
    /// The wire name: `started`, `completed` or `snapshot`.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryPhase::Started => "started",
            SummaryPhase::Completed => "completed",
            SummaryPhase::Snapshot => "snapshot",
        }
    }
}

/// Token counts. `input` includes cache reads and writes (docs/events.md#usage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Usage {
    /// Input tokens, cache reads and writes included.
    pub input: u64,
    /// Output tokens (thinking included).
    pub output: u64,
    /// Input tokens read from the prompt cache, when the source says.
    pub cache_read: Option<u64>,
    /// Input tokens written to the prompt cache, when the source says.
    pub cache_write: Option<u64>,
    /// The part of `cache_write` written to a one-hour cache, when the
    /// source says (Claude's `cache_creation.ephemeral_1h_input_tokens`):
    /// Anthropic bills those writes at a higher rate than five-minute ones.
    pub cache_write_1h: Option<u64>,
    /// The part of `output` the model spent reasoning, when the source
    /// counts it apart (Codex, Gemini, OpenCode, the Cursor SDK); `None`
    /// when it does not (Claude's usage counts thinking in the output
    /// without a separate figure).
    pub reasoning: Option<u64>,
    /// Some output count this figure stands for was not in the source (a
    /// message saved with only its streaming placeholder): `output` is a
    /// lower bound, and unknown when it is 0 (docs/events.md#usage).
    pub output_incomplete: bool,
}

impl Usage {
    /// Counts as the source gave them (`input` cache included).
    pub fn new(
        input: u64,
        output: u64,
        cache_read: Option<u64>,
        cache_write: Option<u64>,
    ) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            cache_write,
            cache_write_1h: None,
            reasoning: None,
            output_incomplete: false,
        }
    }

    /// The same counts with the reasoning part of the output.
    pub(crate) fn with_reasoning(self, reasoning: Option<u64>) -> Usage {
        Usage { reasoning, ..self }
    }

    /// Usage from a source whose input count leaves out the cache reads and
    /// writes (Anthropic's and cursor's convention): the normalized `input`
    /// adds them back (docs/events.md#usage), saturating on absurd counts.
    pub(crate) fn cache_apart(
        input: u64,
        output: u64,
        cache_read: Option<u64>,
        cache_write: Option<u64>,
    ) -> Usage {
        Usage {
            input: input
                .saturating_add(cache_read.unwrap_or(0))
                .saturating_add(cache_write.unwrap_or(0)),
            output,
            cache_read,
            cache_write,
            cache_write_1h: None,
            reasoning: None,
            output_incomplete: false,
        }
    }

    /// The same counts with the one-hour part of the cache writes.
    pub(crate) fn with_cache_write_1h(self, cache_write_1h: Option<u64>) -> Usage {
        Usage {
            cache_write_1h,
            ..self
        }
    }

    /// Field-wise sum (an absent cache count plus a present one is the present one).
    pub fn add(&self, o: &Usage) -> Usage {
        Usage {
            input: self.input.saturating_add(o.input),
            output: self.output.saturating_add(o.output),
            cache_read: add_opt(self.cache_read, o.cache_read),
            cache_write: add_opt(self.cache_write, o.cache_write),
            cache_write_1h: add_opt(self.cache_write_1h, o.cache_write_1h),
            reasoning: add_opt(self.reasoning, o.reasoning),
            output_incomplete: self.output_incomplete || o.output_incomplete,
        }
    }

    /// Field-wise `self - o`, never below zero.
    pub(crate) fn minus(&self, o: &Usage) -> Usage {
        let sub = |a: Option<u64>, b: Option<u64>| a.map(|a| a.saturating_sub(b.unwrap_or(0)));
        Usage {
            input: self.input.saturating_sub(o.input),
            output: self.output.saturating_sub(o.output),
            cache_read: sub(self.cache_read, o.cache_read),
            cache_write: sub(self.cache_write, o.cache_write),
            cache_write_1h: sub(self.cache_write_1h, o.cache_write_1h),
            reasoning: sub(self.reasoning, o.reasoning),
            // Said once: a remainder does not repeat what was already said.
            output_incomplete: self.output_incomplete && !o.output_incomplete,
        }
    }

    /// True when every count is zero or absent (and no count is said to
    /// be missing).
    pub fn is_zero(&self) -> bool {
        !self.output_incomplete
            && self.input == 0
            && self.output == 0
            && self.cache_read.unwrap_or(0) == 0
            && self.cache_write.unwrap_or(0) == 0
            && self.cache_write_1h.unwrap_or(0) == 0
            && self.reasoning.unwrap_or(0) == 0
    }
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

/// `result` fields.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct SessionResult<'a> {
    /// The session succeeded.
    pub ok: bool,
    /// The final text the agent reported (authoritative: docs/events.md#text-rebuilt-once).
    pub text: Option<Str<'a>>,
    /// How long the session took, when the source says.
    pub duration_ms: Option<u64>,
    /// Session totals.
    pub usage: Option<Usage>,
    /// What the session cost, in US dollars, when the source says.
    pub cost_usd: Option<f64>,
    /// Why the session failed, in the agent's words.
    pub error: Option<Str<'a>>,
}

impl<'a> Event<'a> {
    /// An event without a timestamp.
    pub(crate) fn new(kind: Kind<'a>) -> Self {
        Event { ts: None, kind }
    }

    /// An event with an optional timestamp.
    pub(crate) fn at(ts: Option<i64>, kind: Kind<'a>) -> Self {
        Event { ts, kind }
    }

    /// The wire name of this event's type.
    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }

    /// Detach the event from the line it borrows from.
    pub fn into_owned(self) -> Event<'static> {
        Event {
            ts: self.ts,
            kind: self.kind.into_owned(),
        }
    }
}

fn own(s: Str<'_>) -> Str<'static> {
    Cow::Owned(s.into_owned())
}

fn own_opt(s: Option<Str<'_>>) -> Option<Str<'static>> {
    s.map(own)
}

fn own_json(j: Json<'_>) -> Json<'static> {
    j.into_owned()
}

impl<'a> ToolStart<'a> {
    /// Detach from the input line.
    pub fn into_owned(self) -> ToolStart<'static> {
        ToolStart {
            call_id: own(self.call_id),
            tool_name: own(self.tool_name),
            args: own_json(self.args),
            command: own_opt(self.command),
            cwd: own_opt(self.cwd),
            path: own_opt(self.path),
            pattern: own_opt(self.pattern),
            url: own_opt(self.url),
            query: own_opt(self.query),
            description: own_opt(self.description),
            mcp_server: own_opt(self.mcp_server),
            mcp_tool: own_opt(self.mcp_tool),
            details: self.details.map(|d| Box::new(d.into_owned())),
        }
    }
}

impl<'a> ToolEnd<'a> {
    /// Detach from the input line.
    pub fn into_owned(self) -> ToolEnd<'static> {
        ToolEnd {
            call_id: own(self.call_id),
            tool_name: own(self.tool_name),
            ok: self.ok,
            result: self.result.map(own_json),
            duration_ms: self.duration_ms,
            exit_code: self.exit_code,
            output: self.output.map(Text::into_owned),
            patch: own_opt(self.patch),
            lines_added: self.lines_added,
            lines_removed: self.lines_removed,
            error: own_opt(self.error),
            cancelled: self.cancelled,
            outcome_unknown: self.outcome_unknown,
            start: self.start.map(|s| Box::new(s.into_owned())),
            streamed: self.streamed,
        }
    }
}

impl<'a> Kind<'a> {
    /// `tool_call_started` (the start is boxed: it is large and rare, and
    /// keeping it out of line keeps every other event small to move).
    pub(crate) fn started(t: ToolStart<'a>) -> Self {
        Kind::ToolCallStarted(Box::new(t))
    }

    /// `tool_call_completed` (boxed, like [`Kind::started`]).
    pub(crate) fn completed(e: ToolEnd<'a>) -> Self {
        Kind::ToolCallCompleted(Box::new(e))
    }

    /// The wire name of this type.
    pub fn type_name(&self) -> &'static str {
        TYPE_NAMES[self.index()]
    }

    /// The position of this type in [`TYPE_NAMES`].
    pub(crate) fn index(&self) -> usize {
        match self {
            Kind::SessionStarted(_) => 0,
            Kind::UserMessage { .. } => 1,
            Kind::ThinkingDelta { .. } => 2,
            Kind::ThinkingCompleted { .. } => 3,
            Kind::TextDelta { .. } => 4,
            Kind::ToolCallStarted(_) => 5,
            Kind::ToolCallProgress { .. } => 6,
            Kind::ShellOutputDelta { .. } => 7,
            Kind::ToolCallCompleted(_) => 8,
            Kind::UsageDelta(_) => 9,
            Kind::Summary { .. } => 10,
            Kind::TurnEnded { .. } => 11,
            Kind::Result(_) => 12,
            Kind::Error { .. } => 13,
            Kind::Unknown { .. } => 14,
            Kind::AssistantMessage { .. } => 15,
            Kind::Thinking { .. } => 16,
            Kind::ToolCall(_) => 17,
            Kind::UserEvent { .. } => 18,
        }
    }

    /// Detach from the input line.
    pub fn into_owned(self) -> Kind<'static> {
        match self {
            Kind::SessionStarted(s) => Kind::SessionStarted(SessionStart {
                session_id: own_opt(s.session_id),
                dialect: own(s.dialect),
                model: own_opt(s.model),
                cwd: own_opt(s.cwd),
                permission_mode: own_opt(s.permission_mode),
                title: own_opt(s.title),
                parent: s.parent.map(SessionParent::into_owned),
            }),
            Kind::UserMessage { text } => Kind::UserMessage { text: own(text) },
            Kind::ThinkingDelta { text } => Kind::ThinkingDelta { text: own(text) },
            Kind::ThinkingCompleted { duration_ms } => Kind::ThinkingCompleted { duration_ms },
            Kind::TextDelta { text } => Kind::TextDelta { text: own(text) },
            Kind::ToolCallStarted(t) => Kind::started(t.into_owned()),
            Kind::ToolCallProgress { call_id, partial } => Kind::ToolCallProgress {
                call_id: own(call_id),
                partial: own_json(partial),
            },
            Kind::ShellOutputDelta {
                call_id,
                stream,
                text,
            } => Kind::ShellOutputDelta {
                call_id: own(call_id),
                stream,
                text: own(text),
            },
            Kind::ToolCallCompleted(t) => Kind::completed(t.into_owned()),
            Kind::UsageDelta(u) => Kind::UsageDelta(u),
            Kind::Summary { phase, text } => Kind::Summary {
                phase,
                text: own_opt(text),
            },
            Kind::TurnEnded { usage } => Kind::TurnEnded { usage },
            Kind::Result(r) => Kind::Result(SessionResult {
                ok: r.ok,
                text: own_opt(r.text),
                duration_ms: r.duration_ms,
                usage: r.usage,
                cost_usd: r.cost_usd,
                error: own_opt(r.error),
            }),
            Kind::Error {
                message,
                fatal,
                source,
            } => Kind::Error {
                message: own(message),
                fatal,
                source: own_opt(source),
            },
            Kind::Unknown { raw } => Kind::Unknown { raw: own_json(raw) },
            Kind::AssistantMessage { text } => Kind::AssistantMessage { text: own(text) },
            Kind::Thinking { text, duration_ms } => Kind::Thinking {
                text: own(text),
                duration_ms,
            },
            Kind::ToolCall(b) => {
                let (s, e) = *b;
                Kind::ToolCall(Box::new((s.into_owned(), e.into_owned())))
            }
            Kind::UserEvent { what, text } => Kind::UserEvent {
                what,
                text: own(text),
            },
        }
    }
}

/// The raw JSON `null`.
pub(crate) fn json_null<'a>() -> Json<'a> {
    Json(Cow::Borrowed("null"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each `user_event` kind reads back from the name it is written with.
    #[test]
    fn user_event_kinds_round_trip_through_their_names() {
        for k in [
            UserEventKind::Command,
            UserEventKind::CommandOutput,
            UserEventKind::Interrupt,
            UserEventKind::Context,
        ] {
            assert_eq!(UserEventKind::from_name(k.as_str()), Some(k));
        }
        assert_eq!(UserEventKind::from_name("prompt"), None);
    }

    /// A literal detached from its line stays the literal (the events
    /// output copies it as it came) and still reads as the same characters.
    #[test]
    fn a_detached_literal_is_still_the_literal() {
        let line = String::from(r#""a\n\"b\" \u00e9""#);
        let t = Text::literal(&line);
        let chars = t.as_str().into_owned();
        let owned = t.into_owned();
        drop(line);
        assert!(matches!(&owned, Text::Json(lit) if lit == r#""a\n\"b\" \u00e9""#));
        assert_eq!(owned.as_str(), chars);
        assert_eq!(owned.as_str(), "a\n\"b\" é");
        assert_eq!(owned.into_str(), "a\n\"b\" é");
    }
}
