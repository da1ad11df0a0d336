//! The stage interface: a [`Sink`] receives normalized events, session by
//! session. The normalizer drives one; the transforms (truncate, coalesce,
//! the stats counter) are sinks that wrap another; every output format is
//! one. It lives here, beside the event model, so that `transform` and
//! `output` both depend on `event` and never on each other.

use std::io;

use super::Event;

/// Identifies the session events belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The source's session id, or `session-N`.
    pub id: String,
    /// 1-based position of the session in the run.
    pub ordinal: usize,
    /// Recap dedupe is on for this session: off with `--no-dedupe`, or when
    /// an events stream says its session was written without it. The events
    /// format says so on `session_started` (`"dedupe":false`), so a second
    /// stage passes the events on as they are.
    pub dedupe: bool,
}

/// How much of a tool call's start a sink needs handed back with the call's
/// completion ([`ToolEnd::start`](super::ToolEnd::start)). The normalizer
/// owns the open calls and keeps that much of each, so a format pairs a
/// completion with its start without a table of its own, and a sink that
/// needs nothing (`--to events`) pays nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Starts {
    /// Nothing: completions come without their start.
    #[default]
    None,
    /// What a one-line label shows: the id, the tool name and the key
    /// argument ([`ToolStart::label_copy`](super::ToolStart::label_copy)).
    Label,
    /// The whole start.
    Whole,
}

/// How much of each record a sink needs read, asked as [`Starts`] is. A
/// reader may skip what no sink needs with the string scanner instead of
/// building it: `--to usage` shows figures, never text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reads {
    /// Everything: the events as they are.
    #[default]
    Whole,
    /// Only what the session figures (docs/events.md#session-figures) and
    /// the session's start are made of. A reader may emit its events with
    /// their texts, tool arguments and results left empty, but never fewer
    /// or other events: the same kinds in the same order, with the same
    /// timestamps, call ids, outcomes, usage increments and results' usage,
    /// so every figure comes out as the whole read makes it. A turn's end
    /// may leave its own usage unknown (no figure is made of it), and a
    /// sub-agent's start the parent's call that spawned it (`parentCallId`;
    /// its parent session is still named). The session's title may come
    /// after its start, by [`Sink::title`].
    Figures,
}

/// A destination for normalized events.
pub trait Sink {
    /// How much of each call's start this sink needs with the call's
    /// completion; asked when a session begins. An adapter that wraps a
    /// sink answers for it.
    fn starts(&self) -> Starts {
        Starts::None
    }
    /// How much of each record this sink needs read; asked when the
    /// pipeline is built. An adapter that wraps a sink answers for it.
    fn reads(&self) -> Reads {
        Reads::Whole
    }
    /// A session begins; its events follow.
    fn begin(&mut self, _s: &Session) -> io::Result<()> {
        Ok(())
    }
    /// One event of session `s`.
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()>;
    /// The title of session `s`, learned after its `session_started` was
    /// written. Only a sink that asks for [`Reads::Figures`] is told a title
    /// this way: a reader asked for the figures need not read a saved
    /// session twice to put a title written after the turns into the start.
    /// The last one told wins over the start's.
    fn title(&mut self, _s: &Session, _title: &str) -> io::Result<()> {
        Ok(())
    }
    /// Session `s` has no more events.
    fn end(&mut self, _s: &Session) -> io::Result<()> {
        Ok(())
    }
    /// Push buffered output to its destination (`--line-buffered`, and
    /// after [`Sink::idle`]). Never changes which events are written.
    fn flush(&mut self) -> io::Result<()>;
    /// The input has nothing more buffered: what was read so far should be
    /// out before cstream waits for more. Adapters that merge what was read
    /// together (`--coalesce=burst`) close their merge here, not on
    /// `flush`, so the events do not depend on how stdout is buffered.
    fn idle(&mut self) -> io::Result<()> {
        self.flush()
    }
    /// The run is over: write anything pending and flush.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// A stage that wraps another sink (the transforms): it names the sink it
/// passes on to, overrides what it changes, and every other call is
/// forwarded by the defaults here. Forwarding written once means a stage
/// cannot forget one: a stage that did not pass on [`Sink::starts`] used to
/// cost every format after it its tool labels.
pub trait Adapter {
    /// The sink this stage passes events on to.
    fn inner(&mut self) -> &mut dyn Sink;
    /// The same sink, to ask it what it needs.
    fn inner_ref(&self) -> &dyn Sink;

    /// As [`Sink::starts`]; by default, what the wrapped sink needs.
    fn starts(&self) -> Starts {
        self.inner_ref().starts()
    }
    /// As [`Sink::reads`]; by default, what the wrapped sink needs.
    fn reads(&self) -> Reads {
        self.inner_ref().reads()
    }
    /// As [`Sink::begin`].
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.inner().begin(s)
    }
    /// As [`Sink::event`].
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        self.inner().event(s, ev)
    }
    /// As [`Sink::title`].
    fn title(&mut self, s: &Session, title: &str) -> io::Result<()> {
        self.inner().title(s, title)
    }
    /// As [`Sink::end`].
    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.inner().end(s)
    }
    /// As [`Sink::flush`].
    fn flush(&mut self) -> io::Result<()> {
        self.inner().flush()
    }
    /// As [`Sink::idle`].
    fn idle(&mut self) -> io::Result<()> {
        self.inner().idle()
    }
    /// As [`Sink::finish`].
    fn finish(&mut self) -> io::Result<()> {
        self.inner().finish()
    }
}

impl<A: Adapter> Sink for A {
    fn starts(&self) -> Starts {
        Adapter::starts(self)
    }
    fn reads(&self) -> Reads {
        Adapter::reads(self)
    }
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        Adapter::begin(self, s)
    }
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        Adapter::event(self, s, ev)
    }
    fn title(&mut self, s: &Session, title: &str) -> io::Result<()> {
        Adapter::title(self, s, title)
    }
    fn end(&mut self, s: &Session) -> io::Result<()> {
        Adapter::end(self, s)
    }
    fn flush(&mut self) -> io::Result<()> {
        Adapter::flush(self)
    }
    fn idle(&mut self) -> io::Result<()> {
        Adapter::idle(self)
    }
    fn finish(&mut self) -> io::Result<()> {
        Adapter::finish(self)
    }
}
