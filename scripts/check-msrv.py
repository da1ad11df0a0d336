#!/usr/bin/env python3
"""Check the minimum supported Rust version (Cargo.toml `rust-version`).

Only one toolchain is installed here, so the MSRV is held by two checks that
need no second compiler: clippy's `incompatible_msrv` lint (part of the
`cargo clippy -D warnings` run) rejects std APIs newer than `rust-version`, and
this script rejects a locked dependency whose own `rust-version` is newer.
"""
import json
import subprocess
import sys


def version(text):
    return tuple(int(p) for p in text.split("."))


meta = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
root = next(p for p in meta["packages"] if p["id"] == meta["resolve"]["root"])
ours = root.get("rust_version")
if not ours:
    sys.exit("Cargo.toml has no rust-version")
newer = [
    f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
    for p in meta["packages"]
    if p.get("rust_version") and version(p["rust_version"]) > version(ours)
]
if newer:
    sys.exit(f"rust-version is {ours}, but:\n  " + "\n  ".join(newer))
print(f"rust-version {ours}: every locked dependency builds with it")
