//! The link from a Claude Code sub-agent's transcript to the tool call that
//! spawned it.
//!
//! A sub-agent (the `Task`/`Agent` tool) writes its own transcript: in the
//! newer layout `<session>/subagents/agent-<agentId>.jsonl`, in the older
//! `agent-<agentId>.jsonl` beside `<session>.jsonl`. Every line of it
//! carries the parent's `sessionId` and the sub-agent's `agentId`; the
//! parent's transcript names the same `agentId` in the spawning call's
//! result (`toolUseResult.agentId`, and on `agent_progress` lines with the
//! call as `parentToolUseID`). Builds that did not return the agent id are
//! matched by the sub-agent's first prompt, which is the call's
//! `input.prompt`.
//!
//! The parent's transcript is read line by line (one line held at a time),
//! and only lines holding the agent id or the prompt are parsed.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::json::{LaxStr, Members};

/// The parent transcript of the sub-agent file at `source` whose lines
/// carry `session`: the transcript whose folder holds it (`<folder>.jsonl`
/// for `<folder>/subagents/`, newer layout), else `<session>.jsonl` beside
/// it (older layout).
pub fn parent_transcript(source: &Path, session: &str) -> Option<PathBuf> {
    let dir = source.parent()?;
    let p = if dir.file_name().is_some_and(|n| n == "subagents") {
        let folder = dir.parent()?;
        let mut name = folder.file_name()?.to_os_string();
        name.push(".jsonl");
        folder.with_file_name(name)
    } else {
        dir.join(format!("{session}.jsonl"))
    };
    (p != source).then_some(p)
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(rename = "parentToolUseID", borrow, default)]
    parent_tool_use_id: LaxStr<'a>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LaxStr<'a>,
    #[serde(borrow, default)]
    id: LaxStr<'a>,
    #[serde(borrow, default)]
    tool_use_id: LaxStr<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

fn blocks<'a>(line: &Line<'a>) -> Vec<Block<'a>> {
    line.message
        .and_then(Members::of)
        .and_then(|m| m.get("content"))
        .and_then(|c| serde_json::from_str(c.get()).ok())
        .unwrap_or_default()
}

/// The id of the call in the parent's transcript that spawned the sub-agent
/// `agent` (whose first prompt was `prompt`), if the parent's transcript is
/// there and names it.
pub fn spawning_call(
    source: &Path,
    session: &str,
    agent: Option<&str>,
    prompt: Option<&str>,
) -> Option<String> {
    let file = File::open(parent_transcript(source, session)?).ok()?;
    let by_agent = agent.map(|a| format!("\"agentId\":\"{a}\""));
    let by_prompt = prompt.map(|p| format!("\"prompt\":{}", crate::json::quote(p)));
    let agent_finder = by_agent.as_deref().map(|n| Finder::new(n.as_bytes()));
    let prompt_finder = by_prompt.as_deref().map(|n| Finder::new(n.as_bytes()));
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let (mut from_progress, mut from_prompt) = (None, None);
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let has_agent = agent_finder
            .as_ref()
            .is_some_and(|f| f.find(&buf).is_some());
        let has_prompt = from_prompt.is_none()
            && prompt_finder
                .as_ref()
                .is_some_and(|f| f.find(&buf).is_some());
        if !has_agent && !has_prompt {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            continue;
        };
        let Ok(line) = serde_json::from_str::<Line>(text) else {
            continue;
        };
        if has_agent {
            let names = |raw: Option<&RawValue>| {
                raw.and_then(Members::of)
                    .and_then(|m| m.str("agentId"))
                    .is_some_and(|a| Some(a.as_ref()) == agent)
            };
            match line.ty.as_deref() {
                Some("user") if names(line.tool_use_result) => {
                    let call = blocks(&line)
                        .into_iter()
                        .find(|b| b.ty.as_deref() == Some("tool_result"))
                        .and_then(|b| b.tool_use_id.as_deref().map(str::to_owned));
                    if call.is_some() {
                        return call;
                    }
                }
                Some("progress") if from_progress.is_none() && names(line.data) => {
                    from_progress = line.parent_tool_use_id.as_deref().map(str::to_owned);
                }
                _ => {}
            }
        }
        if has_prompt && line.ty.as_deref() == Some("assistant") {
            from_prompt = blocks(&line)
                .into_iter()
                .filter(|b| b.ty.as_deref() == Some("tool_use"))
                .find(|b| {
                    b.input
                        .and_then(Members::of)
                        .and_then(|m| m.str("prompt"))
                        .is_some_and(|p| Some(p.as_ref()) == prompt)
                })
                .and_then(|b| b.id.as_deref().map(str::to_owned));
        }
    }
    from_progress.or(from_prompt)
}
