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
