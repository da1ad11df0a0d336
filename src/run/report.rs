//! What a run saw ([`Report`]) and the exit status it maps to ([`Exit`]).

use crate::transform::Outcomes;
use crate::transform::stats::Stats;

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

    /// [`Config::strict`](crate::Config::strict) stopped the run at a line that was not valid input.
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
