#!/usr/bin/env bash
# A profile-guided (PGO) release build of cstream: the binary release archives ship, and the
# one bench/ measures beside the plain release build (docs/performance.md, "Profile-guided
# builds").
#
#   scripts/pgo-build.sh            # writes target/pgo/release/cstream
#   scripts/pgo-build.sh --check    # then the same output as target/release/cstream, or exit 1
#
# 1. builds cstream instrumented (-Cprofile-generate) in target/pgo-gen/;
# 2. runs it on the project's own inputs, never on what bench/ measures: every fixture
#    through every output format (so that no dialect's code is left untrained, which
#    PGO would lay out as cold), a 40 MiB cursor-agent stream from bench/gen_stream.py with
#    seed 7 (bench/ uses seed 1) through events, openai-sse and text, and a generated
#    archive (bench/gen_archive.py --seed 7) of Claude Code and Codex sessions through
#    usage and events;
# 3. merges the profiles with llvm-profdata (rustup's llvm-tools component, installed here
#    when missing) and builds the release binary with -Cprofile-use into target/pgo/.
# --check then runs both binaries on every fixture in every output format and compares
# stdout, stderr and exit status: the compiler's choices may differ, the output may not.
# Takes two release builds (about 12 minutes on 2 cores).
set -euo pipefail
check=0
case ${1:-} in
-h | --help) "$(dirname "$0")/../bench/help.sh" "$0"; exit 0 ;;
--check) check=1 ;;
"") ;;
*) echo "scripts/pgo-build.sh: unknown option $1" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-target}
case $target in /*) ;; *) target=$root/$target ;; esac

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | awk '/^host:/ {print $2}')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools
fi
[ -x "$profdata" ] || { echo "pgo-build: no llvm-profdata at $profdata" >&2; exit 1; }

data=$target/pgo-data
rm -rf "$data"
mkdir -p "$data"
RUSTFLAGS="-Cprofile-generate=$data" cargo build --release --locked --quiet \
    --target-dir "$target/pgo-gen" --bin cstream
gen=$target/pgo-gen/release/cstream

# The training runs. Warnings and exit statuses do not matter here (fixtures include bad
# input on purpose): only the profile counts do.
formats=(text events openai-sse openai-json openai-responses openai-responses-json anthropic-sse
    anthropic-json documents documents-sse markdown html messages rows atif otlp-json usage)
mapfile -d '' fixtures < <(find fixtures -type f \( -name '*.jsonl' -o -name '*.json' -o -name '*.ndjson' \) -print0 | sort -z)
[ ${#fixtures[@]} -gt 0 ] || { echo "pgo-build: no fixtures found under fixtures/" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for f in "${fixtures[@]}"; do
    for fmt in "${formats[@]}"; do
        "$gen" --to "$fmt" "$f" > /dev/null 2>&1 || true
    done
done
python3 bench/gen_stream.py --mb 40 --seed 7 -o "$scratch/mix.jsonl"
for fmt in events openai-sse text; do
    "$gen" --to "$fmt" < "$scratch/mix.jsonl" > /dev/null 2>&1 || true
done
python3 bench/gen_archive.py --mb 120 --seed 7 "$scratch/archive" 2> /dev/null
for fmt in usage events; do
    for j in 1 2; do
        "$gen" -j "$j" -q --to "$fmt" "$scratch/archive" > /dev/null 2>&1 || true
    done
done

"$profdata" merge -o "$target/pgo.profdata" "$data"
RUSTFLAGS="-Cprofile-use=$target/pgo.profdata" cargo build --release --locked --quiet \
    --target-dir "$target/pgo" --bin cstream
echo "pgo-build: $target/pgo/release/cstream"
[ "$check" = 1 ] || exit 0

# The PGO binary against the plain release build, fixture by fixture.
cargo build --release --locked --quiet --bin cstream
plain=$target/release/cstream pgo=$target/pgo/release/cstream
n=0 differ=0
for f in "${fixtures[@]}"; do
    for fmt in "${formats[@]}"; do
        # --created pins what would otherwise be the clock (a session with no time of its
        # own), so the two runs cannot differ by the second they ran in.
        a=$("$plain" --created 1700000000 --to "$fmt" "$f" 2>&1; echo "exit $?")
        b=$("$pgo" --created 1700000000 --to "$fmt" "$f" 2>&1; echo "exit $?")
        n=$((n + 1))
        if [ "$a" != "$b" ]; then
            echo "pgo-build: --to $fmt $f differs between the plain and the PGO build" >&2
            differ=$((differ + 1))
        fi
    done
done
for fmt in usage events; do
    a=$("$plain" -j 1 --to "$fmt" "$scratch/archive" 2>&1 | md5sum)
    b=$("$pgo" -j 1 --to "$fmt" "$scratch/archive" 2>&1 | md5sum)
    n=$((n + 1))
    [ "$a" = "$b" ] || { echo "pgo-build: -j 1 --to $fmt over the archive differs" >&2; differ=$((differ + 1)); }
done
echo "pgo-build: $n commands, $differ differences"
[ "$differ" = 0 ]
