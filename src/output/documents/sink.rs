//! `--to documents`: each session's ended documents, written as one
//! `ChatResponse` when the session ends.

use std::io::{self, Write};

use super::{BEGIN_FIRST, Builder, Doc, DocOptions, DocOut, J, Layout, Summary};
use crate::event::{Event, Starts};
use crate::json::layout::write_json;
use crate::output::{OutputOptions, Session, Sink};

/// Collects one session's ended documents and writes its response at the end.
struct Collect<'a> {
    docs: &'a mut Vec<Doc>,
    out: &'a mut Vec<u8>,
    layout: Layout,
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
        write_json(self.out, &summary.to_json(Some(docs)), self.layout, 0);
        self.out.push(b'\n');
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
        }
    }
}

impl<W: Write> Sink for DocumentsSink<W> {
    fn starts(&self) -> Starts {
        // A tool document's metadata and content come from the start.
        Starts::Whole
    }

    fn begin(&mut self, s: &Session) -> io::Result<()> {
        self.cur = Some(Open {
            builder: Builder::new(self.opts.clone(), s),
            docs: Vec::new(),
        });
        Ok(())
    }

    fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
        let open = self.cur.as_mut().expect(BEGIN_FIRST);
        let mut out = Collect {
            docs: &mut open.docs,
            out: &mut self.buf,
            layout: self.layout,
        };
        open.builder.event(ev, &mut out)
    }

    fn end(&mut self, _s: &Session) -> io::Result<()> {
        let Open {
            mut builder,
            mut docs,
        } = self.cur.take().expect(BEGIN_FIRST);
        builder.end(&mut Collect {
            docs: &mut docs,
            out: &mut self.buf,
            layout: self.layout,
        })?;
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
