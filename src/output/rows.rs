//! `--to rows`: one flat JSON object per event, every row with the same
//! columns in the same order (docs/formats.md#rows; the order is the
//! schema's, `RowLine` in `src/schema.rs`, and tests/it/rows_messages.rs
//! checks every row against both), so that a SQL engine
//! reading NDJSON (DuckDB's `read_json`) infers one table without options.
//!
//! A column the event does not have, or whose value the source did not
//! give, is `null`: unknown is never written as 0. Token counts are on the
//! `usage_delta` rows only (their sum is the session's tokens); the per-turn
//! figure of `turn_ended` and the totals of `result` are not repeated, so a
//! `sum()` never counts a token twice. Rows are written as the events come,
//! so memory does not grow with the session.

use std::io::{self, Write};

use super::{Session, Sink};
use crate::event::figures::failed;
use crate::event::{Event, Kind, OutStream, Text, ToolEnd, ToolStart, Usage};
use crate::json::{write_f64, write_i64, write_str, write_u64};

/// Writes one row per event.
pub struct RowsSink<W: Write> {
    w: W,
    /// The current session's ordinal and its id, quoted and escaped once.
    sid: (usize, Vec<u8>),
    /// The event's 1-based position in its session.
    seq: u64,
    /// The last second formatted, and its RFC 3339 text without the `Z`, so
    /// that a run of events in one second formats the date once.
    second: Option<(i64, String)>,
    /// The row being written: built here, then handed to `w` in one call
    /// (a row is ~30 small pieces; one copy each into a `Vec` is cheaper
    /// than as many calls into the writer).
    row: Vec<u8>,
}

impl<W: Write> RowsSink<W> {
    pub fn new(w: W) -> Self {
        RowsSink {
            w,
            sid: (0, Vec::new()),
            seq: 0,
            second: None,
            row: Vec::new(),
        }
    }

    /// `ts` (epoch ms) as RFC 3339 with milliseconds, UTC, into the row.
    fn time(&mut self, ts: i64) -> io::Result<()> {
        let secs = ts.div_euclid(1000);
        let ms = ts.rem_euclid(1000);
        if self.second.as_ref().is_none_or(|(s, _)| *s != secs) {
            let mut t = crate::time::iso8601(secs);
            t.pop(); // the `Z`, written after the milliseconds
            self.second = Some((secs, t));
        }
        let (_, t) = self.second.as_ref().expect("set above");
        let r = &mut self.row;
        r.push(b'"');
        r.extend_from_slice(t.as_bytes());
        let ms = ms as u16; // rem_euclid(1000): 0..=999
        r.extend_from_slice(&[
            b'.',
            b'0' + (ms / 100) as u8,
            b'0' + (ms / 10 % 10) as u8,
            b'0' + (ms % 10) as u8,
            b'Z',
            b'"',
        ]);
        Ok(())
    }
}

/// The columns after `type`, filled per event; `None` writes `null`.
#[derive(Default)]
struct Cols<'e> {
    role: Option<&'static str>,
    text: Option<TextRef<'e>>,
    tool: Option<&'e str>,
    call_id: Option<&'e str>,
    data: Option<&'e str>,
    ok: Option<bool>,
    failed: Option<bool>,
    exit_code: Option<i64>,
    duration_ms: Option<u64>,
    error: Option<&'e str>,
    fatal: Option<bool>,
    usage: Option<&'e Usage>,
    cost_usd: Option<f64>,
    model: Option<&'e str>,
    dialect: Option<&'e str>,
    detail: Option<&'e str>,
}

/// A text column: characters, or a JSON string literal copied as it is.
enum TextRef<'e> {
    Str(&'e str),
    Literal(&'e str),
}

impl<'e> TextRef<'e> {
    fn of(t: &'e Text<'_>) -> Self {
        match t {
            Text::Plain(s) => TextRef::Str(s),
            Text::Json(lit) => TextRef::Literal(lit),
        }
    }
}

fn start_cols<'e>(c: &mut Cols<'e>, t: &'e ToolStart<'_>) {
    c.tool = Some(&t.tool_name);
    c.call_id = Some(&t.call_id);
    c.data = Some(t.args.get());
    c.text = t.key_arg().map(TextRef::Str);
}

fn end_cols<'e>(c: &mut Cols<'e>, e: &'e ToolEnd<'_>) {
    c.tool = Some(&e.tool_name);
    c.call_id = Some(&e.call_id);
    c.ok = Some(e.ok);
    c.failed = Some(failed(e));
    c.exit_code = e.exit_code;
    c.duration_ms = e.duration_ms;
    c.error = e.error.as_deref();
    c.text = e.output.as_ref().map(TextRef::of);
    c.data = Some(e.result.as_ref().map_or("null", |r| r.get()));
    c.detail = if e.cancelled {
        Some("cancelled")
    } else if e.outcome_unknown {
        Some("outcome_unknown")
    } else {
        None
    };
}

fn cols<'e>(ev: &'e Event<'_>) -> Cols<'e> {
    let mut c = Cols::default();
    match &ev.kind {
        Kind::SessionStarted(s) => {
            c.dialect = Some(&s.dialect);
            c.model = s.model.as_deref();
            c.text = s.title.as_deref().map(TextRef::Str);
            c.detail = s.parent.as_ref().map(|p| &*p.session_id);
        }
        Kind::UserMessage { text } => {
            c.role = Some("user");
            c.text = Some(TextRef::Str(text));
        }
        Kind::UserEvent { what, text } => {
            c.role = Some("user");
            c.text = Some(TextRef::Str(text));
            c.detail = Some(what.as_str());
        }
        Kind::ThinkingDelta { text }
        | Kind::TextDelta { text }
        | Kind::AssistantMessage { text } => {
            c.role = Some("assistant");
            c.text = Some(TextRef::Str(text));
        }
        Kind::ThinkingCompleted { duration_ms } => {
            c.role = Some("assistant");
            c.duration_ms = *duration_ms;
        }
        Kind::Thinking { text, duration_ms } => {
            c.role = Some("assistant");
            c.text = Some(TextRef::Str(text));
            c.duration_ms = *duration_ms;
        }
        Kind::ToolCallStarted(t) => {
            c.role = Some("assistant");
            start_cols(&mut c, t);
        }
        Kind::ToolCallProgress { call_id, partial } => {
            c.role = Some("tool");
            c.call_id = Some(call_id);
            c.data = Some(partial.get());
        }
        Kind::ShellOutputDelta {
            call_id,
            stream,
            text,
        } => {
            c.role = Some("tool");
            c.call_id = Some(call_id);
            c.text = Some(TextRef::Str(text));
            c.detail = Some(match stream {
                OutStream::Stdout => "stdout",
                OutStream::Stderr => "stderr",
            });
        }
        Kind::ToolCallCompleted(e) => {
            c.role = Some("tool");
            end_cols(&mut c, e);
        }
        Kind::ToolCall(b) => {
            // `--coalesce` only: the start's columns, then the end's over them
            // (the key argument stays the text when the end has no output).
            c.role = Some("tool");
            start_cols(&mut c, &b.0);
            let (text, data) = (c.text.take(), c.data);
            end_cols(&mut c, &b.1);
            if c.text.is_none() {
                c.text = text;
            }
            if b.1.result.is_none() {
                c.data = data;
            }
        }
        Kind::UsageDelta(u) => c.usage = Some(u),
        Kind::Summary { phase, text } => {
            c.text = text.as_deref().map(TextRef::Str);
            c.detail = Some(phase.as_str());
        }
        Kind::TurnEnded { .. } => {}
        Kind::Result(r) => {
            c.ok = Some(r.ok);
            c.text = r.text.as_deref().map(TextRef::Str);
            c.duration_ms = r.duration_ms;
            c.error = r.error.as_deref();
            c.cost_usd = r.cost_usd;
        }
        Kind::Error {
            message,
            fatal,
            source,
        } => {
            c.text = Some(TextRef::Str(message));
            c.fatal = Some(*fatal);
            c.detail = source.as_deref();
        }
        Kind::Unknown { raw } => c.data = Some(raw.get()),
    }
    c
}

impl<W: Write> Sink for RowsSink<W> {
    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.sid.0 = s.ordinal;
        self.sid.1.clear();
        write_str(&mut self.sid.1, &s.id)?;
        self.seq = 0;
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.sid.0 != s.ordinal || self.sid.1.is_empty() {
            self.begin(s)?;
        }
        self.seq += 1;
        let c = cols(ev);
        self.row.clear();
        self.row.extend_from_slice(b"{\"session\":");
        self.row.extend_from_slice(&self.sid.1);
        self.row.extend_from_slice(b",\"session_n\":");
        write_u64(&mut self.row, s.ordinal as u64)?;
        self.row.extend_from_slice(b",\"seq\":");
        write_u64(&mut self.row, self.seq)?;
        self.row.extend_from_slice(b",\"time\":");
        match ev.ts {
            Some(ts) => self.time(ts)?,
            None => self.row.extend_from_slice(b"null"),
        }
        self.row.extend_from_slice(b",\"type\":\"");
        self.row.extend_from_slice(ev.type_name().as_bytes());
        self.row.push(b'"');
        let w = &mut self.row;
        put_str(w, "role", c.role)?;
        w.write_all(b",\"text\":")?;
        match c.text {
            Some(TextRef::Str(t)) => write_str(w, t)?,
            Some(TextRef::Literal(lit)) => w.write_all(lit.as_bytes())?,
            None => w.write_all(b"null")?,
        }
        put_str(w, "tool", c.tool)?;
        put_str(w, "call_id", c.call_id)?;
        // The source's payload as JSON text: a string column, whatever its
        // shape, so the table keeps one type per column.
        put_str(w, "data", c.data)?;
        put_bool(w, "ok", c.ok)?;
        put_bool(w, "failed", c.failed)?;
        w.write_all(b",\"exit_code\":")?;
        match c.exit_code {
            Some(n) => write_i64(w, n)?,
            None => w.write_all(b"null")?,
        }
        put_u64(w, "duration_ms", c.duration_ms)?;
        put_str(w, "error", c.error)?;
        put_bool(w, "fatal", c.fatal)?;
        let u = c.usage;
        put_u64(w, "tokens_in", u.map(|u| u.input))?;
        // An output count the source lacked is unknown, not 0
        // (docs/events.md#usage).
        put_u64(
            w,
            "tokens_out",
            u.and_then(|u| (!u.output_incomplete || u.output > 0).then_some(u.output)),
        )?;
        put_u64(w, "cache_read", u.and_then(|u| u.cache_read))?;
        put_u64(w, "cache_write", u.and_then(|u| u.cache_write))?;
        put_u64(w, "reasoning", u.and_then(|u| u.reasoning))?;
        put_bool(w, "output_incomplete", u.map(|u| u.output_incomplete))?;
        w.write_all(b",\"cost_usd\":")?;
        match c.cost_usd {
            Some(v) => write_f64(w, v)?,
            None => w.write_all(b"null")?,
        }
        put_str(w, "model", c.model)?;
        put_str(w, "dialect", c.dialect)?;
        put_str(w, "detail", c.detail)?;
        w.extend_from_slice(b"}\n");
        self.w.write_all(&self.row)?;
        if self.row.capacity() > 1 << 20 {
            // A row that carried a huge output: its buffer is not kept.
            self.row = Vec::new();
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

fn put_str<W: Write>(w: &mut W, key: &str, v: Option<&str>) -> io::Result<()> {
    w.write_all(b",\"")?;
    w.write_all(key.as_bytes())?;
    w.write_all(b"\":")?;
    match v {
        Some(s) => write_str(w, s),
        None => w.write_all(b"null"),
    }
}

fn put_bool<W: Write>(w: &mut W, key: &str, v: Option<bool>) -> io::Result<()> {
    w.write_all(b",\"")?;
    w.write_all(key.as_bytes())?;
    w.write_all(match v {
        Some(true) => b"\":true",
        Some(false) => b"\":false",
        None => b"\":null",
    })
}

fn put_u64<W: Write>(w: &mut W, key: &str, v: Option<u64>) -> io::Result<()> {
    w.write_all(b",\"")?;
    w.write_all(key.as_bytes())?;
    w.write_all(b"\":")?;
    match v {
        Some(n) => write_u64(w, n),
        None => w.write_all(b"null"),
    }
}
