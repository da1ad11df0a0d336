//! `--output-dir DIR`: one output file per input file, named after it
//! (its path under the directory argument it was found in, or its file
//! name), with the format's extension. An SQLite session store is one
//! input per stored session ([`Input::Stored`]), named
//! `<store name without extension>/<session id>`.
//!
//! Each file is converted by its own pipeline, as if it were the only
//! input (its sessions are numbered from 1), by up to `--jobs` threads at
//! once, into a temporary file beside its output (`.NAME.cstream-PID.tmp`).
//! The main thread then, in input order, writes the file's diagnostics and
//! renames the temporary file to its name: an output exists complete or
//! not at all. A file that cannot be read or written leaves no output (an
//! older one of that name is left alone); a file with bad lines is
//! converted whole, as it is to standard output. After `--strict` stops
//! the run, no later file's output appears.

use std::fs::{self, File};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::Instant;

use super::{Config, Input, Pipeline, Report, one_input, pool};
use crate::diag::{Diag, Message, excerpt};
use crate::dialect::Dialect;
use crate::dialect::archive::FileCounts;
use crate::input::Framer;
use crate::output::Format;
use crate::output::transcript::html::{IndexEntry, write_index};
use crate::transform::Outcomes;
use crate::transform::stats::Stats;

/// Where the outputs go, and each input's name there (without extension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputDir {
    /// The directory.
    pub dir: PathBuf,
    /// Per input, in order: its path under `dir`.
    pub names: Vec<PathBuf>,
}

/// What a worker tells the main thread about one file.
enum Msg {
    Diag(Message),
    Done(Box<Done>),
}

#[derive(Default)]
struct Done {
    bytes_in: u64,
    stats: Option<Stats>,
    outcomes: Outcomes,
    bad_lines: u64,
    /// The file was read, as this dialect.
    read: Option<Option<Dialect>>,
    stop: bool,
    /// The finished temporary file and the name it gets.
    written: Option<(PathBuf, PathBuf)>,
    /// `--since`/`--until`: the sessions the window let through and left out.
    window: (u64, u64),
}

fn shown(p: &Path) -> String {
    excerpt(&p.display().to_string(), usize::MAX)
}

/// The temporary file an output is written to before it gets its name.
fn temporary(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!(".{name}.cstream-{}.tmp", std::process::id()))
}

/// The temporary files being written now: removed by an interrupted run
/// ([`remove_temporaries`]). A file is listed before it is created and
/// taken off the list once renamed or removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    // The list stays right whatever a panicking holder did: each step
    // below is one push or one removal.
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Create the temporary file `tmp`, listed as live.
fn create_temporary(tmp: &Path) -> io::Result<File> {
    let mut live = live();
    let f = File::create(tmp)?;
    live.push(tmp.to_path_buf());
    Ok(f)
}

/// `tmp` is no longer live: renamed to its output, or to be removed.
fn settled(tmp: &Path) {
    live().retain(|p| p != tmp);
}

/// Rename the temporary file `tmp` to `target`, or remove it when that
/// fails (and say why).
fn rename_temporary(tmp: &Path, target: &Path) -> io::Result<()> {
    let renamed = fs::rename(tmp, target);
    if renamed.is_err() {
        let _ = fs::remove_file(tmp);
    }
    settled(tmp);
    renamed
}

/// Remove a temporary file that will not become an output.
fn remove_temporary(tmp: &Path) {
    let _ = fs::remove_file(tmp);
    settled(tmp);
}

/// Remove every temporary file still being written, for a run that is
/// interrupted (the binary's Ctrl-C handler, through `crate::remove_temporaries`): the list stays locked, so no
/// thread creates another before the process exits.
pub fn remove_temporaries() {
    let live = live();
    for tmp in live.iter() {
        let _ = fs::remove_file(tmp);
    }
    // Held until the exit that follows.
    std::mem::forget(live);
}

/// Each input's output path, or why it has none.
fn targets(cfg: &Config, inputs: &[Input], od: &OutputDir) -> Vec<Result<PathBuf, String>> {
    let mut seen = std::collections::HashMap::new();
    inputs
        .iter()
        .zip(&od.names)
        .enumerate()
        .map(|(i, (input, name))| {
            let Some(path) = input.file() else {
                return Err("standard input has no name to write under --output-dir".to_owned());
            };
            let mut target = od.dir.join(name);
            // `x.jsonl.zst` is written as `x.<ext>`, as `x.jsonl` is.
            if target.extension().is_some_and(|e| e == "zst") {
                target.set_extension("");
            }
            let target = target.with_extension(cfg.format.extension());
            if let Some(first) = seen.insert(target.clone(), i) {
                let Some(other) = inputs[first].file() else {
                    unreachable!("only files have targets")
                };
                return Err(format!(
                    "{} is also the output of {}; this file is skipped",
                    shown(&target),
                    shown(other)
                ));
            }
            let same = |a: &Path, b: &Path| {
                matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
            };
            if same(path, &target) {
                return Err(format!(
                    "{} is the input itself; refusing to write over it",
                    shown(&target)
                ));
            }
            Ok(target)
        })
        .collect()
}

/// How many of one file's messages (its warnings, then its end) a worker
/// may send ahead of the main thread before it waits.
const MESSAGES_IN_FLIGHT: usize = 1024;

/// Convert `inputs` into one file each under `od.dir`.
pub(super) fn run(
    cfg: &Config,
    inputs: &[Input],
    od: &OutputDir,
    diag: &mut Diag,
) -> io::Result<Report> {
    let started = Instant::now();
    let targets = targets(cfg, inputs, od);
    let mut total = cfg.stats.then(Stats::default);
    let window = crate::transform::window::WindowCounts {
        since: cfg.window.0,
        until: cfg.window.1,
        ..Default::default()
    };
    let mut files = cfg.files_skipped.map(|skipped| FileCounts {
        skipped,
        ..FileCounts::default()
    });
    let mut outcomes = Outcomes::default();
    let mut stopped = false;
    // The pages written, for the index of an HTML directory: (page, input,
    // its outcomes).
    let mut pages: Vec<(PathBuf, String, Outcomes)> = Vec::new();
    // Files converted ahead of a stop: their outputs do not appear.
    let mut unwanted = |m: Msg| {
        if let Msg::Done(d) = m
            && let Some((tmp, _)) = d.written
        {
            remove_temporary(&tmp);
        }
    };
    let consume = |receivers: &mut pool::Ordered<Msg>| {
        for (input, name) in inputs.iter().zip(&od.names) {
            let Some(rx) = receivers.next() else { break };
            diag.file = input.display_name();
            let Some(done) = play(rx, diag) else {
                // A worker that stopped without finishing panicked; the
                // scope passes its panic on.
                break;
            };
            if let Some((tmp, target)) = &done.written {
                match rename_temporary(tmp, target) {
                    Ok(()) => pages.push((target.clone(), index_name(input, name), done.outcomes)),
                    Err(e) => diag.error(format_args!("{}: {e}", shown(target))),
                }
            }
            if let Some(progress) = &cfg.progress {
                (progress.0)(done.bytes_in);
            }
            if let (Some(t), Some(s)) = (&mut total, &done.stats) {
                t.add(s);
            }
            if let (Some(f), Some(dialect)) = (&mut files, done.read) {
                f.count(dialect);
            }
            diag.bad_lines += done.bad_lines;
            window.passed.set(window.passed.get() + done.window.0);
            window.left_out.set(window.left_out.get() + done.window.1);
            outcomes.sessions += done.outcomes.sessions;
            outcomes.failed += done.outcomes.failed;
            outcomes.incomplete += done.outcomes.incomplete;
            if done.stop {
                stopped = true;
                break;
            }
        }
    };
    let work = |i: usize, input: &Input, tx: SyncSender<Msg>| {
        convert_to(cfg, input, &targets[i], &tx);
    };
    pool::in_order(
        pool::Source::All(inputs),
        cfg.jobs,
        pool::window(cfg.jobs),
        MESSAGES_IN_FLIGHT,
        work,
        consume,
        Some(&mut unwanted),
    );
    if let Some(msg) = window.nothing_passed() {
        diag.note(msg);
    }
    if cfg.format == Format::Html && !stopped && !pages.is_empty() {
        index(&od.dir, &pages, diag);
    }
    diag.finish();
    let stats = total.map(|mut s| {
        s.files = files;
        // The workers' counts came to this run's diagnostics.
        s.not_understood = diag.not_understood_count();
        s.elapsed = started.elapsed();
        s
    });
    if let Some(s) = &stats {
        diag.info(format_args!("stats: {s}"));
    }
    Ok(Report {
        outcomes,
        bad_lines: diag.bad_lines,
        fatal: diag.fatal,
        stopped,
        stats,
    })
}

/// Write one file's diagnostics as they come; its end.
fn play(rx: &Receiver<Msg>, diag: &mut Diag) -> Option<Box<Done>> {
    loop {
        match rx.recv().ok()? {
            Msg::Diag(m) => diag.replay(m),
            Msg::Done(d) => return Some(d),
        }
    }
}

/// Convert one file into a temporary file beside `target`.
fn convert_to(cfg: &Config, input: &Input, target: &Result<PathBuf, String>, tx: &SyncSender<Msg>) {
    let to_main = tx.clone();
    let mut diag = Diag::recording(Box::new(move |m| {
        let _ = to_main.send(Msg::Diag(m));
    }));
    diag.file = input.display_name();
    let mut done = Done::default();
    let end = |done: Done| {
        if let Err(unwanted) = tx.send(Msg::Done(Box::new(done))) {
            // The run stopped before this file.
            if let Msg::Done(d) = unwanted.0
                && let Some((tmp, _)) = d.written
            {
                remove_temporary(&tmp);
            }
        }
    };
    let target = match target {
        Ok(t) => t,
        Err(why) => {
            diag.error(why);
            return end(done);
        }
    };
    let Some(path) = input.file() else {
        unreachable!("standard input has no target")
    };
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            let name = std::mem::take(&mut diag.file);
            diag.error(format_args!("{name}: {e}"));
            return end(done);
        }
    };
    let tmp = temporary(target);
    let made = target
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| create_temporary(&tmp));
    let out = match made {
        Ok(o) => o,
        Err(e) => {
            diag.error(format_args!("{}: {e}", shown(target)));
            return end(done);
        }
    };
    let mut p = Pipeline::new(cfg, BufWriter::with_capacity(64 * 1024, out));
    p.live = crate::input::mapped::regular_len(&f).is_none();
    p.source = Some(path.clone());
    p.stored_session = input.stored_session().map(str::to_owned);
    let mut framer = Framer::new();
    let r = one_input(&mut p, &mut framer, f, &mut diag, false).and_then(|_| p.sink.finish());
    done.read = Some(p.parser.chosen);
    done.bytes_in = framer.bytes_in;
    done.stats = p.stats(&framer, &diag);
    done.outcomes = p.norm.outcomes;
    done.bad_lines = diag.bad_lines;
    done.stop = p.stop;
    // With --since/--until, a file none of whose sessions is in the window
    // gets no output file.
    let empty = p.window.as_ref().is_some_and(|w| w.passed.get() == 0);
    if let Some(w) = &p.window {
        done.window = (w.passed.get(), w.left_out.get());
    }
    // Closes the file.
    drop(p);
    match r {
        Ok(()) if empty => {
            remove_temporary(&tmp);
        }
        Ok(()) => done.written = Some((tmp, target.clone())),
        Err(e) => {
            remove_temporary(&tmp);
            diag.error(format_args!("{}: {e}", shown(target)));
        }
    }
    end(done)
}

/// How the index names an input: as the user named it, under the
/// directory argument it was found in (or by its file name), not by the
/// path this machine reads it from. A stored session is its store's file
/// (under the same directories) and its id.
fn index_name(input: &Input, name: &Path) -> String {
    let rel = match input {
        Input::Stored { db, session } => {
            let store = db.file_name().map_or_else(|| db.clone(), PathBuf::from);
            let store = name
                .parent()
                .and_then(Path::parent)
                .map_or_else(|| store.clone(), |d| d.join(&store));
            format!("{} (session {session})", store.display())
        }
        _ => name.display().to_string(),
    };
    excerpt(&rel, usize::MAX)
}

/// `DIR/index.html` for a directory of HTML pages: a link to each page
/// written, in input order, written like the pages (temporary file, then
/// rename). An input whose own page is `index.html` keeps it: then the
/// index is not written, and a warning says so.
fn index(dir: &Path, pages: &[(PathBuf, String, Outcomes)], diag: &mut Diag) {
    let target = dir.join("index.html");
    diag.file = String::new();
    if pages.iter().any(|(p, ..)| *p == target) {
        diag.info(format_args!(
            "{}: a page has that name, so the index of the pages is not written",
            shown(&target)
        ));
        return;
    }
    let hrefs: Vec<String> = pages
        .iter()
        .map(|(p, ..)| {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            let parts: Vec<_> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            parts.join("/")
        })
        .collect();
    let entries: Vec<IndexEntry<'_>> = pages
        .iter()
        .zip(&hrefs)
        .map(|((_, input, o), href)| IndexEntry {
            href,
            input,
            sessions: o.sessions,
            failed: o.failed,
            incomplete: o.incomplete,
        })
        .collect();
    let tmp = temporary(&target);
    let title = format!("cstream: {}", dir.display());
    let written = create_temporary(&tmp).and_then(|f| {
        let mut w = BufWriter::new(f);
        write_index(&mut w, &title, &entries)?;
        io::Write::flush(&mut w)
    });
    let renamed = match written {
        Ok(()) => rename_temporary(&tmp, &target),
        Err(e) => {
            remove_temporary(&tmp);
            Err(e)
        }
    };
    if let Err(e) = renamed {
        diag.error(format_args!("{}: {e}", shown(&target)));
    }
}
