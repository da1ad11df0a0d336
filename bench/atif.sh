#!/usr/bin/env bash
# `cstream --to atif` beside atif-make on the same Claude Code and Codex files, same run.
#
#   bench/atif.sh [--runs R] [--no-build]
#
# The files: the corpus's saved Claude Code sessions and Codex rollouts and its Codex
# `exec --json` logs (../shared/corpus, required), each converted whole by one process, as a
# user converts a session: `cstream --to atif FILE` (release build) and `atif-make convert FILE
# --json` (the pinned atif-make in target/atif, built by .ci/run: see scripts/check-atif.py).
# Every round times each command on each file once, alternating the two; the report is, per
# tool, the sum over the files of each file's median wall time, and the ratio (issue 28:
# cstream at least 20x faster). Output goes to /dev/null.
set -euo pipefail
RUNS=7 BUILD=1
# The binary measured (CSTREAM=target/debug/cstream: the dev profile is optimized too).
CSTREAM=${CSTREAM:-target/release/cstream}
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;;
    *) echo "bench/atif.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$(dirname "$0")/.."
CORPUS=../shared/corpus
[ -d "$CORPUS" ] || { echo "bench/atif.sh: $CORPUS is missing" >&2; exit 1; }
[ -x target/atif/bin/atif-make ] || {
  echo "bench/atif.sh: target/atif/bin/atif-make is missing (run .ci/run's ATIF step)" >&2; exit 1; }
if [ "$BUILD" = 1 ] && [ "$CSTREAM" = target/release/cstream ]; then
  cargo build --release --locked --quiet
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
CSTREAM="$CSTREAM" python3 - "$RUNS" "$CORPUS"/sessions/claude-code/*.jsonl "$CORPUS"/sessions/codex/*.jsonl \
    "$CORPUS"/codex/*.jsonl <<'PY'
import os, statistics, subprocess, sys, time
runs, files = int(sys.argv[1]), sys.argv[2:]
tools = {
    "cstream --to atif": lambda f: [os.environ["CSTREAM"], "--to", "atif", f],
    "atif-make convert --json": lambda f: ["target/atif/bin/atif-make", "convert", f, "--json"],
}
times = {t: {f: [] for f in files} for t in tools}
for _ in range(runs):
    for f in files:
        for t, cmd in tools.items():
            start = time.perf_counter()
            subprocess.run(cmd(f), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[t][f].append(time.perf_counter() - start)
total = {t: sum(statistics.median(v) for v in times[t].values()) for t in tools}
print(f"{len(files)} files, {runs} rounds, sum of per-file medians:")
for t, s in total.items():
    print(f"  {t:26} {s * 1000:9.1f} ms")
c, a = total["cstream --to atif"], total["atif-make convert --json"]
print(f"  atif-make / cstream: {a / c:.1f}x")
PY
