#!/usr/bin/env bash
# The instruction guard: `--to events` and `--to openai-sse` on a few MiB of the bench
# mix, counted by callgrind, must stay at or under the ceilings below (instructions per
# input byte). Instruction counts do not move with the machine's load, unlike wall time,
# so CI (.ci/run) can fail on them. Lower a ceiling when a change makes cstream faster;
# raise one only with a reason in the commit message (bench/README.md, "The guard").
#
#   bench/guard.sh                    # builds the release binary, 4 MiB of the mix
#   CSTREAM_BIN=path bench/guard.sh   # an already built binary (same code as release)
set -euo pipefail
case ${1:-} in -h | --help) "$(dirname "$0")/help.sh" "$0"; exit 0 ;; esac

# Ceilings: just above the figures measured when they were set (see bench/README.md).
CEILINGS=(
  "events 9.4"
  "openai-sse 9.6"
)
MB=4 SEED=1

command -v valgrind > /dev/null || { echo "bench/guard.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
SCRATCH=$TARGET/bench
mkdir -p "$SCRATCH"
BIN=${CSTREAM_BIN:-}
if [ -z "$BIN" ]; then
  cargo build --release --quiet --locked --bin cstream
  BIN=$TARGET/release/cstream
fi
INPUT=$SCRATCH/guard-${MB}m-seed${SEED}.jsonl
[ -s "$INPUT" ] || python3 bench/gen_stream.py --mb "$MB" --seed "$SEED" -o "$INPUT"
BYTES=$(stat -c %s "$INPUT")

failed=0
for c in "${CEILINGS[@]}"; do
  read -r format ceiling <<< "$c"
  log=$SCRATCH/guard.$format.log
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" --to "$format" \
    < "$INPUT" > /dev/null 2> "$log"
  refs=$(awk '/ I +refs:/ {gsub(",", "", $NF); print $NF}' "$log")
  [ -n "$refs" ] || { echo "bench/guard.sh: no instruction count for --to $format (see $log)" >&2; exit 2; }
  per=$(awk "BEGIN {printf \"%.2f\", $refs / $BYTES}")
  if awk "BEGIN {exit !($per > $ceiling)}"; then
    verdict="OVER the ceiling"
    failed=1
  else
    verdict="ok"
  fi
  printf 'cstream --to %-10s %6s instructions per input byte (ceiling %s): %s\n' \
    "$format" "$per" "$ceiling" "$verdict"
done
if [ "$failed" = 1 ]; then
  echo "bench/guard.sh: a format needs more instructions per byte than its ceiling" \
    "($BYTES bytes of bench/gen_stream.py --mb $MB --seed $SEED); bench/profile.sh shows where they go" >&2
  exit 1
fi
