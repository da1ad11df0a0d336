//! The Anthropic Messages SSE events Claude Code passes on as `stream_event`
//! lines (`--include-partial-messages`): text and thinking deltas, tool
//! arguments built from `input_json_delta`s, and the message bookkeeping that
//! lets the whole `assistant` lines that follow add only what the deltas lacked.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Block, ClaudeParser, Message, text_out, tool_start};
use crate::dialect::common::{error_text, fill_start_owned};
use crate::dialect::{Channel, Item, Out};
use crate::event::{Event, Json, Kind, Str, json_null};
use crate::json::{LaxInt, LaxStr, Members};
use crate::prefix::Prefix;

/// The `event` of a `stream_event` line (an Anthropic SSE event).
#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(default)]
    index: LaxInt,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content_block: Option<&'a RawValue>,
    #[serde(borrow, default)]
    delta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
    #[serde(borrow, default)]
    partial_json: LaxStr<'a>,
}

/// A content block being streamed (`--include-partial-messages`).
pub(super) struct OpenBlock {
    parent: Option<String>,
    index: i64,
    kind: OpenKind,
}

enum OpenKind {
    Text,
    Thinking,
    Tool {
        id: String,
        name: String,
        /// The arguments' JSON so far (`None` once it grew past the cap:
        /// the whole `assistant` line supplies them instead).
        json: Option<String>,
    },
    Other,
}

/// The message a `message_start` event carries (it names the model).
pub(super) fn start_message(event: &RawValue) -> Option<&RawValue> {
    serde_json::from_str::<StreamEvent>(event.get())
        .ok()?
        .message
}

/// Arguments streamed for one `tool_use` are kept up to this many bytes.
const MAX_TOOL_JSON: usize = 8 * 1024 * 1024;
/// Streamed message ids remembered (their whole lines are recaps).
const STREAMED_RING: usize = 16;

/// A message streamed as deltas: what each of its text and thinking blocks
/// emitted, so that its whole `assistant` lines (which repeat the blocks,
/// before or after the message stops) add only what the deltas lacked.
pub(super) struct StreamedMsg {
    pub(super) id: String,
    blocks: Vec<StreamedBlock>,
}

struct StreamedBlock {
    index: i64,
    thinking: bool,
    emitted: Prefix,
    /// A whole line repeated this block already: it is complete, and deltas
    /// that still come for it were emitted with that line.
    whole: bool,
}

/// Blocks remembered per streamed message.
const MAX_BLOCKS: usize = 64;

impl StreamedMsg {
    fn block(&mut self, index: i64, thinking: bool) -> Option<&mut StreamedBlock> {
        if let Some(i) = self.blocks.iter().position(|b| b.index == index) {
            return Some(&mut self.blocks[i]);
        }
        if self.blocks.len() >= MAX_BLOCKS {
            return None;
        }
        self.blocks.push(StreamedBlock {
            index,
            thinking,
            emitted: Prefix::default(),
            whole: false,
        });
        self.blocks.last_mut()
    }
}

impl ClaudeParser {
    /// A text or thinking block of a whole `assistant` line of streamed
    /// message `si`: it repeats the first block of its kind that no whole
    /// line repeated yet (whatever came between: the message's end, tool
    /// calls, other messages), and adds only what that block's deltas lacked.
    /// A block whose deltas never came (lost, or still to come) is emitted
    /// whole, and its deltas, if they come after all, are not.
    pub(super) fn whole_block<'a>(
        &mut self,
        si: usize,
        channel: Channel,
        text: Str<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let thinking = matches!(channel, Channel::Thinking);
        let m = &mut self.streamed[si];
        let found = m
            .blocks
            .iter_mut()
            .filter(|b| b.thinking == thinking && !b.whole)
            .min_by_key(|b| b.index);
        if let Some(b) = found {
            b.whole = true;
            let known = b
                .emitted
                .tail_of(&text)
                .map_or(text.len(), |tail| text.len() - tail.len());
            return out(Item::BlockRecap {
                ts,
                channel,
                text,
                known,
            });
        }
        if m.blocks.len() < MAX_BLOCKS {
            // Its stream, if it comes later, belongs to this block.
            m.blocks.push(StreamedBlock {
                index: -1,
                thinking,
                emitted: Prefix::default(),
                whole: true,
            });
        }
        match channel {
            Channel::Text => text_out(text, None, false, ts, out),
            Channel::Thinking => {
                out(Item::Event(Event::at(ts, Kind::ThinkingDelta { text })))?;
                out(Item::Event(Event::at(
                    ts,
                    Kind::ThinkingCompleted { duration_ms: None },
                )))
            }
        }
    }

    /// Record a delta of block `index` (of the main agent's message when
    /// `main`); false when a whole line already gave the block's text.
    fn streamed_delta(&mut self, main: bool, index: i64, thinking: bool, text: &str) -> bool {
        if !main {
            return true;
        }
        match self.main_block(index, thinking) {
            Some(b) if b.whole => false,
            Some(b) => {
                b.emitted.push(text);
                true
            }
            None => true,
        }
    }

    /// The streamed block `index` of the main agent's message in progress
    /// (a block that a whole line announced before its stream takes this
    /// index).
    fn main_block(&mut self, index: i64, thinking: bool) -> Option<&mut StreamedBlock> {
        let id = self
            .stream_msg
            .iter()
            .find(|(p, _)| p.is_none())
            .map(|(_, id)| id.as_str())?;
        let m = self.streamed.iter_mut().find(|m| m.id == id)?;
        if !m.blocks.iter().any(|b| b.index == index)
            && let Some(b) = m
                .blocks
                .iter_mut()
                .find(|b| b.index < 0 && b.thinking == thinking)
        {
            b.index = index;
        }
        m.block(index, thinking)
    }

    /// One `stream_event`; false when its event is not one Claude Code sends.
    pub(super) fn stream_event<'a>(
        &mut self,
        event: &'a RawValue,
        parent: Option<Cow<'a, str>>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<bool> {
        let Ok(se) = serde_json::from_str::<StreamEvent>(event.get()) else {
            return Ok(false);
        };
        let parent_s: Option<String> = parent.as_deref().map(str::to_owned);
        let index = se.index.0.unwrap_or(0);
        let msg_id = |s: &Self| {
            s.stream_msg
                .iter()
                .find(|(p, _)| *p == parent_s)
                .map(|(_, id)| id.clone())
        };
        match se.ty.as_deref() {
            Some("message_start") => {
                let m = se
                    .message
                    .and_then(|m| serde_json::from_str::<Message>(m.get()).ok());
                let id = m
                    .as_ref()
                    .and_then(|m| m.id.as_deref())
                    .unwrap_or("")
                    .to_owned();
                self.stream_msg.retain(|(p, _)| *p != parent_s);
                self.stream_msg.push((parent_s.clone(), id.clone()));
                self.blocks.retain(|b| b.parent != parent_s);
                if self.streamed.len() >= STREAMED_RING {
                    self.streamed.remove(0);
                }
                self.streamed.push(StreamedMsg {
                    id: id.clone(),
                    blocks: Vec::new(),
                });
                if parent_s.is_none() {
                    self.enter_message(Some(&id), ts, out)?;
                }
                let sub = parent_s.is_some();
                self.usage_snapshot(&id, m.and_then(|m| m.usage), false, sub, ts, out)?;
            }
            Some("content_block_start") => {
                let b = se
                    .content_block
                    .and_then(|b| serde_json::from_str::<Block>(b.get()).ok());
                let kind = match b.as_ref().and_then(|b| b.ty.as_deref()) {
                    Some("text") => OpenKind::Text,
                    Some("thinking") => OpenKind::Thinking,
                    Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
                        let b = b.as_ref().expect("matched a type");
                        OpenKind::Tool {
                            id: b.id.as_deref().unwrap_or("").to_owned(),
                            name: b.name.as_deref().unwrap_or("").to_owned(),
                            json: Some(String::new()),
                        }
                    }
                    _ => OpenKind::Other,
                };
                // A block that starts with text already (rare) emits it.
                if let Some(b) = &b {
                    match kind {
                        OpenKind::Text => {
                            if let Some(t) = b.text.as_deref().filter(|t| !t.is_empty())
                                && self.streamed_delta(parent_s.is_none(), index, false, t)
                            {
                                text_out(
                                    Cow::Owned(t.to_owned()),
                                    parent.as_deref(),
                                    false,
                                    ts,
                                    out,
                                )?;
                            }
                        }
                        OpenKind::Thinking if parent.is_none() => {
                            if let Some(t) = b.thinking.as_deref().filter(|t| !t.is_empty())
                                && self.streamed_delta(true, index, true, t)
                            {
                                out(Item::Event(Event::at(
                                    ts,
                                    Kind::ThinkingDelta {
                                        text: Cow::Owned(t.to_owned()),
                                    },
                                )))?;
                            }
                        }
                        _ => {}
                    }
                }
                self.blocks
                    .retain(|b| !(b.parent == parent_s && b.index == index));
                if self.blocks.len() >= 64 {
                    self.blocks.remove(0);
                }
                self.blocks.push(OpenBlock {
                    parent: parent_s,
                    index,
                    kind,
                });
            }
            Some("content_block_delta") => {
                let Some(d) = se
                    .delta
                    .and_then(|d| serde_json::from_str::<Delta>(d.get()).ok())
                else {
                    return Ok(true);
                };
                match d.ty.as_deref() {
                    Some("text_delta") => {
                        let text = d.text.get().unwrap_or_default();
                        if self.streamed_delta(parent_s.is_none(), index, false, &text) {
                            text_out(text, parent.as_deref(), false, ts, out)?;
                        }
                    }
                    Some("thinking_delta") if parent.is_none() => {
                        let text = d.thinking.get().unwrap_or_default();
                        if self.streamed_delta(true, index, true, &text) {
                            out(Item::Event(Event::at(ts, Kind::ThinkingDelta { text })))?;
                        }
                    }
                    Some("input_json_delta") => {
                        let piece = d.partial_json.as_deref().unwrap_or("");
                        if let Some(OpenBlock {
                            kind: OpenKind::Tool { json, .. },
                            ..
                        }) = self
                            .blocks
                            .iter_mut()
                            .find(|b| b.parent == parent_s && b.index == index)
                            && let Some(j) = json
                        {
                            if j.len() + piece.len() > MAX_TOOL_JSON {
                                *json = None;
                            } else {
                                j.push_str(piece);
                            }
                        }
                    }
                    // signature_delta, citations_delta: nothing to show.
                    _ => {}
                }
            }
            Some("content_block_stop") => {
                let Some(i) = self
                    .blocks
                    .iter()
                    .position(|b| b.parent == parent_s && b.index == index)
                else {
                    return Ok(true);
                };
                let block = self.blocks.remove(i);
                match block.kind {
                    OpenKind::Thinking if parent.is_none() => {
                        out(Item::Event(Event::at(
                            ts,
                            Kind::ThinkingCompleted { duration_ms: None },
                        )))?;
                    }
                    OpenKind::Tool {
                        id,
                        name,
                        json: Some(json),
                    } if !self.started(&id) => {
                        let json = if json.trim().is_empty() {
                            "{}".to_owned()
                        } else {
                            json
                        };
                        // Unparseable arguments wait for the whole line.
                        if let Ok(args) = RawValue::from_string(json) {
                            let mut start = tool_start(Cow::Owned(id), &name, json_null());
                            if let Some(m) = Members::of(&args) {
                                fill_start_owned(&mut start, &m);
                            }
                            start.args = Json::from(args);
                            self.remember_call(&start.call_id, &start.tool_name);
                            out(Item::Event(Event::at(ts, Kind::started(start))))?;
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(id) = msg_id(self) {
                    let sub = parent_s.is_some();
                    self.usage_snapshot(&id, se.usage, true, sub, ts, out)?;
                }
            }
            Some("message_stop") => {
                if let Some(id) = msg_id(self)
                    && parent_s.is_none()
                    && self.open_msg.as_deref() == Some(&id)
                {
                    self.end_message(ts, out)?;
                }
            }
            Some("ping") => {}
            Some("error") => {
                let message = se
                    .error
                    .and_then(error_text)
                    .unwrap_or(Cow::Borrowed("stream error"));
                out(Item::Event(Event::at(
                    ts,
                    Kind::Error {
                        message,
                        fatal: false,
                        source: Some(Cow::Borrowed("api")),
                    },
                )))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
