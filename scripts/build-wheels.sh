#!/usr/bin/env bash
# Build the Python package's distributions into DIR (default target/wheels):
# a manylinux2014 wheel (glibc 2.17 or later) for this machine's
# architecture, linked through zig so that it runs on distributions older
# than the one it is built on, and an sdist. abi3: the one wheel serves
# every CPython from 3.9 on. Publishing them is left to the release process.
#
#   scripts/build-wheels.sh [DIR] [--target aarch64-unknown-linux-gnu]...
#
# A --target needs that target's Rust standard library (rustup target add).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=target/wheels
TARGETS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --target) TARGETS+=("$2"); shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) OUT=$1; shift ;;
    esac
done
VENV=target/wheel-build
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r scripts/requirements-wheels.txt
export PATH="$PWD/$VENV/bin:$PATH"
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=("")
fi
for t in "${TARGETS[@]}"; do
    maturin build --release --manifest-path python/Cargo.toml --out "$OUT" \
        --zig --compatibility manylinux2014 ${t:+--target "$t"}
done
maturin sdist --manifest-path python/Cargo.toml --out "$OUT"
ls -l "$OUT"
