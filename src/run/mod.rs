//! The pipeline: inputs → framing → dialect parser → normalizer → sink.
//!
//! [`run`] processes several inputs the way `cat` does (a missing file is
//! reported and skipped); [`convert`] is the single-reader form for embedding
//! cstream in another program (a proxy) or for tests.

use std::fs::File;
use std::io::{self, Read, Write};
#[cfg(feature = "walk")]
use std::path::PathBuf;

use crate::diag::Diag;
use crate::event::Event;
use crate::event::{Session, Sink};
use crate::input::{Framer, HUGE_RECORD_BYTES};
use crate::transform::redact::Redactor;

mod config;
mod inputs;
mod jobs;
mod open;
mod outdir;
mod pipeline;
mod pool;
mod report;

pub use config::{Config, Redaction};
pub use inputs::Input;
use open::{one_file, one_input};
use pipeline::{Pipeline, finish, report_ended_one};
pub use report::{Exit, Report};

pub(crate) use outdir::OutputDir;
pub(crate) use outdir::remove_temporaries;

/// Non-JSON lines become `error` events carrying the line, cut at this many bytes.
pub const ERROR_LINE_BYTES: usize = 1024;

/// An input whose first block read holds a NUL byte is binary and skipped,
/// as ripgrep does: agents write text, and escaping megabytes of binary
/// helps nobody. (A live pipe's first read returns what is there, so the
/// check never waits for more input.)
pub const BINARY_SNIFF_BYTES: usize = 64 * 1024;

/// Why a directory walk skips a file: its name or its first lines are no
/// agent's session (`crate::dialect::archive::sniff`).
pub const NOT_AGENT_OUTPUT: &str = "not agent output";

/// With `--from`, a file where most records are unknown to the dialect
/// gets a warning; it is decided after this many records (or at the end
/// of a shorter file), so that a live stream hears it early.
pub const DIALECT_CHECK_RECORDS: u64 = 64;

/// Convert `inputs` in order, as the command line does, with `stdin` read
/// wherever the inputs name standard input.
pub fn run_with_stdin<R: Read, W: Write>(
    cfg: &Config,
    inputs: &[Input],
    mut stdin: R,
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    let cfg = &*cfg.pinned();
    warn_as(cfg, diag);
    if let Some(od) = &cfg.output_dir {
        return outdir::run(cfg, inputs, od, diag);
    }
    if jobs::parallel(cfg, inputs) {
        return jobs::run(cfg, jobs::RunInputs::Known(inputs), out, diag);
    }
    let mut p = Pipeline::new(cfg, out);
    let mut framer = Framer::new();
    let mut all = || {
        for (i, input) in inputs.iter().enumerate() {
            diag.file = input.display_name();
            p.summary_input(cfg, inputs, i);
            match input {
                Input::Stdin => {
                    p.live = true;
                    p.source = None;
                    match open::stdin_file(cfg) {
                        Some((f, len)) => open::one_stdin_file(&mut p, &mut framer, &f, len, diag)?,
                        None => one_input(&mut p, &mut framer, &mut stdin, diag, false)?,
                    };
                }
                Input::Path(path) | Input::Found(path) | Input::Stored { db: path, .. } => {
                    match File::open(path) {
                        Ok(f) => {
                            // A FIFO or `<(tail -f …)` is live; a regular file is not.
                            let regular = crate::input::mapped::regular_len(&f);
                            p.live = regular.is_none();
                            p.source = Some(path.clone());
                            p.stored_session = input.stored_session().map(str::to_owned);
                            let before = framer.bytes_in;
                            let sniff = matches!(input, Input::Found(_));
                            one_file(&mut p, &mut framer, &f, regular, diag, sniff)?;
                            if let Some(progress) = &cfg.progress {
                                (progress.0)(framer.bytes_in - before);
                            }
                        }
                        Err(e) => {
                            let name = std::mem::take(&mut diag.file);
                            diag.error(format_args!("{name}: {e}"));
                            continue;
                        }
                    }
                }
            }
            if p.stop {
                break;
            }
        }
        Ok(())
    };
    let r = all();
    finish(p, &framer, r, diag)
}

/// [`run_with_stdin`] of the session files in the directories `dirs`, as
/// [`crate::walk::expand`] lists them. With several jobs reducing the files
/// to rows (`--to usage`, [`jobs::walks_beside`]) the workers begin on the
/// first files while the rest of the trees are walked, unless something
/// needs the whole list first (`--summary`'s file names, a progress bar's
/// total); otherwise the walk ends before the run starts. `--output-dir`
/// is not written from here (its names need the walk's sniffing).
#[cfg(feature = "walk")]
pub fn run_walking<W: Write>(
    cfg: &Config,
    dirs: &[PathBuf],
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    if cfg.output_dir.is_some() {
        return Err(io::Error::other(
            "an output directory is written from a list of inputs, not from a walk",
        ));
    }
    let beside = cfg.jobs > 1
        && jobs::walks_beside(cfg)
        && cfg.progress.is_none()
        && cfg.summary.is_none()
        && !dirs.is_empty()
        && dirs.iter().all(|d| d.is_dir());
    if !beside {
        let found = crate::walk::expand(dirs, false, diag);
        let cfg = cfg.clone().walked(&found);
        return run_with_stdin(&cfg, &found.inputs, io::empty(), out, diag);
    }
    let cfg = &*cfg.pinned();
    warn_as(cfg, diag);
    jobs::run(cfg, jobs::RunInputs::Walk(dirs), out, diag)
}

/// Convert one reader to one writer: the embedding entry point.
///
/// Diagnostics go to `diag` (use [`Diag::sink`] to drop them).
pub fn convert<R: Read, W: Write>(
    cfg: &Config,
    input: R,
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    convert_detaching(cfg, input, out, diag, HUGE_RECORD_BYTES, true)
}

/// [`convert`] of an input read as a whole file, not a live stream: where
/// the reads happen to pause changes nothing (the items before a session's
/// init wait for it), so the output is the same however the input is cut.
pub fn convert_whole<R: Read, W: Write>(
    cfg: &Config,
    input: R,
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    convert_detaching(cfg, input, out, diag, HUGE_RECORD_BYTES, false)
}

/// Warnings as the run's configuration asks: `-q`, the terminal they share
/// with the output, and the output's redaction.
fn warn_as(cfg: &Config, diag: &mut Diag) {
    diag.quiet |= cfg.output.quiet;
    diag.shared_terminal = cfg.output.text.shared_terminal.clone();
    diag.redact = warnings_redactor(cfg);
}

/// What redacts the warnings that quote the input: the output's redaction,
/// so a secret kept out of a shared transcript is not printed beside it.
fn warnings_redactor(cfg: &Config) -> Option<crate::diag::Redact> {
    let user = cfg.redact.output(cfg.format)?;
    let r = Redactor::new(user).expect("--redact-pattern checked on the command line");
    Some(Box::new(move |s: &str| r.redact(s)))
}

/// [`convert`], detaching records of `huge` bytes or more.
fn convert_detaching<R: Read, W: Write>(
    cfg: &Config,
    input: R,
    out: W,
    diag: &mut Diag,
    huge: usize,
    live: bool,
) -> io::Result<Report> {
    let cfg = &*cfg.pinned();
    diag.quiet |= cfg.output.quiet;
    diag.redact = warnings_redactor(cfg);
    let mut p = Pipeline::new(cfg, out);
    p.huge = huge;
    p.live = live;
    let mut framer = Framer::new();
    let r = one_input(&mut p, &mut framer, input, diag, false).map(drop);
    finish(p, &framer, r, diag)
}

/// [`convert`] with each event handed to `f` (with its session's id) in
/// place of a format.
pub fn for_each_event<R, F>(cfg: &Config, input: R, f: F, diag: &mut Diag) -> io::Result<Report>
where
    R: Read,
    F: FnMut(&str, &Event<'_>) -> io::Result<()>,
{
    diag.quiet |= cfg.output.quiet;
    let mut p = Pipeline::with_callback(cfg, f);
    let mut framer = Framer::new();
    let r = one_input(&mut p, &mut framer, input, diag, false).map(drop);
    finish(p, &framer, r, diag)
}

/// The sink of [`for_each_event`]: the caller's closure.
struct CallbackSink<F>(F);

impl<F: FnMut(&str, &Event<'_>) -> io::Result<()>> Sink for CallbackSink<F> {
    fn event(&mut self, s: &Session, ev: &Event<'_>) -> io::Result<()> {
        (self.0)(&s.id, ev)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::rc::Rc;

    use super::*;
    use crate::Format;
    use crate::dialect::Dialect;
    use crate::event::{Kind, Session, Starts, ToolStart};
    use crate::transform::stats::CountingSink;
    use crate::transform::truncate::Truncate;

    /// What the recording sink learns of one open call from the events.
    struct Seen {
        start: ToolStart<'static>,
        /// A non-empty `shell_output_delta` of the call reached the sink.
        output: bool,
    }

    /// Asks for `starts` and checks every completion against the start
    /// and the live output it saw itself; problems go to `errors`.
    struct Recorder<'e> {
        starts: Starts,
        open: HashMap<String, Seen>,
        errors: &'e RefCell<Vec<String>>,
        /// Completions that came with their start.
        paired: &'e Cell<usize>,
    }

    impl Sink for Recorder<'_> {
        fn starts(&self) -> Starts {
            self.starts
        }

        fn begin(&mut self, _s: &Session) -> io::Result<()> {
            self.open.clear();
            Ok(())
        }

        fn event(&mut self, _s: &Session, ev: &Event<'_>) -> io::Result<()> {
            let err = |m: String| self.errors.borrow_mut().push(m);
            match &ev.kind {
                Kind::ToolCallStarted(t) => {
                    let start = (**t).clone().into_owned();
                    let seen = Seen {
                        start,
                        output: false,
                    };
                    self.open.insert(t.call_id.to_string(), seen);
                }
                Kind::ShellOutputDelta { call_id, text, .. } if !text.is_empty() => {
                    if let Some(c) = self.open.get_mut(&**call_id) {
                        c.output = true;
                    }
                }
                Kind::ToolCallCompleted(e) => {
                    let seen = self.open.remove(&*e.call_id);
                    let id = &e.call_id;
                    match (self.starts, seen, e.start.as_deref()) {
                        (Starts::None, _, Some(_)) => {
                            err(format!("{id}: a start nobody asked for"))
                        }
                        (Starts::None, _, None) => {}
                        (_, Some(_), None) => err(format!("{id}: started, but no start came back")),
                        (_, None, Some(_)) => err(format!("{id}: a start that never came")),
                        (_, None, None) => {}
                        (kept, Some(s), Some(got)) => {
                            let same = got.call_id == s.start.call_id
                                && got.tool_name == s.start.tool_name
                                && got.key_arg() == s.start.key_arg()
                                && (kept == Starts::Label
                                    || (got.args == s.start.args
                                        && got.cwd == s.start.cwd
                                        && got.details == s.start.details));
                            if !same {
                                err(format!("{id}: {got:?} is not the start {:?}", s.start));
                            }
                            self.paired.set(self.paired.get() + 1);
                            if e.streamed != s.output {
                                err(format!(
                                    "{id}: streamed {} but output seen {}",
                                    e.streamed, s.output
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
            Ok(())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn fixtures(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("fixtures/").flatten() {
            let p = e.path();
            if p.is_dir() {
                fixtures(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl" || x == "json") {
                out.push(p);
            }
        }
    }

    /// The normalizer hands a sink the start of every call with its
    /// completion, as much of it as the sink asked for, behind any adapter
    /// (truncation, counting), and says whether the call's output went out
    /// live: on every fixture.
    #[test]
    fn every_completion_carries_the_start_its_sink_asked_for() {
        let mut files = Vec::new();
        fixtures(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut files,
        );
        assert!(files.len() > 50, "fixtures found: {}", files.len());
        let paired = Cell::new(0);
        for file in &files {
            let folder = file
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str());
            let from = Dialect::ALL.into_iter().find(|d| Some(d.name()) == folder);
            for starts in [Starts::None, Starts::Label, Starts::Whole] {
                for adapters in [false, true] {
                    let errors = RefCell::new(Vec::new());
                    let cfg = Config {
                        from,
                        ..Config::default()
                    };
                    let mut p = Pipeline::new(&cfg, io::sink());
                    let rec: Box<dyn Sink + '_> = Box::new(Recorder {
                        starts,
                        open: HashMap::new(),
                        errors: &errors,
                        paired: &paired,
                    });
                    p.sink = if adapters {
                        let counted = CountingSink::new(rec, Rc::default());
                        Box::new(Truncate::new(Box::new(counted), 16))
                    } else {
                        rec
                    };
                    let mut diag = Diag::sink();
                    let input = std::fs::read(file).expect("readable fixture");
                    let mut framer = Framer::new();
                    let r = one_input(&mut p, &mut framer, &input[..], &mut diag, false).map(drop);
                    finish(p, &framer, r, &mut diag).expect("converts");
                    let errors = errors.into_inner();
                    assert!(
                        errors.is_empty(),
                        "{} ({starts:?}, adapters {adapters}): {errors:#?}",
                        file.display()
                    );
                }
            }
        }
        assert!(
            paired.get() > 100,
            "completions with a start: {}",
            paired.get()
        );
    }

    /// A writer the test can read after the run (the diagnostics).
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Output, diagnostics and report of one conversion.
    fn run(cfg: &Config, input: &[u8], huge: usize) -> (Vec<u8>, Vec<u8>, Report) {
        let err = Shared::default();
        let mut diag = Diag::new(Box::new(err.clone()));
        let mut out = Vec::new();
        let report = convert_detaching(cfg, input, &mut out, &mut diag, huge, true).unwrap();
        drop(diag);
        let err = err.0.borrow().clone();
        (out, err, report)
    }

    /// Detaching a huge record changes when its line's memory is given
    /// back, never what is written or in which order: every fixture, with
    /// every record sent the detached way, gives the same output,
    /// diagnostics and report.
    #[test]
    fn detached_records_are_written_in_place() {
        let mut files = Vec::new();
        fixtures(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut files,
        );
        let mut inputs: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|p| (p.display().to_string(), std::fs::read(p).unwrap()))
            .collect();
        assert!(inputs.len() > 10, "the fixtures are there");
        // Bad lines (one right after records of its own line), a join and an
        // array on one input.
        inputs.push((
            "mixed".to_owned(),
            b"not json\n\
              [{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}, {\"type\":\"tool_call\",\"subtype\":\"started\",\"call_id\":\"c1\",\"tool_call\":{\"readToolCall\":{\"args\":{\"path\":\"a\\nb\"}}},\"session_id\":\"s\"} oops]\n\
              {\"type\":\"tool_call\",\"subtype\":\"completed\",\"call_id\":\"c1\",\"tool_call\":{\"readToolCall\":{\"args\":{\"path\":\"a\\nb\"},\"result\":{\"success\":{}}}},\"session_id\":\"s\"}\n\
              {\"type\":\"assistant\",\n\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"c\"}]},\"session_id\":\"s\"}\n\
              {\"type\":\"result\",\"subtype\":\"success\",\"result\":\"c\",\"session_id\":\"s\"}\n"
                .to_vec(),
        ));
        for format in [Format::Events, Format::Text, Format::DocumentsSse] {
            let cfg = Config::new(format).created(0).run_start(0);
            for (name, input) in &inputs {
                let inline = run(&cfg, input, usize::MAX);
                let detached = run(&cfg, input, 0);
                assert_eq!(
                    String::from_utf8_lossy(&detached.0),
                    String::from_utf8_lossy(&inline.0),
                    "{name}, {format:?}: output"
                );
                assert_eq!(
                    String::from_utf8_lossy(&detached.1),
                    String::from_utf8_lossy(&inline.1),
                    "{name}, {format:?}: diagnostics"
                );
                assert_eq!(detached.2, inline.2, "{name}, {format:?}: report");
            }
        }
    }
}
