//! `--to rows` gathers rows into batches before writing them; a row must
//! still reach the output as soon as the input waits (the sink's flush),
//! not when a batch fills or the run ends.

use std::time::Duration;

use crate::common::live;

/// How long to wait for a row: generous, as the machine may be loaded; a
/// row held back until stdin closes never comes while stdin is open.
const PATIENCE: Duration = Duration::from_secs(20);

#[test]
fn a_row_is_written_while_the_input_is_still_open() {
    let (mut child, stdin, rx) = live(&["--to", "rows"]);
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
