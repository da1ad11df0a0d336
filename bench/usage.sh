#!/usr/bin/env bash
# `cstream --to usage` beside ccusage 20.0.24 on one Claude Code projects tree (~200 MiB,
# bench/replicate_claude.py from ../shared/corpus), both with every core and pinned to one
# (taskset -c 0): wall time (median of ROUNDS=5) and the largest peak RSS (GNU time).
#
#   bench/usage.sh [TREE_DIR]      # default /tmp/cstream-usage-bench/real
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${1:-/tmp/cstream-usage-bench/real}
ROUNDS=${ROUNDS:-5}
[ -d "$tree/projects" ] ||
    python3 bench/replicate_claude.py ../shared/corpus/sessions/claude-code "$tree" --mb 200
ccdir=target/bench/ccusage
if [ ! -x "$ccdir/node_modules/.bin/ccusage" ]; then
    mkdir -p "$ccdir"
    (cd "$ccdir" && npm init -y >/dev/null && npm install --silent ccusage@20.0.24)
fi
ccu=$PWD/$ccdir/node_modules/.bin/ccusage
cs=$PWD/target/release/cstream
run() {
    local name=$1 times=() rss=0 t
    shift
    for _ in $(seq "$ROUNDS"); do
        /usr/bin/time -o /tmp/usage-bench.time -f '%e %M' "$@" >/dev/null 2>/dev/null
        t=$(tail -1 /tmp/usage-bench.time)
        times+=("${t% *}")
        [ "${t#* }" -gt "$rss" ] && rss=${t#* }
    done
    printf '| %s | %s s | %.1f MiB |\n' "$name" \
        "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")" "$(echo "$rss / 1024" | bc -l)"
}
echo "| command (median of $ROUNDS) | time | peak RSS |"
echo "|---|---|---|"
export CLAUDE_CONFIG_DIR=$tree
run "ccusage claude session --json --offline" "$ccu" claude session --json --offline
run "ccusage, one core (taskset -c 0)" taskset -c 0 "$ccu" claude session --json --offline
run "cstream --to usage" "$cs" --to usage "$tree/projects"
run "cstream --to usage, one core (taskset -c 0)" taskset -c 0 "$cs" --to usage "$tree/projects"
