#!/usr/bin/env python3
"""Write a synthetic Codex rollout of about SIZE megabytes to stdout (for the
zstd memory measurement in docs/dialects.md: `... | zstd -q -o r.jsonl.zst`).

Turns of: the typed prompt, a shell call with a few KiB of output, the
answer, a running token total. One call's output is one long line of
LONGEST bytes (default 1 MiB), so that the peak memory can be compared with
the longest record.

usage: gen-codex-rollout.py SIZE_MB [LONGEST_BYTES]
"""
import json
import sys

size = int(sys.argv[1]) * 1024 * 1024
longest = int(sys.argv[2]) if len(sys.argv) > 2 else 1024 * 1024
out = sys.stdout
written = 0


def line(ts, ty, payload):
    global written
    s = json.dumps({"timestamp": ts, "type": ty, "payload": payload}, separators=(",", ":"))
    out.write(s + "\n")
    written += len(s) + 1


def stamp(i):
    return "2026-06-%02dT%02d:%02d:%02d.000Z" % (1 + i // 86400 % 28, i // 3600 % 24, i // 60 % 60, i % 60)


line(stamp(0), "session_meta", {"id": "019d0000-0000-7000-8000-00000000d00d", "timestamp": stamp(0),
                                 "cwd": "/work/app", "cli_version": "0.137.0", "originator": "codex_cli_rs"})
line(stamp(0), "turn_context", {"cwd": "/work/app", "model": "gpt-5.3-codex", "approval_policy": "never"})
i = 0
total_in = total_out = 0
while written < size:
    i += 1
    line(stamp(i), "event_msg", {"type": "task_started", "turn_id": "t%d" % i})
    line(stamp(i), "event_msg", {"type": "user_message", "message": "Step %d: run the tests again." % i})
    line(stamp(i), "response_item", {"type": "function_call", "name": "exec_command", "call_id": "call_%d" % i,
                                     "arguments": json.dumps({"cmd": "cargo test --quiet -- step_%d" % i})})
    body = "".join("test step_%d::case_%d ... ok\n" % (i, k) for k in range(120))
    if i == 3:
        body = ("x" * 63 + "\n") * (longest // 64)
    line(stamp(i), "response_item", {"type": "function_call_output", "call_id": "call_%d" % i,
                                     "output": "Exit code: 0\nOutput:\n" + body})
    line(stamp(i), "response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "Step %d passes: 120 tests." % i}]})
    total_in += 1200
    total_out += 40
    line(stamp(i), "event_msg", {"type": "token_count", "info": {"total_token_usage": {
        "input_tokens": total_in, "cached_input_tokens": total_in // 2, "output_tokens": total_out,
        "reasoning_output_tokens": 0, "total_tokens": total_in + total_out}}})
    line(stamp(i), "event_msg", {"type": "task_complete", "turn_id": "t%d" % i})
