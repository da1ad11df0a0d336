//! Files of agents cstream does not read (docs/dialects.md#not-a-format-cstream-reads):
//! each is said to be one, named after the agent it looks like, and skipped
//! with exit 1, as a binary file is; never read as a supported dialect
//! (iFlow and Qwen Code files used to read as Claude Code transcripts,
//! the rest as cursor-agent for want of a better guess). The samples and
//! where their shapes come from: tests/not-read/SOURCES.md.

use std::path::{Path, PathBuf};

use crate::common::{corpus, cstream, fixtures};

fn samples() -> Vec<(PathBuf, &'static str)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/not-read");
    [
        (
            "iflow_session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl",
            "iFlow CLI",
        ),
        ("qwen_chat.jsonl", "Qwen Code"),
        ("kimi-code_wire.jsonl", "Kimi Code / Kimi CLI (wire.jsonl)"),
        ("kimi-cli_context.jsonl", "Kimi CLI (context.jsonl)"),
        (
            "grok-build_chat_history.jsonl",
            "Grok Build (chat_history.jsonl)",
        ),
        ("gptme_conversation.jsonl", "gptme"),
        ("kiro-cli_session.jsonl", "Kiro CLI"),
        ("vscode-copilot-chat_session.jsonl", "VS Code Copilot Chat"),
        (
            "visualstudio-copilot_traces.jsonl",
            "an OpenTelemetry trace export (OTLP JSON)",
        ),
        (
            "cline_api_conversation_history.json",
            "a list of chat messages (like Cline's api_conversation_history.json)",
        ),
        ("aider.chat.history.md", "Aider (.aider.chat.history.md)"),
    ]
    .into_iter()
    .map(|(f, agent)| (dir.join(f), agent))
    .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn said(file: &str, line: u64, agent: &str) -> String {
    format!(
        "cstream: warning: {file}:{line}: not a format cstream reads: this looks like {agent}; \
         skipping this input (docs/dialects.md#not-a-format-cstream-reads)\n"
    )
}

/// Nothing of the file is read: no prompt, text or call comes out.
fn nothing_read(events: &str) -> bool {
    !["user_message", "text_delta", "tool_call_started", "unknown"]
        .iter()
        .any(|t| events.contains(&format!("\"type\":\"{t}\"")))
}

#[test]
fn each_file_is_said_to_be_its_agents_and_skipped_with_exit_1() {
    for (path, agent) in samples() {
        let r = cstream(&["--to", "events", s(&path)], b"");
        assert_eq!(r.code, 1, "{}: {}", path.display(), r.stderr);
        // The Cline array's first element is on line 2.
        let line = if agent.contains("Cline") { 2 } else { 1 };
        assert_eq!(r.stderr, said(s(&path), line, agent), "{}", path.display());
        assert!(nothing_read(&r.out()), "{}: {}", path.display(), r.out());
        // The same from standard input.
        let piped = cstream(&["--to", "events"], &std::fs::read(&path).unwrap());
        assert_eq!(piped.code, 1);
        assert_eq!(piped.stderr, said("-", line, agent), "{}", path.display());
    }
}

#[test]
fn a_walk_names_each_and_converts_the_rest() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("not-read-walk");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut foreign = Vec::new();
    for (path, agent) in samples() {
        let to = dir.join(path.file_name().unwrap());
        std::fs::copy(&path, &to).unwrap();
        // A walk opens only the names session files have.
        if to.extension().is_some_and(|e| e == "jsonl" || e == "json") {
            foreign.push((to, agent));
        }
    }
    let pi = crate::common::fixtures_dir().join("pi/tree-branches_compaction_tools_v3.jsonl");
    std::fs::copy(&pi, dir.join("pi.jsonl")).unwrap();
    for jobs in ["1", "2"] {
        let r = cstream(&["--to", "events", "-j", jobs, s(&dir)], b"");
        assert_eq!(r.code, 1, "{}", r.stderr);
        for (to, agent) in &foreign {
            let line = if agent.contains("Cline") { 2 } else { 1 };
            assert!(
                r.stderr.contains(&said(s(to), line, agent)),
                "-j {jobs}: {}: {}",
                to.display(),
                r.stderr
            );
        }
        let events = r.out();
        assert!(events.contains(r#""dialect":"pi""#), "{events}");
        assert!(!events.contains(r#""dialect":"cursor""#), "{events}");
        assert!(
            !events.contains(r#""dialect":"claude-project""#),
            "{events}"
        );
    }
}

#[test]
fn from_reads_it_as_the_dialect_named_all_the_same() {
    let (iflow, _) = &samples()[0];
    let r = cstream(
        &["--to", "events", "--from", "claude-project", s(iflow)],
        b"",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains(r#""type":"user_message""#), "{}", r.out());
}

#[test]
fn no_fixture_or_corpus_file_is_taken_for_another_agents() {
    let mut files = fixtures();
    for d in [
        "claude-code",
        "codex",
        "cursor-agent",
        "gemini",
        "acp",
        "cursor-sdk",
        "sessions",
    ] {
        files.extend(corpus(d));
    }
    assert!(files.len() > 150, "{}", files.len());
    for f in files {
        let r = cstream(&["--to", "events", "-o", "/dev/null", s(&f)], b"");
        assert!(
            !r.stderr.contains("not a format cstream reads"),
            "{}: {}",
            f.display(),
            r.stderr
        );
    }
}
