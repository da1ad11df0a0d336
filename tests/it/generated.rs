//! The committed man page and shell completions are generated from the clap
//! definition; this test fails when they are stale.
//!
//! Regenerate with: `CSTREAM_BLESS=1 cargo test --test it generated::`

use std::path::Path;

use cstream::__internal::{Generate, generate};

#[test]
fn man_page_and_completions_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("CSTREAM_BLESS").is_some();
    let mut stale = Vec::new();
    for kind in Generate::ALL {
        let mut fresh = Vec::new();
        generate(kind, &mut fresh).expect("generate into a Vec");
        let path = root.join(kind.path());
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&fresh[..]) {
            stale.push(kind.path());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nregenerate with: CSTREAM_BLESS=1 cargo test --test it generated::"
    );
}

#[test]
fn generate_flag_writes_the_same_bytes() {
    let out = assert_cmd::Command::cargo_bin("cstream")
        .unwrap()
        .args(["--generate", "man"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut fresh = Vec::new();
    generate(Generate::Man, &mut fresh).unwrap();
    assert_eq!(out.stdout, fresh);
}

/// The man page has the sections man-pages(7) asks of a command (and no
/// `EXTRA` dump of `--help`'s epilogue), and its SYNOPSIS names every
/// option's argument.
#[test]
fn man_page_sections_and_synopsis() {
    let mut man = Vec::new();
    generate(Generate::Man, &mut man).unwrap();
    let man = String::from_utf8(man).unwrap();
    let sections: Vec<&str> = man.lines().filter_map(|l| l.strip_prefix(".SH ")).collect();
    assert_eq!(
        sections,
        [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "EXAMPLES",
            "\"EXIT STATUS\"",
            "ENVIRONMENT",
            "VERSION"
        ]
    );
    let synopsis = man
        .split(".SH SYNOPSIS\n")
        .nth(1)
        .and_then(|s| s.lines().next())
        .unwrap();
    for piece in [
        r"\fB\-t\fR|\fB\-\-to\fR \fIFORMAT\fR",
        r"\fB\-o\fR|\fB\-\-output\fR \fIFILE\fR",
        r"\fB\-\-truncate\-shell\fR \fISIZE\fR",
        r"\fB\-\-coalesce\fR[=\fIMODE\fR]",
        r"\fB\-\-strict\fR]",
        r"[\fIFILE\fR]...",
    ] {
        assert!(synopsis.contains(piece), "{piece} not in {synopsis}");
    }
    for code in ["0", "1", "2", "3"] {
        assert!(
            man.contains(&format!(".TP\n\\fB{code}\\fR\n")),
            "exit status {code}"
        );
    }
    for var in ["NO_COLOR", "CLICOLOR_FORCE"] {
        assert!(man.contains(&format!(".TP\n\\fB{var}\\fR\n")), "{var}");
    }
}

/// `--generate` into a pipe nobody reads: no panic (clap_complete's
/// writer panics on a write error), exit 0 as for any closed pipe.
#[test]
fn generate_into_a_closed_pipe_does_not_panic() {
    for kind in ["man", "bash", "zsh", "fish", "powershell", "elvish"] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cstream"))
            .args(["--generate", kind])
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "--generate {kind}"
        );
    }
}
