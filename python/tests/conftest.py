"""Shared helpers: the command line to compare with, and the fixtures."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"


def cli_path() -> str:
    """The `cstream` binary: $CSTREAM_BIN, else the repository's debug or
    release build, else one on PATH. A missing binary fails the run: these
    tests are about agreeing with it."""
    env = os.environ.get("CSTREAM_BIN")
    if env:
        return env
    for build in ("debug", "release"):
        p = REPO / "target" / build / "cstream"
        if p.exists():
            return str(p)
    found = shutil.which("cstream")
    if not found:
        raise RuntimeError("no cstream binary: set CSTREAM_BIN or run `cargo build`")
    return found


def cli(args: list[str], stdin: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the command line; `stdin`: a file given as standard input (a
    regular file, so not a live stream)."""
    if stdin is None:
        return subprocess.run([cli_path(), *args], stdin=subprocess.DEVNULL, capture_output=True)
    with open(stdin, "rb") as f:
        return subprocess.run([cli_path(), *args], stdin=f, capture_output=True)


def is_storage_tree(d: Path) -> bool:
    """OpenCode's JSON storage directory (before 1.2): its files are no
    sessions one by one (the directory is tested in tests/it/opencode_storage.rs)."""
    return (d / "session").is_dir() and (d / "message").is_dir()


def fixtures() -> list[Path]:
    found = sorted(
        p
        for p in FIXTURES.rglob("*")
        if p.suffix in (".jsonl", ".json")
        and p.is_file()
        and not any(is_storage_tree(d) for d in p.parents)
    )
    assert len(found) > 100, f"only {len(found)} fixtures under {FIXTURES}"
    return found


def fixture_flags(path: Path) -> list[str]:
    """The fixture's own extra flags (a sibling `.args` file)."""
    args = path.with_suffix(".args")
    if not args.exists():
        return []
    return [line.strip() for line in args.read_text().splitlines() if line.strip()]


def flags_to_options(flags: list[str]) -> dict[str, object]:
    """The keyword options that say what the command-line flags say."""
    options: dict[str, object] = {}
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag == "--truncate-shell":
            options["truncate_shell"] = int(flags[i + 1])
            i += 2
        elif flag == "--redact-pattern":
            options.setdefault("redact_patterns", []).append(flags[i + 1])  # type: ignore[union-attr]
            i += 2
        elif flag == "--thinking":
            options["thinking"] = True
            i += 1
        else:
            raise AssertionError(f"no keyword option for fixture flag {flag}")
    return options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "fixture_path" in metafunc.fixturenames:
        paths = fixtures()
        metafunc.parametrize(
            "fixture_path", paths, ids=[str(p.relative_to(FIXTURES)) for p in paths]
        )
