//! `--to documents`: each session's ended documents, written as one
//! `ChatResponse` when the session ends.
//!
//! One session is one pretty-printed JSON document, as it always was.
//! Several are one compact document a line (JSON Lines, as `--to events`),
//! which every JSON reader takes; pretty documents back to back are not
//! JSON. Which it is shows only when a second session begins, so the first
//! session's response is held until then (or until the run ends): the
//! sink already holds a whole session's documents, so memory stays one
//! session.

use std::io::{self, Write};

use super::{BEGIN_FIRST, Builder, Doc, DocOptions, DocOut, J, Layout, Summary};
use crate::event::{Event, Starts};
use crate::json::layout::write_json;
use crate::output::{OutputOptions, Session, Sink};

/// Collects one session's ended documents and writes its response at the end.
struct Collect<'a> {
    docs: &'a mut Vec<Doc>,
    /// The session's response, once it is done.
    response: &'a mut Option<J>,
}

impl DocOut for Collect<'_> {
    fn start(&mut self, _: u32, _: &'static str, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn delta(&mut self, _: u32, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn tool_start(&mut self, _: u32, _: &str, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn tool_arguments(&mut self, _: u32, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn tool_result(&mut self, _: u32, _: &J) -> io::Result<()> {
        Ok(())
    }
    fn end(&mut self, doc: Doc) -> io::Result<()> {
        self.docs.push(doc);
        Ok(())
    }
    fn done(&mut self, summary: &Summary) -> io::Result<()> {
        // Documents end in any order (parallel tool calls); they are listed
        // in the order they began.
        self.docs.sort_by_key(|d| d.seq);
        let docs = J::Arr(self.docs.drain(..).map(|d| d.to_json()).collect());
        *self.response = Some(summary.to_json(Some(docs)));
        Ok(())
    }
}

/// `--to documents`: one `ChatResponse` JSON value per session.
pub struct DocumentsSink<W: Write> {
    w: W,
    opts: DocOptions,
    layout: Layout,
    /// The open session, made fresh by `begin`.
    cur: Option<Open>,
    /// The response being written (reused across sessions, empty between them).
    buf: Vec<u8>,
    /// The first session's response, held while it may be the only one.
    held: Option<J>,
    /// Sessions begun.
    sessions: u64,
}

/// One session's state: the builder and the documents ended so far.
struct Open {
    builder: Builder,
    docs: Vec<Doc>,
}

impl<W: Write> DocumentsSink<W> {
    pub fn new(w: W, opts: &OutputOptions) -> Self {
        DocumentsSink {
            w,
            opts: DocOptions::new(opts),
            layout: if opts.compact {
                Layout::Compact
            } else {
                Layout::Pretty
            },
            cur: None,
            buf: Vec::new(),
            held: None,
            sessions: 0,
        }
    }

    /// Write one response in `layout`, a line of its own.
    fn write(&mut self, response: &J, layout: Layout) -> io::Result<()> {
        write_json(&mut self.buf, response, layout, 0);
        self.buf.push(b'\n');
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write> Sink for DocumentsSink<W> {
    fn starts(&self) -> Starts {
        // A tool document's metadata and content come from the start.
        Starts::Whole
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.sessions += 1;
        if self.sessions == 2 {
            // Several sessions: JSON Lines from the first one on.
            self.layout = Layout::Compact;
            if let Some(first) = self.held.take() {
                self.write(&first, Layout::Compact)?;
            }
        }
        self.cur = Some(Open {
            builder: Builder::new(self.opts.clone(), s),
            docs: Vec::new(),
        });
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let open = self.cur.as_mut().expect(BEGIN_FIRST);
        let mut response = None;
        let mut out = Collect {
            docs: &mut open.docs,
            response: &mut response,
        };
        open.builder.event(ev, &mut out)
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let Open {
            mut builder,
            mut docs,
        } = self.cur.take().expect(BEGIN_FIRST);
        let mut response = None;
        builder.end(&mut Collect {
            docs: &mut docs,
            response: &mut response,
        })?;
        let Some(response) = response else {
            return Ok(());
        };
        match (self.sessions, self.layout) {
            (1, Layout::Pretty) => self.held = Some(response),
            (_, layout) => self.write(&response, layout)?,
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(only) = self.held.take() {
            self.write(&only, Layout::Pretty)?;
        }
        self.w.flush()
    }
}
