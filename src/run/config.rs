//! What a run is asked to do: [`Config`] and its builder, one method per
//! command-line option.

use std::path::PathBuf;

use super::OutputDir;
use crate::dialect::Dialect;
use crate::output::{Format, OutputOptions, ReasoningField, ToolCallMode};
use crate::transform::NormalizeOptions;
use crate::transform::coalesce::CoalesceMode;

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
    /// `--no-mmap`: read every file, never map it.
    pub(crate) no_mmap: bool,
    /// The stdin reader handed to the run is this process's standard
    /// input, unread: mapped when it is a regular file (`< file`).
    pub(crate) map_stdin: bool,
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

    /// Map regular files into memory and frame them in place (the
    /// default), or read them (`--no-mmap`, `false`). The output is the
    /// same; mapping saves the kernel's copy of each file. A file that is
    /// truncated while it is mapped ends the process with SIGBUS
    /// (docs/cli.md, "Reading files").
    #[must_use]
    pub fn mmap(mut self, on: bool) -> Config {
        self.no_mmap = !on;
        self
    }

    /// Say that the stdin reader handed to
    /// [`convert_inputs`](crate::convert_inputs) is this process's own
    /// standard input, not read from yet: when it is a regular file
    /// (`cstream < file`), it is then mapped as a named file is (unless
    /// [`Config::mmap`] is off), from file descriptor 0. Off by default:
    /// the reader may be anything.
    #[must_use]
    pub fn map_stdin(mut self, on: bool) -> Config {
        self.map_stdin = on;
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
        self.output.text.color = on;
        self
    }

    /// `text`: cut long lines at this many columns (what a terminal's width
    /// gives on the command line).
    #[must_use]
    pub fn width(mut self, columns: usize) -> Config {
        self.output.text.width = Some(columns);
        self
    }

    /// `text`: show the last `lines` lines of the shell output that arrives
    /// with a call's completion (`--shell-lines N`; default: all).
    #[must_use]
    pub fn shell_lines(mut self, lines: usize) -> Config {
        self.output.text.shell_lines = Some(lines);
        self
    }

    /// `text`: leave thinking out (`--no-thinking`).
    #[must_use]
    pub fn no_thinking(mut self, on: bool) -> Config {
        self.output.text.no_thinking = on;
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
        self.output.chat.reasoning_field = field;
        self
    }

    /// OpenAI formats: how tool calls the agent already ran appear
    /// (`--tool-calls`).
    #[must_use]
    pub fn tool_calls(mut self, mode: ToolCallMode) -> Config {
        self.output.chat.tool_calls = mode;
        self
    }

    /// `openai-sse`: write the usage chunk after the finish chunk, when
    /// usage is known (`--include-usage`).
    #[must_use]
    pub fn include_usage(mut self, on: bool) -> Config {
        self.output.chat.include_usage = on;
        self
    }

    /// OpenAI and documents formats: the model name to write (`--model`).
    #[must_use]
    pub fn model(mut self, name: impl Into<String>) -> Config {
        self.output.ident.model = Some(name.into());
        self
    }

    /// OpenAI and documents formats: the response id to write (`--id`).
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Config {
        self.output.ident.id = Some(id.into());
        self
    }

    /// OpenAI and documents formats: the creation time to write, Unix
    /// seconds (`--created`).
    #[must_use]
    pub fn created(mut self, unix_seconds: i64) -> Config {
        self.output.ident.created = Some(unix_seconds);
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
        self.output.documents.thinking = on;
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
        self.output.ident.run_start = Some(unix_seconds);
        self
    }

    /// This configuration with the run's start pinned: the clock is read
    /// here, once per run, so that every sink of the run (one per file
    /// under `--jobs` and `--output-dir`) writes the same `created`.
    pub(crate) fn pinned(&self) -> std::borrow::Cow<'_, Config> {
        if self.output.ident.run_start.is_some() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut c = self.clone();
        c.output.ident.run_start = Some(crate::time::now_secs());
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

    /// `--summary`: when the run ends, append a Markdown summary of it to
    /// the file at `path` (for `$GITHUB_STEP_SUMMARY`).
    #[must_use]
    pub fn summary(mut self, path: impl Into<PathBuf>) -> Config {
        self.summary = Some(path.into());
        self
    }

    /// `--outputs`: when the run ends, append `key=value` lines to the file
    /// at `path` (for `$GITHUB_OUTPUT`).
    #[must_use]
    pub fn outputs(mut self, path: impl Into<PathBuf>) -> Config {
        self.outputs = Some(path.into());
        self
    }

    /// `--jobs`: read this many inputs of
    /// [`convert_inputs`](crate::convert_inputs) at once (0 or 1: one at a
    /// time, the default). The output is the same, in input order.
    #[must_use]
    pub fn jobs(mut self, n: usize) -> Config {
        self.jobs = n;
        self
    }

    /// `--output-dir`: [`convert_inputs`](crate::convert_inputs) writes one
    /// file per input under `dir`, at the input's name in `names` (one per
    /// input, in order, without the format's extension, which is added),
    /// each written whole and then renamed into place.
    #[must_use]
    pub fn output_dir(mut self, dir: impl Into<PathBuf>, names: Vec<PathBuf>) -> Config {
        self.output_dir = Some(OutputDir {
            dir: dir.into(),
            names,
        });
        self
    }

    /// The name `--summary` shows for each input, in order (the command
    /// line's: its path under the directory argument it was found in);
    /// escaped with [`printable`](crate::printable). Without them, each
    /// input's file name.
    #[must_use]
    pub fn input_names(mut self, names: &[PathBuf]) -> Config {
        self.input_names = names
            .iter()
            .map(|n| crate::terminal::excerpt(&n.display().to_string(), usize::MAX))
            .collect();
        self
    }

    /// The inputs came from directory walks that left out `files` files
    /// ([`walk::Expanded::skipped`](crate::walk)): `--stats` then counts
    /// the files read, per dialect, and the ones skipped.
    #[must_use]
    pub fn files_skipped(mut self, files: u64) -> Config {
        self.files_skipped = Some(files);
        self
    }

    /// The inputs are those `found` lists ([`crate::walk::expand`]): each
    /// named as its walk names it, and the files the walks left out
    /// counted when a directory was walked. The command line and
    /// [`convert_walked`](crate::convert_walked) (when it walks before it reads) both describe a
    /// walk this way.
    #[cfg(feature = "walk")]
    #[must_use]
    pub fn walked(self, found: &crate::walk::Expanded) -> Config {
        let cfg = self.input_names(&found.names);
        if found.walked {
            cfg.files_skipped(found.skipped)
        } else {
            cfg
        }
    }

    /// Call `on_file` on the calling thread after each input file of
    /// [`convert_inputs`](crate::convert_inputs) is written, with the bytes
    /// read from it (the command line's progress bar).
    #[must_use]
    pub fn progress(mut self, on_file: impl Fn(u64) + Send + Sync + 'static) -> Config {
        self.progress = Some(Progress(std::sync::Arc::new(on_file)));
        self
    }

    /// `usage`: a table with totals, for a terminal, instead of one JSON
    /// row per line (what the command line writes to a terminal).
    #[must_use]
    pub fn usage_table(mut self, on: bool) -> Config {
        self.output.usage.table = on;
        self
    }

    /// `text`: the transcript and the warnings share one terminal (standard
    /// output and standard error both are one): a warning then starts on a
    /// line of its own, and each invalid input line is shown once, by its
    /// warning.
    #[must_use]
    pub fn terminal_warnings(mut self, on: bool) -> Config {
        self.output.text.shared_terminal = on.then(Default::default);
        self
    }
}
