//! A JSON value built in a fixed key order, and the writer that lays it out
//! compactly or indented, copying raw JSON text from the input re-indented
//! but otherwise as it came.

use super::write_str;

/// A JSON value as the documents formats build it: fixed key order, input
/// payloads kept as raw text.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Int(i64),
    Str(String),
    /// JSON text taken from the input, written re-indented but otherwise as it came.
    Raw(String),
    Arr(Vec<J>),
    Obj(Vec<(&'static str, J)>),
}

impl J {
    pub fn str(s: &str) -> J {
        J::Str(s.to_owned())
    }

    pub fn opt_str(s: Option<&str>) -> J {
        s.map_or(J::Null, J::str)
    }

    pub fn opt_u64(v: Option<u64>) -> J {
        v.map_or(J::Null, J::u64)
    }

    /// A count: beyond `i64` it is written as it is, not clamped (a figure
    /// shows the same in every format).
    pub fn u64(v: u64) -> J {
        i64::try_from(v).map_or_else(|_| J::Raw(v.to_string()), J::Int)
    }

    /// JSON text from the input, to be re-laid out by [`write_raw`].
    pub fn raw(r: &str) -> J {
        J::Raw(r.to_owned())
    }
}

/// How JSON is laid out: one line, or indented by two spaces per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Compact,
    Pretty,
}

/// Write `j` at nesting `level` (the caller has written the indentation of
/// its first line).
pub fn write_json(out: &mut Vec<u8>, j: &J, layout: Layout, level: usize) {
    match j {
        J::Null => out.extend_from_slice(b"null"),
        J::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        J::Str(s) => write_str(out, s).expect("writing to a Vec"),
        J::Raw(r) => write_raw(out, r, layout, level),
        J::Arr(items) if items.is_empty() => out.extend_from_slice(b"[]"),
        J::Obj(members) if members.is_empty() => out.extend_from_slice(b"{}"),
        J::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                write_json(out, item, layout, level + 1);
            }
            newline(out, layout, level);
            out.push(b']');
        }
        J::Obj(members) => {
            out.push(b'{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, layout, level + 1);
                write_str(out, k).expect("writing to a Vec");
                out.extend_from_slice(if layout == Layout::Pretty {
                    b": "
                } else {
                    b":"
                });
                write_json(out, v, layout, level + 1);
            }
            newline(out, layout, level);
            out.push(b'}');
        }
    }
}

/// Pretty output indents this many levels at most; deeper values are
/// written compactly. Indenting every level makes the output quadratic in
/// the depth (a payload nested 200,000 deep would take 40 GB).
pub const MAX_PRETTY_DEPTH: usize = 32;

fn newline(out: &mut Vec<u8>, layout: Layout, level: usize) {
    if layout == Layout::Pretty && level <= MAX_PRETTY_DEPTH {
        out.push(b'\n');
        out.resize(out.len() + 2 * level, b' ');
    }
}

/// Copy valid JSON text, dropping its insignificant whitespace and laying it
/// out like [`write_json`] (strings and numbers are copied byte for byte).
pub fn write_raw(out: &mut Vec<u8>, raw: &str, layout: Layout, level: usize) {
    let b = raw.as_bytes();
    let mut level = level;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                // Copy the whole string, escapes included.
                let start = i;
                i += 1;
                while i < b.len() {
                    match memchr::memchr2(b'"', b'\\', &b[i..]) {
                        Some(n) if b[i + n] == b'\\' => i += n + 2,
                        Some(n) => {
                            i += n + 1;
                            break;
                        }
                        None => i = b.len(),
                    }
                }
                out.extend_from_slice(&b[start..i.min(b.len())]);
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                let next = b[i + 1..]
                    .iter()
                    .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                    .map(|n| i + 1 + n);
                match next {
                    Some(n) if b[n] == close => {
                        out.push(open);
                        out.push(close);
                        i = n + 1;
                    }
                    _ => {
                        out.push(open);
                        level += 1;
                        newline(out, layout, level);
                        i += 1;
                    }
                }
            }
            close @ (b'}' | b']') => {
                level = level.saturating_sub(1);
                newline(out, layout, level);
                out.push(close);
                i += 1;
            }
            b',' => {
                out.push(b',');
                newline(out, layout, level);
                i += 1;
            }
            b':' => {
                out.extend_from_slice(if layout == Layout::Pretty {
                    b": "
                } else {
                    b":"
                });
                i += 1;
            }
            _ => {
                // A number or literal: up to the next structural byte.
                let start = i;
                while i < b.len()
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b'}' | b']' | b'{' | b'['
                    )
                {
                    i += 1;
                }
                out.extend_from_slice(&b[start..i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_json_is_relaid() {
        let raw = r#" { "a" : [1, 2.50e3 ,{}], "b":{ "c":"x \" , { y" ,"d":[ ] } ,"e":null} "#;
        let mut out = Vec::new();
        write_raw(&mut out, raw, Layout::Compact, 0);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"a":[1,2.50e3,{}],"b":{"c":"x \" , { y","d":[]},"e":null}"#
        );
        let mut out = Vec::new();
        write_raw(&mut out, raw, Layout::Pretty, 1);
        let pretty = String::from_utf8(out).unwrap();
        let want = "{\n    \"a\": [\n      1,\n      2.50e3,\n      {}\n    ],\n    \"b\": {\n      \"c\": \"x \\\" , { y\",\n      \"d\": []\n    },\n    \"e\": null\n  }";
        assert_eq!(pretty, want);
    }

    #[test]
    fn deep_raw_json_is_indented_only_so_far() {
        let n = 10_000;
        let raw = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mut out = Vec::new();
        write_raw(&mut out, &raw, Layout::Pretty, 0);
        // Linear in the depth: indented to MAX_PRETTY_DEPTH, compact below.
        assert!(out.len() < raw.len() + 4 * MAX_PRETTY_DEPTH * MAX_PRETTY_DEPTH);
        let compact: Vec<u8> = out
            .iter()
            .copied()
            .filter(|b| !b" \n".contains(b))
            .collect();
        assert_eq!(compact, raw.as_bytes());
    }

    #[test]
    fn pretty_matches_serde_json() {
        let j = J::Obj(vec![
            ("id", J::str("x")),
            ("n", J::Int(-3)),
            ("list", J::Arr(vec![J::Null, J::Int(1), J::Obj(vec![])])),
            ("raw", J::Raw(r#"{"k":[1,{"z":"\n"}],"e":[]}"#.to_owned())),
        ]);
        let mut out = Vec::new();
        write_json(&mut out, &j, Layout::Pretty, 0);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        // serde_json sorts keys; compare after the same round trip.
        let mut ours = Vec::new();
        write_json(&mut ours, &j, Layout::Compact, 0);
        let v2: serde_json::Value = serde_json::from_slice(&ours).unwrap();
        assert_eq!(v, v2);
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("{\n  \"id\": \"x\",\n  \"n\": -3,\n  \"list\": [\n    null,"));
        assert!(s.contains("\"raw\": {\n    \"k\": [\n      1,\n      {\n        \"z\": \"\\n\"\n      }\n    ],\n    \"e\": []\n  }\n}"));
    }
}
