//! OpenCode: the live stream, the export and the SQLite store, each checked
//! against an independent reading of the raw input (usage and cost summed
//! over the steps, every call started and completed once, texts once), and
//! the store's bad cases (a writer holding it, not OpenCode's, cut short,
//! locked) reported with the file's name and nothing else lost.

use crate::common;

use std::path::PathBuf;

use common::{cstream_file, events, fixtures_dir};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join("opencode").join(name)
}

/// The usage a step's `tokens` stands for, normalized: input with the
/// cache, output with the reasoning.
fn step_usage(tokens: &Value) -> (u64, u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let (read, write) = (n(&tokens["cache"]["read"]), n(&tokens["cache"]["write"]));
    (
        n(&tokens["input"]) + read + write,
        n(&tokens["output"]) + n(&tokens["reasoning"]),
        read,
        write,
    )
}

/// What the events say: usage summed from the deltas, the result's usage
/// and cost, calls started and completed (by id), the answer's text.
struct Seen {
    deltas: (u64, u64, u64, u64),
    result: Value,
    started: Vec<String>,
    completed: Vec<(String, bool)>,
    text: String,
}

fn seen(evs: &[Value]) -> Seen {
    let mut s = Seen {
        deltas: (0, 0, 0, 0),
        result: Value::Null,
        started: Vec::new(),
        completed: Vec::new(),
        text: String::new(),
    };
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    for e in evs {
        match e["type"].as_str().unwrap() {
            "usage_delta" => {
                s.deltas.0 += n(&e["deltaInput"]);
                s.deltas.1 += n(&e["deltaOutput"]);
                s.deltas.2 += n(&e["deltaCacheRead"]);
                s.deltas.3 += n(&e["deltaCacheWrite"]);
            }
            "result" => s.result = e.clone(),
            "tool_call_started" => s.started.push(e["callId"].as_str().unwrap().to_owned()),
            "tool_call_completed" => s.completed.push((
                e["callId"].as_str().unwrap().to_owned(),
                e["ok"].as_bool().unwrap(),
            )),
            "text_delta" => s.text.push_str(e["text"].as_str().unwrap()),
            _ => {}
        }
    }
    s
}

fn add(a: (u64, u64, u64, u64), b: (u64, u64, u64, u64)) -> (u64, u64, u64, u64) {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2, a.3 + b.3)
}

#[test]
fn live_stream_usage_cost_calls_and_text() {
    let path = fixture("run-json_tools_reasoning_done_src-00f9806c.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (mut usage, mut cost, mut calls, mut text) = ((0, 0, 0, 0), 0.0, Vec::new(), String::new());
    for l in &lines {
        match l["type"].as_str().unwrap() {
            "step_finish" => {
                usage = add(usage, step_usage(&l["part"]["tokens"]));
                cost += l["part"]["cost"].as_f64().unwrap();
            }
            "tool_use" => {
                let ok =
                    l["part"]["state"]["status"] == "completed" && l["part"]["tool"] != "invalid";
                calls.push((l["part"]["callID"].as_str().unwrap().to_owned(), ok));
            }
            "text" => text.push_str(l["part"]["text"].as_str().unwrap()),
            _ => {}
        }
    }
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "opencode");
    assert_eq!(evs[0]["sessionId"], lines[0]["sessionID"]);
    let s = seen(&evs);
    assert_eq!(s.deltas, usage);
    let u = &s.result["usage"];
    assert_eq!(
        (
            u["inputTokens"].as_u64().unwrap(),
            u["outputTokens"].as_u64().unwrap(),
            u["cacheReadTokens"].as_u64().unwrap(),
            u["cacheWriteTokens"].as_u64().unwrap()
        ),
        usage
    );
    assert!((s.result["costUsd"].as_f64().unwrap() - cost).abs() < 1e-9);
    assert_eq!(s.result["ok"], true);
    let ids: Vec<String> = calls.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(s.started, ids);
    assert_eq!(s.completed, calls);
    assert_eq!(s.text, text);
}

#[test]
fn a_denied_or_malformed_call_is_the_tool_asked_for_and_failed() {
    let run = cstream_file(
        &["--to", "events"],
        &fixture("run-json_tools_reasoning_done_src-00f9806c.jsonl"),
    );
    let evs = events(&run.out());
    let end = evs
        .iter()
        .find(|e| e["type"] == "tool_call_completed" && e["callId"] == "call_i1Zx0")
        .unwrap();
    assert_eq!(end["toolName"], "write");
    assert_eq!(end["ok"], false);
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("arguments provided to the tool are invalid")
    );
}

#[test]
fn a_live_stream_cut_after_an_error_has_no_result() {
    let run = cstream_file(
        &["--to", "events"],
        &fixture("run-json_api-error_no-done_v1.18.21.jsonl"),
    );
    let evs = events(&run.out());
    assert!(evs.iter().all(|e| e["type"] != "result"), "{evs:?}");
    let err = evs.iter().find(|e| e["type"] == "error").unwrap();
    assert_eq!(err["message"], "Overloaded");
    assert_eq!(err["source"], "APIError");
}

/// Usage (input, output, cache read, cache write), cost, calls (id, ok)
/// and answer text, read from the raw input.
type Expected = ((u64, u64, u64, u64), f64, Vec<(String, bool)>, String);

/// An export's usage and cost, summed over its step-finish parts, and its
/// calls and answer text.
fn export_expect(doc: &Value) -> Expected {
    let (mut usage, mut cost, mut calls, mut text) = ((0, 0, 0, 0), 0.0, Vec::new(), String::new());
    for m in doc["messages"].as_array().unwrap() {
        let assistant = m["info"]["role"] == "assistant";
        let summary = m["info"]["summary"] == true;
        for p in m["parts"].as_array().unwrap() {
            match p["type"].as_str().unwrap() {
                "step-finish" => {
                    usage = add(usage, step_usage(&p["tokens"]));
                    cost += p["cost"].as_f64().unwrap();
                }
                "tool" => {
                    let ok = p["state"]["status"] == "completed" && p["tool"] != "invalid";
                    calls.push((p["callID"].as_str().unwrap().to_owned(), ok));
                }
                "text" if assistant && !summary => text.push_str(p["text"].as_str().unwrap()),
                _ => {}
            }
        }
    }
    (usage, cost, calls, text)
}

#[test]
fn exports_usage_cost_calls_and_text() {
    for name in [
        "export_compaction_task_aborted_src-07fa8106.json",
        "export_one-line_subagent_src-07fa8106.json",
    ] {
        let path = fixture(name);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (usage, cost, calls, text) = export_expect(&doc);
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let evs = events(&run.out());
        assert_eq!(evs[0]["sessionId"], doc["info"]["id"], "{name}");
        assert_eq!(evs[0]["cwd"], doc["info"]["directory"], "{name}");
        let s = seen(&evs);
        assert_eq!(s.deltas, usage, "{name}");
        assert!(
            (s.result["costUsd"].as_f64().unwrap() - cost).abs() < 1e-9,
            "{name}"
        );
        let ids: Vec<String> = calls.iter().map(|(id, _)| id.clone()).collect();
        assert_eq!(s.started, ids, "{name}");
        assert_eq!(s.completed, calls, "{name}");
        assert_eq!(s.text, text, "{name}");
    }
}

#[test]
fn a_subagent_session_names_its_parent() {
    let run = cstream_file(
        &["--to", "events"],
        &fixture("export_one-line_subagent_src-07fa8106.json"),
    );
    let evs = events(&run.out());
    assert_eq!(evs[0]["parentSessionId"], "ses_0c2b7e11affeQ3rT9uVwXyZa01");
}

/// The SQLite store (the `sqlite` feature).
#[cfg(feature = "sqlite")]
mod store {
    use super::*;
    use common::cstream;
    use std::path::Path;

    /// A fresh file path under the temporary directory, for this test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cstream-opencode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
        }
        p
    }

    /// The store fixture's SQL made into a database at `path`.
    fn make_db(path: &Path, wal: bool) -> rusqlite::Connection {
        let sql = std::fs::read_to_string(fixture("store_v1.18.21.sql")).unwrap();
        let conn = rusqlite::Connection::open(path).unwrap();
        if wal {
            conn.pragma_update(None, "journal_mode", "wal").unwrap();
        }
        conn.execute_batch(&sql).unwrap();
        conn
    }

    /// The store holds the two exported sessions: read from it, they are the
    /// same events as the two exports read one after the other (the part ids
    /// the store keeps in columns aside, which only an `unknown` part shows).
    #[test]
    fn the_store_reads_as_its_sessions_exports() {
        let db = scratch("store.db");
        drop(make_db(&db, false));
        let run = cstream_file(&["--to", "events"], &db);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let a = cstream(
            &[
                "--to",
                "events",
                fixture("export_compaction_task_aborted_src-07fa8106.json")
                    .to_str()
                    .unwrap(),
                fixture("export_one-line_subagent_src-07fa8106.json")
                    .to_str()
                    .unwrap(),
            ],
            b"",
        );
        let strip = |mut e: Value| {
            if e["type"] == "unknown" {
                let raw = e["raw"].as_object_mut().unwrap();
                for k in ["id", "sessionID", "messageID"] {
                    raw.remove(k);
                }
            }
            e
        };
        let from_db: Vec<Value> = events(&run.out()).into_iter().map(strip).collect();
        let from_export: Vec<Value> = events(&a.out()).into_iter().map(strip).collect();
        assert_eq!(from_db.len(), from_export.len());
        for (d, e) in from_db.iter().zip(&from_export) {
            // The export's step usage is dated at its message's end too.
            assert_eq!(d, e);
        }
        let starts = from_db
            .iter()
            .filter(|e| e["type"] == "session_started")
            .count();
        assert_eq!(starts, 2, "one session per stored session");
    }

    #[test]
    fn a_store_a_writer_holds_open_is_read_without_waiting() {
        let db = scratch("busy.db");
        let conn = make_db(&db, true);
        // Another program in the middle of writing a new session.
        conn.execute_batch(
            "BEGIN IMMEDIATE; INSERT INTO session (id, project_id, slug, directory, title, version, \
             time_created, time_updated) VALUES ('ses_new', (SELECT id FROM project), 's', '/', 't', '1', 1, 1);",
        )
        .unwrap();
        // A reader that had to wait for the writer would time out with an
        // error (exit 2) instead.
        let run = cstream_file(&["--to", "events"], &db);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let evs = events(&run.out());
        let ids: Vec<&Value> = evs
            .iter()
            .filter(|e| e["type"] == "session_started")
            .map(|e| &e["sessionId"])
            .collect();
        // The committed sessions; the one being written is not there yet.
        assert_eq!(ids.len(), 2, "{ids:?}");
        // And the writer was not blocked: it commits.
        conn.execute_batch("COMMIT").unwrap();
    }

    /// A bad database is an error naming it; the input after it is read all
    /// the same.
    fn bad_db_then_fixture(db: &Path, says: &str) {
        let after = fixture("export_one-line_subagent_src-07fa8106.json");
        let run = cstream(
            &[
                "--to",
                "events",
                db.to_str().unwrap(),
                after.to_str().unwrap(),
            ],
            b"",
        );
        assert_ne!(run.code, 0);
        assert!(run.stderr.contains(db.to_str().unwrap()), "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
        let evs = events(&run.out());
        assert!(
            evs.iter().any(
                |e| e["type"] == "result" && e["sessionId"] == "ses_0c2b7e2000ffChildSession01"
            ),
            "the next input was lost: {}",
            run.out()
        );
    }

    #[test]
    fn an_sqlite_file_that_is_not_opencodes_is_reported() {
        let db = scratch("other.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE notes (id integer primary key, body text); INSERT INTO notes VALUES (1, 'x');")
            .unwrap();
        drop(conn);
        bad_db_then_fixture(&db, "without OpenCode's tables");
    }

    #[test]
    fn a_store_cut_short_is_reported() {
        let db = scratch("whole.db");
        drop(make_db(&db, false));
        let bytes = std::fs::read(&db).unwrap();
        assert!(bytes.len() > 8192, "the store is several pages");
        let cut = scratch("cut.db");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        bad_db_then_fixture(&cut, "cannot read this SQLite database");
    }

    #[test]
    fn a_store_locked_by_a_writer_is_reported_after_a_wait() {
        let db = scratch("locked.db");
        let conn = make_db(&db, false);
        // The old rollback journal with an exclusive lock: no reader may read.
        conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;")
            .unwrap();
        bad_db_then_fixture(&db, "locked");
        conn.execute_batch("COMMIT").unwrap();
    }

    #[test]
    fn a_store_on_standard_input_is_reported() {
        let db = scratch("stdin.db");
        drop(make_db(&db, false));
        let bytes = std::fs::read(&db).unwrap();
        let run = cstream(&["--to", "events"], &bytes);
        assert_ne!(run.code, 0);
        assert!(run.stderr.contains("SQLite database"), "{}", run.stderr);
    }

    /// `--output-dir` reads a store like a directory of sessions: one
    /// output each, under the store's name, the same as its export gives.
    #[test]
    fn output_dir_writes_one_file_per_stored_session() {
        let db = scratch("split.db");
        drop(make_db(&db, false));
        let out = scratch("split-out");
        let _ = std::fs::remove_dir_all(&out);
        let run = cstream(
            &[
                "--to",
                "events",
                "--output-dir",
                out.to_str().unwrap(),
                db.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        for (id, export) in [
            (
                "ses_0c2b7e11affeQ3rT9uVwXyZa01",
                "export_compaction_task_aborted_src-07fa8106.json",
            ),
            (
                "ses_0c2b7e2000ffChildSession01",
                "export_one-line_subagent_src-07fa8106.json",
            ),
        ] {
            let file = out.join("split").join(format!("{id}.ndjson"));
            let got = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let want = cstream_file(&["--to", "events"], &fixture(export)).out();
            let strip_unknown = |s: &str| -> Vec<String> {
                s.lines()
                    .filter(|l| !l.contains("\"type\":\"unknown\""))
                    .map(str::to_owned)
                    .collect()
            };
            assert_eq!(strip_unknown(&got), strip_unknown(&want), "{id}");
        }
        let files = std::fs::read_dir(out.join("split")).unwrap().count();
        assert_eq!(files, 2);
    }

    /// A directory walk reads a store named `opencode.db` (another SQLite
    /// file is skipped by its name), beside the JSON sessions.
    #[test]
    fn a_walk_reads_opencode_db_and_skips_other_databases() {
        let dir = scratch("walk");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("opencode")).unwrap();
        drop(make_db(&dir.join("opencode").join("opencode.db"), true));
        drop(make_db(&dir.join("notes.db"), false));
        std::fs::copy(
            fixture("export_one-line_subagent_src-07fa8106.json"),
            dir.join("sub.json"),
        )
        .unwrap();
        let run = cstream(&["--to", "events", dir.to_str().unwrap()], b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        let starts = events(&run.out())
            .into_iter()
            .filter(|e| e["type"] == "session_started")
            .count();
        assert_eq!(starts, 3, "two stored sessions and the export");
    }

    /// A whole store, made once, as bytes.
    fn store_bytes() -> &'static [u8] {
        static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        BYTES.get_or_init(|| {
            let db = scratch("pristine.db");
            drop(make_db(&db, false));
            std::fs::read(&db).unwrap()
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// A store damaged anywhere (bytes changed, cut short) never stops
        /// the run: every format's output is well formed, and what cannot
        /// be read is an error naming the file.
        #[test]
        fn a_damaged_store_gives_well_formed_output_or_an_error_naming_it(
            case in 0u32..1_000_000,
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            flips in proptest::collection::vec(
                (proptest::prelude::any::<proptest::sample::Index>(), 1u8..=255), 0..6),
        ) {
            let mut b = store_bytes().to_vec();
            for (at, x) in &flips {
                // Past the 100-byte header: its magic keeps the file an SQLite one.
                let i = 100 + at.index(b.len() - 100);
                b[i] ^= x;
            }
            let keep = 100 + cut.index(b.len() - 100 + 1);
            if flips.is_empty() || keep % 2 == 0 {
                b.truncate(keep);
            }
            let db = scratch(&format!("damaged-{case}.db"));
            std::fs::write(&db, &b).unwrap();
            for (name, args) in common::FORMATS {
                let run = cstream_file(args, &db);
                let (to, color) = common::format_of(args);
                if let Err(e) = common::wellformed::check(to, color, &run.stdout) {
                    return Err(proptest::test_runner::TestCaseError::fail(format!("{name}: {e}")));
                }
                if run.code != 0 && run.code != 3 {
                    proptest::prop_assert!(
                        run.stderr.contains(db.to_str().unwrap()),
                        "{name}: exit {} without naming the file: {}", run.code, run.stderr
                    );
                }
            }
            let _ = std::fs::remove_file(&db);
        }
    }
}
