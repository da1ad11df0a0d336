//! The `events` wire form: one compact JSON object per event, `type` first,
//! then `sessionId`, `ts`, and the type's own fields in a fixed order.
//!
//! Written by hand rather than through serde so the field order is fixed,
//! raw payloads are copied verbatim, and nothing is allocated per event.

use std::io::{self, Write};

use super::{Event, Kind, SessionResult, Text, ToolDetails, ToolEnd, ToolStart, Usage};
use crate::json::{TsDigits, write_i64, write_str, write_u64};

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
            o.str("dialect", &s.dialect)?;
            o.u64("schemaVersion", super::SCHEMA_VERSION.into())?;
            o.opt_str("model", s.model.as_deref())?;
            o.opt_str("cwd", s.cwd.as_deref())?;
            o.opt_str("permissionMode", s.permission_mode.as_deref())?;
            o.opt_str("title", s.title.as_deref())?;
            if let Some(p) = &s.parent {
                if p.fork {
                    o.str("forkedFrom", &p.session_id)?;
                } else {
                    o.str("parentSessionId", &p.session_id)?;
                    o.opt_str("parentCallId", p.call_id.as_deref())?;
                }
            }
        }
        Kind::UserMessage { text }
        | Kind::ThinkingDelta { text }
        | Kind::TextDelta { text }
        | Kind::AssistantMessage { text } => o.str("text", text)?,
        Kind::ThinkingCompleted { duration_ms } => o.opt_u64("durationMs", *duration_ms)?,
        Kind::Thinking { text, duration_ms } => {
            o.str("text", text)?;
            o.opt_u64("durationMs", *duration_ms)?;
        }
        Kind::ToolCallStarted(t) => o.tool_start(t)?,
        Kind::ToolCallProgress { call_id, partial } => {
            o.str("callId", call_id)?;
            o.raw("partial", partial.get())?;
        }
        Kind::ShellOutputDelta {
            call_id,
            stream,
            text,
        } => {
            o.str("callId", call_id)?;
            o.str("stream", stream.as_str())?;
            o.str("text", text)?;
        }
        Kind::ToolCallCompleted(t) => {
            o.str("callId", &t.call_id)?;
            o.str("toolName", &t.tool_name)?;
            o.tool_end(t)?;
        }
        Kind::ToolCall(b) => {
            o.tool_start(&b.0)?;
            o.tool_end(&b.1)?;
        }
        Kind::UsageDelta(u) => {
            o.u64("deltaInput", u.input)?;
            o.u64("deltaOutput", u.output)?;
            o.opt_u64("deltaCacheRead", u.cache_read)?;
            o.opt_u64("deltaCacheWrite", u.cache_write)?;
            o.opt_u64("deltaCacheWrite1h", u.cache_write_1h)?;
            o.opt_u64("deltaReasoning", u.reasoning)?;
            if u.output_incomplete {
                o.bool("outputIncomplete", true)?;
            }
        }
        Kind::Summary { phase, text } => {
            o.str("phase", phase.as_str())?;
            o.opt_str("text", text.as_deref())?;
        }
        Kind::TurnEnded { usage } => {
            if let Some(u) = usage {
                o.usage("usage", u)?;
            }
        }
        Kind::Result(r) => o.result(r)?,
        Kind::Error {
            message,
            fatal,
            source,
        } => {
            o.str("message", message)?;
            o.bool("fatal", *fatal)?;
            o.opt_str("source", source.as_deref())?;
        }
        Kind::Unknown { raw } => o.raw("raw", raw.get())?,
        Kind::UserEvent { what, text } => {
            o.str("what", what.as_str())?;
            o.str("text", text)?;
        }
    }
    o.w.write_all(b"}\n")
}

/// Writes `,"key":value` pairs.
struct Fields<'w, W: Write + ?Sized> {
    w: &'w mut W,
}

impl<W: Write + ?Sized> Fields<'_, W> {
    fn key(&mut self, k: &str) -> io::Result<()> {
        self.w.write_all(b",\"")?;
        self.w.write_all(k.as_bytes())?;
        self.w.write_all(b"\":")
    }

    fn str(&mut self, k: &str, v: &str) -> io::Result<()> {
        self.key(k)?;
        write_str(self.w, v)
    }

    fn opt_str(&mut self, k: &str, v: Option<&str>) -> io::Result<()> {
        match v {
            Some(v) => self.str(k, v),
            None => Ok(()),
        }
    }

    fn u64(&mut self, k: &str, v: u64) -> io::Result<()> {
        self.key(k)?;
        write_u64(self.w, v)
    }

    fn opt_u64(&mut self, k: &str, v: Option<u64>) -> io::Result<()> {
        match v {
            Some(v) => self.u64(k, v),
            None => Ok(()),
        }
    }

    fn bool(&mut self, k: &str, v: bool) -> io::Result<()> {
        self.key(k)?;
        self.w.write_all(if v { b"true" } else { b"false" })
    }

    fn raw(&mut self, k: &str, v: &str) -> io::Result<()> {
        self.key(k)?;
        self.w.write_all(v.as_bytes())
    }

    fn usage(&mut self, k: &str, u: &Usage) -> io::Result<()> {
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
        self.str("callId", &t.call_id)?;
        self.str("toolName", &t.tool_name)?;
        self.raw("args", t.args.get())?;
        self.opt_str("command", t.command.as_deref())?;
        self.opt_str("cwd", t.cwd.as_deref())?;
        self.opt_str("path", t.path.as_deref())?;
        self.opt_str("pattern", t.pattern.as_deref())?;
        self.opt_str("url", t.url.as_deref())?;
        self.opt_str("query", t.query.as_deref())?;
        self.opt_str("description", t.description.as_deref())?;
        self.opt_str("mcpServer", t.mcp_server.as_deref())?;
        self.opt_str("mcpTool", t.mcp_tool.as_deref())?;
        if let Some(d) = &t.details {
            self.details(d)?;
        }
        Ok(())
    }

    fn details(&mut self, d: &ToolDetails) -> io::Result<()> {
        self.opt_str("oldString", d.old_string.as_deref())?;
        self.opt_str("newString", d.new_string.as_deref())?;
        self.opt_str("fileContent", d.file_content.as_deref())?;
        self.opt_str("newPath", d.new_path.as_deref())?;
        self.opt_str("plan", d.plan.as_deref())?;
        self.opt_str("title", d.title.as_deref())?;
        self.opt_str("overview", d.overview.as_deref())?;
        if let Some(todos) = &d.todos {
            self.key("todos")?;
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
            self.key("questions")?;
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
        self.bool("ok", t.ok)?;
        self.raw("result", t.result.as_ref().map_or("null", |r| r.get()))?;
        self.opt_u64("durationMs", t.duration_ms)?;
        if let Some(c) = t.exit_code {
            self.key("exitCode")?;
            write_i64(self.w, c)?;
        }
        if let Some(o) = &t.output {
            self.key("output")?;
            match o {
                Text::Plain(s) => write_str(self.w, s)?,
                // Valid JSON string literal from the input: copied as it came.
                Text::Json(lit) => self.w.write_all(lit.as_bytes())?,
            }
        }
        self.opt_str("patch", t.patch.as_deref())?;
        self.opt_u64("linesAdded", t.lines_added)?;
        self.opt_u64("linesRemoved", t.lines_removed)?;
        self.opt_str("error", t.error.as_deref())?;
        if t.cancelled {
            self.bool("cancelled", true)?;
        }
        if t.outcome_unknown {
            self.bool("outcomeUnknown", true)?;
        }
        Ok(())
    }

    fn result(&mut self, r: &SessionResult) -> io::Result<()> {
        self.bool("ok", r.ok)?;
        self.opt_str("text", r.text.as_deref())?;
        self.opt_u64("durationMs", r.duration_ms)?;
        if let Some(u) = &r.usage {
            self.usage("usage", u)?;
        }
        if let Some(c) = r.cost_usd {
            self.key("costUsd")?;
            crate::json::write_f64(self.w, c)?;
        }
        self.opt_str("error", r.error.as_deref())
    }
}
