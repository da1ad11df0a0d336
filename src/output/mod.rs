//! Output formats: one [`Sink`] per format, fed normalized events. The
//! interface itself lives beside the events it carries
//! ([`crate::event::sink`]); transforms implement it too.
//!
//! A sink sees every session as `begin` → its events → `end`, in input
//! order, and writes as it goes: streaming formats write each event before
//! the next line is read; whole-value formats (`documents`, `openai-json`)
//! hold one session's result and write it at `end`.

pub mod atif;
pub mod chat;
pub mod documents;
pub(crate) mod escape;
pub mod events;
pub mod fences;
pub mod messages;
pub mod otlp;
pub mod rows;
pub mod transcript;
pub mod usage;

use std::io::Write;

pub use crate::event::sink::{Session, Sink};
pub use chat::ToolCallMode;
pub use chat::openai::ReasoningField;

/// The output formats (`--to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// A readable, coloured transcript.
    #[default]
    Text,
    /// cstream's event model, one JSON object per line.
    Events,
    /// OpenAI Chat Completions streaming (`chat.completion.chunk` SSE).
    OpenAiSse,
    /// The non-streaming OpenAI `chat.completion` object, one per session.
    OpenAiJson,
    /// One `ChatResponse` JSON value per session, its answer split into
    /// documents: one session pretty-printed, several one compact value a
    /// line (JSON Lines).
    Documents,
    /// The same documents as a live SSE stream.
    DocumentsSse,
    /// Anthropic Messages streaming (named SSE events).
    AnthropicSse,
    /// The non-streaming Anthropic `Message` object, one per session.
    AnthropicJson,
    /// OpenAI Responses API streaming (named SSE events).
    OpenAiResponses,
    /// The OpenAI Responses `response` object, one per session.
    OpenAiResponsesJson,
    /// A transcript to read and share: one Markdown document per session.
    Markdown,
    /// A transcript as one self-contained HTML page.
    Html,
    /// One chat-template row per session (`messages` and `tools`), for
    /// dataset tools and trainers.
    Messages,
    /// One flat row per event with fixed columns, for SQL engines.
    Rows,
    /// What each session used and cost (or each day, model, … with
    /// `--group`): JSON rows, or a table with totals on a terminal.
    Usage,
    /// One ATIF trajectory per session (Harbor's Agent Trajectory
    /// Interchange Format), sub-agents embedded.
    Atif,
    /// One OTLP/JSON `ExportTraceServiceRequest` per session, spans named
    /// as the OpenTelemetry GenAI conventions for agents say.
    OtlpJson,
}

impl Format {
    /// Every format, in the order `--help` lists them. The command line,
    /// the man page, the completions and the tests all derive from this list.
    pub const ALL: [Format; 17] = [
        Format::Text,
        Format::Events,
        Format::OpenAiSse,
        Format::OpenAiJson,
        Format::OpenAiResponses,
        Format::OpenAiResponsesJson,
        Format::AnthropicSse,
        Format::AnthropicJson,
        Format::Documents,
        Format::DocumentsSse,
        Format::Markdown,
        Format::Html,
        Format::Messages,
        Format::Rows,
        Format::Atif,
        Format::OtlpJson,
        Format::Usage,
    ];

    /// The file name extension of an output in this format (`--output-dir`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Events | Format::Rows | Format::Usage => "ndjson",
            Format::Messages | Format::Atif | Format::OtlpJson => "jsonl",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::OpenAiJson
            | Format::Documents
            | Format::AnthropicJson
            | Format::OpenAiResponsesJson => "json",
            Format::OpenAiSse
            | Format::DocumentsSse
            | Format::AnthropicSse
            | Format::OpenAiResponses => "sse",
        }
    }

    /// The name `--to` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Events => "events",
            Format::OpenAiSse => "openai-sse",
            Format::OpenAiJson => "openai-json",
            Format::Documents => "documents",
            Format::DocumentsSse => "documents-sse",
            Format::OpenAiResponses => "openai-responses",
            Format::OpenAiResponsesJson => "openai-responses-json",
            Format::AnthropicSse => "anthropic-sse",
            Format::AnthropicJson => "anthropic-json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Messages => "messages",
            Format::Rows => "rows",
            Format::Usage => "usage",
            Format::Atif => "atif",
            Format::OtlpJson => "otlp-json",
        }
    }

    /// One line for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Format::Text => "A readable, coloured transcript",
            Format::Events => "Normalized events, one compact JSON object per line",
            Format::OpenAiSse => "OpenAI Chat Completions streaming (SSE), one stream per session",
            Format::OpenAiJson => "The OpenAI chat.completion object, one per session",
            Format::Documents => {
                "One ChatResponse JSON per session, the answer split into typed documents"
            }
            Format::DocumentsSse => "The same documents as a live Server-Sent Events stream",
            Format::OpenAiResponses => {
                "OpenAI Responses API streaming (SSE), one stream per session"
            }
            Format::OpenAiResponsesJson => "The OpenAI Responses response object, one per session",
            Format::AnthropicSse => "Anthropic Messages streaming (SSE), one stream per session",
            Format::AnthropicJson => "The Anthropic Message object, one per session",
            Format::Markdown => {
                "A transcript to read and share: one Markdown document per session, tools and thinking collapsible"
            }
            Format::Html => {
                "A transcript as one self-contained HTML page (no network): a section per session, contents by turn, tools and thinking collapsible"
            }
            Format::Messages => {
                "One chat-template row per session (messages with tool calls and results, tools), for datasets and trainers; redacted unless --no-redact"
            }
            Format::Rows => {
                "One flat JSON row per event with fixed columns (null when unknown), for DuckDB and other SQL engines"
            }
            Format::Atif => {
                "One ATIF trajectory per session (Harbor's format; sub-agents embedded, usage as step and final metrics), a JSON document a line; redacted unless --no-redact"
            }
            Format::Usage => {
                "Tokens, cost, turns and tool calls per session (or per day, model, … with --group): JSON rows, a table on a terminal"
            }
            Format::OtlpJson => {
                "OpenTelemetry traces: one OTLP/JSON ExportTraceServiceRequest per session (GenAI agent spans); redacted unless --no-redact"
            }
        }
    }

    /// The format called `name` (as `--to` spells it).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// True for formats that write one SSE stream per session.
    pub fn is_sse(self) -> bool {
        matches!(
            self,
            Format::OpenAiSse
                | Format::DocumentsSse
                | Format::AnthropicSse
                | Format::OpenAiResponses
        )
    }
}

/// Everything a sink needs to know about how to write: one group per family
/// of formats, each read only by its formats, and what several share.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// What names a response or session: `--model`, `--id`, `--created` and
    /// the run's start (the chat and documents formats, messages, atif).
    pub ident: Identity,
    /// The chat wire formats (OpenAI, Responses, Anthropic).
    pub chat: ChatSettings,
    /// The `text` transcript.
    pub text: TextSettings,
    /// The documents formats.
    pub documents: DocSettings,
    /// `usage`: `--group`, the table, `--prices`.
    pub usage: usage::UsageOptions,
    /// One-line JSON for the whole-value formats (`-c`).
    pub compact: bool,
    /// `-q`: no warnings about the input; for `text`, the conversation only,
    /// without the session header, the final line, unknown events and
    /// invalid input lines.
    pub quiet: bool,
}

/// What names a response or a session in the formats that name one.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// `--model`: overrides the model the session names.
    pub model: Option<String>,
    /// `--id`: overrides the derived response id.
    pub id: Option<String>,
    /// `--created` (Unix seconds): overrides the derived creation time.
    pub created: Option<i64>,
    /// When the run started (Unix seconds): `created` for a session that gave
    /// no timestamp before its first piece. `None`: read the clock when the
    /// sink is made (a run pins it once, `Config::pinned`).
    pub run_start: Option<i64>,
}

impl Identity {
    /// The run's start, read from the clock if the run did not pin it.
    pub fn run_start(&self) -> i64 {
        self.run_start.unwrap_or_else(crate::time::now_secs)
    }
}

/// The chat wire formats' choices.
#[derive(Debug, Clone, Default)]
pub struct ChatSettings {
    /// The delta/message field thinking goes to (`--reasoning-field`).
    pub reasoning_field: ReasoningField,
    /// How executed tool calls appear (`--tool-calls`).
    pub tool_calls: ToolCallMode,
    /// openai-sse: write the usage chunk when usage is known (`--include-usage`).
    pub include_usage: bool,
}

/// The `text` transcript's choices.
#[derive(Debug, Clone, Default)]
pub struct TextSettings {
    /// Colour.
    pub color: bool,
    /// Terminal width for fitting long lines (None: no fitting).
    pub width: Option<usize>,
    /// The last lines of shell output that arrives with a call's completion
    /// (`--shell-lines`; None: all of them).
    pub shell_lines: Option<usize>,
    /// Leave thinking out (`--no-thinking`).
    pub no_thinking: bool,
    /// Standard output and standard error are one terminal. The transcript
    /// then leaves out the rows for input lines that were not valid input
    /// (their warnings show them), and a warning never lands in the middle
    /// of a transcript line.
    pub shared_terminal: Option<crate::terminal::SharedLine>,
}

/// The documents formats' choices.
#[derive(Debug, Clone, Default)]
pub struct DocSettings {
    /// Include `thinking` documents (`--thinking`).
    pub thinking: bool,
}

/// The sink for `format`, writing to `w`.
pub fn sink<'w, W: Write + 'w>(format: Format, opts: &OutputOptions, w: W) -> Box<dyn Sink + 'w> {
    match format {
        Format::Text => Box::new(transcript::text::TextSink::new(w, opts)),
        Format::Events => Box::new(events::EventsSink::new(w)),
        Format::OpenAiSse => Box::new(chat::openai::SseSink::new(w, opts)),
        Format::OpenAiJson => Box::new(chat::openai::json_sink(w, opts)),
        Format::Documents => Box::new(documents::DocumentsSink::new(w, opts)),
        Format::DocumentsSse => Box::new(documents::sse::DocumentsSseSink::new(w, opts)),
        Format::OpenAiResponses => Box::new(chat::responses::sse_sink(w, opts)),
        Format::OpenAiResponsesJson => Box::new(chat::responses::json_sink(w, opts)),
        Format::AnthropicSse => Box::new(chat::anthropic::sse_sink(w, opts)),
        Format::AnthropicJson => Box::new(chat::anthropic::json_sink(w, opts)),
        Format::Markdown => Box::new(transcript::Transcript::new(
            transcript::markdown::Markdown::new(w),
        )),
        Format::Html => Box::new(transcript::Transcript::new(transcript::html::Html::new(w))),
        Format::Messages => Box::new(messages::MessagesSink::new(w, opts)),
        Format::Rows => Box::new(rows::RowsSink::new(w)),
        Format::Usage => Box::new(usage::UsageSink::new(w, &opts.usage)),
        Format::Atif => Box::new(atif::AtifSink::new(w, opts)),
        Format::OtlpJson => Box::new(otlp::OtlpSink::new(w, opts)),
    }
}
