//! Codex figures that look right and are not (issue 26), each checked on
//! the shape Codex writes.

use crate::common;

use std::path::{Path, PathBuf};

use common::{cstream, cstream_file, events, fixtures_dir};
use serde_json::Value;

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

fn rollout(name: &str) -> PathBuf {
    fixtures_dir().join("codex-rollout").join(name)
}

fn file_events(path: &Path) -> Vec<Value> {
    let run = cstream_file(&["--to", "events"], path);
    assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
    assert!(run.stderr.is_empty(), "warned: {}", run.stderr);
    events(&run.out())
}

/// The event of `kind` for call `id` (exactly one).
fn call<'a>(evs: &'a [Value], kind: &str, id: &str) -> &'a Value {
    let found: Vec<&Value> = evs
        .iter()
        .filter(|e| ty(e) == kind && e["callId"] == id)
        .collect();
    assert_eq!(found.len(), 1, "{kind} of {id}: {found:?}");
    found[0]
}

/// `function_call` with `namespace: "mcp__<server>[__<connector>]"` is an
/// MCP call of that server, its tool named as `mcp_tool_call_end` names it.
#[test]
fn mcp_calls_with_a_namespace_name_their_server() {
    let evs = file_events(&rollout(
        "mcp-namespace_codex-apps-connector_plain-server_0.150.jsonl",
    ));
    let gh = call(&evs, "tool_call_started", "call_Gh1");
    assert_eq!(
        (&gh["toolName"], &gh["mcpServer"], &gh["mcpTool"]),
        (
            &Value::from("mcp"),
            &Value::from("codex_apps"),
            &Value::from("github_fetch_pr")
        ),
        "{gh}"
    );
    let docs = call(&evs, "tool_call_started", "call_Dc1");
    assert_eq!(
        (&docs["mcpServer"], &docs["mcpTool"]),
        (&Value::from("docs"), &Value::from("search")),
        "{docs}"
    );
}

/// A failed MCP call of `codex exec --json` (the tool said `isError`)
/// gives its reason, which Codex leaves in `result.content`.
#[test]
fn a_failed_live_mcp_call_says_why() {
    let input = concat!(
        r#"{"type":"thread.started","thread_id":"019e2d00-0000-7000-8000-0000000000e1"}"#,
        "\n",
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"codex_apps","tool":"github_fetch_pr","arguments":{"pr_number":482},"result":null,"error":null,"status":"in_progress"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"codex_apps","tool":"github_fetch_pr","arguments":{"pr_number":482},"result":{"content":[{"type":"text","text":"Authentication required"}],"structured_content":null},"error":null,"status":"failed"}}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":0,"output_tokens":40}}"#,
        "\n",
    );
    let run = cstream(&["--to", "events"], input.as_bytes());
    let evs = events(&run.out());
    let end = call(&evs, "tool_call_completed", "item_1");
    assert_eq!(end["ok"], false);
    assert_eq!(end["error"], "Authentication required", "{end}");
}
