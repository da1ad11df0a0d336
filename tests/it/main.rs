//! The integration tests, as one test binary: each file is a module, so the
//! crate and its dependencies are linked once instead of once per file (the
//! cold build of the tests roughly halves on two cores).
//!
//! A new test file goes here as a module; `layout::every_test_file_is_compiled`
//! fails on a `.rs` file left directly in `tests/`, which cargo would no longer
//! build (`autotests = false`).
//!
//! The memory tests (`tests/memory/`) are the one other binary: they install a
//! counting global allocator, which must not see the allocations of tests
//! running beside them.

#[path = "../common/mod.rs"]
mod common;

mod anthropic;
mod antigravity;
mod api;
mod archive;
mod atif;
mod backpressure;
mod bench_gen;
mod chat_core;
mod claude_fidelity;
mod cli;
mod codex_fidelity;
mod copilot;
mod dialects;
mod documents;
mod drift;
mod exit_status;
mod figures;
mod generated;
mod hostile;
mod images;
mod index_names;
mod interrupt;
mod invariants;
mod jobs;
mod layout;
mod mmap;
mod new_agents;
mod not_read;
mod not_understood;
mod openai;
mod opencode;
mod opencode_storage;
mod otlp;
mod outdir;
mod progress;
mod properties;
mod readme;
mod reasoning;
mod redact;
mod redact_fast;
mod regression;
mod release;
mod responses;
mod roundtrip;
mod rows_messages;
mod rows_stream;
mod schema;
mod sessions;
mod skipped_files;
mod snapshots;
mod summary;
mod surrogate_scan;
mod text_terminal;
mod text_tool_calls;
mod transcript;
mod transforms;
mod usage;
mod usage_reads;
mod window;
mod wrong_from;
