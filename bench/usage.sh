#!/usr/bin/env bash
# `cstream --to usage` beside ccusage 20.0.24 on one Claude Code projects tree (~200 MiB,
# bench/replicate_claude.py from ../shared/corpus), both with every core and pinned to one
# (taskset -c 0): wall time and CPU time (user + system), medians of ROUNDS=5, and the
# largest peak RSS (GNU time). On a machine shared with other work the wall time mostly
# measures the wait for a core; the CPU time is the work each tool did.
# The rounds alternate between the commands, so that a machine whose load moves during
# the run moves them all alike: compare the ratios of one run, not figures of two. With
# target/pgo/release/cstream built (scripts/pgo-build.sh), the profile-guided build
# runs beside the plain one (two rows more).
#
#   bench/usage.sh [TREE_DIR]      # default /tmp/cstream-usage-bench/real
set -euo pipefail
case ${1:-} in -h | --help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;; esac
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
export CLAUDE_CONFIG_DIR=$tree
names=("ccusage claude session --json --offline" "ccusage, one core (taskset -c 0)"
    "cstream --to usage" "cstream --to usage, one core (taskset -c 0)")
cmds=("$ccu claude session --json --offline" "taskset -c 0 $ccu claude session --json --offline"
    "$cs --to usage $tree/projects" "taskset -c 0 $cs --to usage $tree/projects")
# Which program each row times, for the ratios below.
who=(ccusage ccusage cstream cstream)
# The profile-guided build (scripts/pgo-build.sh), when built: two rows more.
pgo=$PWD/target/pgo/release/cstream
if [ -x "$pgo" ]; then
    names+=("cstream (PGO) --to usage" "cstream (PGO) --to usage, one core (taskset -c 0)")
    cmds+=("$pgo --to usage $tree/projects" "taskset -c 0 $pgo --to usage $tree/projects")
    who+=("cstream (PGO)" "cstream (PGO)")
fi
declare -A times cpu rss
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
    for i in "${!cmds[@]}"; do
        # shellcheck disable=SC2086 # the commands are word lists
        /usr/bin/time -o /tmp/usage-bench.time -f '%e %U %S %M' ${cmds[$i]} >/dev/null 2>/dev/null
        read -r e u s m < <(tail -1 /tmp/usage-bench.time)
        times[$i]+="$e "
        cpu[$i]+="$(echo "$u + $s" | bc -l) "
        [ "$m" -gt "${rss[$i]:-0}" ] && rss[$i]=$m
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -n | sed -n "$(((ROUNDS + 1) / 2))p"; }
echo "| command (median of $ROUNDS) | wall time | CPU time | peak RSS |"
echo "|---|---|---|---|"
for i in "${!cmds[@]}"; do
    printf '| %s | %s s | %.2f s | %.1f MiB |\n' "${names[$i]}" "$(echo "${times[$i]}" | median)" \
        "$(echo "${cpu[$i]}" | median)" "$(echo "${rss[$i]} / 1024" | bc -l)"
done
# Each cstream row against ccusage's row of the same cores (0: all, 1: one).
for k in $(seq 2 $((${#cmds[@]} - 1))); do
    i=$(((k - 2) % 2))
    c=$(echo "${times[$i]}" | median) s=$(echo "${times[$k]}" | median)
    cc=$(echo "${cpu[$i]}" | median) sc=$(echo "${cpu[$k]}" | median)
    printf '%s: %s %.1fx faster in wall time, %.1fx in CPU time; peak RSS %.0f %% of ccusage\n' \
        "$([ $i = 0 ] && echo "all cores" || echo "one core")" \
        "${who[$k]}" "$(echo "$c / $s" | bc -l)" \
        "$(echo "$cc / $sc" | bc -l)" "$(echo "100 * ${rss[$k]} / ${rss[$i]}" | bc -l)"
done
