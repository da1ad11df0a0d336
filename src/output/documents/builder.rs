//! [`Builder`]: one session's normalized events in, the steps of building
//! its documents out (through [`DocOut`]).

use std::borrow::Cow;
use std::io;

use super::meta::{
    OpenTool, doc_type, end_meta, error_meta, fence_meta, start_meta, text_meta, tool_content,
    tool_result,
};
use super::{Doc, DocOptions, DocOut, J, Summary};
use crate::event::calls::CallTable;
use crate::event::figures::{Figures, Outcome};
use crate::event::{Event, Kind, ToolEnd, ToolStart};
use crate::output::Session;
use crate::output::fences::{Fence, Seg, Segmenter};
use crate::time::iso8601;

/// first non-whitespace character, leaves out leading blank lines, and holds
/// trailing whitespace back until more text follows it.
#[derive(Debug, Default)]
struct Flow {
    seq: Option<u32>,
    /// Everything sent so far (the final content).
    content: String,
    /// How much of `content` was reported as deltas: the rest is sent but
    /// not reported yet (an offset, not a copy: a huge line is held once).
    reported: usize,
    /// Before opening: the whitespace since the last line break.
    lead: String,
    /// After opening: trailing whitespace not sent yet.
    held: String,
}

impl Flow {
    /// Take `s`; true when it opens the document (its first non-blank text).
    fn push(&mut self, mut s: &str) -> bool {
        let mut opened = false;
        if self.seq.is_none() {
            let Some(i) = s.find(|c: char| !c.is_whitespace()) else {
                keep_after_break(&mut self.lead, s);
                return false;
            };
            keep_after_break(&mut self.lead, &s[..i]);
            let lead = std::mem::take(&mut self.lead);
            self.send(&lead);
            s = &s[i..];
            opened = true;
        }
        let end = s.trim_end().len();
        if end > 0 {
            let held = std::mem::take(&mut self.held);
            self.send(&held);
            self.send(&s[..end]);
            self.held = held;
            self.held.clear();
        }
        self.held.push_str(&s[end..]);
        opened
    }

    fn send(&mut self, t: &str) {
        self.content.push_str(t);
    }

    /// Sent, but not yet reported as a delta.
    fn unsent(&self) -> &str {
        &self.content[self.reported..]
    }
}

/// Append `ws` to `lead`, keeping only what follows its last line break.
fn keep_after_break(lead: &mut String, ws: &str) {
    match ws.rfind('\n') {
        Some(i) => {
            lead.clear();
            lead.push_str(&ws[i + 1..]);
        }
        None => lead.push_str(ws),
    }
}

/// An open code block document.
#[derive(Debug)]
struct OpenCode {
    seq: u32,
    fence: Fence,
    content: String,
    /// How much of `content` was reported as deltas (as in [`Flow`]).
    reported: usize,
}

/// Builds one session's documents.
#[derive(Debug)]
pub struct Builder {
    opts: DocOptions,
    session_id: String,
    model: Option<String>,
    cwd: Option<String>,
    mode: Option<String>,
    parent: Option<(String, Option<String>, bool)>,
    first_ts: Option<i64>,
    any_event: bool,
    next_seq: u32,
    seg: Segmenter,
    text: Flow,
    code: Option<OpenCode>,
    thinking: Flow,
    thinking_ms: Option<u64>,
    /// Open tool-call documents by call id, oldest first (the normalizer in
    /// front closes its oldest at the same cap, so none is evicted here).
    tools: CallTable<OpenTool>,
    /// The session's result came.
    result_seen: bool,
    /// A fatal error was reported (as an `AGENT_ERROR` document).
    fatal: bool,
    /// The session's figures, as every format shows them.
    figures: Figures,
}

impl Builder {
    pub fn new(opts: DocOptions, session: &Session) -> Self {
        Builder {
            opts,
            session_id: session.id.clone(),
            model: None,
            cwd: None,
            mode: None,
            parent: None,
            first_ts: None,
            any_event: false,
            next_seq: 0,
            seg: Segmenter::new(),
            text: Flow::default(),
            code: None,
            thinking: Flow::default(),
            thinking_ms: None,
            tools: CallTable::default(),
            result_seen: false,
            fatal: false,
            figures: Figures::default(),
        }
    }

    fn seq(&mut self) -> u32 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Take one event of the session.
    pub fn event(&mut self, ev: &Event<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        // Every session begins with `session_started`, even an input with no
        // events at all: it says nothing about what the agent did.
        if !matches!(ev.kind, Kind::SessionStarted(_)) {
            self.any_event = true;
        }
        self.figures.event(ev);
        if self.first_ts.is_none() {
            self.first_ts = ev.ts;
        }
        match &ev.kind {
            Kind::SessionStarted(s) => {
                self.model = s.model.as_deref().map(str::to_owned);
                self.cwd = s.cwd.as_deref().map(str::to_owned);
                self.mode = s.permission_mode.as_deref().and_then(mode_of);
                self.parent = s.parent.as_ref().map(|p| {
                    let call = p.call_id.as_deref().map(str::to_owned);
                    (p.session_id.to_string(), call, p.fork)
                });
            }
            Kind::TextDelta { text } | Kind::AssistantMessage { text } => {
                self.close_thinking(out)?;
                self.text(text, out)?;
            }
            Kind::ThinkingDelta { text } if self.opts.thinking => {
                self.close_text(out)?;
                self.thinking(text, out)?;
            }
            Kind::ThinkingCompleted { duration_ms } if self.opts.thinking => {
                self.thinking_ms = *duration_ms;
                self.close_thinking(out)?;
            }
            Kind::Thinking { text, duration_ms } if self.opts.thinking => {
                self.close_text(out)?;
                self.thinking(text, out)?;
                self.thinking_ms = *duration_ms;
                self.close_thinking(out)?;
            }
            // A prompt or the end of a model response ends the text and
            // thinking before it: the next response's are documents of
            // their own, never run together with these.
            Kind::UserMessage { .. } | Kind::TurnEnded { .. } => self.close_flows(out)?,
            Kind::ToolCallStarted(t) => self.tool_start(t, out)?,
            Kind::ShellOutputDelta { call_id, text, .. } => {
                if let Some(t) = self.tools.get_mut(call_id) {
                    t.output.get_or_insert_with(String::new).push_str(text);
                }
            }
            Kind::ToolCallCompleted(e) => self.tool_end(e, e.start.as_deref(), out)?,
            Kind::ToolCall(b) => {
                self.tool_start(&b.0, out)?;
                self.tool_end(&b.1, Some(&b.0), out)?;
            }
            Kind::Error {
                message,
                fatal,
                source,
            } => {
                self.close_flows(out)?;
                self.fatal |= *fatal;
                let meta = error_meta(
                    "AGENT_ERROR",
                    source.as_deref().unwrap_or("agent"),
                    if *fatal { "fatal" } else { "non-fatal" },
                );
                self.error_doc(message, meta, out)?;
            }
            Kind::Result(r) => {
                self.close_flows(out)?;
                if !r.ok && !self.fatal {
                    self.fatal = true;
                    let msg = r.error.as_deref().unwrap_or("the session failed");
                    self.error_doc(msg, error_meta("AGENT_ERROR", "result", "fatal"), out)?;
                }
                self.result_seen = true;
            }
            _ => {}
        }
        Ok(())
    }

    /// The session has no more events: close what is open, explain a
    /// missing result, and report the summary.
    pub fn end(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        self.close_flows(out)?;
        // The normalizer closes open calls before a session ends; a call
        // still open here is closed as cancelled all the same.
        while let Some((id, t)) = self.tools.newest() {
            let mut e = ToolEnd::new(Cow::Owned(id.to_owned()), Cow::Owned(t.name.clone()), false);
            e.cancelled = true;
            self.tool_end(&e, None, out)?;
        }
        if !self.result_seen {
            let details = if self.any_event {
                "no result event"
            } else {
                "the input had no events"
            };
            let meta = error_meta("INCOMPLETE_STREAM", "cstream", details);
            self.error_doc("the stream ended before the session's result", meta, out)?;
        }
        let summary = self.summary();
        out.done(&summary)
    }

    fn summary(&self) -> Summary {
        let f = &self.figures;
        let ok = f.outcome() == Outcome::Success;
        let created = self
            .opts
            .ident
            .created
            .or(self.first_ts.map(|ms| ms.div_euclid(1000)))
            .unwrap_or_else(|| self.opts.ident.run_start());
        Summary {
            id: self
                .opts
                .ident
                .id
                .clone()
                .unwrap_or_else(|| format!("chat_{}", self.session_id)),
            conversation_id: self.session_id.clone(),
            model: self
                .opts
                .ident
                .model
                .clone()
                .or_else(|| self.model.clone())
                .unwrap_or_else(|| "unknown".to_owned()),
            mode: self.mode.clone().unwrap_or_else(|| "agent".to_owned()),
            created: iso8601(created),
            status: if ok { "completed" } else { "error" },
            usage: f.usage(),
            duration_ms: f.duration_ms(),
            tool_calls: f.tool_calls(),
            turns: f.turns(),
            parent: self.parent.clone(),
        }
    }

    // --------------------------------------------------------------- text

    fn text(&mut self, text: &str, out: &mut dyn DocOut) -> io::Result<()> {
        let mut seg = std::mem::take(&mut self.seg);
        let mut res = Ok(());
        seg.push(text, &mut |s| {
            if res.is_ok() {
                res = self.seg_step(s, out);
            }
        });
        self.seg = seg;
        res?;
        self.flush_text(out)
    }

    /// Report the content gathered from one push as one delta per document.
    fn flush_text(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        if let Some(seq) = self.text.seq
            && !self.text.unsent().is_empty()
        {
            out.delta(seq, self.text.unsent())?;
            self.text.reported = self.text.content.len();
        }
        if let Some(c) = &mut self.code
            && c.reported < c.content.len()
        {
            out.delta(c.seq, &c.content[c.reported..])?;
            c.reported = c.content.len();
        }
        Ok(())
    }

    fn seg_step(&mut self, s: Seg<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        match s {
            Seg::Prose(t) => {
                if self.text.push(t) {
                    let seq = self.seq();
                    self.text.seq = Some(seq);
                    out.start(seq, "text", &text_meta())?;
                }
            }
            Seg::Open(fence) => {
                self.end_text_doc(out)?;
                let seq = self.seq();
                let (ty, meta) = fence_meta(&fence);
                out.start(seq, ty, &meta)?;
                self.code = Some(OpenCode {
                    seq,
                    fence,
                    content: String::new(),
                    reported: 0,
                });
            }
            Seg::Code(t) => {
                if let Some(c) = &mut self.code {
                    // A code block can be as long as the longest line and
                    // arrives line by line: grow by a quarter, not by
                    // doubling, to hold it about once.
                    let spare = c.content.capacity() - c.content.len();
                    if spare < t.len() {
                        c.content.reserve_exact(t.len().max(c.content.len() / 4));
                    }
                    c.content.push_str(t);
                }
            }
            Seg::Close => {
                if let Some(c) = self.code.take() {
                    if c.reported < c.content.len() {
                        out.delta(c.seq, &c.content[c.reported..])?;
                    }
                    let (ty, metadata) = fence_meta(&c.fence);
                    out.end(Doc {
                        seq: c.seq,
                        ty,
                        content: Some(c.content),
                        metadata,
                    })?;
                }
            }
        }
        Ok(())
    }

    fn end_text_doc(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        let flow = std::mem::take(&mut self.text);
        if let Some(seq) = flow.seq {
            if !flow.unsent().is_empty() {
                out.delta(seq, flow.unsent())?;
            }
            out.end(Doc {
                seq,
                ty: "text",
                content: Some(flow.content),
                metadata: text_meta(),
            })?;
        }
        Ok(())
    }

    /// The assistant's text is interrupted: settle the segmenter and end the
    /// open text and code documents.
    fn close_text(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        if !self.seg.is_idle() || self.code.is_some() {
            let mut seg = std::mem::take(&mut self.seg);
            let mut res = Ok(());
            seg.finish(&mut |s| {
                if res.is_ok() {
                    res = self.seg_step(s, out);
                }
            });
            self.seg = seg;
            res?;
        }
        self.end_text_doc(out)
    }

    fn close_flows(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        self.close_text(out)?;
        self.close_thinking(out)
    }

    // ----------------------------------------------------------- thinking

    fn thinking(&mut self, text: &str, out: &mut dyn DocOut) -> io::Result<()> {
        if self.thinking.push(text) {
            let seq = self.seq();
            self.thinking.seq = Some(seq);
            self.thinking_ms = None;
            out.start(seq, "thinking", &J::Obj(vec![]))?;
        }
        if let Some(seq) = self.thinking.seq
            && !self.thinking.unsent().is_empty()
        {
            out.delta(seq, self.thinking.unsent())?;
            self.thinking.reported = self.thinking.content.len();
        }
        Ok(())
    }

    fn close_thinking(&mut self, out: &mut dyn DocOut) -> io::Result<()> {
        let flow = std::mem::take(&mut self.thinking);
        if let Some(seq) = flow.seq {
            out.end(Doc {
                seq,
                ty: "thinking",
                content: Some(flow.content),
                metadata: J::Obj(vec![("duration_ms", J::opt_u64(self.thinking_ms))]),
            })?;
        }
        self.thinking_ms = None;
        Ok(())
    }

    // -------------------------------------------------------------- tools

    fn tool_start(&mut self, t: &ToolStart<'_>, out: &mut dyn DocOut) -> io::Result<()> {
        // Open ids are unique (the normalizer makes a repeated start
        // progress); should one come back all the same, the call open under
        // it is closed as cancelled rather than left without an end.
        if let Some(old) = self.tools.get(&t.call_id) {
            let mut e = ToolEnd::new(t.call_id.clone(), Cow::Owned(old.name.clone()), false);
            e.cancelled = true;
            self.tool_end(&e, None, out)?;
        }
        self.close_flows(out)?;
        let seq = self.seq();
        let ty = doc_type(&t.tool_name);
        out.start(seq, ty, &start_meta(ty, t, self.cwd.as_deref()))?;
        out.tool_start(seq, &t.tool_name, &t.call_id)?;
        out.tool_arguments(seq, &J::raw(t.args.get()))?;
        // Content known from the arguments (an edit's new text, a plan) is
        // sent at once, like any other document's.
        if let Some(c) = tool_content(ty, t) {
            out.delta(seq, &c)?;
        }
        let open = OpenTool {
            seq,
            ty,
            name: t.tool_name.to_string(),
            output: None,
        };
        self.tools.insert(&t.call_id, open);
        Ok(())
    }

    /// A call's completion, with its start ([`ToolEnd::start`], or the
    /// whole call of `--coalesce`).
    fn tool_end(
        &mut self,
        e: &ToolEnd<'_>,
        start: Option<&ToolStart<'_>>,
        out: &mut dyn DocOut,
    ) -> io::Result<()> {
        // A completion whose start was never seen is a call all the same,
        // with unknown arguments.
        let bare;
        let start = match start {
            Some(s) => s,
            None => {
                bare = ToolStart::new(
                    Cow::Borrowed(&*e.call_id),
                    Cow::Borrowed(&*e.tool_name),
                    crate::event::json_null(),
                );
                &bare
            }
        };
        let open = match self.tools.remove(&e.call_id) {
            Some(t) => t,
            None => {
                self.tool_start(start, out)?;
                match self.tools.remove(&e.call_id) {
                    Some(t) => t,
                    None => return Ok(()),
                }
            }
        };
        let result = tool_result(e);
        out.tool_result(open.seq, &result)?;
        let cwd = self.cwd.as_deref();
        let metadata = end_meta(&open, start, e, result, cwd);
        out.end(Doc {
            seq: open.seq,
            ty: open.ty,
            content: tool_content(open.ty, start),
            metadata,
        })?;
        let shell_ran = open.ty == "terminal_command" && e.exit_code.is_some();
        if !e.ok && !e.cancelled && !shell_ran {
            let msg = e.error.as_deref().map_or_else(
                || format!("the {} call failed", start.tool_name),
                str::to_owned,
            );
            let details = start.key_arg().unwrap_or(&start.call_id).to_owned();
            let meta = error_meta("TOOL_ERROR", &start.tool_name, &details);
            self.error_doc(&msg, meta, out)?;
        }
        Ok(())
    }

    fn error_doc(&mut self, msg: &str, metadata: J, out: &mut dyn DocOut) -> io::Result<()> {
        let seq = self.seq();
        out.start(seq, "error", &metadata)?;
        if !msg.is_empty() {
            out.delta(seq, msg)?;
        }
        out.end(Doc {
            seq,
            ty: "error",
            content: Some(msg.to_owned()),
            metadata,
        })
    }
}

/// `permissionMode` values that name a documents `mode`.
fn mode_of(permission_mode: &str) -> Option<String> {
    matches!(permission_mode, "plan" | "ask" | "debug").then(|| permission_mode.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_flow_trims_blank_lines_and_trailing_space() {
        let mut f = Flow::default();
        assert!(!f.push("\n\n  "));
        assert!(!f.push(" \n   "));
        assert!(f.push(" - item  "));
        f.seq = Some(1);
        assert!(!f.push("\n\n"));
        assert_eq!(f.content, "    - item");
        assert!(!f.push("next\n"));
        assert_eq!(f.content, "    - item  \n\nnext");
        assert_eq!(f.unsent(), f.content);
    }
}
