//! `--to usage`: what each session used and cost, one row per session, or
//! per day, week, month, model, agent or project with `--group`
//! (docs/usage.md).
//!
//! Every figure of a row is the session's [`Figures`] (the ones `--summary`
//! and the transcripts show); the only figure this module adds is the
//! estimated cost, for a session whose agent reported none: its usage
//! increments priced with a dated table of per-token prices
//! ([`Prices`], bundled from `data/prices.json` or read from `--prices`).
//!
//! The rows are written when the run ends: copies of one saved session
//! (the same id in two files of a saved dialect) count once, as in
//! `--summary`, and a group needs every session. Memory is one small row
//! per session, whatever the sessions held.

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::event::figures::{self, Figures};
use crate::event::{Event, Kind, Reads, Session, Sink, Usage};
use crate::json;
use crate::json::layout::{J, Layout, write_json};

/// The bundled price table (`data/prices.json`): a dated snapshot of
/// LiteLLM's public per-model price list, cut to the models agents run.
pub const BUNDLED_PRICES: &str = include_str!("../../data/prices.json");

/// What `--group` adds sessions up by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The UTC day the session started.
    Day,
    /// The week (Monday to Sunday, UTC) the session started, named by its Monday.
    Week,
    /// The UTC month the session started.
    Month,
    /// The model the session named.
    Model,
    /// The agent (input dialect).
    Agent,
    /// The working directory the session named.
    Project,
}

impl Group {
    /// The name `--group` takes, and the `group` field of a row.
    pub fn name(self) -> &'static str {
        match self {
            Group::Day => "day",
            Group::Week => "week",
            Group::Month => "month",
            Group::Model => "model",
            Group::Agent => "agent",
            Group::Project => "project",
        }
    }

    /// Every group, in the order `--help` lists them: the command line, the
    /// man page and the completions derive from this list, as they do from
    /// [`Format::ALL`](crate::output::Format::ALL).
    pub const ALL: [Group; 6] = [
        Group::Day,
        Group::Week,
        Group::Month,
        Group::Model,
        Group::Agent,
        Group::Project,
    ];

    /// One line for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Group::Day => "The UTC day the session started",
            Group::Week => "The week (Monday to Sunday, UTC) the session started",
            Group::Month => "The UTC month the session started",
            Group::Model => "The model the session named",
            Group::Agent => "The agent that wrote it",
            Group::Project => "The working directory the session named",
        }
    }
}

/// Per-token prices of one model at one tier (US dollars per token).
#[derive(Debug, Clone, Copy, Deserialize)]
struct Rates {
    input: f64,
    output: f64,
    /// A rate left out is the input rate: no discount listed.
    cache_read: Option<f64>,
    cache_write: Option<f64>,
    /// A write to the one-hour cache; left out, the `cache_write` rate.
    cache_write_1h: Option<f64>,
}

impl Rates {
    fn check(&self) -> Result<(), String> {
        let all = [
            Some(self.input),
            Some(self.output),
            self.cache_read,
            self.cache_write,
            self.cache_write_1h,
        ];
        if all.into_iter().flatten().all(|r| r.is_finite() && r >= 0.0) {
            Ok(())
        } else {
            Err("a price is negative or not a number".to_owned())
        }
    }
}

/// The long-context tier: a request whose input (cache included) is over
/// `tokens` is priced at these rates, all of its tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
struct Tier {
    tokens: u64,
    #[serde(flatten)]
    rates: Rates,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct ModelPrice {
    #[serde(flatten)]
    base: Rates,
    above: Option<Tier>,
}

impl ModelPrice {
    /// What one request's tokens cost. `u.input` counts the cache reads
    /// and writes too (docs/events.md#usage); they are priced apart.
    fn cost(&self, u: &Usage) -> f64 {
        let r = match &self.above {
            Some(t) if u.input > t.tokens => &t.rates,
            _ => &self.base,
        };
        let read = u.cache_read.unwrap_or(0);
        let write = u.cache_write.unwrap_or(0);
        // The one-hour writes are a part of the writes, priced apart.
        let write_1h = u.cache_write_1h.unwrap_or(0).min(write);
        let fresh = u.input.saturating_sub(read).saturating_sub(write);
        let write_rate = r.cache_write.unwrap_or(r.input);
        fresh as f64 * r.input
            + read as f64 * r.cache_read.unwrap_or(r.input)
            + (write - write_1h) as f64 * write_rate
            + write_1h as f64 * r.cache_write_1h.unwrap_or(write_rate)
            + u.output as f64 * r.output
    }
}

/// A price table: the bundled one or a `--prices` file, in the format of
/// `data/prices.json` (docs/usage.md#prices).
#[derive(Debug, Clone, Deserialize)]
pub struct Prices {
    /// Where the prices were copied from.
    source: Option<String>,
    /// When.
    retrieved: Option<String>,
    models: HashMap<String, ModelPrice>,
}

impl Prices {
    /// Read a price table from its JSON text.
    pub fn parse(text: &str) -> Result<Prices, String> {
        let mut p: Prices = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (name, m) in &p.models {
            m.base.check().map_err(|e| format!("model {name}: {e}"))?;
            if let Some(t) = &m.above {
                t.rates.check().map_err(|e| format!("model {name}: {e}"))?;
            }
        }
        p.models = p
            .models
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        Ok(p)
    }

    /// The bundled table.
    pub fn bundled() -> Arc<Prices> {
        static BUNDLED: OnceLock<Arc<Prices>> = OnceLock::new();
        BUNDLED
            .get_or_init(|| {
                Arc::new(Prices::parse(BUNDLED_PRICES).expect("data/prices.json is valid"))
            })
            .clone()
    }

    /// Where the table comes from and its date, for the table's legend.
    pub fn describe(&self) -> String {
        match (&self.source, &self.retrieved) {
            (Some(s), Some(d)) => format!("{s}, {d}"),
            (Some(s), None) => s.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => "a price table without a source".to_owned(),
        }
    }

    /// The prices of `model`: its own entry, else the entry it is a dated
    /// release of (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). A
    /// provider prefix (`anthropic/…`), a Vertex date (`…@20250929`) and a
    /// context-size tag (`…[1m]`) are not part of the name. A Claude
    /// version written with a dot (`claude-sonnet-4.6`, as Copilot names
    /// it) is Anthropic's `claude-sonnet-4-6`.
    fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        let m = model.trim().to_ascii_lowercase();
        let m = m.rsplit('/').next().unwrap_or("");
        let m = m.split(['[', '@']).next().unwrap_or("").trim();
        let find = |m: &str| {
            self.models
                .get(m)
                .or_else(|| undated(m).and_then(|k| self.models.get(k)))
        };
        find(m).or_else(|| {
            // Anthropic's ids never hold a dot, so the dotted spelling is
            // only another way to write the same id.
            (m.starts_with("claude-") && m.contains('.'))
                .then(|| m.replace('.', "-"))
                .and_then(|d| find(&d))
        })
    }

    /// Whether the table prices `model`.
    #[cfg(test)]
    fn has(&self, model: &str) -> bool {
        self.lookup(model).is_some()
    }
}

/// `name` without a release date at its end (`-20250929`, `-2025-09-29`).
/// Looked at as bytes: a model name may hold any character (a damaged
/// line's replacement character among them), and the cut is always just
/// before an ASCII `-`, so it falls between two characters.
fn undated(name: &str) -> Option<&str> {
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    let b = name.as_bytes();
    let n = b.len();
    if n > 9 && b[n - 9] == b'-' && digits(&b[n - 8..]) {
        return Some(&name[..n - 9]);
    }
    if n > 11 {
        let d = &b[n - 11..];
        if d[0] == b'-'
            && d[5] == b'-'
            && d[8] == b'-'
            && digits(&d[1..5])
            && digits(&d[6..8])
            && digits(&d[9..])
        {
            return Some(&name[..n - 11]);
        }
    }
    None
}

/// What `--to usage` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct UsageOptions {
    /// `--group`: add sessions up by this; `None`: one row per session.
    pub group: Option<Group>,
    /// A table with totals (standard output is a terminal) instead of JSON rows.
    pub table: bool,
    /// `--prices`; `None`: the bundled table.
    pub prices: Option<Arc<Prices>>,
}

/// Where a session's cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostSource {
    /// The agent reported it.
    Agent,
    /// Estimated from the price table.
    Estimate,
}

impl CostSource {
    fn name(self) -> &'static str {
        match self {
            CostSource::Agent => "agent",
            CostSource::Estimate => "estimate",
        }
    }
}

/// One session's row: what `--jobs` workers reduce each session to and
/// send to the run's sink ([`UsageSink::add_row`]).
#[derive(Debug, Clone)]
pub(crate) struct Row {
    agent: Option<String>,
    id: String,
    title: Option<String>,
    model: Option<String>,
    project: Option<String>,
    start: Option<i64>,
    duration_ms: Option<u64>,
    turns: u64,
    tool_calls: u64,
    usage: Option<Usage>,
    cost: Option<(f64, CostSource)>,
}

/// The session being read.
struct Cur {
    id: String,
    agent: Option<String>,
    title: Option<String>,
    model: Option<String>,
    project: Option<String>,
    figures: Figures,
    price: Option<ModelPrice>,
    estimate: f64,
}

/// The `usage` sink.
pub struct UsageSink<W: Write> {
    w: W,
    opts: UsageOptions,
    prices: Arc<Prices>,
    cur: Option<Cur>,
    rows: Vec<Row>,
    /// Saved sessions by id, pointing into `rows`.
    saved: HashMap<String, usize>,
    /// A `--jobs` worker's: every row is kept, for [`UsageSink::take_rows`]
    /// to hand to the run's sink, which alone sees every file's copies.
    worker: bool,
}

impl<W: Write> UsageSink<W> {
    /// A sink writing to `w`.
    pub fn new(w: W, opts: &UsageOptions) -> Self {
        UsageSink {
            w,
            prices: opts.prices.clone().unwrap_or_else(Prices::bundled),
            opts: opts.clone(),
            cur: None,
            rows: Vec::new(),
            saved: HashMap::new(),
            worker: false,
        }
    }

    fn end_session(&mut self) {
        let Some(c) = self.cur.take() else { return };
        let row = Self::row(c);
        if self.worker {
            self.rows.push(row);
        } else {
            self.add_row(row);
        }
    }

    /// The row of a session read whole.
    fn row(c: Cur) -> Row {
        let f = &c.figures;
        let usage = f.usage();
        let cost = match (f.cost_usd(), usage, c.price) {
            (Some(c), _, _) => Some((c, CostSource::Agent)),
            (None, Some(_), Some(_)) => Some((round6(c.estimate), CostSource::Estimate)),
            _ => None,
        };
        Row {
            agent: c.agent,
            id: c.id,
            title: c.title,
            model: c.model,
            project: c.project,
            start: f.first_ts(),
            duration_ms: f.duration_ms(),
            turns: f.turns(),
            tool_calls: f.tool_calls(),
            usage,
            cost,
        }
    }

    /// Keep a session's row: copies of one saved session (the same id in
    /// two files of a saved dialect) count once, the fullest of them, in
    /// the place of the first.
    pub(crate) fn add_row(&mut self, row: Row) {
        if row.agent.as_deref().is_some_and(figures::is_saved_dialect) {
            if let Some(&i) = self.saved.get(&row.id) {
                let old = &self.rows[i];
                if weight(&row) > weight(old) {
                    self.rows[i] = row;
                }
                return;
            }
            self.saved.insert(row.id.clone(), self.rows.len());
        }
        self.rows.push(row);
    }

    /// The rows of the sessions ended so far, in the order they ended
    /// (a worker's: see [`UsageSink::worker`]).
    pub(crate) fn take_rows(&mut self) -> std::vec::Drain<'_, Row> {
        self.rows.drain(..)
    }

    fn write_all(&mut self) -> io::Result<()> {
        let rows = std::mem::take(&mut self.rows);
        let out = match (self.opts.group, self.opts.table) {
            (None, false) => {
                let mut out = Vec::new();
                for r in &rows {
                    write_session(&mut out, r);
                    out.push(b'\n');
                }
                out
            }
            (Some(g), false) => {
                let mut out = Vec::new();
                for a in groups(&rows, g) {
                    write_json(&mut out, &a.json(g), Layout::Compact, 0);
                    out.push(b'\n');
                }
                out
            }
            (g, true) => table(&rows, g, &self.prices).into_bytes(),
        };
        self.w.write_all(&out)
    }
}

fn weight(r: &Row) -> (u64, u64, u64) {
    figures::copy_weight(r.usage, r.turns, r.tool_calls)
}

/// A dollar figure without the noise of adding floats: to a millionth.
fn round6(v: f64) -> f64 {
    let r = (v * 1e6).round() / 1e6;
    // A cost near the largest double has no fraction to round, and
    // multiplying it would make it infinite, which JSON cannot write.
    if r.is_finite() { r } else { v }
}

impl UsageSink<io::Sink> {
    /// The sink of a `--jobs` worker: it reduces each session of its file
    /// to a row and keeps them all, for the run's sink to take
    /// ([`UsageSink::add_row`]) in input order; it writes nothing.
    pub(crate) fn worker(opts: &UsageOptions) -> Self {
        UsageSink {
            worker: true,
            ..UsageSink::new(io::sink(), opts)
        }
    }
}

impl Row {
    /// The session's id, made up from its place in the run (`session-N`)
    /// when the worker could not know that place.
    pub(crate) fn set_id(&mut self, id: String) {
        self.id = id;
    }
}

impl<W: Write> Sink for UsageSink<W> {
    // Figures only: the readers may skip the text.
    fn reads(&self) -> Reads {
        Reads::Figures
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.end_session();
        self.cur = Some(Cur {
            id: s.id.clone(),
            agent: None,
            title: None,
            model: None,
            project: None,
            figures: Figures::default(),
            price: None,
            estimate: 0.0,
        });
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let Some(c) = self.cur.as_mut() else {
            return Ok(());
        };
        c.figures.event(ev);
        match &ev.kind {
            Kind::SessionStarted(st) => {
                c.agent = Some(st.dialect.to_string());
                c.model = st.model.as_deref().map(str::to_owned);
                c.title = st.title.as_deref().map(str::to_owned);
                c.project = st.cwd.as_deref().map(str::to_owned);
                c.price = c
                    .model
                    .as_deref()
                    .and_then(|m| self.prices.lookup(m))
                    .copied();
            }
            // Each increment is one request (or the rest of one), priced
            // on its own: the long-context tier is a request's, not the
            // session's.
            Kind::UsageDelta(u) => {
                if let Some(p) = &c.price {
                    c.estimate += p.cost(u);
                }
            }
            _ => {}
        }
        Ok(())
    }

    // A saved session's title written after its turns (read for the
    // figures, its start did not wait for it).
    fn title(&mut self, _s: &Session, title: &str) -> io::Result<()> {
        if let Some(c) = self.cur.as_mut() {
            c.title = Some(title.to_owned());
        }
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        self.end_session();
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    // A pause of the input writes nothing: the rows are the run's.
    fn idle(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_session();
        self.write_all()?;
        self.w.flush()
    }
}

fn jbool(b: bool) -> J {
    J::Raw(if b { "true" } else { "false" }.to_owned())
}

fn jf64(v: Option<f64>) -> J {
    match v {
        Some(v) if v.is_finite() => {
            J::Raw(serde_json::to_string(&v).unwrap_or_else(|_| "null".to_owned()))
        }
        _ => J::Null,
    }
}

/// The output count as a figure: unknown when the source had none of it.
fn output_known(u: &Usage) -> Option<u64> {
    (!u.output_incomplete || u.output > 0).then_some(u.output)
}

/// A session's row, written straight out: a row per session is the
/// whole of `--to usage` without `--group`, and building it as a [`J`]
/// tree first (a string copied per field, a tree freed per row) cost
/// three quarters of the serial end of a `-j` run (docs/performance.md,
/// "Session rows written straight"). The figures are written as [`J`]
/// writes them, so a figure shows the same here as in the groups.
fn write_session(out: &mut Vec<u8>, r: &Row) {
    fn opt_str(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => json::write_str(out, s).expect("writing to a Vec"),
            None => out.extend_from_slice(b"null"),
        }
    }
    fn opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
        match v {
            Some(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
    }
    let u = r.usage.as_ref();
    out.extend_from_slice(b"{\"agent\":");
    opt_str(out, r.agent.as_deref());
    out.extend_from_slice(b",\"session_id\":");
    opt_str(out, Some(&r.id));
    out.extend_from_slice(b",\"title\":");
    opt_str(out, r.title.as_deref());
    out.extend_from_slice(b",\"models\":");
    match r.model.as_deref() {
        Some(m) => {
            out.push(b'[');
            opt_str(out, Some(m));
            out.push(b']');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"project\":");
    opt_str(out, r.project.as_deref());
    out.extend_from_slice(b",\"start\":");
    let start = r.start.map(|ms| crate::time::iso8601(ms.div_euclid(1000)));
    opt_str(out, start.as_deref());
    out.extend_from_slice(b",\"duration_ms\":");
    opt_u64(out, r.duration_ms);
    out.extend_from_slice(b",\"turns\":");
    opt_u64(out, Some(r.turns));
    out.extend_from_slice(b",\"tool_calls\":");
    opt_u64(out, Some(r.tool_calls));
    out.extend_from_slice(b",\"tokens_in\":");
    opt_u64(out, u.map(|u| u.input));
    out.extend_from_slice(b",\"tokens_out\":");
    opt_u64(out, u.and_then(output_known));
    out.extend_from_slice(b",\"tokens_cache_read\":");
    opt_u64(out, u.and_then(|u| u.cache_read));
    out.extend_from_slice(b",\"tokens_cache_write\":");
    opt_u64(out, u.and_then(|u| u.cache_write));
    // The part of the output spent reasoning, where the agent counts it
    // apart (docs/usage.md).
    out.extend_from_slice(b",\"tokens_reasoning\":");
    opt_u64(out, u.and_then(|u| u.reasoning));
    out.extend_from_slice(b",\"tokens_complete\":");
    out.extend_from_slice(if u.is_some_and(|u| !u.output_incomplete) {
        b"true"
    } else {
        b"false"
    });
    out.extend_from_slice(b",\"cost_usd\":");
    json::write_f64(out, r.cost.map_or(f64::NAN, |c| c.0)).expect("writing to a Vec");
    out.extend_from_slice(b",\"cost_source\":");
    opt_str(out, r.cost.map(|c| c.1.name()));
    out.push(b'}');
}

/// A sum over a group's sessions: the known part, and how many members
/// did not know it.
#[derive(Debug, Clone, Copy, Default)]
struct Sum<T> {
    known: Option<T>,
    missing: u64,
}

/// A figure a group adds up. Sums stop at the largest value the type
/// holds, as a session's own figures do (`event::Usage`): a total past it
/// (usage at `i64::MAX` in two sessions) would otherwise wrap to a small,
/// wrong number, or for a cost become infinite, which JSON cannot write.
trait Total: Copy {
    fn plus(self, other: Self) -> Self;
}

impl Total for u64 {
    fn plus(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

impl Total for f64 {
    fn plus(self, other: Self) -> Self {
        let s = self + other;
        if s.is_finite() { s } else { f64::MAX }
    }
}

impl<T: Total> Sum<T> {
    fn add(&mut self, v: Option<T>) {
        match v {
            Some(v) => self.known = Some(self.known.map_or(v, |k| k.plus(v))),
            None => self.missing += 1,
        }
    }

    fn complete(&self) -> bool {
        self.missing == 0
    }
}

/// One group's totals.
#[derive(Debug, Default)]
struct Agg {
    key: Option<String>,
    sessions: u64,
    agents: BTreeSet<String>,
    models: BTreeSet<String>,
    duration_ms: Sum<u64>,
    turns: u64,
    tool_calls: u64,
    tokens_in: Sum<u64>,
    tokens_out: Sum<u64>,
    cache_read: Sum<u64>,
    cache_write: Sum<u64>,
    reasoning: Sum<u64>,
    /// Some member's output count is a lower bound.
    out_lower_bound: bool,
    cost: Sum<f64>,
    agent_cost: bool,
    estimated_cost: bool,
}

impl Agg {
    fn add(&mut self, r: &Row) {
        self.sessions += 1;
        if let Some(a) = &r.agent {
            self.agents.insert(a.clone());
        }
        if let Some(m) = &r.model {
            self.models.insert(m.clone());
        }
        self.duration_ms.add(r.duration_ms);
        self.turns = self.turns.saturating_add(r.turns);
        self.tool_calls = self.tool_calls.saturating_add(r.tool_calls);
        let u = r.usage.as_ref();
        self.tokens_in.add(u.map(|u| u.input));
        self.tokens_out.add(u.and_then(output_known));
        self.out_lower_bound |= u.is_some_and(|u| u.output_incomplete);
        self.cache_read.add(u.and_then(|u| u.cache_read));
        self.cache_write.add(u.and_then(|u| u.cache_write));
        self.reasoning.add(u.and_then(|u| u.reasoning));
        self.cost.add(r.cost.map(|c| c.0));
        match r.cost.map(|c| c.1) {
            Some(CostSource::Agent) => self.agent_cost = true,
            Some(CostSource::Estimate) => self.estimated_cost = true,
            None => {}
        }
    }

    fn tokens_complete(&self) -> bool {
        self.tokens_in.complete() && self.tokens_out.complete() && !self.out_lower_bound
    }

    fn cost_source(&self) -> Option<&'static str> {
        match (self.agent_cost, self.estimated_cost) {
            (true, true) => Some("mixed"),
            (true, false) => Some("agent"),
            (false, true) => Some("estimate"),
            (false, false) => None,
        }
    }

    fn cost(&self) -> Option<f64> {
        self.cost.known.map(round6)
    }

    fn json(&self, g: Group) -> J {
        let set = |s: &BTreeSet<String>| J::Arr(s.iter().map(|x| J::str(x)).collect());
        J::Obj(vec![
            ("group", J::str(g.name())),
            ("key", J::opt_str(self.key.as_deref())),
            ("sessions", J::u64(self.sessions)),
            ("agents", set(&self.agents)),
            ("models", set(&self.models)),
            ("duration_ms", J::opt_u64(self.duration_ms.known)),
            ("duration_complete", jbool(self.duration_ms.complete())),
            ("turns", J::u64(self.turns)),
            ("tool_calls", J::u64(self.tool_calls)),
            ("tokens_in", J::opt_u64(self.tokens_in.known)),
            ("tokens_out", J::opt_u64(self.tokens_out.known)),
            ("tokens_cache_read", J::opt_u64(self.cache_read.known)),
            ("tokens_cache_write", J::opt_u64(self.cache_write.known)),
            ("tokens_reasoning", J::opt_u64(self.reasoning.known)),
            ("reasoning_complete", jbool(self.reasoning.complete())),
            ("tokens_complete", jbool(self.tokens_complete())),
            (
                "cache_complete",
                jbool(self.cache_read.complete() && self.cache_write.complete()),
            ),
            ("cost_usd", jf64(self.cost())),
            ("cost_source", J::opt_str(self.cost_source())),
            ("cost_complete", jbool(self.cost.complete())),
        ])
    }
}

/// The group a session falls in: by the time it started (a session that
/// spans midnight counts on the day it began), its model, agent or
/// working directory; `None` when the session does not say.
fn key(r: &Row, g: Group) -> Option<String> {
    let date = |ms: i64| crate::time::iso8601(ms.div_euclid(1000));
    match g {
        Group::Day => r.start.map(|ms| date(ms)[..10].to_owned()),
        Group::Month => r.start.map(|ms| date(ms)[..7].to_owned()),
        Group::Week => r.start.map(|ms| {
            let day = ms.div_euclid(86_400_000);
            // 1970-01-01 was a Thursday: Monday is 3 days before.
            let monday = day - (day + 3).rem_euclid(7);
            date(monday * 86_400_000)[..10].to_owned()
        }),
        Group::Model => r.model.clone(),
        Group::Agent => r.agent.clone(),
        Group::Project => r.project.clone(),
    }
}

/// The groups in key order, the sessions that could not be placed last.
fn groups(rows: &[Row], g: Group) -> Vec<Agg> {
    let mut by: HashMap<Option<String>, Agg> = HashMap::new();
    for r in rows {
        let k = key(r, g);
        by.entry(k.clone())
            .or_insert_with(|| Agg {
                key: k,
                ..Agg::default()
            })
            .add(r);
    }
    let mut v: Vec<Agg> = by.into_values().collect();
    v.sort_by(|a, b| match (&a.key, &b.key) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    v
}

/// A count on the table: `–` unknown, `≥ N` when some member did not know it.
fn cell_sum(s: &Sum<u64>, lower_bound: bool) -> String {
    match s.known {
        None => "–".to_owned(),
        Some(n) if s.complete() && !lower_bound => n.to_string(),
        Some(n) => format!("≥ {n}"),
    }
}

fn cell_cost(a: &Agg) -> String {
    let Some(c) = a.cost() else {
        return "–".to_owned();
    };
    let est = if a.estimated_cost { "~" } else { "" };
    let ge = if a.cost.complete() { "" } else { "≥ " };
    format!("{ge}{est}${c:.4}")
}

/// The table a terminal shows: a line per session (or group), then the
/// totals, then what the marks mean.
fn table(rows: &[Row], g: Option<Group>, prices: &Prices) -> String {
    let one = |r: &Row| {
        let mut a = Agg::default();
        a.add(r);
        a
    };
    let (head, lines): (Vec<&str>, Vec<(Vec<String>, Agg)>) = match g {
        None => (
            vec!["session", "agent", "model", "start"],
            rows.iter()
                .map(|r| {
                    let start = r.start.map_or_else(
                        || "–".to_owned(),
                        |ms| {
                            let d = crate::time::iso8601(ms.div_euclid(1000));
                            format!("{} {}", &d[..10], &d[11..16])
                        },
                    );
                    (
                        vec![
                            r.id.clone(),
                            r.agent.clone().unwrap_or_else(|| "–".to_owned()),
                            r.model.clone().unwrap_or_else(|| "–".to_owned()),
                            start,
                        ],
                        one(r),
                    )
                })
                .collect(),
        ),
        Some(g) => (
            vec![g.name(), "sessions", "models"],
            groups(rows, g)
                .into_iter()
                .map(|a| {
                    let models = a.models.iter().cloned().collect::<Vec<_>>().join(", ");
                    (
                        vec![
                            a.key.clone().unwrap_or_else(|| "unknown".to_owned()),
                            a.sessions.to_string(),
                            if models.is_empty() {
                                "–".to_owned()
                            } else {
                                models
                            },
                        ],
                        a,
                    )
                })
                .collect(),
        ),
    };
    let mut total = Agg::default();
    for r in rows {
        total.add(r);
    }
    let figures_of = |a: &Agg| {
        vec![
            a.turns.to_string(),
            a.tool_calls.to_string(),
            cell_sum(&a.tokens_in, false),
            cell_sum(&a.tokens_out, a.out_lower_bound),
            cell_sum(&a.cache_read, false),
            cell_sum(&a.cache_write, false),
            cell_cost(a),
        ]
    };
    let mut header: Vec<String> = head.iter().map(|s| (*s).to_owned()).collect();
    header.extend(
        [
            "turns",
            "tools",
            "input",
            "output",
            "cache read",
            "cache write",
            "cost",
        ]
        .map(str::to_owned),
    );
    let left = head.len();
    let mut body: Vec<Vec<String>> = lines
        .iter()
        .map(|(cells, a)| {
            let mut c: Vec<String> = cells
                .iter()
                .map(|s| crate::terminal::visible(s, false).into_owned())
                .collect();
            c.extend(figures_of(a));
            c
        })
        .collect();
    let mut tot = vec![String::new(); left];
    tot[0] = format!(
        "total ({} session{})",
        total.sessions,
        if total.sessions == 1 { "" } else { "s" }
    );
    tot.extend(figures_of(&total));
    body.push(tot);
    let cols = header.len();
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            std::iter::once(&header)
                .chain(body.iter())
                .map(|r| crate::terminal::width(&r[i]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(widths[i] - crate::terminal::width(c));
            if i > 0 {
                l.push_str("  ");
            }
            if i < left {
                l.push_str(c);
                l.push_str(&pad);
            } else {
                l.push_str(&pad);
                l.push_str(c);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut out, &header);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    line(&mut out, &rule);
    let n = body.len();
    for (i, r) in body.iter().enumerate() {
        if i + 1 == n {
            line(&mut out, &rule);
        }
        line(&mut out, r);
    }
    if total.estimated_cost {
        out.push_str(&format!(
            "~ estimated from per-token prices ({})\n",
            prices.describe()
        ));
    }
    let partial = !(total.tokens_complete()
        && total.cache_read.complete()
        && total.cache_write.complete()
        && total.cost.complete());
    if partial {
        out.push_str("≥ the sum of what is known: some sessions lack this figure\n");
    }
    out
}

#[cfg(test)]
mod tests {
    /// `Group::ALL` holds every group once: the match below stops compiling
    /// when a group is added, and its index must then be in the list.
    #[test]
    fn group_list_is_complete() {
        let index = |g: Group| match g {
            Group::Day => 0,
            Group::Week => 1,
            Group::Month => 2,
            Group::Model => 3,
            Group::Agent => 4,
            Group::Project => 5,
        };
        let got: Vec<usize> = Group::ALL.into_iter().map(index).collect();
        assert_eq!(got, (0..Group::ALL.len()).collect::<Vec<_>>());
        for g in Group::ALL {
            assert!(!g.about().is_empty(), "{}", g.name());
        }
    }

    use super::*;

    #[test]
    fn dated_releases_find_their_model() {
        let p = Prices::bundled();
        assert!(p.has("claude-sonnet-4-5-20250929"));
        assert!(p.has("claude-opus-4-6[1m]"));
        assert!(p.has("anthropic/claude-haiku-4-5"));
        assert!(p.has("claude-sonnet-4-5@20250929"));
        assert!(p.has("GPT-5.3-Codex"));
        // Not a date: another model, priced or not on its own.
        assert!(!p.has("claude-sonnet-4-9"));
        assert!(!p.has("gpt-5.3-codex-spark"));
        assert_eq!(undated("gpt-5.4-2026-03-05"), Some("gpt-5.4"));
        assert_eq!(undated("gpt-5.4-2026-3-05"), None);
        // Characters of several bytes where a date's digits would be: no
        // date, and no cut inside a character (a property test found the
        // panic this was, on a model name a mutation had damaged).
        assert_eq!(undated("gem\u{fffd}ni-2.5-pro"), None);
        assert_eq!(undated("\u{fffd}\u{fffd}\u{fffd}\u{fffd}"), None);
        assert_eq!(undated("modèle-20250929"), Some("modèle"));
        assert_eq!(undated("é-2025-09-29"), Some("é"));
        assert!(!p.has("gem\u{fffd}ni-2.5-pro"));
    }

    #[test]
    fn the_models_the_fixtures_and_corpus_run_are_priced() {
        let p = Prices::bundled();
        for m in [
            "gpt-5",
            "gpt-5-codex",
            "gpt-5-mini",
            "gemini-2.5-pro",
            // Copilot writes Claude versions with a dot.
            "claude-sonnet-4.6",
        ] {
            assert!(p.has(m), "{m}");
        }
        // The dot is read as a dash for Claude ids only.
        assert!(!p.has("claude-sonnet-4.9"));
        assert!(!p.has("gpt-5-4"));
        // Gemini 2.5 Pro's long-context tier is over 200k input tokens.
        let g = *p.lookup("gemini-2.5-pro").unwrap();
        let big = Usage::new(200_001, 10, Some(1), None);
        let want = 200_000.0 * 2.5e-6 + 2.5e-7 + 10.0 * 1.5e-5;
        assert!((g.cost(&big) - want).abs() < 1e-12, "{}", g.cost(&big));
    }

    #[test]
    fn a_long_request_is_priced_at_its_tier_whole() {
        let p = *Prices::bundled().lookup("claude-sonnet-4-5").unwrap();
        let small = Usage::new(200_000, 1000, Some(150_000), Some(10_000));
        let big = Usage::new(200_001, 1000, Some(150_000), Some(10_000));
        let c_small = p.cost(&small);
        let want = 40_000.0 * 3e-6 + 150_000.0 * 3e-7 + 10_000.0 * 3.75e-6 + 1000.0 * 1.5e-5;
        assert!((c_small - want).abs() < 1e-12, "{c_small} vs {want}");
        let want_big = 40_001.0 * 6e-6 + 150_000.0 * 6e-7 + 10_000.0 * 7.5e-6 + 1000.0 * 2.25e-5;
        assert!((p.cost(&big) - want_big).abs() < 1e-12);
    }

    #[test]
    fn bad_price_tables_are_refused() {
        assert!(Prices::parse("{\"models\":{\"m\":{\"input\":-1,\"output\":1}}}").is_err());
        assert!(Prices::parse("{\"models\":{\"m\":{\"input\":1}}}").is_err());
        assert!(Prices::parse("[]").is_err());
        let p = Prices::parse("{\"models\":{\"M\":{\"input\":1e-6,\"output\":2e-6}}}").unwrap();
        assert!(p.has("m"));
    }

    #[test]
    fn weeks_begin_on_monday() {
        let row = |ms| Row {
            agent: None,
            id: String::new(),
            title: None,
            model: None,
            project: None,
            start: Some(ms),
            duration_ms: None,
            turns: 0,
            tool_calls: 0,
            usage: None,
            cost: None,
        };
        // 2026-11-26 is a Thursday; 2026-11-23 a Monday; 2026-11-29 a Sunday.
        let thu = 1_795_651_200_000; // 2026-11-26T00:00:00Z
        assert_eq!(key(&row(thu), Group::Day).unwrap(), "2026-11-26");
        assert_eq!(key(&row(thu), Group::Week).unwrap(), "2026-11-23");
        assert_eq!(
            key(&row(thu + 3 * 86_400_000 + 1), Group::Week).unwrap(),
            "2026-11-23"
        );
        assert_eq!(
            key(&row(thu + 4 * 86_400_000), Group::Week).unwrap(),
            "2026-11-30"
        );
        assert_eq!(key(&row(thu), Group::Month).unwrap(), "2026-11");
    }

    /// A session row written straight out reads back as the figures it
    /// holds, whatever the figures: names that need escapes, counts past
    /// `i64`, unknown figures as null (never 0), a cost that JSON cannot
    /// hold as null, and the fields in their documented order.
    #[test]
    fn session_rows_read_back_as_their_figures() {
        use serde_json::{Value, json};
        let full = Row {
            agent: Some("claude-code".into()),
            id: "a\"b\\c\u{1}\u{2028}é".into(),
            title: Some("line\nnext\ttab".into()),
            model: Some("claude-opus-4-5".into()),
            project: Some("/w/p".into()),
            start: Some(1_795_651_200_999),
            duration_ms: Some(u64::MAX),
            turns: 3,
            tool_calls: u64::MAX,
            usage: Some(Usage {
                input: u64::MAX,
                output: 0,
                cache_read: Some(5),
                cache_write: None,
                cache_write_1h: None,
                reasoning: Some(7),
                output_incomplete: true,
            }),
            cost: Some((0.1 + 0.2, CostSource::Estimate)),
        };
        let bare = Row {
            agent: None,
            title: None,
            model: None,
            project: None,
            start: None,
            duration_ms: None,
            usage: None,
            cost: Some((f64::INFINITY, CostSource::Agent)),
            ..full.clone()
        };
        let mut out = Vec::new();
        write_session(&mut out, &full);
        let text = String::from_utf8(out.clone()).unwrap();
        let keys: Vec<&str> = text
            .match_indices("\":")
            .map(|(i, _)| {
                let open = text[..i].rfind(['{', ',']).unwrap();
                &text[open + 2..i]
            })
            .collect();
        assert_eq!(
            keys,
            [
                "agent",
                "session_id",
                "title",
                "models",
                "project",
                "start",
                "duration_ms",
                "turns",
                "tool_calls",
                "tokens_in",
                "tokens_out",
                "tokens_cache_read",
                "tokens_cache_write",
                "tokens_reasoning",
                "tokens_complete",
                "cost_usd",
                "cost_source"
            ]
        );
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            got,
            json!({
                "agent": "claude-code", "session_id": full.id, "title": "line\nnext\ttab",
                "models": ["claude-opus-4-5"], "project": "/w/p", "start": "2026-11-26T00:00:00Z",
                "duration_ms": u64::MAX, "turns": 3, "tool_calls": u64::MAX,
                "tokens_in": u64::MAX, "tokens_out": null, "tokens_cache_read": 5,
                "tokens_cache_write": null, "tokens_reasoning": 7, "tokens_complete": false,
                "cost_usd": 0.1 + 0.2, "cost_source": "estimate",
            })
        );
        out.clear();
        write_session(&mut out, &bare);
        let got: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            got,
            json!({
                "agent": null, "session_id": full.id, "title": null, "models": null,
                "project": null, "start": null, "duration_ms": null, "turns": 3,
                "tool_calls": u64::MAX, "tokens_in": null, "tokens_out": null,
                "tokens_cache_read": null, "tokens_cache_write": null,
                "tokens_reasoning": null, "tokens_complete": false, "cost_usd": null,
                "cost_source": "agent",
            })
        );
    }
}
