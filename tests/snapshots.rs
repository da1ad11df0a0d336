//! Every fixture in every output format, snapshotted with insta. Review each
//! accepted snapshot as if it were code.

mod common;

use common::{FORMATS, fixtures, fixtures_dir, run_fixture, show_escapes};

#[test]
fn fixtures_in_every_format() {
    let fixtures = fixtures();
    assert!(!fixtures.is_empty(), "no fixtures found");
    for path in fixtures {
        let rel = path
            .strip_prefix(fixtures_dir())
            .unwrap()
            .to_str()
            .unwrap()
            .replace(['/', '\\'], "__");
        for (name, args) in FORMATS {
            let run = run_fixture(&path, args);
            let mut shown = show_escapes(&run.out());
            if !run.stderr.is_empty() {
                shown.push_str("\n----- stderr -----\n");
                shown.push_str(&run.stderr);
            }
            shown.push_str(&format!("\n----- exit {} -----\n", run.code));
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_suffix(rel.clone());
            settings.set_input_file(&path);
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| insta::assert_snapshot!(*name, shown));
        }
    }
}
