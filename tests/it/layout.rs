//! The test tree itself: every test file is compiled.

use std::path::Path;

/// With `autotests = false`, cargo builds only the targets Cargo.toml names,
/// so a test file dropped straight into `tests/` would never run. Every `.rs`
/// file there must be a declared target, and every file in `tests/it/` and
/// `tests/memory/` a module of its binary.
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
    for dir in ["it", "memory"] {
        let main = std::fs::read_to_string(root.join(format!("tests/{dir}/main.rs"))).unwrap();
        for e in std::fs::read_dir(root.join("tests").join(dir))
            .unwrap()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(module) = name.strip_suffix(".rs")
                && module != "main"
                && !main.lines().any(|l| l.trim() == format!("mod {module};"))
            {
                orphans.push(format!(
                    "tests/{dir}/{name} (no `mod {module};` in tests/{dir}/main.rs)"
                ));
            }
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

/// Which top-level modules of `src/` each module names (`crate::x`), outside
/// its `#[cfg(test)]` code.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut graph = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let deps = graph.entry(top.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() && name != top {
                deps.insert(name);
            }
        }
    }
    graph
}

/// The stages depend on each other one way only: no import cycle between
/// top-level modules, the event model depends on nothing but the JSON
/// helpers, and neither of `transform` and `output` names the other
/// (docs/ARCHITECTURE.md#module-map).
#[test]
fn module_dependencies_form_a_dag() {
    let graph = module_graph();
    let shown: Vec<String> = graph
        .iter()
        .map(|(m, d)| {
            format!(
                "{m} -> {}",
                d.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let shown = shown.join("\n");
    // Kahn's algorithm: what is left over sits on a cycle.
    let mut left = graph.clone();
    loop {
        let free: Vec<String> = left
            .iter()
            .filter(|(_, d)| d.iter().all(|x| !left.contains_key(x)))
            .map(|(m, _)| m.clone())
            .collect();
        if free.is_empty() {
            break;
        }
        for m in free {
            left.remove(&m);
        }
    }
    assert!(
        left.is_empty(),
        "import cycle among {:?}\n{shown}",
        left.keys()
    );
    let deps = |m: &str| graph.get(m).cloned().unwrap_or_default();
    assert!(
        deps("event").iter().all(|d| d == "json"),
        "event names more than json:\n{shown}"
    );
    assert!(!deps("output").contains("transform"), "{shown}");
    assert!(!deps("transform").contains("output"), "{shown}");
    assert!(!deps("dialect").contains("transform"), "{shown}");
    assert!(!deps("dialect").contains("output"), "{shown}");
}
