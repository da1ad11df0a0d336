//! `--redact`'s fast paths (src/transform/redact.rs): one scan for the
//! literals the built-in secrets begin with, a JSON string literal searched
//! without unescaping it, events without a candidate passed on uncopied.
//! Each case here is one where a shortcut could let a secret through.

use crate::common::cstream;

const KEY: &str = "sk-proj-FAKEfake0123456789abcdefABCDEF";

fn events(lines: &[String]) -> Vec<u8> {
    let mut v = String::from(
        r#"{"type":"session_started","sessionId":"s","dialect":"cursor"}
"#,
    );
    for l in lines {
        v.push_str(l);
        v.push('\n');
    }
    v.into_bytes()
}

fn redacted(lines: &[String]) -> String {
    let run = cstream(
        &["--from", "events", "--to", "events", "--redact"],
        &events(lines),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.out()
}

fn user(text: &str) -> String {
    serde_json::json!({"type": "user_message", "sessionId": "s", "text": text}).to_string()
}

/// A completed call whose output is the JSON string literal `lit` (quotes
/// included), written into the line as it is.
fn output_literal(lit: &str) -> String {
    format!(
        r#"{{"type":"tool_call_completed","sessionId":"s","callId":"c","toolName":"shell","ok":true,"output":{lit}}}"#
    )
}

#[test]
fn a_secret_at_the_start_or_end_of_a_text_or_alone() {
    for text in [
        KEY.to_owned(),
        format!("{KEY} then words"),
        format!("words then {KEY}"),
        format!("é{KEY}é"),
    ] {
        let out = redacted(&[user(&text)]);
        assert!(!out.contains("FAKEfake"), "{text}: {out}");
        assert!(out.contains("[REDACTED:openai_key]"), "{text}: {out}");
    }
}

/// A tool output kept as its JSON literal is searched as it is; a `\u`
/// escape can spell a secret's literal, and then the text is unescaped
/// and searched whole.
#[test]
fn a_secret_in_an_escaped_tool_output() {
    for lit in [
        format!(r#""{KEY}""#),
        format!(r#""line one\n{KEY}\n""#),
        format!(r#""\"{KEY}\"\t""#),
        // `sk-` spelled with escapes: the raw literal holds no `sk-`.
        r#""key sk\u002dproj-FAKEfake0123456789abcdefABCDEF end""#.to_owned(),
        r#""\u0073k-proj-FAKEfake0123456789abcdefABCDEF""#.to_owned(),
        r#""\u0041KIAIOSFODNN7EXAMPLE""#.to_owned(),
    ] {
        let out = redacted(&[output_literal(&lit)]);
        assert!(!out.contains("FAKEfake"), "{lit}: {out}");
        assert!(!out.contains("IOSFODNN7EXAMPLE"), "{lit}: {out}");
        assert!(out.contains("[REDACTED:"), "{lit}: {out}");
    }
    // A literal without a secret is copied as it came, escapes and all.
    let clean = r#""a\nb \u00e9 task-list sk- \\u0073""#;
    let out = redacted(&[output_literal(clean)]);
    assert!(out.contains(clean), "{out}");
}

/// Two literals that overlap (`sk-` ending where `-----BEGIN ` starts): the
/// scan must see both.
#[test]
fn overlapping_literals_are_both_seen() {
    let pem =
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEFAKEfakeFAKEfake\n-----END RSA PRIVATE KEY-----";
    let out = redacted(&[user(&format!("disk{pem}"))]);
    assert!(!out.contains("MIIEFAKE"), "{out}");
    assert!(out.contains("[REDACTED:pem_private_key]"), "{out}");
}

/// A secret cut right after (or inside) its literal, across two deltas.
#[test]
fn a_secret_split_at_its_literal() {
    for (a, b) in [
        ("see sk-", "proj-FAKEfake0123456789abcdefABCDEF ok"),
        ("see sk-pr", "oj-FAKEfake0123456789abcdefABCDEF ok"),
        ("id AKI", "AIOSFODNN7EXAMPLE ok"),
        ("id AKIA", "IOSFODNN7EXAMPLE ok"),
        (
            "t eyJhbGciOiJIUzI1NiJ9.ey",
            "JzdWIiOiIxMjM0NTY3ODkwIn0.FAKEsignature0123",
        ),
    ] {
        let delta = |t: &str| {
            serde_json::json!({"type": "text_delta", "sessionId": "s", "text": t}).to_string()
        };
        let out = redacted(&[delta(a), delta(b)]);
        assert!(!out.contains("FAKE"), "{a}|{b}: {out}");
        assert!(!out.contains("IOSFODNN7EXAMPLE"), "{a}|{b}: {out}");
        assert!(out.contains("[REDACTED:"), "{a}|{b}: {out}");
    }
}

/// A delta longer than the held window whose window starts inside a
/// character: it used to panic (the search sliced the text there).
#[test]
fn a_long_delta_cut_inside_a_character() {
    for pad in 0..3 {
        let text = format!("{}{}é{KEY}", "a".repeat(pad), "é".repeat(3000));
        let line =
            serde_json::json!({"type": "text_delta", "sessionId": "s", "text": text}).to_string();
        let out = redacted(&[line]);
        assert!(!out.contains("FAKEfake"), "{pad}");
        assert!(out.contains("[REDACTED:openai_key]"), "{pad}");
    }
}
