//! `--since` / `--until`: a session is kept when its start (its first dated
//! event) is inside the window, or when it cannot be dated; a kept
//! session's events are exactly what it gives without the filter.

use std::path::Path;

use serde_json::Value;

use crate::common::{cstream, cstream_file, fixtures, fixtures_dir};

/// The events output split per session: (start, its lines). Lines before
/// any session form a group of their own with no start.
fn sessions(out: &str) -> Vec<(Option<i64>, Vec<String>)> {
    let mut groups: Vec<(Option<i64>, Vec<String>, bool)> = Vec::new();
    for line in out.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["type"] == "session_started" || groups.is_empty() {
            groups.push((None, Vec::new(), e["type"] == "session_started"));
        }
        let g = groups.last_mut().unwrap();
        if g.0.is_none() && g.2 && g.1.len() < HOLD {
            g.0 = e["ts"].as_i64();
        }
        g.1.push(line.to_owned());
    }
    groups.into_iter().map(|(s, l, _)| (s, l)).collect()
}

/// Epoch milliseconds as RFC 3339 UTC (the civil-from-days algorithm).
fn iso(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, sec, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{sec:02}.{milli:03}Z")
}

/// How many undated events the filter holds before keeping a session.
const HOLD: usize = 256;

/// Over every fixture and each session start in it as the bound: `--since`
/// keeps exactly the sessions starting at or after it (and the undated
/// ones), `--until` those before it, each byte for byte as without the
/// filter; together they give every session once.
#[test]
fn the_window_keeps_exactly_the_sessions_inside_it() {
    let mut bounds_tried = 0;
    for f in fixtures() {
        let extra = crate::common::fixture_args(&f);
        let mut args: Vec<&str> = extra.iter().map(String::as_str).collect();
        args.extend(["--to", "events", "--coalesce", "whole"]);
        let all = sessions(&cstream_file(&args, &f).out());
        let mut starts: Vec<i64> = all.iter().filter_map(|g| g.0).collect();
        starts.sort_unstable();
        starts.dedup();
        for &t in starts.iter().take(3) {
            bounds_tried += 1;
            let when = iso(t);
            for (flag, inside) in [
                ("--since", &(|s: i64| s >= t) as &dyn Fn(i64) -> bool),
                ("--until", &|s: i64| s < t),
            ] {
                let mut a = args.clone();
                a.extend([flag, when.as_str()]);
                let got = sessions(&cstream_file(&a, &f).out());
                let want: Vec<_> = all
                    .iter()
                    .filter(|g| g.0.is_none_or(inside))
                    .cloned()
                    .collect();
                assert_eq!(got, want, "{} {flag} {when}", f.display());
            }
        }
    }
    assert!(bounds_tried > 50, "only {bounds_tried} bounds tried");
}

/// A live stream whose first line is undated (cursor-agent's init) is
/// dated by its first dated event; one dated nowhere is kept.
#[test]
fn live_streams_are_dated_by_their_first_dated_event() {
    let f = fixtures_dir().join("cursor/partial_recap-longer-than-deltas.jsonl");
    let all = cstream_file(&["--to", "events"], &f).out();
    let first: Value = serde_json::from_str(all.lines().next().unwrap()).unwrap();
    assert!(first.get("ts").is_none(), "the init line is dated: {first}");
    let late = cstream_file(&["--to", "events", "--since", "2100-01-01"], &f).out();
    assert_eq!(late, "", "a dated session from before 2100 kept");
    let early = cstream_file(&["--to", "events", "--since", "1971-01-01"], &f).out();
    assert_eq!(early, all);
    let undated = "{\"type\":\"session_started\",\"sessionId\":\"u\",\"dialect\":\"cursor\"}\n\
                   {\"type\":\"text_delta\",\"sessionId\":\"u\",\"text\":\"hi\"}\n";
    let run = cstream(
        &[
            "--from",
            "events",
            "--to",
            "events",
            "--since",
            "2100-01-01",
        ],
        undated.as_bytes(),
    );
    assert!(
        run.out().contains("\"text\":\"hi\""),
        "an undated session was dropped"
    );
}

/// Under `--output-dir`, a file with no session in the window gets no
/// output file; the others are written as without the filter.
#[test]
fn output_dir_writes_only_files_with_a_session_inside() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("window-outdir");
    let _ = std::fs::remove_dir_all(&dir);
    let src = fixtures_dir().join("codex-rollout");
    let starts: Vec<(String, i64)> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let out = cstream_file(&["--to", "events"], &p).out();
            let t = sessions(&out).iter().find_map(|g| g.0)?;
            // A compressed `x.jsonl.zst` is written as `x.ndjson`.
            let plain = if p.extension().is_some_and(|e| e == "zst") {
                p.with_extension("")
            } else {
                p
            };
            Some((plain.file_stem()?.to_string_lossy().into_owned(), t))
        })
        .collect();
    let max = starts.iter().map(|s| s.1).max().unwrap();
    assert!(
        starts.iter().any(|s| s.1 < max),
        "the fixtures all start at once"
    );
    let run = cstream(
        &[
            "--to",
            "events",
            "--since",
            &iso(max),
            "--output-dir",
            dir.to_str().unwrap(),
            src.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for (name, t) in &starts {
        let out = dir.join(format!("{name}.ndjson"));
        assert_eq!(
            out.exists(),
            *t >= max,
            "{name} starts at {t}, the window at {max}"
        );
    }
}

#[test]
fn a_bad_time_is_a_usage_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cstream"))
        .args(["--since", "yesterday", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a time"));
}

/// A window that lets no session through says so, on one line, whichever
/// way the run writes (stdout, `--jobs`, `--output-dir`); and `--summary`
/// says "no sessions" instead of calling an empty run a success.
#[test]
fn a_window_that_lets_nothing_through_says_so() {
    let dir = fixtures_dir().join("pi");
    let dir = dir.to_str().unwrap();
    let said = "cstream: warning: no session started since 2027-01-01T00:00:00Z (--since/--until): \
                2 sessions read, none written";
    for jobs in ["1", "2"] {
        let r = cstream(
            &["--to", "events", "--since", "2027-01-01", "-j", jobs, dir],
            b"",
        );
        assert!(r.out().is_empty(), "{}", r.out());
        assert_eq!(r.stderr.matches(said).count(), 1, "-j {jobs}: {}", r.stderr);
    }
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("window-none");
    let _ = std::fs::remove_dir_all(&out);
    let r = cstream(
        &[
            "--to",
            "markdown",
            "--since",
            "2027-01-01",
            "--output-dir",
            out.to_str().unwrap(),
            dir,
        ],
        b"",
    );
    assert_eq!(r.stderr.matches(said).count(), 1, "{}", r.stderr);
    let summary = out.with_extension("md");
    let _ = std::fs::remove_file(&summary);
    let s = summary.to_str().unwrap();
    cstream(
        &[
            "--to",
            "events",
            "--until",
            "2000-01-01",
            "--summary",
            s,
            dir,
        ],
        b"",
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("### ⚠️ cstream: no sessions"), "{md}");
    assert!(!md.contains("success"), "{md}");
    // A window that lets a session through says nothing of the kind.
    let r = cstream(&["--to", "events", "--since", "2000-01-01", dir], b"");
    assert!(!r.stderr.contains("no session started"), "{}", r.stderr);
}
