//! `--to documents-sse`: the documents of [`super`] as a live
//! Server-Sent Events stream (docs/formats.md#documents-sse).
//!
//! ```text
//! event: document_start
//! data: {"type":"document_start","document":{"id":"doc_001","type":"text","sequence":1,"metadata":{"format":"markdown"}}}
//!
//! event: content_delta
//! data: {"type":"content_delta","documentId":"doc_001","delta":"I'll run"}
//!
//! event: document_end
//! data: {"type":"document_end","documentId":"doc_001","finalContent":"I'll run …","metadata":{"format":"markdown"}}
//! ```
//!
//! Every step the shared [`Builder`] reports is written at once: a text
//! document starts with its first visible character and a code fence becomes
//! its own document while the text streams. Tool documents send
//! `tool_call_start` and `tool_call_arguments` when the call starts and
//! `tool_result` when it completes; any document whose content is known
//! sends it as `content_delta`s, so the deltas of a document always add up to
//! its `finalContent`. `document_end` carries the complete metadata and
//! `done` every `ChatResponse` field but `documents`; `data: [DONE]` ends the
//! session's stream.
//!
//! Memory: nothing is kept across documents; an open document keeps its
//! content so far (for `finalContent`) and an open tool call its arguments.

use std::io::{self, Write};

use super::{BEGIN_FIRST, Builder, Doc, DocOptions, DocOut, J, Layout, Summary, doc_id};
use crate::event::{Event, Starts};
use crate::json::layout::write_json;
use crate::json::write_str;
use crate::output::{OutputOptions, Session, Sink};

/// Writes the steps of one session as SSE records.
struct SseOut<'a, W: Write> {
    w: &'a mut W,
    buf: &'a mut Vec<u8>,
}

impl<W: Write> SseOut<'_, W> {
    /// `event: <ty>\ndata: {"type":"<ty>"` — the caller adds the fields.
    fn open(&mut self, ty: &str) {
        self.buf.clear();
        self.buf.extend_from_slice(b"event: ");
        self.buf.extend_from_slice(ty.as_bytes());
        self.buf.extend_from_slice(b"\ndata: {\"type\":\"");
        self.buf.extend_from_slice(ty.as_bytes());
        self.buf.push(b'"');
    }

    fn key(&mut self, k: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        write_str(self.buf, v).expect("writing to a Vec");
    }

    fn json(&mut self, k: &str, v: &J) {
        self.key(k);
        write_json(self.buf, v, Layout::Compact, 0);
    }

    fn doc(&mut self, seq: u32) {
        self.str("documentId", &doc_id(seq));
    }

    fn close(&mut self) -> io::Result<()> {
        self.buf.extend_from_slice(b"}\n\n");
        self.w.write_all(self.buf)
    }

    /// Write what `buf` holds, then `v` as the JSON string of key `k`,
    /// escaped straight to the output: a document's content can be as long
    /// as the longest input line, and is not copied into `buf` again.
    fn str_out(&mut self, k: &str, v: &str) -> io::Result<()> {
        self.key(k);
        self.w.write_all(self.buf)?;
        self.buf.clear();
        write_str(self.w, v)
    }
}

impl<W: Write> DocOut for SseOut<'_, W> {
    fn start(&mut self, seq: u32, ty: &'static str, metadata: &J) -> io::Result<()> {
        self.open("document_start");
        self.key("document");
        let head = J::Obj(vec![
            ("id", J::Str(doc_id(seq))),
            ("type", J::Str(ty.to_owned())),
            ("sequence", J::Int(seq.into())),
            ("metadata", metadata.clone()),
        ]);
        write_json(self.buf, &head, Layout::Compact, 0);
        self.close()
    }

    fn delta(&mut self, seq: u32, text: &str) -> io::Result<()> {
        self.open("content_delta");
        self.doc(seq);
        self.str_out("delta", text)?;
        self.close()
    }

    fn tool_start(&mut self, seq: u32, tool_name: &str, call_id: &str) -> io::Result<()> {
        self.open("tool_call_start");
        self.doc(seq);
        self.str("toolName", tool_name);
        self.str("toolCallId", call_id);
        self.close()
    }

    fn tool_arguments(&mut self, seq: u32, args: &J) -> io::Result<()> {
        self.open("tool_call_arguments");
        self.doc(seq);
        self.json("arguments", args);
        self.close()
    }

    fn tool_result(&mut self, seq: u32, result: &J) -> io::Result<()> {
        self.open("tool_result");
        self.doc(seq);
        self.json("result", result);
        self.close()
    }

    fn end(&mut self, doc: Doc) -> io::Result<()> {
        self.open("document_end");
        self.doc(doc.seq);
        match &doc.content {
            Some(c) => self.str_out("finalContent", c)?,
            None => {
                self.key("finalContent");
                self.buf.extend_from_slice(b"null");
            }
        }
        drop(doc.content);
        self.json("metadata", &doc.metadata);
        self.close()
    }

    fn done(&mut self, summary: &Summary) -> io::Result<()> {
        self.open("done");
        // The summary's fields, spliced after `type`.
        let mut fields = Vec::new();
        write_json(&mut fields, &summary.to_json(None), Layout::Compact, 0);
        if fields.len() > 2 {
            self.buf.push(b',');
            self.buf.extend_from_slice(&fields[1..fields.len() - 1]);
        }
        self.close()?;
        self.w.write_all(b"data: [DONE]\n\n")
    }
}

/// `--to documents-sse`: one SSE stream per session, written as it happens.
pub struct DocumentsSseSink<W: Write> {
    w: W,
    opts: DocOptions,
    /// The open session's builder, made fresh by `begin`.
    cur: Option<Builder>,
    /// One record being written (reused, cleared by each record).
    buf: Vec<u8>,
}

impl<W: Write> DocumentsSseSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        DocumentsSseSink {
            w,
            opts: DocOptions::new(opts),
            cur: None,
            buf: Vec::with_capacity(1024),
        }
    }
}

impl<W: Write> Sink for DocumentsSseSink<W> {
    fn starts(&self) -> Starts {
        // A tool document's metadata and content come from the start.
        Starts::Whole
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.cur = Some(Builder::new(self.opts.clone(), s));
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let builder = self.cur.as_mut().expect(BEGIN_FIRST);
        builder.event(
            ev,
            &mut SseOut {
                w: &mut self.w,
                buf: &mut self.buf,
            },
        )
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let mut builder = self.cur.take().expect(BEGIN_FIRST);
        builder.end(&mut SseOut {
            w: &mut self.w,
            buf: &mut self.buf,
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
