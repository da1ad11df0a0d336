//! `--to rows` gathers rows into batches before writing them; a row must
//! still reach the output as soon as the input waits (the sink's flush),
//! not when a batch fills or the run ends.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cstream");

/// How long to wait for a row: generous, as the machine may be loaded; a
/// row held back until stdin closes never comes while stdin is open.
const PATIENCE: Duration = Duration::from_secs(20);

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","apiKeySource":"login","model":"m","cwd":"/x","permissionMode":"default"}"#;
const THINKING: &str =
    r#"{"type":"thinking","subtype":"delta","text":"hmm","session_id":"s1","timestamp_ms":1}"#;

#[test]
fn a_row_is_written_while_the_input_is_still_open() {
    let mut child = Command::new(BIN)
        .args(["--to", "rows"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INIT}\n{THINKING}").unwrap();
    stdin.flush().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("\"text\":\"hmm\"") {
        match rx.recv_timeout(PATIENCE) {
            Ok(b) => seen.extend(b),
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "no thinking row while stdin is open; got {:?}",
                    String::from_utf8_lossy(&seen)
                );
            }
        }
    }
    // stdin is still open here: the rows came from the flush on waiting.
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let text = String::from_utf8_lossy(&seen);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(r#"{"session":"s1","session_n":"#),
        "{first}"
    );
}
