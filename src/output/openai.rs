//! `--to openai-sse` and `--to openai-json`: OpenAI Chat Completions output
//! (docs/formats.md#openai-sse, with the rules clients depend on).
//!
//! Both formats share one `Core` that turns a session's normalized events
//! into `Piece`s — reasoning text, content text, tool calls — and, at the
//! end of the session, an `Ending`: a finish (reason and usage) or an error.
//! [`SseSink`] writes every piece as its own `chat.completion.chunk` the
//! moment its event arrives, so a live agent streams through; [`JsonSink`]
//! collects one session's pieces into a `chat.completion` object.
//!
//! Tool calls in an agent's stream have already been executed, so by default
//! they are not forwarded as `tool_calls` (a client that executes tools would
//! run them again): each becomes one readable line in the reasoning channel
//! (`--tool-calls`).

use std::borrow::Cow;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{OutputOptions, Session, Sink};
use crate::event::{Event, Kind, ToolEnd, ToolStart, Usage};
use crate::json::write_str;

/// Where thinking goes in a delta or message (`--reasoning-field`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningField {
    /// `reasoning_content` (DeepSeek style; read by the AI SDK and LiteLLM).
    #[default]
    ReasoningContent,
    /// `reasoning` (OpenRouter / gpt-oss style).
    Reasoning,
    /// Thinking is dropped.
    None,
}

impl ReasoningField {
    /// The JSON key, or `None` when reasoning is not written.
    pub fn key(self) -> Option<&'static str> {
        match self {
            ReasoningField::ReasoningContent => Some("reasoning_content"),
            ReasoningField::Reasoning => Some("reasoning"),
            ReasoningField::None => None,
        }
    }
}

/// How tool calls the agent already executed appear (`--tool-calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolCallMode {
    /// One line per call in the reasoning channel (omitted when there is none).
    #[default]
    Reasoning,
    /// One line per call in the content.
    Content,
    /// Not shown.
    Omit,
    /// Forwarded as `tool_calls` (for consumers that only display them).
    Calls,
}

/// Longest key argument or error shown in a tool line, in characters.
const LINE_ARG_CHARS: usize = 200;

/// The values every chunk of a session repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub id: String,
    pub model: String,
    /// Unix seconds.
    pub created: i64,
}

/// One thing a session says, in wire-neutral form.
enum Piece<'x> {
    Reasoning(&'x str),
    Content(&'x str),
    /// A whole tool call (the SSE sink splits it into its deltas).
    ToolCall {
        index: usize,
        id: &'x str,
        name: &'x str,
        arguments: &'x str,
    },
}

/// How a session ends.
enum Ending {
    Finish {
        reason: &'static str,
        usage: Option<Usage>,
    },
    Error {
        kind: &'static str,
        message: String,
    },
}

/// A tool call whose start was seen and whose end was not yet.
struct OpenCall {
    id: String,
    /// `shell: ls -la` (empty in `calls` mode, which needs no label).
    label: String,
}

/// What a session's result said.
struct ResultSeen {
    ok: bool,
    error: Option<String>,
    usage: Option<Usage>,
}

/// Receives the pieces of a session, with the header fixed before the first.
type Emit<'e> = &'e mut dyn FnMut(&Header, Piece<'_>) -> io::Result<()>;

/// Events in, pieces out; shared by both formats.
struct Core {
    field: ReasoningField,
    mode: ToolCallMode,
    id: Option<String>,
    model: Option<String>,
    created: Option<i64>,
    run_start: i64,
    // Per session:
    session_id: String,
    session_model: Option<String>,
    /// First timestamp seen before the header was fixed.
    first_ts: Option<i64>,
    header: Option<Header>,
    reasoning_at_line_start: bool,
    content_at_line_start: bool,
    /// A thinking phase ended; the next one starts on a new line.
    thinking_break: bool,
    open: Vec<OpenCall>,
    next_index: usize,
    ends_on_tool_call: bool,
    usage: Option<Usage>,
    result: Option<ResultSeen>,
    fatal: Option<String>,
    last_error: Option<String>,
}

impl Core {
    fn new(opts: &OutputOptions) -> Self {
        let run_start = opts.run_start.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        });
        Core {
            field: opts.reasoning_field,
            mode: opts.tool_calls,
            id: opts.id.clone(),
            model: opts.model.clone(),
            created: opts.created,
            run_start,
            session_id: String::new(),
            session_model: None,
            first_ts: None,
            header: None,
            reasoning_at_line_start: true,
            content_at_line_start: true,
            thinking_break: false,
            open: Vec::new(),
            next_index: 0,
            ends_on_tool_call: false,
            usage: None,
            result: None,
            fatal: None,
            last_error: None,
        }
    }

    fn begin(&mut self, s: &Session) {
        self.session_id.clear();
        self.session_id.push_str(&s.id);
        self.session_model = None;
        self.first_ts = None;
        self.header = None;
        self.reasoning_at_line_start = true;
        self.content_at_line_start = true;
        self.thinking_break = false;
        self.open.clear();
        self.next_index = 0;
        self.ends_on_tool_call = false;
        self.usage = None;
        self.result = None;
        self.fatal = None;
        self.last_error = None;
    }

    /// The session's header, derived (and then fixed) on first use.
    fn header(&mut self) -> &Header {
        if self.header.is_none() {
            let h = Header {
                id: self
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("chatcmpl-{}", self.session_id)),
                model: self
                    .model
                    .clone()
                    .or_else(|| self.session_model.clone())
                    .unwrap_or_else(|| "unknown".to_owned()),
                created: self.created.unwrap_or_else(|| {
                    self.first_ts
                        .map_or(self.run_start, |ms| ms.div_euclid(1000))
                }),
            };
            self.header = Some(h);
        }
        self.header.as_ref().expect("set above")
    }

    fn put(&mut self, piece: Piece<'_>, emit: Emit<'_>) -> io::Result<()> {
        let h = self.header();
        emit(h, piece)
    }

    fn event(&mut self, ev: &Event<'_>, emit: Emit<'_>) -> io::Result<()> {
        if self.header.is_none() && self.first_ts.is_none() {
            self.first_ts = ev.ts;
        }
        match &ev.kind {
            Kind::SessionStarted(s) => {
                self.session_model = s
                    .model
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned);
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                self.content(text, emit)?
            }
            Kind::ThinkingDelta { text } => self.thinking(text, emit)?,
            Kind::Thinking { text, .. } => {
                self.thinking(text, emit)?;
                self.thinking_break = true;
            }
            Kind::ThinkingCompleted { .. } => self.thinking_break = true,
            Kind::ToolCallStarted(t) => self.tool_start(t, emit)?,
            Kind::ToolCallCompleted(t) => self.tool_end(t, emit)?,
            Kind::ToolCall(b) => {
                self.tool_start(&b.0, emit)?;
                self.tool_end(&b.1, emit)?;
            }
            Kind::UsageDelta(u) => self.usage = Some(self.usage.map_or(*u, |s| s.add(u))),
            Kind::Result(r) => {
                self.result = Some(ResultSeen {
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
                self.last_error = Some(message.to_string());
                if *fatal {
                    self.fatal = Some(message.to_string());
                } else if self.field.key().is_some() {
                    let text = match source {
                        Some(src) => format!("{src}: {message}"),
                        None => format!("error: {message}"),
                    };
                    self.line(false, text.trim_end_matches(['\n', '\r']), emit)?;
                }
            }
            Kind::UserMessage { .. }
            | Kind::ToolCallProgress { .. }
            | Kind::ShellOutputDelta { .. }
            | Kind::Summary { .. }
            | Kind::TurnEnded { .. }
            | Kind::Unknown { .. } => {}
        }
        Ok(())
    }

    fn content(&mut self, text: &str, emit: Emit<'_>) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.content_at_line_start = text.ends_with('\n');
        self.ends_on_tool_call = false;
        self.put(Piece::Content(text), emit)
    }

    fn thinking(&mut self, text: &str, emit: Emit<'_>) -> io::Result<()> {
        if text.is_empty() || self.field.key().is_none() {
            return Ok(());
        }
        let text: Cow<'_, str> = if self.thinking_break && !self.reasoning_at_line_start {
            Cow::Owned(format!("\n{text}"))
        } else {
            Cow::Borrowed(text)
        };
        self.thinking_break = false;
        self.reasoning_at_line_start = text.ends_with('\n');
        self.ends_on_tool_call = false;
        self.put(Piece::Reasoning(&text), emit)
    }

    /// A line of its own in the content (`to_content`) or reasoning channel.
    fn line(&mut self, to_content: bool, text: &str, emit: Emit<'_>) -> io::Result<()> {
        let at_start = if to_content {
            self.content_at_line_start
        } else {
            self.reasoning_at_line_start
        };
        let mut s = String::with_capacity(text.len() + 2);
        if !at_start {
            s.push('\n');
        }
        s.push_str(text);
        s.push('\n');
        if to_content {
            self.content_at_line_start = true;
        } else {
            self.reasoning_at_line_start = true;
            self.thinking_break = false;
        }
        self.ends_on_tool_call = false;
        self.put(
            if to_content {
                Piece::Content(&s)
            } else {
                Piece::Reasoning(&s)
            },
            emit,
        )
    }

    /// Where tool lines go: `Some(true)` content, `Some(false)` reasoning.
    fn tool_channel(&self) -> Option<bool> {
        match self.mode {
            ToolCallMode::Reasoning if self.field.key().is_some() => Some(false),
            ToolCallMode::Content => Some(true),
            _ => None,
        }
    }

    fn remember(&mut self, id: &str, label: String) {
        if let Some(i) = self.open.iter().position(|c| c.id == id) {
            self.open.remove(i);
        }
        // The normalizer caps open calls too; this only bounds a stream
        // that never completes its calls.
        if self.open.len() >= crate::transform::MAX_OPEN_CALLS {
            self.open.remove(0);
        }
        self.open.push(OpenCall {
            id: id.to_owned(),
            label,
        });
    }

    fn forget(&mut self, id: &str) -> Option<String> {
        let i = self.open.iter().position(|c| c.id == id)?;
        Some(self.open.remove(i).label)
    }

    fn tool_start(&mut self, t: &ToolStart<'_>, emit: Emit<'_>) -> io::Result<()> {
        if self.mode == ToolCallMode::Calls {
            self.remember(&t.call_id, String::new());
            let args = t.args.get();
            return self.call(&t.call_id, &t.tool_name, args, emit);
        }
        if self.tool_channel().is_some() {
            self.remember(&t.call_id, label(t));
        }
        Ok(())
    }

    fn tool_end(&mut self, t: &ToolEnd<'_>, emit: Emit<'_>) -> io::Result<()> {
        let seen = self.forget(&t.call_id);
        if self.mode == ToolCallMode::Calls {
            // A completion whose start never came (a cut capture) still
            // reports a call; its arguments are unknown.
            if seen.is_none() {
                return self.call(&t.call_id, &t.tool_name, "{}", emit);
            }
            return Ok(());
        }
        let Some(to_content) = self.tool_channel() else {
            return Ok(());
        };
        let label = seen.unwrap_or_else(|| t.tool_name.to_string());
        let line = format!("{label} → {}", outcome(t));
        self.line(to_content, &line, emit)
    }

    /// Forward a tool call (`--tool-calls calls`).
    fn call(&mut self, id: &str, name: &str, args: &str, emit: Emit<'_>) -> io::Result<()> {
        let index = self.next_index;
        self.next_index += 1;
        // Clients require an id on a call's first delta.
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
        self.ends_on_tool_call = true;
        Ok(())
    }

    /// The session is over: how it ends (docs/formats.md#how-a-session-ends).
    fn end(&mut self) -> Ending {
        let agent_error = |msgs: &[Option<&String>]| Ending::Error {
            kind: "agent_error",
            message: msgs.iter().flatten().find(|m| !m.is_empty()).map_or_else(
                || "the agent reported an error".to_owned(),
                |m| (*m).clone(),
            ),
        };
        match (&self.result, &self.fatal) {
            (Some(r), _) if !r.ok => agent_error(&[
                r.error.as_ref(),
                self.fatal.as_ref(),
                self.last_error.as_ref(),
            ]),
            (_, Some(f)) => agent_error(&[Some(f)]),
            (None, None) => Ending::Error {
                kind: "incomplete_stream",
                message: self
                    .last_error
                    .clone()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "the agent's stream ended without a result".to_owned()),
            },
            (Some(r), None) => Ending::Finish {
                reason: if self.ends_on_tool_call {
                    "tool_calls"
                } else {
                    "stop"
                },
                usage: r.usage.or(self.usage),
            },
        }
    }
}

/// `shell: ls -la`: the tool's name and its key argument (first line, cut).
fn label(t: &ToolStart<'_>) -> String {
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
fn outcome(t: &ToolEnd<'_>) -> String {
    if t.cancelled {
        return "cancelled".to_owned();
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
fn one_line(s: &str, max: usize) -> Cow<'_, str> {
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

// ------------------------------------------------------------ wire values

/// `usage` as OpenAI writes it (`prompt_tokens` includes cache reads and
/// writes; `cached_tokens` are the cache reads: docs/formats.md#openai-usage).
#[derive(Serialize)]
struct UsageOut {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
}

impl From<Usage> for UsageOut {
    fn from(u: Usage) -> Self {
        UsageOut {
            prompt_tokens: u.input,
            completion_tokens: u.output,
            total_tokens: u.input.saturating_add(u.output),
            prompt_tokens_details: u.cache_read.map(|c| PromptDetails { cached_tokens: c }),
        }
    }
}

/// `{"error":{"message","type","code":null}}`.
#[derive(Serialize)]
struct ErrorOut<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
    code: Option<&'a str>,
}

fn error_out<'a>(kind: &'a str, message: &'a str) -> ErrorOut<'a> {
    ErrorOut {
        error: ErrorBody {
            message,
            kind,
            code: None,
        },
    }
}

// ------------------------------------------------------------ openai-sse

/// The end of every choice chunk after its delta.
const CHUNK_END: &[u8] = b",\"finish_reason\":null}]}\n\n";
const DONE: &[u8] = b"data: [DONE]\n\n";

/// Per-session wire state of the SSE sink.
#[derive(Default)]
struct SseWire {
    /// `{"id":…,"object":…,"created":…,"model":…,` (then `choices`).
    head: Vec<u8>,
    role_sent: bool,
}

impl SseWire {
    /// Write the role chunk if it has not gone out yet: it comes just before
    /// the session's first content, reasoning, error or finish record.
    fn open<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header) -> io::Result<()> {
        if self.role_sent {
            return Ok(());
        }
        self.role_sent = true;
        self.head.clear();
        self.head.extend_from_slice(b"{\"id\":");
        write_str(&mut self.head, &h.id)?;
        write!(
            self.head,
            ",\"object\":\"chat.completion.chunk\",\"created\":{},\"model\":",
            h.created
        )?;
        write_str(&mut self.head, &h.model)?;
        self.head.push(b',');
        self.chunk(w)?;
        w.write_all(b"{\"role\":\"assistant\",\"content\":\"\"}")?;
        w.write_all(CHUNK_END)
    }

    /// `data: {head,"choices":[{"index":0,"delta":` — the delta follows.
    fn chunk<W: Write + ?Sized>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"data: ")?;
        w.write_all(&self.head)?;
        w.write_all(b"\"choices\":[{\"index\":0,\"delta\":")
    }

    fn piece<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        field: &str,
        h: &Header,
        p: Piece<'_>,
    ) -> io::Result<()> {
        self.open(w, h)?;
        self.chunk(w)?;
        match p {
            Piece::Content(t) => {
                w.write_all(b"{\"content\":")?;
                write_str(w, t)?;
            }
            Piece::Reasoning(t) => {
                w.write_all(b"{\"")?;
                w.write_all(field.as_bytes())?;
                w.write_all(b"\":")?;
                write_str(w, t)?;
            }
            Piece::ToolCall {
                index,
                id,
                name,
                arguments,
            } => {
                // First delta of an index: id, type and name, empty
                // arguments; then the arguments whole, so no prefix that
                // parses as JSON goes out before the real end.
                write!(w, "{{\"tool_calls\":[{{\"index\":{index},\"id\":")?;
                write_str(w, id)?;
                w.write_all(b",\"type\":\"function\",\"function\":{\"name\":")?;
                write_str(w, name)?;
                w.write_all(b",\"arguments\":\"\"}}]}")?;
                w.write_all(CHUNK_END)?;
                self.chunk(w)?;
                write!(
                    w,
                    "{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":"
                )?;
                write_str(w, arguments)?;
                w.write_all(b"}}]")?;
            }
        }
        w.write_all(b"}")?;
        w.write_all(CHUNK_END)
    }

    fn end<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        h: &Header,
        ending: Ending,
        include_usage: bool,
    ) -> io::Result<()> {
        self.open(w, h)?;
        match ending {
            Ending::Finish { reason, usage } => {
                self.chunk(w)?;
                write!(w, "{{}},\"finish_reason\":\"{reason}\"}}]}}\n\n")?;
                if let (true, Some(u)) = (include_usage, usage) {
                    w.write_all(b"data: ")?;
                    w.write_all(&self.head)?;
                    w.write_all(b"\"choices\":[],\"usage\":")?;
                    serde_json::to_writer(&mut *w, &UsageOut::from(u))?;
                    w.write_all(b"}\n\n")?;
                }
            }
            Ending::Error { kind, message } => {
                w.write_all(b"data: ")?;
                serde_json::to_writer(&mut *w, &error_out(kind, &message))?;
                w.write_all(b"\n\n")?;
            }
        }
        w.write_all(DONE)
    }
}

/// `--to openai-sse`: one SSE stream of `chat.completion.chunk`s per session.
pub struct SseSink<W: Write> {
    w: W,
    core: Core,
    wire: SseWire,
    field: &'static str,
    include_usage: bool,
}

impl<W: Write> SseSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        SseSink {
            w,
            core: Core::new(opts),
            wire: SseWire::default(),
            field: opts.reasoning_field.key().unwrap_or(""),
            include_usage: opts.include_usage,
        }
    }
}

impl<W: Write> Sink for SseSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.core.begin(s);
        self.wire.role_sent = false;
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let (w, wire, field) = (&mut self.w, &mut self.wire, self.field);
        self.core
            .event(ev, &mut |h, p| wire.piece(&mut *w, field, h, p))
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let ending = self.core.end();
        let h = self.core.header();
        self.wire.end(&mut self.w, h, ending, self.include_usage)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

// ------------------------------------------------------------ openai-json

/// A forwarded call in `message.tool_calls`.
#[derive(Serialize)]
struct CallOut {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut,
}

#[derive(Serialize)]
struct FunctionOut {
    name: String,
    arguments: String,
}

/// `choices[0].message`; the reasoning key is chosen at run time.
struct MessageOut<'a> {
    content: &'a str,
    reasoning: Option<(&'static str, &'a str)>,
    tool_calls: &'a [CallOut],
}

impl Serialize for MessageOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("role", "assistant")?;
        // OpenAI sends `null` content beside tool calls and no text.
        if self.content.is_empty() && !self.tool_calls.is_empty() {
            m.serialize_entry("content", &None::<&str>)?;
        } else {
            m.serialize_entry("content", self.content)?;
        }
        if let Some((key, text)) = self.reasoning {
            m.serialize_entry(key, text)?;
        }
        if !self.tool_calls.is_empty() {
            m.serialize_entry("tool_calls", self.tool_calls)?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct ChoiceOut<'a> {
    index: u32,
    message: MessageOut<'a>,
    finish_reason: &'a str,
}

#[derive(Serialize)]
struct CompletionOut<'a> {
    id: &'a str,
    object: &'static str,
    created: i64,
    model: &'a str,
    choices: [ChoiceOut<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<UsageOut>,
}

/// `--to openai-json`: one `chat.completion` object per session, written
/// when the session ends.
pub struct JsonSink<W: Write> {
    w: W,
    core: Core,
    field: Option<&'static str>,
    compact: bool,
    content: String,
    reasoning: String,
    calls: Vec<CallOut>,
}

impl<W: Write> JsonSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        JsonSink {
            w,
            core: Core::new(opts),
            field: opts.reasoning_field.key(),
            compact: opts.compact,
            content: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
        }
    }

    fn write_value<T: Serialize>(&mut self, v: &T) -> io::Result<()> {
        if self.compact {
            serde_json::to_writer(&mut self.w, v)?;
        } else {
            serde_json::to_writer_pretty(&mut self.w, v)?;
        }
        self.w.write_all(b"\n")
    }
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.core.begin(s);
        self.content.clear();
        self.reasoning.clear();
        self.calls.clear();
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let (content, reasoning, calls) = (&mut self.content, &mut self.reasoning, &mut self.calls);
        self.core.event(ev, &mut |_, p| {
            match p {
                Piece::Content(t) => content.push_str(t),
                Piece::Reasoning(t) => reasoning.push_str(t),
                Piece::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                } => calls.push(CallOut {
                    id: id.to_owned(),
                    kind: "function",
                    function: FunctionOut {
                        name: name.to_owned(),
                        arguments: arguments.to_owned(),
                    },
                }),
            }
            Ok(())
        })
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let ending = self.core.end();
        let h = self.core.header().clone();
        let content = std::mem::take(&mut self.content);
        let reasoning = std::mem::take(&mut self.reasoning);
        let calls = std::mem::take(&mut self.calls);
        match ending {
            Ending::Error { kind, message } => self.write_value(&error_out(kind, &message)),
            Ending::Finish { reason, usage } => {
                let v = CompletionOut {
                    id: &h.id,
                    object: "chat.completion",
                    created: h.created,
                    model: &h.model,
                    choices: [ChoiceOut {
                        index: 0,
                        message: MessageOut {
                            content: &content,
                            reasoning: self
                                .field
                                .filter(|_| !reasoning.is_empty())
                                .map(|k| (k, reasoning.as_str())),
                            tool_calls: &calls,
                        },
                        finish_reason: reason,
                    }],
                    usage: usage.map(UsageOut::from),
                };
                self.write_value(&v)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
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
}
