//! `--to atif` (docs/atif.md): one trajectory per session, sub-agents
//! embedded where the input links them, usage where the input has it and
//! nowhere else, the session figures as they are everywhere; redacted by
//! default. Harbor's own models validate every output in CI
//! (scripts/check-atif.py); these tests hold the shape and the figures.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{cstream, fixtures_dir, run_fixture};
use crate::schema::inputs;

fn fixture(rel: &str) -> PathBuf {
    fixtures_dir().join(rel)
}

fn docs(out: &str) -> Vec<Value> {
    out.split_terminator('\n')
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn atif(paths: &[PathBuf]) -> String {
    let mut args = vec!["--to", "atif"];
    args.extend(paths.iter().map(|p| p.to_str().expect("UTF-8 path")));
    cstream(&args, b"").out()
}

fn snap(name: &str, shown: String) {
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!(name, shown);
    });
}

fn pretty(out: &str) -> String {
    docs(out)
        .iter()
        .map(|d| serde_json::to_string_pretty(d).expect("JSON"))
        .collect::<Vec<_>>()
        .join("\n")
}

const PARENT: &str = "claude-project/subagent-parent_task-agentid.jsonl";
const SUB: &str = "claude-project/subagent-parent_task-agentid/subagents/agent-a7c41d2.jsonl";

/// A saved Claude Code session read with its sub-agent's file: one
/// trajectory, the sub-agent embedded and named on the spawning call.
#[test]
fn claude_subagent_is_embedded_and_referenced() {
    let out = atif(&[fixture(PARENT), fixture(SUB)]);
    let d = docs(&out);
    assert_eq!(d.len(), 1, "{out}");
    let subs = d[0]["subagent_trajectories"].as_array().expect("embedded");
    assert_eq!(subs.len(), 1);
    let id = subs[0]["trajectory_id"].as_str().unwrap();
    let refs: Vec<&Value> = d[0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["observation"]["results"].as_array())
        .flatten()
        .filter(|r| r["source_call_id"] == "toolu_task1")
        .filter_map(|r| r["subagent_trajectory_ref"].as_array())
        .flatten()
        .collect();
    assert_eq!(refs.len(), 1, "{out}");
    assert_eq!(refs[0]["trajectory_id"], id);
    snap("atif_claude_subagent_embedded", pretty(&out));
    // Read alone, the sub-agent is its own trajectory that names its parent.
    let alone = docs(&atif(&[fixture(SUB)]));
    assert_eq!(alone.len(), 1);
    assert_eq!(
        alone[0]["extra"]["parent_session_id"], d[0]["session_id"],
        "{alone:?}"
    );
    // The parent read alone has nothing to embed, and invents nothing.
    let parent = docs(&atif(&[fixture(PARENT)]));
    assert!(parent[0].get("subagent_trajectories").is_none());
}

#[test]
fn codex_rollout() {
    let out = atif(&[fixture(
        "codex-rollout/item-completed_prompt-reasoning-command-answer-once_0.147.jsonl",
    )]);
    let d = docs(&out);
    // Usage that follows a response is that response's.
    let steps = d[0]["steps"].as_array().unwrap();
    let with_metrics = steps.iter().filter(|s| s.get("metrics").is_some()).count();
    assert_eq!(with_metrics, 3, "{out}");
    snap("atif_codex_rollout", pretty(&out));
}

/// A cursor live stream whose result has no usage: no step metrics, no
/// token totals; not zeros.
#[test]
fn cursor_without_usage_has_no_metrics() {
    let out = atif(&[fixture("cursor/one-shell-call.jsonl")]);
    let d = docs(&out);
    assert!(!out.contains("\"metrics\""), "{out}");
    let fm = &d[0]["final_metrics"];
    assert!(fm.get("total_prompt_tokens").is_none(), "{fm}");
    assert!(fm.get("total_completion_tokens").is_none(), "{fm}");
    assert_eq!(fm["total_steps"], d[0]["steps"].as_array().unwrap().len());
    snap("atif_cursor_no_usage", pretty(&out));
}

/// A cursor stream with usage only on its result: the totals are known,
/// but no step can be said to have used them.
#[test]
fn cursor_result_usage_is_in_no_step() {
    let out = atif(&[fixture("cursor/result-with-usage.jsonl")]);
    let d = docs(&out);
    assert!(!out.contains("\"metrics\""), "{out}");
    let fm = &d[0]["final_metrics"];
    assert!(fm["total_prompt_tokens"].is_u64(), "{fm}");
    assert_eq!(
        fm["total_prompt_tokens"],
        fm["extra"]["tokens_not_in_steps"]["prompt_tokens"]
    );
}

/// A saved Claude Code message whose lines hold only the streaming
/// placeholder: its output count is unknown, so the step that carries it
/// and the totals say their `completion_tokens` are a lower bound.
#[test]
fn unknown_output_count_is_not_zero() {
    let out = atif(&[fixture(
        "claude-project/grown-output-count_placeholder-only-message.jsonl",
    )]);
    let d = docs(&out);
    let steps = d[0]["steps"].as_array().unwrap();
    let unknown: Vec<&Value> = steps
        .iter()
        .filter(|s| s["metrics"]["extra"]["completion_tokens_incomplete"] == true)
        .collect();
    assert!(!unknown.is_empty(), "{out}");
    assert_eq!(
        d[0]["final_metrics"]["extra"]["completion_tokens_incomplete"],
        true
    );
    snap("atif_unknown_output_count", pretty(&out));
}

fn sum3(m: &Value, prefix: &str) -> [u64; 3] {
    ["prompt_tokens", "completion_tokens", "cached_tokens"]
        .map(|k| m[format!("{prefix}{k}")].as_u64().unwrap_or(0))
}

fn check_invariants(name: &str, d: &Value, usage_row: Option<&Value>) {
    let steps = d["steps"].as_array().unwrap();
    let fm = &d["final_metrics"];
    assert_eq!(fm["total_steps"], steps.len(), "{name}");
    // Step ids run from 1.
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step_id"], i + 1, "{name}");
    }
    let calls: usize = steps
        .iter()
        .map(|s| s["tool_calls"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(fm["extra"]["tool_calls"], calls, "{name}: tool calls");
    if let Some(u) = usage_row {
        // The same figures `--to usage` shows for the session.
        assert_eq!(fm["extra"]["tool_calls"], u["tool_calls"], "{name}");
        assert_eq!(fm["extra"]["turns"], u["turns"], "{name}");
        assert_eq!(
            fm["total_prompt_tokens"].as_u64(),
            u["tokens_in"].as_u64(),
            "{name}"
        );
        if u["tokens_complete"] == true {
            assert_eq!(
                fm["total_completion_tokens"].as_u64(),
                u["tokens_out"].as_u64(),
                "{name}"
            );
        }
    }
    if fm.get("total_prompt_tokens").is_some() {
        if fm["extra"]["completion_tokens_incomplete"] != true {
            let mut summed = sum3(&fm["extra"]["tokens_not_in_steps"], "");
            for s in steps {
                let m = sum3(&s["metrics"], "");
                for i in 0..3 {
                    summed[i] += m[i];
                }
            }
            assert_eq!(summed, sum3(fm, "total_"), "{name}: steps vs final_metrics");
        }
    } else {
        assert!(
            steps.iter().all(|s| s.get("metrics").is_none()),
            "{name}: step metrics without totals"
        );
    }
    for s in d["subagent_trajectories"].as_array().into_iter().flatten() {
        check_invariants(name, s, None);
    }
}

/// Over every fixture and the corpus: every session is one trajectory whose
/// tool calls are the figures' tool calls and whose step metrics (with the
/// tokens no step carries) add up to `final_metrics`; the figures are those
/// `--to usage` shows.
#[test]
fn trajectories_keep_the_session_figures() {
    for path in inputs() {
        let name = path.display().to_string();
        let out = run_fixture(&path, &["--to", "atif"]).out();
        let usage = run_fixture(&path, &["--to", "usage"]).out();
        let rows = docs(&usage);
        let d = docs(&out);
        // `--to usage` counts two saves of one session once; without such
        // copies, one row per trajectory.
        let aligned = rows.len() == d.len();
        for (i, t) in d.iter().enumerate() {
            assert_eq!(t["schema_version"], "ATIF-v1.7", "{name}");
            let row = rows
                .get(i)
                .filter(|r| aligned && r["session_id"] == t["session_id"]);
            check_invariants(&name, t, row);
        }
    }
}

const SECRET: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

/// ATIF is made to be shared: redacted unless `--no-redact`.
#[test]
fn atif_is_redacted_by_default() {
    let input = format!(
        "{}\n{}\n",
        r#"{"type":"session_started","sessionId":"s","dialect":"claude","schemaVersion":1}"#,
        format_args!(r#"{{"type":"user_message","sessionId":"s","text":"use {SECRET}"}}"#),
    );
    let run = |args: &[&str]| cstream(args, input.as_bytes()).out();
    let out = run(&["--to", "atif"]);
    assert!(!out.contains(SECRET), "{out}");
    assert!(out.contains("[REDACTED:anthropic_key]"), "{out}");
    assert!(run(&["--to", "atif", "--no-redact"]).contains(SECRET));
}
