//! OpenCode's SQLite session store (`~/.local/share/opencode/opencode.db`,
//! from v1.2.0), read as records for [`super::OpenCodeParser`].
//!
//! The tables (`session/session.sql.ts`): `session` (one row a session:
//! `id`, `project_id`, `parent_id`, `directory`, `title`, `version`,
//! `time_created`, `time_updated`, …), `message` (`id`, `session_id`,
//! `time_created`, `data`: the message's JSON without its ids) and `part`
//! (`id`, `message_id`, `session_id`, `data`: the part's JSON without its
//! ids). OpenCode itself lists a session's messages by `time_created, id`
//! and their parts by `id`; so does this reader, and the sessions by
//! `time_created, id`.
//!
//! Each session becomes the records of an export: `{"info": {…}}` made of
//! its columns, then per message `{"info": data, "parts": [data, …]}`,
//! one line each, written into a bounded channel that the input stage
//! reads like any input (so a bad row is a bad line, reported at its
//! record's number, and nothing else is lost). Memory holds one message
//! with its parts at a time.
//!
//! The file is opened read-only (`SQLITE_OPEN_READ_ONLY`) and read in one
//! read transaction: a running opencode goes on writing (a reader takes no
//! lock that stops a writer in WAL mode; SQLite reads the WAL itself), and
//! the sessions are read as of one moment. A database locked by a writer
//! in the old rollback-journal mode is waited for [`BUSY_MS`], then
//! reported; so is a file that is not OpenCode's store, or is damaged.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};

/// How long a lock held by a writer is waited for.
pub const BUSY_MS: u64 = 2000;

/// Chunks of records in flight between the database and the input stage.
const IN_FLIGHT: usize = 16;

/// The records of a database, read on a thread of their own.
pub struct Records {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Read for Records {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Records {
    /// Start reading the database at `path` (`only`: that one session).
    pub fn open(path: &Path, only: Option<String>) -> Records {
        let (tx, rx) = sync_channel(IN_FLIGHT);
        let path: PathBuf = path.to_path_buf();
        let thread = std::thread::spawn(move || {
            read(&path, only.as_deref(), &tx).map_err(|e| e.to_string())
        });
        Records {
            rx,
            buf: Vec::new(),
            at: 0,
            thread: Some(thread),
        }
    }

    /// Stop reading (when the input stage is done early) and say how the
    /// reading ended: why the database could not be read, if it could not.
    pub fn finish(mut self) -> Result<(), String> {
        // Dropping the receiver ends a reader still sending.
        let (dead_tx, dead_rx) = sync_channel(0);
        drop(dead_tx);
        drop(std::mem::replace(&mut self.rx, dead_rx));
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the database reader failed".to_owned()),
            None => Ok(()),
        }
    }
}

/// Why a database could not be read.
#[derive(Debug)]
enum DbError {
    Sql(rusqlite::Error),
    NotOpenCode,
    /// The input stage stopped reading.
    Gone,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sql(e) => write!(f, "cannot read this SQLite database: {e}"),
            DbError::NotOpenCode => f.write_str(
                "an SQLite database without OpenCode's tables (session, message, part); skipped",
            ),
            DbError::Gone => f.write_str("reading stopped"),
        }
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sql(e)
    }
}

/// Hands records to the input stage a chunk at a time.
struct Sender<'t> {
    tx: &'t SyncSender<Vec<u8>>,
    buf: Vec<u8>,
}

impl Sender<'_> {
    fn line(&mut self, rec: &[u8]) -> Result<(), DbError> {
        self.buf.extend_from_slice(rec);
        self.buf.push(b'\n');
        if self.buf.len() >= 64 * 1024 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), DbError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let b = std::mem::take(&mut self.buf);
        self.tx.send(b).map_err(|_| DbError::Gone)
    }
}

/// Whether a column holds one JSON value (else it is handed on alone, as
/// the bad line it is).
fn valid_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn read(path: &Path, only: Option<&str>, tx: &SyncSender<Vec<u8>>) -> Result<(), DbError> {
    let r = read_all(path, only, tx);
    match r {
        Err(DbError::Gone) => Ok(()),
        r => r,
    }
}

/// The database at `path` opened as OpenCode's store, read-only.
fn open_store(path: &Path) -> Result<Connection, DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(Duration::from_millis(BUSY_MS))?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
         AND name IN ('session', 'message', 'part')",
        [],
        |r| r.get(0),
    )?;
    if tables != 3 {
        return Err(DbError::NotOpenCode);
    }
    Ok(conn)
}

/// The ids of the sessions stored in the database at `path`, in the order
/// they are read; `None` when it is not a store that can be read.
pub fn session_ids(path: &Path) -> Option<Vec<String>> {
    let conn = open_store(path).ok()?;
    let mut st = conn
        .prepare("SELECT id FROM session ORDER BY time_created, id")
        .ok()?;
    let ids = st.query_map([], |r| r.get::<_, String>(0)).ok()?;
    ids.collect::<Result<Vec<_>, _>>().ok()
}

fn read_all(path: &Path, only: Option<&str>, tx: &SyncSender<Vec<u8>>) -> Result<(), DbError> {
    let conn = open_store(path)?;
    // One snapshot for the whole read; a reader never blocks a WAL writer.
    conn.execute_batch("BEGIN DEFERRED")?;
    let mut out = Sender {
        tx,
        buf: Vec::new(),
    };
    let mut sessions = conn.prepare(
        "SELECT id, project_id, parent_id, directory, title, version, time_created, time_updated \
         FROM session WHERE ?1 IS NULL OR id = ?1 ORDER BY time_created, id",
    )?;
    let mut messages = conn
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")?;
    let mut parts_of = conn.prepare("SELECT data FROM part WHERE message_id = ?1 ORDER BY id")?;
    let mut rows = sessions.query(params![only])?;
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        let text = |i: usize| -> Result<Option<String>, rusqlite::Error> { row.get(i) };
        let int = |i: usize| -> Result<Option<i64>, rusqlite::Error> { row.get(i) };
        let (project, parent, directory, title, version) =
            (text(1)?, text(2)?, text(3)?, text(4)?, text(5)?);
        let head = super::store_head(super::StoreHead {
            id: &id,
            project: project.as_deref(),
            parent: parent.as_deref(),
            directory: directory.as_deref(),
            title: title.as_deref(),
            version: version.as_deref(),
            created: int(6)?,
            updated: int(7)?,
        });
        out.line(head.as_bytes())?;
        let mut mrows = messages.query(params![id])?;
        while let Some(m) = mrows.next()? {
            let mid: String = m.get(0)?;
            let data: String = m.get(1)?;
            let mut rec = Vec::with_capacity(data.len() + 64);
            let mut bad: Vec<String> = Vec::new();
            if !valid_json(&data) {
                // Not JSON: a bad line of its own, the message skipped.
                bad.push(data);
            } else {
                rec.extend_from_slice(b"{\"info\":");
                rec.extend_from_slice(data.trim().as_bytes());
                rec.extend_from_slice(b",\"parts\":[");
                let mut first = true;
                let mut prow = parts_of.query(params![mid])?;
                while let Some(p) = prow.next()? {
                    let pdata: String = p.get(0)?;
                    if !valid_json(&pdata) {
                        bad.push(pdata);
                        continue;
                    }
                    if !first {
                        rec.push(b',');
                    }
                    first = false;
                    rec.extend_from_slice(pdata.trim().as_bytes());
                }
                rec.extend_from_slice(b"]}");
                out.line(&rec)?;
            }
            for b in bad {
                // One line: the framer reports it as not JSON.
                out.line(b.replace(['\n', '\r'], " ").as_bytes())?;
            }
        }
    }
    out.flush()
}
