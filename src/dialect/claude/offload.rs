//! Claude Code's offloaded tool results.
//!
//! A tool output too large to keep in the conversation (about 30 KB and up)
//! is saved to `<session>/tool-results/<name>` beside the transcript
//! (`<session>.jsonl`), and the tool result in the transcript holds only a
//! stub: `<persisted-output>`, a line naming the file (`Full output saved
//! to: PATH`, older builds `Tool result saved to: PATH`), a preview of its
//! start, `</persisted-output>`. Bash results also say it in their own
//! object (`persistedOutputPath`).
//!
//! The reader shows the saved output in place of the stub when the file is
//! there. The path in the record is the one on the machine that wrote it;
//! only its last three parts (`<session>/tool-results/<name>`) are used,
//! looked up beside the transcript being read, so an archive copied
//! elsewhere still finds its files and a record can never make cstream read
//! a file outside the session's own folder.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The most of one saved output that is read: a longer one keeps its first
/// and last halves of this, with a note of what was left out (the end of a
/// command's output is where its errors are).
pub const OFFLOAD_BYTES: usize = 4 * 1024 * 1024;

/// The stub's opening tag, which only a record with an offloaded output holds.
pub const STUB_OPEN: &str = "<persisted-output>";

/// The parts of a saved output's path that are used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference<'a> {
    /// The session folder's name (the session id).
    pub session: &'a str,
    /// The file's name inside `tool-results/`.
    pub name: &'a str,
}

/// The path of the saved output a tool result's text refers to, as the
/// record writes it, if the text is a stub naming a `tool-results` file.
pub fn stub_path(text: &str) -> Option<&str> {
    let start = text.find(STUB_OPEN)?;
    let inner = &text[start + STUB_OPEN.len()..];
    let at = inner.find("saved to: ")?;
    let path = &inner[at + "saved to: ".len()..];
    let end = path.find(['\n', '\r', '<']).unwrap_or(path.len());
    let path = path[..end].trim();
    path_reference(path).map(|_| path)
}

/// The `<session>/tool-results/<name>` end of a saved output's path
/// (written with `/` or `\`, as the machine that saved it spells paths).
pub fn path_reference(path: &str) -> Option<Reference<'_>> {
    let mut parts = path.rsplit(['/', '\\']);
    let name = parts.next()?;
    let dir = parts.next()?;
    let session = parts.next().unwrap_or("");
    let plain = |s: &str| !s.is_empty() && s != "." && s != "..";
    (dir == "tool-results" && plain(name)).then_some(Reference {
        session: if plain(session) { session } else { "" },
        name,
    })
}

/// Whether `path` is an output Claude Code saved for a transcript found
/// beside it: `<stem>/tool-results/<name>` next to `<stem>.jsonl` (the
/// transcript reads it; a walk passes over it without calling it skipped).
/// A sub-agent's outputs sit in its session's folder, which has the
/// session's transcript beside it, so the same rule covers them.
#[cfg(feature = "walk")]
pub fn saved_beside_transcript(path: &Path) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    if dir.file_name().is_none_or(|n| n != "tool-results") {
        return false;
    }
    let Some(session) = dir.parent() else {
        return false;
    };
    let (Some(stem), Some(up)) = (session.file_name(), session.parent()) else {
        return false;
    };
    let mut transcript = stem.to_owned();
    transcript.push(".jsonl");
    up.join(transcript).is_file()
}

/// Where the saved output may be, beside the transcript at `source`: in the
/// transcript's own session folder (`<stem>/tool-results/`), in the folder
/// of the session the path names, and, for a sub-agent's transcript
/// (`<session>/subagents/agent-<id>.jsonl`), in its session's folder.
pub fn candidates(source: &Path, r: &Reference<'_>) -> Vec<PathBuf> {
    let dir = source.parent().unwrap_or(Path::new(""));
    let mut out = Vec::with_capacity(3);
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(stem) = source.file_stem() {
        push(dir.join(stem).join("tool-results").join(r.name));
    }
    if !r.session.is_empty() {
        push(dir.join(r.session).join("tool-results").join(r.name));
    }
    if dir.file_name().is_some_and(|n| n == "subagents")
        && let Some(session_dir) = dir.parent()
    {
        push(session_dir.join("tool-results").join(r.name));
    }
    out
}

/// The saved output at `path`, read without holding more than
/// [`OFFLOAD_BYTES`] of it: the whole text when it fits, else its first and
/// last halves around a note. Bytes that are not UTF-8 are replaced.
pub fn read_bounded(path: &Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len <= OFFLOAD_BYTES as u64 {
        let mut buf = Vec::with_capacity(len as usize);
        f.read_to_end(&mut buf)?;
        return Ok(lossy(buf));
    }
    let half = OFFLOAD_BYTES / 2;
    let mut head = vec![0; half];
    f.read_exact(&mut head)?;
    f.seek(SeekFrom::End(-(half as i64)))?;
    let mut tail = Vec::with_capacity(half);
    f.read_to_end(&mut tail)?;
    // Cut at character boundaries: a character split by the cut is left
    // out whole (its bytes are counted as omitted).
    let head_end = utf8_floor(&head);
    let tail_start = tail
        .iter()
        .take(4)
        .position(|b| b & 0xC0 != 0x80)
        .unwrap_or(0);
    let omitted = len - head_end as u64 - (tail.len() - tail_start) as u64;
    let mut s = lossy(head[..head_end].to_vec());
    s.push_str(&format!(
        "\n[cstream: {omitted} bytes of the saved output not shown; the whole output is in {}]\n",
        path.display()
    ));
    s.push_str(&String::from_utf8_lossy(&tail[tail_start..]));
    Ok(s)
}

/// The length of `b` less a character cut short at its end.
fn utf8_floor(b: &[u8]) -> usize {
    let n = b.len();
    for back in 1..=n.min(4) {
        let c = b[n - back];
        if c & 0xC0 == 0x80 {
            continue;
        }
        let need = match c {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        return if need > back { n - back } else { n };
    }
    n
}

fn lossy(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_in_both_stub_shapes_and_both_path_styles() {
        let new = "<persisted-output>\nOutput too large (83.6KB). Full output saved to: \
                   /home/u/.claude/projects/-p/d1c6/tool-results/btmv.txt\n\nPreview (first 2KB):\nx\n</persisted-output>";
        assert_eq!(
            stub_path(new).and_then(path_reference),
            Some(Reference {
                session: "d1c6",
                name: "btmv.txt"
            })
        );
        let old = "<persisted-output>Tool result saved to: C:\\Users\\a b\\.claude\\projects\\H--p\\679a\\tool-results\\toolu_01.txt\n\nUse Read to view</persisted-output>";
        assert_eq!(
            stub_path(old).and_then(path_reference),
            Some(Reference {
                session: "679a",
                name: "toolu_01.txt"
            })
        );
        assert_eq!(stub_path("no stub, saved to: /a/tool-results/b"), None);
        assert_eq!(path_reference("/a/tool-results/.."), None);
        assert_eq!(path_reference("/a/other/x.txt"), None);
    }

    #[test]
    fn long_outputs_keep_both_ends_cut_at_characters() {
        let dir = std::env::temp_dir().join(format!("cstream-offload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("big.txt");
        // 'é' is two bytes: the halves fall inside characters.
        let text = format!("a{}z", "é".repeat(OFFLOAD_BYTES));
        std::fs::write(&p, &text).unwrap();
        let got = read_bounded(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(got.starts_with("aé") && got.ends_with("éz"));
        assert!(got.len() <= OFFLOAD_BYTES + 200, "{}", got.len());
        assert!(!got.contains('\u{FFFD}'));
        let (head, rest) = got.split_once("\n[cstream: ").unwrap();
        let (note, tail) = rest.split_once("]\n").unwrap();
        let omitted: usize = note.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(head.len() + omitted + tail.len(), text.len());
    }
}
