//! Base64 images inside records never reach an output without
//! `--keep-images`: every fixture, in every format, holds no run of base64
//! long enough to be an image; with the flag, the image fixtures' payloads
//! are kept in `events`.

use crate::common;

use common::{FORMATS, cstream_file, fixtures, fixtures_dir, run_fixture};

/// The longest run of base64 characters in `s`.
fn longest_base64_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// The image fixtures hold payloads of 5,132 base64 characters; no fixture
/// has other text this long without a space or a punctuation mark.
const IMAGE_RUN: usize = 1000;

const IMAGE_FIXTURES: [&str; 2] = [
    "claude/image-blocks_prompt-and-tool-result.jsonl",
    "gemini-chat/inline-data_prompt-and-read-result.json",
];

#[test]
fn no_base64_image_reaches_any_output_without_keep_images() {
    for path in fixtures() {
        for (row, args) in FORMATS {
            let run = run_fixture(&path, args);
            let out = run.out();
            let n = longest_base64_run(&out);
            assert!(
                n < IMAGE_RUN,
                "{} as {row}: a base64 run of {n} characters",
                path.display()
            );
        }
    }
    for f in IMAGE_FIXTURES {
        let path = fixtures_dir().join(f);
        let events = cstream_file(&["--to", "events"], &path).out();
        assert!(
            events.contains("[image: image/png, 3.8 KiB]"),
            "{f}: no placeholder: {events}"
        );
        let kept = cstream_file(&["--to", "events", "--keep-images"], &path).out();
        assert!(
            longest_base64_run(&kept) > 5000,
            "{f}: --keep-images lost the image"
        );
    }
}
