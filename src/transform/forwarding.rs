//! Every transform passes on what it does not change: the test runs each
//! stage around a probe sink and checks that each call of the [`Sink`]
//! interface reaches the probe. A stage that swallowed `starts` cost the
//! formats after it their tool labels; one that swallowed `finish` lost a
//! format's last bytes.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use crate::event::{Event, Kind, Reads, Session, Sink, Starts};

use super::coalesce::{Coalesce, CoalesceMode};
use super::images::Images;
use super::redact::{Redact, Redactor};
use super::stats::{Counters, CountingSink};
use super::summary::{RunSummary, SummarySink};
use super::truncate::Truncate;
use super::window::Window;

/// Records which calls arrived, and needs whole starts so that the answer
/// of `starts()` shows whether it was asked.
struct Probe(Rc<RefCell<Vec<&'static str>>>);

impl Sink for Probe {
    fn starts(&self) -> Starts {
        self.0.borrow_mut().push("starts");
        Starts::Whole
    }
    fn reads(&self) -> Reads {
        self.0.borrow_mut().push("reads");
        Reads::Figures
    }
    fn begin(&mut self, _: &Session) -> io::Result<()> {
        self.0.borrow_mut().push("begin");
        Ok(())
    }
    fn event(&mut self, _: &Session, _: &Event<'_>) -> io::Result<()> {
        self.0.borrow_mut().push("event");
        Ok(())
    }
    fn title(&mut self, _: &Session, _: &str) -> io::Result<()> {
        self.0.borrow_mut().push("title");
        Ok(())
    }
    fn end(&mut self, _: &Session) -> io::Result<()> {
        self.0.borrow_mut().push("end");
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.borrow_mut().push("flush");
        Ok(())
    }
    fn idle(&mut self) -> io::Result<()> {
        self.0.borrow_mut().push("idle");
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        self.0.borrow_mut().push("finish");
        Ok(())
    }
}

type Make = fn(Box<dyn Sink>) -> Box<dyn Sink>;

fn stages() -> Vec<(&'static str, Make)> {
    vec![
        ("coalesce whole", |p| {
            Box::new(Coalesce::new(p, CoalesceMode::Whole))
        }),
        ("coalesce burst", |p| {
            Box::new(Coalesce::new(p, CoalesceMode::Burst))
        }),
        ("images", |p| Box::new(Images::new(p))),
        ("redact", |p| {
            Box::new(Redact::new(p, Redactor::new(&[]).expect("built-in rules")))
        }),
        ("stats", |p| {
            Box::new(CountingSink::new(p, Rc::new(Counters::default())))
        }),
        ("summary", |p| {
            Box::new(SummarySink::new(
                p,
                Rc::new(RefCell::new(RunSummary::default())),
            ))
        }),
        ("truncate", |p| Box::new(Truncate::new(p, 16))),
        ("window", |p| Box::new(Window::new(p, None, None))),
    ]
}

#[test]
fn every_stage_forwards_every_call() {
    let s = Session {
        id: "s".into(),
        ordinal: 1,
        dedupe: true,
    };
    for (name, make) in stages() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut stage = make(Box::new(Probe(log.clone())));

        assert_eq!(stage.starts(), Starts::Whole, "{name}: starts");
        // The summary lists failed calls with their labels: it reads whole.
        let reads = if name == "summary" {
            Reads::Whole
        } else {
            Reads::Figures
        };
        assert_eq!(stage.reads(), reads, "{name}: reads");
        stage.begin(&s).unwrap();
        let text = Event::at(None, Kind::TextDelta { text: "hi".into() });
        stage.event(&s, &text).unwrap();
        stage.title(&s, "a late title").unwrap();
        // A burst merge is closed by idle, so ask for it before the end.
        stage.idle().unwrap();
        stage.flush().unwrap();
        stage.end(&s).unwrap();
        stage.finish().unwrap();

        let seen = log.borrow();
        for call in [
            "starts", "begin", "event", "title", "idle", "flush", "end", "finish",
        ] {
            assert!(
                seen.contains(&call),
                "{name} did not pass on {call}: {seen:?}"
            );
        }
        let pos = |c| seen.iter().position(|x| *x == c).unwrap();
        assert!(pos("begin") < pos("event"), "{name}: {seen:?}");
        assert!(pos("event") < pos("end"), "{name}: {seen:?}");
    }
}
