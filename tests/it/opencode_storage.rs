//! OpenCode's JSON storage directory (its sessions before v1.2): a
//! directory read as its sessions, each as the SQLite store reads the same
//! content; damaged or dangling files named in warnings, nothing else lost.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{FORMATS, cstream, cstream_file, events, fixtures_dir, show_escapes};

const TREE: &str = "storage_pre-v1.2_src-062aa8c0";
const PARENT: &str = "ses_3f2a9c41dfffKq7RmN2vXbT0aa";
const CHILD: &str = "ses_3f2a9c3e6fffHc4WpL8sYdU1bb";
const PROJECT: &str = "9f3e1c0b7a5d2e4f6a8b0c1d2e3f4a5b6c7d8e9f";

/// The fixture's `storage/` directory.
fn tree() -> PathBuf {
    fixtures_dir().join("opencode").join(TREE).join("storage")
}

/// A fresh directory under the temporary directory, for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("cstream-ocstorage-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn of_type<'a>(evs: &'a [Value], ty: &str) -> Vec<&'a Value> {
    evs.iter().filter(|e| e["type"] == ty).collect()
}

fn session_ids(evs: &[Value]) -> Vec<String> {
    of_type(evs, "session_started")
        .iter()
        .map(|e| e["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

/// The directory in every format, snapshotted as the fixture files are.
#[test]
fn storage_tree_in_every_format() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, args) in FORMATS {
            let run = cstream_file(args, &tree());
            let mut shown = show_escapes(&run.out());
            if !run.stderr.is_empty() {
                shown.push_str("\n----- stderr -----\n");
                // The checkout's own path is not part of what is shown.
                let root = format!("{}/", env!("CARGO_MANIFEST_DIR"));
                shown.push_str(&run.stderr.replace(&root, ""));
            }
            shown.push_str(&format!("\n----- exit {} -----\n", run.code));
            insta::assert_snapshot!(format!("{name}@opencode__{TREE}"), shown);
        }
    });
}

/// Each session once, in the order OpenCode's store keeps them (created
/// first: session ids descend with time, so the id order is the reverse);
/// a message's parts in id order; the sub-agent names its parent.
#[test]
fn the_directory_reads_as_its_sessions() {
    let run = cstream_file(&["--to", "events"], &tree());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(session_ids(&evs), [PARENT, CHILD]);
    let child = of_type(&evs, "session_started")[1];
    assert_eq!(child["parentSessionId"], PARENT, "{child}");
    assert!(of_type(&evs, "unknown").is_empty());
    let calls: Vec<&str> = of_type(&evs, "tool_call_started")
        .iter()
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "toolu_01ReadCfg",
            "toolu_01EditCfg",
            "toolu_01TaskUse",
            "toolu_01BashTest",
            "toolu_01GrepUse"
        ]
    );
    // The store's own figures: two steps of the parent, one of the child.
    let results = of_type(&evs, "result");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["costUsd"], 0.02573, "{}", results[0]);
    assert_eq!(results[1]["costUsd"], 0.00118, "{}", results[1]);
}

/// A directory that holds `storage/` (OpenCode's data directory) is walked
/// to it, and its files are never read one by one.
#[test]
fn a_walk_reads_the_storage_directory_whole() {
    let parent = tree().parent().unwrap().to_path_buf();
    let run = cstream(
        &["--to", "events", "--stats", parent.to_str().unwrap()],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(session_ids(&events(&run.out())), [PARENT, CHILD]);
    assert!(run.stderr.contains(" files=1 "), "{}", run.stderr);
    assert!(run.stderr.contains(" files_skipped=0 "), "{}", run.stderr);
}

/// Among other files of a walk, read by `--jobs` workers, the directory
/// gives what one thread gives.
#[test]
fn parallel_jobs_read_it_as_one_thread_does() {
    let dir = scratch("jobs");
    copy_tree(&tree(), &dir.join("storage"));
    std::fs::copy(
        fixtures_dir().join("opencode/export_one-line_subagent_src-07fa8106.json"),
        dir.join("a.json"),
    )
    .unwrap();
    let run = |jobs: &str| {
        let r = cstream(
            &["--to", "events", "--jobs", jobs, dir.to_str().unwrap()],
            b"",
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        events(&r.out())
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!(session_ids(&one).len(), 3);
    assert_eq!(one, two);
}

/// One of its session files names the session to read: its messages are
/// read with it.
#[test]
fn a_session_file_reads_its_session() {
    let file = tree()
        .join("session")
        .join(PROJECT)
        .join(format!("{CHILD}.json"));
    let run = cstream_file(&["--to", "events"], &file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(session_ids(&evs), [CHILD]);
    assert_eq!(of_type(&evs, "tool_call_completed").len(), 1);
    assert_eq!(of_type(&evs, "text_delta").len(), 1);
}

/// `--output-dir`: one file per session, named after the directory and the
/// session, each the same as that session read from the whole directory.
#[test]
fn output_dir_writes_one_file_per_session() {
    let out = scratch("outdir");
    let run = cstream(
        &[
            "--to",
            "events",
            "--output-dir",
            out.to_str().unwrap(),
            tree().to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let whole = events(&cstream_file(&["--to", "events"], &tree()).out());
    let mut from_files = Vec::new();
    for id in [PARENT, CHILD] {
        let file = out.join("storage").join(format!("{id}.ndjson"));
        let got =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let evs = events(&got);
        assert_eq!(session_ids(&evs), [id]);
        from_files.extend(evs);
    }
    assert_eq!(from_files, whole);
    assert_eq!(std::fs::read_dir(out.join("storage")).unwrap().count(), 2);
}

/// Damage of every kind at once: each is a warning naming its file, and
/// everything else is read.
#[test]
fn damaged_and_dangling_files_are_named_and_nothing_else_is_lost() {
    let dir = scratch("damaged").join("storage");
    copy_tree(&tree(), &dir);
    // A part that is not JSON (the bash call of the parent's second answer).
    let broken =
        dir.join("part/msg_b3c41e400001Zc9Mr4No1Sy5Gt/prt_b3c41e400003Wx3Yz4Ab5Cd6Ef.json");
    std::fs::write(&broken, "{\n  \"id\": \"prt_b3c41e400003").unwrap();
    // The parts of the child's prompt are gone.
    std::fs::remove_dir_all(dir.join("part/msg_b3c41e310001Cf2Pu7Qr4Vb8Jw")).unwrap();
    // Parts of a message that is not stored.
    std::fs::create_dir_all(dir.join("part/msg_ffff00000001Zz")).unwrap();
    std::fs::write(
        dir.join("part/msg_ffff00000001Zz/prt_ffff00000002Zz.json"),
        r#"{"id": "prt_ffff00000002Zz", "type": "text", "text": "lost"}"#,
    )
    .unwrap();
    // Messages of a session whose file is missing.
    let orphan = "ses_0000aaaa0000OrphanSession1";
    std::fs::create_dir_all(dir.join("message").join(orphan)).unwrap();
    std::fs::write(
        dir.join("message").join(orphan).join("msg_c000000000010rphan.json"),
        r#"{"id": "msg_c000000000010rphan", "sessionID": "ses_0000aaaa0000OrphanSession1", "role": "user", "time": {"created": 1767002000000}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("part/msg_c000000000010rphan")).unwrap();
    std::fs::write(
        dir.join("part/msg_c000000000010rphan/prt_c000000000020rphan.json"),
        r#"{"id": "prt_c000000000020rphan", "type": "text", "text": "still here"}"#,
    )
    .unwrap();

    let run = cstream_file(&["--to", "events"], &dir);
    let says = |what: &str, path: &Path| {
        let name = path.display().to_string();
        assert!(
            run.stderr
                .lines()
                .any(|l| l.contains(&name) && l.contains(what)),
            "no warning naming {name} ({what}):\n{}",
            run.stderr
        );
    };
    says("not JSON; this part is not read", &broken);
    says(
        "no part files",
        &dir.join("message")
            .join(CHILD)
            .join("msg_b3c41e310001Cf2Pu7Qr4Vb8Jw.json"),
    );
    says(
        "which no message directory holds",
        &dir.join("part/msg_ffff00000001Zz"),
    );
    says("no session file", &dir.join("message").join(orphan));
    // Data was lost: the run says so in its exit status.
    assert_eq!(run.code, 1, "{}", run.stderr);

    let evs = events(&run.out());
    assert_eq!(session_ids(&evs), [PARENT, CHILD, orphan]);
    let calls: Vec<&str> = of_type(&evs, "tool_call_completed")
        .iter()
        .map(|e| e["callId"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "toolu_01ReadCfg",
            "toolu_01EditCfg",
            "toolu_01TaskUse",
            "toolu_01GrepUse"
        ],
        "only the broken part's call is missing"
    );
    let prompts: Vec<&str> = of_type(&evs, "user_message")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(prompts.contains(&"still here"), "{prompts:?}");
    assert!(!prompts.contains(&"lost"), "{prompts:?}");
}

/// OpenCode 1.2 moved the directory's sessions into `opencode.db`, the
/// layout its migration reads (`storage/json-migration.ts`): ids from the
/// file paths, the rest of each file its row's `data`. The same content
/// read from either store is the same events.
#[cfg(feature = "sqlite")]
mod against_the_store {
    use super::*;

    fn read(path: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    fn files(dir: &Path) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let stem = p.file_stem().unwrap().to_str().unwrap().to_owned();
                (stem, p)
            })
            .collect();
        out.sort();
        out
    }

    /// The tables of `fixtures/opencode/store_v1.18.21.sql`, filled from
    /// the storage directory at `root` as OpenCode's migration fills them.
    pub(super) fn migrate(root: &Path, db: &Path) {
        let sql =
            std::fs::read_to_string(fixtures_dir().join("opencode/store_v1.18.21.sql")).unwrap();
        let conn = rusqlite::Connection::open(db).unwrap();
        for stmt in sql.lines().filter(|l| l.starts_with("CREATE ")) {
            conn.execute_batch(stmt).unwrap();
        }
        for (id, file) in files(&root.join("project")) {
            let v = read(&file);
            conn.execute(
                "INSERT INTO project VALUES (?1, ?2, ?3, ?3)",
                rusqlite::params![id, v["worktree"].as_str(), v["time"]["created"].as_i64()],
            )
            .unwrap();
        }
        let mut session_of = std::collections::HashMap::new();
        for (project, dir) in files(&root.join("session")) {
            for (id, file) in files(&dir) {
                let v = read(&file);
                conn.execute(
                    "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, \
                     time_created, time_updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    rusqlite::params![
                        id,
                        project,
                        v["parentID"].as_str(),
                        v["slug"].as_str().unwrap_or(""),
                        v["directory"].as_str().unwrap_or(""),
                        v["title"].as_str().unwrap_or(""),
                        v["version"].as_str().unwrap_or(""),
                        v["time"]["created"].as_i64(),
                        v["time"]["updated"].as_i64(),
                    ],
                )
                .unwrap();
                for (mid, mfile) in files(&root.join("message").join(&id)) {
                    let mut m = read(&mfile);
                    let created = m["time"]["created"].as_i64();
                    let o = m.as_object_mut().unwrap();
                    o.remove("id");
                    o.remove("sessionID");
                    conn.execute(
                        "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
                        rusqlite::params![mid, id, created, m.to_string()],
                    )
                    .unwrap();
                    session_of.insert(mid, id.clone());
                }
            }
        }
        for (mid, dir) in files(&root.join("part")) {
            for (pid, file) in files(&dir) {
                let mut p = read(&file);
                let o = p.as_object_mut().unwrap();
                for k in ["id", "messageID", "sessionID"] {
                    o.remove(k);
                }
                conn.execute(
                    "INSERT INTO part VALUES (?1, ?2, ?3, 0, 0, ?4)",
                    rusqlite::params![pid, mid, session_of[&mid], p.to_string()],
                )
                .unwrap();
            }
        }
    }

    #[test]
    fn the_directory_and_its_migrated_store_give_the_same_events() {
        let db = scratch("migrated").join("opencode.db");
        migrate(&tree(), &db);
        let from_db = cstream_file(&["--to", "events"], &db);
        assert_eq!(from_db.code, 0, "{}", from_db.stderr);
        let from_dir = cstream_file(&["--to", "events"], &tree());
        let (a, b) = (events(&from_dir.out()), events(&from_db.out()));
        assert_eq!(session_ids(&a), [PARENT, CHILD]);
        assert_eq!(a.len(), b.len());
        for (d, s) in a.iter().zip(&b) {
            assert_eq!(d, s);
        }
    }

    /// A walk of OpenCode's data directory after its move to v1.2 reads
    /// `opencode.db` and not the storage directory beside it, which holds
    /// the same sessions; naming the directory still reads it.
    #[test]
    fn a_walk_reads_the_store_not_the_directory_it_replaced() {
        let data = scratch("data");
        copy_tree(&tree(), &data.join("storage"));
        migrate(&tree(), &data.join("opencode.db"));
        let run = cstream(&["--to", "events", data.to_str().unwrap()], b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(session_ids(&events(&run.out())), [PARENT, CHILD]);
        assert!(
            run.stderr.contains("storage") && run.stderr.contains("not read"),
            "{}",
            run.stderr
        );
        let named = cstream_file(&["--to", "events"], &data.join("storage"));
        assert_eq!(session_ids(&events(&named.out())), [PARENT, CHILD]);
    }
}
