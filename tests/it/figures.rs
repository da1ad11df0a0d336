//! One set of session figures (docs/events.md#session-figures): every
//! fixture and every corpus file, run through `--outputs`, `--summary`,
//! `--to documents`, `--to markdown`, `--to html` and `--to text`, shows
//! each session's outcome, duration, turns, tool calls, failed calls and
//! tokens the same way in all of them.
//!
//! Each output is read back here the way a person or a script reads it (a
//! table cell, the text's last line, a JSON field), so a format that
//! computes a figure of its own, or renders an unknown count as 0, fails.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

use common::{corpus, cstream, fixture_args, fixtures};

/// One session's figures as one output shows them (`None`: that output
/// does not show the figure).
#[derive(Debug, Clone, PartialEq, Default)]
struct Shown {
    /// `success`, `failure` or `incomplete` (`not-success` where the
    /// output only says that much: the documents' `error`).
    outcome: Option<String>,
    duration: Option<String>,
    turns: Option<u64>,
    tool_calls: Option<u64>,
    failed_calls: Option<u64>,
    /// Input tokens, `-` when unknown.
    tokens_in: Option<String>,
    /// Output tokens as shown: `123`, `≥ 123`, `unknown`, or `-`.
    tokens_out: Option<String>,
}

/// The durations every human output writes (the oracle for the documents'
/// `duration_ms`).
fn fmt_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        let s = ms / 1000;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

fn num(s: &str) -> u64 {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {s:?}"))
}

/// A count as shown, thousands separators taken out; `—`/`–` is unknown.
fn count(s: &str) -> String {
    let s = s.trim();
    if s == "—" || s == "–" {
        return "-".to_owned();
    }
    s.replace(',', "")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cstream-figures-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(file: &Path, args: &[&str]) -> String {
    let extra = fixture_args(file);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(extra.iter().map(String::as_str));
    all.push(file.to_str().unwrap());
    cstream(&all, b"").out()
}

/// `--to documents`: one JSON document per session.
fn documents(file: &Path) -> Vec<Shown> {
    let out = run(file, &["--to", "documents", "--created", "1700000000"]);
    serde_json::Deserializer::from_str(&out)
        .into_iter::<Value>()
        .map(|d| {
            let d = d.expect("documents output is JSON");
            let meta = &d["metadata"];
            let u = &d["usage"];
            let (tin, tout) = if u.is_null() {
                ("-".to_owned(), "-".to_owned())
            } else {
                let out = u["completionTokens"].as_u64().unwrap();
                let tout = match (u["completionTokensIncomplete"] == true, out) {
                    (true, 0) => "unknown".to_owned(),
                    (true, n) => format!("≥ {n}"),
                    (false, n) => n.to_string(),
                };
                (u["promptTokens"].as_u64().unwrap().to_string(), tout)
            };
            Shown {
                outcome: Some(match d["status"].as_str().unwrap() {
                    "completed" => "success".to_owned(),
                    _ => "not-success".to_owned(),
                }),
                duration: Some(meta["duration_ms"].as_u64().map_or("-".to_owned(), fmt_ms)),
                turns: meta["turnCount"].as_u64(),
                tool_calls: meta["toolCallCount"].as_u64(),
                failed_calls: None,
                tokens_in: Some(tin),
                tokens_out: Some(tout),
            }
        })
        .collect()
}

/// The cells of a transcript's summary table row (Markdown or HTML), in
/// the order Outcome, Duration, Turns, Tool calls, Tokens in, Cached,
/// Tokens out, Cost.
fn transcript_row(cells: &[String]) -> Shown {
    let outcome = if cells[0].contains("completed") {
        "success"
    } else if cells[0].contains("failed") {
        "failure"
    } else {
        assert!(cells[0].contains("incomplete"), "{cells:?}");
        "incomplete"
    };
    let (calls, failed) = match cells[3].split_once(" (") {
        Some((c, f)) => (num(c), num(f)),
        None => (num(&cells[3]), 0),
    };
    let dash = |s: &str| {
        if s == "—" {
            "-".to_owned()
        } else {
            s.to_owned()
        }
    };
    Shown {
        outcome: Some(outcome.to_owned()),
        duration: Some(dash(cells[1].trim())),
        turns: Some(num(&cells[2])),
        tool_calls: Some(calls),
        failed_calls: Some(failed),
        tokens_in: Some(count(&cells[4])),
        tokens_out: Some(count(&cells[6])),
    }
}

fn markdown(file: &Path) -> Vec<Shown> {
    let out = run(file, &["--to", "markdown"]);
    let lines: Vec<&str> = out.lines().collect();
    let mut rows = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("| Outcome | Duration | Turns |") {
            let row = lines[i + 2];
            let cells: Vec<String> = row
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect();
            rows.push(transcript_row(&cells));
        }
    }
    rows
}

fn html(file: &Path) -> Vec<Shown> {
    let out = run(file, &["--to", "html"]);
    let mut rows = Vec::new();
    let mut rest = out.as_str();
    while let Some(at) = rest.find("<th>Outcome</th>") {
        rest = &rest[at..];
        let row_at = rest.find("</tr>\n<tr>").expect("a row after the header") + 6;
        let row = &rest[row_at..rest[row_at..].find("</tr>").unwrap() + row_at];
        let cells: Vec<String> = row
            .split("</td>")
            .filter(|c| c.contains("<td"))
            .map(|c| c[c.find('>').unwrap() + 1..].to_owned())
            .collect();
        rows.push(transcript_row(&cells));
        rest = &rest[row_at..];
    }
    rows
}

/// `--to text`: each session's last line, `── ok · 2.0s · 3 tool calls ·
/// tokens 10 in (2 cached) / 5 out`.
fn text(file: &Path) -> Vec<Shown> {
    let out = run(file, &["--to", "text", "--color", "never"]);
    out.lines()
        .filter(|l| l.starts_with("── "))
        .map(|l| {
            let parts: Vec<&str> = l.split(" · ").collect();
            let outcome = if parts[0].starts_with("── ok") {
                "success"
            } else if parts[0].starts_with("── failed") {
                "failure"
            } else {
                "incomplete"
            };
            let mut s = Shown {
                outcome: Some(outcome.to_owned()),
                duration: Some("-".to_owned()),
                tokens_in: Some("-".to_owned()),
                tokens_out: Some("-".to_owned()),
                ..Shown::default()
            };
            for p in &parts[1..] {
                if let Some(t) = p.strip_prefix("tokens ") {
                    let (tin, tout) = t.split_once(" / ").unwrap();
                    let tin = tin.split(" in").next().unwrap();
                    s.tokens_in = Some(tin.to_owned());
                    s.tokens_out = Some(tout.trim_end_matches(" out").to_owned());
                } else if p.ends_with("tool call") || p.ends_with("tool calls") {
                    s.tool_calls = Some(num(p));
                } else {
                    s.duration = Some((*p).to_owned());
                }
            }
            s
        })
        .collect()
}

/// `--summary` (its session rows) and `--outputs` (the run's totals).
fn summary(file: &Path) -> (Vec<Shown>, HashMap<String, String>) {
    let dir = scratch(
        &file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace('.', "_"),
    );
    let (s, o) = (dir.join("summary.md"), dir.join("outputs.txt"));
    run(
        file,
        &[
            "--to",
            "events",
            "--summary",
            s.to_str().unwrap(),
            "--outputs",
            o.to_str().unwrap(),
        ],
    );
    let md = std::fs::read_to_string(&s).unwrap();
    let outputs = std::fs::read_to_string(&o).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut rows = Vec::new();
    let mut in_table = false;
    for l in md.lines() {
        if l.starts_with("| session |") {
            in_table = true;
            continue;
        }
        if !in_table || l.starts_with("|---") {
            continue;
        }
        if !l.starts_with('|') {
            break;
        }
        // The session id is code and may hold an escaped `|`: take the
        // cells from the right.
        let cells: Vec<&str> = l.trim_end_matches('|').rsplitn(8, " | ").collect();
        let outcome = cells[6].split(' ').nth(1).unwrap().to_owned();
        let tokens = cells[2].trim();
        let (tin, tout) = match tokens.split_once(" / ") {
            Some((i, o)) => (i.to_owned(), o.split(" (").next().unwrap().to_owned()),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let dur = cells[0].trim();
        rows.push(Shown {
            outcome: Some(outcome),
            duration: Some(if dur == "–" {
                "-".to_owned()
            } else {
                dur.to_owned()
            }),
            turns: Some(num(cells[5])),
            tool_calls: Some(num(cells[4])),
            failed_calls: Some(num(cells[3])),
            tokens_in: Some(tin),
            tokens_out: Some(tout),
        });
    }
    let kv = outputs
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    (rows, kv)
}

/// Where two outputs both show a figure, they show the same.
fn agree(name: &str, what: &str, a: &Shown, b: &Shown) {
    macro_rules! same {
        ($f:ident) => {
            if let (Some(x), Some(y)) = (&a.$f, &b.$f) {
                assert_eq!(
                    x,
                    y,
                    "{name}: {} disagrees with documents on {}",
                    what,
                    stringify!($f)
                );
            }
        };
    }
    same!(duration);
    same!(turns);
    same!(tool_calls);
    same!(failed_calls);
    same!(tokens_in);
    same!(tokens_out);
    if let (Some(x), Some(y)) = (&a.outcome, &b.outcome) {
        if x == "not-success" || y == "not-success" {
            assert_eq!(
                x == "success",
                y == "success",
                "{name}: {what} disagrees on the outcome"
            );
        } else {
            assert_eq!(x, y, "{name}: {what} disagrees on the outcome");
        }
    }
}

/// Compare one file's outputs; the number of sessions compared.
fn check(file: &Path) -> usize {
    let name = file.display().to_string();
    let docs = documents(file);
    let md = markdown(file);
    let ht = html(file);
    let tx = text(file);
    let (sum, outputs) = summary(file);
    // Transcripts and the text leave out a session without any event.
    assert_eq!(md.len(), ht.len(), "{name}: markdown and html sessions");
    assert_eq!(md.len(), tx.len(), "{name}: markdown and text sessions");
    assert_eq!(
        sum.len(),
        docs.len(),
        "{name}: summary and documents sessions"
    );
    // The transcripts' sessions are the documents' sessions that had events.
    let mut d = docs.iter().filter(|d| {
        d.turns != Some(0) || d.tool_calls != Some(0) || d.tokens_in != Some("-".to_owned())
    });
    for ((m, h), t) in md.iter().zip(&ht).zip(&tx) {
        agree(&name, "html", h, m);
        agree(&name, "text", t, m);
        if let Some(doc) = d.next() {
            agree(&name, "markdown", m, doc);
        }
    }
    // Where a document and a summary row differ, say which.
    for (s, doc) in sum.iter().zip(&docs) {
        agree(&name, "--summary", s, doc);
    }
    for s in &sum {
        if let Some(m) = md.first().filter(|_| md.len() == 1 && sum.len() == 1) {
            agree(&name, "--summary vs markdown", s, m);
        }
    }
    // --outputs: the run's totals are the sessions' figures added up (a
    // saved session read twice counts once; none of these runs reads one
    // file twice, but a file may hold two copies of a session).
    if outputs["duplicates"] == "0" {
        let total = |f: &dyn Fn(&Shown) -> u64| docs.iter().map(f).sum::<u64>();
        assert_eq!(
            outputs["turns"],
            total(&|s| s.turns.unwrap()).to_string(),
            "{name}: --outputs turns"
        );
        assert_eq!(
            outputs["tool_calls"],
            total(&|s| s.tool_calls.unwrap()).to_string(),
            "{name}: --outputs tool_calls"
        );
        assert_eq!(
            outputs["failed_calls"],
            sum.iter()
                .map(|s| s.failed_calls.unwrap())
                .sum::<u64>()
                .to_string(),
            "{name}: --outputs failed_calls"
        );
        let known: Vec<&Shown> = docs
            .iter()
            .filter(|s| s.tokens_in.as_deref() != Some("-"))
            .collect();
        if known.is_empty() {
            assert_eq!(
                outputs["tokens_in"], "",
                "{name}: unknown tokens_in is not 0"
            );
            assert_eq!(
                outputs["tokens_out"], "",
                "{name}: unknown tokens_out is not 0"
            );
        } else {
            let tin: u64 = known
                .iter()
                .map(|s| num(s.tokens_in.as_ref().unwrap()))
                .sum();
            assert_eq!(
                outputs["tokens_in"],
                tin.to_string(),
                "{name}: --outputs tokens_in"
            );
            let partial = known.iter().any(|s| {
                !s.tokens_out
                    .as_ref()
                    .unwrap()
                    .chars()
                    .all(|c| c.is_ascii_digit())
            });
            assert_eq!(
                outputs["tokens_out_complete"],
                (!partial).to_string(),
                "{name}: --outputs tokens_out_complete"
            );
            let tout: u64 = known
                .iter()
                .filter_map(|s| {
                    let t = s.tokens_out.as_ref().unwrap();
                    (t != "unknown").then(|| num(t))
                })
                .sum();
            if tout == 0 && partial {
                assert_eq!(
                    outputs["tokens_out"], "",
                    "{name}: unknown tokens_out is not 0"
                );
            } else {
                assert_eq!(
                    outputs["tokens_out"],
                    tout.to_string(),
                    "{name}: --outputs tokens_out"
                );
            }
        }
    }
    md.len()
}

#[test]
fn every_fixture_shows_the_same_figures_everywhere() {
    let files = fixtures();
    let compared: usize = files.iter().map(|f| check(f)).sum();
    // Every fixture with events has a session to compare.
    assert!(
        compared >= files.len() * 3 / 4,
        "{compared} sessions in {} files",
        files.len()
    );
}

#[test]
fn every_corpus_file_shows_the_same_figures_everywhere() {
    let mut files = Vec::new();
    for d in [
        "claude-code",
        "codex",
        "cursor-agent",
        "sessions/claude-code",
        "sessions/codex",
        "sessions/cursor-agent",
        "sessions/gemini",
    ] {
        files.extend(corpus(d));
    }
    let compared: usize = files.iter().map(|f| check(f)).sum();
    assert!(
        compared >= files.len(),
        "{compared} sessions in {} files",
        files.len()
    );
}

/// `--outputs` of a run over `args` (`key` → value).
fn outputs_of(name: &str, args: &[&str], stdin: &[u8]) -> HashMap<String, String> {
    let dir = scratch(name);
    let o = dir.join("outputs.txt");
    let mut all = vec!["--outputs", o.to_str().unwrap()];
    all.extend_from_slice(args);
    cstream(&all, stdin);
    let text = std::fs::read_to_string(&o).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// A running total that goes down is a counter that restarted: the text's
/// last line, `result.usage` and `--outputs` all count what was spent
/// before it plus the new total (1,200 + 100 in, 300 + 50 out).
#[test]
fn a_restarted_running_total_is_one_figure_everywhere() {
    let f = common::fixtures_dir().join("codex-rollout/token-total-restarts_0.125.jsonl");
    let events = common::events(&run(&f, &["--to", "events"]));
    let result = events.iter().find(|e| e["type"] == "result").unwrap();
    assert_eq!(result["usage"]["inputTokens"], 1300);
    assert_eq!(result["usage"]["outputTokens"], 350);
    let sum = |k: &str| -> u64 {
        events
            .iter()
            .filter(|e| e["type"] == "usage_delta")
            .map(|e| e[k].as_u64().unwrap())
            .sum()
    };
    assert_eq!((sum("deltaInput"), sum("deltaOutput")), (1300, 350));
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "error" && e["source"] == "usage"),
        "the restart is said"
    );
    let text = run(&f, &["--to", "text", "--color", "never"]);
    assert!(
        text.contains("tokens 1300 in (200 cached) / 350 out"),
        "{text}"
    );
    let o = outputs_of("restart", &["--to", "events", f.to_str().unwrap()], b"");
    assert_eq!(
        (o["tokens_in"].as_str(), o["tokens_out"].as_str()),
        ("1300", "350")
    );
}

/// An output count the source does not have is unknown or a lower bound in
/// every human and CI output, never a bare 0.
#[test]
fn an_unknown_output_count_is_never_zero() {
    let all_missing = "\
{\"type\":\"session_started\",\"sessionId\":\"u1\",\"dialect\":\"claude-project\"}
{\"type\":\"user_message\",\"sessionId\":\"u1\",\"text\":\"Hi\"}
{\"type\":\"text_delta\",\"sessionId\":\"u1\",\"text\":\"Hello.\"}
{\"type\":\"usage_delta\",\"sessionId\":\"u1\",\"deltaInput\":3478331,\"deltaOutput\":0,\"outputIncomplete\":true}
{\"type\":\"result\",\"sessionId\":\"u1\",\"ok\":true,\"usage\":{\"inputTokens\":3478331,\"outputTokens\":0,\"outputIncomplete\":true}}
";
    let o = outputs_of(
        "unknown",
        &["--from", "events", "--to", "events"],
        all_missing.as_bytes(),
    );
    assert_eq!(o["tokens_in"], "3478331");
    assert_eq!(o["tokens_out"], "", "unknown is empty, not 0");
    assert_eq!(o["tokens_out_complete"], "false");
    let text = cstream(
        &["--from", "events", "--to", "text", "--color", "never"],
        all_missing.as_bytes(),
    )
    .out();
    assert!(text.contains("/ unknown out"), "{text}");
    let md = cstream(
        &["--from", "events", "--to", "markdown"],
        all_missing.as_bytes(),
    )
    .out();
    assert!(md.contains("| 3,478,331 | — | unknown |"), "{md}");
    let docs = cstream(
        &["--from", "events", "--to", "documents"],
        all_missing.as_bytes(),
    )
    .out();
    let d: Value = serde_json::from_str(&docs).unwrap();
    assert_eq!(d["usage"]["completionTokensIncomplete"], true, "{docs}");
    let f =
        common::fixtures_dir().join("events/user-events_command-output-interrupt-context.jsonl");
    let text = run(&f, &["--to", "text", "--color", "never"]);
    assert!(text.contains("/ ≥ 78 out"), "{text}");
    let o = outputs_of("partial", &["--to", "events", f.to_str().unwrap()], b"");
    assert_eq!(
        (o["tokens_out"].as_str(), o["tokens_out_complete"].as_str()),
        ("78", "false")
    );
    // No counts at all: every token figure is unknown.
    let none = "{\"type\":\"session_started\",\"sessionId\":\"n1\",\"dialect\":\"cursor-transcript\"}\n\
                {\"type\":\"text_delta\",\"sessionId\":\"n1\",\"text\":\"Done.\"}\n\
                {\"type\":\"result\",\"sessionId\":\"n1\",\"ok\":true}\n";
    let o = outputs_of(
        "none",
        &["--from", "events", "--to", "events"],
        none.as_bytes(),
    );
    assert_eq!(
        (
            o["tokens_in"].as_str(),
            o["tokens_out"].as_str(),
            o["tokens_cached"].as_str()
        ),
        ("", "", "")
    );
}

/// User-side lines that are not prompts begin no turn.
#[test]
fn only_prompts_begin_turns() {
    let f =
        common::fixtures_dir().join("events/user-events_command-output-interrupt-context.jsonl");
    let o = outputs_of("turns", &["--to", "events", f.to_str().unwrap()], b"");
    assert_eq!(o["turns"], "2");
    let md = run(&f, &["--to", "markdown"]);
    assert!(
        md.contains("## Turn 2") && !md.contains("## Turn 3"),
        "{md}"
    );
}

/// Two model responses in one turn are two paragraphs in every format that
/// joins text (docs/events.md: a `turn_ended` between them), never
/// "Listing them now.There are two files.".
#[test]
fn a_message_boundary_is_a_paragraph_boundary() {
    let f =
        common::fixtures_dir().join("events/user-events_command-output-interrupt-context.jsonl");
    let glued = "Listing them now.There are two files.";
    let text = run(&f, &["--to", "text", "--color", "never"]);
    assert!(
        text.contains("Listing them now.\n\nThere are two files."),
        "{text}"
    );
    let coalesced = common::events(&run(&f, &["--to", "events", "--coalesce"]));
    let messages: Vec<&str> = coalesced
        .iter()
        .filter(|e| e["type"] == "assistant_message")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages[..2], ["Listing them now.", "There are two files."]);
    let chat = run(&f, &["--to", "openai-json"]);
    let v: Value = serde_json::from_str(&chat).unwrap();
    let content = v["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(
        content.contains("Listing them now.\n\nThere are two files."),
        "{content}"
    );
    for to in [
        "documents",
        "markdown",
        "html",
        "anthropic-json",
        "openai-responses",
    ] {
        let out = run(&f, &["--to", to]);
        assert!(!out.contains(glued), "--to {to}: {out}");
    }
}

/// Codex's commentary and its final answer are two messages: a
/// `turn_ended` between them, and two paragraphs wherever text is joined.
#[test]
fn codex_commentary_and_final_answer_are_two_paragraphs() {
    let f = common::fixtures_dir().join("codex-rollout/commentary-then-final-answer_0.125.jsonl");
    let evs = common::events(&run(&f, &["--to", "events"]));
    let kinds: Vec<&str> = evs
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|t| matches!(*t, "text_delta" | "turn_ended"))
        .collect();
    assert_eq!(
        kinds,
        ["text_delta", "turn_ended", "text_delta", "turn_ended"]
    );
    let text = run(&f, &["--to", "text", "--color", "never"]);
    assert!(text.contains("Looking now.\n\nAll done"), "{text}");
    let chat: Value = serde_json::from_str(&run(&f, &["--to", "openai-json"])).unwrap();
    let content = chat["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(content, "Looking now.\n\nAll done: the build is green.");
}

/// Two Claude Code messages (two ids) in one turn of a saved session are
/// two paragraphs too.
#[test]
fn claude_messages_in_one_turn_are_two_paragraphs() {
    let f = common::fixtures_dir().join("claude-project/two-messages-one-turn_2.1.214.jsonl");
    for to in [
        "text",
        "markdown",
        "documents",
        "openai-json",
        "anthropic-json",
    ] {
        let out = run(&f, &["--to", to]);
        assert!(!out.contains("Looking now.All done"), "--to {to}: {out}");
    }
    let o = outputs_of("claude-two", &["--to", "events", f.to_str().unwrap()], b"");
    assert_eq!(o["turns"], "1");
}
