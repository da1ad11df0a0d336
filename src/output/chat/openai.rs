//! `--to openai-sse` and `--to openai-json`: OpenAI Chat Completions output
//! (docs/formats.md#openai-sse, with the rules clients depend on).
//!
//! This file is wire code only: the chat core ([`super::Turn`]) turns a
//! session's normalized events into pieces — reasoning text, content text,
//! tool calls — and, at the end of the session, an ending: a finish (reason and
//! usage) or an error. [`SseSink`] writes every piece as its own `chat.completion.chunk` the
//! moment its event arrives, so a live agent streams through; [`json_sink`]
//! collects one session's pieces into a `chat.completion` object.
//!
//! Tool calls in an agent's stream have already been executed, so by default
//! they are not forwarded as `tool_calls` (a client that executes tools would
//! run them again): each becomes one readable line in the reasoning channel
//! (`--tool-calls`).

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::{BodySink, ChatBody, ChatOptions, Ending, Failure, Header, JsonOut, Piece, Stop, Turn};
use crate::event::{Event, Starts, Usage};
use crate::json::write_str;
use crate::output::{OutputOptions, Session, Sink};

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

/// The chat core as the OpenAI formats configure it.
fn turn(opts: &OutputOptions) -> Turn {
    Turn::new(ChatOptions::from_output(opts, "chatcmpl-"))
}

/// `finish_reason`.
fn finish_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
    }
}

/// The error record's `type`.
fn error_type(kind: Failure) -> &'static str {
    match kind {
        Failure::Agent => "agent_error",
        Failure::Incomplete => "incomplete_stream",
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
    /// Only when the agent counted the reasoning apart: OpenAI's field is
    /// optional, and an absent count is not 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Serialize)]
struct CompletionDetails {
    reasoning_tokens: u64,
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
            completion_tokens_details: u.reasoning.map(|r| CompletionDetails {
                reasoning_tokens: r,
            }),
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
            Ending::Finish { stop, usage } => {
                self.chunk(w)?;
                let reason = finish_reason(stop);
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
                serde_json::to_writer(&mut *w, &error_out(error_type(kind), &message))?;
                w.write_all(b"\n\n")?;
            }
        }
        w.write_all(DONE)
    }
}

/// `--to openai-sse`: one SSE stream of `chat.completion.chunk`s per session.
pub struct SseSink<W: Write> {
    w: W,
    core: Turn,
    wire: SseWire,
    field: &'static str,
    include_usage: bool,
}

impl<W: Write> SseSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        SseSink {
            w,
            core: turn(opts),
            wire: SseWire::default(),
            field: opts.chat.reasoning_field.key().unwrap_or(""),
            include_usage: opts.chat.include_usage,
        }
    }
}

impl<W: Write> Sink for SseSink<W> {
    fn starts(&self) -> Starts {
        self.core.starts()
    }

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
#[derive(Serialize, Clone)]
struct CallOut {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut,
}

#[derive(Serialize, Clone)]
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
pub fn json_sink<W: Write>(w: W, opts: &OutputOptions) -> impl Sink + use<W> {
    let fresh = CompletionBody {
        field: opts.chat.reasoning_field.key(),
        content: String::new(),
        reasoning: String::new(),
        calls: Vec::new(),
    };
    BodySink::new(w, turn(opts), opts.compact, fresh)
}

/// One `chat.completion`'s message, as the pieces arrive.
#[derive(Clone)]
struct CompletionBody {
    field: Option<&'static str>,
    content: String,
    reasoning: String,
    calls: Vec<CallOut>,
}

impl ChatBody for CompletionBody {
    fn piece(&mut self, _h: &Header, p: Piece<'_>) {
        match p {
            Piece::Content(t) => self.content.push_str(t),
            Piece::Reasoning(t) => self.reasoning.push_str(t),
            Piece::ToolCall {
                id,
                name,
                arguments,
                ..
            } => self.calls.push(CallOut {
                id: id.to_owned(),
                kind: "function",
                function: FunctionOut {
                    name: name.to_owned(),
                    arguments: arguments.to_owned(),
                },
            }),
        }
    }

    fn end<W: Write>(self, h: &Header, ending: Ending, out: JsonOut<'_, W>) -> io::Result<()> {
        match ending {
            Ending::Error { kind, message } => out.value(&error_out(error_type(kind), &message)),
            Ending::Finish { stop, usage } => out.value(&CompletionOut {
                id: &h.id,
                object: "chat.completion",
                created: h.created,
                model: &h.model,
                choices: [ChoiceOut {
                    index: 0,
                    message: MessageOut {
                        content: &self.content,
                        reasoning: self
                            .field
                            .filter(|_| !self.reasoning.is_empty())
                            .map(|k| (k, self.reasoning.as_str())),
                        tool_calls: &self.calls,
                    },
                    finish_reason: finish_reason(stop),
                }],
                usage: usage.map(UsageOut::from),
            }),
        }
    }
}
