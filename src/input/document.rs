//! Whole-document JSON framing: a file that is one JSON object (Gemini
//! CLI's saved chats), read member by member instead of as one value.
//!
//! The line framer starts joining an object that spans lines. While it
//! does, [`Members`] follows the object's own (top-level) members; when one
//! of them opens an array, the framer asks its handler whether the document
//! is one whose array is read element by element
//! ([`super::Handler::stream_member`]). If so, the members before it are
//! handed on as one record (the document's head), each element of the array
//! as a record of its own as soon as it is complete, and the members after
//! the array as one last record (the tail, [`Tail`]). Memory is then
//! bounded by the largest element, not by the file. Any other object spread
//! over lines is joined as before.

use super::Scan;

/// Follows the members of the top-level object being joined, line by line,
/// to find the member whose value is an array.
#[derive(Debug, Default)]
pub(super) struct Members {
    /// Nesting, strings and escapes, over every byte seen.
    scan: Scan,
    /// At depth 1, outside a value: the next string is a member's key.
    want_key: bool,
    /// Reading a key (at depth 1).
    in_key: bool,
    /// The key just read; its value has not begun.
    after_key: bool,
    /// After the `:`: the next byte that is not white space begins the value.
    want_value: bool,
    /// The last key read (without its quotes, escapes left as written).
    key: Vec<u8>,
    /// Where the last key's opening quote is in the current line, when it
    /// is in the current line.
    key_at: Option<usize>,
}

/// A top-level member whose value is an array, found in the current line.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ArrayMember {
    /// Where its key begins in the line (its opening quote).
    pub key_at: usize,
    /// Where the `[` is in the line.
    pub open_at: usize,
}

impl Members {
    /// Start over at the beginning of a new object.
    pub fn reset(&mut self) {
        *self = Members {
            key: std::mem::take(&mut self.key),
            ..Members::default()
        };
        self.key.clear();
    }

    /// The key of the member [`Members::line`] found.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Read one more line of the object; stop at the first top-level member
    /// whose value opens an array and whose key began on this line. What
    /// follows the `[` is not read (the caller frames it, or feeds it again
    /// with [`Members::line`] if it declines).
    pub fn line(&mut self, bytes: &[u8]) -> Option<ArrayMember> {
        self.key_at = None;
        for (i, &b) in bytes.iter().enumerate() {
            let depth = self.scan.depth;
            let in_str = self.scan.in_str();
            if self.want_value && !b.is_ascii_whitespace() {
                self.want_value = false;
                if b == b'['
                    && let Some(key_at) = self.key_at
                {
                    self.scan.feed(b);
                    return Some(ArrayMember { key_at, open_at: i });
                }
            }
            self.scan.feed(b);
            if in_str {
                if self.in_key {
                    if !self.scan.in_str() {
                        self.in_key = false;
                        self.after_key = true;
                    } else {
                        self.key.push(b);
                    }
                }
                continue;
            }
            match (depth, b) {
                (0, b'{') | (1, b',') => self.want_key = true,
                (1, b'"') if self.want_key => {
                    self.want_key = false;
                    self.in_key = true;
                    self.key.clear();
                    self.key_at = Some(i);
                }
                (1, b':') if self.after_key => {
                    self.after_key = false;
                    self.want_value = true;
                }
                _ => {}
            }
        }
        None
    }
}

/// The members after the streamed array, up to the object's `}`.
#[derive(Debug, Default)]
pub(super) struct Tail {
    pub active: bool,
    /// The members as written, from the byte after the array's `]`.
    pub bytes: Vec<u8>,
    pub line: u64,
    scan: Scan,
}

impl Tail {
    pub fn start(&mut self, line: u64) {
        self.active = true;
        self.bytes.clear();
        self.line = line;
        // Inside the object: its `}` closes it.
        self.scan = Scan {
            depth: 1,
            ..Scan::default()
        };
    }

    /// Take bytes of the tail; returns how many belong to it once the
    /// object's `}` is among them (the rest of the line is read as usual).
    pub fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            self.scan.feed(b);
            if self.scan.complete() {
                self.bytes.extend_from_slice(&bytes[..=i]);
                self.active = false;
                return Some(i + 1);
            }
        }
        if self.scan.in_str() {
            // A raw line break inside a string stands for `\n`.
            self.bytes.extend_from_slice(bytes);
            self.bytes.extend_from_slice(b"\\n");
        } else {
            self.bytes.extend_from_slice(bytes);
            self.bytes.push(b'\n');
        }
        None
    }

    /// The members of the tail as an object (`{…}`), or `None` when the
    /// array was the last member.
    pub fn record(&self) -> Option<Vec<u8>> {
        let t = self.bytes.trim_ascii();
        let t = t.strip_prefix(b",").unwrap_or(t).trim_ascii_start();
        if t == b"}" {
            return None;
        }
        let mut r = Vec::with_capacity(t.len() + 1);
        r.push(b'{');
        r.extend_from_slice(t);
        Some(r)
    }
}

/// The members before the streamed array as an object: `joined` (the
/// object's bytes so far, from its `{`) up to the array's key.
pub(super) fn head(joined: &[u8]) -> Vec<u8> {
    let t = joined.trim_ascii_end();
    let t = t.strip_suffix(b",").unwrap_or(t).trim_ascii_end();
    let mut r = Vec::with_capacity(t.len() + 1);
    r.extend_from_slice(t);
    r.push(b'}');
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_array_member_of_the_top_level_object_only() {
        let mut m = Members::default();
        assert_eq!(m.line(b"{"), None);
        assert_eq!(
            m.line(b"  \"a\": [1, 2],"),
            Some(ArrayMember {
                key_at: 2,
                open_at: 7
            })
        );
        assert_eq!(m.key(), b"a");
        let mut m = Members::default();
        // Nested arrays, strings that look like keys, and a key on another line.
        assert_eq!(
            m.line(b"{\"o\": {\"x\": [1]}, \"s\": \"\\\"y\\\": [\","),
            None
        );
        assert_eq!(m.line(b"\"k\":"), None);
        assert_eq!(m.line(b"[1],"), None);
        assert_eq!(
            m.line(b" \"messages\" : ["),
            Some(ArrayMember {
                key_at: 1,
                open_at: 14
            })
        );
        assert_eq!(m.key(), b"messages");
    }

    #[test]
    fn head_and_tail_are_objects_of_their_members() {
        assert_eq!(head(b"{\n  \"a\": 1,\n  "), b"{\n  \"a\": 1}");
        assert_eq!(head(b"{\n  "), b"{}");
        let mut t = Tail::default();
        t.start(9);
        assert_eq!(t.feed(b",  \"s\": \"x"), None);
        assert_eq!(t.feed(b"y\", \"d\": [\"}\"]"), None);
        assert_eq!(t.feed(b"} trailing"), Some(1));
        assert_eq!(t.record().unwrap(), b"{\"s\": \"x\\ny\", \"d\": [\"}\"]\n}");
        t.start(1);
        assert_eq!(t.feed(b"  }"), Some(3));
        assert_eq!(t.record(), None);
    }
}
