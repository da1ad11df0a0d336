//! `--to anthropic-sse` and `--to anthropic-json`: the Anthropic Messages API
//! (docs/formats.md#anthropic-sse), on the chat core ([`super::Turn`]).
//!
//! A session is one message. Its pieces become content blocks: a run of
//! reasoning is one `thinking` block, a run of content one `text` block, a
//! forwarded call one `tool_use` block; a block closes when a piece of another
//! kind arrives, so blocks never interleave and each has its own index.
//! [`sse_sink`] writes every piece as a `content_block_delta` the moment its
//! event arrives; [`json_sink`] collects the same blocks into one `Message`.
//!
//! What strict clients rely on, and why each rule is here: `message_start`
//! comes first (the SDK's accumulator raises on anything before it) and
//! carries integer `usage`, as `message_delta` does (Claude Code reads both);
//! a text or thinking block starts empty and its deltas append to it; a
//! `tool_use` block's `input_json_delta` fragments concatenate to the call's
//! JSON arguments; a failed session ends with an `error` event; the stream
//! ends at `message_stop` with no `[DONE]`. A thinking block carries
//! `"signature": ""`, as the API's `content_block_start` does: the SDKs'
//! typed models require the field (anthropic-python's `ThinkingBlock`,
//! `@ai-sdk/anthropic`'s schema of a whole `Message`). No `signature_delta`
//! follows, although the API sends one before `content_block_stop`: the
//! agents' streams give no signature (and a run of reasoning here may join
//! several thinking blocks and tool lines, which no one signature covers),
//! one cannot be invented, and an empty `signature_delta` would make the AI
//! SDK keep `""` as the block's signature and send it back to the API, which
//! rejects it, where without one it leaves the block out of the next request.
//! The error event's `type` is `api_error`, one of the API's own error types:
//! anthropic-python's `ErrorResponse` accepts no other.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::value::RawValue;

use super::{
    BodySink, ChatBody, ChatOptions, ChatWire, Ending, Failure, Header, JsonOut, Piece, Stop, Turn,
    WireSink,
};
use crate::event::Usage;
use crate::json::write_str;
use crate::output::{OutputOptions, Sink};

fn turn(opts: &OutputOptions) -> Turn {
    Turn::new(ChatOptions {
        blocks: true,
        ..ChatOptions::from_output(opts, "msg_")
    })
}

/// `stop_reason`.
fn stop_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
    }
}

/// The error's `type`: `api_error` for both kinds. The API's error types are
/// a closed set that anthropic-python's `ErrorResponse` validates against
/// (the OpenAI formats' `agent_error`/`incomplete_stream` fail it), and of
/// that set only `api_error` ("an unexpected error" on the serving side)
/// fits either. The message is the same as in the OpenAI formats; which of
/// the two it was is not told apart here (`--to events` tells it).
fn error_type(_kind: Failure) -> &'static str {
    "api_error"
}

/// `usage` as Anthropic writes it: `input_tokens` leaves out the cache reads
/// and writes, which have fields of their own. Unknown usage is zeros: the
/// counts are required integers.
#[derive(Serialize, Default)]
struct UsageOut {
    input_tokens: u64,
    output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_read_input_tokens: Option<u64>,
}

impl From<Usage> for UsageOut {
    fn from(u: Usage) -> Self {
        UsageOut {
            input_tokens: u
                .input
                .saturating_sub(u.cache_read.unwrap_or(0))
                .saturating_sub(u.cache_write.unwrap_or(0)),
            output_tokens: u.output,
            cache_creation_input_tokens: u.cache_write,
            cache_read_input_tokens: u.cache_read,
        }
    }
}

/// `{"type":"error","error":{"type","message"}}`, in the stream and whole.
#[derive(Serialize)]
struct ErrorOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    message: &'a str,
}

fn error_out(kind: Failure, message: &str) -> ErrorOut<'_> {
    ErrorOut {
        kind: "error",
        error: ErrorBody {
            kind: error_type(kind),
            message,
        },
    }
}

/// The message envelope, without content (`message_start`) or with it.
#[derive(Serialize)]
struct MessageOut<'a, C: Serialize> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: C,
    stop_reason: Option<&'static str>,
    stop_sequence: Option<&'static str>,
    usage: UsageOut,
}

/// The arguments as the JSON object `tool_use.input` must be (anthropic-python's
/// `ToolUseBlock` rejects anything else): arguments that are JSON but not an
/// object (a string where a saved session redacted them, an array) become
/// `{"arguments": <them>}`, so that nothing is lost; arguments that are not
/// valid JSON (never expected: the chat core hands JSON text) become `{}`.
fn input_value(arguments: &str) -> Box<RawValue> {
    let Ok(v) = RawValue::from_string(arguments.to_owned()) else {
        return RawValue::from_string("{}".to_owned()).expect("valid JSON");
    };
    if v.get().trim_start().starts_with('{') {
        return v;
    }
    RawValue::from_string(format!("{{\"arguments\":{}}}", v.get())).expect("valid JSON")
}

// ------------------------------------------------------------ anthropic-sse

/// The kind of the open text-like block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

/// Per-session wire state of the SSE sink.
#[derive(Default)]
struct SseWire {
    started: bool,
    open: Option<Open>,
    /// The index the next block gets.
    next: usize,
}

/// `event: <name>\ndata: ` — the JSON and a blank line follow.
fn event<W: Write + ?Sized>(w: &mut W, name: &str) -> io::Result<()> {
    w.write_all(b"event: ")?;
    w.write_all(name.as_bytes())?;
    w.write_all(b"\ndata: ")
}

fn record<W: Write + ?Sized, T: Serialize>(w: &mut W, name: &str, v: &T) -> io::Result<()> {
    event(w, name)?;
    serde_json::to_writer(&mut *w, v)?;
    w.write_all(b"\n\n")
}

impl SseWire {
    /// `message_start` (and the `ping` the API sends after it) before the
    /// session's first block, error or end.
    fn start<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        #[derive(Serialize)]
        struct Start<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            message: MessageOut<'a, [(); 0]>,
        }
        let start = Start {
            kind: "message_start",
            message: MessageOut {
                id: &h.id,
                kind: "message",
                role: "assistant",
                model: &h.model,
                content: [],
                stop_reason: None,
                stop_sequence: None,
                usage: UsageOut::default(),
            },
        };
        record(w, "message_start", &start)?;
        w.write_all(b"event: ping\ndata: {\"type\":\"ping\"}\n\n")
    }

    fn close<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        if self.open.take().is_some() {
            self.stop_block(w)?;
        }
        Ok(())
    }

    /// `content_block_stop` for the block most recently started.
    fn stop_block<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        event(w, "content_block_stop")?;
        write!(
            w,
            "{{\"type\":\"content_block_stop\",\"index\":{}}}\n\n",
            self.next - 1
        )
    }

    /// `content_block_start` for a new block; `block` is its JSON.
    fn start_block<W: Write + ?Sized>(&mut self, w: &mut W, block: &[u8]) -> io::Result<()> {
        event(w, "content_block_start")?;
        write!(
            w,
            "{{\"type\":\"content_block_start\",\"index\":{},\"content_block\":",
            self.next
        )?;
        self.next += 1;
        w.write_all(block)?;
        w.write_all(b"}\n\n")
    }

    /// `content_block_delta` of the open block: `{"type":<kind>,<key>:` then
    /// the value follows.
    fn delta<W: Write + ?Sized>(&self, w: &mut W, kind: &str, key: &str) -> io::Result<()> {
        event(w, "content_block_delta")?;
        write!(
            w,
            "{{\"type\":\"content_block_delta\",\"index\":{},\"delta\":{{\"type\":\"{kind}\",\"{key}\":",
            self.next - 1
        )
    }

    fn text<W: Write + ?Sized>(&mut self, w: &mut W, kind: Open, t: &str) -> io::Result<()> {
        if self.open != Some(kind) {
            self.close(w)?;
            self.open = Some(kind);
            self.start_block(
                w,
                match kind {
                    Open::Text => b"{\"type\":\"text\",\"text\":\"\"}",
                    Open::Thinking => {
                        b"{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}"
                    }
                },
            )?;
        }
        match kind {
            Open::Text => self.delta(w, "text_delta", "text")?,
            Open::Thinking => self.delta(w, "thinking_delta", "thinking")?,
        }
        write_str(w, t)?;
        w.write_all(b"}}\n\n")
    }
}

impl ChatWire for SseWire {
    fn piece<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header, p: Piece<'_>) -> io::Result<()> {
        self.start(w, h)?;
        match p {
            Piece::Content(t) => self.text(w, Open::Text, t),
            Piece::Reasoning(t) => self.text(w, Open::Thinking, t),
            Piece::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                self.close(w)?;
                let mut block = Vec::with_capacity(64 + id.len() + name.len());
                block.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
                write_str(&mut block, id)?;
                block.extend_from_slice(b",\"name\":");
                write_str(&mut block, name)?;
                block.extend_from_slice(b",\"input\":{}}");
                self.start_block(w, &block)?;
                // The arguments whole in one fragment: no prefix that parses
                // as JSON goes out before the real end.
                self.delta(w, "input_json_delta", "partial_json")?;
                write_str(w, input_value(arguments).get())?;
                w.write_all(b"}}\n\n")?;
                self.stop_block(w)
            }
        }
    }

    fn end<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header, ending: Ending) -> io::Result<()> {
        self.start(w, h)?;
        self.close(w)?;
        match ending {
            Ending::Finish { stop, usage } => {
                #[derive(Serialize)]
                struct Delta {
                    stop_reason: &'static str,
                    stop_sequence: Option<&'static str>,
                }
                #[derive(Serialize)]
                struct MessageDelta {
                    #[serde(rename = "type")]
                    kind: &'static str,
                    delta: Delta,
                    usage: UsageOut,
                }
                let v = MessageDelta {
                    kind: "message_delta",
                    delta: Delta {
                        stop_reason: stop_reason(stop),
                        stop_sequence: None,
                    },
                    usage: usage.map(UsageOut::from).unwrap_or_default(),
                };
                record(w, "message_delta", &v)?;
                w.write_all(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
            }
            Ending::Error { kind, message } => record(w, "error", &error_out(kind, &message)),
        }
    }
}

/// `--to anthropic-sse`: one Messages stream per session.
pub fn sse_sink<W: Write>(w: W, opts: &OutputOptions) -> impl Sink + use<W> {
    WireSink::<W, SseWire>::new(w, turn(opts))
}

// ------------------------------------------------------------ anthropic-json

/// A content block of the whole message.
#[derive(Serialize, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockOut {
    Thinking {
        thinking: String,
        /// Always empty: see the module's comment.
        signature: &'static str,
    },
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Box<RawValue>,
    },
}

/// `--to anthropic-json`: one `Message` per session, written when it ends;
/// its blocks are the ones the SSE form streams.
pub fn json_sink<W: Write>(w: W, opts: &OutputOptions) -> impl Sink + use<W> {
    BodySink::new(w, turn(opts), opts.compact, MessageBody::default())
}

/// The blocks of one `Message`, as the pieces arrive.
#[derive(Clone, Default)]
struct MessageBody {
    blocks: Vec<BlockOut>,
}

impl ChatBody for MessageBody {
    fn piece(&mut self, _h: &Header, p: Piece<'_>) {
        let blocks = &mut self.blocks;
        match (p, blocks.last_mut()) {
            (Piece::Content(t), Some(BlockOut::Text { text })) => text.push_str(t),
            (Piece::Reasoning(t), Some(BlockOut::Thinking { thinking, .. })) => {
                thinking.push_str(t)
            }
            (Piece::Content(t), _) => blocks.push(BlockOut::Text { text: t.to_owned() }),
            (Piece::Reasoning(t), _) => blocks.push(BlockOut::Thinking {
                thinking: t.to_owned(),
                signature: "",
            }),
            (
                Piece::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                },
                _,
            ) => blocks.push(BlockOut::ToolUse {
                id: id.to_owned(),
                name: name.to_owned(),
                input: input_value(arguments),
            }),
        }
    }

    fn end<W: Write>(self, h: &Header, ending: Ending, out: JsonOut<'_, W>) -> io::Result<()> {
        match ending {
            Ending::Error { kind, message } => out.value(&error_out(kind, &message)),
            Ending::Finish { stop, usage } => out.value(&MessageOut {
                id: &h.id,
                kind: "message",
                role: "assistant",
                model: &h.model,
                content: self.blocks,
                stop_reason: Some(stop_reason(stop)),
                stop_sequence: None,
                usage: usage.map(UsageOut::from).unwrap_or_default(),
            }),
        }
    }
}
