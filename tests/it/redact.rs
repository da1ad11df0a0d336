//! `--redact` (docs/redact.md): secrets never reach the output, in any
//! format, however the stream splits them; output without secrets is
//! unchanged.

use proptest::prelude::*;
use regex::Regex;

use crate::common::{FORMATS, convert_fixture, cstream, cstream_file, fixtures, run_fixture};

/// The secrets planted in fixtures/events/redact_every-kind-split-deltas-tool-output.jsonl.
const PLANTED: &[&str] = &[
    "sk-proj-FAKEfake0123456789abcdefABCDEF",
    "internal-424242",
    "xoxb-1234567890-FAKEfakeFAKE",
    "sk-ant-api03-FAKEfake0123456789abcdefghij",
    "AIzaSyFAKEfake0123456789abcdefghijklm12",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.FAKEsignature0123",
    "ghp_FAKEfake0123456789abcdefghijklmnopqr",
    "MIIEFAKEfakeFAKEfake",
    "github_pat_FAKE0123456789abcdefghijkl",
    "ghs_FAKEfake0123456789abcdefghijklmnopqr",
    // Each half of the secrets split across two deltas.
    "FAKEfake0123456789abcdefghij",
    "0123456789abcdefghijklmnopqr",
];

fn the_fixture() -> std::path::PathBuf {
    crate::common::fixtures_dir().join("events/redact_every-kind-split-deltas-tool-output.jsonl")
}

#[test]
fn planted_secrets_never_reach_any_format() {
    let f = the_fixture();
    for (row, args) in FORMATS {
        let out = run_fixture(&f, args).out();
        for s in PLANTED {
            assert!(!out.contains(s), "{row}: {s} in\n{out}");
        }
        if *row == "usage" || *row == "otlp_json" {
            // Figures only (a trace carries an error message at most,
            // tests/it/otlp.rs checks its redaction): none of it leaks.
            continue;
        }
        assert!(out.contains("[REDACTED:"), "{row}: nothing redacted");
        // Near misses stay.
        if !args.contains(&"openai-sse") && !args.contains(&"openai") {
            assert!(out.contains("sk-short"), "{row}: a false positive");
        }
    }
    let plain = cstream_file(&["--to", "events"], &f).out();
    assert!(plain.contains(PLANTED[0]), "the fixture plants secrets");
}

#[test]
fn stats_count_each_kind() {
    let run = cstream_file(
        &[
            "--redact",
            "--redact-pattern",
            "internal-[0-9]{6}",
            "--stats",
        ],
        &the_fixture(),
    );
    for kind in [
        "redacted_pem_private_key=1",
        "redacted_anthropic_key=1",
        "redacted_openai_key=1",
        "redacted_google_api_key=1",
        "redacted_aws_access_key_id=1",
        "redacted_slack_token=1",
        "redacted_jwt=1",
        "redacted_custom=1",
    ] {
        assert!(run.stderr.contains(kind), "{kind} missing: {}", run.stderr);
    }
    let off = cstream_file(&["--stats"], &the_fixture());
    assert!(!off.stderr.contains("redacted"), "{}", off.stderr);
}

/// Over every fixture and format: with `--redact`, no text the built-in
/// patterns match is left; a fixture without any is written byte for byte
/// as without `--redact`.
#[test]
fn every_fixture_redacted_or_unchanged() {
    // An oracle of its own, looser than the built-in patterns: each
    // prefix followed by a long token, or a PEM key body.
    let r = Regex::new(
        r"(?:sk-|AIza|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abprs]-|eyJ)[A-Za-z0-9_\-]{16}|PRIVATE KEY-----(?:\n|\\n)MII",
    )
    .unwrap();
    for f in fixtures() {
        let input = std::fs::read_to_string(&f).unwrap_or_default();
        let clean = !r.is_match(&input);
        for (row, args) in FORMATS {
            let mut with: Vec<&str> = args.to_vec();
            with.push("--redact");
            let red = convert_fixture(&f, &with);
            assert!(
                !r.is_match(&String::from_utf8_lossy(&red)),
                "{}: {row}: a secret left",
                f.display()
            );
            if clean {
                let plain = convert_fixture(&f, args);
                assert!(
                    plain == red,
                    "{}: {row}: --redact changed output without secrets",
                    f.display()
                );
            }
        }
    }
}

fn stream(parts: &[&str]) -> Vec<u8> {
    let mut s =
        String::from("{\"type\":\"session_started\",\"sessionId\":\"p\",\"dialect\":\"cursor\"}\n");
    for p in parts {
        let text = serde_json::to_string(p).unwrap();
        s.push_str(&format!(
            "{{\"type\":\"text_delta\",\"sessionId\":\"p\",\"text\":{text}}}\n"
        ));
    }
    s.into_bytes()
}

const SECRETS: &[&str] = &[
    "sk-proj-FAKEfake0123456789abcdefABCDEF",
    "sk-ant-api03-FAKEfake0123456789abcdefghij",
    "AIzaSyFAKEfake0123456789abcdefghijklm12",
    "ASIAIOSFODNN7EXAMPLE",
    "gho_FAKEfake0123456789abcdefghijklmnopqr",
    "xoxp-1234567890-FAKEfakeFAKE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.FAKEsignature0123",
    "-----BEGIN PRIVATE KEY-----\nMIIEFAKEfakeFAKEfake\n-----END PRIVATE KEY-----",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A text with a secret, cut into deltas at any points: the secret
    /// never appears, every other byte does, in order.
    #[test]
    fn split_anywhere_still_redacted(
        which in 0..SECRETS.len(),
        before in "[a-z ]{0,12}",
        after in "[ .,][a-z ]{0,12}",
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let secret = SECRETS[which];
        let text = format!("{before} {secret}{after}");
        // Not within the secret's first two characters (MIN_HELD).
        let start = before.len() + 1;
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|i| i.index(text.len() + 1))
            .filter(|p| !(start < *p && *p < start + 3))
            .collect();
        points.sort_unstable();
        points.dedup();
        let mut parts = Vec::new();
        let mut last = 0;
        for p in points {
            parts.push(&text[last..p]);
            last = p;
        }
        parts.push(&text[last..]);
        let out = cstream(&["--from", "events", "--to", "text", "--redact"], &stream(&parts)).out();
        prop_assert!(!out.contains(secret), "{out}");
        let expect = format!("{before} [REDACTED:");
        prop_assert!(out.contains(&expect), "{out}");
        prop_assert!(out.contains(&after), "{out}");
    }
}

// ------------------------------------------------------------ the default

/// A session whose prompt, text, failed command and error carry a key,
/// with one input line that is not JSON and quotes a token.
fn leaky_session() -> Vec<u8> {
    let key = "sk-proj-FAKEfake0123456789abcdefABCDEF";
    [
        r#"{"type":"session_started","sessionId":"s","dialect":"claude"}"#.to_owned(),
        format!(r#"{{"type":"user_message","sessionId":"s","text":"use {key}"}}"#),
        "export GITHUB_TOKEN=ghp_FAKEfake0123456789abcdefghijklmnopqr".to_owned(),
        format!(r#"{{"type":"text_delta","sessionId":"s","text":"set {key}"}}"#),
        format!(
            r#"{{"type":"tool_call_started","sessionId":"s","callId":"c","toolName":"shell","args":{{}},"command":"curl -H {key}"}}"#
        ),
        format!(
            r#"{{"type":"tool_call_completed","sessionId":"s","callId":"c","toolName":"shell","ok":false,"result":null,"exitCode":1,"error":"denied for {key}"}}"#
        ),
        format!(r#"{{"type":"result","sessionId":"s","ok":false,"error":"bad key {key}"}}"#),
    ]
    .join("\n")
    .into_bytes()
}

const LEAKED: &str = "sk-proj-FAKEfake0123456789abcdefABCDEF";
const LEAKED_TOKEN: &str = "ghp_FAKEfake0123456789abcdefghijklmnopqr";

/// The transcripts people share are redacted without being asked, and so
/// are the warnings that quote their input; other formats are not, unless
/// `--redact`; `--no-redact` turns the default off.
#[test]
fn transcripts_are_redacted_by_default_and_no_redact_turns_it_off() {
    let input = leaky_session();
    for to in ["markdown", "html"] {
        let run = cstream(&["--to", to], &input);
        let out = run.out();
        assert!(!out.contains(LEAKED), "{to}: {out}");
        assert!(out.contains("[REDACTED:openai_key]"), "{to}: {out}");
        assert!(run.stderr.contains("not JSON"), "{to}: {}", run.stderr);
        assert!(!run.stderr.contains(LEAKED_TOKEN), "{to}: {}", run.stderr);
        assert!(
            run.stderr.contains("[REDACTED:github_token]"),
            "{to}: {}",
            run.stderr
        );
        let raw = cstream(&["--to", to, "--no-redact"], &input);
        assert!(raw.out().contains(LEAKED), "{to} --no-redact");
        assert!(
            raw.stderr.contains(LEAKED_TOKEN),
            "{to} --no-redact: {}",
            raw.stderr
        );
    }
    for to in ["text", "events", "openai-sse"] {
        let run = cstream(&["--to", to], &input);
        assert!(
            run.out().contains(LEAKED),
            "{to} is not redacted by default"
        );
        assert!(run.stderr.contains(LEAKED_TOKEN), "{to}: {}", run.stderr);
        let red = cstream(&["--to", to, "--redact"], &input);
        assert!(!red.out().contains(LEAKED), "{to} --redact");
        assert!(
            !red.stderr.contains(LEAKED_TOKEN),
            "{to} --redact: {}",
            red.stderr
        );
    }
}

/// The `--summary` and `--outputs` files are redacted by default whatever
/// the format, without changing the format's own output; `--no-redact`
/// keeps them as they came.
#[test]
fn the_summary_files_are_redacted_by_default() {
    let input = leaky_session();
    let dir = std::env::temp_dir().join(format!("cstream-redact-summary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (s, o) = (dir.join("summary.md"), dir.join("outputs.txt"));
    let files = |extra: &[&str]| {
        let _ = std::fs::remove_file(&s);
        let _ = std::fs::remove_file(&o);
        let mut args = vec!["--to", "events", "--summary", s.to_str().unwrap()];
        args.extend(["--outputs", o.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let run = cstream(&args, &input);
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
        (run.out(), read(&s), read(&o))
    };
    let (out, summary, outputs) = files(&[]);
    assert!(out.contains(LEAKED), "the events stay as they came");
    assert!(
        summary.contains("bad key [REDACTED:openai_key]"),
        "{summary}"
    );
    assert!(!summary.contains(LEAKED), "{summary}");
    assert!(
        outputs.contains("error=bad key [REDACTED:openai_key]"),
        "{outputs}"
    );
    let (_, summary, outputs) = files(&["--no-redact"]);
    assert!(
        summary.contains(LEAKED) && outputs.contains(LEAKED),
        "{summary}{outputs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--no-redact` with `--redact` or a pattern is a contradiction, refused.
#[test]
fn no_redact_conflicts_with_redact() {
    for args in [
        &["--no-redact", "--redact"][..],
        &["--no-redact", "--redact-pattern", "x"][..],
    ] {
        let r = cstream(args, b"");
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("cannot be used with"), "{}", r.stderr);
    }
}

/// A PEM block is a key body between its markers: an encrypted key's
/// header lines and a body in a tool's JSON result are caught; source code
/// that only names both markers (a PEM parser) keeps its code.
#[test]
fn pem_blocks_and_code_that_names_them() {
    let key = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,FAKE0123\n\nMIIEFAKEfake+/FAKEfake=\n-----END RSA PRIVATE KEY-----";
    let code = "if line == \"-----BEGIN PRIVATE KEY-----\" { start(); }\nelse if line == \"-----END PRIVATE KEY-----\" { end(); }";
    for (text, secret) in [(key, true), (code, false)] {
        let out = cstream(
            &["--from", "events", "--to", "events", "--redact"],
            &stream(&[text]),
        )
        .out();
        assert_eq!(
            !out.contains("MIIEFAKE") && !out.contains("start()"),
            secret,
            "{out}"
        );
        assert_eq!(out.contains("[REDACTED:pem_private_key]"), secret, "{out}");
        // The same text as a tool's structured result: matched in the JSON.
        let line = format!(
            "{}\n{}\n",
            r#"{"type":"session_started","sessionId":"s","dialect":"events"}"#,
            serde_json::json!({"type": "tool_call_completed", "sessionId": "s", "callId": "c",
                "toolName": "read", "ok": true, "result": {"content": text}})
        );
        let out = cstream(
            &["--from", "events", "--to", "events", "--redact"],
            &line.into_bytes(),
        )
        .out();
        assert_eq!(out.contains("[REDACTED:pem_private_key]"), secret, "{out}");
    }
}
