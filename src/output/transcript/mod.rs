//! Transcripts for people to read and share: `--to markdown` and `--to html`
//! (docs/formats.md#markdown, docs/formats.md#html).
//!
//! Both formats are one [`Transcript`] driver over a [`Markup`]: the driver
//! reads the events, decides the structure (a header per session, a section
//! per turn, blocks of assistant text, collapsible thinking and tool calls,
//! notes for errors, a summary at the end) and keeps the figures the summary
//! needs; the markup writes each piece in its own syntax. Everything is
//! written as it arrives: a tool call's block opens at its start, its live
//! output goes in as it comes, and its outcome closes it. When something
//! else arrives while a call is open (a parallel call, text), the call's
//! block is closed and what comes later for it opens a block of its own, so
//! nothing is held back. Memory is bounded: one record per open call, and
//! each call's output is cut at the markup's [`Markup::OUTPUT_CAP_BYTES`]
//! with a note of how much was left out.

mod highlight;
pub mod html;
mod html_md;
pub mod markdown;
pub mod text;

use std::borrow::Cow;
use std::io;

use super::{Session, Sink};
use crate::event::calls::CallTable;
use crate::event::figures::{self, Figures};
use crate::event::{Event, Kind, OutStream, SessionStart, ToolEnd, ToolStart, UserEventKind};
use crate::json::layout::{Layout, write_raw};
use crate::terminal::{Sgr, sanitize, unfinished_sgr, visible};

/// A piece of text cut to fit: its start, how many bytes were left out, and
/// its end (empty unless something was left out of a whole text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clip<'t> {
    pub head: &'t str,
    pub omitted: u64,
    pub tail: &'t str,
}

/// `text` cut to about `cap` bytes: all of it when it fits, else its first
/// and last halves (the end of a command's output is where its errors are).
pub fn clip(text: &str, cap: usize) -> Clip<'_> {
    if text.len() <= cap {
        return Clip {
            head: text,
            omitted: 0,
            tail: "",
        };
    }
    let head = crate::strings::floor_char_boundary(text, cap / 2);
    let mut tail = text.len() - cap / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    Clip {
        head: &text[..head],
        omitted: (tail - head) as u64,
        tail: &text[tail..],
    }
}

/// The note that says what a cut left out.
pub fn omitted_note(bytes: u64) -> String {
    format!("[cstream: {bytes} bytes of output not shown]")
}

/// How a session ended, as its summary says.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A result that reported success.
    Ok,
    /// A result that reported failure, with the agent's error when it gave one.
    Failed(Option<String>),
    /// No result: the stream was cut off.
    Incomplete,
}

impl Outcome {
    /// The summary table's outcome cell, as text.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Ok => "✓ completed",
            Outcome::Failed(_) => "✗ failed",
            Outcome::Incomplete => "⚠ incomplete",
        }
    }
}

/// The figures of one session, for its summary: the same [`Figures`] every
/// format shows, and the failed result's error as this format shows it.
#[derive(Debug, Default)]
pub struct Tally {
    pub figures: Figures,
    /// The failed result's error, made visible.
    pub error: Option<String>,
    /// Turn headers written (a turn opens at a prompt, or at the answer to
    /// one that was not echoed: [`Figures::turns`]).
    turn_headers: usize,
}

impl Tally {
    /// The outcome for the summary.
    pub fn outcome(&self) -> Outcome {
        match self.figures.outcome() {
            figures::Outcome::Success => Outcome::Ok,
            figures::Outcome::Failure => Outcome::Failed(self.error.clone()),
            figures::Outcome::Incomplete => Outcome::Incomplete,
        }
    }

    /// The result's duration, else first to last timestamp.
    pub fn duration_ms(&self) -> Option<u64> {
        self.figures.duration_ms()
    }

    /// The cells of the summary table after the outcome, as text: what
    /// the Markdown and HTML summaries both show, a dash where a figure is
    /// unknown.
    pub fn cells(&self) -> SummaryCells {
        let dash = || "—".to_owned();
        let f = &self.figures;
        let (tokens_in, cached, tokens_out) = match f.usage() {
            Some(u) => (
                fmt_count(u.input),
                u.cache_read.map_or_else(dash, fmt_count),
                figures::output_shown(&u, fmt_count),
            ),
            None => (dash(), dash(), dash()),
        };
        SummaryCells {
            duration: self.duration_ms().map_or_else(dash, figures::fmt_ms),
            turns: f.turns().to_string(),
            calls: match f.failed_calls() {
                0 => f.tool_calls().to_string(),
                n => format!("{} ({n} failed)", f.tool_calls()),
            },
            tokens_in,
            cached,
            tokens_out,
            cost: f.cost_usd().map_or_else(dash, fmt_cost),
        }
    }
}

/// A summary table's cells after the outcome ([`Tally::cells`]).
pub struct SummaryCells {
    pub duration: String,
    pub turns: String,
    pub calls: String,
    pub tokens_in: String,
    pub cached: String,
    pub tokens_out: String,
    pub cost: String,
}

impl SummaryCells {
    /// The summary table's column headings: the outcome's, then one a cell.
    pub const HEADINGS: [&'static str; 8] = [
        "Outcome",
        "Duration",
        "Turns",
        "Tool calls",
        "Tokens in",
        "Cached",
        "Tokens out",
        "Cost",
    ];

    /// The cells in the order of [`Self::HEADINGS`] after the outcome.
    pub fn in_order(&self) -> [&str; 7] {
        [
            &self.duration,
            &self.turns,
            &self.calls,
            &self.tokens_in,
            &self.cached,
            &self.tokens_out,
            &self.cost,
        ]
    }
}

/// A tool call as its block shows it.
#[derive(Debug, Clone)]
pub struct CallHead<'c> {
    /// The tool's name, made visible.
    pub name: &'c str,
    /// Its key argument (command, path, pattern…), made visible.
    pub arg: Option<&'c str>,
    /// This block continues a call whose first block was closed.
    pub continued: bool,
}

/// What a call's block holds besides its live output.
#[derive(Debug, Clone, Copy)]
pub enum Body<'c> {
    /// The command a shell call runs, and where.
    Command(&'c str, Option<&'c str>),
    /// The call's arguments as JSON, laid out, already cut.
    Arguments(Clip<'c>),
}

/// The kind of a note (a line that stands outside the collapsible blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// A fatal error, a failed call.
    Error,
    /// A non-fatal error, an input line that was not valid input.
    Warning,
}

/// One format's syntax. The driver calls these in a well-nested order:
/// `session` once, then turns and blocks (each `*_open` followed by its
/// content and its `*_close`, never two blocks open at once), then `summary`.
pub trait Markup {
    /// A call's output is cut at this many bytes (live output: its first
    /// ones; output that arrives whole: its first and last halves).
    const OUTPUT_CAP_BYTES: usize;

    /// Before the first session (once per run).
    fn prologue(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// After the last session (once per run; also for a run without any).
    fn epilogue(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// A session's header.
    /// A session's header: its id and start, every field made visible.
    fn session(&mut self, s: &Session, st: &SessionStart, started: Option<i64>) -> io::Result<()>;
    /// Turn `n` (1-based) begins.
    fn turn(&mut self, n: usize) -> io::Result<()>;
    /// The user's prompt.
    fn prompt(&mut self, text: &str) -> io::Result<()>;
    fn text_open(&mut self) -> io::Result<()>;
    /// A piece of assistant text (markdown, made visible).
    fn text(&mut self, text: &str) -> io::Result<()>;
    fn text_close(&mut self) -> io::Result<()>;
    fn thinking_open(&mut self) -> io::Result<()>;
    fn thinking(&mut self, text: &str) -> io::Result<()>;
    /// `duration_ms`: how long the model thought, when known.
    fn thinking_close(&mut self, duration_ms: Option<u64>) -> io::Result<()>;
    /// A thinking phase that showed no text took `duration_ms`.
    fn thought(&mut self, duration_ms: u64) -> io::Result<()>;
    /// A call's block opens; `body` is `None` for a continued block.
    fn call_open(&mut self, head: &CallHead<'_>, body: Option<Body<'_>>) -> io::Result<()>;
    /// A piece of live output (made visible, already within the cap).
    fn call_output(&mut self, stream: OutStream, text: &str) -> io::Result<()>;
    /// The call completed (`None`: its block closes while it still runs).
    /// `omitted`: live output bytes the cap left out. `output`: output
    /// that arrived with the completion, cut. `patch`: its diff, cut.
    fn call_close(&mut self, end: Option<&Ending<'_>>, omitted: u64) -> io::Result<()>;
    /// A note outside the blocks: `title` (plain text) and `detail`.
    fn note(&mut self, kind: Note, title: &str, detail: Option<&str>) -> io::Result<()>;
    /// A summary or plan snapshot (markdown, made visible).
    fn snapshot(&mut self, title: &str, text: Option<&str>) -> io::Result<()>;
    /// A JSON record no rule understood (cut).
    fn unknown(&mut self, raw: Clip<'_>) -> io::Result<()>;
    /// The session's summary.
    fn summary(&mut self, tally: &Tally) -> io::Result<()>;
    /// The note after a summary's table that says why the session did not
    /// succeed (none when it did): the same words in every transcript.
    fn outcome_note(&mut self, outcome: &Outcome) -> io::Result<()> {
        match outcome {
            Outcome::Failed(error) => {
                self.note(Note::Error, "The session failed", error.as_deref())
            }
            Outcome::Incomplete => self.note(
                Note::Warning,
                "Incomplete: the stream ended without a result",
                None,
            ),
            Outcome::Ok => Ok(()),
        }
    }
    fn flush(&mut self) -> io::Result<()>;
}

/// A call's completion as its block shows it.
#[derive(Debug, Clone)]
pub struct Ending<'e> {
    pub ok: bool,
    pub cancelled: bool,
    /// The source does not record how the call ended.
    pub outcome_unknown: bool,
    /// `exit 0 · 5.4s`, `+12 −3`… (made visible).
    pub outcome: String,
    pub output: Option<Clip<'e>>,
    pub patch: Option<Clip<'e>>,
    /// The result payload, laid out and cut, when there is no output.
    pub result: Option<Clip<'e>>,
    /// The error, when the call failed (made visible).
    pub error: Option<&'e str>,
}

/// What is open in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    None,
    Text,
    Thinking,
    /// A call's block, by call id.
    Call(String),
}

/// An open call.
struct Call {
    name: String,
    arg: Option<String>,
    /// Live output bytes written and left out.
    shown: usize,
    omitted: u64,
    /// Live output arrived: the completion's copy is not shown again.
    streamed: bool,
    /// The end of the live output that may be the start of a colour
    /// sequence the next piece completes.
    sgr_tail: String,
}

/// The driver: a [`Sink`] that turns events into a transcript through `M`.
pub struct Transcript<M: Markup> {
    m: M,
    block: Block,
    calls: CallTable<Call>,
    /// A new turn opens at the next prompt, text, thinking or call.
    turn_due: bool,
    /// The current turn has had a prompt or content.
    turn_used: bool,
    tally: Tally,
    /// The session has had an event (an input without any writes nothing).
    any: bool,
    began: bool,
    /// Reused for laying out JSON.
    json: Vec<u8>,
}

impl<M: Markup> Transcript<M> {
    pub fn new(m: M) -> Self {
        Transcript {
            m,
            block: Block::None,
            calls: CallTable::default(),
            turn_due: true,
            turn_used: false,
            tally: Tally::default(),
            any: false,
            began: false,
            json: Vec::new(),
        }
    }

    /// Close whatever block is open.
    fn close(&mut self) -> io::Result<()> {
        match std::mem::replace(&mut self.block, Block::None) {
            Block::None => Ok(()),
            Block::Text => self.m.text_close(),
            Block::Thinking => self.m.thinking_close(None),
            Block::Call(id) => {
                let omitted = self.calls.get_mut(&id).map_or(0, |c| {
                    // What the cap left out so far is said now; a block
                    // that continues the call counts afresh.
                    let o = c.omitted;
                    c.omitted = 0;
                    o
                });
                self.m.call_close(None, omitted)
            }
        }
    }

    /// Content is coming: open a turn if one is due, then `block`.
    fn enter(&mut self, block: Block) -> io::Result<bool> {
        if self.block == block {
            return Ok(false);
        }
        self.close()?;
        self.turn_for_content()?;
        self.block = block;
        Ok(true)
    }

    fn turn_for_content(&mut self) -> io::Result<()> {
        if self.turn_due {
            self.open_turn()?;
        }
        self.turn_used = true;
        Ok(())
    }

    fn open_turn(&mut self) -> io::Result<()> {
        self.turn_due = false;
        self.turn_used = false;
        self.tally.turn_headers += 1;
        self.m.turn(self.tally.turn_headers)
    }

    fn call_start(&mut self, t: &ToolStart<'_>) -> io::Result<()> {
        self.close()?;
        self.turn_for_content()?;
        let name = visible(&t.tool_name, false).into_owned();
        let arg = t.key_arg().map(|a| visible(a, false).into_owned());
        let cwd = t.cwd.as_deref().map(|c| visible(c, false));
        let command = t.command.as_deref().map(|c| visible(c, true));
        self.json.clear();
        let laid;
        let body = match &command {
            Some(c) => Body::Command(c, cwd.as_deref()),
            None => {
                write_raw(&mut self.json, t.args.get(), Layout::Pretty, 0);
                laid = visible(std::str::from_utf8(&self.json).unwrap_or(""), true);
                Body::Arguments(clip(&laid, M::OUTPUT_CAP_BYTES))
            }
        };
        // Empty arguments say nothing.
        let body = match body {
            Body::Arguments(c) if matches!(c.head, "{}" | "null" | "[]" | "") => None,
            b => Some(b),
        };
        let head = CallHead {
            name: &name,
            arg: arg.as_deref(),
            continued: false,
        };
        self.m.call_open(&head, body)?;
        self.block = Block::Call(t.call_id.to_string());
        self.calls.insert(
            &t.call_id,
            Call {
                name,
                arg,
                shown: 0,
                omitted: 0,
                streamed: false,
                sgr_tail: String::new(),
            },
        );
        Ok(())
    }

    /// Make `call_id`'s block the open one (a continued block when it was
    /// closed; one for a call never seen starting, too).
    fn reopen(&mut self, call_id: &str, tool_name: &str) -> io::Result<()> {
        if self.block == Block::Call(call_id.to_owned()) {
            return Ok(());
        }
        self.close()?;
        self.turn_for_content()?;
        if !self.calls.contains(call_id) {
            self.calls.insert(
                call_id,
                Call {
                    name: visible(tool_name, false).into_owned(),
                    arg: None,
                    shown: 0,
                    omitted: 0,
                    streamed: false,
                    sgr_tail: String::new(),
                },
            );
        }
        let c = self.calls.get(call_id).expect("inserted above");
        let head = CallHead {
            name: &c.name,
            arg: c.arg.as_deref(),
            continued: true,
        };
        self.m.call_open(&head, None)?;
        self.block = Block::Call(call_id.to_owned());
        Ok(())
    }

    fn live_output(&mut self, call_id: &str, stream: OutStream, text: &str) -> io::Result<()> {
        self.reopen(call_id, "shell")?;
        let c = self.calls.get_mut(call_id).expect("reopen inserts it");
        c.streamed = true;
        // A colour sequence cut between two pieces is held until the next
        // piece completes it (then dropped like any other), or shown
        // escaped when the call ends without one.
        let joined;
        let text = if c.sgr_tail.is_empty() {
            text
        } else {
            joined = std::mem::take(&mut c.sgr_tail) + text;
            joined.as_str()
        };
        let keep = unfinished_sgr(text);
        c.sgr_tail = text[keep..].to_owned();
        self.write_output(call_id, stream, &text[..keep])
    }

    /// Live output within the call's cap.
    fn write_output(&mut self, call_id: &str, stream: OutStream, text: &str) -> io::Result<()> {
        let c = self.calls.get_mut(call_id).expect("reopen inserts it");
        let room = M::OUTPUT_CAP_BYTES.saturating_sub(c.shown);
        let cut = crate::strings::floor_char_boundary(text, room);
        c.shown += cut;
        c.omitted += (text.len() - cut) as u64;
        if cut > 0 {
            let shown = sanitize(&text[..cut], true, Sgr::Strip);
            self.m.call_output(stream, &shown)?;
        }
        Ok(())
    }

    fn call_end(&mut self, e: &ToolEnd<'_>) -> io::Result<()> {
        let open_here = self.block == Block::Call(e.call_id.to_string());
        // A completion whose block is still open closes it; otherwise it
        // gets a block of its own.
        if !open_here {
            self.reopen(&e.call_id, &e.tool_name)?;
        }
        let tail = self
            .calls
            .get_mut(&e.call_id)
            .map(|c| std::mem::take(&mut c.sgr_tail))
            .unwrap_or_default();
        if !tail.is_empty() {
            self.write_output(&e.call_id, OutStream::Stdout, &tail)?;
        }
        let call = self.calls.remove(&e.call_id);
        self.block = Block::None;
        let streamed = call.as_ref().is_some_and(|c| c.streamed);
        let omitted = call.as_ref().map_or(0, |c| c.omitted);
        let output = match (&e.output, streamed) {
            (Some(o), false) => Some(sanitize(&o.as_str(), true, Sgr::Strip).into_owned()),
            _ => None,
        };
        let patch = e.patch.as_deref().map(|p| visible(p, true));
        self.json.clear();
        let result = match (&output, &patch, &e.result) {
            (None, None, Some(r)) if !streamed && !matches!(r.get(), "null" | "{}" | "\"\"") => {
                write_raw(&mut self.json, r.get(), Layout::Pretty, 0);
                Some(visible(std::str::from_utf8(&self.json).unwrap_or(""), true))
            }
            _ => None,
        };
        let error = e
            .error
            .as_deref()
            .filter(|_| !e.ok)
            .map(|m| visible(m, true));
        let cap = M::OUTPUT_CAP_BYTES;
        let ending = Ending {
            ok: e.ok,
            cancelled: e.cancelled,
            outcome_unknown: e.outcome_unknown,
            outcome: text::outcome(e),
            output: output
                .as_deref()
                .filter(|o| !o.is_empty())
                .map(|o| clip(o, cap)),
            patch: patch.as_deref().map(|p| clip(p, cap)),
            result: result.as_deref().map(|r| clip(r, cap)),
            error: error.as_deref(),
        };
        self.m.call_close(Some(&ending), omitted)?;
        if !e.ok && !e.cancelled {
            // A failure shows outside the collapsed block.
            let name = call.as_ref().map_or("tool", |c| c.name.as_str());
            let title = match e.exit_code {
                Some(code) => format!("{name} failed (exit {code})"),
                None => format!("{name} failed"),
            };
            // An error that only words the exit code says nothing more.
            let said = |c: i64| {
                ending
                    .error
                    .is_some_and(|m| m.trim().eq_ignore_ascii_case(&format!("exit code {c}")))
            };
            let detail = ending.error.filter(|_| !e.exit_code.is_some_and(said));
            self.m.note(Note::Error, &title, detail)?;
        }
        Ok(())
    }

    fn thinking_text(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        if self.enter(Block::Thinking)? {
            self.m.thinking_open()?;
        }
        self.m.thinking(&visible(text, true))
    }

    fn thinking_done(&mut self, duration_ms: Option<u64>) -> io::Result<()> {
        if self.block == Block::Thinking {
            self.block = Block::None;
            return self.m.thinking_close(duration_ms);
        }
        // A phase without visible text (redacted, or not streamed): one
        // line that says how long, when the source said.
        match duration_ms {
            Some(d) => {
                self.close()?;
                self.turn_for_content()?;
                self.m.thought(d)
            }
            None => Ok(()),
        }
    }

    fn event_inner(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.tally.figures.event(ev);
        if !self.any {
            self.any = true;
            if !self.began {
                self.began = true;
                self.m.prologue()?;
            }
            if !matches!(ev.kind, Kind::SessionStarted(_)) {
                // The normalizer opens every session with its start; a
                // stream of events without one still gets a header.
                let st = SessionStart {
                    dialect: Cow::Borrowed("unknown"),
                    ..SessionStart::default()
                };
                self.m.session(s, &st, ev.ts)?;
            }
        }
        match &ev.kind {
            Kind::SessionStarted(st) => {
                self.close()?;
                fn shown<'x>(v: &'x Option<Cow<'_, str>>) -> Option<Cow<'x, str>> {
                    v.as_deref().map(|x| visible(x, false))
                }
                let st = SessionStart {
                    session_id: None,
                    dialect: visible(&st.dialect, false),
                    model: shown(&st.model),
                    cwd: shown(&st.cwd),
                    permission_mode: shown(&st.permission_mode),
                    title: shown(&st.title),
                    parent: None,
                };
                let s = Session {
                    id: visible(&s.id, false).into_owned(),
                    ..s.clone()
                };
                self.m.session(&s, &st, ev.ts)?;
            }
            Kind::UserMessage { text } => {
                self.close()?;
                if self.turn_due || self.turn_used {
                    self.open_turn()?;
                }
                self.turn_used = true;
                self.m.prompt(&visible(text, true))?;
            }
            Kind::ThinkingDelta { text } => self.thinking_text(text)?,
            Kind::Thinking { text, duration_ms } => {
                self.thinking_text(text)?;
                self.thinking_done(*duration_ms)?;
            }
            Kind::ThinkingCompleted { duration_ms } => self.thinking_done(*duration_ms)?,
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                if !text.is_empty() {
                    if self.enter(Block::Text)? {
                        self.m.text_open()?;
                    }
                    self.m.text(&visible(text, true))?;
                }
            }
            Kind::ToolCallStarted(t) => self.call_start(t)?,
            Kind::ToolCallCompleted(e) => self.call_end(e)?,
            Kind::ToolCall(b) => {
                self.call_start(&b.0)?;
                self.call_end(&b.1)?;
            }
            Kind::ToolCallProgress { .. } => {}
            Kind::ShellOutputDelta {
                call_id,
                stream,
                text,
            } => self.live_output(call_id, *stream, text)?,
            Kind::UsageDelta(_) => {}
            Kind::Summary { phase, text } => {
                self.close()?;
                let title = format!("Summary ({})", phase.as_str());
                let text = text.as_deref().map(|t| visible(t, true));
                self.m.snapshot(&title, text.as_deref())?;
            }
            // One model response ended; the turn goes on until its result
            // or the next prompt. Its text ends there (the next response's
            // is a paragraph of its own); a call it made stays open, so
            // that its result, which the next line brings, is shown in
            // the same block.
            Kind::TurnEnded { .. } => {
                if matches!(self.block, Block::Text | Block::Thinking) {
                    self.close()?;
                }
            }
            Kind::Result(r) => {
                self.close()?;
                self.turn_due = true;
                if !r.ok {
                    self.tally.error = r.error.as_deref().map(|e| visible(e, true).into_owned());
                }
            }
            Kind::Error {
                message,
                fatal,
                source,
            } => {
                self.close()?;
                let (kind, title) = match (fatal, source.as_deref()) {
                    (true, _) => (Note::Error, "Error".to_owned()),
                    (false, Some("stdout")) => {
                        (Note::Warning, "An input line that was not JSON".to_owned())
                    }
                    (false, Some(src)) => {
                        (Note::Warning, format!("Warning ({})", visible(src, false)))
                    }
                    (false, None) => (Note::Warning, "Warning".to_owned()),
                };
                self.m.note(kind, &title, Some(&visible(message, true)))?;
            }
            Kind::Unknown { raw } => {
                self.close()?;
                self.m
                    .unknown(clip(&visible(raw.get(), true), M::OUTPUT_CAP_BYTES))?;
            }
            Kind::UserEvent { what, text } => {
                self.close()?;
                let title = match what {
                    UserEventKind::Command => "Command",
                    UserEventKind::CommandOutput => "Command output",
                    UserEventKind::Interrupt => "Interrupted by the user",
                    _ => "Context (not typed by the user)",
                };
                let text = visible(text, true);
                self.m
                    .snapshot(title, Some(&text).filter(|t| !t.is_empty()).map(|t| &**t))?;
            }
        }
        Ok(())
    }
}

impl<M: Markup> Sink for Transcript<M> {
    fn begin(&mut self, _s: &Session) -> io::Result<()> {
        self.block = Block::None;
        self.calls = CallTable::default();
        self.turn_due = true;
        self.turn_used = false;
        self.tally = Tally::default();
        self.any = false;
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.event_inner(s, ev)
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        if !self.any {
            return Ok(());
        }
        self.close()?;
        self.m.summary(&self.tally)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.m.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.began {
            self.began = true;
            self.m.prologue()?;
        }
        self.m.epilogue()?;
        self.m.flush()
    }
}

/// `s` with `&`, `<`, `>`, `"` and `'` as character references (HTML text
/// and attribute values), handed to `put` piece by piece: the one HTML
/// escaper of the transcripts, whether they write into a `String` or
/// straight into the output.
fn escape_html_with<E>(s: &str, mut put: impl FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        put(&s[last..i])?;
        put(rep)?;
        last = i + 1;
    }
    put(&s[last..])
}

/// [`escape_html_with`] into a `String`.
pub fn escape_html(s: &str, out: &mut String) {
    let Ok(()) = escape_html_with::<std::convert::Infallible>(s, |p| {
        out.push_str(p);
        Ok(())
    });
}

/// [`escape_html_with`] straight into a writer.
pub fn escape_html_to(w: &mut impl io::Write, s: &str) -> io::Result<()> {
    escape_html_with(s, |p| w.write_all(p.as_bytes()))
}

/// Cost in US dollars for a summary: `$0.0123`.
pub fn fmt_cost(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// A count with thousands separators: `27,119`.
pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_keep_both_ends_on_char_boundaries() {
        assert_eq!(clip("abc", 10).omitted, 0);
        let c = clip("aaaaéééébbbb", 8);
        assert_eq!(c.head.len() + c.omitted as usize + c.tail.len(), 16);
        assert!(c.head.starts_with("aaaa") && c.tail.ends_with("bbbb"));
    }

    #[test]
    fn html_escapes_every_markup_character() {
        let mut s = String::new();
        escape_html("<img src=x onerror='a'>&\"", &mut s);
        assert_eq!(s, "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;&quot;");
    }

    #[test]
    fn counts_and_costs() {
        assert_eq!(fmt_count(27119), "27,119");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_cost(0.01234), "$0.0123");
        assert_eq!(fmt_cost(12.5), "$12.50");
    }
}
