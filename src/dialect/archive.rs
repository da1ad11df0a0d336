//! Archives: which files of a directory cstream reads, and what `--stats`
//! says about the files of a run.
//!
//! The walk itself is `crate::walk` (a directory argument); the rule that
//! decides whether a file is a session lives here, beside the dialect
//! detection it leans on, so that it is the same for every caller.

use std::fmt;
#[cfg(all(feature = "walk", test))]
use std::path::Path;

use crate::dialect::Dialect;
use crate::dialect::{DETECT_RECORDS, Detected, detect_record};

/// What the sniffing rule makes of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniff {
    /// A session file: converted.
    Session,
    /// Not one: skipped (and counted), for this reason.
    Skip(&'static str),
    /// A file of an agent cstream does not read (named): opened, to be
    /// reported as one.
    Foreign(&'static str),
}

#[cfg(all(feature = "walk", test))]
/// File names a session file can have: the cheap filter that keeps a walk
/// from opening a Claude session's `tool-results/*.txt` or an agent's
/// SQLite stores. Every saved-session format cstream reads is JSON Lines or
/// one JSON document, possibly zstd-compressed (`.jsonl.zst`: Codex's idle
/// rollouts), but for OpenCode's store, `opencode.db`.
///
/// The walk reads the rule on each entry's name as bytes
/// (`walk::session_file_name`); this form is the tests' reference for it.
pub fn session_name(path: &Path) -> bool {
    let json = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "jsonl" | "json" | "ndjson"))
    };
    if path.extension().is_some_and(|e| e == "zst") {
        return json(Path::new(path.file_stem().unwrap_or_default()));
    }
    json(path)
        // OpenCode's session store (read with the `sqlite` feature only).
        || (cfg!(feature = "sqlite")
            && path.file_name().is_some_and(|n| n == crate::dialect::opencode::STORE_NAME))
}

/// Whether the first block of a file (up to 64 KiB;
/// the whole file when it is shorter: `whole`) is a session an agent wrote.
///
/// The rule: no NUL byte; the first non-blank byte opens a JSON object or
/// array; and either one of the first [`DETECT_RECORDS`] complete lines is
/// claimed by a dialect's detection rule, or the first record does not end
/// within the block (a JSON document spread over lines, such as a Gemini CLI
/// chat file, or a first line longer than the block) and the block names a
/// session id (`"sessionId"` or `"session_id"`). A `package.json` or a
/// settings file has neither, and is skipped.
#[cfg_attr(not(feature = "walk"), allow(dead_code))]
pub fn sniff(block: &[u8], whole: bool) -> Sniff {
    sniff_told(block, whole).0
}

/// The record of a block whose detection told its dialect: where it lies
/// in the block, and the dialect.
pub type Told = (std::ops::Range<usize>, Dialect);

/// [`sniff`], and the record that told the dialect when one did, so that
/// a reader of the same bytes need not detect it again
/// (`AutoParser::told`).
pub fn sniff_told(block: &[u8], whole: bool) -> (Sniff, Option<Told>) {
    let mut told = None;
    let sniffed = sniff_into(block, whole, &mut told);
    (sniffed, told)
}

fn sniff_into(block: &[u8], whole: bool, told: &mut Option<Told>) -> Sniff {
    if cfg!(feature = "sqlite") && crate::dialect::opencode::is_sqlite(block) {
        // An SQLite database among session files: OpenCode's store (its
        // name is what let the walk list it).
        return Sniff::Session;
    }
    if memchr::memchr(0, block).is_some() {
        return Sniff::Skip("binary");
    }
    let start = block
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(block.len());
    // A UTF-8 byte order mark before the first value (the framer drops it).
    let start = if block[start..].starts_with(b"\xEF\xBB\xBF") {
        start + 3
    } else {
        start
    };
    match block.get(start) {
        None => return Sniff::Skip("empty"),
        Some(b'{' | b'[') => {}
        Some(_) => {
            return match super::foreign::sniff_text(block) {
                Some(agent) => Sniff::Foreign(agent),
                None => Sniff::Skip("not JSON"),
            };
        }
    }
    // A whole file that is one JSON array (a message list) says what it
    // is as a whole.
    if whole
        && block[start] == b'['
        && let Ok(text) = std::str::from_utf8(&block[start..])
        && let Some(agent) = super::foreign::sniff(text)
    {
        return Sniff::Foreign(agent);
    }
    let mut records = 0;
    let mut rest = &block[start..];
    while records < DETECT_RECORDS && !rest.is_empty() {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            // The last line of the block is whole only when the file is.
            None if whole => (rest, &rest[rest.len()..]),
            None => break,
        };
        rest = next;
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        records += 1;
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        match detect_record(line) {
            Detected::Is(d) => {
                let at = line.as_ptr() as usize - block.as_ptr() as usize;
                *told = Some((at..at + line.len(), d));
                return Sniff::Session;
            }
            Detected::Foreign(agent) => return Sniff::Foreign(agent),
            // The whole file is one record cut short (an agent killed
            // mid-line): read, so that the reader says where it ends,
            // rather than skipped as if it were no agent's.
            Detected::Incomplete if records == 1 && whole && rest.trim_ascii().is_empty() => {
                return Sniff::Session;
            }
            Detected::Incomplete if records == 1 => return names_session(block),
            Detected::Undecided | Detected::Invalid | Detected::Incomplete => {}
        }
    }
    if records == 0 {
        // The first record runs past the block.
        return names_session(block);
    }
    Sniff::Skip("no agent's records in its first lines")
}

/// A first record too long to detect: a session if it names one.
fn names_session(block: &[u8]) -> Sniff {
    let finder = |k: &str| memchr::memmem::find(block, k.as_bytes()).is_some();
    if finder("\"sessionId\"") || finder("\"session_id\"") {
        Sniff::Session
    } else {
        Sniff::Skip("no agent's records in its first lines")
    }
}

/// The files of a run, for `--stats`: how many of each dialect were read,
/// and how many a directory walk skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCounts {
    /// Files read, per dialect in [`Dialect::ALL`] order, then files whose
    /// dialect stayed unknown (empty, binary or unreadable).
    pub read: [u64; Dialect::ALL.len() + 1],
    /// Files a directory walk did not read: not session files, symlink loops.
    pub skipped: u64,
}

impl FileCounts {
    /// Count one input read as `dialect`.
    pub fn count(&mut self, dialect: Option<Dialect>) {
        let i = dialect
            .and_then(|d| Dialect::ALL.iter().position(|x| *x == d))
            .unwrap_or(Dialect::ALL.len());
        self.read[i] += 1;
    }
}

/// `files=N files_<dialect>=N… files_skipped=N` (dialects only when some
/// file was one, in `--from`'s order; `files_unknown` for the rest).
impl fmt::Display for FileCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "files={}", self.read.iter().sum::<u64>())?;
        let names = Dialect::ALL.iter().map(|d| d.name()).chain(["unknown"]);
        for (name, n) in names.zip(self.read) {
            if n > 0 {
                write!(f, " files_{name}={n}")?;
            }
        }
        write!(f, " files_skipped={}", self.skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record the sniff says told the dialect is the first record that
    /// does, at its place in the block.
    #[test]
    fn the_sniff_tells_which_record_told_the_dialect() {
        let block = b"\n  {\"type\":\"summary\"}\n\n{\"type\":\"system\",\"subtype\":\"init\",\"apiKeySource\":\"login\"} \r\n{\"x\":1}\n";
        let (sniffed, told) = sniff_told(block, true);
        assert_eq!(sniffed, Sniff::Session);
        let (at, d) = told.expect("a record told the dialect");
        let rec = std::str::from_utf8(&block[at]).unwrap();
        assert_eq!(
            rec,
            r#"{"type":"system","subtype":"init","apiKeySource":"login"}"#
        );
        assert_eq!(d, Dialect::Cursor);
        assert_eq!(detect_record(rec), Detected::Is(d));
        // None told: nothing to keep.
        let (sniffed, told) = sniff_told(b"{\"name\":\"pkg\"}\n", true);
        assert!(matches!(sniffed, Sniff::Skip(_)));
        assert_eq!(told, None);
    }

    #[cfg(feature = "walk")]
    #[test]
    fn the_rule() {
        let claude = br#"{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"sessionId":"s","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}
"#;
        assert_eq!(sniff(claude, true), Sniff::Session);
        for (name, session) in [
            ("rollout-a.jsonl.zst", true),
            ("a.json.zst", true),
            ("a.txt.zst", false),
            ("a.zst", false),
            ("a.jsonl", true),
        ] {
            assert_eq!(session_name(Path::new(name)), session, "{name}");
        }
        assert_eq!(sniff(b"\x00\x01", true), Sniff::Skip("binary"));
        assert_eq!(sniff(b"  \n", true), Sniff::Skip("empty"));
        assert_eq!(sniff(b"# notes\n", true), Sniff::Skip("not JSON"));
        let package = b"{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\"\n}\n";
        assert!(matches!(sniff(package, true), Sniff::Skip(_)));
        let chat = b"{\n  \"sessionId\": \"abc\",\n  \"messages\": [\n";
        assert_eq!(sniff(chat, false), Sniff::Session);
        // A first line that runs past the block, naming its session.
        let long = b"{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"content\":\"aaaa";
        assert_eq!(sniff(long, false), Sniff::Session);
        // Undecided lines alone do not make a session.
        assert!(matches!(
            sniff(b"{\"a\":1}\n{\"b\":2}\n", true),
            Sniff::Skip(_)
        ));
    }

    #[test]
    fn counts_line() {
        let mut c = FileCounts::default();
        c.count(Some(Dialect::ClaudeProject));
        c.count(Some(Dialect::ClaudeProject));
        c.count(None);
        c.skipped = 3;
        assert_eq!(
            c.to_string(),
            "files=3 files_claude-project=2 files_unknown=1 files_skipped=3"
        );
    }
}
