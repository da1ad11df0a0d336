//! The README's and the docs' examples are run. Each ```` ```console ````
//! block (in README.md and in every page of docs/) holds
//! commands (`$ cstream …`, run from the repository root on the bundled
//! fixtures) each followed by the output it gives; this test runs every one
//! and compares the output byte for byte (standard output, then standard
//! error).
//!
//! After a deliberate change of output, rewrite the shown output with
//! `CSTREAM_BLESS=1 cargo test --test it readme::` and review the README's
//! diff like a snapshot's.

use std::path::Path;
use std::process::Command;

const FENCE: &str = "```console";

/// The words of a command line: split at spaces, with '…' and "…" quoting.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    assert!(quote.is_none(), "an unclosed quote in {line:?}");
    if any {
        out.push(cur);
    }
    out
}

/// What `$ <line>` prints, as the README shows it (without the last newline).
fn run(root: &Path, line: &str) -> String {
    let words = words(line);
    assert_eq!(
        words.first().map(String::as_str),
        Some("cstream"),
        "README examples run cstream only: {line:?}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cstream"))
        .args(&words[1..])
        .current_dir(root)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    let mut shown = String::from_utf8(out.stdout).expect("UTF-8 output");
    shown.push_str(&String::from_utf8(out.stderr).expect("UTF-8 diagnostics"));
    shown.truncate(shown.trim_end_matches('\n').len());
    shown
}

/// The README with every console block's output replaced by what its
/// commands print now, and the commands whose output differed.
fn rebuild(root: &Path, readme: &str) -> (String, Vec<String>, usize) {
    let mut out = String::new();
    let mut stale = Vec::new();
    let mut commands = 0;
    let mut lines = readme.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line != FENCE {
            continue;
        }
        loop {
            let line = lines.next().expect("a console block is closed");
            if line == "```" {
                out.push_str("```\n");
                break;
            }
            let cmd = line
                .strip_prefix("$ ")
                .unwrap_or_else(|| panic!("a console block starts with `$ `: {line:?}"));
            let mut shown = Vec::new();
            while let Some(l) = lines.next_if(|l| *l != "```" && !l.starts_with("$ ")) {
                shown.push(l);
            }
            let fresh = run(root, cmd);
            if shown.join("\n") != fresh {
                stale.push(cmd.to_owned());
            }
            commands += 1;
            out.push_str(line);
            out.push('\n');
            if !fresh.is_empty() {
                out.push_str(&fresh);
                out.push('\n');
            }
        }
    }
    (out, stale, commands)
}

/// README.md and the pages of docs/, in name order.
fn pages(root: &Path) -> Vec<std::path::PathBuf> {
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

#[test]
fn readme_examples_give_the_output_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("CSTREAM_BLESS").is_some();
    let mut stale = Vec::new();
    let mut in_readme = 0;
    let mut total = 0;
    for path in pages(root) {
        let text = std::fs::read_to_string(&path).unwrap();
        let (fresh, page_stale, commands) = rebuild(root, &text);
        if path == root.join("README.md") {
            in_readme = commands;
        }
        total += commands;
        let name = path.strip_prefix(root).unwrap().display().to_string();
        stale.extend(page_stale.into_iter().map(|c| format!("{name}: {c}")));
        if bless && fresh != text {
            std::fs::write(&path, fresh).unwrap();
        }
    }
    assert!(
        in_readme >= 2,
        "only {in_readme} tested examples in the README"
    );
    assert!(
        total >= 10,
        "only {total} tested examples in README and docs"
    );
    if bless {
        return;
    }
    assert!(
        stale.is_empty(),
        "examples whose output changed: {stale:#?}\n\
         rewrite them with: CSTREAM_BLESS=1 cargo test --test it readme::"
    );
}

/// Every file the README and the docs name as an example input is in the
/// repository.
#[test]
fn readme_names_only_files_a_clone_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in pages(root) {
        names_only_files_a_clone_has(root, &page);
    }
}

fn names_only_files_a_clone_has(root: &Path, page: &Path) {
    let readme = std::fs::read_to_string(page).unwrap();
    let page = page.strip_prefix(root).unwrap().display();
    for word in readme.split(|c: char| c.is_whitespace() || "`()[],;".contains(c)) {
        let word = word.trim_end_matches(['.', ':']);
        if (word.starts_with("fixtures/")
            || word.starts_with("man/")
            || word.starts_with("completions/"))
            && !word.contains('…')
            && !word.contains('*')
        {
            assert!(
                root.join(word).exists(),
                "{page} names {word}, which a clone does not have"
            );
        }
    }
    for gone in ["research/", "seeds/", "SPEC.md"] {
        assert!(
            !readme.contains(gone),
            "{page} cites {gone}, which a clone does not have"
        );
    }
}

#[test]
fn command_words() {
    assert_eq!(
        words(r#"cstream --to events 'a b.jsonl' "c"  d"#),
        ["cstream", "--to", "events", "a b.jsonl", "c", "d"]
    );
}

/// The GitHub Actions workflow in docs/ci.md: its `cstream` commands, run the
/// way the runner would (the agent's stream on standard input, the step
/// summary and output files from the environment), on a bundled fixture that
/// succeeds and one that fails. A change of flag names or of `-e`'s verdict
/// that would break a copied workflow fails here.
#[test]
fn readme_ci_workflow_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/ci.md")).unwrap();
    let section = &readme[readme.find("## GitHub Actions").expect("the CI section")..];
    let start = section.find("```yaml\n").expect("a yaml block") + 8;
    let block = &section[start..start + section[start..].find("```").unwrap()];
    let commands: Vec<&str> = block
        .lines()
        .filter_map(|l| l.find("cstream -").map(|i| &l[i..]))
        .map(|c| c.split(" >").next().unwrap().trim_end_matches(['\\', ' ']))
        .collect();
    assert_eq!(
        commands.len(),
        2,
        "the workflow's cstream commands: {commands:?}"
    );
    let dir = std::env::temp_dir().join(format!("cstream-readme-ci-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (fixture, status, outcome) in [
        ("fixtures/claude/whole-lines.jsonl", 0, "outcome=success"),
        (
            "fixtures/claude/error-max-turns.jsonl",
            3,
            "outcome=failure",
        ),
    ] {
        let (summary, outputs) = (dir.join("summary.md"), dir.join("outputs.txt"));
        let _ = std::fs::remove_file(&summary);
        let _ = std::fs::remove_file(&outputs);
        let args = |line: &str| -> Vec<String> {
            words(line)[1..]
                .iter()
                .map(|w| match w.as_str() {
                    "$GITHUB_STEP_SUMMARY" => summary.display().to_string(),
                    "$GITHUB_OUTPUT" => outputs.display().to_string(),
                    "run.jsonl" => fixture.to_string(),
                    _ => w.clone(),
                })
                .collect()
        };
        let piped = Command::new(env!("CARGO_BIN_EXE_cstream"))
            .args(args(commands[0]))
            .current_dir(root)
            .stdin(std::fs::File::open(root.join(fixture)).unwrap())
            .output()
            .unwrap();
        assert_eq!(piped.status.code(), Some(status), "{fixture}: {commands:?}");
        assert!(
            !piped.stdout.is_empty(),
            "{fixture}: no transcript in the log"
        );
        let written = std::fs::read_to_string(&outputs).unwrap();
        assert!(
            written.lines().any(|l| l == outcome),
            "{fixture}: {written}"
        );
        assert!(written.lines().any(|l| l.starts_with("tokens_out=")));
        let shown = std::fs::read_to_string(&summary).unwrap();
        assert!(shown.starts_with("### "), "{fixture}: {shown}");
        let page = Command::new(env!("CARGO_BIN_EXE_cstream"))
            .args(args(commands[1]))
            .current_dir(root)
            .output()
            .unwrap();
        assert_eq!(page.status.code(), Some(0), "{fixture}: {commands:?}");
        assert!(String::from_utf8_lossy(&page.stdout).starts_with("<!DOCTYPE html>"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
