//! Every fixture in every output format, snapshotted with insta. Review each
//! accepted snapshot as if it were code.
//!
//! `insta::glob!` runs every fixture and reports every mismatch before it
//! fails (one changed fixture does not hide the next), and
//! `INSTA_GLOB_FILTER=cursor/basic.jsonl` narrows a run to some fixtures.

use crate::common;

use common::{FORMATS, fixtures, fixtures_dir, in_storage_tree, run_fixture, show_escapes};

#[test]
fn fixtures_in_every_format() {
    // The glob must see exactly the fixtures the other suites sweep.
    let mut seen = 0;
    let mut settings = insta::Settings::clone_current();
    // The snapshots predate the single test binary and stay in tests/snapshots/.
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::glob!("../../fixtures", "**/*.{jsonl,json}", |path| {
            // A storage directory's files are one fixture, the directory
            // (tests/it/opencode_storage.rs).
            if in_storage_tree(path) {
                return;
            }
            seen += 1;
            for (name, args) in FORMATS {
                let run = run_fixture(path, args);
                let mut shown = show_escapes(&run.out());
                if !run.stderr.is_empty() {
                    shown.push_str("\n----- stderr -----\n");
                    // Warnings name the file by the path it was opened with, which is
                    // absolute here; show it relative so snapshots match in any checkout.
                    let abs = format!("{}{}", fixtures_dir().display(), std::path::MAIN_SEPARATOR);
                    shown.push_str(&run.stderr.replace(&abs, "fixtures/"));
                }
                shown.push_str(&format!("\n----- exit {} -----\n", run.code));
                insta::assert_snapshot!(*name, shown);
            }
        });
    });
    if std::env::var_os("INSTA_GLOB_FILTER").is_none() {
        assert_eq!(
            seen,
            fixtures().len(),
            "the glob and common::fixtures() disagree"
        );
    }
}
