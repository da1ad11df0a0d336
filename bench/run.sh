#!/usr/bin/env bash
# cstream's benchmark suite: cstream and its baselines side by side, same input, same run.
#
#   bench/run.sh            # 200 MiB mixed stream, 5 rounds (a few minutes, most of it jq)
#   bench/run.sh --quick    # 20 MiB, 3 rounds, smaller extra cases
#   bench/run.sh --help
#
# Builds cstream and examples/parse_baseline in release mode, generates the inputs with
# bench/gen_stream.py (cached in target/bench/, keyed by size, seed and generator hash),
# then times every command once per round, rounds alternating between the commands, and
# reports medians as MB/s (MB = 10^6 bytes of input), ratios and peak RSS. Input comes
# from the page cache through `< file`; output goes to /dev/null (a first, untimed round
# pipes it to `wc -c` for the output sizes and warms the cache). Peak RSS is the child's
# ru_maxrss from GNU time when /usr/bin/time is GNU time, else its VmHWM at exit, read by
# bench/peak_rss.py.
# Linux only (/proc, GNU stat).
#
# Then two extra cases: the cumulative file (one shell call re-sent whole N times, the
# O(n^2) input) and backpressure (10,000 shell_output_delta events read back with
# `--from events`, streamed from the generator, uncapped and with --truncate-shell 64K
# when cstream has that flag), reported as output size and peak RSS.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bench/run.sh [--quick] [--mb N] [--seed S] [--runs R] [--no-build] [--no-jq]
                    [--no-extra] [--no-formats] [--keep-going]

  --quick       20 MiB input, 3 rounds, cumulative 100x10000, backpressure 16 KiB events
  --mb N        size of the mixed stream in MiB (default 200)
  --seed S      generator seed (default 1)
  --runs R      timed rounds (default 5; --quick: 3)
  --no-build    use the binaries already in target/release
  --no-jq       skip the jq baseline even when jq is installed
  --no-extra    skip the cumulative and backpressure cases
  --no-formats  skip the rows of the other output formats (Responses, Messages,
                documents, markdown, html, --redact, messages, rows, atif, otlp-json)
EOF
}

MB=200 SEED=1 RUNS= QUICK=0 BUILD=1 JQ=1 EXTRA=1 FORMATS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --mb) MB=$2; shift ;;
    --seed) SEED=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --no-build) BUILD=0 ;;
    --no-jq) JQ=0 ;;
    --no-extra) EXTRA=0 ;;
    --no-formats) FORMATS=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
CUM_N=500 CUM_L=35000 BP_N=10000 BP_KB=100
if [ "$QUICK" = 1 ]; then
  [ "$MB" = 200 ] && MB=20
  CUM_N=100 CUM_L=10000 BP_KB=16
  : "${RUNS:=3}"
fi
: "${RUNS:=5}"

cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-target}
SCRATCH=$TARGET/bench
mkdir -p "$SCRATCH"
GEN=bench/gen_stream.py
JQPROG=bench/to_openai_sse.jq
CSTREAM=$TARGET/release/cstream
BASE=$TARGET/release/examples/parse_baseline

if [ "$BUILD" = 1 ]; then
  echo "building (release)..." >&2
  cargo build --release --quiet --features simd-baseline --bin cstream --example parse_baseline
fi
for b in "$CSTREAM" "$BASE"; do
  [ -x "$b" ] || { echo "bench/run.sh: $b is missing (drop --no-build)" >&2; exit 2; }
done

# ---------------------------------------------------------------- measuring
# BENCH_RSS=python forces the fallback (to test it).
if [ "${BENCH_RSS:-}" != python ] && /usr/bin/time --version 2>&1 | grep -q GNU; then
  RSS_TOOL="GNU time"
else
  RSS_TOOL="bench/peak_rss.py"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now() {
  if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi
}

# run_rss RSSFILE CMD... : run CMD (stdin/stdout inherited), note its peak RSS in RSSFILE;
# rss_kib RSSFILE prints it (GNU time may write a status line first; peak_rss.py writes the
# KiB, then its own, more exact, wall time).
rss_kib() {
  if [ "$RSS_TOOL" = "GNU time" ]; then tail -n 1 "$1"; else head -n 1 "$1"; fi
}
run_rss() {
  local out=$1; shift
  if [ "$RSS_TOOL" = "GNU time" ]; then
    /usr/bin/time -f %M -o "$out" "$@"
  else
    python3 bench/peak_rss.py "$out" "$@"
  fi
}

# Commands are "name|command line" (words split on spaces; no quoting needed here).
# time_cmds TSV INPUT ROUNDS CMD... : one untimed round (output size), then ROUNDS
# rounds, each starting one command later, appending "name<TAB>kind<TAB>value" rows.
time_cmds() {
  local tsv=$1 input=$2 rounds=$3; shift 3
  local cmds=("$@") n=$# i k name cmd t0 t1 size secs
  for ((i = 0; i < n; i++)); do
    name=${cmds[i]%%|*} cmd=${cmds[i]#*|}
    printf '  %-34s ' "$name" >&2
    # shellcheck disable=SC2086
    size=$( { run_rss "$TMP/rss" $cmd < "$input" 2> "$TMP/err" || echo "rc=$?" > "$TMP/rc"; } | wc -c)
    if [ -s "$TMP/rc" ]; then
      printf '%s\t%s\t%s\n' "$name" status "$(cat "$TMP/rc")" >> "$tsv"
      rm -f "$TMP/rc"
    fi
    printf '%s\t%s\t%s\n' "$name" out "$size" >> "$tsv"
    printf '%s\t%s\t%s\n' "$name" rss "$(rss_kib "$TMP/rss")" >> "$tsv"
    echo "output $size bytes" >&2
    # what the command said on stderr (baseline summaries, cstream warnings), briefly
    grep -v '^Command exited with non-zero status' "$TMP/err" | head -n 3 | sed 's/^/      | /' >&2 || true
  done
  for ((k = 0; k < rounds; k++)); do
    echo "  round $((k + 1))/$rounds" >&2
    for ((i = 0; i < n; i++)); do
      local c=${cmds[(i + k) % n]}
      name=${c%%|*} cmd=${c#*|}
      t0=$(now)
      # shellcheck disable=SC2086
      run_rss "$TMP/rss" $cmd < "$input" > /dev/null 2> /dev/null || true
      t1=$(now)
      if [ "$RSS_TOOL" = "GNU time" ]; then
        secs=$(echo "$t1 - $t0" | awk '{print $1 - $3}')
      else
        secs=$(sed -n 2p "$TMP/rss")
      fi
      printf '%s\t%s\t%s\n' "$name" secs "$secs" >> "$tsv"
      printf '%s\t%s\t%s\n' "$name" rss "$(rss_kib "$TMP/rss")" >> "$tsv"
    done
  done
}

# ---------------------------------------------------------------- inputs
GEN_HASH=$(python3 -c 'import hashlib,sys; print(hashlib.sha1(open(sys.argv[1],"rb").read()).hexdigest()[:8])' "$GEN")
generate() { # FILE ARGS... : generate once, keep it
  local file=$1; shift
  if [ ! -s "$file" ]; then
    echo "generating $file ..." >&2
    python3 "$GEN" "$@" --stats -o "$file.tmp" 2> "$file.stats"
    mv "$file.tmp" "$file"
  fi
}
MIXED=$SCRATCH/mixed-${MB}m-seed${SEED}-${GEN_HASH}.jsonl
generate "$MIXED" --mb "$MB" --seed "$SEED"

# supports ARGS... : does this cstream accept ARGS? (a trial run on empty input; clap
# rejects an unknown format or flag with a usage error)
supports() {
  local err
  err=$("$CSTREAM" "$@" < /dev/null 2>&1 > /dev/null || true)
  ! grep -qiE 'invalid value|unexpected argument|unrecognized|unknown' <<< "$err"
}
HAS_SSE=0 HAS_TRUNC=0 HAS_JQ=0
supports --to openai-sse && HAS_SSE=1
supports --from events --truncate-shell 64K && HAS_TRUNC=1
[ "$JQ" = 1 ] && command -v jq > /dev/null && HAS_JQ=1

CMDS=(
  "cat|cat"
  "parse_baseline lines|$BASE lines"
  "parse_baseline typed|$BASE typed"
  "parse_baseline value|$BASE value"
  "cstream --to events|$CSTREAM --to events"
)
[ "$HAS_SSE" = 1 ] && CMDS+=("cstream --to openai-sse|$CSTREAM --to openai-sse")
CMDS+=("cstream --to text --color never|$CSTREAM --to text --color never")
# The profile-guided build (scripts/pgo-build.sh), the one release archives ship, when it
# has been built: its rows beside the plain build's, same rounds.
PGO=$TARGET/pgo/release/cstream
if [ -x "$PGO" ]; then
  CMDS+=("cstream (PGO) --to events|$PGO --to events")
  [ "$HAS_SSE" = 1 ] && CMDS+=("cstream (PGO) --to openai-sse|$PGO --to openai-sse")
fi
# Every other output format on the same input, each row only when this cstream
# has it: the chat formats next to openai-sse, the documents, the transcripts
# for people (redacted by default), the redaction alone on events, and the
# dataset and SQL rows (messages redacted by default), ATIF trajectories and OTLP traces
# (redacted by default).
if [ "$FORMATS" = 1 ]; then
  for args in "--to openai-responses" "--to openai-responses-json" "--to anthropic-sse" \
      "--to anthropic-json" "--to documents" "--to markdown" "--to html" "--to events --redact" \
      "--to messages" "--to rows" "--to atif" "--to otlp-json"; do
    # shellcheck disable=SC2086 # the words of $args are the flags
    supports $args && CMDS+=("cstream $args|$CSTREAM $args")
  done
fi
[ "$HAS_JQ" = 1 ] && CMDS+=("jq -c -r -f to_openai_sse.jq|jq -c -r -f $JQPROG")

machine() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
  echo "$(nproc) x ${cpu:-unknown CPU}, $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
  echo "$(rustc -V 2>/dev/null || echo 'rustc ?'), $(jq --version 2>/dev/null || echo 'no jq'), Python $(python3 -c 'import platform; print(platform.python_version())'), peak RSS from $RSS_TOOL"
}

REPORT=$SCRATCH/report-$(date +%Y%m%d-%H%M%S).md
{
  echo "## cstream benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo
  echo "Command: \`bench/run.sh$( [ "$QUICK" = 1 ] && echo ' --quick') --mb $MB --seed $SEED --runs $RUNS\`"
  machine | sed -e '1s/^/Machine: /' -e '2s/^/Tools: /'
  [ "$HAS_SSE" = 1 ] || echo "(this cstream has no --to openai-sse: row skipped)"
  [ "$HAS_JQ" = 1 ] || echo "(jq not installed or --no-jq: jq row skipped)"
} > "$REPORT"

# table TSV INPUT_BYTES TITLE : the markdown table of one case
table() {
  python3 - "$@" <<'PY'
import statistics, sys
tsv, nbytes, title = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for line in open(tsv):
    name, kind, val = line.rstrip("\n").split("\t")
    r = rows.setdefault(name, {"secs": [], "rss": [], "out": None, "status": None})
    if kind == "secs": r["secs"].append(float(val))
    elif kind == "rss": r["rss"].append(int(val))
    elif kind == "out": r["out"] = int(val)
    else: r["status"] = val
def mbs(r):
    return nbytes / statistics.median(r["secs"]) / 1e6 if r["secs"] else None
typed = mbs(rows["parse_baseline typed"]) if "parse_baseline typed" in rows else None
jq = next((mbs(r) for n, r in rows.items() if n.startswith("jq")), None)
print("\n### %s: %s bytes (%.1f MB)\n" % (title, format(nbytes, ","), nbytes / 1e6))
print("| command | MB/s (median) | min–max MB/s | × typed | × jq | peak RSS | output |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, r in rows.items():
    m = mbs(r)
    lo = nbytes / max(r["secs"]) / 1e6
    hi = nbytes / min(r["secs"]) / 1e6
    out = r["out"]
    outs = ("%.1f MB" % (out / 1e6)) if out >= 100000 else "%s B" % format(out, ",")
    print("| `%s`%s | %s | %s–%s | %s | %s | %.1f MiB | %s |" % (
        name, " (exit %s)" % r["status"].split("=")[-1] if r["status"] else "",
        format(round(m), ","), format(round(lo), ","), format(round(hi), ","),
        "%.2f" % (m / typed) if typed else "–", "%.1f" % (m / jq) if jq else "–",
        max(r["rss"]) / 1024, outs))
print("\n× typed, × jq: throughput relative to `parse_baseline typed` and to jq in this run "
      "(higher is faster); MB = 10^6 bytes of input; peak RSS is the maximum over all runs.")
PY
}

echo "mixed stream: $MIXED" >&2
TSV=$TMP/mixed.tsv
time_cmds "$TSV" "$MIXED" "$RUNS" "${CMDS[@]}"
{
  table "$TSV" "$(stat -c %s "$MIXED")" "Mixed cursor-agent stream ($MB MiB, seed $SEED, $RUNS rounds)"
  echo
  echo "Composition (gen_stream.py --stats):"
  echo
  echo '```'
  cat "$MIXED.stats"
  echo '```'
} >> "$REPORT"

if [ "$EXTRA" = 1 ]; then
  CUM=$SCRATCH/cumulative-${CUM_N}x${CUM_L}-seed${SEED}-${GEN_HASH}.jsonl
  generate "$CUM" --cumulative-shell "$CUM_N" --cumulative-lines "$CUM_L" --seed "$SEED"
  CUM_CMDS=(
    "cat|cat"
    "parse_baseline lines|$BASE lines"
    "parse_baseline typed|$BASE typed"
    "cstream --to events|$CSTREAM --to events"
  )
  [ "$HAS_SSE" = 1 ] && CUM_CMDS+=("cstream --to openai-sse|$CSTREAM --to openai-sse")
  CUM_CMDS+=("cstream --to text --color never|$CSTREAM --to text --color never")
  [ "$HAS_JQ" = 1 ] && CUM_CMDS+=("jq -c -r -f to_openai_sse.jq|jq -c -r -f $JQPROG")
  echo "cumulative: $CUM" >&2
  TSV=$TMP/cum.tsv
  time_cmds "$TSV" "$CUM" "$(( RUNS < 3 ? RUNS : 3 ))" "${CUM_CMDS[@]}"
  table "$TSV" "$(stat -c %s "$CUM")" \
    "Cumulative shell output ($CUM_N re-sends, $CUM_L final lines, stdout + interleavedOutput)" >> "$REPORT"

  echo "backpressure: $BP_N shell_output_delta events of $BP_KB KiB, streamed from the generator" >&2
  BP_ARGS=(--shell-deltas "$BP_N" --delta-kb "$BP_KB" --seed "$SEED")
  {
    echo
    echo "### Backpressure: $BP_N \`shell_output_delta\` events of $BP_KB KiB, \`--from events\`, piped from \`gen_stream.py ${BP_ARGS[*]}\`"
    echo
    echo "| command | input | output | peak RSS |"
    echo "|---|---:|---:|---:|"
  } >> "$REPORT"
  FORMATS=("events" "text --color never")
  [ "$HAS_SSE" = 1 ] && FORMATS+=("openai-sse")
  for f in "${FORMATS[@]}"; do
    CAPS=("")
    [ "$HAS_TRUNC" = 1 ] && CAPS+=("--truncate-shell 64K")
    for cap in "${CAPS[@]}"; do
      # shellcheck disable=SC2086
      size=$(python3 "$GEN" "${BP_ARGS[@]}" --stats 2> "$TMP/bp.stats" \
        | { run_rss "$TMP/rss" "$CSTREAM" --from events --to $f $cap 2> /dev/null || true; } | wc -c)
      in=$(awk '$1 == "total" {print $3}' "$TMP/bp.stats")
      echo "  --to $f $cap: $size bytes out" >&2
      printf '| `cstream --from events --to %s%s` | %.1f MB | %s | %.1f MiB |\n' "$f" "${cap:+ $cap}" \
        "$(echo "$in" | awk '{print $1 / 1e6}')" \
        "$(echo "$size" | awk '{ if ($1 >= 100000) printf "%.1f MB", $1 / 1e6; else printf "%d B", $1 }')" \
        "$(rss_kib "$TMP/rss" | awk '{print $1 / 1024}')" >> "$REPORT"
    done
  done
  [ "$HAS_TRUNC" = 1 ] || printf '\n(this cstream has no --truncate-shell: only the uncapped rows)\n' >> "$REPORT"
fi

echo >&2
cat "$REPORT"
echo >&2
echo "(saved to $REPORT)" >&2
