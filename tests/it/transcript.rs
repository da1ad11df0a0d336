//! The transcript formats (`--to markdown`, `--to html`): read back by a
//! CommonMark parser, the Markdown has the structure cstream meant, on
//! every fixture; code and output survive fences of any length; long
//! outputs are cut with a note.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::common::{self, cstream, fixtures, run_fixture};

/// What a CommonMark reader (with GitHub's tables) makes of a document.
#[derive(Debug, Default)]
struct Read {
    /// `<details>` blocks opened and closed, as HTML, outside code.
    details: usize,
    tables: usize,
    /// The text of each fenced code block, with its info string.
    code: Vec<(String, String)>,
}

fn read(md: &str) -> Result<Read, String> {
    let mut r = Read::default();
    let mut depth = 0usize;
    let mut code: Option<(String, String)> = None;
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(i) => i.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((info, String::new()));
            }
            Event::Text(t) if code.is_some() => code.as_mut().unwrap().1.push_str(&t),
            Event::End(TagEnd::CodeBlock) => r.code.extend(code.take()),
            Event::Start(Tag::Table(_)) => r.tables += 1,
            Event::Html(h) | Event::InlineHtml(h) => {
                for line in h.lines() {
                    if line.starts_with("<details>") {
                        depth += 1;
                        r.details += 1;
                    } else if line == "</details>" {
                        depth = depth.checked_sub(1).ok_or("a </details> closes nothing")?;
                    }
                }
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("{depth} <details> left open"));
    }
    Ok(r)
}

/// Every fixture's Markdown reads back with its `<details>` blocks
/// balanced as HTML (none swallowed by a code block or left open), and a
/// header and a summary table for each session that had events.
#[test]
fn markdown_reads_back_as_written_on_every_fixture() {
    for path in fixtures() {
        let run = run_fixture(&path, &["--to", "markdown"]);
        let md = run.out();
        let r = read(&md).unwrap_or_else(|e| panic!("{}: {e}\n{md}", path.display()));
        let sessions = md.matches("\n## Summary\n").count();
        assert_eq!(
            r.tables,
            2 * sessions,
            "{}: a header and a summary table per session\n{md}",
            path.display()
        );
        let opened = md.lines().filter(|l| *l == "<details>").count();
        assert_eq!(
            r.details,
            opened,
            "{}: every <details> cstream wrote is read as HTML\n{md}",
            path.display()
        );
    }
}

/// Backticks in a call's output, even a line that would close the fence
/// arriving in pieces, are shown as they came: the code blocks of the call
/// add up to its output.
#[test]
fn output_with_backtick_lines_survives_its_fences() {
    let path = common::fixtures_dir()
        .join("events/transcript_fences-split-closing-fence-failed-call.jsonl");
    let md = run_fixture(&path, &["--to", "markdown"]).out();
    let r = read(&md).unwrap();
    let output: String = r
        .code
        .iter()
        .filter(|(info, _)| info == "text")
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("");
    assert!(
        output.starts_with("line one\n```\n````\nend </details> <img src=x onerror=alert(1)>\n"),
        "{output:?}\n{md}"
    );
    let command = r.code.iter().find(|(info, _)| info == "sh").unwrap();
    assert_eq!(command.1, "printf '```'\n");
    // The cut-off code block in the last text is closed, so the notes after
    // it are not code.
    assert!(r.code.iter().any(|(_, t)| t == "unterminated\n"), "{md}");
    assert!(
        md.contains("> [!CAUTION]\n> **shell failed (exit 2)**"),
        "{md}"
    );
}

/// A call's output past the cap shows its start and end and says how many
/// bytes were left out; memory and the document stay small.
#[test]
fn long_output_is_cut_with_a_note() {
    let big = "x".repeat(200_000);
    let whole = format!("START{big}END");
    let lines = [
        r#"{"type":"session_started","sessionId":"s","dialect":"codex"}"#.to_owned(),
        r#"{"type":"tool_call_started","sessionId":"s","callId":"a","toolName":"shell","args":{},"command":"cat big"}"#.to_owned(),
        format!(
            r#"{{"type":"tool_call_completed","sessionId":"s","callId":"a","toolName":"shell","ok":true,"result":null,"output":"{whole}"}}"#
        ),
        r#"{"type":"tool_call_started","sessionId":"s","callId":"b","toolName":"shell","args":{},"command":"yes"}"#.to_owned(),
        format!(
            r#"{{"type":"shell_output_delta","sessionId":"s","callId":"b","stream":"stdout","text":"{big}"}}"#
        ),
        format!(
            r#"{{"type":"shell_output_delta","sessionId":"s","callId":"b","stream":"stdout","text":"{big}"}}"#
        ),
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"b","toolName":"shell","ok":true,"result":null}"#.to_owned(),
    ];
    let input = lines.join("\n") + "\n";
    let md = cstream(&["--to", "markdown"], input.as_bytes()).out();
    assert!(md.len() < 40_000, "{} bytes", md.len());
    assert!(
        md.contains("START") && md.contains("END\n"),
        "both ends shown"
    );
    let cap = cstream::limits::OUTPUT_CAP_BYTES;
    let cut_whole = whole.len() - cap;
    assert!(
        md.contains(&format!("[cstream: {cut_whole} bytes of output not shown]")),
        "{md}"
    );
    let cut_live = 2 * big.len() - cap;
    assert!(
        md.contains(&format!("[cstream: {cut_live} bytes of output not shown]")),
        "{md}"
    );
    read(&md).unwrap();
}

/// The text a browser shows for a stretch of cstream's HTML: tags dropped,
/// its five references decoded.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once('>').map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every fixture's page has one section per session that had events, each
/// with its header, summary and a table of contents naming every turn it
/// shows; thinking and tool calls are the same collapsible blocks as in
/// the Markdown.
#[test]
fn html_has_a_section_header_summary_and_contents_per_session_on_every_fixture() {
    for path in fixtures() {
        let html = run_fixture(&path, &["--to", "html"]).out();
        let md = run_fixture(&path, &["--to", "markdown"]).out();
        let p = path.display();
        assert!(html.starts_with("<!DOCTYPE html>\n"), "{p}");
        let sessions = md.matches("\n## Summary\n").count();
        assert_eq!(
            html.matches("<section class=\"session\"").count(),
            sessions,
            "{p}"
        );
        assert_eq!(
            html.matches("<header>").count(),
            md.matches("\n# Session ").count() + usize::from(md.starts_with("# Session ")),
            "{p}"
        );
        assert_eq!(
            html.matches("<div class=\"summary\"").count(),
            sessions,
            "{p}"
        );
        let turns = html.matches("<h2 id=\"s").count();
        assert_eq!(turns, md.matches("\n## Turn ").count(), "{p}");
        let links = html.matches("<li><a href=\"#s").count();
        assert_eq!(links, turns, "{p}: one contents entry per turn");
        for (i, _) in html.match_indices("<li><a href=\"#") {
            let id = &html[i + 14..];
            let id = &id[..id.find('"').unwrap()];
            assert!(
                html.contains(&format!("<h2 id=\"{id}\">")),
                "{p}: #{id} goes nowhere"
            );
        }
        assert_eq!(
            html.matches("<details").count(),
            md.lines().filter(|l| *l == "<details>").count(),
            "{p}"
        );
        // Nothing is open until the reader opens it.
        assert!(!html.contains("<details open"), "{p}");
    }
}

/// Hostile text in every field a page shows (ids, model, directory, tool
/// names, prompts, text, thinking, output, errors, code-fence languages)
/// is text on the page: read back, it is exactly what the stream said,
/// with control and bidi characters shown as escapes.
#[test]
fn html_shows_hostile_markup_as_text() {
    let path =
        common::fixtures_dir().join("events/html_hostile-markup-controls-two-sessions.jsonl");
    let run = run_fixture(&path, &["--to", "html"]);
    let html = run.out();
    common::wellformed::check("html", false, html.as_bytes()).unwrap();
    let shown = html_text(&html);
    for s in [
        "</title><script>alert(1)</script>",
        "/srv/\"><img src=x onerror=alert(2)>",
        "<script>alert(3)</script> &amp; &lt;b&gt; <!-- comment --> <![CDATA[ x ]]>",
        "</details></div><style>body{display:none}</style>\\u{202e}evil\\u{202c}",
        "Text <img src=x onerror=alert(4)> and \\u{1b}[31mred\\u{1b}[0m and \\u{2066}isolate\\u{2069} and nul \\u{0}",
        "</code></pre><iframe src=\"https://example.com/\"></iframe>",
        "<svg onload=alert(6)> failed (exit 1)",
        "/tmp/'onmouseover='alert(7)",
        "<a href=\"javascript:alert(8)\">click</a>",
        "\\u{202e}<link rel=stylesheet href=\"https://example.com/x.css\">",
        "</table><script>alert(11)</script>",
        "</nav></section></main><script>alert(12)</script>",
        "Fine. \\u{7}bell",
        "<base href=\"https://example.com/\"><meta http-equiv=refresh",
        "\"body\":\"</pre><script>alert(14)</script>\"",
    ] {
        assert!(shown.contains(s), "not shown as text: {s}\n{html}");
    }
    // The fence's language is an attribute value, escaped as one.
    assert!(
        html.contains("data-lang=\"&quot;&gt;&lt;script&gt;alert(5)&lt;/script&gt;\""),
        "{html}"
    );
    // The title names the first session, escaped.
    assert!(
        html.contains("<title>Session 1 · claude · &lt;/title&gt;"),
        "{html}"
    );
    assert_eq!(html.matches("<section class=\"session\"").count(), 2);
}

/// A call's output past the page's cap shows its start and end and says
/// how many bytes were left out; the page stays small.
#[test]
fn html_long_output_is_cut_with_a_note() {
    let big = "<".repeat(200_000);
    let lines = [
        r#"{"type":"session_started","sessionId":"s","dialect":"codex"}"#.to_owned(),
        r#"{"type":"tool_call_started","sessionId":"s","callId":"a","toolName":"shell","args":{},"command":"cat big"}"#.to_owned(),
        format!(
            r#"{{"type":"tool_call_completed","sessionId":"s","callId":"a","toolName":"shell","ok":true,"result":null,"output":"START{big}END"}}"#
        ),
        r#"{"type":"tool_call_started","sessionId":"s","callId":"b","toolName":"shell","args":{},"command":"yes"}"#.to_owned(),
        format!(
            r#"{{"type":"shell_output_delta","sessionId":"s","callId":"b","stream":"stdout","text":"{big}"}}"#
        ),
        r#"{"type":"tool_call_completed","sessionId":"s","callId":"b","toolName":"shell","ok":true,"result":null}"#.to_owned(),
    ];
    let input = lines.join("\n") + "\n";
    let html = cstream(&["--to", "html"], input.as_bytes()).out();
    common::wellformed::check("html", false, html.as_bytes()).unwrap();
    // Each `<` is four bytes escaped: two cut outputs of 32 KiB each.
    assert!(html.len() < 300_000, "{} bytes", html.len());
    assert!(
        html.contains("\nSTART&lt;") && html.contains("&lt;END</pre>"),
        "both ends shown"
    );
    let cap = 32 * 1024;
    for cut in [big.len() + 8 - cap, big.len() - cap] {
        assert!(
            html.contains(&format!(
                "<span class=\"cut\">[cstream: {cut} bytes of output not shown]</span>"
            )),
            "{cut}"
        );
    }
}

/// A session with one prompt and one answer, both `text`, as events.
fn one_answer(prompt: &str, answer: &str) -> Vec<u8> {
    let lines = [
        r#"{"type":"session_started","sessionId":"s","dialect":"claude"}"#.to_owned(),
        serde_json::json!({"type":"user_message","sessionId":"s","text":prompt}).to_string(),
        serde_json::json!({"type":"assistant_message","sessionId":"s","text":answer}).to_string(),
    ];
    (lines.join("\n") + "\n").into_bytes()
}

const AGENT_MARKDOWN: &str = "# Available Tools\n\n**Read** reads `a file`.\n\n\
| Tool | Calls |\n|---|--:|\n| Read | 2 |\n\n\
- [x] done\n- [ ] ~~dropped~~\n\n\
## Setup\n\n###### Deep\n\n\
[docs](https://example.com/a?b=1) and [bad](javascript:alert(1)) and ![pic](https://example.com/p.png)\n\n\
<script>alert(2)</script>\n\ninline <img src=x onerror=alert(3)> tag\n\n\
```rust\n// # not a heading\nfn main() {}\n```\n";

/// The agent's Markdown is HTML on the page: headings below the turn's
/// `<h2>` (clamped at `<h6>`), strong and code spans, a GitHub table with
/// its alignment, task lists, a safe link; a `javascript:` link, raw
/// `<script>` and `<img onerror>` are text; a code block keeps its
/// language and is coloured.
#[test]
fn html_renders_the_agents_markdown() {
    let html = cstream(&["--to", "html"], &one_answer("hi", AGENT_MARKDOWN)).out();
    common::wellformed::check("html", false, html.as_bytes()).unwrap();
    for want in [
        "<h3>Available Tools</h3>",
        "<h4>Setup</h4>",
        "<h6>Deep</h6>",
        "<p><strong>Read</strong> reads <code>a file</code>.</p>",
        "<thead><tr><th>Tool</th><th class=\"ar\">Calls</th></tr></thead>",
        "<tr><td>Read</td><td class=\"ar\">2</td></tr>",
        "<span class=\"task\">\u{2611}</span> done",
        "<span class=\"task\">\u{2610}</span> <del>dropped</del>",
        "<del>dropped</del>",
        "<a href=\"https://example.com/a?b=1\" rel=\"noopener noreferrer\">docs</a>",
        "<span class=\"link\">bad (javascript:alert(1))</span>",
        "<a href=\"https://example.com/p.png\" rel=\"noopener noreferrer\" class=\"image\">pic</a>",
        "&lt;script&gt;alert(2)&lt;/script&gt;",
        "inline &lt;img src=x onerror=alert(3)&gt; tag",
        "<pre class=\"code\" data-lang=\"rust\"><code class=\"language-rust\">",
        "<span class=\"hl-k\">fn</span>",
    ] {
        assert!(html.contains(want), "missing {want}\n{html}");
    }
    for never in [
        "<script",
        "<img",
        "<input",
        "href=\"javascript",
        "<h1>Available",
        "<h3># not",
    ] {
        assert!(!html.contains(never), "{never} in\n{html}");
    }
    // The page still asks for nothing: no image is loaded.
    assert!(!html.contains(" src=\""), "{html}");
}

/// The user's prompt is Markdown too, with its line breaks kept.
#[test]
fn html_renders_the_prompt_as_markdown() {
    let html = cstream(
        &["--to", "html"],
        &one_answer("# Task\nfix `a`\nthen b", "ok"),
    )
    .out();
    assert!(
        html.contains(
            "<div class=\"md\"><h3>Task</h3>\n<p>fix <code>a</code><br>\nthen b</p>\n</div>"
        ),
        "{html}"
    );
}

/// Text that arrives as deltas is rendered as one message: a table split
/// across deltas is still a table.
#[test]
fn html_renders_a_message_not_its_deltas() {
    let mut input =
        String::from(r#"{"type":"session_started","sessionId":"s","dialect":"claude"}"#);
    input.push('\n');
    for piece in ["| a ", "| b |\n|--", "-|---|\n| 1 | 2 |\n"] {
        input.push_str(
            &serde_json::json!({"type":"text_delta","sessionId":"s","text":piece}).to_string(),
        );
        input.push('\n');
    }
    let html = cstream(&["--to", "html"], input.as_bytes()).out();
    assert!(
        html.contains("<thead><tr><th>a</th><th>b</th></tr></thead>"),
        "{html}"
    );
}

/// In the Markdown, the agent's headings sit below `## Turn`: `#` becomes
/// `###`, a setext heading becomes an ATX one, deep ones stop at `######`;
/// a `#` inside a code block is left alone.
#[test]
fn markdown_demotes_the_agents_headings() {
    let answer =
        "# Available Tools\n\nIntro\n===\n\n##### Deep\n\n```sh\n# comment\n```\n\nplain\n";
    let md = cstream(&["--to", "markdown"], &one_answer("# Task\nplease", answer)).out();
    for want in [
        "\n### Available Tools\n",
        "\n### Intro\n",
        "\n###### Deep\n",
        "```sh\n# comment\n```\n",
        "> ### Task\n> please\n",
        "\nplain\n",
    ] {
        assert!(md.contains(want), "missing {want:?}\n{md}");
    }
    assert!(!md.contains("\n# Available"), "{md}");
    assert!(!md.contains("\n===\n"), "{md}");
    // Read back, the document's only first-level headings are its sessions.
    let opts = Options::ENABLE_TABLES;
    let mut levels = Vec::new();
    for ev in Parser::new_ext(&md, opts) {
        if let Event::Start(Tag::Heading { level, .. }) = ev {
            levels.push(level as u8);
        }
    }
    assert_eq!(levels.iter().filter(|l| **l == 1).count(), 1, "{md}");
    assert!(
        levels.iter().filter(|l| **l >= 3).count() >= 3,
        "{levels:?}"
    );
}
