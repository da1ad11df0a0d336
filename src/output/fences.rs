//! An incremental markdown segmenter: assistant text in, in pieces of any
//! size, and out come prose and fenced code blocks, as soon as each byte's
//! role is known (the `documents` formats make each code block a document of
//! its own, live).
//!
//! Only fenced code blocks are recognised, following CommonMark: a fence is
//! a line of at least three backticks or tildes indented by at most three
//! spaces (four or a tab make an indented line, which stays prose); a
//! backtick fence's info string may not contain a backtick; the block ends at
//! a line of the same character, at least as long as the opening one, again
//! indented by at most three spaces and followed only by spaces or tabs; an
//! opening fence indented by N spaces removes up to N spaces from each
//! content line; a block that is never closed runs to the end of the text
//! ([`Segmenter::finish`]). Fences inside block quotes or list items are not
//! looked for: such text stays prose, which is never wrong, only less split.
//!
//! The info string decides the kind of block: `startLine:endLine:filepath`
//! (Cursor's code citations) is a [`Fence::Reference`], anything else a
//! [`Fence::Code`] whose language is the info string's first word.
//!
//! A block's content is its lines without the fences and without the final
//! line break (`"a\nb"` for two lines), so each line break is sent only once
//! the next content line has begun. The start of a line is held back only
//! while it could still be a fence; everything else passes straight through.

use memchr::memchr;

/// What a fence's info string says the block is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fence {
    /// A code block; `language` is the info string's first word (`""` when untagged).
    Code { language: String },
    /// A `startLine:endLine:filepath` citation of existing code.
    Reference {
        path: String,
        start_line: u64,
        end_line: u64,
    },
}

impl Fence {
    /// Classify an info string (already trimmed).
    pub fn from_info(info: &str) -> Fence {
        let mut parts = info.splitn(3, ':');
        if let (Some(a), Some(b), Some(path)) = (parts.next(), parts.next(), parts.next()) {
            let num = |s: &str| {
                (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| s.parse::<u64>().ok())
                    .flatten()
            };
            if let (Some(start_line), Some(end_line)) = (num(a), num(b))
                && !path.trim().is_empty()
            {
                return Fence::Reference {
                    path: path.trim().to_owned(),
                    start_line,
                    end_line,
                };
            }
        }
        Fence::Code {
            language: info.split_whitespace().next().unwrap_or("").to_owned(),
        }
    }
}

/// One step of the segmented text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg<'t> {
    /// Markdown outside code blocks (never empty).
    Prose(&'t str),
    /// A code block begins.
    Open(Fence),
    /// Content of the open code block (never empty).
    Code(&'t str),
    /// The open code block ends.
    Close,
}

/// Where the segmenter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Prose,
    /// Inside a code block opened by `len` × `ch`, indented by `indent` spaces.
    Code {
        ch: u8,
        len: usize,
        indent: usize,
    },
}

/// Where the segmenter is within the current line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// At the line's start, after `spaces` (≤ 3) held spaces.
    Start { spaces: usize },
    /// After `count` fence characters `ch` (held).
    Run { ch: u8, count: usize },
    /// Prose: after an opening fence, in its info string (held to the line end).
    Info { ch: u8, count: usize },
    /// Code: after a possible closing fence, in its trailing spaces (held).
    Trailing { count: usize },
    /// The line's role is decided; its bytes pass through.
    Body,
    /// Code: a `\r` ended the last piece; a `\n` next makes it a line break.
    BodyCr,
}

/// The incremental segmenter. Feed text with [`push`](Self::push), end it
/// with [`finish`](Self::finish); both report what they found through `out`.
#[derive(Debug)]
pub struct Segmenter {
    mode: Mode,
    line: Line,
    /// The undecided start of the current line. Bytes, because a character
    /// of an info string arrives byte by byte; it is only read at an ASCII
    /// byte or at the end of a piece, where it is whole UTF-8 again.
    held: Vec<u8>,
    /// Code: the line break owed before the next content line (`"\n"` or `"\r\n"`).
    owed: Option<&'static str>,
    /// Leading spaces counted in `held` (for the indentation a code block removes).
    lead: usize,
}

impl Default for Segmenter {
    fn default() -> Self {
        Segmenter::new()
    }
}

impl Segmenter {
    pub fn new() -> Self {
        Segmenter {
            mode: Mode::Prose,
            line: Line::Start { spaces: 0 },
            held: Vec::new(),
            owed: None,
            lead: 0,
        }
    }

    /// True when nothing is held and no code block is open.
    pub fn is_idle(&self) -> bool {
        self.mode == Mode::Prose && self.held.is_empty() && self.line == (Line::Start { spaces: 0 })
    }

    /// The fence a writer that copies the text so far must add to end it
    /// well formed: `(character, length)` of an open code block, counting
    /// an opening fence on the unfinished last line as open and a closing
    /// fence there as closed (both take effect at the line break the
    /// writer adds). `None` when no block is open.
    pub fn unclosed_fence(&self) -> Option<(u8, usize)> {
        match (self.mode, self.line) {
            (Mode::Prose, Line::Run { ch, count } | Line::Info { ch, count }) if count >= 3 => {
                Some((ch, count))
            }
            (Mode::Prose, _) => None,
            (Mode::Code { len, .. }, Line::Run { count, .. } | Line::Trailing { count })
                if count >= len =>
            {
                None
            }
            (Mode::Code { ch, len, .. }, _) => Some((ch, len)),
        }
    }

    /// Segment the next piece of text.
    pub fn push(&mut self, text: &str, out: &mut dyn FnMut(Seg<'_>)) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.line {
                Line::Body => {
                    i = self.body(text, i, out);
                    continue;
                }
                Line::BodyCr => {
                    self.line = Line::Body;
                    if bytes[i] == b'\n' {
                        self.owed = Some("\r\n");
                        self.line = Line::Start { spaces: 0 };
                        i += 1;
                    } else {
                        out(Seg::Code("\r"));
                    }
                    continue;
                }
                _ => {}
            }
            let b = bytes[i];
            match self.mode {
                Mode::Prose => self.prose_byte(b, out),
                Mode::Code { ch, len, indent } => self.code_byte(b, ch, len, indent, out),
            }
            // A decided line re-reads this byte as part of its body.
            if self.line != Line::Body {
                i += 1;
            }
        }
    }

    /// The text ended: settle the held line and close an open code block.
    pub fn finish(&mut self, out: &mut dyn FnMut(Seg<'_>)) {
        match (self.mode, self.line) {
            (Mode::Prose, Line::Run { count, .. } | Line::Info { count, .. }) if count >= 3 => {
                // An opening fence on the last line: an empty block.
                let info = self.held_str(self.lead + count).trim().to_owned();
                out(Seg::Open(Fence::from_info(&info)));
                out(Seg::Close);
            }
            (Mode::Prose, _) => {
                if !self.held.is_empty() {
                    out(Seg::Prose(&self.held_str(0)));
                }
            }
            (Mode::Code { len, indent, .. }, line) => {
                let closing = matches!(line, Line::Run { count, .. } | Line::Trailing { count } if count >= len);
                if !closing && !self.held.is_empty() {
                    self.content_line(indent, out);
                }
                if line == Line::BodyCr {
                    out(Seg::Code("\r"));
                }
                out(Seg::Close);
            }
        }
        let mut held = std::mem::take(&mut self.held);
        held.clear();
        *self = Segmenter {
            held,
            ..Segmenter::new()
        };
    }

    /// Pass bytes of a decided line through, up to its end; returns the new index.
    fn body(&mut self, text: &str, i: usize, out: &mut dyn FnMut(Seg<'_>)) -> usize {
        let rest = &text[i..];
        let nl = memchr(b'\n', rest.as_bytes());
        match self.mode {
            Mode::Prose => {
                let end = nl.map_or(rest.len(), |n| n + 1);
                out(Seg::Prose(&rest[..end]));
                if nl.is_some() {
                    self.line = Line::Start { spaces: 0 };
                }
                i + end
            }
            Mode::Code { .. } => match nl {
                Some(n) => {
                    let (piece, brk) = match rest[..n].strip_suffix('\r') {
                        Some(p) => (p, "\r\n"),
                        None => (&rest[..n], "\n"),
                    };
                    if !piece.is_empty() {
                        out(Seg::Code(piece));
                    }
                    self.owed = Some(brk);
                    self.line = Line::Start { spaces: 0 };
                    i + n + 1
                }
                None => {
                    // A `\r` at the end may be half of a line break.
                    match rest.strip_suffix('\r') {
                        Some(p) => {
                            if !p.is_empty() {
                                out(Seg::Code(p));
                            }
                            self.line = Line::BodyCr;
                        }
                        None => out(Seg::Code(rest)),
                    }
                    text.len()
                }
            },
        }
    }

    fn hold(&mut self, b: u8) {
        self.held.push(b);
    }

    /// `held[from..]` as text.
    fn held_str(&self, from: usize) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.held.get(from..).unwrap_or_default())
    }

    /// Give the held bytes to prose and pass the rest of the line through.
    fn prose_line(&mut self, out: &mut dyn FnMut(Seg<'_>)) {
        if !self.held.is_empty() {
            out(Seg::Prose(&self.held_str(0)));
            self.held.clear();
        }
        self.lead = 0;
        self.line = Line::Body;
    }

    fn prose_byte(&mut self, b: u8, out: &mut dyn FnMut(Seg<'_>)) {
        match (self.line, b) {
            (Line::Start { spaces }, b' ') if spaces < 3 => {
                self.hold(b);
                self.line = Line::Start { spaces: spaces + 1 };
            }
            (Line::Start { spaces }, b'`' | b'~') => {
                self.lead = spaces;
                self.hold(b);
                self.line = Line::Run { ch: b, count: 1 };
            }
            (Line::Run { ch, count }, _) if b == ch => {
                self.hold(b);
                self.line = Line::Run {
                    ch,
                    count: count + 1,
                };
            }
            (Line::Run { ch, count } | Line::Info { ch, count }, b'\n') if count >= 3 => {
                let info = self.held_str(self.lead + count).trim().to_owned();
                self.held.clear();
                out(Seg::Open(Fence::from_info(&info)));
                self.mode = Mode::Code {
                    ch,
                    len: count,
                    indent: self.lead,
                };
                self.owed = None;
                self.lead = 0;
                self.line = Line::Start { spaces: 0 };
            }
            (Line::Run { ch, count }, _) if count >= 3 && !(ch == b'`' && b == b'`') => {
                self.hold(b);
                self.line = Line::Info { ch, count };
            }
            (Line::Info { ch, .. }, _) if !(ch == b'`' && b == b'`') => self.hold(b),
            _ => self.prose_line(out),
        }
    }

    fn code_byte(
        &mut self,
        b: u8,
        ch: u8,
        len: usize,
        indent: usize,
        out: &mut dyn FnMut(Seg<'_>),
    ) {
        match (self.line, b) {
            (Line::Start { spaces }, b' ') if spaces < 3 => {
                self.hold(b);
                self.lead = spaces + 1;
                self.line = Line::Start { spaces: spaces + 1 };
            }
            (Line::Start { .. }, _) if b == ch => {
                self.hold(b);
                self.line = Line::Run { ch, count: 1 };
            }
            (Line::Run { count, .. }, _) if b == ch => {
                self.hold(b);
                self.line = Line::Run {
                    ch,
                    count: count + 1,
                };
            }
            (Line::Run { count, .. } | Line::Trailing { count }, b' ' | b'\t' | b'\r') => {
                self.hold(b);
                self.line = Line::Trailing { count };
            }
            (Line::Run { count, .. } | Line::Trailing { count }, b'\n') if count >= len => {
                self.held.clear();
                self.lead = 0;
                self.owed = None;
                self.mode = Mode::Prose;
                self.line = Line::Start { spaces: 0 };
                out(Seg::Close);
            }
            (_, b'\n') => {
                // A content line that ends here (empty, spaces, or a short fence).
                self.content_line(indent, out);
                self.owed = Some("\n");
                self.line = Line::Start { spaces: 0 };
            }
            _ => {
                self.content_line(indent, out);
                self.line = Line::Body;
            }
        }
    }

    /// The held start of a code line is content: pay the owed line break,
    /// then the held bytes minus the block's indentation.
    fn content_line(&mut self, indent: usize, out: &mut dyn FnMut(Seg<'_>)) {
        if let Some(brk) = self.owed.take() {
            out(Seg::Code(brk));
        }
        let strip = self.lead.min(indent);
        if self.held.len() > strip {
            out(Seg::Code(&self.held_str(strip)));
        }
        self.held.clear();
        self.lead = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unclosed_fence_counts_the_unfinished_line() {
        let state = |text: &str| {
            let mut s = Segmenter::new();
            s.push(text, &mut |_| {});
            s.unclosed_fence()
        };
        assert_eq!(state("prose\n"), None);
        assert_eq!(state("```rust\nfn main"), Some((b'`', 3)));
        assert_eq!(state("````\ncode\n```"), Some((b'`', 4)));
        assert_eq!(state("````\ncode\n````"), None);
        assert_eq!(state("~~~\ncode\n~~~  "), None);
        assert_eq!(state("text\n```py"), Some((b'`', 3)));
        assert_eq!(state("```\ncode\n```\n"), None);
    }

    /// A segment as a test sees it: `None` for prose, else the block's fence.
    type Segs = Vec<(Option<Fence>, String)>;

    /// Segment `pieces` one after another; prose runs are merged, each
    /// code block is its own entry (even when empty).
    fn segments(pieces: &[&str]) -> Segs {
        let mut seg = Segmenter::new();
        let mut out: Segs = Vec::new();
        let mut open = false;
        let mut f = |s: Seg<'_>| match s {
            Seg::Prose(t) => {
                assert!(!open, "prose inside a block");
                assert!(!t.is_empty());
                match out.last_mut() {
                    Some((None, p)) => p.push_str(t),
                    _ => out.push((None, t.to_owned())),
                }
            }
            Seg::Open(f) => {
                assert!(!open, "nested open");
                open = true;
                out.push((Some(f), String::new()));
            }
            Seg::Code(t) => {
                assert!(open, "code outside a block");
                assert!(!t.is_empty());
                out.last_mut().unwrap().1.push_str(t);
            }
            Seg::Close => {
                assert!(open, "close without open");
                open = false;
            }
        };
        for p in pieces {
            seg.push(p, &mut f);
        }
        seg.finish(&mut f);
        assert!(!open, "block left open after finish");
        assert!(seg.is_idle());
        out
    }

    fn code(lang: &str, content: &str) -> (Option<Fence>, String) {
        (
            Some(Fence::Code {
                language: lang.to_owned(),
            }),
            content.to_owned(),
        )
    }

    fn prose(t: &str) -> (Option<Fence>, String) {
        (None, t.to_owned())
    }

    /// The tricky cases: (input, expected segments).
    fn cases() -> Vec<(&'static str, Segs)> {
        vec![
            (
                "Hello\n```python\nprint(1)\n```\nBye",
                vec![prose("Hello\n"), code("python", "print(1)"), prose("Bye")],
            ),
            (
                "See:\n```12:14:src/main.py\ndef main():\n    pass\n```\n",
                vec![
                    prose("See:\n"),
                    (
                        Some(Fence::Reference {
                            path: "src/main.py".into(),
                            start_line: 12,
                            end_line: 14,
                        }),
                        "def main():\n    pass".into(),
                    ),
                ],
            ),
            // Unterminated: runs to the end.
            (
                "text\n```rust\nfn x() {}\n",
                vec![prose("text\n"), code("rust", "fn x() {}")],
            ),
            // A longer fence holds shorter ones as content.
            (
                "````md\n```py\nx\n```\n````\nafter",
                vec![code("md", "```py\nx\n```"), prose("after")],
            ),
            // Tildes: backticks inside are content, tilde info may hold backticks.
            ("~~~\n```\nx\n~~~", vec![code("", "```\nx")]),
            ("~~~ js `odd`\nx\n~~~~\n", vec![code("js", "x")]),
            // Indented fence: its indentation comes off content lines.
            (
                "  ```js\n  a\n    b\n c\nd\n  ```\n",
                vec![code("js", "a\n  b\nc\nd")],
            ),
            // Four spaces or a tab: not a fence.
            ("    ```\n    x\n", vec![prose("    ```\n    x\n")]),
            ("\t```\nx\n", vec![prose("\t```\nx\n")]),
            ("   ```\nx\n   ```\ny", vec![code("", "x"), prose("y")]),
            // A backtick in a backtick fence's info string: not a fence.
            ("```a`b\nx\n", vec![prose("```a`b\nx\n")]),
            // A shorter closing fence is content.
            ("````\nx\n```\ny\n````", vec![code("", "x\n```\ny")]),
            // Trailing spaces after a closing fence are fine; an info string is not.
            ("```\nx\n```   \nz", vec![code("", "x"), prose("z")]),
            ("```\nx\n```py\n```", vec![code("", "x\n```py")]),
            // A closing fence indented by four is content.
            ("```\nx\n    ```\n```", vec![code("", "x\n    ```")]),
            // Inline code is prose.
            (
                "use `x` and ``y`` here\n",
                vec![prose("use `x` and ``y`` here\n")],
            ),
            ("see ```x``` inline", vec![prose("see ```x``` inline")]),
            // Empty blocks.
            ("```\n```", vec![code("", "")]),
            ("abc\n```py", vec![prose("abc\n"), code("py", "")]),
            ("```\nx\n```", vec![code("", "x")]),
            ("```\nx\n``", vec![code("", "x\n``")]),
            // Blank lines inside a block.
            ("```\na\n\n\nb\n```", vec![code("", "a\n\n\nb")]),
            ("```\n\na\n\n```", vec![code("", "\na\n")]),
            // Unicode everywhere, including the info string.
            (
                "héllo ✓\n```ü-lang\nü\n```\n→",
                vec![prose("héllo ✓\n"), code("ü-lang", "ü"), prose("→")],
            ),
            // CRLF line ends.
            (
                "a\r\n```py\r\nx\r\ny\r\n```\r\nb",
                vec![prose("a\r\n"), code("py", "x\r\ny"), prose("b")],
            ),
            // Two blocks back to back, with a citation that is not one.
            (
                "```1:2:\nq\n```\n```1:x:a.rs\nr\n```",
                vec![code("1:2:", "q"), code("1:x:a.rs", "r")],
            ),
            // Short runs at line starts are prose.
            ("``\n~~\n`", vec![prose("``\n~~\n`")]),
            ("  \n   \n", vec![prose("  \n   \n")]),
            ("", vec![]),
        ]
    }

    #[test]
    fn tricky_markdown() {
        for (input, want) in cases() {
            assert_eq!(segments(&[input]), want, "input {input:?}");
        }
    }

    #[test]
    fn every_split_gives_the_same_segments() {
        for (input, want) in cases() {
            for (i, _) in input.char_indices().skip(1) {
                let got = segments(&[&input[..i], &input[i..]]);
                assert_eq!(got, want, "input {input:?} split at {i}");
            }
            // One character at a time.
            let chars: Vec<String> = input.chars().map(String::from).collect();
            let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
            assert_eq!(segments(&pieces), want, "input {input:?} char by char");
        }
    }

    #[test]
    fn every_three_way_split_gives_the_same_segments() {
        let input = "Intro `x`\n  ```rust\n  let a = 1;\n\n  ````\n  ```\n~~~\n```12:3:p.rs\nz\r\n";
        let want = segments(&[input]);
        let idx: Vec<usize> = input.char_indices().map(|(i, _)| i).skip(1).collect();
        for &a in &idx {
            for &b in idx.iter().filter(|&&b| b > a) {
                let got = segments(&[&input[..a], &input[a..b], &input[b..]]);
                assert_eq!(got, want, "split at {a},{b}");
            }
        }
    }

    #[test]
    fn prose_streams_without_waiting_for_line_ends() {
        let mut seg = Segmenter::new();
        let mut seen = Vec::new();
        seg.push("Hello wor", &mut |s| seen.push(format!("{s:?}")));
        assert_eq!(seen, ["Prose(\"Hello wor\")"]);
        seen.clear();
        // A possible fence is held only until it cannot be one.
        seg.push("ld\n``", &mut |s| seen.push(format!("{s:?}")));
        assert_eq!(seen, ["Prose(\"ld\\n\")"]);
        seen.clear();
        seg.push("x", &mut |s| seen.push(format!("{s:?}")));
        assert_eq!(seen, ["Prose(\"``\")", "Prose(\"x\")"]);
        seen.clear();
        // Code lines pass through too; only the line break waits.
        seg.push("\n```py\nprint(", &mut |s| seen.push(format!("{s:?}")));
        assert_eq!(
            seen,
            [
                "Prose(\"\\n\")",
                "Open(Code { language: \"py\" })",
                "Code(\"print(\")"
            ]
        );
    }

    #[test]
    fn info_strings() {
        assert_eq!(
            Fence::from_info("10:20:C:/x y/z.ts"),
            Fence::Reference {
                path: "C:/x y/z.ts".into(),
                start_line: 10,
                end_line: 20
            }
        );
        assert_eq!(
            Fence::from_info("python title=\"a\""),
            Fence::Code {
                language: "python".into()
            }
        );
        assert_eq!(
            Fence::from_info("99999999999999999999999:1:a"),
            Fence::Code {
                language: "99999999999999999999999:1:a".into()
            }
        );
    }
}
