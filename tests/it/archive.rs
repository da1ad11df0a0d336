//! Directories as input: which files a walk reads, in which order, what
//! `--stats` says about them, and what bad files in a tree do.

use std::path::{Path, PathBuf};

use crate::common::{cstream, fixtures_dir};

/// A fresh scratch directory under cargo's per-test-target temporary directory.
fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("archive-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn copy(fixture: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(fixtures_dir().join(fixture), to).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `key=value` pairs of the stats line that are about files.
fn file_stats(stderr: &str) -> String {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("cstream: stats: "))
        .expect("a stats line");
    line.split(' ')
        .filter(|kv| kv.starts_with("files"))
        .collect::<Vec<_>>()
        .join(" ")
}

const CLAUDE: &str = "claude-project/rewind_parallel-results_placeholder-usage.jsonl";
const CODEX: &str = "codex-rollout/rollout_events-and-history-once_token-totals_compacted.jsonl";
const CURSOR: &str = "cursor/basic.jsonl";

/// A directory is read as its session files in name order, depth first:
/// the same output as naming those files in that order; the files that are
/// not sessions (by name or by content) are skipped and counted.
#[test]
fn a_directory_is_its_session_files_in_name_order() {
    let d = scratch("order");
    copy(CODEX, &d.join("b/rollout-2.jsonl"));
    copy(CLAUDE, &d.join("a/s.jsonl"));
    copy(CURSOR, &d.join("c.jsonl"));
    // Not sessions: by name, binary, empty, JSON that no agent wrote.
    std::fs::write(d.join("a/notes.txt"), "{\"type\":\"user\"}\n").unwrap();
    std::fs::write(d.join("a/blob.jsonl"), b"{\"a\":\x00}\n").unwrap();
    std::fs::write(d.join("b/empty.jsonl"), b"").unwrap();
    std::fs::write(
        d.join("package.json"),
        "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\"\n}\n",
    )
    .unwrap();
    let files = [
        d.join("a/s.jsonl"),
        d.join("b/rollout-2.jsonl"),
        d.join("c.jsonl"),
    ];
    for to in ["events", "text", "documents"] {
        // Sessions without a timestamp are dated by the clock: pinned.
        let walked = cstream(&["--to", to, "--created", "1", "--stats", s(&d)], b"");
        let named: Vec<&str> = ["--to", to, "--created", "1", "--stats"]
            .into_iter()
            .chain(files.iter().map(|f| s(f)))
            .collect();
        let named = cstream(&named, b"");
        assert_eq!(walked.out(), named.out(), "{to}");
        assert_eq!(walked.code, 0, "{}", walked.stderr);
        assert_eq!(
            file_stats(&walked.stderr),
            "files=3 files_cursor=1 files_claude-project=1 files_codex-rollout=1 files_skipped=4"
        );
        // Named files are not a walk: no file counts.
        assert_eq!(file_stats(&named.stderr), "", "{}", named.stderr);
    }
}

/// Bad files in a tree: each reported with its name (and line), the rest
/// of the tree converted, the exit status as for named files: a file that
/// cannot be read is an error (2), a line that is not JSON (a cut-off last
/// line) is bad input (1), invalid UTF-8 is repaired (a warning), a symlink
/// loop is not followed (a warning).
#[cfg(unix)]
#[test]
fn bad_files_in_a_tree_are_named_and_the_rest_converted() {
    let d = scratch("bad");
    copy(CURSOR, &d.join("a-good.jsonl"));
    // Cut off in the middle of its last line, as while the agent writes.
    let whole = std::fs::read(fixtures_dir().join(CLAUDE)).unwrap();
    let cut = &whole[..whole.len() - 40];
    std::fs::write(d.join("b-cut.jsonl"), cut).unwrap();
    // Invalid UTF-8 in a line.
    let mut bytes = std::fs::read(fixtures_dir().join(CURSOR)).unwrap();
    let at = bytes.windows(2).position(|w| w == b"Hi").unwrap_or(40);
    bytes[at] = 0xff;
    std::fs::write(d.join("c-latin1.jsonl"), &bytes).unwrap();
    // A link to nowhere: it cannot be read.
    std::os::unix::fs::symlink(d.join("gone.jsonl"), d.join("d-dangling.jsonl")).unwrap();
    // A link back to the top: a loop.
    std::fs::create_dir_all(d.join("e")).unwrap();
    std::os::unix::fs::symlink(&d, d.join("e/loop")).unwrap();
    copy(CODEX, &d.join("e/z.jsonl"));

    let r = cstream(&["--to", "events", "--stats", s(&d)], b"");
    let name = |f: &str| s(&d.join(f)).to_owned();
    assert!(
        r.stderr
            .contains(&format!("cstream: error: {}:", name("d-dangling.jsonl"))),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("cstream: warning: {}:", name("e/loop"))),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("not followed"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("cstream: warning: {}:", name("c-latin1.jsonl"))),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("cstream: warning: {}:", name("b-cut.jsonl"))),
        "{}",
        r.stderr
    );
    // Every readable session is in the output, once.
    let started = r.out().matches("\"type\":\"session_started\"").count();
    assert_eq!(started, 4, "{}", r.out());
    assert_eq!(
        file_stats(&r.stderr),
        "files=4 files_cursor=2 files_claude-project=1 files_codex-rollout=1 files_skipped=1"
    );
    // The unreadable file decides the status.
    assert_eq!(r.code, 2);
    std::fs::remove_file(d.join("d-dangling.jsonl")).unwrap();
    let r = cstream(&["--to", "events", s(&d)], b"");
    // The cut-off line is bad input.
    assert_eq!(r.code, 1, "{}", r.stderr);
}

/// A tree large enough that its files are sniffed by several threads: the
/// same files in the same order as one thread finds them, the skipped ones
/// counted (the walk shares the files out in contiguous parts, so each
/// thread's part must come back in its place).
#[test]
fn a_large_tree_is_read_in_name_order() {
    let d = scratch("large");
    let mut named = Vec::new();
    let mut skipped = 0;
    for i in 0..300 {
        let f = d.join(format!("p{}/f{i:03}.jsonl", i / 40));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        if i % 7 == 3 {
            // JSON no agent wrote: skipped by its content.
            std::fs::write(&f, "{\"name\":\"x\",\"version\":\"1\"}\n").unwrap();
            skipped += 1;
            continue;
        }
        std::fs::write(
            &f,
            format!(
                "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s{i}\",\"model\":\"m\",\"cwd\":\"/\"}}\n\
                 {{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"s{i}\",\"result\":\"ok {i}\",\"duration_ms\":1}}\n"
            ),
        )
        .unwrap();
        named.push(f);
    }
    let walked = cstream(&["--to", "events", "--stats", "-j", "1", s(&d)], b"");
    let args: Vec<&str> = ["--to", "events", "-j", "1"]
        .into_iter()
        .chain(named.iter().map(|f| s(f)))
        .collect();
    let by_name = cstream(&args, b"");
    assert_eq!(walked.code, 0, "{}", walked.stderr);
    assert_eq!(walked.out(), by_name.out());
    let ids: Vec<String> = walked
        .out()
        .lines()
        .filter(|l| l.contains("\"type\":\"session_started\""))
        .map(|l| {
            l.split("\"sessionId\":\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let expected: Vec<String> = (0..300)
        .filter(|i| i % 7 != 3)
        .map(|i| format!("s{i}"))
        .collect();
    assert_eq!(ids, expected);
    assert!(
        file_stats(&walked.stderr).ends_with(&format!("files_skipped={skipped}")),
        "{}",
        walked.stderr
    );
    // With --output-dir the files are sniffed during the walk, several at a
    // time: an output for each session file, and none for the others.
    let out = scratch("large-out");
    let run = cstream(
        &["--to", "events", "--stats", "--output-dir", s(&out), s(&d)],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        file_stats(&run.stderr).ends_with(&format!("files_skipped={skipped}")),
        "{}",
        run.stderr
    );
    let mut written = Vec::new();
    for part in std::fs::read_dir(&out).unwrap() {
        for f in std::fs::read_dir(part.unwrap().path()).unwrap() {
            let f = f.unwrap().path();
            written.push(f.file_stem().unwrap().to_str().unwrap().to_owned());
        }
    }
    written.sort();
    let expected: Vec<String> = named
        .iter()
        .map(|f| f.file_stem().unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(written, expected);
}

/// Issue 27's tree: one file of each agent added in 2026 and of each
/// drifted shape of the agents read before, in one directory. A walk
/// reads every one as its own agent (none skipped, none taken for
/// another), and in every format gives what naming the files does, with
/// one job and with two.
#[test]
fn a_tree_of_todays_agents_and_drifted_shapes_is_read_whole() {
    let d = scratch("todays-agents");
    let files: &[(&str, &str, &str)] = &[
        (
            "antigravity/plain-text_cache_thinking_v1.1.12.jsonl",
            "a/agy.jsonl",
            "antigravity",
        ),
        (
            "antigravity-transcript/tools_running-command_checkpoint_v1.2.15.jsonl",
            "b/brain/5b0e/.system_generated/logs/transcript.jsonl",
            "antigravity-transcript",
        ),
        (
            "claude-project/metadata-records_titles_signature-only-thinking_unknown-lines_2.1.240.jsonl",
            "c/claude.jsonl",
            "claude-project",
        ),
        (
            "codex-rollout/idle-compressed_0.151.jsonl.zst",
            "d/rollout-a.jsonl.zst",
            "codex-rollout",
        ),
        (
            "codex-rollout/item-completed_prompt-reasoning-command-answer-once_0.147.jsonl",
            "d/rollout-b.jsonl",
            "codex-rollout",
        ),
        (
            "codex-rollout/token-usage-record_beside-token-count_deduped_0.151.jsonl",
            "d/rollout-c.jsonl",
            "codex-rollout",
        ),
        (
            "copilot/tools_subagent_resume_v1.0.88.jsonl",
            "e/events.jsonl",
            "copilot",
        ),
        (
            "gemini-chat/jsonl_rewritten-by-id_rewind_set-summary_0.43.jsonl",
            "f/session-a.jsonl",
            "gemini-chat",
        ),
        (
            "gemini-chat/jsonl_set-messages-checkpoint_0.43.jsonl",
            "f/session-b.jsonl",
            "gemini-chat",
        ),
        (
            "opencode/export_compaction_task_aborted_src-07fa8106.json",
            "g/export.json",
            "opencode",
        ),
        (
            "opencode/run-json_tools_reasoning_done_src-00f9806c.jsonl",
            "g/run.jsonl",
            "opencode",
        ),
        (
            "pi/tree-branches_compaction_tools_v3.jsonl",
            "h/pi.jsonl",
            "pi",
        ),
    ];
    let mut named = Vec::new();
    for (from, to, _) in files {
        copy(from, &d.join(to));
        named.push(d.join(to));
    }
    named.sort();
    let mut want: Vec<(&str, usize)> = Vec::new();
    for (_, _, dialect) in files {
        match want.iter_mut().find(|(d, _)| d == dialect) {
            Some((_, n)) => *n += 1,
            None => want.push((dialect, 1)),
        }
    }
    for (label, args) in crate::common::FORMATS {
        for jobs in ["1", "2"] {
            // Sessions without a timestamp are dated by the clock: pinned.
            let mut walk_args: Vec<&str> = args.to_vec();
            if !walk_args.contains(&"--created") {
                walk_args.extend(["--created", "1"]);
            }
            let mut named_args = walk_args.clone();
            walk_args.extend(["--stats", "-j", jobs, s(&d)]);
            let walked = cstream(&walk_args, b"");
            named_args.extend(["-j", jobs]);
            named_args.extend(named.iter().map(|f| s(f)));
            let by_name = cstream(&named_args, b"");
            assert_eq!(walked.out(), by_name.out(), "{label} -j {jobs}");
            assert_eq!(walked.code, by_name.code, "{label}: {}", walked.stderr);
            let stats = file_stats(&walked.stderr);
            assert!(
                stats.starts_with(&format!("files={} ", files.len())),
                "{stats}"
            );
            assert!(stats.ends_with(" files_skipped=0"), "{label}: {stats}");
            for (dialect, n) in &want {
                assert!(
                    stats.contains(&format!("files_{dialect}={n}")),
                    "{label}: {dialect} in {stats}"
                );
            }
        }
    }
}
