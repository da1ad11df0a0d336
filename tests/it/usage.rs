//! `--to usage` (docs/usage.md): its rows are the session figures, added
//! up the way `--outputs` adds them; groups add up to their rows; the cost
//! is the agent's when it reported one, else an estimate from the price
//! table, else unknown, never $0; copies of one saved session count once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{self, corpus, cstream, fixture_args, fixtures};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cstream-usage-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rows(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn u(v: &Value, k: &str) -> Option<u64> {
    v[k].as_u64()
}

/// The sum of a field over rows, the unknown ones left out.
fn sum(rows: &[Value], k: &str) -> Option<u64> {
    rows.iter()
        .filter_map(|r| u(r, k))
        .fold(None, |a, n| Some(a.unwrap_or(0) + n))
}

fn fsum(rows: &[Value], k: &str, only: Option<&str>) -> Option<f64> {
    rows.iter()
        .filter(|r| only.is_none_or(|s| r["cost_source"] == s))
        .filter_map(|r| r[k].as_f64())
        .fold(None, |a, n| Some(a.unwrap_or(0.0) + n))
}

/// `--to usage` and `--outputs` of one run over `args`.
fn usage_and_outputs(name: &str, args: &[&str]) -> (Vec<Value>, HashMap<String, String>) {
    let dir = scratch(name);
    let o = dir.join("outputs");
    let mut all = vec!["--to", "usage", "--outputs", o.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = cstream(&all, b"").out();
    let text = std::fs::read_to_string(&o).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let kv = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    (rows(&out), kv)
}

fn opt(kv: &HashMap<String, String>, k: &str) -> Option<u64> {
    kv.get(k)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().unwrap())
}

/// The rows agree with `--outputs` of the same run: as many sessions, and
/// each figure's total is the sum of the rows' (the unknown ones left
/// out, as `--outputs` leaves them out).
fn agree(name: &str, args: &[&str]) -> usize {
    let (rows, kv) = usage_and_outputs(name, args);
    assert_eq!(
        rows.len() as u64,
        opt(&kv, "sessions").unwrap(),
        "{name}: rows vs sessions"
    );
    for (row_key, out_key) in [
        ("turns", "turns"),
        ("tool_calls", "tool_calls"),
        ("tokens_in", "tokens_in"),
        ("tokens_out", "tokens_out"),
        ("tokens_cache_read", "tokens_cached"),
        ("tokens_reasoning", "tokens_reasoning"),
        ("duration_ms", "duration_ms"),
    ] {
        assert_eq!(
            sum(&rows, row_key),
            opt(&kv, out_key),
            "{name}: {row_key} vs --outputs {out_key}"
        );
    }
    // `--outputs` shows the agents' own cost (to four places); the rows
    // marked `agent` carry the same figures.
    let agent = fsum(&rows, "cost_usd", Some("agent")).map(|c| format!("{c:.4}"));
    let theirs = kv.get("cost_usd").filter(|v| !v.is_empty()).cloned();
    assert_eq!(agent, theirs, "{name}: agent cost vs --outputs cost_usd");
    for r in &rows {
        // Unknown is null, never 0: a cost without tokens to estimate it
        // from is the agent's or nothing.
        match r["cost_source"].as_str() {
            Some("estimate") => assert!(r["tokens_in"].is_u64(), "{name}: {r}"),
            Some("agent") => {}
            None => assert!(r["cost_usd"].is_null(), "{name}: {r}"),
            Some(other) => panic!("{name}: cost_source {other}"),
        }
    }
    rows.len()
}

#[test]
fn every_fixture_agrees_with_outputs() {
    let mut n = 0;
    for f in fixtures() {
        let mut args: Vec<String> = fixture_args(&f);
        args.push(f.to_str().unwrap().to_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        n += agree(&f.display().to_string(), &args);
    }
    assert!(n > 50, "only {n} sessions in the fixtures");
}

#[test]
fn every_corpus_file_agrees_with_outputs() {
    let mut files = common::live_corpus();
    for d in [
        "sessions/claude-code",
        "sessions/codex",
        "sessions/cursor-agent",
        "sessions/gemini",
    ] {
        files.extend(corpus(d));
    }
    for f in &files {
        agree(&f.display().to_string(), &[f.to_str().unwrap()]);
    }
}

/// A whole directory in one run: the saved copies of a session among the
/// fixtures count once in both.
#[test]
fn the_fixture_tree_in_one_run_agrees_with_outputs() {
    let root = common::fixtures_dir();
    let n = agree("fixtures", &[root.join("claude-project").to_str().unwrap()]);
    assert!(n > 5);
    agree("codex", &[root.join("codex-rollout").to_str().unwrap()]);
}

#[test]
fn groups_add_up_to_their_rows() {
    let root = common::fixtures_dir();
    let dirs: Vec<String> = ["claude", "claude-project", "codex-rollout", "gemini-chat"]
        .iter()
        .map(|d| root.join(d).to_str().unwrap().to_owned())
        .collect();
    let mut base = vec!["--to", "usage"];
    base.extend(dirs.iter().map(String::as_str));
    let sessions = rows(&cstream(&base, b"").out());
    assert!(sessions.len() > 20);
    for g in ["day", "week", "month", "model", "agent", "project"] {
        let mut args = vec!["--group", g];
        args.extend_from_slice(&base);
        let groups = rows(&cstream(&args, b"").out());
        assert!(groups.iter().all(|r| r["group"] == g));
        assert_eq!(
            sum(&groups, "sessions"),
            Some(sessions.len() as u64),
            "--group {g}"
        );
        for k in [
            "turns",
            "tool_calls",
            "tokens_in",
            "tokens_out",
            "tokens_cache_read",
            "tokens_cache_write",
            "duration_ms",
        ] {
            assert_eq!(sum(&groups, k), sum(&sessions, k), "--group {g}: {k}");
        }
        let (a, b) = (
            fsum(&groups, "cost_usd", None).unwrap(),
            fsum(&sessions, "cost_usd", None).unwrap(),
        );
        assert!((a - b).abs() < 1e-5, "--group {g}: cost {a} vs {b}");
        // A group is complete exactly when each of its sessions knows the figure.
        for grp in &groups {
            let members: Vec<&Value> = sessions.iter().filter(|s| member(s, g, grp)).collect();
            assert_eq!(members.len() as u64, u(grp, "sessions").unwrap(), "{grp}");
            assert_eq!(
                grp["cost_complete"].as_bool().unwrap(),
                members.iter().all(|s| !s["cost_usd"].is_null()),
                "{grp}"
            );
            assert_eq!(
                grp["tokens_complete"].as_bool().unwrap(),
                members.iter().all(|s| s["tokens_complete"] == true),
                "{grp}"
            );
        }
    }
}

/// Whether session row `s` belongs to group row `grp` of grouping `g`.
fn member(s: &Value, g: &str, grp: &Value) -> bool {
    let key = grp["key"].as_str();
    let start = s["start"].as_str();
    match g {
        "day" => start.map(|t| &t[..10]) == key,
        "month" => start.map(|t| &t[..7]) == key,
        // Checked apart (weeks_begin_on_monday); here: the week holds the day.
        "week" => match (start, key) {
            (Some(t), Some(k)) => k <= &t[..10] && days_between(k, &t[..10]) < 7,
            (None, None) => true,
            _ => false,
        },
        "model" => s["models"][0].as_str() == key,
        "agent" => s["agent"].as_str() == key,
        "project" => s["project"].as_str() == key,
        _ => unreachable!(),
    }
}

fn days_between(a: &str, b: &str) -> i64 {
    let ms = |d: &str| cstream::parse_time(d).unwrap();
    (ms(b) - ms(a)) / 86_400_000
}

/// A saved Claude Code transcript of the fixtures (one session, small
/// requests, model `claude-sonnet-4-5-20250929`), its model replaced.
fn claude_project_session(model: &str) -> String {
    let f = common::fixtures_dir()
        .join("claude-project/queued-prompt_attachment_dequeued_2.1.207.jsonl");
    std::fs::read_to_string(f)
        .unwrap()
        .replace("claude-sonnet-4-5-20250929", model)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn an_estimate_prices_each_kind_of_token_and_a_price_file_overrides_it() {
    let dir = scratch("prices");
    let f = write(
        &dir,
        "s.jsonl",
        &claude_project_session("claude-sonnet-4-5-20250929"),
    );
    let r = rows(&cstream(&["--to", "usage", &f], b"").out());
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["agent"], "claude-project");
    assert_eq!(r[0]["cost_source"], "estimate");
    let (tin, tout) = (
        u(&r[0], "tokens_in").unwrap(),
        u(&r[0], "tokens_out").unwrap(),
    );
    let (cr, cw) = (
        u(&r[0], "tokens_cache_read").unwrap(),
        u(&r[0], "tokens_cache_write").unwrap(),
    );
    assert!(cr > 0 && cw > 0 && tin > cr + cw, "{}", r[0]);
    // Each kind at its bundled claude-sonnet-4-5 rate (every request is
    // under the long-context threshold).
    let want = (tin - cr - cw) as f64 * 3e-6
        + cr as f64 * 3e-7
        + cw as f64 * 3.75e-6
        + tout as f64 * 1.5e-5;
    let got = r[0]["cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 2e-6, "{got} vs {want}");

    let prices = write(
        &dir,
        "prices.json",
        r#"{"source":"test","models":{"claude-sonnet-4-5":{"input":1e-6,"output":1e-6,"cache_read":1e-6,"cache_write":1e-6}}}"#,
    );
    let r = rows(&cstream(&["--to", "usage", "--prices", &prices, &f], b"").out());
    let got = r[0]["cost_usd"].as_f64().unwrap();
    assert!((got - (tin + tout) as f64 * 1e-6).abs() < 2e-6, "{got}");
    assert_eq!(r[0]["cost_source"], "estimate");

    // A table that does not price the model: unknown, never $0.
    let none = write(&dir, "none.json", r#"{"models":{}}"#);
    let r = rows(&cstream(&["--to", "usage", "--prices", &none, &f], b"").out());
    assert!(r[0]["cost_usd"].is_null(), "{}", r[0]);
    assert!(r[0]["cost_source"].is_null());
    assert_eq!(u(&r[0], "tokens_in"), Some(tin));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_model_without_a_price_has_an_unknown_cost() {
    let dir = scratch("noprice");
    let f = write(
        &dir,
        "s.jsonl",
        &claude_project_session("claude-nonesuch-9"),
    );
    let r = rows(&cstream(&["--to", "usage", &f], b"").out());
    assert_eq!(r[0]["models"][0], "claude-nonesuch-9");
    assert!(r[0]["tokens_in"].is_u64());
    assert!(r[0]["cost_usd"].is_null(), "{}", r[0]);
    assert!(r[0]["cost_source"].is_null());
    let g = rows(&cstream(&["--to", "usage", "--group", "model", &f], b"").out());
    assert!(g[0]["cost_usd"].is_null(), "{}", g[0]);
    assert_eq!(g[0]["cost_complete"], false);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A saved Claude Code transcript of one request whose cache writes are
/// split by lifetime (Claude Code 2.1 writes its prompt cache for an hour).
fn one_hour_cache_session() -> String {
    [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s-1h","timestamp":"2026-03-01T10:00:00Z","cwd":"/p","message":{"role":"user","content":"hello"}}"#,
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s-1h","timestamp":"2026-03-01T10:00:02Z","requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-6","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":1000,"cache_creation_input_tokens":3000,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}}}}"#,
        "",
    ]
    .join("\n")
}

#[test]
fn one_hour_cache_writes_are_priced_at_their_own_rate() {
    let dir = scratch("cache1h");
    let f = write(&dir, "s.jsonl", &one_hour_cache_session());
    let r = rows(&cstream(&["--to", "usage", &f], b"").out());
    assert_eq!(u(&r[0], "tokens_cache_write"), Some(3000), "{}", r[0]);
    // claude-opus-4-6: input 5e-6, cache read 5e-7, five-minute write
    // 6.25e-6, one-hour write 1e-5 (twice the input), output 2.5e-5.
    let want = 10.0 * 5e-6 + 1000.0 * 5e-7 + 1000.0 * 6.25e-6 + 2000.0 * 1e-5 + 20.0 * 2.5e-5;
    let got = r[0]["cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");

    // The events carry the one-hour part, so a second stage prices it the same.
    let events = cstream(&["--to", "events", &f], b"").out();
    assert!(events.contains(r#""deltaCacheWrite1h":2000"#), "{events}");
    assert!(events.contains(r#""cacheWrite1hTokens":2000"#), "{events}");
    let again = rows(&cstream(&["--from", "events", "--to", "usage"], events.as_bytes()).out());
    assert_eq!(again[0]["cost_usd"], r[0]["cost_usd"]);

    // A table without a one-hour rate prices those writes as the others.
    let prices = write(
        &dir,
        "prices.json",
        r#"{"models":{"claude-opus-4-6":{"input":1e-6,"output":2e-6,"cache_read":3e-7,"cache_write":4e-6}}}"#,
    );
    let r = rows(&cstream(&["--to", "usage", "--prices", &prices, &f], b"").out());
    let want = 10.0 * 1e-6 + 1000.0 * 3e-7 + 3000.0 * 4e-6 + 20.0 * 2e-6;
    let got = r[0]["cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every model a fixture names that the bundled table prices (docs/usage.md
/// lists the ones left unknown, and why): a session of one with token
/// counts has an estimated cost, never a null one.
#[test]
fn the_fixtures_models_are_priced() {
    let dir = common::fixtures_dir();
    let r = rows(&cstream(&["--to", "usage", dir.to_str().unwrap()], b"").out());
    let mut seen = std::collections::BTreeSet::new();
    for row in &r {
        let Some(m) = row["models"][0].as_str() else {
            continue;
        };
        if ![
            "gpt-5",
            "gpt-5-codex",
            "gpt-5-mini",
            "gemini-2.5-pro",
            "claude-sonnet-4.6",
        ]
        .contains(&m)
            || row["tokens_in"].is_null()
        {
            continue;
        }
        seen.insert(m.to_owned());
        assert!(row["cost_usd"].is_f64(), "{row}");
        assert!(
            ["estimate", "agent"].contains(&row["cost_source"].as_str().unwrap()),
            "{row}"
        );
    }
    assert_eq!(seen.len(), 5, "{seen:?}");
}

#[test]
fn the_agents_own_cost_wins() {
    // Claude's live stream reports total_cost_usd on its result.
    let f = common::fixtures_dir().join("claude/partial-messages.jsonl");
    let r = rows(&cstream(&["--to", "usage", f.to_str().unwrap()], b"").out());
    assert_eq!(r[0]["cost_source"], "agent");
    assert_eq!(r[0]["cost_usd"].as_f64(), Some(0.0123));
}

#[test]
fn copies_of_one_saved_session_count_once() {
    let dir = scratch("copies");
    let one = claude_project_session("claude-sonnet-4-5-20250929");
    let a = write(&dir, "a.jsonl", &one);
    let b = write(&dir, "b.jsonl", &one);
    let single = rows(&cstream(&["--to", "usage", &a], b"").out());
    let r = rows(&cstream(&["--to", "usage", &a, &b], b"").out());
    assert_eq!(r, single);
    let g = rows(&cstream(&["--to", "usage", "--group", "day", &a, &b], b"").out());
    assert_eq!(u(&g[0], "sessions"), Some(1));
    assert_eq!(u(&g[0], "tokens_in"), u(&single[0], "tokens_in"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn group_and_prices_need_the_usage_format() {
    let e = cstream(&["--to", "events", "--group", "day"], b"");
    assert_eq!(e.code, 2, "{e:?}");
    assert!(
        e.stderr
            .contains("--group and --prices work with --to usage only"),
        "{}",
        e.stderr
    );
    let bad = cstream(&["--to", "usage", "--prices", "/nonexistent/p.json"], b"");
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("cannot read /nonexistent/p.json"),
        "{}",
        bad.stderr
    );
}

/// What a terminal shows (`--to usage` with standard output a terminal:
/// a table; a test has no terminal to give the binary), through the
/// public API as the command line uses it: the directories walked, the
/// inputs read several at a time.
fn on_terminal(group: Option<cstream::UsageGroup>, dirs: &[PathBuf]) -> String {
    let mut warnings = cstream::Warnings::sink();
    let found = cstream::walk::expand(dirs, false, &mut warnings);
    let mut cfg = cstream::Config::new(cstream::Format::Usage)
        .usage_table(true)
        .color(true)
        .line_buffered(true)
        .files_skipped(found.skipped)
        .input_names(&found.names)
        .jobs(2);
    if let Some(g) = group {
        cfg = cfg.group(g);
    }
    let mut out = Vec::new();
    cstream::convert_inputs(&found.inputs, &b""[..], &mut out, &cfg, &mut warnings).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_terminal_gets_a_table_with_totals() {
    let root = common::fixtures_dir();
    let dirs = [root.join("claude-project"), root.join("codex-rollout")];
    let by_month = on_terminal(Some(cstream::UsageGroup::Month), &dirs);
    let sessions = on_terminal(None, &dirs[1..]);
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!("usage_table_by_month", by_month);
        insta::assert_snapshot!("usage_table_sessions", sessions);
    });
}

/// Totals of a group stop at the largest value, as a session's own figures
/// do: three sessions at `i64::MAX` tokens (and a cost of 1e308) in one group
/// make a total at the limit, not a wrapped small number (nor a panic in a
/// debug build), and the cost stays a number JSON can write.
#[test]
fn group_totals_stop_at_the_limit() {
    let dir = scratch("limit");
    let text = std::fs::read_to_string(
        common::fixtures_dir().join("regression/claude_usage-at-i64-max.jsonl"),
    )
    .unwrap();
    let a = write(&dir, "a.jsonl", &text);
    let b = write(&dir, "b.jsonl", &text.replace("max-2", "max-3"));
    let c = write(&dir, "c.jsonl", &text.replace("max-2", "max-4"));
    let sessions = rows(&cstream(&["--to", "usage", &a, &b, &c], b"").out());
    assert_eq!(sessions.len(), 3);
    for g in ["day", "model", "agent", "project"] {
        let out = cstream(&["--to", "usage", "--group", g, &a, &b, &c], b"").out();
        let groups = rows(&out);
        assert_eq!(groups.len(), 1, "--group {g}: {out}");
        let grp = &groups[0];
        assert_eq!(u(grp, "sessions"), Some(3));
        for k in [
            "tokens_in",
            "tokens_out",
            "tokens_cache_read",
            "tokens_cache_write",
        ] {
            assert_eq!(u(grp, k), Some(u64::MAX), "--group {g}: {k}");
        }
        assert_eq!(u(grp, "duration_ms"), Some(u64::MAX), "--group {g}");
        assert_eq!(grp["cost_usd"].as_f64(), Some(f64::MAX), "--group {g}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
