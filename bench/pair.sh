#!/usr/bin/env bash
# How much two cores give this machine for work that shares nothing: one
# `cstream -j 1 --to usage` run over the Claude tree alone, then two of them
# started together, rounds alternating, medians of ROUNDS=9 (wall time). The
# throughput of two is what `-j 2` over the same tree could reach at best, so
# `-j 2` / `-j 1` is read against it (docs/performance.md, "Less around the
# walk").
#
#   bench/pair.sh [TREE_DIR]      # default /tmp/cstream-usage-bench/real
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-/tmp/cstream-usage-bench/real}
ROUNDS=${ROUNDS:-9}
[ -d "$tree/projects" ] ||
    python3 bench/replicate_claude.py ../shared/corpus/sessions/claude-code "$tree" --mb 200
cs=$PWD/target/release/cstream
run() { "$cs" -j 1 --to usage "$tree/projects" >/dev/null; }
now() { date +%s.%N; }
alone=() pair=()
for _ in $(seq "$ROUNDS"); do
    s=$(now); run; e=$(now)
    alone+=("$(echo "$e - $s" | bc -l)")
    s=$(now); run & run; wait; e=$(now)
    pair+=("$(echo "$e - $s" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
a=$(median "${alone[@]}") p=$(median "${pair[@]}")
printf 'one run alone %.3f s, two at once %.3f s: two cores give %.2fx the throughput of one\n' \
    "$a" "$p" "$(echo "2 * $a / $p" | bc -l)"
