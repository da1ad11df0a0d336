//! Output formats: one [`Sink`] per format, fed normalized events.
//!
//! A sink sees every session as `begin` → its events → `end`, in input
//! order, and writes as it goes: streaming formats write each event before
//! the next line is read; whole-value formats (`documents`, `openai-json`)
//! hold one session's result and write it at `end`.

pub mod documents;
pub mod documents_sse;
pub mod events;
pub mod markdown;
pub mod openai;
pub mod text;

use std::io::{self, Write};

use crate::event::Event;
pub use openai::{ReasoningField, ToolCallMode};

/// Identifies the session events belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The source's session id, or `session-N`.
    pub id: String,
    /// 1-based position of the session in the run.
    pub ordinal: usize,
    /// Recap dedupe is on for this session: off with `--no-dedupe`, or when
    /// an events stream says its session was written without it. The events
    /// format says so on `session_started` (`"dedupe":false`), so a second
    /// stage passes the events on as they are.
    pub dedupe: bool,
}

/// A destination for normalized events.
pub trait Sink {
    /// A session begins; its events follow.
    fn begin(&mut self, _s: &Session) -> io::Result<()> {
        Ok(())
    }
    /// One event of session `s`.
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()>;
    /// Session `s` has no more events.
    fn end(&mut self, _s: &Session) -> io::Result<()> {
        Ok(())
    }
    /// Push buffered output to its destination (`--line-buffered`, and
    /// after [`Sink::idle`]). Never changes which events are written.
    fn flush(&mut self) -> io::Result<()>;
    /// The input has nothing more buffered: what was read so far should be
    /// out before cstream waits for more. Adapters that merge what was read
    /// together (`--coalesce=burst`) close their merge here, not on
    /// `flush`, so the events do not depend on how stdout is buffered.
    fn idle(&mut self) -> io::Result<()> {
        self.flush()
    }
    /// The run is over: write anything pending and flush.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// The output formats (`--to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// One `ChatResponse` JSON value per session, its answer split into documents.
    Documents,
    /// The same documents as a live SSE stream.
    DocumentsSse,
}

impl Format {
    /// True for formats that write one SSE stream per session.
    pub fn is_sse(self) -> bool {
        matches!(self, Format::OpenAiSse | Format::DocumentsSse)
    }
}

/// Everything a sink needs to know about how to write.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// Colour the `text` format.
    pub color: bool,
    /// Terminal width for truncating long lines in `text` (None: no truncation).
    pub width: Option<usize>,
    /// openai formats: the delta/message field thinking goes to (`--reasoning-field`).
    pub reasoning_field: ReasoningField,
    /// openai formats: how executed tool calls appear (`--tool-calls`).
    pub tool_calls: ToolCallMode,
    /// openai-sse: write the usage chunk when usage is known (`--include-usage`).
    pub include_usage: bool,
    /// `--model`: overrides the model the init event names.
    pub model: Option<String>,
    /// `--id`: overrides the derived response id.
    pub id: Option<String>,
    /// `--created` (Unix seconds): overrides the derived creation time.
    pub created: Option<i64>,
    /// When the run started (Unix seconds): `created` for a session that gave
    /// no timestamp before its first chunk. `None`: read the clock when the
    /// sink is made.
    pub run_start: Option<i64>,
    /// One-line JSON for the whole-value formats (`-c`).
    pub compact: bool,
    /// documents formats: include `thinking` documents (`--thinking`).
    pub thinking: bool,
    /// text: the last lines of shell output that arrives with a call's
    /// completion (`--shell-lines`; None: all of them).
    pub shell_lines: Option<usize>,
    /// text: the conversation only, without the session header, the final
    /// line, unknown events and invalid input lines (`-q`).
    pub quiet: bool,
    /// text: leave thinking out (`--no-thinking`).
    pub no_thinking: bool,
    /// text: leave out the rows for input lines that were not valid input,
    /// because the warnings on stderr show them on the same terminal.
    pub hide_bad_lines: bool,
}

/// The sink for `format`, writing to `w`.
pub fn sink<'w, W: Write + 'w>(format: Format, opts: &OutputOptions, w: W) -> Box<dyn Sink + 'w> {
    match format {
        Format::Text => Box::new(text::TextSink::new(w, opts)),
        Format::Events => Box::new(events::EventsSink::new(w)),
        Format::OpenAiSse => Box::new(openai::SseSink::new(w, opts)),
        Format::OpenAiJson => Box::new(openai::JsonSink::new(w, opts)),
        Format::Documents => Box::new(documents::DocumentsSink::new(w, opts)),
        Format::DocumentsSse => Box::new(documents_sse::DocumentsSseSink::new(w, opts)),
    }
}
