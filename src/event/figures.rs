//! A session's figures, computed once from its events: outcome, duration,
//! turns, tool calls and failed calls, tokens and cost.
//!
//! Every format that shows a figure of a session (the text transcript's
//! last line, the Markdown and HTML summaries, the documents' metadata,
//! `--summary` and `--outputs`) reads it from a [`Figures`] fed the same
//! events, so the same session shows the same figures everywhere.
//! docs/events.md#session-figures defines each one.

use super::calls::CallTable;
use super::{Event, Kind, ToolEnd, Usage};

/// How a session ended: the agent's own verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// A result that reported success, and no fatal error.
    Success,
    /// No result: the stream was cut off, or the last turn never completed.
    Incomplete,
    /// A result marked as an error, or a fatal error.
    Failure,
}

impl Outcome {
    /// The word `--outputs` writes: `success`, `incomplete` or `failure`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Incomplete => "incomplete",
            Outcome::Failure => "failure",
        }
    }
}

/// The figures of one session (docs/events.md#session-figures).
#[derive(Debug, Default)]
pub struct Figures {
    /// Calls started and not yet completed (a completion without a start,
    /// from a capture that began mid-call, is a call all the same).
    open: CallTable<()>,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    /// `Some(ok)` once the result came.
    result_ok: Option<bool>,
    result_duration_ms: Option<u64>,
    result_usage: Option<Usage>,
    fatal: bool,
    /// The sum of the `usage_delta`s (`None` when there were none).
    usage_sum: Option<Usage>,
    /// A turn is open: a prompt came, or the answer to one that was not
    /// echoed, and no result has closed it yet.
    in_turn: bool,
    turns: u64,
    tool_calls: u64,
    failed_calls: u64,
    cost_usd: Option<f64>,
}

impl Figures {
    /// Take one event of the session.
    pub fn event(&mut self, ev: &Event<'_>) {
        if let Some(ts) = ev.ts {
            self.first_ts.get_or_insert(ts);
            self.last_ts = Some(ts);
        }
        match &ev.kind {
            Kind::UserMessage { .. } => {
                self.turns += 1;
                self.in_turn = true;
            }
            Kind::TextDelta { .. }
            | Kind::AssistantMessage { .. }
            | Kind::ThinkingDelta { .. }
            | Kind::Thinking { .. } => self.answer(),
            Kind::ToolCallStarted(t) => {
                self.answer();
                self.tool_calls += 1;
                self.open.insert(&t.call_id, ());
            }
            Kind::ToolCall(b) => {
                self.answer();
                self.tool_calls += 1;
                self.completed(&b.1);
            }
            Kind::ToolCallCompleted(e) => {
                if self.open.remove(&e.call_id).is_none() {
                    self.answer();
                    self.tool_calls += 1;
                }
                self.completed(e);
            }
            Kind::UsageDelta(u) => self.usage_sum = Some(self.usage_sum.unwrap_or_default().add(u)),
            Kind::Error { fatal: true, .. } => self.fatal = true,
            Kind::Result(r) => {
                // A result answers a turn even when nothing else did.
                self.answer();
                self.in_turn = false;
                self.result_ok = Some(r.ok);
                self.result_duration_ms = r.duration_ms;
                if r.usage.is_some() {
                    self.result_usage = r.usage;
                }
                if let Some(c) = r.cost_usd {
                    self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
                }
            }
            _ => {}
        }
    }

    /// Answer content: it belongs to the open turn, or opens one for a
    /// prompt the source did not echo.
    fn answer(&mut self) {
        if !self.in_turn {
            self.turns += 1;
            self.in_turn = true;
        }
    }

    fn completed(&mut self, e: &ToolEnd<'_>) {
        if failed(e) {
            self.failed_calls += 1;
        }
    }

    /// The agent's verdict.
    pub fn outcome(&self) -> Outcome {
        match self.result_ok {
            Some(true) if !self.fatal => Outcome::Success,
            Some(_) => Outcome::Failure,
            None if self.fatal => Outcome::Failure,
            None => Outcome::Incomplete,
        }
    }

    /// The agent's own duration, else the time from the first to the last
    /// dated event (unknown when they are not two different times).
    pub fn duration_ms(&self) -> Option<u64> {
        self.result_duration_ms
            .or_else(|| span_ms(self.first_ts, self.last_ts))
    }

    /// The session's first timestamp (epoch ms).
    pub fn first_ts(&self) -> Option<i64> {
        self.first_ts
    }

    /// Turns: user prompts and what answers each (an answer whose prompt
    /// was not echoed counts as one).
    pub fn turns(&self) -> u64 {
        self.turns
    }

    /// Tool calls started.
    pub fn tool_calls(&self) -> u64 {
        self.tool_calls
    }

    /// Tool calls that failed (see [`failed`]).
    pub fn failed_calls(&self) -> u64 {
        self.failed_calls
    }

    /// The session's tokens: the result's totals (which the normalizer makes
    /// equal to the sum of the increments), else that sum; `None` when the
    /// source gave no counts.
    pub fn usage(&self) -> Option<Usage> {
        self.result_usage.or(self.usage_sum)
    }

    /// The agent's own cost (summed over a stream's several results).
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_usd
    }

    /// Whether a result came.
    pub fn has_result(&self) -> bool {
        self.result_ok.is_some()
    }
}

/// The dialects of saved session files: each file is one whole session,
/// so two files with one session id are two saves of it (an archived copy
/// of an active one, a copied file), and a run counts it once. Live streams
/// are left out: a resumed session streams its new turns under its old id,
/// and those add up.
const SAVED: &[&str] = &[
    "claude-project",
    "codex-rollout",
    "gemini-chat",
    "cursor-transcript",
    "pi",
    // Saved `events.jsonl` (a resume appends to the same file) and live
    // runs, each under its own session id.
    "copilot",
    // Exports and the store's sessions; a live run is a session of its own.
    "opencode",
    "antigravity-transcript",
];

/// Whether sessions read by `dialect` are saved files, of which two with
/// one id are copies of one session (`--summary`, `--to usage`).
pub fn is_saved_dialect(dialect: &str) -> bool {
    SAVED.contains(&dialect)
}

/// Which of two copies of a saved session counts: the one that recorded
/// more (tokens, then turns, then tool calls), the later save of a session
/// that went on; on a tie the caller keeps the first one read.
pub fn copy_weight(usage: Option<Usage>, turns: u64, tool_calls: u64) -> (u64, u64, u64) {
    let u = usage.unwrap_or_default();
    (u.input.saturating_add(u.output), turns, tool_calls)
}

/// Whether a completed call failed: it reported an error or a shell
/// command exited non-zero; a call cstream closed as cancelled (the
/// session ended first) did not fail, and neither did one whose outcome
/// the source did not record.
pub fn failed(e: &ToolEnd<'_>) -> bool {
    let exited = e.exit_code.is_some_and(|c| c != 0);
    !(e.cancelled || e.outcome_unknown || (e.ok && !exited))
}

/// The time from `first` to `last`, when both are known and `last` is later.
pub fn span_ms(first: Option<i64>, last: Option<i64>) -> Option<u64> {
    match (first, last) {
        (Some(a), Some(b)) if b > a => u64::try_from(b - a).ok(),
        _ => None,
    }
}

/// An output token count as people read it: `unknown` when the source had
/// none of the counts, `≥ N` when it lacked some (`fmt` writes the number).
pub fn output_shown(u: &Usage, fmt: impl Fn(u64) -> String) -> String {
    match (u.output_incomplete, u.output) {
        (true, 0) => "unknown".to_owned(),
        (true, n) => format!("≥ {}", fmt(n)),
        (false, n) => fmt(n),
    }
}

/// A duration as every human output writes it: `850ms`, `5.4s`, `2m03s`.
pub fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        let s = ms / 1000;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}
