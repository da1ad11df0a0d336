//! Claude Code and cursor-agent figures that looked right and were not
//! (issue 26): a sub-agent's lifecycle and spend in stream-json, usage saved
//! without a message id, cursor transcripts' system lines and thinking.
//! Each test reads a fixture written in the shape of the agent version its
//! name gives.

use crate::common;

use common::{events, run_fixture};
use serde_json::Value;

fn fixture_events(rel: &str) -> Vec<Value> {
    let run = run_fixture(&common::fixtures_dir().join(rel), &["--to", "events"]);
    assert_eq!(run.code, 0, "{rel}: {}", run.stderr);
    events(&run.out())
}

/// The events split at each `session_started`.
fn sessions(evs: &[Value]) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = Vec::new();
    for e in evs {
        if e["type"] == "session_started" || out.is_empty() {
            out.push(Vec::new());
        }
        out.last_mut().unwrap().push(e.clone());
    }
    out
}

fn of_type<'a>(evs: &'a [Value], ty: &str) -> Vec<&'a Value> {
    evs.iter().filter(|e| e["type"] == ty).collect()
}

/// (input, output) summed over a session's `usage_delta`s.
fn usage_sum(evs: &[Value]) -> (u64, u64) {
    of_type(evs, "usage_delta")
        .iter()
        .fold((0, 0), |(i, o), e| {
            (
                i + e["deltaInput"].as_u64().unwrap(),
                o + e["deltaOutput"].as_u64().unwrap(),
            )
        })
}

fn result_usage(evs: &[Value]) -> (u64, u64) {
    let r = of_type(evs, "result");
    let u = &r.last().expect("a result")["usage"];
    (
        u["inputTokens"].as_u64().unwrap(),
        u["outputTokens"].as_u64().unwrap(),
    )
}

const LIFECYCLE: &str = "claude/task-lifecycle_subagent-usage_forked-skill_2.1.176.jsonl";
const TASK_CALL: &str = "toolu_01FpZr8Xq3kTn5Wb2Yc7Vd9A";
const FORKED_TASK: &str = "a91c2e5f03b7d4e18";

/// `system`/`task_*` lines are the sub-agent's lifecycle: progress of the
/// `Task` call that spawned it (the line verbatim), or, for a task no call
/// spawned (a forked skill), a call of its own from `task_started` to
/// `task_notification`, in the turn whose init follows its start.
#[test]
fn task_lines_are_the_sub_agents_lifecycle() {
    let evs = fixture_events(LIFECYCLE);
    assert!(of_type(&evs, "unknown").is_empty(), "{evs:#?}");
    let ss = sessions(&evs);
    assert_eq!(ss.len(), 2, "two turns");
    // (The sub-agent's text is progress of the call too, `{"text": …}`.)
    let subtypes: Vec<&str> = of_type(&ss[0], "tool_call_progress")
        .iter()
        .filter(|e| e["callId"] == TASK_CALL)
        .filter_map(|e| e["partial"]["subtype"].as_str())
        .collect();
    assert_eq!(
        subtypes,
        ["task_started", "task_progress", "task_notification"]
    );
    let forked: Vec<&Value> = ss[1]
        .iter()
        .filter(|e| e["callId"] == FORKED_TASK)
        .collect();
    let kinds: Vec<&str> = forked.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "tool_call_started",
            "tool_call_progress",
            "tool_call_completed"
        ]
    );
    assert_eq!(forked[0]["toolName"], "task");
    assert_eq!(forked[2]["ok"], true);
    assert!(
        ss[0].iter().all(|e| e["callId"] != FORKED_TASK),
        "the forked task belongs to the turn that follows its start"
    );
}

/// A turn's usage is the change in `modelUsage` (every model call, the
/// sub-agents' included), not `result.usage` (the main loop's only; all
/// zeros for a forked skill): in the `usage_delta`s and in the result.
#[test]
fn a_turns_usage_includes_its_sub_agents() {
    let evs = fixture_events(LIFECYCLE);
    let ss = sessions(&evs);
    // Turn 1: opus (8 + 31200 + 1500 in, 80 out) + haiku (22 + 4000 + 4150
    // in, 70 out). Turn 2: what opus's running total added (6 + 2800 + 6100
    // in, 210 out); result.usage is all zeros.
    let want = [(40880, 150), (8906, 210)];
    for (s, want) in ss.iter().zip(want) {
        assert_eq!(usage_sum(s), want);
        assert_eq!(result_usage(s), want);
    }
}

/// A capture cut before the `result`: the sub-agent's messages still count
/// (main 3 + 15000 + 1200 in, 8 out; sub-agent 10 + 4000 in, 30 out and
/// 12 + 4000 + 150 in, 25 out), and the `Task` call is still the
/// lifecycle's.
#[test]
fn a_capture_cut_before_the_result_counts_the_sub_agents_messages() {
    let evs = fixture_events("claude/task-lifecycle_cut-before-result_2.1.176.jsonl");
    assert!(of_type(&evs, "unknown").is_empty(), "{evs:#?}");
    assert_eq!(usage_sum(&evs), (24375, 63));
}

/// A background task that fails after its call returned: the failure is
/// said (a notice naming it), and the `task_updated`/`task_notification`
/// without a `tool_use_id` attach to the call by the task id.
#[test]
fn a_background_task_failing_after_its_call_is_said() {
    let evs = fixture_events("claude/background-bash-task_failed-notification_2.1.176.jsonl");
    assert!(of_type(&evs, "unknown").is_empty(), "{evs:#?}");
    let progress: Vec<&str> = of_type(&evs, "tool_call_progress")
        .iter()
        .filter(|e| e["callId"] == "toolu_01Rk5Yb8Mx2Tc6Wq9Ln3Hd7P")
        .map(|e| e["partial"]["subtype"].as_str().unwrap())
        .collect();
    assert_eq!(
        progress,
        ["task_started", "task_updated", "task_notification"]
    );
    let errors = of_type(&evs, "error");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["source"], "task");
    assert_eq!(errors[0]["fatal"], false);
    let said = errors[0]["message"].as_str().unwrap();
    assert!(
        said.contains("\"Run FSM calibration\"") && said.contains("exit code 1"),
        "{said}"
    );
}

/// Saved-session lines whose message has usage but neither `message.id` nor
/// `requestId` are counted (a run of such lines with the same input counts
/// as one message), and a notice says so.
#[test]
fn usage_without_a_message_id_is_counted_and_said() {
    let evs = fixture_events("claude-project/usage-without-message-id_2.1.176.jsonl");
    // msg_011CT1aa 4 + 600 + 9000 in, 35 out; the id-less message of two
    // lines 6 + 250 + 9600 in, 48 out (its last line's); the next one
    // 8 + 120 + 9850 in, 22 out.
    assert_eq!(result_usage(&evs), (29438, 105));
    assert_eq!(usage_sum(&evs), (29438, 105));
    let notes: Vec<&Value> = of_type(&evs, "error")
        .into_iter()
        .filter(|e| e["source"] == "usage")
        .collect();
    assert!(
        notes.iter().any(|e| e["message"]
            .as_str()
            .unwrap()
            .contains("2 messages had no message id")),
        "{notes:#?}"
    );
}

/// cursor-agent transcripts: a `system` line is not the assistant's text
/// (a `context` user event), and `thinking` blocks are thinking.
#[test]
fn cursor_transcript_system_lines_and_thinking() {
    let evs = fixture_events("cursor-transcript/system-lines_thinking-blocks_2026.09.14.jsonl");
    let text: String = of_type(&evs, "text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        text,
        "The test compares a sorted list with an unsorted one.Sorting both sides fixes it."
    );
    let thinking: Vec<&str> = of_type(&evs, "thinking_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        thinking,
        ["The assertion compares a sorted list with an unsorted one."]
    );
    assert!(of_type(&evs, "unknown").is_empty(), "{evs:#?}");
    assert_eq!(prompts(&evs), ["why does the test fail?"]);
    assert_eq!(
        user_events(&evs),
        [
            ("context", "The user switched the model to gpt-5.3-codex."),
            ("context", "Context was summarized to save space.")
        ]
    );
}

fn prompts(evs: &[Value]) -> Vec<&str> {
    of_type(evs, "user_message")
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect()
}

/// A prompt typed while the agent worked is a prompt where the agent took it
/// in: from 2.1.10x a `queued_command` attachment after the tool result it
/// came in beside (the `queue-operation` records around it are
/// bookkeeping); one sent when the agent was idle is the `user` line after
/// its `dequeue`, once.
#[test]
fn a_queued_prompt_is_a_prompt() {
    let evs = fixture_events("claude-project/queued-prompt_attachment_dequeued_2.1.207.jsonl");
    assert_eq!(
        prompts(&evs),
        [
            "Fix the flaky date test.",
            "also update the README",
            "and push it"
        ]
    );
    // In order: after the tool result it came in beside, before the answer.
    let kinds: Vec<&str> = evs.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let queued = evs
        .iter()
        .position(|e| e["text"] == "also update the README")
        .unwrap();
    assert_eq!(kinds[queued - 1], "tool_call_completed");
}

/// Before the attachment existed (2.0.x), the `queue-operation` `remove` is
/// the only record of a prompt the agent took in mid-turn.
#[test]
fn a_queued_prompt_without_its_attachment_is_a_prompt() {
    let evs = fixture_events("claude-project/queued-prompt_remove-only_2.0.76.jsonl");
    assert_eq!(
        prompts(&evs),
        ["Rename `Conf` to `Config`.", "skip the tests folder"]
    );
}

fn user_events(evs: &[Value]) -> Vec<(&str, &str)> {
    of_type(evs, "user_event")
        .iter()
        .map(|e| (e["what"].as_str().unwrap(), e["text"].as_str().unwrap()))
        .collect()
}

const CAVEAT: &str = "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.";

/// Not every user line is a prompt: a slash command's echo, what a local
/// command printed, an interruption, a caveat and a system-reminder-only
/// line are `user_event`s and begin no turn (an empty command output says
/// nothing; an `isMeta` line stays out).
#[test]
fn saved_session_user_lines_that_are_not_prompts() {
    let evs = fixture_events(
        "claude-project/non-prompt-user-lines_clear-interrupt-caveat-reminder_2.1.214.jsonl",
    );
    assert_eq!(
        prompts(&evs),
        [
            "Add input validation to the signup form.",
            "Use zod for the schema instead."
        ]
    );
    assert_eq!(
        user_events(&evs),
        [
            ("command", "/clear"),
            ("interrupt", "[Request interrupted by user for tool use]"),
            ("context", CAVEAT),
            ("command", "/model opus"),
            ("command_output", "Set model to opus (claude-opus-4-6)"),
            (
                "context",
                "<system-reminder>The user opened the file /home/dev/web/src/signup.ts in the IDE.</system-reminder>"
            ),
            ("interrupt", "[Request interrupted by user]"),
        ]
    );
}

/// The same in a live stream, and the summary a compaction leaves on the
/// user's side is context, not a prompt.
#[test]
fn stream_user_lines_that_are_not_prompts() {
    let evs =
        fixture_events("claude/non-prompt-user-lines_interrupt-compaction-summary_2.1.214.jsonl");
    assert_eq!(prompts(&evs), ["Refactor the parser into modules."]);
    let got = user_events(&evs);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        got[0],
        ("interrupt", "[Request interrupted by user for tool use]")
    );
    assert_eq!(got[1].0, "context");
    assert!(got[1].1.starts_with("This session is being continued"));
}
