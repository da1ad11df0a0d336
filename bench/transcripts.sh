#!/usr/bin/env bash
# Transcripts for people: cstream --to html / --to markdown beside claude-code-log on the
# same Claude Code projects tree.
#
#   bench/transcripts.sh [--projects N] [--no-build]
#
# Uses the real tree bench/archive.sh builds ($BENCH_TMP/real, replicated from
# ../shared/corpus/sessions/claude-code by bench/replicate_claude.py; built here if missing)
# and takes its first N project folders (default 100, ~23 MB: claude-code-log needs about a
# second per project). claude-code-log 1.7.0 is installed from PyPI into a venv under
# $BENCH_TMP. Both tools run cold (claude-code-log's cache database removed first) with one
# worker, and write one page per session into a fresh folder. Printed: wall time, MB/s of
# input, peak RSS (GNU time), output size. Linux only.
set -euo pipefail
projects=100 build=1
while [ $# -gt 0 ]; do
    case "$1" in
    --projects) projects=$2; shift ;;
    --no-build) build=0 ;;
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
if [ ! -d "$tmp/real/projects" ]; then
    python3 bench/replicate_claude.py ../shared/corpus/sessions/claude-code "$tmp/real" --mb 200
fi
if [ ! -x "$tmp/ccl/bin/claude-code-log" ]; then
    python3 -m venv "$tmp/ccl"
    "$tmp/ccl/bin/pip" install --quiet --disable-pip-version-check claude-code-log==1.7.0
fi
ccl=$tmp/ccl/bin/claude-code-log

# The subset: the first N project folders, copied so that claude-code-log's cache database
# (written into the projects folder) never touches the real tree.
sub=$tmp/transcripts-$projects
if [ ! -d "$sub/projects" ]; then
    mkdir -p "$sub/projects"
    find "$tmp/real/projects" -mindepth 1 -maxdepth 1 -type d | sort | head -n "$projects" |
        xargs -I{} cp -r {} "$sub/projects/"
fi
bytes=$(find "$sub/projects" -name '*.jsonl' -print0 | du -cb --apparent-size --files0-from=- | tail -1 | cut -f1)

# run NAME OUTDIR CMD...: wall seconds, MB/s, peak RSS and output size of CMD.
run() {
    local name=$1 out=$2
    shift 2
    rm -rf "$out"
    mkdir -p "$out"
    local t
    /usr/bin/time -o "$tmp/time.txt" -f '%e %M' "$@" >/dev/null 2>"$tmp/stderr.txt" ||
        { echo "$name failed:" >&2; tail -5 "$tmp/stderr.txt" >&2; }
    t=$(tail -1 "$tmp/time.txt")
    local size
    size=$(du -sb --apparent-size "$out" | cut -f1)
    awk -v n="$name" -v b="$bytes" -v t="$t" -v s="$size" 'BEGIN { split(t, a, " ");
        printf "| %-44s | %7.2f s | %8.1f MB/s | %6.1f MiB | %6.1f MB |\n", n, a[1], b / 1e6 / a[1], a[2] / 1024, s / 1e6 }'
}

echo "Input: $projects project folders, $(find "$sub/projects" -name '*.jsonl' | wc -l) transcripts, $bytes bytes"
echo
echo "| command | time | throughput | peak RSS | output |"
echo "|---|---|---|---|---|"
run "cstream --to html --output-dir (1 job)" "$tmp/out-html" \
    "$cs" --jobs 1 --to html --output-dir "$tmp/out-html" "$sub/projects"
run "cstream --to html -o one page (1 job)" "$tmp/out-one" \
    "$cs" --jobs 1 --to html -o "$tmp/out-one/all.html" "$sub/projects"
run "cstream --to markdown --output-dir (1 job)" "$tmp/out-md" \
    "$cs" --jobs 1 --to markdown --output-dir "$tmp/out-md" "$sub/projects"
find "$sub/projects" -name 'claude-code-log-cache.db*' -delete
run "claude-code-log 1.7.0 (html, cold, -j 1)" "$tmp/out-ccl-html" \
    "$ccl" --all-projects --projects-dir "$sub/projects" -o "$tmp/out-ccl-html" -j 1
find "$sub/projects" -name 'claude-code-log-cache.db*' -delete
run "claude-code-log 1.7.0 (markdown, cold, -j 1)" "$tmp/out-ccl-md" \
    "$ccl" --all-projects --projects-dir "$sub/projects" -o "$tmp/out-ccl-md" -f md -j 1
