//! The chat core's separators and endings, on every fixture in every
//! `--tool-calls` mode, for the wires that put each run of a channel in a
//! block of its own (Anthropic content blocks, Responses output items):
//!
//! - a block never starts with a separator: a thinking block or reasoning
//!   item starts where the agent's thinking or the tool line starts, not with
//!   the newline that would join it to an earlier run of the same channel;
//! - the answer's turns are separated by a blank line within one string
//!   (`openai-sse`, `openai-json`: checked in `openai.rs`; text blocks: in
//!   `anthropic.rs` and `responses.rs`, over the same `common::answers`);
//! - a failed Responses session writes the stream's `error` event and then
//!   `response.failed`, each once, with the same message.

use crate::common;

use common::{fixture_args, fixtures, run_fixture};
use serde_json::Value;

const MODES: [&str; 4] = ["reasoning", "content", "omit", "calls"];

/// Every SSE record of `out`: (event name, data).
fn records(out: &str) -> Vec<(String, Value)> {
    out.split_terminator("\n\n")
        .map(|rec| {
            let (head, data) = rec.split_once('\n').expect("event and data lines");
            let v = serde_json::from_str(data.strip_prefix("data: ").expect("data line"))
                .expect("JSON data");
            (
                head.strip_prefix("event: ").expect("event line").to_owned(),
                v,
            )
        })
        .collect()
}

/// The texts of a run's blocks as the wire writes them whole:
/// `(kind, text)`, from the JSON form (one value per session).
fn blocks(format: &str, out: &str) -> Vec<(String, String)> {
    let mut got = Vec::new();
    for v in serde_json::Deserializer::from_str(out).into_iter::<Value>() {
        let v = v.expect("JSON");
        if format == "anthropic-json" {
            for b in v["content"].as_array().into_iter().flatten() {
                let text = b["text"].as_str().or(b["thinking"].as_str());
                if let Some(t) = text {
                    got.push((b["type"].as_str().unwrap().to_owned(), t.to_owned()));
                }
            }
        } else {
            for it in v["output"].as_array().into_iter().flatten() {
                let parts = it["summary"].as_array().or(it["content"].as_array());
                for p in parts.into_iter().flatten() {
                    let t = p["text"].as_str().unwrap();
                    got.push((it["type"].as_str().unwrap().to_owned(), t.to_owned()));
                }
            }
        }
    }
    got
}

/// The texts of the fixture's text and thinking events that start with a
/// newline: the agent's own (a block may start with one of those).
fn own_leading_newlines(path: &std::path::Path) -> Vec<String> {
    common::events(&run_fixture(path, &["--to", "events"]).out())
        .iter()
        .filter_map(|e| e["text"].as_str())
        .filter(|t| t.starts_with(['\n', '\r']))
        .map(str::to_owned)
        .collect()
}

#[test]
fn no_block_starts_with_a_separator() {
    let mut n = 0;
    for path in fixtures() {
        let own = own_leading_newlines(&path);
        let own_mode = fixture_args(&path).iter().any(|a| a == "--tool-calls");
        for format in ["anthropic-json", "openai-responses-json"] {
            for mode in MODES {
                if own_mode && mode != "reasoning" {
                    continue;
                }
                let args = ["--to", format, "-c", "--tool-calls", mode];
                let out = run_fixture(&path, &args).out();
                for (kind, text) in blocks(format, &out) {
                    let agents = own
                        .iter()
                        .any(|o| text.starts_with(o.as_str()) || o.starts_with(&text));
                    assert!(
                        !text.starts_with(['\n', '\r']) || agents,
                        "{} {format} --tool-calls {mode}: a {kind} block starts with a \
                         separator: {text:?}",
                        path.display()
                    );
                    n += 1;
                }
            }
        }
    }
    assert!(n > 100, "only {n} blocks checked");
}

#[test]
fn a_failed_response_writes_error_then_response_failed() {
    let (mut failed, mut ok) = (0, 0);
    for path in fixtures() {
        for mode in MODES {
            let args = ["--to", "openai-responses", "--tool-calls", mode];
            let recs = records(&run_fixture(&path, &args).out());
            let ends: Vec<usize> = (0..recs.len())
                .filter(|&i| recs[i].0 == "response.completed" || recs[i].0 == "response.failed")
                .collect();
            let errors = recs.iter().filter(|r| r.0 == "error").count();
            let fails = ends.iter().filter(|&&i| recs[i].0 == "response.failed");
            let ctx = format!("{} --tool-calls {mode}", path.display());
            assert_eq!(
                errors,
                fails.clone().count(),
                "{ctx}: one error per failure"
            );
            for &i in fails {
                let (name, ev) = &recs[i - 1];
                assert_eq!(
                    name, "error",
                    "{ctx}: response.failed without error before it"
                );
                assert_eq!(
                    ev["message"], recs[i].1["response"]["error"]["message"],
                    "{ctx}: the error event and the failed response disagree"
                );
                assert_eq!(
                    ev["sequence_number"].as_u64().unwrap() + 1,
                    recs[i].1["sequence_number"].as_u64().unwrap(),
                    "{ctx}"
                );
                failed += 1;
            }
            ok += ends.len();
        }
    }
    assert!(failed >= 10 && ok > failed, "{failed} failed of {ok}");
}
