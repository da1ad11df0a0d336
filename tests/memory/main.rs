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
