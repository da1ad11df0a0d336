//! `--to html`: a transcript as one self-contained HTML page
//! (docs/formats.md#html).
//!
//! The page needs nothing but itself: its style is inline, it has no script
//! at all, and its Content-Security-Policy forbids every fetch (`default-src
//! 'none'`), so a page opened from a shared archive makes no request and,
//! should anything from the stream ever get past the escaping, it would
//! still not run. Every character from the stream is escaped (`&`, `<`, `>`,
//! quotes); control characters and bidi controls reach this markup already
//! made visible (`\u{1b}`, `\u{202e}`) by the driver.
//!
//! The page is written as the events arrive. Its parts that only the end of
//! a session knows, the summary and the table of contents by turn, are
//! written after the session's turns and placed above them by the style
//! (a column flexbox with `order`), so nothing is held back but one short
//! label per turn. Thinking, tool calls, summaries and unknown records are
//! `<details>` blocks, closed on screen and open in print.

use std::io::{self, Write};

use super::omitted_note;
use super::{
    Body, CallHead, Clip, Ending, Markup, Note, Outcome, SummaryCells, Tally,
    escape_html_to as escape_to,
};
use super::{highlight, html_md};
use crate::event::figures::fmt_ms;
use crate::event::{OutStream, Session, SessionStart};

/// Output of a call is cut at this many bytes: a page of a 100 MB session
/// must still open and scroll in a browser.
pub const OUTPUT_CAP_BYTES: usize = 32 * 1024;

/// A table-of-contents entry shows at most this many characters of its prompt.
const TOC_LABEL_CHARS: usize = 80;

/// At most this many turns per session get their own entry in the table
/// of contents (the rest are counted), so its memory stays bounded.
const TOC_ENTRIES: usize = 10_000;

/// A summary shows at most this many characters of a call's key argument.
const SUMMARY_ARG_CHARS: usize = 120;

/// The Markdown of one message is rendered when the message is complete;
/// past this many bytes, the complete blocks held so far are rendered and
/// let go, so a message's memory stays bounded.
pub const MARKDOWN_HOLD_BYTES: usize = 256 * 1024;

/// The level of a turn's heading (`<h2>`): the agent's `#` is one below.
const TURN_LEVEL: u8 = 2;

/// The page's style: fluid width, light and dark by the reader's setting,
/// collapsed blocks opened for print.
const STYLE: &str = "\
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--mute:#59636e;--line:#d1d9e0;--code:#f6f8fa;--user:#ddf4ff;--err:#cf222e;--errbg:#ffebe9;--warn:#9a6700;--warnbg:#fff8c5;--ok:#1a7f37;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mute:#9198a1;--line:#3d444d;--code:#151b23;--user:#0c2d6b;--err:#ff7b72;--errbg:#3c1618;--warn:#d29922;--warnbg:#3b2e0a;--ok:#3fb950;--link:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,\"Segoe UI\",sans-serif;overflow-wrap:anywhere}
main{max-width:60rem;margin:0 auto;padding:1rem}
a{color:var(--link)}
section.session{display:flex;flex-direction:column;margin-bottom:3rem}
section.session>header{order:-3}
section.session>.summary{order:-2}
section.session>nav{order:-1}
h1{font-size:1.5rem;margin:.5rem 0}
h2{font-size:1.15rem;margin:1.5rem 0 .5rem;padding-top:.5rem;border-top:1px solid var(--line)}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:0;color:var(--mute)}
dl.meta dt{font-weight:600}
dl.meta dd{margin:0}
nav ol{margin:.25rem 0;padding-left:2rem}
.tablewrap{overflow-x:auto}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid var(--line);padding:.2rem .6rem;text-align:left;white-space:nowrap}
.user{background:var(--user);border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
.user>b{display:block;font-size:.85rem}
.md{margin:.5rem 0}
.md>:first-child{margin-top:0}
.md>:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md blockquote{margin:.5rem 0}
.md h3,.md h4,.md h5,.md h6{margin:1rem 0 .25rem;font-size:1rem}
.md h3{font-size:1.1rem}
.md blockquote{margin-left:0;padding-left:.75rem;border-left:4px solid var(--line);color:var(--mute)}
.md th,.md td{white-space:normal}
.md :not(pre)>code{background:var(--code);border-radius:4px;padding:.1em .3em}
.md .ar{text-align:right}
.md .ac{text-align:center}
.md .raw{white-space:pre-wrap}
.md .link{color:var(--mute)}
pre[data-lang]::before{content:attr(data-lang);float:right;margin-left:1rem;color:var(--mute);font-size:.75rem}
pre,code{font:.875rem/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;overflow-x:auto;white-space:pre-wrap;margin:.5rem 0}
pre.err{border-color:var(--err)}
details{border:1px solid var(--line);border-radius:6px;margin:.5rem 0;padding:0 .75rem}
details[open]{padding-bottom:.5rem}
summary{cursor:pointer;padding:.35rem 0;color:var(--mute)}
summary b{color:var(--fg)}
.outcome{margin:.25rem 0}
.ok{color:var(--ok)}
.fail{color:var(--err)}
.cut{color:var(--mute);font-style:italic}
.note{border-left:4px solid var(--err);background:var(--errbg);padding:.4rem .75rem;margin:.5rem 0;border-radius:0 6px 6px 0}
.note.warning{border-color:var(--warn);background:var(--warnbg)}
@media print{body{font-size:11pt}main{max-width:none;padding:0}nav{display:none}details{break-inside:auto}details::details-content{content-visibility:visible;display:block;height:auto}summary{color:var(--fg)}pre{white-space:pre-wrap}}
";

/// The page's head, up to the title (which names the first session).
const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"generator\" content=\"cstream\">\n<title>";

/// Writes the HTML.
pub struct Html<W: Write> {
    w: W,
    /// `<head>` written.
    headed: bool,
    /// A session's `<section>` is open.
    section: bool,
    /// The open session's ordinal (for the turns' anchors).
    ordinal: usize,
    /// The turns of the open session: number and the start of its prompt.
    toc: Vec<(usize, String)>,
    /// Turns past [`TOC_ENTRIES`].
    toc_more: usize,
    /// The Markdown of the open text or thinking block, rendered at its end.
    md: String,
    /// A call's live output block is open.
    output: bool,
}

impl<W: Write> Html<W> {
    pub fn new(w: W) -> Self {
        Html {
            w,
            headed: false,
            section: false,
            ordinal: 0,
            toc: Vec::new(),
            toc_more: 0,
            md: String::new(),
            output: false,
        }
    }

    fn put(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())
    }

    /// Text from the stream, escaped.
    fn esc(&mut self, s: &str) -> io::Result<()> {
        escape_to(&mut self.w, s)
    }

    /// The head of the page, with `title`.
    fn head(&mut self, title: &str) -> io::Result<()> {
        if self.headed {
            return Ok(());
        }
        self.headed = true;
        self.put(HEAD)?;
        self.esc(title)?;
        self.put("</title>\n<style>\n")?;
        self.put(STYLE)?;
        self.put(highlight::STYLE)?;
        self.put("</style>\n</head>\n<body>\n<main>\n")
    }

    /// A piece of Markdown (assistant text, thinking), held until its
    /// block ends: Markdown is only read right whole (a table's head, a
    /// list's looseness, a code block's end come later than its start).
    fn markdown(&mut self, text: &str) -> io::Result<()> {
        self.md.push_str(text);
        if self.md.len() > MARKDOWN_HOLD_BYTES {
            // Render the blocks that are complete; one block larger than the
            // hold is rendered as far as it came, and its rest continues as
            // a block of its own.
            let cut = html_md::last_block_start(&self.md).unwrap_or(self.md.len());
            html_md::render(&mut self.w, &self.md[..cut], TURN_LEVEL, false)?;
            self.md.drain(..cut);
        }
        Ok(())
    }

    /// The held Markdown rendered, and the block's `<div>` closed.
    fn markdown_end(&mut self) -> io::Result<()> {
        html_md::render(&mut self.w, &self.md, TURN_LEVEL, false)?;
        self.md.clear();
        if self.md.capacity() > MARKDOWN_HOLD_BYTES {
            self.md.shrink_to(MARKDOWN_HOLD_BYTES);
        }
        self.put("</div>\n")
    }

    /// A whole text in a `<pre>` (`class`: its kind), with a note where
    /// its middle was cut.
    fn pre(&mut self, class: &str, c: Clip<'_>) -> io::Result<()> {
        self.put("<pre class=\"")?;
        self.put(class)?;
        // A parser drops one line break right after `<pre>`; this is it,
        // so output that starts with a blank line keeps it.
        self.put("\">\n")?;
        self.esc(c.head)?;
        if c.omitted > 0 {
            self.put("\n<span class=\"cut\">")?;
            self.esc(&omitted_note(c.omitted))?;
            self.put("</span>\n")?;
            self.esc(c.tail)?;
        }
        self.put("</pre>\n")
    }

    /// Close the open session: its summary's table is written by
    /// `summary`; here the table of contents and the section end.
    fn section_end(&mut self) -> io::Result<()> {
        if !self.section {
            return Ok(());
        }
        self.section = false;
        if !self.toc.is_empty() {
            let ordinal = self.ordinal;
            self.put("<nav aria-label=\"Turns\"><b>Turns</b>\n<ol>\n")?;
            for (n, label) in std::mem::take(&mut self.toc) {
                let mut line = format!("<li><a href=\"#s{ordinal}-t{n}\">Turn {n}</a>");
                if !label.is_empty() {
                    line.push_str(" · ");
                }
                self.put(&line)?;
                self.esc(&label)?;
                self.put("</li>\n")?;
            }
            self.put("</ol>\n")?;
            if self.toc_more > 0 {
                let more = format!("<p>… and {} more turns</p>\n", self.toc_more);
                self.put(&more)?;
            }
            self.put("</nav>\n")?;
        }
        self.toc_more = 0;
        self.put("</section>\n")
    }
}

/// The first `max` characters of the first non-blank line of `s`, `…`
/// marking a cut.
fn label(s: &str, max: usize) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

impl<W: Write> Markup for Html<W> {
    const OUTPUT_CAP_BYTES: usize = OUTPUT_CAP_BYTES;

    fn epilogue(&mut self) -> io::Result<()> {
        self.head("cstream transcript")?;
        self.section_end()?;
        self.put("</main>\n</body>\n</html>\n")
    }

    fn session(&mut self, s: &Session, st: &SessionStart, started: Option<i64>) -> io::Result<()> {
        let title = match &st.model {
            Some(m) => format!("Session {} · {} · {m}", s.ordinal, st.dialect),
            None => format!("Session {} · {}", s.ordinal, st.dialect),
        };
        self.head(&title)?;
        // A second start within one session (a resumed stream) gets a
        // header of its own in the same section.
        if !self.section {
            self.section = true;
            self.ordinal = s.ordinal;
            self.toc.clear();
            self.toc_more = 0;
            let open = format!(
                "<section class=\"session\" id=\"s{}\" aria-label=\"Session {}\">\n",
                s.ordinal, s.ordinal
            );
            self.put(&open)?;
        }
        self.put("<header>\n<h1>")?;
        match st.title.as_deref() {
            Some(t) => self.esc(&format!("Session {} · {}: {t}", s.ordinal, st.dialect))?,
            None => self.esc(&format!("Session {} · {}", s.ordinal, st.dialect))?,
        }
        self.put("</h1>\n<dl class=\"meta\">\n")?;
        let when = started.map(|ms| crate::time::iso8601(ms.div_euclid(1000)));
        let rows = [
            ("Agent", Some(st.dialect.as_ref())),
            ("Model", st.model.as_deref()),
            ("Started", when.as_deref()),
            ("Directory", st.cwd.as_deref()),
            ("Session", Some(s.id.as_str())),
        ];
        for (name, value) in rows {
            self.put("<dt>")?;
            self.put(name)?;
            self.put("</dt><dd>")?;
            self.esc(value.unwrap_or("—"))?;
            self.put("</dd>\n")?;
        }
        self.put("</dl>\n</header>\n")
    }

    fn turn(&mut self, n: usize) -> io::Result<()> {
        if self.toc.len() < TOC_ENTRIES {
            self.toc.push((n, String::new()));
        } else {
            self.toc_more += 1;
        }
        let h = format!("<h2 id=\"s{}-t{n}\">Turn {n}</h2>\n", self.ordinal);
        self.put(&h)
    }

    fn prompt(&mut self, text: &str) -> io::Result<()> {
        if let Some((_, l)) = self.toc.last_mut()
            && l.is_empty()
            && self.toc_more == 0
        {
            *l = label(text, TOC_LABEL_CHARS);
        }
        self.put("<div class=\"user\"><b>User</b><div class=\"md\">")?;
        // Typed text: its line breaks are the user's.
        html_md::render(&mut self.w, text, TURN_LEVEL, true)?;
        self.put("</div></div>\n")
    }

    fn text_open(&mut self) -> io::Result<()> {
        self.put("<div class=\"md\">")
    }

    fn text(&mut self, text: &str) -> io::Result<()> {
        self.markdown(text)
    }

    fn text_close(&mut self) -> io::Result<()> {
        self.markdown_end()
    }

    fn thinking_open(&mut self) -> io::Result<()> {
        self.put("<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"md\">")
    }

    fn thinking(&mut self, text: &str) -> io::Result<()> {
        self.markdown(text)
    }

    fn thinking_close(&mut self, duration_ms: Option<u64>) -> io::Result<()> {
        self.markdown_end()?;
        if let Some(d) = duration_ms {
            self.put(&format!(
                "<p class=\"cut\">Thought for {}.</p>\n",
                fmt_ms(d)
            ))?;
        }
        self.put("</details>\n")
    }

    fn thought(&mut self, duration_ms: u64) -> io::Result<()> {
        self.put(&format!(
            "<p class=\"cut\">Thought for {}.</p>\n",
            fmt_ms(duration_ms)
        ))
    }

    fn call_open(&mut self, head: &CallHead<'_>, body: Option<Body<'_>>) -> io::Result<()> {
        self.put("<details class=\"call\"><summary><b>")?;
        self.esc(head.name)?;
        self.put("</b>")?;
        if let Some(arg) = head.arg {
            self.put(" <code>")?;
            self.esc(&label(&arg.replace(['\n', '\r'], " "), SUMMARY_ARG_CHARS))?;
            self.put("</code>")?;
        }
        if head.continued {
            self.put(" (continued)")?;
        }
        self.put("</summary>\n")?;
        match body {
            Some(Body::Command(command, cwd)) => {
                self.pre("cmd", super::clip(command, OUTPUT_CAP_BYTES))?;
                if let Some(cwd) = cwd {
                    self.put("<p>in <code>")?;
                    self.esc(cwd)?;
                    self.put("</code></p>\n")?;
                }
            }
            Some(Body::Arguments(args)) => self.pre("args", args)?,
            None => {}
        }
        Ok(())
    }

    fn call_output(&mut self, _stream: OutStream, text: &str) -> io::Result<()> {
        if !self.output {
            self.output = true;
            self.put("<pre class=\"out\">\n")?;
        }
        self.esc(text)
    }

    fn call_close(&mut self, end: Option<&Ending<'_>>, omitted: u64) -> io::Result<()> {
        if self.output {
            self.output = false;
            if omitted > 0 {
                self.put("\n<span class=\"cut\">")?;
                self.esc(&omitted_note(omitted))?;
                self.put("</span>")?;
            }
            self.put("</pre>\n")?;
        }
        match end {
            Some(e) => {
                for (class, part) in [("out", e.output), ("diff", e.patch), ("result", e.result)] {
                    if let Some(c) = part {
                        self.pre(class, c)?;
                    }
                }
                let (class, glyph) = if e.cancelled {
                    ("cut", "⊘")
                } else if e.outcome_unknown {
                    // Not a verdict: the source kept the call, not its result.
                    ("cut", "?")
                } else if e.ok {
                    ("ok", "✓")
                } else {
                    ("fail", "✗")
                };
                self.put(&format!("<p class=\"outcome {class}\">{glyph} "))?;
                self.esc(&e.outcome)?;
                self.put("</p>\n")?;
            }
            None => self.put("<p class=\"cut\">Still running; continued below.</p>\n")?,
        }
        self.put("</details>\n")
    }

    fn note(&mut self, kind: Note, title: &str, detail: Option<&str>) -> io::Result<()> {
        self.put(match kind {
            Note::Error => "<div class=\"note error\" role=\"note\"><b>",
            Note::Warning => "<div class=\"note warning\" role=\"note\"><b>",
        })?;
        self.esc(title)?;
        self.put("</b>\n")?;
        if let Some(d) = detail.filter(|d| !d.trim().is_empty()) {
            let c = super::clip(d.trim_end_matches('\n'), OUTPUT_CAP_BYTES);
            self.pre("err", c)?;
        }
        self.put("</div>\n")
    }

    fn snapshot(&mut self, title: &str, text: Option<&str>) -> io::Result<()> {
        self.put("<details class=\"snapshot\"><summary>")?;
        self.esc(title)?;
        self.put("</summary>\n<div class=\"md\">")?;
        // Summaries and plans are lists written line by line: their line
        // breaks are kept.
        if let Some(t) = text {
            html_md::render(&mut self.w, t, TURN_LEVEL, true)?;
        }
        self.put("</div>\n")?;
        self.put("</details>\n")
    }

    fn unknown(&mut self, raw: Clip<'_>) -> io::Result<()> {
        self.put("<details class=\"unknown\"><summary>Unknown event</summary>\n")?;
        self.pre("json", raw)?;
        self.put("</details>\n")
    }

    fn summary(&mut self, t: &Tally) -> io::Result<()> {
        let outcome = t.outcome();
        let class = match outcome {
            Outcome::Ok => " class=\"ok\"",
            Outcome::Failed(_) => " class=\"fail\"",
            Outcome::Incomplete => "",
        };
        let mut table = String::from(
            "<div class=\"summary\" role=\"region\" aria-label=\"Summary\"><div class=\"tablewrap\"><table>\n<tr>",
        );
        for heading in SummaryCells::HEADINGS {
            table.push_str(&format!("<th>{heading}</th>"));
        }
        table.push_str(&format!("</tr>\n<tr><td{class}>{}</td>", outcome.label()));
        for cell in t.cells().in_order() {
            table.push_str(&format!("<td>{cell}</td>"));
        }
        table.push_str("</tr>\n</table></div>\n");
        self.put(&table)?;
        self.outcome_note(&outcome)?;
        self.put("</div>\n")?;
        self.section_end()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The index's own rules, after the pages' style: the table takes the
/// page's width and no more, a long name wraps anywhere in its cell, and
/// the outcome wraps between words, so the outcome column stays on screen
/// on a phone and beside paths of any length.
const INDEX_STYLE: &str = "\
table.index{width:100%}
table.index td{white-space:normal}
table.index td:first-child{overflow-wrap:anywhere;word-break:break-word}
table.index td:nth-child(2){text-align:right}
";

/// One page of a directory of pages, for [`write_index`].
pub struct IndexEntry<'a> {
    /// The page, relative to the index, with `/` between its parts.
    pub href: &'a str,
    /// The input file it was made from, as the user named it: its path
    /// under the directory argument it was found in, or its file name.
    pub input: &'a str,
    /// Sessions in it, and of those the failed and the unfinished ones.
    pub sessions: u64,
    pub failed: u64,
    pub incomplete: u64,
}

/// `s` as a relative URL path: unreserved bytes and `/` kept, the rest
/// percent-encoded (a file name may hold `#`, `?`, `%`, spaces or quotes).
fn href_to(w: &mut impl Write, s: &str) -> io::Result<()> {
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            w.write_all(&[b])?;
        } else {
            write!(w, "%{b:02X}")?;
        }
    }
    Ok(())
}

/// The index of a directory of pages (`--to html --output-dir`): one row
/// per page in input order, linking to it, with its sessions' outcomes.
/// Same head, style and policy as the pages: no script, no request.
pub fn write_index(w: &mut impl Write, title: &str, pages: &[IndexEntry<'_>]) -> io::Result<()> {
    w.write_all(HEAD.as_bytes())?;
    escape_to(w, title)?;
    w.write_all(b"</title>\n<style>\n")?;
    w.write_all(STYLE.as_bytes())?;
    w.write_all(INDEX_STYLE.as_bytes())?;
    w.write_all(b"</style>\n</head>\n<body>\n<main>\n<h1>")?;
    escape_to(w, title)?;
    let (mut sessions, mut bad) = (0, 0);
    for p in pages {
        sessions += p.sessions;
        bad += p.failed + p.incomplete;
    }
    writeln!(
        w,
        "</h1>\n<p>{} pages, {sessions} sessions, {bad} failed or unfinished.</p>",
        pages.len()
    )?;
    w.write_all(
        b"<div class=\"tablewrap\"><table class=\"index\">\n<thead><tr><th>Page</th><th>Sessions</th><th>Outcome</th></tr></thead>\n<tbody>\n",
    )?;
    for p in pages {
        w.write_all(b"<tr><td><a href=\"")?;
        href_to(w, p.href)?;
        w.write_all(b"\">")?;
        escape_to(w, p.input)?;
        write!(w, "</a></td><td>{}</td><td", p.sessions)?;
        if p.failed + p.incomplete == 0 {
            w.write_all(b" class=\"ok\">\xE2\x9C\x93 completed")?;
        } else {
            write!(
                w,
                " class=\"fail\">\u{2717} {} failed, {} unfinished",
                p.failed, p.incomplete
            )?;
        }
        w.write_all(b"</td></tr>\n")?;
    }
    w.write_all(b"</tbody>\n</table></div>\n</main>\n</body>\n</html>\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_take_the_first_line() {
        assert_eq!(label("\n  fix the bug\nplease", 80), "fix the bug");
        assert_eq!(label("abcdef", 3), "abc…");
    }

    #[test]
    fn assistant_text_is_rendered_whole_at_its_end() {
        let mut h = Html::new(Vec::new());
        h.text_open().unwrap();
        // A table's delimiter row arrives after its head row.
        h.text("| a | b |\n").unwrap();
        // A language no grammar knows: the code is only escaped.
        h.text("|---|--:|\n| 1 | 2 |\n\n```zzz\necho '<b>'\n")
            .unwrap();
        h.text_close().unwrap();
        assert_eq!(
            String::from_utf8(h.w).unwrap(),
            "<div class=\"md\"><div class=\"tablewrap\"><table>\n<thead><tr><th>a</th><th class=\"ar\">b</th></tr></thead>\n\
             <tbody>\n<tr><td>1</td><td class=\"ar\">2</td></tr>\n</tbody></table></div>\n\
             <pre class=\"code\" data-lang=\"zzz\"><code class=\"language-zzz\">echo &#39;&lt;b&gt;&#39;</code></pre>\n</div>\n"
        );
    }

    #[test]
    fn a_long_message_is_rendered_block_by_block() {
        let mut h = Html::new(Vec::new());
        h.text_open().unwrap();
        let para = format!("{}\n\n", "word ".repeat(1000));
        let mut most = 0;
        for _ in 0..200 {
            h.text(&para).unwrap();
            most = most.max(h.md.len());
        }
        h.text_close().unwrap();
        assert!(most <= MARKDOWN_HOLD_BYTES + para.len(), "{most}");
        let out = String::from_utf8(h.w).unwrap();
        assert_eq!(out.matches("<p>").count(), 200);
    }
}
