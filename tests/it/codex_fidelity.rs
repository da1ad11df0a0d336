//! Codex figures that look right and are not (issue 26): a unified-exec
//! command's failure carried by the poll that saw it, MCP servers hidden in
//! a `namespace`, a rollout cut inside a turn reported as a success, a
//! spawned sub-agent counted with its parent's history, and "no usage"
//! written as zero usage. Each is checked on a fixture written from the
//! shapes Codex writes (fixtures/codex-rollout/, fixtures/codex/).

use crate::common;

use std::path::{Path, PathBuf};

use common::{cstream, cstream_file, events, fixtures_dir};
use serde_json::Value;

fn rollout(name: &str) -> PathBuf {
    fixtures_dir().join("codex-rollout").join(name)
}

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

fn file_events(path: &Path) -> Vec<Value> {
    let run = cstream_file(&["--to", "events"], path);
    assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
    assert!(run.stderr.is_empty(), "warned: {}", run.stderr);
    events(&run.out())
}

fn stdin_events(input: &str) -> Vec<Value> {
    let run = cstream(
        &["--to", "events", "--from", "codex-rollout"],
        input.as_bytes(),
    );
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

/// (input, output) summed over the `usage_delta`s.
fn usage_sums(evs: &[Value]) -> (u64, u64) {
    evs.iter()
        .filter(|e| ty(e) == "usage_delta")
        .fold((0, 0), |(i, o), e| {
            (
                i + e["deltaInput"].as_u64().unwrap(),
                o + e["deltaOutput"].as_u64().unwrap(),
            )
        })
}

/// The `--summary` Markdown of a run on `path`.
fn summary_of(path: &Path, tag: &str) -> String {
    let file = std::env::temp_dir().join(format!(
        "cstream-codex-fidelity-{}-{tag}.md",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&file);
    let f = file.to_str().unwrap();
    let run = cstream_file(&["--to", "text", "--summary", f], path);
    assert!(run.stderr.is_empty(), "warned: {}", run.stderr);
    let s = std::fs::read_to_string(&file).expect("summary written");
    let _ = std::fs::remove_file(&file);
    s
}

const UNIFIED: &str = "unified-exec_exec-command-end-after-poll_0.125.jsonl";

/// A unified-exec command whose call returned "Process running with
/// session ID N" ends with its `exec_command_end` (exit code, status, the
/// whole output), polled or not; each `write_stdin` poll is a call of its
/// own that names the process and command it polls and carries no
/// failure; a command still running at the end of the file has no known
/// outcome (not a success with a made-up exit code).
#[test]
fn unified_exec_failures_belong_to_the_command_not_its_poll() {
    let evs = file_events(&rollout(UNIFIED));
    let tests = call(&evs, "tool_call_completed", "call_T1est");
    assert_eq!(tests["ok"], false, "{tests}");
    assert_eq!(tests["exitCode"], 101, "{tests}");
    let out = tests["output"].as_str().unwrap();
    assert!(
        out.contains("Compiling ledger") && out.contains("test result: FAILED"),
        "not the whole aggregated output: {out:?}"
    );
    assert!(!out.contains("Process running"), "{out:?}");
    // Never polled: its failure is still its own.
    let lint = call(&evs, "tool_call_completed", "call_L1nt");
    assert_eq!(
        (&lint["ok"], &lint["exitCode"]),
        (&Value::from(false), &Value::from(2))
    );
    for poll in ["call_P0ll1", "call_P0ll2"] {
        let start = call(&evs, "tool_call_started", poll);
        let what = start["description"].as_str().unwrap_or("");
        assert!(
            what.contains("41002") && what.contains("cargo test --workspace"),
            "{poll}: the poll does not name what it polls: {start}"
        );
        let end = call(&evs, "tool_call_completed", poll);
        assert_eq!(end["ok"], true, "{end}");
        assert!(
            end.get("exitCode").is_none(),
            "{poll} carries an exit code: {end}"
        );
    }
    // Ended before its first output was recorded.
    let git = call(&evs, "tool_call_completed", "call_G1t");
    assert_eq!(
        (&git["ok"], &git["exitCode"]),
        (&Value::from(true), &Value::from(0))
    );
    assert_eq!(git["output"], " M src/balance.rs\n");
    // Still running when the rollout ends.
    let dev = call(&evs, "tool_call_completed", "call_D3v");
    assert_eq!(dev["outcomeUnknown"], true, "{dev}");
    assert!(
        dev.get("exitCode").is_none() && dev.get("error").is_none(),
        "{dev}"
    );

    let summary = summary_of(&rollout(UNIFIED), "unified");
    assert!(
        summary.contains("shell `cargo test --workspace` exited 101")
            && summary.contains("shell `npm run lint` exited 2"),
        "{summary}"
    );
    assert!(!summary.contains("write_stdin"), "{summary}");
}

/// Rollouts that do not persist `exec_command_end` (older builds): the
/// exit code a poll reports ends the polled command, and a command no poll
/// saw end has no known outcome.
#[test]
fn unified_exec_without_exec_command_end_takes_the_polled_exit_code() {
    let raw = std::fs::read_to_string(rollout(UNIFIED)).unwrap();
    let without: String = raw
        .lines()
        .filter(|l| !l.contains("\"exec_command_end\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let evs = stdin_events(&without);
    let tests = call(&evs, "tool_call_completed", "call_T1est");
    assert_eq!(
        (&tests["ok"], &tests["exitCode"]),
        (&Value::from(false), &Value::from(101))
    );
    for id in ["call_L1nt", "call_G1t", "call_D3v"] {
        let end = call(&evs, "tool_call_completed", id);
        assert_eq!(end["outcomeUnknown"], true, "{id}: {end}");
    }
    for poll in ["call_P0ll1", "call_P0ll2"] {
        assert_eq!(call(&evs, "tool_call_completed", poll)["ok"], true);
    }
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

const INCOMPLETE: &str = "incomplete_last-turn-without-task-complete_0.125.jsonl";

/// A rollout whose last prompt never got its `task_complete` ends as a
/// live stream cut off does: no `result` (incomplete), the usage still
/// counted; `turn_aborted` ends a turn too.
#[test]
fn a_rollout_cut_inside_a_turn_is_incomplete() {
    let evs = file_events(&rollout(INCOMPLETE));
    assert!(
        !evs.iter().any(|e| ty(e) == "result"),
        "a result for a turn that never ended"
    );
    assert_eq!(usage_sums(&evs), (16500, 170));
    let summary = summary_of(&rollout(INCOMPLETE), "incomplete");
    assert!(summary.contains("incomplete"), "{summary}");
    assert!(!summary.contains("success"), "{summary}");

    let raw = std::fs::read_to_string(rollout(INCOMPLETE)).unwrap();
    let aborted = format!(
        "{raw}{}\n",
        r#"{"timestamp":"2026-05-14T12:01:09.000Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t-inc-2","reason":"interrupted"}}"#
    );
    let evs = stdin_events(&aborted);
    let results: Vec<&Value> = evs.iter().filter(|e| ty(e) == "result").collect();
    assert_eq!(results.len(), 1, "an aborted turn has ended");
}

/// A rollout without a single token count has no usage (unknown), not
/// zero usage.
#[test]
fn a_rollout_without_token_counts_has_no_usage() {
    let evs = file_events(&rollout(
        "no-usage_oss-provider-token-count-info-null_0.125.jsonl",
    ));
    let result = evs.iter().find(|e| ty(e) == "result").expect("a result");
    assert_eq!(result["ok"], true);
    assert!(result.get("usage").is_none(), "made-up usage: {result}");
}

/// A spawned sub-agent's rollout (`source.subagent.thread_spawn`) is its
/// own session linked to its parent thread; the parent's history it begins
/// with (prompts and usage) is left out, and its own usage is counted
/// whether its running total goes on from the parent's or starts again at
/// zero.
#[test]
fn spawned_subagents_count_only_their_own_work() {
    for name in [
        "subagent_thread-spawn_parent-replayed_own-total-restarts_0.150.jsonl",
        "subagent_thread-spawn_parent-replayed_own-total-continues_0.150.jsonl",
    ] {
        let evs = file_events(&rollout(name));
        let start = &evs[0];
        assert_eq!(ty(start), "session_started");
        assert_eq!(
            start["parentSessionId"], "019e2f00-aaaa-7bbb-8ccc-00000000a001",
            "{name}: {start}"
        );
        assert!(start.get("forkedFrom").is_none(), "{name}: {start}");
        let prompts: Vec<&str> = evs
            .iter()
            .filter(|e| ty(e) == "user_message")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            prompts,
            ["Write proptest properties for round_half_even in src/balance.rs."],
            "{name}"
        );
        assert!(
            !evs.iter().any(|e| e["text"]
                .as_str()
                .is_some_and(|t| t.contains("audit rounding"))),
            "{name}: the parent's text was shown"
        );
        assert_eq!(usage_sums(&evs), (19500, 520), "{name}");
        let result = evs.iter().find(|e| ty(e) == "result").expect("a result");
        assert_eq!(result["usage"]["inputTokens"], 19500, "{name}");
        assert_eq!(result["usage"]["outputTokens"], 520, "{name}");
    }
}

/// The namespace forms Codex has written over time all give the same
/// server and tool: the whole qualified name in both fields, a namespace
/// ending in `__`, and `mcp__<server>` with the `__` before the tool left
/// out.
#[test]
fn every_mcp_namespace_form_names_its_server() {
    let line = |id: &str, ns: &str, name: &str| {
        format!(
            r#"{{"timestamp":"2026-05-14T11:00:0{id}.000Z","type":"response_item","payload":{{"type":"function_call","name":"{name}","namespace":"{ns}","arguments":"{{}}","call_id":"c{id}"}}}}"#
        )
    };
    let input = [
        r#"{"timestamp":"2026-05-14T11:00:00.000Z","type":"session_meta","payload":{"id":"019e2b77-0000-7000-8000-0000000000f1","cwd":"/w","cli_version":"0.130.0","source":"cli"}}"#.to_owned(),
        line("1", "mcp__codex_apps__gmail", "mcp__codex_apps__gmail_get_recent_emails"),
        line("2", "mcp__supabase_bot__", "list_tables"),
        line("3", "mcp__node_repl", "js"),
    ]
    .join("\n");
    let evs = stdin_events(&input);
    for (id, server, tool) in [
        ("c1", "codex_apps", "gmail_get_recent_emails"),
        ("c2", "supabase_bot", "list_tables"),
        ("c3", "node_repl", "js"),
    ] {
        let s = call(&evs, "tool_call_started", id);
        assert_eq!(
            (&s["toolName"], &s["mcpServer"], &s["mcpTool"]),
            (
                &Value::from("mcp"),
                &Value::from(server),
                &Value::from(tool)
            ),
            "{s}"
        );
    }
}

/// A sub-agent spawned without its parent's history still begins with the
/// parent's `session_meta`; its own turn, started (`started_at`) when it
/// was created and within the same second, is not taken for a copy.
#[test]
fn a_subagent_spawned_without_history_keeps_its_own_first_turn() {
    let input = concat!(
        r#"{"timestamp":"2026-05-15T09:30:12.481Z","type":"session_meta","payload":{"id":"019e2f01-1111-7222-8333-000000000c03","timestamp":"2026-05-15T09:30:12.470Z","cwd":"/w","cli_version":"0.145.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019e2f00-aaaa-7bbb-8ccc-00000000a001","depth":1}}}}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.482Z","type":"session_meta","payload":{"id":"019e2f00-aaaa-7bbb-8ccc-00000000a001","timestamp":"2026-05-15T09:20:00.000Z","cwd":"/w","cli_version":"0.145.0","source":"cli"}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.530Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t-c","started_at":1778837412,"model_context_window":258400}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.531Z","type":"event_msg","payload":{"type":"user_message","message":"List the TODOs in src/.","images":[]}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.532Z","type":"turn_context","payload":{"turn_id":"t-c","cwd":"/w","approval_policy":"never","model":"gpt-5.5"}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.900Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5000,"cached_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":5120},"last_token_usage":{"input_tokens":5000,"cached_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":0,"total_tokens":5120}}}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.950Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Two TODOs."}],"phase":"final_answer"}}"#,
        "\n",
        r#"{"timestamp":"2026-05-15T09:30:12.990Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t-c","last_agent_message":"Two TODOs."}}"#,
        "\n",
    );
    let evs = stdin_events(input);
    let prompts: Vec<&Value> = evs.iter().filter(|e| ty(e) == "user_message").collect();
    assert_eq!(prompts.len(), 1, "the sub-agent's own prompt was dropped");
    assert_eq!(usage_sums(&evs), (5000, 120));
    let result = evs.iter().find(|e| ty(e) == "result").expect("a result");
    assert_eq!(result["usage"]["inputTokens"], 5000);
    assert_eq!(
        evs[0]["parentSessionId"],
        "019e2f00-aaaa-7bbb-8ccc-00000000a001"
    );
    assert!(
        !evs.iter().any(|e| ty(e) == "error"),
        "a notice of a copy that is not there"
    );
}

// ------------------------------------------------ format drift, 2026

/// The texts of the events of one type.
fn texts_of(evs: &[Value], kind: &str) -> Vec<String> {
    evs.iter()
        .filter(|e| ty(e) == kind)
        .map(|e| e["text"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The assistant's text, each `turn_ended` a paragraph break.
fn answer_text(evs: &[Value]) -> String {
    let mut s = String::new();
    for e in evs {
        match ty(e) {
            "text_delta" => s.push_str(e["text"].as_str().unwrap()),
            "turn_ended" if !s.is_empty() && !s.ends_with('\n') => s.push('\n'),
            _ => {}
        }
    }
    s
}

/// A scratch directory of this test process.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cstream-codex-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 0.147: `item_completed` items say again what the history says (prompt,
/// reasoning, command, answer), in either order: each is written once; a
/// command only in an item is read from it; an item type cstream does not
/// read is kept as `unknown`, not dropped.
#[test]
fn item_completed_items_are_said_once() {
    let evs = file_events(&rollout(
        "item-completed_prompt-reasoning-command-answer-once_0.147.jsonl",
    ));
    assert_eq!(
        texts_of(&evs, "user_message"),
        [
            "Why does `cargo test` fail on the rounding module?",
            "Fix it and rerun."
        ]
    );
    assert_eq!(
        texts_of(&evs, "thinking_delta"),
        ["**Running the failing test first**"]
    );
    let answer = answer_text(&evs);
    assert_eq!(answer.matches("rounds 2.5 up").count(), 1, "{answer}");
    assert_eq!(
        answer.matches("all 12 rounding tests pass").count(),
        1,
        "{answer}"
    );
    // The history's call, repeated by its item: once, failed with its code.
    call(&evs, "tool_call_started", "call_Rt7x2");
    let failed = call(&evs, "tool_call_completed", "call_Rt7x2");
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["exitCode"], 101);
    // Only in an item: the command (less its shell wrapper), exit code,
    // output and duration come from it.
    let start = call(&evs, "tool_call_started", "call_Q8m1");
    assert_eq!(start["command"], "cargo test -p ledger rounding");
    let end = call(&evs, "tool_call_completed", "call_Q8m1");
    assert_eq!(end["ok"], true);
    assert_eq!(end["exitCode"], 0);
    assert_eq!(end["durationMs"], 1904);
    assert!(end["output"].as_str().unwrap().contains("12 passed"));
    // Usage: the last running total.
    assert_eq!(usage_sums(&evs), (26040, 401));
    // An item type cstream does not read (here a made-up `Extension`) is
    // kept as an `unknown` event, not dropped.
    let raw = std::fs::read_to_string(rollout(
        "item-completed_prompt-reasoning-command-answer-once_0.147.jsonl",
    ))
    .unwrap();
    let extension = r#"{"timestamp":"2026-08-12T10:01:03.010Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"t","turn_id":"turn-2","item":{"type":"Extension","kind":"future.widget","id":"ext-1"}}}"#;
    let with = format!("{raw}{extension}\n");
    let run = cstream(
        &["--to", "events", "--from", "codex-rollout"],
        with.as_bytes(),
    );
    // …and said once at the end (docs/dialects.md#drift).
    let last = with.lines().count();
    assert_eq!(
        run.stderr,
        format!(
            "cstream: warning: codex-rollout: 1 record of type \"event_msg/item_completed/Extension\" \
             not understood (kept as unknown events; first at -:{last})\n"
        )
    );
    let evs = events(&run.out());
    let unknown: Vec<&Value> = evs.iter().filter(|e| ty(e) == "unknown").collect();
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert!(unknown[0].to_string().contains("future.widget"));
}

/// 0.148: no `user_message` event, no `session_meta`: the typed prompt is
/// the history's user message; the AGENTS.md and environment messages
/// beside it are not prompts.
#[test]
fn the_typed_prompt_only_in_the_history_is_the_prompt() {
    let evs = file_events(&rollout(
        "typed-prompt-only-in-history_no-session-meta_0.148.jsonl",
    ));
    assert_eq!(
        texts_of(&evs, "user_message"),
        ["List the handlers that still use the old auth middleware."]
    );
    let answer = answer_text(&evs);
    assert_eq!(answer.matches("Two handlers").count(), 1, "{answer}");
    assert_eq!(usage_sums(&evs), (10610, 90));
}

/// 0.150: `content_item_kinds` labels each part of a user message: only
/// `user.text` parts are typed input; injected context (AGENTS.md, the
/// environment, a skill, a hook's context) is not a prompt.
#[test]
fn content_item_kinds_tell_typed_input_from_injected_context() {
    let evs = file_events(&rollout("content-item-kinds_typed-vs-injected_0.150.jsonl"));
    assert_eq!(
        texts_of(&evs, "user_message"),
        ["Bump the footer year to 2026."]
    );
    // The FileChange item repeats the history's apply_patch: one call.
    call(&evs, "tool_call_started", "call_P1");
    call(&evs, "tool_call_completed", "call_P1");
    assert!(!evs.iter().any(|e| ty(e) == "unknown"));
}

/// 0.151: `token_usage_record` beside `token_count` counts the same
/// responses: the usage is the sum of the unique responses' usage (by
/// `response_id`, the compaction's copy and a repeat left out), computed
/// here from the raw file, never record plus count.
#[test]
fn token_usage_records_are_counted_once() {
    let path = rollout("token-usage-record_beside-token-count_deduped_0.151.jsonl");
    let raw = std::fs::read_to_string(&path).unwrap();
    let mut seen = std::collections::HashSet::new();
    let (mut input, mut output, mut write) = (0, 0, 0);
    for line in raw.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "token_usage_record" && seen.insert(v["payload"]["response_id"].clone()) {
            let u = &v["payload"]["usage"];
            input += u["input_tokens"].as_u64().unwrap();
            output += u["output_tokens"].as_u64().unwrap();
            write += u["cache_write_input_tokens"].as_u64().unwrap_or(0);
        }
    }
    let evs = file_events(&path);
    assert_eq!(usage_sums(&evs), (input, output));
    let writes: u64 = evs
        .iter()
        .filter(|e| ty(e) == "usage_delta")
        .map(|e| e["deltaCacheWrite"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(writes, write);
    let result = evs.iter().find(|e| ty(e) == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], input);
    assert_eq!(result["usage"]["cacheWriteTokens"], write);
    // The prompts: the history's labelled message and the item say the
    // first once.
    assert_eq!(
        texts_of(&evs, "user_message"),
        [
            "How many rows did last night's load skip?",
            "Compact and summarise."
        ]
    );
}

const COMPRESSED: &str = "idle-compressed_0.151.jsonl.zst";
const COMPRESSED_FROM: &str = "token-usage-record_beside-token-count_deduped_0.151.jsonl";

/// A `.jsonl.zst` rollout (Codex 0.137+ compresses idle ones) is read by
/// its magic bytes: every format gives exactly what its plain source gives,
/// named on the command line or found in a directory (where a plain twin
/// beside it wins, as in Codex).
#[test]
fn a_compressed_rollout_converts_as_its_plain_source() {
    let (z, plain) = (rollout(COMPRESSED), rollout(COMPRESSED_FROM));
    for to in ["events", "text", "openai-json", "documents"] {
        let a = cstream_file(&["--to", to], &z);
        let b = cstream_file(&["--to", to], &plain);
        assert_eq!(a.code, 0, "{to}: {}", a.stderr);
        assert!(a.stderr.is_empty(), "{to}: {}", a.stderr);
        assert_eq!(a.out(), b.out(), "{to}");
    }
    let dir = scratch("walk");
    std::fs::copy(&z, dir.join("rollout-2026-09-10T16-00-00-a.jsonl.zst")).unwrap();
    let d = dir.to_str().unwrap();
    let walked = cstream(&["--to", "events", d], b"");
    assert_eq!(walked.code, 0, "{}", walked.stderr);
    assert_eq!(
        walked.out(),
        cstream_file(&["--to", "events"], &plain).out()
    );
    // The plain twin is the session; the compressed copy is skipped.
    std::fs::copy(&plain, dir.join("rollout-2026-09-10T16-00-00-a.jsonl")).unwrap();
    let both = cstream(&["--to", "events", "--stats", d], b"");
    assert_eq!(both.out(), walked.out());
    assert!(both.stderr.contains("files=1 "), "{}", both.stderr);
    assert!(both.stderr.contains("files_skipped=1"), "{}", both.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A compressed rollout cut short or corrupt: an error naming the file
/// (exit status 2), and the records decompressed before the damage are
/// all there, in order; nothing else is lost.
#[cfg(feature = "zstd")]
#[test]
fn a_truncated_or_corrupt_compressed_rollout_keeps_what_came_before() {
    let mut plain = String::new();
    plain.push_str(r#"{"timestamp":"2026-06-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s-zst","cwd":"/w","cli_version":"0.137.0"}}"#);
    plain.push('\n');
    plain.push_str(r#"{"timestamp":"2026-06-01T00:00:00.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.3-codex"}}"#);
    plain.push('\n');
    let turns = 3000;
    for i in 0..turns {
        // Varied text, so that the compressed data has many blocks.
        let noise: String = (0..8)
            .map(|k| format!("{:x}", (i as u64 * 2654435761 + k) % 65521))
            .collect();
        plain.push_str(&format!(
            r#"{{"timestamp":"2026-06-01T00:00:01.000Z","type":"event_msg","payload":{{"type":"user_message","message":"prompt {i} {noise}"}}}}"#
        ));
        plain.push('\n');
        plain.push_str(&format!(
            r#"{{"timestamp":"2026-06-01T00:00:02.000Z","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"answer {i} {noise}"}}]}}}}"#
        ));
        plain.push('\n');
    }
    let z = ruzstd::encoding::compress_to_vec(
        plain.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let dir = scratch("cut");
    let mut corrupt = z.clone();
    let mid = z.len() / 2;
    corrupt[mid] ^= 0x5a;
    corrupt[mid + 1] ^= 0xa5;
    for (name, bytes) in [
        ("rollout-cut.jsonl.zst", &z[..z.len() * 3 / 5]),
        ("rollout-bad.jsonl.zst", &corrupt[..]),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let run = cstream_file(&["--to", "events"], &path);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(name), "{name}: {}", run.stderr);
        assert!(
            run.stderr.contains("truncated or corrupt"),
            "{name}: {}",
            run.stderr
        );
        let evs = events(&run.out());
        let prompts = texts_of(&evs, "user_message");
        assert!(
            prompts.len() > 100,
            "{name}: only {} prompts",
            prompts.len()
        );
        assert!(prompts.len() < turns, "{name}: the damage was not seen");
        for (i, p) in prompts.iter().enumerate() {
            assert!(p.starts_with(&format!("prompt {i} ")), "{name}: {p}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `codex exec --json` 0.152: `turn.completed.usage` is the thread's
/// running total (with cache writes and reasoning): each turn's session
/// counts its own part, and the increments add up to the last total;
/// `collab_tool_call` items (spawn, wait) are calls started and completed
/// once.
#[test]
fn exec_usage_is_the_threads_running_total() {
    let path = fixtures_dir()
        .join("codex")
        .join("collab-tool-call_cumulative-usage-two-turns_0.152.jsonl");
    let evs = file_events(&path);
    let results: Vec<&Value> = evs.iter().filter(|e| ty(e) == "result").collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["usage"]["inputTokens"], 24310);
    assert_eq!(results[0]["usage"]["outputTokens"], 612);
    assert_eq!(results[1]["usage"]["inputTokens"], 41020 - 24310);
    assert_eq!(results[1]["usage"]["outputTokens"], 790 - 612);
    assert_eq!(usage_sums(&evs), (41020, 790));
    for id in ["item_1", "item_3"] {
        assert_eq!(call(&evs, "tool_call_started", id)["toolName"], "task");
        assert_eq!(call(&evs, "tool_call_completed", id)["ok"], true);
    }
}

/// A flat `turn.completed {turn_id, status, duration_ms}` (0.147) has no
/// usage: unknown, not zero; an interrupted turn is a failed session.
#[test]
fn a_flat_turn_completed_has_no_usage() {
    let path = fixtures_dir()
        .join("codex")
        .join("flat-turn-completed_status-duration-no-usage_0.147.jsonl");
    let evs = file_events(&path);
    assert!(!evs.iter().any(|e| ty(e) == "usage_delta"));
    let results: Vec<&Value> = evs.iter().filter(|e| ty(e) == "result").collect();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r.get("usage").is_none_or(Value::is_null))
    );
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[0]["durationMs"], 4210);
    assert_eq!(results[1]["ok"], false);
    assert_eq!(results[1]["error"], "the turn was interrupted");
    assert_eq!(results[1]["durationMs"], 15022);
}

/// `--output-dir` names a compressed rollout's output after its plain name
/// (`x.jsonl.zst` → `x.txt`, as `x.jsonl` → `x.txt`).
#[test]
fn output_dir_names_a_compressed_rollout_as_its_plain_name() {
    let dir = scratch("outdir");
    let (input, output) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&input).unwrap();
    std::fs::copy(rollout(COMPRESSED), input.join("rollout-a.jsonl.zst")).unwrap();
    let run = cstream(
        &[
            "--to",
            "text",
            "--output-dir",
            output.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(output.join("rollout-a.txt")).unwrap();
    assert!(text.contains("37 rows were skipped"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A rollout without `session_meta` is named by its file: Codex calls it
/// `rollout-<time>-<thread id>.jsonl`, so the thread id is the session's
/// id (a file named otherwise gets the numbered id every reader gives a
/// session without one), and a `session_meta` id wins over the name.
#[test]
fn a_rollout_without_session_meta_takes_its_id_from_its_file_name() {
    let dir = scratch("file-id");
    let id = "0199a7c2-5d1e-7b40-9f3a-2c6e8d41b07f";
    let named = dir.join(format!("rollout-2026-09-30T10-12-44-{id}.jsonl"));
    std::fs::copy(
        rollout("typed-prompt-only-in-history_no-session-meta_0.148.jsonl"),
        &named,
    )
    .unwrap();
    let evs = file_events(&named);
    assert_eq!(evs[0]["type"], "session_started");
    assert_eq!(evs[0]["sessionId"], id, "{}", evs[0]);

    let plain = file_events(&rollout(
        "typed-prompt-only-in-history_no-session-meta_0.148.jsonl",
    ));
    assert_eq!(plain[0]["sessionId"], "session-1", "{}", plain[0]);

    let with_meta = rollout("commentary-then-final-answer_0.125.jsonl");
    let own = file_events(&with_meta)[0]["sessionId"].clone();
    assert!(own.is_string(), "{own}");
    let renamed = dir.join(format!("rollout-2026-09-30T10-12-44-{id}.jsonl"));
    std::fs::copy(&with_meta, &renamed).unwrap();
    assert_eq!(file_events(&renamed)[0]["sessionId"], own);
}
