//! Colours for the code blocks of `--to html`, computed here so the page
//! needs no script and no request (docs/formats.md#html).
//!
//! With the `highlight` feature (default) syntect's bundled grammars parse
//! the code, and each token's scope picks one of a few classes (`hl-k`
//! keyword, `hl-s` string, `hl-c` comment…) that the page's own style
//! colours, in light and dark; runs of one class share one `<span>`, so
//! the markup stays a small multiple of the code. Without it, or for a language
//! syntect does not know, or a block past [`HIGHLIGHT_CAP_BYTES`] (its
//! regex grammars are slow on long input, and a page must stay quick to
//! write), the code is written escaped and uncoloured.

use std::io::{self, Write};

use super::escape_html_to as escape_to;

/// Code blocks longer than this are not coloured.
pub const HIGHLIGHT_CAP_BYTES: usize = 32 * 1024;

/// Lines longer than this make a block uncoloured (minified code would
/// take the grammars' regexes a long time for nothing readable).
pub const HIGHLIGHT_LINE_CAP_BYTES: usize = 2000;

/// `code` (in `language`, `""` when untagged) as HTML text, coloured when
/// it can be.
pub fn code_to(w: &mut impl Write, language: &str, code: &str) -> io::Result<()> {
    if code.len() <= HIGHLIGHT_CAP_BYTES
        && !language.is_empty()
        && code
            .split('\n')
            .all(|l| l.len() <= HIGHLIGHT_LINE_CAP_BYTES)
        && let Some(html) = imp::highlight(language, code)
    {
        return w.write_all(html.as_bytes());
    }
    escape_to(w, code)
}

/// The page's colours for the classes syntect writes (GitHub's palette).
#[cfg(feature = "highlight")]
pub const STYLE: &str = "\
.hl-c{color:#59636e;font-style:italic}.hl-k{color:#cf222e}.hl-s{color:#0a3069}.hl-n{color:#0550ae}.hl-f{color:#8250df}.hl-t{color:#953800}.hl-g{color:#116329}.hl-r{color:#82071e}.hl-h{color:#0550ae;font-weight:600}
@media (prefers-color-scheme:dark){.hl-c{color:#9198a1}.hl-k{color:#ff7b72}.hl-s{color:#a5d6ff}.hl-n{color:#79c0ff}.hl-f{color:#d2a8ff}.hl-t{color:#ffa657}.hl-g{color:#7ee787}.hl-r{color:#ffa198}.hl-h{color:#79c0ff}}
";

/// Without colours, no style for them.
#[cfg(not(feature = "highlight"))]
pub const STYLE: &str = "";

#[cfg(feature = "highlight")]
mod imp {
    use std::sync::OnceLock;

    use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};
    use syntect::util::LinesWithEndings;

    use super::escape_to;

    /// The bundled grammars, unpacked on the first coloured block (tens of
    /// milliseconds; a page without code never pays it).
    fn syntaxes() -> &'static SyntaxSet {
        static SET: OnceLock<SyntaxSet> = OnceLock::new();
        SET.get_or_init(SyntaxSet::load_defaults_newlines)
    }

    /// The scopes that get a colour, and its class. A token takes the class
    /// of its innermost scope that starts with one of these (the grammars'
    /// scope names are TextMate's conventions, shared by all of them).
    const RULES: &[(&str, &str)] = &[
        ("comment", "c"),
        ("string", "s"),
        ("constant", "n"),
        ("entity.other.attribute-name", "n"),
        ("keyword", "k"),
        ("storage", "k"),
        ("entity.name.function", "f"),
        ("support.function", "f"),
        ("entity.name.type", "t"),
        ("entity.name.class", "t"),
        ("entity.name.struct", "t"),
        ("entity.name.enum", "t"),
        ("support.type", "t"),
        ("support.class", "t"),
        ("entity.name.tag", "g"),
        ("markup.inserted", "g"),
        ("markup.deleted", "r"),
        ("invalid", "r"),
        ("markup.heading", "h"),
        ("entity.name.section", "h"),
    ];

    fn rules() -> &'static [(Scope, &'static str)] {
        static SCOPES: OnceLock<Vec<(Scope, &'static str)>> = OnceLock::new();
        SCOPES.get_or_init(|| {
            RULES
                .iter()
                .filter_map(|(name, class)| Some((Scope::new(name).ok()?, *class)))
                .collect()
        })
    }

    fn class_of(stack: &ScopeStack) -> Option<&'static str> {
        let rules = rules();
        stack.as_slice().iter().rev().find_map(|scope| {
            rules
                .iter()
                .find(|(prefix, _)| prefix.is_prefix_of(*scope))
                .map(|(_, class)| *class)
        })
    }

    /// Writes a run of text in `class` to `out`, merging it with the run
    /// before when the class is the same (short markup: one span per run).
    struct Runs {
        out: Vec<u8>,
        open: Option<&'static str>,
    }

    impl Runs {
        fn push(&mut self, class: Option<&'static str>, text: &str) {
            if text.is_empty() {
                return;
            }
            if class != self.open {
                if self.open.is_some() {
                    self.out.extend_from_slice(b"</span>");
                }
                if let Some(c) = class {
                    self.out.extend_from_slice(b"<span class=\"hl-");
                    self.out.extend_from_slice(c.as_bytes());
                    self.out.extend_from_slice(b"\">");
                }
                self.open = class;
            }
            // Writing to a Vec cannot fail.
            let _ = escape_to(&mut self.out, text);
        }
    }

    /// `code` marked up with `hl-` classes, escaped, or `None` when the
    /// language is unknown or the grammar fails.
    pub fn highlight(language: &str, code: &str) -> Option<String> {
        let set = syntaxes();
        let syntax = set.find_syntax_by_token(language)?;
        let mut state = ParseState::new(syntax);
        let mut stack = ScopeStack::new();
        let mut runs = Runs {
            out: Vec::with_capacity(code.len() * 2),
            open: None,
        };
        // The grammars read whole lines, line break included; the last
        // line gets one, which is not written.
        let owned;
        let (text, added) = if code.ends_with('\n') {
            (code, false)
        } else {
            owned = format!("{code}\n");
            (owned.as_str(), true)
        };
        for line in LinesWithEndings::from(text) {
            let ops = state.parse_line(line, set).ok()?;
            let mut at = 0;
            for (pos, op) in ops {
                runs.push(class_of(&stack), &line[at..pos]);
                at = pos;
                stack.apply(&op).ok()?;
            }
            runs.push(class_of(&stack), &line[at..]);
        }
        if runs.open.is_some() {
            runs.out.extend_from_slice(b"</span>");
        }
        let mut html = String::from_utf8(runs.out).ok()?;
        if added {
            // The added line break is the last text byte: before any `</span>`.
            let cut = html.rfind('\n')?;
            html.remove(cut);
        }
        Some(html)
    }
}

#[cfg(not(feature = "highlight"))]
mod imp {
    pub fn highlight(_language: &str, _code: &str) -> Option<String> {
        None
    }
}
