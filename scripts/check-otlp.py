#!/usr/bin/env python3
"""`--to otlp-json` and `--otlp-endpoint` as their real consumers take them (CI).

1. opentelemetry-proto: every fixture's and every corpus file's output
   (../shared/corpus, required) parses, line by line, into an
   `ExportTraceServiceRequest` with `google.protobuf.json_format.Parse` (after
   turning the hex ids into the base64 that the protobuf JSON mapping reads,
   as OTLP/JSON receivers do). Each request has one root span
   (`invoke_agent …`), every parent in it, one trace id, 16- and 8-byte ids,
   no span ending before it starts; two runs give the same bytes.
2. Arize Phoenix: `phoenix serve` on a free localhost port (its database in
   target/). Phoenix's /v1/traces takes protobuf only, so cstream's JSON
   posted to it straight is refused (HTTP 415): cstream must say so, exit 4
   and still write every line. Through a relay that does what an OTLP
   collector does (JSON in, protobuf out), `cstream --otlp-endpoint` sends
   every fixture's sessions, and Phoenix's client (`phoenix.client`) reads
   back the same spans: ids, names, parents, and the roots' token totals.
3. A receiver that answers 500 is tried 5 times, then reported, exit 4,
   the output complete; a port where nothing listens, the same.

Usage: scripts/check-otlp.py [--cstream target/debug/cstream]
Exit status 1 on any mismatch (every one is printed first).
"""

import argparse
import base64
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from fixture_inputs import ROOT, inputs
PROBLEMS = []


def problem(msg):
    PROBLEMS.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def b64_ids(obj):
    """The request with hex trace and span ids as base64 (OTLP/JSON writes
    them in hex, a departure from the protobuf JSON mapping)."""
    for rs in obj.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for k in ("traceId", "spanId", "parentSpanId"):
                    if k in span:
                        span[k] = base64.b64encode(bytes.fromhex(span[k])).decode()
    return obj


def parse(line):
    req = ExportTraceServiceRequest()
    json_format.Parse(json.dumps(b64_ids(json.loads(line))), req)
    return req


def check_request(name, req):
    if len(req.resource_spans) != 1 or len(req.resource_spans[0].scope_spans) != 1:
        problem(f"{name}: not one resource and one scope")
        return
    spans = req.resource_spans[0].scope_spans[0].spans
    ids = {s.span_id for s in spans}
    if len(ids) != len(spans):
        problem(f"{name}: span ids repeat")
    roots = [s for s in spans if not s.parent_span_id]
    if len(roots) != 1 or not roots[0].name.startswith("invoke_agent"):
        problem(f"{name}: {len(roots)} roots")
    if len({s.trace_id for s in spans}) != 1:
        problem(f"{name}: several trace ids")
    for s in spans:
        if len(s.trace_id) != 16 or len(s.span_id) != 8:
            problem(f"{name}: span {s.name}: ids of {len(s.trace_id)} and {len(s.span_id)} bytes")
        if s.parent_span_id and s.parent_span_id not in ids:
            problem(f"{name}: span {s.name}: parent not in the request")
        if s.end_time_unix_nano < s.start_time_unix_nano:
            problem(f"{name}: span {s.name} ends before it starts")
        if roots and s.parent_span_id and (
            s.start_time_unix_nano < roots[0].start_time_unix_nano
            or s.end_time_unix_nano > roots[0].end_time_unix_nano
        ):
            problem(f"{name}: span {s.name} outside its root's time")


def proto_check(binary):
    files = inputs("the consumers")
    sessions = spans = 0
    for path in files:
        args = [binary, "--to", "otlp-json", "--created", "1700000000", path]
        one = subprocess.run(args, capture_output=True).stdout
        two = subprocess.run(args, capture_output=True).stdout
        name = os.path.relpath(path, ROOT)
        if one != two:
            problem(f"{name}: two runs differ")
        for i, line in enumerate(one.decode().splitlines()):
            try:
                req = parse(line)
            except Exception as e:  # noqa: BLE001 - any parse error is the finding
                problem(f"{name}:{i + 1}: opentelemetry-proto does not parse it: {e}")
                continue
            check_request(f"{name}:{i + 1}", req)
            sessions += 1
            spans += len(req.resource_spans[0].scope_spans[0].spans)
    print(f"opentelemetry-proto: {len(files)} inputs, {sessions} requests, {spans} spans parsed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(handler_cls):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def relay_to(phoenix_url):
    """A JSON-to-protobuf relay in front of Phoenix (a collector's job)."""

    class Relay(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            data = parse(body).SerializeToString()
            req = urllib.request.Request(
                phoenix_url + "/v1/traces",
                data=data,
                headers={"Content-Type": "application/x-protobuf"},
            )
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    status = r.status
            except urllib.error.HTTPError as e:
                status = e.code
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    return serve(Relay)


def expected_spans(out):
    """span id (hex) -> (name, parent hex, attributes) from cstream's lines;
    ids written twice with different contents are left out of the compare."""
    spans, clash = {}, set()
    for line in out.decode().splitlines():
        for span in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            attrs = {}
            for a in span.get("attributes", []):
                v = a["value"]
                attrs[a["key"]] = int(v["intValue"]) if "intValue" in v else next(iter(v.values()))
            got = (span["name"], span.get("parentSpanId"), attrs)
            if span["spanId"] in spans and spans[span["spanId"]] != got:
                clash.add(span["spanId"])
            spans[span["spanId"]] = got
    return spans, clash


def flat(d, prefix=""):
    out = {}
    for k, v in (d or {}).items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def phoenix_check(binary, workdir):
    from phoenix.client import Client

    port, grpc = free_port(), free_port()
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    env = dict(os.environ, PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc),
               PHOENIX_WORKING_DIR=workdir, PHOENIX_HOST="127.0.0.1",
               PHOENIX_TELEMETRY_ENABLED="false")
    phoenix_bin = os.path.join(os.path.dirname(sys.executable), "phoenix")
    log = open(os.path.join(workdir, "phoenix.log"), "wb")
    proc = subprocess.Popen([phoenix_bin, "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.time()
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2):
                    break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None or time.time() - t0 > 180:
                    sys.exit(f"phoenix serve did not start (see {workdir}/phoenix.log)")
                time.sleep(1)
        print(f"phoenix: up in {time.time() - t0:.1f}s on port {port}")

        sample = os.path.join(ROOT, "fixtures", "claude-project",
                              "rewind_parallel-results_placeholder-usage.jsonl")
        plain = subprocess.run([binary, "--to", "otlp-json", "--created", "1700000000", sample], capture_output=True)
        # Straight to Phoenix: JSON is refused (415), not retried.
        direct = subprocess.run([binary, "--to", "otlp-json", "--created", "1700000000", "--otlp-endpoint", url, sample],
                                capture_output=True)
        err = direct.stderr.decode()
        if direct.returncode == 0:
            print("phoenix: accepted OTLP/JSON straight (its /v1/traces takes JSON now)")
        elif direct.returncode != 4 or "415" not in err or direct.stdout != plain.stdout:
            problem(f"straight to phoenix: status {direct.returncode}, stderr {err!r}")
        else:
            print("phoenix: OTLP/JSON straight to it refused with 415, reported, exit 4, output whole")

        relay = relay_to(url)
        files = inputs("the consumers", corpus_too=False)
        sent = subprocess.run(
            [binary, "--to", "otlp-json", "--created", "1700000000", "--otlp-endpoint",
             f"http://127.0.0.1:{relay.server_address[1]}", *files],
            capture_output=True)
        if sent.returncode not in (0, 1):
            problem(f"sending the fixtures: status {sent.returncode}: {sent.stderr.decode()[-2000:]}")
        want, clash = expected_spans(sent.stdout)
        client = Client(base_url=url)
        got, t0 = [], time.time()
        while time.time() - t0 < 120:
            got = client.spans.get_spans(project_identifier="default", limit=len(want) + 100)
            if len(got) >= len(want):
                break
            time.sleep(2)
        by_id = {s["context"]["span_id"]: s for s in got}
        if set(by_id) != set(want):
            problem(f"phoenix has {len(by_id)} spans, cstream sent {len(want)} "
                    f"(missing {sorted(set(want) - set(by_id))[:5]})")
        tokens_sent = tokens_read = 0
        for sid, (name, parent, attrs) in want.items():
            s = by_id.get(sid)
            if s is None or sid in clash:
                continue
            if s["name"] != name:
                problem(f"span {sid}: name {s['name']!r}, sent {name!r}")
            if (s.get("parent_id") or None) != parent:
                problem(f"span {sid}: parent {s.get('parent_id')!r}, sent {parent!r}")
            if parent is None:
                back = flat(s.get("attributes"))
                for k in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
                    if k in attrs:
                        tokens_sent += attrs[k]
                        tokens_read += int(back.get(k, 0))
        if tokens_sent != tokens_read:
            problem(f"phoenix: root token totals {tokens_read}, sent {tokens_sent}")
        print(f"phoenix: {len(by_id)} spans read back of {len(want)} sent "
              f"({len(files)} fixtures, {len(clash)} ids sent twice differently), "
              f"root tokens {tokens_read} of {tokens_sent}")
        relay.shutdown()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def failing_receivers(binary):
    sample = os.path.join(ROOT, "fixtures", "cursor", "two-sessions.jsonl")
    plain = subprocess.run([binary, "--to", "otlp-json", "--created", "1700000000", sample], capture_output=True).stdout
    hits = []

    class Fail(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            hits.append(1)
            self.send_response(500)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"oops")

    srv = serve(Fail)
    down = free_port()
    for what, url, tries in (
        ("a 500 receiver", f"http://127.0.0.1:{srv.server_address[1]}", 5),
        ("a port where nothing listens", f"http://127.0.0.1:{down}", None),
    ):
        r = subprocess.run([binary, "--to", "otlp-json", "--created", "1700000000", "--otlp-endpoint", url, sample],
                           capture_output=True)
        err = r.stderr.decode()
        ok = r.returncode == 4 and r.stdout == plain and "2 of 2 sessions" in err and "5 tries" in err
        if tries is not None and len(hits) != tries:
            ok = False
        if not ok:
            problem(f"{what}: status {r.returncode}, {len(hits)} posts, stderr {err!r}")
        else:
            print(f"{what}: retried, reported, exit 4, output whole")
    srv.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cstream", default=os.path.join(ROOT, "target", "debug", "cstream"))
    ap.add_argument("--phoenix-dir", default=os.path.join(ROOT, "target", "otlp-phoenix"))
    a = ap.parse_args()
    binary = os.path.abspath(a.cstream)
    proto_check(binary)
    failing_receivers(binary)
    phoenix_check(binary, os.path.abspath(a.phoenix_dir))
    if PROBLEMS:
        print(f"{len(PROBLEMS)} problems", file=sys.stderr)
        sys.exit(1)
    print("otlp: all checks passed")


if __name__ == "__main__":
    main()
