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
pub mod text;

use std::io::{self, Write};

use crate::event::Event;

/// Identifies the session events belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The source's session id, or `session-N`.
    pub id: String,
    /// 1-based position of the session in the run.
    pub ordinal: usize,
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
    /// Push buffered output to its destination.
    fn flush(&mut self) -> io::Result<()>;
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
    /// One `ChatResponse` JSON value per session, its answer split into documents.
    Documents,
    /// The same documents as a live SSE stream.
    DocumentsSse,
}

impl Format {
    /// True for formats that write one SSE stream per session.
    pub fn is_sse(self) -> bool {
        matches!(self, Format::DocumentsSse)
    }
}

/// Everything a sink needs to know about how to write.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// Colour the `text` format.
    pub color: bool,
    /// Terminal width for truncating long lines in `text` (None: no truncation).
    pub width: Option<usize>,
    /// One-line JSON for `documents` (default: pretty, 2-space indent).
    pub compact: bool,
    /// `documents`: include `thinking` documents.
    pub thinking: bool,
    /// `--model`: the model name to report instead of the stream's.
    pub model: Option<String>,
    /// `--id`: the response id to report instead of the derived one.
    pub id: Option<String>,
    /// `--created`: the creation time (Unix seconds) to report instead of the derived one.
    pub created: Option<i64>,
}

/// The sink for `format`, writing to `w`.
pub fn sink<'w, W: Write + 'w>(format: Format, opts: &OutputOptions, w: W) -> Box<dyn Sink + 'w> {
    match format {
        Format::Text => Box::new(text::TextSink::new(w, opts)),
        Format::Events => Box::new(events::EventsSink::new(w)),
        Format::Documents => Box::new(documents::DocumentsSink::new(w, opts)),
        Format::DocumentsSse => Box::new(documents_sse::DocumentsSseSink::new(w, opts)),
    }
}
