//! A tool call of a cursor-agent line, from the one-pass read of its
//! `tool_call` (or, for unusual payload shapes, the slow path over the raw
//! line) to a normalized start or completion: the tool's name, its
//! arguments, the result union's outcome, the shell output once.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Part, ResultParts, ToolCallObj, outcome_kind};
use crate::dialect::common::{fill_start, fill_start_owned, normalize_tool_name};
use crate::event::{Json, Str, Text, ToolEnd, ToolStart, json_null};
use crate::json::{LaxStr, Members, Val, raw_as_str, write_members, write_str};

/// `fileNotFound` as "file not found".
fn kind_words(kind: &str) -> String {
    let mut w = String::with_capacity(kind.len() + 4);
    for c in kind.chars() {
        if c.is_ascii_uppercase() {
            w.push(' ');
            w.push(c.to_ascii_lowercase());
        } else {
            w.push(c);
        }
    }
    w
}

/// A tool call, ready to become a start or a completion.
pub(super) struct Call<'a> {
    /// The key that names the tool (`shellToolCall`, `function`, …).
    key: Cow<'a, str>,
    fn_name: Option<Cow<'a, str>>,
    tool_call_id: Option<Cow<'a, str>>,
    pub(super) started_at: Option<i64>,
    completed_at: Option<i64>,
    pub(super) args: Json<'a>,
    /// The members of `args` when they borrow from the line.
    args_m: Option<Members<'a>>,
    result: Option<ResultParts<'a>>,
    /// The raw result, for a result that is not an object (slow path).
    raw_result: Option<&'a RawValue>,
}

impl<'a> ToolCallObj<'a> {
    /// The call, or `None` when an unusual shape needs the slow path.
    fn into_call(self) -> Option<Call<'a>> {
        let key = self.key?;
        let body = self.body;
        if body
            .result
            .as_ref()
            .is_some_and(ResultParts::needs_slow_path)
        {
            return None;
        }
        let (args, args_m) = if key == "function" {
            (function_args(body.arguments), None)
        } else {
            match body.args {
                None => (json_null(), None),
                Some(Val::Obj(m)) => {
                    let mut buf = Vec::with_capacity(64);
                    write_members(&mut buf, &m, &[]);
                    (assembled_json(buf), Some(m))
                }
                Some(Val::Str(s)) => (Json::assembled(crate::json::quote(&s)), None),
                Some(Val::Other) => return None,
            }
        };
        Some(Call {
            key,
            fn_name: body.name.get(),
            tool_call_id: self.tool_call_id,
            started_at: self.started_at,
            completed_at: self.completed_at,
            args,
            args_m,
            result: body.result,
            raw_result: None,
        })
    }
}

/// The line's tool call and its id. One pass read the call; an unusual
/// shape (a payload that is neither an object nor a string) is read again
/// from the raw line, which keeps it verbatim.
pub(super) fn tool_call<'a>(
    obj: Option<ToolCallObj<'a>>,
    call_id: LaxStr<'a>,
    rec: &'a str,
) -> Option<(Call<'a>, Str<'a>)> {
    let call = match obj?.into_call() {
        Some(c) => c,
        None => slow_tool_call(rec)?,
    };
    let id = call_id
        .get()
        .or_else(|| call.tool_call_id.clone())
        .or_else(|| call.args_m.as_ref().and_then(|a| a.str("toolCallId")))
        .unwrap_or_default();
    Some((call, id))
}

/// Bytes cstream assembled from valid JSON pieces: `str`s copied whole
/// (raw values) or escaped by `write_str` (which cuts a text only before and
/// after ASCII bytes) and ASCII punctuation, so valid UTF-8 by construction.
/// Checking it again was 1.3 % of `--to events` on the bench mix, where every
/// tool call's arguments and result are assembled.
fn assembled_json(buf: Vec<u8>) -> Json<'static> {
    debug_assert!(std::str::from_utf8(&buf).is_ok(), "{buf:?}");
    // SAFETY: valid UTF-8, as said above; every test build checks it.
    Json::assembled(unsafe { String::from_utf8_unchecked(buf) })
}

/// `function.arguments`: usually a JSON string holding the arguments object.
fn function_args(arguments: Option<&RawValue>) -> Json<'_> {
    match arguments {
        Some(a) => match raw_as_str(a).and_then(|s| serde_json::from_str::<Box<RawValue>>(&s).ok())
        {
            Some(parsed) => Json::from(parsed),
            None => Json::from(a),
        },
        None => json_null(),
    }
}

/// The slow path: read the line's `tool_call` from its raw text, keeping
/// payloads of unusual shapes verbatim.
fn slow_tool_call(rec: &str) -> Option<Call<'_>> {
    #[derive(Deserialize)]
    struct Only<'a> {
        #[serde(borrow)]
        tool_call: &'a RawValue,
    }
    let raw = serde_json::from_str::<Only>(rec).ok()?.tool_call;
    let outer = Members::of(raw)?;
    let (key, val) = outer
        .0
        .iter()
        .find(|(k, _)| k.ends_with("ToolCall") || k == "function")
        .map(|(k, v)| (k.clone(), *v))?;
    let inner = Members::of(val)?;
    let (args, args_m) = if key == "function" {
        (function_args(inner.get("arguments")), None)
    } else {
        match inner.get("args") {
            Some(a) => (Json::from(a), Members::of(a)),
            None => (json_null(), None),
        }
    };
    let raw_result = inner.get("result");
    let result = raw_result.and_then(Members::of).map(|m| {
        let mut have = false;
        ResultParts {
            members: m
                .0
                .into_iter()
                .map(|(k, v)| {
                    let part = if !have && outcome_kind(&k).is_some() {
                        have = true;
                        match Members::of(v) {
                            Some(o) => Part::Outcome(Val::Obj(o)),
                            None => match raw_as_str(v) {
                                Some(s) => Part::Outcome(Val::Str(s)),
                                None => Part::RawOutcome(v),
                            },
                        }
                    } else {
                        Part::Raw(v)
                    };
                    (k, part)
                })
                .collect(),
            not_object: false,
        }
    });
    Some(Call {
        key,
        fn_name: inner.str("name"),
        tool_call_id: outer.str("toolCallId"),
        started_at: outer.int("startedAtMs"),
        completed_at: outer.int("completedAtMs"),
        args,
        args_m,
        raw_result: if result.is_none() { raw_result } else { None },
        result,
    })
}

impl<'a> Call<'a> {
    fn tool_name(&self) -> Cow<'a, str> {
        if self.key == "function" {
            return Cow::Owned(normalize_tool_name(self.fn_name.as_deref().unwrap_or("")));
        }
        let base = self.key.strip_suffix("ToolCall").unwrap_or(&self.key);
        Cow::Owned(normalize_tool_name(base))
    }

    /// Normalized start fields, read from `args`.
    /// The args move into the start (a completion does not read them).
    pub(super) fn start(&mut self, call_id: Str<'a>) -> ToolStart<'a> {
        let mut t = ToolStart::new(call_id, self.tool_name(), json_null());
        match &self.args_m {
            Some(a) => fill_start(&mut t, a),
            None => {
                if let Some(m) = Members::parse(self.args.get()) {
                    fill_start_owned(&mut t, &m);
                }
            }
        }
        t.args = std::mem::replace(&mut self.args, json_null());
        t
    }

    /// Normalized completion fields, read from `result`.
    pub(super) fn end(self, call_id: Str<'a>) -> ToolEnd<'a> {
        let name = self.tool_name();
        let is_shell = name == "shell";
        let mut t = ToolEnd::new(call_id, name, true);
        let wall = self.wall_ms();
        let Some(res) = &self.result else {
            // No result, or one that is not an object: kept as it came.
            t.result = self.raw_result.map(Json::from);
            t.duration_ms = wall;
            return t;
        };
        let outcome = res.members.iter().find_map(|(k, p)| match p {
            Part::Outcome(v) => Some((k.as_ref(), v)),
            _ => None,
        });
        let mut strip = false;
        if let Some((kind, v)) = outcome {
            let data = match v {
                Val::Obj(m) => Some(m),
                _ => None,
            };
            let (kind, ok) = outcome_kind(kind).expect("an outcome member");
            t.ok = ok;
            if !ok {
                let said = match (data, v) {
                    (Some(d), _) => [
                        "message",
                        "error",
                        "reason",
                        "errorMessage",
                        "clientVisibleError",
                        "modelVisibleError",
                    ]
                    .iter()
                    .find_map(|k| d.nonempty_str(k)),
                    (None, Val::Str(s)) => Some(s.clone()).filter(|s| !s.is_empty()),
                    _ => None,
                };
                // A shell failure's exit code and output say what happened;
                // any other member without a message says it by its name
                // (and what it is about: a path, a tool; a command shows
                // beside the outcome already).
                t.error = said.or_else(|| {
                    if kind == "failure" {
                        return None;
                    }
                    let mut m = kind_words(kind);
                    if let Some(ms) = data.and_then(|d| d.int("timeoutMs")) {
                        m = format!("timed out after {ms} ms");
                    }
                    if let Some(what) =
                        data.and_then(|d| d.nonempty_str("path").or_else(|| d.nonempty_str("name")))
                    {
                        m.push_str(": ");
                        m.push_str(&what);
                    }
                    Some(Cow::Owned(m))
                });
            }
            if let Some(d) = data {
                t.exit_code = d.int("exitCode");
                if is_shell {
                    if let Some(code) = t.exit_code {
                        t.ok = t.ok && code == 0;
                    }
                    t.output = shell_output(d);
                    strip = t.output.is_some();
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
            t.duration_ms = wall;
        }
        // The output is in `output` now; the result keeps everything else.
        let drop: &[&str] = if strip { SHELL_OUTPUT_KEYS } else { &[] };
        t.result = Some(write_result(res, drop));
        t
    }

    /// The shell output a result carries so far (for an update in flight).
    pub(super) fn output_so_far(&self) -> Option<Str<'a>> {
        if self.tool_name() != "shell" {
            return None;
        }
        self.result
            .as_ref()?
            .members
            .iter()
            .find_map(|(_, p)| match p {
                Part::Outcome(Val::Obj(d)) => shell_output(d).map(Text::into_str),
                _ => None,
            })
    }

    /// Start-to-completion time from the 2026.07 `startedAtMs`/`completedAtMs`.
    fn wall_ms(&self) -> Option<u64> {
        let (a, b) = (self.started_at?, self.completed_at?);
        b.checked_sub(a).and_then(|d| u64::try_from(d).ok())
    }
}

/// The result object again, without the outcome members in `drop`.
fn write_result(res: &ResultParts<'_>, drop: &[&str]) -> Json<'static> {
    let mut buf = Vec::with_capacity(128);
    buf.push(b'{');
    for (i, (k, part)) in res.members.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_str(&mut buf, k).expect("Vec write");
        buf.push(b':');
        match part {
            Part::Raw(v) | Part::RawOutcome(v) => buf.extend_from_slice(v.get().as_bytes()),
            Part::Outcome(Val::Obj(m)) => write_members(&mut buf, m, drop),
            Part::Outcome(Val::Str(s)) => write_str(&mut buf, s).expect("Vec write"),
            Part::Outcome(Val::Other) => buf.extend_from_slice(b"null"),
        }
    }
    buf.push(b'}');
    assembled_json(buf)
}

/// The keys that carry a shell call's output (read once into `output`).
const SHELL_OUTPUT_KEYS: &[&str] = &["stdout", "stderr", "interleavedOutput"];

/// A shell call's output, once: the interleaved stream when present, else
/// stdout followed by stderr.
fn shell_output<'a>(d: &Members<'a>) -> Option<Text<'a>> {
    if let Some(i) = d
        .get("interleavedOutput")
        .filter(|i| i.get().starts_with('"'))
    {
        // Kept as the literal it came as: the events output copies it once.
        return Some(Text::literal(i.get()));
    }
    let out = d.str("stdout");
    let err = d.str("stderr").filter(|e| !e.is_empty());
    match (out, err) {
        (o, None) => o.map(Text::from),
        (None, Some(e)) => Some(Text::from(e)),
        (Some(o), Some(e)) => {
            let mut s = o.into_owned();
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&e);
            Some(Text::from(s))
        }
    }
}
