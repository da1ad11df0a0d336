//! `--to documents`: one `ChatResponse` per session, its answer split into
//! typed documents (docs/formats.md#documents).
//!
//! The [`Builder`] turns one session's normalized events into documents and
//! reports each step through [`DocOut`]: a document starts, content arrives,
//! a tool call starts, gets its arguments and its result, a document ends,
//! the session is done. `documents` keeps only the ended documents and writes
//! the whole response at the end of the session; `documents-sse`
//! ([`sse`]) writes every step as it happens. Both read the
//! same steps, so the documents rebuilt from the SSE stream are exactly the
//! ones `documents` writes.
//!
//! How events become documents:
//! - assistant text goes through the incremental
//!   [`Segmenter`](super::markdown::Segmenter): prose is a `text` document,
//!   each fenced block a `code_block` or `code_reference`;
//!   a text document opens with its first non-blank character (whitespace-only
//!   prose makes none), leaves out leading blank lines and trailing
//!   whitespace, and ends at a code block, a tool call, an error or the end;
//! - a tool call is one document from its start to its completion, typed by
//!   its normalized name (`edit`/`write`/`delete`/`move` → `file_edit`,
//!   `shell` → `terminal_command`, `todo` → `todo_update`, `plan` → `plan`,
//!   `question` → `clarification`, anything else → `tool_call`); a call that
//!   failed with a message (not a shell command that merely exited non-zero,
//!   not a call cancelled by the end of the session) is followed by an
//!   `error` document (`TOOL_ERROR`);
//! - an `error` event is an `error` document (`AGENT_ERROR`), as is a failed
//!   result that no fatal error explained; a session without a result ends
//!   with one (`INCOMPLETE_STREAM`);
//! - thinking becomes `thinking` documents only with `--thinking`.
//!
//! Payloads from the input (`arguments`, `result.data`) are copied as they
//! came, re-indented to fit the output; nothing is parsed into a
//! `serde_json::Value`.

mod builder;
mod meta;
mod sink;
pub mod sse;

use std::io;

pub use builder::Builder;
pub use sink::DocumentsSink;

use super::{Identity, OutputOptions};
use crate::event::Usage;
pub use crate::json::layout::{J, Layout};

/// One finished document.
#[derive(Debug, Clone)]
pub struct Doc {
    /// 1-based position in the response (the id is `doc_` + it, 3 digits).
    pub seq: u32,
    pub ty: &'static str,
    pub content: Option<String>,
    pub metadata: J,
}

/// The id of document `seq`: `doc_001`, `doc_002`, …
pub fn doc_id(seq: u32) -> String {
    format!("doc_{seq:03}")
}

/// Every `ChatResponse` field but `documents`.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub id: String,
    pub conversation_id: String,
    pub model: String,
    pub mode: String,
    /// ISO 8601, UTC, seconds.
    pub created: String,
    /// `completed` or `error`.
    pub status: &'static str,
    pub usage: Option<Usage>,
    pub duration_ms: Option<u64>,
    pub tool_calls: u64,
    pub turns: u64,
    /// The session it came from: (id, spawning call, a fork).
    pub parent: Option<(String, Option<String>, bool)>,
}

impl Summary {
    /// The fields in `ChatResponse` order, with `documents` (when given) after `status`.
    pub fn to_json(&self, documents: Option<J>) -> J {
        let mut o: Vec<(&'static str, J)> = vec![
            ("id", J::str(&self.id)),
            ("conversationId", J::str(&self.conversation_id)),
            ("model", J::str(&self.model)),
            ("mode", J::str(&self.mode)),
            ("created", J::str(&self.created)),
            ("status", J::str(self.status)),
        ];
        if let Some(d) = documents {
            o.push(("documents", d));
        }
        o.push((
            "usage",
            self.usage.map_or(J::Null, |u| {
                let mut o = vec![
                    ("promptTokens", J::u64(u.input)),
                    ("completionTokens", J::u64(u.output)),
                    ("totalTokens", J::u64(u.input.saturating_add(u.output))),
                ];
                if u.output_incomplete {
                    // The counts are lower bounds: some output count was
                    // not in the source.
                    o.push(("completionTokensIncomplete", J::Raw("true".to_owned())));
                }
                J::Obj(o)
            }),
        ));
        let mut meta = vec![
            ("duration_ms", J::opt_u64(self.duration_ms)),
            ("toolCallCount", J::u64(self.tool_calls)),
            ("turnCount", J::u64(self.turns)),
            ("schemaVersion", J::u64(crate::event::SCHEMA_VERSION.into())),
        ];
        match &self.parent {
            Some((id, _, true)) => meta.push(("forkedFrom", J::str(id))),
            Some((id, call, false)) => {
                meta.push(("parentConversationId", J::str(id)));
                if let Some(c) = call {
                    meta.push(("parentToolCallId", J::str(c)));
                }
            }
            None => {}
        }
        o.push(("metadata", J::Obj(meta)));
        J::Obj(o)
    }
}

impl Doc {
    /// `{id, type, sequence, content, metadata}`.
    pub fn to_json(&self) -> J {
        J::Obj(vec![
            ("id", J::Str(doc_id(self.seq))),
            ("type", J::str(self.ty)),
            ("sequence", J::Int(self.seq.into())),
            ("content", J::opt_str(self.content.as_deref())),
            ("metadata", self.metadata.clone()),
        ])
    }
}

/// Both sinks make a [`Builder`] when a session begins and drop it when it
/// ends; the normalizer begins every session before its first event.
const BEGIN_FIRST: &str = "Sink::begin precedes a session's events";

/// The steps of building a session's documents, in the order they happen.
pub trait DocOut {
    /// Document `seq` begins, with the metadata known so far.
    fn start(&mut self, seq: u32, ty: &'static str, metadata: &J) -> io::Result<()>;
    /// More content for document `seq` (never empty).
    fn delta(&mut self, seq: u32, text: &str) -> io::Result<()>;
    /// The tool call behind document `seq` began.
    fn tool_start(&mut self, seq: u32, tool_name: &str, call_id: &str) -> io::Result<()>;
    /// Its arguments.
    fn tool_arguments(&mut self, seq: u32, args: &J) -> io::Result<()>;
    /// Its result: `{status, data}`.
    fn tool_result(&mut self, seq: u32, result: &J) -> io::Result<()>;
    /// Document `seq` is complete.
    fn end(&mut self, doc: Doc) -> io::Result<()>;
    /// The session is over.
    fn done(&mut self, summary: &Summary) -> io::Result<()>;
}

/// What a documents builder is told: `--thinking`, and what names the
/// session's documents (pinned: its `run_start` is set).
#[derive(Debug, Clone, Default)]
pub struct DocOptions {
    /// Include `thinking` documents.
    pub thinking: bool,
    /// `--model`, `--id`, `--created` and the run's start.
    pub ident: Identity,
}

impl DocOptions {
    pub fn new(o: &OutputOptions) -> Self {
        DocOptions {
            thinking: o.documents.thinking,
            ident: Identity {
                run_start: Some(o.ident.run_start()),
                ..o.ident.clone()
            },
        }
    }
}
