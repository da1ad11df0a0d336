//! Format drift in agents cstream already read: Claude Code's newer
//! transcript records and stream lines, Gemini CLI's JSONL chats.

use crate::common;

use common::{cstream, cstream_file, events, fixtures_dir};
use serde_json::Value;

fn ty(e: &Value) -> &str {
    e["type"].as_str().unwrap_or("")
}

/// Claude Code transcript metadata: titles (the user's `/rename` wins over
/// Claude Code's own), the permission mode, no unknown event for them; a
/// record type the reader does not list and a user line without a message
/// are `unknown`, not dropped; a thinking block saved as a signature only
/// says so; usage still each message once.
#[test]
fn claude_transcript_metadata_titles_unknowns_and_unsaved_thinking() {
    let path = fixtures_dir().join(
        "claude-project/metadata-records_titles_signature-only-thinking_unknown-lines_2.1.240.jsonl",
    );
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The records not understood are said once each, at their own lines
    // (docs/dialects.md#drift); the metadata records are not among them.
    let name = path.display();
    assert_eq!(
        run.stderr,
        format!(
            "cstream: warning: claude-project: 1 record of type \"user\" not understood \
             (kept as unknown events; first at {name}:9)\n\
             cstream: warning: claude-project: 1 record of type \"worktree-state\" not understood \
             (kept as unknown events; first at {name}:8)\n"
        )
    );
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "claude-project");
    assert_eq!(evs[0]["title"], "empty-cart checkout fix");
    assert_eq!(evs[0]["permissionMode"], "acceptEdits");
    let unknown: Vec<&Value> = evs.iter().filter(|e| ty(e) == "unknown").collect();
    assert_eq!(unknown.len(), 2, "{unknown:?}");
    assert_eq!(unknown[0]["raw"]["type"], "worktree-state");
    assert_eq!(unknown[1]["raw"]["message"], "Fix it.");
    assert!(
        evs.iter().any(|e| e["source"] == "thinking"
            && e["message"]
                .as_str()
                .unwrap()
                .starts_with("thinking not saved")),
        "no word about the unsaved thinking"
    );
    let prompts: Vec<&str> = evs
        .iter()
        .filter(|e| ty(e) == "user_message")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        [
            "Why does checkout fail on an empty cart?",
            "Fix it, and open a PR."
        ]
    );
    let result = evs.iter().find(|e| ty(e) == "result").unwrap();
    assert_eq!(result["usage"]["outputTokens"], 41 + 23);
    assert_eq!(result["usage"]["inputTokens"], 6 + 2000 + 9 + 120 + 2050);
}

/// The title alone (Claude Code's own) and from standard input, where only
/// what was read before the session began can count.
#[test]
fn claude_transcript_ai_title_on_standard_input() {
    let input = concat!(
        r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-10-02T09:00:01.000Z","sessionId":"s"}"#,
        "\n",
        r#"{"type":"ai-title","aiTitle":"Greeting","sessionId":"s"}"#,
        "\n",
    );
    let run = cstream(
        &["--to", "events", "--from", "claude-project"],
        input.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["title"], "Greeting");
    assert!(!evs.iter().any(|e| ty(e) == "unknown"));
    let md = cstream(
        &["--to", "markdown", "--from", "claude-project"],
        input.as_bytes(),
    );
    assert!(
        md.out().contains("# Session 1 · claude-project: Greeting"),
        "{}",
        md.out()
    );
}

/// Claude Code's newer stream-json lines (`command_lifecycle`, newer
/// `system` subtypes) are known: detected, and no `unknown` event.
#[test]
fn claude_stream_newer_lines_are_known() {
    let path =
        fixtures_dir().join("claude/newer-lines_command-lifecycle_system-subtypes_2.1.278.jsonl");
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "claude");
    assert!(!evs.iter().any(|e| ty(e) == "unknown"), "{evs:?}");
    // Detected from the newer lines alone.
    let lines = concat!(
        r#"{"type":"command_lifecycle","command_uuid":"c1","state":"queued","session_id":"s"}"#,
        "\n",
        r#"{"type":"system","subtype":"vcs_state_changed","session_id":"s"}"#,
        "\n",
    );
    let run = cstream(&["--to", "events"], lines.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.out().contains("\"unknown\""), "{}", run.out());
}

/// Gemini CLI's JSONL chat: a message written again under its id is shown
/// once (its tool call started and completed once), a rewind removes the
/// messages it rewinds (their usage still counted), `$set.summary` is the
/// title.
#[test]
fn gemini_jsonl_rewrites_rewinds_and_title() {
    let path =
        fixtures_dir().join("gemini-chat/jsonl_rewritten-by-id_rewind_set-summary_0.43.jsonl");
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["dialect"], "gemini-chat");
    assert_eq!(evs[0]["title"], "Fix TODOs in the cart code");
    let count = |t: &str| evs.iter().filter(|e| ty(e) == t).count();
    assert_eq!(count("tool_call_started"), 1);
    assert_eq!(count("tool_call_completed"), 1);
    assert_eq!(count("unknown"), 0);
    let prompts: Vec<&str> = evs
        .iter()
        .filter(|e| ty(e) == "user_message")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        ["List the TODOs in src/.", "Fix only the cart one."]
    );
    let text: String = evs
        .iter()
        .filter(|e| ty(e) == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(
        !text.contains("Starting with the cart"),
        "rewound text shown"
    );
    // Every response's tokens once, the rewound one's too.
    let raw = std::fs::read_to_string(&path).unwrap();
    let mut last = std::collections::HashMap::new();
    for l in raw.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        if let Some(id) = v["id"].as_str()
            && v["tokens"].is_object()
        {
            last.insert(id.to_owned(), v["tokens"].clone());
        }
    }
    let n = |k: &str| last.values().map(|t| t[k].as_u64().unwrap()).sum::<u64>();
    let result = evs.iter().find(|e| ty(e) == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], n("input") + n("tool"));
    assert_eq!(result["usage"]["outputTokens"], n("output") + n("thoughts"));
    let deltas: u64 = evs
        .iter()
        .filter(|e| ty(e) == "usage_delta")
        .map(|e| e["deltaInput"].as_u64().unwrap())
        .sum();
    assert_eq!(deltas, n("input"));
}

/// A `$set.messages` checkpoint replaces the history, as Gemini CLI
/// reloads it: the dropped messages are counted in a notice, not shown.
#[test]
fn gemini_jsonl_checkpoint_replaces_history_with_a_notice() {
    let path = fixtures_dir().join("gemini-chat/jsonl_set-messages-checkpoint_0.43.jsonl");
    let run = cstream_file(&["--to", "events"], &path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert!(!run.out().contains("An old answer"));
    assert!(evs.iter().any(|e| {
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("2 earlier messages are not shown"))
    }));
    let result = evs.iter().find(|e| ty(e) == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], 900 + 1200);
}

/// A JSONL chat cut inside a `$set`: one warning naming the file, nothing
/// else lost.
#[test]
fn gemini_jsonl_cut_inside_a_set_warns_and_keeps_the_rest() {
    let src =
        fixtures_dir().join("gemini-chat/jsonl_rewritten-by-id_rewind_set-summary_0.43.jsonl");
    let raw = std::fs::read_to_string(&src).unwrap();
    let at = raw.rfind("{\"$set\"").unwrap() + 20;
    let dir = std::env::temp_dir().join(format!("cstream-drift-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("session-cut.jsonl");
    std::fs::write(&cut, &raw[..at]).unwrap();
    let run = cstream_file(&["--to", "events"], &cut);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("session-cut.jsonl:"), "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs.iter().filter(|e| ty(e) == "user_message").count(), 2);
    assert_eq!(evs.iter().filter(|e| ty(e) == "text_delta").count(), 2);
    assert!(evs.iter().any(|e| ty(e) == "result"));
    assert!(evs[0]["title"].is_null());
}

/// A sub-agent's chat (`chats/<parent>/<id>.jsonl`, `kind: subagent`)
/// names its parent session.
#[test]
fn gemini_jsonl_subagent_names_its_parent() {
    let dir = std::env::temp_dir().join(format!("cstream-drift-sub-{}", std::process::id()));
    let sub = dir.join("chats").join("parent-session-1");
    std::fs::create_dir_all(&sub).unwrap();
    let file = sub.join("child-1.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"sessionId":"child-1","projectHash":"p","startTime":"2026-10-05T14:00:00.000Z","lastUpdated":"2026-10-05T14:00:00.000Z","kind":"subagent","directories":["/home/dev/shop"]}"#,
            "\n",
            r#"{"id":"a","timestamp":"2026-10-05T14:00:01.000Z","type":"user","content":"look"}"#,
            "\n",
        ),
    )
    .unwrap();
    let run = cstream_file(&["--to", "events"], &file);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let evs = events(&run.out());
    assert_eq!(evs[0]["parentSessionId"], "parent-session-1");
    assert_eq!(evs[0]["cwd"], "/home/dev/shop");
}
