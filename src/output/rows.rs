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

use super::escape::push_str;
use super::{Session, Sink};
use crate::event::figures::failed;
use crate::event::{Event, Kind, OutStream, Text, ToolEnd, ToolStart, Usage};
use crate::json::{write_f64, write_i64, write_u64};

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
    /// Rows not handed to `w` yet: each is built here (a row is ~30 small
    /// pieces; one copy each into a `Vec` is cheaper than as many calls
    /// into the writer), and they go to `w` [`BATCH`] bytes at a time, a
    /// write that a `BufWriter` of that capacity passes on without copying
    /// it into its own buffer. [`Sink::flush`] writes them all, so what
    /// reaches the output, and when, is as before.
    row: Vec<u8>,
}

/// Bytes of rows gathered before they are written: the command line's
/// output buffer (`WRITE_BUFFER_BYTES`), so that a batch is not copied
/// again.
const BATCH: usize = 64 * 1024;

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
    role: Option<Role>,
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

/// The `role` column.
#[derive(Clone, Copy)]
enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    /// The column's value, quoted: written as one copy (it was escaped
    /// like any text, on every row).
    fn quoted(self) -> &'static str {
        match self {
            Role::User => "\"user\"",
            Role::Assistant => "\"assistant\"",
            Role::Tool => "\"tool\"",
        }
    }
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
            c.role = Some(Role::User);
            c.text = Some(TextRef::Str(text));
        }
        Kind::UserEvent { what, text } => {
            c.role = Some(Role::User);
            c.text = Some(TextRef::Str(text));
            c.detail = Some(what.as_str());
        }
        Kind::ThinkingDelta { text }
        | Kind::TextDelta { text }
        | Kind::AssistantMessage { text } => {
            c.role = Some(Role::Assistant);
            c.text = Some(TextRef::Str(text));
        }
        Kind::ThinkingCompleted { duration_ms } => {
            c.role = Some(Role::Assistant);
            c.duration_ms = *duration_ms;
        }
        Kind::Thinking { text, duration_ms } => {
            c.role = Some(Role::Assistant);
            c.text = Some(TextRef::Str(text));
            c.duration_ms = *duration_ms;
        }
        Kind::ToolCallStarted(t) => {
            c.role = Some(Role::Assistant);
            start_cols(&mut c, t);
        }
        Kind::ToolCallProgress { call_id, partial } => {
            c.role = Some(Role::Tool);
            c.call_id = Some(call_id);
            c.data = Some(partial.get());
        }
        Kind::ShellOutputDelta {
            call_id,
            stream,
            text,
        } => {
            c.role = Some(Role::Tool);
            c.call_id = Some(call_id);
            c.text = Some(TextRef::Str(text));
            c.detail = Some(match stream {
                OutStream::Stdout => "stdout",
                OutStream::Stderr => "stderr",
            });
        }
        Kind::ToolCallCompleted(e) => {
            c.role = Some(Role::Tool);
            end_cols(&mut c, e);
        }
        Kind::ToolCall(b) => {
            // `--coalesce` only: the start's columns, then the end's over them
            // (the key argument stays the text when the end has no output).
            c.role = Some(Role::Tool);
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
        push_str(&mut self.sid.1, &s.id);
        self.seq = 0;
        Ok(())
    }

    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        if self.sid.0 != s.ordinal || self.sid.1.is_empty() {
            self.begin(s)?;
        }
        self.seq += 1;
        let c = cols(ev);
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
        let mut w = Columns {
            row: &mut self.row,
            nulls_from: 0,
        };
        if let Some(r) = c.role {
            w.key(ROLE);
            w.row.extend_from_slice(r.quoted().as_bytes());
        }
        if let Some(t) = c.text {
            w.key(TEXT);
            match t {
                TextRef::Str(t) => push_str(w.row, t),
                TextRef::Literal(lit) => w.row.extend_from_slice(lit.as_bytes()),
            }
        }
        w.str(TOOL, c.tool)?;
        w.str(CALL_ID, c.call_id)?;
        // The source's payload as JSON text: a string column, whatever its
        // shape, so the table keeps one type per column.
        w.str(DATA, c.data)?;
        w.bool(OK, c.ok);
        w.bool(FAILED, c.failed);
        if let Some(n) = c.exit_code {
            w.key(EXIT_CODE);
            write_i64(w.row, n)?;
        }
        w.u64(DURATION_MS, c.duration_ms)?;
        w.str(ERROR, c.error)?;
        w.bool(FATAL, c.fatal);
        if let Some(u) = c.usage {
            w.u64(TOKENS_IN, Some(u.input))?;
            // An output count the source lacked is unknown, not 0
            // (docs/events.md#usage).
            w.u64(
                TOKENS_OUT,
                (!u.output_incomplete || u.output > 0).then_some(u.output),
            )?;
            w.u64(CACHE_READ, u.cache_read)?;
            w.u64(CACHE_WRITE, u.cache_write)?;
            w.u64(REASONING, u.reasoning)?;
            w.bool(OUTPUT_INCOMPLETE, Some(u.output_incomplete));
        }
        if let Some(v) = c.cost_usd {
            w.key(COST_USD);
            write_f64(w.row, v)?;
        }
        w.str(MODEL, c.model)?;
        w.str(DIALECT, c.dialect)?;
        w.str(DETAIL, c.detail)?;
        w.nulls_to(COLUMNS.len());
        self.row.extend_from_slice(b"}\n");
        if self.row.len() >= BATCH {
            self.write_rows()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_rows()?;
        self.w.flush()
    }
}

impl<W: Write> RowsSink<W> {
    /// Hand the gathered rows to `w`.
    fn write_rows(&mut self) -> io::Result<()> {
        if !self.row.is_empty() {
            self.w.write_all(&self.row)?;
            self.row.clear();
        }
        if self.row.capacity() > 1 << 20 {
            // A row that carried a huge output: its buffer is not kept.
            self.row = Vec::new();
        }
        Ok(())
    }
}

impl<W: Write> Drop for RowsSink<W> {
    /// A run ends with `finish`, which flushes; a sink dropped without it
    /// (a run stopped by an error) still writes what it holds, as the
    /// `BufWriter` under it would.
    fn drop(&mut self) {
        let _ = self.write_rows();
    }
}

/// The columns after `type`, in the schema's order (`RowLine` in
/// `src/schema.rs`), named once: [`COLUMNS`], and [`ALL_NULL`], every
/// column as `,"name":null` one after another. A run of null columns (most
/// of a row: a text delta has 19 of 21) is one slice of it, and a column's
/// key is its slice without the `null`.
macro_rules! columns {
    ($($name:literal),* $(,)?) => {
        const COLUMNS: &[&str] = &[$($name),*];
        const ALL_NULL: &str = concat!($(",\"", $name, "\":null"),*);
    };
}
columns!(
    "role",
    "text",
    "tool",
    "call_id",
    "data",
    "ok",
    "failed",
    "exit_code",
    "duration_ms",
    "error",
    "fatal",
    "tokens_in",
    "tokens_out",
    "cache_read",
    "cache_write",
    "reasoning",
    "output_incomplete",
    "cost_usd",
    "model",
    "dialect",
    "detail",
);
// Indices into `COLUMNS`.
const ROLE: usize = 0;
const TEXT: usize = 1;
const TOOL: usize = 2;
const CALL_ID: usize = 3;
const DATA: usize = 4;
const OK: usize = 5;
const FAILED: usize = 6;
const EXIT_CODE: usize = 7;
const DURATION_MS: usize = 8;
const ERROR: usize = 9;
const FATAL: usize = 10;
const TOKENS_IN: usize = 11;
const TOKENS_OUT: usize = 12;
const CACHE_READ: usize = 13;
const CACHE_WRITE: usize = 14;
const REASONING: usize = 15;
const OUTPUT_INCOMPLETE: usize = 16;
const COST_USD: usize = 17;
const MODEL: usize = 18;
const DIALECT: usize = 19;
const DETAIL: usize = 20;

/// Where each column begins in [`ALL_NULL`] (and, last, its length).
const AT: [usize; DETAIL + 2] = {
    let mut at = [0; DETAIL + 2];
    let mut i = 0;
    while i < COLUMNS.len() {
        // `,"` + name + `":null`
        at[i + 1] = at[i] + COLUMNS[i].len() + 8;
        i += 1;
    }
    assert!(at[COLUMNS.len()] == ALL_NULL.len());
    assert!(COLUMNS.len() == DETAIL + 1);
    at
};

/// Writes the columns after `type` in order: a column with a value writes
/// the null columns skipped before it, then its key; the caller writes the
/// value. Columns are given in increasing order.
struct Columns<'r> {
    row: &'r mut Vec<u8>,
    /// The first column not written yet.
    nulls_from: usize,
}

impl Columns<'_> {
    /// The null columns before `col`.
    fn nulls_to(&mut self, col: usize) {
        self.row
            .extend_from_slice(&ALL_NULL.as_bytes()[AT[self.nulls_from]..AT[col]]);
        self.nulls_from = col;
    }

    /// `,"name":` of `col`, after the nulls before it: one slice of
    /// [`ALL_NULL`], where the key follows those nulls.
    fn key(&mut self, col: usize) {
        self.row
            .extend_from_slice(&ALL_NULL.as_bytes()[AT[self.nulls_from]..AT[col + 1] - 4]);
        self.nulls_from = col + 1;
    }

    fn str(&mut self, col: usize, v: Option<&str>) -> io::Result<()> {
        match v {
            Some(s) => {
                self.key(col);
                push_str(self.row, s);
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn bool(&mut self, col: usize, v: Option<bool>) {
        if let Some(b) = v {
            self.key(col);
            self.row
                .extend_from_slice(if b { b"true" } else { b"false" });
        }
    }

    fn u64(&mut self, col: usize, v: Option<u64>) -> io::Result<()> {
        match v {
            Some(n) => {
                self.key(col);
                write_u64(self.row, n)
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_their_names_escaped() {
        for (r, name) in [
            (Role::User, "user"),
            (Role::Assistant, "assistant"),
            (Role::Tool, "tool"),
        ] {
            assert_eq!(r.quoted(), serde_json::to_string(name).unwrap());
        }
    }
}
