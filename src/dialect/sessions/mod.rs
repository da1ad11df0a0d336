//! Session files the agent CLIs save on disk (archives), as opposed to the
//! streams they print: each reader here turns one saved file into the same
//! events a live stream gives, so every output format works on archives.
//!
//! - [`claude_project`]: Claude Code's `~/.claude/projects/<dir>/<session>.jsonl`;
//! - [`codex_rollout`]: Codex's `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`;
//! - [`gemini_chat`]: Gemini CLI's `~/.gemini/tmp/<hash>/chats/session-*.json`;
//! - [`cursor_transcript`]: cursor-agent's saved agent transcripts,
//!   `~/.cursor/projects/<dir>/agent-transcripts/<id>/<id>.jsonl`.
//!
//! docs/dialects.md describes what each reader keeps, drops and cannot know.

pub mod claude_project;
pub mod codex_rollout;
pub mod cursor_transcript;
pub mod gemini_chat;
pub mod offload;
pub mod subagent;

use serde::de::{Deserialize, Deserializer, IgnoredAny};

/// A key that is there, whatever its value (`null` included, which
/// `Option` would read as absent).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Present(pub bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// The `result` a saved-session reader writes at the end of its file: the
/// file is the whole saved session (none writes a result of its own), so it
/// ends well, with the usage counted and the time from its first record to
/// its last.
pub(crate) fn file_result<'a>(
    start_ts: Option<i64>,
    last_ts: Option<i64>,
    usage: Option<crate::event::Usage>,
) -> crate::event::Event<'a> {
    let duration_ms = match (start_ts, last_ts) {
        (Some(a), Some(b)) if b >= a => u64::try_from(b - a).ok(),
        _ => None,
    };
    crate::event::Event::at(
        last_ts,
        crate::event::Kind::Result(crate::event::SessionResult {
            ok: true,
            text: None,
            duration_ms,
            usage,
            cost_usd: None,
            error: None,
        }),
    )
}

/// The `session_started` both saved-session readers write once they have
/// read their file's header fields (the reader owns them, so each is copied
/// into the event).
pub(crate) fn session_started<'a>(
    ts: Option<i64>,
    dialect: &'static str,
    session_id: &Option<String>,
    model: &Option<String>,
    cwd: &Option<String>,
    permission_mode: &Option<String>,
    parent: Option<crate::event::SessionParent<'a>>,
) -> crate::dialect::Item<'a> {
    use std::borrow::Cow;
    let owned = |v: &Option<String>| v.clone().map(Cow::Owned);
    crate::dialect::Item::Event(crate::event::Event::at(
        ts,
        crate::event::Kind::SessionStarted(crate::event::SessionStart {
            session_id: owned(session_id),
            dialect: Cow::Borrowed(dialect),
            model: owned(model),
            cwd: owned(cwd),
            permission_mode: owned(permission_mode),
            parent,
        }),
    ))
}
