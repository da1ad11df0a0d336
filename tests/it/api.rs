//! The library API (`cstream::convert`, `for_each_event`, `Config`'s
//! builder): what an embedder gets is what the command line writes, on every
//! fixture and in every format, and the crate exposes nothing else.

use std::io;

use crate::common::{cstream, fixture_args, fixtures};
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

/// The crate root declares its stages as private modules: the public API is
/// what `lib.rs` re-exports, the event model, and the hidden `__internal`
/// (the binary's and the tests' door, outside the API).
#[test]
fn only_the_event_model_is_a_public_module() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    let public: Vec<&str> = lib.lines().filter(|l| l.starts_with("pub mod ")).collect();
    assert_eq!(
        public,
        ["pub mod event;", "pub mod schema;", "pub mod __internal {"]
    );
}
