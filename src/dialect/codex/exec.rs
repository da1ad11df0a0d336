//! The `codex exec --json` lines (codex 0.44 and later): `thread.*`,
//! `turn.*` and `item.*` events, where an item arrives whole when it
//! completes.

use std::borrow::Cow;
use std::io;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{CodexParser, Line, command_text, error_message, nonfatal, readable_error};
use crate::dialect::common::{count_patch_lines, normalize_tool_name, openai_usage, render_todos};
use crate::dialect::{Channel, Item, Out, keep_unknown};
use crate::event::{
    Event, Json, Kind, OutStream, SessionResult, Str, SummaryPhase, Text, ToolEnd, ToolStart,
    Usage, json_null,
};
use crate::input::Parsed;
use crate::json::{LaxInt, LaxStr, Members};

/// An item (`item.started/updated/completed`): every item type's fields.
#[derive(Deserialize)]
struct ItemObj<'a> {
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    /// The 0.41–0.43 experimental form's name for `type`.
    #[serde(borrow, default)]
    item_type: LaxStr<'a>,
    #[serde(borrow, default)]
    text: LaxStr<'a>,
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    aggregated_output: LaxStr<'a>,
    #[serde(default)]
    exit_code: LaxInt,
    #[serde(borrow, default)]
    status: LaxStr<'a>,
    #[serde(borrow, default)]
    changes: Option<&'a RawValue>,
    #[serde(borrow, default)]
    server: LaxStr<'a>,
    #[serde(borrow, default)]
    tool: LaxStr<'a>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    query: LaxStr<'a>,
    #[serde(borrow, default)]
    prompt: LaxStr<'a>,
    #[serde(borrow, default)]
    items: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: LaxStr<'a>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl CodexParser {
    /// One line of the current form; `Parsed::Done` unless it is unknown.
    pub(super) fn exec<'a>(
        &mut self,
        rec: &'a str,
        line: Line<'a>,
        out: Out<'_, 'a>,
    ) -> io::Result<Parsed> {
        let ty = line.ty.as_deref();
        match ty {
            Some("thread.started" | "session.created") => {
                self.started = true;
                self.turn_done = false;
                let id = line.thread_id.get().or(line.session_id.get());
                // The running total is the thread's: a resumed thread's goes
                // on from where it was, a new thread's starts from zero.
                if id.is_none() || id.as_deref() != self.thread_id.as_deref() {
                    self.last_total = Usage::default();
                }
                self.thread_id = id.as_deref().map(str::to_owned);
                self.base = self.last_total;
                out(super::session_started(id, None, None))?;
            }
            Some("turn.started") => {
                // Each turn ends with the session's result (exec has no result
                // event), so a further turn of the same thread is a session
                // of its own: one result per session, as every format expects.
                if std::mem::take(&mut self.turn_done) {
                    self.next_turn(out)?;
                }
            }
            Some("item.started" | "item.updated" | "item.completed") => {
                let Some(item) = line
                    .item
                    .and_then(|i| serde_json::from_str::<ItemObj>(i.get()).ok())
                else {
                    return keep_unknown(rec, out);
                };
                let phase = match ty {
                    Some("item.started") => Phase::Started,
                    Some("item.updated") => Phase::Updated,
                    _ => Phase::Completed,
                };
                if !self.item(&item, line.item.expect("parsed above"), phase, out)? {
                    return keep_unknown(rec, out);
                }
            }
            Some("item.plan.delta") => {
                let text = line.delta.get().unwrap_or_default();
                out(Item::Event(Event::new(Kind::TextDelta { text })))?;
            }
            Some("request_user_input") => {
                let id = line.call_id.get().unwrap_or_default();
                let args = line.questions.map_or_else(json_null, Json::from);
                let start = ToolStart::new(id.clone(), Cow::Borrowed("question"), args);
                out(Item::Event(Event::new(Kind::started(start))))?;
                // exec writes no answer event: the question was put.
                out(Item::Event(Event::new(Kind::completed(ToolEnd::new(
                    id,
                    Cow::Borrowed("question"),
                    true,
                )))))?;
            }
            Some("turn.completed") => {
                let total = line
                    .usage
                    .and_then(Members::of)
                    .as_ref()
                    .and_then(openai_usage);
                let turn = total.map(|t| t.minus(&self.last_total));
                // The thread's running total, less what earlier sessions
                // (turns) of the thread already counted.
                let session = total.map(|t| t.minus(&self.base));
                if let (Some(t), Some(s)) = (total, session) {
                    out(Item::UsageTotal { ts: None, usage: s })?;
                    self.last_total = t;
                }
                out(Item::Event(Event::new(Kind::TurnEnded { usage: turn })))?;
                // 0.147 and later may say how the turn ended (`completed`,
                // `interrupted`, `failed`) and how long it took.
                let status = line.status.as_deref().unwrap_or("completed");
                let ok = status == "completed";
                out(Item::Event(Event::new(Kind::Result(SessionResult {
                    ok,
                    text: self.last_message.take().map(Cow::Owned),
                    usage: session,
                    duration_ms: line.duration_ms.0.and_then(|d| u64::try_from(d).ok()),
                    error: (!ok).then(|| {
                        Cow::Owned(match status {
                            "interrupted" => "the turn was interrupted".to_owned(),
                            "failed" => "the turn failed".to_owned(),
                            s => format!("the turn ended: {s}"),
                        })
                    }),
                    ..SessionResult::default()
                }))))?;
                self.turn_done = true;
            }
            Some("turn.failed") => {
                let error = line
                    .error
                    .and_then(error_message)
                    .unwrap_or_else(|| "the turn failed".to_owned());
                out(Item::Event(Event::new(Kind::TurnEnded { usage: None })))?;
                out(Item::Event(Event::new(Kind::Result(SessionResult {
                    ok: false,
                    error: Some(Cow::Owned(error)),
                    ..SessionResult::default()
                }))))?;
                self.turn_done = true;
            }
            Some("error") => {
                let msg = line
                    .message
                    .as_deref()
                    .map(readable_error)
                    .unwrap_or_default();
                self.pending_error = Some(msg);
            }
            _ => return keep_unknown(rec, out),
        }
        Ok(Parsed::Done)
    }

    /// One item event; false for an item type this parser does not know.
    fn item<'a>(
        &mut self,
        it: &ItemObj<'a>,
        raw: &'a RawValue,
        phase: Phase,
        out: Out<'_, 'a>,
    ) -> io::Result<bool> {
        let id = it.id.clone().get().unwrap_or_default();
        let ev = |k| Item::Event(Event::new(k));
        let ty = it.ty.as_deref().or(it.item_type.as_deref());
        match ty {
            Some("agent_message" | "assistant_message") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    self.last_message = Some(text.to_string());
                    out(ev(Kind::TextDelta { text }))?;
                }
            }
            Some("reasoning") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    out(ev(Kind::ThinkingDelta { text }))?;
                    out(ev(Kind::ThinkingCompleted { duration_ms: None }))?;
                }
            }
            Some("plan") => {
                if phase == Phase::Completed {
                    let text = it.text.clone().get().unwrap_or_default();
                    out(Item::Recap {
                        ts: None,
                        channel: Channel::Text,
                        text,
                    })?;
                }
            }
            Some("command_execution") => {
                let command = it.command.and_then(command_text);
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("shell"),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.command = command;
                self.ensure_start(start, out)?;
                match phase {
                    Phase::Started => {}
                    Phase::Updated => {
                        if let Some(text) = it.aggregated_output.clone().get() {
                            // Open: `ensure_start` above opened it.
                            if let Some(updated) = self.open.get_mut(&id) {
                                *updated = true;
                            }
                            out(Item::OutputSnapshot {
                                ts: None,
                                call_id: id,
                                stream: OutStream::Stdout,
                                text,
                            })?;
                        }
                    }
                    Phase::Completed => {
                        let output = it.aggregated_output.clone().get();
                        if self.open.get(&id).copied().unwrap_or(false)
                            && let Some(text) = output.clone()
                        {
                            out(Item::OutputSnapshot {
                                ts: None,
                                call_id: id.clone(),
                                stream: OutStream::Stdout,
                                text,
                            })?;
                        }
                        self.close_call(&id);
                        let status = it.status.as_deref().unwrap_or("completed");
                        let mut end =
                            ToolEnd::new(id, Cow::Borrowed("shell"), status == "completed");
                        end.exit_code = it.exit_code.0;
                        end.ok = end.ok && end.exit_code.is_none_or(|c| c == 0);
                        if end.exit_code.is_none() && status == "completed" {
                            // Abandoned at turn end (exit_code null).
                            end.ok = false;
                        }
                        if !end.ok {
                            end.error = Some(Cow::Owned(match (status, end.exit_code) {
                                ("declined", _) => "declined".to_owned(),
                                (_, Some(c)) => format!("exit code {c}"),
                                (s, None) if s != "completed" => s.to_owned(),
                                _ => "no exit code".to_owned(),
                            }));
                        }
                        end.output = output.map(Text::from);
                        end.result = Some(Json::from(args_without(
                            raw,
                            &["id", "type", "command", "aggregated_output"],
                        )));
                        out(ev(Kind::completed(end)))?;
                    }
                }
            }
            Some("file_change") => {
                let changes = it.changes;
                let name = file_change_name(changes);
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Owned(name.clone()),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.path = changes.and_then(single_path);
                self.ensure_start(start, out)?;
                match phase {
                    Phase::Started => {}
                    Phase::Updated => {
                        if let Some(c) = changes {
                            out(ev(Kind::ToolCallProgress {
                                call_id: id,
                                partial: Json::from(c),
                            }))?;
                        }
                    }
                    Phase::Completed => {
                        self.close_call(&id);
                        let status = it.status.as_deref().unwrap_or("completed");
                        let mut end = ToolEnd::new(id, Cow::Owned(name), status == "completed");
                        if !end.ok {
                            end.error = Some(Cow::Owned(status.to_owned()));
                        }
                        if let Some(p) = changes.and_then(change_diffs) {
                            let (a, d) = count_patch_lines(&p);
                            end.lines_added = Some(a);
                            end.lines_removed = Some(d);
                            end.patch = Some(Cow::Owned(p));
                        }
                        end.result = Some(Json::from(args_without(raw, &["id", "type"])));
                        out(ev(Kind::completed(end)))?;
                    }
                }
            }
            Some("mcp_tool_call") => {
                let args = it.arguments.map_or_else(json_null, Json::from);
                let mut start = ToolStart::new(id.clone(), Cow::Borrowed("mcp"), args);
                start.mcp_server = it.server.clone().get();
                start.mcp_tool = it.tool.clone().get();
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    let err = it.error.and_then(error_message);
                    let status = it.status.as_deref().unwrap_or("completed");
                    let mut end = ToolEnd::new(
                        id,
                        Cow::Borrowed("mcp"),
                        status == "completed" && err.is_none(),
                    );
                    // A tool that reports an error (`isError`) fails with
                    // its reason in `result.content`, not in `error`.
                    end.error = err.map(Cow::Owned).or_else(|| {
                        (!end.ok).then(|| {
                            Cow::Owned(
                                it.result
                                    .and_then(content_text)
                                    .unwrap_or_else(|| status.to_owned()),
                            )
                        })
                    });
                    end.result = it.result.map(Json::from);
                    out(ev(Kind::completed(end)))?;
                }
            }
            Some("web_search") => {
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("web_search"),
                    Json::from(args_without(raw, &["id", "type"])),
                );
                start.query = it.query.clone().get();
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    out(ev(Kind::completed(ToolEnd::new(
                        id,
                        Cow::Borrowed("web_search"),
                        true,
                    ))))?;
                }
            }
            Some("collab_tool_call") => {
                let mut start = ToolStart::new(
                    id.clone(),
                    Cow::Borrowed("task"),
                    Json::from(args_without(raw, ITEM_STATE_KEYS)),
                );
                start.description = it.prompt.clone().get().or(it.tool.clone().get());
                self.ensure_start(start, out)?;
                if phase == Phase::Completed {
                    self.close_call(&id);
                    let status = it.status.as_deref().unwrap_or("completed");
                    let mut end = ToolEnd::new(id, Cow::Borrowed("task"), status == "completed");
                    if !end.ok {
                        end.error = Some(Cow::Owned(status.to_owned()));
                    }
                    end.result = Some(Json::from(raw));
                    out(ev(Kind::completed(end)))?;
                }
            }
            Some("todo_list") => {
                if let Some(text) = it
                    .items
                    .and_then(|i| render_todos(i, &["text", "content"], &["completed", "status"]))
                    && self.last_todos.as_deref() != Some(text.as_str())
                {
                    self.last_todos = Some(text.clone());
                    out(ev(Kind::Summary {
                        phase: SummaryPhase::Snapshot,
                        text: Some(Cow::Owned(text)),
                    }))?;
                }
            }
            Some("error") => {
                let message = it.message.clone().get().unwrap_or_default();
                out(ev(nonfatal(message)))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// The text parts of an MCP result's `content`, joined by lines (`None`
/// when it has no text).
fn content_text(result: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    struct Part<'a> {
        #[serde(borrow, default)]
        text: LaxStr<'a>,
    }
    let content = Members::of(result)?.get("content")?;
    let parts: Vec<Part> = serde_json::from_str(content.get()).ok()?;
    let texts: Vec<String> = parts
        .into_iter()
        .filter_map(|p| p.text.get())
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// The keys of an item that describe its state rather than its arguments.
const ITEM_STATE_KEYS: &[&str] = &["id", "type", "aggregated_output", "exit_code", "status"];

/// The item object without `drop` (its arguments, or its result).
fn args_without(raw: &RawValue, drop: &[&str]) -> Box<RawValue> {
    match Members::of(raw) {
        Some(m) => m.to_json_without(drop),
        None => raw.to_owned(),
    }
}

#[derive(Deserialize)]
struct Change<'a> {
    #[serde(borrow, default)]
    path: LaxStr<'a>,
    #[serde(borrow, default)]
    kind: LaxStr<'a>,
    #[serde(borrow, default)]
    diff: LaxStr<'a>,
    #[serde(borrow, default)]
    unified_diff: LaxStr<'a>,
}

/// `write` when every change adds a file, `delete` when every change
/// deletes one, else `edit`.
fn file_change_name(changes: Option<&RawValue>) -> String {
    let kinds: Vec<String> = changes
        .and_then(|c| serde_json::from_str::<Vec<Change>>(c.get()).ok())
        .map(|v| {
            v.iter()
                .map(|c| c.kind.as_deref().unwrap_or("update").to_owned())
                .collect()
        })
        .unwrap_or_default();
    let all = |k: &str| !kinds.is_empty() && kinds.iter().all(|x| x == k);
    if all("add") {
        "write".to_owned()
    } else if all("delete") {
        "delete".to_owned()
    } else {
        normalize_tool_name("edit")
    }
}

/// The path of a change list with exactly one change.
fn single_path(raw: &RawValue) -> Option<Str<'_>> {
    let mut v: Vec<Change> = serde_json::from_str(raw.get()).ok()?;
    if v.len() != 1 {
        return None;
    }
    v.pop()?.path.get()
}

/// The diffs newer builds attach to each change, joined.
fn change_diffs(raw: &RawValue) -> Option<String> {
    let v: Vec<Change> = serde_json::from_str(raw.get()).ok()?;
    let mut p = String::new();
    for c in &v {
        if let Some(d) = c.diff.as_deref().or(c.unified_diff.as_deref()) {
            p.push_str(d);
            if !p.ends_with('\n') {
                p.push('\n');
            }
        }
    }
    (!p.is_empty()).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_change_names() {
        let raw = |s: &str| serde_json::from_str::<Box<RawValue>>(s).unwrap();
        assert_eq!(
            file_change_name(Some(&raw(r#"[{"path":"a","kind":"add"}]"#))),
            "write"
        );
        assert_eq!(
            file_change_name(Some(&raw(
                r#"[{"path":"a","kind":"add"},{"path":"b","kind":"update"}]"#
            ))),
            "edit"
        );
    }
}
