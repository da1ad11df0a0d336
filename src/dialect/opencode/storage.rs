//! OpenCode's JSON storage directory, the session store before v1.2
//! (`~/.local/share/opencode/storage/`), read as records for
//! [`super::OpenCodeParser`].
//!
//! One pretty-printed JSON file per object, each named by its id
//! (`storage/storage.ts` writes `<key…>.json`; the v1.2 migration,
//! `storage/json-migration.ts`, reads the same layout back):
//!
//! - `session/<projectID>/<sessionID>.json`: a session's info;
//! - `message/<sessionID>/<messageID>.json`: a message's info;
//! - `part/<messageID>/<partID>.json`: one part of that message;
//! - `project/`, `todo/`, `session_diff/`, `session_share/`, … : nothing
//!   a transcript shows.
//!
//! Each session becomes the same records as the SQLite store gives
//! ([`super::db`]): a head made of the session's own fields, then per
//! message `{"info": message, "parts": [part, …]}`, one line each. Sessions
//! come in the store's order (created, then id); a session's messages and
//! a message's parts in id order, as OpenCode listed them (`Storage.list`
//! sorts its keys, and ids are time-sortable). One message with its parts
//! is held at a time.
//!
//! What is damaged or dangling is a [`Problem`] naming the file, and
//! nothing else is lost: a file that is not JSON is skipped alone;
//! messages whose session file is missing are read as a session of their
//! own; parts whose message is missing cannot be placed and are counted.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::hash::BuildHasher;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::json::LaxInt;

/// The name OpenCode gives the directory (under its data directory).
#[cfg_attr(not(feature = "walk"), allow(dead_code))]
pub const DIR_NAME: &str = "storage";

/// Whether `dir` is an OpenCode storage directory: it has the `session`
/// and `message` directories this reader reads.
pub fn is_root(dir: &Path) -> bool {
    dir.join("session").is_dir() && dir.join("message").is_dir()
}

/// The storage directory and session id of `path` when it is a session
/// file of a storage directory (`<root>/session/<projectID>/<id>.json`).
pub fn session_file(path: &Path) -> Option<(PathBuf, String)> {
    if path.extension() != Some(OsStr::new("json")) {
        return None;
    }
    let project = path.parent()?;
    let sessions = project.parent()?;
    if sessions.file_name() != Some(OsStr::new("session")) {
        return None;
    }
    let root = sessions.parent()?;
    let id = path.file_stem()?.to_str()?.to_owned();
    is_root(root).then(|| (root.to_path_buf(), id))
}

/// Something of the directory that could not be read as it should.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The record (line) it belongs with: the next one written then.
    pub line: u64,
    /// What, naming the file or directory.
    pub message: String,
    /// Data was lost (a file that is not JSON, parts that cannot be
    /// placed), not only repaired.
    pub lost: bool,
}

/// The entries of `dir` as (stem, path) of its `.json` files or its
/// directories, sorted by stem (byte order: ids sort by time).
fn entries(dir: &Path, dirs: bool) -> io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let path = e.path();
        let is_dir = path.is_dir();
        if is_dir != dirs {
            continue;
        }
        if !dirs && path.extension() != Some(OsStr::new("json")) {
            // OpenCode's own temporary files, editors' backups.
            continue;
        }
        let stem = if dirs {
            path.file_name()
        } else {
            path.file_stem()
        };
        // A name that is not UTF-8 is no id OpenCode made.
        if let Some(s) = stem.and_then(OsStr::to_str) {
            out.push((s.to_owned(), path));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The `.json` files of `dir`, or none when it does not exist.
fn files_of(dir: &Path) -> io::Result<Option<Vec<(String, PathBuf)>>> {
    match entries(dir, false) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A session file's fields that its head carries.
#[derive(Deserialize, Default)]
struct SessionInfo {
    #[serde(rename = "parentID", default)]
    parent_id: Option<serde_json::Value>,
    #[serde(default)]
    directory: Option<serde_json::Value>,
    #[serde(default)]
    title: Option<serde_json::Value>,
    #[serde(default)]
    version: Option<serde_json::Value>,
    #[serde(default)]
    time: Option<SessionTime>,
}

#[derive(Deserialize, Default)]
struct SessionTime {
    #[serde(default)]
    created: LaxInt,
    #[serde(default)]
    updated: LaxInt,
}

/// One session to read: its id, and its file (none: messages whose
/// session file is missing).
struct SessionRef {
    created: Option<i64>,
    id: String,
    project: Option<String>,
    file: Option<PathBuf>,
}

/// The sessions of the directory at `root`, in the order they are read,
/// with what was wrong in listing them.
fn list(root: &Path) -> io::Result<(Vec<SessionRef>, Vec<String>)> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut known = HashSet::new();
    for (project, dir) in entries(&root.join("session"), true)? {
        for (id, file) in entries(&dir, false)? {
            // The created time orders the sessions; a file that cannot be
            // read is reported when its session is.
            let created = std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice::<SessionInfo>(&b).ok())
                .and_then(|i| i.time)
                .and_then(|t| t.created.0);
            known.insert(id.clone());
            out.push(SessionRef {
                created,
                id,
                project: Some(project.clone()),
                file: Some(file),
            });
        }
    }
    for (id, dir) in entries(&root.join("message"), true)? {
        if known.contains(&id) {
            continue;
        }
        notes.push(format!(
            "{}: messages of a session with no session file; read as a session without its title, directory or times",
            dir.display()
        ));
        out.push(SessionRef {
            created: None,
            id,
            project: None,
            file: None,
        });
    }
    // As the SQLite store orders them; sessions without a time last.
    out.sort_by(|a, b| {
        (a.created.is_none(), a.created, &a.id).cmp(&(b.created.is_none(), b.created, &b.id))
    });
    Ok((out, notes))
}

/// The ids of the sessions of the directory at `root`, in the order they
/// are read; `None` when it cannot be listed.
#[cfg_attr(not(feature = "walk"), allow(dead_code))]
pub fn session_ids(root: &Path) -> Option<Vec<String>> {
    list(root)
        .ok()
        .map(|(s, _)| s.into_iter().map(|s| s.id).collect())
}

/// `bytes` without the whitespace between JSON tokens: a pretty-printed
/// file made one line, its members and strings unchanged. `None` when it
/// is not one JSON value.
fn one_line(bytes: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let mut out = Vec::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in text.as_bytes() {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            in_string = b == b'"';
            out.push(b);
        }
    }
    Some(out)
}

/// A message id, kept as a hash: what is left of the part directories
/// after every session was read is dangling.
fn key(hasher: &std::collections::hash_map::RandomState, id: &str) -> u64 {
    hasher.hash_one(id)
}

/// The records of a storage directory, made as they are read.
pub struct Records {
    root: PathBuf,
    sessions: std::vec::IntoIter<SessionRef>,
    /// The messages of the session being read, still to come.
    messages: std::vec::IntoIter<(String, PathBuf)>,
    buf: Vec<u8>,
    at: usize,
    /// Records written so far.
    lines: u64,
    problems: Vec<Problem>,
    /// Every session is read: the part directories no message claimed
    /// are reported at the end.
    whole: bool,
    seen: HashSet<u64>,
    hasher: std::collections::hash_map::RandomState,
    done: bool,
}

impl Records {
    /// Start reading the directory at `root` (`only`: that one session).
    /// An error: it cannot be listed.
    pub fn open(root: &Path, only: Option<&str>) -> io::Result<Records> {
        let (mut sessions, notes) = list(root)?;
        if let Some(id) = only {
            sessions.retain(|s| s.id == id);
        }
        let problems = notes
            .into_iter()
            .filter(|n| only.is_none_or(|id| n.contains(id)))
            .map(|message| Problem {
                line: 1,
                message,
                lost: false,
            })
            .collect();
        Ok(Records {
            root: root.to_path_buf(),
            sessions: sessions.into_iter(),
            messages: Vec::new().into_iter(),
            buf: Vec::new(),
            at: 0,
            lines: 0,
            problems,
            whole: only.is_none(),
            seen: HashSet::new(),
            hasher: std::collections::hash_map::RandomState::new(),
            done: false,
        })
    }

    /// What could not be read as it should, in the order it was met.
    pub fn problems(&mut self) -> Vec<Problem> {
        std::mem::take(&mut self.problems)
    }

    fn problem(&mut self, lost: bool, message: String) {
        self.problems.push(Problem {
            line: self.lines + 1,
            message,
            lost,
        });
    }

    fn line(&mut self, rec: &[u8]) {
        self.buf.extend_from_slice(rec);
        self.buf.push(b'\n');
        self.lines += 1;
    }

    /// The next records into `buf`: a session's head, or one message.
    /// `false`: there are none left.
    fn next(&mut self) -> io::Result<bool> {
        if let Some((id, file)) = self.messages.next() {
            self.message(&id, &file)?;
            return Ok(true);
        }
        let Some(s) = self.sessions.next() else {
            if self.whole && !self.done {
                self.done = true;
                self.dangling_parts()?;
            }
            return Ok(false);
        };
        self.head(&s);
        // A session opened and left without a message has no directory:
        // an empty session (said so when it ends), not damage.
        let dir = self.root.join("message").join(&s.id);
        self.messages = files_of(&dir)?.unwrap_or_default().into_iter();
        Ok(true)
    }

    fn head(&mut self, s: &SessionRef) {
        let mut info = SessionInfo::default();
        if let Some(file) = &s.file {
            match std::fs::read(file)
                .map_err(|e| e.to_string())
                .and_then(|b| serde_json::from_slice::<SessionInfo>(&b).map_err(|e| e.to_string()))
            {
                Ok(i) => info = i,
                Err(e) => self.problem(
                    true,
                    format!(
                        "{}: not a session file OpenCode wrote ({e}); its messages are read without it",
                        file.display()
                    ),
                ),
            }
        }
        let time = info.time.unwrap_or_default();
        let head = super::store_head(super::StoreHead {
            id: &s.id,
            project: s.project.as_deref(),
            parent: info.parent_id.as_ref().and_then(serde_json::Value::as_str),
            directory: info.directory.as_ref().and_then(serde_json::Value::as_str),
            title: info.title.as_ref().and_then(serde_json::Value::as_str),
            version: info.version.as_ref().and_then(serde_json::Value::as_str),
            created: time.created.0,
            updated: time.updated.0,
        });
        self.line(head.as_bytes());
    }

    fn message(&mut self, id: &str, file: &Path) -> io::Result<()> {
        self.seen.insert(key(&self.hasher, id));
        let dir = self.root.join("part").join(id);
        let parts = files_of(&dir)?;
        let info = match std::fs::read(file) {
            Ok(b) => one_line(&b),
            Err(e) => {
                self.problem(true, format!("{}: {e}", file.display()));
                return Ok(());
            }
        };
        let Some(info) = info else {
            let n = parts.as_ref().map_or(0, Vec::len);
            self.problem(
                true,
                format!(
                    "{}: not JSON; this message and its {n} part(s) are not read",
                    file.display()
                ),
            );
            return Ok(());
        };
        let mut rec = Vec::with_capacity(info.len() + 64);
        rec.extend_from_slice(b"{\"info\":");
        rec.extend_from_slice(&info);
        rec.extend_from_slice(b",\"parts\":[");
        match parts {
            None => self.problem(
                false,
                format!(
                    "{}: no part files ({} does not exist); the message is read empty",
                    file.display(),
                    dir.display()
                ),
            ),
            Some(parts) => {
                let mut first = true;
                for (_, pfile) in parts {
                    let part = match std::fs::read(&pfile) {
                        Ok(b) => one_line(&b),
                        Err(e) => {
                            self.problem(true, format!("{}: {e}", pfile.display()));
                            continue;
                        }
                    };
                    let Some(part) = part else {
                        self.problem(
                            true,
                            format!("{}: not JSON; this part is not read", pfile.display()),
                        );
                        continue;
                    };
                    if !first {
                        rec.push(b',');
                    }
                    first = false;
                    rec.extend_from_slice(&part);
                }
            }
        }
        rec.extend_from_slice(b"]}");
        self.line(&rec);
        Ok(())
    }

    /// Part directories of messages no session holds.
    fn dangling_parts(&mut self) -> io::Result<()> {
        let dirs = match entries(&self.root.join("part"), true) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for (id, dir) in dirs {
            if self.seen.contains(&key(&self.hasher, &id)) {
                continue;
            }
            let n = files_of(&dir)?.map_or(0, |f| f.len());
            if n == 0 {
                continue;
            }
            self.problem(
                true,
                format!(
                    "{}: {n} part(s) of message {id}, which no message directory holds; not read",
                    dir.display()
                ),
            );
        }
        Ok(())
    }
}

impl Read for Records {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.buf.len() {
            self.buf.clear();
            self.at = 0;
            if !self.next()? {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_keeps_strings_and_member_order() {
        let pretty = b"{\n  \"b\": \"a  \\\"x\\\" \\\\\",\n  \"a\": [ 1, 2 ]\n}\n";
        let got = one_line(pretty).unwrap();
        assert_eq!(got, br#"{"b":"a  \"x\" \\","a":[1,2]}"#);
        assert_eq!(one_line(b"{\"a\": "), None);
        assert_eq!(one_line(b"\xff"), None);
    }

    #[test]
    fn session_file_needs_a_storage_root() {
        let p = Path::new("/nonexistent/storage/session/prj/ses_1.json");
        assert_eq!(session_file(p), None);
    }
}
