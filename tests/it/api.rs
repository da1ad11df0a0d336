//! The library API (`cstream::convert`, `for_each_event`, `Config`'s
//! builder): what an embedder gets is what the command line writes, on every
//! fixture and in every format, and the crate exposes nothing else.

use std::io;

use crate::common::{cstream, cstream_file, fixture_args, fixtures};
use cstream::{Config, Exit, Format, Kind};

const CREATED: i64 = 1_700_000_000;

/// `cstream::convert` with a `Config` built by its methods writes the same
/// bytes, and reports the same exit status, as the command line with the
/// matching flags: the builder's defaults are the command line's (for an
/// output that is not a terminal).
#[test]
fn convert_writes_what_the_command_line_writes() {
    let mut n = 0;
    for path in fixtures() {
        if !fixture_args(&path).is_empty() {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        for format in Format::ALL {
            let created = CREATED.to_string();
            let cli = cstream(&["--to", format.name(), "--created", &created], &input);
            let mut out = Vec::new();
            let cfg = Config::new(format).created(CREATED);
            let report = cstream::convert(&input[..], &mut out, &cfg).unwrap();
            assert!(
                out == cli.stdout,
                "{} --to {}: the library wrote\n{}\nthe command line\n{}",
                path.display(),
                format.name(),
                String::from_utf8_lossy(&out),
                cli.out()
            );
            assert_eq!(
                report.exit(false) as u8,
                cli.code,
                "{} --to {}",
                path.display(),
                format.name()
            );
            n += 1;
        }
    }
    assert!(n > 100, "only {n} conversions");
}

/// `for_each_event` hands over exactly the events `--to events` writes, in
/// order, each with its session: the same (type, session) sequence on every
/// fixture, with and without `--coalesce`.
#[test]
fn for_each_event_sees_what_events_writes() {
    for path in fixtures() {
        if !fixture_args(&path).is_empty() {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        for coalesce in [false, true] {
            let mut args = vec!["--to", "events"];
            let mut cfg = Config::new(Format::Events);
            if coalesce {
                args.push("--coalesce");
                cfg = cfg.coalesce(cstream::CoalesceMode::Whole);
            }
            let want: Vec<(String, String)> = cstream(&args, &input)
                .out()
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    (
                        v["type"].as_str().unwrap().to_owned(),
                        v["sessionId"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            let mut got = Vec::new();
            cstream::for_each_event(&input[..], &cfg, |session, ev| {
                got.push((ev.type_name().to_owned(), session.to_owned()));
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want, "{} (coalesce: {coalesce})", path.display());
        }
    }
}

/// An `Err` from the closure stops the run there and comes back unchanged.
#[test]
fn for_each_event_stops_at_the_closures_error() {
    let input = br#"{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"a"}]}}
{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"b"}]}}
"#;
    let mut texts = Vec::new();
    let err = cstream::for_each_event(&input[..], &Config::default(), |_, ev| {
        if let Kind::TextDelta { text } = &ev.kind {
            texts.push(text.to_string());
            return Err(io::Error::other("enough"));
        }
        Ok(())
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "enough");
    assert_eq!(texts, ["a"]);
}

/// Warnings go to the writer the embedder gives, naming the line, and the
/// report counts the bad line (exit status 1), as on the command line.
#[test]
fn convert_with_warnings_names_the_line() {
    let input =
        b"{\"type\":\"assistant\",\"session_id\":\"s\",\"message\":{\"content\":[]}}\nnot json\n";
    let mut warnings = Vec::new();
    let report = cstream::convert_with_warnings(
        &input[..],
        io::sink(),
        &Config::new(Format::Events),
        &mut warnings,
    )
    .unwrap();
    let warnings = String::from_utf8(warnings).unwrap();
    assert!(warnings.contains("-:2:"), "{warnings}");
    assert_eq!(report.bad_lines(), 1);
    assert_eq!(report.exit(false), Exit::BadInput);
    assert_eq!(report.sessions(), 1);
}

/// `convert_file` reads a file as the command line reads a file argument
/// (saved sessions find their side files beside it): the same bytes in
/// every format, and one `Warning` per warning line the command line
/// prints, with the same file, line and message.
#[test]
fn convert_file_is_the_command_line_on_a_file() {
    let mut n = 0;
    for path in fixtures() {
        if !fixture_args(&path).is_empty() {
            continue;
        }
        for format in [Format::Events, Format::Documents, Format::Markdown] {
            // A session with no timestamp is dated by the run's start, to
            // the second: the two runs are compared when both started in
            // the same second (a pair that straddled one is run again).
            let secs = || {
                let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                t.expect("clock after 1970").as_secs()
            };
            let mut tries = 0;
            let (cli, out, warnings, report) = loop {
                tries += 1;
                let before = secs();
                let cli = cstream_file(&["--to", format.name()], &path);
                let mut out = Vec::new();
                let mut warnings = Vec::new();
                let report =
                    cstream::convert_file(&path, &mut out, &Config::new(format), &mut |w| {
                        warnings.push(w)
                    })
                    .unwrap();
                if secs() == before || tries == 5 {
                    break (cli, out, warnings, report);
                }
            };
            let name = path.display().to_string();
            assert!(out == cli.stdout, "{name} --to {}", format.name());
            assert_eq!(report.exit(false) as u8, cli.code, "{name}");
            let printed: Vec<String> = warnings
                .iter()
                .map(|w| {
                    assert_eq!(w.file, name);
                    assert!(!w.fatal, "{name}: {w:?}");
                    match w.line {
                        Some(l) => format!("cstream: warning: {}:{l}: {}", w.file, w.message),
                        None => format!("cstream: warning: {}: {}", w.file, w.message),
                    }
                })
                .collect();
            // Records not understood: the library hands each over at its
            // line; the command line says how many of each type at the end.
            let drift = " reader does not understand (kept as an unknown event)";
            let (said, printed): (Vec<String>, Vec<String>) =
                printed.into_iter().partition(|w| w.ends_with(drift));
            let (totals, shown): (Vec<&str>, Vec<&str>) = cli
                .stderr
                .lines()
                .filter(|l| !l.contains(" not shown ("))
                .partition(|l| l.contains(" not understood (kept as unknown events"));
            let counted: usize = totals
                .iter()
                .map(|l| {
                    let n = l.split(": ").nth(3).and_then(|r| r.split(' ').next());
                    n.and_then(|n| n.parse::<usize>().ok()).expect(l)
                })
                .sum();
            assert_eq!(said.len(), counted, "{name}: {said:?} vs {totals:?}");
            if warnings.len() as u64 <= cstream::limits::WARNINGS_SHOWN_PER_KIND {
                assert_eq!(printed, shown, "{name}");
            }
            n += 1;
        }
    }
    assert!(n > 100, "only {n} conversions");
}

/// A file that cannot be read is one fatal `Warning` and a report that
/// says so (exit status 2); a bad line of a named reader names that line.
#[test]
fn warnings_name_the_file_and_the_line() {
    let mut warnings = Vec::new();
    let missing = std::path::Path::new("/nonexistent/run.jsonl");
    let report = cstream::convert_file(missing, io::sink(), &Config::default(), &mut |w| {
        warnings.push(w)
    })
    .unwrap();
    assert!(report.read_failed());
    assert_eq!(report.exit(false), Exit::Fatal);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].fatal);
    assert_eq!(warnings[0].file, "/nonexistent/run.jsonl");
    assert!(
        warnings[0].message.starts_with("No such file"),
        "{warnings:?}"
    );

    let input =
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"m\"}\nnot json\n";
    let mut warnings = Vec::new();
    let report = cstream::convert_named(
        &input[..],
        "upload.jsonl",
        false,
        io::sink(),
        &Config::default().from(cstream::Dialect::Cursor),
        &mut |w| warnings.push(w),
    )
    .unwrap();
    assert_eq!(report.bad_lines(), 1);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].file, "upload.jsonl");
    assert_eq!(warnings[0].line, Some(2));
    assert!(!warnings[0].fatal);
}

/// An input read whole (`live: false`) converts the same however its reads
/// fall: every fixture, cut into 3-byte reads, in every format.
#[test]
fn a_whole_input_does_not_depend_on_its_reads() {
    struct Trickle<'a>(&'a [u8]);
    impl io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(3).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    for path in fixtures() {
        if !fixture_args(&path).is_empty() {
            continue;
        }
        let input = std::fs::read(&path).unwrap();
        for format in [Format::Events, Format::Documents, Format::Text] {
            let cfg = Config::new(format).created(CREATED);
            let convert = |r: &mut dyn io::Read| {
                let mut out = Vec::new();
                cstream::convert_named(r, "-", false, &mut out, &cfg, &mut |_| ()).unwrap();
                out
            };
            let whole = convert(&mut &input[..]);
            let trickled = convert(&mut Trickle(&input));
            assert!(
                whole == trickled,
                "{} --to {}",
                path.display(),
                format.name()
            );
        }
    }
}

/// `parse_time` reads `--since`'s syntax; `redact_patterns` refuses a bad
/// regex by name.
#[test]
fn times_and_patterns_are_checked() {
    assert_eq!(cstream::parse_time("1970-01-02"), Ok(86_400_000));
    assert!(cstream::parse_time("7d").unwrap() > 1_700_000_000_000);
    assert!(cstream::parse_time("yesterday").is_err());
    let err = Config::default()
        .redact_patterns(vec!["ok".into(), "(".into()])
        .unwrap_err();
    assert!(err.starts_with("(:"), "{err}");
}

/// The crate root declares its stages as private modules: the public API is
/// what `lib.rs` re-exports, the event model, the schemas, the directory
/// walk and the limits. No hidden door: the binary uses this API too.
#[test]
fn only_the_event_model_is_a_public_module() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    let public: Vec<&str> = lib.lines().filter(|l| l.starts_with("pub mod ")).collect();
    assert_eq!(
        public,
        [
            "pub mod event;",
            "pub mod schema;",
            "pub mod walk;",
            "pub mod limits {"
        ]
    );
}
