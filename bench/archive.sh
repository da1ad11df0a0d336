#!/usr/bin/env bash
# Archives: cstream reading saved sessions to events, beside ccusage on the same files.
#
#   bench/archive.sh [--real-mb 200] [--gen-mb 1100] [--no-build] [--no-gen]
#
# Builds in $BENCH_TMP (default /tmp/cstream-archive-bench), never in the repository:
#   real/     a Claude Code projects tree of ~200 MiB replicated from the real transcripts in
#             ../shared/corpus/sessions/claude-code (bench/replicate_claude.py)
#   gen/      the generated archive (bench/gen_archive.py --seed 1), Claude and Codex trees
#   ccusage/  ccusage 20.0.24 from npm (needs node and npm)
# and prints, per tree: throughput (median of ROUNDS=5 runs) and peak RSS of `cstream --to
# events -j 1` and `-j 2` reading the tree as a directory (the walk included; the bytes are
# the session files'), of ccusage on the Claude trees
# (as it runs, and pinned to one core), and the per-file token agreement
# (bench/compare_ccusage.py). Linux, GNU time, taskset.
#
# `-j 2` is read against two measures taken in the same rounds, which alternate (each round
# runs the three in a turned order, so that a slow spell of the machine falls on all of
# them): `-j 1`, and two `-j 1` runs at once, each over the whole tree. The last is what two
# cores of this machine give two independent copies of the work (shared cache and memory
# bandwidth, and on a VM the host's other tenants): the ceiling of `-j 2` here, which a
# figure of `-j 2` against `-j 1` alone cannot tell from a cost of cstream's own.
set -euo pipefail
real_mb=200 gen_mb=1100 build=1 gen=1
while [ $# -gt 0 ]; do
    case "$1" in
    --real-mb) real_mb=$2; shift ;;
    --gen-mb) gen_mb=$2; shift ;;
    --no-build) build=0 ;;
    --no-gen) gen=0 ;;
    -h | --help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
cd "$(dirname "$0")/.."
tmp=${BENCH_TMP:-/tmp/cstream-archive-bench}
mkdir -p "$tmp"
[ $build = 1 ] && cargo build --release --locked -q
cs=$PWD/target/release/cstream

mb() { du -sb --apparent-size "$1" | awk '{print $1 / 1048576}'; }

ROUNDS=${ROUNDS:-5}
median() { printf '%s\n' "$@" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p"; }
# row NAME BYTES SECONDS RSS_KIB: one line of the table.
row() {
    awk -v n="$1" -v b="$2" -v t="$3" -v r="$4" 'BEGIN {
        printf "| %-52s | %7.2f s | %7.1f MB/s | %s |\n", n, t, b / 1e6 / t,
            (r == "" ? "(two runs)" : sprintf("%6.1f MiB", r / 1024)) }'
}
# timed CMD...: "SECONDS RSS_KIB" of one run of CMD (output to /dev/null).
timed() {
    /usr/bin/time -o "$tmp/time.out" -f '%e %M' "$@" >/dev/null 2>/dev/null
    tail -1 "$tmp/time.out"
}

# run NAME BYTES CMD...: the median wall time of $ROUNDS runs of CMD, its throughput, and the
# largest peak RSS seen.
run() {
    local name=$1 bytes=$2
    shift 2
    local times=() rss=0 t
    for _ in $(seq "$ROUNDS"); do
        t=$(timed "$@")
        times+=("${t% *}")
        [ "${t#* }" -gt "$rss" ] && rss=${t#* }
    done
    row "$name" "$bytes" "$(median "${times[@]}")" "$rss"
}

# cores LABEL BYTES DIR: `cstream --to events` over DIR with -j 1, with -j 2, and two -j 1
# runs at once, in alternating rounds; then -j 2 and the pair against -j 1.
cores() {
    local label=$1 bytes=$2 dir=$3
    local one=() two=() pair=() rss1=0 rss2=0 t r k
    for r in $(seq "$ROUNDS"); do
        for k in 0 1 2; do
            case $(((r + k) % 3)) in
            0) t=$(timed "$cs" --to events -j 1 "$dir")
                one+=("${t% *}"); [ "${t#* }" -gt "$rss1" ] && rss1=${t#* } ;;
            1) t=$(timed "$cs" --to events -j 2 "$dir")
                two+=("${t% *}"); [ "${t#* }" -gt "$rss2" ] && rss2=${t#* } ;;
            2) t=$(timed bash -c '"$@" >/dev/null & "$@" >/dev/null; wait' _ \
                    "$cs" --to events -j 1 "$dir")
                pair+=("${t% *}") ;;
            esac
        done
    done
    local m1 m2 mp
    m1=$(median "${one[@]}") m2=$(median "${two[@]}") mp=$(median "${pair[@]}")
    row "cstream --to events -j 1 ($label)" "$bytes" "$m1" "$rss1"
    row "cstream --to events -j 2 ($label)" "$bytes" "$m2" "$rss2"
    row "two cstream -j 1 at once ($label, each the whole tree)" "$((2 * bytes))" "$mp" ""
    ratios+=("$(awk -v a="$m1" -v b="$m2" -v p="$mp" -v l="$label" 'BEGIN {
        printf "%s: -j 2 does %.2fx the work of -j 1 a second; two -j 1 at once do %.2fx", l, a / b, 2 * a / p }')")
}
ratios=()

if [ ! -d "$tmp/real/projects" ]; then
    python3 bench/replicate_claude.py ../shared/corpus/sessions/claude-code "$tmp/real" --mb "$real_mb"
fi
find "$tmp/real/projects" -name '*.jsonl' | sort >"$tmp/real.files"
real_bytes=$(du -sb --apparent-size "$tmp/real/projects" | cut -f1)

if [ ! -x "$tmp/ccusage/node_modules/.bin/ccusage" ]; then
    mkdir -p "$tmp/ccusage"
    (cd "$tmp/ccusage" && npm init -y >/dev/null && npm install --silent ccusage@20.0.24)
fi
ccu=$tmp/ccusage/node_modules/.bin/ccusage

echo "| command (median of $ROUNDS) | time | throughput | peak RSS |"
echo "|---|---|---|---|"
mib=$(mb "$tmp/real/projects" | cut -d. -f1)
cores "real, $mib MiB" "$real_bytes" "$tmp/real/projects"
# ccusage 20 is a native, multi-threaded binary: on one core too, for the per-core figure.
CLAUDE_CONFIG_DIR=$tmp/real run "ccusage claude session --json --offline (real)" "$real_bytes" \
    "$ccu" claude session --json --offline
CLAUDE_CONFIG_DIR=$tmp/real run "ccusage, the same, one core (taskset -c 0)" "$real_bytes" \
    taskset -c 0 "$ccu" claude session --json --offline
if [ $gen = 1 ]; then
    [ -d "$tmp/gen/claude" ] || python3 bench/gen_archive.py "$tmp/gen" --mb "$gen_mb" --seed 1 --stats
    for tree in claude codex; do
        find "$tmp/gen/$tree" -name '*.jsonl' | sort >"$tmp/gen-$tree.files"
        bytes=$(xargs -a "$tmp/gen-$tree.files" cat | wc -c)
        cores "generated $tree, $((bytes / 1048576)) MiB" "$bytes" "$tmp/gen/$tree"
    done
    # The transcripts only, as in cstream's row (ccusage reads no tool-results/*.txt).
    bytes=$(xargs -a "$tmp/gen-claude.files" cat | wc -c)
    mkdir -p "$tmp/gen-ccusage"
    ln -sfn "$tmp/gen/claude/projects" "$tmp/gen-ccusage/projects"
    CLAUDE_CONFIG_DIR=$tmp/gen-ccusage run "ccusage claude session (generated claude)" "$bytes" \
        "$ccu" claude session --json --offline
fi
echo
echo "Two cores against one, same rounds (the pair is the machine's ceiling for two cores):"
printf '  %s\n' "${ratios[@]}"
longest() { xargs -r cat | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }'; }
echo
[ $gen = 1 ] && echo "Longest record in the generated trees: $(cat "$tmp"/gen-*.files | longest) bytes"
echo "Longest record in the real tree: $(longest <"$tmp/real.files") bytes"
"$cs" --to events "$tmp/real/projects" >"$tmp/real.events"
CLAUDE_CONFIG_DIR=$tmp/real "$ccu" claude session --json --offline >"$tmp/real.ccusage.json"
python3 bench/compare_ccusage.py "$tmp/real.events" "$tmp/real.ccusage.json"
