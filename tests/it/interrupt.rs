//! Ctrl-C, SIGTERM and SIGHUP (issue 31 #5): the real binary, on an input
//! that stays open, is signalled while it waits for more: it exits with
//! 128 + the signal's number, leaves no temporary file in the output
//! directory, and ends coloured output with `ESC[0m`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cstream");
/// How long to wait for something that should happen at once (never a
/// measure: a slow machine only makes the test wait longer).
const PATIENCE: Duration = Duration::from_secs(20);

use crate::common::{LIVE_INIT as INIT, LIVE_THINKING as THINKING, live};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("interrupt-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Wait until `check` holds, or fail after [`PATIENCE`].
fn until(what: &str, mut check: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !check() {
        assert!(start.elapsed() < PATIENCE, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn temporaries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            out.push(name);
        }
    }
    out
}

/// `--output-dir` stopped while a file is still being read: its temporary
/// output is removed, the finished one is kept, and the exit status is
/// 128 + the signal (a shell's 130 for Ctrl-C).
#[test]
fn a_signal_during_output_dir_removes_the_temporary_files() {
    for (sig, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let d = scratch(&format!("outdir-{sig}"));
        let out = d.join("out");
        let fifo = d.join("live.jsonl");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let mut child = Command::new(BIN)
            .args(["--to", "markdown", "--jobs", "1", "--output-dir"])
            .arg(&out)
            .arg(&fifo)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The writer end, kept open: the run waits for more.
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        // The command line reads the first 16 bytes of a named file to
        // tell an SQLite store: blanks, so that the records stay whole.
        writeln!(w, "{}", " ".repeat(15)).unwrap();
        // That check opens the FIFO, reads and closes it; when the records
        // are written before the run opens it again to convert it, nobody
        // is reading and the write fails with EPIPE. Opening the writer end
        // again waits for that second reader.
        if let Err(e) = writeln!(w, "{INIT}\n{THINKING}") {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
            w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            writeln!(w, "{INIT}\n{THINKING}").unwrap();
        }
        w.flush().unwrap();
        until("the temporary output", || !temporaries(&out).is_empty());
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "SIG{sig}: {status:?}");
        assert_eq!(temporaries(&out), Vec::<String>::new(), "SIG{sig}");
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(!err.contains("panicked"), "{err}");
        drop(w);
    }
}

/// Coloured text stopped in the middle of a dim italic thinking line ends
/// with `ESC[0m`, and a read blocked on an open pipe does not keep the
/// process alive.
#[test]
fn a_signal_resets_the_colours_of_the_output() {
    let (mut child, stdin, rx) = live(&["--to", "text", "--color", "always", "--line-buffered"]);
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("hmm") {
        seen.extend(rx.recv_timeout(PATIENCE).expect("the thinking text"));
    }
    assert!(
        String::from_utf8_lossy(&seen).contains("\x1b[2;3m"),
        "thinking is dim italic: {seen:?}"
    );
    signal(&child, "INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    while let Ok(more) = rx.recv_timeout(PATIENCE) {
        seen.extend(more);
    }
    assert!(
        seen.ends_with(b"\x1b[0m"),
        "{:?}",
        String::from_utf8_lossy(&seen)
    );
    drop(stdin);
}
