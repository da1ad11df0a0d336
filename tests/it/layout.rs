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

/// The Rust files of `src/`, as (path relative to `src/`, code outside
/// `#[cfg(test)]` and comments).
fn sources() -> Vec<(String, String)> {
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
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (rel, code)
        })
        .collect()
}

/// The path segments after each `prefix` in `code` (`crate::a::B` → `[a, B]`).
fn paths_after<'c>(code: &'c str, prefix: &str) -> Vec<Vec<&'c str>> {
    code.match_indices(prefix)
        .filter(|(i, _)| {
            // `crate::` itself, not the end of another word.
            !code[..*i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .flat_map(|(i, _)| {
            let rest = &code[i + prefix.len()..];
            // `crate::{a::B, c}`: each item of the group is a path of its own.
            let group = rest.strip_prefix('{').map(|g| {
                let mut depth = 1;
                let end = g
                    .char_indices()
                    .find(|&(_, c)| {
                        depth += i32::from(c == '{') - i32::from(c == '}');
                        depth == 0
                    })
                    .map_or(g.len(), |(j, _)| j);
                &g[..end]
            });
            let items: Vec<&str> = match group {
                Some(g) => g.split(',').map(str::trim).collect(),
                None => vec![rest],
            };
            items
                .into_iter()
                .map(|item| {
                    let end = item
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .unwrap_or(item.len());
                    item[..end].split("::").filter(|s| !s.is_empty()).collect()
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Which top-level modules of `src/` each module names (`crate::x`), outside
/// its `#[cfg(test)]` code. The crate root is a node too, `lib`: a module
/// that names an item of the root (`crate::Format`, `crate::parse_time`,
/// whatever its case) reaches back up through the root's re-exports.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let sources = sources();
    let tops: std::collections::BTreeSet<String> = sources
        .iter()
        .map(|(rel, _)| {
            rel.split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .collect();
    let mut graph = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for (rel, code) in &sources {
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        // The binary is a crate of its own (`the_binary_is_a_crate_of_its_own`).
        if top == "bin" {
            continue;
        }
        let deps = graph.entry(top.clone()).or_default();
        for path in paths_after(code, "crate::") {
            let Some(first) = path.first() else { continue };
            let name = if tops.contains(*first) && *first != "lib" && *first != "main" {
                (*first).to_owned()
            } else {
                "lib".to_owned()
            };
            if name != top {
                deps.insert(name);
            }
        }
    }
    graph
}

/// Kahn's algorithm: the nodes left over sit on a cycle.
fn on_a_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<String> {
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
    left.into_keys().collect()
}

/// Files of one folder do not depend on each other in a circle either
/// (`documents/builder.rs` and `documents/meta.rs` once named each other):
/// the edges are `super::sibling` and `crate::…::folder::sibling`.
#[test]
fn sibling_modules_form_a_dag() {
    let sources = sources();
    let mut folders = std::collections::BTreeMap::<
        String,
        std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    >::new();
    for (rel, code) in &sources {
        if rel.starts_with("bin/") {
            continue;
        }
        let (folder, file) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
        let module = file.trim_end_matches(".rs");
        if module == "mod" || module == "lib" || module == "main" {
            continue;
        }
        let siblings: std::collections::BTreeSet<String> = sources
            .iter()
            .filter_map(|(r, _)| {
                let (f, n) = r.rsplit_once('/').unwrap_or(("", r.as_str()));
                let n = n.trim_end_matches(".rs");
                (f == folder && !matches!(n, "mod" | "lib" | "main")).then(|| n.to_owned())
            })
            .collect();
        let own: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
        let mut deps = std::collections::BTreeSet::new();
        for path in paths_after(code, "super::") {
            if let Some(first) = path.first()
                && siblings.contains(*first)
                && *first != module
            {
                deps.insert((*first).to_owned());
            }
        }
        for path in paths_after(code, "crate::") {
            if path.len() > own.len()
                && path[..own.len()] == own[..]
                && siblings.contains(path[own.len()])
                && path[own.len()] != module
            {
                deps.insert(path[own.len()].to_owned());
            }
        }
        folders
            .entry(folder.to_owned())
            .or_default()
            .insert(module.to_owned(), deps);
    }
    for (folder, graph) in &folders {
        let cycle = on_a_cycle(graph);
        assert!(
            cycle.is_empty(),
            "src/{folder}: the files {cycle:?} name each other in a circle: {graph:?}"
        );
    }
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
    let cycle = on_a_cycle(&graph);
    assert!(cycle.is_empty(), "import cycle among {cycle:?}\n{shown}");
    assert!(
        graph.iter().all(|(m, d)| m == "lib" || !d.contains("lib")),
        "a module names an item of the crate root (a re-export) instead of the module that \
         defines it:\n{shown}"
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

/// The binary (`src/bin/cstream/`) is a crate of its own over the library's
/// public API: its root declares each of its files as a module, its modules
/// name each other one way only (`crate::x` is the binary's `x`), and the
/// library names nothing of it nor keeps a part for it (no `cli` feature
/// gate, no hidden door).
#[test]
fn the_binary_is_a_crate_of_its_own() {
    let sources = sources();
    let bin: Vec<(String, String)> = sources
        .iter()
        .filter_map(|(rel, code)| {
            let file = rel.strip_prefix("bin/cstream/")?;
            Some((file.trim_end_matches(".rs").to_owned(), code.clone()))
        })
        .collect();
    let modules: std::collections::BTreeSet<String> = bin
        .iter()
        .map(|(m, _)| m.clone())
        .filter(|m| m != "main")
        .collect();
    assert!(modules.contains("cli"), "{modules:?}");
    let main = &bin
        .iter()
        .find(|(m, _)| m == "main")
        .expect("src/bin/cstream/main.rs")
        .1;
    for m in &modules {
        assert!(
            main.lines().any(|l| l.trim() == format!("mod {m};")),
            "src/bin/cstream/{m}.rs is not a module of the binary"
        );
    }
    let mut graph = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for (m, code) in bin.iter().filter(|(m, _)| m != "main") {
        let deps = graph.entry(m.clone()).or_default();
        for path in paths_after(code, "crate::") {
            let first = path.first().copied().unwrap_or_default();
            assert!(
                modules.contains(first),
                "src/bin/cstream/{m}.rs names crate::{}, which is no module of the binary",
                path.join("::")
            );
            if first != m {
                deps.insert(first.to_owned());
            }
        }
    }
    let cycle = on_a_cycle(&graph);
    assert!(
        cycle.is_empty(),
        "the binary's modules {cycle:?} name each other in a circle"
    );
    for (rel, code) in sources.iter().filter(|(rel, _)| !rel.starts_with("bin/")) {
        for gate in ["feature = \"cli\"", "__internal", "doc(hidden)"] {
            assert!(
                !code.contains(gate),
                "src/{rel} has {gate}: the library keeps nothing for the binary"
            );
        }
    }
}
