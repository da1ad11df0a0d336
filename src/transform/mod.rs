//! Transforms: parsed items in, a well-formed event stream out
//! (docs/events.md#invariants, docs/events.md#normalization).
//!
//! The [`Normalizer`] owns everything that spans lines:
//! - sessions: an init (or a new input) starts one; items before an input's
//!   first init are held (bounded) and replayed after its `session_started`;
//!   every session begins with `session_started` (one is made for a session
//!   without init); an input with no events at all is still a session
//!   (without a result);
//! - recap dedupe: a recap emits only the tail it adds beyond the text
//!   emitted since the last tool-call start, or else since the last recap;
//! - the result's text is authoritative: a tail it adds is emitted before it;
//! - usage: running totals and result totals become `usage_delta` increments;
//! - cumulative tool output: a snapshot of a call's whole output so far
//!   emits only what it adds to what was emitted for that call (as
//!   `shell_output_delta`), or a `tool_call_progress` replacement when it
//!   does not extend it;
//! - tool calls: durations filled from start/end times, calls still open
//!   when a session ends closed as cancelled (not at its result: a
//!   completion the agent sends after its result, as Codex and Claude Code
//!   can, is the call's real end and is attached to it); a call completes
//!   once: a completion (or start) of a call that already completed in the
//!   session is dropped with a warning; each completion carries as much of
//!   its start as the sinks ask for ([`Sink::starts`]), so no format keeps
//!   a table of starts of its own.
//!
//! Memory is bounded: texts are remembered as length + hash ([`Prefix`]),
//! open calls and held items are capped.

pub mod coalesce;
pub mod images;
pub mod redact;
pub mod stats;
pub mod summary;
pub mod truncate;
pub mod window;

#[cfg(test)]
mod forwarding;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;

use crate::diag::{Diag, Warn};
use crate::dialect::{Channel, Item};
use crate::event::calls::CallTable;
use crate::event::{Event, Json, Kind, OutStream, SessionResult, SessionStart, ToolEnd, Usage};
use crate::event::{Session, Sink, Starts, ToolStart};
use crate::prefix::Prefix;

/// Items held before an input's first init are capped at this many: the
/// few an agent writes before its init (a prompt echo, a notice), not a
/// stream joined mid-run, which must show at once…
pub const MAX_HELD_ITEMS: usize = 16;
/// …and roughly this many bytes of text. They are also held no longer than
/// until the input pauses ([`Normalizer::idle`]).
pub const MAX_HELD_BYTES: usize = 8 * 1024 * 1024;
/// Completed calls remembered per session, to drop their repeats (late
/// completions come soon after the call's end). Its own bound, not the
/// open-call cap: these calls are finished, a long session completes far
/// more calls than it holds open, and each is kept as a hash (not a
/// [`CallTable`] entry with its id) so that a long session's memory stays
/// flat (tests/memory/documents.rs).
pub const MAX_DONE_CALLS: usize = 1024;

/// A 64-bit hash of a call id (a collision between two ids of one session
/// is vanishingly unlikely): foldhash's quality hash, which is several
/// times cheaper than SipHash on ids this short.
fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    const IDS: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0);
    IDS.hash_one(id)
}

/// An error message kept for [`Ended`] is cut at this many bytes.
pub const ERROR_BYTES: usize = 300;

/// A session that failed or ended without a result, as `-e` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The session's id (`session-N` when the source gives none).
    pub session_id: String,
    /// It reported failure (else: it ended without a result).
    pub failed: bool,
    /// The agent's own error: a failed result's, else the first fatal
    /// error, else the last error it printed (`None`: it gave none).
    pub error: Option<String>,
    /// The session's position in the run ([`Session::ordinal`]).
    pub ordinal: usize,
    /// Its id was made up (`session-N`): the source gave none.
    pub anonymous: bool,
}

fn cut_error(message: &str) -> String {
    message[..crate::strings::floor_char_boundary(message, ERROR_BYTES)].to_owned()
}

/// How sessions ended, for `-e` and `--stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcomes {
    /// Sessions seen.
    pub sessions: u64,
    /// Sessions that reported failure (error result or fatal error).
    pub failed: u64,
    /// Sessions that ended without a result.
    pub incomplete: u64,
}

/// Options of the normalizer.
#[derive(Debug, Clone, Copy)]
pub struct NormalizeOptions {
    /// Recap dedupe and the authoritative result tail (off with `--no-dedupe`).
    pub dedupe: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions { dedupe: true }
    }
}

/// What has been emitted on one text channel, for recap dedupe.
#[derive(Debug, Default)]
struct ChannelText {
    /// Since the last tool-call start.
    segment: Prefix,
    /// Since the last recap, when one came since the last tool-call start
    /// (`None`: the same text as `segment`, which is not hashed twice).
    since_recap: Option<Prefix>,
}

impl ChannelText {
    fn push(&mut self, s: &str) {
        self.segment.push(s);
        if let Some(p) = &mut self.since_recap {
            p.push(s);
        }
    }

    fn reset(&mut self) {
        self.segment.reset();
        self.since_recap = None;
    }

    /// What a recap adds to the text of the segment, or else to the text
    /// since the last recap.
    fn tail_of<'s>(&self, recap: &'s str) -> Option<&'s str> {
        self.segment
            .tail_of(recap)
            .or_else(|| self.since_recap.as_ref()?.tail_of(recap))
    }

    /// A recap came: what follows is measured from here too.
    fn recapped(&mut self) {
        self.since_recap = Some(Prefix::default());
    }
}

/// An open call, by id in [`SessionState::open`].
#[derive(Debug)]
struct OpenCall {
    ts: Option<i64>,
    start: Kept,
    /// Live output of the call went out (tracked only beside a kept start).
    streamed: bool,
}

/// What is kept of an open call's start: its tool name (for a cancelled
/// completion), or as much of it as the sinks asked for ([`Sink::starts`]),
/// handed to them with the completion.
#[derive(Debug)]
enum Kept {
    Name(String),
    Start(Box<ToolStart<'static>>),
}

impl OpenCall {
    fn tool_name(&self) -> &str {
        match &self.start {
            Kept::Name(n) => n,
            Kept::Start(s) => &s.tool_name,
        }
    }

    /// Hand the kept start (if any) to the call's completion.
    fn complete(self, end: &mut ToolEnd<'_>) {
        if let Kept::Start(s) = self.start {
            end.start = Some(s);
            end.streamed = self.streamed;
        }
    }
}

/// State of the open session.
#[derive(Debug)]
struct SessionState {
    info: Session,
    /// Its id was made up (`session-N`).
    anonymous: bool,
    /// How much of each call's start the sinks want back with its completion.
    starts: Starts,
    text: ChannelText,
    thinking: ChannelText,
    /// All assistant text of the session (for the result tail).
    all_text: Prefix,
    /// Open calls, oldest first; past the table's cap the oldest is closed
    /// as cancelled.
    open: CallTable<OpenCall>,
    /// The most recent calls that completed in this session (a hash of the
    /// id, and whether cstream closed it as cancelled), oldest first: a few
    /// bytes each, so that a long session's memory does not grow with them.
    done: VecDeque<(u64, bool)>,
    /// Output emitted per tool call (for cumulative snapshots).
    outputs: CallTable<Prefix>,
    usage_sum: Usage,
    usage_emitted: bool,
    /// The source's last running total, and what was counted before its
    /// counter last restarted (a running total that went down): the
    /// session's usage is then that base plus the new total.
    last_total: Option<Usage>,
    restart_base: Usage,
    result_seen: bool,
    failed: bool,
    /// The agent's own words, for the line `-e` prints about a session
    /// that did not end well: the first fatal error, the last error, the
    /// failed result's error (each cut at [`ERROR_BYTES`]).
    fatal_error: Option<String>,
    last_error: Option<String>,
    result_error: Option<String>,
    /// Prompts read, and whether anything answered (text, thinking, a
    /// call): a session with prompts and no answer, or neither, is said to
    /// be one when nothing else explains it (docs/dialects.md#drift).
    prompts: u64,
    answered: bool,
}

impl SessionState {
    /// The output emitted so far for `call_id` (created empty when new).
    fn output_of(&mut self, call_id: &str) -> &mut Prefix {
        if !self.outputs.contains(call_id) {
            // Past the cap the oldest call's record goes.
            self.outputs.insert(call_id, Prefix::default());
        }
        self.outputs.get_mut(call_id).expect("just inserted")
    }

    /// Record that `call_id` completed (`cancelled`: closed by cstream).
    fn finish_call(&mut self, call_id: &str, cancelled: bool) {
        let h = id_hash(call_id);
        if self.done.iter().any(|(d, _)| *d == h) {
            return;
        }
        if self.done.len() >= MAX_DONE_CALLS {
            self.done.pop_front();
        }
        self.done.push_back((h, cancelled));
    }

    /// Whether `call_id` completed, and if so whether cstream closed it.
    fn completed(&self, call_id: &str) -> Option<bool> {
        let h = id_hash(call_id);
        self.done
            .iter()
            .rev()
            .find(|(d, _)| *d == h)
            .map(|(_, c)| *c)
    }

    fn forget_output(&mut self, call_id: &str) {
        self.outputs.remove(call_id);
    }

    fn new(info: Session, starts: Starts) -> Self {
        SessionState {
            info,
            starts,
            text: ChannelText::default(),
            thinking: ChannelText::default(),
            all_text: Prefix::default(),
            open: CallTable::default(),
            done: VecDeque::new(),
            outputs: CallTable::default(),
            usage_sum: Usage::default(),
            usage_emitted: false,
            last_total: None,
            restart_base: Usage::default(),
            result_seen: false,
            failed: false,
            fatal_error: None,
            last_error: None,
            prompts: 0,
            answered: false,
            result_error: None,
            anonymous: false,
        }
    }
}

/// Turns parsed items into the normalized event stream, session by session.
pub struct Normalizer {
    opts: NormalizeOptions,
    cur: Option<SessionState>,
    /// Items before this input's first init.
    /// Each with the input line it came from (a warning about it names
    /// that line, not the one that released it).
    held: Vec<(u64, Item<'static>)>,
    held_bytes: usize,
    /// The session id the source's lines carry (for a session without init).
    hint: Option<String>,
    /// Whether this input has produced any item.
    input_has_items: bool,
    /// The next session opened was written without dedupe ([`Item::Verbatim`]).
    next_verbatim: bool,
    /// Sessions opened in the run so far.
    ordinal: usize,
    /// The dialect of the current input, once known (for the
    /// `session_started` of a session that has no init event).
    dialect: Option<&'static str>,
    /// The input line being read (for warnings).
    pub line: u64,
    /// Warnings raised while handling an item, reported after it.
    /// Warnings and the line each is about.
    warnings: Vec<(u64, String)>,
    /// The call whose repeated start was just dropped (its completion
    /// needs no warning of its own).
    dropped_start: Option<String>,
    /// How sessions ended.
    pub outcomes: Outcomes,
    /// Sessions that did not end well since the caller last took them
    /// ([`Normalizer::take_ended`]).
    ended: Vec<Ended>,
    /// Told, just before each session begins, whether its id is made up
    /// (`--jobs`: the id is made again when the session's place in the run
    /// is known).
    pub(crate) tell_anonymous: Option<std::rc::Rc<std::cell::Cell<bool>>>,
}

impl Normalizer {
    pub fn new(opts: NormalizeOptions) -> Self {
        Normalizer {
            opts,
            cur: None,
            held: Vec::new(),
            held_bytes: 0,
            hint: None,
            input_has_items: false,
            next_verbatim: false,
            ordinal: 0,
            dialect: None,
            line: 0,
            warnings: Vec::new(),
            dropped_start: None,
            outcomes: Outcomes::default(),
            ended: Vec::new(),
            tell_anonymous: None,
        }
    }

    /// The sessions that failed or ended without a result since the last
    /// call (the pipeline takes them after every record, so this stays
    /// small).
    /// Whether a session ended since the last [`Normalizer::take_ended`].
    pub fn has_ended(&self) -> bool {
        !self.ended.is_empty()
    }

    pub fn take_ended(&mut self) -> Vec<Ended> {
        std::mem::take(&mut self.ended)
    }

    /// Name the dialect of the current input.
    pub fn set_dialect(&mut self, name: &'static str) {
        self.dialect = Some(name);
    }

    /// Whether the current input's dialect is named.
    pub fn has_dialect(&self) -> bool {
        self.dialect.is_some()
    }

    /// True while items are being held for an init that has not come yet.
    fn holding(&self) -> bool {
        self.cur.is_none()
    }

    /// Take one parsed item. It is handled where it lies (an event is not
    /// copied on its way to the sink); what the normalizer keeps it takes
    /// out, so the item is spent afterwards.
    pub fn item(
        &mut self,
        item: &mut Item<'_>,
        sink: &mut dyn Sink,
        diag: &mut Diag,
    ) -> io::Result<()> {
        let r = self.take(item, sink, diag);
        if !self.warnings.is_empty() {
            for (line, w) in self.warnings.drain(..) {
                diag.warn(Warn::Format, line, w);
            }
        }
        r
    }

    fn take(
        &mut self,
        item: &mut Item<'_>,
        sink: &mut dyn Sink,
        diag: &mut Diag,
    ) -> io::Result<()> {
        match item {
            // Counted by the run; nothing to normalize.
            Item::NotUnderstood(_) => return Ok(()),
            _ => self.input_has_items = true,
        }
        match item {
            Item::Warning(msg) => {
                self.warnings
                    .push((self.line, std::mem::take(msg).into_owned()));
                Ok(())
            }
            Item::Verbatim => {
                self.next_verbatim = true;
                Ok(())
            }
            Item::IdHint(id) => {
                if self.hint.is_none() {
                    self.hint = Some(std::mem::take(id).into_owned());
                }
                Ok(())
            }
            Item::Event(Event {
                ts,
                kind: Kind::SessionStarted(start),
            }) => {
                let ts = *ts;
                self.close(sink)?;
                let id = start.session_id.as_deref().map(str::to_owned);
                self.open(id, sink)?;
                let start = SessionStart {
                    session_id: None,
                    ..std::mem::take(start)
                };
                self.emit(sink, Event::at(ts, Kind::SessionStarted(start)))?;
                self.replay(sink)
            }
            Item::Resume { session_id } => {
                self.close(sink)?;
                self.hint = Some(std::mem::take(session_id).into_owned());
                // cstream's own events, cut before their `session_started`:
                // which agent wrote them is not known.
                self.dialect.get_or_insert("unknown");
                self.open_anonymous(sink)?;
                self.replay(sink)
            }
            _ if self.holding() => {
                let item = std::mem::replace(item, Item::Verbatim);
                self.held_bytes += item_size(&item);
                self.held.push((self.line, item.into_owned()));
                if self.held.len() > MAX_HELD_ITEMS || self.held_bytes > MAX_HELD_BYTES {
                    let file = diag.file.clone();
                    diag.note(format_args!(
                        "{file}: {} events before any init event; reading them as a session without init",
                        self.held.len()
                    ));
                    self.release_held(sink)?;
                }
                Ok(())
            }
            _ => self.process(item, sink),
        }
    }

    /// The input has nothing more buffered: items held for an init are
    /// written now, as a session of their own, since the reader of a live
    /// stream (`tail -f`, a pipe joined mid-run) must see them before
    /// cstream waits. Lines an agent writes before its init come with it in
    /// one write, so a pause means no init is coming with them.
    pub fn idle(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        // Lines that were not JSON (an agent's notices on a shared
        // stdout/stderr, such as Gemini CLI's "Loaded cached credentials.")
        // come before its init, often with a pause: alone they wait.
        let notice = |i: &Item<'_>| matches!(i, Item::Event(Event { kind: Kind::Error { source: Some(s), .. }, .. }) if s == "stdout");
        if self.held.iter().all(|(_, i)| notice(i)) {
            return Ok(());
        }
        self.release_held(sink)
    }

    /// Write the items held for an init as a session without one.
    fn release_held(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        if self.cur.is_some() || self.held.is_empty() {
            return Ok(());
        }
        self.open_anonymous(sink)?;
        self.replay(sink)
    }

    /// The end of one input: close its session (a session without events if
    /// it had none) and forget per-input state.
    pub fn end_input(&mut self, sink: &mut dyn Sink, diag: &mut Diag) -> io::Result<()> {
        if self.cur.is_none() && (!self.held.is_empty() || !self.input_has_items) {
            self.open_anonymous(sink)?;
            self.replay(sink)?;
        }
        self.close(sink)?;
        for (line, w) in self.warnings.drain(..) {
            diag.warn(Warn::Format, line, w);
        }
        self.hint = None;
        self.dialect = None;
        self.input_has_items = false;
        self.next_verbatim = false;
        Ok(())
    }

    /// Open a session for events that came without an init event. It still
    /// begins with `session_started` (naming only the dialect), so every
    /// session of every format begins the same way, and a reader of the
    /// events sees where each one begins even when two share an id (one FILE
    /// each). That includes an input with no events at all: it is a session
    /// that ended without a result, in every format; its dialect is
    /// `unknown` unless `--from` named one.
    fn open_anonymous(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        let id = self.hint.clone();
        self.open(id, sink)?;
        let fallback = if self.input_has_items {
            "cursor"
        } else {
            "unknown"
        };
        let start = SessionStart {
            dialect: Cow::Borrowed(self.dialect.unwrap_or(fallback)),
            ..SessionStart::default()
        };
        self.emit(sink, Event::new(Kind::SessionStarted(start)))
    }

    fn open(&mut self, id: Option<String>, sink: &mut dyn Sink) -> io::Result<()> {
        self.ordinal += 1;
        let anonymous = id.is_none();
        if let Some(tell) = &self.tell_anonymous {
            tell.set(anonymous);
        }
        let info = Session {
            id: id.unwrap_or_else(|| format!("session-{}", self.ordinal)),
            ordinal: self.ordinal,
            dedupe: self.opts.dedupe && !std::mem::take(&mut self.next_verbatim),
        };
        self.outcomes.sessions += 1;
        sink.begin(&info)?;
        let mut st = SessionState::new(info, sink.starts());
        st.anonymous = anonymous;
        self.cur = Some(st);
        Ok(())
    }

    fn replay(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.held_bytes = 0;
        let now = self.line;
        for (line, mut item) in held {
            self.line = line;
            let r = self.process(&mut item, sink);
            if r.is_err() {
                self.line = now;
                return r;
            }
        }
        self.line = now;
        Ok(())
    }

    /// Close the open session: cancel its open calls, record its outcome.
    fn close(&mut self, sink: &mut dyn Sink) -> io::Result<()> {
        if self.cur.is_none() {
            return Ok(());
        }
        self.cancel_open(None, sink)?;
        let st = self.cur.take().expect("checked above");
        // Read, but nothing of a conversation in it, and no error to say
        // why: the agent's format may have changed under its reader.
        // Only a session that says it is whole (a result): one cut off is
        // reported as such (`-e`).
        let explained = st.failed || st.last_error.is_some() || st.result_error.is_some();
        if !st.answered && !explained && st.result_seen && self.input_has_items {
            // A made-up id is settled only when `--jobs` plays the file's
            // tape: such a session is not named.
            let id = if st.anonymous {
                "without an id".to_owned()
            } else {
                crate::diag::excerpt(&st.info.id, 80)
            };
            let msg = if st.prompts > 0 {
                format!(
                    "session {id}: {} prompt{} but no answer read",
                    st.prompts,
                    if st.prompts == 1 { "" } else { "s" }
                )
            } else {
                format!("session {id}: no prompt and no answer read")
            };
            self.warnings.push((self.line, msg));
        }
        if !st.result_seen || st.failed {
            if st.result_seen {
                self.outcomes.failed += 1;
            } else {
                self.outcomes.incomplete += 1;
            }
            self.ended.push(Ended {
                session_id: st.info.id.clone(),
                failed: st.result_seen,
                error: st.result_error.or(st.fatal_error).or(st.last_error),
                ordinal: st.info.ordinal,
                anonymous: st.anonymous,
            });
        }
        sink.end(&st.info)
    }

    /// Synthesize a cancelled completion for every open call.
    fn cancel_open(&mut self, ts: Option<i64>, sink: &mut dyn Sink) -> io::Result<()> {
        let Some(st) = self.cur.as_mut() else {
            return Ok(());
        };
        let open: Vec<_> = st.open.drain().collect();
        for (id, _) in &open {
            st.finish_call(id, true);
        }
        for (id, call) in open {
            self.emit(sink, cancelled(&id, call, ts))?;
        }
        Ok(())
    }

    /// Whether the open session dedupes recaps.
    fn dedupe(&self) -> bool {
        self.cur
            .as_ref()
            .map_or(self.opts.dedupe, |st| st.info.dedupe)
    }

    fn emit(&mut self, sink: &mut dyn Sink, ev: Event<'_>) -> io::Result<()> {
        let st = self.cur.as_ref().expect("a session is open");
        sink.event(&st.info, &ev)
    }

    /// Handle an item inside the open session.
    fn process(&mut self, item: &mut Item<'_>, sink: &mut dyn Sink) -> io::Result<()> {
        let dedupe = self.dedupe();
        match item {
            Item::Event(ev) => self.event(ev, sink),
            Item::IdHint(_)
            | Item::Resume { .. }
            | Item::Verbatim
            | Item::Warning(_)
            | Item::NotUnderstood(_) => Ok(()),
            Item::Title(title) => match self.cur.as_ref() {
                Some(st) => sink.title(&st.info, title),
                None => Ok(()),
            },
            Item::Recap { ts, channel, text } => {
                let (ts, channel) = (*ts, *channel);
                if !dedupe {
                    let text = std::mem::take(text);
                    return self.event(&mut Event::at(ts, delta(channel, text)), sink);
                }
                let st = self.cur.as_ref().expect("open session");
                let ch = match channel {
                    Channel::Text => &st.text,
                    Channel::Thinking => &st.thinking,
                };
                let tail = ch.tail_of(text);
                let tail = tail.filter(|t| !t.is_empty()).map(str::to_owned);
                if let Some(tail) = tail {
                    let mut ev = Event::at(ts, delta(channel, Cow::Owned(tail)));
                    self.event(&mut ev, sink)?;
                }
                let st = self.cur.as_mut().expect("open session");
                match channel {
                    Channel::Text => st.text.recapped(),
                    Channel::Thinking => st.thinking.recapped(),
                }
                Ok(())
            }
            Item::BlockRecap {
                ts,
                channel,
                text,
                known,
            } => {
                let (ts, channel, known) = (*ts, *channel, *known);
                let text = match std::mem::take(text) {
                    text if !dedupe => text,
                    Cow::Borrowed(t) => Cow::Borrowed(t.get(known..).unwrap_or("")),
                    Cow::Owned(t) => Cow::Owned(t.get(known..).unwrap_or("").to_owned()),
                };
                if text.is_empty() {
                    return Ok(());
                }
                self.event(&mut Event::at(ts, delta(channel, text)), sink)
            }
            Item::UsageTotal { ts, usage } => {
                let st = self.cur.as_mut().expect("open session");
                let restarted = st.last_total.filter(|last| went_down(last, usage));
                if let Some(last) = restarted {
                    // A counter that starts again from zero: what it counted
                    // before stays spent, and the new total adds to it.
                    st.restart_base = st.restart_base.add(&last);
                }
                st.last_total = Some(*usage);
                let rem = st.restart_base.add(usage).minus(&st.usage_sum);
                if let Some(last) = restarted {
                    let message = format!(
                        "the agent's running token total went down (input {} -> {}, output {} -> {}): \
                         read as a counter that restarted, so the new total adds to what was counted",
                        last.input, usage.input, last.output, usage.output
                    );
                    let notice = Kind::Error {
                        message: Cow::Owned(message),
                        fatal: false,
                        source: Some(Cow::Borrowed("usage")),
                    };
                    self.event(&mut Event::at(*ts, notice), sink)?;
                }
                if rem.is_zero() {
                    return Ok(());
                }
                self.event(&mut Event::at(*ts, Kind::UsageDelta(rem)), sink)
            }
            Item::OutputSnapshot {
                ts,
                call_id,
                stream,
                text,
            } => {
                let (call_id, text) = (std::mem::take(call_id), std::mem::take(text));
                self.snapshot(*ts, call_id, *stream, text, sink)
            }
            Item::StartIfNew(ev) => {
                let st = self.cur.as_ref().expect("open session");
                match &ev.kind {
                    Kind::ToolCallStarted(t)
                        if st.open.contains(&t.call_id) || st.completed(&t.call_id).is_some() =>
                    {
                        Ok(())
                    }
                    _ => self.event(ev, sink),
                }
            }
        }
    }

    /// A cumulative snapshot of a call's output: emit the tail it adds to
    /// what was emitted for the call, or the whole snapshot as a
    /// replacement. Cost: one hash pass over the snapshot; state: a length
    /// and a hash per call.
    fn snapshot(
        &mut self,
        ts: Option<i64>,
        call_id: Cow<'_, str>,
        stream: OutStream,
        text: Cow<'_, str>,
        sink: &mut dyn Sink,
    ) -> io::Result<()> {
        if !self.dedupe() {
            return self.event(&mut Event::at(ts, replacement(call_id, &text)), sink);
        }
        let st = self.cur.as_mut().expect("open session");
        let prefix = st.output_of(&call_id);
        match prefix.tail_of(&text) {
            Some("") => Ok(()),
            // `event` records the tail as emitted output of the call.
            Some(tail) => self.event(
                &mut Event::at(
                    ts,
                    Kind::ShellOutputDelta {
                        call_id,
                        stream,
                        text: Cow::Borrowed(tail),
                    },
                ),
                sink,
            ),
            None => {
                prefix.set(&text);
                self.event(&mut Event::at(ts, replacement(call_id, &text)), sink)
            }
        }
    }

    fn event(&mut self, ev: &mut Event<'_>, sink: &mut dyn Sink) -> io::Result<()> {
        let dedupe = self.dedupe();
        let st = self.cur.as_mut().expect("open session");
        // A call completes once: its start or completion repeated after it
        // completed (a line sent twice, a completion the agent sends after
        // its result closed the call) would make a second call of it.
        let again = match &ev.kind {
            Kind::ToolCallStarted(t) => st.completed(&t.call_id).map(|c| (&t.call_id, c, true)),
            Kind::ToolCallCompleted(t) if !st.open.contains(&t.call_id) => {
                st.completed(&t.call_id).map(|c| (&t.call_id, c, false))
            }
            _ => None,
        };
        if let Some((id, closed_by_us, start)) = again {
            // A repeated call is usually a start and its completion: one
            // warning for the pair.
            let pair = !start && self.dropped_start.as_deref() == Some(&**id);
            self.dropped_start = start.then(|| id.to_string());
            if pair {
                return Ok(());
            }
            let what = if start { "start" } else { "completion" };
            let msg = if closed_by_us {
                format!(
                    "{what} of call {id:?} after its session ended, which closed the call as cancelled: dropped"
                )
            } else {
                format!("{what} of call {id:?}, which already completed: dropped")
            };
            self.warnings.push((self.line, msg));
            return Ok(());
        }
        // A second start for a call that is still open announces it again
        // (possibly with fuller arguments): pass it on as progress, so every
        // start keeps exactly one completion.
        if let Kind::ToolCallStarted(t) = &ev.kind
            && st.open.contains(&t.call_id)
        {
            let Kind::ToolCallStarted(t) =
                std::mem::replace(&mut ev.kind, Kind::TurnEnded { usage: None })
            else {
                unreachable!("matched above")
            };
            ev.kind = Kind::ToolCallProgress {
                call_id: t.call_id,
                partial: t.args,
            };
        }
        match &mut ev.kind {
            // Whole messages (`--coalesce` output read back) count as
            // emitted text too, or the result tail would repeat them.
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                st.answered = true;
                st.text.push(text);
                st.all_text.push(text);
            }
            Kind::ThinkingDelta { text } | Kind::Thinking { text, .. } => {
                st.answered = true;
                st.thinking.push(text);
            }
            Kind::UserMessage { .. } => st.prompts += 1,
            // A coalesced whole call is a tool-call start for recap dedupe.
            Kind::ToolCall(_) => {
                st.answered = true;
                st.text.reset();
                st.thinking.reset();
            }
            Kind::ToolCallStarted(t) => {
                st.answered = true;
                st.text.reset();
                st.thinking.reset();
                // Not open (a repeated start became progress above), so
                // inserting it adds a call; past the cap the oldest closes.
                let start = match st.starts {
                    Starts::None => Kept::Name(t.tool_name.to_string()),
                    Starts::Label => Kept::Start(Box::new(t.label_copy())),
                    Starts::Whole => Kept::Start(Box::new((**t).clone().into_owned())),
                };
                let call = OpenCall {
                    ts: ev.ts,
                    start,
                    streamed: false,
                };
                if let Some((id, oldest)) = st.open.insert(&t.call_id, call) {
                    st.finish_call(&id, true);
                    let c = cancelled(&id, oldest, ev.ts);
                    sink.event(&st.info, &c)?;
                }
            }
            Kind::ShellOutputDelta { call_id, text, .. } => {
                st.output_of(call_id).push(text);
                if st.starts != Starts::None
                    && !text.is_empty()
                    && let Some(call) = st.open.get_mut(call_id)
                {
                    call.streamed = true;
                }
            }
            Kind::ToolCallCompleted(t) => {
                st.forget_output(&t.call_id);
                st.finish_call(&t.call_id, false);
                if let Some(call) = st.open.remove(&t.call_id) {
                    if t.duration_ms.is_none()
                        && let (Some(a), Some(b)) = (call.ts, ev.ts)
                    {
                        t.duration_ms = b.checked_sub(a).and_then(|d| u64::try_from(d).ok());
                    }
                    call.complete(t);
                }
            }
            Kind::UsageDelta(u) => {
                st.usage_sum = st.usage_sum.add(u);
                st.usage_emitted = true;
            }
            Kind::Error { message, fatal, .. } => {
                if *fatal {
                    st.failed = true;
                    if st.fatal_error.is_none() {
                        st.fatal_error = Some(cut_error(message));
                    }
                }
                st.last_error = Some(cut_error(message));
            }
            Kind::Result(r) => {
                let r = std::mem::take(r);
                return self.result(ev.ts, r, dedupe, sink);
            }
            _ => {}
        }
        let st = self.cur.as_ref().expect("open session");
        sink.event(&st.info, ev)
    }

    /// A result: close open calls, emit the text tail and the usage remainder, then the result.
    fn result(
        &mut self,
        ts: Option<i64>,
        r: SessionResult<'_>,
        dedupe: bool,
        sink: &mut dyn Sink,
    ) -> io::Result<()> {
        let tail = match (dedupe, r.text.as_deref()) {
            (true, Some(text)) => {
                let st = self.cur.as_ref().expect("open session");
                st.all_text
                    .tail_of(text)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
            }
            _ => None,
        };
        if let Some(tail) = tail {
            let delta = Kind::TextDelta {
                text: Cow::Owned(tail),
            };
            self.event(&mut Event::at(ts, delta), sink)?;
        }
        let mut r = r;
        if let Some(total) = r.usage {
            let st = self.cur.as_ref().expect("open session");
            // A final figure that is the source's last running total counts
            // from the same base as the running totals did.
            let total = match st.last_total {
                Some(last) if !st.restart_base.is_zero() && !went_down(&last, &total) => {
                    st.restart_base.add(&total)
                }
                _ => total,
            };
            let rem = total.minus(&st.usage_sum);
            if !rem.is_zero() || !st.usage_emitted {
                self.event(&mut Event::at(ts, Kind::UsageDelta(rem)), sink)?;
            }
            // One figure: the result's totals are the sum of the session's
            // increments, also where the source's final figure is below what
            // its running totals had already reported (docs/events.md#usage).
            let st = self.cur.as_ref().expect("open session");
            let sum = st.usage_sum;
            let lower =
                |a: Option<u64>, b: Option<u64>| matches!((a, b), (Some(a), Some(b)) if a < b);
            if total.input < sum.input
                || total.output < sum.output
                || lower(total.cache_read, sum.cache_read)
                || lower(total.cache_write, sum.cache_write)
            {
                let shown = |u: &Usage| format!("input {}, output {}", u.input, u.output);
                let message = format!(
                    "the agent's final token totals ({}) are below what it reported before; \
                     the session's totals are what was counted ({})",
                    shown(&total),
                    shown(&sum)
                );
                let notice = Kind::Error {
                    message: Cow::Owned(message),
                    fatal: false,
                    source: Some(Cow::Borrowed("usage")),
                };
                if st.restart_base.is_zero() {
                    self.event(&mut Event::at(ts, notice), sink)?;
                }
            }
            r.usage = Some(sum);
        }
        let st = self.cur.as_mut().expect("open session");
        st.result_seen = true;
        if !r.ok {
            st.failed = true;
            st.result_error = r.error.as_deref().filter(|e| !e.is_empty()).map(cut_error);
        }
        sink.event(&st.info, &Event::at(ts, Kind::Result(r)))
    }
}

/// Whether a running total is below the previous one (a counter that
/// restarted), in its input or output count.
fn went_down(last: &Usage, now: &Usage) -> bool {
    now.input < last.input || now.output < last.output
}

fn delta(channel: Channel, text: Cow<'_, str>) -> Kind<'_> {
    match channel {
        Channel::Text => Kind::TextDelta { text },
        Channel::Thinking => Kind::ThinkingDelta { text },
    }
}

/// `tool_call_progress {partial: {"output": <the whole output so far>}}`.
fn replacement<'a>(call_id: Cow<'a, str>, text: &str) -> Kind<'a> {
    Kind::ToolCallProgress {
        call_id,
        partial: Json::from(crate::json::object1("output", text)),
    }
}

fn cancelled(call_id: &str, call: OpenCall, ts: Option<i64>) -> Event<'static> {
    let mut end = ToolEnd::new(
        Cow::Owned(call_id.to_owned()),
        Cow::Owned(call.tool_name().to_owned()),
        false,
    );
    end.cancelled = true;
    end.error = Some(Cow::Borrowed(
        "cancelled: the session ended before the call completed",
    ));
    if let (Some(a), Some(b)) = (call.ts, ts) {
        end.duration_ms = b.checked_sub(a).and_then(|d| u64::try_from(d).ok());
    }
    call.complete(&mut end);
    Event::at(ts, Kind::completed(end))
}

/// Rough size of an item, for the held-items cap.
fn item_size(item: &Item<'_>) -> usize {
    64 + match item {
        Item::Event(e) | Item::StartIfNew(e) => match &e.kind {
            Kind::Unknown { raw } => raw.get().len(),
            Kind::ToolCallStarted(t) => t.args.get().len(),
            Kind::ToolCallCompleted(t) => {
                t.result.as_ref().map_or(0, |r| r.get().len())
                    + t.output.as_ref().map_or(0, |o| o.stored_len())
            }
            Kind::TextDelta { text }
            | Kind::ThinkingDelta { text }
            | Kind::UserMessage { text }
            | Kind::UserEvent { text, .. } => text.len(),
            Kind::Error { message, .. } => message.len(),
            _ => 0,
        },
        Item::Recap { text, .. }
        | Item::BlockRecap { text, .. }
        | Item::OutputSnapshot { text, .. } => text.len(),
        _ => 0,
    }
}
