#!/usr/bin/env python3
"""Build a Claude Code projects tree of about --mb MiB from real transcripts, by replication.

    replicate_claude.py SRC_DIR OUT_DIR --mb 200

Every `*.jsonl` in SRC_DIR (e.g. ../shared/corpus/sessions/claude-code) is copied again and
again into OUT_DIR/projects/-replica-NNNN/, each copy with its ids renamed (`sessionId`,
`uuid`, `parentUuid`, `leafUuid`, `logicalParentUuid`, `messageId`, `requestId`, `message.id`
and `agentId` get a `-rNNNN` suffix), so that every copy is a session of its own for any
reader: nothing is deduplicated across copies by id. A sub-agent file (its lines `isSidechain`) is
written as `agent-<agentId>.jsonl` beside its parent, as Claude Code's older layout has it. The files' own bytes are otherwise unchanged.

The tree is built for measuring (bench/README.md, "Archives"); it is never committed: the
real transcripts are not the project's to redistribute.
"""

import argparse
import os
import re
import sys

KEYS = "sessionId|uuid|parentUuid|leafUuid|logicalParentUuid|messageId|requestId|agentId"
ID_RE = re.compile(r'"(%s)":"([^"\\]+)"' % KEYS)
MSG_RE = re.compile(r'"id":"(msg_[^"\\]+)"')


def rename(line, k):
    suffix = "-r%04d" % k
    line = ID_RE.sub(lambda m: '"%s":"%s%s"' % (m.group(1), m.group(2), suffix), line)
    return MSG_RE.sub(lambda m: '"id":"%s%s"' % (m.group(1), suffix), line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=200)
    a = ap.parse_args()
    sources = sorted(f for f in os.listdir(a.src) if f.endswith(".jsonl"))
    texts = {f: open(os.path.join(a.src, f), encoding="utf-8").read() for f in sources}
    target = int(a.mb * 1024 * 1024)
    total = files = 0
    k = 0
    while total < target:
        k += 1
        proj = os.path.join(a.out, "projects", "-replica-%04d" % k)
        os.makedirs(proj, exist_ok=True)
        for f, text in texts.items():
            lines = [rename(l, k) for l in text.splitlines()]
            agent = next((m.group(2) for l in lines if '"isSidechain":true' in l for m in ID_RE.finditer(l) if m.group(1) == "agentId"), None)
            if agent:
                name = "agent-%s.jsonl" % agent
            else:
                sid = next((m.group(2) for m in map(ID_RE.search, lines) if m and m.group(1) == "sessionId"), None)
                name = (sid or os.path.splitext(f)[0] + "-r%04d" % k) + ".jsonl"
            data = ("\n".join(lines) + "\n").encode()
            with open(os.path.join(proj, name), "wb") as out:
                out.write(data)
            total += len(data)
            files += 1
    print("%d files, %d bytes (%.1f MiB), %d copies of %d sources" % (files, total, total / 1048576, k, len(sources)), file=sys.stderr)


if __name__ == "__main__":
    main()
