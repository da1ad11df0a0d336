//! `--to documents`: one `ChatResponse` per session, its answer split into
//! typed documents (docs/formats.md#documents).
//!
//! The [`Builder`] turns one session's normalized events into documents and
//! reports each step through [`DocOut`]: a document starts, content arrives,
//! a tool call starts, gets its arguments and its result, a document ends,
//! the session is done. `documents` keeps only the ended documents and writes
//! the whole response at the end of the session; `documents-sse`
//! ([`super::documents_sse`]) writes every step as it happens. Both read the
//! same steps, so the documents rebuilt from the SSE stream are exactly the
//! ones `documents` writes.
//!
//! How events become documents:
//! - assistant text goes through the incremental [`Segmenter`]: prose is a
//!   `text` document, each fenced block a `code_block` or `code_reference`;
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

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use super::markdown::{Fence, Seg, Segmenter};
use super::{OutputOptions, Session, Sink};
use crate::event::{Event, Kind, ToolEnd, ToolStart, Usage};
use crate::json::write_str;

// ------------------------------------------------------------------ JSON tree

/// A JSON value as the documents formats build it: fixed key order, input
/// payloads kept as raw text.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    /// JSON text taken from the input, written re-indented but otherwise as it came.
    Raw(String),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    fn str(s: &str) -> J {
        J::Str(s.to_owned())
    }

    fn opt_str(s: Option<&str>) -> J {
        s.map_or(J::Null, J::str)
    }

    fn opt_u64(v: Option<u64>) -> J {
        v.map_or(J::Null, J::u64)
    }

    fn u64(v: u64) -> J {
        J::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }

    fn raw(r: &crate::event::Json) -> J {
        J::Raw(r.get().to_owned())
    }
}

/// How JSON is laid out: one line, or indented by two spaces per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Compact,
    Pretty,
}

/// Write `j` at nesting `level` (the caller has written the indentation of
/// its first line).
pub fn write_json(out: &mut Vec<u8>, j: &J, layout: Layout, level: usize) {
    match j {
        J::Null => out.extend_from_slice(b"null"),
        J::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        J::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        J::Str(s) => write_str(out, s).expect("writing to a Vec"),
        J::Raw(r) => write_raw(out, r, layout, level),
        J::Arr(items) if items.is_empty() => out.extend_from_slice(b"[]"),
        J::Obj(members) if members.is_empty() => out.extend_from_slice(b"{}"),
        J::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                write_json(out, item, layout, level + 1);
            }
            newline(out, layout, level);
            out.push(b']');
        }
        J::Obj(members) => {
            out.push(b'{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                write_str(out, k).expect("writing to a Vec");
                out.extend_from_slice(if layout == Layout::Pretty {
                    b": "
                } else {
                    b":"
                });
                write_json(out, v, layout, level + 1);
            }
            newline(out, layout, level);
            out.push(b'}');
        }
    }
}

/// Pretty output indents this many levels at most; deeper values are
/// written compactly. Indenting every level makes the output quadratic in
/// the depth (a payload nested 200,000 deep would take 40 GB).
pub const MAX_PRETTY_DEPTH: usize = 32;

fn newline(out: &mut Vec<u8>, layout: Layout, level: usize) {
    if layout == Layout::Pretty && level <= MAX_PRETTY_DEPTH {
        out.push(b'\n');
        out.resize(out.len() + 2 * level, b' ');
    }
}

/// Copy valid JSON text, dropping its insignificant whitespace and laying it
/// out like [`write_json`] (strings and numbers are copied byte for byte).
pub fn write_raw(out: &mut Vec<u8>, raw: &str, layout: Layout, level: usize) {
    let b = raw.as_bytes();
    let mut level = level;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                // Copy the whole string, escapes included.
                let start = i;
                i += 1;
                while i < b.len() {
                    match memchr::memchr2(b'"', b'\\', &b[i..]) {
                        Some(n) if b[i + n] == b'\\' => i += n + 2,
                        Some(n) => {
                            i += n + 1;
                            break;
                        }
                        None => i = b.len(),
                    }
                }
                out.extend_from_slice(&b[start..i.min(b.len())]);
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                let next = b[i + 1..]
                    .iter()
                    .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                    .map(|n| i + 1 + n);
                match next {
                    Some(n) if b[n] == close => {
                        out.push(open);
                        out.push(close);
                        i = n + 1;
                    }
                    _ => {
                        out.push(open);
                        level += 1;
                        newline(out, layout, level);
                        i += 1;
                    }
                }
            }
            close @ (b'}' | b']') => {
                level = level.saturating_sub(1);
                newline(out, layout, level);
                out.push(close);
                i += 1;
            }
            b',' => {
                out.push(b',');
                newline(out, layout, level);
                i += 1;
            }
            b':' => {
                out.extend_from_slice(if layout == Layout::Pretty {
                    b": "
                } else {
                    b":"
                });
                i += 1;
            }
            _ => {
                // A number or literal: up to the next structural byte.
                let start = i;
                while i < b.len()
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b'}' | b']' | b'{' | b'['
                    )
                {
                    i += 1;
                }
                out.extend_from_slice(&b[start..i]);
            }
        }
    }
}

// ------------------------------------------------------------------ documents

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
                J::Obj(vec![
                    ("promptTokens", J::u64(u.input)),
                    ("completionTokens", J::u64(u.output)),
                    ("totalTokens", J::u64(u.input.saturating_add(u.output))),
                ])
            }),
        ));
        o.push((
            "metadata",
            J::Obj(vec![
                ("duration_ms", J::opt_u64(self.duration_ms)),
                ("toolCallCount", J::u64(self.tool_calls)),
                ("turnCount", J::u64(self.turns)),
            ]),
        ));
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

/// What the command line says about the documents formats.
#[derive(Debug, Clone, Default)]
pub struct DocOptions {
    /// Include `thinking` documents.
    pub thinking: bool,
    /// `--model`, `--id`, `--created`.
    pub model: Option<String>,
    pub id: Option<String>,
    pub created: Option<i64>,
    /// When the run started (Unix seconds): `created` when the stream has no time.
    pub run_start: i64,
}

impl DocOptions {
    pub fn new(o: &OutputOptions) -> Self {
        DocOptions {
            thinking: o.thinking,
            model: o.model.clone(),
            id: o.id.clone(),
            created: o.created,
            run_start: o.run_start.unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            }),
        }
    }
}

/// A document whose content streams in: text and thinking. It opens at the
/// first non-whitespace character, leaves out leading blank lines, and holds
/// trailing whitespace back until more text follows it.
#[derive(Debug, Default)]
struct Flow {
    seq: Option<u32>,
    /// Everything sent so far (the final content).
    content: String,
    /// How much of `content` was reported as deltas: the rest is sent but
    /// not reported yet (an offset, not a copy: a huge line is held once).
    reported: usize,
    /// Before opening: the whitespace since the last line break.
    lead: String,
    /// After opening: trailing whitespace not sent yet.
    held: String,
}

impl Flow {
    /// Take `s`; true when it opens the document (its first non-blank text).
    fn push(&mut self, mut s: &str) -> bool {
        let mut opened = false;
        if self.seq.is_none() {
            let Some(i) = s.find(|c: char| !c.is_whitespace()) else {
                keep_after_break(&mut self.lead, s);
                return false;
            };
            keep_after_break(&mut self.lead, &s[..i]);
            let lead = std::mem::take(&mut self.lead);
            self.send(&lead);
            s = &s[i..];
            opened = true;
        }
        let end = s.trim_end().len();
        if end > 0 {
            let held = std::mem::take(&mut self.held);
            self.send(&held);
            self.send(&s[..end]);
            self.held = held;
            self.held.clear();
        }
        self.held.push_str(&s[end..]);
        opened
    }

    fn send(&mut self, t: &str) {
        self.content.push_str(t);
    }

    /// Sent, but not yet reported as a delta.
    fn unsent(&self) -> &str {
        &self.content[self.reported..]
    }
}

/// Append `ws` to `lead`, keeping only what follows its last line break.
fn keep_after_break(lead: &mut String, ws: &str) {
    match ws.rfind('\n') {
        Some(i) => {
            lead.clear();
            lead.push_str(&ws[i + 1..]);
        }
        None => lead.push_str(ws),
    }
}

/// An open code block document.
#[derive(Debug)]
struct OpenCode {
    seq: u32,
    fence: Fence,
    content: String,
    /// How much of `content` was reported as deltas (as in [`Flow`]).
    reported: usize,
}

/// An open tool-call document.
#[derive(Debug)]
struct OpenTool {
    seq: u32,
    ty: &'static str,
    start: ToolStart<'static>,
    /// Shell output streamed as deltas (used when the completion carries none).
    output: Option<String>,
}

/// What the summary needs from a session's result.
#[derive(Debug, Clone, Copy)]
struct ResultSeen {
    ts: Option<i64>,
    ok: bool,
    duration_ms: Option<u64>,
    usage: Option<Usage>,
}

/// Builds one session's documents.
#[derive(Debug)]
pub struct Builder {
    opts: DocOptions,
    session_id: String,
    model: Option<String>,
    cwd: Option<String>,
    mode: Option<String>,
    first_ts: Option<i64>,
    any_event: bool,
    next_seq: u32,
    seg: Segmenter,
    text: Flow,
    code: Option<OpenCode>,
    thinking: Flow,
    thinking_ms: Option<u64>,
    /// Open tool calls, oldest first.
    tools: VecDeque<OpenTool>,
    usage_sum: Option<Usage>,
    result: Option<ResultSeen>,
    /// A fatal error was reported (as an `AGENT_ERROR` document).
    fatal: bool,
    tool_calls: u64,
    turns: u64,
}

impl Builder {
    pub fn new(opts: DocOptions, session: &Session) -> Self {
        Builder {
            opts,
            session_id: session.id.clone(),
            model: None,
            cwd: None,
            mode: None,
            first_ts: None,
            any_event: false,
            next_seq: 0,
            seg: Segmenter::new(),
            text: Flow::default(),
            code: None,
            thinking: Flow::default(),
            thinking_ms: None,
            tools: VecDeque::new(),
            usage_sum: None,
            result: None,
            fatal: false,
            tool_calls: 0,
            turns: 0,
        }
    }

    fn seq(&mut self) -> u32 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Take one event of the session.
    pub fn event(&mut self, ev: &Event<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        // Every session begins with `session_started`, even an input with no
        // events at all: it says nothing about what the agent did.
        if !matches!(ev.kind, Kind::SessionStarted(_)) {
            self.any_event = true;
        }
        if self.first_ts.is_none() {
            self.first_ts = ev.ts;
        }
        match &ev.kind {
            Kind::SessionStarted(s) => {
                self.model = s.model.as_deref().map(str::to_owned);
                self.cwd = s.cwd.as_deref().map(str::to_owned);
                self.mode = s.permission_mode.as_deref().and_then(mode_of);
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                self.close_thinking(out)?;
                self.text(text, out)?;
            }
            Kind::ThinkingDelta { text } if self.opts.thinking => {
                self.close_text(out)?;
                self.thinking(text, out)?;
            }
            Kind::ThinkingCompleted { duration_ms } if self.opts.thinking => {
                self.thinking_ms = *duration_ms;
                self.close_thinking(out)?;
            }
            Kind::Thinking { text, duration_ms } if self.opts.thinking => {
                self.close_text(out)?;
                self.thinking(text, out)?;
                self.thinking_ms = *duration_ms;
                self.close_thinking(out)?;
            }
            Kind::ToolCallStarted(t) => self.tool_start(t, out)?,
            Kind::ShellOutputDelta { call_id, text, .. } => {
                if let Some(t) = self
                    .tools
                    .iter_mut()
                    .rev()
                    .find(|t| t.start.call_id == *call_id)
                {
                    t.output.get_or_insert_with(String::new).push_str(text);
                }
            }
            Kind::ToolCallCompleted(e) => self.tool_end(e, out)?,
            Kind::ToolCall(b) => {
                self.tool_start(&b.0, out)?;
                self.tool_end(&b.1, out)?;
            }
            Kind::UsageDelta(u) => {
                self.usage_sum = Some(self.usage_sum.unwrap_or_default().add(u));
            }
            Kind::TurnEnded { .. } => self.turns += 1,
            Kind::Error {
                message,
                fatal,
                source,
            } => {
                self.close_flows(out)?;
                self.fatal |= *fatal;
                let meta = error_meta(
                    "AGENT_ERROR",
                    source.as_deref().unwrap_or("agent"),
                    if *fatal { "fatal" } else { "non-fatal" },
                );
                self.error_doc(message, meta, out)?;
            }
            Kind::Result(r) => {
                self.close_flows(out)?;
                if !r.ok && !self.fatal {
                    self.fatal = true;
                    let msg = r.error.as_deref().unwrap_or("the session failed");
                    self.error_doc(msg, error_meta("AGENT_ERROR", "result", "fatal"), out)?;
                }
                self.result = Some(ResultSeen {
                    ts: ev.ts,
                    ok: r.ok,
                    duration_ms: r.duration_ms,
                    usage: r.usage,
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// The session has no more events: close what is open, explain a
    /// missing result, and report the summary.
    pub fn end(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        self.close_flows(out)?;
        // The normalizer closes open calls before a session ends; a call
        // still open here is closed as cancelled all the same.
        while let Some(t) = self.tools.back() {
            let mut e = ToolEnd::new(t.start.call_id.clone(), t.start.tool_name.clone(), false);
            e.cancelled = true;
            self.tool_end(&e, out)?;
        }
        if self.result.is_none() {
            let details = if self.any_event {
                "no result event"
            } else {
                "the input had no events"
            };
            let meta = error_meta("INCOMPLETE_STREAM", "cstream", details);
            self.error_doc("the stream ended before the session's result", meta, out)?;
        }
        let summary = self.summary();
        out.done(&summary)
    }

    fn summary(&self) -> Summary {
        let result = self.result;
        let ok = result.is_some_and(|r| r.ok) && !self.fatal;
        let created = self
            .opts
            .created
            .or(self.first_ts.map(|ms| ms.div_euclid(1000)))
            .unwrap_or(self.opts.run_start);
        let duration_ms = result.and_then(|r| {
            r.duration_ms.or(match (self.first_ts, r.ts) {
                (Some(a), Some(b)) => b.checked_sub(a).and_then(|d| u64::try_from(d).ok()),
                _ => None,
            })
        });
        Summary {
            id: self
                .opts
                .id
                .clone()
                .unwrap_or_else(|| format!("chat_{}", self.session_id)),
            conversation_id: self.session_id.clone(),
            model: self
                .opts
                .model
                .clone()
                .or_else(|| self.model.clone())
                .unwrap_or_else(|| "unknown".to_owned()),
            mode: self.mode.clone().unwrap_or_else(|| "agent".to_owned()),
            created: iso8601(created),
            status: if ok { "completed" } else { "error" },
            usage: result.and_then(|r| r.usage).or(self.usage_sum),
            duration_ms,
            tool_calls: self.tool_calls,
            turns: match (self.turns, self.any_event) {
                (0, true) => 1,
                (n, _) => n,
            },
        }
    }

    // --------------------------------------------------------------- text

    fn text(&mut self, text: &str, out: &mut dyn DocOut) -> io::Result<()> {
        let mut seg = std::mem::take(&mut self.seg);
        let mut res = Ok(());
        seg.push(text, &mut |s| {
            if res.is_ok() {
                res = self.seg_step(s, out);
            }
        });
        self.seg = seg;
        res?;
        self.flush_text(out)
    }

    /// Report the content gathered from one push as one delta per document.
    fn flush_text(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        if let Some(seq) = self.text.seq
            && !self.text.unsent().is_empty()
        {
            out.delta(seq, self.text.unsent())?;
            self.text.reported = self.text.content.len();
        }
        if let Some(c) = &mut self.code
            && c.reported < c.content.len()
        {
            out.delta(c.seq, &c.content[c.reported..])?;
            c.reported = c.content.len();
        }
        Ok(())
    }

    fn seg_step(&mut self, s: Seg<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        match s {
            Seg::Prose(t) => {
                if self.text.push(t) {
                    let seq = self.seq();
                    self.text.seq = Some(seq);
                    out.start(seq, "text", &text_meta())?;
                }
            }
            Seg::Open(fence) => {
                self.end_text_doc(out)?;
                let seq = self.seq();
                let (ty, meta) = fence_meta(&fence);
                out.start(seq, ty, &meta)?;
                self.code = Some(OpenCode {
                    seq,
                    fence,
                    content: String::new(),
                    reported: 0,
                });
            }
            Seg::Code(t) => {
                if let Some(c) = &mut self.code {
                    // A code block can be as long as the longest line and
                    // arrives line by line: grow by a quarter, not by
                    // doubling, to hold it about once.
                    let spare = c.content.capacity() - c.content.len();
                    if spare < t.len() {
                        c.content.reserve_exact(t.len().max(c.content.len() / 4));
                    }
                    c.content.push_str(t);
                }
            }
            Seg::Close => {
                if let Some(c) = self.code.take() {
                    if c.reported < c.content.len() {
                        out.delta(c.seq, &c.content[c.reported..])?;
                    }
                    let (ty, metadata) = fence_meta(&c.fence);
                    out.end(Doc {
                        seq: c.seq,
                        ty,
                        content: Some(c.content),
                        metadata,
                    })?;
                }
            }
        }
        Ok(())
    }

    fn end_text_doc(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        let flow = std::mem::take(&mut self.text);
        if let Some(seq) = flow.seq {
            if !flow.unsent().is_empty() {
                out.delta(seq, flow.unsent())?;
            }
            out.end(Doc {
                seq,
                ty: "text",
                content: Some(flow.content),
                metadata: text_meta(),
            })?;
        }
        Ok(())
    }

    /// The assistant's text is interrupted: settle the segmenter and end the
    /// open text and code documents.
    fn close_text(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        if !self.seg.is_idle() || self.code.is_some() {
            let mut seg = std::mem::take(&mut self.seg);
            let mut res = Ok(());
            seg.finish(&mut |s| {
                if res.is_ok() {
                    res = self.seg_step(s, out);
                }
            });
            self.seg = seg;
            res?;
        }
        self.end_text_doc(out)
    }

    fn close_flows(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        self.close_text(out)?;
        self.close_thinking(out)
    }

    // ----------------------------------------------------------- thinking

    fn thinking(&mut self, text: &str, out: &mut dyn DocOut) -> io::Result<()> {
        if self.thinking.push(text) {
            let seq = self.seq();
            self.thinking.seq = Some(seq);
            self.thinking_ms = None;
            out.start(seq, "thinking", &J::Obj(vec![]))?;
        }
        if let Some(seq) = self.thinking.seq
            && !self.thinking.unsent().is_empty()
        {
            out.delta(seq, self.thinking.unsent())?;
            self.thinking.reported = self.thinking.content.len();
        }
        Ok(())
    }

    fn close_thinking(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        let flow = std::mem::take(&mut self.thinking);
        if let Some(seq) = flow.seq {
            out.end(Doc {
                seq,
                ty: "thinking",
                content: Some(flow.content),
                metadata: J::Obj(vec![("duration_ms", J::opt_u64(self.thinking_ms))]),
            })?;
        }
        self.thinking_ms = None;
        Ok(())
    }

    // -------------------------------------------------------------- tools

    fn tool_start(&mut self, t: &ToolStart<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        self.close_flows(out)?;
        self.tool_calls += 1;
        let seq = self.seq();
        let ty = doc_type(&t.tool_name);
        out.start(seq, ty, &start_meta(ty, t, self.cwd.as_deref()))?;
        out.tool_start(seq, &t.tool_name, &t.call_id)?;
        out.tool_arguments(seq, &J::raw(&t.args))?;
        // Content known from the arguments (an edit's new text, a plan) is
        // sent at once, like any other document's.
        if let Some(c) = tool_content(ty, t) {
            out.delta(seq, &c)?;
        }
        self.tools.push_back(OpenTool {
            seq,
            ty,
            start: t.clone().into_owned(),
            output: None,
        });
        Ok(())
    }

    fn tool_end(&mut self, e: &ToolEnd<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        // Open ids are unique (the normalizer makes a repeated start
        // progress). The oldest call is the one the normalizer evicts when
        // too many are open: look there first, then from the newest.
        let at = if self
            .tools
            .front()
            .is_some_and(|t| t.start.call_id == e.call_id)
        {
            Some(0)
        } else {
            self.tools
                .iter()
                .rposition(|t| t.start.call_id == e.call_id)
        };
        let open = match at.and_then(|i| self.tools.remove(i)) {
            Some(t) => t,
            None => {
                // A completion whose start was never seen is a call all the same.
                let start = ToolStart::new(
                    Cow::Borrowed(&e.call_id),
                    Cow::Borrowed(&e.tool_name),
                    crate::event::json_null(),
                );
                self.tool_start(&start, out)?;
                match self.tools.pop_back() {
                    Some(t) => t,
                    None => return Ok(()),
                }
            }
        };
        let result = tool_result(e);
        out.tool_result(open.seq, &result)?;
        let cwd = self.cwd.as_deref();
        let metadata = end_meta(&open, e, result, cwd);
        out.end(Doc {
            seq: open.seq,
            ty: open.ty,
            content: tool_content(open.ty, &open.start),
            metadata,
        })?;
        let shell_ran = open.ty == "terminal_command" && e.exit_code.is_some();
        if !e.ok && !e.cancelled && !shell_ran {
            let msg = e.error.as_deref().map_or_else(
                || format!("the {} call failed", open.start.tool_name),
                str::to_owned,
            );
            let details = open
                .start
                .key_arg()
                .unwrap_or(&open.start.call_id)
                .to_owned();
            let meta = error_meta("TOOL_ERROR", &open.start.tool_name, &details);
            self.error_doc(&msg, meta, out)?;
        }
        Ok(())
    }

    fn error_doc(&mut self, msg: &str, metadata: J, out: &mut dyn DocOut) -> io::Result<()> {
        let seq = self.seq();
        out.start(seq, "error", &metadata)?;
        if !msg.is_empty() {
            out.delta(seq, msg)?;
        }
        out.end(Doc {
            seq,
            ty: "error",
            content: Some(msg.to_owned()),
            metadata,
        })
    }
}

/// `permissionMode` values that name a documents `mode`.
fn mode_of(permission_mode: &str) -> Option<String> {
    matches!(permission_mode, "plan" | "ask" | "debug").then(|| permission_mode.to_owned())
}

fn text_meta() -> J {
    J::Obj(vec![("format", J::str("markdown"))])
}

fn fence_meta(f: &Fence) -> (&'static str, J) {
    match f {
        Fence::Code { language } => (
            "code_block",
            J::Obj(vec![
                ("language", J::str(language)),
                ("purpose", J::str("example")),
            ]),
        ),
        Fence::Reference {
            path,
            start_line,
            end_line,
        } => (
            "code_reference",
            J::Obj(vec![
                ("filePath", J::str(path)),
                ("startLine", J::u64(*start_line)),
                ("endLine", J::u64(*end_line)),
                ("language", J::str(language_of(path))),
            ]),
        ),
    }
}

fn error_meta(code: &str, source: &str, details: &str) -> J {
    J::Obj(vec![
        ("errorCode", J::str(code)),
        ("source", J::str(source)),
        ("details", J::str(details)),
    ])
}

/// The document type of a tool call, from its normalized name.
pub fn doc_type(tool_name: &str) -> &'static str {
    match tool_name {
        "edit" | "write" | "delete" | "move" | "rename" => "file_edit",
        "shell" => "terminal_command",
        "todo" => "todo_update",
        "plan" => "plan",
        "question" => "clarification",
        _ => "tool_call",
    }
}

fn operation(tool_name: &str) -> &'static str {
    match tool_name {
        "write" => "create",
        "delete" => "delete",
        "move" | "rename" => "rename",
        _ => "edit",
    }
}

/// A tool document's content: the new text of an edit, the plan, the line
/// introducing questions; `None` for the other types.
fn tool_content(ty: &str, t: &ToolStart<'_>) -> Option<String> {
    let d = t.details.as_deref()?;
    let c = match ty {
        "file_edit" if t.tool_name == "delete" => None,
        "file_edit" => d.new_string.as_deref().or(d.file_content.as_deref()),
        "plan" => d.plan.as_deref(),
        "clarification" => d.title.as_deref(),
        _ => None,
    };
    c.map(str::to_owned)
}

fn todos_json(t: &ToolStart<'_>) -> J {
    let todos = t
        .details
        .as_deref()
        .and_then(|d| d.todos.as_deref())
        .unwrap_or(&[]);
    J::Arr(
        todos
            .iter()
            .enumerate()
            .map(|(i, td)| {
                J::Obj(vec![
                    (
                        "id",
                        J::Str(
                            td.id
                                .as_deref()
                                .map_or_else(|| (i + 1).to_string(), str::to_owned),
                        ),
                    ),
                    ("content", J::str(&td.content)),
                    ("status", J::str(&td.status)),
                ])
            })
            .collect(),
    )
}

/// Metadata known when the call starts.
fn start_meta(ty: &str, t: &ToolStart<'_>, session_cwd: Option<&str>) -> J {
    let d = t.details.as_deref();
    match ty {
        "file_edit" => {
            let mut o = vec![
                ("filePath", J::opt_str(t.path.as_deref())),
                ("operation", J::str(operation(&t.tool_name))),
                (
                    "language",
                    J::str(t.path.as_deref().map_or("", language_of)),
                ),
            ];
            if let Some(p) = d.and_then(|d| d.new_path.as_deref()) {
                o.push(("newPath", J::str(p)));
            }
            J::Obj(o)
        }
        "terminal_command" => J::Obj(vec![
            ("command", J::opt_str(t.command.as_deref())),
            (
                "workingDirectory",
                J::opt_str(t.cwd.as_deref().or(session_cwd)),
            ),
        ]),
        "todo_update" => J::Obj(vec![("todos", todos_json(t))]),
        "plan" => J::Obj(vec![
            ("title", J::opt_str(d.and_then(|d| d.title.as_deref()))),
            (
                "overview",
                J::opt_str(d.and_then(|d| d.overview.as_deref())),
            ),
            ("todos", todos_json(t)),
            ("format", J::str("markdown")),
        ]),
        "clarification" => {
            let qs = d.and_then(|d| d.questions.as_deref()).unwrap_or(&[]);
            J::Obj(vec![(
                "questions",
                J::Arr(
                    qs.iter()
                        .enumerate()
                        .map(|(i, q)| {
                            J::Obj(vec![
                                (
                                    "id",
                                    J::Str(
                                        q.id.as_deref()
                                            .map_or_else(|| format!("q{}", i + 1), str::to_owned),
                                    ),
                                ),
                                ("text", J::str(&q.text)),
                                (
                                    "options",
                                    J::Arr(
                                        q.options
                                            .iter()
                                            .enumerate()
                                            .map(|(j, c)| {
                                                J::Obj(vec![
                                                    (
                                                        "id",
                                                        J::Str(c.id.as_deref().map_or_else(
                                                            || (j + 1).to_string(),
                                                            str::to_owned,
                                                        )),
                                                    ),
                                                    ("label", J::str(&c.label)),
                                                ])
                                            })
                                            .collect(),
                                    ),
                                ),
                            ])
                        })
                        .collect(),
                ),
            )])
        }
        // The arguments follow in `tool_call_arguments` (and in the full metadata).
        _ => J::Obj(vec![
            ("toolName", J::str(&t.tool_name)),
            ("toolCallId", J::str(&t.call_id)),
        ]),
    }
}

/// `{status, data}`: the source's result payload, else the error message.
fn tool_result(e: &ToolEnd<'_>) -> J {
    let data = match (&e.result, &e.error) {
        (Some(r), _) => J::raw(r),
        (None, Some(err)) => J::str(err),
        (None, None) => J::Null,
    };
    J::Obj(vec![
        ("status", J::str(if e.ok { "success" } else { "error" })),
        ("data", data),
    ])
}

/// The full metadata, at completion.
fn end_meta(open: &OpenTool, e: &ToolEnd<'_>, result: J, session_cwd: Option<&str>) -> J {
    let t = &open.start;
    let J::Obj(mut o) = start_meta(open.ty, t, session_cwd) else {
        return J::Null;
    };
    match open.ty {
        "file_edit" => {
            let d = t.details.as_deref();
            let diff = match d.map(|d| (&d.old_string, &d.new_string)) {
                Some((Some(old), Some(new))) => {
                    let range = e.patch.as_deref().and_then(|p| old_range(p, old));
                    J::Obj(vec![
                        ("oldString", J::str(old)),
                        ("newString", J::str(new)),
                        ("startLine", J::opt_u64(range.map(|r| r.0))),
                        ("endLine", J::opt_u64(range.map(|r| r.1))),
                    ])
                }
                _ => J::Null,
            };
            o.push(("diff", diff));
            o.push(("patch", J::opt_str(e.patch.as_deref())));
        }
        "terminal_command" => {
            o.push(("exitCode", e.exit_code.map_or(J::Null, J::Int)));
            o.push((
                "output",
                J::opt_str(
                    e.output
                        .as_ref()
                        .map(|o| o.as_str())
                        .as_deref()
                        .or(open.output.as_deref()),
                ),
            ));
            o.push(("duration_ms", J::opt_u64(e.duration_ms)));
        }
        "tool_call" => {
            o.push(("arguments", J::raw(&t.args)));
            o.push(("result", result));
            o.push(("duration_ms", J::opt_u64(e.duration_ms)));
        }
        _ => {}
    }
    J::Obj(o)
}

/// Where `old` sits in the old file, from a unified diff's hunks: the first
/// run of old-side lines (context and removed) that holds it. `None` when
/// the hunks do not show it.
pub fn old_range(patch: &str, old: &str) -> Option<(u64, u64)> {
    let want: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
    if old.is_empty() {
        return None;
    }
    // Old-side lines of each hunk, with their line numbers.
    let mut hunks: Vec<Vec<(u64, &str)>> = Vec::new();
    let mut line = 0u64;
    for l in patch.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let start = rest
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse::<u64>().ok())?;
            line = start;
            hunks.push(Vec::new());
        } else if let Some(h) = hunks.last_mut() {
            if let Some(text) = l.strip_prefix(' ').or_else(|| l.strip_prefix('-')) {
                h.push((line, text));
                line += 1;
            } else if l.is_empty() {
                // Some writers drop the space of an empty context line.
                h.push((line, ""));
                line += 1;
            }
        }
    }
    let n = want.len();
    for h in &hunks {
        for i in 0..h.len().saturating_sub(n - 1) {
            let window = &h[i..i + n];
            let fits = if n == 1 {
                window[0].1.contains(want[0])
            } else {
                window[0].1.ends_with(want[0])
                    && window[n - 1].1.starts_with(want[n - 1])
                    && window[1..n - 1]
                        .iter()
                        .zip(&want[1..n - 1])
                        .all(|(a, b)| a.1 == *b)
            };
            if fits {
                return Some((window[0].0, window[n - 1].0));
            }
        }
    }
    None
}

/// A markdown language name for a file, from its extension (or name);
/// `""` when not known.
pub fn language_of(path: &str) -> &'static str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "dockerfile" | "containerfile" => return "dockerfile",
        "makefile" | "gnumakefile" => return "makefile",
        "cmakelists.txt" => return "cmake",
        _ => {}
    }
    let Some((_, ext)) = lower.rsplit_once('.') else {
        return "";
    };
    match ext {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" => "scala",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "fs" => "fsharp",
        "rb" => "ruby",
        "php" => "php",
        "pl" | "pm" => "perl",
        "lua" => "lua",
        "r" => "r",
        "dart" => "dart",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "clj" | "cljs" => "clojure",
        "zig" => "zig",
        "nim" => "nim",
        "sh" | "bash" => "bash",
        "zsh" => "zsh",
        "fish" => "fish",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "vue" => "vue",
        "svelte" => "svelte",
        "json" => "json",
        "jsonc" => "jsonc",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "md" | "markdown" => "markdown",
        "tex" => "latex",
        "proto" => "protobuf",
        "graphql" | "gql" => "graphql",
        "tf" => "hcl",
        "ini" | "cfg" => "ini",
        "diff" | "patch" => "diff",
        _ => "",
    }
}

/// Unix seconds as RFC 3339 in UTC (`2026-02-23T10:30:00Z`), clamped to
/// years 0000 to 9999, all that format can write. Timestamps are checked
/// when read and `--created` when parsed; the clamp keeps a clock gone wild
/// from writing an invalid date.
pub fn iso8601(secs: i64) -> String {
    let range = crate::event::TS_RANGE_MS;
    let secs = secs.clamp(range.start() / 1000, range.end() / 1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

// ------------------------------------------------------------------ the sink

/// Collects one session's ended documents and writes its response at the end.
struct Collect<'a> {
    docs: &'a mut Vec<Doc>,
    out: &'a mut Vec<u8>,
    layout: Layout,
}

impl DocOut for Collect<'_> {
    fn start(&mut self, _: u32, _: &'static str, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn delta(&mut self, _: u32, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn tool_start(&mut self, _: u32, _: &str, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn tool_arguments(&mut self, _: u32, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn tool_result(&mut self, _: u32, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn end(&mut self, doc: Doc) -> io::Result<()> {
        self.docs.push(doc);
        Ok(())
    }
    fn done(&mut self, summary: &Summary) -> io::Result<()> {
        // Documents end in any order (parallel tool calls); they are listed
        // in the order they began.
        self.docs.sort_by_key(|d| d.seq);
        let docs = J::Arr(self.docs.drain(..).map(|d| d.to_json()).collect());
        write_json(self.out, &summary.to_json(Some(docs)), self.layout, 0);
        self.out.push(b'\n');
        Ok(())
    }
}

/// `--to documents`: one `ChatResponse` JSON value per session.
pub struct DocumentsSink<W: Write> {
    w: W,
    opts: DocOptions,
    layout: Layout,
    cur: Option<Builder>,
    docs: Vec<Doc>,
    buf: Vec<u8>,
}

impl<W: Write> DocumentsSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        DocumentsSink {
            w,
            opts: DocOptions::new(opts),
            layout: if opts.compact {
                Layout::Compact
            } else {
                Layout::Pretty
            },
            cur: None,
            docs: Vec::new(),
            buf: Vec::new(),
        }
    }

    fn collect(&mut self) -> Collect<'_> {
        Collect {
            docs: &mut self.docs,
            out: &mut self.buf,
            layout: self.layout,
        }
    }
}

impl<W: Write> Sink for DocumentsSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.cur = Some(Builder::new(self.opts.clone(), s));
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let mut b = match self.cur.take() {
            Some(b) => b,
            None => Builder::new(self.opts.clone(), s),
        };
        let r = b.event(ev, &mut self.collect());
        self.cur = Some(b);
        r
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        let mut b = match self.cur.take() {
            Some(b) => b,
            None => Builder::new(self.opts.clone(), s),
        };
        b.end(&mut self.collect())?;
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_770_823_841), "2026-02-11T15:30:41Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
        // The extremes are clamped to what RFC 3339 can write.
        assert_eq!(iso8601(i64::MAX), "9999-12-31T23:59:59Z");
        assert_eq!(iso8601(253_402_300_800), "9999-12-31T23:59:59Z");
        assert_eq!(iso8601(i64::MIN), "0000-01-01T00:00:00Z");
    }

    #[test]
    fn raw_json_is_relaid() {
        let raw = r#" { "a" : [1, 2.50e3 ,{}], "b":{ "c":"x \" , { y" ,"d":[ ] } ,"e":null} "#;
        let mut out = Vec::new();
        write_raw(&mut out, raw, Layout::Compact, 0);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":[1,2.50e3,{}],"b":{"c":"x \" , { y","d":[]},"e":null}"#
        );
        let mut out = Vec::new();
        write_raw(&mut out, raw, Layout::Pretty, 1);
        let pretty = String::from_utf8(out).unwrap();
        let want = "{\n    \"a\": [\n      1,\n      2.50e3,\n      {}\n    ],\n    \"b\": {\n      \"c\": \"x \\\" , { y\",\n      \"d\": []\n    },\n    \"e\": null\n  }";
        assert_eq!(pretty, want);
    }

    #[test]
    fn deep_raw_json_is_indented_only_so_far() {
        let n = 10_000;
        let raw = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mut out = Vec::new();
        write_raw(&mut out, &raw, Layout::Pretty, 0);
        // Linear in the depth: indented to MAX_PRETTY_DEPTH, compact below.
        assert!(out.len() < raw.len() + 4 * MAX_PRETTY_DEPTH * MAX_PRETTY_DEPTH);
        let compact: Vec<u8> = out
            .iter()
            .copied()
            .filter(|b| !b" \n".contains(b))
            .collect();
        assert_eq!(compact, raw.as_bytes());
    }

    #[test]
    fn pretty_matches_serde_json() {
        let j = J::Obj(vec![
            ("id", J::str("x")),
            ("n", J::Int(-3)),
            ("list", J::Arr(vec![J::Null, J::Bool(true), J::Obj(vec![])])),
            ("raw", J::Raw(r#"{"k":[1,{"z":"\n"}],"e":[]}"#.to_owned())),
        ]);
        let mut out = Vec::new();
        write_json(&mut out, &j, Layout::Pretty, 0);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        // serde_json sorts keys; compare after the same round trip.
        let mut ours = Vec::new();
        write_json(&mut ours, &j, Layout::Compact, 0);
        let v2: serde_json::Value = serde_json::from_slice(&ours).unwrap();
        assert_eq!(v, v2);
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("{\n  \"id\": \"x\",\n  \"n\": -3,\n  \"list\": [\n    null,"));
        assert!(s.contains("\"raw\": {\n    \"k\": [\n      1,\n      {\n        \"z\": \"\\n\"\n      }\n    ],\n    \"e\": []\n  }\n}"));
    }

    #[test]
    fn text_flow_trims_blank_lines_and_trailing_space() {
        let mut f = Flow::default();
        assert!(!f.push("\n\n  "));
        assert!(!f.push(" \n   "));
        assert!(f.push(" - item  "));
        f.seq = Some(1);
        assert!(!f.push("\n\n"));
        assert_eq!(f.content, "    - item");
        assert!(!f.push("next\n"));
        assert_eq!(f.content, "    - item  \n\nnext");
        assert_eq!(f.unsent(), f.content);
    }

    #[test]
    fn old_range_from_patch() {
        let patch = "--- a/src/main.py\n+++ b/src/main.py\n@@ -12,4 +12,5 @@\n def main():\n     app = Flask(__name__)\n     app.register_blueprint(api_bp)\n+    app.register_blueprint(auth_bp)\n     return app\n";
        assert_eq!(
            old_range(patch, "app.register_blueprint(api_bp)"),
            Some((14, 14))
        );
        assert_eq!(
            old_range(
                patch,
                "Flask(__name__)\n    app.register_blueprint(api_bp)\n"
            ),
            Some((13, 14))
        );
        assert_eq!(old_range(patch, "nowhere"), None);
        assert_eq!(old_range(patch, ""), None);
        assert_eq!(old_range("garbage", "x"), None);
        assert_eq!(old_range("@@ -x +1 @@\n x", "x"), None);
    }

    #[test]
    fn languages() {
        assert_eq!(language_of("src/main.py"), "python");
        assert_eq!(language_of("a/B.RS"), "rust");
        assert_eq!(language_of("Dockerfile"), "dockerfile");
        assert_eq!(language_of("notes"), "");
        assert_eq!(language_of("x.unknown"), "");
        assert_eq!(language_of("C:\\w\\app.tsx"), "tsx");
    }
}
