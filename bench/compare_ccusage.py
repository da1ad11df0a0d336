#!/usr/bin/env python3
"""Compare token totals per transcript file: cstream's `result` usage against ccusage's sessions.

    cstream --to events FILES... > events.jsonl
    CLAUDE_CONFIG_DIR=TREE ccusage claude session --json --offline > ccusage.json
    compare_ccusage.py events.jsonl ccusage.json

ccusage reports one session per transcript file (its name without `.jsonl`), with input
tokens not counting the cache; cstream's `inputTokens` include the cache reads and writes, so
input is compared as `inputTokens - cacheReadTokens - cacheWriteTokens`. A sub-agent file
(`agent-<id>.jsonl`) is cstream's session `<sessionId>/agent-<id>`.

Prints how many files agree on all four counts and, for the others, each distinct difference
(with the file names' replica suffix `-rNNNN` removed, so that copies of one source count once).

    compare_ccusage.py table CLAUDE_DIR CODEX_DIR [--cstream BIN] [--ccusage BIN]

writes a Markdown table, one row per transcript file (Claude Code projects files in CLAUDE_DIR,
Codex rollouts in CODEX_DIR): the tokens and cost of `cstream --to usage FILE` beside those of
`ccusage claude|codex session --json --offline` over a scratch tree holding copies of the same
files (ccusage reads only its own layout, and no symbolic links). Fresh input is compared
(input without the cache reads and writes: ccusage's `inputTokens`). A cell where the two differ
shows both, cstream's first; docs/usage.md explains each difference.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter


def main():
    events, ccusage = sys.argv[1], sys.argv[2]
    ours = {}
    with open(events, encoding="utf-8") as f:
        for line in f:
            if '"type":"result"' not in line:
                continue
            e = json.loads(line)
            u = e.get("usage") or {}
            sid = e["sessionId"].rsplit("/", 1)[-1]
            cr, cw = u.get("cacheReadTokens", 0), u.get("cacheWriteTokens", 0)
            ours[sid] = (u.get("inputTokens", 0) - cr - cw, u.get("outputTokens", 0), cr, cw)
    theirs = {}
    for s in json.load(open(ccusage, encoding="utf-8"))["sessions"]:
        theirs[s["sessionId"]] = (s["inputTokens"], s["outputTokens"], s["cacheReadTokens"], s["cacheCreationTokens"])
    same = 0
    diffs = Counter()
    for sid, t in theirs.items():
        o = ours.get(sid)
        if o == t:
            same += 1
        else:
            diffs[(re.sub(r"-r\d{4}$", "", sid), o, t)] += 1
    only_ours = [s for s in ours if s not in theirs]
    print("files: %d in ccusage, %d in cstream; %d agree on (input, output, cache read, cache write)" % (len(theirs), len(ours), same))
    for (src, o, t), n in sorted(diffs.items()):
        print("  %s (x%d): cstream %s, ccusage %s" % (src, n, o, t))
    if only_ours:
        print("  only in cstream: %d (e.g. %s)" % (len(only_ours), only_ours[0]))


def cstream_row(binary, path):
    out = subprocess.run([binary, "--to", "usage", path], capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(rows) != 1:
        return None
    r = rows[0]
    tin = r["tokens_in"]
    cr, cw = r["tokens_cache_read"], r["tokens_cache_write"]
    fresh = None if tin is None else tin - (cr or 0) - (cw or 0)
    out_tokens = r["tokens_out"]
    if out_tokens is not None and not r["tokens_complete"]:
        out_tokens = "≥ %d" % out_tokens
    return {
        "in": fresh,
        "out": out_tokens,
        "cache read": cr,
        "cache write": cw,
        "reasoning": r["tokens_reasoning"],
        "cost": r["cost_usd"],
        "model": (r["models"] or [None])[0],
    }


def ccusage_rows(ccusage, agent, home):
    env = dict(os.environ)
    env["CLAUDE_CONFIG_DIR" if agent == "claude" else "CODEX_HOME"] = home
    out = subprocess.run([ccusage, agent, "session", "--json", "--offline"], capture_output=True, text=True, env=env, check=True).stdout
    rows = {}
    for s in json.loads(out)["sessions"]:
        name = s.get("sessionFile") or s["sessionId"]
        name = name.rsplit("/", 1)[-1]
        if agent == "codex":
            name = name.removeprefix("rollout-")
        rows[name] = {
            "in": s["inputTokens"],
            "out": s["outputTokens"],
            "cache read": s["cacheReadTokens"],
            "cache write": s["cacheCreationTokens"],
            "reasoning": s.get("reasoningOutputTokens"),
            "cost": s.get("totalCost", s.get("costUSD")),
        }
    return rows


def cell(a, b, key):
    if key == "cost":
        fa = "–" if a is None else "%.4f" % a
        fb = "–" if b is None else "%.4f" % b
    else:
        fa = "–" if a is None else str(a)
        fb = "–" if b is None else str(b)
    return fa if fa == fb else "%s / %s" % (fa, fb)


def table(argv):
    args, opts, it = [], {}, iter(argv)
    for a in it:
        if a.startswith("--"):
            opts[a] = next(it)
        else:
            args.append(a)
    claude_dir, codex_dir = args[0], args[1]
    cstream = opts.get("--cstream", "target/release/cstream")
    ccusage = opts.get("--ccusage", "target/bench/ccusage/node_modules/.bin/ccusage")
    keys = ["in", "out", "cache read", "cache write", "reasoning", "cost"]
    print("| agent | file | model | " + " | ".join(keys) + " |")
    print("|---|---|---|" + "---|" * len(keys))
    with tempfile.TemporaryDirectory() as tmp:
        for agent, src, sub, prefix in [
            ("claude", claude_dir, "projects/corpus", ""),
            ("codex", codex_dir, "sessions/2026/01/01", "rollout-"),
        ]:
            home = os.path.join(tmp, agent)
            dest = os.path.join(home, sub)
            os.makedirs(dest)
            files = sorted(f for f in os.listdir(src) if f.endswith(".jsonl"))
            for f in files:
                shutil.copy(os.path.join(src, f), os.path.join(dest, prefix + f))
            theirs = ccusage_rows(ccusage, agent, home)
            for f in files:
                stem = f[: -len(".jsonl")]
                ours = cstream_row(cstream, os.path.join(src, f)) or {}
                t = theirs.get(stem, {})
                cells = [cell(ours.get(k), t.get(k), k) for k in keys]
                name = "`%s`" % stem + ("" if t else " (not read by ccusage)")
                print("| %s | %s | %s | %s |" % (agent, name, ours.get("model") or "–", " | ".join(cells)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        main()
