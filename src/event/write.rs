//! The `events` wire form: one compact JSON object per event, `type` first,
//! then `sessionId`, `ts`, and the type's own fields in a fixed order.
//!
//! Written by hand rather than through serde so the field order is fixed,
//! raw payloads are copied verbatim, and nothing is allocated per event.

use std::io::{self, Write};

use super::{Event, Kind, SessionResult, Text, ToolDetails, ToolEnd, ToolStart, Usage};
use crate::json::{TsDigits, write_i64, write_str, write_u64};

/// `,"name":`, the bytes before a member's value, as one constant: written
/// with one copy of a length known where it is written (inlined moves, not
/// a `memcpy` call whose size branches mispredict from one key to the next),
/// where three writes of the pieces used to be.
macro_rules! key {
    ($name:literal) => {
        concat!(",\"", $name, "\":").as_bytes()
    };
}

/// Write `ev` as one line of cstream's `events` format (with the newline),
/// its session id already quoted and escaped (a sink writing many events of
/// one session escapes it once), its timestamp through the sink's `ts`.
pub fn write_event_quoted<W: Write + ?Sized>(
    w: &mut W,
    quoted_sid: &[u8],
    ts: &mut TsDigits,
    ev: &Event,
) -> io::Result<()> {
    w.write_all(super::WIRE_HEADS[ev.kind.index()])?;
    w.write_all(quoted_sid)?;
    if let Some(t) = ev.ts {
        w.write_all(b",\"ts\":")?;
        ts.write(w, t)?;
    }
    let mut o = Fields { w };
    match &ev.kind {
        Kind::SessionStarted(s) => {
            o.str(key!("dialect"), &s.dialect)?;
            o.u64(key!("schemaVersion"), super::SCHEMA_VERSION.into())?;
            o.opt_str(key!("model"), s.model.as_deref())?;
            o.opt_str(key!("cwd"), s.cwd.as_deref())?;
            o.opt_str(key!("permissionMode"), s.permission_mode.as_deref())?;
            o.opt_str(key!("title"), s.title.as_deref())?;
            if let Some(p) = &s.parent {
                if p.fork {
                    o.str(key!("forkedFrom"), &p.session_id)?;
                } else {
                    o.str(key!("parentSessionId"), &p.session_id)?;
                    o.opt_str(key!("parentCallId"), p.call_id.as_deref())?;
                }
            }
        }
        Kind::UserMessage { text }
        | Kind::ThinkingDelta { text }
        | Kind::TextDelta { text }
        | Kind::AssistantMessage { text } => o.str(key!("text"), text)?,
        Kind::ThinkingCompleted { duration_ms } => o.opt_u64(key!("durationMs"), *duration_ms)?,
        Kind::Thinking { text, duration_ms } => {
            o.str(key!("text"), text)?;
            o.opt_u64(key!("durationMs"), *duration_ms)?;
        }
        Kind::ToolCallStarted(t) => o.tool_start(t)?,
        Kind::ToolCallProgress { call_id, partial } => {
            o.str(key!("callId"), call_id)?;
            o.raw(key!("partial"), partial.get())?;
        }
        Kind::ShellOutputDelta {
            call_id,
            stream,
            text,
        } => {
            o.str(key!("callId"), call_id)?;
            o.str(key!("stream"), stream.as_str())?;
            o.str(key!("text"), text)?;
        }
        Kind::ToolCallCompleted(t) => {
            o.str(key!("callId"), &t.call_id)?;
            o.str(key!("toolName"), &t.tool_name)?;
            o.tool_end(t)?;
        }
        Kind::ToolCall(b) => {
            o.tool_start(&b.0)?;
            o.tool_end(&b.1)?;
        }
        Kind::UsageDelta(u) => {
            o.u64(key!("deltaInput"), u.input)?;
            o.u64(key!("deltaOutput"), u.output)?;
            o.opt_u64(key!("deltaCacheRead"), u.cache_read)?;
            o.opt_u64(key!("deltaCacheWrite"), u.cache_write)?;
            o.opt_u64(key!("deltaCacheWrite1h"), u.cache_write_1h)?;
            o.opt_u64(key!("deltaReasoning"), u.reasoning)?;
            if u.output_incomplete {
                o.bool(key!("outputIncomplete"), true)?;
            }
        }
        Kind::Summary { phase, text } => {
            o.str(key!("phase"), phase.as_str())?;
            o.opt_str(key!("text"), text.as_deref())?;
        }
        Kind::TurnEnded { usage } => {
            if let Some(u) = usage {
                o.usage(key!("usage"), u)?;
            }
        }
        Kind::Result(r) => o.result(r)?,
        Kind::Error {
            message,
            fatal,
            source,
        } => {
            o.str(key!("message"), message)?;
            o.bool(key!("fatal"), *fatal)?;
            o.opt_str(key!("source"), source.as_deref())?;
        }
        Kind::Unknown { raw } => o.raw(key!("raw"), raw.get())?,
        Kind::UserEvent { what, text } => {
            o.str(key!("what"), what.as_str())?;
            o.str(key!("text"), text)?;
        }
    }
    o.w.write_all(b"}\n")
}

/// Writes `,"key":value` pairs, each key made by [`key!`].
struct Fields<'w, W: Write + ?Sized> {
    w: &'w mut W,
}

impl<W: Write + ?Sized> Fields<'_, W> {
    #[inline(always)]
    fn key(&mut self, k: &'static [u8]) -> io::Result<()> {
        self.w.write_all(k)
    }

    #[inline]
    fn str(&mut self, k: &'static [u8], v: &str) -> io::Result<()> {
        self.key(k)?;
        write_str(self.w, v)
    }

    #[inline]
    fn opt_str(&mut self, k: &'static [u8], v: Option<&str>) -> io::Result<()> {
        match v {
            Some(v) => self.str(k, v),
            None => Ok(()),
        }
    }

    #[inline]
    fn u64(&mut self, k: &'static [u8], v: u64) -> io::Result<()> {
        self.key(k)?;
        write_u64(self.w, v)
    }

    #[inline]
    fn opt_u64(&mut self, k: &'static [u8], v: Option<u64>) -> io::Result<()> {
        match v {
            Some(v) => self.u64(k, v),
            None => Ok(()),
        }
    }

    #[inline]
    fn bool(&mut self, k: &'static [u8], v: bool) -> io::Result<()> {
        self.key(k)?;
        self.w.write_all(if v { b"true" } else { b"false" })
    }

    #[inline]
    fn raw(&mut self, k: &'static [u8], v: &str) -> io::Result<()> {
        self.key(k)?;
        self.w.write_all(v.as_bytes())
    }

    fn usage(&mut self, k: &'static [u8], u: &Usage) -> io::Result<()> {
        self.key(k)?;
        write!(
            self.w,
            "{{\"inputTokens\":{},\"outputTokens\":{}",
            u.input, u.output
        )?;
        if let Some(c) = u.cache_read {
            write!(self.w, ",\"cacheReadTokens\":{c}")?;
        }
        if let Some(c) = u.cache_write {
            write!(self.w, ",\"cacheWriteTokens\":{c}")?;
        }
        if let Some(c) = u.cache_write_1h {
            write!(self.w, ",\"cacheWrite1hTokens\":{c}")?;
        }
        if let Some(c) = u.reasoning {
            write!(self.w, ",\"reasoningTokens\":{c}")?;
        }
        if u.output_incomplete {
            self.w.write_all(b",\"outputIncomplete\":true")?;
        }
        self.w.write_all(b"}")
    }

    fn tool_start(&mut self, t: &ToolStart) -> io::Result<()> {
        self.str(key!("callId"), &t.call_id)?;
        self.str(key!("toolName"), &t.tool_name)?;
        self.raw(key!("args"), t.args.get())?;
        self.opt_str(key!("command"), t.command.as_deref())?;
        self.opt_str(key!("cwd"), t.cwd.as_deref())?;
        self.opt_str(key!("path"), t.path.as_deref())?;
        self.opt_str(key!("pattern"), t.pattern.as_deref())?;
        self.opt_str(key!("url"), t.url.as_deref())?;
        self.opt_str(key!("query"), t.query.as_deref())?;
        self.opt_str(key!("description"), t.description.as_deref())?;
        self.opt_str(key!("mcpServer"), t.mcp_server.as_deref())?;
        self.opt_str(key!("mcpTool"), t.mcp_tool.as_deref())?;
        if let Some(d) = &t.details {
            self.details(d)?;
        }
        Ok(())
    }

    fn details(&mut self, d: &ToolDetails) -> io::Result<()> {
        self.opt_str(key!("oldString"), d.old_string.as_deref())?;
        self.opt_str(key!("newString"), d.new_string.as_deref())?;
        self.opt_str(key!("fileContent"), d.file_content.as_deref())?;
        self.opt_str(key!("newPath"), d.new_path.as_deref())?;
        self.opt_str(key!("plan"), d.plan.as_deref())?;
        self.opt_str(key!("title"), d.title.as_deref())?;
        self.opt_str(key!("overview"), d.overview.as_deref())?;
        if let Some(todos) = &d.todos {
            self.key(key!("todos"))?;
            self.w.write_all(b"[")?;
            for (i, t) in todos.iter().enumerate() {
                self.w.write_all(if i == 0 { b"{" } else { b",{" })?;
                if let Some(id) = &t.id {
                    self.w.write_all(b"\"id\":")?;
                    write_str(self.w, id)?;
                    self.w.write_all(b",")?;
                }
                self.w.write_all(b"\"content\":")?;
                write_str(self.w, &t.content)?;
                self.w.write_all(b",\"status\":")?;
                write_str(self.w, &t.status)?;
                self.w.write_all(b"}")?;
            }
            self.w.write_all(b"]")?;
        }
        if let Some(qs) = &d.questions {
            self.key(key!("questions"))?;
            self.w.write_all(b"[")?;
            for (i, q) in qs.iter().enumerate() {
                self.w.write_all(if i == 0 { b"{" } else { b",{" })?;
                if let Some(id) = &q.id {
                    self.w.write_all(b"\"id\":")?;
                    write_str(self.w, id)?;
                    self.w.write_all(b",")?;
                }
                self.w.write_all(b"\"text\":")?;
                write_str(self.w, &q.text)?;
                self.w.write_all(b",\"options\":[")?;
                for (j, c) in q.options.iter().enumerate() {
                    self.w.write_all(if j == 0 { b"{" } else { b",{" })?;
                    if let Some(id) = &c.id {
                        self.w.write_all(b"\"id\":")?;
                        write_str(self.w, id)?;
                        self.w.write_all(b",")?;
                    }
                    self.w.write_all(b"\"label\":")?;
                    write_str(self.w, &c.label)?;
                    self.w.write_all(b"}")?;
                }
                self.w.write_all(b"]}")?;
            }
            self.w.write_all(b"]")?;
        }
        Ok(())
    }

    /// The completion fields after `callId`/`toolName`.
    fn tool_end(&mut self, t: &ToolEnd) -> io::Result<()> {
        self.bool(key!("ok"), t.ok)?;
        self.raw(
            key!("result"),
            t.result.as_ref().map_or("null", |r| r.get()),
        )?;
        self.opt_u64(key!("durationMs"), t.duration_ms)?;
        if let Some(c) = t.exit_code {
            self.key(key!("exitCode"))?;
            write_i64(self.w, c)?;
        }
        if let Some(o) = &t.output {
            self.key(key!("output"))?;
            match o {
                Text::Plain(s) => write_str(self.w, s)?,
                // Valid JSON string literal from the input: copied as it came.
                Text::Json(lit) => self.w.write_all(lit.as_bytes())?,
            }
        }
        self.opt_str(key!("patch"), t.patch.as_deref())?;
        self.opt_u64(key!("linesAdded"), t.lines_added)?;
        self.opt_u64(key!("linesRemoved"), t.lines_removed)?;
        self.opt_str(key!("error"), t.error.as_deref())?;
        if t.cancelled {
            self.bool(key!("cancelled"), true)?;
        }
        if t.outcome_unknown {
            self.bool(key!("outcomeUnknown"), true)?;
        }
        Ok(())
    }

    fn result(&mut self, r: &SessionResult) -> io::Result<()> {
        self.bool(key!("ok"), r.ok)?;
        self.opt_str(key!("text"), r.text.as_deref())?;
        self.opt_u64(key!("durationMs"), r.duration_ms)?;
        if let Some(u) = &r.usage {
            self.usage(key!("usage"), u)?;
        }
        if let Some(c) = r.cost_usd {
            self.key(key!("costUsd"))?;
            crate::json::write_f64(self.w, c)?;
        }
        self.opt_str(key!("error"), r.error.as_deref())
    }
}
