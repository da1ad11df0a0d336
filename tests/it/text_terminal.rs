//! The text transcript as a terminal user sees it. In-process checks run on
//! every fixture and real capture; what depends on a real terminal (its
//! width, stdout and stderr sharing a screen, `--color auto`) runs the
//! binary under a pseudo-terminal made by util-linux `script`, which every
//! Debian-like system has (bsdutils is an essential package) and which
//! needs no test dependency.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{cstream_file, events, fixtures, fixtures_dir, run_fixture};
use unicode_width::UnicodeWidthStr;

const TEXT: &[&str] = &["--to", "text", "--color", "never"];

/// Every fixture and every real capture.
fn inputs() -> Vec<PathBuf> {
    let mut all = fixtures();
    all.extend(common::live_corpus());
    all
}

fn fixture(rel: &str) -> PathBuf {
    fixtures_dir().join(rel)
}

/// A character the library escapes when it shows text on a terminal
/// (`cstream::printable`, one rule for every place it escapes).
fn is_unsafe(c: char) -> bool {
    cstream::printable(c.encode_utf8(&mut [0; 4])) != c.to_string()
}

/// Every `\u{…}` escape in `s`, as the character it stands for.
fn escapes(s: &str) -> Vec<char> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("\\u{") {
        rest = &rest[i + 3..];
        if let Some(end) = rest.find('}')
            && let Ok(n) = u32::from_str_radix(&rest[..end], 16)
            && let Some(c) = char::from_u32(n)
        {
            out.push(c);
        }
    }
    out
}

/// 13.3: only what a terminal would interpret is escaped — never a joiner,
/// a selector or any other text — and nothing unsafe gets through raw.
#[test]
fn text_escapes_exactly_the_unsafe_characters() {
    for path in inputs() {
        let out = run_fixture(&path, TEXT).out();
        for c in escapes(&out) {
            assert!(is_unsafe(c), "{}: escaped {c:?}", path.display());
        }
        for c in out.chars() {
            assert!(
                !is_unsafe(c) || c == '\n' || c == '\t',
                "{}: raw {c:?} in the transcript",
                path.display()
            );
        }
    }
}

#[test]
fn joiners_survive_and_bidi_overrides_do_not() {
    let out = run_fixture(&fixture("cursor/unicode_zwj-persian-cjk-bidi.jsonl"), TEXT).out();
    for kept in [
        "👨\u{200d}👩\u{200d}👧",
        "🏳\u{fe0f}\u{200d}🌈",
        "می\u{200c}خواهم",
        "क्\u{200d}ष",
        "/home/dev/多言語",
    ] {
        assert!(out.contains(kept), "{kept:?} not kept in:\n{out}");
    }
    assert!(out.contains("\\u{202e}evil\\u{202c} and \\u{2067}isolate\\u{2069}"));
}

/// 13.6: a coloured transcript lets through SGR colour sequences and no
/// other escape sequence; a plain one has no ESC at all.
#[test]
fn only_sgr_colours_reach_the_terminal() {
    for path in inputs() {
        let plain = run_fixture(&path, TEXT).out();
        assert!(
            !plain.contains('\u{1b}'),
            "{}: ESC in plain text",
            path.display()
        );
        let coloured = run_fixture(&path, &["--to", "text", "--color", "always"]).out();
        for (i, _) in coloured.match_indices('\u{1b}') {
            let seq = &coloured[i..];
            let params = seq[2..]
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
                .count();
            assert!(
                seq.starts_with("\u{1b}[") && seq.as_bytes()[2 + params] == b'm',
                "{}: not an SGR sequence: {:?}",
                path.display(),
                &seq[..seq.len().min(12)]
            );
        }
        // No colour is left on at a line end: a line's last SGR resets.
        for line in coloured.lines() {
            if let Some(i) = line.rfind('\u{1b}') {
                let last = &line[i..];
                assert!(
                    last.starts_with("\u{1b}[0m") || last.starts_with("\u{1b}[m"),
                    "{}: colour left on: {line:?}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn shell_colours_kept_when_colouring_and_stripped_otherwise() {
    let path = fixture("cursor-sdk/shell-live_colour-codes_exit-code.jsonl");
    let plain = run_fixture(&path, TEXT).out();
    assert!(plain.contains("  │   1:7  error  'x' is unused  no-unused-vars\n"));
    // A hyperlink (OSC 8) is not a colour: it stays escaped.
    assert!(plain.contains("\\u{1b}]8;;https://eslint.org\\u{7}link"));
    let coloured = run_fixture(&path, &["--to", "text", "--color", "always"]).out();
    assert!(coloured.contains("\u{1b}[31merror\u{1b}[39m  'x' is unused"));
    let path = fixture("cursor/shell-output_colour-codes-and-30-lines.jsonl");
    let plain = run_fixture(&path, TEXT).out();
    assert!(plain.contains("  │ test t28 ... ok\n"));
    assert!(plain.contains("  │ error: 1 failed \\u{1b}[2J\\u{1b}[H\n"));
}

/// 13.6, live output cut anywhere: a colour sequence split between two
/// pieces is still a colour sequence; a tail no piece completes is shown
/// escaped, not lost.
#[test]
fn colour_split_across_live_pieces() {
    let path = fixture("events/shell-live_colour-split-across-deltas.jsonl");
    let plain = run_fixture(&path, TEXT).out();
    assert!(
        plain.contains("  │ build ok\n  │ warn unused\n  │ cut \\u{1b}[\n"),
        "{plain}"
    );
    let coloured = run_fixture(&path, &["--to", "text", "--color", "always"]).out();
    assert!(coloured.contains("build \u{1b}[32mok"), "{coloured:?}");
    assert!(coloured.contains("warn \u{1b}[1;33munused"), "{coloured:?}");
}

/// 13.7 `--shell-lines`: a saved transcript keeps every line unless asked.
#[test]
fn shell_lines_all_by_default_off_a_terminal() {
    for path in inputs() {
        let out = run_fixture(&path, TEXT).out();
        assert!(
            !out.contains("more line"),
            "{}: output cut in a saved transcript",
            path.display()
        );
    }
    let path = fixture("cursor/shell-output_colour-codes-and-30-lines.jsonl");
    let rows = |args: &[&str]| {
        let mut all = TEXT.to_vec();
        all.extend_from_slice(args);
        cstream_file(&all, &path)
            .out()
            .lines()
            .filter(|l| l.starts_with("  │"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&[]).len(), 29);
    assert_eq!(rows(&["--shell-lines", "all"]).len(), 29);
    let three = rows(&["--shell-lines", "3"]);
    assert_eq!(three.len(), 4);
    assert_eq!(three[0], "  │ … 26 more lines above");
    assert_eq!(three[1], "  │ test t27 ... ok");
    assert_eq!(rows(&["--shell-lines", "0"]), ["  │ … 29 more lines above"]);
}

/// 13.7 `-q`: no decorations on stdout, warnings as counts on stderr.
#[test]
fn quiet_leaves_the_conversation_only() {
    for path in inputs() {
        let mut args = TEXT.to_vec();
        args.push("-q");
        let run = run_fixture(&path, &args);
        let out = run.out();
        for line in out.lines() {
            for deco in ["● ", "── ", "? unknown event", "! stdout: ", "· context: "] {
                assert!(
                    !line.starts_with(deco),
                    "{}: {deco:?} with -q: {line}",
                    path.display()
                );
            }
        }
        // The end-of-run drift lines (one per record type, naming its first
        // place) are not warnings shown one by one.
        for line in run
            .stderr
            .lines()
            .filter(|l| !l.contains(" not understood (kept as unknown events"))
        {
            assert!(
                !line.contains(".jsonl:") && !line.contains(".json:"),
                "{}: a warning shown one by one with -q: {line}",
                path.display()
            );
        }
        // Exactly what is not a decoration is left.
        let full = run_fixture(&path, TEXT).out();
        let kept: Vec<&str> = full
            .lines()
            .filter(|l| {
                !["● ", "── ", "? unknown event", "! stdout: ", "· context: "]
                    .iter()
                    .any(|d| l.starts_with(d))
            })
            .collect();
        assert_eq!(out.lines().collect::<Vec<_>>(), kept, "{}", path.display());
    }
    let run = run_fixture(&fixture("cursor/garbage-lines.jsonl"), &["-q"]);
    let path = fixture("cursor/garbage-lines.jsonl");
    let p = path.display();
    assert_eq!(
        run.stderr,
        format!(
            "cstream: warning: cursor: 3 records of type \"(not an object)\" not understood \
             (kept as unknown events; first at {p}:9)\n\
             cstream: warning: cursor: 1 record of type \"interaction_query/request\" not understood \
             (kept as unknown events; first at {p}:8)\n\
             cstream: warning: lines that are not JSON: 4\n"
        )
    );
    assert_eq!(run.code, 1, "-q changes what is shown, not the exit status");
}

/// 13.7 `--no-thinking`.
#[test]
fn no_thinking_leaves_thinking_out() {
    let mut saw = false;
    for path in inputs() {
        let full = run_fixture(&path, TEXT).out();
        saw |= full.contains("┆ ");
        let mut args = TEXT.to_vec();
        args.push("--no-thinking");
        let out = run_fixture(&path, &args).out();
        assert!(!out.contains("┆ "), "{}: thinking shown", path.display());
    }
    assert!(saw, "no input has thinking to leave out");
}

/// 13.10: a shell call's exit code is shown once, whatever words the
/// dialect's error used for it.
#[test]
fn exit_code_shown_once() {
    for path in inputs() {
        let out = run_fixture(&path, TEXT).out();
        for line in out.lines() {
            // The outcome follows the last double space of a tool line.
            let outcome = line.rsplit("  ").next().unwrap_or_default();
            let n = outcome.matches("exit").count();
            assert!(n <= 1, "{}: exit code repeated: {line}", path.display());
        }
    }
    let out = run_fixture(
        &fixture("cursor-sdk/shell-live_colour-codes_exit-code.jsonl"),
        TEXT,
    )
    .out();
    assert!(
        out.contains("✗ shell  npm run lint  exit 1 · 900ms\n"),
        "{out}"
    );
}

/// 12.10: every entry of a plan or todo snapshot is in the transcript.
#[test]
fn plan_and_todo_snapshots_show_every_entry() {
    let mut entries = 0;
    for path in inputs() {
        let ev = run_fixture(&path, &["--to", "events"]).out();
        let text = run_fixture(&path, TEXT).out();
        let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
        for e in events(&ev) {
            if e["type"] != "summary" {
                continue;
            }
            let Some(t) = e["text"].as_str() else {
                continue;
            };
            for entry in t.trim_matches('\n').split('\n') {
                entries += 1;
                assert!(
                    lines
                        .iter()
                        .any(|l| *l == entry || l.ends_with(&format!(": {entry}"))),
                    "{}: {entry:?} missing from\n{text}",
                    path.display()
                );
            }
        }
    }
    assert!(entries > 4, "no snapshot with several entries");
}

// ------------------------------------------------------ under a terminal

/// Run the binary with stdout and stderr on a pseudo-terminal `cols` wide;
/// `shell_tail` is appended to the command (e.g. a redirection).
fn pty(args: &[&str], cols: u16, shell_tail: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_cstream");
    let mut cmd = format!("stty cols {cols} rows 50; exec {}", sh_quote(bin));
    for a in args {
        cmd.push(' ');
        cmd.push_str(&sh_quote(a));
    }
    cmd.push_str(shell_tail);
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        // `script` copies its stdin to the terminal; a closed one ends it
        // before the program writes anything.
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm-256color")
        .output()
        .expect("util-linux `script` runs (apt-get install bsdutils)");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{out:?}"
    );
    // The terminal turns each `\n` into `\r\n`.
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .replace("\r\n", "\n")
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// 13.4: the lines cstream cuts to the terminal's width (tool calls, their
/// output, one-liners) fit in 80 columns, counted as a terminal counts them.
/// (Warnings go elsewhere: they are not cut, and may land after a tool line
/// that waits for its outcome.)
#[test]
fn cut_lines_fit_an_80_column_terminal() {
    let mut cut = 0;
    for path in fixtures() {
        let out = pty(&["--color", "never", path_str(&path)], 80, " 2>/dev/null");
        for line in out.lines() {
            let glyph = ["▸ ", "✓ ", "✗ ", "⊘ ", "  │", "! ", "? ", "≡ "]
                .iter()
                .any(|g| line.starts_with(g));
            if !glyph {
                continue;
            }
            assert!(
                line.width() <= 80,
                "{}: {} columns: {line}",
                path.display(),
                line.width()
            );
            cut += usize::from(line.ends_with('…') || line.contains("…  "));
        }
    }
    assert!(cut > 3, "no line was long enough to be cut");
    let out = pty(
        &[
            "--color",
            "never",
            path_str(&fixture("cursor/unicode_zwj-persian-cjk-bidi.jsonl")),
        ],
        80,
        "",
    );
    assert!(
        out.contains(
            "\n  │ 行1: 漢字の出力 👍🏽 とても長い行が端末の八十桁を超えるとどうなるかを確かめる…\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("👨\u{200d}👩\u{200d}👧 🏳\u{fe0f}\u{200d}🌈"),
        "{out}"
    );
}

/// 13.10: on a terminal that shows stdout and stderr together, an invalid
/// input line is shown once, by its warning; with stderr elsewhere the
/// transcript still has it.
#[test]
fn bad_line_shown_once_on_a_terminal() {
    let path = fixture("cursor/garbage-lines.jsonl");
    let both = pty(&["--color", "never", path_str(&path)], 80, "");
    assert_eq!(both.matches("falling back to Auto").count(), 1, "{both}");
    assert!(
        both.contains("garbage-lines.jsonl:2: not JSON: T: Model"),
        "{both}"
    );
    let quiet_stderr = pty(&["--color", "never", path_str(&path)], 80, " 2>/dev/null");
    assert_eq!(quiet_stderr.matches("falling back to Auto").count(), 1);
    assert!(
        quiet_stderr.contains("! stdout: T: Model"),
        "{quiet_stderr}"
    );
}

/// On a terminal that shows stdout and stderr together, a warning starts
/// on a line of its own, even when the transcript's line (streamed text, a
/// tool call waiting for its outcome) is unfinished.
#[test]
fn warnings_never_land_inside_a_transcript_line() {
    let mut warned = 0;
    for path in fixtures() {
        let out = pty(&["--color", "never", path_str(&path)], 80, "");
        for line in out.lines() {
            if let Some(i) = line
                .find("cstream: warning: ")
                .or_else(|| line.find("cstream: error: "))
            {
                assert_eq!(i, 0, "{}: {line}", path.display());
                warned += 1;
            }
        }
    }
    assert!(warned > 10, "too few warnings to tell");
}

/// 13.7 and 13.6 on a terminal: the last 10 lines of completion-time output,
/// with their colours (`--color auto` on a terminal).
#[test]
fn terminal_defaults() {
    let path = fixture("cursor/shell-output_colour-codes-and-30-lines.jsonl");
    let out = pty(&[path_str(&path)], 80, "");
    assert!(out.contains("… 19 more lines above"), "{out}");
    assert!(
        out.contains("test t20 ... \u{1b}[32mok\u{1b}[0m\n"),
        "{out:?}"
    );
    assert!(!out.contains("test t19"), "{out}");
    let all = pty(&["--shell-lines", "all", path_str(&path)], 80, "");
    assert!(all.contains("test t01 ... \u{1b}[32mok"), "{all:?}");
}

/// 13.4, live output: a line that arrives in several pieces is cut once, at
/// the terminal's width, and the next line starts whole.
#[test]
fn live_output_lines_cut_across_pieces() {
    let delta = |text: &str| {
        serde_json::json!({"type": "shell_output_delta", "sessionId": "w", "callId": "c",
            "stream": "stdout", "text": text})
        .to_string()
    };
    let input = [
        r#"{"type":"session_started","sessionId":"w","dialect":"cursor"}"#.to_owned(),
        r#"{"type":"tool_call_started","sessionId":"w","callId":"c","toolName":"shell","args":{},"command":"x"}"#.to_owned(),
        delta("漢字漢字漢字漢字漢字"),
        delta("漢字漢字漢字漢字漢字"),
        delta("漢字漢字漢字漢字漢字\nnext line\n"),
    ]
    .join("\n");
    let cfg = crate::common::config(&["--from", "events", "--color", "never"]).width(40);
    let mut out = Vec::new();
    cstream::convert(input.as_bytes(), &mut out, &cfg).unwrap();
    let out = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("  │")).collect();
    assert_eq!(
        rows,
        ["  │ 漢字漢字漢字漢字漢字漢字漢字漢字漢…", "  │ next line"],
        "{out}"
    );
    assert!(rows[0].width() <= 40);
}

// ------------------------------------------------- fitted to the width

/// Thinking words: every character of them is `θ`-marked, so a line that
/// holds any of the thinking is told apart from the answer's lines.
const THOUGHT: &str = "θplanning θthe θchange: θfirst θread θthe θfile,\tθthen θpatch θit \
    θand θrun θthe θtests θagain θuntil θthey θpass. θ漢字θの θ説明θを θ読む \
    θaveryveryveryverylongwordwithoutanybreakθthatmustbecutsomewhere θend.";

/// A session whose header (title, model, directory, id) and thinking are
/// longer than a narrow terminal, the thinking in the token-sized pieces
/// a live stream sends and then whole.
fn wide_session() -> String {
    let mut lines = vec![serde_json::json!({
        "type": "session_started",
        "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e",
        "dialect": "claude",
        "model": "claude-opus-4-20250514-with-a-long-name",
        "cwd": "/home/someone/work/a-rather-long-organisation/多言語-project",
        "title": "Fix the flaky integration test in the payment service",
    })];
    let mut piece = String::new();
    for (i, ch) in THOUGHT.split_inclusive(' ').enumerate() {
        piece.push_str(ch);
        if i % 3 == 2 {
            lines.push(serde_json::json!({"type": "thinking_delta", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e", "text": std::mem::take(&mut piece)}));
        }
    }
    lines.push(serde_json::json!({"type": "thinking_delta", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e", "text": piece + "\n\nθsecond θparagraph θof θthinking θhere."}));
    lines.push(serde_json::json!({"type": "thinking_completed", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e"}));
    lines.push(serde_json::json!({"type": "text_delta", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e", "text": "Done: the answer is left to the terminal to wrap."}));
    lines.push(serde_json::json!({"type": "thinking", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e", "text": THOUGHT}));
    lines.push(serde_json::json!({"type": "result", "sessionId": "d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e", "ok": true, "durationMs": 1200}));
    let mut s = lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    s.push('\n');
    s
}

/// The transcript of `input` as a terminal `w` columns wide gets it.
fn at_width(input: &str, w: usize, color: &str) -> String {
    let cfg = crate::common::config(&["--color", color]).width(w);
    let mut out = Vec::new();
    cstream::convert(input.as_bytes(), &mut out, &cfg).unwrap();
    String::from_utf8(out).unwrap()
}

/// `s` without its SGR sequences.
fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\u{1b}') {
        out.push_str(&rest[..i]);
        let end = rest[i..].find('m').expect("an SGR sequence ends");
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    out
}

/// What a fitted transcript promises at width `w`: the header and every
/// line of thinking fit, each line of thinking starts with the gutter,
/// and the thinking is all there (only spaces moved).
fn check_fitted(out: &str, w: usize, thought_chars: usize) {
    let plain = strip_sgr(out);
    let header = plain.lines().next().unwrap();
    assert!(header.starts_with("● "), "{plain}");
    assert!(
        header.width() <= w,
        "{w}: header of {}: {header}",
        header.width()
    );
    let mut thought = String::new();
    for line in plain.lines() {
        if line.starts_with('┆') {
            assert!(
                line.width() <= w,
                "{w}: {} columns: {line}\n{plain}",
                line.width()
            );
            thought.extend(
                line['┆'.len_utf8()..]
                    .chars()
                    .filter(|c| !c.is_whitespace()),
            );
        } else {
            assert!(
                !line.contains('θ'),
                "{w}: thinking without its gutter: {line:?}\n{plain}"
            );
        }
    }
    assert_eq!(
        thought.chars().count(),
        thought_chars,
        "{w}: thinking lost or doubled\n{plain}"
    );
}

/// Issue 31 #4: the header is fitted to the terminal's width and every
/// visual line of thinking carries the gutter, at widths down to a phone's
/// terminal, coloured or not.
#[test]
fn header_and_thinking_fit_the_width() {
    let input = wide_session();
    let whole: String = THOUGHT.chars().filter(|c| !c.is_whitespace()).collect();
    let second = "θsecondθparagraphθofθthinkingθhere.".chars().count();
    let expected = 2 * whole.chars().count() + second;
    for w in [12, 20, 32, 40, 57, 80, 100, 200] {
        for color in ["never", "always"] {
            check_fitted(&at_width(&input, w, color), w, expected);
        }
    }
    // Without a width (a file, a pipe), nothing is cut or wrapped.
    let free = run_fixture_text(&input);
    assert!(
        free.contains("(session d43015b9-4b6e-4d8a-9c1e-2f3a4b5c6d7e)"),
        "{free}"
    );
    assert!(free.contains("/home/someone/work/a-rather-long-organisation/多言語-project"));
    for w in [40, 80] {
        insta::with_settings!({ snapshot_path => "../snapshots" }, {
            insta::assert_snapshot!(format!("text_fitted_{w}"), at_width(&input, w, "never"));
        });
    }
}

fn run_fixture_text(input: &str) -> String {
    common::cstream(&["--color", "never"], input.as_bytes()).out()
}

/// Every fixture at a narrow width: headers and thinking fit, thinking
/// keeps its gutter.
#[test]
fn fixtures_fit_a_narrow_terminal() {
    let mut thinking = 0;
    for path in fixtures() {
        let input = std::fs::read(&path).unwrap();
        let input = String::from_utf8_lossy(&input);
        for w in [30, 50] {
            let out = strip_sgr(&at_width(&input, w, "always"));
            for line in out.lines() {
                if line.starts_with("● ") || line.starts_with('┆') {
                    assert!(line.width() <= w, "{}: {w}: {line}", path.display());
                }
            }
            thinking += out.lines().filter(|l| l.starts_with('┆')).count();
        }
    }
    assert!(thinking > 20, "too little thinking in the fixtures to tell");
}

/// The same on a real terminal 36 columns wide: what the terminal shows
/// (the bytes it was given, its lines) fits, the header and each line of
/// thinking within the width, and no thinking without its gutter.
#[test]
fn a_narrow_pty_shows_every_thinking_line_with_its_gutter() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("text-narrow-pty");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("wide.jsonl");
    std::fs::write(&file, wide_session()).unwrap();
    let out = pty(&[path_str(&file)], 36, " 2>/dev/null");
    let whole: String = THOUGHT.chars().filter(|c| !c.is_whitespace()).collect();
    let second = "θsecondθparagraphθofθthinkingθhere.".chars().count();
    check_fitted(&out, 36, 2 * whole.chars().count() + second);
    // --color auto on a terminal: coloured, and the gutter still first.
    assert!(out.contains('\u{1b}'), "{out:?}");
}
