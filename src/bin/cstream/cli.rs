//! The command line: what the user typed ([`Cli`]) and how it resolves into a
//! [`Config`] (colour, terminal width, buffering), plus the generators for the
//! man page and shell completions.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::builder::PossibleValue;
use clap::{CommandFactory, Parser, ValueEnum};

use cstream::limits::TERMINAL_SHELL_LINES;
use cstream::{
    CoalesceMode, Config, Dialect, Exit, Format, Input, Prices, ReasoningField, ToolCallMode,
    UsageGroup as Group, Warnings as Diag, parse_size, printable,
};

use crate::clobber::{self, input_written_over};

/// `--since`/`--until`, read against the current time (for ages such as `7d`).
fn parse_when(s: &str) -> Result<i64, String> {
    cstream::parse_time(s)
}

/// A `--redact-pattern`: checked here so that a bad one stops the run before it reads.
fn parse_regex(s: &str) -> Result<String, String> {
    regex::Regex::new(s)
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

/// Output buffer size.
pub const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// The examples of `--help` and the man page: what each does, then the
/// command, each on one line of at most 80 columns (the test suite checks),
/// so that no terminal of that width breaks a command in the middle.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "Read a live cursor-agent run on the terminal",
        "cursor-agent -p --output-format stream-json \"fix the tests\" | cstream",
    ),
    (
        "Serve it to an OpenAI-compatible client (opencode, LiteLLM, openai SDKs)",
        "cursor-agent -p --output-format stream-json \"…\" | cstream --to openai-sse",
    ),
    (
        "The normalized events, one JSON object per line (dashboards, scripts)",
        "cstream --to events run.jsonl",
    ),
    (
        "What every saved Claude Code and Codex session cost, per day",
        "cstream --to usage --group day ~/.claude/projects ~/.codex/sessions",
    ),
    (
        "An archived run as one documents[] response",
        "cstream --to documents archived-run.jsonl > run.json",
    ),
    (
        "Another agent's stream (detected automatically; --from names it)",
        "claude -p --output-format stream-json --verbose \"…\" | cstream",
    ),
    (
        "In CI: fail on lines that are not valid input, or on a failed run",
        "cstream --strict -e run.jsonl > transcript.txt",
    ),
];

/// The exit statuses, for `--help` and the man page.
const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "every line was understood (unknown-but-valid events count too)",
    ),
    (
        "1",
        "some lines were not valid input, or --strict stopped the run",
    ),
    (
        "2",
        "usage error, unreadable file, failed write, or output is an input",
    ),
    (
        "3",
        "only with -e: a session failed or ended without a result",
    ),
    (
        "4",
        "with --otlp-endpoint: a session was not accepted by the receiver (refused, or down after 5 tries); the output itself was written in full",
    ),
    (
        "130, 143, 129",
        "interrupted by SIGINT, SIGTERM, SIGHUP (128 + the signal); temporary outputs are removed and colours reset first",
    ),
];

/// The exit status when `--otlp-endpoint` did not get every session
/// accepted (after 2, before 3, 1 and 0).
const OTLP_NOT_SENT: u8 = 4;

/// What the exit statuses leave out.
const EXIT_NOTE: &str = "A closed output pipe (cstream … | head) ends the run quietly with 0.";

/// The environment variables cstream reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("NO_COLOR", "not empty: --color auto does not colour"),
    (
        "CLICOLOR_FORCE",
        "not empty nor 0: --color auto colours a pipe or file too",
    ),
    ("TERM", "dumb: --color auto does not colour"),
];

/// The text after the options in `--help`.
fn after_help() -> String {
    let mut s = String::from("Examples:\n");
    for (what, cmd) in EXAMPLES {
        s.push_str(&format!("  {what}:\n    {cmd}\n\n"));
    }
    s.push_str("Exit status:\n");
    for (code, what) in EXIT_STATUS {
        s.push_str(&format!("  {code}  {what}\n"));
    }
    s.push_str(&format!("  {EXIT_NOTE}\n\nEnvironment:\n"));
    for (name, what) in ENVIRONMENT {
        s.push_str(&format!("  {name:<15} {what}\n"));
    }
    s.truncate(s.trim_end().len());
    s
}

/// Normalize coding-agent event streams (cursor-agent, Claude Code, Codex, Gemini CLI, ACP,
/// Cursor SDK) into one event model, and write a readable transcript, the events, an
/// OpenAI-compatible stream or response, or documents[] JSON.
#[derive(Debug, Parser)]
#[command(name = "cstream", version = cstream::event::VERSION, about, after_help = after_help(), max_term_width = 100)]
pub struct Cli {
    /// Files to read, in order ('-' or none: standard input); a directory: the session files in
    /// it, walked recursively in name order
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Output format
    #[arg(short = 't', long = "to", value_enum, value_name = "FORMAT", default_value_t = FormatArg(Format::Text))]
    pub to: FormatArg,

    /// Input dialect (auto: detected from each input's first lines)
    #[arg(short = 'f', long = "from", value_enum, value_name = "DIALECT", default_value_t = FromDialect::AUTO)]
    pub from: FromDialect,

    /// Keep recap/replay text and cumulative tool-output snapshots exactly as they came (default: emit only what each adds)
    #[arg(long)]
    pub no_dedupe: bool,

    /// When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    /// The conversation only: no session header or final line, no unknown events or invalid
    /// input lines in the text format; warnings on stderr only as one count per kind
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// text: leave thinking out
    #[arg(long)]
    pub no_thinking: bool,

    /// text: of the shell output that arrives with a call's completion, show the last N lines, or
    /// all [default: 10 on a terminal, else all]
    #[arg(long, value_name = "N|all", value_parser = parse_shell_lines)]
    pub shell_lines: Option<ShellLines>,

    /// Stop at the first line that is not valid input (after writing its error event), exit 1
    #[arg(long)]
    pub strict: bool,

    /// Exit 3 when a session reported failure or ended without a result
    #[arg(short = 'e', long)]
    pub exit_status: bool,

    /// After the run, print one summary line on stderr: lines and bytes read, bytes written, lines
    /// skipped, sessions (failed, incomplete), events by type, elapsed time
    #[arg(long)]
    pub stats: bool,

    /// Write to FILE instead of standard output
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// With --to otlp-json: also POST each session's request to this OTLP/HTTP receiver
    /// (http://HOST:PORT, to which /v1/traces is added, or the full traces URL), JSON encoded. The
    /// output is written first; a failed send is retried 5 times with backoff, and a session not
    /// accepted makes the exit status 4
    #[arg(long, value_name = "URL", conflicts_with = "output_dir")]
    pub otlp_endpoint: Option<String>,

    /// One output file per input file under DIR, named after it (its path under the directory
    /// argument it was found in, or its file name) with the format's extension (.txt, .ndjson,
    /// .md, .json, .sse); each written whole, then renamed into place
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "summary", "outputs"])]
    pub output_dir: Option<PathBuf>,

    /// When the run ends, append a Markdown summary to FILE (for $GITHUB_STEP_SUMMARY; at most
    /// 1 MiB): outcome, errors, usage and cost, tool calls, failed commands, duration
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// When the run ends, append key=value lines to FILE (for $GITHUB_OUTPUT): outcome, tokens,
    /// cost, turns, duration, error
    #[arg(long, value_name = "FILE")]
    pub outputs: Option<PathBuf>,

    /// Flush after every input line, even when more input is waiting
    #[arg(long)]
    pub line_buffered: bool,

    /// Read N files at once; the output is the same, in input order [default: the number of
    /// cores with several files, else 1]
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Read named files instead of mapping them into memory: a file cut short (truncated) while it
    /// is read then cannot end the run (a mapped one ends it with SIGBUS)
    #[arg(long)]
    pub no_mmap: bool,

    /// Cap each tool call's shell output at SIZE bytes (64K, 1M, …): live output up to SIZE, then a
    /// marker; the completed output keeps its last SIZE bytes
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub truncate_shell: Option<usize>,

    /// Keep base64 images (Claude image blocks, Codex input_image, Gemini inlineData) in the
    /// payloads; by default each is replaced by `[image: TYPE, SIZE]`
    #[arg(long)]
    pub keep_images: bool,

    /// Only sessions that started at or after TIME: an RFC 3339 time, a date (2026-03-02, UTC
    /// midnight) or an age (90m, 12h, 7d, 2w); a session that cannot be dated is kept
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub since: Option<i64>,

    /// Only sessions that started before TIME (same forms as --since)
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub until: Option<i64>,

    /// Replace secrets (provider API keys, cloud keys, GitHub and Slack tokens, JWTs, PEM private
    /// keys) with `[REDACTED:<kind>]` in every field of every format, and in warnings that quote
    /// the input; counted by --stats. On by default for --to markdown, --to html, --to messages,
    /// --to atif, --to otlp-json and --summary
    #[arg(long)]
    pub redact: bool,

    /// Turn off the redaction that --to markdown, --to html, --to messages, --to atif, --to otlp-json and
    /// --summary do by default
    #[arg(long, conflicts_with_all = ["redact", "redact_pattern"])]
    pub no_redact: bool,

    /// Also redact what REGEX matches (kind `custom`; repeatable; implies --redact)
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub redact_pattern: Vec<String>,

    /// With --to events: merge deltas into whole messages and tool calls (whole, the default), or
    /// merge adjacent deltas that arrived together (burst)
    #[arg(long, value_enum, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "whole")]
    pub coalesce: Option<CoalesceArg>,

    /// openai formats: the delta/message field thinking goes to (none: no thinking in any chat
    /// format)
    #[arg(long, value_enum, value_name = "NAME", default_value_t = ReasoningFieldArg::ReasoningContent)]
    pub reasoning_field: ReasoningFieldArg,

    /// openai and anthropic formats: how tool calls the agent already executed appear
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ToolCallsArg::Reasoning)]
    pub tool_calls: ToolCallsArg,

    /// openai-sse: write the usage chunk after the finish chunk (when usage is known)
    #[arg(long)]
    pub include_usage: bool,

    /// openai, anthropic and documents formats: the model name to write (default: the one the agent
    /// reported, else "unknown")
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,

    /// openai, anthropic and documents formats: the response id to write (default:
    /// chatcmpl-<session id>, msg_<session id>, chat_<session id>)
    #[arg(long, value_name = "ID")]
    // The help text shows `<session id>` literally; rustdoc would read it as HTML.
    #[allow(rustdoc::invalid_html_tags)]
    pub id: Option<String>,

    /// openai and documents formats: the creation time to write, Unix seconds (default: the
    /// session's first timestamp, else the time the run started)
    #[arg(long, value_name = "UNIX", allow_negative_numbers = true, value_parser = parse_created)]
    pub created: Option<i64>,

    /// One-line JSON for the *-json formats and documents (default: pretty, 2-space
    /// indent; documents of several sessions are always one a line)
    #[arg(short = 'c', long)]
    pub compact: bool,

    /// documents formats: include thinking documents (off by default: the documents[] spec has
    /// no such type)
    #[arg(long)]
    pub thinking: bool,

    /// usage: add sessions up by the day, week (from Monday) or month they started (UTC), their
    /// model, agent or project (working directory)
    #[arg(long, value_enum, value_name = "BY")]
    pub group: Option<GroupArg>,

    /// usage: estimate costs with the per-token prices in FILE (the format of the bundled table,
    /// docs/usage.md) instead of the bundled ones
    #[arg(long, value_name = "FILE", value_parser = parse_prices)]
    pub prices: Option<PricesArg>,

    /// Print the JSON Schema of the events lines, of a documents value or of the rows lines, and
    /// exit
    #[arg(long, value_enum, value_name = "OUTPUT", exclusive = true)]
    pub schema: Option<SchemaKind>,

    /// Generate the man page or a shell completion script
    #[arg(long, value_enum, value_name = "KIND", hide = true, exclusive = true)]
    pub generate: Option<Generate>,
}

/// `--schema`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// One line of `--to events`
    Events,
    /// One value of `--to documents`
    Documents,
    /// One line of `--to rows`
    Rows,
}

impl SchemaKind {
    /// The schema, pretty-printed, with a final newline: the bytes of the
    /// file checked into `schema/`.
    pub fn render(self) -> String {
        let v = match self {
            SchemaKind::Events => cstream::schema::events(),
            SchemaKind::Documents => cstream::schema::documents(),
            SchemaKind::Rows => cstream::schema::rows(),
        };
        cstream::schema::pretty(&v)
    }
}

/// `--to`: one of the library's formats, as it lists them
/// ([`Format::ALL`]); a type of the binary's own, for clap's trait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Format);

/// Every format, in the library's order.
static TO_VALUES: [FormatArg; Format::ALL.len()] = {
    let mut all = [FormatArg(Format::Text); Format::ALL.len()];
    let mut i = 0;
    while i < Format::ALL.len() {
        all[i] = FormatArg(Format::ALL[i]);
        i += 1;
    }
    all
};

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &TO_VALUES
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

/// `--shell-lines`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellLines {
    /// Every line.
    All,
    /// The last N lines.
    Last(usize),
}

fn parse_shell_lines(s: &str) -> Result<ShellLines, String> {
    if s == "all" {
        return Ok(ShellLines::All);
    }
    s.parse()
        .map(ShellLines::Last)
        .map_err(|_| format!("expected a number of lines or 'all', got '{s}'"))
}

/// `--group`: one of the library's groups, as it lists them
/// ([`Group::ALL`]); a type of the binary's own, for clap's trait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupArg(pub Group);

/// Every group, in the library's order.
static GROUP_VALUES: [GroupArg; Group::ALL.len()] = {
    let mut all = [GroupArg(Group::Day); Group::ALL.len()];
    let mut i = 0;
    while i < Group::ALL.len() {
        all[i] = GroupArg(Group::ALL[i]);
        i += 1;
    }
    all
};

impl ValueEnum for GroupArg {
    fn value_variants<'a>() -> &'a [Self] {
        &GROUP_VALUES
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

/// `--prices`: the table read and checked when the command line is parsed,
/// so that a bad file is a usage error before anything is read.
#[derive(Debug, Clone)]
pub struct PricesArg(pub Arc<Prices>);

fn parse_prices(path: &str) -> Result<PricesArg, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    Prices::parse(&text)
        .map(|p| PricesArg(Arc::new(p)))
        .map_err(|e| format!("{path} is not a price table: {e}"))
}

/// `--coalesce`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CoalesceArg {
    /// Whole messages, thinking phases and tool calls
    Whole,
    /// Adjacent deltas of one kind that were read together
    Burst,
}

/// `--reasoning-field`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReasoningFieldArg {
    /// delta.reasoning_content (DeepSeek style; AI SDK, LiteLLM)
    #[value(name = "reasoning_content")]
    ReasoningContent,
    /// delta.reasoning (OpenRouter style)
    Reasoning,
    /// Drop thinking
    None,
}

/// `--tool-calls`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolCallsArg {
    /// One line per call in the reasoning channel (omitted with --reasoning-field none)
    Reasoning,
    /// One line per call in the content
    Content,
    /// Leave them out
    Omit,
    /// Forward as tool_calls, for display only (a client that runs tools would run them again)
    Calls,
}

/// `--from`: `auto` (`None`: detect from each input's first lines) or one
/// of the library's dialects ([`Dialect::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FromDialect(pub Option<Dialect>);

impl FromDialect {
    pub const AUTO: FromDialect = FromDialect(None);
}

/// `auto`, then every dialect.
static FROM_VALUES: [FromDialect; 1 + Dialect::ALL.len()] = {
    let mut all = [FromDialect::AUTO; 1 + Dialect::ALL.len()];
    let mut i = 0;
    while i < Dialect::ALL.len() {
        all[i + 1] = FromDialect(Some(Dialect::ALL[i]));
        i += 1;
    }
    all
};

impl ValueEnum for FromDialect {
    fn value_variants<'a>() -> &'a [Self] {
        &FROM_VALUES
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            None => PossibleValue::new("auto").help("Detect from each input's first lines"),
            Some(d) => PossibleValue::new(d.name()).help(d.about()),
        })
    }
}

/// `--color`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour when writing to a terminal (unless NO_COLOR is set, or CLICOLOR_FORCE asks for it)
    Auto,
    /// Always colour the text format
    Always,
    /// Never colour
    Never,
}

/// `--generate`
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// The man page
    Man,
    /// bash completions
    Bash,
    /// zsh completions
    Zsh,
    /// fish completions
    Fish,
    /// PowerShell completions
    Powershell,
    /// elvish completions
    Elvish,
}

/// Write the man page or a completion script.
///
/// Everything is rendered into memory first, then written with one
/// `write_all`: clap_complete panics when its writer fails, which a closed
/// pipe (`cstream --generate bash | head -1`) would make it do.
pub fn generate(kind: Generate, out: &mut dyn Write) -> io::Result<()> {
    use clap_complete::Shell;
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    let shell = match kind {
        Generate::Man => {
            man_page(cmd, &mut buf)?;
            return out.write_all(&buf);
        }
        Generate::Bash => Shell::Bash,
        Generate::Zsh => Shell::Zsh,
        Generate::Fish => Shell::Fish,
        Generate::Powershell => Shell::PowerShell,
        Generate::Elvish => Shell::Elvish,
    };
    clap_complete::generate(shell, &mut cmd, "cstream", &mut buf);
    out.write_all(&buf)
}

/// The man page: clap_mangen's title, name, description, options and
/// version, with a SYNOPSIS that names every option's argument and the
/// EXAMPLES, EXIT STATUS and ENVIRONMENT sections of man-pages(7) (in place
/// of clap_mangen's single EXTRA section made from `--help`'s epilogue).
fn man_page(mut cmd: clap::Command, out: &mut Vec<u8>) -> io::Result<()> {
    use roff::{Roff, bold, italic, roman};
    let man = clap_mangen::Man::new(cmd.clone());
    // Built, an argument knows how many values it takes (and --help and
    // --version exist).
    cmd.build();
    man.render_title(out)?;
    man.render_name_section(out)?;

    let mut synopsis = Roff::new();
    synopsis.control("SH", ["SYNOPSIS"]);
    let mut line = vec![bold("cstream")];
    let (files, options): (Vec<_>, Vec<_>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .partition(|a| a.is_positional());
    for arg in options {
        line.push(roman(" ["));
        if let Some(short) = arg.get_short() {
            line.push(bold(format!("-{short}")));
            line.push(roman("|"));
        }
        if let Some(long) = arg.get_long() {
            line.push(bold(format!("--{long}")));
        }
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        if let (true, Some(names)) = (takes_value, arg.get_value_names()) {
            let name = names.join(" ");
            let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
            match (optional, arg.is_require_equals_set()) {
                (true, _) => {
                    line.push(roman("[="));
                    line.push(italic(name));
                    line.push(roman("]"));
                }
                (false, true) => {
                    line.push(roman("="));
                    line.push(italic(name));
                }
                (false, false) => {
                    line.push(roman(" "));
                    line.push(italic(name));
                }
            }
        }
        line.push(roman("]"));
    }
    for arg in files {
        let name = arg
            .get_value_names()
            .map_or_else(|| arg.get_id().as_str().to_uppercase(), |n| n.join(" "));
        line.push(roman(" ["));
        line.push(italic(name));
        line.push(roman("]..."));
    }
    synopsis.text(line);
    synopsis.to_writer(out)?;

    man.render_description_section(out)?;
    man.render_options_section(out)?;

    let mut extra = Roff::new();
    extra.control("SH", ["EXAMPLES"]);
    for (what, command) in EXAMPLES {
        extra.text([roman(format!("{what}:"))]);
        extra.control("RS", ["4"]);
        extra.control("nf", []);
        extra.text([bold(*command)]);
        extra.control("fi", []);
        extra.control("RE", []);
        extra.control("PP", []);
    }
    extra.control("SH", ["EXIT STATUS"]);
    for (code, what) in EXIT_STATUS {
        extra.control("TP", []);
        extra.text([bold(*code)]);
        extra.text([roman(*what)]);
    }
    extra.control("PP", []);
    extra.text([roman(EXIT_NOTE)]);
    extra.control("SH", ["ENVIRONMENT"]);
    for (name, what) in ENVIRONMENT {
        extra.control("TP", []);
        extra.text([bold(*name)]);
        extra.text([roman(*what)]);
    }
    extra.to_writer(out)?;
    man.render_version_section(out)
}

/// The environment colour and terminal decisions depend on.
#[derive(Debug, Clone, Default)]
pub struct ColorEnv {
    /// `NO_COLOR`.
    pub no_color: Option<String>,
    /// `CLICOLOR_FORCE`.
    pub clicolor_force: Option<String>,
    /// `TERM`.
    pub term: Option<String>,
    /// Standard error is a terminal: with a terminal output, the warnings
    /// show invalid input lines on the same screen as the transcript.
    pub stderr_tty: bool,
}

impl ColorEnv {
    /// Read from the process environment.
    pub fn from_env() -> Self {
        ColorEnv {
            no_color: std::env::var("NO_COLOR").ok(),
            clicolor_force: std::env::var("CLICOLOR_FORCE").ok(),
            term: std::env::var("TERM").ok(),
            stderr_tty: io::stderr().is_terminal(),
        }
    }
}

/// Resolve `--color`: `always`/`never` win; `auto` is off when `NO_COLOR` is
/// non-empty (no-color.org), on when `CLICOLOR_FORCE` is non-empty and not
/// `0`, else on only for a terminal that is not `TERM=dumb`.
pub fn resolve_color(when: ColorWhen, tty: bool, env: &ColorEnv) -> bool {
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto if set(&env.no_color) => false,
        ColorWhen::Auto
            if set(&env.clicolor_force) && env.clicolor_force.as_deref() != Some("0") =>
        {
            true
        }
        ColorWhen::Auto => tty && env.term.as_deref() != Some("dumb"),
    }
}

impl Cli {
    /// The run configuration this command line asks for. `tty`: whether the
    /// output goes to a terminal.
    pub fn config(&self, tty: bool, env: &ColorEnv) -> Config {
        let mut c = Config::new(self.to.0)
            .dedupe(!self.no_dedupe)
            .color(resolve_color(self.color, tty, env))
            .reasoning_field(match self.reasoning_field {
                ReasoningFieldArg::ReasoningContent => ReasoningField::ReasoningContent,
                ReasoningFieldArg::Reasoning => ReasoningField::Reasoning,
                ReasoningFieldArg::None => ReasoningField::None,
            })
            .tool_calls(match self.tool_calls {
                ToolCallsArg::Reasoning => ToolCallMode::Reasoning,
                ToolCallsArg::Content => ToolCallMode::Content,
                ToolCallsArg::Omit => ToolCallMode::Omit,
                ToolCallsArg::Calls => ToolCallMode::Calls,
            })
            .include_usage(self.include_usage)
            .compact(self.compact)
            .thinking(self.thinking)
            .quiet(self.quiet)
            .no_thinking(self.no_thinking)
            // Each invalid line is then shown once, by its warning, which
            // names the file and line.
            .terminal_warnings(tty && env.stderr_tty)
            // A terminal reads a table; a pipe or file gets the rows.
            .usage_table(tty)
            .strict(self.strict)
            .keep_images(self.keep_images)
            .window(self.since, self.until)
            .stats(self.stats)
            .report_sessions(self.exit_status)
            // A terminal shows every line at once, as ripgrep does.
            .line_buffered(self.line_buffered || tty)
            // The run is handed this process's standard input, unread.
            .map_stdin(true)
            .mmap(!self.no_mmap);
        if let Some(d) = self.from.0 {
            c = c.from(d);
        }
        if let Some(w) = tty.then(terminal_size::terminal_size).flatten() {
            c = c.width(usize::from((w.0).0));
        }
        if let Some(m) = &self.model {
            c = c.model(m.clone());
        }
        if let Some(id) = &self.id {
            c = c.id(id.clone());
        }
        if let Some(t) = self.created {
            c = c.created(t);
        }
        // A terminal shows a screenful; a saved transcript is the record, so
        // it loses nothing (the library's default: every line).
        match self.shell_lines {
            Some(ShellLines::All) => {}
            Some(ShellLines::Last(n)) => c = c.shell_lines(n),
            None if tty => c = c.shell_lines(TERMINAL_SHELL_LINES),
            None => {}
        }
        if let Some(g) = self.group {
            c = c.group(g.0);
        }
        if let Some(p) = &self.prices {
            c = c.prices(Prices::clone(&p.0));
        }
        if let Some(bytes) = self.truncate_shell {
            c = c.truncate_shell(bytes);
        }
        if self.no_redact {
            c = c.redact(false);
        } else if self.redact || !self.redact_pattern.is_empty() {
            c = c
                .redact_patterns(self.redact_pattern.clone())
                .expect("each pattern was checked when the command line was parsed");
        }
        if let Some(mode) = self.coalesce {
            c = c.coalesce(match mode {
                CoalesceArg::Whole => CoalesceMode::Whole,
                CoalesceArg::Burst => CoalesceMode::Burst,
            });
        }
        if let Some(path) = &self.summary {
            c = c.summary(path);
        }
        if let Some(path) = &self.outputs {
            c = c.outputs(path);
        }
        c
    }

    /// Reject combinations the options cannot express on their own.
    pub fn validate(&self) -> Result<(), clap::Error> {
        if (self.group.is_some() || self.prices.is_some()) && self.to.0 != Format::Usage {
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--group and --prices work with --to usage only",
            ));
        }
        if let Some(url) = &self.otlp_endpoint {
            if self.to.0 != Format::OtlpJson {
                return Err(Cli::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--otlp-endpoint works with --to otlp-json only",
                ));
            }
            if let Err(e) = crate::otlp::traces_url(url) {
                return Err(Cli::command().error(
                    clap::error::ErrorKind::ValueValidation,
                    format!("--otlp-endpoint {e}"),
                ));
            }
        }
        if self.coalesce.is_some() && self.to.0 != Format::Events {
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--coalesce works with --to events only",
            ));
        }
        Ok(())
    }

    /// The run this command line asks for: its configuration (`tty`:
    /// whether the output goes to a terminal) and its inputs, with every
    /// directory replaced by the session files in it (problems of the walk
    /// are reported on `diag`).
    pub fn prepare(&self, tty: bool, env: &ColorEnv, diag: &mut Diag<'_>) -> (Config, Vec<Input>) {
        // `--output-dir` names its outputs before reading: it needs to know
        // which files are sessions first (two with one output name are an
        // error only when both are read).
        let sniff_now = self.output_dir.is_some();
        let mut expanded = cstream::walk::expand(&self.files, sniff_now, diag);
        if sniff_now {
            expanded.split_stores();
        }
        // A file is named in the summary as it is under its directory
        // argument: a CI log names the file, not the runner's checkout.
        let mut cfg = self.config(tty, env).walked(&expanded);
        if let Some(dir) = &self.output_dir {
            cfg = cfg.output_dir(dir, expanded.names);
        }
        cfg = cfg.jobs(match self.jobs {
            Some(n) => n.into(),
            None if expanded.inputs.len() > 1 => cores(),
            None => 1,
        });
        (cfg, expanded.inputs)
    }

    /// Whether the directories named are handed to the library as they are
    /// ([`cstream::convert_walked`], which walks them while the files already
    /// found are converted when its configuration allows: several jobs, a
    /// format read to rows) rather than walked here before the run: when
    /// nothing the command line does needs the whole list first. The
    /// clobber checks need it (`-o`, `--summary`, `--outputs`, or standard
    /// output redirected to a regular file, which could be one of the
    /// files), as do the progress bar's total (standard error a terminal,
    /// without `-q`) and `--output-dir`'s names.
    pub fn library_walks(&self, env: &ColorEnv) -> bool {
        self.output_dir.is_none()
            && self.output.is_none()
            && self.summary.is_none()
            && self.outputs.is_none()
            && (self.quiet || !env.stderr_tty)
            && !self.files.is_empty()
            && self
                .files
                .iter()
                .all(|f| f.as_os_str() != "-" && f.is_dir())
            && !crate::clobber::stdout_is_a_file()
    }

    /// The run's configuration when the library walks its directories
    /// ([`Cli::library_walks`]).
    pub fn prepare_walk(&self, tty: bool, env: &ColorEnv) -> Config {
        self.config(tty, env)
            .jobs(self.jobs.map_or_else(cores, usize::from))
    }
}

/// The number of jobs by default for several files: the cores there are.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Standard output without the line buffering of Rust's `Stdout`, which
/// would scan every block cstream writes for its last newline and copy the
/// rest: a duplicate of the file descriptor, written through `File`.
/// cstream does its own buffering and flushing (`BufWriter`, flush on idle).
fn raw_stdout(stdout: io::Stdout) -> Box<dyn Write> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = stdout.as_fd().try_clone_to_owned() {
            return Box::new(File::from(fd));
        }
    }
    Box::new(stdout.lock())
}

/// True when `e`, or anything in its chain, is a closed pipe.
fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Run cstream with the process's arguments and environment.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli.validate() {
        e.exit();
    }
    if cli.generate.is_some() || cli.schema.is_some() {
        let mut out = io::stdout().lock();
        let written = match (cli.generate, cli.schema) {
            (Some(kind), _) => generate(kind, &mut out),
            (_, Some(kind)) => out.write_all(kind.render().as_bytes()),
            (None, None) => unreachable!("one of the two is set"),
        };
        return match written.and_then(|_| out.flush()) {
            Ok(()) => Exit::Ok.into(),
            Err(e) if is_broken_pipe(&e) => Exit::Ok.into(),
            Err(e) => {
                eprintln!("cstream: error: {e}");
                Exit::Fatal.into()
            }
        };
    }
    let mut diag = Diag::new(Box::new(io::stderr()));
    let env = ColorEnv::from_env();
    // Standard output is a terminal only without `-o`.
    let tty = cli.output.is_none() && io::stdout().is_terminal();
    // Before anything is opened: opening a FIFO blocks.
    crate::interrupt::install();
    let library_walks = cli.library_walks(&env);
    let (mut cfg, inputs) = if library_walks {
        (cli.prepare_walk(tty, &env), Vec::new())
    } else {
        cli.prepare(tty, &env, &mut diag)
    };
    crate::interrupt::colour_on_stdout(cli.output.is_none() && resolve_color(cli.color, tty, &env));
    let bar = crate::progress::bar(&inputs, env.stderr_tty, cli.quiet);
    if let Some(bar) = &bar {
        cfg = cfg.progress(crate::progress::progress(bar, inputs.len()));
        diag.redirect(Box::new(crate::progress::AboveBar(bar.clone())));
    }
    // Before `-o` truncates anything: writing over an input loses it.
    let target = match &cli.output {
        Some(path) => clobber::Output::Path(path),
        None => clobber::Output::Stdout,
    };
    if let Some(input) = input_written_over(target, &inputs) {
        let output = match &cli.output {
            Some(path) => {
                let name = printable(&path.display().to_string());
                format!("-o {name}")
            }
            None => "standard output".to_owned(),
        };
        diag.error(format_args!(
            "{output} is the input {input}; refusing to write over it (nothing was written)"
        ));
        return Exit::Fatal.into();
    }
    for (flag, path) in [("--summary", &cli.summary), ("--outputs", &cli.outputs)] {
        if let Some(path) = path
            && let Some(why) = clobber::report_refused(path, &inputs)
        {
            let name = printable(&path.display().to_string());
            diag.error(format_args!(
                "{flag} {name}: {why}; refusing to append to it (nothing was read or written)"
            ));
            return Exit::Fatal.into();
        }
    }
    // `--otlp-endpoint`: the output is passed through a writer that also
    // sends each session's line (checked by `validate`).
    let poster = cli.otlp_endpoint.as_deref().map(|u| {
        let url = crate::otlp::traces_url(u).expect("checked by validate");
        crate::otlp::Poster::new(url)
    });
    let sent = poster.as_ref().map(|p| (p.url().to_owned(), p.sent()));
    let tee = |w: Box<dyn Write>| -> Box<dyn Write> {
        match poster {
            Some(p) => Box::new(crate::otlp::Tee::new(w, p)),
            None => w,
        }
    };
    let result = match &cli.output {
        Some(path) => match File::create(path) {
            Ok(f) => cstream::convert_inputs(
                &inputs,
                io::stdin().lock(),
                BufWriter::with_capacity(WRITE_BUFFER_BYTES, tee(Box::new(f))),
                &cfg,
                &mut diag,
            ),
            Err(e) => {
                let name = printable(&path.display().to_string());
                diag.error(format_args!("{name}: {e}"));
                return Exit::Fatal.into();
            }
        },
        None => {
            let out = BufWriter::with_capacity(WRITE_BUFFER_BYTES, tee(raw_stdout(io::stdout())));
            if library_walks {
                cstream::convert_walked(&cli.files, out, &cfg, &mut diag)
            } else {
                cstream::convert_inputs(&inputs, io::stdin().lock(), out, &cfg, &mut diag)
            }
        }
    };
    let not_sent = sent.and_then(|(url, sent)| {
        let sent = sent.lock().unwrap_or_else(|e| e.into_inner());
        (sent.failed > 0).then(|| {
            let why = sent.last_error.as_deref().unwrap_or("not sent");
            let url = printable(&url);
            diag.error(format_args!(
                "--otlp-endpoint {url}: {} of {} sessions were not accepted ({why}); the output has them all",
                sent.failed,
                sent.failed + sent.accepted
            ));
        })
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(report) => match report.exit(cli.exit_status) {
            Exit::Fatal => Exit::Fatal.into(),
            _ if not_sent.is_some() => ExitCode::from(OTLP_NOT_SENT),
            e => e.into(),
        },
        // The reader went away (`cstream … | head`): not an error.
        Err(e) if is_broken_pipe(&e) => Exit::Ok.into(),
        Err(e) => {
            diag.error(format_args!("writing the output failed: {e}"));
            Exit::Fatal.into()
        }
    }
}

/// `--created`: Unix seconds that RFC 3339 can write (years 0000 to 9999).
fn parse_created(s: &str) -> Result<i64, String> {
    let secs: i64 = s.parse().map_err(|e| format!("{e}"))?;
    // The times RFC 3339 can write: 0000-01-01T00:00:00Z to
    // 9999-12-31T23:59:59.999Z, in epoch milliseconds.
    let range = -62_167_219_200_000i64..=253_402_300_799_999i64;
    if (range.start() / 1000..=range.end() / 1000).contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "{secs} is outside years 0000-9999 ({}..={})",
            range.start() / 1000,
            range.end() / 1000
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn color_resolution() {
        let env = |nc: Option<&str>, force: Option<&str>, term: Option<&str>| ColorEnv {
            no_color: nc.map(Into::into),
            clicolor_force: force.map(Into::into),
            term: term.map(Into::into),
            stderr_tty: false,
        };
        let plain = env(None, None, Some("xterm"));
        assert!(resolve_color(ColorWhen::Auto, true, &plain));
        assert!(!resolve_color(ColorWhen::Auto, false, &plain));
        assert!(resolve_color(ColorWhen::Always, false, &plain));
        assert!(!resolve_color(ColorWhen::Never, true, &plain));
        assert!(!resolve_color(
            ColorWhen::Auto,
            true,
            &env(Some("1"), None, None)
        ));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(resolve_color(
            ColorWhen::Auto,
            true,
            &env(Some(""), None, None)
        ));
        assert!(resolve_color(
            ColorWhen::Auto,
            false,
            &env(None, Some("1"), None)
        ));
        assert!(!resolve_color(
            ColorWhen::Auto,
            false,
            &env(None, Some("0"), None)
        ));
        assert!(!resolve_color(
            ColorWhen::Auto,
            true,
            &env(None, None, Some("dumb"))
        ));
        // --color always beats NO_COLOR.
        assert!(resolve_color(
            ColorWhen::Always,
            false,
            &env(Some("1"), None, None)
        ));
    }
}
