#!/usr/bin/env bash
# How much two cores give this machine for work that shares nothing: one
# `cstream -j 1 --to usage` run over a tree alone, then two of them started
# together, then one `-j 2` run, rounds alternating, medians of ROUNDS=9 (wall
# time). The throughput of two at once is what `-j 2` over the same tree could
# reach at best, so `-j 2` / `-j 1` is read against it (docs/performance.md,
# "Less around the walk", "Rows without empty chunks").
#
#   bench/pair.sh [TREE_DIR]   # default /tmp/cstream-usage-bench/real (its projects/);
#                              # any other directory is read as it is (a Codex tree)
set -euo pipefail
case ${1:-} in -h | --help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
tree=${1:-/tmp/cstream-usage-bench/real}
ROUNDS=${ROUNDS:-9}
if [ -z "${1:-}" ] && [ ! -d "$tree/projects" ]; then
    python3 bench/replicate_claude.py ../shared/corpus/sessions/claude-code "$tree" --mb 200
fi
dir=$tree
[ -d "$tree/projects" ] && dir=$tree/projects
cs=$PWD/target/release/cstream
run() { "$cs" -j "$1" -q --to usage "$dir" >/dev/null; }
now() { date +%s.%N; }
alone=() pair=() two=()
for _ in $(seq "$ROUNDS"); do
    s=$(now); run 1; e=$(now)
    alone+=("$(echo "$e - $s" | bc -l)")
    s=$(now); run 1 & run 1; wait; e=$(now)
    pair+=("$(echo "$e - $s" | bc -l)")
    s=$(now); run 2; e=$(now)
    two+=("$(echo "$e - $s" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
a=$(median "${alone[@]}") p=$(median "${pair[@]}") t=$(median "${two[@]}")
printf 'one run alone %.3f s, two at once %.3f s: two cores give %.2fx the throughput of one\n' \
    "$a" "$p" "$(echo "2 * $a / $p" | bc -l)"
printf -- '-j 2 %.3f s: %.2fx -j 1\n' "$t" "$(echo "$a / $t" | bc -l)"
