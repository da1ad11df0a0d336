//! `--to atif`: one ATIF trajectory per session (the Agent Trajectory
//! Interchange Format of Harbor, docs/atif.md), one compact JSON document a
//! line.
//!
//! A trajectory is one value, so a session is held until it ends. A
//! sub-agent's session (`session_started.parentSessionId`, not a fork) that
//! follows its parent in the same run is embedded in the parent's
//! `subagent_trajectories`, with a reference on the result of the call that
//! spawned it; so a finished session is held until a session begins that is
//! not one of its sub-agents, or the run ends. A session ends when the next
//! one begins, so this holds nothing back longer than the session itself.
//! Memory is one session and its sub-agents.
//!
//! Usage goes to the step whose model call it counts when the order of the
//! events says which (docs/atif.md#usage); the totals are the session's
//! figures ([`Figures`]), never a sum made here.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::value::RawValue;

use super::messages::{Content, fast_opt_str, fast_str, function_name, tool_content};
use super::{OutputOptions, Session, Sink};
use crate::event::figures::Figures;
use crate::event::{Event, Kind, ToolEnd, ToolStart, Usage};

/// The ATIF version written: the first that has everything used here
/// (`trajectory_id`, embedded `subagent_trajectories`); Harbor's models
/// accept it, as they accept every version up to their newest.
pub const SCHEMA_VERSION: &str = "ATIF-v1.7";

/// Writes one trajectory per session tree.
pub struct AtifSink<W: Write> {
    w: W,
    model_override: Option<String>,
    /// The session being read.
    cur: Option<Traj>,
    /// Whether `cur` is a sub-agent of the held tree (decided on its first
    /// event).
    cur_child: Option<bool>,
    /// A finished session waiting for its sub-agents, and their ids.
    held: Option<Traj>,
}

/// One session being collected.
#[derive(Default)]
struct Traj {
    id: String,
    dialect: Option<String>,
    model: Option<String>,
    cwd: Option<String>,
    /// A sub-agent: (parent session, spawning call).
    parent: Option<(String, Option<String>)>,
    forked_from: Option<String>,
    steps: Vec<Step>,
    /// The last step is an agent step that may take more of the answer.
    open: bool,
    /// Each call's step, to put its result beside it.
    call_step: HashMap<String, usize>,
    /// Live output of running calls, for a completion that does not repeat it.
    live: HashMap<String, String>,
    figures: Figures,
    /// Claude Code's saved sessions count a message's tokens on its first
    /// line, before its content: usage belongs to the step that follows.
    usage_leads: bool,
    /// Usage not given to a step yet (leading: for the next step; trailing:
    /// until the next event says whether it is the result's remainder).
    pending: Option<Usage>,
    /// Usage no step can be said to have used: the session's total that a
    /// source reports only with its result, a result's remainder.
    unattributed: Option<Usage>,
    subs: Vec<Traj>,
}

#[derive(Default)]
struct Step {
    source: &'static str,
    ts: Option<i64>,
    message: String,
    reasoning: String,
    calls: Vec<Call>,
    results: Vec<Res>,
    usage: Option<Usage>,
}

struct Call {
    id: String,
    name: String,
    /// The arguments when they are a JSON object (ATIF's `arguments`).
    object: Option<Box<RawValue>>,
    /// Any other arguments, kept in the call's `extra`.
    other: Option<Box<RawValue>>,
}

struct Res {
    call_id: String,
    content: Content,
    /// Sub-agents this call spawned (their trajectory ids).
    subagents: Vec<(String, String)>,
}

// The document, as Harbor's models name it.

#[derive(Serialize)]
struct OutTraj<'a> {
    schema_version: &'static str,
    session_id: &'a str,
    trajectory_id: &'a str,
    agent: OutAgent<'a>,
    steps: Vec<OutStep<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<&'static str>,
    final_metrics: OutFinal,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<TrajExtra<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectories: Vec<OutTraj<'a>>,
}

#[derive(Serialize)]
struct TrajExtra<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    forked_from: Option<&'a str>,
}

#[derive(Serialize)]
struct OutAgent<'a> {
    name: &'a str,
    /// Events do not carry the agent's version.
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<AgentExtra<'a>>,
}

#[derive(Serialize)]
struct AgentExtra<'a> {
    cwd: &'a str,
}

#[derive(Serialize)]
struct OutStep<'a> {
    step_id: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    source: &'static str,
    #[serde(serialize_with = "fast_str")]
    message: &'a str,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "fast_opt_str"
    )]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<OutCall<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<OutObservation<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<OutMetrics>,
}

#[derive(Serialize)]
struct OutCall<'a> {
    tool_call_id: &'a str,
    function_name: &'a str,
    arguments: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<CallExtra<'a>>,
}

#[derive(Serialize)]
struct CallExtra<'a> {
    /// Arguments that were not a JSON object, as the source gave them.
    arguments: &'a RawValue,
}

#[derive(Serialize)]
struct OutObservation<'a> {
    results: Vec<OutResult<'a>>,
}

#[derive(Serialize)]
struct OutResult<'a> {
    source_call_id: &'a str,
    content: &'a Content,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectory_ref: Vec<OutRef<'a>>,
}

#[derive(Serialize)]
struct OutRef<'a> {
    trajectory_id: &'a str,
    session_id: &'a str,
}

#[derive(Serialize)]
struct OutMetrics {
    prompt_tokens: u64,
    /// Unknown (left out) when the source lacked every output count.
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra: Option<UsageExtra>,
}

#[derive(Serialize)]
struct UsageExtra {
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_creation_input_tokens: Option<u64>,
    /// `completion_tokens` is a lower bound: some output counts were not in
    /// the source.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    completion_tokens_incomplete: bool,
}

#[derive(Serialize)]
struct OutFinal {
    #[serde(skip_serializing_if = "Option::is_none")]
    total_prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cost_usd: Option<f64>,
    total_steps: usize,
    extra: FinalExtra,
}

/// The session's other figures (docs/events.md#session-figures).
#[derive(Serialize)]
struct FinalExtra {
    outcome: &'static str,
    /// `null` when unknown.
    duration_ms: Option<u64>,
    turns: u64,
    tool_calls: u64,
    failed_tool_calls: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    completion_tokens_incomplete: bool,
    /// Tokens in the totals that no step carries.
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens_not_in_steps: Option<OutMetrics>,
}

impl<W: Write> AtifSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        AtifSink {
            w,
            model_override: opts.ident.model.clone(),
            cur: None,
            cur_child: None,
            held: None,
        }
    }

    fn write_held(&mut self) -> io::Result<()> {
        if let Some(t) = self.held.take() {
            let out = t.out();
            serde_json::to_writer(&mut self.w, &out).map_err(io::Error::other)?;
            self.w.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Decide, on a session's first event, whether it is a sub-agent of
    /// the held tree; if not, the held tree is complete.
    fn place(&mut self, parent: Option<&str>) -> io::Result<()> {
        if self.cur_child.is_some() {
            return Ok(());
        }
        let child = match (parent, &self.held) {
            (Some(p), Some(h)) => h.find(p).is_some(),
            _ => false,
        };
        self.cur_child = Some(child);
        if !child {
            self.write_held()?;
        }
        Ok(())
    }

    fn end_session(&mut self) -> io::Result<()> {
        let Some(mut t) = self.cur.take() else {
            return Ok(());
        };
        let parent = t.parent.as_ref().map(|p| p.0.clone());
        self.place(parent.as_deref())?;
        let child = self.cur_child.take() == Some(true);
        t.settle(None);
        if child
            && let Some(h) = &mut self.held
            && let Some(p) = h.find_mut(parent.as_deref().unwrap_or_default())
        {
            p.adopt(t);
            return Ok(());
        }
        self.write_held()?;
        self.held = Some(t);
        Ok(())
    }
}

impl Traj {
    fn find(&self, id: &str) -> Option<&Traj> {
        if self.id == id {
            return Some(self);
        }
        self.subs.iter().find_map(|s| s.find(id))
    }

    fn find_mut(&mut self, id: &str) -> Option<&mut Traj> {
        if self.id == id {
            return Some(self);
        }
        self.subs.iter_mut().find_map(|s| s.find_mut(id))
    }

    /// Embed a sub-agent, and name it on the result of the call that
    /// spawned it when the input says which call that was.
    fn adopt(&mut self, sub: Traj) {
        if let Some(call) = sub.parent.as_ref().and_then(|p| p.1.as_deref()) {
            for s in &mut self.steps {
                if let Some(r) = s.results.iter_mut().find(|r| r.call_id == call) {
                    r.subagents.push((sub.id.clone(), sub.id.clone()));
                    break;
                }
            }
        }
        self.subs.push(sub);
    }

    /// The step agent content goes to: the open one, else a new one (which
    /// takes the usage that led it).
    fn step(&mut self, ts: Option<i64>) -> &mut Step {
        if !self.open || !matches!(self.steps.last(), Some(s) if s.source == "agent") {
            let usage = if self.usage_leads {
                self.pending.take()
            } else {
                None
            };
            self.steps.push(Step {
                source: "agent",
                ts,
                usage,
                ..Step::default()
            });
            self.open = true;
        }
        self.steps.last_mut().expect("a step was pushed above")
    }

    /// Give trailing usage held back to the step it follows, unless the
    /// next event is the result (`next` None: the session ended).
    fn settle(&mut self, next: Option<&Kind<'_>>) {
        if self.usage_leads {
            if next.is_none() || matches!(next, Some(Kind::Result(_))) {
                let p = self.pending.take();
                add(&mut self.unattributed, p);
            }
            return;
        }
        let Some(u) = self.pending.take() else {
            return;
        };
        if matches!(next, Some(Kind::Result(_))) {
            add(&mut self.unattributed, Some(u));
            return;
        }
        match self.steps.iter_mut().rev().find(|s| s.source == "agent") {
            Some(s) => add(&mut s.usage, Some(u)),
            None => add(&mut self.unattributed, Some(u)),
        }
    }

    fn usage(&mut self, u: &Usage) {
        // A message's usage comes on its first line: a new model call.
        if self.usage_leads && self.open && matches!(self.steps.last(), Some(s) if s.has_content())
        {
            self.open = false;
        }
        add(&mut self.pending, Some(*u));
    }

    fn call(&mut self, t: &ToolStart<'_>, ts: Option<i64>) {
        let name = function_name(&t.tool_name, t.mcp_server.as_deref(), t.mcp_tool.as_deref());
        let raw = t.args.get();
        let (object, other) = if raw.trim_start().starts_with('{') {
            (RawValue::from_string(raw.to_owned()).ok(), None)
        } else {
            (None, RawValue::from_string(raw.to_owned()).ok())
        };
        let call = Call {
            id: t.call_id.to_string(),
            name,
            object,
            other,
        };
        self.step(ts).calls.push(call);
        let at = self.steps.len() - 1;
        self.call_step.insert(t.call_id.to_string(), at);
    }

    fn completed(&mut self, e: &ToolEnd<'_>, ts: Option<i64>) {
        let at = match self.call_step.remove(&*e.call_id) {
            Some(at) => at,
            None => {
                // A result whose call is not in the input (a capture cut
                // before it): the call with the name the result gives and
                // no arguments known, so that the result answers a call.
                let call = Call {
                    id: e.call_id.to_string(),
                    name: function_name(&e.tool_name, None, None),
                    object: None,
                    other: RawValue::from_string("null".to_owned()).ok(),
                };
                self.step(ts).calls.push(call);
                self.steps.len() - 1
            }
        };
        let live = self.live.remove(&*e.call_id);
        self.steps[at].results.push(Res {
            call_id: e.call_id.to_string(),
            content: tool_content(e, live),
            subagents: Vec::new(),
        });
        // The model answers a result in a new call.
        self.open = false;
    }

    fn system(&mut self, message: &str, ts: Option<i64>) {
        self.steps.push(Step {
            source: "system",
            ts,
            message: message.to_owned(),
            ..Step::default()
        });
        self.open = false;
    }

    fn event(&mut self, ev: &Event<'_>, model_override: &Option<String>) {
        if !matches!(ev.kind, Kind::UsageDelta(_)) {
            self.settle(Some(&ev.kind));
        }
        self.figures.event(ev);
        let ts = ev.ts;
        match &ev.kind {
            Kind::SessionStarted(st) => {
                self.dialect = Some(st.dialect.to_string());
                self.usage_leads = &*st.dialect == "claude-project";
                self.model = model_override
                    .clone()
                    .or_else(|| st.model.as_deref().map(str::to_owned));
                self.cwd = st.cwd.as_deref().map(str::to_owned);
                if let Some(p) = &st.parent {
                    if p.fork {
                        self.forked_from = Some(p.session_id.to_string());
                    } else {
                        self.parent = Some((
                            p.session_id.to_string(),
                            p.call_id.as_deref().map(str::to_owned),
                        ));
                    }
                }
            }
            Kind::UserMessage { text } => {
                self.steps.push(Step {
                    source: "user",
                    ts,
                    message: text.to_string(),
                    ..Step::default()
                });
                self.open = false;
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                self.step(ts).message.push_str(text)
            }
            Kind::ThinkingDelta { text } | Kind::Thinking { text, .. } => {
                self.step(ts).reasoning.push_str(text)
            }
            Kind::ToolCallStarted(t) => self.call(t, ts),
            Kind::ShellOutputDelta { call_id, text, .. } => self
                .live
                .entry(call_id.to_string())
                .or_default()
                .push_str(text),
            Kind::ToolCallCompleted(e) => self.completed(e, ts),
            Kind::ToolCall(b) => {
                self.call(&b.0, ts);
                self.completed(&b.1, ts);
            }
            Kind::UsageDelta(u) => self.usage(u),
            // One model response ended: what follows is another call.
            Kind::TurnEnded { .. } => self.open = false,
            // The errors the agent reported, and the one that ended the
            // session, are what a reader of a failed trajectory looks for:
            // a system step says each (an input line that was not JSON, a
            // usage notice: cstream's, not the agent's, left out).
            Kind::Error {
                message,
                source: None,
                ..
            } => self.system(message, ts),
            Kind::Result(r) if !r.ok => {
                if let Some(e) = r.error.as_deref() {
                    self.system(e, ts)
                }
            }
            // Not steps of the conversation: results (their text is in the
            // answer), other errors and notices, interface commands and notes, unknown
            // records (counted and reported by the run, as for every format).
            _ => {}
        }
    }

    fn out(&self) -> OutTraj<'_> {
        let mut steps: Vec<OutStep<'_>> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| s.out(i + 1))
            .collect();
        let mut notes = None;
        if steps.is_empty() {
            // ATIF needs one step: an empty one from the system, said so.
            steps.push(OutStep {
                step_id: 1,
                timestamp: None,
                source: "system",
                message: "",
                reasoning_content: None,
                tool_calls: None,
                observation: None,
                metrics: None,
            });
            notes = Some(
                "The input had no conversation for this session; the one empty system step is there because ATIF requires a step.",
            );
        }
        let f = &self.figures;
        let usage = f.usage();
        let m = usage.as_ref().map(metrics);
        let extra = (self.parent.is_some() || self.forked_from.is_some()).then(|| TrajExtra {
            parent_session_id: self.parent.as_ref().map(|p| p.0.as_str()),
            parent_call_id: self.parent.as_ref().and_then(|p| p.1.as_deref()),
            forked_from: self.forked_from.as_deref(),
        });
        OutTraj {
            schema_version: SCHEMA_VERSION,
            session_id: &self.id,
            trajectory_id: &self.id,
            agent: OutAgent {
                name: self.dialect.as_deref().unwrap_or("unknown"),
                version: "unknown",
                model_name: self.model.as_deref(),
                extra: self.cwd.as_deref().map(|cwd| AgentExtra { cwd }),
            },
            final_metrics: OutFinal {
                total_prompt_tokens: m.as_ref().map(|m| m.prompt_tokens),
                total_completion_tokens: m.as_ref().and_then(|m| m.completion_tokens),
                total_cached_tokens: m.as_ref().and_then(|m| m.cached_tokens),
                total_cost_usd: f.cost_usd(),
                total_steps: steps.len(),
                extra: FinalExtra {
                    outcome: f.outcome().name(),
                    duration_ms: f.duration_ms(),
                    turns: f.turns(),
                    tool_calls: f.tool_calls(),
                    failed_tool_calls: f.failed_calls(),
                    cache_creation_input_tokens: usage.and_then(|u| u.cache_write),
                    completion_tokens_incomplete: usage.is_some_and(|u| u.output_incomplete),
                    tokens_not_in_steps: self.unattributed.as_ref().map(metrics),
                },
            },
            steps,
            notes,
            extra,
            subagent_trajectories: self.subs.iter().map(Traj::out).collect(),
        }
    }
}

impl Step {
    fn has_content(&self) -> bool {
        !(self.message.is_empty() && self.reasoning.is_empty() && self.calls.is_empty())
    }

    fn out(&self, step_id: usize) -> OutStep<'_> {
        let agent = self.source == "agent";
        let calls = (!self.calls.is_empty()).then(|| {
            self.calls
                .iter()
                .map(|c| OutCall {
                    tool_call_id: &c.id,
                    function_name: &c.name,
                    arguments: c.object.as_deref().unwrap_or(empty_object()),
                    extra: c.other.as_deref().map(|arguments| CallExtra { arguments }),
                })
                .collect()
        });
        let observation = (!self.results.is_empty()).then(|| OutObservation {
            results: self
                .results
                .iter()
                .map(|r| OutResult {
                    source_call_id: &r.call_id,
                    content: &r.content,
                    subagent_trajectory_ref: r
                        .subagents
                        .iter()
                        .map(|(t, s)| OutRef {
                            trajectory_id: t,
                            session_id: s,
                        })
                        .collect(),
                })
                .collect(),
        });
        OutStep {
            step_id,
            timestamp: self.ts.map(iso_millis),
            source: self.source,
            message: &self.message,
            reasoning_content: (agent && !self.reasoning.is_empty())
                .then_some(self.reasoning.as_str()),
            tool_calls: calls,
            observation,
            metrics: self.usage.as_ref().map(metrics),
        }
    }
}

fn empty_object() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RawValue::from_string("{}".to_owned()).expect("valid JSON"))
}

fn add(to: &mut Option<Usage>, u: Option<Usage>) {
    if let Some(u) = u {
        *to = Some(match to.take() {
            Some(t) => t.add(&u),
            None => u,
        });
    }
}

/// ATIF's metrics from cstream's usage: the prompt counts every input token,
/// the cache included, as cstream's input does.
fn metrics(u: &Usage) -> OutMetrics {
    let extra = (u.cache_write.is_some() || u.output_incomplete).then_some(UsageExtra {
        cache_creation_input_tokens: u.cache_write,
        completion_tokens_incomplete: u.output_incomplete,
    });
    OutMetrics {
        prompt_tokens: u.input,
        completion_tokens: (!(u.output_incomplete && u.output == 0)).then_some(u.output),
        cached_tokens: u.cache_read,
        extra,
    }
}

/// Epoch milliseconds as ISO 8601 in UTC with milliseconds.
fn iso_millis(ms: i64) -> String {
    let mut s = crate::time::iso8601(ms.div_euclid(1000));
    s.pop(); // the `Z`
    s.push_str(&format!(".{:03}Z", ms.rem_euclid(1000)));
    s
}

impl<W: Write> Sink for AtifSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.end_session()?;
        self.cur = Some(Traj {
            id: s.id.clone(),
            ..Traj::default()
        });
        self.cur_child = None;
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.cur.is_none() {
            self.cur = Some(Traj {
                id: s.id.clone(),
                ..Traj::default()
            });
            self.cur_child = None;
        }
        if self.cur_child.is_none() {
            let parent = match &ev.kind {
                Kind::SessionStarted(st) => st
                    .parent
                    .as_ref()
                    .filter(|p| !p.fork)
                    .map(|p| p.session_id.to_string()),
                _ => None,
            };
            self.place(parent.as_deref())?;
        }
        if let Some(t) = &mut self.cur {
            t.event(ev, &self.model_override);
        }
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        self.end_session()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_session()?;
        self.write_held()?;
        self.w.flush()
    }
}
