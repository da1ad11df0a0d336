//! The Markdown of a transcript's prose (assistant text, thinking, prompts,
//! snapshots) rendered as HTML for `--to html` (docs/formats.md#html).
//!
//! The parser is pulldown-cmark with GitHub's tables, strikethrough and task
//! lists. The HTML is written here, not by the parser's own writer, because
//! every choice that keeps the page safe and its outline whole is ours:
//!
//! - raw HTML in the input (blocks and inline tags) is shown as escaped text,
//!   never passed through, so `<script>` or `<img onerror>` stays inert;
//! - a link becomes `<a href>` only for `http:`, `https:`, `mailto:` or a
//!   relative or fragment URL, always with `rel="noopener noreferrer"`; with
//!   any other scheme (`javascript:`, `data:`, `file:`…) the link's text is
//!   followed by its URL, both as text;
//! - an image is never loaded (the page's policy forbids it anyway): it
//!   becomes a link to its URL, named by its alt text;
//! - a heading sits below the turn's: the agent's `#` is one level under
//!   `base`, clamped at `<h6>`;
//! - a fenced code block keeps its language (`class="language-x"`) and is
//!   coloured by [`super::highlight`].

use std::io::{self, Write};

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::escape_html_to as escape_to;
use super::highlight;
use crate::output::fences::Fence;

/// The Markdown extensions the renderer reads (GitHub's).
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Render `md` as HTML to `w`; the text's headings start one level below
/// `base` (the level of the heading it sits under). `breaks`: a line break
/// inside a paragraph is kept (`<br>`), as for typed prompts, instead of
/// being a space as CommonMark reads it.
pub fn render(w: &mut impl Write, md: &str, base: u8, breaks: bool) -> io::Result<()> {
    let mut r = Renderer {
        w,
        base,
        breaks,
        code: None,
        aligns: Vec::new(),
        cell: 0,
        in_head: false,
        html_nl: false,
        links: Vec::new(),
    };
    for event in Parser::new_ext(md, options()) {
        r.event(event)?;
    }
    Ok(())
}

/// Where a Markdown text that grows past a buffer's cap can be cut: the
/// start of its last top-level block (every block before it is complete),
/// or `None` when the whole text is one block.
pub fn last_block_start(md: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut last = None;
    for (event, range) in Parser::new_ext(md, options()).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 && range.start > 0 {
                    last = Some(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 && range.start > 0 => last = Some(range.start),
            _ => {}
        }
    }
    last
}

/// A code block being collected: its label and content.
struct Code {
    fence: Option<Fence>,
    text: String,
}

struct Renderer<'w, W: Write> {
    w: &'w mut W,
    base: u8,
    breaks: bool,
    /// The code block being collected (written whole, to be highlighted).
    code: Option<Code>,
    /// The open table's column alignments.
    aligns: Vec<Alignment>,
    /// The next cell's column.
    cell: usize,
    /// In the table's head row.
    in_head: bool,
    /// A raw HTML block's line break not yet written.
    html_nl: bool,
    /// For each open link or image: `None` when it became an `<a>`, else
    /// the URL to show as text after it.
    links: Vec<Option<String>>,
}

/// True for a URL that may become a link: `http:`, `https:` or `mailto:`,
/// or no scheme at all (relative, fragment). Browsers ignore tabs and line
/// breaks inside a URL and leading blanks, so those are not let split a
/// scheme (`java\tscript:`).
pub fn safe_url(url: &str) -> bool {
    let squeezed: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect();
    let end = squeezed.find(['/', '?', '#']).unwrap_or(squeezed.len());
    match squeezed[..end].find(':') {
        None => true,
        Some(i) => {
            let scheme = squeezed[..i].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
    }
}

impl<W: Write> Renderer<'_, W> {
    fn put(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())
    }

    fn esc(&mut self, s: &str) -> io::Result<()> {
        escape_to(self.w, s)
    }

    fn heading(&self, level: pulldown_cmark::HeadingLevel) -> u8 {
        (self.base + level as u8).min(6)
    }

    fn event(&mut self, event: Event<'_>) -> io::Result<()> {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(t) => code.text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let code = self.code.take().unwrap_or(Code {
                        fence: None,
                        text: String::new(),
                    });
                    self.code_block(&code)?;
                }
                _ => {}
            }
            return Ok(());
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.esc(&t),
            Event::Code(t) => {
                self.put("<code>")?;
                self.esc(&t)?;
                self.put("</code>")
            }
            // Raw HTML from the input: shown, never obeyed. A block's last
            // line break is left out (its `<p>` keeps the others).
            Event::Html(t) => {
                if std::mem::take(&mut self.html_nl) {
                    self.put("\n")?;
                }
                self.html_nl = t.ends_with('\n');
                self.esc(t.strip_suffix('\n').unwrap_or(&t))
            }
            Event::InlineHtml(t) => self.esc(&t),
            // Not enabled; written as their source would read.
            Event::InlineMath(t) | Event::DisplayMath(t) | Event::FootnoteReference(t) => {
                self.esc(&t)
            }
            Event::SoftBreak if self.breaks => self.put("<br>\n"),
            Event::SoftBreak => self.put("\n"),
            Event::HardBreak => self.put("<br>\n"),
            Event::Rule => self.put("<hr>\n"),
            // A glyph, not a form control: the page has no forms.
            Event::TaskListMarker(done) => self.put(if done {
                "<span class=\"task\">\u{2611}</span> "
            } else {
                "<span class=\"task\">\u{2610}</span> "
            }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) -> io::Result<()> {
        match tag {
            Tag::Paragraph => self.put("<p>"),
            Tag::Heading { level, .. } => {
                let h = self.heading(level);
                self.put(&format!("<h{h}>"))
            }
            Tag::BlockQuote(_) => self.put("<blockquote>\n"),
            Tag::CodeBlock(kind) => {
                let fence = match kind {
                    CodeBlockKind::Fenced(info) => Some(Fence::from_info(info.trim())),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(Code {
                    fence,
                    text: String::new(),
                });
                Ok(())
            }
            Tag::HtmlBlock => self.put("<p class=\"raw\">"),
            Tag::List(Some(1)) => self.put("<ol>\n"),
            Tag::List(Some(n)) => self.put(&format!("<ol start=\"{n}\">\n")),
            Tag::List(None) => self.put("<ul>\n"),
            Tag::Item => self.put("<li>"),
            Tag::Table(aligns) => {
                self.aligns = aligns;
                self.put("<div class=\"tablewrap\"><table>\n")
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                self.put("<thead><tr>")
            }
            Tag::TableRow => {
                self.cell = 0;
                self.put("<tr>")
            }
            Tag::TableCell => {
                let name = if self.in_head { "th" } else { "td" };
                let class = match self.aligns.get(self.cell) {
                    Some(Alignment::Right) => " class=\"ar\"",
                    Some(Alignment::Center) => " class=\"ac\"",
                    _ => "",
                };
                self.cell += 1;
                self.put(&format!("<{name}{class}>"))
            }
            Tag::Emphasis => self.put("<em>"),
            Tag::Strong => self.put("<strong>"),
            Tag::Strikethrough => self.put("<del>"),
            Tag::Superscript => self.put("<sup>"),
            Tag::Subscript => self.put("<sub>"),
            Tag::Link {
                dest_url, title, ..
            } => self.link_open(&dest_url, &title, false),
            Tag::Image {
                dest_url, title, ..
            } => self.link_open(&dest_url, &title, true),
            // Not enabled (footnotes, definition lists, metadata).
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.put("<div>"),
        }
    }

    fn end(&mut self, tag: TagEnd) -> io::Result<()> {
        match tag {
            TagEnd::Paragraph => self.put("</p>\n"),
            TagEnd::Heading(level) => {
                let h = self.heading(level);
                self.put(&format!("</h{h}>\n"))
            }
            TagEnd::BlockQuote(_) => self.put("</blockquote>\n"),
            TagEnd::CodeBlock => Ok(()),
            TagEnd::HtmlBlock => {
                self.html_nl = false;
                self.put("</p>\n")
            }
            TagEnd::List(true) => self.put("</ol>\n"),
            TagEnd::List(false) => self.put("</ul>\n"),
            TagEnd::Item => self.put("</li>\n"),
            TagEnd::Table => self.put("</tbody></table></div>\n"),
            TagEnd::TableHead => {
                self.in_head = false;
                self.put("</tr></thead>\n<tbody>\n")
            }
            TagEnd::TableRow => self.put("</tr>\n"),
            TagEnd::TableCell => self.put(if self.in_head { "</th>" } else { "</td>" }),
            TagEnd::Emphasis => self.put("</em>"),
            TagEnd::Strong => self.put("</strong>"),
            TagEnd::Strikethrough => self.put("</del>"),
            TagEnd::Superscript => self.put("</sup>"),
            TagEnd::Subscript => self.put("</sub>"),
            TagEnd::Link | TagEnd::Image => self.link_close(),
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.put("</div>"),
        }
    }

    /// A link or image opens: `<a>` for a safe URL, else a `<span>` whose
    /// text is followed by the URL as text (at [`Self::link_close`]).
    fn link_open(&mut self, url: &str, title: &str, image: bool) -> io::Result<()> {
        let safe = safe_url(url);
        self.links.push((!safe).then(|| url.to_owned()));
        if safe {
            self.put("<a href=\"")?;
            self.esc(url)?;
            self.put("\" rel=\"noopener noreferrer\"")?;
            if !title.is_empty() {
                self.put(" title=\"")?;
                self.esc(title)?;
                self.put("\"")?;
            }
            self.put(if image { " class=\"image\">" } else { ">" })
        } else {
            // The URL follows the link's text as text, so the reader still
            // sees where it pointed.
            self.put("<span class=\"link\">")
        }
    }

    fn link_close(&mut self) -> io::Result<()> {
        match self.links.pop() {
            Some(Some(url)) => {
                self.put(" (")?;
                self.esc(&url)?;
                self.put(")</span>")
            }
            _ => self.put("</a>"),
        }
    }

    fn code_block(&mut self, code: &Code) -> io::Result<()> {
        let (label, language) = match &code.fence {
            Some(Fence::Code { language }) => (language.as_str(), language.as_str()),
            // A citation of a file: named by its path, coloured by its extension.
            Some(Fence::Reference { path, .. }) => (
                path.as_str(),
                path.rsplit_once('.').map_or("", |(_, ext)| ext),
            ),
            None => ("", ""),
        };
        let text = code.text.strip_suffix('\n').unwrap_or(&code.text);
        if label.is_empty() {
            self.put("<pre class=\"code\"><code>")?;
        } else {
            self.put("<pre class=\"code\" data-lang=\"")?;
            self.esc(label)?;
            self.put("\"><code")?;
            if !language.is_empty() {
                self.put(" class=\"language-")?;
                self.esc(language)?;
                self.put("\"")?;
            }
            self.put(">")?;
        }
        highlight::code_to(self.w, language, text)?;
        self.put("</code></pre>\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(md: &str) -> String {
        let mut out = Vec::new();
        render(&mut out, md, 2, false).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn urls_with_other_schemes_are_not_links() {
        for ok in [
            "https://x.org/a",
            "http://x",
            "mailto:a@b.c",
            "#top",
            "docs/a.md",
            "/abs",
            "a/b:c",
            "?q=1",
        ] {
            assert!(safe_url(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "java\tscript:alert(1)",
            " javascript:x",
            "data:text/html,x",
            "vbscript:x",
            "file:///etc/passwd",
        ] {
            assert!(!safe_url(bad), "{bad}");
        }
    }

    #[test]
    fn raw_html_is_text() {
        assert_eq!(
            html("<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)>"),
            "<p class=\"raw\">&lt;script&gt;alert(1)&lt;/script&gt;</p>\n\
             <p>hi &lt;img src=x onerror=alert(1)&gt;</p>\n"
        );
    }

    #[test]
    fn last_block_start_is_after_complete_blocks() {
        assert_eq!(last_block_start("one"), None);
        assert_eq!(last_block_start("one\n\ntwo\n\n```\nthr"), Some(10));
        assert_eq!(last_block_start("a\n\n---\n"), Some(3));
    }
}
