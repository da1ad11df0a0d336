//! Antigravity CLI's saved transcript,
//! `~/.gemini/antigravity-cli/brain/<conversation-id>/.system_generated/logs/transcript.jsonl`
//! (`transcript_full.jsonl` beside it has the same lines, untruncated).
//!
//! One line per step, `{step_index, source, type, status, created_at,
//! content, thinking, tool_calls, input_tokens, output_tokens,
//! cache_read_tokens}`, every member optional:
//!
//! - `USER_INPUT` is a prompt; its `content` wraps the typed text in
//!   `<USER_REQUEST>…</USER_REQUEST>` (followed by metadata), which is
//!   unwrapped.
//! - `PLANNER_RESPONSE` is one model call: `thinking`, its text
//!   (`content`, `null` for a call that only used tools), the calls it made
//!   (`tool_calls [{name, args}]`, each argument value itself JSON-encoded),
//!   and its usage (`input_tokens` leaves the `cache_read_tokens` out).
//! - A tool's execution is a step of its own, typed after the tool
//!   (`RUN_COMMAND`, `VIEW_FILE`, …) with its output as `content`. Nothing
//!   links it to the call but its place: it answers the oldest call not yet
//!   answered (callId `<step>.<n>`: the response's step and the call's
//!   place in it). A step still `RUNNING` (a backgrounded command) is
//!   completed with its outcome unknown.
//! - `SYSTEM_MESSAGE`, `CONVERSATION_HISTORY` and `KNOWLEDGE_ARTIFACTS` are
//!   text agy put in the model's context (`user_event` `context`);
//!   `CHECKPOINT` is a summary of the context so far (`summary`).
//! - Lines without a `type` (older or hand-made files) are read by their
//!   `source`: a user's is a prompt, the model's a response.
//!
//! The transcript names no model, and the session id is the directory's
//! name. Its end is the session's `result` (`ok`: the file records no
//! outcome), with the usage summed, absent when no step had any.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::agy_fields;
use crate::dialect::common::{SavedHead, file_result, fill_start_owned, normalize_tool_name};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{
    Event, Json, Kind, SummaryPhase, Text, ToolEnd, ToolStart, Usage, UserEventKind, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxInt, LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "antigravity-transcript";

/// At most this many calls wait for their execution step.
const PENDING_CAP: usize = 4096;

/// The step types this reader knows that are not a tool's execution.
const STEP_TYPES: &[&str] = &[
    "USER_INPUT",
    "PLANNER_RESPONSE",
    "SYSTEM_MESSAGE",
    "CONVERSATION_HISTORY",
    "KNOWLEDGE_ARTIFACTS",
    "CHECKPOINT",
];

/// The `source` values agy writes.
const SOURCES: &[&str] = &["USER_EXPLICIT", "USER_IMPLICIT", "MODEL", "SYSTEM"];

/// Detection: an ISO `created_at` beside agy's step vocabulary (an
/// upper-case step `type` it writes, or one of its `source` values).
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    let dated = p
        .created_at
        .as_deref()
        .is_some_and(|t| crate::time::iso_ms(t).is_some());
    dated
        && (STEP_TYPES.contains(&p.ty())
            || p.source.as_deref().is_some_and(|s| SOURCES.contains(&s)))
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default)]
    step_index: LaxInt,
    #[serde(borrow, default)]
    source: LaxStr<'a>,
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    created_at: LaxStr<'a>,
    #[serde(borrow, default)]
    content: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<&'a RawValue>,
    #[serde(default)]
    input_tokens: LaxInt,
    #[serde(default)]
    output_tokens: LaxInt,
    #[serde(default)]
    cache_read_tokens: LaxInt,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// The typed text of a prompt: inside `<USER_REQUEST>…</USER_REQUEST>`
/// when agy wrapped it so, else the content as it is.
fn user_text(content: &str) -> Cow<'_, str> {
    const OPEN: &str = "<USER_REQUEST>";
    const CLOSE: &str = "</USER_REQUEST>";
    let Some(start) = content.find(OPEN) else {
        return Cow::Borrowed(content);
    };
    let rest = &content[start + OPEN.len()..];
    let inner = match (rest.find(CLOSE), rest.find("<ADDITIONAL_METADATA>")) {
        (Some(a), Some(b)) => &rest[..a.min(b)],
        (Some(a), None) | (None, Some(a)) => &rest[..a],
        (None, None) => rest,
    };
    Cow::Borrowed(inner.trim_matches(['\n', '\r']))
}

/// Tool arguments whose values are each JSON-encoded (`"\"ls\""`, `"true"`)
/// decoded into one object, for the normalized fields.
fn decoded_args(raw: &RawValue) -> Option<Box<RawValue>> {
    let m = Members::of(raw)?;
    let mut obj = serde_json::Map::new();
    for (k, v) in &m.0 {
        let value: serde_json::Value = match raw_as_str(v) {
            Some(s) => {
                serde_json::from_str(&s).unwrap_or(serde_json::Value::String(s.into_owned()))
            }
            None => serde_json::from_str(v.get()).unwrap_or(serde_json::Value::Null),
        };
        obj.insert(k.to_string(), value);
    }
    serde_json::value::to_raw_value(&obj).ok()
}

/// The session id in a transcript's path (`brain/<id>/.system_generated/…`).
fn session_id_of_path(path: &Path) -> Option<String> {
    let mut parts = path
        .components()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy());
    while let Some(p) = parts.next() {
        if p == ".system_generated" {
            return parts
                .next()
                .map(|id| id.into_owned())
                .filter(|id| !id.is_empty());
        }
    }
    None
}

/// Parser state for one saved transcript.
#[derive(Default)]
pub struct AntigravityTranscriptParser {
    /// Its session's header, and whether its `session_started` was written.
    head: SavedHead,
    last_ts: Option<i64>,
    /// Calls made and not yet executed, oldest first: (callId, name).
    pending: VecDeque<(String, String)>,
    /// Responses read (a callId's prefix when a step has no index).
    responses: u64,
    total: Option<Usage>,
}

impl AntigravityTranscriptParser {
    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        self.head.open(NAME, || None, out)?;
        Ok(())
    }

    /// Calls that were made but whose execution the file does not record.
    fn unanswered<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        while let Some((id, name)) = self.pending.pop_front() {
            let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), true);
            end.outcome_unknown = true;
            out(Item::Event(Event::at(ts, Kind::completed(end))))?;
        }
        Ok(())
    }

    fn response<'a>(&mut self, l: Line<'a>, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        self.unanswered(ts, out)?;
        self.responses += 1;
        let ev = |kind| Item::Event(Event::at(ts, kind));
        if let Some(t) = l.thinking.get().filter(|t| !t.is_empty()) {
            out(ev(Kind::ThinkingDelta { text: t }))?;
            out(ev(Kind::ThinkingCompleted { duration_ms: None }))?;
        }
        if let Some(t) = l.content.get().filter(|t| !t.is_empty()) {
            out(ev(Kind::TextDelta { text: t }))?;
        }
        let calls: Vec<Call<'a>> = l
            .tool_calls
            .and_then(|c| serde_json::from_str(c.get()).ok())
            .unwrap_or_default();
        let step = l
            .step_index
            .0
            .map_or_else(|| format!("r{}", self.responses), |i| i.to_string());
        for (n, c) in calls.into_iter().enumerate() {
            let id = format!("{step}.{n}");
            let name = normalize_tool_name(c.name.as_deref().unwrap_or("unknown"));
            let args = c.args.map_or_else(json_null, Json::from);
            let mut t = ToolStart::new(Cow::Owned(id.clone()), Cow::Owned(name.clone()), args);
            if let Some(decoded) = c.args.and_then(decoded_args)
                && let Some(a) = Members::of(&decoded)
            {
                fill_start_owned(&mut t, &a);
                agy_fields(&mut t, &a);
            }
            if self.pending.len() >= PENDING_CAP {
                self.unanswered(ts, out)?;
            }
            self.pending.push_back((id, name));
            out(ev(Kind::started(t)))?;
        }
        let n = |v: LaxInt| v.0.and_then(|v| u64::try_from(v).ok());
        let (input, output) = (n(l.input_tokens), n(l.output_tokens));
        if input.is_some() || output.is_some() {
            let u = Usage::cache_apart(
                input.unwrap_or(0),
                output.unwrap_or(0),
                n(l.cache_read_tokens),
                None,
            );
            self.total = Some(self.total.map_or(u, |t| t.add(&u)));
            out(ev(Kind::UsageDelta(u)))?;
        }
        Ok(())
    }

    /// A tool's execution step.
    fn execution<'a>(
        &mut self,
        ty: &str,
        l: Line<'a>,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let (id, name) = match self.pending.pop_front() {
            Some(p) => p,
            None => {
                // An execution whose call is not in the file (cut off above).
                let id = l
                    .step_index
                    .0
                    .map_or_else(|| format!("x{}", self.responses), |i| format!("{i}"));
                let name = normalize_tool_name(&ty.to_ascii_lowercase());
                let t = ToolStart::new(
                    Cow::Owned(id.clone()),
                    Cow::Owned(name.clone()),
                    json_null(),
                );
                out(Item::StartIfNew(Event::at(ts, Kind::started(t))))?;
                (id, name)
            }
        };
        let status = l.status.as_deref().unwrap_or("DONE");
        let content = l.content.get();
        let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), true);
        match status {
            "RUNNING" | "PENDING" => end.outcome_unknown = true,
            "ERROR" | "FAILED" | "CANCELED" | "CANCELLED" => {
                end.ok = false;
                end.error = Some(
                    content
                        .clone()
                        .filter(|c| !c.is_empty())
                        .unwrap_or(Cow::Borrowed("the tool failed")),
                );
            }
            _ => {}
        }
        if !end.outcome_unknown {
            if end.tool_name == "shell" {
                end.output = content.map(Text::from);
            } else {
                end.result = content.map(|c| Json::from(crate::json::assembled(&*c)));
            }
        }
        out(Item::Event(Event::at(ts, Kind::completed(end))))
    }
}

impl Parser for AntigravityTranscriptParser {
    fn set_source(&mut self, path: &Path) {
        self.head.session_id = session_id_of_path(path);
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let l: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let ts = l.created_at.as_deref().and_then(iso_ms);
        if self.head.start_ts.is_none() {
            self.head.start_ts = ts;
        }
        if ts.is_some() {
            self.last_ts = self.last_ts.max(ts);
        }
        self.open(out)?;
        let ty: String = match (l.ty.as_deref(), l.source.as_deref()) {
            (Some(t), _) if !t.is_empty() => t.to_owned(),
            (_, Some("USER_EXPLICIT" | "USER_IMPLICIT")) => "USER_INPUT".to_owned(),
            (_, Some("MODEL")) => "PLANNER_RESPONSE".to_owned(),
            _ => return keep_unknown(rec, out),
        };
        let ev = |kind| Item::Event(Event::at(ts, kind));
        match ty.as_str() {
            "USER_INPUT" => {
                self.unanswered(ts, out)?;
                let text = match l.content.get() {
                    Some(Cow::Borrowed(c)) => user_text(c),
                    Some(Cow::Owned(c)) => Cow::Owned(user_text(&c).into_owned()),
                    None => Cow::Borrowed(""),
                };
                out(ev(Kind::UserMessage { text }))?;
            }
            "PLANNER_RESPONSE" => self.response(l, ts, out)?,
            "SYSTEM_MESSAGE" | "CONVERSATION_HISTORY" | "KNOWLEDGE_ARTIFACTS" => {
                if let Some(text) = l.content.get().filter(|t| !t.is_empty()) {
                    out(ev(Kind::UserEvent {
                        what: UserEventKind::Context,
                        text,
                    }))?;
                }
            }
            "CHECKPOINT" => out(ev(Kind::Summary {
                phase: SummaryPhase::Completed,
                text: l.content.get().filter(|t| !t.is_empty()),
            }))?,
            // A tool's execution: model-sourced, or answering a call made.
            t if t.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                && (!self.pending.is_empty() || l.source.as_deref() == Some("MODEL")) =>
            {
                let t = t.to_owned();
                self.execution(&t, l, ts, out)?
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if !self.head.started {
            return Ok(());
        }
        let ts = self.last_ts;
        self.unanswered(ts, out)?;
        out(Item::Event(file_result(self.head.start_ts, ts, self.total)))
    }
}
