//! Claude Code's saved project transcripts
//! (`~/.claude/projects/<cwd-with-dashes>/<session>.jsonl`, and the
//! sub-agent files beside or under them).
//!
//! The `user`/`assistant` lines hold the same Anthropic messages the live
//! stream prints, so their content is read by the stream reader
//! ([`ClaudeParser`]); what differs is handled here:
//!
//! - **The conversation is a chain, not the file.** Every record names its
//!   parent (`parentUuid`). Rewinding to an earlier prompt writes the new
//!   prompt as a child of that prompt's parent and leaves the abandoned
//!   turns in the file. To show only the conversation that went on, a turn
//!   (a typed prompt and everything up to the next one) is held back until
//!   the next prompt says whether it continues the turn or replaces it (the
//!   replaced turn's usage still counts: it was spent).
//!   Within a turn, file order is kept: parallel tool results are written as
//!   siblings of one another, not as a chain. Memory is bounded by
//!   [`HOLD_BYTES`]: a longer turn is let go early, and a rewind past it (or
//!   past any turn already written) can only be reported, with a notice.
//! - **No init, no result.** `session_started` is made from the envelope
//!   (`sessionId`, `cwd`, the first message's `model`). The file is the
//!   whole saved session, so its end is the session's `result`: `ok`, the
//!   usage counted, the time from the first record to the last, no text of
//!   its own (a file cut off mid-turn is not told apart).
//! - **Usage is saved per content block, with streaming placeholders.** Each
//!   block of a message is its own line repeating the usage Claude Code had
//!   when the block ended: the input and cache counts are final from the
//!   message's start, the output count is final only on a line with a
//!   `stop_reason`. Usage is counted once per message (`message.id`, else
//!   `requestId`; lines with neither are counted too, consecutive ones with
//!   the same input and cache counts as one message, and a notice at the end
//!   says how many), output from such a line; without one, from a line whose
//!   count grew past the first line's (only the model's usage update makes
//!   it grow). A message whose lines all hold the placeholder adds its input
//!   and cache, and a notice at the end says how many output counts the
//!   file did not have.
//! - **Bookkeeping records** (`summary`, `file-history-snapshot`,
//!   `queue-operation`, `progress`, `attachment`, `system` lines other than
//!   compaction) carry nothing the event model shows: known, and skipped;
//!   except a **queued prompt** (typed while the agent worked): a
//!   `queued_command` attachment, or before those existed the
//!   `queue-operation` `remove` that took it out of the queue, is a
//!   `user_message` where the agent took it in.
//! - **Compaction**: `system`/`compact_boundary` starts a new chain
//!   (`parentUuid: null`); the summary Claude Code wrote for itself
//!   (`isCompactSummary`) becomes a completed `summary`, not a prompt.
//! - **Sub-agents** live in their own files. Every line of one says
//!   `isSidechain: true` and, in the older layout
//!   (`agent-<hash>.jsonl` beside the session), carries the parent's
//!   `sessionId`: such a file is a session of its own, named
//!   `<sessionId>/agent-<agentId>`, so it is never merged into its parent.
//!   Sidechain lines inside a main transcript are not the main conversation
//!   and are skipped.
//! - `toolUseResult` is the tool's own result object (the stream's
//!   `tool_use_result`): Bash's stdout/stderr and exit code, Edit's patch.
//! - **Offloaded outputs**: a result too large for the conversation is a
//!   stub naming a file under `<session>/tool-results/`; the file beside
//!   the transcript is read in its place ([`offload`]), and a missing one
//!   is warned about where its line is read.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::offload;
use crate::dialect::claude::{ClaudeParser, UserText, user_text};
use crate::dialect::common::{AnthropicCounts, anthropic_usage_read};
use crate::dialect::{Item, Out, Parser, Probe, keep_unknown, read_line};
use crate::event::{Event, Json, Kind, Reads, SessionParent, SummaryPhase, Text, Usage};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxStr, Members, raw_as_str};
use crate::time::iso_ms;

/// The dialect's name (`--from`, `session_started.dialect`).
pub const NAME: &str = "claude-project";

/// A turn held back longer than this many bytes is written out before its
/// end is known (a rewind past it is then reported, not undone).
pub const HOLD_BYTES: usize = 8 * 1024 * 1024;

/// Detection: a transcript's records carry their place in the
/// conversation's chain (`parentUuid`, even `null`; `isSidechain`) or are its
/// bookkeeping (`summary` with `leafUuid`, file snapshots, queue operations),
/// which no live stream writes. It comes before the live dialects' rules:
/// a transcript's `summary` line would pass for the Cursor SDK's, its
/// `assistant` lines for Claude Code's stream.
pub(in crate::dialect) fn sniff(p: &Probe<'_>) -> bool {
    p.parent_uuid.0
        || p.leaf_uuid.is_some()
        || p.is_sidechain.is_some()
        || matches!(p.ty(), "file-history-snapshot" | "queue-operation")
}

/// The envelope every transcript record carries, plus the message keys this
/// reader decides on.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug))]
pub(crate) struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    subtype: LaxStr<'a>,
    #[serde(borrow, default)]
    uuid: LaxStr<'a>,
    #[serde(rename = "parentUuid", borrow, default)]
    parent_uuid: LaxStr<'a>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: LaxBool,
    #[serde(rename = "isMeta", default)]
    is_meta: LaxBool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: LaxBool,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(rename = "permissionMode", borrow, default)]
    permission_mode: LaxStr<'a>,
    #[serde(borrow, default)]
    timestamp: LaxStr<'a>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(rename = "compactMetadata", borrow, default)]
    compact_metadata: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    /// `queue-operation`: `enqueue`, `dequeue`, `remove`, `popAll`; the
    /// queued text, and why it left the queue.
    #[serde(borrow, default)]
    operation: LaxStr<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    reason: LaxStr<'a>,
    /// `attachment`: a `queued_command` is a prompt typed while the agent
    /// worked, delivered where it took it in.
    #[serde(borrow, default)]
    attachment: Option<&'a RawValue>,
    /// `ai-title`, `custom-title`: the session's title (Claude Code's own,
    /// or the one the user gave it with `/rename`).
    #[serde(rename = "aiTitle", borrow, default)]
    ai_title: LaxStr<'a>,
    #[serde(rename = "customTitle", borrow, default)]
    custom_title: LaxStr<'a>,
}

use crate::dialect::claude::Message;

/// A message's usage while its lines come in.
struct MsgUsage {
    id: String,
    /// Its lines have neither `message.id` nor `requestId`.
    anonymous: bool,
    /// The first snapshot: its input and cache counts are final.
    base: Usage,
    /// The output count from a line with a `stop_reason`.
    output: Option<u64>,
    /// The largest output count of its lines.
    largest: u64,
}

/// A record held back with what its one parse found, so that writing it
/// out (or dropping it) never parses its envelope and message again: only
/// the stream reader reads it once more, for its content.
struct Held {
    /// Where the record is: in [`ClaudeProjectParser::held_text`], or in
    /// the input's text when `in_text`.
    rec: std::ops::Range<usize>,
    in_text: bool,
    role: Role,
    ts: Option<i64>,
    /// An assistant line's usage snapshot.
    usage: Option<LineUsage>,
    /// The offloaded outputs its tool results name: (call id, path).
    offloads: Vec<(String, String)>,
    /// A compaction's text: the boundary's token count, the summary; a
    /// queued prompt's text.
    summary: Option<String>,
    /// The walk of `rec`, when the one-pass reader took it.
    tape: Option<crate::dialect::tape::Tape>,
}

/// One assistant line's usage snapshot, keyed by its message.
struct LineUsage {
    /// `message.id`, else `requestId`; `None` when the line has neither.
    id: Option<String>,
    usage: Usage,
    /// The line has a `stop_reason`: its output count is final.
    last: bool,
}

impl LineUsage {
    /// `usage` reads the message's `usage` object (from the line's walk
    /// when there is one; serde_json's answer either way).
    fn of<'a>(
        line: &Line<'a>,
        m: &Message<'a>,
        usage: impl FnOnce(&'a RawValue) -> Option<Usage>,
    ) -> Option<Self> {
        if line.ty.as_deref() != Some("assistant") {
            return None;
        }
        let id = m.id.as_deref().or(line.request_id.as_deref());
        let usage = m.usage.and_then(usage)?;
        Some(LineUsage {
            id: id.map(str::to_owned),
            usage,
            last: m.stop_reason.0.is_some(),
        })
    }
}

/// The messages whose usage was counted already (a repeated line adds
/// nothing), remembered this many at a time.
const COUNTED_RING: usize = 64;

/// A record's uuid as a 64-bit key: foldhash's quality hash with a fixed
/// seed (the same keys every run). Two uuids share a key with odds of
/// about one in 2^64, as with the SipHash before it, at a fraction of its
/// cost (docs/performance.md, "Uuid keys").
fn key(s: &str) -> u64 {
    const KEYS: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0);
    KEYS.hash_one(s)
}

/// The sets of [`key`]s hash them as they are: a key is a hash of its
/// uuid already, and hashing it again cost a hash per look-up, two or
/// three of them a line.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, k: u64) {
        self.0 = k;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed with it; anything else still spreads.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
}

type Keys = HashSet<u64, BuildHasherDefault<KeyHasher>>;

// Finders built once: `memmem::find` builds one per call, which cost more
// than the search on these short texts (docs/performance.md, "Dates read
// in place").
static FIND_TOOL_RESULT: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"\"tool_result\""));
static FIND_STUB: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(offload::STUB_OPEN.as_bytes()));
static FIND_PERSISTED: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(b"persistedOutputPath"));

/// Parser state for one transcript file.
#[derive(Default)]
pub struct ClaudeProjectParser {
    inner: ClaudeParser,
    /// The session began (its `session_started` went out).
    started: bool,
    /// The file is a sub-agent's (its first chain record is a sidechain).
    sidechain_file: Option<bool>,
    session_id: Option<String>,
    cwd: Option<String>,
    permission_mode: Option<String>,
    model: Option<String>,
    start_ts: Option<i64>,
    last_ts: Option<i64>,
    /// The turn held back: its records, their uuids, and the parent of the
    /// prompt that began it.
    held: Vec<Held>,
    /// The held records' text, one after another: a turn's lines are
    /// copied into one buffer that keeps its capacity from turn to turn,
    /// rather than each into an allocation of its own.
    held_text: String,
    /// The input's whole text, when it was read whole ([`Parser::set_text`]):
    /// a record that lies in it is held as its place there, not copied.
    text: Option<crate::input::WholeText>,
    /// `tape` is the walk of the record `parse` is handed next
    /// (`parse_checked` walked it).
    walked: bool,
    /// Walks the held records no longer need, for the next lines' walks
    /// (a walk handed on is moved, not copied, and its buffers reused).
    spare_tapes: Vec<crate::dialect::tape::Tape>,
    held_bytes: usize,
    held_uuids: Keys,
    held_parent: Option<u64>,
    /// Parents of the prompts of turns already written: a prompt that
    /// attaches to one of them rewinds past output already written.
    written_tails: Keys,
    cur: Option<MsgUsage>,
    counted: Vec<String>,
    total: Usage,
    messages: u64,
    without_output: u64,
    /// Messages whose lines had no id to count them by.
    without_id: u64,
    /// The transcript's file, where its offloaded tool results are looked
    /// for (`None` for standard input).
    source: Option<PathBuf>,
    /// A sub-agent's file: its parent's session id, its `agentId` and its
    /// first prompt (what links it to the call that spawned it).
    subagent: Option<(String, Option<String>, Option<String>)>,
    /// A queued prompt a `queue-operation` `remove` took out of the queue,
    /// and when: a prompt, unless the `queued_command` attachment that
    /// delivers it (2.1.10x on) comes next.
    removed: Option<(String, Option<i64>)>,
    /// The last `ai-title` and `custom-title` read so far.
    ai_title: Option<String>,
    custom_title: Option<String>,
    /// Figures only: the title the session's start gave, when a title
    /// written later is told the sink after the turns instead of looked
    /// for by a second read of the file ([`Item::Title`]).
    title_given: Option<Option<String>>,
    /// The current line's walk.
    tape: crate::dialect::tape::Tape,
    /// The buffers of this thread's last reader were taken up.
    pooled: bool,
}

/// Buffers a transcript reader leaves to the next one on its thread. A
/// reader is made for each file and most transcripts are a few dozen
/// lines: buffers grown anew for every file cost about as many
/// allocations as the file has lines.
#[derive(Default)]
struct Pool {
    text: String,
    tapes: Vec<crate::dialect::tape::Tape>,
}

thread_local! {
    static POOL: std::cell::RefCell<Pool> = std::cell::RefCell::default();
}

/// Walks kept for reuse at most, and the held text's largest capacity kept.
const SPARE_TAPES: usize = 64;
const POOL_TEXT: usize = 1024 * 1024;

impl Drop for ClaudeProjectParser {
    fn drop(&mut self) {
        if !self.pooled {
            return;
        }
        let mut text = std::mem::take(&mut self.held_text);
        let mut tapes = std::mem::take(&mut self.spare_tapes);
        tapes.push(std::mem::take(&mut self.tape));
        tapes.retain(crate::dialect::tape::Tape::small);
        tapes.truncate(SPARE_TAPES);
        text.clear();
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            if text.capacity() <= POOL_TEXT {
                p.text = text;
            }
            p.tapes = tapes;
        });
    }
}

/// What a record is, for the chain and for usage.
#[derive(Clone, Copy)]
enum Role {
    /// A prompt the user typed: a turn begins.
    Prompt,
    /// Part of the conversation, read by the stream reader.
    Conversation,
    /// The summary of a compaction.
    CompactSummary,
    /// A prompt typed while the agent worked, where the agent took it in
    /// (its text in [`Held::summary`]): it does not begin a turn of the
    /// chain, it is part of the one it came in.
    Queued,
    /// `system`/`compact_boundary`.
    CompactBoundary,
    /// Bookkeeping: nothing to show.
    Skip,
    /// A record this reader does not understand (a type it does not know, a
    /// `user` line without a readable message): kept as `unknown`.
    Unknown,
}

impl ClaudeProjectParser {
    fn role(line: &Line<'_>, msg: Option<&Message<'_>>) -> Role {
        match (line.ty.as_deref(), line.subtype.as_deref()) {
            (Some("assistant"), _) => Role::Conversation,
            (Some("user"), _) => {
                if line.is_compact_summary.0 == Some(true) {
                    return Role::CompactSummary;
                }
                if line.is_meta.0 == Some(true) {
                    return Role::Skip;
                }
                let Some(content) = msg.and_then(|m| m.content) else {
                    // No message, or one that is not a message: nothing
                    // this reader can show, and it says so.
                    return Role::Unknown;
                };
                // A line of tool results continues the turn, and so does a
                // user line that is not a prompt (a command's echo or
                // output, an interruption, a caveat, reminders: the stream
                // reader shows it as a `user_event`); the rest (a string,
                // text blocks, a prompt with an image) was typed by the user.
                if raw_as_str(content).is_none()
                    && FIND_TOOL_RESULT.find(content.get().as_bytes()).is_some()
                {
                    return Role::Conversation;
                }
                match compact_text(content) {
                    Some(t) if user_text(&t) != UserText::Prompt => Role::Conversation,
                    _ => Role::Prompt,
                }
            }
            (Some("system"), Some("compact_boundary")) => Role::CompactBoundary,
            (Some("attachment"), _) if queued_prompt(line).is_some() => Role::Queued,
            // The chain's bookkeeping: hook progress, local command output,
            // other attachments, turn durations, API errors.
            (Some("system" | "attachment" | "progress"), _) => Role::Skip,
            _ => Role::Unknown,
        }
    }

    /// The buffers of the thread's last transcript (its held text, its
    /// walks), taken once.
    fn take_pool(&mut self) {
        if self.pooled {
            return;
        }
        self.pooled = true;
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            self.held_text = std::mem::take(&mut p.text);
            self.spare_tapes = std::mem::take(&mut p.tapes);
        });
        if let Some(t) = self.spare_tapes.pop() {
            self.tape = t;
        }
    }

    /// Where a record is held: its place in the input's text when it is a
    /// slice of it (`true`), else in the held text, copied there.
    fn hold_text(&mut self, rec: &str) -> (std::ops::Range<usize>, bool) {
        if let Some(text) = &self.text
            && let Some(from) = (rec.as_ptr() as usize).checked_sub(text.as_ptr() as usize)
            && from + rec.len() <= text.len()
        {
            return (from..from + rec.len(), true);
        }
        let from = self.held_text.len();
        self.held_text.push_str(rec);
        (from..self.held_text.len(), false)
    }

    /// The records of the input's text that are held, copied into the held
    /// text: the text is let go of.
    fn detach_text(&mut self) {
        let Some(text) = self.text.take() else {
            return;
        };
        for h in self.held.iter_mut().filter(|h| h.in_text) {
            let rec = held_rec(h, &self.held_text, Some(&text[..]));
            let from = self.held_text.len();
            let rec = rec.to_owned();
            self.held_text.push_str(&rec);
            h.rec = from..self.held_text.len();
            h.in_text = false;
        }
    }

    /// Hold a queued prompt in the turn it came in.
    fn hold_queued(&mut self, text: String, ts: Option<i64>) {
        self.held_bytes += text.len();
        self.held.push(Held {
            rec: 0..0,
            in_text: false,
            role: Role::Queued,
            ts,
            usage: None,
            offloads: Vec::new(),
            summary: Some(text),
            tape: None,
        });
    }

    /// Write the held turn out.
    fn flush<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if let Some(p) = self.held_parent.take() {
            self.written_tails.insert(p);
        }
        self.held_uuids.clear();
        self.held_bytes = 0;
        let mut held = std::mem::take(&mut self.held);
        let text = std::mem::take(&mut self.held_text);
        let input = self.text.clone();
        for h in &mut held {
            let rec = held_rec(h, &text, input.as_deref());
            self.emit(h, rec, &mut |i| out(i.into_owned()))?;
        }
        self.recycle(held, text);
        Ok(())
    }

    /// Keep the buffers of a turn written out or dropped for the next.
    fn recycle(&mut self, mut held: Vec<Held>, mut text: String) {
        for h in held.drain(..) {
            if let Some(t) = h.tape
                && self.spare_tapes.len() < SPARE_TAPES
            {
                self.spare_tapes.push(t);
            }
        }
        // A turn let go early for its size leaves no buffer that large.
        if text.capacity() <= HOLD_BYTES {
            text.clear();
            self.held_text = text;
        }
        if self.held.capacity() == 0 {
            self.held = held;
        }
    }

    /// Drop the held turn: a later prompt replaced it. Its messages were
    /// still sent to the model and billed, so their usage counts.
    fn abandon<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        let text = std::mem::take(&mut self.held_text);
        let input = self.text.clone();
        for h in &held {
            if let Some(u) = &h.usage {
                self.open(out)?;
                self.usage_line(u, h.ts, &mut |i| out(i.into_owned()))?;
            }
            if matches!(h.role, Role::Unknown) {
                // Not understood is not dropped, rewound or not.
                self.open(out)?;
                let rec = held_rec(h, &text, input.as_deref());
                keep_unknown(rec, &mut |i| out(i.into_owned()))?;
            }
        }
        self.recycle(held, text);
        self.held_uuids.clear();
        self.held_bytes = 0;
        self.held_parent = None;
        Ok(())
    }

    fn open<'a>(&mut self, out: Out<'_, 'a>) -> io::Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        // A sub-agent's file links to its parent session and, when the
        // parent's transcript is beside it, to the call that spawned it:
        // no figure is made of that call, so a read for the figures does
        // not look through the parent's file for it.
        let lean = self.inner.lean;
        let parent = self.subagent.as_ref().map(|(sid, agent, prompt)| {
            let call = self.source.as_deref().filter(|_| !lean).and_then(|src| {
                super::subagent::spawning_call(src, sid, agent.as_deref(), prompt.as_deref())
            });
            SessionParent::subagent(Cow::Owned(sid.clone()), call.map(Cow::Owned))
        });
        // The title may be written after the turns that come before it:
        // the file, when there is one, is looked through for the last. A
        // sink that reads the figures takes a later title at the end
        // instead, which spares reading the file twice.
        if self.inner.lean {
            self.title_given = self
                .source
                .is_some()
                .then(|| self.custom_title.clone().or_else(|| self.ai_title.clone()));
        } else if let Some(found) = match (&self.text, self.source.as_deref()) {
            // The file read whole already: looked through where it lies.
            (Some(text), _) => Some(titles_of(text)),
            (None, Some(src)) => titles_in(src),
            (None, None) => None,
        } {
            self.ai_title = found.ai.or(self.ai_title.take());
            self.custom_title = found.custom.or(self.custom_title.take());
        }
        let title = self.custom_title.clone().or_else(|| self.ai_title.clone());
        out(crate::dialect::common::saved_session_started(
            self.start_ts,
            NAME,
            &self.session_id,
            &self.model,
            &self.cwd,
            &self.permission_mode,
            &title,
            parent,
        ))
    }

    /// Turn one held record of the conversation into items.
    fn emit<'a>(&mut self, h: &'a mut Held, rec: &'a str, out: Out<'_, 'a>) -> io::Result<()> {
        if matches!(h.role, Role::Skip) {
            return Ok(());
        }
        self.open(out)?;
        let ts = h.ts;
        if matches!(h.role, Role::Prompt | Role::Conversation)
            && let Some(t) = h.tape.as_mut()
        {
            // The line's walk goes to the stream reader (its own, of the
            // line before, comes back to be reused), with its timestamp.
            self.inner.preset(t, ts);
        }
        let h: &'a Held = h;
        match h.role {
            Role::Unknown => {
                keep_unknown(rec, out)?;
            }
            Role::CompactBoundary | Role::CompactSummary => {
                let phase = if matches!(h.role, Role::CompactBoundary) {
                    SummaryPhase::Started
                } else {
                    SummaryPhase::Completed
                };
                out(Item::Event(Event::at(
                    ts,
                    Kind::Summary {
                        phase,
                        text: h.summary.as_deref().map(Cow::Borrowed),
                    },
                )))?;
            }
            Role::Queued => {
                let text = h.summary.as_deref().unwrap_or_default();
                out(Item::Event(Event::at(
                    ts,
                    Kind::UserMessage {
                        text: Cow::Borrowed(text),
                    },
                )))?;
            }
            Role::Prompt | Role::Conversation => {
                if let Some(u) = &h.usage {
                    self.usage_line(u, ts, out)?;
                }
                let mut saved = self.saved_outputs(&h.offloads);
                // The stream reader's own usage snapshots would count the
                // placeholders: usage is counted here instead, and they are
                // dropped below (or not made, [`Parser::set_reads`]).
                self.inner.parse(rec, &mut |i| match i {
                    Item::UsageTotal { .. } | Item::IdHint(_) => Ok(()),
                    Item::Event(mut ev) => {
                        if let Kind::ToolCallCompleted(end) = &mut ev.kind
                            && let Some(at) = saved.iter().position(|(id, _)| *id == end.call_id)
                        {
                            let (_, text) = saved.swap_remove(at);
                            // The model-visible output: a shell's output,
                            // another tool's result.
                            if end.tool_name == "shell" {
                                end.output = Some(Text::from(text));
                            } else {
                                end.result = Some(Json::assembled(crate::json::quote(&text)));
                            }
                        }
                        out(Item::Event(ev))
                    }
                    i => out(i),
                })?;
            }
            Role::Skip => {}
        }
        Ok(())
    }

    /// The text a compaction record shows: the boundary's token count, or
    /// the summary Claude Code wrote for itself.
    fn summary_text(role: Role, line: &Line<'_>, msg: Option<&Message<'_>>) -> Option<String> {
        match role {
            Role::CompactBoundary => line
                .compact_metadata
                .and_then(Members::of)
                .and_then(|m| m.int("preTokens"))
                .map(|n| format!("compacted from {n} tokens")),
            Role::CompactSummary => msg
                .and_then(|m| m.content)
                .and_then(compact_text)
                .map(Cow::into_owned),
            Role::Queued => queued_prompt(line),
            _ => None,
        }
    }

    /// The offloaded outputs a `user` line's tool results refer to, by call
    /// id, each with the saved file it is in (or the places it was looked
    /// for). Only a line holding a stub is looked at.
    fn offloads<'a>(line: &Line<'a>, msg: Option<&Message<'a>>) -> Vec<(String, String)> {
        if line.ty.as_deref() != Some("user") {
            return Vec::new();
        }
        let Some(content) = msg.and_then(|m| m.content) else {
            return Vec::new();
        };
        if FIND_STUB.find(content.get().as_bytes()).is_none()
            && line
                .tool_use_result
                .is_none_or(|t| FIND_PERSISTED.find(t.get().as_bytes()).is_none())
        {
            return Vec::new();
        }
        #[derive(Deserialize)]
        struct ResultBlock<'a> {
            #[serde(rename = "type", borrow, default)]
            ty: LaxStr<'a>,
            #[serde(borrow, default)]
            tool_use_id: LaxStr<'a>,
            #[serde(borrow, default)]
            content: Option<&'a RawValue>,
        }
        let blocks: Vec<ResultBlock> = serde_json::from_str(content.get()).unwrap_or_default();
        let results: Vec<&ResultBlock> = blocks
            .iter()
            .filter(|b| b.ty.as_deref() == Some("tool_result"))
            .collect();
        // Bash's own object names the file too; it belongs to the line's
        // only result.
        let own = line
            .tool_use_result
            .and_then(Members::of)
            .and_then(|m| m.str("persistedOutputPath").map(Cow::into_owned));
        let mut found = Vec::new();
        for b in &results {
            let Some(id) = b.tool_use_id.as_deref() else {
                continue;
            };
            let text = b.content.and_then(compact_text);
            let from_stub = text
                .as_deref()
                .and_then(offload::stub_path)
                .map(str::to_owned);
            let path = from_stub.or_else(|| (results.len() == 1).then(|| own.clone()).flatten());
            if let Some(p) = path {
                found.push((id.to_owned(), p));
            }
        }
        found
    }

    /// Where the saved output `path` (as a record names it) is beside this
    /// transcript: `Ok` with the file, or `Err` with the places looked at.
    fn locate(&self, path: &str) -> Result<PathBuf, Vec<PathBuf>> {
        let (Some(src), Some(r)) = (self.source.as_deref(), offload::path_reference(path)) else {
            return Err(Vec::new());
        };
        let places = offload::candidates(src, &r);
        match places.iter().find(|p| p.is_file()) {
            Some(p) => Ok(p.clone()),
            None => Err(places),
        }
    }

    /// A warning for each offloaded output of this line that is not there
    /// (said when the line is read, so that it names the line).
    fn check_offloads<'a>(
        &self,
        offloads: &[(String, String)],
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        for (id, path) in offloads {
            let Err(places) = self.locate(path) else {
                continue;
            };
            let where_ = match (&self.source, places.first()) {
                (None, _) => "standard input has no folder beside it to look in".to_owned(),
                (Some(_), Some(p)) => format!("{} is missing", p.display()),
                (Some(_), None) => "the path is not a tool-results file".to_owned(),
            };
            out(Item::Warning(Cow::Owned(format!(
                "the output of tool call {id} was saved to {path}, but {where_}: \
                 showing the preview the transcript holds"
            ))))?;
        }
        Ok(())
    }

    /// The saved outputs of a line's tool results that are there, read
    /// (bounded), by call id.
    fn saved_outputs(&self, offloads: &[(String, String)]) -> Vec<(String, String)> {
        offloads
            .iter()
            .filter_map(|(id, path)| {
                let file = self.locate(path).ok()?;
                Some((id.clone(), offload::read_bounded(&file).ok()?))
            })
            .collect()
    }

    /// One assistant line's usage: counted once per message, its output only
    /// when the line is the message's last (it has a `stop_reason`).
    fn usage_line<'a>(
        &mut self,
        u: &LineUsage,
        ts: Option<i64>,
        out: Out<'_, 'a>,
    ) -> io::Result<()> {
        // A line without an id is counted all the same (its tokens were
        // spent): lines that follow one another with the same input and
        // cache counts are one message's blocks (each repeats the message's
        // usage), as the ids would have said.
        let anon;
        let id = match &u.id {
            Some(id) => id.as_str(),
            None => {
                anon = match &self.cur {
                    Some(c) if c.anonymous && same_input(&c.base, &u.usage) => c.id.clone(),
                    _ => {
                        self.without_id += 1;
                        // NUL: no real id has one.
                        format!("\0line {}", self.without_id)
                    }
                };
                anon.as_str()
            }
        };
        if self.counted.iter().any(|c| c == id) {
            return Ok(());
        }
        match &mut self.cur {
            Some(c) if c.id == id => {
                if u.last {
                    c.output = Some(u.usage.output);
                }
                c.largest = c.largest.max(u.usage.output);
            }
            _ => {
                self.settle(ts, out)?;
                self.cur = Some(MsgUsage {
                    id: id.to_owned(),
                    anonymous: u.id.is_none(),
                    base: u.usage,
                    output: u.last.then_some(u.usage.output),
                    largest: u.usage.output,
                });
            }
        }
        if u.last {
            self.settle(ts, out)?;
        }
        Ok(())
    }

    /// Count the message in progress.
    fn settle<'a>(&mut self, ts: Option<i64>, out: Out<'_, 'a>) -> io::Result<()> {
        let Some(c) = self.cur.take() else {
            return Ok(());
        };
        self.messages += 1;
        // Without a line that has a `stop_reason`, a count that grew past
        // the first line's came from the model's usage update, not from the
        // streaming placeholder every line starts with: the best count the
        // file holds. One that never grew is the placeholder: not counted.
        let (output, output_incomplete) = match c.output {
            Some(o) => (o, false),
            None if c.largest > c.base.output => (c.largest, false),
            None => {
                self.without_output += 1;
                // Unknown, not zero: the total says it lacks this count.
                (0, true)
            }
        };
        self.total = self.total.add(&Usage {
            output,
            output_incomplete,
            ..c.base
        });
        if self.counted.len() >= COUNTED_RING {
            self.counted.remove(0);
        }
        self.counted.push(c.id);
        out(Item::UsageTotal {
            ts,
            usage: self.total,
        })
    }
}

/// The prompt of a `queued_command` attachment typed by the user (not a task
/// notification or another agent's message): its text, or its text blocks
/// (an image pasted while queued leaves its text).
fn queued_prompt(line: &Line<'_>) -> Option<String> {
    if line.ty.as_deref() != Some("attachment") {
        return None;
    }
    let a = line.attachment.and_then(Members::of)?;
    if a.str("type").as_deref() != Some("queued_command") {
        return None;
    }
    if a.str("commandMode").is_some_and(|m| m != "prompt") {
        return None;
    }
    let origin = a.get("origin").and_then(Members::of);
    if origin
        .and_then(|o| o.str("kind").map(Cow::into_owned))
        .is_some_and(|k| k != "human")
    {
        return None;
    }
    let text = compact_text(a.get("prompt")?)?;
    (!text.trim().is_empty()).then(|| text.into_owned())
}

/// The last `ai-title` and `custom-title` of the transcript at `path`
/// (`None` when it cannot be read). Only lines naming one are parsed.
fn titles_in(path: &Path) -> Option<LastTitles> {
    use std::io::Read;
    const CHUNK: usize = 256 * 1024;
    let mut file = std::fs::File::open(path).ok()?;
    let mut titles = Titles::new();
    // This reads the whole file again, in large chunks. `buf[..have]` is
    // read and not yet looked at; it starts at a line's start. Zeroed
    // once, and no larger than the file (most are far smaller than a
    // chunk): a line longer than it doubles it.
    let size = file.metadata().map_or(CHUNK, |m| {
        usize::try_from(m.len()).map_or(CHUNK, |n| n.saturating_add(1))
    });
    let mut buf = vec![0u8; size.clamp(1, CHUNK)];
    let mut have = 0;
    loop {
        if have == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = loop {
            match file.read(&mut buf[have..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => break r.ok()?,
            }
        };
        have += n;
        // The whole lines read so far (the rest, at the end of the file).
        let end = match (n, memchr::memrchr(b'\n', &buf[..have])) {
            (0, _) => have,
            (_, Some(i)) => i + 1,
            (_, None) => continue,
        };
        titles.scan(&buf[..end]);
        buf.copy_within(end..have, 0);
        have -= end;
        if n == 0 {
            break;
        }
    }
    Some(titles.last)
}

/// [`titles_in`] of a transcript read whole already (`text`): the file is
/// not opened and read a second time, which for a tree of small
/// transcripts cost an open, a read and a zeroed buffer each
/// (docs/performance.md, "Titles from the text read").
fn titles_of(text: &[u8]) -> LastTitles {
    let mut titles = Titles::new();
    titles.scan(text);
    titles.last
}

/// The last `ai-title` and `custom-title` of a transcript (`None`: it has
/// none of that type).
#[derive(Debug, Clone, Default, PartialEq)]
struct LastTitles {
    ai: Option<String>,
    custom: Option<String>,
}

/// The last titles of a transcript's lines seen so far.
struct Titles {
    last: LastTitles,
    /// The one needle both types end with (`"ai-title"`,
    /// `"custom-title"`): only the lines holding it are split out and
    /// parsed.
    needle: memchr::memmem::Finder<'static>,
}

impl Titles {
    fn new() -> Titles {
        Titles {
            last: LastTitles::default(),
            needle: memchr::memmem::Finder::new(b"-title\""),
        }
    }

    /// The lines of `lines` (each whole; the last may lack its newline).
    fn scan(&mut self, lines: &[u8]) {
        let end = lines.len();
        // `from` is always at the start of a line.
        let mut from = 0;
        while let Some(k) = self.needle.find(&lines[from..end]) {
            let at = from + k;
            let start = memchr::memrchr(b'\n', &lines[from..at]).map_or(from, |i| from + i + 1);
            let stop = memchr::memchr(b'\n', &lines[at..end]).map_or(end, |i| at + i);
            self.take(&lines[start..stop]);
            from = (stop + 1).min(end);
        }
    }

    fn take(&mut self, line: &[u8]) {
        let Ok(l) = serde_json::from_slice::<Line<'_>>(line) else {
            return;
        };
        let keep = |t: LaxStr<'_>| {
            t.as_deref()
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned)
        };
        match l.ty.as_deref() {
            Some("ai-title") => self.last.ai = keep(l.ai_title).or(self.last.ai.take()),
            Some("custom-title") => {
                self.last.custom = keep(l.custom_title).or(self.last.custom.take());
            }
            _ => {}
        }
    }
}

/// The input and cache counts agree: the same message's lines.
fn same_input(a: &Usage, b: &Usage) -> bool {
    a.input == b.input && a.cache_read == b.cache_read && a.cache_write == b.cache_write
}

/// The text of a compaction summary's content (a string, or text blocks).
fn compact_text(raw: &RawValue) -> Option<Cow<'_, str>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s);
    }
    #[derive(Deserialize)]
    struct B<'a> {
        #[serde(borrow, default)]
        text: LaxStr<'a>,
    }
    let blocks: Vec<B> = serde_json::from_str(raw.get()).ok()?;
    let mut s = String::new();
    for b in blocks {
        if let Some(t) = b.text.as_deref() {
            s.push_str(t);
        }
    }
    Some(Cow::Owned(s))
}

impl Parser for ClaudeProjectParser {
    fn counts_drift(&self) -> bool {
        // Records are held with their turn: counted when read.
        true
    }

    fn reads_checked(&self) -> bool {
        true
    }

    fn parse_checked<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Option<Parsed>> {
        // The walk of a line for the figures checks every escape of it and
        // refuses surrogate escapes, paired or not (quotes.rs), which is all
        // the framer's own pass looks for: a line it takes needs no repair.
        // One it refuses is repaired and handed to `parse`, which walks it
        // again (a rare line: nothing of it was kept).
        // The walk reads `str`: the record is validated first, once.
        let Ok(rec) = simdutf8::basic::from_utf8(rec) else {
            return Ok(None);
        };
        self.take_pool();
        if !self.tape.build(rec) {
            return Ok(None);
        }
        self.walked = true;
        self.parse(rec, out).map(Some)
    }

    fn parse<'a>(&mut self, rec: &'a str, out: Out<'_, 'a>) -> io::Result<Parsed> {
        // One walk of the line, which the stream reader reads it from again
        // when its turn is written.
        let base = rec.as_ptr() as usize;
        self.take_pool();
        let walked = std::mem::take(&mut self.walked) || self.tape.build(rec);
        let fast = if walked {
            self.tape.read::<Line<'a>>(base, rec)
        } else {
            None
        };
        let taped = fast.is_some();
        let line: Line<'a> = match fast.map_or_else(|| read_line(rec, out), |l| Ok(Ok(l)))? {
            Ok(l) => l,
            Err(Parsed::Done) => {
                // Kept as unknown now; counted here, as this reader does.
                out(Item::NotUnderstood(Cow::Owned(
                    crate::dialect::record_kind(rec),
                )))?;
                return Ok(Parsed::Done);
            }
            Err(done) => return Ok(done),
        };
        let ts = line.timestamp.as_deref().and_then(iso_ms);
        if line.ty.as_deref() == Some("queue-operation") {
            // The queue of prompts typed while the agent worked: `enqueue`
            // then, when idle, `dequeue` and the prompt's own `user` line;
            // mid-turn, `remove` and (2.1.10x on) a `queued_command`
            // attachment where the agent took it in. A `remove` is the
            // prompt only when no attachment delivers it; one that emptied
            // the queue because the agent stopped delivered nothing.
            if line.operation.as_deref() == Some("remove")
                && line.reason.as_deref() != Some("agent_stopped")
                && let Some(text) = line.content.and_then(compact_text)
                && !text.trim().is_empty()
            {
                if let Some((t, at)) = self.removed.take() {
                    self.hold_queued(t, at);
                }
                self.removed = Some((text.into_owned(), ts));
            }
            return Ok(Parsed::Done);
        }
        if let Some((text, at)) = self.removed.take()
            && queued_prompt(&line).as_deref() != Some(text.as_str())
        {
            self.hold_queued(text, at);
        }
        match line.ty.as_deref() {
            // The session's title: Claude Code's own, or the user's
            // (`/rename`), which wins; the last of each counts.
            Some("ai-title") => {
                if let Some(t) = line.ai_title.as_deref().filter(|t| !t.trim().is_empty()) {
                    self.ai_title = Some(t.to_owned());
                }
                return Ok(Parsed::Done);
            }
            Some("custom-title") => {
                if let Some(t) = line
                    .custom_title
                    .as_deref()
                    .filter(|t| !t.trim().is_empty())
                {
                    self.custom_title = Some(t.to_owned());
                }
                return Ok(Parsed::Done);
            }
            Some("permission-mode") => {
                if self.permission_mode.is_none() {
                    self.permission_mode = line.permission_mode.as_deref().map(str::to_owned);
                }
                return Ok(Parsed::Done);
            }
            // Session metadata with nothing the events carry: the sub-agent
            // or session name (the custom title again), the last prompt
            // (repeated from its own line), the input mode, a pull request
            // the session linked; and the older bookkeeping, not part of
            // the chain: summaries of other sessions, file snapshots.
            Some(
                "agent-name"
                | "last-prompt"
                | "mode"
                | "pr-link"
                | "summary"
                | "file-history-snapshot",
            ) => return Ok(Parsed::Done),
            _ => {}
        }
        let Some(uuid) = line.uuid.as_deref() else {
            // Not a record of the chain, nor one of the metadata above:
            // counted now, at its line, though written with its turn.
            out(Item::NotUnderstood(Cow::Owned(
                crate::dialect::record_kind(rec),
            )))?;
            self.held_bytes += rec.len();
            let (rec, in_text) = self.hold_text(rec);
            self.held.push(Held {
                rec,
                in_text,
                role: Role::Unknown,
                ts,
                usage: None,
                offloads: Vec::new(),
                summary: None,
                tape: None,
            });
            return Ok(Parsed::Done);
        };
        let sidechain = line.is_sidechain.0 == Some(true);
        let file_is_sidechain = *self.sidechain_file.get_or_insert(sidechain);
        if sidechain && !file_is_sidechain {
            return Ok(Parsed::Done);
        }
        if self.session_id.is_none()
            && let Some(sid) = line.session_id.as_deref()
        {
            self.session_id = Some(match (file_is_sidechain, line.agent_id.as_deref()) {
                (true, Some(a)) => format!("{sid}/agent-{a}"),
                (true, None) => format!("{sid}/sidechain"),
                _ => sid.to_owned(),
            });
            if file_is_sidechain {
                let agent = line.agent_id.as_deref().map(str::to_owned);
                self.subagent = Some((sid.to_owned(), agent, None));
            }
        }
        if self.start_ts.is_none() {
            self.start_ts = ts;
        }
        if ts.is_some() {
            self.last_ts = ts;
        }
        if self.cwd.is_none() {
            self.cwd = line.cwd.as_deref().map(str::to_owned);
        }
        if self.permission_mode.is_none() {
            self.permission_mode = line.permission_mode.as_deref().map(str::to_owned);
        }
        let msg = line.message.and_then(|m| {
            taped
                .then(|| self.tape.read::<Message<'a>>(base, m.get()))
                .flatten()
                .or_else(|| serde_json::from_str::<Message<'a>>(m.get()).ok())
        });
        if let Some((_, _, prompt @ None)) = &mut self.subagent
            && line.ty.as_deref() == Some("user")
            && let Some(text) = msg.as_ref().and_then(|m| m.content).and_then(raw_as_str)
        {
            *prompt = Some(text.into_owned());
        }
        if self.model.is_none()
            && line.ty.as_deref() == Some("assistant")
            && let Some(m) = msg.as_ref().and_then(|m| m.model.as_deref())
            // Claude Code's own notices are written as messages of a
            // `<synthetic>` model.
            && m != "<synthetic>"
        {
            self.model = Some(m.to_owned());
        }
        let id = key(uuid);
        if self.held_uuids.contains(&id) {
            // The same record written again: once is enough.
            return Ok(Parsed::Done);
        }
        let parent = line.parent_uuid.as_deref().map(key);
        let role = Self::role(&line, msg.as_ref());
        let offloads = if matches!(role, Role::Conversation | Role::Prompt) {
            Self::offloads(&line, msg.as_ref())
        } else {
            Vec::new()
        };
        self.check_offloads(&offloads, out)?;
        let new_turn = matches!(role, Role::Prompt | Role::CompactBoundary) || parent.is_none();
        if new_turn {
            match parent {
                Some(p) if self.held_uuids.contains(&p) => self.flush(out)?,
                Some(p) if Some(p) == self.held_parent && !self.held.is_empty() => {
                    // The prompt replaces the held turn's prompt: a rewind.
                    self.abandon(out)?;
                }
                Some(p) if self.written_tails.contains(&p) => {
                    // A rewind past what was written already: say so.
                    self.abandon(out)?;
                    self.open(out)?;
                    out(Item::Event(Event::at(
                        line.timestamp.as_deref().and_then(iso_ms),
                        Kind::Error {
                            message: Cow::Borrowed(
                                "the conversation was rewound to an earlier prompt; \
                                 turns written above this point were abandoned",
                            ),
                            fatal: false,
                            source: Some(Cow::Borrowed("rewind")),
                        },
                    )))?;
                }
                _ => self.flush(out)?,
            }
            self.held_parent = parent;
        }
        self.held_uuids.insert(id);
        if !matches!(role, Role::Skip) {
            // Bookkeeping in the chain (hook progress, local commands) is
            // only a link: its uuid is kept, its text is not.
            self.held_bytes += rec.len();
            // The usage object from the line's walk, not parsed again.
            let tape = &self.tape;
            let usage = msg.as_ref().and_then(|m| {
                LineUsage::of(&line, m, |u| {
                    // The counts as a struct; the members when that read
                    // fails (a name given twice: the first counts).
                    let counts = taped
                        .then(|| tape.read::<AnthropicCounts<'a>>(base, u.get()))
                        .flatten()
                        .or_else(|| serde_json::from_str(u.get()).ok());
                    anthropic_usage_read(counts, || {
                        taped
                            .then(|| tape.read::<Members<'a>>(base, u.get()))
                            .flatten()
                            .or_else(|| Members::of(u))
                    })
                })
            });
            let summary = Self::summary_text(role, &line, msg.as_ref());
            if matches!(role, Role::Unknown) {
                out(Item::NotUnderstood(Cow::Owned(
                    crate::dialect::record_kind(rec),
                )))?;
            }
            let tape = taped.then(|| {
                let spare = self.spare_tapes.pop().unwrap_or_default();
                std::mem::replace(&mut self.tape, spare)
            });
            let (rec, in_text) = self.hold_text(rec);
            self.held.push(Held {
                rec,
                in_text,
                role,
                ts,
                usage,
                offloads,
                summary,
                tape,
            });
        }
        if self.held_bytes > HOLD_BYTES {
            self.flush(out)?;
        }
        Ok(Parsed::Done)
    }

    fn set_source(&mut self, path: &Path) {
        self.source = Some(path.to_path_buf());
    }

    fn set_text(&mut self, text: Option<crate::input::WholeText>) {
        // Records held from the text before stay readable.
        self.detach_text();
        self.text = text;
    }

    fn set_reads(&mut self, reads: Reads) {
        self.inner.set_reads(reads);
        // For the figures alone the stream reader need not work its usage
        // snapshots out, which this reader drops: only the turn ends'
        // usage, which no figure reads, is made of them.
        self.inner.usage_elsewhere = reads == Reads::Figures;
    }

    fn finish(&mut self, out: Out<'_, 'static>) -> io::Result<()> {
        if let Some((text, at)) = self.removed.take() {
            self.hold_queued(text, at);
        }
        self.flush(out)?;
        if !self.started && self.session_id.is_none() {
            return self.inner.finish(out);
        }
        self.open(out)?;
        self.settle(None, out)?;
        if self.without_output > 0 {
            let message = format!(
                "{} of {} messages were saved without their final output token count \
                 (only streaming placeholders): their output tokens are not counted",
                self.without_output, self.messages
            );
            out(Item::Event(Event::new(Kind::Error {
                message: Cow::Owned(message),
                fatal: false,
                source: Some(Cow::Borrowed("usage")),
            })))?;
        }
        if self.without_id > 0 {
            let n = self.without_id;
            let message = format!(
                "{n} {} no message id (nor requestId): each was counted once, taking \
                 consecutive lines with the same input and cache counts as one message's",
                if n == 1 {
                    "message had"
                } else {
                    "messages had"
                }
            );
            out(Item::Event(Event::new(Kind::Error {
                message: Cow::Owned(message),
                fatal: false,
                source: Some(Cow::Borrowed("usage")),
            })))?;
        }
        if let Some(given) = self.title_given.take() {
            let last = self.custom_title.take().or_else(|| self.ai_title.take());
            if let Some(t) = last.filter(|t| Some(t) != given.as_ref()) {
                out(Item::Title(Cow::Owned(t)))?;
            }
        }
        out(Item::Event(crate::dialect::common::file_result(
            self.start_ts,
            self.last_ts,
            Some(self.total),
        )))?;
        self.inner.finish(out)
    }
}

/// The text of the held record `h`: in `held` (the held text), or in
/// `input` (the input's text) when it is held there.
fn held_rec<'t>(h: &Held, held: &'t str, input: Option<&'t [u8]>) -> &'t str {
    match input {
        Some(input) if h.in_text => {
            let bytes = &input[h.rec.clone()];
            debug_assert!(std::str::from_utf8(bytes).is_ok());
            // SAFETY: these are the bytes of a `&str` the record was handed
            // as (`hold_text` found its address inside `input`), and the
            // input's text is not changed while it is shared
            // ([`Parser::set_text`]); a record held from another text was
            // copied before that text was let go of (`detach_text`).
            unsafe { std::str::from_utf8_unchecked(bytes) }
        }
        _ => &held[h.rec.clone()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parent call of the `session_started` of the sub-agent transcript
    /// `path` (a fixture), read whole and read for the figures.
    fn parents(path: &str) -> [Option<(String, Option<String>)>; 2] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let text = std::fs::read_to_string(&path).unwrap();
        [Reads::Whole, Reads::Figures].map(|reads| {
            let mut p = ClaudeProjectParser::default();
            p.set_source(&path);
            p.set_reads(reads);
            let mut parent = None;
            let mut take = |i: Item<'_>| {
                if let Item::Event(Event {
                    kind: Kind::SessionStarted(s),
                    ..
                }) = i
                {
                    let s = s.parent.expect("a sub-agent's start names its parent");
                    parent = Some((s.session_id.into_owned(), s.call_id.map(Cow::into_owned)));
                }
                Ok(())
            };
            for line in text.lines() {
                p.parse(line, &mut |i| take(i.into_owned())).unwrap();
            }
            p.finish(&mut |i| take(i)).unwrap();
            parent
        })
    }

    /// Every item of the transcript `bytes`, read with `reads`; the lines
    /// are slices of the input's text, which the parser is given
    /// ([`Parser::set_text`]) when `shared`, and let go of after `keep`
    /// lines.
    fn items(path: &Path, bytes: &[u8], reads: Reads, shared: bool, keep: usize) -> Vec<String> {
        let text = crate::input::WholeText::from(bytes.to_vec());
        let mut p = ClaudeProjectParser::default();
        // The file is there to look ahead in for the titles when the text
        // is not (both ways find the same: `titles_of_the_text_read_…`).
        p.set_source(path);
        p.set_reads(reads);
        if shared {
            p.set_text(Some(text.clone()));
        }
        let mut items = Vec::new();
        for (n, line) in text.split(|&b| b == b'\n').enumerate() {
            if n == keep {
                p.set_text(None);
            }
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            p.parse(line, &mut |i| {
                items.push(format!("{:?}", i.into_owned()));
                Ok(())
            })
            .unwrap();
        }
        p.set_text(None);
        p.finish(&mut |i| {
            items.push(format!("{i:?}"));
            Ok(())
        })
        .unwrap();
        items
    }

    /// The titles looked for in a transcript read whole are those its file
    /// gives when read again, over every transcript fixture and the real
    /// corpus, in a buffer that runs on past the text (as a reused one
    /// does: what lies past it is not read); the titles fixture's own are
    /// the last of each kind, though written after the turns.
    #[test]
    fn titles_of_the_text_read_are_the_files_own() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![root.join("fixtures/claude-project")];
        dirs.extend(crate::dialect::test_corpus("sessions/claude-code"));
        let (mut files, mut titled) = (0, 0);
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|x| x != "jsonl") {
                    continue;
                }
                let mut buf = std::fs::read(&path).unwrap();
                let len = buf.len();
                buf.extend_from_slice(
                    b"\n{\"type\":\"custom-title\",\"customTitle\":\"past the text\"}\n",
                );
                let text = crate::input::WholeText::new(buf, len);
                let of = titles_of(&text);
                assert_eq!(Some(of.clone()), titles_in(&path), "{}", path.display());
                files += 1;
                titled += usize::from(of != LastTitles::default());
            }
        }
        assert!(
            files >= 15 && titled >= 1,
            "{files} transcripts, {titled} titled"
        );
        let path = root.join(
            "fixtures/claude-project/metadata-records_titles_signature-only-thinking_unknown-lines_2.1.240.jsonl",
        );
        assert_eq!(
            titles_of(&std::fs::read(path).unwrap()),
            LastTitles {
                ai: Some("Checkout fails on empty cart".to_owned()),
                custom: Some("empty-cart checkout fix".to_owned())
            }
        );
    }

    /// Records held back as their places in the input's text give what
    /// copies of them give, also when the text is let go of while a turn
    /// is held (its records are copied then), over every transcript
    /// fixture (rewinds, unknown records, sub-agents, compactions) and
    /// both reads.
    #[test]
    fn records_held_in_the_input_text_read_as_copies() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![root.join("fixtures/claude-project")];
        dirs.extend(crate::dialect::test_corpus("sessions/claude-code"));
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() >= 15, "{} transcripts", files.len());
        let mut held = 0;
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let lines = bytes.split(|&b| b == b'\n').count();
            for reads in [Reads::Whole, Reads::Figures] {
                let copied = items(&path, &bytes, reads, false, usize::MAX);
                assert_eq!(
                    items(&path, &bytes, reads, true, usize::MAX),
                    copied,
                    "{path:?} {reads:?}"
                );
                for keep in [1, lines / 2, lines.saturating_sub(2)] {
                    assert_eq!(
                        items(&path, &bytes, reads, true, keep),
                        copied,
                        "{path:?} {reads:?}, let go of after {keep} lines"
                    );
                }
            }
            held += usize::from(!bytes.is_empty());
        }
        assert!(held >= 15);
    }

    /// A record is held as its place in the input's text only when it is a
    /// slice of that text.
    #[test]
    fn only_a_slice_of_the_input_text_is_held_in_place() {
        let text = crate::input::WholeText::from(b"{\"a\":1}\n{\"b\":2}".to_vec());
        let mut p = ClaudeProjectParser::default();
        p.set_text(Some(text.clone()));
        let second = std::str::from_utf8(&text[8..15]).unwrap();
        assert_eq!(p.hold_text(second), (8..15, true));
        let copy = second.to_owned();
        assert_eq!(p.hold_text(&copy), (0..7, false));
        // Past the end of the text (a slice of a longer buffer) is a copy.
        let longer = format!("{}{{}}", std::str::from_utf8(&text[..]).unwrap());
        assert_eq!(p.hold_text(&longer[8..17]), (7..16, false));
    }

    /// A read for the figures names a sub-agent's parent session but does
    /// not look through the parent's transcript for the spawning call,
    /// which a whole read finds (both layouts).
    #[test]
    fn a_read_for_the_figures_leaves_the_spawning_call_unknown() {
        for path in [
            "fixtures/claude-project/subagent-parent_task-agentid/subagents/agent-a7c41d2.jsonl",
            "fixtures/claude-project/older-subagent-layout/agent-9f3b2c1d.jsonl",
        ] {
            let [whole, lean] = parents(path);
            let (wsid, wcall) = whole.expect(path);
            let (lsid, lcall) = lean.expect(path);
            assert_eq!(wsid, lsid, "{path}");
            assert!(wcall.is_some(), "{path}: the whole read finds the call");
            assert_eq!(lcall, None, "{path}");
        }
    }
}
