//! The inputs of a run: standard input, a file, a walked file sniffed as it
//! is opened, one session of a session store.

use std::path::PathBuf;

/// One input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    Path(PathBuf),
    /// A file a directory walk found: converted only when its first block
    /// passes the sniffing rule (`crate::dialect::archive::sniff`), else skipped and
    /// counted. Sniffing as it is opened reads each file once, on the
    /// thread that converts it, instead of reading every file's first block
    /// before the first is converted.
    Found(PathBuf),
    /// One session of a session store (OpenCode's `opencode.db`, or its
    /// storage directory from before v1.2): `--output-dir` writes each
    /// stored session to a file of its own.
    Stored {
        /// The database file, or the storage directory.
        db: PathBuf,
        /// The session's id.
        session: String,
    },
}

impl Input {
    /// The name diagnostics use.
    pub fn display_name(&self) -> String {
        match self {
            Input::Stdin => "-".to_owned(),
            // A file name is untrusted too: it goes into warnings on a
            // terminal, so its control characters are escaped.
            Input::Path(p) | Input::Found(p) => {
                crate::diag::excerpt(&p.display().to_string(), usize::MAX)
            }
            Input::Stored { db, session } => {
                crate::diag::excerpt(&format!("{} (session {session})", db.display()), usize::MAX)
            }
        }
    }

    /// The input's name without the directories it was named with: `-`,
    /// a file's name, a stored session's store and id. What `--summary`
    /// shows when the run was not told the name under its directory
    /// argument (the `input_names` of its `Config`).
    pub fn short_name(&self) -> String {
        let file = |p: &PathBuf| {
            let name = p.file_name().map_or(p.as_os_str(), |n| n);
            crate::diag::excerpt(&name.to_string_lossy(), usize::MAX)
        };
        match self {
            Input::Stdin => "-".to_owned(),
            Input::Path(p) | Input::Found(p) => file(p),
            Input::Stored { db, session } => format!(
                "{} (session {})",
                file(db),
                crate::diag::excerpt(session, usize::MAX)
            ),
        }
    }

    /// The file read, unless it is standard input.
    pub fn file(&self) -> Option<&PathBuf> {
        match self {
            Input::Stdin => None,
            Input::Path(p) | Input::Found(p) | Input::Stored { db: p, .. } => Some(p),
        }
    }

    /// The one stored session read of a session store.
    pub(super) fn stored_session(&self) -> Option<&str> {
        match self {
            Input::Stored { session, .. } => Some(session),
            _ => None,
        }
    }
}
