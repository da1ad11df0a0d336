#!/usr/bin/env python3
"""Deterministic generator of large, realistic agent streams for benchmarking cstream.

Three modes (Python 3.8+ standard library only):

  mixed (default)   cursor-agent `--output-format stream-json --stream-partial-output`,
                    many concatenated sessions, about --mb MiB:
                        gen_stream.py --mb 200 --seed 1 > stream.jsonl
  cumulative        one shell tool call whose output is re-sent whole N times
                    (the O(n^2) pattern), as cursor-agent `tool_call` lines:
                        gen_stream.py --cumulative-shell 500 --cumulative-lines 35000
  shell deltas      cstream's own `--to events` format (read back with `--from events`):
                    one shell call with N `shell_output_delta` events of --delta-kb KiB each:
                        gen_stream.py --shell-deltas 10000 --delta-kb 100 | cstream --from events ...

`--stats` prints the composition (events and bytes per kind, sessions, longest line, md5)
on stderr. The same arguments give byte-identical output on any Python 3 version: the only
randomness used is `random.Random(seed).random()`, whose sequence Python guarantees.

What the mixed stream contains (shapes from docs/dialects.md#cursor-agent):
  system/init -> user -> model calls, each: [thinking deltas -> thinking/completed]
  [assistant token deltas (timestamp_ms, no model_call_id) -> recap of the segment
  (model_call_id + timestamp_ms)] [1-4 parallel tool calls: all `started`, then `completed`
  in another order]; the last call ends with deltas and a final recap with neither
  model_call_id nor timestamp_ms; then result/success (result = all recapped text,
  usage on most sessions).
  Tool kinds: shell (stdout + interleavedOutput; some with thousands of lines, some
  failing), read (file bodies), edit (diffString + streamContent), write, delete, grep,
  glob, ls, semSearch, webFetch, updateTodos, readLints, mcp, and the generic `function`.
  About a third of the sessions look like 2026.07 builds (toolCallId, startedAtMs/
  completedAtMs strings and hookAdditionalContexts beside the tool key); call ids
  sometimes contain a newline; some sessions have redacted (empty) thinking.

The cumulative mode models what cursor-agent does not document: a running shell command's
output re-sent whole as `tool_call` lines with `subtype:"progress"` (stdout and
interleavedOutput both cumulative, no exitCode yet), then one `completed`.
"""

import argparse
import hashlib
import json
import random
import sys

ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

# ------------------------------------------------------------------ vocabulary

WORDS = """
I will now look at the parser and see why tests fail after that change so we can
fix it properly first let me check which lines are read twice because recap events
repeat segment text then compare with result output this means buffer should keep
only last snapshot per call otherwise memory grows with stream length we need bounded
state plus running hash of prefix bytes which costs constant time each update
function returns error when input has invalid utf8 sequence inside string value
module exports writer that escapes control characters before writing them out
run cargo build again with release profile then measure throughput using median
of five runs compare against baseline numbers from same session only since host
is noisy also note peak resident memory from getrusage after child exits
""".split()

PUNCT = [".", ",", ":", ";", "!", "?", " (", ")", " -", "'s", "n't"]
MARKDOWN = ["\n", "\n\n", "\n\n## ", "\n- ", "\n1. ", "\n2. ", "**", " **", "_", " `", "`",
            "```", "```rust\n", "```bash\n", "```ts\n", "\n```\n", "\n```", " >", "|", " | "]
CODE = ["::", "->", "=>", "&mut", "<'a>", "()", "{", "}", "[]", " = ", "==", "!=", "\"",
        "\\", "\\n", "\t", "    ", "  ", ";\n", "{\n", "}\n", " // ", "#[derive(Debug)]",
        " Option<&str>", " Vec<u8>", " Result<(), io::Error>", " \"quoted\"", " 'c'"]
UNICODE = [" é", " déjà", " über", " año", " —", " –", " …", " →", " ⇒", " ✅", " ❌", " ⚠️",
           " 🚀", " 🔧", " 👩‍💻", " 日本語", " 中文", " 한국어", " Жук", " Ω", " “", "”",
           " «", "»", " ½", " ≈", " µs", " 𝔘𝔫𝔦"]

TOKENS = ([" " + w for w in WORDS] * 5 + [w.capitalize() for w in WORDS[:60]]
          + PUNCT * 6 + MARKDOWN * 2 + CODE + UNICODE)
TOKENS_JSON = [ENC(t) for t in TOKENS]
TOKEN_JSON = dict(zip(TOKENS, TOKENS_JSON))

MODELS = ["Auto", "Claude 4.5 Sonnet", "GPT-5.4 Mini Low", "Cursor Grok 4.5 High Fast",
          "Composer 2.5", "Claude 4.6 Opus Thinking"]
DIRS = ["src", "src/parse", "src/output", "src/util", "tests", "tests/data", "crates/core/src",
        "crates/cli/src", "web/src/components", "scripts", "docs", "benches", "ünïcode dir"]
NAMES = ["main", "lib", "mod", "reader", "writer", "framing", "escape", "sse", "events",
         "normalize", "session", "recap", "prefix", "config", "errors", "util", "types",
         "render", "color", "args", "buffer", "schema", "index", "app", "server", "client"]
EXTS = [".rs", ".rs", ".rs", ".rs", ".ts", ".tsx", ".py", ".toml", ".md", ".json", ".yaml",
        ".sh"]

CODE_LINES = {
    "rs": [
        "use std::io::{{self, BufRead, Write}};",
        "use crate::{a}::{{{A}, {B}}};",
        "pub fn {a}_{b}(input: &[u8]) -> io::Result<{A}> {{",
        "    let mut {a} = {A}::with_capacity({n});",
        "    for (i, {b}) in {a}.iter().enumerate() {{",
        "        if {b}.len() > {n} {{ return Err(io::Error::other(\"{a} too long\")); }}",
        "    }}",
        "}}",
        "",
        "#[derive(Debug, Clone, PartialEq, Eq)]",
        "pub struct {A}<'a> {{ {a}: Cow<'a, str>, {b}: u{n2} }}",
        "/// Returns the {a} of the {b}, or `None` when the line has no {b}.",
        "    // SAFETY: {a} was checked above; see issue #{n}.",
        "    assert_eq!({a}(\"x\\ty\\n\"), Some(\"{b}\"));",
        "    const {AU}: &str = \"C:\\\\Users\\\\dev\\\\{a}\";",
        "    match self.{a} {{ Some(ref v) => v.{b}(), None => {n} }}",
        "impl<'a> {A}<'a> {{",
        "        write!(w, \"{{:>8}} {{}}\\n\", {n}, self.{a})?;",
        "#[cfg(test)]",
        "mod tests {{ use super::*; #[test] fn {a}_{b}() {{ assert!(true); }} }}",
    ],
    "ts": [
        "import {{ {a}, {b} }} from \"./{a}\";",
        "export function {a}{B}({b}: string): {A} | undefined {{",
        "  const {a} = {b}.split(\"\\n\").map((l) => l.trim());",
        "  if (!{a}.length) throw new Error(`empty {b}: ${{{b}}}`);",
        "  return {{ {a}, {b}: {n} }};",
        "}}",
        "",
        "export type {A} = {{ {a}: string; {b}?: number }};",
        "  // TODO({a}): handle the “{b}” case",
        "  await fetch(`/api/{a}/${{id}}?limit={n}`, {{ method: \"POST\" }});",
    ],
    "py": [
        "import json, sys",
        "def {a}_{b}(path: str) -> dict:",
        "    with open(path, encoding=\"utf-8\") as f:",
        "        return {{\"{a}\": json.load(f), \"{b}\": {n}}}",
        "",
        "class {A}({B}):",
        "    \"\"\"{A} reads {b} lines — one per event.\"\"\"",
        "    def __init__(self, {a}={n}):",
        "        self.{a} = {a}  # noqa: E501",
        "        print(f\"{{self.{a}!r}}\\t{b}\", file=sys.stderr)",
    ],
    "md": [
        "# {A} {b}",
        "",
        "The `{a}` module turns {b} lines into events — see [{A}](docs/{a}.md).",
        "- **{a}**: {n} bytes per {b}",
        "| {a} | {b} | {n} |",
        "```sh",
        "cargo run --release -- --{a} {b}.jsonl",
        "```",
        "> Note: {a} ≠ {b}; {n} µs on average.",
    ],
    "other": [
        "[{a}]",
        "{a} = \"{b}\"",
        "{b}_{a} = {n}",
        "  \"{a}\": {{ \"{b}\": [{n}, {n2}], \"ok\": true }},",
        "  - name: {a}-{b}",
        "    run: make {a} -j{n2}",
        "export {AU}=\"/opt/{a}/{b}\"",
        "",
    ],
}

SHELL_PROFILES = [
    ("cargo build --release 2>&1", [
        "   Compiling {a}-{b} v0.{n2}.{n}",
        "\u001b[1m\u001b[32m   Compiling\u001b[0m {a} v1.{n2}.0 (/workspace/proj/crates/{b})",
        "warning: unused variable: `{a}`",
        "  --> crates/{b}/src/{a}.rs:{n}:{n2}",
        "   |",
        "{n} |     let {a} = {b}();",
        "   |         ^^^^ help: if this is intentional, prefix it with an underscore: `_{a}`",
        "    Finished `release` profile [optimized] target(s) in {n2}.{n}s",
    ]),
    ("cargo test --all 2>&1", [
        "test {a}::{b}::tests::{a}_{b} ... ok",
        "test {a}::tests::handles_unicode_{b} ... ok",
        "test {b}::tests::{a}_rejects_bad_input ... \u001b[31mFAILED\u001b[0m",
        "---- {a}::tests::{b} stdout ----",
        "thread '{a}::tests::{b}' panicked at src/{a}.rs:{n}:{n2}:",
        "assertion `left == right` failed\n  left: \"{a}\"\n right: \"{b}\"",
        "running {n} tests",
        "test result: ok. {n} passed; 0 failed; 0 ignored; finished in {n2}.{n}s",
    ]),
    ("npm test -- --ci", [
        "  \u2713 {a} {b} ({n} ms)",
        "  \u2715 {a} should {b} \u2014 expected \"{a}\" received \"{b}\"",
        " PASS  src/{a}/{b}.test.ts",
        " FAIL  src/{b}.test.tsx",
        "    at Object.<anonymous> (src/{a}.ts:{n}:{n2})",
        "npm WARN deprecated {a}@{n2}.{n}.0: use {b} instead",
        "Tests:       {n2} failed, {n} passed, {n} total",
    ]),
    ("python3 -m pytest -q", [
        "tests/test_{a}.py::test_{b} PASSED",
        "tests/test_{b}.py::test_{a}[{n}] FAILED",
        "E       AssertionError: assert '{a}' == '{b}'",
        "E         - {a}\nE         + {b}",
        "{n} passed, {n2} warnings in {n2}.{n}s",
        "  /usr/lib/python3/dist-packages/{a}.py:{n}: DeprecationWarning: {b}",
    ]),
    ("ls -la src", [
        "-rw-r--r--  1 dev dev {n}{n2} Nov {n2} 10:{n2} {a}_{b}.rs",
        "drwxr-xr-x  {n2} dev dev    4096 Oct  3 09:{n2} {a}",
        "lrwxrwxrwx  1 dev dev      {n2} Sep 12 18:01 {a} -> ../{b}",
        "total {n}",
    ]),
    ("git log --stat -n 50", [
        "commit {h}",
        "Author: Dev Éloïse <dev@example.com>",
        "Date:   Tue Nov {n2} 10:{n2}:00 2026 +0100",
        "    {A}: {b} the {a} when the input is empty",
        " src/{a}.rs | {n} ++++++-----",
        " {n2} files changed, {n} insertions(+), {n2} deletions(-)",
    ]),
    ("rg -n \"fn main\" .", [
        "src/{a}.rs:{n}:fn main() -> Result<(), {A}> {{",
        "crates/{b}/src/bin/{a}.rs:{n2}:    fn main() {{ {a}::run(); }}",
        "tests/{a}_{b}.rs:{n}:// fn main is generated by the harness",
    ]),
    ("make -j2", [
        "[{n2}/{n}] Building CXX object CMakeFiles/{a}.dir/src/{b}.cpp.o",
        "/usr/bin/c++ -O2 -DNDEBUG -I/workspace/proj/include -o {a}.o -c ../src/{b}.cpp",
        "../src/{b}.cpp:{n}:{n2}: warning: unused parameter '{a}' [-Wunused-parameter]",
        "make[{n2}]: Leaving directory '/workspace/proj/build/{a}'",
    ]),
    ("docker build -t proj .", [
        "#{n2} [{a} {n2}/{n}] RUN apt-get install -y {b}",
        "#{n2} {n2}.{n} Get:{n} http://deb.debian.org/debian bookworm/main amd64 {a} [{n} kB]",
        "#{n2} DONE {n2}.{n}s",
        "#{n2} sha256:{h}{h} {n}MB / {n}MB",
    ]),
]


class Rng:
    """Only `random.Random.random()`: its sequence for a seed is stable across versions."""

    def __init__(self, seed):
        self.f = random.Random(seed).random

    def int(self, lo, hi):
        """Uniform integer in [lo, hi]."""
        return lo + int(self.f() * (hi - lo + 1))

    def pick(self, seq):
        return seq[int(self.f() * len(seq))]

    def picks(self, seq, k):
        f, n = self.f, len(seq)
        return [seq[int(f() * n)] for _ in range(k)]

    def chance(self, p):
        return self.f() < p

    def hex(self, digits):
        f = self.f
        return "".join("%08x" % int(f() * 4294967296.0) for _ in range((digits + 7) // 8))[:digits]

    def uuid(self):
        h = self.hex(32)
        return "%s-%s-4%s-%s-%s" % (h[:8], h[8:12], h[13:16], "89ab"[int(self.f() * 4)] + h[17:20],
                                   h[20:32])

    def shuffle(self, xs):
        f = self.f
        for i in range(len(xs) - 1, 0, -1):
            j = int(f() * (i + 1))
            xs[i], xs[j] = xs[j], xs[i]


class Out:
    """Writes lines, counting events and bytes per kind."""

    def __init__(self, stream, want_md5):
        self.w = stream.write
        self.md5 = hashlib.md5() if want_md5 else None
        self.stats = {}
        self.total = 0
        self.lines = 0
        self.longest = 0

    def emit(self, kind, line):
        data = line.encode("utf-8") + b"\n"
        self.raw(kind, data, 1)

    def emit_many(self, kind, lines):
        if lines:
            self.raw(kind, ("\n".join(lines) + "\n").encode("utf-8"), len(lines))

    def raw(self, kind, data, nlines, longest=None):
        """Write `data` (`nlines` whole lines; `longest` = its longest line, if known)."""
        self.w(data)
        if self.md5 is not None:
            self.md5.update(data)
        s = self.stats.get(kind)
        if s is None:
            s = self.stats[kind] = [0, 0]
        s[0] += nlines
        s[1] += len(data)
        self.total += len(data)
        self.lines += nlines
        self.longest = max(self.longest, longest if longest is not None else
                           (len(data) - 1 if nlines == 1 else max(map(len, data.split(b"\n")))))


class Mixed:
    """The cursor-agent mixed stream."""

    def __init__(self, rng, out):
        self.r = rng
        self.o = out
        self.ts = 1763800000000
        self.sessions = 0

    # ---- small parts
    def tick(self, lo=1, hi=40):
        self.ts += self.r.int(lo, hi)
        return self.ts

    def fill(self, tmpl):
        r = self.r
        a, b = r.pick(NAMES), r.pick(WORDS)
        return tmpl.format(a=a, b=b, A=a.capitalize(), B=b.capitalize(), AU=a.upper(),
                           n=r.int(1, 9999), n2=r.int(0, 64), h=r.hex(12))

    def render(self, pool, nlines, numbered=False):
        """`nlines` lines drawn from a small per-call cache of rendered templates."""
        r = self.r
        cache = [self.fill(r.pick(pool)) for _ in range(min(nlines, 48))]
        picked = r.picks(cache, nlines)
        if numbered:
            picked = ["[%d/%d] %s" % (i + 1, nlines, s) for i, s in enumerate(picked)]
        return "\n".join(picked) + "\n" if nlines else ""

    def path(self):
        r = self.r
        return "/workspace/proj/%s/%s%s" % (r.pick(DIRS), r.pick(NAMES), r.pick(EXTS))

    def code_pool(self, path):
        ext = path.rsplit(".", 1)[-1]
        return CODE_LINES.get(ext if ext in ("rs", "ts", "py", "md") else
                              "ts" if ext == "tsx" else "other")

    def call_id(self):
        r = self.r
        x = r.f()
        if x < 0.45:
            return "call_%s\nfc_%s" % (r.hex(24), r.hex(48))  # a literal newline, as observed
        if x < 0.8:
            return "toolu_bdrk_01%s" % r.hex(22)
        return "tool_%s" % r.uuid()[:-4]

    # ---- text channels
    def token_stream(self, n):
        """n delta texts: one token each, or in some segments sometimes a few."""
        r, f = self.r, self.r.f
        if f() < 0.85:
            return r.picks(TOKENS, n)
        return ["".join(r.picks(TOKENS, r.int(2, 4))) if f() < 0.2 else r.pick(TOKENS)
                for _ in range(n)]

    def stamps(self, n, lo, hi):
        r, ts, res = self.r, self.ts, []
        for _ in range(n):
            ts += r.int(lo, hi)
            res.append(ts)
        self.ts = ts
        return res

    def thinking(self, sid, redacted):
        n = self.r.int(10, 320)
        tail = ',"session_id":"%s","timestamp_ms":' % sid
        texts = [""] * n if redacted else self.token_stream(n)
        j = TOKEN_JSON.get
        self.o.emit_many("thinking/delta", [
            '{"type":"thinking","subtype":"delta","text":' + (j(t) or ENC(t)) + tail + str(ts) + "}"
            for t, ts in zip(texts, self.stamps(n, 2, 45))])
        self.o.emit("thinking/completed",
                    '{"type":"thinking","subtype":"completed","session_id":"%s","timestamp_ms":%d}'
                    % (sid, self.tick()))

    def segment(self, sid, mcid):
        """Assistant token deltas, then the recap; returns the segment text."""
        n = self.r.int(4, 260)
        texts = self.token_stream(n)
        head = '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":'
        tail = '}]},"session_id":"%s","timestamp_ms":' % sid
        j = TOKEN_JSON.get
        self.o.emit_many("assistant/delta", [head + (j(t) or ENC(t)) + tail + str(ts) + "}"
                                             for t, ts in zip(texts, self.stamps(n, 2, 45))])
        text = "".join(texts)
        if mcid is None:  # end of the turn: neither model_call_id nor timestamp_ms
            self.o.emit("assistant/final recap", head + ENC(text) + '}]},"session_id":"%s"}' % sid)
        else:
            self.o.emit("assistant/recap", head + ENC(text) +
                        '}]},"session_id":"%s","model_call_id":"%s","timestamp_ms":%d}'
                        % (sid, mcid, self.ts + 1))
        return text

    # ---- tools: each returns (key, args, result)
    def t_shell(self, cid):
        r = self.r
        cmd, pool = r.pick(SHELL_PROFILES)
        x = r.f()
        n = r.int(1, 30) if x < 0.6 else r.int(30, 400) if x < 0.94 else r.int(1000, 6000)
        out = self.render(pool, n, numbered=cmd.startswith("make") and r.chance(0.5))
        err_n = r.int(1, 12) if r.chance(0.3) else 0
        err = self.render(pool, err_n)
        if err_n:
            # stdout and stderr in arrival order: split both into lines and merge
            so, se = out.splitlines(True), err.splitlines(True)
            merged, i, j = [], 0, 0
            while i < len(so) or j < len(se):
                if j >= len(se) or (i < len(so) and r.f() < len(so) / (len(so) + len(se))):
                    merged.append(so[i])
                    i += 1
                else:
                    merged.append(se[j])
                    j += 1
            inter = "".join(merged)
        else:
            inter = out
        name = cmd.split()[0]
        args = {"command": cmd, "workingDirectory": "/workspace/proj",
                "timeout": r.pick([10000, 30000, 120000]), "toolCallId": cid,
                "simpleCommands": [name], "hasInputRedirect": False, "hasOutputRedirect": "2>&1" in cmd,
                "parsingResult": {"parsingFailed": False, "executableCommands": [{
                    "name": name, "args": [{"type": "word", "value": w} for w in cmd.split()[1:]],
                    "fullText": cmd}], "hasRedirects": "2>&1" in cmd, "hasCommandSubstitution": False},
                "fileOutputThresholdBytes": r.pick(["0", "40000"]), "isBackground": False,
                "skipApproval": r.chance(0.5), "timeoutBehavior": "TIMEOUT_BEHAVIOR_BACKGROUND"}
        code = 0 if r.chance(0.82) else r.pick([1, 2, 101, 127])
        body = {"command": cmd, "workingDirectory": "/workspace/proj", "exitCode": code, "signal": "",
                "stdout": out, "stderr": err, "executionTime": r.int(15, 120000),
                "interleavedOutput": inter}
        return "shellToolCall", args, {"success" if code == 0 else "failure": body,
                                       "isBackground": False}

    def t_read(self, cid):
        r = self.r
        p = self.path()
        if r.chance(0.03):
            return "readToolCall", {"path": p}, {"error": {"message": "File not found: " + p}}
        n = r.int(5, 700)
        content = self.render(self.code_pool(p), n)
        start = r.int(1, 300) if r.chance(0.3) else 1
        args = {"path": p} if start == 1 else {"path": p, "offset": start, "limit": n}
        res = {"content": content, "isEmpty": False, "exceededLimit": n > 600, "totalLines": n + start - 1,
               "fileSize": len(content.encode()), "path": p,
               "readRange": {"startLine": start, "endLine": start + n - 1}}
        return "readToolCall", args, {"success": res}

    def diff(self, path, n):
        r = self.r
        pool = self.code_pool(path)
        rel = path[len("/workspace/proj/"):]
        parts = ["--- a/%s\n+++ b/%s\n" % (rel, rel)]
        added = removed = 0
        line = 1
        for _ in range(r.int(1, 5)):
            line += r.int(0, 80)
            ctx = [" " + self.fill(r.pick(pool)) for _ in range(3)]
            minus = ["-" + self.fill(r.pick(pool)) for _ in range(r.int(0, n))]
            plus = ["+" + self.fill(r.pick(pool)) for _ in range(r.int(1, n))]
            added += len(plus)
            removed += len(minus)
            parts.append("@@ -%d,%d +%d,%d @@\n" % (line, 6 + len(minus), line, 6 + len(plus)))
            parts.append("\n".join(ctx + minus + plus + ctx) + "\n")
        return "".join(parts), added, removed

    def t_edit(self, cid):
        r = self.r
        p = self.path()
        if r.chance(0.04):
            return "editToolCall", {"path": p, "streamContent": ""}, {"rejected": {}}
        new = self.render(self.code_pool(p), r.int(10, 400))
        d, a, m = self.diff(p, r.int(1, 25))
        return "editToolCall", {"path": p, "streamContent": new}, {"success": {
            "path": p, "linesAdded": a, "linesRemoved": m, "diffString": d,
            "message": "Wrote contents to " + p}}

    def t_write(self, cid):
        r = self.r
        p = self.path()
        text = self.render(self.code_pool(p), r.int(5, 300))
        return "writeToolCall", {"path": p, "fileText": text, "toolCallId": cid}, {"success": {
            "path": p, "linesCreated": text.count("\n"), "fileSize": len(text.encode())}}

    def t_delete(self, cid):
        p = self.path()
        return "deleteToolCall", {"path": p, "toolCallId": cid}, {"success": {"path": p, "deletedFile": p}}

    def t_grep(self, cid):
        r = self.r
        pat = r.pick(["fn main", "serde_json::", "TODO", "timestamp_ms", "unwrap\\(\\)",
                      "impl .* for", "\"type\":", "model_call_id", "é|ü"])
        files, total = [], 0
        for _ in range(r.int(0, 25)):
            p = self.path()
            pool = self.code_pool(p)
            ms = [{"lineNumber": r.int(1, 3000), "content": self.fill(r.pick(pool)),
                   "contentTruncated": False, "isContextLine": r.chance(0.3)}
                  for _ in range(r.int(1, 15))]
            total += len(ms)
            files.append({"file": p[len("/workspace/proj/"):], "matches": ms})
        args = {"pattern": pat, "path": "/workspace/proj", "caseInsensitive": r.chance(0.2),
                "multiline": False, "outputMode": "content", "toolCallId": cid}
        return "grepToolCall", args, {"success": {
            "pattern": pat, "path": "/workspace/proj", "outputMode": "content",
            "workspaceResults": {"/workspace/proj": {"content": {
                "matches": files, "totalLines": total, "totalMatchedLines": total}}}}}

    def t_glob(self, cid):
        r = self.r
        pat = r.pick(["**/*.rs", "src/**/*.ts", "**/Cargo.toml", "tests/*", "**/*.{md,txt}"])
        files = [self.path() for _ in range(r.int(0, 120))]
        return "globToolCall", {"globPattern": pat, "targetDirectory": "/workspace/proj"}, {"success": {
            "pattern": pat, "path": "/workspace/proj", "files": files, "totalFiles": len(files),
            "clientTruncated": False, "ripgrepTruncated": False}}

    def t_ls(self, cid):
        r = self.r

        def tree(path, depth):
            files = [{"name": r.pick(NAMES) + r.pick(EXTS)} for _ in range(r.int(0, 14))]
            dirs = [tree(path + "/" + r.pick(DIRS).split("/")[-1], depth + 1)
                    for _ in range(r.int(0, 4) if depth < 3 else 0)]
            return {"absPath": path, "childrenDirs": dirs, "childrenFiles": files,
                    "childrenWereProcessed": True,
                    "fullSubtreeExtensionCounts": {".rs": r.int(0, 60), ".md": r.int(0, 9)},
                    "numFiles": len(files)}

        return "lsToolCall", {"path": "/workspace/proj", "ignore": [], "toolCallId": cid}, {
            "success": {"directoryTreeRoot": tree("/workspace/proj", 0)}}

    def t_sem(self, cid):
        r = self.r
        q = " ".join(r.picks(WORDS, r.int(3, 9)))
        res = []
        for _ in range(r.int(1, 12)):
            p = self.path()
            s = r.int(1, 900)
            res.append({"filePath": p, "startLine": s, "endLine": s + 20,
                        "content": self.render(self.code_pool(p), r.int(3, 30)),
                        "score": "0.%04d" % r.int(1000, 9999)})
        return "semSearchToolCall", {"query": q, "targetDirectories": [], "explanation": q}, {
            "success": {"results": res}}

    def t_fetch(self, cid):
        r = self.r
        url = "https://docs.example.com/%s/%s?lang=%s" % (r.pick(NAMES), r.pick(WORDS), r.pick(["en", "de", "ja"]))
        if r.chance(0.1):
            return "webFetchToolCall", {"url": url}, {"error": {"message": "HTTP 404 for " + url}}
        md = self.render(CODE_LINES["md"], r.int(20, 400))
        return "webFetchToolCall", {"url": url}, {"success": {"url": url, "markdown": md, "statusCode": 200}}

    def t_todos(self, cid):
        r = self.r
        todos = [{"id": str(i + 1), "content": " ".join(r.picks(WORDS, r.int(3, 12))),
                  "status": r.pick(["pending", "in_progress", "completed", "cancelled"])}
                 for i in range(r.int(1, 9))]
        return "updateTodosToolCall", {"todos": todos, "merge": r.chance(0.5)}, {"success": {"todos": todos}}

    def t_lints(self, cid):
        r = self.r
        paths = [self.path() for _ in range(r.int(1, 4))]
        diags = [{"path": p, "diagnostics": [{"severity": r.pick(["error", "warning"]),
                                              "message": self.fill("unused variable `{a}` in {b}"),
                                              "range": {"startLine": r.int(1, 500), "endLine": r.int(500, 900)}}
                                             for _ in range(r.int(0, 6))]} for p in paths]
        return "readLintsToolCall", {"paths": paths}, {"success": {"fileDiagnostics": diags}}

    def t_mcp(self, cid):
        r = self.r
        server, tool = r.pick([("github", "search_issues"), ("linear", "create_issue"),
                               ("postgres", "query"), ("browser", "screenshot")])
        inner = {"query": " ".join(r.picks(WORDS, r.int(2, 8))), "limit": r.int(1, 50)}
        text = self.render(CODE_LINES["other"], r.int(1, 120))
        return "mcpToolCall", {"name": "%s-%s" % (server, tool), "toolName": tool,
                               "serverIdentifier": server, "args": inner}, {
            "success": {"content": [{"text": {"text": text}}], "isError": False}}

    TOOLS = [(0.33, "t_shell"), (0.55, "t_read"), (0.66, "t_edit"), (0.69, "t_write"),
             (0.70, "t_delete"), (0.79, "t_grep"), (0.83, "t_glob"), (0.87, "t_ls"),
             (0.90, "t_sem"), (0.92, "t_fetch"), (0.95, "t_todos"), (0.97, "t_lints"),
             (0.99, "t_mcp"), (1.01, None)]

    def tool(self, cid):
        x = self.r.f()
        for edge, name in self.TOOLS:
            if x < edge:
                if name is None:  # the generic form the docs mention
                    a = {"name": "apply_patch", "arguments": ENC({"patch": self.diff(self.path(), 4)[0]})}
                    return "function", a, None
                return getattr(self, name)(cid)

    def tool_batch(self, sid, mcid, new_build):
        r, o = self.r, self.o
        n = 1 if r.chance(0.55) else r.int(2, 4)
        ts = self.ts + 1
        calls = []
        for _ in range(n):
            cid = self.call_id()
            key, args, result = self.tool(cid)
            calls.append((cid, key, args, result))
            inner = {key: args if key == "function" else {"args": args}}
            if new_build:
                inner.update(toolCallId=cid, startedAtMs=str(ts), hookAdditionalContexts=[])
            o.emit("tool_call/started", ENC({"type": "tool_call", "subtype": "started", "call_id": cid,
                                             "tool_call": inner, "model_call_id": mcid,
                                             "session_id": sid, "timestamp_ms": ts}))
        r.shuffle(calls)  # parallel calls finish in their own order
        for cid, key, args, result in calls:
            ts = self.tick(5, 3000)
            inner = {key: args if key == "function" else {"args": args, "result": result}}
            if new_build:
                inner.update(toolCallId=cid, startedAtMs=str(ts - 100), completedAtMs=str(ts),
                             hookAdditionalContexts=[])
            o.emit("tool_call/completed " + key, ENC({
                "type": "tool_call", "subtype": "completed", "call_id": cid, "tool_call": inner,
                "model_call_id": mcid, "session_id": sid, "timestamp_ms": ts}))

    def session(self, budget):
        r, o = self.r, self.o
        self.sessions += 1
        sid = r.uuid()
        start = self.ts
        size0 = o.total
        new_build = r.chance(0.35)
        redacted = r.chance(0.08)
        o.emit("system/init", ENC({"type": "system", "subtype": "init", "apiKeySource": "login",
                                   "cwd": "/workspace/proj", "session_id": sid, "model": r.pick(MODELS),
                                   "permissionMode": "default"}))
        prompt = " ".join(r.picks(WORDS, r.int(4, 70)))
        if r.chance(0.3):
            prompt += "\n\n```\n" + self.render(SHELL_PROFILES[1][1], r.int(1, 15)) + "```\nPlease “fix” this 🙏"
        o.emit("user", ENC({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": prompt}]}, "session_id": sid}))
        req = r.uuid()
        texts = []
        calls = r.int(1, 14)
        for k in range(calls):
            mcid = "%s-%d-%s" % (req, k, r.hex(4))
            if r.chance(0.8):
                self.thinking(sid, redacted)
            if r.chance(0.85):
                texts.append(self.segment(sid, mcid))
            self.tool_batch(sid, mcid, new_build)
            if o.total - size0 >= budget:
                break
        if r.chance(0.6):
            self.thinking(sid, redacted)
        texts.append(self.segment(sid, None))
        dur = self.tick() - start
        res = {"type": "result", "subtype": "success", "duration_ms": dur, "duration_api_ms": dur,
               "is_error": False, "result": "".join(texts), "session_id": sid,
               "request_id": req if r.chance(0.6) else r.uuid()}
        if r.chance(0.8):
            res["usage"] = {"inputTokens": r.int(2000, 150000), "outputTokens": r.int(50, 12000),
                            "cacheReadTokens": r.int(0, 90000), "cacheWriteTokens": r.int(0, 9000)}
        o.emit("result/success", ENC(res))

    def run(self, target):
        while self.o.total < target:
            self.session(target - self.o.total)


def cumulative(rng, out, n, nlines):
    """One shell call whose stdout is re-sent whole `n` times as it grows to `nlines` lines."""
    sid, req = rng.uuid(), rng.uuid()
    mcid = req + "-0-" + rng.hex(4)
    cid = "call_%s\nfc_%s" % (rng.hex(24), rng.hex(48))
    ts = 1763800000000
    cmd = "for i in $(seq 1 %d); do echo \"step $i\"; sleep 0.01; done" % nlines
    args = {"command": cmd, "workingDirectory": "/workspace/proj", "timeout": 600000,
            "toolCallId": cid, "simpleCommands": ["seq", "echo", "sleep"], "isBackground": False}
    out.emit("system/init", ENC({"type": "system", "subtype": "init", "apiKeySource": "login",
                                 "cwd": "/workspace/proj", "session_id": sid, "model": "Auto",
                                 "permissionMode": "default"}))
    out.emit("user", ENC({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "run the long job and tell me when it is done"}]}, "session_id": sid}))
    out.emit("tool_call/started", ENC({"type": "tool_call", "subtype": "started", "call_id": cid,
                                       "tool_call": {"shellToolCall": {"args": args}},
                                       "model_call_id": mcid, "session_id": sid, "timestamp_ms": ts}))
    done = 0
    chunks = []  # the JSON-escaped output so far, as pieces
    for k in range(1, n + 1):
        upto = nlines * k // n
        if upto > done:
            chunks.append("\\n".join("step %d" % i for i in range(done + 1, upto + 1)) + "\\n")
            done = upto
        ts += rng.int(5, 50)
        so = "".join(chunks)
        last = k == n
        sub = "completed" if last else "progress"
        body = ('"command":%s,"workingDirectory":"/workspace/proj",%s"stdout":"%s","stderr":"",'
                '"executionTime":%d,"interleavedOutput":"%s"'
                % (ENC(cmd), '"exitCode":0,"signal":"",' if last else "", so, ts - 1763800000000, so))
        line = ('{"type":"tool_call","subtype":"%s","call_id":%s,"tool_call":{"shellToolCall":{"args":%s,'
                '"result":{"success":{%s},"isBackground":false}}},"model_call_id":"%s","session_id":"%s",'
                '"timestamp_ms":%d}' % (sub, ENC(cid), ENC(args), body, mcid, sid, ts))
        out.emit("tool_call/" + sub, line)
    final = "The job printed %d lines and exited with status 0." % nlines
    head = '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":'
    out.emit("assistant/final recap", head + ENC(final) + '}]},"session_id":"%s"}' % sid)
    out.emit("result/success", ENC({"type": "result", "subtype": "success", "duration_ms": ts - 1763800000000,
                                    "duration_api_ms": ts - 1763800000000, "is_error": False,
                                    "result": final, "session_id": sid, "request_id": req}))


def shell_deltas(rng, out, n, kib):
    """cstream events: one shell call streaming `n` shell_output_delta events of `kib` KiB of text."""
    size = kib * 1024
    sid = "bench-" + rng.uuid()
    cid = "call_" + rng.hex(24)
    header_len = len("@@ chunk 0000000\n")
    bodies = []
    pool = SHELL_PROFILES[0][1] + SHELL_PROFILES[1][1] + SHELL_PROFILES[2][1]
    m = Mixed(rng, out)
    for _ in range(16):
        text = m.render(pool, size // 30 + 64).encode("utf-8")[: size - header_len]
        while True:  # cut on a character boundary, then pad to the exact size
            try:
                s = text.decode("utf-8")
                break
            except UnicodeDecodeError:
                text = text[:-1]
        s += " " * (size - header_len - len(s.encode("utf-8")))
        bodies.append(ENC(s)[1:-1].encode("utf-8"))
    ts = 1763800000000
    cmd = "cargo test --all 2>&1 | tee test.log"
    out.emit("session_started", ENC({"type": "session_started", "sessionId": sid, "ts": ts,
                                     "dialect": "cursor", "schemaVersion": 1, "model": "Auto",
                                     "cwd": "/workspace/proj"}))
    out.emit("tool_call_started", ENC({"type": "tool_call_started", "sessionId": sid, "ts": ts + 1,
                                       "callId": cid, "toolName": "shell", "args": {"command": cmd},
                                       "command": cmd, "cwd": "/workspace/proj"}))
    pre = ('{"type":"shell_output_delta","sessionId":"%s","ts":' % sid).encode()
    mid_out = (',"callId":"%s","stream":"stdout","text":"@@ chunk ' % cid).encode()
    mid_err = (',"callId":"%s","stream":"stderr","text":"@@ chunk ' % cid).encode()
    for i in range(n):
        ts += rng.int(1, 20)
        line = b"".join([pre, str(ts).encode(), mid_err if rng.chance(0.1) else mid_out,
                         b"%07d\\n" % i, rng.pick(bodies), b'"}\n'])
        out.raw("shell_output_delta", line, 1, len(line) - 1)
    out.emit("tool_call_completed", ENC({"type": "tool_call_completed", "sessionId": sid, "ts": ts + 5,
                                         "callId": cid, "toolName": "shell", "ok": True, "result": None,
                                         "durationMs": ts + 4 - 1763800000000, "exitCode": 0}))
    out.emit("result", ENC({"type": "result", "sessionId": sid, "ts": ts + 9, "ok": True,
                            "durationMs": ts + 9 - 1763800000000}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=10.0, help="mixed mode: size in MiB (default 10)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--cumulative-shell", type=int, metavar="N", default=0,
                    help="cumulative mode: re-send one shell call's output N times")
    ap.add_argument("--cumulative-lines", type=int, metavar="L", default=35000,
                    help="cumulative mode: final output lines (default 35000)")
    ap.add_argument("--shell-deltas", type=int, metavar="N", default=0,
                    help="events mode: N shell_output_delta events of --delta-kb each")
    ap.add_argument("--delta-kb", type=int, metavar="K", default=16,
                    help="events mode: KiB of text per event (default 16)")
    ap.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    ap.add_argument("--stats", action="store_true", help="print the composition on stderr")
    a = ap.parse_args()
    if a.cumulative_shell and a.shell_deltas:
        ap.error("choose one of --cumulative-shell and --shell-deltas")

    f = open(a.output, "wb") if a.output else sys.stdout.buffer
    try:
        out = Out(f, a.stats)
        rng = Rng(a.seed)
        sessions = 1
        if a.cumulative_shell > 0:
            cumulative(rng, out, a.cumulative_shell, a.cumulative_lines)
        elif a.shell_deltas > 0:
            shell_deltas(rng, out, a.shell_deltas, a.delta_kb)
        else:
            m = Mixed(rng, out)
            m.run(int(a.mb * 1024 * 1024))
            sessions = m.sessions
        f.flush()
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away: not an error worth a traceback
        return 1
    finally:
        if a.output:
            f.close()
    if a.stats:
        e = sys.stderr.write
        e("%-40s %10s %14s %7s %9s\n" % ("kind", "events", "bytes", "share", "avg B"))
        for k, (c, b) in sorted(out.stats.items(), key=lambda kv: -kv[1][1]):
            e("%-40s %10d %14d %6.1f%% %9d\n" % (k, c, b, 100.0 * b / max(out.total, 1), b // max(c, 1)))
        e("%-40s %10d %14d\n" % ("total", out.lines, out.total))
        e("sessions %d, longest line %d bytes, md5 %s\n" % (sessions, out.longest, out.md5.hexdigest()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
