//! The committed man page and shell completions are generated from the clap
//! definition; this test fails when they are stale.
//!
//! Regenerate with: `CSTREAM_BLESS=1 cargo test --test it generated::`

use std::path::Path;

use cstream::cli::{Generate, generate};

#[test]
fn man_page_and_completions_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("CSTREAM_BLESS").is_some();
    let mut stale = Vec::new();
    for kind in Generate::ALL {
        let mut fresh = Vec::new();
        generate(kind, &mut fresh).expect("generate into a Vec");
        let path = root.join(kind.path());
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &fresh).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&fresh[..]) {
            stale.push(kind.path());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nregenerate with: CSTREAM_BLESS=1 cargo test --test it generated::"
    );
}

#[test]
fn generate_flag_writes_the_same_bytes() {
    let out = assert_cmd::Command::cargo_bin("cstream")
        .unwrap()
        .args(["--generate", "man"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut fresh = Vec::new();
    generate(Generate::Man, &mut fresh).unwrap();
    assert_eq!(out.stdout, fresh);
}
