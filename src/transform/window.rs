//! `--since` / `--until`: only the sessions that started inside a time
//! window reach the output.
//!
//! A session's start is the time of its first event that has one: the
//! `session_started` event itself for saved sessions (their records are
//! dated), a later event for live streams whose first line is not dated
//! (cursor-agent's `system/init`). Until that time is known, the session's
//! events are held, at most [`HOLD`] of them; a session with no dated event
//! among them (or none at all) is kept, since nothing shows that it is
//! outside the window: the filter never drops what it cannot date.

use std::cell::Cell;
use std::io;
use std::rc::Rc;

use crate::event::{Adapter, Event, Session, Sink};

/// The most undated events of one session held while its start is unknown.
pub const HOLD: usize = 256;

enum State {
    /// No session open.
    Idle,
    /// The session's start is not known yet: its events are held.
    Undecided(Session, Vec<Event<'static>>),
    Pass,
    Drop,
}

/// The filter, in front of `inner`.
pub struct Window<'s> {
    inner: Box<dyn Sink + 's>,
    /// Inclusive start and exclusive end, epoch milliseconds.
    since: Option<i64>,
    until: Option<i64>,
    state: State,
    /// Sessions let through and left out, for the caller.
    counts: Rc<WindowCounts>,
}

/// How many sessions the window let through and left out.
#[derive(Debug, Default)]
pub struct WindowCounts {
    pub passed: Cell<u64>,
    pub left_out: Cell<u64>,
    /// The window's bounds (ms), for the line that says it let nothing through.
    pub since: Option<i64>,
    pub until: Option<i64>,
}

impl WindowCounts {
    /// What to say when the window let no session through though some were
    /// read (`None` otherwise): a run that writes nothing says why.
    pub fn nothing_passed(&self) -> Option<String> {
        let read = self.left_out.get();
        if self.passed.get() > 0 || read == 0 {
            return None;
        }
        let at = |ms: i64| crate::time::iso8601(ms.div_euclid(1000));
        let bounds = match (self.since, self.until) {
            (Some(s), Some(u)) => format!("between {} and {}", at(s), at(u)),
            (Some(s), None) => format!("since {}", at(s)),
            (None, Some(u)) => format!("before {}", at(u)),
            (None, None) => return None,
        };
        let sessions = if read == 1 { "session" } else { "sessions" };
        Some(format!(
            "no session started {bounds} (--since/--until): {read} {sessions} read, none written"
        ))
    }
}

impl<'s> Window<'s> {
    pub fn new(inner: Box<dyn Sink + 's>, since: Option<i64>, until: Option<i64>) -> Self {
        Window {
            inner,
            since,
            until,
            state: State::Idle,
            counts: Rc::new(WindowCounts {
                since,
                until,
                ..WindowCounts::default()
            }),
        }
    }

    /// The counts, shared.
    pub fn counts(&self) -> Rc<WindowCounts> {
        Rc::clone(&self.counts)
    }

    fn inside(&self, ts: i64) -> bool {
        self.since.is_none_or(|s| ts >= s) && self.until.is_none_or(|u| ts < u)
    }

    /// Decide the held session: pass it (its begin and held events go
    /// out) or drop it.
    fn decide(&mut self, pass: bool) -> io::Result<()> {
        let State::Undecided(s, held) = std::mem::replace(&mut self.state, State::Idle) else {
            return Ok(());
        };
        if !pass {
            self.counts.left_out.set(self.counts.left_out.get() + 1);
            self.state = State::Drop;
            return Ok(());
        }
        self.counts.passed.set(self.counts.passed.get() + 1);
        self.state = State::Pass;
        self.inner.begin(&s)?;
        for ev in &held {
            self.inner.event(&s, ev)?;
        }
        Ok(())
    }
}

impl Adapter for Window<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.state = State::Undecided(s.clone(), Vec::new());
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        match &mut self.state {
            State::Pass | State::Idle => self.inner.event(s, ev),
            State::Drop => Ok(()),
            State::Undecided(_, held) => match ev.ts {
                Some(ts) => {
                    self.decide(self.inside(ts))?;
                    Adapter::event(self, s, ev)
                }
                None => {
                    held.push(ev.clone().into_owned());
                    if held.len() >= HOLD {
                        self.decide(true)?;
                    }
                    Ok(())
                }
            },
        }
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        // Undated to its end: kept.
        self.decide(true)?;
        let pass = matches!(self.state, State::Pass);
        self.state = State::Idle;
        if pass { self.inner.end(s) } else { Ok(()) }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.decide(true)?;
        self.inner.finish()
    }
}

/// A `--since`/`--until` value as epoch milliseconds: an RFC 3339 time
/// (`2026-03-02T09:00:00Z`, `…+02:00`), a UTC date (`2026-03-02`, its
/// midnight), or an age before `now_ms` (`90m`, `12h`, `7d`, `2w`).
pub fn parse_time(s: &str, now_ms: i64) -> Result<i64, String> {
    let s = s.trim();
    if let Some(ms) = crate::time::iso_ms(s) {
        return Ok(ms);
    }
    if s.len() == 10
        && let Some(ms) = crate::time::iso_ms(&format!("{s}T00:00:00Z"))
    {
        return Ok(ms);
    }
    let unit = match s.as_bytes().last() {
        Some(b's') => 1_000,
        Some(b'm') => 60_000,
        Some(b'h') => 3_600_000,
        Some(b'd') => 86_400_000,
        Some(b'w') => 7 * 86_400_000,
        _ => 0,
    };
    if unit > 0
        && let Ok(n) = s[..s.len() - 1].parse::<i64>()
        && n >= 0
        && let Some(ago) = n.checked_mul(unit)
    {
        return Ok(now_ms.saturating_sub(ago));
    }
    Err(format!(
        "{s:?} is not a time: give an RFC 3339 time (2026-03-02T09:00:00Z), a date \
         (2026-03-02) or an age (90m, 12h, 7d, 2w)"
    ))
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_dates_and_ages() {
        let now = 1_772_442_000_000; // 2026-03-02T09:00:00Z
        assert_eq!(parse_time("2026-03-02T09:00:00Z", 0), Ok(now));
        assert_eq!(parse_time("2026-03-02T11:00:00+02:00", 0), Ok(now));
        assert_eq!(parse_time("2026-03-02", 0), Ok(now - 9 * 3_600_000));
        assert_eq!(parse_time("90m", now), Ok(now - 90 * 60_000));
        assert_eq!(parse_time("2w", now), Ok(now - 14 * 86_400_000));
        for bad in [
            "",
            "yesterday",
            "7x",
            "-3d",
            "2026-13-01",
            "99999999999999999999d",
        ] {
            assert!(parse_time(bad, now).is_err(), "{bad}");
        }
    }
}
