//! Tool calls a Cursor model wrote as text: `[TOOL_CALL]name[ARGS]{…}`.
//!
//! Some models behind Cursor answer a tool request with a textual pseudo
//! call in the text channel instead of a tool-call frame
//! (docs/dialects.md#cursor-agent has the shape and where it was seen).
//! There is no closing token: the marker ends where its JSON object does.
//! Such text is a call, never prose for a chat client, so the scanner takes
//! it out of the text. Text deltas may split a marker anywhere: text that
//! could still be the start of one is held until it is decided, and for no
//! more than [`MAX_MARKER`] bytes.

use crate::input::scan::Strings;

/// The opening token.
pub(super) const OPEN: &str = "[TOOL_CALL]";
/// Between the name and the arguments.
const ARGS: &str = "[ARGS]";
/// The longest marker held while undecided: past this the held text is let
/// go as text (with a notice), so a stray opener cannot hold a whole answer.
pub(super) const MAX_MARKER: usize = 64 * 1024;
/// The longest tool name taken as one (a name is a short identifier).
const MAX_NAME: usize = 256;

/// A piece of scanned text.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// Ordinary text.
    Text(String),
    /// A whole marker: the tool's name as written, its JSON arguments, and
    /// the marker's own text (to recognize it again in a recap).
    Call {
        name: String,
        args: String,
        raw: String,
    },
    /// Text that opened a marker but is not one; it stays text, and `why`
    /// says what was wrong, for a notice.
    Malformed { text: String, why: &'static str },
}

/// What the text from an opener on holds.
enum Scan {
    /// A whole marker, `len` bytes long.
    Whole { name_end: usize, len: usize },
    /// Not decided yet: more text may complete it.
    More,
    /// Not a marker.
    Bad(&'static str),
}

/// Read a marker at the start of `s` (which starts with [`OPEN`]).
fn scan(s: &str) -> Scan {
    let rest = &s[OPEN.len()..];
    let name_len = match rest.find(ARGS) {
        Some(n) => n,
        None => {
            // The name is still coming, unless what came cannot be one.
            return if rest.len() > MAX_NAME || rest.contains(['[', ']', '\n']) {
                if rest.len() > MAX_NAME {
                    Scan::Bad("a tool name longer than 256 bytes")
                } else {
                    check_partial_args(rest)
                }
            } else {
                Scan::More
            };
        }
    };
    let name = &rest[..name_len];
    if name.is_empty() || name.len() > MAX_NAME || name.contains(['[', ']', '\n']) {
        return Scan::Bad("no tool name before [ARGS]");
    }
    let name_end = OPEN.len() + name_len;
    let args_at = name_end + ARGS.len();
    let args = &s[args_at..];
    let lead = args.len() - args.trim_start().len();
    let body = &args[lead..];
    match body.as_bytes().first() {
        None => return Scan::More,
        Some(b'{') => {}
        Some(_) => return Scan::Bad("arguments that are not a JSON object"),
    }
    match object_len(body) {
        Some(n) => Scan::Whole {
            name_end,
            len: args_at + lead + n,
        },
        None => Scan::More,
    }
}

/// A name with `[` in it may be the start of `[ARGS]` still coming.
fn check_partial_args(rest: &str) -> Scan {
    match rest.find(['[', ']', '\n']) {
        Some(i) if ARGS.starts_with(&rest[i..]) => Scan::More,
        _ => Scan::Bad("no [ARGS] after the tool name"),
    }
}

/// The length of the JSON object `s` starts with, once its braces balance
/// (strings and their escapes skipped); `None` while it is still open.
fn object_len(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut strings = Strings::default();
    for (i, b) in s.bytes().enumerate() {
        if strings.feed(b) {
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The longest end of `s` that is a proper start of [`OPEN`]: text that may
/// become a marker with the next delta.
fn open_prefix_at_end(s: &str) -> usize {
    let Some(i) = s.rfind('[') else { return 0 };
    let tail = &s[i..];
    if tail.len() < OPEN.len() && OPEN.starts_with(tail) {
        tail.len()
    } else {
        0
    }
}

/// Scans one message's text deltas for markers.
#[derive(Debug, Default)]
pub(super) struct Scanner {
    /// Text held back: a possible start of a marker, or a marker not yet
    /// whole.
    held: String,
}

impl Scanner {
    /// Whether `text` can pass as it is: nothing is held and it has no `[`.
    pub(super) fn passes(&self, text: &str) -> bool {
        self.held.is_empty() && !text.contains('[')
    }

    /// Scan the next piece of text; what is decided comes out in order.
    pub(super) fn feed(&mut self, text: &str, out: &mut Vec<Piece>) {
        let mut buf = std::mem::take(&mut self.held);
        buf.push_str(text);
        let mut from = 0;
        while let Some(i) = buf[from..].find(OPEN).map(|i| from + i) {
            push_text(out, &buf[from..i]);
            match scan(&buf[i..]) {
                Scan::Whole { name_end, len } => {
                    let raw = &buf[i..i + len];
                    let name = raw[OPEN.len()..name_end].to_owned();
                    let args = raw[name_end + ARGS.len()..].trim_start();
                    match serde_json::from_str::<serde::de::IgnoredAny>(args) {
                        Ok(_) => out.push(Piece::Call {
                            name,
                            args: args.to_owned(),
                            raw: raw.to_owned(),
                        }),
                        Err(_) => out.push(Piece::Malformed {
                            text: raw.to_owned(),
                            why: "arguments that are not valid JSON",
                        }),
                    }
                    from = i + len;
                }
                Scan::More if buf.len() - i <= MAX_MARKER => {
                    self.held = buf[i..].to_owned();
                    return;
                }
                Scan::More => {
                    // Too long to be held further: the opener is text, and
                    // what follows it is scanned again.
                    out.push(Piece::Malformed {
                        text: OPEN.to_owned(),
                        why: "no end within 64 KiB",
                    });
                    from = i + OPEN.len();
                }
                Scan::Bad(why) => {
                    out.push(Piece::Malformed {
                        text: OPEN.to_owned(),
                        why,
                    });
                    from = i + OPEN.len();
                }
            }
        }
        let keep = open_prefix_at_end(&buf[from..]);
        let end = buf.len() - keep;
        push_text(out, &buf[from..end]);
        self.held = buf[end..].to_owned();
    }

    /// The message ended: what is held is text (a marker cut off is a
    /// malformed one).
    pub(super) fn flush(&mut self, out: &mut Vec<Piece>) {
        let held = std::mem::take(&mut self.held);
        if held.starts_with(OPEN) {
            out.push(Piece::Malformed {
                text: held,
                why: "the message ended inside it",
            });
        } else {
            push_text(out, &held);
        }
    }

    /// Whether text is held.
    pub(super) fn holds(&self) -> bool {
        !self.held.is_empty()
    }
}

fn push_text(out: &mut Vec<Piece>, s: &str) {
    if s.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(Piece::Text(t)) => t.push_str(s),
        _ => out.push(Piece::Text(s.to_owned())),
    }
}

/// Scan a whole text (a recap or a result) at once.
pub(super) fn split(text: &str) -> Vec<Piece> {
    let mut s = Scanner::default();
    let mut out = Vec::new();
    s.feed(text, &mut out);
    s.flush(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(deltas: &[&str]) -> Vec<Piece> {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        for d in deltas {
            s.feed(d, &mut out);
        }
        s.flush(&mut out);
        // Adjacent text pieces from different deltas are one text.
        let mut merged: Vec<Piece> = Vec::new();
        for p in out {
            match (merged.last_mut(), p) {
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (_, p) => merged.push(p),
            }
        }
        merged
    }

    fn call(name: &str, args: &str) -> Piece {
        Piece::Call {
            name: name.into(),
            args: args.into(),
            raw: format!("[TOOL_CALL]{name}[ARGS]{args}"),
        }
    }

    #[test]
    fn whole_and_split_markers_give_the_same_pieces() {
        let text = r#"Let me look.[TOOL_CALL]grep[ARGS]{"pattern":"a}[\"b"} Done."#;
        let want = vec![
            Piece::Text("Let me look.".into()),
            call("grep", r#"{"pattern":"a}[\"b"}"#),
            Piece::Text(" Done.".into()),
        ];
        assert_eq!(pieces(&[text]), want);
        // Every split into two and three deltas, at every char boundary.
        let cuts: Vec<usize> = (1..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for &a in &cuts {
            assert_eq!(pieces(&[&text[..a], &text[a..]]), want, "cut at {a}");
            for &b in cuts.iter().filter(|&&b| b > a) {
                assert_eq!(
                    pieces(&[&text[..a], &text[a..b], &text[b..]]),
                    want,
                    "cut at {a}, {b}"
                );
            }
        }
    }

    #[test]
    fn prose_with_brackets_is_not_held_past_its_delta() {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        s.feed("see [1] and [TOOL", &mut out);
        assert_eq!(out, vec![Piece::Text("see [1] and ".into())]);
        assert!(s.holds());
        s.feed("BOX]", &mut out);
        assert!(!s.holds());
        assert_eq!(out, vec![Piece::Text("see [1] and [TOOLBOX]".into())]);
    }

    #[test]
    fn malformed_markers_stay_text() {
        let bad = |t: &str| {
            let p = split(t);
            assert!(
                p.iter().any(|p| matches!(p, Piece::Malformed { .. })),
                "{t}: {p:?}"
            );
            let rebuilt: String = p
                .iter()
                .map(|p| match p {
                    Piece::Text(t) | Piece::Malformed { text: t, .. } => t.as_str(),
                    Piece::Call { .. } => panic!("a call in {t}"),
                })
                .collect();
            assert_eq!(rebuilt, t);
        };
        bad("[TOOL_CALL]grep[ARGS]not json");
        bad("[TOOL_CALL][ARGS]{}");
        bad("[TOOL_CALL]gr]ep[ARGS]{}");
        bad("[TOOL_CALL]grep[ARGS]{\"a\":1,}");
        bad("[TOOL_CALL]grep[ARGS]{\"a\":");
        bad("text then [TOOL_CALL]grep");
    }

    #[test]
    fn holding_is_bounded() {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        s.feed("[TOOL_CALL]x[ARGS]{\"a\":\"", &mut out);
        s.feed(&"y".repeat(MAX_MARKER), &mut out);
        assert!(!s.holds());
        assert!(matches!(&out[0], Piece::Malformed { text, .. } if text == OPEN));
    }
}
