//! What each document type's metadata holds: the tool → document tables,
//! the language of a file path, and where an edit sits in a unified diff.

use super::J;
use crate::event::{ToolEnd, ToolStart};
use crate::output::fences::Fence;

/// An open tool-call document, as the builder keeps it and the metadata
/// below reads it (its start comes back with the completion:
/// [`ToolEnd::start`]).
#[derive(Debug)]
pub(super) struct OpenTool {
    pub(super) seq: u32,
    pub(super) ty: &'static str,
    /// The tool's name, to close the document should its call never complete.
    pub(super) name: String,
    /// Shell output streamed as deltas (used when the completion carries none).
    pub(super) output: Option<String>,
}

pub(super) fn text_meta() -> J {
    J::Obj(vec![("format", J::str("markdown"))])
}

pub(super) fn fence_meta(f: &Fence) -> (&'static str, J) {
    match f {
        Fence::Code { language } => (
            "code_block",
            J::Obj(vec![
                ("language", J::str(language)),
                ("purpose", J::str("example")),
            ]),
        ),
        Fence::Reference {
            path,
            start_line,
            end_line,
        } => (
            "code_reference",
            J::Obj(vec![
                ("filePath", J::str(path)),
                ("startLine", J::u64(*start_line)),
                ("endLine", J::u64(*end_line)),
                ("language", J::str(language_of(path))),
            ]),
        ),
    }
}

pub(super) fn error_meta(code: &str, source: &str, details: &str) -> J {
    J::Obj(vec![
        ("errorCode", J::str(code)),
        ("source", J::str(source)),
        ("details", J::str(details)),
    ])
}

/// The document type of a tool call, from its normalized name.
pub fn doc_type(tool_name: &str) -> &'static str {
    match tool_name {
        "edit" | "write" | "delete" | "move" | "rename" => "file_edit",
        "shell" => "terminal_command",
        "todo" => "todo_update",
        "plan" => "plan",
        "question" => "clarification",
        _ => "tool_call",
    }
}

fn operation(tool_name: &str) -> &'static str {
    match tool_name {
        "write" => "create",
        "delete" => "delete",
        "move" | "rename" => "rename",
        _ => "edit",
    }
}

/// A tool document's content: the new text of an edit, the plan, the line
/// introducing questions; `None` for the other types.
pub(super) fn tool_content(ty: &str, t: &ToolStart<'_>) -> Option<String> {
    let d = t.details.as_deref()?;
    let c = match ty {
        "file_edit" if t.tool_name == "delete" => None,
        "file_edit" => d.new_string.as_deref().or(d.file_content.as_deref()),
        "plan" => d.plan.as_deref(),
        "clarification" => d.title.as_deref(),
        _ => None,
    };
    c.map(str::to_owned)
}

fn todos_json(t: &ToolStart<'_>) -> J {
    let todos = t
        .details
        .as_deref()
        .and_then(|d| d.todos.as_deref())
        .unwrap_or(&[]);
    J::Arr(
        todos
            .iter()
            .enumerate()
            .map(|(i, td)| {
                J::Obj(vec![
                    (
                        "id",
                        J::Str(
                            td.id
                                .as_deref()
                                .map_or_else(|| (i + 1).to_string(), str::to_owned),
                        ),
                    ),
                    ("content", J::str(&td.content)),
                    ("status", J::str(&td.status)),
                ])
            })
            .collect(),
    )
}

/// Metadata known when the call starts.
pub(super) fn start_meta(ty: &str, t: &ToolStart<'_>, session_cwd: Option<&str>) -> J {
    let d = t.details.as_deref();
    match ty {
        "file_edit" => {
            let mut o = vec![
                ("filePath", J::opt_str(t.path.as_deref())),
                ("operation", J::str(operation(&t.tool_name))),
                (
                    "language",
                    J::str(t.path.as_deref().map_or("", language_of)),
                ),
            ];
            if let Some(p) = d.and_then(|d| d.new_path.as_deref()) {
                o.push(("newPath", J::str(p)));
            }
            J::Obj(o)
        }
        "terminal_command" => J::Obj(vec![
            ("command", J::opt_str(t.command.as_deref())),
            (
                "workingDirectory",
                J::opt_str(t.cwd.as_deref().or(session_cwd)),
            ),
        ]),
        "todo_update" => J::Obj(vec![("todos", todos_json(t))]),
        "plan" => J::Obj(vec![
            ("title", J::opt_str(d.and_then(|d| d.title.as_deref()))),
            (
                "overview",
                J::opt_str(d.and_then(|d| d.overview.as_deref())),
            ),
            ("todos", todos_json(t)),
            ("format", J::str("markdown")),
        ]),
        "clarification" => {
            let qs = d.and_then(|d| d.questions.as_deref()).unwrap_or(&[]);
            J::Obj(vec![(
                "questions",
                J::Arr(
                    qs.iter()
                        .enumerate()
                        .map(|(i, q)| {
                            J::Obj(vec![
                                (
                                    "id",
                                    J::Str(
                                        q.id.as_deref()
                                            .map_or_else(|| format!("q{}", i + 1), str::to_owned),
                                    ),
                                ),
                                ("text", J::str(&q.text)),
                                (
                                    "options",
                                    J::Arr(
                                        q.options
                                            .iter()
                                            .enumerate()
                                            .map(|(j, c)| {
                                                J::Obj(vec![
                                                    (
                                                        "id",
                                                        J::Str(c.id.as_deref().map_or_else(
                                                            || (j + 1).to_string(),
                                                            str::to_owned,
                                                        )),
                                                    ),
                                                    ("label", J::str(&c.label)),
                                                ])
                                            })
                                            .collect(),
                                    ),
                                ),
                            ])
                        })
                        .collect(),
                ),
            )])
        }
        // The arguments follow in `tool_call_arguments` (and in the full metadata).
        _ => J::Obj(vec![
            ("toolName", J::str(&t.tool_name)),
            ("toolCallId", J::str(&t.call_id)),
        ]),
    }
}

/// `{status, data}`: the source's result payload, else the error message.
pub(super) fn tool_result(e: &ToolEnd<'_>) -> J {
    let data = match (&e.result, &e.error) {
        (Some(r), _) => J::raw(r.get()),
        (None, Some(err)) => J::str(err),
        (None, None) => J::Null,
    };
    J::Obj(vec![
        (
            "status",
            J::str(if e.outcome_unknown {
                "unknown"
            } else if e.ok {
                "success"
            } else {
                "error"
            }),
        ),
        ("data", data),
    ])
}

/// The full metadata, at completion.
pub(super) fn end_meta(
    open: &OpenTool,
    t: &ToolStart<'_>,
    e: &ToolEnd<'_>,
    result: J,
    session_cwd: Option<&str>,
) -> J {
    let J::Obj(mut o) = start_meta(open.ty, t, session_cwd) else {
        return J::Null;
    };
    match open.ty {
        "file_edit" => {
            let d = t.details.as_deref();
            let diff = match d.map(|d| (&d.old_string, &d.new_string)) {
                Some((Some(old), Some(new))) => {
                    let range = e.patch.as_deref().and_then(|p| old_range(p, old));
                    J::Obj(vec![
                        ("oldString", J::str(old)),
                        ("newString", J::str(new)),
                        ("startLine", J::opt_u64(range.map(|r| r.0))),
                        ("endLine", J::opt_u64(range.map(|r| r.1))),
                    ])
                }
                _ => J::Null,
            };
            o.push(("diff", diff));
            o.push(("patch", J::opt_str(e.patch.as_deref())));
        }
        "terminal_command" => {
            o.push(("exitCode", e.exit_code.map_or(J::Null, J::Int)));
            o.push((
                "output",
                J::opt_str(
                    e.output
                        .as_ref()
                        .map(|o| o.as_str())
                        .as_deref()
                        .or(open.output.as_deref()),
                ),
            ));
            o.push(("duration_ms", J::opt_u64(e.duration_ms)));
        }
        "tool_call" => {
            o.push(("arguments", J::raw(t.args.get())));
            o.push(("result", result));
            o.push(("duration_ms", J::opt_u64(e.duration_ms)));
        }
        _ => {}
    }
    J::Obj(o)
}

/// Where `old` sits in the old file, from a unified diff's hunks: the first
/// run of old-side lines (context and removed) that holds it. `None` when
/// the hunks do not show it.
pub fn old_range(patch: &str, old: &str) -> Option<(u64, u64)> {
    let want: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
    if old.is_empty() {
        return None;
    }
    // Old-side lines of each hunk, with their line numbers.
    let mut hunks: Vec<Vec<(u64, &str)>> = Vec::new();
    let mut line = 0u64;
    for l in patch.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let start = rest
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse::<u64>().ok())?;
            line = start;
            hunks.push(Vec::new());
        } else if let Some(h) = hunks.last_mut() {
            if let Some(text) = l.strip_prefix(' ').or_else(|| l.strip_prefix('-')) {
                h.push((line, text));
                line += 1;
            } else if l.is_empty() {
                // Some writers drop the space of an empty context line.
                h.push((line, ""));
                line += 1;
            }
        }
    }
    let n = want.len();
    for h in &hunks {
        for i in 0..h.len().saturating_sub(n - 1) {
            let window = &h[i..i + n];
            let fits = if n == 1 {
                window[0].1.contains(want[0])
            } else {
                window[0].1.ends_with(want[0])
                    && window[n - 1].1.starts_with(want[n - 1])
                    && window[1..n - 1]
                        .iter()
                        .zip(&want[1..n - 1])
                        .all(|(a, b)| a.1 == *b)
            };
            if fits {
                return Some((window[0].0, window[n - 1].0));
            }
        }
    }
    None
}

/// A markdown language name for a file, from its extension (or name);
/// `""` when not known.
pub fn language_of(path: &str) -> &'static str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "dockerfile" | "containerfile" => return "dockerfile",
        "makefile" | "gnumakefile" => return "makefile",
        "cmakelists.txt" => return "cmake",
        _ => {}
    }
    let Some((_, ext)) = lower.rsplit_once('.') else {
        return "";
    };
    match ext {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" => "scala",
        "swift" => "swift",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "fs" => "fsharp",
        "rb" => "ruby",
        "php" => "php",
        "pl" | "pm" => "perl",
        "lua" => "lua",
        "r" => "r",
        "dart" => "dart",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "clj" | "cljs" => "clojure",
        "zig" => "zig",
        "nim" => "nim",
        "sh" | "bash" => "bash",
        "zsh" => "zsh",
        "fish" => "fish",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "vue" => "vue",
        "svelte" => "svelte",
        "json" => "json",
        "jsonc" => "jsonc",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" => "xml",
        "md" | "markdown" => "markdown",
        "tex" => "latex",
        "proto" => "protobuf",
        "graphql" | "gql" => "graphql",
        "tf" => "hcl",
        "ini" | "cfg" => "ini",
        "diff" | "patch" => "diff",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_range_from_patch() {
        let patch = "--- a/src/main.py\n+++ b/src/main.py\n@@ -12,4 +12,5 @@\n def main():\n     app = Flask(__name__)\n     app.register_blueprint(api_bp)\n+    app.register_blueprint(auth_bp)\n     return app\n";
        assert_eq!(
            old_range(patch, "app.register_blueprint(api_bp)"),
            Some((14, 14))
        );
        assert_eq!(
            old_range(
                patch,
                "Flask(__name__)\n    app.register_blueprint(api_bp)\n"
            ),
            Some((13, 14))
        );
        assert_eq!(old_range(patch, "nowhere"), None);
        assert_eq!(old_range(patch, ""), None);
        assert_eq!(old_range("garbage", "x"), None);
        assert_eq!(old_range("@@ -x +1 @@\n x", "x"), None);
    }

    #[test]
    fn languages() {
        assert_eq!(language_of("src/main.py"), "python");
        assert_eq!(language_of("a/B.RS"), "rust");
        assert_eq!(language_of("Dockerfile"), "dockerfile");
        assert_eq!(language_of("notes"), "");
        assert_eq!(language_of("x.unknown"), "");
        assert_eq!(language_of("C:\\w\\app.tsx"), "tsx");
    }
}
