//! cursor-agent's saved transcripts
//! (`~/.cursor/projects/<dir>/agent-transcripts/<id>/<id>.jsonl`).
//!
//! Each line is `{role, message: {content: [blocks]}}` with Anthropic-style
//! blocks (`text`, `tool_use {name, input}`, rarely `tool_result`), or a
//! `{"type": "turn_ended", "status": …}` marker. The lines carry no ids,
//! no times and no usage, and the prompt is wrapped in tags
//! (`<timestamp>…</timestamp>` then `<user_query>…</user_query>`). What the
//! file does not say is not made up:
//!
//! - a `tool_use` has no id and no result: its call is numbered
//!   (`tool-1`, …) and, at the next assistant line or the end of its turn,
//!   completed with an unknown outcome (`outcomeUnknown`), never as a
//!   success or a failure; a `tool_result` block, where one is written (on
//!   the user line after the call's), completes the oldest call without one;
//! - there is no usage: the result has none (absent, not zeros);
//! - the prompt is the text inside `<user_query>`, and the `<timestamp>`
//!   before it (`Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)`) is its time;
//! - a `thinking` block is thinking; a `role: "system"` line is neither the
//!   assistant's text nor a prompt: a `context` user event.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::dialect::common::{fill_start_owned, normalize_tool_name};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{
    Event, Json, Kind, SessionResult, ToolEnd, ToolStart, UserEventKind, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, raw_as_str};

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "cursor-transcript";

/// Detection: a line with a `role` and a `message` but no `type` (every
/// other dialect types its lines), or the `turn_ended` marker without a
/// session id (cstream's own `turn_ended` has one).
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    (p.role.is_some() && p.message.is_some() && p.ty.0.is_none())
        || (p.ty() == "turn_ended" && p.session_id_camel.is_none() && p.status.is_some())
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    role: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
    #[serde(borrow, default)]
    name: LaxStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: LaxStr<'a>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// Parser state for one transcript.
#[derive(Default)]
pub struct CursorTranscriptParser {
    started: bool,
    /// Calls numbered so far.
    calls: u64,
    /// Calls without a result yet, oldest first: (id, normalized name).
    open: VecDeque<(String, String)>,
    /// A model answer came since the last prompt.
    turn_open: bool,
    /// The last time a prompt's tag gave.
    last_ts: Option<i64>,
    /// The status of a `turn_ended` that said otherwise.
    failed: Option<String>,
}

/// The prompt inside the tags cursor-agent wraps it in, and the time its
/// `<timestamp>` tag gives.
fn unwrap_prompt(text: &str) -> (Cow<'_, str>, Option<i64>) {
    let inner = |tag: &str| -> Option<&str> {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let from = text.find(&open)? + open.len();
        let to = from + text[from..].find(&close)?;
        Some(&text[from..to])
    };
    let ts = inner("timestamp").and_then(|t| prompt_time(t.trim()));
    match inner("user_query") {
        Some(q) => (Cow::Borrowed(q.trim()), ts),
        None => {
            // No query tag: what follows the timestamp, if any.
            let rest = match text.find("</timestamp>") {
                Some(i) => &text[i + "</timestamp>".len()..],
                None => text,
            };
            (Cow::Borrowed(rest.trim()), ts)
        }
    }
}

/// `Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)` as epoch milliseconds.
fn prompt_time(t: &str) -> Option<i64> {
    let mut parts = t.split(", ");
    let _weekday = parts.next()?;
    let (mon, day) = parts.next()?.split_once(' ')?;
    let year: i64 = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let (clock, zone) = rest.split_once(" (UTC")?;
    let (hm, ampm) = clock.split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    match ampm {
        "AM" => h %= 12,
        "PM" => h = h % 12 + 12,
        _ => return None,
    }
    let zone = zone.strip_suffix(')')?;
    let offset_min: i64 = if zone.is_empty() {
        0
    } else {
        let (sign, z) = zone.split_at(1);
        let (zh, zm) = z.split_once(':').unwrap_or((z, "0"));
        let v = zh.parse::<i64>().ok()? * 60 + zm.parse::<i64>().ok()?;
        match sign {
            "+" => v,
            "-" => -v,
            _ => return None,
        }
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|x| *x == mon)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    if !(1..=31).contains(&day) {
        return None;
    }
    let iso = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:00.000Z");
    let utc = crate::time::iso_ms(&iso)?;
    Some(utc - offset_min * 60_000)
}

impl CursorTranscriptParser {
    fn open<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        out(crate::dialect::common::saved_session_started(
            ts, NAME, &None, &None, &None, &None, &None, None,
        ))
    }

    fn emit<'a>(&mut self, ts: Option<i64>, kind: Kind<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        self.open(ts, out)?;
        out(Item::Event(Event::at(ts, kind)))
    }

    /// The calls still without a result: their outcome is not in the file.
    fn close_calls<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        while let Some((id, name)) = self.open.pop_front() {
            let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), true);
            end.outcome_unknown = true;
            self.emit(None, Kind::completed(end), out)?;
        }
        Ok(())
    }

    fn blocks<'a>(
        &mut self,
        role: &str,
        content: &'a RawValue,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        let blocks: Vec<&'a RawValue> = match raw_as_str(content) {
            Some(_) => vec![content],
            None => serde_json::from_str(content.get()).unwrap_or_default(),
        };
        for raw in blocks {
            if let Some(s) = raw_as_str(raw) {
                self.text(role, s, out)?;
                continue;
            }
            let Ok(b) = serde_json::from_str::<Block<'a>>(raw.get()) else {
                self.open(None, out)?;
                keep_unknown(raw.get(), out)?;
                continue;
            };
            match b.ty.as_deref() {
                Some("text") => {
                    let text = b.text.get().unwrap_or_default();
                    self.text(role, text, out)?;
                }
                Some("thinking") if role == "assistant" => {
                    // The Anthropic block spells its text `thinking`; an
                    // empty one (the text not kept) shows nothing.
                    self.turn_open = true;
                    let text = b
                        .thinking
                        .get()
                        .or_else(|| b.text.get())
                        .unwrap_or_default();
                    if !text.is_empty() {
                        self.emit(None, Kind::ThinkingDelta { text }, out)?;
                        self.emit(None, Kind::ThinkingCompleted { duration_ms: None }, out)?;
                    }
                }
                Some("tool_use") => {
                    self.calls += 1;
                    let id = format!("tool-{}", self.calls);
                    let name = normalize_tool_name(b.name.as_deref().unwrap_or(""));
                    let args = b.input.map_or_else(json_null, Json::from);
                    let mut t =
                        ToolStart::new(Cow::Owned(id.clone()), Cow::Owned(name.clone()), args);
                    if let Some(m) = b.input.and_then(Members::of) {
                        fill_start_owned(&mut t, &m);
                    }
                    self.open.push_back((id, name));
                    self.turn_open = true;
                    self.emit(None, Kind::started(t), out)?;
                }
                Some("tool_result") => {
                    // By its id when it has one, else the oldest open call.
                    let at = b
                        .tool_use_id
                        .as_deref()
                        .and_then(|id| self.open.iter().position(|(o, _)| o == id))
                        .unwrap_or(0);
                    let Some((id, name)) = self.open.remove(at) else {
                        self.open(None, out)?;
                        keep_unknown(raw.get(), out)?;
                        continue;
                    };
                    let ok = b.is_error != Some(true);
                    let mut end = ToolEnd::new(Cow::Owned(id), Cow::Owned(name), ok);
                    end.result = b.content.map(Json::from);
                    if !ok {
                        end.error = b.content.and_then(raw_as_str);
                    }
                    self.emit(None, Kind::completed(end), out)?;
                }
                _ => {
                    self.open(None, out)?;
                    keep_unknown(raw.get(), out)?;
                }
            }
        }
        Ok(())
    }

    fn text<'a>(&mut self, role: &str, text: Cow<'a, str>, out: Out<'_, 'a>) -> io::Result<()> {
        if role == "user" {
            let (prompt, ts) = match &text {
                Cow::Borrowed(s) => unwrap_prompt(s),
                Cow::Owned(s) => {
                    let (p, ts) = unwrap_prompt(s);
                    (Cow::Owned(p.into_owned()), ts)
                }
            };
            if ts.is_some() {
                self.last_ts = ts;
            }
            self.end_turn(out)?;
            return self.emit(ts, Kind::UserMessage { text: prompt }, out);
        }
        self.turn_open = true;
        if text.is_empty() {
            return Ok(());
        }
        self.emit(None, Kind::TextDelta { text }, out)
    }

    fn end_turn<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if std::mem::take(&mut self.turn_open) {
            self.close_calls(out)?;
            self.emit(None, Kind::TurnEnded { usage: None }, out)?;
        }
        Ok(())
    }
}

/// A `system` line's text: a string, or its text blocks joined by blank
/// lines; `None` when it has other blocks (kept as `unknown`).
fn system_text(content: &RawValue) -> Option<Cow<'_, str>> {
    if let Some(s) = raw_as_str(content) {
        return Some(s);
    }
    let blocks: Vec<Block> = serde_json::from_str(content.get()).ok()?;
    let mut out: Option<Cow<'_, str>> = None;
    for b in blocks {
        if b.ty.as_deref() != Some("text") {
            return None;
        }
        let t = b.text.get().unwrap_or_default();
        out = Some(match out {
            None => t,
            Some(o) => Cow::Owned(format!("{o}\n\n{t}")),
        });
    }
    out
}

impl Parser for CursorTranscriptParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        if line.ty.as_deref() == Some("turn_ended") {
            let status = line.status.as_deref().unwrap_or("");
            if status != "success" && !status.is_empty() {
                self.failed = Some(status.to_owned());
            }
            self.turn_open = true;
            self.end_turn(out)?;
            return Ok(Parsed::Done);
        }
        let (Some(role), Some(content)) = (
            line.role.as_deref(),
            line.message.as_ref().and_then(|m| m.content),
        ) else {
            self.open(None, out)?;
            return keep_unknown(rec, out);
        };
        if role == "system" {
            // Not the assistant's words, nor a prompt: text cursor-agent put
            // on the user's side itself, a `context` user event. Like an
            // assistant line, it shows that the calls before it got no
            // result line.
            self.close_calls(out)?;
            return match system_text(content) {
                Some(text) => {
                    self.emit(
                        None,
                        Kind::UserEvent {
                            what: UserEventKind::Context,
                            text,
                        },
                        out,
                    )?;
                    Ok(Parsed::Done)
                }
                None => {
                    self.open(None, out)?;
                    keep_unknown(rec, out)
                }
            };
        }
        let role = if role == "user" { "user" } else { "assistant" };
        if role == "assistant" {
            // A result would have come on the user line right after the
            // call's: the calls of earlier lines have none.
            self.close_calls(out)?;
        }
        self.blocks(role, content, out)?;
        Ok(Parsed::Done)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if !self.started {
            return Ok(());
        }
        self.end_turn(out)?;
        self.close_calls(out)?;
        let failed = self.failed.take();
        out(Item::Event(Event::new(Kind::Result(SessionResult {
            ok: failed.is_none(),
            text: None,
            duration_ms: None,
            usage: None,
            cost_usd: None,
            error: failed.map(|s| Cow::Owned(format!("turn ended with status {s}"))),
        }))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_tags_are_unwrapped_and_their_time_read() {
        let (p, ts) = unwrap_prompt(
            "<timestamp>Tuesday, Sep 29, 2026, 2:29 AM (UTC-4)</timestamp>\n<user_query>\ncreate a file\n</user_query>",
        );
        assert_eq!(p, "create a file");
        assert_eq!(ts, crate::time::iso_ms("2026-09-29T06:29:00.000Z"));
        assert_eq!(
            prompt_time("Monday, Jan 5, 2026, 12:05 PM (UTC+5:30)"),
            crate::time::iso_ms("2026-01-05T06:35:00.000Z")
        );
        assert_eq!(
            prompt_time("Monday, Jan 5, 2026, 12:05 AM (UTC)"),
            crate::time::iso_ms("2026-01-05T00:05:00.000Z")
        );
        assert_eq!(prompt_time("yesterday"), None);
        assert_eq!(unwrap_prompt("plain text").0, "plain text");
    }
}
