#!/usr/bin/env python3
"""Conformance of `--to anthropic-sse|anthropic-json|openai-responses|openai-responses-json`
with the official Python clients, at the versions pinned in
scripts/requirements-clients.txt (.ci/run installs them into a venv and runs this).

For every fixture (with its .args) and every capture under ../shared/corpus, in
`--tool-calls reasoning` and `calls`, cstream converts the input; each session's
output is served on 127.0.0.1 (a free port) as `/v1/messages` or `/v1/responses`,
whole and trickled a few bytes per write, and read by:

  * anthropic-python: `messages.stream()` with `get_final_message()` (the SDK's
    accumulator), whole and trickled; `messages.create()` for the JSON form;
  * openai-python: `responses.create(stream=True)` (raw events, whole),
    `responses.stream()` with `get_final_response()` (the accumulator, whole and
    trickled); `responses.create()` for the JSON form.

Every record of every stream is first validated, strictly, against the SDKs'
typed models (the clients themselves build events with `construct()`, which
checks nothing): each Anthropic event against the member of anthropic-python's
`RawMessageStreamEvent` its `type` names (`ping` as the API writes it, `error`
as `ErrorResponse`), each Responses event against the member of openai-python's
`ResponseStreamEvent`, and the whole forms against `Message`/`ErrorResponse`
and `Response`: no coercion, every required field present, no field the model
does not declare.

What each client rebuilds (text, thinking/reasoning, tool calls with parsed
arguments, stop reason or status, usage) must equal what cstream's own stream
says, and the text must equal the text of cstream's `--to events` for the
session. A failed or cut-off session must make each client report it: the
anthropic client raises, the Responses stream ends in `response.failed` (and
the accumulator raises for want of `response.completed`). Any exception
elsewhere, or any difference, is a failure: exit status 1.

With `--ai-sdk DIR` (the folder where `npm ci` installed scripts/ai-sdk/'s
package.json and package-lock.json; .ci/run uses target/ai-sdk), the same
sessions are also read by the AI SDK (`ai`'s `streamText`, whole and trickled,
and `generateText` on the JSON form) through `@ai-sdk/anthropic` and
`@ai-sdk/openai`'s Responses model (`provider.responses(...)`), one Node
process (scripts/ai-sdk/read.mjs) answering for the whole run. Its text parts,
reasoning, tool calls (their parsed input; the calls' tools are declared,
without `execute`), finish reason and usage must equal the stream's own; a
failed session must come out as an error.

Usage: scripts/check-wire-clients.py [--cstream PATH] [--ai-sdk DIR] [-v] [INPUT.jsonl ...]
"""

import argparse
import glob
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import typing

import anthropic
import openai
import pydantic
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from openai.types.responses import Response, ResponseStreamEvent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRICKLE = 5  # bytes per write when trickling


class Served:
    body = b""
    status = 200
    content_type = "text/event-stream"
    trickle = False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(Served.status)
        self.send_header("Content-Type", Served.content_type)
        self.send_header("Content-Length", str(len(Served.body)))
        self.end_headers()
        b = Served.body
        if Served.trickle:
            for i in range(0, len(b), TRICKLE):
                self.wfile.write(b[i : i + TRICKLE])
                self.wfile.flush()
        else:
            self.wfile.write(b)


def serve(body, content_type, status=200, trickle=False):
    Served.body, Served.content_type, Served.status, Served.trickle = body, content_type, status, trickle


def run(binary, args, path):
    r = subprocess.run([binary, *args, path], capture_output=True, timeout=60)
    return r.stdout


def is_storage_tree(d):
    """OpenCode's JSON storage directory (before 1.2): one input, read whole."""
    return os.path.isdir(os.path.join(d, "session")) and os.path.isdir(os.path.join(d, "message"))


def in_storage_tree(path):
    d = os.path.dirname(path)
    while d and d != os.path.dirname(d):
        if is_storage_tree(d):
            return True
        d = os.path.dirname(d)
    return False


def storage_trees(root):
    return sorted(d for d, _, _ in os.walk(root) if is_storage_tree(d))


def args_of(path):
    a = os.path.splitext(path)[0] + ".args"
    return open(a).read().split() if os.path.exists(a) else []


def paragraphs(texts):
    """Texts joined so that a blank line separates each from the next: how
    the chat formats join an answer's turns, and how a reader joins blocks."""
    out = ""
    for t in texts:
        if not t:
            continue
        if out:
            nl = len(out) - len(out.rstrip("\n"))
            out += "\n\n"[min(nl, 2):]
        out += t
    return out


# Events that end a turn of the answer's text.
BREAKS = {"tool_call_started", "tool_call_completed", "tool_call", "thinking", "thinking_delta",
          "thinking_completed", "user_message", "turn_ended", "error"}


def event_sessions(binary, path, extra):
    """Per session: the text cstream's own events carry, its turns joined."""
    out = []
    brk = False
    # Split at "\n" only: str.splitlines() also splits at U+2028, which JSON
    # strings may carry raw.
    for line in run(binary, ["--to", "events", *extra], path).decode().split("\n"):
        if not line:
            continue
        e = json.loads(line)
        if not out or out[-1]["id"] != e["sessionId"] or e["type"] == "session_started":
            out.append({"id": e["sessionId"], "turns": []})
            brk = False
        turns = out[-1]["turns"]
        if e["type"] in ("text_delta", "assistant_message"):
            if not turns or brk:
                turns.append("")
            brk = False
            turns[-1] += e["text"]
        elif e["type"] in BREAKS:
            brk = True
    for s in out:
        s["text"] = paragraphs(s.pop("turns"))
    return out


def split_streams(sse, first_event):
    """One SSE stream per session: a new one starts at `first_event`."""
    mark = b"event: " + first_event.encode() + b"\n"
    parts, start = [], 0
    while True:
        nxt = sse.find(mark, start + 1)
        if nxt < 0:
            parts.append(sse[start:])
            return [p for p in parts if p]
        parts.append(sse[start:nxt])
        start = nxt


def records(sse):
    """(event, data) pairs; every record must name its event."""
    out = []
    for rec in sse.decode().split("\n\n"):
        if not rec:
            continue
        head, data = rec.split("\n", 1)
        assert head.startswith("event: ") and data.startswith("data: "), rec[:80]
        assert "[DONE]" not in data, "[DONE] in the stream"
        out.append((head[7:], json.loads(data[6:])))
    return out


# ------------------------------------------------------------------ typed models


def by_type(union):
    """The members of an SDK event union by their `type` literal. The clients
    build stream events with `construct()`, which checks nothing, so a missing
    required field reaches the application unnoticed; the check validates each
    event against the model its `type` names instead (a precise error, where
    validating against the whole union lists every member's)."""
    out = {}
    for cls in typing.get_args(typing.get_args(union)[0]):
        for name in typing.get_args(cls.model_fields["type"].annotation):
            out[name] = cls
    return out


ANTHROPIC_EVENTS = by_type(RawMessageStreamEvent)
RESPONSES_EVENTS = by_type(ResponseStreamEvent)


def unknown_fields(m, at="$"):
    """Fields a model was given that it does not declare (the SDK models keep
    them as extras): a misspelt or misplaced field validates otherwise."""
    out = []
    if isinstance(m, pydantic.BaseModel):
        out += [f"{at}.{k}" for k in (m.model_extra or {})]
        for k in type(m).model_fields:
            out += unknown_fields(getattr(m, k), f"{at}.{k}")
    elif isinstance(m, (list, tuple)):
        for i, v in enumerate(m):
            out += unknown_fields(v, f"{at}[{i}]")
    return out


def why_rejected(e):
    """A ValidationError's errors without those of the union members whose
    `type` is not the data's: pydantic tries every member of a nested union
    and reports each, which buries the one error that matters."""
    errs = e.errors()
    wrong = [err["loc"][:-1] for err in errs
             if err["type"] == "literal_error" and err["loc"] and err["loc"][-1] == "type"]
    keep = [err for err in errs
            if not any(len(w) > 0 and err["loc"][:len(w)] == w for w in wrong)] or errs
    return "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']} (got {err.get('input')!r:.80})"
                     for err in keep[:5])


def typed(model, data, what):
    """`data` validated strictly against `model` (no coercion, every required
    field present, no undeclared field), or AssertionError naming `what`."""
    try:
        m = model.model_validate(data, strict=True)
    except pydantic.ValidationError as e:
        raise AssertionError(f"{what} rejected by {model.__name__}: {why_rejected(e)}") from None
    extra = unknown_fields(m)
    assert not extra, f"{what}: fields {model.__name__} does not declare: {', '.join(extra)}"
    return m


def typed_event(models, name, data):
    assert data.get("type") == name, f"event {name} with type {data.get('type')!r}"
    assert name in models, f"event {name}: no such type in the SDK's stream event union"
    return typed(models[name], data, f"event {name}")


# ------------------------------------------------------------------ anthropic


def typed_anthropic(name, d):
    """An Anthropic stream record against anthropic-python's models:
    `RawMessageStreamEvent`'s members; `ping` (outside the union, skipped by
    the SDK) as the API sends it; `error` as the SDK's `ErrorResponse`."""
    if name == "ping":
        assert d == {"type": "ping"}, f"ping {d}"
    elif name == "error":
        typed(ErrorResponse, d, "event error")
    else:
        typed_event(ANTHROPIC_EVENTS, name, d)


def own_anthropic(sse):
    """What cstream's own Messages stream says."""
    r = {"text": "", "thinking": "", "calls": [], "stop": None, "usage": None, "error": None}
    blocks = {}
    texts = []
    for name, d in records(sse):
        typed_anthropic(name, d)
        if name == "content_block_start":
            blocks[d["index"]] = dict(d["content_block"], _json="")
        elif name == "content_block_delta":
            b, dl = blocks[d["index"]], d["delta"]
            if dl["type"] == "text_delta":
                b["text"] += dl["text"]
            elif dl["type"] == "thinking_delta":
                r["thinking"] += dl["thinking"]
            elif dl["type"] == "input_json_delta":
                b["_json"] += dl["partial_json"]
        elif name == "content_block_stop":
            b = blocks[d["index"]]
            if b["type"] == "text":
                texts.append(b["text"])
            if b["type"] == "tool_use":
                r["calls"].append((b["id"], b["name"], json.loads(b["_json"])))
        elif name == "message_delta":
            r["stop"] = d["delta"]["stop_reason"]
            u = d["usage"]
            r["usage"] = (u["input_tokens"], u["output_tokens"])
            # The AI SDK's input count includes the cache reads and writes.
            r["input_total"] = u["input_tokens"] + u.get("cache_read_input_tokens", 0) \
                + u.get("cache_creation_input_tokens", 0)
        elif name == "error":
            r["error"] = d["error"]["message"]
    r["text"] = paragraphs(texts)
    return r


def from_message(m):
    r = {"text": "", "thinking": "", "calls": [], "stop": m.stop_reason,
         "usage": (m.usage.input_tokens, m.usage.output_tokens), "error": None}
    r["text"] = paragraphs(b.text for b in m.content if b.type == "text")
    for b in m.content:
        if b.type == "thinking":
            r["thinking"] += b.thinking
        elif b.type == "tool_use":
            r["calls"].append((b.id, b.name, b.input))
    return r


def check_anthropic(client, sse, whole_json):
    """Results per way of reading: (label, rebuilt or error string)."""
    out = []
    for trickle in (False, True):
        serve(sse, "text/event-stream", trickle=trickle)
        label = "messages.stream" + (" trickled" if trickle else "")
        try:
            with client.messages.stream(model="x", max_tokens=1, messages=[{"role": "user", "content": "hi"}]) as s:
                for _ in s:
                    pass
                out.append((label, from_message(s.get_final_message())))
        except anthropic.APIStatusError as e:
            out.append((label, {"raised": e.body["error"]["message"] if isinstance(e.body, dict) else str(e)}))
    v = json.loads(whole_json)
    typed(ErrorResponse if v.get("type") == "error" else Message, v, "anthropic-json")
    serve(whole_json, "application/json", status=500 if v.get("type") == "error" else 200)
    try:
        m = client.messages.create(model="x", max_tokens=1, messages=[{"role": "user", "content": "hi"}])
        out.append(("messages.create", from_message(m)))
    except anthropic.APIStatusError as e:
        out.append(("messages.create", {"raised": e.body["error"]["message"]}))
    return out


# ------------------------------------------------------------------ responses


def own_responses(sse):
    r = {"text": "", "thinking": "", "calls": [], "stop": None, "usage": None, "error": None}
    texts = {}
    for name, d in records(sse):
        typed_event(RESPONSES_EVENTS, name, d)
        if name == "response.output_text.delta":
            texts[d["item_id"]] = texts.get(d["item_id"], "") + d["delta"]
        elif name == "response.reasoning_summary_text.delta":
            r["thinking"] += d["delta"]
        elif name == "response.output_item.done" and d["item"]["type"] == "function_call":
            it = d["item"]
            r["calls"].append((it["call_id"], it["name"], json.loads(it["arguments"])))
        elif name in ("response.completed", "response.failed"):
            resp = d["response"]
            r["stop"] = resp["status"]
            u = resp.get("usage")
            r["usage"] = (u["input_tokens"], u["output_tokens"]) if u else None
            r["error"] = (resp.get("error") or {}).get("message")
    r["text"] = paragraphs(texts.values())
    return r


def from_response(resp):
    r = {"text": "", "thinking": "", "calls": [], "stop": resp.status,
         "usage": (resp.usage.input_tokens, resp.usage.output_tokens) if resp.usage else None,
         "error": resp.error.message if resp.error else None}
    texts = ["".join(c.text for c in it.content if c.type == "output_text")
             for it in resp.output if it.type == "message"]
    r["text"] = paragraphs(texts)
    for it in resp.output:
        if it.type == "reasoning":
            r["thinking"] += "".join(s.text for s in it.summary)
        elif it.type == "function_call":
            r["calls"].append((it.call_id, it.name, json.loads(it.arguments)))
    if resp.status == "completed":
        assert resp.output_text == "".join(texts), "output_text differs from the message items"
    return r


def from_events(events):
    """Rebuild from raw `responses.create(stream=True)` events (typed models)."""
    r = {"text": "", "thinking": "", "calls": [], "stop": None, "usage": None, "error": None}
    texts = {}
    for i, ev in enumerate(events):
        assert ev.sequence_number == i, f"sequence_number {ev.sequence_number} at {i}"
        if ev.type == "response.output_text.delta":
            texts[ev.item_id] = texts.get(ev.item_id, "") + ev.delta
        elif ev.type == "response.reasoning_summary_text.delta":
            r["thinking"] += ev.delta
        elif ev.type == "response.output_item.done" and ev.item.type == "function_call":
            r["calls"].append((ev.item.call_id, ev.item.name, json.loads(ev.item.arguments)))
        elif ev.type == "error":
            # The stream's error event comes right before response.failed.
            assert events[i + 1].type == "response.failed", "error not followed by response.failed"
        elif ev.type in ("response.completed", "response.failed"):
            final = from_response(ev.response)
            r["stop"], r["usage"], r["error"] = final["stop"], final["usage"], final["error"]
    r["text"] = paragraphs(texts.values())
    return r


def check_responses(client, sse, whole_json):
    out = []
    serve(sse, "text/event-stream")
    events = list(client.responses.create(model="x", input="hi", stream=True))
    out.append(("responses.create(stream=True)", from_events(events)))
    for trickle in (False, True):
        serve(sse, "text/event-stream", trickle=trickle)
        label = "responses.stream" + (" trickled" if trickle else "")
        with client.responses.stream(model="x", input="hi") as s:
            evs = list(s)
            try:
                out.append((label, from_response(s.get_final_response())))
            except RuntimeError as e:
                failed = [ev for ev in evs if ev.type == "response.failed"]
                if not failed or "response.completed" not in str(e):
                    raise
                out.append((label, {"raised": failed[0].response.error.message}))
    typed(Response, json.loads(whole_json), "openai-responses-json")
    serve(whole_json, "application/json")
    out.append(("responses.create", from_response(client.responses.create(model="x", input="hi"))))
    return out


# ------------------------------------------------------------------ AI SDK


class AiSdk:
    """The Node process that reads for the AI SDK (scripts/ai-sdk/read.mjs)."""

    def __init__(self, modules, base):
        self.base = base
        self.p = subprocess.Popen(["node", os.path.join(ROOT, "scripts", "ai-sdk", "read.mjs"), modules],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.versions = self.answer()["versions"]

    def answer(self):
        """The next answer line (anything else Node printed is shown)."""
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the AI SDK reader exited")
            if line.startswith("answer: "):
                return json.loads(line[len("answer: "):])
            print("ai-sdk: " + line.rstrip(), file=sys.stderr)

    def read(self, family, how, tools):
        self.p.stdin.write(json.dumps({"family": family, "base": self.base, "how": how,
                                       "tools": sorted(tools)}) + "\n")
        self.p.stdin.flush()
        return self.answer()

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


# What the AI SDK's finish reason is for each of the stream's own stop values.
AI_FINISH = {"anthropic": {"end_turn": "stop", "tool_use": "tool-calls"},
             "responses": {"completed": "stop"}}


def as_doubles(usage):
    """Counts as JavaScript holds them: a count past 2**53 (the regression
    fixtures' u64/i64 extremes) reaches a JS client as the nearest double, so
    that is all it can be compared on; the Python clients above compare exactly."""
    return None if usage is None else tuple(float(n) for n in usage)


def ai_sdk_reads(sdk, family, own, sse, whole_json):
    """(label, rebuilt) per AI SDK read, in the stream's own terms."""
    tools = {c[1] for c in own["calls"]}
    out = []
    for label, body, ctype, status, trickle, how in (
            ("ai-sdk streamText", sse, "text/event-stream", 200, False, "stream"),
            ("ai-sdk streamText trickled", sse, "text/event-stream", 200, True, "stream"),
            ("ai-sdk generateText", whole_json, "application/json",
             500 if family == "anthropic" and json.loads(whole_json).get("type") == "error" else 200,
             False, "generate")):
        serve(body, ctype, status=status, trickle=trickle)
        r = sdk.read(family, how, tools)
        if "crashed" in r:
            raise RuntimeError(f"{label}: {r['crashed']}")
        if r["error"] is not None or r["finish"] == "error":
            out.append((label, {"raised": r["error"] or "finish reason error"}))
            continue
        want_finish = AI_FINISH[family].get(own["stop"])
        if family == "responses" and own["calls"]:
            want_finish = "tool-calls"  # any function call, as the provider maps it
        u = r["usage"]
        usage = None
        if u is not None:
            usage = (u["input"], u["output"])
        expect_usage = own["usage"]
        if family == "anthropic" and own["usage"] is not None:
            expect_usage = (own["input_total"], own["usage"][1])
        out.append((label, {
            "text": paragraphs(r["text"]),
            "thinking": r["reasoning"],
            "calls": [tuple(c) for c in r["calls"]],
            # Compared in the stream's own terms when the finish reason is the
            # one the provider gives for it.
            "stop": own["stop"] if r["finish"] == want_finish else f"ai-sdk finish {r['finish']}",
            "usage": own["usage"] if as_doubles(usage) == as_doubles(expect_usage)
            else f"ai-sdk usage {usage}",
        }))
    return out


# ------------------------------------------------------------------ driver


FAMILIES = {
    # name: (stream format, JSON format, first event, own parser, client check)
    "anthropic": ("anthropic-sse", "anthropic-json", "message_start", own_anthropic, check_anthropic),
    "responses": ("openai-responses", "openai-responses-json", "response.created", own_responses,
                  check_responses),
}


def failed(own):
    return own["error"] is not None or own["stop"] == "failed"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cstream", default=os.path.join(ROOT, "target", "debug", "cstream"))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--only", choices=sorted(FAMILIES), help="check one family of formats")
    ap.add_argument("--ai-sdk", metavar="DIR",
                    help="also read with the AI SDK installed in DIR (npm ci of scripts/ai-sdk)")
    ap.add_argument("inputs", nargs="*")
    a = ap.parse_args()
    files = a.inputs or sorted(
        [f for f in glob.glob(os.path.join(ROOT, "fixtures", "**", "*.jsonl"), recursive=True)
         + glob.glob(os.path.join(ROOT, "fixtures", "**", "*.json"), recursive=True)
         if not in_storage_tree(f)]
        + storage_trees(os.path.join(ROOT, "fixtures"))
        + glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "**", "*.jsonl"), recursive=True))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    ac = anthropic.Anthropic(base_url=base, api_key="x", max_retries=0, timeout=30)
    oc = openai.OpenAI(base_url=base + "/v1", api_key="x", max_retries=0, timeout=30)
    clients = {"anthropic": ac, "responses": oc}
    sdk = AiSdk(os.path.abspath(a.ai_sdk), base) if a.ai_sdk else None
    started = time.monotonic()
    bad, reads, sessions = 0, 0, 0
    tally = {}
    for path in files:
        rel = os.path.relpath(path, ROOT)
        extra = args_of(path)
        evs = event_sessions(a.cstream, path, extra)
        for mode in ("reasoning", "calls"):
            flags = [*extra, "--tool-calls", mode]
            own_mode = "--tool-calls" in extra
            for fam, (sse_fmt, json_fmt, first, own_parse, check) in FAMILIES.items():
                if a.only and fam != a.only:
                    continue
                streams = split_streams(run(a.cstream, ["--to", sse_fmt, *flags], path), first)
                values = run(a.cstream, ["--to", json_fmt, "-c", *flags], path).splitlines()
                if len(streams) != len(values):
                    print(f"FAIL {rel} {mode} {fam}: {len(streams)} streams, {len(values)} JSON values")
                    bad += 1
                    continue
                for k, (sse, whole) in enumerate(zip(streams, values)):
                    sessions += 1
                    ctx = f"{rel} --tool-calls {mode} {fam} session {k + 1}"
                    try:
                        own = own_parse(sse)
                        got = check(clients[fam], sse, whole)
                        if sdk:
                            got += ai_sdk_reads(sdk, fam, own, sse, whole)
                    except Exception as e:  # noqa: BLE001 - any client exception fails the check
                        print(f"FAIL {ctx}: {type(e).__name__}: {e}")
                        bad += 1
                        continue
                    if (not own_mode and len(evs) == len(streams) and not failed(own)
                            and own["text"] != evs[k]["text"]):
                        print(f"FAIL {ctx}: the stream's text differs from the events' text")
                        bad += 1
                    for label, res in got:
                        reads += 1
                        key = (fam, label)
                        tally[key] = tally.get(key, 0) + 1
                        if failed(own):
                            ok = "raised" in res or res.get("stop") == "failed"
                            why = "a failed session was not reported"
                        else:
                            want = {k2: own[k2] for k2 in ("text", "thinking", "calls", "stop", "usage")}
                            have = {k2: res.get(k2) for k2 in want}
                            ok = want == have
                            why = "\n      own:    " + json.dumps(want, ensure_ascii=False)[:600] \
                                + "\n      client: " + json.dumps(have, ensure_ascii=False)[:600]
                        if not ok:
                            print(f"FAIL {ctx} [{label}]: {why}")
                            bad += 1
                        elif a.verbose:
                            print(f"ok   {ctx} [{label}]")
    srv.shutdown()
    took = time.monotonic() - started
    if sdk:
        sdk.close()
        print("AI SDK: " + ", ".join(f"{k} {v}" for k, v in sdk.versions.items()))
    print(f"anthropic {anthropic.__version__}, openai {openai.__version__}: {len(files)} inputs, "
          f"{sessions} session streams, {reads} client reads in {took:.0f} s; failures: {bad}")
    for (fam, label), n in sorted(tally.items()):
        print(f"  {fam:9} {label:32} {n}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
