#!/usr/bin/env python3
"""The Python package beside the command line, on the same input, in one run.

    target/py/bin/python bench/python.py [--mb 100] [--runs 5] [--cli target/release/cstream]

Needs the package installed in the interpreter that runs it (`pip install
./python`; it builds in release mode) and a release build of the command
line. The input is bench/gen_stream.py's mixed cursor-agent stream (cached
in target/bench/). Each row is the median of --runs rounds, the rounds
alternating between the rows; MB/s are of input, and each ratio is the
row's time over the matching command line run:

- `cli --to events > /dev/null`: the reference of the events rows;
- `events()`: iterate every event as a dict (the dict building is the cost);
- `cli --to events | json.loads per line`: what a pipeline does without
  the package, for comparison;
- `cli --to documents > file` and `convert(path, out=file)`: the same
  conversion, written to a file (the "within 5%" figure);
- `cli --to documents` read by `subprocess` and `convert(path)` returning
  bytes: the output in the Python process's memory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cstream

ROOT = Path(__file__).resolve().parent.parent


def stream(mb: int, seed: int) -> Path:
    gen = ROOT / "bench" / "gen_stream.py"
    tag = hashlib.sha256(gen.read_bytes()).hexdigest()[:8]
    path = ROOT / "target" / "bench" / f"mixed-{mb}mb-s{seed}-{tag}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            subprocess.run([sys.executable, str(gen), "--mb", str(mb), "--seed", str(seed)], stdout=f, check=True)
        tmp.rename(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cli", default=str(ROOT / "target" / "release" / "cstream"))
    a = ap.parse_args()
    src = stream(a.mb, a.seed)
    size = src.stat().st_size
    out_dir = Path(tempfile.mkdtemp())
    out = out_dir / "out"
    cli = a.cli

    def run_cli(args: list[str], to_file: bool = False) -> None:
        with open(src, "rb") as i, open(out if to_file else os.devnull, "wb") as o:
            subprocess.run([cli, *args], stdin=i, stdout=o, check=True)

    def cli_json() -> None:
        with open(src, "rb") as i:
            p = subprocess.Popen([cli, "--to", "events"], stdin=i, stdout=subprocess.PIPE)
            assert p.stdout is not None
            for line in p.stdout:
                json.loads(line)
            assert p.wait() == 0

    def cli_capture() -> None:
        with open(src, "rb") as i:
            subprocess.run([cli, "--to", "documents"], stdin=i, capture_output=True, check=True)

    def events() -> None:
        for _ in cstream.events(src):
            pass

    rows = [
        ("cli --to events > /dev/null", lambda: run_cli(["--to", "events"]), None),
        ("events(): every event as a dict", events, 0),
        ("cli --to events | json.loads per line", cli_json, 0),
        ("cli --to documents > file", lambda: run_cli(["--to", "documents"], True), None),
        ("convert(path, out=file)", lambda: cstream.convert(src, out=out), 3),
        ("cli --to documents, captured by subprocess", cli_capture, None),
        ("convert(path) -> bytes", lambda: cstream.convert(src), 5),
    ]
    times: list[list[float]] = [[] for _ in rows]
    for r in range(a.runs + 1):
        order = list(range(len(rows)))
        order = order[r % len(order):] + order[: r % len(order)]
        for i in order:
            t = time.perf_counter()
            rows[i][1]()
            if r:  # the first round warms the page cache and is not counted
                times[i].append(time.perf_counter() - t)
    med = [statistics.median(t) for t in times]
    print(f"input: {src.name}, {size:,} bytes; median of {a.runs} rounds; cstream {cstream.__version__}")
    print()
    print("| command | MB/s | × the command line |")
    print("|---|---|---|")
    for (name, _, ref), m in zip(rows, med):
        ratio = "" if ref is None else f"{m / med[ref]:.2f}"
        print(f"| {name} | {size / m / 1e6:.0f} | {ratio} |")
    out.unlink(missing_ok=True)
    out_dir.rmdir()


if __name__ == "__main__":
    main()
