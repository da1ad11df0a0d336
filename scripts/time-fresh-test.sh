#!/usr/bin/env bash
# Time the README's test command (`cargo test`) on a fresh clone: a new
# checkout and an empty target directory, so every crate compiles. Prints the
# wall time, and the CPU time (user + sys) when GNU time is installed, which
# is the figure to compare on a machine shared with other work.
#
#   scripts/time-fresh-test.sh [--run-first] [REPO] [REV]
#
# REPO defaults to this checkout, REV to its HEAD. --run-first runs the
# README's first command (`cargo run -- <fixture>`) before the tests, as
# someone following the README from the top would.
# The crates come from ~/.cargo's download cache when they are already there;
# point CARGO_HOME at an empty directory to time the downloads too.
set -euo pipefail

run_first=0
if [ "${1:-}" = --run-first ]; then
    run_first=1
    shift
fi
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="${1:-$here}"
rev="${2:-$(git -C "$here" rev-parse HEAD)}"

work="$(mktemp -d "${TMPDIR:-/tmp}/cstream-fresh.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-checkout "$repo" "$work/cstream"
git -C "$work/cstream" checkout --quiet "$rev"
cd "$work/cstream"
# The clone's own target/, whatever the caller's environment says.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
export CARGO_TERM_COLOR=never

timed() {
    local label="$1"
    shift
    local start end
    start=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "$label: cpu %U user + %S sys s, peak rss %M KB" "$@"
    else
        "$@"
    fi
    end=$(date +%s.%N)
    awk -v l="$label" -v s="$start" -v e="$end" \
        'BEGIN { w = e - s; printf "%s: wall %dm%02ds\n", l, w / 60, w % 60 }' >&2
}

echo "rustc: $(rustc --version); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "commit: $(git rev-parse --short HEAD)" >&2
if [ "$run_first" = 1 ]; then
    timed "cargo run" cargo run -- fixtures/cursor/partial-output.jsonl >/dev/null
fi
timed "cargo test" cargo test
