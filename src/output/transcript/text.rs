//! `--to text` (the default): a readable transcript, streamed (docs/formats.md#text).
//!
//! ```text
//! ● cursor · Auto · /home/user/project  (session d43015b9-…)
//! › Run `sleep 5` using bash
//! ┆ Planning the two commands…
//! I'll run `sleep 5` in bash.
//! ▸ shell  sleep 5  ✓ exit 0 · 5.4s
//! ── ok · 21.5s · 1 tool call · tokens 27119 in (467 cached) / 40 out
//! ```
//!
//! A tool call's line is written when it starts and its outcome appended when
//! it completes; if anything else is written in between, the outcome gets a
//! line of its own. Everything taken from the stream goes through
//! [`crate::terminal`], so control characters, escape sequences and bidi
//! overrides are shown, never interpreted by the terminal (the colours of
//! shell output excepted, when the transcript is coloured), and lines are
//! cut by their width in terminal columns.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use owo_colors::{OwoColorize, Style};

use crate::event::figures::{self, Figures, Outcome, fmt_ms};
use crate::event::{
    Event, Kind, OutStream, SessionResult, Starts, ToolEnd, ToolStart, UserEventKind,
};
use crate::output::{OutputOptions, Session, Sink};
use crate::terminal::{
    Sgr, SharedLine, sanitize, truncate, truncate_start, unfinished_sgr, visible, width, wrap_point,
};

/// `--shell-lines` on a terminal: the last lines of completion-time shell
/// output shown (a saved transcript keeps them all). The command line
/// decides what a terminal gets; the library's default is all lines.
pub const TERMINAL_SHELL_LINES: usize = 10;

/// The styles of each element; all plain when colour is off.
#[derive(Clone, Copy)]
struct Palette {
    on: bool,
    header: Style,
    dim: Style,
    prompt: Style,
    thinking: Style,
    tool: Style,
    ok: Style,
    fail: Style,
    warn: Style,
    stderr: Style,
}

impl Palette {
    fn new(on: bool) -> Self {
        Palette {
            on,
            header: Style::new().bold().cyan(),
            dim: Style::new().dimmed(),
            prompt: Style::new().bold(),
            thinking: Style::new().dimmed().italic(),
            tool: Style::new().cyan(),
            ok: Style::new().green(),
            fail: Style::new().red(),
            warn: Style::new().yellow(),
            stderr: Style::new().red().dimmed(),
        }
    }
}

/// How streamed text meets the terminal's width (columns after the prefix).
#[derive(Debug, Clone, Copy)]
enum Fit {
    /// As it is: the terminal wraps it (the agent's answer, whose lines
    /// copy whole from the terminal).
    Free,
    /// Each line cut there (shell output: its last columns say least).
    Cut(usize),
    /// Wrapped there, each visual line starting with the prefix again
    /// (thinking, whose gutter marks every line of it).
    Wrap(usize),
}

/// What kind of streamed text the cursor is in the middle of.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    None,
    Thinking,
    Text,
    Output(String),
}

/// Per-session figures for the final line.
#[derive(Default)]
struct Tally {
    /// The session's figures, as every format shows them.
    figures: Figures,
    /// Any event at all: an input without events writes nothing
    /// (docs/events.md#sessions).
    any: bool,
}

/// Writes the transcript.
pub struct TextSink<W: Write> {
    w: W,
    p: Palette,
    width: Option<usize>,
    /// What happens to colour sequences in shell output.
    sgr: Sgr,
    /// `--shell-lines`: the last lines of completion-time output shown.
    shell_lines: Option<usize>,
    /// `-q`: no header, final line, unknown events or invalid input lines.
    quiet: bool,
    /// `--no-thinking`.
    thinking: bool,
    /// Rows for input lines that were not valid input (off when the
    /// warnings on stderr already show them on the same terminal).
    bad_lines: bool,
    /// The terminal shared with the warnings, if it is.
    shared: Option<SharedLine>,
    /// Nothing written yet on the current line.
    at_line_start: bool,
    block: Block,
    /// A tool line written without its newline, awaiting its outcome.
    pending: Option<String>,
    thinking_shown: bool,
    /// A model response ended in the middle of text: the next text is a
    /// new paragraph (two messages are never run together).
    paragraph_due: bool,
    tally: Tally,
    sessions: usize,
    /// Reused for building lines.
    buf: String,
    /// Columns of streamed text on the current line (None: cut there).
    col: Option<usize>,
    /// The last character of streamed text on the current line is not a
    /// space: a wrap there would split a word.
    mid_word: bool,
    /// The end of a call's live output that may be the start of a colour
    /// sequence the next piece completes: (call id, stream, text).
    held: Option<(String, OutStream, String)>,
}

impl<W: Write> TextSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        TextSink {
            w,
            p: Palette::new(opts.text.color),
            width: opts.text.width,
            sgr: if opts.text.color {
                Sgr::Keep
            } else {
                Sgr::Strip
            },
            shell_lines: opts.text.shell_lines,
            quiet: opts.quiet,
            thinking: !opts.text.no_thinking,
            bad_lines: opts.text.shared_terminal.is_none() && !opts.quiet,
            shared: opts.text.shared_terminal.clone(),
            at_line_start: true,
            block: Block::None,
            pending: None,
            thinking_shown: false,
            paragraph_due: false,
            tally: Tally::default(),
            sessions: 0,
            buf: String::new(),
            col: Some(0),
            mid_word: false,
            held: None,
        }
    }

    /// Write `s` in `style` (plain when colour is off).
    fn paint(&mut self, style: Style, s: &str) -> io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        if self.p.on {
            // End the style before a trailing newline, so no escape sequence
            // spans two lines (pagers and `grep` see each line complete).
            match s.strip_suffix('\n') {
                Some("") => self.w.write_all(b"\n")?,
                Some(body) => writeln!(self.w, "{}", body.style(style))?,
                None => write!(self.w, "{}", s.style(style))?,
            }
        } else {
            self.w.write_all(s.as_bytes())?;
        }
        self.at_line_start = s.ends_with('\n');
        Ok(())
    }

    fn plain(&mut self, s: &str) -> io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        self.w.write_all(s.as_bytes())?;
        self.at_line_start = s.ends_with('\n');
        Ok(())
    }

    fn newline(&mut self) -> io::Result<()> {
        self.w.write_all(b"\n")?;
        self.at_line_start = true;
        Ok(())
    }

    /// Finish any partial line (a pending tool line, streamed text).
    fn break_line(&mut self) -> io::Result<()> {
        self.pending = None;
        if !self.at_line_start {
            self.newline()?;
        }
        Ok(())
    }

    /// Start a block of streamed text, ending whatever was before it.
    fn enter(&mut self, block: Block) -> io::Result<()> {
        if self.block != block || self.pending.is_some() {
            self.break_line()?;
            self.block = block;
        }
        Ok(())
    }

    /// Write streamed text (already made visible) line by line, each line
    /// starting with `prefix`; `fit`: each line left alone, cut at so many
    /// columns after the prefix, or wrapped there, however many pieces it
    /// arrives in.
    fn stream(
        &mut self,
        prefix: &str,
        prefix_style: Style,
        style: Option<Style>,
        text: &str,
        fit: Fit,
    ) -> io::Result<()> {
        for piece in text.split_inclusive('\n') {
            if self.at_line_start {
                // No trailing blank on an empty line.
                let prefix = if piece == "\n" {
                    prefix.trim_end()
                } else {
                    prefix
                };
                self.paint(prefix_style, prefix)?;
                self.at_line_start = false;
                self.col = Some(0);
                self.mid_word = false;
            }
            let (body, nl) = match piece.strip_suffix('\n') {
                Some(b) => (b, "\n"),
                None => (piece, ""),
            };
            let limit = match fit {
                Fit::Free => None,
                Fit::Cut(max) => Some(max),
                Fit::Wrap(max) => {
                    self.wrapped(prefix, prefix_style, style, body, max)?;
                    if !nl.is_empty() {
                        self.newline()?;
                    }
                    continue;
                }
            };
            let shown = match (limit, self.col) {
                (Some(max), Some(col)) => {
                    let room = max.saturating_sub(col);
                    let cut = truncate(body, room);
                    // Past the cut, the rest of the line is dropped.
                    self.col = matches!(cut, Cow::Borrowed(_)).then(|| col + width(body));
                    cut
                }
                (Some(_), None) => Cow::Borrowed(""),
                (None, _) => Cow::Borrowed(body),
            };
            match style {
                Some(s) => self.paint(s, &shown)?,
                None => self.plain(&shown)?,
            }
            if !nl.is_empty() {
                self.newline()?;
            }
        }
        Ok(())
    }

    /// One line of streamed text (no newline in `body`) wrapped at `max`
    /// columns after the prefix, which starts each visual line again.
    fn wrapped(
        &mut self,
        prefix: &str,
        prefix_style: Style,
        style: Option<Style>,
        body: &str,
        max: usize,
    ) -> io::Result<()> {
        // A tab's width is the terminal's to decide: spaces to its next
        // stop (counted from the prefix) keep the count of columns right.
        let expanded;
        let mut rest = body;
        if body.contains('\t') {
            let mut col = width(prefix) + self.col.unwrap_or(0);
            let mut out = String::with_capacity(body.len());
            for part in body.split_inclusive('\t') {
                let (text, tab) = match part.strip_suffix('\t') {
                    Some(t) => (t, true),
                    None => (part, false),
                };
                out.push_str(text);
                col += width(text);
                if tab {
                    let n = 8 - col % 8;
                    out.extend(std::iter::repeat_n(' ', n));
                    col += n;
                }
            }
            expanded = out;
            rest = &expanded;
        }
        while !rest.is_empty() {
            let col = self.col.unwrap_or(0);
            let room = max.saturating_sub(col);
            let Some((end, next)) = wrap_point(rest, room, col == 0, self.mid_word) else {
                self.wrapped_piece(style, rest)?;
                break;
            };
            self.wrapped_piece(style, &rest[..end])?;
            rest = &rest[next..];
            if rest.is_empty() {
                // The line is full, but whether another visual line
                // follows is the next piece's to say (a newline may):
                // it wraps at once.
                self.col = Some(max);
                self.mid_word = false;
                break;
            }
            // A visual line ends here: the next starts with the prefix.
            self.newline()?;
            self.paint(prefix_style, prefix)?;
            self.at_line_start = false;
            self.col = Some(0);
            self.mid_word = false;
        }
        Ok(())
    }

    /// A part of a wrapped line that fits.
    fn wrapped_piece(&mut self, style: Option<Style>, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        match style {
            Some(s) => self.paint(s, text)?,
            None => self.plain(text)?,
        }
        self.col = Some(self.col.unwrap_or(0) + width(text));
        self.mid_word = !text.ends_with(' ');
        Ok(())
    }

    fn header(&mut self, s: &Session, st: &crate::event::SessionStart) -> io::Result<()> {
        self.break_line()?;
        let (title, model, cwd) = (
            st.title.as_deref().map(|p| visible(p, false)),
            st.model.as_deref().map(|p| visible(p, false)),
            st.cwd.as_deref().map(|p| visible(p, false)),
        );
        let (line, id) = header_line(
            self.width,
            &visible(&st.dialect, false),
            [title.as_deref(), model.as_deref(), cwd.as_deref()],
            &visible(&s.id, false),
        );
        self.paint(self.p.header, "● ")?;
        self.paint(self.p.prompt, &line)?;
        self.paint(self.p.dim, &id)?;
        self.newline()
    }

    /// A call's name and key argument, made visible (the argument cut to
    /// the room a terminal line leaves after "▸ name  ").
    fn label(&self, t: &ToolStart) -> (String, String) {
        let name = visible(&t.tool_name, false).into_owned();
        let arg = t
            .key_arg()
            .map(|a| visible(a, false).into_owned())
            .unwrap_or_default();
        let arg = match self.width {
            Some(w) => truncate(&arg, w.saturating_sub(width(&name) + 4 + 22).max(16)).into_owned(),
            None => arg,
        };
        (name, arg)
    }

    fn tool_start(&mut self, t: &ToolStart) -> io::Result<()> {
        self.enter(Block::None)?;
        let (name, arg) = self.label(t);
        self.paint(self.p.tool, "▸ ")?;
        self.paint(self.p.tool, &name)?;
        if !arg.is_empty() {
            self.plain("  ")?;
            self.plain(&arg)?;
        }
        self.pending = Some(t.call_id.to_string());
        Ok(())
    }

    /// A call's outcome; `start` is its start (from the normalizer, or the
    /// whole call of `--coalesce`), `streamed`: its output was shown live.
    fn tool_end(
        &mut self,
        t: &ToolEnd,
        start: Option<&ToolStart>,
        streamed: bool,
    ) -> io::Result<()> {
        let inline = self.pending.as_deref() == Some(&t.call_id) && self.block == Block::None;
        if inline {
            self.plain("  ")?;
        } else {
            self.enter(Block::None)?;
        }
        self.pending = None;
        let (glyph, style) = if t.cancelled {
            ("⊘", self.p.warn)
        } else if t.outcome_unknown {
            ("?", self.p.warn)
        } else if t.ok {
            ("✓", self.p.ok)
        } else {
            ("✗", self.p.fail)
        };
        self.paint(style, glyph)?;
        let label = match start.map(|s| self.label(s)) {
            Some((name, arg)) if !arg.is_empty() => format!("{name}  {arg}"),
            Some((name, _)) => name,
            None => visible(&t.tool_name, false).into_owned(),
        };
        if !inline {
            self.plain(" ")?;
            self.paint(self.p.tool, &label)?;
            self.plain("  ")?;
        } else {
            self.plain(" ")?;
        }
        let mut outcome = outcome(t);
        if let Some(w) = self.width {
            // What the line holds before the outcome: "▸ label  ✗ " when
            // the outcome completes its start's line, else "✗ label  ".
            let used = width(&label) + if inline { 6 } else { 4 };
            outcome = truncate(&outcome, w.saturating_sub(used).max(16)).into_owned();
        }
        self.paint(if t.ok { self.p.dim } else { style }, &outcome)?;
        self.newline()?;
        if let (Some(out), false) = (t.output.as_ref(), streamed) {
            self.output_tail(&out.as_str())?;
        }
        Ok(())
    }

    /// The last lines of output that arrived only at completion.
    fn output_tail(&mut self, out: &str) -> io::Result<()> {
        let out = out.strip_suffix('\n').unwrap_or(out);
        if out.is_empty() {
            return Ok(());
        }
        let total = memchr::memchr_iter(b'\n', out.as_bytes()).count() + 1;
        let skip = self.shell_lines.map_or(0, |n| total.saturating_sub(n));
        if skip > 0 {
            let note = format!(
                "  │ … {skip} more line{} above\n",
                if skip == 1 { "" } else { "s" }
            );
            self.paint(self.p.dim, &note)?;
        }
        for line in out.split('\n').skip(skip) {
            let line = line.strip_suffix('\r').unwrap_or(line);
            // No trailing blank on an empty line (as `stream` does).
            self.paint(self.p.dim, if line.is_empty() { "  │" } else { "  │ " })?;
            let shown = sanitize(line, false, self.sgr);
            let shown = match self.width {
                Some(w) => truncate(&shown, output_room(w)),
                None => shown,
            };
            self.plain(&shown)?;
            self.newline()?;
        }
        Ok(())
    }

    fn final_line(&mut self, r: Option<&SessionResult>) -> io::Result<()> {
        self.enter(Block::None)?;
        let mut line = std::mem::take(&mut self.buf);
        line.clear();
        let style = match (r, self.tally.figures.outcome()) {
            (Some(_), Outcome::Success) => {
                line.push_str("── ok");
                self.p.ok
            }
            (r, Outcome::Failure) => {
                line.push_str("── failed");
                match r.and_then(|r| r.error.as_deref().filter(|_| !r.ok)) {
                    Some(e) => {
                        line.push_str(": ");
                        line.push_str(&visible(first_line(e), false));
                    }
                    None => line.push_str(": the agent reported a fatal error"),
                }
                self.p.fail
            }
            _ => {
                line.push_str("── incomplete: the stream ended without a result");
                self.p.warn
            }
        };
        let f = &self.tally.figures;
        if let Some(d) = f.duration_ms() {
            let _ = write!(line, " · {}", fmt_ms(d));
        }
        let n = f.tool_calls();
        let _ = write!(line, " · {n} tool call{}", if n == 1 { "" } else { "s" });
        if let Some(u) = f.usage() {
            let _ = write!(line, " · tokens {} in", u.input);
            if let Some(c) = u.cache_read.filter(|c| *c > 0) {
                let _ = write!(line, " ({c} cached)");
            }
            let out = figures::output_shown(&u, |n| n.to_string());
            let _ = write!(line, " / {out} out");
        }
        self.paint(style, &line)?;
        self.buf = line;
        self.newline()
    }

    /// A summary phase, or a snapshot (a plan, a todo list) one entry a line.
    fn summary(&mut self, phase: &str, text: Option<&str>) -> io::Result<()> {
        let text = text.map(|t| t.trim_matches('\n'));
        let Some((first, more)) = text.map(|t| t.split_once('\n').unwrap_or((t, ""))) else {
            return self.one_liner(self.p.dim, "≡", &format!("summary {phase}"));
        };
        if more.is_empty() {
            return self.one_liner(self.p.dim, "≡", &format!("summary ({phase}): {first}"));
        }
        self.one_liner(self.p.dim, "≡", &format!("summary ({phase}):"))?;
        for line in text.unwrap_or_default().split('\n') {
            self.one_liner(self.p.dim, " ", line)?;
        }
        Ok(())
    }

    fn one_liner(&mut self, style: Style, glyph: &str, text: &str) -> io::Result<()> {
        self.enter(Block::None)?;
        let shown = visible(text, false);
        let shown = match self.width {
            Some(w) => truncate(&shown, w.saturating_sub(width(glyph) + 1).max(16)),
            None => shown,
        };
        let line = format!("{glyph} {shown}");
        self.paint(style, &line)?;
        self.newline()
    }
}

impl<W: Write> Sink for TextSink<W> {
    fn starts(&self) -> Starts {
        Starts::Label
    }

    fn begin(&mut self, _s: &Session) -> io::Result<()> {
        self.break_line()?;
        self.block = Block::None;
        self.thinking_shown = false;
        self.tally = Tally::default();
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.resync();
        let continues = matches!(&ev.kind, Kind::ShellOutputDelta { call_id, stream, .. }
            if self.held.as_ref().is_some_and(|(c, s, _)| c == call_id && s == stream));
        if !continues {
            self.release_held()?;
        }
        self.event_inner(s, ev)?;
        self.synced();
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        self.resync();
        self.release_held()?;
        if !self.tally.figures.has_result() && self.tally.any && !self.quiet {
            self.final_line(None)?;
        }
        self.break_line()?;
        self.synced();
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

impl<W: Write> TextSink<W> {
    /// A warning ended the line this transcript left unfinished on the
    /// terminal they share: continue from the start of a line (a pending
    /// tool outcome then gets a line of its own, with its label).
    fn resync(&mut self) {
        if self.shared.as_ref().is_some_and(SharedLine::take_broken) {
            self.at_line_start = true;
            self.pending = None;
            self.col = Some(0);
            self.mid_word = false;
        }
    }

    /// Write held-back live output that no later piece completed: it was
    /// not a colour sequence, so it is shown escaped.
    fn release_held(&mut self) -> io::Result<()> {
        if let Some((call_id, stream, text)) = self.held.take() {
            self.live_output(&call_id, stream, &text, true)?;
        }
        Ok(())
    }

    /// A piece of a call's live output; `last`: no piece follows it.
    fn live_output(
        &mut self,
        call_id: &str,
        stream: OutStream,
        text: &str,
        last: bool,
    ) -> io::Result<()> {
        let text = match self.held.take() {
            Some((_, _, mut held)) => {
                held.push_str(text);
                Cow::Owned(held)
            }
            None => Cow::Borrowed(text),
        };
        let cut = if last {
            text.len()
        } else {
            unfinished_sgr(&text)
        };
        if cut < text.len() {
            self.held = Some((call_id.to_owned(), stream, text[cut..].to_owned()));
        }
        let text = &text[..cut];
        if text.is_empty() {
            return Ok(());
        }
        self.enter(Block::Output(call_id.to_owned()))?;
        let style = match stream {
            OutStream::Stdout => None,
            OutStream::Stderr => Some(self.p.stderr),
        };
        let text = sanitize(text, true, self.sgr);
        let fit = self.width.map_or(Fit::Free, |w| Fit::Cut(output_room(w)));
        self.stream("  │ ", self.p.dim, style, &text, fit)
    }

    /// Tell the shared terminal whether the last line is unfinished.
    fn synced(&self) {
        if let Some(l) = &self.shared {
            l.wrote(!self.at_line_start);
        }
    }

    fn event_inner(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if !self.tally.any {
            // The blank line between sessions waits for the first event, so
            // an input without events leaves no trace.
            self.tally.any = true;
            if self.sessions > 0 {
                self.newline()?;
            }
            self.sessions += 1;
        }
        self.tally.figures.event(ev);
        let paragraph_due = std::mem::take(&mut self.paragraph_due);
        match &ev.kind {
            Kind::SessionStarted(_) if self.quiet => {}
            Kind::SessionStarted(st) => self.header(s, st)?,
            Kind::UserMessage { text } => {
                self.enter(Block::None)?;
                self.paint(self.p.prompt, "› ")?;
                self.at_line_start = false;
                let text = text.trim_end_matches('\n');
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        self.newline()?;
                        self.plain("  ")?;
                    }
                    self.paint(self.p.prompt, &visible(line, false))?;
                }
                self.newline()?;
            }
            Kind::ThinkingDelta { .. } | Kind::Thinking { .. } | Kind::ThinkingCompleted { .. }
                if !self.thinking => {}
            Kind::ThinkingDelta { text } | Kind::Thinking { text, .. } => {
                if !text.is_empty() {
                    self.enter(Block::Thinking)?;
                    self.thinking_shown = true;
                    let (dim, th) = (self.p.dim, self.p.thinking);
                    let fit = self
                        .width
                        .map_or(Fit::Free, |w| Fit::Wrap(thinking_room(w)));
                    self.stream("┆ ", dim, Some(th), &visible(text, true), fit)?;
                }
                if let Kind::Thinking { duration_ms, .. } = &ev.kind {
                    self.thinking_done(*duration_ms)?;
                }
            }
            Kind::ThinkingCompleted { duration_ms } => self.thinking_done(*duration_ms)?,
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                if !text.is_empty() {
                    if paragraph_due {
                        self.newline()?;
                    }
                    self.enter(Block::Text)?;
                    self.stream("", self.p.dim, None, &visible(text, true), Fit::Free)?;
                }
            }
            Kind::ToolCallStarted(t) => self.tool_start(t)?,
            Kind::ToolCallCompleted(t) => self.tool_end(t, t.start.as_deref(), t.streamed)?,
            Kind::ToolCall(b) => {
                self.tool_start(&b.0)?;
                self.tool_end(&b.1, Some(&b.0), false)?;
            }
            Kind::ToolCallProgress { .. } => {}
            Kind::ShellOutputDelta {
                call_id,
                stream,
                text,
            } => self.live_output(call_id, *stream, text, false)?,
            Kind::UsageDelta(_) => {}
            Kind::Summary { phase, text } => self.summary(phase.as_str(), text.as_deref())?,
            Kind::TurnEnded { .. } => {
                if self.block == Block::Text {
                    self.break_line()?;
                    self.block = Block::None;
                    self.paragraph_due = true;
                }
            }
            Kind::Result(r) => {
                if !self.quiet {
                    self.final_line(Some(r))?;
                }
            }
            // An input line that was not valid input (see `run`), when the
            // warning on stderr is all that should show it.
            Kind::Error {
                fatal: false,
                source: Some(src),
                ..
            } if src == "stdout" && !self.bad_lines => {}
            Kind::Error {
                message,
                fatal,
                source,
            } => {
                let text = match source {
                    Some(src) => format!("{src}: {}", first_line(message)),
                    None => first_line(message).to_owned(),
                };
                if *fatal {
                    self.one_liner(self.p.fail, "✗ error:", &text)?;
                } else {
                    self.one_liner(self.p.warn, "!", &text)?;
                }
            }
            // Injected context is the agent's, not the conversation's.
            Kind::UserEvent {
                what: UserEventKind::Context,
                ..
            } if self.quiet => {}
            Kind::UserEvent { what, text } => {
                let first = first_line(text.trim_start_matches('\n'));
                let (style, glyph, line) = match what {
                    UserEventKind::Command => (self.p.prompt, "›", format!("{first}  (command)")),
                    UserEventKind::CommandOutput => (self.p.dim, "  ⎿", first.to_owned()),
                    UserEventKind::Interrupt => (self.p.warn, "⏸", first.to_owned()),
                    // Not typed by the user, and often long: one dim line.
                    _ => (self.p.dim, "·", format!("context: {first}")),
                };
                self.one_liner(style, glyph, &line)?;
            }
            Kind::Unknown { .. } if self.quiet => {}
            Kind::Unknown { raw } => {
                let mut text = String::from("unknown event ");
                text.push_str(&truncate(raw.get(), 160));
                self.one_liner(self.p.dim, "?", &text)?;
            }
        }
        Ok(())
    }
}

impl<W: Write> TextSink<W> {
    fn thinking_done(&mut self, duration_ms: Option<u64>) -> io::Result<()> {
        if self.thinking_shown {
            if self.block == Block::Thinking {
                self.break_line()?;
                self.block = Block::None;
            }
        } else {
            let what = match duration_ms {
                Some(d) => format!("thought for {}", fmt_ms(d)),
                None => "thought".to_owned(),
            };
            self.enter(Block::None)?;
            self.paint(self.p.dim, "┆ ")?;
            self.paint(self.p.thinking, &what)?;
            self.newline()?;
        }
        self.thinking_shown = false;
        Ok(())
    }
}

/// `exit 0 · 5.4s`, `+12 −3 · 20ms`, `cancelled`…
pub(crate) fn outcome(t: &ToolEnd) -> String {
    let mut parts: Vec<String> = Vec::new();
    if t.cancelled {
        parts.push("cancelled".into());
    } else if t.outcome_unknown {
        parts.push("outcome not recorded".into());
    } else if let Some(e) = t.error.as_deref().filter(|_| !t.ok) {
        // Several dialects word a failed command's error as its exit code;
        // the code is shown once, below.
        let said = t.exit_code.is_some_and(|c| {
            e.strip_prefix("exit code ")
                .or_else(|| e.strip_prefix("Exit code "))
                .is_some_and(|n| n.trim() == itoa::Buffer::new().format(c))
        });
        if !said {
            parts.push(visible(first_line(e), false).into_owned());
        }
    }
    if let Some(c) = t.exit_code {
        parts.push(format!("exit {c}"));
    }
    match (t.lines_added, t.lines_removed) {
        (Some(a), Some(r)) => parts.push(format!("+{a} −{r}")),
        (Some(a), None) => parts.push(format!("+{a}")),
        (None, Some(r)) => parts.push(format!("−{r}")),
        _ => {}
    }
    if let Some(d) = t.duration_ms {
        parts.push(fmt_ms(d));
    }
    if parts.is_empty() {
        parts.push(if t.ok { "done".into() } else { "failed".into() });
    }
    parts.join(" · ")
}

/// Columns for a line of thinking on a terminal `w` wide, after `┆ `.
fn thinking_room(w: usize) -> usize {
    w.saturating_sub(2).max(1)
}

/// A session's header on a terminal `w` wide (`None`: unbounded): the
/// text after `● ` (the agent, then the title, model and directory that
/// are known) and the session id's part, `  (session ID)`. What does not
/// fit is cut, least telling first: the directory from its start (its end
/// names the project), the title, the id (its start finds it again), the
/// model; then the directory, the title and the model are left out, then
/// the id, and last the agent's name is cut.
fn header_line(
    w: Option<usize>,
    dialect: &str,
    parts: [Option<&str>; 3],
    id: &str,
) -> (String, String) {
    // [title, model, cwd, id], each shown whole, cut to so many columns or
    // left out (None).
    let texts = [parts[0], parts[1], parts[2], Some(id)];
    let mut cols: [Option<usize>; 4] = texts.map(|t| t.map(width));
    let total = |cols: &[Option<usize>; 4]| {
        let mut n = 2 + width(dialect);
        for c in cols[..3].iter().flatten() {
            n += 3 + c;
        }
        if let Some(c) = cols[3] {
            n += 11 + c + 1;
        }
        n
    };
    if let Some(w) = w {
        // (part, the fewest columns it is cut to).
        for (i, least) in [(2, 12), (0, 12), (3, 9), (1, 8)] {
            let over = total(&cols).saturating_sub(w);
            if let Some(c) = cols[i].as_mut()
                && over > 0
            {
                *c = (*c).saturating_sub(over).max(least.min(*c));
            }
        }
        for i in [2, 0, 1, 3] {
            if total(&cols) > w {
                cols[i] = None;
            }
        }
    }
    let shown = |i: usize| -> Option<Cow<'_, str>> {
        let (t, c) = (texts[i]?, cols[i]?);
        Some(if i == 2 {
            truncate_start(t, c)
        } else {
            truncate(t, c)
        })
    };
    let mut line = String::new();
    let rest = w.map(|w| w.saturating_sub(2).max(1));
    line.push_str(&match rest {
        Some(r) if cols.iter().all(Option::is_none) => truncate(dialect, r),
        _ => Cow::Borrowed(dialect),
    });
    for i in 0..3 {
        if let Some(p) = shown(i) {
            line.push_str(" · ");
            line.push_str(&p);
        }
    }
    let id = shown(3).map_or_else(String::new, |id| format!("  (session {id})"));
    (line, id)
}

/// Columns for a line of shell output on a terminal `w` wide, after `  │ `.
fn output_room(w: usize) -> usize {
    w.saturating_sub(4).max(16)
}

fn first_line(s: &str) -> &str {
    let s = s.trim_start_matches('\n');
    s.split('\n').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(fmt_ms(850), "850ms");
        assert_eq!(fmt_ms(5399), "5.4s");
        assert_eq!(fmt_ms(123_000), "2m03s");
    }
}
