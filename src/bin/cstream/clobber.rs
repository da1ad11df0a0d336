//! Refuse to write over an input: `cstream -o run.jsonl run.jsonl` would
//! truncate the file before reading it, and `cstream run.jsonl >> run.jsonl`
//! would read its own output forever.
//!
//! Files are compared by identity (device and inode on unix, so a symlink or
//! a hard link to an input is caught too), never by name. Only regular files
//! count: a terminal or a pipe can be both standard input and standard output
//! without anything being overwritten. Nothing is opened to find out (a
//! named pipe given as input would block on open); paths are `stat`ed and
//! the standard streams `fstat`ed.

use std::io::Read;
use std::path::Path;

use cstream::Input;

/// Where the output goes.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    /// Standard output.
    Stdout,
    /// `-o FILE`.
    Path(&'a Path),
}

/// The identity of a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId(
    #[cfg(unix)] (u64, u64),
    // Elsewhere the canonical path (symlinks resolved) stands in; hard
    // links are not recognized there.
    #[cfg(not(unix))] std::path::PathBuf,
);

/// The identity of the regular file at `path` (symlinks followed), or
/// `None` when there is none (missing, a directory, a device, a FIFO).
fn path_id(path: &Path) -> Option<FileId> {
    let md = std::fs::metadata(path).ok()?;
    if !md.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(FileId((md.dev(), md.ino())))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok().map(FileId)
    }
}

/// The identity of the regular file a standard stream is redirected to.
#[cfg(unix)]
fn stream_id(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    // A duplicate of the descriptor, closed again on drop: `fstat` needs a
    // `File`, and the stream itself must stay open.
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    let md = file.metadata().ok()?;
    md.is_file().then(|| FileId((md.dev(), md.ino())))
}

fn stdin_id() -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        stream_id(std::io::stdin().as_fd())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

fn stdout_id() -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        stream_id(std::io::stdout().as_fd())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether standard output is redirected to a regular file (which may be
/// one of the inputs).
pub fn stdout_is_a_file() -> bool {
    stdout_id().is_some()
}

/// The first input that is the same file as `output`, as the name to show
/// (the input's own name, `-` for standard input).
pub fn input_written_over(output: Output<'_>, inputs: &[Input]) -> Option<String> {
    let out = match output {
        Output::Stdout => stdout_id(),
        Output::Path(p) => path_id(p),
    }?;
    inputs
        .iter()
        .find(|input| {
            let id = match input {
                Input::Stdin => stdin_id(),
                Input::Path(p) | Input::Found(p) | Input::Stored { db: p, .. } => path_id(p),
            };
            id.as_ref() == Some(&out)
        })
        .map(Input::display_name)
}

/// Why a report appended to `path` (`--summary`, `--outputs`) must not be
/// written there: the file is one of the inputs, or a regular file whose
/// first non-blank byte is `{`, JSON: a session or a stream, never a
/// Markdown summary or `key=value` lines. `cstream --summary session.jsonl`
/// (the input given where the report's file was meant, reading standard
/// input instead) would otherwise append Markdown to the session file.
/// `None`: the report may be appended. Only a regular file is opened.
pub fn report_refused(path: &Path, inputs: &[Input]) -> Option<String> {
    if let Some(input) = input_written_over(Output::Path(path), inputs) {
        return Some(format!("it is the input {input}"));
    }
    path_id(path)?;
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let first = head[..n].iter().find(|b| !b.is_ascii_whitespace())?;
    (*first == b'{').then(|| "it holds JSON (a session or a stream?), not a report".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_file_by_identity_not_name() {
        let dir = std::env::temp_dir().join(format!("cstream-clobber-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.jsonl");
        let b = dir.join("b.jsonl");
        std::fs::write(&a, "{}\n").unwrap();
        std::fs::write(&b, "{}\n").unwrap();
        let inputs = [Input::Path(a.clone())];
        assert_eq!(
            input_written_over(Output::Path(&a), &inputs),
            Some(Input::Path(a.clone()).display_name())
        );
        assert_eq!(input_written_over(Output::Path(&b), &inputs), None);
        // An output that does not exist yet is nobody's input.
        assert_eq!(
            input_written_over(Output::Path(&dir.join("new.jsonl")), &inputs),
            None
        );
        // A path spelled differently is still the same file.
        let dotted = dir.join(".").join("a.jsonl");
        assert!(input_written_over(Output::Path(&dotted), &inputs).is_some());
        #[cfg(unix)]
        {
            let link = dir.join("link.jsonl");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert!(input_written_over(Output::Path(&link), &inputs).is_some());
            let hard = dir.join("hard.jsonl");
            let _ = std::fs::remove_file(&hard);
            std::fs::hard_link(&a, &hard).unwrap();
            assert!(input_written_over(Output::Path(&hard), &inputs).is_some());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reports_are_not_appended_to_inputs_or_json() {
        let dir = std::env::temp_dir().join(format!("cstream-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let session = file("s.jsonl", "\n  {\"type\":\"system\"}\n");
        let md = file("summary.md", "### cstream: ok\n\n{not json}\n");
        let kv = file("outputs.txt", "outcome=ok\n");
        let empty = file("empty.md", "");
        assert!(
            report_refused(&session, &[])
                .unwrap()
                .contains("holds JSON")
        );
        assert_eq!(report_refused(&md, &[]), None);
        assert_eq!(report_refused(&kv, &[]), None);
        assert_eq!(report_refused(&empty, &[]), None);
        assert_eq!(report_refused(&dir.join("new.md"), &[]), None);
        // A directory is nobody's report file: left to the writer's error.
        assert_eq!(report_refused(&dir, &[]), None);
        let inputs = [Input::Path(md.clone())];
        assert!(
            report_refused(&md, &inputs)
                .unwrap()
                .starts_with("it is the input ")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
