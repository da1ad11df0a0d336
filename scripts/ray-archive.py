#!/usr/bin/env python3
"""Convert a sharded archive of agent session files with Ray Data and the
cstream package: one task per file, one output file per input, mirroring
the input tree, each written atomically (a temporary name, then a rename).

    python scripts/ray-archive.py SRC_DIR... --out OUT_DIR [--to documents]
        [--address auto] [--check-cli target/debug/cstream --created 0]

On a laptop it starts a local Ray; with --address it joins a running
cluster, where SRC_DIR and OUT_DIR must be on storage every node sees (a
shared file system, or a bucket mounted on each node). The files are
listed on the driver; each task reads one file, so a task's memory is
cstream's (bounded by the longest record) plus its output buffer. With
--check-cli every output is compared with the command line's, byte for
byte, and the run fails on any difference (how CI runs it).

docs/cluster.md has the recipe and the arithmetic for a large archive.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import ray

import cstream

# What cstream reads: the live-stream captures and the saved-session files
# (Claude, Codex and cursor-agent .jsonl, Gemini .json).
SUFFIXES = (".jsonl", ".json", ".ndjson")
EXTENSION = {"html": ".html", "markdown": ".md", "text": ".txt"}


def list_files(roots: list[Path]) -> list[dict[str, str]]:
    rows = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            here = Path(dirpath)
            if (here / "session").is_dir() and (here / "message").is_dir():
                # OpenCode's JSON storage directory (before 1.2): one input,
                # its sessions read whole, never its files one by one.
                dirnames.clear()
                rows.append({"path": str(here), "rel": str(here.relative_to(root.parent))})
                continue
            for name in sorted(filenames):
                if name.endswith(SUFFIXES):
                    path = Path(dirpath) / name
                    rows.append({"path": str(path), "rel": str(path.relative_to(root.parent))})
    return rows


def convert_one(row: dict[str, str], to: str, out_dir: str, options: dict[str, object]) -> dict[str, object]:
    """One task: one session file to one output file."""
    src = Path(row["path"])
    dest = Path(out_dir) / (row["rel"] + EXTENSION.get(to, ".json" if "json" in to or to == "documents" else ".out"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    warnings: list[str] = []
    started = time.perf_counter()
    try:
        report = cstream.convert(src, to=to, out=tmp, errors=lambda w: warnings.append(str(w)), **options)
        os.replace(tmp, dest)
        error = ""
    except cstream.CstreamError as e:
        tmp.unlink(missing_ok=True)
        report, error = None, str(e)
    return {
        "path": row["path"],
        "output": str(dest),
        "bytes_in": src.stat().st_size,
        "bytes_out": dest.stat().st_size if report else 0,
        "sessions": report.sessions if report else 0,
        "exit_code": report.exit_code if report else 2,
        "warnings": len(warnings),
        "error": error,
        "seconds": time.perf_counter() - started,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", nargs="+", type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--to", default="documents", choices=cstream.FORMATS)
    ap.add_argument("--address", default=None, help="a running Ray cluster (default: a local one)")
    ap.add_argument(
        "--files-per-task",
        type=int,
        default=1,
        help="session files converted by one task (default 1; raise it for archives of many "
        "small files, where a task's scheduling costs more than its conversion)",
    )
    ap.add_argument("--check-cli", default=None, help="compare each output with this cstream binary's")
    ap.add_argument(
        "--created",
        type=int,
        default=None,
        help="the creation time (epoch s) of a session that records none, instead of now "
        "(--check-cli needs it: the command line runs later)",
    )
    a = ap.parse_args()

    files = list_files([p.resolve() for p in a.src])
    if not files:
        print("ray-archive: no session files under", *a.src, file=sys.stderr)
        return 2
    ray.init(address=a.address, include_dashboard=False, logging_level="WARNING")
    started = time.perf_counter()
    # One block per task: Ray Data runs one map task per block, so by
    # default each session file is its own task and a long file holds up
    # only itself.
    blocks = -(-len(files) // max(1, a.files_per_task))
    ds = ray.data.from_items(files, override_num_blocks=blocks)
    results = ds.map(convert_one, fn_kwargs={"to": a.to, "out_dir": str(a.out.resolve()), "options": {"created": a.created}}).take_all()
    wall = time.perf_counter() - started
    ray.shutdown()

    results.sort(key=lambda r: r["path"])
    bytes_in = sum(r["bytes_in"] for r in results)
    summary = {
        "files": len(results),
        "sessions": sum(r["sessions"] for r in results),
        "bytes_in": bytes_in,
        "bytes_out": sum(r["bytes_out"] for r in results),
        "files_with_warnings": sum(1 for r in results if r["warnings"]),
        "unreadable": [r["path"] for r in results if r["error"]],
        "wall_seconds": round(wall, 2),
        "task_seconds": round(sum(r["seconds"] for r in results), 2),
        "cpus": ray.available_resources().get("CPU") if ray.is_initialized() else os.cpu_count(),
    }
    print(json.dumps(summary, indent=2))
    if len(results) != len(files):
        print(f"ray-archive: {len(files)} files listed, {len(results)} converted", file=sys.stderr)
        return 1
    if a.check_cli:
        differ = []
        for r in results:
            if r["error"]:
                continue
            created = [] if a.created is None else ["--created", str(a.created)]
            want = subprocess.run([a.check_cli, "--to", a.to, *created, r["path"]], capture_output=True).stdout
            if Path(r["output"]).read_bytes() != want:
                differ.append(r["path"])
        print(f"ray-archive: {len(results) - len(differ)} of {len(results)} outputs equal the command line's")
        if differ:
            print("ray-archive: different:", *differ, sep="\n  ", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
