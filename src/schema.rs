//! JSON Schema for the two outputs other programs parse: the `events` lines
//! and the `documents` object (`--schema events|documents`).
//!
//! Both outputs are written by hand for speed and a fixed field order
//! (`event/write.rs`, `output/documents/`), so the schema cannot be derived
//! from the writers' own types. It is derived from the wire-shaped types
//! below, one per event type and per document type, whose doc comments
//! become the schema's descriptions. Two tests keep them honest: the schema
//! files checked into `schema/` must equal what these types generate, and
//! every fixture's `events` and `documents` output must validate against
//! them, so a field the writer adds without adding it here fails the build.
//!
//! The version both outputs carry ([`crate::event::SCHEMA_VERSION`]) changes
//! only when a change breaks a reader: a field removed, renamed or retyped,
//! or a type's meaning changed. A new optional field or event type does not
//! change it (readers must ignore what they do not know).

// The types only describe JSON; nothing constructs them.
#![allow(dead_code)]

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use crate::event::SCHEMA_VERSION;

/// The schema of one `--to events` line.
pub fn events() -> Value {
    let mut s = schemars::schema_for!(EventLine);
    finish(
        &mut s,
        "cstream events line",
        "One line of `cstream --to events`: a normalized event.",
    );
    s.to_value()
}

/// The schema of one `--to documents` value (one per session).
pub fn documents() -> Value {
    let mut s = schemars::schema_for!(ChatResponse);
    finish(
        &mut s,
        "cstream documents response",
        "One value of `cstream --to documents`: a session as a ChatResponse with its documents.",
    );
    s.to_value()
}

/// The schema of one `--to rows` line: every column on every line, in the
/// order the rows writer writes them (`output/rows.rs`), `null` when unknown.
pub fn rows() -> Value {
    let mut s = schemars::schema_for!(RowLine);
    finish(
        &mut s,
        "cstream rows line",
        "One line of `cstream --to rows`: an event as a flat row with fixed columns.",
    );
    s.to_value()
}

/// A schema as the files in `schema/` hold it: pretty JSON, a final newline.
pub fn pretty(schema: &Value) -> String {
    let mut s = serde_json::to_string_pretty(schema).expect("a schema serializes");
    s.push('\n');
    s
}

fn finish(s: &mut Schema, title: &str, description: &str) {
    s.insert("title".into(), title.into());
    s.insert("description".into(), description.into());
}

/// A field that is always there and may be `null` (the documents format
/// writes every field of its shape).
struct Nullable<T>(PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        <Option<T>>::json_schema(g)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// Any JSON value, copied from the input as it came.
fn any_json(_: &mut SchemaGenerator) -> Schema {
    json_schema!({})
}

/// The schema version, a constant.
fn version(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "const": SCHEMA_VERSION })
}

/// A date and time in RFC 3339.
fn date_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "format": "date-time" })
}

// ------------------------------------------------------------------ events

/// Token counts of a turn or a session.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct UsageObj {
    /// Input tokens not read from the cache.
    input_tokens: u64,
    /// Output tokens, reasoning included.
    output_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[schemars(default)]
    cache_read_tokens: Skip<u64>,
    /// Input tokens written to the prompt cache.
    #[schemars(default)]
    cache_write_tokens: Skip<u64>,
    /// The part of `cacheWriteTokens` written to a one-hour cache, when the
    /// source says (Claude's `ephemeral_1h_input_tokens`).
    #[schemars(default, rename = "cacheWrite1hTokens")]
    cache_write_1h_tokens: Skip<u64>,
    /// The part of `outputTokens` spent reasoning, when the source counts
    /// it apart.
    #[schemars(default)]
    reasoning_tokens: Skip<u64>,
    /// `true` when some output count was not in the source: `outputTokens`
    /// is then a lower bound, and unknown when it is 0.
    #[schemars(default)]
    output_incomplete: Skip<bool>,
}

/// A field that is left out when it has no value (never `null`): its
/// schema is `T`'s, and the field is marked `default` (not required).
struct Skip<T>(PhantomData<T>);

impl<T> Default for Skip<T> {
    fn default() -> Self {
        Skip(PhantomData)
    }
}

impl<T: JsonSchema> JsonSchema for Skip<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        T::json_schema(g)
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}

/// One item of a todo list.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct TodoObj {
    /// The source's id for the item.
    #[schemars(default)]
    id: Skip<String>,
    /// What is to be done.
    content: String,
    /// `pending`, `in_progress`, `completed`, `cancelled`, or the source's own word, lowercased.
    status: String,
}

/// One question the agent asks.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct QuestionObj {
    /// The source's id for the question.
    #[schemars(default)]
    id: Skip<String>,
    /// The question.
    text: String,
    /// The answers offered.
    options: Vec<ChoiceObj>,
}

/// One answer offered to a question.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ChoiceObj {
    /// The source's id for the answer.
    #[schemars(default)]
    id: Skip<String>,
    /// The answer's text.
    label: String,
}

/// Where a shell call's live output came from.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum OutStreamObj {
    Stdout,
    Stderr,
}

/// The phase of a summarisation, or a snapshot of a plan or todo list.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum PhaseObj {
    Started,
    Completed,
    Snapshot,
}

/// The fields of a tool call's start.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase")]
struct ToolStartFields {
    /// The call's id, repeated by its progress and completion.
    call_id: String,
    /// The tool, from one closed vocabulary (`shell`, `read`, `edit`, `mcp`, …).
    tool_name: String,
    /// The source's own arguments, as it sent them.
    #[schemars(schema_with = "any_json")]
    args: Value,
    /// Shell: the command line.
    #[schemars(default)]
    command: Skip<String>,
    /// Shell: the working directory.
    #[schemars(default)]
    cwd: Skip<String>,
    /// The file or directory the tool works on.
    #[schemars(default)]
    path: Skip<String>,
    /// Grep and glob: the pattern.
    #[schemars(default)]
    pattern: Skip<String>,
    /// Web fetch: the address.
    #[schemars(default)]
    url: Skip<String>,
    /// Web and semantic search: the query.
    #[schemars(default)]
    query: Skip<String>,
    /// A sub-agent's task, or a tool's own summary.
    #[schemars(default)]
    description: Skip<String>,
    /// MCP: the server.
    #[schemars(default)]
    mcp_server: Skip<String>,
    /// MCP: the server's tool.
    #[schemars(default)]
    mcp_tool: Skip<String>,
    /// Edit: the text replaced.
    #[schemars(default)]
    old_string: Skip<String>,
    /// Edit: the text replacing it.
    #[schemars(default)]
    new_string: Skip<String>,
    /// Write: the file's full new text.
    #[schemars(default)]
    file_content: Skip<String>,
    /// A move or rename: the destination.
    #[schemars(default)]
    new_path: Skip<String>,
    /// Plan: the plan, in Markdown.
    #[schemars(default)]
    plan: Skip<String>,
    /// Plan: its title; question: the line introducing the questions.
    #[schemars(default)]
    title: Skip<String>,
    /// Plan: a short overview.
    #[schemars(default)]
    overview: Skip<String>,
    /// Todo and plan: the whole list.
    #[schemars(default)]
    todos: Skip<Vec<TodoObj>>,
    /// Question: what is asked.
    #[schemars(default)]
    questions: Skip<Vec<QuestionObj>>,
}

/// The fields of a tool call's completion after `toolName`.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase")]
struct ToolEndFields {
    /// The call succeeded.
    ok: bool,
    /// The source's own result payload, `null` when it gave none.
    #[schemars(schema_with = "any_json")]
    result: Value,
    /// How long the call took.
    #[schemars(default)]
    duration_ms: Skip<u64>,
    /// Shell: the exit status.
    #[schemars(default)]
    exit_code: Skip<i64>,
    /// Shell: the output, once.
    #[schemars(default)]
    output: Skip<String>,
    /// Edit: a unified diff.
    #[schemars(default)]
    patch: Skip<String>,
    /// Edit: lines added.
    #[schemars(default)]
    lines_added: Skip<u64>,
    /// Edit: lines removed.
    #[schemars(default)]
    lines_removed: Skip<u64>,
    /// The message of a failed call.
    #[schemars(default)]
    error: Skip<String>,
    /// The call was cancelled (written only when true).
    #[schemars(default)]
    cancelled: Skip<bool>,
    /// The source stored the call but not its outcome (written only when true);
    /// `ok` is then not a verdict and `result` is `null`.
    #[schemars(default)]
    outcome_unknown: Skip<bool>,
}

/// The fields every event has after `type`.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase")]
struct Common {
    /// The session the event belongs to: the source's id, or `session-N`.
    session_id: String,
    /// When the source said the event happened, in epoch milliseconds.
    #[schemars(default)]
    ts: Skip<i64>,
}

/// One line of the events format: `type` first, then `sessionId`, `ts`
/// and the type's own fields.
#[derive(JsonSchema)]
#[schemars(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum EventLine {
    /// A session begins.
    #[schemars(rename_all = "camelCase")]
    SessionStarted {
        #[schemars(flatten)]
        common: Common,
        /// The reader that read the session (`cursor`, `claude`, `codex-rollout`, …, or `unknown`).
        dialect: String,
        /// The version of this schema the stream follows.
        #[schemars(schema_with = "version")]
        schema_version: u32,
        /// The model the agent named at the start.
        #[schemars(default)]
        model: Skip<String>,
        /// The agent's working directory.
        #[schemars(default)]
        cwd: Skip<String>,
        /// The agent's permission (approval) mode, in its own words.
        #[schemars(default)]
        permission_mode: Skip<String>,
        /// The session's title, where the source gives one (a title the agent made or the user set, a saved chat's one-line summary).
        #[schemars(default)]
        title: Skip<String>,
        /// A sub-agent's session: the session that spawned it.
        #[schemars(default)]
        parent_session_id: Skip<String>,
        /// A sub-agent's session: the parent's tool call that spawned it, when known.
        #[schemars(default)]
        parent_call_id: Skip<String>,
        /// A session that began as a copy of another (a fork): that session.
        #[schemars(default)]
        forked_from: Skip<String>,
        /// `false` when the session was written with `--no-dedupe`.
        #[schemars(default)]
        dedupe: Skip<bool>,
    },
    /// The prompt, as the agent echoed it.
    UserMessage {
        #[schemars(flatten)]
        common: Common,
        /// The prompt's text.
        text: String,
    },
    /// A piece of the model's thinking.
    ThinkingDelta {
        #[schemars(flatten)]
        common: Common,
        /// The piece.
        text: String,
    },
    /// A thinking phase ended.
    #[schemars(rename_all = "camelCase")]
    ThinkingCompleted {
        #[schemars(flatten)]
        common: Common,
        /// How long the phase took.
        #[schemars(default)]
        duration_ms: Skip<u64>,
    },
    /// A piece of assistant text.
    TextDelta {
        #[schemars(flatten)]
        common: Common,
        /// The piece.
        text: String,
    },
    /// A tool call began.
    ToolCallStarted {
        #[schemars(flatten)]
        common: Common,
        #[schemars(flatten)]
        start: ToolStartFields,
    },
    /// Arguments so far, a progress snapshot, or a replacement of the call's output.
    #[schemars(rename_all = "camelCase")]
    ToolCallProgress {
        #[schemars(flatten)]
        common: Common,
        /// The call.
        call_id: String,
        /// The source's payload, as it came.
        #[schemars(schema_with = "any_json")]
        partial: Value,
    },
    /// Live output of a running shell call.
    #[schemars(rename_all = "camelCase")]
    ShellOutputDelta {
        #[schemars(flatten)]
        common: Common,
        /// The call.
        call_id: String,
        /// Which stream.
        stream: OutStreamObj,
        /// The output.
        text: String,
    },
    /// A tool call ended.
    #[schemars(rename_all = "camelCase")]
    ToolCallCompleted {
        #[schemars(flatten)]
        common: Common,
        /// The call.
        call_id: String,
        /// The tool.
        tool_name: String,
        #[schemars(flatten)]
        end: ToolEndFields,
    },
    /// Tokens, always as an increment.
    #[schemars(rename_all = "camelCase")]
    UsageDelta {
        #[schemars(flatten)]
        common: Common,
        /// Input tokens not read from the cache.
        delta_input: u64,
        /// Output tokens.
        delta_output: u64,
        /// Input tokens read from the cache.
        #[schemars(default)]
        delta_cache_read: Skip<u64>,
        /// Input tokens written to the cache.
        #[schemars(default)]
        delta_cache_write: Skip<u64>,
        /// The part of `deltaCacheWrite` written to a one-hour cache, when
        /// the source says.
        #[schemars(default, rename = "deltaCacheWrite1h")]
        delta_cache_write_1h: Skip<u64>,
        /// The part of `deltaOutput` spent reasoning, when the source
        /// counts it apart.
        #[schemars(default)]
        delta_reasoning: Skip<u64>,
        /// `true` when the source lacked an output count this increment
        /// stands for (`deltaOutput` then counts none of it).
        #[schemars(default)]
        output_incomplete: Skip<bool>,
    },
    /// Context summarisation, or a snapshot of a plan or todo list.
    Summary {
        #[schemars(flatten)]
        common: Common,
        /// Which.
        phase: PhaseObj,
        /// The summary or the snapshot.
        #[schemars(default)]
        text: Skip<String>,
    },
    /// One model turn ended.
    TurnEnded {
        #[schemars(flatten)]
        common: Common,
        /// What the source reported for the turn.
        #[schemars(default)]
        usage: Skip<UsageObj>,
    },
    /// The session's end as the agent reported it.
    #[schemars(rename_all = "camelCase")]
    Result {
        #[schemars(flatten)]
        common: Common,
        /// The session succeeded.
        ok: bool,
        /// The final answer.
        #[schemars(default)]
        text: Skip<String>,
        /// How long the session took.
        #[schemars(default)]
        duration_ms: Skip<u64>,
        /// The session's totals.
        #[schemars(default)]
        usage: Skip<UsageObj>,
        /// What the session cost, in US dollars.
        #[schemars(default)]
        cost_usd: Skip<f64>,
        /// Why it failed.
        #[schemars(default)]
        error: Skip<String>,
    },
    /// An error the agent reported, or an input line that was not JSON.
    Error {
        #[schemars(flatten)]
        common: Common,
        /// The message.
        message: String,
        /// The error ends the session as failed.
        fatal: bool,
        /// Where it came from (`stdout` for a line that was not JSON, …).
        #[schemars(default)]
        source: Skip<String>,
    },
    /// Valid JSON no rule of the reader understood, kept unchanged.
    Unknown {
        #[schemars(flatten)]
        common: Common,
        /// The record.
        #[schemars(schema_with = "any_json")]
        raw: Value,
    },
    /// `--coalesce`: a whole assistant message.
    AssistantMessage {
        #[schemars(flatten)]
        common: Common,
        /// The message.
        text: String,
    },
    /// `--coalesce`: a whole thinking phase.
    #[schemars(rename_all = "camelCase")]
    Thinking {
        #[schemars(flatten)]
        common: Common,
        /// The thinking.
        text: String,
        /// How long it took.
        #[schemars(default)]
        duration_ms: Skip<u64>,
    },
    /// `--coalesce`: a whole tool call.
    ToolCall {
        #[schemars(flatten)]
        common: Common,
        #[schemars(flatten)]
        start: ToolStartFields,
        #[schemars(flatten)]
        end: ToolEndFields,
    },
    /// Something on the user's side that is not a prompt (it begins no turn).
    UserEvent {
        #[schemars(flatten)]
        common: Common,
        /// What it is.
        what: UserEventWhat,
        /// The command line, the command's output, or the agent's note.
        text: String,
    },
}

/// What a `user_event` is.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
enum UserEventWhat {
    /// A command the user ran in the agent's interface (`/clear`).
    Command,
    /// What a local command printed.
    CommandOutput,
    /// The user interrupted the agent.
    Interrupt,
    /// Text the agent or a hook put on the user's side, not typed by the user.
    Context,
}

// --------------------------------------------------------------- documents

/// A session as one response with its documents.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct ChatResponse {
    /// `chat_<session id>`, or `--id`.
    id: String,
    /// The session id.
    conversation_id: String,
    /// The model, or `--model`.
    model: String,
    /// The agent's mode (`agent`, …).
    mode: String,
    /// When the session started.
    #[schemars(schema_with = "date_time")]
    created: String,
    /// How the session ended.
    status: StatusObj,
    /// What the session produced, in order.
    documents: Vec<Document>,
    /// The session's token totals, `null` when unknown.
    usage: Nullable<DocUsage>,
    /// About the session.
    metadata: ResponseMeta,
}

/// How a session ended.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum StatusObj {
    Completed,
    Error,
}

/// Token totals.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct DocUsage {
    /// Input tokens.
    prompt_tokens: u64,
    /// Output tokens.
    completion_tokens: u64,
    /// Their sum.
    total_tokens: u64,
    /// `true` when some output count was not in the source: the counts are
    /// then lower bounds, and the output count unknown when it is 0.
    #[schemars(default)]
    completion_tokens_incomplete: Skip<bool>,
}

/// About the session.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct ResponseMeta {
    /// How long the session took, `null` when unknown.
    #[schemars(rename = "duration_ms")]
    duration_ms: Nullable<u64>,
    /// How many tool calls it made.
    tool_call_count: u64,
    /// How many model turns it had.
    turn_count: u64,
    /// The version of this schema the value follows.
    #[schemars(schema_with = "version")]
    schema_version: u32,
    /// A sub-agent's session: the conversation that spawned it.
    #[schemars(default)]
    parent_conversation_id: Skip<String>,
    /// A sub-agent's session: the tool call that spawned it, when known.
    #[schemars(default)]
    parent_tool_call_id: Skip<String>,
    /// A session that began as a copy of another (a fork): that conversation.
    #[schemars(default)]
    forked_from: Skip<String>,
}

/// One document: `id`, `type`, `sequence`, `content`, `metadata`.
#[derive(JsonSchema)]
#[schemars(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum Document {
    /// Assistant prose, in Markdown.
    Text {
        #[schemars(flatten)]
        head: DocHead,
        /// The text.
        content: String,
        /// Its format.
        metadata: TextMeta,
    },
    /// The model's thinking (with `--thinking`).
    Thinking {
        #[schemars(flatten)]
        head: DocHead,
        /// The thinking.
        content: String,
        /// How long it took.
        metadata: ThinkingMeta,
    },
    /// A fenced code block of the answer.
    CodeBlock {
        #[schemars(flatten)]
        head: DocHead,
        /// The code.
        content: String,
        /// Its language.
        metadata: CodeBlockMeta,
    },
    /// A code block that cites lines of a file.
    CodeReference {
        #[schemars(flatten)]
        head: DocHead,
        /// The cited code.
        content: String,
        /// The file and lines.
        metadata: CodeReferenceMeta,
    },
    /// A file created, edited, moved or deleted.
    FileEdit {
        #[schemars(flatten)]
        head: DocHead,
        /// The new text, when the call carried it.
        content: Nullable<String>,
        /// What changed.
        metadata: FileEditMeta,
    },
    /// A shell command.
    TerminalCommand {
        #[schemars(flatten)]
        head: DocHead,
        /// Always `null`: the output is in the metadata.
        content: Nullable<String>,
        /// The command and its outcome.
        metadata: TerminalMeta,
    },
    /// A todo list as it stands.
    TodoUpdate {
        #[schemars(flatten)]
        head: DocHead,
        /// Always `null`.
        content: Nullable<String>,
        /// The list.
        metadata: TodoMeta,
    },
    /// A plan.
    Plan {
        #[schemars(flatten)]
        head: DocHead,
        /// The plan, in Markdown.
        content: Nullable<String>,
        /// Its title, overview and steps.
        metadata: PlanMeta,
    },
    /// Questions the agent asks.
    Clarification {
        #[schemars(flatten)]
        head: DocHead,
        /// The line introducing them.
        content: Nullable<String>,
        /// The questions.
        metadata: ClarificationMeta,
    },
    /// Any other tool call.
    ToolCall {
        #[schemars(flatten)]
        head: DocHead,
        /// Always `null`.
        content: Nullable<String>,
        /// The call.
        metadata: ToolCallMeta,
    },
    /// An error: the agent's, a failed tool call, or a stream that ended early.
    Error {
        #[schemars(flatten)]
        head: DocHead,
        /// The message.
        content: String,
        /// Where it came from.
        metadata: ErrorMeta,
    },
}

/// `id` and `sequence`.
#[derive(JsonSchema)]
struct DocHead {
    /// `doc_` and the sequence number, three digits at least.
    #[schemars(regex(pattern = r"^doc_[0-9]{3,}$"))]
    id: String,
    /// The document's 1-based position in the response.
    #[schemars(range(min = 1))]
    sequence: u64,
}

/// `{"format": "markdown"}`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct TextMeta {
    /// Always `markdown`.
    format: MarkdownObj,
}

/// The one format text has.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum MarkdownObj {
    Markdown,
}

/// How long the thinking took.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ThinkingMeta {
    /// Milliseconds; `null` when unknown (left out while it streams).
    duration_ms: Nullable<u64>,
}

/// A code block's language.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct CodeBlockMeta {
    /// The fence's info string (may be empty).
    language: String,
    /// Always `example`.
    purpose: String,
}

/// The lines a code block cites.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct CodeReferenceMeta {
    /// The file.
    file_path: String,
    /// The first line.
    start_line: u64,
    /// The last line.
    end_line: u64,
    /// The language of the file's name (may be empty).
    language: String,
}

/// What a file edit changed.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct FileEditMeta {
    /// The file, `null` when the call named none.
    file_path: Nullable<String>,
    /// `create`, `edit`, `delete` or `rename`.
    operation: OperationObj,
    /// The language of the file's name (may be empty).
    language: String,
    /// A move or rename: the destination.
    #[schemars(default)]
    new_path: Skip<String>,
    /// The text replaced and replacing it, `null` without both .
    diff: Nullable<DiffObj>,
    /// A unified diff, `null` when the source gave none .
    patch: Nullable<String>,
}

/// A file operation.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum OperationObj {
    Create,
    Edit,
    Delete,
    Rename,
}

/// The text an edit replaced and where.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct DiffObj {
    /// The text replaced.
    old_string: String,
    /// The text replacing it.
    new_string: String,
    /// Its first line in the old file, `null` when the patch does not say.
    start_line: Nullable<u64>,
    /// Its last line, `null` when the patch does not say.
    end_line: Nullable<u64>,
}

/// A shell command and its outcome.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct TerminalMeta {
    /// The command line.
    command: Nullable<String>,
    /// Where it ran.
    working_directory: Nullable<String>,
    /// The exit status .
    exit_code: Nullable<i64>,
    /// The output .
    output: Nullable<String>,
    /// How long it took .
    #[schemars(rename = "duration_ms")]
    duration_ms: Nullable<u64>,
}

/// A todo list.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct TodoMeta {
    /// Its items.
    todos: Vec<DocTodo>,
}

/// A todo item; its id is the source's, else its 1-based position.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct DocTodo {
    /// The id.
    id: String,
    /// What is to be done.
    content: String,
    /// Its status.
    status: String,
}

/// A plan's parts.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct PlanMeta {
    /// The title.
    title: Nullable<String>,
    /// A short overview.
    overview: Nullable<String>,
    /// Its steps.
    todos: Vec<DocTodo>,
    /// Always `markdown`.
    format: MarkdownObj,
}

/// Questions.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ClarificationMeta {
    /// The questions.
    questions: Vec<DocQuestion>,
}

/// A question; ids are the source's, else `q1`, `q2`, … and `1`, `2`, ….
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct DocQuestion {
    /// The id.
    id: String,
    /// The question.
    text: String,
    /// The answers offered.
    options: Vec<DocChoice>,
}

/// An answer offered.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct DocChoice {
    /// The id.
    id: String,
    /// The answer.
    label: String,
}

/// Any other tool call.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct ToolCallMeta {
    /// The tool.
    tool_name: String,
    /// The call's id.
    tool_call_id: String,
    /// The source's arguments .
    #[schemars(schema_with = "any_json")]
    arguments: Value,
    /// `{status, data}` .
    result: ToolResultObj,
    /// How long it took .
    #[schemars(rename = "duration_ms")]
    duration_ms: Nullable<u64>,
}

/// A tool call's result.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct ToolResultObj {
    /// `success`, `error`, or `unknown` when the source did not record the outcome.
    status: ResultStatusObj,
    /// The source's result payload, else the error message, else `null`.
    #[schemars(schema_with = "any_json")]
    data: Value,
}

/// A tool call's outcome.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum ResultStatusObj {
    Success,
    Error,
    Unknown,
}

/// Where an error came from.
#[derive(JsonSchema)]
#[schemars(rename_all = "camelCase", deny_unknown_fields)]
struct ErrorMeta {
    /// `AGENT_ERROR`, `TOOL_ERROR`, `INCOMPLETE_STREAM`, ….
    error_code: String,
    /// The agent, the tool's name, `result`, or `cstream`.
    source: String,
    /// More about it.
    details: String,
}

// -------------------------------------------------------------------- rows

/// A date and time in RFC 3339 (UTC, milliseconds), or `null`.
fn nullable_date_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["string", "null"], "format": "date-time" })
}

/// An event type's wire name.
fn event_type(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": crate::event::TYPE_NAMES })
}

/// Who speaks, or `null` for an event outside the conversation.
fn row_role(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "enum": ["user", "assistant", "tool", null] })
}

/// One event as a flat row; docs/formats.md#rows says which columns each
/// event type fills.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
struct RowLine {
    /// The session's id (`session-N` when the source gave none).
    session: String,
    /// The session's 1-based position in the run (two sessions may share an id).
    session_n: u64,
    /// The event's 1-based position in its session.
    seq: u64,
    /// When the source dated the event.
    #[schemars(schema_with = "nullable_date_time")]
    time: Nullable<String>,
    /// The event type (docs/events.md).
    #[schemars(rename = "type", schema_with = "event_type")]
    kind: String,
    /// `user`, `assistant` or `tool`; `null` outside the conversation.
    #[schemars(schema_with = "row_role")]
    role: Nullable<String>,
    /// The event's text: prompt, answer or thinking piece, output, the call's
    /// key argument on a start, the result's text, an error's message.
    text: Nullable<String>,
    /// The tool's normalized name.
    tool: Nullable<String>,
    /// The tool call's id.
    call_id: Nullable<String>,
    /// The source's payload as JSON text: a start's arguments, a
    /// completion's result, a progress snapshot, an unknown record.
    data: Nullable<String>,
    /// A completion's or a result's success.
    ok: Nullable<bool>,
    /// A completion that failed (an error or a non-zero exit; a cancelled
    /// call and one whose outcome was not recorded did not).
    failed: Nullable<bool>,
    /// A shell call's exit code.
    exit_code: Nullable<i64>,
    /// How long a call, a thinking phase or the session took.
    duration_ms: Nullable<u64>,
    /// Why a call or the session failed.
    error: Nullable<String>,
    /// An `error` event that ends the session.
    fatal: Nullable<bool>,
    /// `usage_delta` only: input tokens, cache included.
    tokens_in: Nullable<u64>,
    /// `usage_delta` only: output tokens; `null` when the source lacked them.
    tokens_out: Nullable<u64>,
    /// `usage_delta` only: input tokens read from the cache.
    cache_read: Nullable<u64>,
    /// `usage_delta` only: input tokens written to the cache.
    cache_write: Nullable<u64>,
    /// `usage_delta` only: the part of the output tokens spent reasoning,
    /// when the source counts it apart.
    reasoning: Nullable<u64>,
    /// `usage_delta` only: some output count was not in the source.
    output_incomplete: Nullable<bool>,
    /// `result` only: the agent's own cost in US dollars.
    cost_usd: Nullable<f64>,
    /// `session_started` only: the model.
    model: Nullable<String>,
    /// `session_started` only: the dialect read.
    dialect: Nullable<String>,
    /// The kind within the type: a user event's kind, a summary's phase, a
    /// shell stream, an error's source, `cancelled` or `outcome_unknown` on
    /// a completion, the parent session on `session_started`.
    detail: Nullable<String>,
}
