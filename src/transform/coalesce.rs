//! `--coalesce[=whole|burst]` for `--to events` (docs/events.md#coalesced-events).
//!
//! - `whole` replaces runs of deltas by whole events: `assistant_message`,
//!   `thinking` (with the phase's duration) and `tool_call` (start, live
//!   output and completion merged, emitted when the call completes), and
//!   drops nothing else.
//! - `burst` keeps the delta types but merges adjacent deltas of one kind
//!   (and one call) that were read together: a pending run is written out
//!   whenever the input has nothing more buffered (the sink's `idle`; not
//!   `flush`, which `--line-buffered` calls after every line), so a fast
//!   burst costs one event and a slow stream stays live. This is the
//!   "rolling state" a dashboard wants: fewer events, same liveness.
//!
//! Memory: `burst` holds at most what was read in one go; `whole` holds one
//! message and the open calls' output (cap it with `--truncate-shell`).

use std::borrow::Cow;
use std::io;

use crate::event::calls::CallTable;
use crate::event::{Adapter, Event, Kind, OutStream, Text, ToolStart};
use crate::event::{Session, Sink};

/// How to coalesce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoalesceMode {
    /// Whole messages and whole tool calls.
    Whole,
    /// Adjacent deltas read together.
    Burst,
}

/// A run of deltas being merged.
struct Run {
    ts: Option<i64>,
    kind: RunKind,
    text: String,
}

#[derive(PartialEq, Eq)]
enum RunKind {
    Text,
    Thinking,
    Output(String, OutStream),
}

/// A tool call waiting for its completion (`whole`).
struct OpenCall {
    ts: Option<i64>,
    start: ToolStart<'static>,
    /// Output that arrived live.
    streamed: String,
}

/// Merges deltas, then hands events on to `inner`.
pub struct Coalesce<'s> {
    inner: Box<dyn Sink + 's>,
    mode: CoalesceMode,
    run: Option<Run>,
    /// Calls waiting for their completion, by id, oldest first.
    open: CallTable<OpenCall>,
    /// The session the pending run belongs to.
    session: Option<Session>,
}

impl<'s> Coalesce<'s> {
    pub fn new(inner: Box<dyn Sink + 's>, mode: CoalesceMode) -> Self {
        Coalesce {
            inner,
            mode,
            run: None,
            open: CallTable::default(),
            session: None,
        }
    }

    /// Write the pending run, if any.
    fn flush_run(&mut self) -> io::Result<()> {
        let (Some(run), Some(s)) = (self.run.take(), self.session.as_ref()) else {
            return Ok(());
        };
        let text = Cow::Owned(run.text);
        let kind = match (run.kind, self.mode) {
            (RunKind::Text, CoalesceMode::Whole) => Kind::AssistantMessage { text },
            (RunKind::Thinking, CoalesceMode::Whole) => Kind::Thinking {
                text,
                duration_ms: None,
            },
            (RunKind::Text, CoalesceMode::Burst) => Kind::TextDelta { text },
            (RunKind::Thinking, CoalesceMode::Burst) => Kind::ThinkingDelta { text },
            (RunKind::Output(call_id, stream), _) => Kind::ShellOutputDelta {
                call_id: Cow::Owned(call_id),
                stream,
                text,
            },
        };
        self.inner.event(s, &Event::at(run.ts, kind))
    }

    /// Add a delta to the pending run (starting a new run if it differs).
    fn push(&mut self, ts: Option<i64>, kind: RunKind, text: &str) -> io::Result<()> {
        if self.run.as_ref().is_some_and(|r| r.kind != kind) {
            self.flush_run()?;
        }
        match &mut self.run {
            Some(r) => r.text.push_str(text),
            None => {
                self.run = Some(Run {
                    ts,
                    kind,
                    text: text.to_owned(),
                })
            }
        }
        Ok(())
    }

    fn whole(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        match &ev.kind {
            Kind::TextDelta { text } => self.push(ev.ts, RunKind::Text, text),
            Kind::ThinkingDelta { text } => self.push(ev.ts, RunKind::Thinking, text),
            Kind::ThinkingCompleted { duration_ms } => {
                let thinking = match self.run.take() {
                    Some(r) if r.kind == RunKind::Thinking => Some(r),
                    other => {
                        self.run = other;
                        self.flush_run()?;
                        None
                    }
                };
                let (ts, text) = thinking.map_or((ev.ts, String::new()), |r| (r.ts, r.text));
                let kind = Kind::Thinking {
                    text: Cow::Owned(text),
                    duration_ms: *duration_ms,
                };
                self.inner.event(s, &Event::at(ts, kind))
            }
            Kind::ToolCallStarted(t) => {
                self.flush_run()?;
                let call = OpenCall {
                    ts: ev.ts,
                    start: t.clone().into_owned(),
                    streamed: String::new(),
                };
                // The normalizer in front holds the same cap and closes its
                // oldest call first, so this table does not overflow behind
                // it; if it did, the oldest start is passed on unmerged, as
                // at the session's end.
                match self.open.insert(&t.call_id, call) {
                    Some((_, old)) => self
                        .inner
                        .event(s, &Event::at(old.ts, Kind::started(old.start))),
                    None => Ok(()),
                }
            }
            Kind::ToolCallProgress { call_id, .. } if self.is_open(call_id) => Ok(()),
            Kind::ShellOutputDelta { call_id, text, .. } if self.is_open(call_id) => {
                if let Some(c) = self.open.get_mut(call_id) {
                    c.streamed.push_str(text);
                }
                Ok(())
            }
            Kind::ToolCallCompleted(end) if self.is_open(&end.call_id) => {
                self.flush_run()?;
                let call = self.open.remove(&end.call_id).expect("checked open");
                let mut end = end.clone();
                if end.output.is_none() && !call.streamed.is_empty() {
                    end.output = Some(Text::from(call.streamed));
                }
                let ts = call.ts.or(ev.ts);
                self.inner.event(
                    s,
                    &Event::at(ts, Kind::ToolCall(Box::new((call.start, *end)))),
                )
            }
            _ => {
                self.flush_run()?;
                self.inner.event(s, ev)
            }
        }
    }

    fn is_open(&self, call_id: &str) -> bool {
        self.open.contains(call_id)
    }

    fn burst(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        match &ev.kind {
            Kind::TextDelta { text } => self.push(ev.ts, RunKind::Text, text),
            Kind::ThinkingDelta { text } => self.push(ev.ts, RunKind::Thinking, text),
            Kind::ShellOutputDelta {
                call_id,
                stream,
                text,
            } => self.push(ev.ts, RunKind::Output(call_id.to_string(), *stream), text),
            _ => {
                self.flush_run()?;
                self.inner.event(s, ev)
            }
        }
    }
}

impl Adapter for Coalesce<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.session = Some(s.clone());
        self.open = CallTable::default();
        self.inner.begin(s)
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.session.as_ref() != Some(s) {
            self.flush_run()?;
            self.session = Some(s.clone());
        }
        match self.mode {
            CoalesceMode::Whole => self.whole(s, ev),
            CoalesceMode::Burst => self.burst(s, ev),
        }
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.flush_run()?;
        // The normalizer closes every call before a session ends; anything
        // still here had no completion, so its start is passed on unmerged.
        for (_, call) in self.open.drain() {
            self.inner
                .event(s, &Event::at(call.ts, Kind::started(call.start)))?;
        }
        self.inner.end(s)
    }

    fn idle(&mut self) -> io::Result<()> {
        if self.mode == CoalesceMode::Burst {
            self.flush_run()?;
        }
        self.inner.idle()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush_run()?;
        self.inner.finish()
    }
}
