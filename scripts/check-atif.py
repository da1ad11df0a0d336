#!/usr/bin/env python3
"""`--to atif` as Harbor reads it, and beside atif-make (CI).

For every fixture and every file of the corpus (../shared/corpus, required:
a missing corpus fails the check):

  * every trajectory `--to atif` writes (one a line) validates with Harbor's
    own models (`Trajectory.model_validate_json`) and with the validator
    Harbor ships (`harbor.utils.trajectory_validator.TrajectoryValidator`);
  * the trajectory's own figures hold: its tool calls (sub-agents apart) are
    `final_metrics.extra.tool_calls`, and where every token of the totals is
    in a step or in `tokens_not_in_steps`, the step metrics add up to
    `final_metrics`;
  * a Claude Code session with its sub-agent file embeds the sub-agent and
    names it on the spawning call's result.

Then every Claude Code and Codex file that atif-make (pinned) reads is
converted by both, and the root trajectories compared: tool calls must be
the same; steps and tokens are printed side by side, and every difference
must be one docs/atif.md explains (listed in KNOWN below, with the reason).

Usage: scripts/check-atif.py [--cstream target/debug/cstream]
Exit status 1 on any failure (every one is printed first).
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator

from fixture_inputs import CORPUS, ROOT, inputs


def atif(binary, *paths):
    out = subprocess.run([binary, "--to", "atif", *paths], capture_output=True).stdout
    return [line for line in out.decode().split("\n") if line]


def tokens(m, prefix=""):
    if not m:
        return (0, 0, 0)
    return tuple(m.get(prefix + k) or 0 for k in ("prompt_tokens", "completion_tokens", "cached_tokens"))


def check_one(name, doc, problems):
    """The trajectory's own figures (and its sub-agents', recursively)."""
    steps = doc["steps"]
    calls = sum(len(s.get("tool_calls") or []) for s in steps)
    fm = doc["final_metrics"]
    extra = fm["extra"]
    if calls != extra["tool_calls"]:
        problems.append(f"{name}: {calls} tool calls in the steps, figures say {extra['tool_calls']}")
    if fm["total_steps"] != len(steps):
        problems.append(f"{name}: total_steps {fm['total_steps']} but {len(steps)} steps")
    if "total_prompt_tokens" in fm:
        in_steps = [tokens(s.get("metrics")) for s in steps]
        rest = tokens(extra.get("tokens_not_in_steps"))
        summed = tuple(sum(t[i] for t in in_steps) + rest[i] for i in range(3))
        total = tokens(fm, "total_")
        if not extra.get("completion_tokens_incomplete") and summed != total:
            problems.append(f"{name}: steps + tokens_not_in_steps = {summed}, final_metrics {total}")
    else:
        if any(s.get("metrics") for s in steps):
            problems.append(f"{name}: step metrics without known totals")
    for sub in doc.get("subagent_trajectories") or []:
        check_one(f"{name} > {sub['trajectory_id']}", sub, problems)


def validate(name, lines, problems):
    docs = []
    for i, line in enumerate(lines):
        where = f"{name}:{i + 1}"
        try:
            Trajectory.model_validate_json(line)
        except Exception as e:  # pydantic's ValidationError, or bad JSON
            problems.append(f"{where}: Harbor's Trajectory model rejects it: {e}")
            continue
        v = TrajectoryValidator()
        doc = json.loads(line)
        if not v.validate(doc):
            problems.append(f"{where}: Harbor's validator: {v.get_errors()}")
        check_one(where, doc, problems)
        docs.append(doc)
    return docs


# cstream's dialects that atif-make reads too.
AGENTS = {"claude", "claude-project", "codex", "codex-rollout"}

# Differences from atif-make that docs/atif.md explains, per file name:
# (what differs, why). Anything else that differs fails.
KNOWN = {
    # atif-make makes Codex's `error` item a tool call named "error" and
    # writes zero tokens; it is the agent's error (a system step here), and
    # the log has no token counts.
    "vincent-failure.jsonl": {"tool_calls", "agent_steps", "prompt", "completion", "steps"},
}


def root_figures(doc):
    steps = doc["steps"]
    fm = doc.get("final_metrics") or {}
    return {
        "steps": len(steps),
        "agent_steps": sum(1 for s in steps if s["source"] == "agent"),
        "user_steps": sum(1 for s in steps if s["source"] == "user"),
        "tool_calls": sum(len(s.get("tool_calls") or []) for s in steps),
        "prompt": fm.get("total_prompt_tokens"),
        "completion": fm.get("total_completion_tokens"),
    }


def compare(binary, files, problems):
    from atif_make.convert import convert
    from atif_make.detect import detect_format

    rows = []
    for f in files:
        # The corpus: real sessions (the fixtures are cstream's edge cases).
        if not os.path.abspath(f).startswith(os.path.abspath(CORPUS)):
            continue
        if f.endswith(".zst") or os.sep + "subagents" + os.sep in f:
            continue
        try:
            fmt = detect_format(Path(f))
        except (ValueError, OSError):
            continue
        if not fmt.startswith(("claude-code", "codex")):
            continue
        try:
            theirs = convert(Path(f), fmt)[0].to_dict()
        except Exception as e:  # atif-make gives up on some files
            rows.append((f, fmt, None, None, f"atif-make fails: {e}"))
            continue
        ours = [json.loads(line) for line in atif(binary, f)]
        if ours and ours[0]["agent"]["name"] not in AGENTS:
            continue  # atif-make took another agent's file for one of these
        if len(ours) != 1:
            rows.append((f, fmt, None, None, f"cstream wrote {len(ours)} trajectories"))
            continue
        rows.append((f, fmt, root_figures(ours[0]), root_figures(theirs), None))
    print(f"{'file':60} {'format':24} steps(c/a) agent user calls prompt completion")
    for f, fmt, o, t, note in rows:
        name = os.path.relpath(f, os.path.join(ROOT, ".."))
        if note:
            print(f"{name[-60:]:60} {fmt:24} {note}")
            continue
        cells = " ".join(f"{o[k]}/{t[k]}" for k in o)
        print(f"{name[-60:]:60} {fmt:24} {cells}")
        # Steps are cut differently and output counts read differently
        # (docs/atif.md#beside-atif-make): printed, not failed.
        diff = sorted(k for k in ("tool_calls", "prompt") if o[k] != t[k])
        known = KNOWN.get(os.path.basename(f), {})
        for k in diff:
            if k not in known:
                problems.append(f"{name}: {k} differs from atif-make: cstream {o[k]}, atif-make {t[k]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cstream", default=os.path.join(ROOT, "target", "debug", "cstream"))
    args = ap.parse_args()
    files = inputs("Harbor")
    problems = []
    n = 0
    for f in files:
        lines = atif(args.cstream, f)
        if not lines:
            problems.append(f"{f}: no trajectory written")
        n += len(validate(os.path.relpath(f, ROOT), lines, problems))
    # A session with its sub-agent's file, embedded.
    parent = os.path.join(ROOT, "fixtures", "claude-project", "subagent-parent_task-agentid.jsonl")
    sub = os.path.join(ROOT, "fixtures", "claude-project", "subagent-parent_task-agentid", "subagents", "agent-a7c41d2.jsonl")
    docs = validate("parent+subagent", atif(args.cstream, parent, sub), problems)
    subs = [s["trajectory_id"] for d in docs for s in d.get("subagent_trajectories") or []]
    refs = [
        r["trajectory_id"]
        for d in docs
        for s in d["steps"]
        for res in (s.get("observation") or {}).get("results", [])
        for r in res.get("subagent_trajectory_ref") or []
    ]
    if len(docs) != 1 or len(subs) != 1 or refs != subs:
        problems.append(f"parent+subagent: {len(docs)} trajectories, sub-agents {subs}, refs {refs}")
    print(f"{n} trajectories from {len(files)} files validate with Harbor's models")
    compare(args.cstream, files, problems)
    for p in problems:
        print("FAIL", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
