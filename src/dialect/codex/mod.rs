//! OpenAI Codex CLI `codex exec --json`, and the pre-0.44 `{"id","msg"}` form.
//!
//! The format is described in docs/dialects.md#codex; the real captures
//! in `shared/corpus/codex/` show the parts that shape this parser:
//! - `thread.started` opens the session; it names no model and no cwd;
//! - nothing streams until an item completes: `agent_message` and
//!   `reasoning` arrive whole in `item.completed`; a `command_execution`
//!   starts with `aggregated_output:""` and completes with the whole output
//!   (Windows builds write `\r\n`); an `item.updated` of a command, if one
//!   ever comes, is a cumulative snapshot ([`Item::OutputSnapshot`]);
//! - `file_change` items list paths and kinds but no diff (newer builds may
//!   add one per change, which becomes the `patch`);
//! - `turn.completed.usage` is the thread's running total ([`Item::UsageTotal`],
//!   never summed); the end of a turn is the session's `result`, so a
//!   thread's later turn begins a session of its own (same id);
//! - a failure is reported twice: a top-level `error` and then `turn.failed`
//!   with the same message (itself often an API error object as a JSON
//!   string). The `error` is held for one line so the message shows once;
//!   a non-fatal `error` item can come before `turn.started`.
//!
//! The legacy form (`{"id":…,"msg":{"type":…}}`, codex ≤ 0.43) streams
//! deltas (`agent_message_delta`, base64 `exec_command_output_delta` chunks)
//! and repeats whole messages afterwards (recaps).

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{error_text, join_argv};
use super::{Item, Out, Parser, Probe, read_line};
use crate::event::calls::CallTable;
use crate::event::{Event, Kind, SessionStart, Str, ToolStart, Usage};
use crate::input::Parsed;
use crate::json::{LaxStr, Members, S, raw_as_str};

mod exec;
mod legacy;
pub mod rollout;

/// One line, of either form (the legacy form has `msg`, or is a preamble).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    thread_id: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(borrow, default)]
    item: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
    #[serde(borrow, default)]
    delta: LaxStr<'a>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    questions: Option<&'a RawValue>,
    /// The legacy form's payload.
    #[serde(borrow, default)]
    msg: Option<&'a RawValue>,
    // A legacy config summary line.
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    workdir: LaxStr<'a>,
    /// The legacy form's second line: the prompt.
    #[serde(borrow, default)]
    prompt: LaxStr<'a>,
    /// `turn.completed` of 0.147 and later: how the turn ended and how long
    /// it took (beside, or instead of, its usage).
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(default)]
    duration_ms: crate::json::LaxInt,
}

/// Detection: a dotted `type` (`thread.started`, `item.completed`, …), or
/// the legacy form's `msg` object.
pub(super) fn sniff(p: &Probe<'_>) -> bool {
    p.ty().contains('.') || p.msg.is_some_and(|m| m.get().starts_with('{'))
}

/// Parser state for one Codex input.
#[derive(Default)]
pub struct CodexParser {
    started: bool,
    /// Tool items started and not completed, by id: whether their output
    /// was seen in an `item.updated` snapshot.
    open: CallTable<bool>,
    /// The last agent message (the result's text).
    last_message: Option<String>,
    /// The last running total, for the turn's own usage.
    last_total: Usage,
    /// A top-level `error` waiting to see whether `turn.failed` repeats it.
    pending_error: Option<String>,
    /// The last todo list shown (skip an identical snapshot).
    last_todos: Option<String>,
    /// The thread's id, for the sessions of its later turns.
    thread_id: Option<String>,
    /// A turn of this thread has ended: the next one is a new session.
    turn_done: bool,
    /// The thread's running total when the current session began.
    base: Usage,
}

impl Parser for CodexParser {
    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match read_line(rec, out)? {
            Ok(l) => l,
            Err(done) => return Ok(done),
        };
        let ty = line.ty.as_deref();
        // The repeat of a held failure message is the only line that may
        // swallow it; anything else lets it out first.
        if let Some(msg) = self.pending_error.take() {
            let repeated = ty == Some("turn.failed")
                && line.error.and_then(error_message).is_some_and(|m| m == msg);
            if !repeated {
                out(Item::Event(Event::new(nonfatal(Cow::Owned(msg)))))?;
            }
        }
        if let Some(m) = line.msg {
            return self.legacy(rec, m, out);
        }
        if line.ty.0.is_none() {
            return self.legacy_preamble(rec, line, out);
        }
        self.exec(rec, line, out)
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if let Some(msg) = self.pending_error.take() {
            out(Item::Event(Event::new(nonfatal(Cow::Owned(msg)))))?;
        }
        Ok(())
    }
}

fn nonfatal(message: Str<'_>) -> Kind<'_> {
    Kind::Error {
        message,
        fatal: false,
        source: None,
    }
}

impl CodexParser {
    /// A further turn of the same thread: a session of its own, whose usage
    /// counts from the thread's running total so far.
    fn next_turn(&mut self, out: Out<'_, '_>) -> io::Result<()> {
        self.base = self.last_total;
        out(session_started(
            self.thread_id.clone().map(Cow::Owned),
            None,
            None,
        ))
    }

    fn open_call(&mut self, id: &str) -> bool {
        if self.open.contains(id) {
            return false;
        }
        // Past the cap the oldest call is forgotten.
        self.open.insert(id, false);
        true
    }

    fn close_call(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some()
    }

    /// Emit a start for a tool item unless it is already open (an item may
    /// arrive only completed).
    fn ensure_start<'a>(&mut self, start: ToolStart<'a>, out: Out<'_, 'a>) -> io::Result<()> {
        if self.open_call(&start.call_id) {
            out(Item::Event(Event::new(Kind::started(start))))?;
        }
        Ok(())
    }
}

/// A command: a string, or an argv array joined.
fn command_text(raw: &RawValue) -> Option<Str<'_>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    let parts: Vec<S> = serde_json::from_str(raw.get()).ok()?;
    let parts: Vec<&str> = parts.iter().map(|s| s.0.as_ref()).collect();
    Some(Cow::Owned(join_argv(&parts)))
}

/// The message of an error value, made readable.
fn error_message(raw: &RawValue) -> Option<String> {
    error_text(raw).map(|s| readable_error(&s))
}

/// Codex passes API errors on as their JSON text
/// (`{"type":"error","status":400,"error":{"message":…}}`): the message
/// inside, else the text as it is.
fn readable_error(s: &str) -> String {
    let t = s.trim();
    if t.starts_with('{')
        && let Ok(raw) = serde_json::from_str::<&RawValue>(t)
        && let Some(m) = Members::of(raw)
    {
        let inner = m
            .obj("error")
            .and_then(|e| e.nonempty_str("message"))
            .or_else(|| m.nonempty_str("message"));
        if let Some(msg) = inner {
            return match m.int("status") {
                Some(code) => format!("{msg} (HTTP {code})"),
                None => msg.into_owned(),
            };
        }
    }
    s.to_owned()
}

/// A Codex session's `session_started`: every form of the stream (exec's
/// `thread.started`, a further turn, the legacy config line and
/// `session_configured`) gives some of the same three fields.
pub(super) fn session_started<'a>(
    session_id: Option<Str<'a>>,
    model: Option<Str<'a>>,
    cwd: Option<Str<'a>>,
) -> Item<'a> {
    Item::Event(Event::new(Kind::SessionStarted(SessionStart {
        session_id,
        dialect: Cow::Borrowed("codex"),
        model,
        cwd,
        ..SessionStart::default()
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_become_readable() {
        let s = r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","message":"The model requires a newer version."}}"#;
        assert_eq!(
            readable_error(s),
            "The model requires a newer version. (HTTP 400)"
        );
        assert_eq!(readable_error("plain"), "plain");
    }
}
