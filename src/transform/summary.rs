//! `--summary FILE` and `--outputs FILE`: what a run's sessions came to, for
//! CI (docs/formats.md#ci-summary).
//!
//! A [`SummarySink`] sits in front of the format's sink and watches the same
//! events (nothing it does changes what the format writes): per session the
//! agent, model, outcome, error, usage, cost, tool calls, failed commands,
//! turns and duration. When the run ends, [`RunSummary::markdown`] is
//! appended to the `--summary` file (a GitHub step summary: at most
//! [`SUMMARY_BYTES`]) and [`RunSummary::outputs`] to the `--outputs` file
//! (`key=value` lines, as `$GITHUB_OUTPUT` reads them).
//!
//! Memory is bounded: at most [`MAX_ROWS`] sessions and [`MAX_FAILED`]
//! failed calls per session are kept in detail; the totals count them all.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io;
use std::rc::Rc;

use crate::event::figures::{self, Figures};
use crate::event::{Adapter, Event, Kind, Reads, Session, Sink, Starts, Usage};

/// The most the Markdown summary adds to its file: GitHub refuses a step
/// summary over 1 MiB.
pub const SUMMARY_BYTES: usize = 1024 * 1024;
/// Sessions listed one by one (the totals count every session).
pub const MAX_ROWS: usize = 200;
/// Failed calls listed per session (the count covers every one).
pub const MAX_FAILED: usize = 20;
/// An error message is cut at this many bytes…
const TEXT_BYTES: usize = 4096;
/// …and what a failed call ran on (its command) at this many.
const WHAT_BYTES: usize = 512;

pub use crate::event::figures::Outcome;

/// The mark a summary row shows for an outcome.
fn mark(o: Outcome) -> &'static str {
    match o {
        Outcome::Success => "✅",
        Outcome::Incomplete => "⚠️",
        Outcome::Failure => "❌",
    }
}

/// A tool call that failed: a shell command that exited non-zero, or any
/// call that reported an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedCall {
    /// The tool's name.
    pub tool: String,
    /// What it was run on (the command, path, pattern, …), if known.
    pub what: Option<String>,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
}

/// One session: its figures, and what `--summary` lists about it.
#[derive(Debug, Default)]
pub struct SessionSummary {
    pub id: String,
    /// The input it was read from: its path under the directory argument
    /// it was found in, or its file name (`-`: standard input).
    pub file: String,
    pub dialect: Option<String>,
    pub model: Option<String>,
    /// The figures every format shows.
    pub figures: Figures,
    result_error: Option<String>,
    fatal_error: Option<String>,
    last_error: Option<String>,
    /// The first [`MAX_FAILED`] failed calls.
    pub failed: Vec<FailedCall>,
}

impl SessionSummary {
    /// The agent's verdict, as `-e` reads it.
    pub fn outcome(&self) -> Outcome {
        self.figures.outcome()
    }

    /// The error to show: the result's, else the first fatal one, else the
    /// last one seen (for a session cut off after it). None on success.
    pub fn error(&self) -> Option<&str> {
        if self.outcome() == Outcome::Success {
            return None;
        }
        self.result_error
            .as_deref()
            .or(self.fatal_error.as_deref())
            .or(self.last_error.as_deref())
    }

    fn event(&mut self, ev: &Event<'_>) {
        self.figures.event(ev);
        match &ev.kind {
            Kind::SessionStarted(s) => {
                self.dialect = Some(s.dialect.to_string());
                self.model = s.model.as_deref().map(str::to_owned);
            }
            Kind::ToolCall(b) => self.completed(&b.1, Some(&b.0)),
            Kind::ToolCallCompleted(e) => self.completed(e, e.start.as_deref()),
            Kind::Error { message, fatal, .. } => {
                if *fatal && self.fatal_error.is_none() {
                    self.fatal_error = Some(cut(message));
                }
                self.last_error = Some(cut(message));
            }
            Kind::Result(r) if !r.ok => {
                self.result_error = r.error.as_deref().filter(|e| !e.is_empty()).map(cut);
            }
            _ => {}
        }
    }

    fn completed(
        &mut self,
        e: &crate::event::ToolEnd<'_>,
        start: Option<&crate::event::ToolStart<'_>>,
    ) {
        if !figures::failed(e) || self.failed.len() >= MAX_FAILED {
            return;
        }
        self.failed.push(FailedCall {
            tool: e.tool_name.to_string(),
            what: start
                .and_then(|s| s.key_arg())
                .map(|w| cut_to(w, WHAT_BYTES)),
            exit_code: e.exit_code,
            error: e.error.as_deref().filter(|m| !m.is_empty()).map(cut),
        });
    }
}

/// A message cut to [`TEXT_BYTES`].
fn cut(s: &str) -> String {
    cut_to(s, TEXT_BYTES)
}

fn cut_to(s: &str, max: usize) -> String {
    s[..crate::strings::floor_char_boundary(s, max)].to_owned()
}

/// What every session of a run came to.
#[derive(Debug, Default)]
pub struct RunSummary {
    /// The first [`MAX_ROWS`] sessions.
    pub sessions: Vec<SessionSummary>,
    /// Totals over every session.
    pub total: Totals,
    cur: Option<SessionSummary>,
    /// Saved sessions (one file each) by id, pointing into `saved`: the
    /// same id read twice in a run is one session saved twice.
    saved_ids: std::collections::HashMap<String, usize>,
    /// The copy of each saved session that counts, added to the totals
    /// when the run ends ([`RunSummary::fold_saved`]).
    saved: Vec<Contrib>,
    /// Records the readers did not understand, per dialect and type: set
    /// by the run when it ends (docs/dialects.md#drift).
    pub not_understood: Vec<(String, String, u64)>,
    /// The input being read, as [`SessionSummary::file`] names it: set by
    /// the run before each input.
    pub file: String,
}

/// What one session adds to the totals.
#[derive(Debug, Clone)]
struct Contrib {
    outcome: Outcome,
    usage: Option<Usage>,
    cost_usd: Option<f64>,
    tool_calls: u64,
    failed_calls: u64,
    turns: u64,
    duration_ms: Option<u64>,
    error: Option<(String, String)>,
}

impl Contrib {
    fn of(s: &SessionSummary) -> Contrib {
        let f = &s.figures;
        Contrib {
            outcome: f.outcome(),
            usage: f.usage(),
            cost_usd: f.cost_usd(),
            tool_calls: f.tool_calls(),
            failed_calls: f.failed_calls(),
            turns: f.turns(),
            duration_ms: f.duration_ms(),
            error: s.error().map(|e| (s.id.clone(), e.to_owned())),
        }
    }

    /// Which of two saves of a session counts: the one that recorded more
    /// (tokens, then turns, then tool calls) — the later save of a session
    /// that went on; on a tie, the first one read.
    fn weight(&self) -> (u64, u64, u64) {
        figures::copy_weight(self.usage, self.turns, self.tool_calls)
    }
}

impl Totals {
    fn add(&mut self, c: &Contrib) {
        self.sessions += 1;
        match c.outcome {
            Outcome::Success => {}
            Outcome::Failure => self.failed += 1,
            Outcome::Incomplete => self.incomplete += 1,
        }
        if let Some(u) = c.usage {
            self.usage = Some(self.usage.unwrap_or_default().add(&u));
        }
        if let Some(c) = c.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
        self.tool_calls += c.tool_calls;
        self.failed_calls += c.failed_calls;
        self.turns += c.turns;
        if let Some(d) = c.duration_ms {
            self.duration_ms = Some(self.duration_ms.unwrap_or(0).saturating_add(d));
        }
        if self.error.is_none() {
            self.error.clone_from(&c.error);
        }
    }
}

/// Figures added up over every session of the run.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub sessions: u64,
    pub failed: u64,
    pub incomplete: u64,
    pub usage: Option<Usage>,
    pub cost_usd: Option<f64>,
    pub tool_calls: u64,
    pub failed_calls: u64,
    pub turns: u64,
    pub duration_ms: Option<u64>,
    /// The first failed or cut-off session's id and error.
    pub error: Option<(String, String)>,
    /// Saved sessions read again (the same id in two files): counted once.
    pub duplicates: u64,
}

impl RunSummary {
    /// The open session is over (also called when the run ends).
    pub fn end_session(&mut self) {
        let Some(s) = self.cur.take() else { return };
        let c = Contrib::of(&s);
        if s.dialect.as_deref().is_some_and(figures::is_saved_dialect) {
            if let Some(&i) = self.saved_ids.get(&s.id) {
                self.total.duplicates += 1;
                if c.weight() > self.saved[i].weight() {
                    self.saved[i] = c;
                }
            } else {
                self.saved_ids.insert(s.id.clone(), self.saved.len());
                self.saved.push(c);
            }
        } else {
            self.total.add(&c);
        }
        if self.sessions.len() < MAX_ROWS {
            self.sessions.push(s);
        }
    }

    /// Add the saved sessions to the totals, each once (the copy that
    /// counts); the run is over.
    pub fn fold_saved(&mut self) {
        for c in std::mem::take(&mut self.saved) {
            self.total.add(&c);
        }
        self.saved_ids.clear();
    }

    /// The run's verdict: a failure if any session failed, else incomplete
    /// if any was cut off, else success.
    pub fn outcome(&self) -> Outcome {
        if self.total.failed > 0 {
            Outcome::Failure
        } else if self.total.incomplete > 0 {
            Outcome::Incomplete
        } else {
            Outcome::Success
        }
    }

    /// The Markdown summary, at most [`SUMMARY_BYTES`] after `edit` (the
    /// redaction) has been applied to it.
    pub fn markdown(&self, edit: &dyn Fn(String) -> String) -> String {
        let t = &self.total;
        let mut m = String::new();
        if t.sessions == 0 && t.duplicates == 0 {
            // Nothing to call a success.
            m.push_str("### ⚠️ cstream: no sessions\n\nThe run read no session.\n");
            return edit(m);
        }
        let outcome = self.outcome();
        let _ = writeln!(
            m,
            "### {} cstream: {} ({} session{}{})\n",
            mark(outcome),
            outcome.name(),
            t.sessions,
            if t.sessions == 1 { "" } else { "s" },
            match (t.failed, t.incomplete) {
                (0, 0) => String::new(),
                (f, 0) => format!(", {f} failed"),
                (0, i) => format!(", {i} cut off"),
                (f, i) => format!(", {f} failed, {i} cut off"),
            }
        );
        m.push_str("| session | file | agent | model | outcome | turns | tool calls | failed calls | tokens in / out (cached) | cost | duration |\n");
        m.push_str("|---|---|---|---|---|--:|--:|--:|--:|--:|--:|\n");
        for s in &self.sessions {
            let o = s.outcome();
            let f = &s.figures;
            let _ = writeln!(
                m,
                "| {} | {} | {} | {} | {} {} | {} | {} | {} | {} | {} | {} |",
                code(&s.id),
                code(if s.file.is_empty() { "-" } else { &s.file }),
                cell(s.dialect.as_deref().unwrap_or("unknown")),
                cell(s.model.as_deref().unwrap_or("unknown")),
                mark(o),
                o.name(),
                f.turns(),
                f.tool_calls(),
                f.failed_calls(),
                tokens(f.usage()),
                cost(f.cost_usd()),
                duration(f.duration_ms()),
            );
        }
        let rows = t.sessions + t.duplicates;
        if rows > self.sessions.len() as u64 {
            let _ = writeln!(
                m,
                "\n{} more sessions are counted in the totals only.",
                rows - self.sessions.len() as u64
            );
        }
        if t.duplicates > 0 {
            let _ = writeln!(
                m,
                "\n{} saved session{} read again (the same session id in another file) counted once, as the copy that recorded the most.",
                t.duplicates,
                if t.duplicates == 1 { " was" } else { "s were" }
            );
        }
        let _ = writeln!(
            m,
            "\n**Totals:** {} turns, {} tool calls ({} failed), tokens {}, cost {}, duration {}",
            t.turns,
            t.tool_calls,
            t.failed_calls,
            tokens(t.usage),
            cost(t.cost_usd),
            duration(t.duration_ms)
        );
        if !self.not_understood.is_empty() {
            m.push_str("\n**Not understood** (kept as unknown events; the agent's format may have changed):\n\n");
            for (dialect, what, n) in &self.not_understood {
                let _ = writeln!(
                    m,
                    "- {}: {n} record{} of type {}",
                    cell(dialect),
                    if *n == 1 { "" } else { "s" },
                    code(what)
                );
            }
        }
        for s in &self.sessions {
            if let Some(e) = s.error() {
                let _ = writeln!(m, "\n**Error** in session {}:\n", code(&s.id));
                fenced(&mut m, e);
            }
        }
        if self
            .sessions
            .iter()
            .any(|s| !s.failed.is_empty() || s.figures.failed_calls() > 0)
        {
            m.push_str("\n**Failed commands and tool calls**\n\n");
            for s in &self.sessions {
                for f in &s.failed {
                    let _ = write!(m, "- {}: {}", code(&s.id), cell(&f.tool));
                    if let Some(w) = &f.what {
                        let _ = write!(m, " {}", code(w));
                    }
                    if let Some(c) = f.exit_code.filter(|c| *c != 0) {
                        let _ = write!(m, " exited {c}");
                    }
                    if let Some(e) = &f.error {
                        let _ = write!(m, ": {}", cell(first_line(e)));
                    }
                    m.push('\n');
                }
                let failed_calls = s.figures.failed_calls();
                if failed_calls > s.failed.len() as u64 {
                    let _ = writeln!(
                        m,
                        "- {}: {} more",
                        code(&s.id),
                        failed_calls - s.failed.len() as u64
                    );
                }
            }
        }
        cap(edit(m), SUMMARY_BYTES)
    }

    /// `key=value` lines for `$GITHUB_OUTPUT`; a value with a line break in
    /// the heredoc form (`key<<DELIM` … `DELIM`).
    pub fn outputs(&self) -> String {
        let t = &self.total;
        let model = self.sessions.iter().find_map(|s| s.model.as_deref());
        let mut o = String::new();
        let mut put = |k: &str, v: &str| output_line(&mut o, k, v);
        put("outcome", self.outcome().name());
        put("sessions", &t.sessions.to_string());
        put("failed", &t.failed.to_string());
        put("incomplete", &t.incomplete.to_string());
        put("duplicates", &t.duplicates.to_string());
        put("turns", &t.turns.to_string());
        put("tool_calls", &t.tool_calls.to_string());
        put("failed_calls", &t.failed_calls.to_string());
        // Unknown is empty, never 0; an output count the source lacked in
        // part is a lower bound, and says so.
        let known = |f: &dyn Fn(&Usage) -> Option<u64>| {
            t.usage
                .as_ref()
                .and_then(f)
                .map(|n| n.to_string())
                .unwrap_or_default()
        };
        put("tokens_in", &known(&|u| Some(u.input)));
        put(
            "tokens_out",
            &known(&|u| (!u.output_incomplete || u.output > 0).then_some(u.output)),
        );
        put(
            "tokens_out_complete",
            match t.usage {
                Some(u) if !u.output_incomplete => "true",
                _ => "false",
            },
        );
        put("tokens_cached", &known(&|u| u.cache_read));
        put("tokens_reasoning", &known(&|u| u.reasoning));
        put("cost_usd", &t.cost_usd.map(fmt_cost).unwrap_or_default());
        put(
            "duration_ms",
            &t.duration_ms.map(|d| d.to_string()).unwrap_or_default(),
        );
        put("model", model.unwrap_or(""));
        put("error", t.error.as_ref().map_or("", |(_, e)| e.as_str()));
        o
    }
}

/// Append `key=value`, or the heredoc form when `v` has a line break, with
/// a delimiter that is none of the value's lines.
fn output_line(o: &mut String, k: &str, v: &str) {
    if !v.contains(['\n', '\r']) {
        let _ = writeln!(o, "{k}={v}");
        return;
    }
    let mut delim = String::from("CSTREAM_EOF");
    let mut n = 0;
    while v.lines().any(|l| l == delim) {
        n += 1;
        delim = format!("CSTREAM_EOF_{n}");
    }
    let _ = writeln!(o, "{k}<<{delim}\n{v}\n{delim}");
}

/// `s` cut at a line boundary to at most `max` bytes, with a note.
fn cap(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    const NOTE: &str = "\n_(summary cut at 1 MiB)_\n";
    let end = crate::strings::floor_char_boundary(&s, max - NOTE.len());
    let end = s[..end].rfind('\n').map_or(end, |i| i + 1);
    s.truncate(end);
    s.push_str(NOTE);
    s
}

/// Text for a table cell or a list item: one line, `|` escaped.
fn cell(s: &str) -> String {
    first_line(s).replace('|', "\\|")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Inline code for `s` (one line), with a backtick run longer than any in it.
fn code(s: &str) -> String {
    let s = first_line(s);
    let run = longest_run(s, '`') + 1;
    let ticks = "`".repeat(run);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{}{pad}{ticks}", s.replace('|', "\\|"))
}

/// `text` as a fenced block whose fence is longer than any backtick run in it.
fn fenced(m: &mut String, text: &str) {
    let fence = "`".repeat((longest_run(text, '`') + 1).max(3));
    let _ = writeln!(m, "{fence}text\n{}\n{fence}", text.trim_end_matches('\n'));
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for ch in s.chars() {
        if ch == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

fn tokens(u: Option<Usage>) -> String {
    match u {
        None => "–".to_owned(),
        Some(u) => {
            let out = figures::output_shown(&u, |n| n.to_string());
            match u.cache_read {
                Some(c) => format!("{} / {out} ({c})", u.input),
                None => format!("{} / {out}", u.input),
            }
        }
    }
}

fn fmt_cost(c: f64) -> String {
    format!("{c:.4}")
}

fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "–".to_owned(), |c| format!("${}", fmt_cost(c)))
}

/// A duration as every human output writes it.
fn duration(ms: Option<u64>) -> String {
    ms.map_or_else(|| "–".to_owned(), figures::fmt_ms)
}

/// Watches the events on their way to `inner` and adds them up in a
/// [`RunSummary`] shared with the pipeline.
pub struct SummarySink<'s> {
    inner: Box<dyn Sink + 's>,
    state: Rc<RefCell<RunSummary>>,
}

impl<'s> SummarySink<'s> {
    /// Watch what goes to `inner`, adding it up in `state`.
    pub fn new(inner: Box<dyn Sink + 's>, state: Rc<RefCell<RunSummary>>) -> Self {
        SummarySink { inner, state }
    }
}

impl Adapter for SummarySink<'_> {
    fn inner(&mut self) -> &mut dyn Sink {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Sink {
        &*self.inner
    }

    fn starts(&self) -> Starts {
        // A failed call is listed with what it ran on.
        self.inner.starts().max(Starts::Label)
    }

    fn reads(&self) -> Reads {
        // The failed calls it lists are described by their text.
        Reads::Whole
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        {
            let mut st = self.state.borrow_mut();
            st.end_session();
            let file = st.file.clone();
            st.cur = Some(SessionSummary {
                id: s.id.clone(),
                file,
                ..SessionSummary::default()
            });
        }
        self.inner.begin(s)
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if let Some(cur) = self.state.borrow_mut().cur.as_mut() {
            cur.event(ev);
        }
        self.inner.event(s, ev)
    }

    fn end(&mut self, s: &Session) -> io::Result<()> {
        self.state.borrow_mut().end_session();
        self.inner.end(s)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.state.borrow_mut().end_session();
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_outputs_use_a_delimiter_no_line_equals() {
        let mut o = String::new();
        output_line(&mut o, "error", "a\nCSTREAM_EOF\nb");
        assert_eq!(
            o,
            "error<<CSTREAM_EOF_1\na\nCSTREAM_EOF\nb\nCSTREAM_EOF_1\n"
        );
        let mut o = String::new();
        output_line(&mut o, "k", "one line");
        assert_eq!(o, "k=one line\n");
    }

    #[test]
    fn the_summary_is_cut_at_a_line_within_the_cap() {
        let long = "x".repeat(100) + "\n";
        let s = cap(long.repeat(50), 1000);
        assert!(s.len() <= 1000, "{}", s.len());
        assert!(s.ends_with("_(summary cut at 1 MiB)_\n"));
        assert!(s.starts_with(&long));
    }

    #[test]
    fn code_spans_and_fences_outlast_backticks_inside() {
        assert_eq!(code("a ``b`` c"), "```a ``b`` c```");
        assert_eq!(code("`x`"), "`` `x` ``");
        let mut m = String::new();
        fenced(&mut m, "```\ncode\n```");
        assert!(m.starts_with("````text\n"), "{m}");
    }
}
