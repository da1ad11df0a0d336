//! Gemini CLI `gemini -p … --output-format stream-json`.
//!
//! The format is described in docs/dialects.md#gemini-cli. Every line has a
//! `type` and an ISO `timestamp`:
//! - `init` opens the session (`session_id`, `model`);
//! - `message` with `role:"assistant"` and `delta:true` is an incremental
//!   chunk; without `delta` it is a whole message (one text delta either
//!   way); `role:"user"` echoes the prompt;
//! - `tool_use` / `tool_result` pair by `tool_id`; output arrives whole;
//! - `error` events (`severity` warning or error) are non-fatal: a failed
//!   run ends with `result` `status:"error"`;
//! - `result.stats` are run totals: `input_tokens` includes the `cached`
//!   part (Google's convention), so it is the normalized input as it is.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{error_text, fill_start, normalize_tool_name, without_output};
use super::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::calls::CallTable;
use crate::event::{
    Event, Json, Kind, SessionResult, SessionStart, Text, ToolEnd, ToolStart, Usage, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    role: LaxStr<'a>,
    #[serde(borrow, default)]
    content: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_name: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_id: LaxStr<'a>,
    #[serde(borrow, default)]
    parameters: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    severity: LaxStr<'a>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(borrow, default)]
    stats: Option<&'a RawValue>,
}

/// Detection: Gemini's own line types with what marks them as Gemini's (an
/// ISO `timestamp`, `severity`, `stats`); its `result` is told from the
/// others' by `stats`, or by `status` without a `subtype`.
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    match p.ty() {
        "init" => p.iso_ts() || p.session_id.is_some(),
        "message" | "tool_use" | "tool_result" => p.iso_ts(),
        "error" => p.severity.is_some(),
        "result" => p.stats.is_some() || (p.status.is_some() && p.subtype.0.is_none()),
        _ => false,
    }
}

/// Parser state for one Gemini CLI input.
#[derive(Default)]
pub struct GeminiParser {
    /// Tools started and not finished: normalized name by id.
    calls: CallTable<String>,
}

impl Parser for GeminiParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let ts = line.timestamp.as_deref().and_then(iso_ms);
        let ev = |kind| Item::Event(Event::at(ts, kind));
        match line.ty.as_deref() {
            Some("init") => {
                out(ev(Kind::SessionStarted(SessionStart {
                    session_id: line.session_id.get(),
                    dialect: Cow::Borrowed("gemini"),
                    model: line.model.get(),
                    ..SessionStart::default()
                })))?;
            }
            Some("message") => {
                let text = line.content.get().unwrap_or_default();
                if line.role.as_deref() == Some("user") {
                    out(ev(Kind::UserMessage { text }))?;
                } else {
                    out(ev(Kind::TextDelta { text }))?;
                }
            }
            Some("tool_use") => {
                let id = line.tool_id.get().unwrap_or_default();
                let name = normalize_tool_name(line.tool_name.as_deref().unwrap_or(""));
                let args = line.parameters.map_or_else(json_null, Json::from);
                let mut t = ToolStart::new(id, Cow::Owned(name), args);
                if let Some(m) = line.parameters.and_then(Members::of) {
                    fill_start(&mut t, &m);
                }
                self.calls.insert(&t.call_id, t.tool_name.to_string());
                out(ev(Kind::started(t)))?;
            }
            Some("tool_result") => {
                let id = line.tool_id.get().unwrap_or_default();
                let name = self
                    .calls
                    .remove(&id)
                    .unwrap_or_else(|| "unknown".to_owned());
                let ok = line.status.as_deref() != Some("error");
                let mut t = ToolEnd::new(id, Cow::Owned(name), ok);
                let output = line.output.and_then(raw_as_str);
                if t.tool_name == "shell" {
                    t.output = output.map(Text::from);
                    t.result = line
                        .output
                        .filter(|o| !o.get().starts_with('"'))
                        .map(|o| without_output(o).map_or(Json::from(o), Json::from));
                } else {
                    t.result = line.output.map(Json::from);
                }
                if let Some(e) = line.error {
                    t.error = error_text(e);
                    if t.result.is_none() {
                        t.result = Some(Json::from(e));
                    }
                }
                out(ev(Kind::completed(t)))?;
            }
            Some("error") => {
                let message = line.message.get().unwrap_or_default();
                out(ev(Kind::Error {
                    message,
                    fatal: false,
                    source: line.severity.get(),
                }))?;
            }
            Some("result") => {
                let ok = line.status.as_deref() != Some("error");
                let stats = line.stats.and_then(Members::of);
                let get = |k: &str| {
                    stats
                        .as_ref()
                        .and_then(|s| s.int(k))
                        .and_then(|v| u64::try_from(v).ok())
                };
                let usage = match (get("input_tokens"), get("output_tokens")) {
                    (Some(input), Some(output)) => Some(Usage {
                        input,
                        output,
                        cache_read: get("cached"),
                        cache_write: None,
                        ..Usage::default()
                    }),
                    _ => None,
                };
                let error = if ok {
                    None
                } else {
                    Some(
                        line.error
                            .and_then(error_text)
                            .unwrap_or(Cow::Borrowed("error")),
                    )
                };
                out(ev(Kind::TurnEnded { usage: None }))?;
                out(ev(Kind::Result(SessionResult {
                    ok,
                    text: None,
                    duration_ms: get("duration_ms"),
                    usage,
                    cost_usd: None,
                    error,
                })))?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}
