//! `--to markdown`: a transcript as a GitHub-flavoured Markdown document per
//! session (docs/formats.md#markdown).
//!
//! ```text
//! # Session 1 · cursor
//!
//! | Agent | Model | Started | Directory | Session |
//! ...
//! ## Turn 1
//!
//! **User**
//!
//! > Run `sleep 5`
//!
//! <details>
//! <summary><b>shell</b> <code>sleep 5</code></summary>
//! ...
//! </details>
//! ```
//!
//! GitHub renders Markdown inside `<details>` only when blank lines separate
//! it from the tags, so every block starts and ends on a blank line. Code,
//! output and JSON go in fences longer than any backtick run in them; live
//! output, whose content is not known when its fence opens, is watched line
//! by line, and a line that would close the fence closes it and opens a
//! longer one (the output then shows as two adjacent blocks, every byte
//! kept). Assistant text is copied as it came; a code block it leaves open
//! is closed at the end of the text, so the rest of the document stays
//! outside it.

use std::io::{self, Write};

use super::omitted_note;
use super::{Body, CallHead, Clip, Ending, Markup, Note, SummaryCells, Tally, escape_html};
use crate::event::figures::fmt_ms;
use crate::event::{OutStream, Session, SessionStart};
use crate::output::fences::Segmenter;

/// Output of a call is cut at this many bytes: a shared transcript is read,
/// and GitHub stops rendering large files.
pub const OUTPUT_CAP_BYTES: usize = 16 * 1024;

/// A summary shows at most this many characters of a call's key argument.
const SUMMARY_ARG_CHARS: usize = 120;

/// Levels the agent's headings move down: its `#` becomes `###`, below the
/// document's `# Session` and `## Turn`.
const HEADING_SHIFT: usize = 2;

/// A fenced block being written.
#[derive(Debug)]
struct Fenced {
    /// Backticks of the open fence.
    len: usize,
    info: &'static str,
    /// Written before every line (`"> "` inside a quote).
    prefix: &'static str,
    /// The start of the current line while it could still close the fence
    /// (up to three spaces, backticks, trailing blanks).
    held: String,
    /// At the start of a line, or still holding it.
    holding: bool,
}

/// Writes the Markdown.
pub struct Markdown<W: Write> {
    w: W,
    /// Trailing newlines written (2: at a blank line, or at the start).
    nl: u8,
    /// Tracks code blocks in assistant text and thinking.
    seg: Segmenter,
    /// The current line of assistant text or thinking, until its end says
    /// whether it is a heading.
    line: String,
    /// A one-line paragraph that the next line may underline (a setext
    /// heading), with its line break.
    held: Option<String>,
    /// The last line was blank, a heading, or the text's start: a line
    /// here begins a paragraph.
    para_start: bool,
    /// A call's live output block.
    output: Option<Fenced>,
}

impl<W: Write> Markdown<W> {
    pub fn new(w: W) -> Self {
        Markdown {
            w,
            nl: 2,
            seg: Segmenter::new(),
            line: String::new(),
            held: None,
            para_start: true,
            output: None,
        }
    }

    fn put(&mut self, s: &str) -> io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        self.w.write_all(s.as_bytes())?;
        let trailing = s.len() - s.trim_end_matches('\n').len();
        self.nl = if trailing == s.len() {
            (usize::from(self.nl) + trailing).min(2) as u8
        } else {
            trailing.min(2) as u8
        };
        Ok(())
    }

    /// End the current line.
    fn line_end(&mut self) -> io::Result<()> {
        if self.nl == 0 { self.put("\n") } else { Ok(()) }
    }

    /// Stand on a blank line.
    fn blank(&mut self) -> io::Result<()> {
        while self.nl < 2 {
            self.put("\n")?;
        }
        Ok(())
    }

    /// Copy markdown (assistant text, thinking) line by line, its headings
    /// moved [`HEADING_SHIFT`] levels down, while tracking its code blocks
    /// (where a `#` is code, not a heading).
    fn markdown(&mut self, mut text: &str) -> io::Result<()> {
        while let Some(i) = text.find('\n') {
            let (line, rest) = text.split_at(i + 1);
            text = rest;
            if self.line.is_empty() {
                self.markdown_line(line)?;
            } else {
                let mut whole = std::mem::take(&mut self.line);
                whole.push_str(line);
                self.markdown_line(&whole)?;
                whole.clear();
                self.line = whole;
            }
        }
        self.line.push_str(text);
        Ok(())
    }

    /// One line of markdown (with its line break, but for the text's last).
    fn markdown_line(&mut self, line: &str) -> io::Result<()> {
        let in_code = self.seg.unclosed_fence().is_some();
        self.seg.push(line, &mut |_| {});
        let body = line.trim_end_matches(['\n', '\r']);
        if in_code {
            self.put(line)?;
            self.para_start = false;
            return Ok(());
        }
        if let Some(text) = self.held.take() {
            if let Some(level) = setext_level(body) {
                let hashes = "#".repeat((level + HEADING_SHIFT).min(6));
                self.put(&format!("{hashes} {}\n", text.trim()))?;
                self.para_start = true;
                return Ok(());
            }
            self.put(&text)?;
        }
        if let Some((indent, level)) = atx_level(body) {
            let hashes = "#".repeat((level + HEADING_SHIFT).min(6));
            self.put(&line[..indent])?;
            self.put(&hashes)?;
            self.put(&line[indent + level..])?;
            self.para_start = true;
            return Ok(());
        }
        let blank = body.trim().is_empty();
        // A fence that opened on this line is not a paragraph.
        let opened = self.seg.unclosed_fence().is_some();
        if self.para_start && !blank && !opened && line.ends_with('\n') && plain_line(body) {
            self.held = Some(line.to_owned());
            self.para_start = false;
            return Ok(());
        }
        self.para_start = blank;
        self.put(line)
    }

    /// End copied markdown: write what was held, close a code block it
    /// left open.
    fn markdown_end(&mut self) -> io::Result<()> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.markdown_line(&line)?;
        }
        if let Some(text) = self.held.take() {
            self.put(&text)?;
        }
        self.para_start = true;
        if let Some((ch, len)) = self.seg.unclosed_fence() {
            self.line_end()?;
            let fence = char::from(ch).to_string().repeat(len);
            self.put(&fence)?;
            self.put("\n")?;
        }
        self.seg.finish(&mut |_| {});
        self.line_end()
    }

    fn fence_open(&mut self, len: usize, info: &'static str, prefix: &'static str) -> Fenced {
        Fenced {
            len,
            info,
            prefix,
            held: String::new(),
            holding: true,
        }
    }

    fn fence_line(&mut self, f: &Fenced, open: bool) -> io::Result<()> {
        self.put(f.prefix)?;
        self.put(&"`".repeat(f.len))?;
        if open {
            self.put(f.info)?;
        }
        self.put("\n")
    }

    /// Write `text` inside the fence `f`.
    fn fence_push(&mut self, f: &mut Fenced, text: &str) -> io::Result<()> {
        for piece in text.split_inclusive('\n') {
            let (body, nl) = match piece.strip_suffix('\n') {
                Some(b) => (b, true),
                None => (piece, false),
            };
            if f.holding {
                f.held.push_str(body);
                if could_close(&f.held) {
                    if nl {
                        self.fence_held_line(f)?;
                    }
                    continue;
                }
                f.holding = false;
                self.put(f.prefix)?;
                let held = std::mem::take(&mut f.held);
                self.put(&held)?;
                f.held = held;
                f.held.clear();
            } else {
                self.put(body)?;
            }
            if nl {
                self.put("\n")?;
                f.holding = true;
            }
        }
        Ok(())
    }

    /// A whole line that may be a closing fence: if it would close `f`, the
    /// block is closed and reopened with a longer fence before it.
    fn fence_held_line(&mut self, f: &mut Fenced) -> io::Result<()> {
        let run = f.held.bytes().filter(|b| *b == b'`').count();
        if run >= f.len {
            self.fence_line(f, false)?;
            f.len = run + 1;
            self.fence_line(f, true)?;
        }
        let held = std::mem::take(&mut f.held);
        self.put(f.prefix)?;
        self.put(&held)?;
        self.put("\n")?;
        f.held = held;
        f.held.clear();
        f.holding = true;
        Ok(())
    }

    fn fence_close(&mut self, mut f: Fenced) -> io::Result<()> {
        if f.holding && !f.held.is_empty() {
            self.fence_held_line(&mut f)?;
        }
        self.line_end()?;
        self.fence_line(&f, false)
    }

    /// A whole text in a fence of its own (`omitted`: bytes cut from its middle).
    fn fenced(&mut self, info: &'static str, prefix: &'static str, c: Clip<'_>) -> io::Result<()> {
        let len = (longest_backtick_run(c.head).max(longest_backtick_run(c.tail)) + 1).max(3);
        let mut f = self.fence_open(len, info, prefix);
        self.fence_line(&f, true)?;
        self.fence_push(&mut f, c.head)?;
        if c.omitted > 0 {
            if !f.holding || !f.held.is_empty() {
                self.fence_push(&mut f, "\n")?;
            }
            self.fence_push(&mut f, &omitted_note(c.omitted))?;
            self.fence_push(&mut f, "\n")?;
            self.fence_push(&mut f, c.tail)?;
        }
        self.fence_close(f)
    }

    /// Close the open output block, saying what the cap left out.
    fn output_close(&mut self, omitted: u64) -> io::Result<()> {
        if let Some(mut f) = self.output.take() {
            if omitted > 0 {
                if !f.holding || !f.held.is_empty() {
                    self.fence_push(&mut f, "\n")?;
                }
                self.fence_push(&mut f, &omitted_note(omitted))?;
            }
            self.fence_close(f)?;
        }
        Ok(())
    }
}

/// `(indent, level)` of an ATX heading line (`## Title`): up to three
/// spaces, one to six `#`, then a blank or the line's end.
fn atx_level(line: &str) -> Option<(usize, usize)> {
    let rest = line.trim_start_matches(' ');
    let indent = line.len() - rest.len();
    let after = rest.trim_start_matches('#');
    let level = rest.len() - after.len();
    let ok = indent <= 3
        && (1..=6).contains(&level)
        && (after.is_empty() || after.starts_with([' ', '\t']));
    ok.then_some((indent, level))
}

/// The level of a setext underline (`===` 1, `---` 2): up to three spaces,
/// a run of one of the two, then only blanks.
fn setext_level(line: &str) -> Option<usize> {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return None;
    }
    let rest = rest.trim_end_matches([' ', '\t']);
    let level = match rest.as_bytes().first()? {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    rest.bytes()
        .all(|b| b == rest.as_bytes()[0])
        .then_some(level)
}

/// True for a line that can only start a paragraph (so a setext underline
/// after it makes a heading): not indented as code, and not a list item,
/// quote, table row, HTML or heading.
fn plain_line(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 || rest.starts_with('\t') {
        return false;
    }
    let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let numbered = digits.len() < rest.len() && digits.starts_with(['.', ')']);
    !numbered && !rest.starts_with(['-', '*', '+', '>', '#', '|', '<', '=', '`', '~'])
}

/// True while `line` (a line's start) could still be a closing backtick
/// fence: up to three spaces, backticks, then only spaces and tabs.
fn could_close(line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    if line.len() - rest.len() > 3 {
        return false;
    }
    rest.trim_start_matches('`')
        .bytes()
        .all(|b| b == b' ' || b == b'\t')
}

/// The longest run of backticks in `s`.
pub fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for b in s.bytes() {
        if b == b'`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// `s` as an inline code span (one line; in a table, pipes escaped).
fn code_span(s: &str, in_table: bool) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let s = if in_table { s.replace('|', "\\|") } else { s };
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    // A space on each side keeps backticks at the ends apart from the fence.
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// `s` as literal inline text, never at the start of a line: every
/// character Markdown, GitHub's extensions (strikethrough, math) or HTML
/// could read as syntax there is backslash-escaped, and line breaks become
/// spaces. (`#`, `-`, `+`, `=` matter only at a line's start; `(` and `!`
/// only next to a bracket, which is escaped.)
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The first `max` characters of `s`, `…` marking a cut.
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

impl<W: Write> Markup for Markdown<W> {
    const OUTPUT_CAP_BYTES: usize = OUTPUT_CAP_BYTES;

    fn session(&mut self, s: &Session, st: &SessionStart, started: Option<i64>) -> io::Result<()> {
        self.blank()?;
        let agent = literal(&st.dialect);
        match st.title.as_deref() {
            Some(t) => self.put(&format!(
                "# Session {} · {agent}: {}\n\n",
                s.ordinal,
                literal(t)
            ))?,
            None => self.put(&format!("# Session {} · {agent}\n\n", s.ordinal))?,
        }
        let dash = || "—".to_owned();
        let model = st.model.as_deref().map_or_else(dash, literal);
        let when = started.map_or_else(dash, |ms| crate::time::iso8601(ms.div_euclid(1000)));
        let cwd = st.cwd.as_deref().map_or_else(dash, |c| code_span(c, true));
        let row = format!(
            "| Agent | Model | Started | Directory | Session |\n|---|---|---|---|---|\n\
             | {agent} | {model} | {when} | {cwd} | {} |\n",
            code_span(&s.id, true)
        );
        self.put(&row)
    }

    fn turn(&mut self, n: usize) -> io::Result<()> {
        self.blank()?;
        self.put(&format!("## Turn {n}\n"))
    }

    fn prompt(&mut self, text: &str) -> io::Result<()> {
        self.blank()?;
        self.put("**User**\n\n")?;
        let mut demoted = Markdown::new(Vec::new());
        demoted.markdown(text)?;
        demoted.markdown_end()?;
        let demoted = String::from_utf8(demoted.w).unwrap_or_default();
        let text = demoted.trim_end_matches('\n');
        for line in text.split('\n') {
            self.put(if line.is_empty() { ">" } else { "> " })?;
            self.put(line)?;
            self.put("\n")?;
        }
        Ok(())
    }

    fn text_open(&mut self) -> io::Result<()> {
        self.blank()
    }

    fn text(&mut self, text: &str) -> io::Result<()> {
        self.markdown(text)
    }

    fn text_close(&mut self) -> io::Result<()> {
        self.markdown_end()
    }

    fn thinking_open(&mut self) -> io::Result<()> {
        self.blank()?;
        self.put("<details>\n<summary>Thinking</summary>\n\n")
    }

    fn thinking(&mut self, text: &str) -> io::Result<()> {
        self.markdown(text)
    }

    fn thinking_close(&mut self, duration_ms: Option<u64>) -> io::Result<()> {
        self.markdown_end()?;
        if let Some(d) = duration_ms {
            self.blank()?;
            self.put(&format!("*Thought for {}.*\n", fmt_ms(d)))?;
        }
        self.blank()?;
        self.put("</details>\n")
    }

    fn thought(&mut self, duration_ms: u64) -> io::Result<()> {
        self.blank()?;
        self.put(&format!("*Thought for {}.*\n", fmt_ms(duration_ms)))
    }

    fn call_open(&mut self, head: &CallHead<'_>, body: Option<Body<'_>>) -> io::Result<()> {
        self.blank()?;
        let mut summary = String::from("<details>\n<summary><b>");
        escape_html(head.name, &mut summary);
        summary.push_str("</b>");
        if let Some(arg) = head.arg {
            summary.push_str(" <code>");
            escape_html(
                &shorten(&arg.replace(['\n', '\r'], " "), SUMMARY_ARG_CHARS),
                &mut summary,
            );
            summary.push_str("</code>");
        }
        if head.continued {
            summary.push_str(" (continued)");
        }
        summary.push_str("</summary>\n\n");
        self.put(&summary)?;
        match body {
            Some(Body::Command(command, cwd)) => {
                let c = super::clip(command, OUTPUT_CAP_BYTES);
                self.fenced("sh", "", c)?;
                if let Some(cwd) = cwd {
                    self.blank()?;
                    self.put(&format!("in {}\n", code_span(cwd, false)))?;
                }
            }
            Some(Body::Arguments(args)) => self.fenced("json", "", args)?,
            None => {}
        }
        Ok(())
    }

    fn call_output(&mut self, _stream: OutStream, text: &str) -> io::Result<()> {
        let mut f = match self.output.take() {
            Some(f) => f,
            None => {
                self.blank()?;
                let f = self.fence_open(3, "text", "");
                self.fence_line(&f, true)?;
                f
            }
        };
        self.fence_push(&mut f, text)?;
        self.output = Some(f);
        Ok(())
    }

    fn call_close(&mut self, end: Option<&Ending<'_>>, omitted: u64) -> io::Result<()> {
        self.output_close(omitted)?;
        match end {
            Some(e) => {
                for (info, part) in [("text", e.output), ("diff", e.patch), ("json", e.result)] {
                    if let Some(c) = part {
                        self.blank()?;
                        self.fenced(info, "", c)?;
                    }
                }
                self.blank()?;
                let glyph = if e.cancelled {
                    "⊘"
                } else if e.outcome_unknown {
                    "?"
                } else if e.ok {
                    "✓"
                } else {
                    "✗"
                };
                self.put(&format!("{glyph} {}\n", literal(&e.outcome)))?;
            }
            None => {
                self.blank()?;
                self.put("*Still running; continued below.*\n")?;
            }
        }
        self.blank()?;
        self.put("</details>\n")
    }

    fn note(&mut self, kind: Note, title: &str, detail: Option<&str>) -> io::Result<()> {
        self.blank()?;
        let alert = match kind {
            Note::Error => "CAUTION",
            Note::Warning => "WARNING",
        };
        self.put(&format!("> [!{alert}]\n> **{}**\n", literal(title)))?;
        if let Some(d) = detail.filter(|d| !d.trim().is_empty()) {
            self.put(">\n")?;
            let c = super::clip(d.trim_end_matches('\n'), OUTPUT_CAP_BYTES);
            self.fenced("text", "> ", c)?;
        }
        Ok(())
    }

    fn snapshot(&mut self, title: &str, text: Option<&str>) -> io::Result<()> {
        self.blank()?;
        let mut s = String::from("<details>\n<summary>");
        escape_html(title, &mut s);
        s.push_str("</summary>\n\n");
        self.put(&s)?;
        if let Some(t) = text {
            self.markdown(t)?;
            self.markdown_end()?;
        }
        self.blank()?;
        self.put("</details>\n")
    }

    fn unknown(&mut self, raw: Clip<'_>) -> io::Result<()> {
        self.blank()?;
        self.put("<details>\n<summary>Unknown event</summary>\n\n")?;
        self.fenced("json", "", raw)?;
        self.blank()?;
        self.put("</details>\n")
    }

    fn summary(&mut self, t: &Tally) -> io::Result<()> {
        self.blank()?;
        self.put("---\n\n## Summary\n\n")?;
        let outcome = t.outcome();
        let mut table = String::new();
        for heading in SummaryCells::HEADINGS {
            table.push_str(&format!("| {heading} "));
        }
        table.push_str("|\n");
        table.push_str(&"|---".repeat(SummaryCells::HEADINGS.len()));
        table.push_str(&format!("|\n| {} ", outcome.label()));
        for cell in t.cells().in_order() {
            table.push_str(&format!("| {cell} "));
        }
        table.push_str("|\n");
        self.put(&table)?;
        self.outcome_note(&outcome)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fenced_stream(len: usize, pieces: &[&str]) -> String {
        let mut m = Markdown::new(Vec::new());
        let mut f = m.fence_open(len, "text", "");
        m.fence_line(&f, true).unwrap();
        for p in pieces {
            m.fence_push(&mut f, p).unwrap();
        }
        m.fence_close(f).unwrap();
        String::from_utf8(m.w).unwrap()
    }

    #[test]
    fn a_line_that_would_close_the_fence_reopens_a_longer_one() {
        assert_eq!(fenced_stream(3, &["a\n", "b"]), "```text\na\nb\n```\n");
        // Split across pieces, the closing line is still caught.
        assert_eq!(
            fenced_stream(3, &["a\n`", "``", "`\nb\n"]),
            "```text\na\n```\n`````text\n````\nb\n`````\n"
        );
        // Backticks inside a line, or indented four spaces, close nothing.
        assert_eq!(
            fenced_stream(3, &["x ```\n    ```\n"]),
            "```text\nx ```\n    ```\n```\n"
        );
        // A fence-like last line without a newline.
        assert_eq!(
            fenced_stream(3, &["```"]),
            "```text\n```\n````text\n```\n````\n"
        );
    }

    #[test]
    fn code_spans_and_literals() {
        assert_eq!(code_span("a`b", false), "``a`b``");
        assert_eq!(code_span("`x`", false), "`` `x` ``");
        assert_eq!(code_span("a|b", true), "`a\\|b`");
        assert_eq!(literal("<b>*x*</b>"), "\\<b\\>\\*x\\*\\</b\\>");
    }

    #[test]
    fn open_code_in_text_is_closed_at_its_end() {
        let mut m = Markdown::new(Vec::new());
        m.text("Here:\n```rust\nfn main() {").unwrap();
        m.text_close().unwrap();
        assert_eq!(
            String::from_utf8(m.w).unwrap(),
            "Here:\n```rust\nfn main() {\n```\n"
        );
    }
}
