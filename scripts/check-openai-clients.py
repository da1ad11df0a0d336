#!/usr/bin/env python3
"""Optional check of `--to openai-sse` / `--to openai-json` against real clients.

Not part of CI. Converts agent streams with cstream, serves each result on a
local HTTP server (127.0.0.1, a free port) as an OpenAI-compatible
`/v1/chat/completions` endpoint (SSE for `stream: true`, the JSON object
otherwise), and asks real clients to read it:

  * openai-python (`pip install openai`), streaming and non-streaming;
  * the Vercel AI SDK (`npm install ai @ai-sdk/openai-compatible`), through
    scripts/check-openai-clients.mjs, when node and the packages are found
    (CSTREAM_NODE_MODULES names the folder that holds node_modules; default:
    the current directory).

Each client's rebuilt content, reasoning, tool calls, finish reason, usage or
error is printed, and the content is compared with what cstream's own events
say the agent wrote. A client that is not installed is skipped. Exit status 1
on a mismatch.

Usage: scripts/check-openai-clients.py [--cstream PATH] [CAPTURE.jsonl ...]
(default captures: ../shared/corpus/cursor-agent/*.jsonl and the repository's
fixtures/cursor/*.jsonl)
"""

import argparse
import glob
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Served:
    """What the server answers with (set before each client call)."""

    sse = b""
    json = b""


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            # One record per write, as a live proxy would send them.
            for rec in Served.sse.split(b"\n\n"):
                if rec:
                    self.wfile.write(rec + b"\n\n")
                    self.wfile.flush()
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(Served.json)))
            self.end_headers()
            self.wfile.write(Served.json)


def cstream(binary, args, path):
    r = subprocess.run([binary, *args, path], capture_output=True)
    return r.stdout


def expected_sessions(binary, path):
    """Per session: (text the events carry, result text or None, ok)."""
    out = []
    for line in cstream(binary, ["--to", "events"], path).decode().splitlines():
        e = json.loads(line)
        if not out or out[-1]["id"] != e["sessionId"] or e["type"] == "session_started":
            out.append({"id": e["sessionId"], "text": "", "result": None, "ok": False})
        if e["type"] in ("text_delta", "assistant_message"):
            out[-1]["text"] += e["text"]
        if e["type"] == "result":
            out[-1]["result"] = e.get("text")
            out[-1]["ok"] = e["ok"]
    return out


def first_stream(sse):
    """The first SSE stream of a multi-session output (what a client reads)."""
    end = sse.find(b"data: [DONE]\n\n")
    return sse if end < 0 else sse[: end + len(b"data: [DONE]\n\n")]


def short(s, n=70):
    s = json.dumps(s, ensure_ascii=False)
    return s if len(s) <= n else s[: n - 1] + "…\""


def check_openai_python(base, want_text, calls):
    try:
        import openai
    except ImportError:
        return None
    client = openai.OpenAI(base_url=base, api_key="x", max_retries=0)
    res = {"client": f"openai-python {openai.__version__}"}
    try:
        stream = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "hi"}], stream=True,
            stream_options={"include_usage": True},
        )
        content, reasoning, finish, usage, tcs = "", "", None, None, {}
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage.model_dump(exclude_none=True)
            for ch in chunk.choices:
                d = ch.delta
                content += d.content or ""
                reasoning += (d.model_extra or {}).get("reasoning_content") or ""
                for tc in d.tool_calls or []:
                    slot = tcs.setdefault(tc.index, {"id": None, "name": None, "args": ""})
                    slot["id"] = tc.id or slot["id"]
                    if tc.function:
                        slot["name"] = tc.function.name or slot["name"]
                        slot["args"] += tc.function.arguments or ""
                finish = ch.finish_reason or finish
        res.update(content=content, reasoning=reasoning, finish=finish, usage=usage,
                   tool_calls=[(v["id"], v["name"], json.loads(v["args"])) for v in tcs.values()])
    except openai.APIError as e:
        res["error"] = f"{type(e).__name__}: {e.message}"
    try:
        c = client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
        if getattr(c, "error", None):
            res["json"] = f"error object: {c.error}"
        else:
            m = c.choices[0].message
            res["json"] = (f"ChatCompletion ok: content {'==' if (m.content or '') == want_text else '!='} "
                           f"stream content, finish {c.choices[0].finish_reason}, "
                           f"{len(m.tool_calls or [])} tool_calls, usage {c.usage is not None}")
    except Exception as e:  # noqa: BLE001 - report whatever the client raised
        res["json"] = f"{type(e).__name__}: {e}"
    return res


def check_ai_sdk(base, calls):
    node = shutil.which("node")
    mods = os.path.join(os.environ.get("CSTREAM_NODE_MODULES", os.getcwd()), "node_modules")
    if not node or not os.path.isdir(os.path.join(mods, "@ai-sdk", "openai-compatible")):
        return None
    r = subprocess.run(
        [node, os.path.join(ROOT, "scripts", "check-openai-clients.mjs"), base, "calls" if calls else ""],
        capture_output=True, text=True, env={**os.environ, "CSTREAM_NODE_MODULES": os.path.dirname(mods)},
    )
    if r.returncode != 0:
        return {"client": "ai-sdk", "error": f"node failed: {r.stderr.strip()[-400:]}"}
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cstream", default=os.path.join(ROOT, "target", "release", "cstream"))
    ap.add_argument("captures", nargs="*")
    a = ap.parse_args()
    if not os.path.exists(a.cstream):
        a.cstream = os.path.join(ROOT, "target", "debug", "cstream")
    if not os.path.exists(a.cstream):
        sys.exit("build cstream first (cargo build), or pass --cstream")
    files = a.captures or sorted(
        glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "cursor-agent", "*.jsonl"))
        + glob.glob(os.path.join(ROOT, "fixtures", "cursor", "*.jsonl")))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    bad = 0
    ran = set()
    for path in files:
        sessions = expected_sessions(a.cstream, path)
        first = sessions[0] if sessions else {"text": "", "result": None, "ok": False}
        for mode in ("reasoning", "calls"):
            flags = ["--include-usage", "--tool-calls", mode]
            Served.sse = first_stream(cstream(a.cstream, ["--to", "openai-sse", *flags], path))
            Served.json = cstream(a.cstream, ["--to", "openai-json", "-c", "--tool-calls", mode],
                                  path).split(b"\n")[0]
            print(f"== {os.path.basename(path)}  --tool-calls {mode}")
            for res in (check_openai_python(base, first["text"], mode == "calls"),
                        check_ai_sdk(base, mode == "calls")):
                if res is None:
                    continue
                ran.add(res["client"])
                print(f"   {res['client']}:")
                for k in ("content", "reasoning", "tool_calls", "finish", "usage", "error", "json"):
                    if res.get(k) not in (None, "", []):
                        v = res[k]
                        if k == "tool_calls":
                            v = ", ".join(f"{name}({short(json.dumps(args), 40)})" for _, name, args in v)
                        elif isinstance(v, str):
                            v = short(v)
                        print(f"     {k}: {v}")
                # A session that failed must make the client report an error;
                # one that succeeded must give back exactly the agent's text.
                if first["ok"]:
                    if res.get("error") or res.get("content") != first["text"]:
                        print("     MISMATCH: content differs from the agent's text")
                        bad += 1
                elif not res.get("error"):
                    print("     MISMATCH: a failed or cut-off session raised no error")
                    bad += 1
    srv.shutdown()
    if not ran:
        print("no client installed (pip install openai; npm install ai @ai-sdk/openai-compatible): skipped")
        return 0
    print(f"clients: {', '.join(sorted(ran))}; mismatches: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
