//! What a release promises (docs/release.md): `--version` names the events
//! schema version the build writes, the changelog has a section for the
//! version being built, and the package name is the same in Cargo.toml,
//! pyproject.toml and the release docs, so a rename or a version bump cannot
//! leave one of them behind.

use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The value of `key = "…"` in the `[table]` of a TOML file (a line scan:
/// enough for the two manifests, whose keys are one per line).
fn toml_string(text: &str, table: &str, key: &str) -> Option<String> {
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{table}]");
        } else if inside
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().trim_matches('"').to_string());
        }
    }
    None
}

#[test]
fn version_names_the_schema_version() {
    let out = assert_cmd::Command::cargo_bin("cstream")
        .unwrap()
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "cstream {} (events schema {})\n",
            env!("CARGO_PKG_VERSION"),
            cstream::event::SCHEMA_VERSION
        )
    );
    // The version the events themselves carry is that same constant.
    let mut events = Vec::new();
    let input = br#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#;
    let config = cstream::Config::new(cstream::Format::Events);
    cstream::convert(&input[..], &mut events, &config).unwrap();
    let first: serde_json::Value = serde_json::from_slice(&events).unwrap();
    assert_eq!(
        first["schemaVersion"],
        u64::from(cstream::event::SCHEMA_VERSION)
    );
}

#[test]
fn changelog_has_a_section_for_this_version() {
    let changelog = read("CHANGELOG.md");
    let version = env!("CARGO_PKG_VERSION");
    let headings: Vec<&str> = changelog
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    assert_eq!(
        headings.first(),
        Some(&"Unreleased"),
        "CHANGELOG.md must open with an Unreleased section"
    );
    // `## 0.1.0` or `## 0.1.0 (2026-12-01)`.
    assert!(
        headings
            .iter()
            .any(|h| h.split_whitespace().next() == Some(version)),
        "CHANGELOG.md has no `## {version}` section; its sections: {headings:?}"
    );
}

#[test]
fn one_package_name_and_version_everywhere() {
    let name = env!("CARGO_PKG_NAME");
    let cargo = read("Cargo.toml");
    assert_eq!(
        toml_string(&cargo, "package", "name").as_deref(),
        Some(name)
    );
    // The command and the library keep their own name under the package's.
    assert_eq!(
        toml_string(&cargo, "lib", "name").as_deref(),
        Some("cstream")
    );
    assert_eq!(
        toml_string(&cargo, "[bin]", "name").as_deref(),
        Some("cstream")
    );

    let pyproject = read("python/pyproject.toml");
    assert_eq!(
        toml_string(&pyproject, "project", "name").as_deref(),
        Some(name),
        "python/pyproject.toml's distribution name differs from Cargo.toml's package name"
    );
    // The wheel's version is the Python crate's.
    assert_eq!(
        toml_string(&read("python/Cargo.toml"), "package", "version").as_deref(),
        Some(env!("CARGO_PKG_VERSION")),
        "python/Cargo.toml's version (the wheel's) differs from Cargo.toml's"
    );

    let release = read("docs/release.md");
    for line in [
        format!("cargo install --locked {name}"),
        format!("pip install {name}"),
        format!("package = \"{name}\""),
    ] {
        assert!(
            release.contains(&line),
            "docs/release.md does not say `{line}`"
        );
    }
    assert!(
        read("CHANGELOG.md").contains(&format!("`{name}`")),
        "CHANGELOG.md does not name the package `{name}`"
    );
}
