//! `--jobs N`: the files of a run read by several threads give the output,
//! the diagnostics and the exit status one thread gives, byte for byte.

use std::path::PathBuf;

use crate::common::{Run, cstream, fixtures_dir};

/// The stats line's elapsed time is the one thing that may differ.
fn comparable(r: &Run) -> (String, String, u8) {
    let stderr: Vec<String> = r
        .stderr
        .lines()
        .map(|l| match l.find(" elapsed=") {
            Some(at) if l.starts_with("cstream: stats: ") => l[..at].to_owned(),
            _ => l.to_owned(),
        })
        .collect();
    (
        String::from_utf8_lossy(&r.stdout).into_owned(),
        stderr.join("\n"),
        r.code,
    )
}

/// The first line where two texts differ.
fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (mut la, mut lb) = (a.lines(), b.lines());
    for n in 1.. {
        match (la.next(), lb.next()) {
            (None, None) => return None,
            (x, y) if x == y => {}
            (x, y) => {
                let cut = |l: Option<&str>| l.unwrap_or("<end>").chars().take(300).collect();
                return Some((n, cut(x), cut(y)));
            }
        }
    }
    unreachable!()
}

fn same_with_jobs(args: &[&str]) {
    // Sessions without a timestamp are dated by the clock: pinned.
    let one: Vec<&str> = ["--jobs", "1", "--created", "1"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let four: Vec<&str> = ["--jobs", "4", "--created", "1"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    let (a, b) = (cstream(&one, b""), cstream(&four, b""));
    let (a, b) = (comparable(&a), comparable(&b));
    assert_eq!(first_difference(&a.0, &b.0), None, "{args:?}: output");
    assert_eq!(a.0.len(), b.0.len(), "{args:?}: output");
    assert_eq!(first_difference(&a.1, &b.1), None, "{args:?}: diagnostics");
    assert_eq!(a.2, b.2, "{args:?}: exit status");
}

/// Every fixture at once, in every format and with the options that see
/// the run as a whole (session reports, stats, the stop of `--strict`,
/// adapters around the format): four jobs write what one does.
#[test]
fn four_jobs_write_what_one_writes_over_every_fixture() {
    let dir = fixtures_dir();
    let dir = dir.to_str().unwrap();
    let formats = cstream::Format::ALL.map(|f| f.name());
    for to in formats {
        same_with_jobs(&["--to", to, dir]);
        same_with_jobs(&["--to", to, "-e", "--stats", dir]);
    }
    for extra in [
        &["--strict"][..],
        &["--coalesce"],
        &["--coalesce=burst"],
        &["--redact", "--truncate-shell", "100"],
        &["-q", "--no-dedupe", "--line-buffered"],
        &["--from", "cursor"],
        &["--keep-images"],
    ] {
        let mut args = vec!["--to", "events", "--stats"];
        args.extend_from_slice(extra);
        args.push(dir);
        same_with_jobs(&args);
    }
    same_with_jobs(&["--to", "text", "--strict", dir]);
    // Images are replaced by the run's chain, or by a worker's own when it
    // writes the output itself: with --keep-images, by neither.
    same_with_jobs(&["--to", "documents", "--keep-images", dir]);
    same_with_jobs(&["--to", "events", "--keep-images", dir]);
}

/// Files larger than a tape chunk, several of them ahead of the one being
/// written (their channels fill and their workers wait), among small ones,
/// with a file that cannot be read between them.
#[test]
fn big_files_and_a_missing_one() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("jobs-big");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let mut big = String::from(
        "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"big\",\"model\":\"m\"}\n",
    );
    for i in 0..40_000 {
        big.push_str(&format!(
            "{{\"type\":\"assistant\",\"session_id\":\"big\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"delta {i} \"}}]}}}}\n"
        ));
    }
    let mut files = Vec::new();
    for i in 0..4 {
        let f = d.join(format!("{i}-big.jsonl"));
        std::fs::write(&f, &big).unwrap();
        files.push(f);
        files.push(fixtures_dir().join("cursor/two-sessions-partial.jsonl"));
        files.push(fixtures_dir().join("events/head-cut_no-session-started.jsonl"));
    }
    files.insert(5, d.join("missing.jsonl"));
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    for to in ["events", "markdown", "openai-sse"] {
        let mut args = vec!["--to", to, "-e", "--stats"];
        args.extend(&names);
        same_with_jobs(&args);
    }
}

/// `--to usage`: the workers reduce each session to its row and the main
/// thread keeps the rows. Copies of one saved session, in files that
/// different workers read, count once (the fullest copy, in the place of
/// the first); sessions with made-up ids (`session-N`) are numbered by
/// their place in the run; warnings keep their order; every `--group`
/// adds up what one thread adds up.
#[test]
fn usage_rows_reduced_in_workers() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("jobs-usage");
    let _ = std::fs::remove_dir_all(&d);
    // A Claude project tree: 5 sessions, each saved in several files
    // (copies cut at different turns), side by side in walk order.
    let models = [
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "a-model-nobody-prices",
    ];
    for k in 0..30u32 {
        // Session `s{id}` has `id + 1` turns at the fullest, in a copy
        // after its first (in another folder, read by another worker).
        let (id, copy) = (k % 5, k / 5);
        let turns = 1 + copy % (id + 1);
        let dir = d.join("projects").join(format!("-w{}", k % 3));
        std::fs::create_dir_all(&dir).unwrap();
        let day = 1 + (k % 3) * 7 + id;
        let mut lines = Vec::new();
        for t in 0..turns {
            let (u, a) = (2 * t + 1, 2 * t + 2);
            let rec = |n: u32, parent: Option<u32>, extra: String| {
                let parent = parent.map_or("null".to_owned(), |p| format!("\"u{p}\""));
                format!(
                    r#"{{"parentUuid":{parent},"isSidechain":false,"sessionId":"s{id}","cwd":"/w{id}","uuid":"u{n}","timestamp":"2026-01-{day:02}T00:00:{n:02}Z",{extra}}}"#
                )
            };
            lines.push(rec(
                u,
                (t > 0).then(|| u - 1),
                r#""type":"user","message":{"role":"user","content":"go"}"#.to_owned(),
            ));
            let model = models[(id as usize + t as usize) % 3];
            lines.push(rec(
                a,
                Some(u),
                format!(
                    r#""type":"assistant","message":{{"id":"m{a}","model":"{model}","content":[{{"type":"text","text":"ok"}}],"stop_reason":"end_turn","usage":{{"input_tokens":{},"output_tokens":{a},"cache_read_input_tokens":{k}}}}}"#,
                    100 + k
                ),
            ));
        }
        if k % 7 == 3 {
            // A line that is not JSON: a warning inside a copy.
            lines.insert(1, "{\"type\":\"assistant\", not json".to_owned());
        }
        std::fs::write(dir.join(format!("f{k:02}.jsonl")), lines.join("\n") + "\n").unwrap();
    }
    // Sessions without an id before, among and after the others.
    let bad = d.join("notices.txt");
    std::fs::write(&bad, "hello there\n").unwrap();
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let tree = d.join("projects");
    let cursor = fixtures_dir().join("cursor/two-sessions-partial.jsonl");
    let codex = fixtures_dir().join("codex");
    let names: Vec<&str> = [&bad, &tree, &empty, &cursor, &codex, &bad]
        .iter()
        .map(|p| p.to_str().unwrap())
        .collect();
    let mut groups = vec![None];
    groups.extend(["day", "week", "month", "model", "agent", "project"].map(Some));
    for group in groups {
        let mut args = vec!["--to", "usage", "-e"];
        if let Some(g) = group {
            args.extend(["--group", g]);
        }
        args.extend(&names);
        same_with_jobs(&args);
    }
    // The rows themselves: each saved session once, with its fullest copy.
    let rows = cstream(&["--to", "usage", "-j", "4", names[1], names[2]], b"").out();
    let rows: Vec<serde_json::Value> = rows
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    // In the order the walk first met them (-w0 holds f00, f03, f06, …).
    assert_eq!(
        ids,
        ["s0", "s3", "s1", "s4", "s2", "session-31"],
        "{rows:?}"
    );
    for r in &rows[..5] {
        let id: u64 = r["session_id"].as_str().unwrap()[1..].parse().unwrap();
        assert_eq!(r["turns"], id + 1, "{r}");
    }
}

/// Directories only, read by several jobs for `--to usage`: the trees are
/// walked while the workers read the files already found
/// (`cstream::convert_walked`, as the command line does when nothing needs
/// the whole list first), and that gives what a walk before the run gives:
/// the rows, the walk's warnings (a link back up the tree, files that are
/// no sessions) before any file's own, `--stats`' files read and skipped,
/// the exit status. Through the library too, in a format whose walk comes
/// first (`events`).
#[test]
fn trees_walked_beside_the_workers() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("jobs-walk-beside");
    let _ = std::fs::remove_dir_all(&d);
    let tree = d.join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    let fixtures = fixtures_dir();
    for (n, e) in std::fs::read_dir(fixtures.join("claude-project"))
        .unwrap()
        .enumerate()
    {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            let to = if n % 2 == 0 { "a" } else { "a/b" };
            std::fs::copy(&p, tree.join(to).join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(tree.join("a/notes.txt"), "hello there\n").unwrap();
    std::fs::write(
        tree.join("a/b/cut.jsonl"),
        "{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"sessionId\":\"cut\",\"uuid\":\"u1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"go\"}}\n{\"type\":\"assistant\", not json\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&tree, tree.join("a/b/up")).unwrap();
    let mut dirs = vec![
        tree.clone(),
        fixtures.join("codex-rollout"),
        fixtures.clone(),
    ];
    let sessions = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/sessions");
    if !crate::common::corpus("sessions").is_empty() {
        dirs.push(sessions);
    }
    let names: Vec<&str> = dirs.iter().map(|p| p.to_str().unwrap()).collect();
    for extra in [
        &[][..],
        &["--group", "day"],
        &["--group", "model", "-e", "--stats"],
        &["-q", "--stats"],
    ] {
        let mut args = vec!["--to", "usage"];
        args.extend_from_slice(extra);
        args.extend(&names);
        same_with_jobs(&args);
    }
    let run = |format: cstream::Format, jobs: usize, walked: bool| {
        let mut out = Vec::new();
        let mut said = Vec::new();
        let report = {
            let mut warnings = cstream::Warnings::new(Box::new(&mut said));
            let cfg = cstream::Config::new(format).created(1).jobs(jobs);
            if walked {
                cstream::convert_walked(&dirs, &mut out, &cfg, &mut warnings).unwrap()
            } else {
                let found = cstream::walk::expand(&dirs, false, &mut warnings);
                let cfg = cfg
                    .files_skipped(found.skipped)
                    .input_names(&found.names)
                    .jobs(1);
                cstream::convert_inputs(&found.inputs, &b""[..], &mut out, &cfg, &mut warnings)
                    .unwrap()
            }
        };
        let said = String::from_utf8(said).unwrap();
        (String::from_utf8(out).unwrap(), said, report)
    };
    for format in [cstream::Format::Usage, cstream::Format::Events] {
        let (out, said, report) = run(format, 1, false);
        assert!(out.lines().count() > 20, "{format:?}: {out}");
        assert!(said.contains("a symbolic link back to"), "{said}");
        assert!(said.contains("not agent output"), "{said}");
        assert!(report.bad_lines() > 0);
        for jobs in [1, 2, 4] {
            let (o, s, r) = run(format, jobs, true);
            assert_eq!(
                first_difference(&out, &o),
                None,
                "{format:?}, {jobs} jobs: output"
            );
            assert_eq!(
                first_difference(&said, &s),
                None,
                "{format:?}, {jobs} jobs: warnings"
            );
            assert_eq!(report, r, "{format:?}, {jobs} jobs");
        }
    }
    // An output directory is written from a list, not a walk.
    let cfg = cstream::Config::new(cstream::Format::Usage)
        .jobs(2)
        .output_dir(d.join("out"), Vec::new());
    let err = cstream::convert_walked(&dirs, std::io::sink(), &cfg, &mut cstream::Warnings::sink());
    assert!(err.is_err());
}
