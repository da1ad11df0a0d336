//! `--to otlp-json`: each session as one OTLP/JSON `ExportTraceServiceRequest`
//! (one line), with spans named and attributed as the OpenTelemetry GenAI
//! semantic conventions for agents say (docs/formats.md#otlp-json):
//!
//! - an `invoke_agent` root span for the session, carrying its figures
//!   (outcome, tokens) from the one [`Figures`];
//! - a `chat` span per model response the input marks (`turn_ended`);
//! - an `execute_tool` span per tool call, its status from the call's outcome.
//!
//! Trace and span ids are derived from the session id (and the session's
//! first timestamp), so converting the same input again gives the same ids
//! and a receiver that keys spans by id does not store them twice.
//!
//! The children are encoded as they complete; the root, which needs the
//! whole session, is written with them at the session's end. Memory is the
//! session's encoded spans (names and figures, no conversation text) and its
//! open calls.

use std::collections::HashMap;
use std::io::{self, Write};

use super::{OutputOptions, Session, Sink};
use crate::event::figures::{self, Figures, Outcome};
use crate::event::{Event, Kind, ToolEnd, ToolStart, Usage};
use crate::json::{write_f64, write_str};

const NS_PER_MS: i64 = 1_000_000;

/// Span kinds (opentelemetry-proto's `Span.SpanKind`).
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// Status codes (`Status.StatusCode`).
const STATUS_ERROR: u8 = 2;

/// Writes one `ExportTraceServiceRequest` line per session.
pub struct OtlpSink<W: Write> {
    w: W,
    model_override: Option<String>,
    /// Time (ns) for a span of a session that has no timestamp before it:
    /// `--created`, else the run's start.
    fallback_ns: i64,
    s: Option<Trace>,
}

/// One session being converted.
struct Trace {
    session_id: String,
    trace_id: [u8; 16],
    root_id: [u8; 8],
    /// Whether the root's id is settled (by the first event).
    keyed: bool,
    figures: Figures,
    dialect: Option<String>,
    model: Option<String>,
    /// The latest timestamp seen (ns): the time of an event that has none.
    last_ns: Option<i64>,
    /// Earliest start and latest end among the spans, for the root.
    min_ns: Option<i64>,
    max_ns: Option<i64>,
    /// When the model response under way began (its first answer event).
    chat_start: Option<i64>,
    /// When the previous response ended or the prompt came.
    boundary_ns: Option<i64>,
    chats: u64,
    /// Open calls: their span name and start time.
    open: HashMap<String, (String, Option<i64>)>,
    /// The encoded child spans, each preceded by a comma.
    children: Vec<u8>,
    /// The agent's error: a fatal error's message, else a failed result's.
    error: Option<String>,
}

impl<W: Write> OtlpSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        let secs = opts.ident.created.unwrap_or_else(|| opts.ident.run_start());
        OtlpSink {
            w,
            model_override: opts.ident.model.clone(),
            fallback_ns: secs.saturating_mul(1_000_000_000),
            s: None,
        }
    }

    fn write_trace(&mut self, t: Trace) -> io::Result<()> {
        let w = &mut self.w;
        w.write_all(b"{\"resourceSpans\":[{\"resource\":{\"attributes\":[")?;
        attr_str(w, true, "service.name", agent_name(t.dialect.as_deref()))?;
        w.write_all(b"]},\"scopeSpans\":[{\"scope\":{\"name\":\"cstream\",\"version\":")?;
        write_str(w, env!("CARGO_PKG_VERSION"))?;
        w.write_all(b"},\"spans\":[")?;
        t.write_root(w, self.fallback_ns)?;
        w.write_all(&t.children)?;
        w.write_all(b"]}]}]}\n")
    }
}

impl Trace {
    fn new(session_id: &str) -> Trace {
        let trace_id = id128(&[session_id.as_bytes()]);
        Trace {
            session_id: session_id.to_owned(),
            trace_id,
            root_id: id64(&[b"root", session_id.as_bytes()]),
            keyed: false,
            figures: Figures::default(),
            dialect: None,
            model: None,
            last_ns: None,
            min_ns: None,
            max_ns: None,
            chat_start: None,
            boundary_ns: None,
            chats: 0,
            open: HashMap::new(),
            children: Vec::new(),
            error: None,
        }
    }

    /// Widen the root to cover a span.
    fn cover(&mut self, start: i64, end: i64) {
        self.min_ns = Some(self.min_ns.map_or(start, |m| m.min(start)));
        self.max_ns = Some(self.max_ns.map_or(end, |m| m.max(end)));
    }

    /// A time for an event: its own, else the latest seen, else `fallback`.
    fn at(&self, ts: Option<i64>, fallback: i64) -> i64 {
        ts.or(self.last_ns).unwrap_or(fallback)
    }

    fn event(&mut self, ev: &Event<'_>, model_override: Option<&str>, fallback: i64) {
        let ts = ev.ts.map(|ms| ms.saturating_mul(NS_PER_MS));
        if !self.keyed {
            // The first event (a session's `session_started`) settles the
            // root's id: a resumed session streamed again under its id
            // begins later, so its spans do not replace the first part's.
            self.keyed = true;
            let first = ev.ts.map(|ms| ms.to_string()).unwrap_or_default();
            self.root_id = id64(&[b"root", self.session_id.as_bytes(), first.as_bytes()]);
        }
        self.figures.event(ev);
        match &ev.kind {
            Kind::SessionStarted(st) => {
                self.dialect = Some(st.dialect.to_string());
                self.model = model_override
                    .map(str::to_owned)
                    .or_else(|| st.model.as_deref().map(str::to_owned));
            }
            Kind::UserMessage { .. } => {
                self.chat_start = None;
                self.boundary_ns = ts.or(self.last_ns);
            }
            Kind::TextDelta { .. }
            | Kind::ThinkingDelta { .. }
            | Kind::AssistantMessage { .. }
            | Kind::Thinking { .. } => self.answer(ts),
            Kind::ToolCallStarted(t) => {
                self.answer(ts);
                self.started(t, ts);
            }
            Kind::ToolCallCompleted(e) => {
                let end = self.at(ts, fallback);
                self.completed(e, None, end);
            }
            Kind::ToolCall(b) => {
                self.answer(ts);
                let start = self.at(ts, fallback);
                let end = start.saturating_add(ms_ns(b.1.duration_ms.unwrap_or(0)));
                self.completed(&b.1, Some((&b.0, start)), end);
            }
            Kind::TurnEnded { usage } => {
                let end = self.at(ts, fallback);
                self.chat(end, usage.as_ref());
            }
            Kind::Error {
                fatal: true,
                message,
                ..
            } => {
                self.error.get_or_insert_with(|| message.to_string());
            }
            Kind::Result(r) if !r.ok => {
                if let Some(e) = &r.error {
                    self.error.get_or_insert_with(|| e.to_string());
                }
            }
            _ => {}
        }
        if ts.is_some() {
            self.last_ns = ts;
        }
    }

    /// Answer content: the first of a model response starts it.
    fn answer(&mut self, ts: Option<i64>) {
        if self.chat_start.is_none() {
            self.chat_start = ts.or(self.last_ns);
        }
    }

    fn started(&mut self, t: &ToolStart<'_>, ts: Option<i64>) {
        let name = tool_name(&t.tool_name, t.mcp_server.as_deref(), t.mcp_tool.as_deref());
        self.open
            .insert(t.call_id.to_string(), (name, ts.or(self.last_ns)));
    }

    /// A model response ended at `end`: its `chat` span.
    fn chat(&mut self, end: i64, usage: Option<&Usage>) {
        let start = self
            .chat_start
            .take()
            .or(self.boundary_ns)
            .unwrap_or(end)
            .min(end);
        self.boundary_ns = Some(end);
        let index = self.chats;
        self.chats += 1;
        let id = id64(&[b"chat", &self.root_id, index.to_string().as_bytes()]);
        let name = match &self.model {
            Some(m) => format!("chat {m}"),
            None => "chat".to_owned(),
        };
        self.cover(start, end);
        let b = &mut self.children;
        let _ = (|| -> io::Result<()> {
            b.push(b',');
            span_open(
                b,
                &self.trace_id,
                &id,
                Some(&self.root_id),
                &name,
                KIND_CLIENT,
                start,
                end,
            )?;
            attr_str(b, true, "gen_ai.operation.name", "chat")?;
            provider_model(b, self.dialect.as_deref(), self.model.as_deref())?;
            if let Some(u) = usage {
                usage_attrs(b, u)?;
            }
            attr_str(b, false, "openinference.span.kind", "LLM")?;
            b.extend_from_slice(b"]}");
            Ok(())
        })();
    }

    /// A call completed at `end`: its `execute_tool` span. `start` is the
    /// call's start when it came with the completion (`--coalesce`).
    fn completed(&mut self, e: &ToolEnd<'_>, start: Option<(&ToolStart<'_>, i64)>, end: i64) {
        let (name, began) = match start {
            Some((t, at)) => (
                tool_name(&t.tool_name, t.mcp_server.as_deref(), t.mcp_tool.as_deref()),
                Some(at),
            ),
            None => match self.open.remove(&*e.call_id) {
                Some((name, at)) => (name, at),
                None => (tool_name(&e.tool_name, None, None), None),
            },
        };
        let dur = e.duration_ms.map(ms_ns);
        // The source's duration places a start whose time is unknown.
        let start_ns = match (began, dur) {
            (Some(s), _) => s,
            (None, Some(d)) => end.saturating_sub(d),
            (None, None) => end,
        };
        let end_ns = end.max(start_ns);
        let id = id64(&[b"tool", &self.root_id, e.call_id.as_bytes()]);
        self.cover(start_ns, end_ns);
        let b = &mut self.children;
        let _ = (|| -> io::Result<()> {
            b.push(b',');
            let span_name = format!("execute_tool {name}");
            span_open(
                b,
                &self.trace_id,
                &id,
                Some(&self.root_id),
                &span_name,
                KIND_INTERNAL,
                start_ns,
                end_ns,
            )?;
            attr_str(b, true, "gen_ai.operation.name", "execute_tool")?;
            attr_str(b, false, "gen_ai.tool.name", &name)?;
            attr_str(b, false, "gen_ai.tool.call.id", &e.call_id)?;
            if let Some(code) = e.exit_code {
                attr_int(b, "process.exit.code", code)?;
            }
            if e.cancelled {
                attr_bool(b, "cstream.tool.cancelled", true)?;
            }
            if e.outcome_unknown {
                attr_bool(b, "cstream.tool.outcome_unknown", true)?;
            }
            let failed = figures::failed(e);
            if failed {
                attr_str(b, false, "error.type", "tool_error")?;
            }
            attr_str(b, false, "openinference.span.kind", "TOOL")?;
            attr_str(b, false, "tool.name", &name)?;
            b.push(b']');
            if failed {
                let msg = match (&e.error, e.exit_code) {
                    (Some(m), _) => m.to_string(),
                    (None, Some(c)) => format!("exit code {c}"),
                    (None, None) => "the call failed".to_owned(),
                };
                status_error(b, &msg)?;
            }
            b.push(b'}');
            Ok(())
        })();
    }

    fn write_root<W: Write + ?Sized>(&self, w: &mut W, fallback: i64) -> io::Result<()> {
        let f = &self.figures;
        let first = f.first_ts().map(|ms| ms.saturating_mul(NS_PER_MS));
        let start = match (first, self.min_ns) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(fallback),
        };
        // The session figure's duration (the agent's own when it gave one),
        // widened to cover every child.
        let mut end = match f.duration_ms() {
            Some(d) => start.saturating_add(ms_ns(d)),
            None => self.last_ns.unwrap_or(start),
        };
        if let Some(m) = self.max_ns {
            end = end.max(m);
        }
        let end = end.max(start);
        let agent = agent_name(self.dialect.as_deref());
        let name = format!("invoke_agent {agent}");
        span_open(
            w,
            &self.trace_id,
            &self.root_id,
            None,
            &name,
            KIND_INTERNAL,
            start,
            end,
        )?;
        attr_str(w, true, "gen_ai.operation.name", "invoke_agent")?;
        attr_str(w, false, "gen_ai.agent.name", agent)?;
        attr_str(w, false, "gen_ai.conversation.id", &self.session_id)?;
        provider_model(w, self.dialect.as_deref(), self.model.as_deref())?;
        if let Some(u) = f.usage() {
            usage_attrs(w, &u)?;
            // OpenInference's counts, on the root only: Phoenix adds a
            // trace's counts up over its spans, so the session's total is
            // counted once.
            attr_u64(w, "llm.token_count.prompt", u.input)?;
            if !u.output_incomplete {
                attr_u64(w, "llm.token_count.completion", u.output)?;
                attr_u64(w, "llm.token_count.total", u.input.saturating_add(u.output))?;
            }
        }
        if let Some(d) = &self.dialect {
            attr_str(w, false, "cstream.dialect", d)?;
        }
        attr_str(w, false, "cstream.outcome", f.outcome().name())?;
        attr_u64(w, "cstream.turns", f.turns())?;
        attr_u64(w, "cstream.tool_calls", f.tool_calls())?;
        attr_u64(w, "cstream.failed_tool_calls", f.failed_calls())?;
        if let Some(c) = f.cost_usd() {
            w.write_all(b",{\"key\":\"cstream.cost_usd\",\"value\":{\"doubleValue\":")?;
            write_f64(w, c)?;
            w.write_all(b"}}")?;
        }
        if f.outcome() == Outcome::Failure {
            attr_str(w, false, "error.type", "agent_error")?;
        }
        attr_str(w, false, "openinference.span.kind", "AGENT")?;
        w.write_all(b"]")?;
        if f.outcome() == Outcome::Failure {
            let msg = self.error.as_deref().unwrap_or("the session failed");
            status_error(w, msg)?;
        }
        w.write_all(b"}")
    }
}

fn ms_ns(ms: u64) -> i64 {
    i64::try_from(ms)
        .unwrap_or(i64::MAX)
        .saturating_mul(NS_PER_MS)
}

/// The agent that wrote a dialect (`gen_ai.agent.name`, `service.name`).
fn agent_name(dialect: Option<&str>) -> &'static str {
    match dialect.unwrap_or("") {
        "claude" | "claude-project" => "claude-code",
        "codex" | "codex-rollout" => "codex",
        "cursor" | "cursor-transcript" => "cursor-agent",
        "cursor-sdk" => "cursor-sdk",
        "gemini" | "gemini-chat" => "gemini-cli",
        "acp" => "acp-agent",
        "copilot" => "copilot-cli",
        "opencode" => "opencode",
        "pi" => "pi",
        "antigravity" | "antigravity-transcript" => "antigravity",
        _ => "unknown_agent",
    }
}

/// `gen_ai.provider.name` where the agent only talks to one provider; an
/// agent that can use several (cursor, ACP, OpenCode, …) leaves it out.
fn provider(dialect: Option<&str>) -> Option<&'static str> {
    match dialect? {
        "claude" | "claude-project" => Some("anthropic"),
        "codex" | "codex-rollout" => Some("openai"),
        "gemini" | "gemini-chat" => Some("gcp.gemini"),
        _ => None,
    }
}

/// The name a tool span carries: the normalized tool name, and for an MCP
/// tool `mcp__<server>__<tool>` (as `--to messages` names it).
fn tool_name(tool: &str, server: Option<&str>, mcp_tool: Option<&str>) -> String {
    match (tool, server, mcp_tool) {
        ("mcp", Some(s), Some(t)) => format!("mcp__{s}__{t}"),
        ("mcp", None, Some(t)) => format!("mcp__{t}"),
        _ => tool.to_owned(),
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn write_hex<W: Write + ?Sized>(w: &mut W, bytes: &[u8]) -> io::Result<()> {
    let mut out = [0u8; 32];
    for (i, b) in bytes.iter().enumerate() {
        out[2 * i] = HEX[(b >> 4) as usize];
        out[2 * i + 1] = HEX[(b & 0xf) as usize];
    }
    w.write_all(&out[..2 * bytes.len()])
}

/// FNV-1a over the parts (each followed by a 0 byte) from `basis`: stable
/// across Rust versions and platforms, unlike std's hashers.
fn fnv(basis: u64, parts: &[&[u8]]) -> u64 {
    let mut h = basis;
    for p in parts {
        for &b in p.iter().chain(std::iter::once(&0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

const BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// An 8-byte span id from `parts`, never all zero (an invalid id).
fn id64(parts: &[&[u8]]) -> [u8; 8] {
    let h = fnv(BASIS ^ 0x6f74_6c70_7370_616e, parts);
    if h == 0 { 1u64 } else { h }.to_be_bytes()
}

/// A 16-byte trace id from `parts`, never all zero.
fn id128(parts: &[&[u8]]) -> [u8; 16] {
    let a = fnv(BASIS ^ 0x6f74_6c70_7472_6163, parts);
    let b = fnv(BASIS ^ 0x6373_7472_6561_6d31, parts);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&a.to_be_bytes());
    out[8..].copy_from_slice(&b.to_be_bytes());
    if out == [0; 16] {
        out[15] = 1;
    }
    out
}

/// A span's opening up to its attribute list, which the caller fills and
/// closes: ids, name, kind, start and end.
#[allow(clippy::too_many_arguments)]
fn span_open<W: Write + ?Sized>(
    w: &mut W,
    trace: &[u8; 16],
    id: &[u8; 8],
    parent: Option<&[u8; 8]>,
    name: &str,
    kind: u8,
    start: i64,
    end: i64,
) -> io::Result<()> {
    w.write_all(b"{\"traceId\":\"")?;
    write_hex(w, trace)?;
    w.write_all(b"\",\"spanId\":\"")?;
    write_hex(w, id)?;
    if let Some(p) = parent {
        w.write_all(b"\",\"parentSpanId\":\"")?;
        write_hex(w, p)?;
    }
    w.write_all(b"\",\"name\":")?;
    write_str(w, name)?;
    write!(w, ",\"kind\":{kind}")?;
    times(w, start, end)?;
    w.write_all(b",\"attributes\":[")
}

/// Start and end times: int64 nanoseconds, as strings (OTLP/JSON writes
/// 64-bit integers as decimal strings).
fn times<W: Write + ?Sized>(w: &mut W, start: i64, end: i64) -> io::Result<()> {
    // A time before 1970 has no unsigned nanosecond count: the epoch.
    let (start, end) = (start.max(0), end.max(0));
    write!(
        w,
        ",\"startTimeUnixNano\":\"{start}\",\"endTimeUnixNano\":\"{end}\""
    )
}

fn status_error<W: Write + ?Sized>(w: &mut W, msg: &str) -> io::Result<()> {
    w.write_all(b",\"status\":{\"message\":")?;
    write_str(w, msg)?;
    write!(w, ",\"code\":{STATUS_ERROR}}}")
}

fn key<W: Write + ?Sized>(w: &mut W, first: bool, k: &str) -> io::Result<()> {
    if !first {
        w.write_all(b",")?;
    }
    w.write_all(b"{\"key\":")?;
    write_str(w, k)?;
    w.write_all(b",\"value\":")
}

fn attr_str<W: Write + ?Sized>(w: &mut W, first: bool, k: &str, v: &str) -> io::Result<()> {
    key(w, first, k)?;
    w.write_all(b"{\"stringValue\":")?;
    write_str(w, v)?;
    w.write_all(b"}}")
}

fn attr_int<W: Write + ?Sized>(w: &mut W, k: &str, v: i64) -> io::Result<()> {
    key(w, false, k)?;
    write!(w, "{{\"intValue\":\"{v}\"}}}}")
}

fn attr_u64<W: Write + ?Sized>(w: &mut W, k: &str, v: u64) -> io::Result<()> {
    attr_int(w, k, i64::try_from(v).unwrap_or(i64::MAX))
}

fn attr_bool<W: Write + ?Sized>(w: &mut W, k: &str, v: bool) -> io::Result<()> {
    key(w, false, k)?;
    write!(w, "{{\"boolValue\":{v}}}}}")
}

fn provider_model<W: Write + ?Sized>(
    w: &mut W,
    dialect: Option<&str>,
    model: Option<&str>,
) -> io::Result<()> {
    if let Some(p) = provider(dialect) {
        attr_str(w, false, "gen_ai.provider.name", p)?;
    }
    if let Some(m) = model {
        attr_str(w, false, "gen_ai.request.model", m)?;
    }
    Ok(())
}

/// `gen_ai.usage.*`. Input counts every input token (cache included), as
/// the conventions' `input_tokens` does; an output count the source lacked
/// in part is a lower bound, so it is left out and flagged.
fn usage_attrs<W: Write + ?Sized>(w: &mut W, u: &Usage) -> io::Result<()> {
    attr_u64(w, "gen_ai.usage.input_tokens", u.input)?;
    if u.output_incomplete {
        attr_bool(w, "cstream.usage.output_incomplete", true)?;
        if u.output > 0 {
            // What was counted: a lower bound, under a name of its own.
            attr_u64(w, "cstream.usage.output_tokens_min", u.output)?;
        }
    } else {
        attr_u64(w, "gen_ai.usage.output_tokens", u.output)?;
    }
    if let Some(c) = u.cache_read {
        attr_u64(w, "gen_ai.usage.cache_read.input_tokens", c)?;
    }
    if let Some(c) = u.cache_write {
        attr_u64(w, "gen_ai.usage.cache_creation.input_tokens", c)?;
    }
    // Part of the output count, as the conventions say it is; only where the
    // source says how much (unknown is left out, not written as 0).
    if let Some(r) = u.reasoning {
        attr_u64(w, "gen_ai.usage.reasoning.output_tokens", r)?;
    }
    Ok(())
}

impl<W: Write> Sink for OtlpSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.s = Some(Trace::new(&s.id));
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let fallback = self.fallback_ns;
        let t = self.s.get_or_insert_with(|| Trace::new(&s.id));
        t.event(ev, self.model_override.as_deref(), fallback);
        Ok(())
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        if let Some(t) = self.s.take() {
            self.write_trace(t)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(t) = self.s.take() {
            self.write_trace(t)?;
        }
        self.w.flush()
    }
}
