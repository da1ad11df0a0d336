//! The chat core: what a session says, in the shape every chat wire format
//! needs, before any wire spelling.
//!
//! A [`Turn`] reads one session's normalized events and emits [`Piece`]s —
//! reasoning text, content text, whole tool calls — each the moment its event
//! arrives, and at the session's end an [`Ending`]: a finish (why the turn
//! stopped, and usage) or an error. The OpenAI Chat Completions formats
//! (`openai.rs`) are wire code on top of it; so is any further chat-shaped
//! format (a Responses or Messages stream needs exactly these decisions).
//!
//! The choices here are about meaning, not spelling ([`ChatOptions`]): whether
//! the output has a reasoning channel at all, and where the tool calls the
//! agent already executed go ([`ToolCallMode`]). A wire format maps them to
//! its own fields (`--reasoning-field` is an OpenAI wire option, for instance).

pub mod anthropic;
pub mod openai;
pub mod responses;

use std::borrow::Cow;
use std::io;

use crate::event::{Event, Kind, Starts, ToolEnd, ToolStart, Usage};
use crate::output::{Identity, OutputOptions, Session, Sink};

/// How tool calls the agent already executed appear (`--tool-calls`).
///
/// Chat APIs model tool calls the *client* should run, so forwarding an
/// executed call as a call would have a tool-running client run it again:
/// by default each call becomes one readable line instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolCallMode {
    /// One line per call in the reasoning channel (omitted when there is none).
    #[default]
    Reasoning,
    /// One line per call in the content.
    Content,
    /// Not shown.
    Omit,
    /// Forwarded as tool calls (for consumers that only display them).
    Calls,
}

/// What a chat format chooses, in terms of meaning.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// The output has a reasoning channel: thinking, non-fatal errors and (in
    /// [`ToolCallMode::Reasoning`]) tool lines go there. Without it they are
    /// dropped.
    pub reasoning: bool,
    /// Where executed tool calls go.
    pub tools: ToolCallMode,
    /// The response id's prefix when `--id` does not set it (`chatcmpl-`).
    pub id_prefix: &'static str,
    /// `--id`, `--model`, `--created` and the run's start (pinned: its
    /// `run_start` is set).
    pub ident: Identity,
    /// The wire puts each run of one channel in a block of its own (an
    /// Anthropic content block, a Responses output item), so a run starts
    /// without a separator: the block boundary is one. Without it (Chat
    /// Completions) each channel is one string and separators join its runs.
    pub blocks: bool,
}

impl ChatOptions {
    /// The command line's choices for a chat format whose ids start with
    /// `id_prefix`: thinking has a channel unless `--reasoning-field none`.
    pub fn from_output(opts: &OutputOptions, id_prefix: &'static str) -> ChatOptions {
        ChatOptions {
            reasoning: opts.chat.reasoning_field.key().is_some(),
            tools: opts.chat.tool_calls,
            id_prefix,
            ident: Identity {
                run_start: Some(opts.ident.run_start()),
                ..opts.ident.clone()
            },
            blocks: false,
        }
    }
}

/// Longest key argument or error shown in a tool line, in characters.
const LINE_ARG_CHARS: usize = 200;

/// The values every piece of a session shares, fixed before the first piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: String,
    pub model: String,
    /// Unix seconds.
    pub created: i64,
}

/// One thing a session says, in wire-neutral form.
pub enum Piece<'x> {
    Reasoning(&'x str),
    Content(&'x str),
    /// A whole tool call (a streaming wire splits it into its deltas).
    ToolCall {
        /// 0-based position among the session's forwarded calls.
        index: usize,
        /// Never empty: a call without an id gets `call_<index>`.
        id: &'x str,
        name: &'x str,
        /// The call's arguments as JSON text (`{}` when unknown).
        arguments: &'x str,
    },
}

/// Why a session that finished stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The agent's answer is complete.
    EndTurn,
    /// The last thing forwarded was a tool call ([`ToolCallMode::Calls`]).
    ToolUse,
}

/// Why a session failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The agent reported an error (a failed result, a fatal error).
    Agent,
    /// The stream ended without a result (cut off).
    Incomplete,
}

/// How a session ends.
pub enum Ending {
    Finish { stop: Stop, usage: Option<Usage> },
    Error { kind: Failure, message: String },
}

/// What a session's result said.
struct ResultSeen {
    ok: bool,
    error: Option<String>,
    usage: Option<Usage>,
}

/// Which kind of piece; runs of one kind are blocks on block wires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Reasoning,
    Content,
    Call,
}

/// The separator between two turns' texts in one string: a blank line, so a
/// Markdown reader sees two paragraphs (a single newline would join them into
/// one), less the newlines the text already ends with.
fn paragraph_break(trailing_newlines: u8) -> &'static str {
    match trailing_newlines {
        0 => "\n\n",
        1 => "\n",
        _ => "",
    }
}

/// Receives the pieces of a session, with the header fixed before the first.
pub type Emit<'e> = &'e mut dyn FnMut(&Header, Piece<'_>) -> io::Result<()>;

/// One session's state; a fresh one is made at every `begin`.
#[derive(Default)]
struct SessionState {
    id: String,
    model: Option<String>,
    /// First timestamp seen before the header was fixed.
    first_ts: Option<i64>,
    header: Option<Header>,
    reasoning_at_line_start: bool,
    /// A thinking phase ended; the next one starts on a new line.
    thinking_break: bool,
    /// Something other than the answer's text came since its last text (a
    /// tool call, thinking, a prompt, an error): the next text is a new turn
    /// and starts a new paragraph.
    content_break: bool,
    /// Trailing newlines of the content so far (0, 1 or 2 = a blank line);
    /// `None` before any content.
    content_newlines: Option<u8>,
    /// The channel of the last piece emitted.
    last: Option<Channel>,
    next_index: usize,
    ends_on_tool_call: bool,
    usage: Option<Usage>,
    result: Option<ResultSeen>,
    fatal: Option<String>,
    last_error: Option<String>,
}

impl SessionState {
    fn new(s: &Session) -> Self {
        SessionState {
            id: s.id.clone(),
            reasoning_at_line_start: true,
            ..SessionState::default()
        }
    }
}

/// Events in, pieces out: the chat core every chat wire format shares.
pub struct Turn {
    opts: ChatOptions,
    s: SessionState,
}

impl Turn {
    pub fn new(opts: ChatOptions) -> Self {
        Turn {
            opts,
            s: SessionState {
                reasoning_at_line_start: true,
                ..SessionState::default()
            },
        }
    }

    /// A session begins: nothing of the previous one carries over.
    pub fn begin(&mut self, s: &Session) {
        self.s = SessionState::new(s);
    }

    /// The session's header, derived (and then fixed) on first use.
    pub fn header(&mut self) -> &Header {
        let (o, s) = (&self.opts, &mut self.s);
        s.header.get_or_insert_with(|| Header {
            id: o
                .ident
                .id
                .clone()
                .unwrap_or_else(|| format!("{}{}", o.id_prefix, s.id)),
            model: o
                .ident
                .model
                .clone()
                .or_else(|| s.model.clone())
                .unwrap_or_else(|| "unknown".to_owned()),
            created: o.ident.created.unwrap_or_else(|| {
                s.first_ts
                    .map_or(o.ident.run_start(), |ms| ms.div_euclid(1000))
            }),
        })
    }

    fn put(&mut self, piece: Piece<'_>, emit: Emit<'_>) -> io::Result<()> {
        let h = self.header();
        emit(h, piece)
    }

    /// One event of the session; its pieces go to `emit` before this returns.
    pub fn event(&mut self, ev: &Event<'_>, emit: Emit<'_>) -> io::Result<()> {
        if self.s.header.is_none() && self.s.first_ts.is_none() {
            self.s.first_ts = ev.ts;
        }
        match &ev.kind {
            Kind::SessionStarted(s) => {
                self.s.model = s
                    .model
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned);
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                self.content(text, emit)?
            }
            Kind::ThinkingDelta { text } => {
                self.s.content_break = true;
                self.thinking(text, emit)?
            }
            Kind::Thinking { text, .. } => {
                self.s.content_break = true;
                self.thinking(text, emit)?;
                self.s.thinking_break = true;
            }
            Kind::ThinkingCompleted { .. } => {
                self.s.content_break = true;
                self.s.thinking_break = true;
            }
            Kind::ToolCallStarted(t) => {
                self.s.content_break = true;
                self.tool_start(t, emit)?
            }
            Kind::ToolCallCompleted(t) => {
                self.s.content_break = true;
                self.tool_end(t, t.start.as_deref(), emit)?;
                self.s.content_break = true;
            }
            Kind::ToolCall(b) => {
                self.s.content_break = true;
                self.tool_start(&b.0, emit)?;
                self.tool_end(&b.1, Some(&b.0), emit)?;
                self.s.content_break = true;
            }
            Kind::UsageDelta(u) => self.s.usage = Some(self.s.usage.map_or(*u, |s| s.add(u))),
            Kind::Result(r) => {
                self.s.result = Some(ResultSeen {
                    ok: r.ok,
                    error: r.error.as_deref().map(str::to_owned),
                    usage: r.usage,
                })
            }
            Kind::Error {
                message,
                fatal,
                source,
            } => {
                self.s.content_break = true;
                self.s.last_error = Some(message.to_string());
                if *fatal {
                    self.s.fatal = Some(message.to_string());
                } else if self.opts.reasoning {
                    let text = match source {
                        Some(src) => format!("{src}: {message}"),
                        None => format!("error: {message}"),
                    };
                    self.line(false, text.trim_end_matches(['\n', '\r']), emit)?;
                }
            }
            Kind::UserMessage { .. } | Kind::TurnEnded { .. } => self.s.content_break = true,
            Kind::ToolCallProgress { .. }
            | Kind::ShellOutputDelta { .. }
            | Kind::Summary { .. }
            | Kind::UserEvent { .. }
            | Kind::Unknown { .. } => {}
        }
        Ok(())
    }

    /// Whether a piece of `ch` starts a new block on a block wire.
    fn starts_block(&self, ch: Channel) -> bool {
        self.opts.blocks && self.s.last != Some(ch)
    }

    /// The separator a content piece needs before it: a paragraph break when
    /// it is a new turn's text within the same string.
    fn content_separator(&mut self) -> &'static str {
        let brk = std::mem::take(&mut self.s.content_break);
        match self.s.content_newlines {
            Some(n) if brk && !self.starts_block(Channel::Content) => paragraph_break(n),
            _ => "",
        }
    }

    /// Emits content text (`sep` first), keeping the channel's state.
    fn put_content(&mut self, sep: &str, text: &str, emit: Emit<'_>) -> io::Result<()> {
        let s: Cow<'_, str> = if sep.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(format!("{sep}{text}"))
        };
        let trailing = s.bytes().rev().take_while(|&b| b == b'\n').count();
        let before = self.s.content_newlines.unwrap_or(0);
        self.s.content_newlines = Some(if trailing == s.len() {
            before
                .saturating_add(u8::try_from(trailing).unwrap_or(u8::MAX))
                .min(2)
        } else {
            u8::try_from(trailing.min(2)).unwrap_or(2)
        });
        self.s.ends_on_tool_call = false;
        self.s.last = Some(Channel::Content);
        self.put(Piece::Content(&s), emit)
    }

    fn content(&mut self, text: &str, emit: Emit<'_>) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let sep = self.content_separator();
        self.put_content(sep, text, emit)
    }

    fn thinking(&mut self, text: &str, emit: Emit<'_>) -> io::Result<()> {
        if text.is_empty() || !self.opts.reasoning {
            return Ok(());
        }
        if self.starts_block(Channel::Reasoning) {
            self.s.reasoning_at_line_start = true;
        }
        let text: Cow<'_, str> = if self.s.thinking_break && !self.s.reasoning_at_line_start {
            Cow::Owned(format!("\n{text}"))
        } else {
            Cow::Borrowed(text)
        };
        self.s.thinking_break = false;
        self.s.reasoning_at_line_start = text.ends_with('\n');
        self.s.ends_on_tool_call = false;
        self.s.last = Some(Channel::Reasoning);
        self.put(Piece::Reasoning(&text), emit)
    }

    /// A line of its own in the content (`to_content`) or reasoning channel.
    /// In the content it is a turn of its own (a paragraph); in the
    /// reasoning it starts on a new line.
    fn line(&mut self, to_content: bool, text: &str, emit: Emit<'_>) -> io::Result<()> {
        if to_content {
            let sep = match self.content_separator() {
                "" if self.s.content_newlines == Some(0)
                    && !self.starts_block(Channel::Content) =>
                {
                    "\n"
                }
                sep => sep,
            };
            let line = format!("{text}\n");
            self.put_content(sep, &line, emit)?;
            self.s.content_break = true;
            return Ok(());
        }
        if self.starts_block(Channel::Reasoning) {
            self.s.reasoning_at_line_start = true;
        }
        let mut s = String::with_capacity(text.len() + 2);
        if !self.s.reasoning_at_line_start {
            s.push('\n');
        }
        s.push_str(text);
        s.push('\n');
        self.s.reasoning_at_line_start = true;
        self.s.thinking_break = false;
        self.s.ends_on_tool_call = false;
        self.s.last = Some(Channel::Reasoning);
        self.put(Piece::Reasoning(&s), emit)
    }

    /// Where tool lines go: `Some(true)` content, `Some(false)` reasoning.
    fn tool_channel(&self) -> Option<bool> {
        match self.opts.tools {
            ToolCallMode::Reasoning if self.opts.reasoning => Some(false),
            ToolCallMode::Content => Some(true),
            _ => None,
        }
    }

    /// How much of a call's start the completion needs: its label, for a
    /// tool line or to know whether the call was forwarded at its start.
    pub fn starts(&self) -> Starts {
        if self.opts.tools == ToolCallMode::Calls || self.tool_channel().is_some() {
            Starts::Label
        } else {
            Starts::None
        }
    }

    fn tool_start(&mut self, t: &ToolStart<'_>, emit: Emit<'_>) -> io::Result<()> {
        if self.opts.tools == ToolCallMode::Calls {
            let args = t.args.get();
            return self.call(&t.call_id, &t.tool_name, args, emit);
        }
        Ok(())
    }

    /// A call's completion, with its start when it came ([`Turn::starts`]).
    fn tool_end(
        &mut self,
        t: &ToolEnd<'_>,
        start: Option<&ToolStart<'_>>,
        emit: Emit<'_>,
    ) -> io::Result<()> {
        if self.opts.tools == ToolCallMode::Calls {
            // A completion whose start never came (a cut capture) still
            // reports a call; its arguments are unknown.
            if start.is_none() {
                return self.call(&t.call_id, &t.tool_name, "{}", emit);
            }
            return Ok(());
        }
        let Some(to_content) = self.tool_channel() else {
            return Ok(());
        };
        let label = start.map_or_else(|| t.tool_name.to_string(), label);
        let line = format!("{label} → {}", outcome(t));
        self.line(to_content, &line, emit)
    }

    /// Forward a tool call ([`ToolCallMode::Calls`]).
    fn call(&mut self, id: &str, name: &str, args: &str, emit: Emit<'_>) -> io::Result<()> {
        let index = self.s.next_index;
        self.s.next_index += 1;
        // Clients require an id on every call.
        let id: Cow<'_, str> = if id.is_empty() {
            Cow::Owned(format!("call_{index}"))
        } else {
            Cow::Borrowed(id)
        };
        let arguments = if args == "null" { "{}" } else { args };
        self.put(
            Piece::ToolCall {
                index,
                id: &id,
                name,
                arguments,
            },
            emit,
        )?;
        self.s.ends_on_tool_call = true;
        self.s.last = Some(Channel::Call);
        Ok(())
    }

    /// The session is over: how it ends (docs/formats.md#how-a-session-ends).
    /// A failed result or a fatal error is
    /// the agent's error (its own message when it gave one); a stream without
    /// a result is incomplete; otherwise it finished, with the result's usage
    /// or else the sum of the usage increments.
    pub fn end(&mut self) -> Ending {
        let s = &self.s;
        let agent_error = |msgs: &[Option<&String>]| Ending::Error {
            kind: Failure::Agent,
            message: msgs.iter().flatten().find(|m| !m.is_empty()).map_or_else(
                || "the agent reported an error".to_owned(),
                |m| (*m).clone(),
            ),
        };
        match (&s.result, &s.fatal) {
            (Some(r), _) if !r.ok => {
                agent_error(&[r.error.as_ref(), s.fatal.as_ref(), s.last_error.as_ref()])
            }
            (_, Some(f)) => agent_error(&[Some(f)]),
            (None, None) => Ending::Error {
                kind: Failure::Incomplete,
                message: s
                    .last_error
                    .clone()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "the agent's stream ended without a result".to_owned()),
            },
            (Some(r), None) => Ending::Finish {
                stop: if s.ends_on_tool_call {
                    Stop::ToolUse
                } else {
                    Stop::EndTurn
                },
                usage: r.usage.or(s.usage),
            },
        }
    }
}

/// The wire half of a streaming chat format: what one format writes for each
/// piece the chat core hands it, and at the session's end. Fresh per session.
pub trait ChatWire: Default {
    /// Writes one piece as it arrives.
    fn piece<W: io::Write + ?Sized>(
        &mut self,
        w: &mut W,
        h: &Header,
        p: Piece<'_>,
    ) -> io::Result<()>;
    /// Writes the session's ending.
    fn end<W: io::Write + ?Sized>(
        &mut self,
        w: &mut W,
        h: &Header,
        ending: Ending,
    ) -> io::Result<()>;
}

/// A streaming chat format as a sink: the chat core turns events into pieces
/// and `X` writes them, so a new wire format is only its [`ChatWire`].
pub struct WireSink<W, X> {
    w: W,
    core: Turn,
    wire: X,
}

impl<W: io::Write, X: ChatWire> WireSink<W, X> {
    /// A sink writing to `w` with the format's own chat options.
    pub fn new(w: W, core: Turn) -> Self {
        WireSink {
            w,
            core,
            wire: X::default(),
        }
    }
}

impl<W: io::Write, X: ChatWire> Sink for WireSink<W, X> {
    fn starts(&self) -> Starts {
        self.core.starts()
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.core.begin(s);
        self.wire = X::default();
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let (w, wire) = (&mut self.w, &mut self.wire);
        self.core.event(ev, &mut |h, p| wire.piece(&mut *w, h, p))
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let ending = self.core.end();
        let h = self.core.header();
        self.wire.end(&mut self.w, h, ending)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The whole-response half of a chat format: what it collects from the
/// pieces of one session, and the one JSON value it writes when the session
/// ends. Cloned from a fresh template per session.
pub trait ChatBody: Clone {
    /// Takes one piece in.
    fn piece(&mut self, h: &Header, p: Piece<'_>);
    /// Writes the session's response (or error) object through `out`.
    fn end<W: io::Write>(self, h: &Header, ending: Ending, out: JsonOut<'_, W>) -> io::Result<()>;
}

/// Where a [`ChatBody`] writes its one value: compact or pretty JSON, then a
/// newline.
pub struct JsonOut<'a, W> {
    w: &'a mut W,
    compact: bool,
}

impl<W: io::Write> JsonOut<'_, W> {
    /// Writes `v` and the newline that ends it.
    pub fn value<T: serde::Serialize + ?Sized>(self, v: &T) -> io::Result<()> {
        if self.compact {
            serde_json::to_writer(&mut *self.w, v)?;
        } else {
            serde_json::to_writer_pretty(&mut *self.w, v)?;
        }
        self.w.write_all(b"\n")
    }
}

/// A whole-response chat format as a sink: the chat core turns events into
/// pieces, `B` collects them and writes one object per session when it ends.
pub struct BodySink<W, B> {
    w: W,
    core: Turn,
    compact: bool,
    fresh: B,
    body: B,
}

impl<W: io::Write, B: ChatBody> BodySink<W, B> {
    /// A sink writing to `w`; `fresh` is the body every session starts from.
    pub fn new(w: W, core: Turn, compact: bool, fresh: B) -> Self {
        BodySink {
            w,
            core,
            compact,
            body: fresh.clone(),
            fresh,
        }
    }
}

impl<W: io::Write, B: ChatBody> Sink for BodySink<W, B> {
    fn starts(&self) -> Starts {
        self.core.starts()
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.core.begin(s);
        self.body = self.fresh.clone();
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let body = &mut self.body;
        self.core.event(ev, &mut |h, p| {
            body.piece(h, p);
            Ok(())
        })
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let ending = self.core.end();
        let body = std::mem::replace(&mut self.body, self.fresh.clone());
        let out = JsonOut {
            w: &mut self.w,
            compact: self.compact,
        };
        body.end(self.core.header(), ending, out)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// `shell: ls -la`: the tool's name and its key argument (first line, cut).
pub fn label(t: &ToolStart<'_>) -> String {
    let mut s = t.tool_name.to_string();
    if let Some(arg) = t.key_arg().map(|a| one_line(a, LINE_ARG_CHARS))
        && !arg.is_empty()
    {
        s.push_str(": ");
        s.push_str(&arg);
    }
    s
}

/// `exit 0`, `ok`, `+3 −1`, `failed: no such file`, `cancelled`.
pub fn outcome(t: &ToolEnd<'_>) -> String {
    if t.cancelled {
        return "cancelled".to_owned();
    }
    if t.outcome_unknown {
        return "outcome not recorded".to_owned();
    }
    if let Some(c) = t.exit_code {
        return format!("exit {c}");
    }
    if !t.ok {
        return match t.error.as_deref().map(|e| one_line(e, LINE_ARG_CHARS)) {
            Some(e) if !e.is_empty() => format!("failed: {e}"),
            _ => "failed".to_owned(),
        };
    }
    match (t.lines_added, t.lines_removed) {
        (Some(a), Some(r)) => format!("+{a} −{r}"),
        (Some(a), None) => format!("+{a}"),
        (None, Some(r)) => format!("−{r}"),
        (None, None) => "ok".to_owned(),
    }
}

/// The first non-blank line of `s`, trimmed and cut at `max` characters; `…`
/// marks anything left out.
pub fn one_line(s: &str, max: usize) -> Cow<'_, str> {
    let s = s.trim();
    let (first, more) = match s.find(['\n', '\r']) {
        Some(i) => (s[..i].trim_end(), true),
        None => (s, false),
    };
    match first.char_indices().nth(max) {
        Some((i, _)) => Cow::Owned(format!("{}…", &first[..i])),
        None if more => Cow::Owned(format!("{first} …")),
        None => Cow::Borrowed(first),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_cuts_and_marks() {
        assert_eq!(one_line("  ls -la  ", 10), "ls -la");
        assert_eq!(one_line("cat <<EOF\nx\nEOF", 20), "cat <<EOF …");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("ééééé", 2), "éé…");
    }

    #[test]
    fn outcomes() {
        let mut t = ToolEnd::new("c".into(), "shell".into(), true);
        t.exit_code = Some(0);
        assert_eq!(outcome(&t), "exit 0");
        let mut t = ToolEnd::new("c".into(), "read".into(), false);
        t.error = Some("no such file\nmore".into());
        assert_eq!(outcome(&t), "failed: no such file …");
        let mut t = ToolEnd::new("c".into(), "edit".into(), true);
        t.lines_added = Some(3);
        t.lines_removed = Some(1);
        assert_eq!(outcome(&t), "+3 −1");
        t.cancelled = true;
        assert_eq!(outcome(&t), "cancelled");
    }

    /// Everything a turn emitted, as `(kind, text)`.
    fn pieces(turn: &mut Turn, events: &[Event<'_>]) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for ev in events {
            turn.event(ev, &mut |_, p| {
                out.push(match p {
                    Piece::Reasoning(t) => ("reasoning", t.to_owned()),
                    Piece::Content(t) => ("content", t.to_owned()),
                    Piece::ToolCall { name, .. } => ("call", name.to_owned()),
                });
                Ok(())
            })
            .unwrap();
        }
        out
    }

    fn session(id: &str) -> Session {
        Session {
            id: id.to_owned(),
            ordinal: 1,
            dedupe: true,
        }
    }

    #[test]
    fn nothing_of_a_session_carries_into_the_next() {
        let mut turn = Turn::new(ChatOptions {
            reasoning: true,
            id_prefix: "chatcmpl-",
            ident: Identity {
                run_start: Some(7),
                ..Identity::default()
            },
            ..ChatOptions::default()
        });
        turn.begin(&session("a"));
        let evs = [Event {
            ts: Some(5_000),
            kind: Kind::ThinkingDelta {
                text: "half a thought".into(),
            },
        }];
        assert_eq!(pieces(&mut turn, &evs).len(), 1);
        assert_eq!(turn.header().id, "chatcmpl-a");
        assert_eq!(turn.header().created, 5);
        assert!(matches!(
            turn.end(),
            Ending::Error {
                kind: Failure::Incomplete,
                ..
            }
        ));
        turn.begin(&session("b"));
        assert_eq!(turn.header().id, "chatcmpl-b");
        assert_eq!(turn.header().created, 7, "no timestamp: the run's start");
    }

    #[test]
    fn without_a_reasoning_channel_thinking_and_tool_lines_are_dropped() {
        let mut turn = Turn::new(ChatOptions::default());
        turn.begin(&session("a"));
        let evs = [
            Event {
                ts: None,
                kind: Kind::ThinkingDelta { text: "hmm".into() },
            },
            Event {
                ts: None,
                kind: Kind::TextDelta {
                    text: "answer".into(),
                },
            },
        ];
        assert_eq!(
            pieces(&mut turn, &evs),
            vec![("content", "answer".to_owned())]
        );
    }
}
