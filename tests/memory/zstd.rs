//! A zstd-compressed rollout is decompressed as it is read: the peak heap
//! use stays within the streaming budget (twice the longest record plus
//! fixed buffers) plus the frame's window, and a rollout ten times longer
//! peaks at about the same (the reader never holds the file, compressed or
//! not).
//!
//! The counting global allocator (tests/memory/counting.rs) measures the
//! peak of live heap bytes; the test holds `exclusive()` so that no other
//! test allocates meanwhile.

use std::io::Write;

use cstream::{Config, Dialect, Format, convert};

use crate::counting::{exclusive, peak_during};

/// A Codex rollout of `turns` turns (prompt, shell call with output,
/// answer, running total), the third call's output one line of `long`
/// bytes.
fn rollout(turns: usize, long: usize) -> Vec<u8> {
    let mut v = Vec::new();
    writeln!(v, r#"{{"timestamp":"2026-06-01T00:00:00.000Z","type":"session_meta","payload":{{"id":"019d0000-0000-7000-8000-00000000d00d","cwd":"/w","cli_version":"0.137.0"}}}}"#).unwrap();
    writeln!(v, r#"{{"timestamp":"2026-06-01T00:00:00.000Z","type":"turn_context","payload":{{"cwd":"/w","model":"gpt-5.3-codex"}}}}"#).unwrap();
    for i in 0..turns {
        let ts = format!(
            "2026-06-01T{:02}:{:02}:{:02}.000Z",
            i / 3600 % 24,
            i / 60 % 60,
            i % 60
        );
        writeln!(v, r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"task_started","turn_id":"t{i}"}}}}"#).unwrap();
        writeln!(v, r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"user_message","message":"Step {i}: run the tests."}}}}"#).unwrap();
        writeln!(v, r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call","name":"exec_command","call_id":"c{i}","arguments":"{{\"cmd\":\"cargo test {i}\"}}"}}}}"#).unwrap();
        let output = if i == 2 {
            "x".repeat(long)
        } else {
            (0..60)
                .map(|k| format!("test t{i}_{k} ... ok\\n"))
                .collect()
        };
        writeln!(v, r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call_output","call_id":"c{i}","output":"Exit code: 0\nOutput:\n{output}"}}}}"#).unwrap();
        writeln!(v, r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"Step {i} passes."}}]}}}}"#).unwrap();
        let (inp, out) = (1200 * (i + 1), 40 * (i + 1));
        writeln!(v, r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{inp},"cached_input_tokens":0,"output_tokens":{out},"reasoning_output_tokens":0,"total_tokens":{}}}}}}}}}"#, inp + out).unwrap();
        writeln!(v, r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"task_complete","turn_id":"t{i}"}}}}"#).unwrap();
    }
    v
}

/// The window a frame asks for (its header's window descriptor; a single-
/// segment frame's window is its content size): what the decoder keeps
/// besides its block.
fn window(frame: &[u8]) -> usize {
    let descriptor = frame[4];
    assert_eq!(
        descriptor & 0x20,
        0,
        "a single-segment frame: too small to measure"
    );
    let w = frame[5];
    let base = 1usize << (10 + (w >> 3));
    base + base / 8 * usize::from(w & 7)
}

/// Peak live heap bytes while converting `input`, above what was live before.
fn peak(input: &[u8]) -> usize {
    let cfg = Config::new(Format::Events)
        .from(Dialect::CodexRollout)
        .created(0);
    peak_during(|| convert(input, std::io::sink(), &cfg).unwrap()).0
}

#[test]
fn a_compressed_rollout_is_read_without_holding_it() {
    let _alone = exclusive();
    const LONG: usize = 2 * 1024 * 1024;
    const FIXED: usize = 1024 * 1024;
    let compress = |v: &[u8]| {
        ruzstd::encoding::compress_to_vec(v, ruzstd::encoding::CompressionLevel::Fastest)
    };
    let (small, large) = (rollout(2_000, LONG), rollout(20_000, LONG));
    let longest = small.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap();
    let (small_z, large_z) = (compress(&small), compress(&large));
    let window = window(&large_z);
    let plain = peak(&large);
    drop((small, large));
    let z_small = peak(&small_z);
    let z_large = peak(&large_z);
    eprintln!(
        "longest record {longest} B; peak heap: plain {plain} B, compressed {z_small} B \
         ({} B in) → {z_large} B ({} B in)",
        small_z.len(),
        large_z.len()
    );
    eprintln!("window {window} B");
    let allowed = 2 * longest + FIXED + window;
    assert!(
        z_large <= allowed,
        "peak {z_large} B is over twice the longest record ({longest} B) plus {FIXED} B and the window"
    );
    assert!(
        z_large < z_small + z_small / 4,
        "a rollout ten times longer peaked at {z_large} B against {z_small} B: the file is held"
    );
}
