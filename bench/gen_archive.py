#!/usr/bin/env python3
"""Deterministic generator of realistic saved-session archives for benchmarking cstream.

Writes, under OUT:

  claude/projects/<-cwd-with-dashes>/<session>.jsonl          Claude Code transcripts
  claude/projects/<...>/<session>/tool-results/<name>.txt     offloaded tool outputs
  claude/projects/<...>/<session>/subagents/agent-<id>.jsonl  sub-agents (newer layout)
  claude/projects/<...>/agent-<hash>.jsonl                    sub-agents (older layout)
  codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl       Codex rollouts
  codex/archived_sessions/rollout-<time>-<uuid>.jsonl         archived copies

    gen_archive.py OUT --mb 1100 --seed 1 --stats

Python 3.8+ standard library only. The same arguments give byte-identical files on any
Python 3: the only randomness used is `random.Random(seed).random()`, whose sequence Python
guarantees (choices and ranges are derived from it here, not from `choice`/`randint`).

The shapes are the documented ones (docs/dialects.md, "Claude Code transcripts" and "Codex
rollouts"), not copies of real files:

Claude Code: bookkeeping records (`summary`, `file-history-snapshot`, `queue-operation`,
`progress` hook lines inside the uuid chain, `system/turn_duration`); prompts (some with a
base64 image block); assistant messages written one content block per line with the usage
placeholders of streaming (`stop_reason:null`, small `output_tokens`) and the final count on
the last line; thinking blocks; tool calls (Bash, Read, Edit with `structuredPatch`, Grep,
Glob, Task) answered by `tool_result` lines with `toolUseResult`; big tool outputs inline and,
past 30 KB in 2.1 builds, offloaded to `tool-results/` with a `<persisted-output>` stub;
sub-agents (Task) in their own files, linked by `agentId`; compactions (`compact_boundary`
restarting the chain, an `isCompactSummary` prompt); rewinds (a prompt re-parented to an
earlier one, the abandoned turn left in the file); forks (a new session file that copies most
of its parent's records, then goes on).

Codex: `session_meta` with long base instructions, `turn_context`, the injected
`<environment_context>` and AGENTS.md user messages, prompts both as `response_item` and
`event_msg/user_message` (some with an `input_image` data URL), encrypted `reasoning` with a
summary, `exec_command` function calls with `exec_command_end` events and
`Exit code: N` outputs (some very large), `apply_patch` custom tool calls, `token_count`
running totals written twice, `agent_message` beside the history's assistant message,
`task_started`/`task_complete`, `compacted` with a `replacement_history` copy,
`thread_rolled_back`, forks (`forked_from_id`, the parent's records copied after the fork's
own `session_meta`) and `archived_sessions/` copies of some rollouts.

`--stats` prints files, bytes and records per kind, the longest record and an md5 of all
files (in path order) on stderr.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import sys

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

WORDS = """
the parser reads each record once and keeps only what the next line needs so memory stays
bounded while the archive is converted file by file in order with the output of every
session written before the next one is read; tests cover the shapes that agents write and
the warnings name the file and the line where something was repaired or left out
""".split()

TOOLS_CLAUDE = ["Bash", "Bash", "Bash", "Read", "Read", "Edit", "Grep", "Glob", "Task"]


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.n = 0
        self.blob_n = 0

    def r(self):
        return self.rng.random()

    def ri(self, a, b):
        return a + int(self.r() * (b - a + 1))

    def pick(self, seq):
        return seq[int(self.r() * len(seq))]

    def uuid(self):
        self.n += 1
        h = hashlib.sha256(b"%d/%d" % (self.seed, self.n)).hexdigest()
        return "%s-%s-4%s-8%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], h[20:32])

    def hexid(self, k):
        self.n += 1
        return hashlib.sha256(b"h%d/%d" % (self.seed, self.n)).hexdigest()[:k]

    def words(self, n):
        return " ".join(self.pick(WORDS) for _ in range(n))

    def sentence(self, lo=6, hi=30):
        s = self.words(self.ri(lo, hi))
        return s[:1].upper() + s[1:] + "."

    def blob_b64(self, nbytes):
        """Base64 of nbytes of pseudo-random bytes (an image's body)."""
        self.blob_n += 1
        block = b"".join(
            hashlib.sha256(b"b%d/%d/%d" % (self.seed, self.blob_n, i)).digest() for i in range(128)
        )
        raw = (block * (nbytes // len(block) + 1))[:nbytes]
        return base64.b64encode(raw).decode()

    def output_lines(self, n, width=12):
        path = "src/%s/%s.rs" % (self.pick(WORDS), self.pick(WORDS))
        return "".join("%s:%d: %s\n" % (path, i + 1, self.words(width)) for i in range(n))


class Clock:
    def __init__(self, start_s):
        self.t = start_s * 1000

    def tick(self, lo_ms, hi_ms, g):
        self.t += g.ri(lo_ms, hi_ms)
        return self.iso()

    def iso(self):
        ms = self.t % 1000
        s = self.t // 1000
        days, rem = divmod(s, 86400)
        hh, rem = divmod(rem, 3600)
        mm, ss = divmod(rem, 60)
        y, mo, d = civil(days)
        return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (y, mo, d, hh, mm, ss, ms)

    def date(self):
        y, mo, d = civil(self.t // 86400000)
        return y, mo, d


def civil(days):
    """Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


class Out:
    """Files written, with counts for --stats."""

    def __init__(self, root):
        self.root = root
        self.bytes = 0
        self.files = {}
        self.records = {}
        self.longest = 0
        self.written = []

    def write(self, rel, kind, lines):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = "".join(l + "\n" for l in lines).encode()
        with open(path, "wb") as f:
            f.write(data)
        self.bytes += len(data)
        self.files[kind] = self.files.get(kind, 0) + 1
        self.records[kind] = self.records.get(kind, 0) + len(lines)
        if lines:
            self.longest = max(self.longest, max(len(l) for l in lines))
        self.written.append(rel)

    def write_text(self, rel, kind, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = text.encode()
        with open(path, "wb") as f:
            f.write(data)
        self.bytes += len(data)
        self.files[kind] = self.files.get(kind, 0) + 1
        self.written.append(rel)


# ------------------------------------------------------------------ Claude Code


class ClaudeSession:
    def __init__(self, g, clock, project, cwd, session_id, version, sidechain=None):
        self.g = g
        self.clock = clock
        self.project = project
        self.cwd = cwd
        self.sid = session_id
        self.version = version
        self.lines = []
        self.parent = None
        self.sidechain = sidechain  # agentId for a sub-agent file
        self.side_files = []  # (relative path, kind, text or lines)
        self.model = g.pick(["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"])

    def env(self, ty, **kw):
        uid = self.g.uuid()
        d = {
            "parentUuid": self.parent,
            "isSidechain": self.sidechain is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
        }
        if self.sidechain is not None:
            d["agentId"] = self.sidechain
        d["type"] = ty
        d.update(kw)
        d["uuid"] = uid
        d["timestamp"] = self.clock.tick(50, 4000, self.g)
        self.parent = uid
        self.lines.append(ENC(d))
        return uid

    def bookkeeping(self, msg_id):
        self.lines.append(
            ENC(
                {
                    "type": "file-history-snapshot",
                    "messageId": msg_id,
                    "snapshot": {
                        "messageId": msg_id,
                        "trackedFileBackups": {},
                        "timestamp": self.clock.iso(),
                    },
                    "isSnapshotUpdate": False,
                }
            )
        )

    def prompt(self, text, image=False):
        content = text
        if image:
            content = [
                {"type": "text", "text": text},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": self.g.blob_b64(self.g.ri(20_000, 400_000)),
                    },
                },
            ]
        uid = self.env("user", message={"role": "user", "content": content}, permissionMode="default")
        return uid

    def message(self, blocks, stop):
        """One API message: a line per content block, placeholder usage until the last."""
        g = self.g
        mid = "msg_" + g.hexid(24)
        rid = "req_" + g.hexid(24)
        inp, cw, cr = g.ri(1, 9), g.ri(0, 5000), g.ri(1000, 90000)
        final = g.ri(20, 2500)
        for i, b in enumerate(blocks):
            last = i == len(blocks) - 1
            self.env(
                "assistant",
                requestId=rid,
                message={
                    "model": self.model,
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "content": [b],
                    "stop_reason": stop if last else None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": inp,
                        "cache_creation_input_tokens": cw,
                        "cache_read_input_tokens": cr,
                        "output_tokens": final if last else g.ri(1, 13),
                        "service_tier": "standard",
                    },
                },
            )

    def tool(self, name, subagent_dir=None):
        """A tool call and its result; returns nothing."""
        g = self.g
        tid = "toolu_" + g.hexid(24)
        if name == "Bash":
            inp = {"command": "cargo test --%s" % g.pick(WORDS), "description": g.sentence(3, 6)}
        elif name == "Read":
            inp = {"file_path": "%s/src/%s.rs" % (self.cwd, g.pick(WORDS))}
        elif name == "Edit":
            inp = {
                "file_path": "%s/src/%s.rs" % (self.cwd, g.pick(WORDS)),
                "old_string": g.words(8),
                "new_string": g.words(9),
            }
        elif name == "Grep":
            inp = {"pattern": g.pick(WORDS), "path": self.cwd}
        elif name == "Glob":
            inp = {"pattern": "**/*.rs"}
        else:
            inp = {
                "description": g.sentence(2, 4),
                "prompt": g.sentence(20, 60),
                "subagent_type": g.pick(["Explore", "general-purpose"]),
            }
        blocks = []
        if g.r() < 0.5:
            blocks.append({"type": "text", "text": g.sentence(8, 40)})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        self.message(blocks, "tool_use")
        big = g.r()
        n = g.ri(1, 40)
        if big < 0.04:
            n = g.ri(2000, 30000)  # 0.2 to 3 MB
        elif big < 0.15:
            n = g.ri(300, 1500)
        out = g.output_lines(n)
        tur = None
        content = out
        offload = len(out) > 30_000 and not self.version.startswith("2.0") and name != "Task"
        if name == "Bash":
            tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        elif name == "Read":
            tur = {"type": "text", "file": {"filePath": inp["file_path"], "content": out, "numLines": n}}
        elif name == "Edit":
            content = "The file %s has been updated." % inp["file_path"]
            tur = {
                "filePath": inp["file_path"],
                "oldString": inp["old_string"],
                "newString": inp["new_string"],
                "structuredPatch": [
                    {
                        "oldStart": 10,
                        "oldLines": 1,
                        "newStart": 10,
                        "newLines": 1,
                        "lines": ["-" + inp["old_string"], "+" + inp["new_string"]],
                    }
                ],
            }
        elif name == "Task":
            agent = g.hexid(7 if self.version.startswith("2.1") else 8)
            text = g.sentence(40, 200)
            content = [
                {"type": "text", "text": text},
                {"type": "text", "text": "agentId: %s (for resuming to continue this agent's work if needed)" % agent},
            ]
            tur = {
                "status": "completed",
                "prompt": inp["prompt"],
                "agentId": agent,
                "content": [{"type": "text", "text": text}],
                "totalDurationMs": g.ri(5000, 200000),
                "totalTokens": g.ri(5000, 90000),
                "totalToolUseCount": g.ri(1, 30),
            }
            sub = ClaudeSession(g, self.clock, self.project, self.cwd, self.sid, self.version, sidechain=agent)
            sub.model = self.model
            sub.prompt(inp["prompt"])
            for _ in range(g.ri(1, 4)):
                sub.tool(g.pick(["Read", "Grep", "Glob", "Bash"]))
            sub.message([{"type": "text", "text": text}], "end_turn")
            if self.version.startswith("2.1") and subagent_dir is not None:
                rel = "%s/subagents/agent-%s.jsonl" % (subagent_dir, agent)
            else:
                rel = "agent-%s.jsonl" % agent
            self.side_files.append((rel, "claude-subagent", sub.lines))
            self.side_files.extend(sub.side_files)
        if offload:
            name_ = ("toolu_" + g.hexid(24) if g.r() < 0.3 else "b" + g.hexid(8)) + ".txt"
            path = "/home/dev/.claude/projects/%s/%s/tool-results/%s" % (self.project, self.sid, name_)
            preview = out[:2000]
            content = (
                "<persisted-output>\nOutput too large (%.1fKB). Full output saved to: %s\n\n"
                "Preview (first 2KB):\n%s\n...\n</persisted-output>" % (len(out) / 1024, path, preview)
            )
            if tur is not None and name == "Bash":
                tur = dict(tur, stdout=content, persistedOutputPath=path, persistedOutputSize=len(out))
            self.side_files.append(("%s/tool-results/%s" % (self.sid, name_), "claude-tool-result", out))
        self.env(
            "user",
            message={"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": content, "is_error": False}]},
            toolUseResult=tur,
        )

    def turn(self, g):
        if g.r() < 0.3:
            self.env(
                "progress",
                data={"type": "hook_progress", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit", "command": "true"},
                parentToolUseID="x",
                toolUseID="x",
            )
        uid = self.prompt(g.sentence(5, 60), image=g.r() < 0.05)
        self.bookkeeping(uid)
        if g.r() < 0.1:
            self.lines.append(ENC({"type": "queue-operation", "operation": "enqueue", "timestamp": self.clock.iso(), "sessionId": self.sid, "content": g.sentence()}))
        for _ in range(g.ri(0, 6)):
            blocks = []
            if g.r() < 0.3:
                blocks.append({"type": "thinking", "thinking": g.sentence(20, 120), "signature": g.blob_b64(200)})
            if blocks:
                self.message(blocks, None)
            self.tool(g.pick(TOOLS_CLAUDE), subagent_dir=self.sid)
        self.message([{"type": "text", "text": "\n\n"}, {"type": "text", "text": g.sentence(20, 300)}], "end_turn")
        self.env("system", subtype="turn_duration", durationMs=g.ri(2000, 300000), isMeta=False)
        return uid

    def compact(self, g):
        logical = self.parent
        self.parent = None
        self.env(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid=logical,
            compactMetadata={"trigger": "auto", "preTokens": g.ri(100000, 190000)},
        )
        self.env(
            "user",
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
            message={"role": "user", "content": "This session is being continued from a previous conversation. " + g.sentence(100, 400)},
        )


def claude_session(g, clock, out, project, cwd, fork_of=None):
    sid = g.uuid()
    version = g.pick(["2.0.64", "2.1.7", "2.1.38", "2.1.38"])
    s = ClaudeSession(g, clock, project, cwd, sid, version)
    if fork_of is not None:
        # A fork copies most of its parent's records under its own session id.
        keep = fork_of[: int(len(fork_of) * (0.85 + 0.1 * g.r()))]
        for l in keep:
            s.lines.append(l.replace('"sessionId":"%s"' % fork_of_sid(l), '"sessionId":"%s"' % sid))
        last = [json.loads(l) for l in keep if '"uuid"' in l]
        s.parent = last[-1]["uuid"] if last else None
    else:
        for _ in range(g.ri(0, 3)):
            s.lines.append(ENC({"type": "summary", "summary": g.sentence(3, 8), "leafUuid": g.uuid()}))
    prompts = []
    for t in range(g.ri(2, 14)):
        before = s.parent
        prompts.append(before)
        s.turn(g)
        if g.r() < 0.06 and len(prompts) > 1:
            # A rewind: the next prompt goes on from before an earlier turn.
            s.parent = prompts[-1]
        if g.r() < 0.05:
            s.compact(g)
    rel = "claude/projects/%s/%s.jsonl" % (project, sid)
    out.write(rel, "claude-session", s.lines)
    for srel, kind, body in s.side_files:
        path = "claude/projects/%s/%s" % (project, srel)
        if isinstance(body, str):
            out.write_text(path, kind, body)
        else:
            out.write(path, kind, body)
    return s.lines


def fork_of_sid(line):
    at = line.find('"sessionId":"')
    if at < 0:
        return "\x00"
    return line[at + 13 : line.index('"', at + 13)]


# ------------------------------------------------------------------ Codex


class Rollout:
    def __init__(self, g, clock, sid, cwd, forked_from=None):
        self.g = g
        self.clock = clock
        self.sid = sid
        self.cwd = cwd
        self.lines = []
        self.total = [0, 0, 0, 0]  # input, cached, output, reasoning
        self.model = g.pick(["gpt-5-codex", "gpt-5.1-codex", "gpt-5.2"])
        self.forked_from = forked_from

    def rec(self, ty, payload):
        self.lines.append(ENC({"timestamp": self.clock.tick(5, 3000, self.g), "type": ty, "payload": payload}))

    def meta(self):
        g = self.g
        p = {
            "id": self.sid,
            "timestamp": self.clock.iso(),
            "cwd": self.cwd,
            "originator": "codex_cli_rs",
            "cli_version": g.pick(["0.104.0", "0.125.0"]),
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex. " + " ".join(g.sentence(10, 30) for _ in range(120))},
            "git": {"commit_hash": g.hexid(40), "branch": "main", "repository_url": "https://example.invalid/repo.git"},
        }
        if self.forked_from:
            p["forked_from_id"] = self.forked_from
        self.rec("session_meta", p)

    def msg(self, role, parts):
        self.rec("response_item", {"type": "message", "role": role, "content": parts})

    def tokens(self, g):
        inc = [g.ri(2000, 40000), 0, g.ri(50, 3000), 0]
        inc[1] = int(inc[0] * g.r() * 0.9)
        inc[3] = int(inc[2] * g.r() * 0.5)
        self.total = [a + b for a, b in zip(self.total, inc)]
        info = {
            "total_token_usage": {
                "input_tokens": self.total[0],
                "cached_input_tokens": self.total[1],
                "output_tokens": self.total[2],
                "reasoning_output_tokens": self.total[3],
                "total_tokens": self.total[0] + self.total[2],
            },
            "last_token_usage": {
                "input_tokens": inc[0],
                "cached_input_tokens": inc[1],
                "output_tokens": inc[2],
                "reasoning_output_tokens": inc[3],
                "total_tokens": inc[0] + inc[2],
            },
            "model_context_window": 272000,
        }
        rl = {"primary": {"used_percent": g.ri(0, 99), "window_minutes": 300}}
        for _ in range(2):  # the same running total, twice
            self.rec("event_msg", {"type": "token_count", "info": info, "rate_limits": rl})

    def turn(self, g, first):
        turn_id = g.uuid()
        self.rec("event_msg", {"type": "task_started", "turn_id": turn_id, "model_context_window": 272000})
        self.rec(
            "turn_context",
            {"turn_id": turn_id, "cwd": self.cwd, "approval_policy": "on-request", "sandbox_policy": {"type": "workspace-write"}, "model": self.model, "effort": "medium", "summary": "auto"},
        )
        if first:
            self.msg("user", [{"type": "input_text", "text": "# AGENTS.md instructions for %s\n\n<INSTRUCTIONS>\n%s\n</INSTRUCTIONS>" % (self.cwd, g.sentence(50, 200))}])
            self.msg("user", [{"type": "input_text", "text": "<environment_context>\n  <cwd>%s</cwd>\n  <shell>bash</shell>\n</environment_context>" % self.cwd}])
        text = g.sentence(5, 80)
        parts = [{"type": "input_text", "text": text}]
        images = []
        if g.r() < 0.05:
            url = "data:image/png;base64," + g.blob_b64(g.ri(20_000, 400_000))
            parts.append({"type": "input_image", "image_url": url})
            images.append(url)
        self.msg("user", parts)
        self.rec("event_msg", {"type": "user_message", "message": text, "images": images})
        for _ in range(g.ri(0, 8)):
            if g.r() < 0.6:
                summ = g.sentence(5, 40)
                self.rec(
                    "response_item",
                    {"type": "reasoning", "summary": [{"type": "summary_text", "text": summ}], "content": None, "encrypted_content": g.blob_b64(g.ri(500, 6000))},
                )
                self.rec("event_msg", {"type": "agent_reasoning", "text": summ})
            cid = "call_" + g.hexid(24)
            if g.r() < 0.8:
                cmd = ["bash", "-lc", "rg -n %s src" % g.pick(WORDS)]
                self.rec("response_item", {"type": "function_call", "name": "exec_command", "arguments": ENC({"cmd": " ".join(cmd[2:]), "workdir": self.cwd}), "call_id": cid})
                n = g.ri(0, 60)
                if g.r() < 0.03:
                    n = g.ri(2000, 25000)
                out = g.output_lines(n)
                code = 0 if g.r() < 0.85 else 1
                self.rec("event_msg", {"type": "exec_command_end", "call_id": cid, "stdout": out[:2000], "stderr": "", "exit_code": code, "duration": {"secs": 0, "nanos": 300000000}, "formatted_output": out[:2000]})
                self.rec("response_item", {"type": "function_call_output", "call_id": cid, "output": "Exit code: %d\nWall time: 0.3 seconds\nOutput:\n%s" % (code, out)})
            else:
                patch = "*** Begin Patch\n*** Update File: src/%s.rs\n@@\n-%s\n+%s\n*** End Patch" % (g.pick(WORDS), g.words(8), g.words(9))
                self.rec("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch", "input": patch})
                self.rec("response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": ENC({"output": "Success. Updated the following files:\nM src/x.rs\n", "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})
            self.tokens(g)
        answer = g.sentence(20, 250)
        self.rec("event_msg", {"type": "agent_message", "message": answer})
        self.msg("assistant", [{"type": "output_text", "text": answer}])
        self.tokens(g)
        self.rec("event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": answer})

    def compact(self, g):
        history = [json.loads(l)["payload"] for l in self.lines if '"type":"response_item"' in l][-30:]
        summary = g.sentence(60, 200)
        self.rec("compacted", {"message": summary, "replacement_history": history})
        self.rec("event_msg", {"type": "context_compacted"})


def codex_rollout(g, clock, out, cwd, parent=None):
    sid = g.uuid()
    r = Rollout(g, clock, sid, cwd, forked_from=parent[0] if parent else None)
    r.meta()
    if parent:
        # A fork copies its parent's records, all written again at the fork.
        for l in parent[1]:
            d = json.loads(l)
            d["timestamp"] = clock.tick(0, 2, g)
            r.lines.append(ENC(d))
        r.total = list(parent[2])
        clock.tick(5_000, 60_000, g)  # the fork's own turns begin when the user types
    first = parent is None
    for _ in range(g.ri(1, 10)):
        r.turn(g, first)
        first = False
        if g.r() < 0.05:
            r.rec("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
        if g.r() < 0.06:
            r.compact(g)
    y, mo, d = clock.date()
    stamp = clock.iso()[:19].replace(":", "-")
    name = "rollout-%s-%s.jsonl" % (stamp, sid)
    out.write("codex/sessions/%04d/%02d/%02d/%s" % (y, mo, d, name), "codex-rollout", r.lines)
    if g.r() < 0.05:
        out.write("codex/archived_sessions/%s" % name, "codex-archived-copy", r.lines)
    return (sid, r.lines, r.total)


# ------------------------------------------------------------------ main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="directory to write the archive into (created)")
    ap.add_argument("--mb", type=float, default=1100, help="about this many MiB in all (default 1100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--claude-share", type=float, default=0.6, help="share of the bytes that are Claude Code's")
    ap.add_argument("--stats", action="store_true", help="print the composition on stderr")
    a = ap.parse_args()
    g = Gen(a.seed)
    out = Out(a.out)
    target = int(a.mb * 1024 * 1024)
    claude_target = int(target * a.claude_share)
    clock = Clock(1767225600)  # 2026-01-01
    projects = ["-home-dev-%s" % w for w in ("shop", "cstream", "blog", "infra", "notes", "api")]
    last = None
    while out.bytes < claude_target:
        proj = g.pick(projects)
        cwd = proj.replace("-", "/")
        fork = last if (last is not None and g.r() < 0.08) else None
        last = claude_session(g, clock, out, proj, cwd, fork_of=fork)
        clock.tick(60_000, 20_000_000, g)
    parent = None
    while out.bytes < target:
        cwd = "/home/dev/%s" % g.pick(["shop", "cstream", "blog", "infra"])
        fork = parent if (parent is not None and g.r() < 0.08) else None
        parent = codex_rollout(g, clock, out, cwd, parent=fork)
        clock.tick(60_000, 20_000_000, g)
    if a.stats:
        md5 = hashlib.md5()
        for rel in sorted(out.written):
            with open(os.path.join(a.out, rel), "rb") as f:
                md5.update(rel.encode() + b"\0" + f.read())
        for k in sorted(out.files):
            print("%-22s %7d files %9d records" % (k, out.files[k], out.records.get(k, 0)), file=sys.stderr)
        print("bytes %d (%.1f MiB), longest record %d bytes, md5 %s" % (out.bytes, out.bytes / 1048576, out.longest, md5.hexdigest()), file=sys.stderr)


if __name__ == "__main__":
    main()
