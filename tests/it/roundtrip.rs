//! Reading `--to events` back (`--from events`) and converting gives the same
//! bytes as converting the original directly, for every fixture and format.

use crate::common;

use common::{
    FORMATS, convert_fixture, convert_stdin, cstream, fixture_args, fixtures, run_fixture,
};

#[test]
fn every_format_via_events_is_byte_identical() {
    for path in fixtures() {
        let extra = fixture_args(&path);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let mut ev_args = vec!["--to", "events"];
        ev_args.extend(&extra);
        let events = convert_fixture(&path, &["--to", "events"]);
        for (name, args) in FORMATS {
            let direct = convert_fixture(&path, args);
            let mut a: Vec<&str> = args.to_vec();
            a.extend(&extra);
            a.extend(["--from", "events"]);
            let via = convert_stdin(&a, &events);
            assert_eq!(
                String::from_utf8_lossy(&via),
                String::from_utf8_lossy(&direct),
                "{name} via events differs from direct for {}",
                path.display()
            );
        }
    }
}

/// `--no-dedupe` survives the events stage: the events stream says its
/// sessions were not deduped, so `--from events` does not dedupe them a
/// second time (without being told `--no-dedupe` again).
#[test]
fn no_dedupe_is_carried_by_the_events_stream() {
    for path in fixtures() {
        let extra = fixture_args(&path);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let events = convert_fixture(&path, &["--to", "events", "--no-dedupe"]);
        for (name, args) in FORMATS {
            let mut direct: Vec<&str> = args.to_vec();
            direct.push("--no-dedupe");
            let direct = convert_fixture(&path, &direct);
            let mut a: Vec<&str> = args.to_vec();
            a.extend(&extra);
            a.extend(["--from", "events"]);
            let via = convert_stdin(&a, &events);
            assert_eq!(
                String::from_utf8_lossy(&via),
                String::from_utf8_lossy(&direct),
                "{name}: --no-dedupe via events differs from direct for {}",
                path.display()
            );
        }
    }
    // A stream that does not say (older cstream, or deduped) is read as
    // deduped, as before.
    let path = common::fixtures_dir().join("cursor/no-dedupe_result-longer-than-deltas.jsonl");
    let raw = run_fixture(&path, &["--to", "events", "--no-dedupe"]).out();
    assert_eq!(raw.matches(r#""dedupe":false"#).count(), 1, "{raw}");
    let deduped = run_fixture(&path, &["--to", "events"]).out();
    assert!(!deduped.contains("dedupe"), "{deduped}");
    let old = raw.replace(r#","dedupe":false"#, "");
    let read = cstream(&["--from", "events", "--to", "events"], old.as_bytes()).out();
    assert_eq!(read, deduped);
}

/// Each FILE's sessions stay apart through the events stage, in every
/// format, whether or not two files share a session id (or have none): the
/// fixtures all in one run, and each fixture twice in one run.
#[test]
fn sessions_of_several_files_stay_apart_via_events() {
    // Flags of a fixture's own `.args` would apply to every file.
    let plain: Vec<String> = fixtures()
        .into_iter()
        .filter(|p| fixture_args(p).is_empty())
        .map(|p| p.to_str().unwrap().to_owned())
        .collect();
    let mut runs: Vec<Vec<&str>> = vec![plain.iter().map(String::as_str).collect()];
    runs.extend(plain.iter().map(|p| vec![p.as_str(), p.as_str()]));
    for files in runs {
        let mut ev_args = vec!["--to", "events"];
        ev_args.extend(&files);
        let events = cstream(&ev_args, b"");
        let started = events
            .out()
            .matches(r#"{"type":"session_started","#)
            .count();
        for (name, args) in FORMATS {
            let mut a: Vec<&str> = args.to_vec();
            a.extend(&files);
            let direct = cstream(&a, b"");
            let mut a: Vec<&str> = args.to_vec();
            a.extend(["--from", "events"]);
            let via = cstream(&a, &events.stdout);
            assert_eq!(
                via.out(),
                direct.out(),
                "{name} via events differs from direct for {files:?}"
            );
        }
        // Every session of the events begins with `session_started`.
        let mut a = vec!["--to", "events", "--stats"];
        a.extend(&files);
        let stats = cstream(&a, b"").stderr;
        assert!(
            stats.contains(&format!(" sessions={started} ")),
            "{files:?}: {started} session_started\n{stats}"
        );
    }
}
