//! The committed man page and shell completions are generated from the clap
//! definition; this test fails when they are stale.
//!
//! Regenerate with: `CSTREAM_BLESS=1 cargo test --test it generated::`

use std::path::Path;

/// Each `--generate` kind and where its output is kept in the repository.
const GENERATED: [(&str, &str); 6] = [
    ("man", "man/cstream.1"),
    ("bash", "completions/cstream.bash"),
    ("zsh", "completions/_cstream"),
    ("fish", "completions/cstream.fish"),
    ("powershell", "completions/_cstream.ps1"),
    ("elvish", "completions/cstream.elv"),
];

/// What `cstream --generate KIND` writes.
fn generate(kind: &str) -> Vec<u8> {
    let out = crate::common::command()
        .args(["--generate", kind])
        .output()
        .unwrap();
    assert!(out.status.success(), "--generate {kind}: {out:?}");
    out.stdout
}

#[test]
fn man_page_and_completions_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("CSTREAM_BLESS").is_some();
    let mut stale = Vec::new();
    for (kind, file) in GENERATED {
        let fresh = generate(kind);
        let path = root.join(file);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&fresh[..]) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nregenerate with: CSTREAM_BLESS=1 cargo test --test it generated::"
    );
}

/// The man page has the sections man-pages(7) asks of a command (and no
/// `EXTRA` dump of `--help`'s epilogue), and its SYNOPSIS names every
/// option's argument.
#[test]
fn man_page_sections_and_synopsis() {
    let man = String::from_utf8(generate("man")).unwrap();
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
