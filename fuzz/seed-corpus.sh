#!/bin/sh
# Build the seed corpus of the `pipeline` target from the repository's
# fixtures: each fixture once per output format, with --from auto and with
# its own dialect, behind the target's 6-byte option header
# (fuzz_targets/pipeline.rs: format and dialect are indexes into the
# library's lists, taken modulo their length, so codes past the end wrap
# around). The corpus directory is not committed.
set -eu
cd "$(dirname "$0")"
out=corpus/pipeline
mkdir -p "$out"
n=0
for f in $(find ../fixtures -type f \( -name '*.jsonl' -o -name '*.json' \) | sort); do
    case "$f" in
        */cursor-sdk/*) d=6 ;;
        */cursor/*) d=1 ;;
        */claude/*) d=2 ;;
        */codex/*) d=3 ;;
        */gemini/*) d=4 ;;
        */acp/*) d=5 ;;
        */events/*) d=7 ;;
        */opencode/*) d=13 ;;
        *) d=0 ;;
    esac
    base=$(echo "$f" | sed 's|^\.\./fixtures/||; s|/|__|g')
    # Formats 0..N-1, then events --coalesce and --coalesce=burst; 0..15 covers
    # lists of up to 14 formats (past the end, codes wrap around).
    for fmt in $(seq 0 15); do
        for from in 0 "$d"; do
            # A few variants: plain; --no-dedupe with --truncate-shell 9 and 7-byte reads.
            printf "\\$(printf %03o "$fmt")\\$(printf %03o "$from")\\000\\000\\000\\000" | cat - "$f" > "$out/$base.$fmt.$from"
            printf "\\$(printf %03o "$fmt")\\$(printf %03o "$from")\\001\\000\\210\\007" | cat - "$f" > "$out/$base.$fmt.$from.t"
            n=$((n + 2))
        done
    done
done
echo "$n seeds in fuzz/$out"
