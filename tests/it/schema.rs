//! The JSON Schemas in `schema/`: generated from the library's types (this
//! fails when they are stale), and every fixture's and capture's `events`
//! and `documents` output validates against them.
//!
//! Regenerate with: `CSTREAM_BLESS=1 cargo test --test it schema::`

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{self, fixtures, run_fixture};

fn schema_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(format!("{name}.schema.json"))
}

fn generated() -> [(&'static str, Value); 3] {
    [
        ("events", cstream::schema::events()),
        ("documents", cstream::schema::documents()),
        ("rows", cstream::schema::rows()),
    ]
}

#[test]
fn the_checked_in_schemas_are_current() {
    let bless = std::env::var_os("CSTREAM_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, schema) in generated() {
        let fresh = cstream::schema::pretty(&schema);
        let path = schema_file(name);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(&fresh[..]) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale schemas: {stale:?}\nregenerate with: CSTREAM_BLESS=1 cargo test --test it schema::"
    );
}

#[test]
fn the_schema_flag_prints_the_checked_in_files() {
    for name in ["events", "documents", "rows"] {
        let out = assert_cmd::Command::cargo_bin("cstream")
            .unwrap()
            .args(["--schema", name])
            .output()
            .unwrap();
        assert!(out.status.success(), "--schema {name}");
        let file = std::fs::read(schema_file(name)).unwrap();
        assert_eq!(out.stdout, file, "--schema {name} vs the file");
    }
}

pub(crate) fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(schema_file(name)).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name} schema: {e}"))
}

/// The first reason `v` is not valid, if any.
pub(crate) fn invalid(validator: &jsonschema::Validator, v: &Value) -> Option<String> {
    validator
        .iter_errors(v)
        .next()
        .map(|e| format!("{e} at {}", e.instance_path()))
}

/// Every value of a `documents` output (one per session).
fn values(out: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(out)
        .into_iter::<Value>()
        .map(|v| v.expect("documents output is JSON"))
        .collect()
}

/// Every input: the fixtures, and the real captures and saved sessions.
pub(crate) fn inputs() -> Vec<PathBuf> {
    let mut all = fixtures();
    all.extend(common::live_corpus());
    for d in ["claude-code", "codex", "gemini", "cursor-agent"] {
        all.extend(common::corpus(&format!("sessions/{d}")));
    }
    all
}

/// Each events line of every input validates, with and without
/// `--coalesce` (whose whole-message types only appear with it); so does
/// each documents value, with thinking documents and without.
#[test]
fn every_output_validates_against_its_schema() {
    let (events, documents) = (validator("events"), validator("documents"));
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    for path in inputs() {
        let name = path.display();
        let own = common::fixture_args(&path);
        // A flag the fixture already passes is not passed twice.
        let twice = |extra: &[&str]| extra.first().is_some_and(|f| own.iter().any(|a| a == f));
        for extra in [&[][..], &["--coalesce", "whole"]] {
            if twice(extra) {
                continue;
            }
            let mut args = vec!["--to", "events"];
            args.extend(extra);
            for line in common::events(&run_fixture(&path, &args).out()) {
                if let Some(why) = invalid(&events, &line) {
                    panic!("{name} {extra:?}: {why}\n{line}");
                }
                seen.insert(line["type"].as_str().unwrap().to_owned());
                n += 1;
            }
        }
        for extra in [&[][..], &["--thinking"]] {
            if twice(extra) {
                continue;
            }
            let mut args = vec!["--to", "documents", "--compact"];
            args.extend(extra);
            for v in values(&run_fixture(&path, &args).out()) {
                if let Some(why) = invalid(&documents, &v) {
                    panic!("{name} {extra:?}: {why}\n{v}");
                }
                let docs = v["documents"].as_array();
                for d in docs.unwrap_or_else(|| panic!("{name}: no documents in {v}")) {
                    seen.insert(format!("doc:{}", d["type"].as_str().unwrap()));
                }
                n += 1;
            }
        }
    }
    assert!(n > 0);
    // The inputs reach every event type and every document type, so each
    // variant of both schemas is checked against real output.
    let schema_types = |v: &Value, prefix: &str| -> Vec<String> {
        v["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                format!(
                    "{prefix}{}",
                    o["properties"]["type"]["const"].as_str().unwrap()
                )
            })
            .collect()
    };
    let [(_, ev), (_, doc), _] = generated();
    let doc_types = schema_types(&doc["$defs"]["Document"], "doc:");
    for t in schema_types(&ev, "").into_iter().chain(doc_types) {
        assert!(seen.contains(&t), "no input produces {t}");
    }
}

/// The validation is strict where the writers are: a wrong type, a missing
/// field, a field the schema does not know, a `null` where the events
/// format leaves a field out, and a wrong version each fail.
#[test]
fn the_schemas_reject_what_the_writers_never_write() {
    let events = validator("events");
    let good = json!({"type": "session_started", "sessionId": "s", "dialect": "cursor", "schemaVersion": 1});
    assert_eq!(invalid(&events, &good), None);
    let bad = [
        json!({"type": "session_started", "sessionId": 7, "dialect": "cursor", "schemaVersion": 1}),
        json!({"type": "session_started", "sessionId": "s", "schemaVersion": 1}),
        json!({"type": "session_started", "sessionId": "s", "dialect": "cursor", "schemaVersion": 1, "extra": 1}),
        json!({"type": "session_started", "sessionId": "s", "dialect": "cursor", "schemaVersion": 1, "model": null}),
        json!({"type": "session_started", "sessionId": "s", "dialect": "cursor", "schemaVersion": 2}),
        json!({"type": "text_delta", "sessionId": "s"}),
        json!({"type": "no_such_event", "sessionId": "s"}),
        json!({"type": "usage_delta", "sessionId": "s", "deltaInput": -1, "deltaOutput": 0}),
    ];
    for b in bad {
        assert!(invalid(&events, &b).is_some(), "accepted {b}");
    }
    let documents = validator("documents");
    let response = |doc: Value| {
        json!({
            "id": "chat_s", "conversationId": "s", "model": "m", "mode": "agent",
            "created": "2026-02-12T12:40:00Z", "status": "completed", "documents": [doc],
            "usage": null,
            "metadata": {"duration_ms": null, "toolCallCount": 0, "turnCount": 1, "schemaVersion": 1}
        })
    };
    let text = json!({"id": "doc_001", "type": "text", "sequence": 1, "content": "hi", "metadata": {"format": "markdown"}});
    assert_eq!(invalid(&documents, &response(text)), None);
    for b in [
        json!({"id": "doc_001", "type": "text", "sequence": 1, "content": null, "metadata": {"format": "markdown"}}),
        json!({"id": "doc_1", "type": "text", "sequence": 1, "content": "hi", "metadata": {"format": "markdown"}}),
        json!({"id": "doc_001", "type": "terminal_command", "sequence": 1, "content": null, "metadata": {"command": "ls"}}),
        json!({"id": "doc_001", "type": "picture", "sequence": 1, "content": null, "metadata": {}}),
    ] {
        assert!(
            invalid(&documents, &response(b.clone())).is_some(),
            "accepted {b}"
        );
    }
}
