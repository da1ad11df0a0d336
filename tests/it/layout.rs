//! The test tree itself: every test file is compiled.

use std::path::Path;

/// With `autotests = false`, cargo builds only the targets Cargo.toml names,
/// so a test file dropped straight into `tests/` would never run. Every `.rs`
/// file there must be a declared target, and every file in `tests/it/` a module.
#[test]
fn every_test_file_is_compiled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut orphans = Vec::new();
    for e in std::fs::read_dir(root.join("tests")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && !manifest.contains(&format!("\"tests/{name}\"")) {
            orphans.push(format!(
                "tests/{name} (not a [[test]] target in Cargo.toml)"
            ));
        }
    }
    let main = std::fs::read_to_string(root.join("tests/it/main.rs")).unwrap();
    for e in std::fs::read_dir(root.join("tests/it")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(module) = name.strip_suffix(".rs")
            && module != "main"
            && !main.lines().any(|l| l.trim() == format!("mod {module};"))
        {
            orphans.push(format!(
                "tests/it/{name} (no `mod {module};` in tests/it/main.rs)"
            ));
        }
    }
    assert!(
        orphans.is_empty(),
        "test files that are never compiled: {orphans:#?}"
    );
}

/// The format list is the library's (`Format::ALL`); every format in it has
/// a snapshot row and a well-formedness rule, so a new format cannot slip
/// past the sweeps that run every row.
#[test]
fn every_format_is_swept() {
    use crate::common::{FORMATS, format_of, to_values, wellformed};
    for name in to_values() {
        assert!(
            FORMATS.iter().any(|(_, args)| format_of(args).0 == name),
            "no FORMATS row (tests/common/mod.rs) for --to {name}"
        );
        assert!(
            wellformed::check(name, false, b"").is_ok(),
            "no wellformed::check rule (tests/common/wellformed.rs) for --to {name}"
        );
    }
}
