#!/usr/bin/env bash
# What a release would upload, checked without uploading it (docs/release.md):
#
#  1. the crate: its file list bounded (no file over 1 MB, the whole under
#     CRATE_LIMIT uncompressed, no test or build tree in it), then
#     `cargo publish --dry-run --locked`, which builds it from its files alone;
#  2. the Python distributions in WHEELS (default target/wheels, as
#     scripts/build-wheels.sh leaves them; built here when absent): named
#     after the package, `twine check --strict` (pinned in
#     scripts/requirements-release.txt), the sdist bounded like the crate;
#  3. the wheel installed into a fresh venv, with no index, converting a
#     bundled fixture: the same bytes as the command line (CSTREAM, default
#     target/debug/cstream), under the distribution name and version that
#     Cargo.toml has.
#
#   scripts/release-check.sh [WHEELS] [--allow-dirty]
#
# --allow-dirty is passed to cargo (for a run on uncommitted changes).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=target/wheels
CARGO_ARGS=()
for a in "$@"; do
    case "$a" in
    --allow-dirty) CARGO_ARGS+=("$a") ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) WHEELS=$a ;;
    esac
done
CSTREAM=${CSTREAM:-target/debug/cstream}
# 1 MB a file: the largest source file is under 100 KB and the largest doc
# under 100 KB, so a file over 1 MB is a capture or a generated blob that
# slipped into `include`. 4 MB for the whole: it is 2.2 MB now (127 files,
# 0.6 MB compressed), which leaves the docs and sources room to double,
# while tests/ (19 MB) or fixtures/ (1.3 MB) added by mistake, or one large
# file, trip it. Every `cargo install` downloads it; crates.io's own limit
# (10 MB compressed) is far above.
FILE_LIMIT=${FILE_LIMIT:-1000000}
CRATE_LIMIT=${CRATE_LIMIT:-4000000}

fail() {
    echo "release-check: $*" >&2
    exit 1
}

meta=$(cargo metadata --no-deps --format-version 1 --locked)
read -r NAME VERSION < <(python3 -c '
import json, sys
p = json.load(sys.stdin)["packages"][0]
print(p["name"], p["version"])' <<<"$meta")
echo "release-check: $NAME $VERSION"

# 1. The crate. `cargo package --no-verify` leaves the .crate in
# target/package/ (publish --dry-run packs into a temporary directory and
# removes it): it is bounded first, a second's work, before the build.
cargo package --no-verify --locked "${CARGO_ARGS[@]}"
crate=target/package/$NAME-$VERSION.crate
[ -f "$crate" ] || fail "cargo package left no $crate"

# Sizes from the archive itself, so the check sees what would be uploaded:
# `tar -tv` prints one "perms owner size date time path" line per entry.
bound() { # what, listing (size<TAB>path lines)
    local what=$1 listing=$2
    local big total count
    big=$(awk -F'\t' -v max="$FILE_LIMIT" '$1 > max' <<<"$listing")
    [ -z "$big" ] || fail "$what: files over $FILE_LIMIT bytes:"$'\n'"$big"
    total=$(awk -F'\t' '{ s += $1 } END { print s + 0 }' <<<"$listing")
    count=$(wc -l <<<"$listing")
    [ "$total" -le "$CRATE_LIMIT" ] || fail "$what: $total bytes uncompressed, over $CRATE_LIMIT"
    # A top-level test, fixture or build tree never belongs in a package.
    local stray
    stray=$(cut -f2 <<<"$listing" | cut -d/ -f2- |
        grep -E '^(tests|fixtures|target|bench|fuzz)/|^python/target/' || true)
    [ -z "$stray" ] || fail "$what: holds test or build files:"$'\n'"$stray"
    echo "release-check: $what: $count files, $total bytes uncompressed, largest $(sort -n <<<"$listing" | tail -1 | tr '\t' ' ')"
}
listing() { tar -tvzf "$1" | awk '$1 !~ /^d/ { print $3 "\t" $6 }'; }
bound "$crate ($(stat -c %s "$crate") bytes)" "$(listing "$crate")"
# What crates.io would receive, built from those files alone.
cargo publish --dry-run --locked "${CARGO_ARGS[@]}"

# 2. The Python distributions.
if ! ls "$WHEELS"/*.whl >/dev/null 2>&1; then
    scripts/build-wheels.sh "$WHEELS"
fi
# The file names carry the distribution name normalized (- to _).
dist=${NAME//-/_}
wheel=$(ls "$WHEELS"/"$dist"-"$VERSION"-*manylinux*.whl 2>/dev/null | head -1)
sdist=$WHEELS/$dist-$VERSION.tar.gz
[ -n "$wheel" ] || fail "no $dist-$VERSION-*manylinux*.whl in $WHEELS: is pyproject.toml's name $NAME and python/Cargo.toml's version $VERSION?"
[ -f "$sdist" ] || fail "no $sdist"
bound "$sdist" "$(listing "$sdist")"

TOOLS=target/release-tools
[ -x "$TOOLS/bin/python" ] || python3 -m venv "$TOOLS"
"$TOOLS/bin/pip" install --quiet --disable-pip-version-check -r scripts/requirements-release.txt
"$TOOLS/bin/twine" check --strict "$wheel" "$sdist"

# 3. The wheel in a fresh venv, from the file alone (no index: the package
# has no dependencies, and nothing else may come along).
VENV=target/release-venv
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
fixture=fixtures/cursor/partial-thinking-tools-usage.jsonl
"$CSTREAM" --to events "$fixture" >target/release-venv/cli.ndjson
"$VENV/bin/python" - "$NAME" "$VERSION" "$fixture" target/release-venv/cli.ndjson <<'EOF'
import importlib.metadata as md
import json
import sys

name, version, fixture, cli = sys.argv[1:]
import cstream

dists = md.packages_distributions().get("cstream")
assert dists == [name], f"`import cstream` comes from {dists}, not {name}"
assert md.version(name) == version, f"{name} {md.version(name)} installed, Cargo.toml has {version}"
assert cstream.__version__ == version, f"cstream.__version__ {cstream.__version__} != {version}"
out = cstream.convert(fixture, to="events")
with open(cli, "rb") as f:
    assert out == f.read(), "the wheel's events differ from the command line's"
first = json.loads(out.splitlines()[0])
print(f"release-check: {name} {version} from the wheel: {len(out.splitlines())} events lines, "
      f"schemaVersion {first['schemaVersion']}, equal to the command line's")
EOF
echo "release-check: ok"
