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
"""

import json
import re
import sys
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


if __name__ == "__main__":
    main()
