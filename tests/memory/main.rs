//! The memory tests, as one test binary of their own: it installs a counting
//! global allocator (counting.rs), which must not see the allocations of the
//! integration tests in tests/it/, and each test here takes
//! `counting::exclusive()` so they measure one at a time. One binary rather
//! than one per file: each test binary links the crate and its dependencies
//! again.
//!
//! A new file here goes in as a module; `layout::every_test_file_is_compiled`
//! (tests/it/layout.rs) fails on one that is not.

mod counting;

mod document_framing;
mod documents;
mod jobs;
#[cfg(feature = "zstd")]
mod zstd;

/// Every test here takes `exclusive()` in its first statement: one that
/// builds its input first allocates while another test measures, and that
/// test fails now and then (a stop's CI once failed so: tests/memory/jobs.rs
/// made its 4,400 inputs before taking the lock).
#[test]
fn every_memory_test_takes_the_lock_first() {
    let _alone = counting::exclusive();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/memory");
    let mut late = Vec::new();
    let mut tests = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "#[test]" {
                continue;
            }
            tests += 1;
            let head = lines.next().unwrap_or_default();
            // The first statement: the first line after the signature that
            // is neither blank nor a comment.
            let first = lines
                .by_ref()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("//"))
                .unwrap_or_default();
            if !(first.starts_with("let _") && first.contains("exclusive()")) {
                late.push(format!("{}: {} → {first}", path.display(), head.trim()));
            }
        }
    }
    assert!(tests >= 5, "found only {tests} tests in {}", dir.display());
    assert!(
        late.is_empty(),
        "tests that allocate before the lock:\n{}",
        late.join("\n")
    );
}
