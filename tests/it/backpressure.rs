//! Backpressure (issue: speed and memory): 10,000 `shell_output_delta` events
//! of 16 KB each (160 MB, generated while the binary reads them) through
//! `--truncate-shell 64K`. The output stays within the cap and the process's
//! memory stays flat. Sizes are asserted, never times.

use std::io::{BufWriter, Read, Write};
use std::process::{Command, Stdio};

const EVENTS: usize = 10_000;
const EVENT_BYTES: usize = 16 * 1024;
const CAP: usize = 64 * 1024;

/// Peak resident memory of a running process, in KiB (Linux).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run(format: &str) -> (usize, Option<u64>) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("cstream"))
        .args([
            "--from",
            "events",
            "--truncate-shell",
            "64K",
            "--to",
            format,
            "--color",
            "never",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn cstream");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0;
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(n) => total += n,
            }
        }
    });
    let sid = "bp";
    let mut w = BufWriter::new(&mut stdin);
    writeln!(
        w,
        r#"{{"type":"session_started","sessionId":"{sid}","dialect":"cursor-sdk"}}"#
    )
    .unwrap();
    writeln!(
        w,
        r#"{{"type":"tool_call_started","sessionId":"{sid}","callId":"c1","toolName":"shell","args":{{"command":"yes"}},"command":"yes"}}"#
    )
    .unwrap();
    let chunk: String = "y\n".repeat(EVENT_BYTES / 2);
    for _ in 0..EVENTS {
        writeln!(
            w,
            r#"{{"type":"shell_output_delta","sessionId":"{sid}","callId":"c1","stream":"stdout","text":"{}"}}"#,
            chunk.replace('\n', "\\n")
        )
        .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    // Everything is written and read; the process is still alive (stdin is
    // open), so its peak memory can be read now.
    let rss = peak_rss_kib(child.id());
    writeln!(
        stdin,
        r#"{{"type":"tool_call_completed","sessionId":"{sid}","callId":"c1","toolName":"shell","ok":true,"result":null,"exitCode":0}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"type":"result","sessionId":"{sid}","ok":true}}"#
    )
    .unwrap();
    drop(stdin);
    let out = reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    (out, rss)
}

#[test]
fn ten_thousand_shell_deltas_stay_within_the_cap() {
    for format in ["events", "text", "openai-sse"] {
        let (out, rss) = run(format);
        // The output carries at most the cap, plus one marker and the
        // session's few other records; text prefixes each 2-byte line with
        // 4 bytes, so allow 4x the cap.
        assert!(
            out < 4 * CAP + 4096,
            "{format}: {out} bytes of output for a {CAP}-byte cap"
        );
        if let Some(kib) = rss {
            // 160 MB went through; memory stays at the size of a few lines.
            assert!(kib < 48 * 1024, "{format}: peak RSS {kib} KiB");
        }
    }
}
