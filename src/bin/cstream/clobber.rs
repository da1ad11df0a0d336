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
}
