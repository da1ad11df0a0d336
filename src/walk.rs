//! Directory arguments: the files of a tree, in a fixed order, that are
//! sessions an agent saved, as the command line reads a directory.
//!
//! [`expand`] turns the paths a user named into [`Input`]s for
//! [`convert_inputs`](crate::convert_inputs). Which files are sessions is
//! decided by the same rule the readers' dialect detection uses (file
//! names first, then each file's first lines), so it lives in the library
//! rather than in each program that reads directories.
//!
//! A tree is walked depth-first with the entries of each directory sorted
//! by name (byte order), so the same tree always gives the same files in
//! the same order, whatever order the file system lists them in. Symbolic
//! links are followed; a link back to a directory being walked (a loop) is
//! reported and not followed, and counted as skipped.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::diag::{Diag, excerpt};
#[cfg(test)]
use crate::dialect::archive::session_name;
use crate::dialect::archive::{Sniff, sniff};
use crate::dialect::claude::offload;
use crate::dialect::opencode::{STORE_NAME, storage};
use crate::run::{BINARY_SNIFF_BYTES, Input};

/// Why a walk skips a file that is no agent's session (its name, its first
/// lines), said once for all of them in the warnings.
pub use crate::run::NOT_AGENT_OUTPUT;

/// The inputs of a command line, with its directories replaced by the
/// session files in them.
#[derive(Debug, Default)]
pub struct Expanded {
    /// What to read, in order.
    pub inputs: Vec<Input>,
    /// Some directory was walked (`--stats` then counts files).
    pub walked: bool,
    /// Files the walks did not read.
    pub skipped: u64,
    /// Per input, its name for `--output-dir`: its path under the
    /// directory it was found in, or its file name.
    pub names: Vec<PathBuf>,
}

/// Replace each directory of `args` by its session files (`-` is standard
/// input; anything else is read as it is, as `cat` would). No arguments is
/// standard input. Problems go to `diag`: an unreadable directory or file is an error (exit status 2, like
/// a named file that cannot be read), a symlink loop a warning.
///
/// `sniff_now`: each file's first block is read during the walk, and only
/// sessions are listed; otherwise every file with a session's name is
/// listed as [`Input::Found`], sniffed when it is converted (once, by the
/// thread that converts it) and skipped there if it is not one.
pub fn expand(args: &[PathBuf], sniff_now: bool, diag: &mut Diag<'_>) -> Expanded {
    expand_each(args, sniff_now, diag, &mut |_| {})
}

/// [`expand`], handing `each` every input as soon as it is found, in
/// order: a walk's files one by one as the walk comes to them (when not
/// `sniff_now`), so that a caller may begin on the first while the rest
/// of the tree is walked.
pub fn expand_each(
    args: &[PathBuf],
    sniff_now: bool,
    diag: &mut Diag<'_>,
    each: &mut dyn FnMut(&Input),
) -> Expanded {
    let mut out = Expanded::default();
    if args.is_empty() {
        out.inputs.push(Input::Stdin);
        out.names.push(PathBuf::from("-"));
        each(&Input::Stdin);
    }
    for arg in args {
        if arg.as_os_str() == "-" {
            out.inputs.push(Input::Stdin);
            out.names.push(PathBuf::from("-"));
            each(&Input::Stdin);
        } else if arg.is_dir() {
            out.walked = true;
            walk(arg, sniff_now, diag, &mut out, each);
        } else {
            out.inputs.push(Input::Path(arg.clone()));
            out.names
                .push(arg.file_name().map_or_else(|| arg.clone(), PathBuf::from));
            each(&Input::Path(arg.clone()));
        }
    }
    out
}

fn name(p: &Path) -> String {
    excerpt(&p.display().to_string(), usize::MAX)
}

fn walk(
    dir: &Path,
    sniff_now: bool,
    diag: &mut Diag<'_>,
    out: &mut Expanded,
    each: &mut dyn FnMut(&Input),
) {
    // The files that may be sessions, in walk order; their first blocks are
    // read after the walk, several at a time.
    // (path, is OpenCode's storage directory).
    let mut candidates: Vec<(PathBuf, bool)> = Vec::new();
    let mut entries = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().map_or_else(|| name(dir), name);
                if let Some(ancestor) = e.loop_ancestor() {
                    out.skipped += 1;
                    diag.note(format_args!(
                        "{path}: a symbolic link back to {}; not followed",
                        name(ancestor)
                    ));
                } else {
                    let cause = e
                        .io_error()
                        .map_or_else(|| e.to_string(), io::Error::to_string);
                    diag.error(format_args!("{path}: {cause}"));
                }
                continue;
            }
        };
        if entry.file_type().is_dir() {
            if storage::is_root(entry.path()) {
                // OpenCode's sessions before v1.2: one input, its files
                // read as sessions, never one by one.
                entries.skip_current_dir();
                if entry.depth() > 0 && superseded(entry.path()) {
                    out.skipped += 1;
                    diag.note(format_args!(
                        "{}: OpenCode's storage directory beside its {STORE_NAME}, into which OpenCode 1.2 moved these sessions; not read (name the directory to read it)",
                        name(entry.path())
                    ));
                } else {
                    found(
                        sniff_now,
                        &mut candidates,
                        (entry.into_path(), true),
                        dir,
                        out,
                        each,
                    );
                }
            }
            continue;
        }
        let path = entry.path();
        // The name checks read the entry's own name as bytes: the `Path`
        // forms parse the whole path from the end for each question, which
        // was a fifth of the walk's instructions on a tree of small files.
        let file_name = entry.file_name().as_encoded_bytes();
        // A Claude Code output saved beside its transcript is read with
        // that transcript: part of a session, not a file left out. (Only a
        // path that names a `tool-results` folder can be one.)
        if memchr::memmem::find(path.as_os_str().as_encoded_bytes(), b"tool-results").is_some()
            && offload::saved_beside_transcript(path)
        {
            continue;
        }
        // Sockets, FIFOs and devices are no saved sessions; nor is a file
        // whose name no session file has.
        if !entry.file_type().is_file() || !session_file_name(file_name) {
            out.skipped += 1;
            diag.skipped_file(name(path), NOT_AGENT_OUTPUT);
            continue;
        }
        // Codex keeps the plain rollout while it still appends to it and
        // may leave a compressed copy beside it for a moment: the plain
        // file is the session (as Codex itself reads it).
        if extension(file_name) == Some(b"zst") && compressed_twin(path) {
            out.skipped += 1;
            diag.skipped_file(
                name(path),
                "a compressed copy of the file beside it, which is read",
            );
            continue;
        }
        found(
            sniff_now,
            &mut candidates,
            (entry.into_path(), false),
            dir,
            out,
            each,
        );
    }
    if !sniff_now {
        // Each was listed as it was found.
        return;
    }
    let name_in = |path: &Path| name_under(path, dir);
    let files: Vec<PathBuf> = candidates
        .iter()
        .filter(|(_, st)| !st)
        .map(|(p, _)| p.clone())
        .collect();
    let mut sniffed = sniff_all(&files).into_iter();
    for (path, is_storage) in &candidates {
        if *is_storage {
            out.inputs.push(Input::Path(path.clone()));
            out.names.push(name_in(path));
            continue;
        }
        let Some(sniffed) = sniffed.next() else {
            break;
        };
        match sniffed {
            // Another agent's file is read to be said to be one.
            Ok(Sniff::Session | Sniff::Foreign(_)) => {
                out.inputs.push(Input::Path(path.clone()));
                let name = under(path, dir).unwrap_or(path);
                out.names.push(name.to_path_buf());
            }
            Ok(Sniff::Skip(_)) => {
                out.skipped += 1;
                diag.skipped_file(name(path), NOT_AGENT_OUTPUT);
            }
            Err(e) => diag.error(format_args!("{}: {e}", name(path))),
        }
    }
}

/// A file (or OpenCode's storage directory) the walk of `dir` found that
/// may be a session: listed at once when it is not sniffed now, with its
/// name under `dir` and handed to `each`; otherwise kept among the
/// `candidates` sniffed when the walk ends.
fn found(
    sniff_now: bool,
    candidates: &mut Vec<(PathBuf, bool)>,
    candidate: (PathBuf, bool),
    dir: &Path,
    out: &mut Expanded,
    each: &mut dyn FnMut(&Input),
) {
    if sniff_now {
        candidates.push(candidate);
        return;
    }
    let path = candidate.0;
    out.names.push(name_under(&path, dir));
    let input = Input::Found(path);
    each(&input);
    out.inputs.push(input);
}

/// The name of `path`, found in the walk of `dir`, under `dir` (OpenCode's
/// storage directory named itself has its directory's name).
fn name_under(path: &Path, dir: &Path) -> PathBuf {
    match under(path, dir) {
        Ok(n) if n.as_os_str().is_empty() => path
            .file_name()
            .map_or_else(|| PathBuf::from(storage::DIR_NAME), PathBuf::from),
        Ok(n) => n.to_path_buf(),
        Err(_) => path.to_path_buf(),
    }
}

/// `path` without the directory `dir` it was found under, as
/// [`Path::strip_prefix`] gives it. The walk makes each path by joining
/// names to `dir`, so the bytes of `dir` and a separator begin it: those
/// are cut off without parsing either path into components (a tenth of
/// the walk's instructions); anything else is left to `strip_prefix`.
fn under<'p>(path: &'p Path, dir: &Path) -> Result<&'p Path, std::path::StripPrefixError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let (p, d) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
        let rest = p.strip_prefix(d).and_then(|rest| match rest.split_first() {
            Some((&b'/', rest)) if !d.is_empty() && !d.ends_with(b"/") => Some(rest),
            Some(_) if d.ends_with(b"/") => Some(rest),
            _ => None,
        });
        // Plain names joined by single separators: nothing that
        // `strip_prefix` would normalize.
        if let Some(rest) = rest.filter(|r| plain_relative(r)) {
            return Ok(Path::new(std::ffi::OsStr::from_bytes(rest)));
        }
    }
    path.strip_prefix(dir)
}

/// Bytes that [`Path::strip_prefix`] would give back unchanged as a
/// relative path: not empty, no leading, trailing or doubled separator, no
/// `.` component (names a directory listing gives, joined by `/`).
#[cfg(unix)]
fn plain_relative(rest: &[u8]) -> bool {
    !rest.is_empty()
        && rest
            .split(|&b| b == b'/')
            .all(|part| !part.is_empty() && part != b".")
}

/// The extension of a file name as [`Path::extension`] gives it: what
/// follows the last dot, unless the dot begins the name (or the name is
/// `..`).
fn extension(name: &[u8]) -> Option<&[u8]> {
    stem_and_extension(name).1
}

fn stem_and_extension(name: &[u8]) -> (&[u8], Option<&[u8]>) {
    if name == b".." {
        return (name, None);
    }
    match name.iter().rposition(|&b| b == b'.') {
        Some(0) | None => (name, None),
        Some(i) => (&name[..i], Some(&name[i + 1..])),
    }
}

/// [`session_name`] of a file name, read as bytes.
fn session_file_name(name: &[u8]) -> bool {
    let json = |n: &[u8]| extension(n).is_some_and(|e| matches!(e, b"jsonl" | b"json" | b"ndjson"));
    let (stem, ext) = stem_and_extension(name);
    if ext == Some(b"zst") {
        // `Path::new(stem)`: `.` and `..` name no file.
        return stem != b"." && stem != b".." && json(stem);
    }
    json(name)
        // OpenCode's session store (read with the `sqlite` feature only).
        || (cfg!(feature = "sqlite") && name == STORE_NAME.as_bytes())
}

/// OpenCode's storage directory beside the `opencode.db` that OpenCode
/// 1.2 moved its sessions into (read only when the build reads it).
fn superseded(storage: &Path) -> bool {
    cfg!(feature = "sqlite")
        && storage
            .parent()
            .is_some_and(|p| p.join(STORE_NAME).is_file())
}

/// `x.jsonl.zst` beside an `x.jsonl`.
fn compressed_twin(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst") && path.with_extension("").is_file()
}

/// What the sniffing rule makes of each file, in order. Reading the first
/// blocks is most of the walk's time on a tree of small transcripts (it
/// reads most of each file), and it happens before any file is converted:
/// the files are shared out to as many threads as there are cores.
fn sniff_all(paths: &[PathBuf]) -> Vec<io::Result<Sniff>> {
    let one = |p: &PathBuf| first_block(p).map(|(block, whole)| sniff(&block, whole));
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    // Below this many files a thread costs more than it saves.
    const PER_THREAD: usize = 32;
    if threads < 2 || paths.len() < 2 * PER_THREAD {
        return paths.iter().map(one).collect();
    }
    let size = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = paths
            .chunks(size)
            .map(|part| scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The first block of `path`, and whether it is the whole file.
///
/// A zstd-compressed file's block is the first block of what it
/// decompresses to (`crate::input::zstd`), so that the rule sees its lines.
fn first_block(path: &Path) -> io::Result<(Vec<u8>, bool)> {
    let f = File::open(path)?;
    let (block, whole) = block_of(f)?;
    #[cfg(feature = "zstd")]
    if crate::input::zstd::is_zstd(&block) {
        let f = io::BufReader::new(File::open(path)?);
        return block_of(crate::input::zstd::Decompress::new(f));
    }
    Ok((block, whole))
}

fn block_of(r: impl Read) -> io::Result<(Vec<u8>, bool)> {
    let mut block = Vec::with_capacity(8 * 1024);
    // One byte more than the block tells whether the file goes on.
    r.take(BINARY_SNIFF_BYTES as u64 + 1)
        .read_to_end(&mut block)?;
    let whole = block.len() <= BINARY_SNIFF_BYTES;
    block.truncate(BINARY_SNIFF_BYTES);
    Ok((block, whole))
}

impl Expanded {
    /// For one output per input (`--output-dir`): each session store
    /// (OpenCode's `opencode.db`, or its storage directory from before
    /// v1.2) becomes one input per session it holds, named `<store name
    /// without extension>/<session id>`. A file that is not a store that
    /// can be read stays one input (its error is reported when it is read).
    pub fn split_stores(&mut self) {
        let inputs = std::mem::take(&mut self.inputs);
        let names = std::mem::take(&mut self.names);
        for (input, name) in inputs.into_iter().zip(names) {
            let ids = match &input {
                Input::Path(p) | Input::Found(p) if p.is_dir() && storage::is_root(p) => {
                    storage::session_ids(p)
                }
                Input::Path(p) | Input::Found(p) => db_session_ids(p),
                _ => None,
            };
            match (ids, input.file()) {
                (Some(ids), Some(db)) => {
                    let dir = name.with_extension("");
                    for id in ids {
                        self.names.push(dir.join(&id));
                        self.inputs.push(Input::Stored {
                            db: db.clone(),
                            session: id,
                        });
                    }
                }
                _ => {
                    self.inputs.push(input);
                    self.names.push(name);
                }
            }
        }
    }
}

/// The sessions of the SQLite store at `p`, if it is one.
#[cfg(feature = "sqlite")]
fn db_session_ids(p: &Path) -> Option<Vec<String>> {
    let mut head = [0u8; 16];
    let is_store = File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| crate::dialect::opencode::is_sqlite(&head));
    is_store
        .then(|| crate::dialect::opencode::db::session_ids(p))
        .flatten()
}

#[cfg(not(feature = "sqlite"))]
fn db_session_ids(_p: &Path) -> Option<Vec<String>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pieces that make the names where the `Path` rules have corners:
    /// dots at either end, doubled, alone, and the extensions the walk
    /// looks for.
    fn name() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                ".", "..", "a", "x", "jsonl", "json", "ndjson", "zst", "opencode", "db", "-", "é",
            ]),
            1..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// The byte reading of a file name says what `session_name` says
        /// of a path ending in it.
        #[test]
        fn name_checks_on_bytes_agree_with_the_path_forms(n in name()) {
            let path = Path::new("dir").join(&n);
            prop_assert_eq!(
                extension(n.as_bytes()),
                path.extension().map(|e| e.as_encoded_bytes()),
                "{}", n
            );
            prop_assert_eq!(session_file_name(n.as_bytes()), session_name(&path), "{}", n);
        }

        /// A path the walk made (names joined to its directory argument)
        /// loses the argument as `strip_prefix` cuts it, whatever the
        /// argument's spelling (`.`, `..`, doubled or trailing separators).
        #[test]
        fn name_under_the_argument_is_strip_prefix(
            dir in prop::collection::vec(
                prop::sample::select(vec!["", ".", "..", "a", "b.c", "/", "//", "./", "a/"]),
                0..5,
            ),
            rest in prop::collection::vec(name(), 1..4),
        ) {
            let dir = PathBuf::from(dir.concat());
            let mut path = dir.clone();
            for n in &rest {
                path.push(n);
            }
            prop_assert_eq!(
                under(&path, &dir).ok().map(Path::as_os_str),
                path.strip_prefix(&dir).ok().map(Path::as_os_str),
                "{:?} {:?}", path, dir
            );
            // And a path not under it is left to `strip_prefix`.
            let other = Path::new("elsewhere").join(&rest[0]);
            prop_assert_eq!(
                under(&other, &dir).ok().map(Path::as_os_str),
                other.strip_prefix(&dir).ok().map(Path::as_os_str)
            );
        }
    }
}
