#!/bin/sh
# Fuzz the pipeline target on the stable toolchain for SECONDS (default 600):
#   fuzz/run.sh [SECONDS] [extra libFuzzer flags…]
# Seeds the corpus from fixtures/ first when it is empty. Crashes land in
# fuzz/artifacts/pipeline/; replay one with
#   cargo fuzz run -s none -a pipeline fuzz/artifacts/pipeline/crash-…
set -eu
cd "$(dirname "$0")"
secs=${1:-600}
[ $# -gt 0 ] && shift
[ -d corpus/pipeline ] && [ -n "$(ls corpus/pipeline)" ] || ./seed-corpus.sh
# -a: overflow checks and debug assertions on; a hang (-timeout, seconds per
# input) and unbounded memory (-rss_limit_mb) count as crashes too.
exec cargo fuzz run -s none -a pipeline corpus/pipeline -- \
    -dict=pipeline.dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1 "$@"
