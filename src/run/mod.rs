//! The pipeline: inputs → framing → dialect parser → normalizer → sink.
//!
//! [`run`] processes several inputs the way `cat` does (a missing file is
//! reported and skipped); [`convert`] is the single-reader form for embedding
//! cstream in another program (a proxy) or for tests.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use crate::diag::{Diag, Warn};
use crate::dialect::archive::FileCounts;
use crate::dialect::{AutoParser, Dialect, Item};
use crate::event::{Event, Kind};
use crate::event::{Session, Sink};
use crate::input::{FrameError, Framer, HUGE_RECORD_BYTES, Handler, Parsed};
use crate::output::{self, Format, OutputOptions, ReasoningField, ToolCallMode};
use crate::transform::coalesce::{Coalesce, CoalesceMode};
use crate::transform::redact::{Redact, RedactCounts, Redactor};
use crate::transform::stats::{Counters, CountingSink, CountingWriter, Stats};
use crate::transform::summary::{RunSummary, SummarySink};
use crate::transform::truncate::Truncate;
use crate::transform::{NormalizeOptions, Normalizer, Outcomes};

mod jobs;
mod outdir;
mod pool;

pub(crate) use outdir::OutputDir;
#[cfg(feature = "cli")]
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

/// Everything that decides what a run does: the output format, the input
/// dialect, and the options of the command line that are not about files.
///
/// Made with [`Config::new`] (or `Config::default()`, the `text` format) and
/// the methods below, each named after the command-line option it stands
/// for:
///
/// ```
/// use cstream::{Config, Dialect, Format};
///
/// let config = Config::new(Format::Documents)
///     .from(Dialect::Claude)
///     .compact(true)
///     .model("my-model");
/// assert_eq!(config.format(), Format::Documents);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Output format.
    pub(crate) format: Format,
    /// Input dialect, or `None` to detect it per input.
    pub(crate) from: Option<Dialect>,
    /// Dedupe and related normalization switches.
    pub(crate) normalize: NormalizeOptions,
    /// How the sink writes.
    pub(crate) output: OutputOptions,
    /// Stop at the first line that is not valid input.
    pub(crate) strict: bool,
    /// Flush after every input record, even when more input is waiting.
    pub(crate) line_buffered: bool,
    /// `--truncate-shell`: cap each call's shell output at this many bytes.
    pub(crate) truncate_shell: Option<usize>,
    /// `--keep-images`: leave base64 images in the payloads.
    pub(crate) keep_images: bool,
    /// `--since`/`--until`: sessions that started in [since, until), epoch ms.
    pub(crate) window: (Option<i64>, Option<i64>),
    /// `--coalesce`: merge deltas before writing (`--to events`).
    pub(crate) coalesce: Option<CoalesceMode>,
    /// `--redact` / `--no-redact`, or neither (on for the transcripts and
    /// the summary only).
    pub(crate) redact: Redaction,
    /// `--stats`: count what the run reads and writes, and print the
    /// summary line on the diagnostics stream at the end.
    pub(crate) stats: bool,
    /// `-e`: name each session that failed or ended without a result on the
    /// diagnostics stream, with the agent's own error.
    pub(crate) report_sessions: bool,
    /// `--summary`: append a Markdown summary of the run to this file.
    pub(crate) summary: Option<PathBuf>,
    /// `--outputs`: append `key=value` lines (`$GITHUB_OUTPUT`) to this file.
    pub(crate) outputs: Option<PathBuf>,
    /// A directory was walked, skipping this many files: `--stats` counts
    /// the files read, per dialect.
    pub(crate) files_skipped: Option<u64>,
    /// `--jobs`: read this many files at once (0 or 1: one at a time).
    pub(crate) jobs: usize,
    /// `--output-dir`: one output file per input, there.
    pub(crate) output_dir: Option<OutputDir>,
    /// Per input, in order, the name `--summary` shows for it: its path
    /// under the directory argument it was found in, or its file name
    /// (empty: each input's [`Input::short_name`]).
    pub(crate) input_names: Vec<String>,
    /// Told after each input file, with the bytes read from it.
    pub(crate) progress: Option<Progress>,
}

/// What the main thread calls after each input file is written, with the
/// bytes read from it (the command line's progress bar).
#[derive(Clone)]
pub(crate) struct Progress(pub(crate) std::sync::Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// Whether secrets are replaced (docs/redact.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Redaction {
    /// Neither `--redact` nor `--no-redact`: on for the formats people
    /// share (`markdown`, `html`, `messages`, `otlp-json`) and for the `--summary`/`--outputs`
    /// files, off elsewhere.
    #[default]
    Default,
    /// `--redact`: everywhere, with these user patterns besides the
    /// built-in ones (valid regexes: the command line checks them).
    On(Vec<String>),
    /// `--no-redact`: nowhere.
    Off,
}

impl Redaction {
    /// The user patterns when the output (and the warnings that quote the
    /// input) of `format` is redacted; `None` when it is not.
    pub(crate) fn output(&self, format: Format) -> Option<&[String]> {
        match self {
            Redaction::On(user) => Some(user),
            Redaction::Off => None,
            Redaction::Default => matches!(
                format,
                Format::Markdown
                    | Format::Html
                    | Format::Messages
                    | Format::Atif
                    | Format::OtlpJson
            )
            .then_some(&[][..]),
        }
    }

    /// The user patterns when the `--summary`/`--outputs` files are redacted.
    pub(crate) fn summary(&self) -> Option<&[String]> {
        match self {
            Redaction::On(user) => Some(user),
            Redaction::Off => None,
            Redaction::Default => Some(&[]),
        }
    }
}

/// The builder: one method per option, each returning the changed config.
/// The defaults are the command line's without flags, for output that is not
/// a terminal: no colour, no width, every line of shell output.
impl Config {
    /// The default options, writing `format` (`--to`).
    pub fn new(format: Format) -> Config {
        Config {
            format,
            ..Config::default()
        }
    }

    /// The output format (`--to`).
    pub fn format(&self) -> Format {
        self.format
    }

    /// `true`: replace secrets in every format (`--redact`); `false`: in
    /// none, not even the transcripts and the summary (`--no-redact`).
    /// Without either, `markdown`, `html` and the summary files are redacted.
    #[must_use]
    pub fn redact(mut self, on: bool) -> Config {
        self.redact = if on {
            Redaction::On(Vec::new())
        } else {
            Redaction::Off
        };
        self
    }

    /// Replace secrets in every format with the built-in patterns and these
    /// regular expressions besides (`--redact-pattern`). `Err` names the
    /// first pattern that is not a valid regex.
    pub fn redact_patterns(mut self, patterns: Vec<String>) -> Result<Config, String> {
        for p in &patterns {
            regex::Regex::new(p).map_err(|e| format!("{p}: {e}"))?;
        }
        self.redact = Redaction::On(patterns);
        Ok(self)
    }

    /// Read every input as `dialect` (`--from`) instead of detecting it from
    /// each input's first lines.
    #[must_use]
    pub fn from(mut self, dialect: Dialect) -> Config {
        self.from = Some(dialect);
        self
    }

    /// `false`: keep recap text and cumulative tool-output snapshots exactly
    /// as they came (`--no-dedupe`). On by default.
    #[must_use]
    pub fn dedupe(mut self, on: bool) -> Config {
        self.normalize.dedupe = on;
        self
    }

    /// Stop at the first line that is not valid input (`--strict`).
    #[must_use]
    pub fn strict(mut self, on: bool) -> Config {
        self.strict = on;
        self
    }

    /// Flush the output after every input line, even when more input is
    /// waiting (`--line-buffered`).
    #[must_use]
    pub fn line_buffered(mut self, on: bool) -> Config {
        self.line_buffered = on;
        self
    }

    /// Keep base64 images (a Claude image block, a Codex `input_image`, a
    /// Gemini `inlineData` part) in the payloads, instead of a placeholder
    /// with their type and size (`--keep-images`).
    #[must_use]
    pub fn keep_images(mut self, on: bool) -> Config {
        self.keep_images = on;
        self
    }

    /// Only the sessions that started at or after `since` and before
    /// `until` (epoch milliseconds; `--since`, `--until`). A session whose
    /// start cannot be dated is kept.
    #[must_use]
    pub fn window(mut self, since: Option<i64>, until: Option<i64>) -> Config {
        self.window = (since, until);
        self
    }

    /// Cap each tool call's shell output at `bytes` (`--truncate-shell`).
    #[must_use]
    pub fn truncate_shell(mut self, bytes: usize) -> Config {
        self.truncate_shell = Some(bytes);
        self
    }

    /// Merge deltas into whole messages and tool calls before writing
    /// (`--coalesce`; the `events` format).
    #[must_use]
    pub fn coalesce(mut self, mode: CoalesceMode) -> Config {
        self.coalesce = Some(mode);
        self
    }

    /// Colour the `text` format (`--color always`).
    #[must_use]
    pub fn color(mut self, on: bool) -> Config {
        self.output.color = on;
        self
    }

    /// `text`: cut long lines at this many columns (what a terminal's width
    /// gives on the command line).
    #[must_use]
    pub fn width(mut self, columns: usize) -> Config {
        self.output.width = Some(columns);
        self
    }

    /// `text`: show the last `lines` lines of the shell output that arrives
    /// with a call's completion (`--shell-lines N`; default: all).
    #[must_use]
    pub fn shell_lines(mut self, lines: usize) -> Config {
        self.output.shell_lines = Some(lines);
        self
    }

    /// `text`: leave thinking out (`--no-thinking`).
    #[must_use]
    pub fn no_thinking(mut self, on: bool) -> Config {
        self.output.no_thinking = on;
        self
    }

    /// The conversation only: no session header or final line, no unknown
    /// events or invalid input lines in `text`; warnings only as one count
    /// per kind (`-q`).
    #[must_use]
    pub fn quiet(mut self, on: bool) -> Config {
        self.output.quiet = on;
        self
    }

    /// OpenAI formats: the field thinking goes to (`--reasoning-field`).
    #[must_use]
    pub fn reasoning_field(mut self, field: ReasoningField) -> Config {
        self.output.reasoning_field = field;
        self
    }

    /// OpenAI formats: how tool calls the agent already ran appear
    /// (`--tool-calls`).
    #[must_use]
    pub fn tool_calls(mut self, mode: ToolCallMode) -> Config {
        self.output.tool_calls = mode;
        self
    }

    /// `openai-sse`: write the usage chunk after the finish chunk, when
    /// usage is known (`--include-usage`).
    #[must_use]
    pub fn include_usage(mut self, on: bool) -> Config {
        self.output.include_usage = on;
        self
    }

    /// OpenAI and documents formats: the model name to write (`--model`).
    #[must_use]
    pub fn model(mut self, name: impl Into<String>) -> Config {
        self.output.model = Some(name.into());
        self
    }

    /// OpenAI and documents formats: the response id to write (`--id`).
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Config {
        self.output.id = Some(id.into());
        self
    }

    /// OpenAI and documents formats: the creation time to write, Unix
    /// seconds (`--created`).
    #[must_use]
    pub fn created(mut self, unix_seconds: i64) -> Config {
        self.output.created = Some(unix_seconds);
        self
    }

    /// One-line JSON for `openai-json` and `documents` (`-c`).
    #[must_use]
    pub fn compact(mut self, on: bool) -> Config {
        self.output.compact = on;
        self
    }

    /// Documents formats: include thinking documents (`--thinking`).
    #[must_use]
    pub fn thinking(mut self, on: bool) -> Config {
        self.output.thinking = on;
        self
    }

    /// `usage`: add the sessions up by day, week, month, model, agent or
    /// project (`--group`).
    #[must_use]
    pub fn group(mut self, by: crate::output::usage::Group) -> Config {
        self.output.usage.group = Some(by);
        self
    }

    /// `usage`: estimate the costs agents did not report with these prices
    /// instead of the bundled ones (`--prices`).
    #[must_use]
    pub fn prices(mut self, prices: crate::output::usage::Prices) -> Config {
        self.output.usage.prices = Some(std::sync::Arc::new(prices));
        self
    }

    /// The time the run started, Unix seconds: what the openai and
    /// documents formats write as `created` for a session that gave no
    /// timestamp before its first output (default: the clock, read when the
    /// conversion starts). Pinned, the output does not depend on the clock.
    #[must_use]
    pub fn run_start(mut self, unix_seconds: i64) -> Config {
        self.output.run_start = Some(unix_seconds);
        self
    }

    /// This configuration with the run's start pinned: the clock is read
    /// here, once per run, so that every sink of the run (one per file
    /// under `--jobs` and `--output-dir`) writes the same `created`.
    pub(crate) fn pinned(&self) -> std::borrow::Cow<'_, Config> {
        if self.output.run_start.is_some() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut c = self.clone();
        c.output.run_start = Some(crate::time::now_secs());
        std::borrow::Cow::Owned(c)
    }

    /// Count what the run reads and writes, and write the summary line to
    /// the warnings at the end (`--stats`; see
    /// [`convert_with_warnings`](crate::convert_with_warnings)).
    #[must_use]
    pub fn stats(mut self, on: bool) -> Config {
        self.stats = on;
        self
    }

    /// Name each session that failed or ended without a result in the
    /// warnings, with the agent's own error (`-e`).
    #[must_use]
    pub fn report_sessions(mut self, on: bool) -> Config {
        self.report_sessions = on;
        self
    }
}

/// One input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    Path(PathBuf),
    /// A file a directory walk found: converted only when its first block
    /// passes the sniffing rule (`crate::dialect::archive::sniff`), else skipped and
    /// counted. Sniffing as it is opened reads each file once, on the
    /// thread that converts it, instead of reading every file's first block
    /// before the first is converted.
    Found(PathBuf),
    /// One session of a session store (OpenCode's `opencode.db`, or its
    /// storage directory from before v1.2): `--output-dir` writes each
    /// stored session to a file of its own.
    Stored {
        /// The database file, or the storage directory.
        db: PathBuf,
        /// The session's id.
        session: String,
    },
}

impl Input {
    /// The name diagnostics use.
    pub fn display_name(&self) -> String {
        match self {
            Input::Stdin => "-".to_owned(),
            // A file name is untrusted too: it goes into warnings on a
            // terminal, so its control characters are escaped.
            Input::Path(p) | Input::Found(p) => {
                crate::diag::excerpt(&p.display().to_string(), usize::MAX)
            }
            Input::Stored { db, session } => {
                crate::diag::excerpt(&format!("{} (session {session})", db.display()), usize::MAX)
            }
        }
    }

    /// The input's name without the directories it was named with: `-`,
    /// a file's name, a stored session's store and id. What `--summary`
    /// shows when the run was not told the name under its directory
    /// argument (the `input_names` of its `Config`).
    pub fn short_name(&self) -> String {
        let file = |p: &PathBuf| {
            let name = p.file_name().map_or(p.as_os_str(), |n| n);
            crate::diag::excerpt(&name.to_string_lossy(), usize::MAX)
        };
        match self {
            Input::Stdin => "-".to_owned(),
            Input::Path(p) | Input::Found(p) => file(p),
            Input::Stored { db, session } => format!(
                "{} (session {})",
                file(db),
                crate::diag::excerpt(session, usize::MAX)
            ),
        }
    }

    /// The file read, unless it is standard input.
    pub fn file(&self) -> Option<&PathBuf> {
        match self {
            Input::Stdin => None,
            Input::Path(p) | Input::Found(p) | Input::Stored { db: p, .. } => Some(p),
        }
    }

    /// The one stored session read of a session store.
    fn stored_session(&self) -> Option<&str> {
        match self {
            Input::Stored { session, .. } => Some(session),
            _ => None,
        }
    }
}

/// What a run saw: how its sessions ended and whether its input was
/// valid, which decide the exit status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// How sessions ended.
    pub(crate) outcomes: Outcomes,
    /// Lines that were not valid input.
    pub(crate) bad_lines: u64,
    /// A file could not be read (exit status 2).
    pub(crate) fatal: bool,
    /// `--strict` stopped the run.
    pub(crate) stopped: bool,
    /// What the run read and wrote (with [`Config::stats`]).
    pub(crate) stats: Option<Stats>,
}

/// The exit statuses cstream uses; when several apply, the first of
/// `Fatal`, `SessionFailed` (only with `-e`), `BadInput`, `Ok` wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Every line was understood (also: the output pipe was closed early).
    Ok = 0,
    /// Some lines were not valid input, or `--strict` stopped the run.
    BadInput = 1,
    /// A usage error, a file that could not be read, a failed output
    /// write, or an output that is one of the inputs.
    Fatal = 2,
    /// With `-e`: a session reported failure or ended without a result.
    SessionFailed = 3,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

impl Report {
    /// Sessions the run saw.
    pub fn sessions(&self) -> u64 {
        self.outcomes.sessions
    }

    /// Sessions that reported failure (an error result or a fatal error).
    pub fn failed_sessions(&self) -> u64 {
        self.outcomes.failed
    }

    /// Sessions that ended without a result (cut off).
    pub fn incomplete_sessions(&self) -> u64 {
        self.outcomes.incomplete
    }

    /// Input lines that were not valid input.
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// An input could not be read to its end.
    pub fn read_failed(&self) -> bool {
        self.fatal
    }

    /// [`Config::strict`] stopped the run at a line that was not valid input.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The exit status the command line gives this run (`exit_status`: the
    /// `-e` flag, which makes a failed or cut-off session count). A closed
    /// output pipe, which the command line treats as success, is an `Err`
    /// of the conversion and never gets here.
    pub fn exit(&self, exit_status: bool) -> Exit {
        if self.fatal {
            Exit::Fatal
        } else if exit_status && (self.outcomes.failed > 0 || self.outcomes.incomplete > 0) {
            Exit::SessionFailed
        } else if self.bad_lines > 0 || self.stopped {
            Exit::BadInput
        } else {
            Exit::Ok
        }
    }

    /// [`Report::exit`] as the number the process exits with.
    pub fn exit_code(&self, exit_status: bool) -> u8 {
        self.exit(exit_status) as u8
    }
}

/// The framer's handler: parse, normalize, write.
struct Pipeline<'s> {
    parser: AutoParser,
    norm: Normalizer,
    sink: Box<dyn Sink + 's>,
    strict: bool,
    line_buffered: bool,
    stop: bool,
    /// The format writes one SSE stream per session: warn (once) when a
    /// second session begins, since most clients read only the first.
    warn_sessions: bool,
    /// The input being read may pause (a pipe, a terminal): not a regular file.
    live: bool,
    /// This input has had a record (a JSON line), so the stream has begun.
    begun: bool,
    /// Lines that were not JSON before this input's stream began: an
    /// agent's own notices (stderr captured with stdout). They count as bad
    /// lines only if no stream follows (or with `--strict`).
    notices: u64,
    /// `--stats`: the counting adapters' counters.
    counters: Option<Rc<Counters>>,
    /// `--redact`: matches per kind.
    redacted: Option<RedactCounts>,
    /// The `--since`/`--until` filter's counts, when it is on.
    pub(crate) window: Option<Rc<crate::transform::window::WindowCounts>>,
    started: Instant,
    /// `-e`: report sessions that did not end well.
    report_sessions: bool,
    /// The dialect `--from` forced (`None` with auto-detection).
    forced: Option<Dialect>,
    /// Records of the current input, and those of them that only gave
    /// `unknown` events (counted with a forced dialect, until it is judged).
    records: u64,
    unknown_records: u64,
    /// The current input was checked against the forced dialect.
    dialect_checked: bool,
    /// The items of a huge record, detached from it, each with its line,
    /// and the record's outcome: written by [`Handler::released`].
    held: Vec<(u64, Item<'static>)>,
    held_from: Option<Parsed>,
    /// `--summary`/`--outputs`: what the sessions came to, and the files
    /// it is appended to when the run ends.
    summary: Option<Rc<RefCell<RunSummary>>>,
    summary_file: Option<PathBuf>,
    outputs_file: Option<PathBuf>,
    /// Redacts the `--summary`/`--outputs` text (on unless `--no-redact`):
    /// the events it was made from are redacted only with the transcripts
    /// or `--redact`, and the session header (id, model, directory) never.
    summary_redactor: Option<Redactor>,
    /// Files read per dialect (when a directory was walked).
    files: Option<FileCounts>,
    /// A `--jobs` worker's: session counts and endings go on its tape.
    recorder: Option<jobs::Recorder>,
    /// Records this long or longer are detached ([`HUGE_RECORD_BYTES`];
    /// tests lower it to send every record that way).
    huge: usize,
    /// The file the next input is read from (`None`: standard input or a
    /// reader): saved sessions find their side files beside it.
    source: Option<PathBuf>,
    /// Of a session store, the one session to read (`--output-dir`).
    stored_session: Option<String>,
}

impl<'s> Pipeline<'s> {
    /// The pipeline for `cfg`, writing to `out`: normalizer → truncation →
    /// coalescing → the format's sink.
    fn new<W: Write + 's>(cfg: &Config, out: W) -> Self {
        let counters = cfg.stats.then(|| Rc::new(Counters::default()));
        let sink = match &counters {
            // Counted right at the format: events as the format gets them
            // (after truncation and coalescing), bytes as it writes them.
            Some(c) => Box::new(CountingSink::new(
                output::sink(
                    cfg.format,
                    &cfg.output,
                    CountingWriter::new(out, Rc::clone(c)),
                ),
                Rc::clone(c),
            )),
            None => output::sink(cfg.format, &cfg.output, out),
        };
        Pipeline::around(cfg, sink, counters)
    }

    /// The pipeline for `cfg` that hands each event to `f` in place of a
    /// format: normalizer → truncation → coalescing → `f`.
    fn with_callback<F>(cfg: &Config, f: F) -> Self
    where
        F: FnMut(&str, &Event<'_>) -> io::Result<()> + 's,
    {
        let counters = cfg.stats.then(|| Rc::new(Counters::default()));
        let sink: Box<dyn Sink + 's> = match &counters {
            Some(c) => Box::new(CountingSink::new(Box::new(CallbackSink(f)), Rc::clone(c))),
            None => Box::new(CallbackSink(f)),
        };
        Pipeline::around(cfg, sink, counters)
    }

    /// The pipeline for `cfg` in front of `sink` (the format, counted when
    /// `counters` is set): the adapters `cfg` asks for wrap it.
    fn around(cfg: &Config, mut sink: Box<dyn Sink + 's>, counters: Option<Rc<Counters>>) -> Self {
        let started = Instant::now();
        if let Some(mode) = cfg.coalesce {
            sink = Box::new(Coalesce::new(sink, mode));
        }
        if let Some(cap) = cfg.truncate_shell {
            sink = Box::new(Truncate::new(sink, cap));
        }
        // Sees the events as the normalizer made them (redacted only).
        let summary = (cfg.summary.is_some() || cfg.outputs.is_some())
            .then(|| Rc::new(RefCell::new(RunSummary::default())));
        if let Some(st) = &summary {
            sink = Box::new(SummarySink::new(sink, Rc::clone(st)));
        }
        if !cfg.keep_images {
            // Before the summary and every format: no payload carries an image.
            sink = Box::new(crate::transform::images::Images::new(sink));
        }
        // Before the summary and the formats: a session outside the window
        // is not counted anywhere.
        let mut window = None;
        if cfg.window != (None, None) {
            let w = crate::transform::window::Window::new(sink, cfg.window.0, cfg.window.1);
            window = Some(w.counts());
            sink = Box::new(w);
        }
        // Outermost, so that nothing downstream (the summary, coalescing,
        // truncation markers, the format) ever sees a secret.
        let mut redacted = None;
        if let Some(user) = cfg.redact.output(cfg.format) {
            let r = Redactor::new(user).expect("--redact-pattern checked on the command line");
            redacted = Some(r.counter());
            sink = Box::new(Redact::new(sink, r));
        }
        let mut parser = AutoParser::new(cfg.from);
        parser.reads = sink.reads();
        Pipeline {
            parser,
            norm: Normalizer::new(cfg.normalize),
            sink,
            strict: cfg.strict,
            line_buffered: cfg.line_buffered,
            stop: false,
            warn_sessions: cfg.format.is_sse(),
            live: true,
            begun: false,
            notices: 0,
            counters,
            redacted,
            window,
            started,
            report_sessions: cfg.report_sessions,
            forced: cfg.from,
            records: 0,
            unknown_records: 0,
            dialect_checked: false,
            held: Vec::new(),
            held_from: None,
            huge: HUGE_RECORD_BYTES,
            recorder: None,
            files: cfg.files_skipped.map(|skipped| FileCounts {
                skipped,
                ..FileCounts::default()
            }),
            source: None,
            stored_session: None,
            summary,
            summary_file: cfg.summary.clone(),
            outputs_file: cfg.outputs.clone(),
            summary_redactor: (cfg.summary.is_some() || cfg.outputs.is_some())
                .then(|| cfg.redact.summary())
                .flatten()
                .map(|user| {
                    Redactor::new(user).expect("--redact-pattern checked on the command line")
                }),
        }
    }

    /// `--summary`: the sessions from here on come from input `i`.
    fn summary_input(&self, cfg: &Config, inputs: &[Input], i: usize) {
        if let Some(st) = &self.summary {
            let name = match cfg.input_names.get(i) {
                Some(n) => n.clone(),
                None => inputs[i].short_name(),
            };
            st.borrow_mut().file = name;
        }
    }

    /// Report the sessions that ended badly since the last call (with
    /// `-e`), one line each. Called after every record: the check is
    /// inlined, the report is not.
    #[inline]
    fn report_endings(&mut self, diag: &mut Diag) {
        if self.norm.has_ended() {
            self.report_ended(diag);
        }
    }

    #[cold]
    fn report_ended(&mut self, diag: &mut Diag) {
        for e in self.norm.take_ended() {
            if !self.report_sessions {
                continue;
            }
            match &self.recorder {
                Some(r) => r.ended(e),
                None => report_ended_one(&e, diag),
            }
        }
    }

    /// With `--from`: warn once per input, as soon as its first records
    /// show that another dialect wrote them (the detection table says
    /// which). Then the count of unknown records below says nothing more.
    fn wrong_dialect(&mut self, diag: &mut Diag) {
        let (Some(forced), Some(seen)) = (self.forced, self.parser.take_mismatch()) else {
            return;
        };
        self.dialect_checked = true;
        let file = diag.file.clone();
        diag.note(format_args!(
            "{file}: read as {} (--from) but its first records look like {}; \
             without --from the dialect is detected",
            forced.name(),
            seen.name()
        ));
    }

    /// With `--from`: warn once per input when most of its records are
    /// unknown to the dialect (`at_end`: the input is over).
    fn check_dialect(&mut self, diag: &mut Diag, at_end: bool) {
        let Some(dialect) = self.forced else {
            return;
        };
        if self.dialect_checked || self.records == 0 {
            return;
        }
        if !at_end && self.records < DIALECT_CHECK_RECORDS {
            return;
        }
        self.dialect_checked = true;
        if self.unknown_records * 2 > self.records {
            let file = diag.file.clone();
            let name = dialect.name();
            let which = if at_end { "its" } else { "its first" };
            diag.note(format_args!(
                "{file}: {} of {which} {} records are unknown to the {name} reader (--from {name}); \
                 they are kept as unknown events. Without --from the dialect is detected",
                self.unknown_records, self.records
            ));
        }
    }

    /// Count the records the reader did not understand; with `--strict`,
    /// the first of them stops the run (a CI job learns the day a vendor
    /// changes its format).
    #[cold]
    fn drifted(&mut self, drift: Vec<(u64, String, bool)>, diag: &mut Diag) {
        // cstream's own `unknown` events were counted by the run that made them.
        let dialect = match self.parser.chosen {
            Some(Dialect::Events) => return,
            Some(d) => d.name(),
            None => "unknown",
        };
        let own = self.parser.counts_drift();
        for (line, what, said) in drift {
            // A reader that counts its own never has its events counted.
            if own && !said {
                continue;
            }
            if self.strict && !self.stop {
                self.stop = true;
                diag.warn(
                    Warn::Format,
                    line,
                    format_args!(
                        "a record of type {} that the {dialect} reader does not understand; \
                         --strict stops here",
                        crate::diag::excerpt(&format!("{what:?}"), 80)
                    ),
                );
            }
            diag.not_understood(dialect, what, line);
        }
    }

    /// The `--stats` figures so far (None without `--stats`).
    fn stats(&self, framer: &Framer, diag: &Diag) -> Option<Stats> {
        let c = self.counters.as_ref()?;
        let o = &self.norm.outcomes;
        Some(Stats {
            lines: framer.lines_in,
            bytes_in: framer.bytes_in,
            bytes_out: c.bytes_out(),
            skipped: diag.bad_lines,
            sessions: o.sessions,
            failed: o.failed,
            incomplete: o.incomplete,
            events: c.events(),
            redacted: self.redacted.as_ref().map(RedactCounts::nonzero),
            files: self.files.clone(),
            not_understood: diag.not_understood_count(),
            elapsed: self.started.elapsed(),
        })
    }

    /// Tell the normalizer the input's dialect, once known. A session of
    /// cstream's own events read back without its `session_started` came
    /// from an agent nobody named: `unknown`, not `events`.
    fn name_dialect(&mut self) {
        // Once named, an input's dialect stays (after every record).
        if self.norm.has_dialect() {
            return;
        }
        match self.parser.chosen {
            Some(Dialect::Events) => self.norm.set_dialect("unknown"),
            Some(d) => self.norm.set_dialect(d.name()),
            None => {}
        }
    }

    fn check_sessions(&mut self, diag: &mut Diag) {
        if let Some(r) = &self.recorder {
            // Whether it is the run's second session is known when the
            // tape is played.
            return r.sessions(self.norm.outcomes.sessions);
        }
        if self.warn_sessions && self.norm.outcomes.sessions > 1 {
            self.warn_sessions = false;
            let file = diag.file.clone();
            diag.note(format_args!(
                "{file}: a second session begins; writing one SSE stream per session \
                 (most clients read only the first)"
            ));
        }
    }

    /// Write the items of a huge record, detached from it (see `record`).
    #[cold]
    fn release_held(&mut self, diag: &mut Diag) -> io::Result<()> {
        let Some(parsed) = self.held_from.take() else {
            return Ok(());
        };
        let (mut unknown, mut known) = (false, false);
        let judge = self.forced.is_some() && !self.dialect_checked;
        let mut held = std::mem::take(&mut self.held);
        let mut drift = Vec::new();
        for (line, mut item) in held.drain(..) {
            if judge {
                judge_item(&item, &mut unknown, &mut known);
            }
            note_unknown(&item, line, &mut drift);
            drop_impossible_ts(&mut item, line, diag);
            self.norm.line = line;
            self.norm.item(&mut item, &mut *self.sink, diag)?;
        }
        // The emptied list keeps its (small) capacity for the next one.
        self.held = held;
        if !drift.is_empty() {
            self.drifted(drift, diag);
        }
        self.recorded(parsed, unknown && !known, diag)
    }

    /// After a record's items were written: what the pipeline does once per
    /// record (`unknown`: it gave only `unknown` events).
    #[inline(always)]
    fn recorded(&mut self, parsed: Parsed, unknown: bool, diag: &mut Diag) -> io::Result<()> {
        self.name_dialect();
        if parsed == Parsed::Done {
            if !self.begun {
                self.begun = true;
                self.notices = 0;
            }
            // Counted only while a forced dialect is being judged.
            if self.forced.is_some() && !self.dialect_checked {
                self.wrong_dialect(diag);
                self.records += 1;
                self.unknown_records += u64::from(unknown);
                self.check_dialect(diag, false);
            }
        }
        self.report_endings(diag);
        self.check_sessions(diag);
        if self.line_buffered && parsed == Parsed::Done {
            self.sink.flush()?;
        }
        Ok(())
    }
}

/// Name a session that failed or ended without a result (`-e`).
fn report_ended_one(e: &crate::transform::Ended, diag: &mut Diag) {
    let id = crate::diag::excerpt(&e.session_id, 80);
    let error = e.error.as_deref().map(|m| crate::diag::excerpt(m, 300));
    match (e.failed, error) {
        (true, Some(m)) => diag.session(format_args!("session {id} failed: {m}")),
        (true, None) => diag.session(format_args!(
            "session {id} failed (the agent gave no message)"
        )),
        (false, Some(m)) => diag.session(format_args!(
            "session {id} ended without a result; the last error was: {m}"
        )),
        (false, None) => diag.session(format_args!(
            "session {id} ended without a result (cut off?)"
        )),
    }
}

/// Keep the line and type of a record the reader kept as `unknown` (for
/// the drift report, docs/dialects.md#drift).
#[inline(always)]
fn note_unknown(item: &Item<'_>, line: u64, drift: &mut Vec<(u64, String, bool)>) {
    match item {
        Item::Event(Event {
            kind: Kind::Unknown { raw },
            ..
        }) => drift.push((line, crate::dialect::record_kind(raw.get()), false)),
        Item::NotUnderstood(what) => drift.push((line, what.to_string(), true)),
        _ => {}
    }
}

/// Note whether `item` is an `unknown` event or a known one (for the check
/// of a forced dialect).
fn judge_item(item: &Item<'_>, unknown: &mut bool, known: &mut bool) {
    match item {
        Item::Event(Event {
            kind: Kind::Unknown { .. },
            ..
        }) => *unknown = true,
        Item::Event(_) => *known = true,
        _ => {}
    }
}

impl Handler for Pipeline<'_> {
    fn stream_member(&mut self, head: &[u8], key: &[u8]) -> bool {
        // The dialect in use, else the one the head shows.
        let dialect = self.parser.chosen.or_else(|| {
            match std::str::from_utf8(head).map(crate::dialect::detect_record) {
                Ok(crate::dialect::Detected::Is(d)) => Some(d),
                _ => None,
            }
        });
        let streamed = dialect.is_some_and(|d| d.streams_member(key));
        if streamed {
            self.parser.set_document();
        }
        streamed
    }

    fn record(&mut self, bytes: &[u8], line: u64, diag: &mut Diag) -> io::Result<Parsed> {
        // Whatever an earlier record of this line held goes first.
        self.released(diag)?;
        // One validation of the whole record lets the parsers read it as
        // `str`, where serde_json does not check every string again.
        // Invalid UTF-8 goes back to the framer, which repairs it.
        let Ok(rec) = std::str::from_utf8(bytes) else {
            return Ok(Parsed::Invalid);
        };
        if rec.len() >= self.huge {
            // Detached from the record and written once the framer has
            // given its buffer back: a text that had escapes was unescaped
            // into a copy of its own, and the outputs copy it once more
            // (documents keep the content for `finalContent`), so the line,
            // that copy and the outputs' would otherwise be held at once.
            let held = &mut self.held;
            let parsed = self.parser.parse(rec, line, &mut |line, item| {
                held.push((line, std::mem::replace(item, Item::Verbatim).into_owned()));
                Ok(())
            })?;
            self.held_from = Some(parsed);
            return Ok(parsed);
        }
        let norm = &mut self.norm;
        let sink = &mut *self.sink;
        let (mut unknown, mut known) = (false, false);
        // Only a forced dialect's first records are judged (check_dialect):
        // the common path does not look at the items at all.
        let judge = self.forced.is_some() && !self.dialect_checked;
        // Each item comes with the line of its record: a record detection
        // kept until a later one told the dialect is not this one.
        // Items come by reference: an event is not copied on its way.
        let mut drift = Vec::new();
        let parsed = self.parser.parse(rec, line, &mut |line, item| {
            if judge {
                judge_item(item, &mut unknown, &mut known);
            }
            note_unknown(item, line, &mut drift);
            drop_impossible_ts(item, line, diag);
            norm.line = line;
            norm.item(item, sink, diag)
        })?;
        if !drift.is_empty() {
            self.drifted(drift, diag);
        }
        self.recorded(parsed, unknown && !known, diag)?;
        Ok(parsed)
    }

    /// Called for every record: the check is inlined, the work is not.
    #[inline]
    fn released(&mut self, diag: &mut Diag) -> io::Result<()> {
        if self.held_from.is_none() {
            return Ok(());
        }
        self.release_held(diag)
    }

    fn bad_line(&mut self, text: &str, line: u64, diag: &mut Diag) -> io::Result<()> {
        // What a record before it on this line held goes first.
        self.released(diag)?;
        let cut = crate::strings::floor_char_boundary(text, ERROR_LINE_BYTES);
        let ev = Event::new(Kind::Error {
            message: text[..cut].into(),
            fatal: false,
            source: Some("stdout".into()),
        });
        self.norm.line = line;
        self.norm
            .item(&mut Item::Event(ev), &mut *self.sink, diag)?;
        self.report_endings(diag);
        self.check_sessions(diag);
        if self.strict {
            self.stop = true;
        } else if !self.begun {
            // Warned about already; whether it is a bad line (exit 1)
            // depends on whether a stream follows it: see `end_input`.
            diag.bad_lines -= 1;
            self.notices += 1;
        }
        if self.line_buffered {
            self.sink.flush()?;
        }
        Ok(())
    }

    fn idle(&mut self) -> io::Result<()> {
        debug_assert!(
            self.held_from.is_none(),
            "the framer releases every line before it reads on"
        );
        // A regular file pauses only between read blocks, where nothing is
        // waited for: the items before its init stay held for the init.
        if self.live {
            self.norm.idle(&mut *self.sink)?;
        }
        self.sink.idle()
    }

    fn stop(&self) -> bool {
        // A file of an agent cstream does not read is not read on.
        self.stop || self.parser.foreign().is_some()
    }
}

/// A timestamp beyond year 9999 or before year 0 is no time an agent wrote
/// down: no date format can carry it (documents' `created` would not be
/// RFC 3339), so it is dropped, with a warning, as if the line had none.
fn drop_impossible_ts(item: &mut Item<'_>, line: u64, diag: &mut Diag) {
    if let Some(ts) = item.ts_mut()
        && let Some(ms) = *ts
        && !crate::time::TS_RANGE_MS.contains(&ms)
    {
        *ts = None;
        diag.warn(
            Warn::Format,
            line,
            format_args!("timestamp {ms} ms is outside years 0000-9999; ignored"),
        );
    }
}

/// Convert `inputs` in order, writing to `out` and reporting on `diag`.
///
/// Returns `Err` only when writing the output fails (the run stops there; a
/// `BrokenPipe` means the reader went away). Unreadable inputs are reported
/// on `diag` and skipped.
#[cfg(feature = "cli")]
pub fn run<W: Write>(
    cfg: &Config,
    inputs: &[Input],
    out: W,
    diag: &mut Diag,
) -> io::Result<Report> {
    run_with_stdin(cfg, inputs, io::stdin().lock(), out, diag)
}

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
    diag.quiet |= cfg.output.quiet;
    diag.shared_terminal = cfg.output.shared_terminal.clone();
    diag.redact = warnings_redactor(cfg);
    if let Some(od) = &cfg.output_dir {
        return outdir::run(cfg, inputs, od, diag);
    }
    if jobs::parallel(cfg, inputs) {
        return jobs::run(cfg, inputs, out, diag);
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
                    one_input(&mut p, &mut framer, &mut stdin, diag, false)?;
                }
                Input::Path(path) | Input::Found(path) | Input::Stored { db: path, .. } => {
                    match File::open(path) {
                        Ok(f) => {
                            // A FIFO or `<(tail -f …)` is live; a regular file is not.
                            p.live = !f.metadata().is_ok_and(|m| m.is_file());
                            p.source = Some(path.clone());
                            p.stored_session = input.stored_session().map(str::to_owned);
                            let before = framer.bytes_in;
                            let sniff = matches!(input, Input::Found(_));
                            one_input(&mut p, &mut framer, f, diag, sniff)?;
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

/// Read one input through `p`. `sniff`: a walked file ([`Input::Found`]),
/// read only if its first block passes the sniffing rule. `Ok(false)`: it
/// did not, and nothing of it was read (counted as skipped).
fn one_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    mut reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> io::Result<bool> {
    p.parser.reset(p.source.as_deref());
    p.begun = false;
    p.notices = 0;
    p.records = 0;
    p.unknown_records = 0;
    p.dialect_checked = false;
    let storage = p.source.as_deref().and_then(storage_of);
    let framed = match storage {
        Some((root, only)) => storage_input(p, framer, &root, only, diag),
        None => match first_block(&mut reader, p.live) {
            Err(e) => Err(FrameError::Read(e)),
            Ok(first) if crate::input::zstd::is_zstd(&first) => {
                match compressed_input(p, framer, first, reader, diag, sniff) {
                    Some(r) => r,
                    None => return Ok(false),
                }
            }
            Ok(first) if crate::dialect::opencode::is_sqlite(&first) => {
                sqlite_input(p, framer, diag)
            }
            Ok(first) => match plain_input(p, framer, first, reader, diag, sniff) {
                Some(r) => r,
                None => return Ok(false),
            },
        },
    };
    match framed {
        Ok(()) => {}
        Err(FrameError::Read(e)) => {
            let file = diag.file.clone();
            diag.error(format_args!("{file}: {e}"));
        }
        Err(FrameError::Write(e)) => return Err(e),
    }
    {
        // Records a parser still holds (undecided ones, a failure message
        // waiting for its repeat) belong to this input.
        let norm = &mut p.norm;
        let sink = &mut *p.sink;
        let mut drift = Vec::new();
        p.parser.finish(&mut |line, item| {
            note_unknown(item, line, &mut drift);
            drop_impossible_ts(item, line, diag);
            norm.line = line;
            norm.item(item, sink, diag)
        })?;
        if !drift.is_empty() {
            p.drifted(drift, diag);
        }
    }
    if let Some((agent, line)) = p.parser.foreign() {
        not_read(agent, line, diag);
    }
    if let Some(line) = p.parser.guessed_at() {
        diag.warn(
            Warn::Format,
            line,
            "could not tell which agent wrote this input; reading it as cursor-agent (use --from to say)",
        );
    }
    p.check_dialect(diag, true);
    // Lines that were not JSON and no stream after them: bad input after all.
    diag.bad_lines += std::mem::take(&mut p.notices);
    // `--from` names the dialect of an input that had no records at all.
    p.name_dialect();
    p.norm.end_input(&mut *p.sink, diag)?;
    p.report_endings(diag);
    p.check_sessions(diag);
    if let Some(files) = &mut p.files {
        files.count(p.parser.chosen);
    }
    Ok(true)
}

/// Skip an input of an agent cstream does not read, as a binary one is
/// (exit status 1): reading it as another agent would make nonsense of it.
fn not_read(agent: &str, line: u64, diag: &mut Diag) {
    diag.bad_lines += 1;
    diag.warn(
        Warn::Format,
        line,
        format_args!(
            "not a format cstream reads: this looks like {agent}; skipping this input \
             (docs/dialects.md#not-a-format-cstream-reads)"
        ),
    );
}

/// Frame an input whose first block is `first` (and the rest `reader`):
/// skipped unread when it is binary, or when it is a walked file (`sniff`)
/// that is not a session (`None`: counted as skipped).
fn plain_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    mut first: Vec<u8>,
    mut reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    let mut rest = Vec::new();
    if sniff && !found_session(&first, &mut reader, &mut rest) {
        // Not a session: skipped and counted, as if the walk had not
        // listed it.
        if let Some(files) = &mut p.files {
            files.skipped += 1;
        }
        let file = diag.file.clone();
        diag.skipped_file(file, NOT_AGENT_OUTPUT);
        return None;
    }
    if p.parser.detecting()
        && let Some(agent) = crate::dialect::foreign::sniff_text(&first)
    {
        not_read(agent, 1, diag);
        return Some(Ok(()));
    }
    Some(match memchr::memchr(0, &first) {
        // Not valid input: counted like a bad line (exit status 1), and
        // nothing of it is read; it ends like an input without events
        // (a session without a result), so every format still gives
        // one well-formed, empty session for it.
        Some(at) => {
            let line = 1 + memchr::memchr_iter(b'\n', &first[..at]).count() as u64;
            diag.bad_lines += 1;
            diag.warn(
                Warn::NotJson,
                line,
                format_args!("binary data (a NUL byte at offset {at}); skipping this input"),
            );
            Ok(())
        }
        None => {
            first.append(&mut rest);
            framer.run(io::Cursor::new(first).chain(reader), p, diag)
        }
    })
}

/// A zstd-compressed input (`crate::input::zstd`): decompressed as it is
/// read, and from then on read as [`plain_input`] reads any other (its
/// first block sniffed, its lines framed). A decompression error is a read
/// error naming the file, after the records before it.
#[cfg(feature = "zstd")]
fn compressed_input<R: Read>(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    first: Vec<u8>,
    reader: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    let source = io::BufReader::with_capacity(
        crate::input::READ_BUFFER_BYTES,
        io::Cursor::new(first).chain(reader),
    );
    let mut decoded = crate::input::zstd::Decompress::new(source);
    match first_block(&mut decoded, p.live) {
        Err(e) => Some(Err(FrameError::Read(e))),
        Ok(first) => plain_input(p, framer, first, decoded, diag, sniff),
    }
}

/// Without the `zstd` feature a compressed input is reported and skipped
/// (a walked one is named in the one line of the files skipped).
#[cfg(not(feature = "zstd"))]
fn compressed_input<R: Read>(
    p: &mut Pipeline<'_>,
    _: &mut Framer,
    _: Vec<u8>,
    _: R,
    diag: &mut Diag,
    sniff: bool,
) -> Option<Result<(), FrameError>> {
    if sniff {
        if let Some(files) = &mut p.files {
            files.skipped += 1;
        }
        let file = diag.file.clone();
        diag.skipped_file(file, "zstd-compressed, and this build reads none");
        return None;
    }
    diag.bad_lines += 1;
    diag.warn(
        Warn::NotJson,
        1,
        "zstd-compressed input, and this build reads none (cargo feature `zstd`); skipping this input",
    );
    Some(Ok(()))
}

/// An SQLite database (OpenCode's session store): its sessions read as
/// records by `crate::dialect::opencode::db`, framed like any input. What
/// cannot be read of it is an error naming the file; the sessions read
/// before that are kept.
#[cfg(feature = "sqlite")]
fn sqlite_input(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    let Some(path) = p.source.clone() else {
        let file = diag.file.clone();
        diag.error(format_args!(
            "{file}: an SQLite database can only be read from a file, not a pipe; skipped"
        ));
        return Ok(());
    };
    let only = p.stored_session.clone();
    let mut records = crate::dialect::opencode::db::Records::open(&path, only);
    let r = framer.run(&mut records, p, diag);
    if let Err(e) = records.finish() {
        let file = diag.file.clone();
        diag.error(format_args!("{file}: {e}"));
    }
    r
}

/// OpenCode's storage directory (before v1.2) and the one session to read
/// of it, when `path` is that directory or one of its session files.
fn storage_of(path: &Path) -> Option<(PathBuf, Option<String>)> {
    use crate::dialect::opencode::storage;
    if path.is_dir() {
        return storage::is_root(path).then(|| (path.to_path_buf(), None));
    }
    storage::session_file(path).map(|(root, id)| (root, Some(id)))
}

/// OpenCode's storage directory: its sessions read as records by
/// `crate::dialect::opencode::storage`, framed like any input. Each file
/// that is damaged or dangling is a warning naming it (at the record it
/// belongs with); the rest is read.
fn storage_input(
    p: &mut Pipeline<'_>,
    framer: &mut Framer,
    root: &Path,
    only: Option<String>,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    // A directory read as a whole, however it was opened.
    p.live = false;
    let only = p.stored_session.clone().or(only);
    let mut records = match crate::dialect::opencode::storage::Records::open(root, only.as_deref())
    {
        Ok(r) => r,
        Err(e) => return Err(FrameError::Read(e)),
    };
    let r = framer.run(&mut records, p, diag);
    for problem in records.problems() {
        if problem.lost {
            diag.bad_lines += 1;
        }
        diag.warn(Warn::Format, problem.line, problem.message);
    }
    r
}

/// Built without the `sqlite` feature: an SQLite database is reported and
/// skipped.
#[cfg(not(feature = "sqlite"))]
fn sqlite_input(
    _p: &mut Pipeline<'_>,
    _framer: &mut Framer,
    diag: &mut Diag,
) -> Result<(), FrameError> {
    let file = diag.file.clone();
    diag.error(format_args!(
        "{file}: an SQLite database, and this build reads none (the `sqlite` feature is off); skipped"
    ));
    Ok(())
}

/// Whether a walked file whose first block is `first` is a session: the
/// sniffing rule wants to know whether the file goes on past the block, so
/// one byte more is read when the block is full (kept in `rest`).
fn found_session<R: Read>(first: &[u8], reader: &mut R, rest: &mut Vec<u8>) -> bool {
    let whole = first.len() < BINARY_SNIFF_BYTES || {
        // A read error here shows when the file is read on.
        let _ = reader.by_ref().take(1).read_to_end(rest);
        rest.is_empty()
    };
    // Another agent's file is opened, to be said to be one.
    !matches!(
        crate::dialect::archive::sniff(first, whole),
        crate::dialect::archive::Sniff::Skip(_)
    )
}

/// The first block of an input: for a live stream, one read of up to
/// [`BINARY_SNIFF_BYTES`] (retried when interrupted), which never waits
/// for more than the first bytes it has to give; for a whole input, reads
/// until the block is full or the input ends, so that how the reads fall
/// does not change what is sniffed.
fn first_block<R: Read>(reader: &mut R, live: bool) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; BINARY_SNIFF_BYTES];
    let mut filled = 0;
    loop {
        match reader.read(&mut buf[filled..]) {
            Ok(n) => {
                filled += n;
                if live || n == 0 || filled == buf.len() {
                    buf.truncate(filled);
                    return Ok(buf);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// End the run: finish the output (unless writing already failed), print
/// the warning counts and the `--stats` line, and make the report.
fn finish(
    mut p: Pipeline<'_>,
    framer: &Framer,
    read: io::Result<()>,
    diag: &mut Diag,
) -> io::Result<Report> {
    let r = read.and_then(|()| p.sink.finish());
    // Also after a failed write: CI wants the verdict all the same.
    if let Some(st) = &p.summary {
        let mut st = st.borrow_mut();
        st.end_session();
        st.fold_saved();
        st.not_understood = diag
            .drift()
            .map(|(d, w, n)| (d.to_owned(), w.to_owned(), n.records))
            .collect();
        let redact = |text: String| match &p.summary_redactor {
            Some(r) => r.redact(&text).unwrap_or(text),
            None => text,
        };
        for (file, text) in [
            (
                &p.summary_file,
                p.summary_file.as_ref().map(|_| st.markdown(&redact)),
            ),
            (
                &p.outputs_file,
                p.outputs_file.as_ref().map(|_| redact(st.outputs())),
            ),
        ] {
            if let (Some(file), Some(text)) = (file, text)
                && let Err(e) = append(file, &text)
            {
                diag.error(format_args!("{}: {e}", file.display()));
            }
        }
    }
    if let Some(msg) = p.window.as_ref().and_then(|w| w.nothing_passed()) {
        diag.note(msg);
    }
    diag.finish();
    let stats = p.stats(framer, diag);
    if let Some(s) = &stats {
        // Also after a failed write (`cstream --stats … | head`): what was
        // done until then is still worth knowing.
        diag.info(format_args!("stats: {s}"));
    }
    r.map(|()| Report {
        outcomes: p.norm.outcomes,
        bad_lines: diag.bad_lines,
        fatal: diag.fatal,
        stopped: p.stop,
        stats,
    })
}

/// Append `text` to `file` (created if missing), as `$GITHUB_STEP_SUMMARY`
/// and `$GITHUB_OUTPUT` expect: other steps write there too.
fn append(file: &std::path::Path, text: &str) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::event::{Session, Starts, ToolStart};
    use crate::transform::stats::CountingSink;

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
            let cfg = Config {
                format,
                output: OutputOptions {
                    created: Some(0),
                    run_start: Some(0),
                    ..OutputOptions::default()
                },
                ..Config::default()
            };
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
