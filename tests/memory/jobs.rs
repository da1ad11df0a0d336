//! `-j` keeps its memory bounded by the files in flight, not by the number
//! of files: each file's channel to the main thread is made when a worker
//! takes the file, and a worker takes a file only within a window of the
//! one being written (src/run/pool.rs). Made all at once, as they once
//! were, 4,000 channels cost some 4 MB more than 400 (about a kilobyte
//! each).

use std::io::Write;
use std::path::Path;

use cstream::{Config, Format, Input, Warnings, convert_inputs};

use crate::counting::{exclusive, peak_during};

/// `n` small cursor-agent sessions, one per file, in `dir`.
fn files(dir: &Path, n: usize) -> Vec<Input> {
    std::fs::create_dir_all(dir).unwrap();
    (0..n)
        .map(|i| {
            let p = dir.join(format!("{i:05}.jsonl"));
            let mut f = std::fs::File::create(&p).unwrap();
            writeln!(f, r#"{{"type":"system","subtype":"init","session_id":"s{i}","model":"m"}}"#).unwrap();
            writeln!(f, r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"hi {i}"}}]}},"session_id":"s{i}"}}"#).unwrap();
            writeln!(f, r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"result":"","session_id":"s{i}"}}"#).unwrap();
            Input::Path(p)
        })
        .collect()
}

/// Peak live heap bytes while converting `inputs` with two jobs, above
/// what was live before (the list of inputs itself included).
fn peak(inputs: &[Input]) -> usize {
    let cfg = Config::new(Format::Events).jobs(2);
    peak_during(|| {
        let mut w = Warnings::sink();
        convert_inputs(inputs, std::io::empty(), std::io::sink(), &cfg, &mut w).unwrap()
    })
    .0
}

#[test]
fn two_jobs_hold_channels_only_for_files_in_flight() {
    // From the first line: building the 4,400 inputs allocates too, and
    // another test's measurement would count it (tests/memory/counting.rs).
    let _only = exclusive();
    let tmp = std::env::temp_dir().join(format!("cstream-mem-jobs-{}", std::process::id()));
    let few = files(&tmp.join("few"), 400);
    let many = files(&tmp.join("many"), 4000);
    let (a, b) = (peak(&few), peak(&many));
    std::fs::remove_dir_all(&tmp).unwrap();
    eprintln!("peak bytes: 400 files {a}, 4,000 files {b}");
    // Ten times the files, about the same peak: workers take at most a
    // window of files ahead of the one written (src/run/pool.rs), so what
    // is in flight does not follow the archive. Channels made all at once
    // grew the peak by 4.9 MB (about 1,400 bytes a file), and workers free
    // to run ahead by up to 1.6 MB. Measured since files are read whole
    // (no 64 KiB first-block buffer per worker): about 111 kB for 400
    // files and 180 kB for 4,000, the run's own bookkeeping growing by
    // some 20 bytes a file; the bound allows 100.
    let per_file = b.saturating_sub(a) / 3600;
    assert!(
        per_file < 100,
        "400 files peaked at {a} bytes, 4,000 at {b}: {per_file} bytes more a file"
    );
}
