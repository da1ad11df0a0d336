//! cstream's own `--to events` output, read back (`--from events`).
//!
//! The event model is lossless for everything the outputs use, so reading
//! events and writing any format gives the same bytes as converting the
//! original stream directly. Sessions are delimited by `session_started`, or
//! by a change of `sessionId` (a stream cut at its head, or written by an
//! older cstream for a session that had no init event). A `session_started`
//! with `"dedupe":false` says its session was written with `--no-dedupe`:
//! its events are passed on as they are, not deduped a second time.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Item, Out, Parser, Probe};
use crate::event::{
    Choice, Event, Json, Kind, OutStream, Question, SessionResult, SessionStart, SummaryPhase,
    Text, Todo, ToolDetails, ToolEnd, ToolStart, Usage, json_null,
};
use crate::input::Parsed;
use crate::json::S;

/// True when `ty` is a `type` cstream's events format uses.
pub fn is_event_type(ty: &str) -> bool {
    crate::event::TYPE_NAMES.contains(&ty)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageObj {
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    #[serde(rename = "cacheWrite1hTokens")]
    cache_write_1h_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    #[serde(default)]
    output_incomplete: bool,
}

impl From<&UsageObj> for Usage {
    fn from(u: &UsageObj) -> Usage {
        Usage {
            input: u.input_tokens,
            output: u.output_tokens,
            cache_read: u.cache_read_tokens,
            cache_write: u.cache_write_tokens,
            cache_write_1h: u.cache_write_1h_tokens,
            reasoning: u.reasoning_tokens,
            output_incomplete: u.output_incomplete,
        }
    }
}

/// One events line: the union of every event's fields.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    ty: S<'a>,
    #[serde(borrow)]
    session_id: S<'a>,
    ts: Option<i64>,
    #[serde(borrow)]
    dialect: Option<S<'a>>,
    #[serde(borrow)]
    model: Option<S<'a>>,
    #[serde(borrow)]
    cwd: Option<S<'a>>,
    #[serde(borrow)]
    permission_mode: Option<S<'a>>,
    #[serde(borrow)]
    parent_session_id: Option<S<'a>>,
    #[serde(borrow)]
    parent_call_id: Option<S<'a>>,
    #[serde(borrow)]
    forked_from: Option<S<'a>>,
    /// `session_started`: `false` when the session was written with
    /// `--no-dedupe` (absent in older streams, and when deduped).
    dedupe: Option<bool>,
    #[serde(borrow)]
    text: Option<S<'a>>,
    duration_ms: Option<u64>,
    #[serde(borrow)]
    call_id: Option<S<'a>>,
    #[serde(borrow)]
    tool_name: Option<S<'a>>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
    #[serde(borrow)]
    command: Option<S<'a>>,
    #[serde(borrow)]
    path: Option<S<'a>>,
    #[serde(borrow)]
    pattern: Option<S<'a>>,
    #[serde(borrow)]
    url: Option<S<'a>>,
    #[serde(borrow)]
    query: Option<S<'a>>,
    #[serde(borrow)]
    description: Option<S<'a>>,
    #[serde(borrow)]
    mcp_server: Option<S<'a>>,
    #[serde(borrow)]
    mcp_tool: Option<S<'a>>,
    #[serde(borrow)]
    old_string: Option<S<'a>>,
    #[serde(borrow)]
    new_string: Option<S<'a>>,
    #[serde(borrow)]
    file_content: Option<S<'a>>,
    #[serde(borrow)]
    new_path: Option<S<'a>>,
    #[serde(borrow)]
    plan: Option<S<'a>>,
    #[serde(borrow)]
    title: Option<S<'a>>,
    #[serde(borrow)]
    overview: Option<S<'a>>,
    #[serde(borrow)]
    todos: Option<Vec<TodoLine<'a>>>,
    #[serde(borrow)]
    questions: Option<Vec<QuestionLine<'a>>>,
    #[serde(borrow, default, deserialize_with = "present")]
    partial: Option<&'a RawValue>,
    #[serde(borrow)]
    stream: Option<S<'a>>,
    ok: Option<bool>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    exit_code: Option<i64>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    #[serde(borrow)]
    patch: Option<S<'a>>,
    lines_added: Option<u64>,
    lines_removed: Option<u64>,
    #[serde(borrow)]
    error: Option<S<'a>>,
    cancelled: Option<bool>,
    outcome_unknown: Option<bool>,
    delta_input: Option<u64>,
    delta_output: Option<u64>,
    delta_cache_read: Option<u64>,
    delta_cache_write: Option<u64>,
    #[serde(rename = "deltaCacheWrite1h")]
    delta_cache_write_1h: Option<u64>,
    delta_reasoning: Option<u64>,
    #[serde(borrow)]
    phase: Option<S<'a>>,
    #[serde(borrow)]
    what: Option<S<'a>>,
    output_incomplete: Option<bool>,
    usage: Option<UsageObj>,
    cost_usd: Option<f64>,
    #[serde(borrow)]
    message: Option<S<'a>>,
    fatal: Option<bool>,
    #[serde(borrow)]
    source: Option<S<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    raw: Option<&'a RawValue>,
}

/// A `todos` entry of `tool_call_started`.
#[derive(Deserialize)]
struct TodoLine<'a> {
    #[serde(borrow)]
    id: Option<S<'a>>,
    #[serde(borrow)]
    content: S<'a>,
    #[serde(borrow)]
    status: S<'a>,
}

/// A `questions` entry of `tool_call_started`.
#[derive(Deserialize)]
struct QuestionLine<'a> {
    #[serde(borrow)]
    id: Option<S<'a>>,
    #[serde(borrow)]
    text: S<'a>,
    #[serde(borrow)]
    options: Vec<ChoiceLine<'a>>,
}

#[derive(Deserialize)]
struct ChoiceLine<'a> {
    #[serde(borrow)]
    id: Option<S<'a>>,
    #[serde(borrow)]
    label: S<'a>,
}

/// A payload that may itself be JSON `null` (an `unknown` event whose input
/// line was `null`): present-but-null must stay `Some("null")`, which a plain
/// `Option` would turn into `None`. A missing field is `None` (`default`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Detection: a `type` of cstream's events beside the `sessionId` every
/// event carries.
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    p.session_id_camel.is_some() && is_event_type(p.ty())
}

/// Reads cstream events.
#[derive(Default)]
pub struct EventsParser {
    /// The `sessionId` of the session being read.
    current: Option<String>,
}

fn s(o: Option<S<'_>>) -> Option<Cow<'_, str>> {
    o.map(|s| s.0)
}

impl Parser for EventsParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let l: Line<'a> = match super::read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let Some(kind) = kind(&l) else {
            return super::keep_unknown(rec, out);
        };
        let sid = l.session_id.0;
        if let Kind::SessionStarted(_) = kind {
            self.current = Some(sid.to_string());
            if l.dedupe == Some(false) {
                out(Item::Verbatim)?;
            }
        } else if self.current.as_deref() != Some(&sid) {
            self.current = Some(sid.to_string());
            out(Item::Resume {
                session_id: sid.clone(),
            })?;
        }
        let kind = match kind {
            Kind::SessionStarted(mut st) => {
                st.session_id = Some(sid);
                Kind::SessionStarted(st)
            }
            k => k,
        };
        out(Item::Event(Event::at(l.ts, kind)))?;
        Ok(Parsed::Done)
    }
}

fn tool_start<'a>(l: &Line<'a>) -> Option<ToolStart<'a>> {
    let mut t = ToolStart::new(
        l.call_id.clone()?.0,
        l.tool_name.clone()?.0,
        l.args.map_or_else(json_null, Json::from),
    );
    t.command = s(l.command.clone());
    t.cwd = s(l.cwd.clone());
    t.path = s(l.path.clone());
    t.pattern = s(l.pattern.clone());
    t.url = s(l.url.clone());
    t.query = s(l.query.clone());
    t.description = s(l.description.clone());
    t.mcp_server = s(l.mcp_server.clone());
    t.mcp_tool = s(l.mcp_tool.clone());
    let d = ToolDetails {
        old_string: s(l.old_string.clone()),
        new_string: s(l.new_string.clone()),
        file_content: s(l.file_content.clone()),
        new_path: s(l.new_path.clone()),
        plan: s(l.plan.clone()),
        title: s(l.title.clone()),
        overview: s(l.overview.clone()),
        todos: l.todos.as_ref().map(|v| {
            v.iter()
                .map(|t| Todo {
                    id: s(t.id.clone()),
                    content: t.content.0.clone(),
                    status: t.status.0.clone(),
                })
                .collect()
        }),
        questions: l.questions.as_ref().map(|v| {
            v.iter()
                .map(|q| Question {
                    id: s(q.id.clone()),
                    text: q.text.0.clone(),
                    options: q
                        .options
                        .iter()
                        .map(|c| Choice {
                            id: s(c.id.clone()),
                            label: c.label.0.clone(),
                        })
                        .collect(),
                })
                .collect()
        }),
    };
    if !d.is_empty() {
        t.details = Some(Box::new(d));
    }
    Some(t)
}

fn tool_end<'a>(l: &Line<'a>) -> Option<ToolEnd<'a>> {
    let mut t = ToolEnd::new(l.call_id.clone()?.0, l.tool_name.clone()?.0, l.ok?);
    t.result = l.result.filter(|r| r.get() != "null").map(Json::from);
    t.duration_ms = l.duration_ms;
    t.exit_code = l.exit_code;
    // Kept as the literal it is: written out again as one copy.
    t.output = match l.output {
        Some(o) if o.get().starts_with('"') => Some(Text::literal(o.get())),
        Some(_) => return None,
        None => None,
    };
    t.patch = s(l.patch.clone());
    t.lines_added = l.lines_added;
    t.lines_removed = l.lines_removed;
    t.error = s(l.error.clone());
    t.cancelled = l.cancelled.unwrap_or(false);
    t.outcome_unknown = l.outcome_unknown.unwrap_or(false);
    Some(t)
}

/// The event a line describes, or `None` when its fields do not fit its type.
fn kind<'a>(l: &Line<'a>) -> Option<Kind<'a>> {
    let text = || s(l.text.clone());
    let usage = || l.usage.as_ref().map(Usage::from);
    Some(match l.ty.0.as_ref() {
        "session_started" => Kind::SessionStarted(SessionStart {
            session_id: None,
            dialect: s(l.dialect.clone())?,
            model: s(l.model.clone()),
            cwd: s(l.cwd.clone()),
            permission_mode: s(l.permission_mode.clone()),
            title: s(l.title.clone()),
            parent: match (s(l.parent_session_id.clone()), s(l.forked_from.clone())) {
                (Some(p), _) => Some(crate::event::SessionParent::subagent(
                    p,
                    s(l.parent_call_id.clone()),
                )),
                (None, Some(f)) => Some(crate::event::SessionParent::fork(f)),
                (None, None) => None,
            },
        }),
        "user_message" => Kind::UserMessage { text: text()? },
        "thinking_delta" => Kind::ThinkingDelta { text: text()? },
        "thinking_completed" => Kind::ThinkingCompleted {
            duration_ms: l.duration_ms,
        },
        "text_delta" => Kind::TextDelta { text: text()? },
        "assistant_message" => Kind::AssistantMessage { text: text()? },
        "thinking" => Kind::Thinking {
            text: text()?,
            duration_ms: l.duration_ms,
        },
        "tool_call_started" => Kind::started(tool_start(l)?),
        "tool_call_completed" => Kind::completed(tool_end(l)?),
        "tool_call" => Kind::ToolCall(Box::new((tool_start(l)?, tool_end(l)?))),
        "tool_call_progress" => Kind::ToolCallProgress {
            call_id: l.call_id.clone()?.0,
            partial: Json::from(l.partial?),
        },
        "shell_output_delta" => Kind::ShellOutputDelta {
            call_id: l.call_id.clone()?.0,
            stream: match l.stream.as_ref()?.0.as_ref() {
                "stdout" => OutStream::Stdout,
                "stderr" => OutStream::Stderr,
                _ => return None,
            },
            text: text()?,
        },
        "usage_delta" => Kind::UsageDelta(Usage {
            input: l.delta_input?,
            output: l.delta_output?,
            cache_read: l.delta_cache_read,
            cache_write: l.delta_cache_write,
            cache_write_1h: l.delta_cache_write_1h,
            reasoning: l.delta_reasoning,
            output_incomplete: l.output_incomplete.unwrap_or(false),
        }),
        "summary" => Kind::Summary {
            phase: match l.phase.as_ref()?.0.as_ref() {
                "started" => SummaryPhase::Started,
                "completed" => SummaryPhase::Completed,
                "snapshot" => SummaryPhase::Snapshot,
                _ => return None,
            },
            text: text(),
        },
        "turn_ended" => Kind::TurnEnded { usage: usage() },
        "result" => Kind::Result(SessionResult {
            ok: l.ok?,
            text: text(),
            duration_ms: l.duration_ms,
            usage: usage(),
            cost_usd: l.cost_usd,
            error: s(l.error.clone()),
        }),
        "error" => Kind::Error {
            message: s(l.message.clone())?,
            fatal: l.fatal?,
            source: s(l.source.clone()),
        },
        "unknown" => Kind::Unknown {
            raw: Json::from(l.raw?),
        },
        "user_event" => Kind::UserEvent {
            what: crate::event::UserEventKind::from_name(&l.what.as_ref()?.0)?,
            text: text()?,
        },
        _ => return None,
    })
}
