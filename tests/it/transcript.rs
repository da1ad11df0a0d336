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
    let cap = cstream::__internal::OUTPUT_CAP_BYTES;
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
