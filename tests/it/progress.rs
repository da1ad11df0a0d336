//! The progress bar is for a terminal: a large run whose standard error is
//! a pipe writes nothing there but what it has to say.

use std::path::PathBuf;

use assert_cmd::Command;

use crate::common::fixtures_dir;

#[test]
fn a_large_run_writes_nothing_to_a_stderr_that_is_not_a_terminal() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("progress-many");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let one = std::fs::read(fixtures_dir().join("cursor/basic.jsonl")).unwrap();
    for i in 0..150 {
        std::fs::write(d.join(format!("s{i:03}.jsonl")), &one).unwrap();
    }
    for jobs in ["1", "2"] {
        let out = Command::cargo_bin("cstream")
            .unwrap()
            .args(["--to", "events", "-j", jobs])
            .arg(&d)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "-j {jobs}");
        let sessions = String::from_utf8_lossy(&out.stdout)
            .matches("\"type\":\"session_started\"")
            .count();
        assert_eq!(sessions, 150);
    }
}
