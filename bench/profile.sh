#!/usr/bin/env bash
# Instruction-count profile of one cstream command with callgrind (repeatable on a noisy
# machine, unlike wall time), or with --time a profile of where its time goes:
#
#   bench/profile.sh                          # cstream --to events on a 10 MiB mixed stream
#   bench/profile.sh --mb 5 -- --to text --color never
#   bench/profile.sh --input FILE -- --from events --to text
#   bench/profile.sh --time --mb 100          # CPU-time samples instead (perf, cpu-clock)
#
# Builds `--profile profiling` (release + line tables), runs `parse_baseline typed` and
# the cstream command under valgrind --tool=callgrind, prints instructions per input byte
# for both, then the top functions by self and by inclusive cost. Inlined code is counted
# in the function it was inlined into. The callgrind files stay in target/bench/ for
# callgrind_annotate or kcachegrind.
#
# --time samples the CPU clock with `perf record -e cpu-clock` (a software timer, so it works
# in virtual machines without hardware counters) for both commands and prints the samples'
# CPU time and the top functions by self time. Instructions and time disagree where code
# stalls (branch mispredictions, cache misses): a change that cuts instructions may not cut
# time, and the time profile shows where the stalls are. Use 100 MiB or more, so that each
# function gets enough samples.
set -euo pipefail

MB=10 SEED=1 TOP=25 INPUT= TIME=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) MB=$2; shift ;;
    --seed) SEED=$2; shift ;;
    --top) TOP=$2; shift ;;
    --input) INPUT=$2; shift ;;
    --time) TIME=1 ;;
    --) shift; break ;;
    -h|--help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;;
    *) echo "bench/profile.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--to events)
if [ "$TIME" = 1 ]; then
  command -v perf > /dev/null || { echo "bench/profile.sh: --time needs perf (apt-get install linux-perf)" >&2; exit 2; }
else
  command -v valgrind > /dev/null || { echo "bench/profile.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
fi

cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
SCRATCH=$TARGET/bench
mkdir -p "$SCRATCH"
cargo build --profile profiling --quiet --features simd-baseline --bin cstream --example parse_baseline
if [ -z "$INPUT" ]; then
  INPUT=$SCRATCH/profile-${MB}m-seed${SEED}.jsonl
  [ -s "$INPUT" ] || python3 bench/gen_stream.py --mb "$MB" --seed "$SEED" -o "$INPUT"
fi
BYTES=$(stat -c %s "$INPUT")

on_input() { # LOG CMD... : run CMD (a profiler wrapping a command) on the input, its output
  # dropped, its stderr (the profiler's summary) kept in LOG
  local log=$1; shift
  "$@" < "$INPUT" > /dev/null 2> "$log"
}

callgrind() { # NAME CMD... : run CMD under callgrind, print its instruction count
  local out=$SCRATCH/callgrind.$1.out; shift
  on_input "$out.log" valgrind --tool=callgrind --callgrind-out-file="$out" "$@"
  awk '/ I +refs:/ {gsub(",", "", $NF); print $NF}' "$out.log"
}

report() { # FILE : top functions, self and inclusive
  for mode in self inclusive; do
    echo
    echo "top $TOP by $mode cost:"
    callgrind_annotate --auto=no --threshold=100 --inclusive=$([ $mode = inclusive ] && echo yes || echo no) "$1" 2>/dev/null |
      python3 -c '
import re, sys, collections
inclusive, top = sys.argv[1] == "inclusive", int(sys.argv[2])
cost, total = collections.Counter(), None
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
    if not m:
        continue
    n, what = int(m.group(1).replace(",", "")), re.sub(r" \[[^\]]*\]$", "", m.group(2))
    if what.startswith("PROGRAM TOTALS"):
        total = n
        continue
    # "file:function": inlined lines are listed under their own source file; merge them
    m = re.match(r"^(?:\?\?\?|\S+?\.(?:rs|S|c|h|cc|cpp)):(.*)$", what)
    fn = m.group(1) if m else what
    if re.search(r"^0x|below main|__libc_start|^main$|__rust_begin_short_backtrace", fn):
        continue
    # self costs of the pieces add up; inclusive ones overlap, so keep the largest
    cost[fn] = max(cost[fn], n) if inclusive else cost[fn] + n
for fn, n in cost.most_common(top + 10 if inclusive else top):
    print("%14s %6.2f%%  %s" % (format(n, ","), 100.0 * n / total, fn[:140]))
' "$mode" "$TOP"
  done
}

sampled() { # NAME CMD... : run CMD under perf (CPU-clock samples), print its sampled CPU ms
  local out=$SCRATCH/perf.$1.data; shift
  on_input "$out.log" perf record -q -e cpu-clock -F 4999 -o "$out" "$@"
  # A cpu-clock sample's period is the CPU time it stands for, in nanoseconds.
  perf script -i "$out" -F period 2> /dev/null | awk '{ns += $1} END {printf "%.0f", ns / 1e6}'
}

time_report() { # FILE : top functions by self time
  echo
  echo "top $TOP by self time:"
  perf report -i "$1" --stdio --no-children --sort symbol 2> /dev/null |
    awk -v top="$TOP" '/^ +[0-9.]+%/ && n < top {sub(/ +-? +-? *$/, ""); print; n++}'
}

echo "input: $INPUT ($BYTES bytes)"
if [ "$TIME" = 1 ]; then
  base=$(sampled baseline "$TARGET/profiling/examples/parse_baseline" typed)
  mine=$(sampled cstream "$TARGET/profiling/cstream" "${ARGS[@]}")
  printf 'parse_baseline typed: %6s ms of CPU sampled\n' "$base"
  printf 'cstream %-12s  %6s ms of CPU sampled (%.2fx the baseline'"'"'s speed)\n' \
    "${ARGS[*]}" "$mine" "$(awk "BEGIN {print $base / $mine}")"
  echo '(one run each, on a machine whose speed moves: bench/run.sh alternates rounds for ratios)'
  time_report "$SCRATCH/perf.cstream.data"
  exit 0
fi
base=$(callgrind baseline "$TARGET/profiling/examples/parse_baseline" typed)
mine=$(callgrind cstream "$TARGET/profiling/cstream" "${ARGS[@]}")
printf 'parse_baseline typed: %14s instructions, %5.1f per byte\n' "$base" "$(awk "BEGIN {print $base / $BYTES}")"
printf 'cstream %-12s  %14s instructions, %5.1f per byte (%.2fx the baseline)\n' "${ARGS[*]}" "$mine" \
  "$(awk "BEGIN {print $mine / $BYTES}")" "$(awk "BEGIN {print $mine / $base}")"
report "$SCRATCH/callgrind.cstream.out"
