//! `--to openai-responses` and `--to openai-responses-json`: the OpenAI
//! Responses API (docs/formats.md#openai-responses), on the chat core
//! ([`super::Turn`]).
//!
//! A session is one response. Its pieces become output items, one after
//! another: a run of reasoning is one `reasoning` item (its text a summary
//! part), a run of content one `message` item with one `output_text` part, a
//! forwarded call one `function_call` item. An item closes when a piece of
//! another kind arrives, so the answer is one message item however many
//! paragraphs it has, and items never interleave.
//!
//! What the official client checks, and so what this writes: every event has
//! a `sequence_number` counting from 0, `response.created` comes first,
//! every item is announced (`output_item.added`) before its content events
//! and finished (`output_item.done`, same id) before the response is, output
//! indexes are distinct, text deltas carry `logprobs`, usage has every detail
//! field, and the stream ends with `response.completed` (or, for a failed or
//! cut-off session, an `error` event and then `response.failed`). The `done` events and
//! the final response repeat the whole text, so the SSE sink holds one
//! session's output (what `openai-json` holds too).

use std::io::{self, Write};

use serde::Serialize;

use super::{
    BodySink, ChatBody, ChatOptions, ChatWire, Ending, Failure, Header, JsonOut, Piece, Turn,
    WireSink,
};
use crate::event::Usage;
use crate::json::write_str;
use crate::output::{OutputOptions, Sink};

fn turn(opts: &OutputOptions) -> Turn {
    Turn::new(ChatOptions {
        blocks: true,
        ..ChatOptions::from_output(opts, "resp_")
    })
}

// ------------------------------------------------------------ wire values

/// What an output item is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Reasoning,
    Message,
    Call,
}

/// One output item as it grows.
#[derive(Clone)]
struct ItemState {
    kind: ItemKind,
    id: String,
    /// The summary text, the message text, or the call's arguments.
    text: String,
    call_id: String,
    name: String,
}

#[derive(Serialize)]
struct Part<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<[(); 0]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    logprobs: Option<[(); 0]>,
}

impl<'a> Part<'a> {
    fn summary(text: &'a str) -> Self {
        Part {
            kind: "summary_text",
            text,
            annotations: None,
            logprobs: None,
        }
    }

    fn output_text(text: &'a str) -> Self {
        Part {
            kind: "output_text",
            text,
            annotations: Some([]),
            logprobs: Some([]),
        }
    }
}

/// An output item as the wire spells it: announced (`done: false`, empty)
/// or finished.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ItemOut<'a> {
    Reasoning {
        id: &'a str,
        summary: Vec<Part<'a>>,
    },
    Message {
        id: &'a str,
        role: &'static str,
        status: &'static str,
        content: Vec<Part<'a>>,
    },
    FunctionCall {
        id: &'a str,
        status: &'static str,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
}

impl ItemState {
    fn out<'a>(&'a self, done: bool) -> ItemOut<'a> {
        let status = if done { "completed" } else { "in_progress" };
        // An announced item is empty; a finished one holds its text as one part.
        let parts = |part: Part<'a>| {
            if done { vec![part] } else { Vec::new() }
        };
        match self.kind {
            ItemKind::Reasoning => ItemOut::Reasoning {
                id: &self.id,
                summary: parts(Part::summary(&self.text)),
            },
            ItemKind::Message => ItemOut::Message {
                id: &self.id,
                role: "assistant",
                status,
                content: parts(Part::output_text(&self.text)),
            },
            ItemKind::Call => ItemOut::FunctionCall {
                id: &self.id,
                status,
                call_id: &self.call_id,
                name: &self.name,
                arguments: if done { &self.text } else { "" },
            },
        }
    }
}

/// `usage`: `input_tokens` includes the cache reads and writes, as the
/// normalized input does; the details the client's models require are
/// always present (`reasoning_tokens` is 0 when the agent does not count
/// the reasoning apart: the client's model requires the field).
#[derive(Serialize)]
struct UsageOut {
    input_tokens: u64,
    input_tokens_details: InputDetails,
    output_tokens: u64,
    output_tokens_details: OutputDetails,
    total_tokens: u64,
}

#[derive(Serialize)]
struct InputDetails {
    cached_tokens: u64,
    cache_write_tokens: u64,
}

#[derive(Serialize)]
struct OutputDetails {
    reasoning_tokens: u64,
}

impl From<Usage> for UsageOut {
    fn from(u: Usage) -> Self {
        UsageOut {
            input_tokens: u.input,
            input_tokens_details: InputDetails {
                cached_tokens: u.cache_read.unwrap_or(0),
                cache_write_tokens: u.cache_write.unwrap_or(0),
            },
            output_tokens: u.output,
            output_tokens_details: OutputDetails {
                reasoning_tokens: u.reasoning.unwrap_or(0),
            },
            total_tokens: u.input.saturating_add(u.output),
        }
    }
}

/// `response.error`: the code is the API's generic one (its list has no
/// better fit); `type` says which failure it was, as in the other formats.
#[derive(Serialize)]
struct ErrorOut<'a> {
    code: &'static str,
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

fn error_type(kind: Failure) -> &'static str {
    match kind {
        Failure::Agent => "agent_error",
        Failure::Incomplete => "incomplete_stream",
    }
}

/// The response object.
#[derive(Serialize)]
struct ResponseOut<'a> {
    id: &'a str,
    object: &'static str,
    created_at: i64,
    status: &'static str,
    model: &'a str,
    output: Vec<ItemOut<'a>>,
    parallel_tool_calls: bool,
    tool_choice: &'static str,
    tools: [(); 0],
    error: Option<ErrorOut<'a>>,
    incomplete_details: Option<()>,
    usage: Option<UsageOut>,
}

/// The items of one response, as they grow.
#[derive(Default, Clone)]
struct Items {
    items: Vec<ItemState>,
    /// The last item is still open.
    open: bool,
}

impl Items {
    /// The open item of `kind`, if the last item is one.
    fn open_of(&self, kind: ItemKind) -> bool {
        self.open && self.items.last().is_some_and(|i| i.kind == kind)
    }

    /// A new item, open; `rid` is the response id, so item ids are
    /// stable across runs and distinct across sessions.
    fn push(&mut self, kind: ItemKind, rid: &str) -> &mut ItemState {
        let prefix = match kind {
            ItemKind::Reasoning => "rs",
            ItemKind::Message => "msg",
            ItemKind::Call => "fc",
        };
        let n = self.items.len();
        let base = rid.strip_prefix("resp_").unwrap_or(rid);
        self.items.push(ItemState {
            kind,
            id: format!("{prefix}_{base}_{n}"),
            text: String::new(),
            call_id: String::new(),
            name: String::new(),
        });
        self.open = true;
        self.items.last_mut().expect("just pushed")
    }

    fn response<'a>(&'a self, h: &'a Header, ending: &'a Ending) -> ResponseOut<'a> {
        let (status, error, usage) = match ending {
            Ending::Finish { usage, .. } => ("completed", None, usage.map(UsageOut::from)),
            Ending::Error { kind, message } => (
                "failed",
                Some(ErrorOut {
                    code: "server_error",
                    message,
                    kind: error_type(*kind),
                }),
                None,
            ),
        };
        ResponseOut {
            id: &h.id,
            object: "response",
            created_at: h.created,
            status,
            model: &h.model,
            output: self.items.iter().map(|i| i.out(true)).collect(),
            parallel_tool_calls: true,
            tool_choice: "auto",
            tools: [],
            error,
            incomplete_details: None,
            usage,
        }
    }
}

/// The response while it runs (`response.created`, `response.in_progress`).
fn running<'a>(h: &'a Header) -> ResponseOut<'a> {
    ResponseOut {
        id: &h.id,
        object: "response",
        created_at: h.created,
        status: "in_progress",
        model: &h.model,
        output: Vec::new(),
        parallel_tool_calls: true,
        tool_choice: "auto",
        tools: [],
        error: None,
        incomplete_details: None,
        usage: None,
    }
}

// ------------------------------------------------------------ openai-responses

/// Per-session wire state of the SSE sink.
#[derive(Default)]
struct SseWire {
    started: bool,
    seq: u64,
    items: Items,
}

/// An event: `type`, `sequence_number`, then the body's fields.
#[derive(Serialize)]
struct Ev<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    sequence_number: u64,
    #[serde(flatten)]
    body: T,
}

/// One record: `event: <name>`, then the data with `type` and the next
/// `sequence_number` first.
fn record<W: Write + ?Sized, T: Serialize>(
    w: &mut W,
    seq: &mut u64,
    name: &str,
    body: T,
) -> io::Result<()> {
    w.write_all(b"event: ")?;
    w.write_all(name.as_bytes())?;
    w.write_all(b"\ndata: ")?;
    let ev = Ev {
        kind: name,
        sequence_number: *seq,
        body,
    };
    *seq += 1;
    serde_json::to_writer(&mut *w, &ev)?;
    w.write_all(b"\n\n")
}

#[derive(Serialize)]
struct ItemBody<'a> {
    output_index: usize,
    item: ItemOut<'a>,
}

#[derive(Serialize)]
struct ResponseBody<'a> {
    response: ResponseOut<'a>,
}

/// A part event's place: a message's content part or a reasoning summary part.
#[derive(Serialize)]
struct PartEvent<'a> {
    item_id: &'a str,
    output_index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary_index: Option<usize>,
    part: Part<'a>,
}

#[derive(Serialize)]
struct TextDone<'a> {
    item_id: &'a str,
    output_index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary_index: Option<usize>,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    logprobs: Option<[(); 0]>,
}

/// The stream's `error` event: the flat shape the API documents (no nested
/// `error` key: openai-python raises on one before yielding the event).
#[derive(Serialize)]
struct StreamError<'a> {
    code: &'static str,
    message: &'a str,
    param: Option<&'a str>,
}

#[derive(Serialize)]
struct ArgsDone<'a> {
    item_id: &'a str,
    output_index: usize,
    arguments: &'a str,
}

impl SseWire {
    /// `response.created` and `response.in_progress`, before anything else.
    fn start<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let body = || ResponseBody {
            response: running(h),
        };
        record(w, &mut self.seq, "response.created", body())?;
        record(w, &mut self.seq, "response.in_progress", body())
    }

    /// Finish the open item: its `done` events, then `output_item.done`.
    fn close<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        if !self.items.open {
            return Ok(());
        }
        self.items.open = false;
        let output_index = self.items.items.len() - 1;
        let item = &self.items.items[output_index];
        let seq = &mut self.seq;
        let item_id = item.id.as_str();
        let text = item.text.as_str();
        // A text item's text is done, then its one part; a call's arguments.
        let text_item = match item.kind {
            ItemKind::Reasoning => Some((
                (None, Some(0)),
                None,
                "response.reasoning_summary_text.done",
                Part::summary(text),
                "response.reasoning_summary_part.done",
            )),
            ItemKind::Message => Some((
                (Some(0), None),
                Some([]),
                "response.output_text.done",
                Part::output_text(text),
                "response.content_part.done",
            )),
            ItemKind::Call => {
                let done = ArgsDone {
                    item_id,
                    output_index,
                    arguments: text,
                };
                record(w, seq, "response.function_call_arguments.done", done)?;
                None
            }
        };
        if let Some(((content_index, summary_index), logprobs, text_done, part, part_done)) =
            text_item
        {
            let done = TextDone {
                item_id,
                output_index,
                content_index,
                summary_index,
                text,
                logprobs,
            };
            record(w, seq, text_done, done)?;
            let done = PartEvent {
                item_id,
                output_index,
                content_index,
                summary_index,
                part,
            };
            record(w, seq, part_done, done)?;
        }
        let done = ItemBody {
            output_index,
            item: item.out(true),
        };
        record(w, seq, "response.output_item.done", done)
    }

    /// Open a new item: `output_item.added`, and for text its empty part.
    fn open<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header, kind: ItemKind) -> io::Result<()> {
        self.close(w)?;
        let output_index = self.items.items.len();
        let item = self.items.push(kind, &h.id);
        let seq = &mut self.seq;
        let added = ItemBody {
            output_index,
            item: item.out(false),
        };
        record(w, seq, "response.output_item.added", added)?;
        let item_id = item.id.as_str();
        let (name, content_index, summary_index, part) = match kind {
            ItemKind::Reasoning => (
                "response.reasoning_summary_part.added",
                None,
                Some(0),
                Part::summary(""),
            ),
            ItemKind::Message => (
                "response.content_part.added",
                Some(0),
                None,
                Part::output_text(""),
            ),
            ItemKind::Call => return Ok(()),
        };
        let added = PartEvent {
            item_id,
            output_index,
            content_index,
            summary_index,
            part,
        };
        record(w, seq, name, added)
    }

    /// `event: <name>\ndata: {"type":<name>,"sequence_number":N,"item_id":…,
    /// "output_index":…,` for the open item — the rest of a delta follows.
    fn delta_head<W: Write + ?Sized>(&mut self, w: &mut W, name: &str) -> io::Result<()> {
        let item = self.items.items.last().expect("an open item");
        write!(
            w,
            "event: {name}\ndata: {{\"type\":\"{name}\",\"sequence_number\":{},\"item_id\":",
            self.seq
        )?;
        self.seq += 1;
        write_str(w, &item.id)?;
        write!(w, ",\"output_index\":{},", self.items.items.len() - 1)
    }

    /// A delta of the open item (opened first if it is not of `kind`).
    fn delta<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        h: &Header,
        kind: ItemKind,
        t: &str,
    ) -> io::Result<()> {
        if !self.items.open_of(kind) {
            self.open(w, h, kind)?;
        }
        match kind {
            ItemKind::Reasoning => {
                self.delta_head(w, "response.reasoning_summary_text.delta")?;
                w.write_all(b"\"summary_index\":0,\"delta\":")?;
                write_str(w, t)?;
                w.write_all(b"}\n\n")?;
            }
            ItemKind::Message => {
                self.delta_head(w, "response.output_text.delta")?;
                w.write_all(b"\"content_index\":0,\"delta\":")?;
                write_str(w, t)?;
                w.write_all(b",\"logprobs\":[]}\n\n")?;
            }
            ItemKind::Call => {
                self.delta_head(w, "response.function_call_arguments.delta")?;
                w.write_all(b"\"delta\":")?;
                write_str(w, t)?;
                w.write_all(b"}\n\n")?;
            }
        }
        let item = self.items.items.last_mut().expect("an open item");
        item.text.push_str(t);
        Ok(())
    }

    /// `output_item.added` for the call item just pushed.
    fn open_call<W: Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        let output_index = self.items.items.len() - 1;
        let added = ItemBody {
            output_index,
            item: self.items.items[output_index].out(false),
        };
        record(w, &mut self.seq, "response.output_item.added", added)
    }
}

impl ChatWire for SseWire {
    fn piece<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header, p: Piece<'_>) -> io::Result<()> {
        self.start(w, h)?;
        match p {
            Piece::Content(t) => self.delta(w, h, ItemKind::Message, t),
            Piece::Reasoning(t) => self.delta(w, h, ItemKind::Reasoning, t),
            Piece::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                // The call's identity is in the announced item; then the
                // arguments whole in one delta, so no prefix that parses as
                // JSON goes out before the real end.
                self.close(w)?;
                let item = self.items.push(ItemKind::Call, &h.id);
                item.call_id = id.to_owned();
                item.name = name.to_owned();
                self.open_call(w)?;
                self.delta(w, h, ItemKind::Call, arguments)?;
                self.close(w)
            }
        }
    }

    fn end<W: Write + ?Sized>(&mut self, w: &mut W, h: &Header, ending: Ending) -> io::Result<()> {
        self.start(w, h)?;
        self.close(w)?;
        let name = match &ending {
            Ending::Finish { .. } => "response.completed",
            Ending::Error { message, .. } => {
                // The stream's own `error` event first, then the response's
                // terminal state: a client that stops at `error` has its
                // message, one that reads the lifecycle still gets
                // `response.failed` with the output so far, and the AI SDK
                // (which reports an error for each unless `error` came
                // first) reports the failure once.
                let ev = StreamError {
                    code: "server_error",
                    message,
                    param: None,
                };
                record(w, &mut self.seq, "error", ev)?;
                "response.failed"
            }
        };
        let items = std::mem::take(&mut self.items);
        let body = ResponseBody {
            response: items.response(h, &ending),
        };
        record(w, &mut self.seq, name, body)
    }
}

/// `--to openai-responses`: one Responses event stream per session.
pub fn sse_sink<W: Write>(w: W, opts: &OutputOptions) -> impl Sink + use<W> {
    WireSink::<W, SseWire>::new(w, turn(opts))
}

// ------------------------------------------------------------ openai-responses-json

/// `--to openai-responses-json`: the response object per session, written
/// when it ends; the same object `response.completed` (or
/// `response.failed`) carries in the stream.
pub fn json_sink<W: Write>(w: W, opts: &OutputOptions) -> impl Sink + use<W> {
    BodySink::new(w, turn(opts), opts.compact, Items::default())
}

impl ChatBody for Items {
    fn piece(&mut self, h: &Header, p: Piece<'_>) {
        let (kind, text) = match p {
            Piece::Content(t) => (ItemKind::Message, t),
            Piece::Reasoning(t) => (ItemKind::Reasoning, t),
            Piece::ToolCall {
                id,
                name,
                arguments,
                ..
            } => {
                let item = self.push(ItemKind::Call, &h.id);
                item.call_id = id.to_owned();
                item.name = name.to_owned();
                item.text = arguments.to_owned();
                self.open = false;
                return;
            }
        };
        if !self.open_of(kind) {
            self.push(kind, &h.id);
        }
        let item = self.items.last_mut().expect("an open item");
        item.text.push_str(text);
    }

    fn end<W: Write>(self, h: &Header, ending: Ending, out: JsonOut<'_, W>) -> io::Result<()> {
        out.value(&self.response(h, &ending))
    }
}
