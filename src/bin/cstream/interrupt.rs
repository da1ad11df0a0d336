//! SIGINT (Ctrl-C), SIGTERM and SIGHUP: leave nothing half done behind.
//!
//! The default action of these signals kills the process where it stands:
//! a transcript stopped inside a dim italic thinking line leaves the
//! terminal dim and italic until `tput sgr0`, and `--output-dir` leaves its
//! `.NAME.cstream-PID.tmp` files. Instead, signal-hook's handler only
//! writes to a pipe (async-signal-safe), and a thread of ours, woken by it,
//! removes the temporary files still being written (the registry in
//! `cstream::remove_temporaries`), writes `ESC[0m` when colour went to
//! standard output,
//! and exits with 128 + the signal's number (130 for Ctrl-C, 143 for
//! SIGTERM, 129 for SIGHUP), as a shell reports a process the signal
//! killed. The thread does it rather than the main loop: the main thread
//! may be blocked in a read of a pipe that stays open, and must not keep
//! the run alive. Partial outputs under their final names never exist
//! (an output is renamed only once complete); `-o FILE` keeps what was
//! written, as a shell redirection would.

use std::sync::atomic::{AtomicBool, Ordering};

/// Colour is written to standard output (a terminal, or a pipe with
/// `--color always`, often to `less -R`): an interrupted run resets the
/// attributes, so that what it leaves ends plain.
static COLOUR_ON_STDOUT: AtomicBool = AtomicBool::new(false);

/// Say whether coloured text goes to standard output (set before the run).
pub fn colour_on_stdout(on: bool) {
    COLOUR_ON_STDOUT.store(on, Ordering::Relaxed);
}

/// "Select Graphic Rendition: reset", ending any colour, dim or italic.
pub const RESET: &[u8] = b"\x1b[0m";

/// Start the thread that handles the signals. A failure to install them
/// leaves the default actions, as before.
#[cfg(unix)]
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                leave(sig);
            }
        });
    // Without the thread the default actions stay (they were replaced only
    // for as long as `signals` lives, which the failed spawn dropped).
    drop(spawned);
}

#[cfg(not(unix))]
pub fn install() {}

/// Undo what the run left half done, then exit as the signal would have.
#[cfg(unix)]
fn leave(sig: i32) -> ! {
    cstream::remove_temporaries();
    if COLOUR_ON_STDOUT.load(Ordering::Relaxed) {
        use std::io::Write;
        use std::os::fd::AsFd;
        // A duplicate of the descriptor: the run's own writer may hold
        // standard output's lock.
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            let _ = std::fs::File::from(fd).write_all(RESET);
        }
    }
    std::process::exit(128 + sig)
}
