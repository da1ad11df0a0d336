//! cursor-agent `--output-format stream-json [--stream-partial-output]`.
//!
//! Facts (with sources) are in `research/cursor-stream-json.md`. The parts
//! that shape this parser:
//! - an `assistant` event is a delta iff it has `timestamp_ms` and no
//!   `model_call_id`; anything else repeats text (a recap) and is handed to
//!   the dedupe transform as [`Item::Recap`];
//! - `tool_call` holds one key ending in `ToolCall` (or `function`) naming
//!   the tool; 2026.07 builds put other keys beside it, so the key is found
//!   by its name, never by position;
//! - shell results carry the output twice (`stdout` and `interleavedOutput`):
//!   the normalized `output` has it once and `result` keeps neither copy;
//! - usage appears only on `result` (session totals);
//! - a `tool_call` with `subtype: "progress"` (undocumented; the shape the
//!   benchmark generator models) re-sends a shell call's output so far: it
//!   is a cumulative snapshot ([`Item::OutputSnapshot`]), so the output
//!   stays linear in the real output, not in the quadratic input.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::common::{fill_start, fill_start_owned, normalize_tool_name};
use super::{Channel, Item, Out, Parser, keep_unknown};
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, SessionStart, Str, ToolEnd, ToolStart, Usage,
    json_null,
};
use crate::input::Parsed;
use crate::json::{LaxBool, LaxInt, LaxStr, Members, raw_as_str};

/// One cursor-agent line: the union of the fields of every event type.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    subtype: LaxStr<'a>,
    #[serde(borrow, default)]
    session_id: LaxStr<'a>,
    #[serde(default)]
    timestamp_ms: LaxInt,
    #[serde(default)]
    model_call_id: Option<IgnoredAny>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_call: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: LaxStr<'a>,
    #[serde(borrow, default)]
    cwd: LaxStr<'a>,
    #[serde(rename = "permissionMode", borrow, default)]
    permission_mode: LaxStr<'a>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    is_error: LaxBool,
    #[serde(default)]
    duration_ms: LaxInt,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Parser state for one cursor-agent input.
#[derive(Default)]
pub struct CursorParser {
    /// When the current thinking phase began (for `thinking_completed.durationMs`).
    thinking_since: Option<i64>,
    /// Whether the first `session_id` was passed on as a hint yet.
    hinted: bool,
}

impl Parser for CursorParser {
    fn parse<'a>(&mut self, rec: &'a [u8], out: Out<'_, 'a>) -> io::Result<Parsed> {
        let line: Line<'a> = match serde_json::from_slice(rec) {
            Ok(l) => l,
            Err(e) if e.is_eof() => return Ok(Parsed::Incomplete),
            Err(e) if e.is_data() => return keep_unknown(rec, out),
            Err(_) => return Ok(Parsed::Invalid),
        };
        if !self.hinted
            && let Some(sid) = line.session_id.as_deref()
        {
            self.hinted = true;
            out(Item::IdHint(Cow::Owned(sid.to_owned())))?;
        }
        let ts = line.timestamp_ms.0;
        let ev = |kind| Item::Event(Event::at(ts, kind));
        match (line.ty.as_deref(), line.subtype.as_deref()) {
            (Some("system"), Some("init")) => {
                out(ev(Kind::SessionStarted(SessionStart {
                    session_id: line.session_id.get(),
                    dialect: Cow::Borrowed("cursor"),
                    model: line.model.get(),
                    cwd: line.cwd.get(),
                    permission_mode: line.permission_mode.get(),
                })))?;
            }
            (Some("user"), _) => {
                let (text, _) = message_text(line.message);
                out(ev(Kind::UserMessage {
                    text: text.unwrap_or_default(),
                }))?;
            }
            (Some("thinking"), Some("delta")) => {
                if self.thinking_since.is_none() {
                    self.thinking_since = ts;
                }
                out(ev(Kind::ThinkingDelta {
                    text: line.text.get().unwrap_or_default(),
                }))?;
            }
            (Some("thinking"), Some("completed")) => {
                let since = self.thinking_since.take();
                let duration_ms = match (since, ts) {
                    (Some(a), Some(b)) => b.checked_sub(a).and_then(|d| u64::try_from(d).ok()),
                    _ => None,
                };
                out(ev(Kind::ThinkingCompleted { duration_ms }))?;
            }
            (Some("assistant"), _) => {
                let (text, thinking) = message_text(line.message);
                // Delta iff it has a timestamp and no model_call_id (SPEC §4).
                let delta = ts.is_some() && line.model_call_id.is_none();
                if let Some(t) = thinking {
                    out(if delta {
                        ev(Kind::ThinkingDelta { text: t })
                    } else {
                        Item::Recap {
                            ts,
                            channel: Channel::Thinking,
                            text: t,
                        }
                    })?;
                }
                let text = text.unwrap_or_default();
                out(if delta {
                    ev(Kind::TextDelta { text })
                } else {
                    Item::Recap {
                        ts,
                        channel: Channel::Text,
                        text,
                    }
                })?;
            }
            (Some("tool_call"), Some(sub @ ("started" | "completed" | "progress"))) => {
                let Some(call) = line.tool_call.and_then(ToolCall::parse) else {
                    return keep_unknown(rec, out);
                };
                let call_id = line
                    .call_id
                    .get()
                    .or_else(|| call.outer.str("toolCallId"))
                    .or_else(|| call.args_m.as_ref().and_then(|a| a.str("toolCallId")))
                    .unwrap_or_default();
                match sub {
                    "started" => out(ev(Kind::ToolCallStarted(call.start(call_id))))?,
                    "completed" => out(ev(Kind::ToolCallCompleted(call.end(call_id))))?,
                    _ => match call.output_so_far() {
                        Some(text) => out(Item::OutputSnapshot {
                            ts,
                            call_id,
                            stream: OutStream::Stdout,
                            text,
                        })?,
                        None => return keep_unknown(rec, out),
                    },
                }
            }
            (Some("result"), _) => {
                out(Item::Event(Event::at(ts, Kind::Result(result(&line)))))?;
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    thinking: LaxStr<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// The text (and thinking) of a `message`: its `text` blocks joined, or a
/// plain string `content`.
fn message_text(msg: Option<&RawValue>) -> (Option<Str<'_>>, Option<Str<'_>>) {
    let Some(content) = msg
        .and_then(|m| serde_json::from_str::<Message>(m.get()).ok())
        .and_then(|m| m.content)
    else {
        return (None, None);
    };
    if let Some(s) = raw_as_str(content) {
        return (Some(s), None);
    }
    let Ok(blocks) = serde_json::from_str::<Vec<Block>>(content.get()) else {
        return (None, None);
    };
    let mut text: Option<Str> = None;
    let mut thinking: Option<Str> = None;
    for b in blocks {
        let (slot, piece) = match b.ty.as_deref() {
            Some("thinking") => (&mut thinking, b.thinking.get().or(b.text.get())),
            Some("text") | None => (&mut text, b.text.get()),
            Some(_) => continue,
        };
        if let Some(p) = piece {
            match slot {
                None => *slot = Some(p),
                Some(s) => s.to_mut().push_str(&p),
            }
        }
    }
    (text, thinking)
}

/// The `tool_call` object of a `tool_call` event.
struct ToolCall<'a> {
    /// The `tool_call` map itself (2026.07: `toolCallId`, `startedAtMs`, …).
    outer: Members<'a>,
    /// The key that names the tool (`shellToolCall`, `function`, …).
    key: Cow<'a, str>,
    /// The tool's own object (`{args, result}`).
    inner: Members<'a>,
    args: Json<'a>,
    args_m: Option<Members<'a>>,
}

impl<'a> ToolCall<'a> {
    fn parse(raw: &'a RawValue) -> Option<Self> {
        let outer = Members::of(raw)?;
        let i = outer
            .0
            .iter()
            .position(|(k, _)| k.ends_with("ToolCall") || k == "function")?;
        let (key, val) = (outer.0[i].0.clone(), outer.0[i].1);
        let inner = Members::of(val)?;
        let args: Json<'a> = if key == "function" {
            // `{name, arguments}`; arguments is usually a JSON string.
            match inner.get("arguments") {
                Some(a) => match raw_as_str(a)
                    .and_then(|s| serde_json::from_str::<Box<RawValue>>(&s).ok())
                {
                    Some(parsed) => Cow::Owned(parsed),
                    None => Cow::Borrowed(a),
                },
                None => json_null(),
            }
        } else {
            inner.get("args").map_or_else(json_null, Cow::Borrowed)
        };
        // Arguments parsed from a JSON string cannot lend members borrowing
        // from the line; `start` reads those from the owned copy instead.
        let args_m = match &args {
            Cow::Borrowed(a) => Members::of(a),
            Cow::Owned(_) => None,
        };
        Some(ToolCall {
            outer,
            key,
            inner,
            args,
            args_m,
        })
    }

    fn tool_name(&self) -> Cow<'a, str> {
        if self.key == "function" {
            let name = self.inner.str("name").unwrap_or_default();
            return Cow::Owned(normalize_tool_name(&name));
        }
        let base = self.key.strip_suffix("ToolCall").unwrap_or(&self.key);
        Cow::Owned(normalize_tool_name(base))
    }

    /// Normalized start fields, read from `args`.
    fn start(&self, call_id: Str<'a>) -> ToolStart<'a> {
        let mut t = ToolStart::new(call_id, self.tool_name(), self.args.clone());
        match &self.args_m {
            Some(a) => fill_start(&mut t, a),
            None => {
                if let Some(m) = Members::of(&self.args) {
                    fill_start_owned(&mut t, &m);
                }
            }
        }
        t
    }

    /// Normalized completion fields, read from `result`.
    fn end(&self, call_id: Str<'a>) -> ToolEnd<'a> {
        let name = self.tool_name();
        let is_shell = name == "shell";
        let mut t = ToolEnd::new(call_id, name, true);
        let Some(res_raw) = self.inner.get("result") else {
            // Some builds put the outcome straight in `function`'s `result`-less
            // object; with nothing to read, the call simply completed.
            t.duration_ms = self.wall_ms();
            return t;
        };
        let Some(res) = Members::of(res_raw) else {
            t.result = Some(Cow::Borrowed(res_raw));
            t.duration_ms = self.wall_ms();
            return t;
        };
        let outcome = ["success", "failure", "error", "rejected"]
            .into_iter()
            .find_map(|k| res.get(k).map(|v| (k, v)));
        let mut strip: Option<&str> = None;
        if let Some((kind, v)) = outcome {
            let data = Members::of(v);
            t.ok = kind == "success";
            match (kind, &data) {
                ("error", Some(d)) => t.error = d.str("message").or_else(|| d.str("error")),
                ("error", None) => t.error = raw_as_str(v),
                ("rejected", d) => {
                    t.error = Some(
                        d.as_ref()
                            .and_then(|d| {
                                d.nonempty_str("reason")
                                    .or_else(|| d.nonempty_str("message"))
                            })
                            .unwrap_or(Cow::Borrowed("rejected")),
                    )
                }
                ("failure", Some(d)) => {
                    t.error = d
                        .nonempty_str("message")
                        .or_else(|| d.nonempty_str("error"))
                }
                _ => {}
            }
            if let Some(d) = &data {
                t.exit_code = d.int("exitCode");
                if is_shell {
                    if let Some(code) = t.exit_code {
                        t.ok = t.ok && code == 0;
                    }
                    t.output = shell_output(d);
                    if t.output.is_some() {
                        strip = Some(kind);
                    }
                    t.duration_ms = d
                        .int("executionTime")
                        .or_else(|| d.int("localExecutionTimeMs"))
                        .and_then(|v| u64::try_from(v).ok());
                }
                t.patch = d
                    .nonempty_str("diffString")
                    .or_else(|| d.nonempty_str("patch"));
                t.lines_added = d
                    .int("linesAdded")
                    .or_else(|| d.int("linesCreated"))
                    .and_then(|v| u64::try_from(v).ok());
                t.lines_removed = d.int("linesRemoved").and_then(|v| u64::try_from(v).ok());
            }
        }
        if t.duration_ms.is_none() {
            t.duration_ms = self.wall_ms();
        }
        t.result = Some(match strip {
            // The output is in `output` now; the result keeps everything else.
            Some(kind) => Cow::Owned(res.to_json_with(|k, v| {
                if k == kind {
                    Members::of(v).map(|m| Cow::Owned(m.to_json_without(SHELL_OUTPUT_KEYS)))
                } else {
                    Some(Cow::Borrowed(v))
                }
            })),
            None => Cow::Borrowed(res_raw),
        });
        t
    }

    /// A running shell call's output so far (`progress`): read like the
    /// completed output.
    fn output_so_far(&self) -> Option<Str<'a>> {
        if self.tool_name() != "shell" {
            return None;
        }
        let res = Members::of(self.inner.get("result")?)?;
        ["success", "failure"]
            .into_iter()
            .find_map(|k| res.obj(k))
            .and_then(|d| shell_output(&d))
    }

    /// Start-to-completion time from the 2026.07 `startedAtMs`/`completedAtMs`.
    fn wall_ms(&self) -> Option<u64> {
        let a = self.outer.int("startedAtMs")?;
        let b = self.outer.int("completedAtMs")?;
        b.checked_sub(a).and_then(|d| u64::try_from(d).ok())
    }
}

/// The keys that carry a shell call's output (read once into `output`).
const SHELL_OUTPUT_KEYS: &[&str] = &["stdout", "stderr", "interleavedOutput"];

/// A shell call's output, once: the interleaved stream when present, else
/// stdout followed by stderr.
fn shell_output<'a>(d: &Members<'a>) -> Option<Str<'a>> {
    if let Some(i) = d.str("interleavedOutput") {
        return Some(i);
    }
    let out = d.str("stdout");
    let err = d.str("stderr").filter(|e| !e.is_empty());
    match (out, err) {
        (o, None) => o,
        (None, Some(e)) => Some(e),
        (Some(o), Some(e)) => {
            let mut s = o.into_owned();
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&e);
            Some(Cow::Owned(s))
        }
    }
}

/// The `result` event.
fn result<'a>(line: &Line<'a>) -> SessionResult<'a> {
    let text = line.result.and_then(raw_as_str);
    let failed = line.is_error.0 == Some(true)
        || line
            .subtype
            .as_deref()
            .is_some_and(|s| s.starts_with("error"));
    let error = if failed {
        line.error
            .and_then(|e| raw_as_str(e).or_else(|| Members::of(e).and_then(|m| m.str("message"))))
            .or_else(|| text.clone().filter(|t| !t.is_empty()))
            .or_else(|| line.subtype.0.clone())
    } else {
        None
    };
    SessionResult {
        ok: !failed,
        text,
        duration_ms: line.duration_ms.0.and_then(|v| u64::try_from(v).ok()),
        usage: line.usage.and_then(usage),
        cost_usd: None,
        error,
    }
}

/// `usage` on a result: `{inputTokens, outputTokens, cacheReadTokens,
/// cacheWriteTokens}` (snake_case accepted too). cursor-agent's `inputTokens`
/// is taken to exclude cache reads and writes (the Anthropic convention the
/// research notes point to), so the normalized input adds them.
fn usage(raw: &RawValue) -> Option<Usage> {
    let m = Members::of(raw)?;
    let get = |a: &str, b: &str| {
        m.int(a)
            .or_else(|| m.int(b))
            .and_then(|v| u64::try_from(v).ok())
    };
    let input = get("inputTokens", "input_tokens")?;
    let output = get("outputTokens", "output_tokens")?;
    let cache_read = get("cacheReadTokens", "cache_read_tokens");
    let cache_write = get("cacheWriteTokens", "cache_write_tokens");
    Some(Usage {
        input: input
            .saturating_add(cache_read.unwrap_or(0))
            .saturating_add(cache_write.unwrap_or(0)),
        output,
        cache_read,
        cache_write,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Vec<Item<'static>> {
        let mut p = CursorParser::default();
        let mut items = Vec::new();
        let r = p
            .parse(line.as_bytes(), &mut |i| {
                items.push(i.into_owned());
                Ok(())
            })
            .unwrap();
        assert_eq!(r, Parsed::Done);
        items
            .into_iter()
            .filter(|i| !matches!(i, Item::IdHint(_)))
            .collect()
    }

    fn kind<'x>(items: &'x [Item<'static>]) -> &'x Kind<'static> {
        match &items[0] {
            Item::Event(e) => &e.kind,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn assistant_shapes() {
        let delta = parse(
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}]},"session_id":"s","timestamp_ms":5}"#,
        );
        assert!(matches!(kind(&delta), Kind::TextDelta { text } if text == "Hi"));
        let recap = parse(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Hi"}]},"session_id":"s","model_call_id":"m","timestamp_ms":5}"#,
        );
        assert!(
            matches!(&recap[0], Item::Recap { channel: Channel::Text, text, .. } if text == "Hi")
        );
        let last = parse(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"A"},{"type":"text","text":"B"}]}}"#,
        );
        assert!(matches!(&last[0], Item::Recap { text, .. } if text == "AB"));
    }

    #[test]
    fn tool_key_is_found_among_2026_07_extra_keys() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"hookAdditionalContexts":[],"toolCallId":"c1","readToolCall":{"args":{"path":"/a.txt"}},"startedAtMs":"10"},"session_id":"s","timestamp_ms":7}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.tool_name, "read");
        assert_eq!(t.path.as_deref(), Some("/a.txt"));
        assert_eq!(t.args.get(), r#"{"path":"/a.txt"}"#);
    }

    #[test]
    fn shell_output_once_and_stripped_from_result() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"ls","workingDirectory":"/w"},"result":{"success":{"command":"ls","exitCode":0,"stdout":"a\n","stderr":"","executionTime":12,"interleavedOutput":"a\n"},"isBackground":false}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&items) else {
            panic!()
        };
        assert!(t.ok);
        assert_eq!(t.exit_code, Some(0));
        assert_eq!(t.output.as_deref(), Some("a\n"));
        assert_eq!(t.duration_ms, Some(12));
        assert_eq!(
            t.result.as_ref().unwrap().get(),
            r#"{"success":{"command":"ls","exitCode":0,"executionTime":12},"isBackground":false}"#
        );
    }

    #[test]
    fn failures_errors_and_rejections() {
        let f = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"args":{"command":"false"},"result":{"failure":{"exitCode":1,"stdout":"","stderr":"boom"}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&f) else {
            panic!()
        };
        assert!(!t.ok);
        assert_eq!(t.exit_code, Some(1));
        assert_eq!(t.output.as_deref(), Some("boom"));
        let e = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"x"},"result":{"error":{"message":"no such file"}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&e) else {
            panic!()
        };
        assert!(!t.ok);
        assert_eq!(t.error.as_deref(), Some("no such file"));
        let r = parse(
            r#"{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"editToolCall":{"args":{"path":"x"},"result":{"rejected":{}}}}}"#,
        );
        let Kind::ToolCallCompleted(t) = kind(&r) else {
            panic!()
        };
        assert_eq!(t.error.as_deref(), Some("rejected"));
    }

    #[test]
    fn function_and_mcp_tools() {
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"WebFetch","arguments":"{\"url\":\"https://x.org\"}"}}}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(t.tool_name, "web_fetch");
        assert_eq!(t.url.as_deref(), Some("https://x.org"));
        assert_eq!(t.args.get(), r#"{"url":"https://x.org"}"#);
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":{"name":"gh-list","toolName":"list","serverIdentifier":"gh","args":{}}}}}"#,
        );
        let Kind::ToolCallStarted(t) = kind(&items) else {
            panic!()
        };
        assert_eq!(
            (
                t.tool_name.as_ref(),
                t.mcp_server.as_deref(),
                t.mcp_tool.as_deref()
            ),
            ("mcp", Some("gh"), Some("list"))
        );
    }

    #[test]
    fn edit_todo_plan_and_question_details() {
        let start = |line: &str| match kind(&parse(line)) {
            Kind::ToolCallStarted(t) => t.details.as_deref().cloned().unwrap_or_default(),
            other => panic!("not a start: {other:?}"),
        };
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"search_replace","arguments":"{\"file_path\":\"a.py\",\"old_string\":\"x\",\"new_string\":\"\"}"}}}"#,
        );
        assert_eq!(
            (d.old_string.as_deref(), d.new_string.as_deref()),
            (Some("x"), Some(""))
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"writeToolCall":{"args":{"path":"a","fileText":"hi\n"}}}}"#,
        );
        assert_eq!(d.file_content.as_deref(), Some("hi\n"));
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"updateTodosToolCall":{"args":{"todos":[{"id":"a","content":"A","status":"TODO_STATUS_IN_PROGRESS"},{"id":7,"content":"B"},3],"merge":true}}}}"#,
        );
        let todos = d.todos.unwrap();
        assert_eq!(todos.len(), 2);
        assert_eq!(
            (todos[0].id.as_deref(), todos[0].status.as_ref()),
            (Some("a"), "in_progress")
        );
        assert_eq!(
            (todos[1].id.as_deref(), todos[1].status.as_ref()),
            (Some("7"), "pending")
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"createPlanToolCall":{"args":{"name":"P","overview":"O","plan":"- P"}}}}"#,
        );
        assert_eq!(
            (d.title.as_deref(), d.overview.as_deref(), d.plan.as_deref()),
            (Some("P"), Some("O"), Some("- P"))
        );
        let d = start(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"askQuestionToolCall":{"args":{"title":"T","questions":[{"id":"q","prompt":"Which?","options":[{"id":"a","label":"A"},"B"]}]}}}}"#,
        );
        let q = &d.questions.unwrap()[0];
        assert_eq!((q.id.as_deref(), q.text.as_ref()), (Some("q"), "Which?"));
        assert_eq!(q.options[1].label, "B");
        assert_eq!(q.options[1].id, None);
        // Other tools get no details at all.
        let items = parse(
            r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{"path":"a"}}}}"#,
        );
        assert!(matches!(kind(&items), Kind::ToolCallStarted(t) if t.details.is_none()));
    }

    #[test]
    fn todo_statuses() {
        for (a, b) in [
            ("TODO_STATUS_COMPLETED", "completed"),
            ("in-progress", "in_progress"),
            ("Done", "completed"),
            ("canceled", "cancelled"),
            ("", "pending"),
            ("Blocked", "blocked"),
        ] {
            assert_eq!(crate::event::normalize_todo_status(a), b);
        }
    }

    #[test]
    fn tool_names() {
        for (k, v) in [
            ("shell", "shell"),
            ("semSearch", "search"),
            ("updateTodos", "todo"),
            ("readLints", "lints"),
            ("getMcpTools", "get_mcp_tools"),
            ("webSearch", "web_search"),
            ("listMcpResources", "list_mcp_resources"),
        ] {
            assert_eq!(normalize_tool_name(k), v);
        }
    }

    #[test]
    fn result_with_usage_and_error() {
        let items = parse(
            r#"{"type":"result","subtype":"success","duration_ms":10,"is_error":false,"result":"pong","usage":{"inputTokens":100,"outputTokens":4,"cacheReadTokens":20,"cacheWriteTokens":3}}"#,
        );
        let Kind::Result(r) = kind(&items) else {
            panic!()
        };
        assert!(r.ok);
        assert_eq!(r.text.as_deref(), Some("pong"));
        assert_eq!(
            r.usage,
            Some(Usage {
                input: 123,
                output: 4,
                cache_read: Some(20),
                cache_write: Some(3)
            })
        );
        let items = parse(
            r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"quota"}}"#,
        );
        let Kind::Result(r) = kind(&items) else {
            panic!()
        };
        assert!(!r.ok);
        assert_eq!(r.error.as_deref(), Some("quota"));
    }

    #[test]
    fn unknown_and_mistyped_lines_are_kept() {
        let items = parse(r#"{"type":"interaction_query","x":1}"#);
        assert!(
            matches!(kind(&items), Kind::Unknown { raw } if raw.get() == r#"{"type":"interaction_query","x":1}"#)
        );
        let items = parse(r#"[1,2]"#);
        assert!(matches!(kind(&items), Kind::Unknown { .. }));
        // A surprising field type does not make the line unreadable.
        let items = parse(r#"{"type":"thinking","subtype":"delta","text":7,"timestamp_ms":"12"}"#);
        assert!(matches!(kind(&items), Kind::ThinkingDelta { text } if text.is_empty()));
    }
}
