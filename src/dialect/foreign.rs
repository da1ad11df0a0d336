//! Files of agents cstream does not read (docs/dialects.md#not-a-format-cstream-reads).
//!
//! Several agents write lines that look like a supported dialect's: iFlow
//! CLI and Qwen Code copy Claude Code's transcript envelope, Kimi's wire log
//! starts like a Codex line to a loose reader, and gptme, Grok Build or Kiro
//! lines would otherwise be read as cursor-agent for want of a better
//! guess. Reading one as another agent turns a session into nonsense with
//! exit 0, so detection asks these rules first: a file one of them claims
//! is "not a format cstream reads", named after the agent it looks like,
//! and skipped with exit 1, as a binary file is.
//!
//! Each rule names keys or values that no supported dialect writes; the
//! shapes come from each agent's own source or samples (the table in
//! docs/dialects.md names them).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::json::LaxStr;

type Has = Option<IgnoredAny>;

/// The keys the rules look at.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    ty: LaxStr<'a>,
    #[serde(borrow)]
    role: LaxStr<'a>,
    #[serde(borrow)]
    kind: LaxStr<'a>,
    #[serde(rename = "sessionId", borrow)]
    session_id_camel: Option<&'a RawValue>,
    session_id: Has,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    uuid: Has,
    message: Option<&'a RawValue>,
    content: Has,
    timestamp: Has,
    time: Has,
    data: Has,
    version: Has,
    protocol_version: Has,
    #[serde(rename = "toolUseResult")]
    tool_use_result: Option<&'a RawValue>,
    #[serde(rename = "systemPayload")]
    system_payload: Has,
    #[serde(rename = "usageMetadata")]
    usage_metadata: Has,
    #[serde(rename = "resourceSpans")]
    resource_spans: Has,
    requests: Has,
    #[serde(rename = "responderUsername")]
    responder_username: Has,
    v: Option<&'a RawValue>,
    history: Has,
    #[serde(rename = "workspaceDirectory")]
    workspace_directory: Has,
    #[serde(rename = "executionId")]
    execution_id: Has,
    chat: Has,
    zed: Has,
    env: Has,
    params: Option<&'a RawValue>,
    agent_id: Has,
    run_id: Has,
    subtype: Has,
    jsonrpc: Has,
    method: Has,
}

impl Probe<'_> {
    fn ty(&self) -> &str {
        self.ty.as_deref().unwrap_or("")
    }
    fn role(&self) -> &str {
        self.role.as_deref().unwrap_or("")
    }
}

/// The parts of a `message` the rules look at.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    role: LaxStr<'a>,
    parts: Has,
    content: Option<&'a RawValue>,
}

/// The agent whose file `rec` (one JSON record, or a whole JSON document)
/// is, when it is one of an agent cstream does not read.
pub fn sniff(rec: &str) -> Option<&'static str> {
    let rec = rec.trim_start();
    if rec.starts_with('[') {
        return sniff_array(rec);
    }
    let p: Probe = serde_json::from_str(rec).ok()?;
    let ty = p.ty();
    // Kimi Code and Kimi CLI: `wire.jsonl` opens with its protocol version;
    // Kimi Code's records are dotted types with a `time`, where Copilot
    // CLI's carry `data`.
    if ty == "metadata" && p.protocol_version.is_some() {
        return Some("Kimi Code / Kimi CLI (wire.jsonl)");
    }
    if ty.contains('.') && p.time.is_some() && p.data.is_none() {
        return Some("Kimi Code (wire.jsonl)");
    }
    // Kimi CLI's `context.jsonl`: bookkeeping roles start with `_`.
    if p.role().starts_with('_') {
        return Some("Kimi CLI (context.jsonl)");
    }
    if p.uuid.is_some() || p.session_id_camel.is_some() {
        // iFlow CLI: Claude Code's envelope, but the session id is
        // `session-<uuid>` (Claude Code writes a bare UUID), and tool
        // results are Gemini-style objects.
        let iflow_id = p
            .session_id_camel
            .is_some_and(|s| s.get().starts_with("\"session-"));
        let iflow_result = p.tool_use_result.is_some_and(|r| {
            let r = r.get();
            r.starts_with('{') && r.contains("\"toolName\"") && !r.contains("\"stdout\"")
        });
        if iflow_id || (iflow_result && p.uuid.is_some()) {
            return Some("iFlow CLI");
        }
        // Qwen Code: the envelope again, with Gemini's `parts`, a `model`
        // role, or its own telemetry and usage keys.
        let m: Message = p
            .message
            .and_then(|m| serde_json::from_str(m.get()).ok())
            .unwrap_or_default();
        if p.system_payload.is_some()
            || p.usage_metadata.is_some()
            || (m.parts.is_some() && m.content.is_none())
            || m.role.as_deref() == Some("model")
        {
            return Some("Qwen Code");
        }
    }
    // Kiro CLI: `{"version":"v1","kind":"Prompt"|…,"data":…}`.
    if p.version.is_some()
        && p.data.is_some()
        && matches!(
            p.kind.as_deref(),
            Some("Prompt" | "AssistantMessage" | "ToolResults")
        )
    {
        return Some("Kiro CLI");
    }
    // Kiro IDE's saved chats.
    if (p.history.is_some() && p.workspace_directory.is_some())
        || (p.execution_id.is_some() && p.chat.is_some())
    {
        return Some("Kiro IDE");
    }
    // VS Code Copilot Chat: a session object, or its append log whose
    // first record holds one under `v`.
    if p.requests.is_some() && p.responder_username.is_some() {
        return Some("VS Code Copilot Chat");
    }
    if p.v
        .is_some_and(|v| v.get().starts_with('{') && v.get().contains("\"requests\""))
        && p.ty.as_deref().is_none()
    {
        return Some("VS Code Copilot Chat");
    }
    // An OpenTelemetry trace export (Visual Studio's Copilot writes these).
    if p.resource_spans.is_some() {
        return Some("an OpenTelemetry trace export (OTLP JSON)");
    }
    // Zed's text threads.
    if p.zed.is_some() {
        return Some("Zed (text thread)");
    }
    // Amp's exported threads: `T-…` ids with the format version and the
    // environment.
    if p.id.is_some_and(|id| id.get().starts_with("\"T-")) && p.v.is_some() && p.env.is_some() {
        return Some("Amp (thread export)");
    }
    // Hermes Agent's JSONL opens with its session metadata as a role.
    if p.role() == "session_meta" {
        return Some("Hermes Agent");
    }
    // Grok Build's `updates.jsonl`: ACP updates without the JSON-RPC
    // envelope.
    if p.params
        .is_some_and(|v| v.get().contains("\"sessionUpdate\""))
        && p.ty.as_deref().is_none()
        && p.jsonrpc.is_none()
        && p.method.is_none()
    {
        return Some("Grok Build (updates.jsonl)");
    }
    let anonymous = p.session_id.is_none()
        && p.session_id_camel.is_none()
        && p.uuid.is_none()
        && p.id.is_none()
        && p.agent_id.is_none()
        && p.run_id.is_none();
    // Grok Build's `chat_history.jsonl`: a `type` and the content beside it,
    // no message, no ids, no time (Gemini CLI's messages have an id and a
    // time; cursor-agent's lines a message or a session id).
    if anonymous
        && p.message.is_none()
        && p.content.is_some()
        && p.timestamp.is_none()
        && p.subtype.is_none()
        && matches!(
            ty,
            "system" | "user" | "assistant" | "reasoning" | "backend_tool_call"
        )
    {
        return Some("Grok Build (chat_history.jsonl)");
    }
    if anonymous && matches!(ty, "reasoning" | "backend_tool_call") {
        return Some("Grok Build (chat_history.jsonl)");
    }
    // gptme: `{role, content, timestamp}` and nothing of a type or message.
    if anonymous
        && p.ty.as_deref().is_none()
        && p.message.is_none()
        && p.content.is_some()
        && p.timestamp.is_some()
        && matches!(p.role(), "system" | "user" | "assistant" | "tool")
    {
        return Some("gptme");
    }
    // A bare chat message, `{role, content}` and nothing else: an element
    // of a message list such as Cline's `api_conversation_history.json`
    // (the framer reads a top-level array element by element).
    if anonymous
        && p.ty.as_deref().is_none()
        && p.message.is_none()
        && p.content.is_some()
        && p.timestamp.is_none()
        && matches!(p.role(), "user" | "assistant")
    {
        return Some(CHAT_LIST);
    }
    None
}

/// What a bare message list is taken for.
const CHAT_LIST: &str = "a list of chat messages (like Cline's api_conversation_history.json)";

/// A whole file that is a JSON array: Cline's legacy
/// `api_conversation_history.json` is one of `{role, content}` messages.
fn sniff_array(rec: &str) -> Option<&'static str> {
    #[derive(Deserialize)]
    struct Msg {
        role: Option<IgnoredAny>,
        content: Option<IgnoredAny>,
    }
    let first: Vec<Msg> = serde_json::from_str(rec).ok()?;
    let m = first.first()?;
    (m.role.is_some() && m.content.is_some()).then_some(CHAT_LIST)
}

/// The agent whose text file begins with `block`, for the formats that are
/// not JSON (Aider's Markdown chat history).
pub fn sniff_text(block: &[u8]) -> Option<&'static str> {
    let text = block.trim_ascii_start();
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    text.starts_with(b"# aider chat started at ")
        .then_some("Aider (.aider.chat.history.md)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_shapes_are_not_foreign() {
        for rec in [
            // Claude Code transcript.
            r#"{"uuid":"a","parentUuid":null,"sessionId":"5de701fc-7454-4858-a249-95cac4fd3b51","type":"user","message":{"role":"user","content":"hi"}}"#,
            // Gemini CLI chat message and header.
            r#"{"id":"m1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":"hi"}"#,
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
            // cursor-agent.
            r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#,
            r#"{"type":"user","message":{"role":"user","content":[]},"session_id":"s"}"#,
            // cursor-agent transcript.
            r#"{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}"#,
            // Codex rollout.
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}"#,
            // Pi.
            r#"{"type":"session","version":3,"id":"x","cwd":"/w","timestamp":"2026-01-01T00:00:00Z"}"#,
            // Copilot CLI (dotted types with `data`).
            r#"{"type":"session.start","data":{"sessionId":"x"},"id":"i","timestamp":"2026-01-01T00:00:00Z","parentId":null}"#,
            // ACP JSON-RPC.
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}}"#,
        ] {
            assert_eq!(sniff(rec), None, "{rec}");
        }
    }

    #[test]
    fn each_agent_is_named() {
        for (rec, agent) in [
            (
                r#"{"uuid":"a","parentUuid":null,"sessionId":"session-5de701fc-7454-4858-a249-95cac4fd3b51","type":"user","message":{"role":"user","content":"hi"}}"#,
                "iFlow CLI",
            ),
            (
                r#"{"uuid":"q","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}"#,
                "Qwen Code",
            ),
            (
                r#"{"type":"metadata","protocol_version":"1.3"}"#,
                "Kimi Code / Kimi CLI (wire.jsonl)",
            ),
            (
                r#"{"type":"config.update","cwd":"/w","time":1779256791100}"#,
                "Kimi Code (wire.jsonl)",
            ),
            (
                r#"{"role":"_checkpoint","id":0}"#,
                "Kimi CLI (context.jsonl)",
            ),
            (
                r#"{"version":"v1","kind":"Prompt","data":{"content":[]}}"#,
                "Kiro CLI",
            ),
            (
                r#"{"type":"system","content":"You are Grok"}"#,
                "Grok Build (chat_history.jsonl)",
            ),
            (
                r#"{"role":"user","content":"Write hello","timestamp":"2026-06-13T10:00:01.000000"}"#,
                "gptme",
            ),
            (
                r#"{"kind":0,"v":{"version":3,"sessionId":"s","requests":[]}}"#,
                "VS Code Copilot Chat",
            ),
            (
                r#"{"resourceSpans":[]}"#,
                "an OpenTelemetry trace export (OTLP JSON)",
            ),
            (
                r#"[{"role":"user","content":[{"type":"text","text":"hi"}]}]"#,
                CHAT_LIST,
            ),
            (
                r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#,
                CHAT_LIST,
            ),
            (
                r#"{"timestamp":1784278801,"params":{"update":{"sessionUpdate":"user_message_chunk"}}}"#,
                "Grok Build (updates.jsonl)",
            ),
            (r#"{"role":"session_meta","id":"x"}"#, "Hermes Agent"),
        ] {
            assert_eq!(sniff(rec), Some(agent), "{rec}");
        }
        assert_eq!(
            sniff_text(b"\n# aider chat started at 2026-06-09 14:01:00\n"),
            Some("Aider (.aider.chat.history.md)")
        );
    }
}
