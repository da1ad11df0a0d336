//! Untrusted text on a terminal: one rule for what is escaped, and widths
//! measured in terminal columns.
//!
//! Everything cstream prints that came from a stream or a file name (the
//! text transcript, warnings) goes through [`sanitize`]. The rule is narrow
//! on purpose: only characters a terminal *acts on* instead of showing are
//! escaped — C0 and C1 controls (ESC, CR, BEL, CSI…) and the bidi
//! embedding, override and isolate controls that can make a line read
//! differently from what it is ("Trojan Source", CVE-2021-42574). Every
//! other character is text and passes unchanged: zero-width joiners and
//! non-joiners hold emoji sequences and Persian or Indic words together,
//! variation selectors and combining marks shape the character before them.
//!
//! Widths ([`width`], [`truncate`]) count terminal columns per grapheme
//! cluster (`unicode-width` over `unicode-segmentation` clusters), so a CJK
//! character counts two columns, a ZWJ emoji sequence two, a combining mark
//! none, and a cut never splits a cluster.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// One terminal that both standard output (the transcript) and standard
/// error (the warnings) write to: whether the transcript left a line
/// unfinished there, so that a warning starts on a line of its own and the
/// transcript then knows its line was ended for it.
#[derive(Debug, Clone, Default)]
pub struct SharedLine(Arc<AtomicU8>);

// An atomic, not a `Cell`: a `Config` (which holds one) is shared by the
// threads of `--output-dir`; only the main thread ever writes to the terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
enum LineState {
    #[default]
    Clean,
    /// The transcript's last line has no newline yet.
    Partial,
    /// A message ended that line; the transcript has not written since.
    Broken,
}

impl SharedLine {
    fn get(&self) -> LineState {
        match self.0.load(Ordering::Relaxed) {
            1 => LineState::Partial,
            2 => LineState::Broken,
            _ => LineState::Clean,
        }
    }

    fn set(&self, s: LineState) {
        self.0.store(s as u8, Ordering::Relaxed);
    }

    /// The transcript wrote; `partial`: its last line is unfinished.
    pub fn wrote(&self, partial: bool) {
        self.set(if partial {
            LineState::Partial
        } else {
            LineState::Clean
        });
    }

    /// A message is about to be written: true when it must first end the
    /// transcript's unfinished line.
    pub fn break_for_message(&self) -> bool {
        let partial = self.get() == LineState::Partial;
        if partial {
            self.set(LineState::Broken);
        }
        partial
    }

    /// The transcript is about to write: true when a message ended its
    /// line meanwhile (it is then at the start of a line).
    pub fn take_broken(&self) -> bool {
        let broken = self.get() == LineState::Broken;
        if broken {
            self.set(LineState::Clean);
        }
        broken
    }
}

/// True for a character a terminal would interpret rather than display.
pub fn is_unsafe(c: char) -> bool {
    // `is_control` is exactly Unicode's Cc: C0, DEL and C1.
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What to do with SGR colour sequences (`ESC [ params m`) in program output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sgr {
    /// Escape them like every other control (text that is not program output).
    Escape,
    /// Keep them (the transcript is coloured); each line that leaves a colour
    /// on gets a reset at its end, so nothing bleeds into what follows.
    Keep,
    /// Drop them (the transcript is plain): `ls --color` output reads as text.
    Strip,
}

/// The reset that ends a kept colour.
const RESET: &str = "\x1b[0m";

/// Longest parameter string accepted as SGR (anything longer is escaped).
const SGR_MAX_PARAMS: usize = 64;

/// If `s` starts with an SGR sequence, its length and whether it resets
/// (`ESC[m`, `ESC[0m`). Parameters are digits, `;` and `:` (the sub-parameter
/// form of 24-bit colour and underline styles).
fn sgr_at(s: &str) -> Option<(usize, bool)> {
    let rest = s.strip_prefix("\x1b[")?;
    let params = rest
        .bytes()
        .take(SGR_MAX_PARAMS + 1)
        .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
        .count();
    if params > SGR_MAX_PARAMS || rest.as_bytes().get(params) != Some(&b'm') {
        return None;
    }
    let p = &rest[..params];
    let reset = p.bytes().all(|b| b == b'0' || b == b';');
    Some((2 + params + 1, reset))
}

/// Where an SGR sequence that the next piece of a stream may complete
/// begins at the end of `s` (`ESC`, `ESC[`, `ESC[1;3`), else `s.len()`.
/// Live output arrives in pieces cut anywhere; the caller holds this tail
/// back until the next piece decides what it is.
pub fn unfinished_sgr(s: &str) -> usize {
    let Some(i) = s.rfind('\x1b') else {
        return s.len();
    };
    let rest = &s.as_bytes()[i + 1..];
    let open = match rest.split_first() {
        None => true,
        Some((b'[', params)) => {
            params.len() <= SGR_MAX_PARAMS
                && params
                    .iter()
                    .all(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
        }
        Some(_) => false,
    };
    if open { i } else { s.len() }
}

/// Text from the stream, safe for a terminal: unsafe characters become
/// `\n`, `\t`, `\r` or `\u{…}` escapes. With `keep_newlines`, newlines and
/// tabs stay and `\r\n` becomes `\n`.
pub fn visible(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    sanitize(s, keep_newlines, Sgr::Escape)
}

/// [`visible`], with SGR colour sequences kept, stripped or escaped.
pub fn sanitize(s: &str, keep_newlines: bool, sgr: Sgr) -> Cow<'_, str> {
    let needs = |c: char| is_unsafe(c) && !(keep_newlines && (c == '\n' || c == '\t'));
    if !any_unsafe(s.as_bytes(), keep_newlines) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    // A kept colour is on since the last reset or newline.
    let mut coloured = false;
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        let len = c.len_utf8();
        if c == '\x1b'
            && sgr != Sgr::Escape
            && let Some((n, reset)) = sgr_at(&s[i..])
        {
            if sgr == Sgr::Keep {
                out.push_str(&s[i..i + n]);
                coloured = !reset;
            }
            i += n;
            continue;
        }
        if c == '\r' && keep_newlines && s[i + 1..].starts_with('\n') {
            i += 1;
            continue;
        }
        if c == '\n' && keep_newlines && coloured {
            out.push_str(RESET);
            coloured = false;
        }
        if needs(c) {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                _ => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
            }
        } else {
            out.push(c);
        }
        i += len;
    }
    if coloured {
        out.push_str(RESET);
    }
    Cow::Owned(out)
}

/// Whether `s` holds a character [`sanitize`] would change (`\n` and `\t`
/// allowed when `keep_newlines`), decided on the bytes: every unsafe
/// character is a C0 byte, DEL, or starts with the lead byte 0xC2 (C1
/// controls, U+0080-U+009F) or 0xE2 (the bidi controls, U+202A-U+202E and
/// U+2066-U+2069); lead bytes never occur inside another character. Text is
/// mostly safe, and this is the per-character check's cost on every piece
/// the transcript writes.
fn any_unsafe(b: &[u8], keep_newlines: bool) -> bool {
    // Blocks with only printable ASCII (the common case) are passed over by
    // a branch-free test the compiler vectorizes; a block with a control or a
    // non-ASCII byte is looked at byte by byte (looking ahead past the block
    // where a sequence continues).
    const BLOCK: usize = 32;
    let mut start = 0;
    while start < b.len() {
        let end = (start + BLOCK).min(b.len());
        let suspect = b[start..end]
            .iter()
            .fold(false, |a, &x| a | !(0x20..0x7f).contains(&x));
        if suspect && (start..end).any(|i| unsafe_at(b, i, keep_newlines)) {
            return true;
        }
        start = end;
    }
    false
}

/// Whether an unsafe character starts at byte `i` of `b`.
fn unsafe_at(b: &[u8], i: usize, keep_newlines: bool) -> bool {
    match b[i] {
        b'\n' | b'\t' => !keep_newlines,
        0..=0x1f | 0x7f => true,
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
        0xe2 => matches!(
            (b.get(i + 1), b.get(i + 2)),
            (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))
        ),
        _ => false,
    }
}

/// Grapheme clusters of text without ESC, each with its width in columns.
fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    s.graphemes(true).map(|g| (g, g.width()))
}

/// Where the run of text at the start of `rest` ends: at the next ESC after
/// its first byte (ESC is ASCII, so that is always a char boundary).
fn text_run(rest: &str) -> usize {
    memchr::memchr(0x1b, &rest.as_bytes()[1..]).map_or(rest.len(), |e| e + 1)
}

/// Display width of sanitized text in terminal columns (kept SGR sequences
/// count none).
pub fn width(s: &str) -> usize {
    if s.is_ascii() && !s.contains('\x1b') {
        return s.len();
    }
    let mut cols = 0;
    let mut rest = s;
    while !rest.is_empty() {
        if let Some((n, _)) = sgr_at(rest) {
            rest = &rest[n..];
            continue;
        }
        let end = text_run(rest);
        cols += clusters(&rest[..end]).map(|(_, w)| w).sum::<usize>();
        rest = &rest[end..];
    }
    cols
}

/// Cut sanitized text to at most `max` columns, marking the cut with `…`.
/// Grapheme clusters are never split; kept SGR sequences before the cut
/// are kept, and a colour left on is reset after the mark.
pub fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let room = max.saturating_sub(1);
    let mut out = String::new();
    let mut cols = 0;
    let mut coloured = false;
    let mut rest = s;
    'outer: while !rest.is_empty() {
        if let Some((n, reset)) = sgr_at(rest) {
            out.push_str(&rest[..n]);
            coloured = !reset;
            rest = &rest[n..];
            continue;
        }
        let end = text_run(rest);
        for (g, w) in clusters(&rest[..end]) {
            if cols + w > room {
                break 'outer;
            }
            cols += w;
            out.push_str(g);
        }
        rest = &rest[end..];
    }
    out.push('…');
    if coloured {
        out.push_str(RESET);
    }
    Cow::Owned(out)
}

/// Cut sanitized text without escape sequences to at most `max` columns
/// by dropping its start, marked with `…`: for a path, whose end says
/// most. Grapheme clusters are never split.
pub fn truncate_start(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let room = max.saturating_sub(1);
    let mut cols = 0;
    let mut start = s.len();
    for (i, g) in s.grapheme_indices(true).rev() {
        let w = g.width();
        if cols + w > room {
            break;
        }
        cols += w;
        start = i;
    }
    Cow::Owned(format!("…{}", &s[start..]))
}

/// Where to end a line of `s` (sanitized text without escape sequences)
/// that does not fit in `room` columns, for word wrapping: `(end, next)`,
/// the line being `s[..end]` and the next one starting at `s[next..]`.
/// The break is at the last space that leaves the line within `room`
/// (the space itself dropped). With no such space, on a line already
/// started (`fresh` false): before `s` when it starts a word (`mid_word`
/// false: the line so far ends between words) or when not even its first
/// cluster fits; otherwise between grapheme clusters. `None`: `s` fits. A line at its start
/// (`fresh`) always takes at least one cluster, so wrapping ends.
pub fn wrap_point(s: &str, room: usize, fresh: bool, mid_word: bool) -> Option<(usize, usize)> {
    let mut cols = 0;
    let mut space = None;
    for (i, g) in s.grapheme_indices(true) {
        let w = g.width();
        if g == " " && cols <= room {
            space = Some(i);
        }
        if cols + w > room {
            if g == " " {
                // The line ends right before this space.
                return Some((i, i + 1));
            }
            return Some(match space {
                Some(sp) => (sp, sp + 1),
                None if !fresh && (i == 0 || !mid_word) => (0, 0),
                None if i == 0 => (g.len(), g.len()),
                None => (i, i),
            });
        }
        cols += w;
    }
    None
}

/// A short, printable excerpt of untrusted input for a message: escaped by
/// the rule above, at most `max` columns of it, then `…` if there was more.
/// Only as much of `s` as is shown is looked at, so a huge line costs no
/// more than a short one.
pub fn excerpt(s: &str, max: usize) -> String {
    // Printable ASCII as far as is shown and one byte past it: each byte
    // is a cluster of one column that needs no escape (paths, ids), and
    // the byte past, with whatever joins it, is one more column: nothing to
    // segment.
    let head = &s.as_bytes()[..s.len().min(max.saturating_add(1))];
    if head.iter().all(|b| (0x20..0x7f).contains(b)) {
        return if s.len() <= max {
            s.to_owned()
        } else {
            format!("{}…", &s[..max])
        };
    }
    let mut out = String::new();
    let mut cols = 0;
    for g in s.graphemes(true) {
        let shown = visible(g, false);
        let w = width(&shown);
        if cols + w > max {
            out.push('…');
            break;
        }
        cols += w;
        out.push_str(&shown);
    }
    out
}

#[cfg(test)]
mod tests {
    /// `cstream::printable` (an excerpt without a limit) escapes a
    /// character exactly when it is unsafe: the integration tests check
    /// transcripts with it.
    #[test]
    fn printable_escapes_exactly_the_unsafe_characters() {
        for c in (0..0x3000)
            .chain(0xfe00..0x10000)
            .filter_map(char::from_u32)
        {
            let s = c.to_string();
            assert_eq!(
                super::excerpt(&s, usize::MAX) != s,
                super::is_unsafe(c),
                "{c:?}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// The byte scan agrees with the per-character rule.
        #[test]
        fn byte_scan_agrees_with_the_character_rule(
            s in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{2028}-\\u{206f}\\u{200c}\\u{200d}]){0,160}",
            keep in proptest::prelude::any::<bool>(),
        ) {
            let needs = |c: char| is_unsafe(c) && !(keep && (c == '\n' || c == '\t'));
            proptest::prop_assert_eq!(any_unsafe(s.as_bytes(), keep), s.chars().any(needs));
        }
    }
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_interpret() {
        assert_eq!(visible("plain\ttext\n", true), "plain\ttext\n");
        assert_eq!(visible("a\u{1b}[31mred", true), "a\\u{1b}[31mred");
        assert_eq!(visible("crlf\r\nline", true), "crlf\nline");
        assert_eq!(visible("bare\rcr", true), "bare\\rcr");
        assert_eq!(visible("two\nlines", false), "two\\nlines");
        assert_eq!(visible("rtl \u{202e}x", true), "rtl \\u{202e}x");
        assert_eq!(
            visible("iso \u{2067}x\u{2069}", true),
            "iso \\u{2067}x\\u{2069}"
        );
        assert_eq!(visible("c1 \u{9b}x", true), "c1 \\u{9b}x");
        assert_eq!(visible("del \u{7f}", true), "del \\u{7f}");
    }

    #[test]
    fn keeps_joiners_selectors_and_marks() {
        for s in [
            "👨\u{200d}👩\u{200d}👧",   // family: ZWJ sequence
            "می\u{200c}خواهم",          // Persian: ZWNJ inside a word
            "क्\u{200d}ष",               // Devanagari: ZWJ
            "❤\u{fe0f}",                // emoji presentation selector
            "e\u{301}",                 // combining acute
            "\u{200b}\u{200e}\u{feff}", // ZWSP, LRM, ZWNBSP: invisible but inert
        ] {
            assert!(matches!(visible(s, false), Cow::Borrowed(_)), "{s:?}");
        }
    }

    #[test]
    fn sgr_kept_stripped_or_escaped() {
        let s = "\x1b[1;32mok\x1b[0m \x1b]0;title\x07 \x1b[2J";
        assert_eq!(
            sanitize(s, false, Sgr::Escape),
            "\\u{1b}[1;32mok\\u{1b}[0m \\u{1b}]0;title\\u{7} \\u{1b}[2J"
        );
        assert_eq!(
            sanitize(s, false, Sgr::Strip),
            "ok \\u{1b}]0;title\\u{7} \\u{1b}[2J"
        );
        assert_eq!(
            sanitize(s, false, Sgr::Keep),
            "\x1b[1;32mok\x1b[0m \\u{1b}]0;title\\u{7} \\u{1b}[2J"
        );
        // A colour still on at a line end is reset there.
        assert_eq!(
            sanitize("\x1b[31mred\nnext", true, Sgr::Keep),
            "\x1b[31mred\x1b[0m\nnext"
        );
        assert_eq!(
            sanitize("\x1b[31mred", false, Sgr::Keep),
            "\x1b[31mred\x1b[0m"
        );
        // Not SGR: other final bytes, private markers, overlong parameters.
        assert_eq!(sanitize("\x1b[?25l", false, Sgr::Keep), "\\u{1b}[?25l");
        let long = format!("\x1b[{}m", "1;".repeat(40));
        assert!(sanitize(&long, false, Sgr::Keep).starts_with("\\u{1b}["));
    }

    #[test]
    fn unfinished_sgr_tails() {
        assert_eq!(unfinished_sgr("abc"), 3);
        assert_eq!(unfinished_sgr("abc\x1b"), 3);
        assert_eq!(unfinished_sgr("abc\x1b["), 3);
        assert_eq!(unfinished_sgr("abc\x1b[1;3"), 3);
        assert_eq!(unfinished_sgr("abc\x1b[1;31m"), 10);
        assert_eq!(unfinished_sgr("abc\x1b]0;t"), 8);
        assert_eq!(unfinished_sgr("\x1b[?25"), 5);
    }

    #[test]
    fn widths_in_columns() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("👨\u{200d}👩\u{200d}👧"), 2);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("\x1b[32mok\x1b[0m"), 2);
    }

    #[test]
    fn truncation_counts_columns_and_keeps_clusters() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("日本語テキスト", 7), "日本語…");
        // A two-column character that would cross the limit is left out.
        assert_eq!(truncate("a日本語", 5), "a日…");
        let family = "👨\u{200d}👩\u{200d}👧";
        let s = format!("{family}{family}{family}");
        assert_eq!(truncate(&s, 5), format!("{family}{family}…"));
        assert_eq!(
            truncate("\x1b[32mgreen text\x1b[0m", 6),
            "\x1b[32mgreen…\x1b[0m"
        );
        for max in 0..20 {
            let t = truncate("漢字とemoji👍🏽で", max);
            assert!(width(&t) <= max.max(1), "{max}: {t}");
        }
    }

    #[test]
    fn cuts_from_the_start() {
        assert_eq!(truncate_start("/home/user/project", 10), "…r/project");
        assert_eq!(truncate_start("/short", 10), "/short");
        assert_eq!(truncate_start("/多言語/x", 5), "…語/x");
        for max in 1..12 {
            assert!(
                width(&truncate_start("/home/多言語/👍🏽", max)) <= max,
                "{max}"
            );
        }
    }

    #[test]
    fn wrap_points() {
        // Fits.
        assert_eq!(wrap_point("one two", 7, true, false), None);
        // At the last space within the room, the space dropped.
        assert_eq!(wrap_point("one two three", 9, true, false), Some((7, 8)));
        // A space right at the room's end.
        assert_eq!(wrap_point("one two", 3, true, false), Some((3, 4)));
        // No space: before the word on a started line, else inside it.
        assert_eq!(wrap_point("abcdef", 3, false, false), Some((0, 0)));
        assert_eq!(wrap_point("abcdef", 3, false, true), Some((3, 3)));
        assert_eq!(wrap_point("abcdef", 3, true, false), Some((3, 3)));
        // Clusters are kept whole; a fresh line takes one even if too wide.
        assert_eq!(wrap_point("漢字", 3, true, false), Some((3, 3)));
        assert_eq!(wrap_point("漢字", 1, true, false), Some((3, 3)));
        assert_eq!(wrap_point("漢字", 1, false, true), Some((0, 0)));
    }

    #[test]
    fn shared_line_states() {
        let l = SharedLine::default();
        assert!(!l.break_for_message());
        l.wrote(true);
        assert!(l.break_for_message());
        assert!(!l.break_for_message(), "ended once");
        assert!(l.take_broken());
        assert!(!l.take_broken());
        l.wrote(false);
        assert!(!l.break_for_message());
    }

    #[test]
    fn excerpts() {
        assert_eq!(
            excerpt("a\u{1b}[31mb\u{202e}", 80),
            "a\\u{1b}[31mb\\u{202e}"
        );
        assert_eq!(excerpt("abcdef", 3), "abc…");
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd\u{301}", 3), "abc…");
        assert_eq!(excerpt("abc\u{301}", 3), "abc\u{301}");
        assert_eq!(excerpt("日本語", 5), "日本…");
        assert_eq!(
            excerpt("👨\u{200d}👩\u{200d}👧", 80),
            "👨\u{200d}👩\u{200d}👧"
        );
    }
}
