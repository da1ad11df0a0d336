//! Helpers every dialect reader shares: the tool-name vocabulary, the
//! normalized tool fields, ISO timestamps, shell output joining, the
//! clean-up of agent-decorated output (markdown fences, `<persisted-output>`
//! stubs), the message of an error value, small unified diffs and todo-list
//! rendering.
//!
//! Keeping these in one place is what makes `toolName`, `command`, `path`…
//! mean the same thing whichever agent wrote the stream (docs/events.md#tool-calls).

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::event::{
    Choice, Question, Str, Todo, ToolDetails, ToolStart, Usage, normalize_todo_status,
};
use crate::json::{Members, raw_as_i64, raw_as_str};

// ------------------------------------------------------------ tool names

/// Map an agent's tool name onto the closed vocabulary (docs/events.md#tool-names); anything
/// else becomes snake_case. Case, `_` and `-` are ignored when matching, so
/// `Bash`, `run_shell_command` and `shellToolCall`'s `shell` all land on
/// `shell`. The table in docs/events.md (Tool names) lists every name.
pub fn normalize_tool_name(name: &str) -> String {
    let lower: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-' && *c != ' ')
        .flat_map(char::to_lowercase)
        .collect();
    let mapped = match lower.as_str() {
        // cursor-agent / Cursor SDK, Claude Code, Codex, Gemini CLI, ACP kinds.
        "shell" | "bash" | "runterminalcmd" | "terminal" | "runshellcommand" | "shellcommand"
        | "commandexecution" | "execute" | "exec" | "localshell" | "powershell" | "runcommand" => {
            "shell"
        }
        "read" | "readfile" | "readmanyfiles" | "view" | "viewfile" => "read",
        "write" | "writefile" | "createfile" | "writetofile" => "write",
        "edit"
        | "multiedit"
        | "strreplace"
        | "searchreplace"
        | "applypatch"
        | "editfile"
        | "replace"
        | "filechange"
        | "patch"
        | "replacefilecontent"
        | "multireplacefilecontent" => "edit",
        "delete" | "deletefile" => "delete",
        "ls" | "listdir" | "listdirectory" => "ls",
        "grep" | "ripgrep" | "searchfilecontent" | "grepsearch" => "grep",
        "glob" | "globfilesearch" | "filesearch" | "findbyname" => "glob",
        "semsearch" | "semanticsearch" | "codebasesearch" | "search" => "search",
        "todo" | "todowrite" | "updatetodos" | "todos" | "writetodos" | "todolist" => "todo",
        "createplan" | "plan" | "exitplanmode" | "updateplan" => "plan",
        "askquestion" | "askuserquestion" | "question" | "requestuserinput" => "question",
        "webfetch" | "fetch" | "readurlcontent" => "web_fetch",
        "websearch" | "googlewebsearch" | "searchweb" => "web_search",
        "mcp" | "callmcptool" | "mcptoolcall" => "mcp",
        "task" | "subagent" | "agent" | "collabtoolcall" | "invokesubagent" => "task",
        "readlints" | "lints" => "lints",
        "editnotebook" | "notebook" | "notebookedit" => "notebook",
        "generateimage" | "image" => "image",
        _ => return snake_case(name),
    };
    mapped.to_owned()
}

/// `getMcpTools` → `get_mcp_tools`; `Foo-Bar` → `foo_bar`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            prev_lower = false;
        } else if c == '-' || c == ' ' || c == '.' {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// Claude Code names MCP tools `mcp__<server>__<tool>`: the server and tool.
pub fn split_mcp_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    Some((server, tool))
}

/// Codex's newer rollouts split an MCP tool's qualified name into a
/// `namespace` and a `name`, differently over time: the whole qualified
/// name in both (`mcp__codex_apps__gmail` + `mcp__codex_apps__gmail_get_…`),
/// a namespace ending in `__` (`mcp__supabase_bot__` + `list_tables`),
/// `mcp__<server>` + `<tool>` (the `__` between them left out), or a
/// connector of the apps server, `mcp__<server>__<connector>` + the rest of
/// the tool's name (`mcp__codex_apps__github` + `_fetch_pr`: server
/// `codex_apps`, tool `github_fetch_pr`, as its `mcp_tool_call_end` names
/// them). The qualified name is rebuilt and split as [`split_mcp_name`].
pub fn split_mcp_namespace(namespace: &str, name: &str) -> Option<(String, String)> {
    if !namespace.starts_with("mcp__") || name.is_empty() {
        return None;
    }
    let full = if name.starts_with(namespace) {
        name.to_owned()
    } else if namespace.ends_with("__") || name.starts_with('_') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}__{name}")
    };
    let (server, tool) = split_mcp_name(&full)?;
    (!server.is_empty() && !tool.is_empty()).then(|| (server.to_owned(), tool.to_owned()))
}

// ------------------------------------------------------ normalized fields

fn first_str<'a>(a: &Members<'a>, keys: &[&str]) -> Option<Str<'a>> {
    keys.iter().find_map(|k| a.nonempty_str(k))
}

/// Fill the normalized start fields (`command`, `cwd`, `path`, …) from the
/// tool's argument object. The key lists cover every dialect's spelling.
pub fn fill_start<'a>(t: &mut ToolStart<'a>, a: &Members<'a>) {
    t.command = first_str(a, &["command", "cmd"]).or_else(|| command_array(a));
    t.cwd = first_str(
        a,
        &["workingDirectory", "working_directory", "cwd", "workdir"],
    );
    if t.tool_name == "shell" && t.cwd.is_none() {
        // Gemini's run_shell_command calls its working directory `directory`.
        t.cwd = first_str(a, &["directory", "dir_path"]);
    }
    t.path = first_str(
        a,
        &[
            "path",
            "filePath",
            "file_path",
            "absolute_path",
            "targetFile",
            "target_file",
            "notebookPath",
            "notebook_path",
            "targetDirectory",
            "dir_path",
        ],
    );
    t.pattern = first_str(a, &["pattern", "globPattern", "glob_pattern", "glob"]);
    t.url = first_str(a, &["url"]);
    t.query = first_str(a, &["query", "searchTerm", "search_term"]);
    t.description = first_str(a, &["description", "title", "explanation"]);
    if t.tool_name == "question" && t.description.is_none() {
        // AskUserQuestion: `{questions: [{question, …}]}`; the first one.
        t.description = first_str(a, &["question", "prompt"]).or_else(|| {
            let qs: Vec<&RawValue> = serde_json::from_str(a.get("questions")?.get()).ok()?;
            Members::of(qs.first()?)?.nonempty_str("question")
        });
    }
    if t.tool_name == "mcp" {
        t.mcp_server = first_str(
            a,
            &[
                "serverIdentifier",
                "providerIdentifier",
                "server",
                "serverName",
            ],
        );
        t.mcp_tool = first_str(a, &["toolName", "tool"]);
        if t.mcp_tool.is_none() {
            t.mcp_tool = first_str(a, &["name"]);
        }
    }
    let d = details(&t.tool_name, a);
    if !d.is_empty() {
        t.details = Some(Box::new(d));
    }
}

/// A command given as an argv array (`["bash", "-lc", "ls"]`), joined.
fn command_array<'a>(a: &Members<'a>) -> Option<Str<'a>> {
    let raw = a.get("command").or_else(|| a.get("cmd"))?;
    let parts: Vec<Cow<'_, str>> = serde_json::from_str::<Vec<crate::json::S<'_>>>(raw.get())
        .ok()?
        .into_iter()
        .map(|s| s.0)
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(Cow::Owned(join_argv(&parts)))
}

/// Join an argv for display, quoting the pieces a shell would split.
pub fn join_argv<S: AsRef<str>>(parts: &[S]) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        let p = p.as_ref();
        if i > 0 {
            out.push(' ');
        }
        let plain = !p.is_empty()
            && p.chars()
                .all(|c| c.is_alphanumeric() || "-_./=:,+@%^".contains(c));
        if plain {
            out.push_str(p);
        } else {
            out.push('\'');
            out.push_str(&p.replace('\'', r"'\''"));
            out.push('\'');
        }
    }
    out
}

/// The normalized details of edit, write, todo, plan and question calls.
fn details<'a>(tool: &str, a: &Members<'a>) -> ToolDetails<'a> {
    let mut d = ToolDetails::default();
    // A string member, empty or not (an edit may replace text by nothing).
    let any_str = |keys: &[&str]| keys.iter().find_map(|k| a.str(k));
    match tool {
        "edit" | "write" | "delete" => {
            d.old_string = any_str(&["old_string", "oldString", "old_str"]);
            d.new_string = any_str(&["new_string", "newString", "new_str"]);
            // `streamContent` is the whole new file (the call is a write).
            d.file_content = any_str(&["fileText", "streamContent", "contents", "file_text"]);
            d.new_path = first_str(a, &["newPath", "new_path", "destination"]);
        }
        "todo" => d.todos = a.get("todos").map(todos),
        "plan" => {
            d.plan = any_str(&["plan", "content"]);
            d.title = first_str(a, &["name", "title"]);
            d.overview = first_str(a, &["overview"]);
            d.todos = a.get("todos").map(todos);
        }
        "question" => {
            d.title = first_str(a, &["title"]);
            d.questions = a.get("questions").map(questions);
        }
        _ => {}
    }
    d
}

/// A todo list: `[{id, content, status, …}]`; entries that are not objects
/// are skipped.
fn todos(raw: &RawValue) -> Vec<Todo<'_>> {
    let items: Vec<&RawValue> = serde_json::from_str(raw.get()).unwrap_or_default();
    items
        .into_iter()
        .filter_map(Members::of)
        .map(|m| Todo {
            id: m.nonempty_str("id").or_else(|| {
                m.get("id")
                    .and_then(raw_as_i64)
                    .map(|n| n.to_string().into())
            }),
            content: first_str(&m, &["content", "text", "title", "description"])
                .unwrap_or_default(),
            status: normalize_todo_status(&m.str("status").unwrap_or_default()),
        })
        .collect()
}

/// Questions: `[{id, prompt, options: [{id, label}]}]` (also `question` /
/// `text` for the prompt).
fn questions(raw: &RawValue) -> Vec<Question<'_>> {
    let items: Vec<&RawValue> = serde_json::from_str(raw.get()).unwrap_or_default();
    items
        .into_iter()
        .filter_map(Members::of)
        .map(|m| {
            let options: Vec<&RawValue> = m
                .get("options")
                .and_then(|o| serde_json::from_str(o.get()).ok())
                .unwrap_or_default();
            Question {
                id: m.nonempty_str("id"),
                text: first_str(&m, &["prompt", "question", "text", "title"]).unwrap_or_default(),
                options: options
                    .into_iter()
                    .filter_map(|o| match raw_as_str(o) {
                        // A bare string is its own label.
                        Some(label) => Some(Choice { id: None, label }),
                        None => Members::of(o).map(|c| Choice {
                            id: c.nonempty_str("id"),
                            label: first_str(&c, &["label", "text", "title"]).unwrap_or_default(),
                        }),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// [`fill_start`] for argument members that borrow from a temporary value
/// (arguments parsed out of a JSON string).
pub fn fill_start_owned(t: &mut ToolStart<'_>, a: &Members<'_>) {
    let mut tmp = ToolStart::new(
        Cow::Borrowed(""),
        Cow::Owned(t.tool_name.to_string()),
        crate::event::json_null(),
    );
    fill_start(&mut tmp, a);
    let own = |s: Option<Str<'_>>| s.map(|s| Cow::Owned(s.into_owned()));
    t.command = own(tmp.command);
    t.cwd = own(tmp.cwd);
    t.path = own(tmp.path);
    t.pattern = own(tmp.pattern);
    t.url = own(tmp.url);
    t.query = own(tmp.query);
    t.description = own(tmp.description);
    t.mcp_server = own(tmp.mcp_server);
    t.mcp_tool = own(tmp.mcp_tool);
    t.details = tmp.details.map(|d| Box::new(d.into_owned()));
}

/// Texts joined with a line break between each two; one text alone stays
/// as it is (borrowed when it was), none gives `None`.
pub fn join_lines<'a>(texts: impl IntoIterator<Item = Str<'a>>) -> Option<Str<'a>> {
    let mut out: Option<Str<'a>> = None;
    for t in texts {
        match &mut out {
            None => out = Some(t),
            Some(s) => {
                let s = s.to_mut();
                s.push('\n');
                s.push_str(&t);
            }
        }
    }
    out
}

/// A shell call's output once: stdout, then stderr on its own line.
pub fn join_output<'a>(out: Option<Str<'a>>, err: Option<Str<'a>>) -> Option<Str<'a>> {
    let err = err.filter(|e| !e.is_empty());
    match (out, err) {
        (o, None) => o,
        (None, Some(e)) => Some(e),
        (Some(o), Some(e)) if o.is_empty() => Some(e),
        (Some(o), Some(e)) => {
            let mut s = o.into_owned();
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&e);
            Some(Cow::Owned(s))
        }
    }
}

/// The keys that carry a shell call's output in the dialects' result
/// objects (read once into `output`, dropped from `result`).
pub const OUTPUT_KEYS: &[&str] = &[
    "stdout",
    "stderr",
    "interleavedOutput",
    "aggregated_output",
    "formatted_output",
    "output",
];

/// A result object without its output keys (the output is in `output`).
pub fn without_output(raw: &RawValue) -> Option<Box<RawValue>> {
    let m = Members::of(raw)?;
    if !m.0.iter().any(|(k, _)| OUTPUT_KEYS.contains(&k.as_ref())) {
        return None;
    }
    Some(m.to_json_without(OUTPUT_KEYS))
}

// ------------------------------------------------------------- errors

/// The message of an error value, however an agent wraps it: a string, an
/// object's `message`, the `message` of its nested `error` (the Anthropic and
/// OpenAI APIs nest it so), or else its `type` (the kind of error, when
/// nothing says more). An empty string says nothing: `None`, so the caller's
/// own wording (or the next source it knows) takes over.
pub(crate) fn error_text(raw: &RawValue) -> Option<Str<'_>> {
    if let Some(s) = raw_as_str(raw) {
        return Some(s).filter(|s| !s.is_empty());
    }
    let m = Members::of(raw)?;
    m.nonempty_str("message")
        .or_else(|| m.obj("error").and_then(|e| e.nonempty_str("message")))
        .or_else(|| m.nonempty_str("type"))
}

// ------------------------------------------------------------- usage

/// Anthropic-style usage (`input_tokens` excludes cache reads and writes):
/// the normalized input adds them back (docs/events.md#usage).
pub fn anthropic_usage(m: &Members<'_>) -> Option<Usage> {
    let get = |k: &str| m.get(k);
    AnthropicCounts {
        input_tokens: get("input_tokens"),
        output_tokens: get("output_tokens"),
        cache_read_input_tokens: get("cache_read_input_tokens"),
        cache_creation_input_tokens: get("cache_creation_input_tokens"),
        // The writes by lifetime (Claude Code 2.1 writes for an hour):
        // only the one-hour part is kept, the rest being five-minute
        // writes.
        cache_creation: m.obj("cache_creation").map(|c| CacheCreation {
            ephemeral_1h_input_tokens: c.get("ephemeral_1h_input_tokens"),
        }),
    }
    .usage()
}

/// Anthropic usage from its object read as [`AnthropicCounts`] (`None`:
/// that read failed) or else, only then, as its `members`.
pub fn anthropic_usage_read<'a>(
    counts: Option<AnthropicCounts<'a>>,
    members: impl FnOnce() -> Option<Members<'a>>,
) -> Option<Usage> {
    match counts {
        Some(c) => c.usage(),
        None => members().as_ref().and_then(anthropic_usage),
    }
}

/// The members of an Anthropic usage object that [`anthropic_usage`]
/// reads, read as a struct: one match per member instead of a search of
/// the members for each name, and the nested `cache_creation` without
/// collecting its members. An object that names a member twice fails
/// this read (serde's derive refuses duplicates), as does a
/// `cache_creation` that is not an object or null: the caller then reads
/// [`Members`] (the first of a name counting), so the figures are the same
/// either way.
#[derive(serde::Deserialize)]
pub struct AnthropicCounts<'a> {
    #[serde(borrow, default)]
    input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cache_read_input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cache_creation_input_tokens: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cache_creation: Option<CacheCreation<'a>>,
}

#[derive(serde::Deserialize)]
struct CacheCreation<'a> {
    #[serde(borrow, default)]
    ephemeral_1h_input_tokens: Option<&'a RawValue>,
}

impl AnthropicCounts<'_> {
    /// The usage these counts make ([`anthropic_usage`]).
    pub fn usage(&self) -> Option<Usage> {
        let int = |v: Option<&RawValue>| v.and_then(raw_as_i64).and_then(|v| u64::try_from(v).ok());
        let input = int(self.input_tokens);
        let output = int(self.output_tokens);
        if input.is_none() && output.is_none() {
            return None;
        }
        let write_1h = self
            .cache_creation
            .as_ref()
            .and_then(|c| int(c.ephemeral_1h_input_tokens));
        Some(
            Usage::cache_apart(
                input.unwrap_or(0),
                output.unwrap_or(0),
                int(self.cache_read_input_tokens),
                int(self.cache_creation_input_tokens),
            )
            .with_cache_write_1h(write_1h),
        )
    }
}

/// `{input_tokens, cached_input_tokens, output_tokens, …}`: OpenAI's
/// convention, where `input_tokens` already includes the cached part.
pub(crate) fn openai_usage(m: &Members<'_>) -> Option<Usage> {
    let get = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    Some(Usage {
        input: get("input_tokens")?,
        output: get("output_tokens")?,
        // Some Codex builds spell it `cache_read_input_tokens`.
        cache_read: get("cached_input_tokens").or_else(|| get("cache_read_input_tokens")),
        cache_write: get("cache_write_input_tokens"),
        // Part of `output_tokens` (Codex's `total_tokens` is input plus
        // output, the reasoning not added again).
        reasoning: get("reasoning_output_tokens"),
        ..Usage::default()
    })
}

/// Cursor-style camelCase usage (`inputTokens` excludes the cache counts:
/// the SDK's own `totalTokens` is the sum of all four).
pub fn camel_usage(m: &Members<'_>) -> Option<Usage> {
    let get = |k: &str| m.int(k).and_then(|v| u64::try_from(v).ok());
    let input = get("inputTokens")?;
    let output = get("outputTokens")?;
    let cache_read = get("cacheReadTokens");
    let cache_write = get("cacheWriteTokens");
    // Carried as the part of `outputTokens` spent reasoning: the SDK's
    // `totalTokens` is the four counts above, the reasoning not added.
    Some(
        Usage::cache_apart(input, output, cache_read, cache_write)
            .with_reasoning(get("reasoningTokens")),
    )
}

// ------------------------------------------------- decorated tool output

/// The text inside one enclosing markdown fence (```` ```console\n…\n``` ````),
/// as claude-agent-acp wraps shell output; any other text unchanged.
pub fn strip_fence(s: &str) -> &str {
    let t = s.trim_start_matches([' ', '\t']);
    let Some(rest) = t.strip_prefix("```") else {
        return s;
    };
    let Some(nl) = rest.find('\n') else {
        return s;
    };
    if rest[..nl].contains('`') {
        return s;
    }
    let body = &rest[nl + 1..];
    let end = body.trim_end_matches(['\n', '\r', ' ', '\t']);
    let Some(inner) = end.strip_suffix("```") else {
        return s;
    };
    // The newline before the closing fence belongs to the fence.
    let inner = inner.trim_end_matches([' ', '\t']);
    inner.strip_suffix('\n').unwrap_or(inner)
}

const PERSISTED_OPEN: &str = "<persisted-output>";
const PERSISTED_CLOSE: &str = "</persisted-output>";
/// What replaces the `<persisted-output>` tags: the agent kept only a
/// preview inline and saved the whole output to a file.
pub const PERSISTED_NOTE: &str = "[output persisted by the agent; preview only] ";

/// Claude Code's stub for oversized output, without its XML-ish tags and
/// with a note saying so; `None` when `s` is not such a stub.
pub fn strip_persisted(s: &str) -> Option<String> {
    let start = s.find(PERSISTED_OPEN)?;
    let after = &s[start + PERSISTED_OPEN.len()..];
    let (inner, rest) = match after.find(PERSISTED_CLOSE) {
        Some(end) => (&after[..end], &after[end + PERSISTED_CLOSE.len()..]),
        None => (after, ""),
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..start]);
    out.push_str(PERSISTED_NOTE);
    out.push_str(
        inner
            .trim_start_matches(['\n', '\r'])
            .trim_end_matches(['\n', '\r']),
    );
    out.push_str(rest.trim_start_matches(['\n', '\r']));
    Some(out)
}

/// Tool output as the agent decorated it, made plain: one enclosing fence
/// removed and a persisted-output stub turned into a note.
pub fn clean_output(s: &str) -> Cow<'_, str> {
    let s = strip_fence(s);
    match strip_persisted(s) {
        Some(p) => Cow::Owned(p),
        None => Cow::Borrowed(s),
    }
}

// ------------------------------------------------------------- diffs

/// A unified diff of `old` → `new` for `path`: the common leading and
/// trailing lines are trimmed and the rest is one hunk with up to three
/// lines of context. Linear in the input; not a minimal diff, but a valid
/// one. Returns the patch and the counts of added and removed lines.
pub fn unified_diff(path: &str, old: &str, new: &str) -> (String, u64, u64) {
    let a: Vec<&str> = if old.is_empty() {
        Vec::new()
    } else {
        old.split_inclusive('\n').collect()
    };
    let b: Vec<&str> = if new.is_empty() {
        Vec::new()
    } else {
        new.split_inclusive('\n').collect()
    };
    let mut pre = 0;
    while pre < a.len() && pre < b.len() && a[pre] == b[pre] {
        pre += 1;
    }
    let mut suf = 0;
    while suf < a.len() - pre && suf < b.len() - pre && a[a.len() - 1 - suf] == b[b.len() - 1 - suf]
    {
        suf += 1;
    }
    let ctx_before = pre.min(3);
    let ctx_after = suf.min(3);
    let (a_start, a_end) = (pre - ctx_before, a.len() - suf + ctx_after);
    let (b_start, b_end) = (pre - ctx_before, b.len() - suf + ctx_after);
    let mut p = String::with_capacity(old.len() + new.len() + 64);
    p.push_str("--- a/");
    p.push_str(path.trim_start_matches('/'));
    p.push_str("\n+++ b/");
    p.push_str(path.trim_start_matches('/'));
    p.push('\n');
    let range = |start: usize, len: usize| {
        if len == 0 {
            format!("{start},0")
        } else if len == 1 {
            format!("{}", start + 1)
        } else {
            format!("{},{len}", start + 1)
        }
    };
    p.push_str(&format!(
        "@@ -{} +{} @@\n",
        range(a_start, a_end - a_start),
        range(b_start, b_end - b_start)
    ));
    let line = |p: &mut String, sign: char, l: &str| {
        p.push(sign);
        p.push_str(l);
        if !l.ends_with('\n') {
            p.push_str("\n\\ No newline at end of file\n");
        }
    };
    for l in &a[a_start..pre] {
        line(&mut p, ' ', l);
    }
    for l in &a[pre..a.len() - suf] {
        line(&mut p, '-', l);
    }
    for l in &b[pre..b.len() - suf] {
        line(&mut p, '+', l);
    }
    for l in &a[a.len() - suf..a_end] {
        line(&mut p, ' ', l);
    }
    let removed = (a.len() - suf - pre) as u64;
    let added = (b.len() - suf - pre) as u64;
    (p, added, removed)
}

/// Added and removed line counts of a unified diff.
pub fn count_patch_lines(patch: &str) -> (u64, u64) {
    let (mut add, mut del) = (0, 0);
    for l in patch.lines() {
        if l.starts_with("+++") || l.starts_with("---") {
            continue;
        }
        if l.starts_with('+') {
            add += 1;
        } else if l.starts_with('-') {
            del += 1;
        }
    }
    (add, del)
}

// ------------------------------------------------------------- todos

/// One line of a rendered todo list or plan: `[x] text`, `[~] text`, `[ ] text`.
pub fn todo_line(out: &mut String, status: &str, text: &str) {
    let mark = match status {
        "completed" | "done" | "true" => "[x]",
        "in_progress" | "inProgress" | "active" => "[~]",
        "cancelled" | "canceled" => "[-]",
        _ => "[ ]",
    };
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(mark);
    out.push(' ');
    out.push_str(text);
}

/// A todo list given as an array of objects, rendered one item a line.
/// `text_keys` name the item's text, `status_keys` its state (a string, or
/// a boolean meaning done).
pub fn render_todos(raw: &RawValue, text_keys: &[&str], status_keys: &[&str]) -> Option<String> {
    let items: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    let mut out = String::new();
    for it in items {
        let Some(m) = Members::of(it) else { continue };
        let text = text_keys.iter().find_map(|k| m.str(k)).unwrap_or_default();
        let status: Cow<'_, str> = status_keys
            .iter()
            .find_map(|k| {
                m.get(k).and_then(|v| match v.get() {
                    "true" => Some(Cow::Borrowed("completed")),
                    "false" => Some(Cow::Borrowed("pending")),
                    _ => raw_as_str(v),
                })
            })
            .unwrap_or(Cow::Borrowed("pending"));
        todo_line(&mut out, &status, &text);
    }
    Some(out)
}

// ------------------------------------------------------------ base64

/// Decode standard or URL-safe base64 (padding optional); `None` on any
/// other character.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b'\n' | b'\r' => continue,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

pub use crate::json::object1 as raw_object1;

// ------------------------------------------------ saved-session readers

use serde::de::{Deserialize, Deserializer, IgnoredAny};

/// A key that is there, whatever its value (`null` included, which
/// `Option` would read as absent).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Present(pub bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// The `result` a saved-session reader writes at the end of its file: the
/// file is the whole saved session (none writes a result of its own), so it
/// ends well, with the usage counted and the time from its first record to
/// its last.
pub(crate) fn file_result<'a>(
    start_ts: Option<i64>,
    last_ts: Option<i64>,
    usage: Option<crate::event::Usage>,
) -> crate::event::Event<'a> {
    let duration_ms = match (start_ts, last_ts) {
        (Some(a), Some(b)) if b >= a => u64::try_from(b - a).ok(),
        _ => None,
    };
    crate::event::Event::at(
        last_ts,
        crate::event::Kind::Result(crate::event::SessionResult {
            ok: true,
            text: None,
            duration_ms,
            usage,
            cost_usd: None,
            error: None,
        }),
    )
}

/// The `session_started` the saved-session readers write once they have
/// read their file's header fields (the reader owns them, so each is copied
/// into the event).
#[allow(clippy::too_many_arguments)] // the header fields a saved session gives, each owned by its reader
pub(crate) fn saved_session_started<'a>(
    ts: Option<i64>,
    dialect: &'static str,
    session_id: &Option<String>,
    model: &Option<String>,
    cwd: &Option<String>,
    permission_mode: &Option<String>,
    title: &Option<String>,
    parent: Option<crate::event::SessionParent<'a>>,
) -> crate::dialect::Item<'a> {
    use std::borrow::Cow;
    let owned = |v: &Option<String>| v.clone().map(Cow::Owned);
    crate::dialect::Item::Event(crate::event::Event::at(
        ts,
        crate::event::Kind::SessionStarted(crate::event::SessionStart {
            session_id: owned(session_id),
            dialect: Cow::Borrowed(dialect),
            model: owned(model),
            cwd: owned(cwd),
            permission_mode: owned(permission_mode),
            title: owned(title),
            parent,
        }),
    ))
}

/// What a saved session's file says of the session before its events (its
/// id, model, working directory, title, the time of its first record), and
/// whether its `session_started` was written: the header every
/// saved-session reader fills as it reads and writes at its first event.
#[derive(Debug, Default)]
pub(crate) struct SavedHead {
    /// The `session_started` was written.
    pub started: bool,
    pub start_ts: Option<i64>,
    pub session_id: Option<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub title: Option<String>,
}

impl SavedHead {
    /// Writes the `session_started` of `dialect` unless it was written
    /// already, and says whether it wrote it now. A reader calls this before
    /// each event it writes, not at its first record: the session so opens
    /// at its first event, carrying the header fields read up to then, and
    /// once only. `parent` is asked only when the event is written.
    pub(crate) fn open<'a>(
        &mut self,
        dialect: &'static str,
        parent: impl FnOnce() -> Option<crate::event::SessionParent<'a>>,
        out: crate::dialect::Out<'_, 'a>,
    ) -> std::io::Result<bool> {
        if std::mem::replace(&mut self.started, true) {
            return Ok(false);
        }
        out(saved_session_started(
            self.start_ts,
            dialect,
            &self.session_id,
            &self.model,
            &self.cwd,
            &None,
            &self.title,
            parent(),
        ))?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usage counts read as a struct give what the members give, and
    /// the read refuses what the members would read differently (a name
    /// given twice), so that its callers fall back to them.
    #[test]
    fn anthropic_counts_read_as_the_members_do() {
        use crate::json::Members;
        let cases = [
            r#"{"input_tokens":3,"cache_creation_input_tokens":120,"cache_read_input_tokens":4000,"cache_creation":{"ephemeral_5m_input_tokens":20,"ephemeral_1h_input_tokens":100},"output_tokens":9,"service_tier":"standard","server_tool_use":{"web_search_requests":0}}"#,
            r#"{"output_tokens":9}"#,
            r#"{"input_tokens":"12","output_tokens":null}"#,
            r#"{"input_tokens":-1,"output_tokens":2.5}"#,
            r#"{"input_tokens":1,"output_tokens":2,"cache_creation":null}"#,
            r#"{"input_tokens":1,"output_tokens":2,"cache_creation":{}}"#,
            r#"{"input_tokens":1,"output_tokens":2,"cache_creation":{"ephemeral_1h_input_tokens":"7"}}"#,
            r#"{"cache_read_input_tokens":5}"#,
            r#"{}"#,
            r#"{"input_\u0074okens":6,"output_tokens":1}"#,
        ];
        for c in cases {
            let members = Members::parse(c).expect(c);
            let counts: AnthropicCounts = serde_json::from_str(c).expect(c);
            assert_eq!(counts.usage(), anthropic_usage(&members), "{c}");
        }
        assert_eq!(
            anthropic_usage(&Members::parse(cases[0]).unwrap())
                .map(|u| (u.input, u.cache_write_1h)),
            Some((4123, Some(100)))
        );
        // Read differently by a struct: refused, the members read instead.
        for c in [
            r#"{"input_tokens":5,"input_tokens":7,"output_tokens":1}"#,
            r#"{"input_tokens":5,"output_tokens":1,"cache_creation":3}"#,
            r#"{"input_tokens":5,"output_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":1,"ephemeral_1h_input_tokens":2}}"#,
        ] {
            assert!(serde_json::from_str::<AnthropicCounts>(c).is_err(), "{c}");
            assert!(
                anthropic_usage(&Members::parse(c).unwrap()).is_some(),
                "{c}"
            );
        }
    }

    #[test]
    fn error_text_reads_every_dialects_wrapping() {
        let text = |json: &str| {
            let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
            error_text(&raw).map(Cow::into_owned)
        };
        for (json, want) in [
            (r#""plain""#, Some("plain")),
            (r#"{"message":"m","type":"t"}"#, Some("m")),
            (
                r#"{"type":"error","error":{"type":"x","message":"nested"}}"#,
                Some("nested"),
            ),
            (r#"{"code":-32000,"message":"rpc"}"#, Some("rpc")),
            (r#"{"type":"overloaded_error"}"#, Some("overloaded_error")),
            (r#"{"message":"","type":"t"}"#, Some("t")),
            // Nothing to say: the caller's own wording takes over.
            (r#""""#, None),
            (r#"{"message":""}"#, None),
            (r#"{"code":1}"#, None),
            ("42", None),
            ("null", None),
            ("[]", None),
        ] {
            assert_eq!(text(json).as_deref(), want, "{json}");
        }
    }

    #[test]
    fn tool_names() {
        for (k, v) in [
            ("shell", "shell"),
            ("Bash", "shell"),
            ("run_shell_command", "shell"),
            ("semSearch", "search"),
            ("updateTodos", "todo"),
            ("TodoWrite", "todo"),
            ("write_todos", "todo"),
            ("readLints", "lints"),
            ("getMcpTools", "get_mcp_tools"),
            ("webSearch", "web_search"),
            ("google_web_search", "web_search"),
            ("search_file_content", "grep"),
            ("replace", "edit"),
            ("MultiEdit", "edit"),
            ("AskUserQuestion", "question"),
            ("ExitPlanMode", "plan"),
            ("NotebookEdit", "notebook"),
            ("Task", "task"),
            ("KillShell", "kill_shell"),
            ("listMcpResources", "list_mcp_resources"),
        ] {
            assert_eq!(normalize_tool_name(k), v, "{k}");
        }
        assert_eq!(
            split_mcp_name("mcp__github__list_issues"),
            Some(("github", "list_issues"))
        );
    }

    #[test]
    fn fences_and_persisted_output() {
        assert_eq!(strip_fence("```console\na\nb\n```"), "a\nb");
        assert_eq!(strip_fence("```\na\n```\n"), "a");
        assert_eq!(strip_fence("plain `x`"), "plain `x`");
        assert_eq!(strip_fence("```a``` b"), "```a``` b");
        let p = strip_persisted(
            "<persisted-output>\nOutput too large (365.1KB). Full output saved to: /t/x.txt\n\nPreview (first 2KB):\nline 0\n</persisted-output>",
        )
        .unwrap();
        assert_eq!(
            p,
            "[output persisted by the agent; preview only] Output too large (365.1KB). Full output saved to: /t/x.txt\n\nPreview (first 2KB):\nline 0"
        );
        assert!(strip_persisted("ordinary").is_none());
    }

    #[test]
    fn diffs() {
        let (p, add, del) = unified_diff("/src/a.rs", "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(
            p,
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!((add, del), (1, 1));
        let (p, add, del) = unified_diff("n.txt", "", "x\ny\n");
        assert_eq!(p, "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert_eq!((add, del), (2, 0));
        assert_eq!(count_patch_lines(&p), (2, 0));
    }

    #[test]
    fn base64() {
        assert_eq!(base64_decode("Zmlyc3QK").unwrap(), b"first\n");
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert!(base64_decode("*").is_none());
    }

    #[test]
    fn argv() {
        assert_eq!(join_argv(&["bash", "-lc", "ls -la"]), "bash -lc 'ls -la'");
    }
}
