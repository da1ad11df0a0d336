//! cstream: a stream filter for coding-agent event streams.
//!
//! It reads the NDJSON streams coding agents write (cursor-agent, Claude
//! Code, Codex, Gemini CLI, ACP agents, the Cursor SDK), normalizes them into
//! one event model, and writes that model as a readable transcript, as
//! events, as an OpenAI-compatible stream or response, or as documents.
//!
//! The library API is small:
//!
//! - [`convert`] reads one stream and writes it in the format a [`Config`]
//!   names; [`convert_with_warnings`] does the same and writes warnings
//!   about bad input lines to a writer of your choice;
//! - [`for_each_event`] hands each normalized [`Event`] to a closure instead
//!   of writing a format;
//! - [`Config`] is built with methods (no command-line parser needed), and
//!   [`Report`] says what the run saw and which [`Exit`] status it maps to.
//!
//! Bad input never aborts a run: a line that is not valid input is reported,
//! counted in the [`Report`], and the run goes on. Only a failed write to
//! the output ends it early (the `Err`).
//!
//! ```
//! use cstream::{Config, Exit, Format};
//!
//! // Two lines of a cursor-agent stream, converted in memory.
//! let input = br#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}
//! {"type":"assistant","session_id":"s1","message":{"content":[{"type":"text","text":"hi"}]}}
//! "#;
//! let config = Config::new(Format::Events);
//! let mut output = Vec::new();
//! let report = cstream::convert(&input[..], &mut output, &config).unwrap();
//! assert_eq!(
//!     String::from_utf8(output).unwrap(),
//!     "{\"type\":\"session_started\",\"sessionId\":\"s1\",\"dialect\":\"cursor\",\"schemaVersion\":1,\"model\":\"m\"}\n\
//!      {\"type\":\"text_delta\",\"sessionId\":\"s1\",\"text\":\"hi\"}\n"
//! );
//! assert_eq!(report.sessions(), 1);
//! assert_eq!(report.exit(false), Exit::Ok);
//! ```
//!
//! Internally the pipeline is one module per stage: framing (lines, joins,
//! arrays, repairs) → the dialect reader (detect the agent, parse each
//! record) → the normalizer (sessions, dedupe, usage increments, open calls)
//! → the event model → one sink per format. `docs/ARCHITECTURE.md` in the
//! repository describes it.

#![warn(missing_docs)]

mod diag;
mod dialect;
pub mod event;
mod input;
mod json;
mod output;
mod prefix;
mod run;
#[cfg(feature = "schema")]
pub mod schema;
mod strings;
mod terminal;
mod time;
mod transform;
#[cfg(feature = "walk")]
pub mod walk;

use std::io::{self, Read, Write};

pub use diag::Diag as Warnings;
pub use dialect::Dialect;
pub use event::{Event, Kind};
pub use output::usage::{Group as UsageGroup, Prices};
pub use output::{Format, ReasoningField, ToolCallMode};
pub use run::{Config, Exit, Input, Redaction, Report};
pub use transform::coalesce::CoalesceMode;

/// Convert one stream: read `input` to its end and write it to `output` in
/// the format `config` names.
///
/// Warnings about the input (lines that are not valid input, repairs) are
/// only counted, in the [`Report`]; use [`convert_with_warnings`] to see
/// them. Returns `Err` only when writing `output` fails; the run stops
/// there. A failed read of `input` ends the input and is reported as
/// [`Exit::Fatal`].
pub fn convert<R: Read, W: Write>(input: R, output: W, config: &Config) -> io::Result<Report> {
    run::convert(config, input, output, &mut diag::Diag::sink())
}

/// [`convert`], writing a line per warning to `warnings`
/// (`cstream: warning: -:LINE: …`, as the command line writes them to
/// standard error).
pub fn convert_with_warnings<R: Read, W: Write>(
    input: R,
    output: W,
    config: &Config,
    warnings: &mut dyn Write,
) -> io::Result<Report> {
    run::convert(
        config,
        input,
        output,
        &mut diag::Diag::new(Box::new(warnings)),
    )
}

/// Read `input` to its end and call `f` with each normalized event and the
/// id of the session it belongs to, instead of writing a format.
///
/// The events are those `--to events` writes, in the same order (after
/// [`Config::coalesce`] and [`Config::truncate_shell`] when they are set);
/// [`Config::format`] is not used. An event borrows from the input line it
/// came from: [`Event::into_owned`] detaches one that must be kept. An `Err`
/// from `f` stops the run and is returned.
///
/// ```
/// use cstream::{Config, Format, Kind};
///
/// let input = br#"{"type":"assistant","session_id":"s1","message":{"content":[{"type":"text","text":"hi"}]}}"#;
/// let mut texts = Vec::new();
/// cstream::for_each_event(&input[..], &Config::new(Format::Events), |session, event| {
///     if let Kind::TextDelta { text } = &event.kind {
///         texts.push(format!("{session}: {text}"));
///     }
///     Ok(())
/// })
/// .unwrap();
/// assert_eq!(texts, ["s1: hi"]);
/// ```
pub fn for_each_event<R, F>(input: R, config: &Config, f: F) -> io::Result<Report>
where
    R: Read,
    F: FnMut(&str, &Event<'_>) -> io::Result<()>,
{
    run::for_each_event(config, input, f, &mut diag::Diag::sink())
}

/// A problem with the input that the command line would print on standard
/// error: a line that is not valid input, a repair, or an input that could
/// not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The input's name: the path, or the name given to [`convert_named`].
    pub file: String,
    /// The input line it is about (1-based), when it is about one line.
    pub line: Option<u64>,
    /// What is wrong, as the command line words it (without the file name).
    pub message: String,
    /// The input could not be read to its end ([`Exit::Fatal`]); without
    /// this, the run went on past the problem.
    pub fatal: bool,
}

/// A diagnostics collector that hands each message to `on_warning`.
fn reporting<'a>(file: &str, on_warning: &'a mut dyn FnMut(Warning)) -> diag::Diag<'a> {
    let file = file.to_owned();
    // A message about the whole file starts with its name on the command
    // line; here the name is a field of its own.
    let prefix = format!("{file}: ");
    let unnamed = move |msg: String| match msg.strip_prefix(&prefix) {
        Some(rest) => rest.to_owned(),
        None => msg,
    };
    diag::Diag::recording(Box::new(move |m| {
        let (line, message, fatal) = match m {
            diag::Message::Warn(_, line, msg) => (Some(line), msg, false),
            diag::Message::Note(msg) | diag::Message::Session(msg) => (None, unnamed(msg), false),
            diag::Message::Error(msg) => (None, unnamed(msg), true),
            diag::Message::NotUnderstood {
                dialect,
                what,
                line,
            } => (
                Some(line),
                format!(
                    "a record of type {what:?} that the {dialect} reader does not understand (kept as an unknown event)"
                ),
                false,
            ),
            // The library reads no directories; said as the command line would.
            diag::Message::Skipped(name, why) => (None, format!("{name}: skipped: {why}"), false),
        };
        on_warning(Warning {
            file: file.clone(),
            line,
            message,
            fatal,
        })
    }))
}

/// [`convert`] of the file at `path`, as the command line converts a file
/// argument: a saved session's side files (a Claude transcript's offloaded
/// tool results and sub-agents) are found beside it, and each warning is
/// handed to `on_warning`. A file that cannot be opened is a fatal
/// [`Warning`] and a [`Report::read_failed`] report, not an `Err`.
pub fn convert_file<W: Write>(
    path: &std::path::Path,
    output: W,
    config: &Config,
    on_warning: &mut dyn FnMut(Warning),
) -> io::Result<Report> {
    let input = run::Input::Path(path.to_owned());
    let mut diag = reporting(&input.display_name(), on_warning);
    diag.file = input.display_name();
    // A library run reads the one file it is given: no directory, no
    // parallel jobs, no output directory.
    let mut config = config.clone();
    config.jobs = 1;
    config.output_dir = None;
    run::run_with_stdin(&config, &[input], io::empty(), output, &mut diag)
}

/// [`convert`], handing each warning to `on_warning` with `name` as the
/// input's name. `live`: the input is a stream still being written (a
/// pipe from a running agent), where a pause in the reads releases the
/// events held for a session's start, as [`convert`] does; otherwise it is
/// read as a whole file, as the command line reads a regular file, and
/// the output does not depend on how the reads fall.
pub fn convert_named<R: Read, W: Write>(
    input: R,
    name: &str,
    live: bool,
    output: W,
    config: &Config,
    on_warning: &mut dyn FnMut(Warning),
) -> io::Result<Report> {
    let mut diag = reporting(name, on_warning);
    diag.file = name.to_owned();
    if live {
        run::convert(config, input, output, &mut diag)
    } else {
        run::convert_whole(config, input, output, &mut diag)
    }
}

/// A time as `--since` and `--until` take it, in epoch milliseconds: an RFC
/// 3339 time (`2026-03-02T09:00:00Z`), a UTC date (`2026-03-02`, its
/// midnight), or an age before now (`90m`, `12h`, `7d`, `2w`).
pub fn parse_time(s: &str) -> Result<i64, String> {
    transform::window::parse_time(s, time::now_ms())
}

/// A size as `--truncate-shell` takes it, in bytes: a number with an
/// optional binary unit (`4096`, `64K`, `1.5M`, `2MiB`).
pub fn parse_size(s: &str) -> Result<usize, String> {
    transform::truncate::parse_size(s)
}

/// `s` as warnings show a name that came from outside (a file name, a
/// URL): control characters and terminal escapes written out as visible
/// escapes, so that printing it cannot drive the terminal.
pub fn printable(s: &str) -> String {
    terminal::excerpt(s, usize::MAX)
}

/// Convert `inputs` in order into one output, as the command line does
/// (`cat`-like: a file that cannot be opened is reported on `warnings` and
/// skipped), reading `stdin` wherever an input is [`Input::Stdin`].
///
/// Unlike [`convert_file`], this honours every part of `config`: several
/// files at once ([`Config::jobs`]), one output file per input
/// ([`Config::output_dir`], which leaves `output` unused), the summary
/// files. Returns `Err` only when writing the output fails.
pub fn convert_inputs<R: Read, W: Write>(
    inputs: &[Input],
    stdin: R,
    output: W,
    config: &Config,
    warnings: &mut Warnings,
) -> io::Result<Report> {
    run::run_with_stdin(config, inputs, stdin, output, warnings)
}

/// Convert the session files of the directories `dirs` (as
/// [`walk::expand`] lists them, the command line's reading of a directory)
/// into one output: what [`convert_inputs`] of that list gives, byte for
/// byte, but with several [`Config::jobs`] the first files are converted
/// while the rest of the trees are still walked, so a large tree's output
/// begins at once. [`Config::output_dir`] is not written from here
/// (`Err`): its names need the whole list first.
#[cfg(feature = "walk")]
pub fn convert_walked<W: Write>(
    dirs: &[std::path::PathBuf],
    output: W,
    config: &Config,
    warnings: &mut Warnings,
) -> io::Result<Report> {
    run::run_walking(config, dirs, output, warnings)
}

/// Remove the temporary files of every [`Config::output_dir`] run still
/// being written, and keep any more from being made: for a program that
/// is about to exit on a signal (the command line's Ctrl-C). Outputs
/// already renamed into place are kept.
pub fn remove_temporaries() {
    run::remove_temporaries()
}

/// The fixed limits that shape what cstream writes, for callers (and
/// tests) that need to know where a behaviour starts.
pub mod limits {
    pub use crate::diag::WARNINGS_SHOWN_PER_KIND;
    pub use crate::output::transcript::markdown::OUTPUT_CAP_BYTES;
    pub use crate::output::transcript::text::TERMINAL_SHELL_LINES;
    pub use crate::run::{BINARY_SNIFF_BYTES, DIALECT_CHECK_RECORDS};
}
