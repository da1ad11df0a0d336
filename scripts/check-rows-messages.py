#!/usr/bin/env python3
"""`--to messages` and `--to rows` as their real consumers read them (CI).

For every fixture and every file of the corpus (../shared/corpus, required:
a missing corpus fails the check):

  * `--to messages`: Hugging Face `datasets` loads the output with
    `load_dataset("json", ...)` as it is, file by file and all of them in one
    file; every row loaded has the session's messages, each `content` a
    string, and every tool message answers a tool call made before it by an
    assistant message.
  * `--to rows`: the `duckdb` package reads the output with `read_json` and
    no options; the table has exactly the documented columns, one row per
    event, and a query's totals (input and output tokens, tool calls, failed
    calls) equal what `--outputs` writes for the same input.

Usage: scripts/check-rows-messages.py [--cstream target/debug/cstream]
Exit status 1 on any mismatch (every one is printed first).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from fixture_inputs import ROOT, inputs

# The columns of `--to rows`, in order (docs/formats.md#rows).
COLUMNS = [
    "session", "session_n", "seq", "time", "type", "role", "text", "tool", "call_id", "data",
    "ok", "failed", "exit_code", "duration_ms", "error", "fatal", "tokens_in", "tokens_out",
    "cache_read", "cache_write", "reasoning", "output_incomplete", "cost_usd", "model", "dialect", "detail",
]

# One query, per session, of the figures `--outputs` writes for the run. A
# call counts once: its start, or its completion when the start is not in the
# input, or its one `tool_call` row when the input was coalesced events
# (docs/events.md#session-figures).
TOTALS = """
with r as (select * from read_json(?)),
started as (select session_n, call_id from r where type = 'tool_call_started'),
per_session as (
  select session_n,
    sum(tokens_in) as tokens_in,
    sum(tokens_out) as tokens_out,
    count(*) filter (where type = 'usage_delta') as usage_rows,
    count(*) filter (where type in ('tool_call_started', 'tool_call'))
      + count(*) filter (where type = 'tool_call_completed' and not exists (
          select 1 from started s where s.session_n = r.session_n and s.call_id = r.call_id))
      as tool_calls,
    count(*) filter (where type in ('tool_call_completed', 'tool_call') and failed)
      as failed_calls
  from r group by session_n)
select sum(tokens_in), sum(tokens_out), sum(usage_rows), sum(tool_calls), sum(failed_calls)
from per_session
"""


def cstream(binary, args, path):
    return subprocess.run([binary, *args, path], capture_output=True).stdout


def check_messages_row(name, row, problems):
    """Every tool message answers a call made before it; content is a string."""
    called = set()
    for i, m in enumerate(row["messages"]):
        if not isinstance(m.get("content"), str):
            problems.append(f"{name}: {row['id']}: message {i} content is {m.get('content')!r}")
        if m["role"] == "assistant":
            for c in m.get("tool_calls") or []:
                json.loads(c["function"]["arguments"])  # a JSON string
                called.add(c["id"])
        elif m["role"] == "tool":
            if m.get("tool_call_id") not in called:
                problems.append(
                    f"{name}: {row['id']}: tool message {i} answers no earlier call "
                    f"({m.get('tool_call_id')!r})"
                )
        elif m["role"] not in ("user", "system"):
            problems.append(f"{name}: {row['id']}: message {i} has role {m['role']!r}")


def check_messages(binary, files, tmp, problems):
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    cache = os.path.join(tmp, "hf-cache")
    everything = os.path.join(tmp, "all-messages.jsonl")
    sessions = 0
    with open(everything, "wb") as allf:
        for n, path in enumerate(files):
            name = os.path.relpath(path, ROOT)
            out = cstream(binary, ["--to", "messages"], path)
            allf.write(out)
            lines = [json.loads(l) for l in out.decode().split("\n")[:-1]]
            if not lines:
                problems.append(f"{name}: --to messages wrote no row")
                continue
            sessions += len(lines)
            one = os.path.join(tmp, f"messages-{n}.jsonl")
            with open(one, "wb") as f:
                f.write(out)
            try:
                ds = datasets.load_dataset("json", data_files=one, split="train", cache_dir=cache)
            except Exception as e:  # noqa: BLE001 (any failure to load is the finding)
                problems.append(f"{name}: datasets could not load --to messages: {e}")
                continue
            if len(ds) != len(lines):
                problems.append(f"{name}: datasets read {len(ds)} rows of {len(lines)}")
            for row, line in zip(ds, lines):
                check_messages_row(name, row, problems)
                if len(row["messages"]) != len(line["messages"]):
                    problems.append(f"{name}: {line['id']}: datasets read a different conversation")
    ds = datasets.load_dataset("json", data_files=everything, split="train", cache_dir=cache)
    if len(ds) != sessions:
        problems.append(f"all fixtures in one file: datasets read {len(ds)} rows of {sessions}")
    tool_msgs = sum(1 for r in ds for m in r["messages"] if m["role"] == "tool")
    print(
        f"messages: datasets loaded {len(files)} outputs and one file of {len(ds)} sessions "
        f"({tool_msgs} tool messages, each answering an earlier call)"
    )


def outputs(binary, path, tmp):
    """What `--outputs` says of `path`."""
    out = os.path.join(tmp, "outputs.txt")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([binary, "--to", "rows", "--outputs", out, path], capture_output=True)
    kv = {}
    with open(out) as f:
        for line in f:
            if "=" in line and "<<" not in line.split("=", 1)[0]:
                k, v = line.rstrip("\n").split("=", 1)
                kv[k] = v
    return kv


def check_rows(binary, files, tmp, problems):
    import duckdb

    rows_total = 0
    for n, path in enumerate(files):
        name = os.path.relpath(path, ROOT)
        out = cstream(binary, ["--to", "rows"], path)
        one = os.path.join(tmp, f"rows-{n}.ndjson")
        with open(one, "wb") as f:
            f.write(out)
        expected_rows = len(out.decode().split("\n")[:-1])
        con = duckdb.connect()
        try:
            cols = [d[0] for d in con.execute("select * from read_json(?) limit 0", [one]).description]
            count = con.execute("select count(*) from read_json(?)", [one]).fetchall()[0][0]
            totals = con.execute(TOTALS, [one]).fetchall()[0]
        except Exception as e:  # noqa: BLE001 (any failure to read is the finding)
            problems.append(f"{name}: duckdb could not read --to rows: {e}")
            continue
        if cols != COLUMNS:
            problems.append(f"{name}: duckdb columns {cols}")
        if count != expected_rows:
            problems.append(f"{name}: duckdb read {count} rows of {expected_rows}")
        rows_total += count
        tokens_in, tokens_out, usage_rows, tool_calls, failed_calls = totals
        kv = outputs(binary, path, tmp)
        want = {
            "tokens_in": kv.get("tokens_in", ""),
            "tokens_out": kv.get("tokens_out", ""),
            "tool_calls": kv.get("tool_calls", ""),
            "failed_calls": kv.get("failed_calls", ""),
        }
        got = {
            # No usage row: unknown, which --outputs writes as empty.
            "tokens_in": "" if not usage_rows else str(int(tokens_in or 0)),
            "tokens_out": "" if tokens_out is None else str(int(tokens_out)),
            "tool_calls": str(int(tool_calls or 0)),
            "failed_calls": str(int(failed_calls or 0)),
        }
        if got != want:
            problems.append(f"{name}: rows query {got} but --outputs {want}")
    print(f"rows: duckdb read {len(files)} outputs ({rows_total} rows), totals equal --outputs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cstream", default=os.path.join(ROOT, "target", "debug", "cstream"))
    args = ap.parse_args()
    files = inputs("the consumers")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        check_messages(args.cstream, files, tmp, problems)
        check_rows(args.cstream, files, tmp, problems)
    for p in problems:
        print("FAIL", p)
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
