//! The progress bar of a large run on a terminal (files done, bytes,
//! rate, time left), drawn on standard error by indicatif.
//!
//! Shown only when standard error is a terminal, `--quiet` is off, every
//! input is a file, and the run is large: [`MANY_FILES`] files or more, or
//! [`MANY_BYTES`] bytes or more in all. Warnings are written above it
//! (the bar is suspended while they are). Anywhere else nothing is drawn:
//! a pipe or a log file gets the warnings only.

use std::io::{self, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use cstream::Input;

/// A run of this many files or more is large…
pub const MANY_FILES: usize = 100;
/// …and so is one of this many bytes or more.
pub const MANY_BYTES: u64 = 64 * 1024 * 1024;

/// The bar for a run over `inputs`, when one is wanted (`tty`: standard
/// error is a terminal).
pub fn bar(inputs: &[Input], tty: bool, quiet: bool) -> Option<ProgressBar> {
    if !tty || quiet {
        return None;
    }
    let mut bytes = 0;
    for i in inputs {
        match i {
            Input::Stdin => return None,
            Input::Path(p) | Input::Found(p) | Input::Stored { db: p, .. } => {
                bytes += std::fs::metadata(p).map_or(0, |m| m.len());
            }
        }
    }
    if inputs.len() < MANY_FILES && bytes < MANY_BYTES {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{bar:30} {msg} files · {binary_bytes}/{binary_total_bytes} · {binary_bytes_per_sec} · ETA {eta}",
    )
    .expect("a valid template");
    bar.set_style(style);
    bar.set_message(format!("0/{}", inputs.len()));
    Some(bar)
}

/// What the run calls after each file (`Config::progress`): the bar moves
/// on.
pub fn progress(bar: &ProgressBar, files: usize) -> impl Fn(u64) + Send + Sync + 'static {
    let bar = bar.clone();
    let done = std::sync::atomic::AtomicUsize::new(0);
    move |bytes| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bar.set_message(format!("{n}/{files}"));
        bar.inc(bytes);
    }
}

/// Standard error with the bar lifted while a message is written.
pub struct AboveBar(pub ProgressBar);

impl Write for AboveBar {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.suspend(|| io::stderr().write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.suspend(|| io::stderr().write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn drawn_only_for_a_large_run_of_files_on_a_terminal() {
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/cursor/basic.jsonl");
        let many = vec![Input::Path(fixture.clone()); MANY_FILES];
        let few = vec![Input::Path(fixture); 2];
        assert!(bar(&many, true, false).is_some());
        assert!(bar(&many, false, false).is_none(), "not a terminal");
        assert!(bar(&many, true, true).is_none(), "--quiet");
        assert!(bar(&few, true, false).is_none(), "small");
        let mut piped = many.clone();
        piped.push(Input::Stdin);
        assert!(bar(&piped, true, false).is_none(), "standard input");
    }
}
