"""What the package adds to the command line: errors as Python exceptions
and warnings carrying file and line, keyword options checked, laziness,
bounded memory, and the GIL released."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import resource
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

import cstream
from conftest import FIXTURES, cli

INIT = b'{"type":"system","subtype":"init","session_id":"s","model":"m"}\n'
TEXT = b'{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"%d"}]}}\n'
RESULT = b'{"type":"result","subtype":"success","session_id":"s","is_error":false,"result":"x"}\n'


def stream(n: int) -> bytes:
    return INIT + b"".join(TEXT % i for i in range(n)) + RESULT


def test_a_missing_file_raises_with_its_name(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    with pytest.raises(cstream.CstreamError) as e:
        cstream.convert(missing)
    assert e.value.file == str(missing)
    assert e.value.line is None
    assert "No such file" in e.value.message
    with pytest.raises(cstream.CstreamError):
        list(cstream.events(str(missing), errors="ignore"))


def test_bad_lines_warn_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(INIT + b"not json\n" + TEXT % 1 + RESULT)
    with pytest.warns(cstream.CstreamWarning) as caught:
        out = cstream.convert(path, to="events", from_="cursor")
    (w,) = [w.message for w in caught]
    assert isinstance(w, cstream.CstreamWarning)
    assert (w.file, w.line) == (str(path), 2)
    # The run went on past the bad line.
    assert b'"text":"1"' in out
    with pytest.warns(cstream.CstreamWarning):
        texts = [e.get("text") for e in cstream.events(path, from_="cursor")]
    assert "1" in texts


def test_errors_raise_stops_at_the_first_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(INIT + TEXT % 1 + b"not json\n" + TEXT % 2 + RESULT)
    with pytest.raises(cstream.CstreamError) as e:
        cstream.convert(path, to="events", from_="cursor", errors="raise")
    assert (e.value.file, e.value.line) == (str(path), 3)
    # events() yields every event before the bad line, then raises.
    seen = []
    with pytest.raises(cstream.CstreamError) as e:
        for ev in cstream.events(path, from_="cursor", errors="raise"):
            seen.append(ev)
    assert e.value.line == 3
    assert [ev.get("text") for ev in seen if ev["type"] == "text_delta"] == ["1"]


def test_errors_callable_sees_every_warning() -> None:
    got: list[cstream.CstreamWarning] = []
    data = INIT + b"".join(b"bad %d\n" % i for i in range(50)) + RESULT
    cstream.convert(data, from_="cursor", errors=got.append)
    assert [w.line for w in got] == list(range(2, 52))
    assert all(w.file == "-" for w in got)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cstream.convert(data, from_="cursor")
    # Twenty, then one saying the rest are not shown, as the command line.
    assert len(caught) == 21
    assert "not shown" in str(caught[-1].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cstream.convert(data, from_="cursor", errors="ignore")


def test_options_are_checked() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        cstream.convert(stream(1), colour=True)
    with pytest.raises(ValueError, match="to:"):
        cstream.convert(stream(1), to="yaml")
    with pytest.raises(ValueError, match="from_:"):
        cstream.convert(stream(1), from_="aider")
    with pytest.raises(ValueError, match="tool_calls:"):
        cstream.convert(stream(1), tool_calls="sometimes")
    with pytest.raises(ValueError, match="redact_patterns:"):
        cstream.convert(stream(1), redact_patterns=["("])
    with pytest.raises(ValueError, match="since:"):
        cstream.convert(stream(1), since="last tuesday")
    with pytest.raises(ValueError, match="errors:"):
        cstream.convert(stream(1), errors="loud")
    with pytest.raises(TypeError, match="src:"):
        cstream.convert(12)


def test_options_mean_what_the_flags_mean(tmp_path: Path) -> None:
    fixture = FIXTURES / "cursor" / "partial-thinking-tools-usage.jsonl"
    cases = [
        (["--to", "openai-sse", "--tool-calls", "calls", "--include-usage", "--model", "m", "--id", "x", "--created", "5"],
         dict(to="openai-sse", tool_calls="calls", include_usage=True, model="m", id="x", created=5)),
        (["--to", "openai-json", "--reasoning-field", "reasoning", "--created", "5"],
         dict(to="openai-json", reasoning_field="reasoning", created=5)),
        (["--to", "events", "--coalesce=whole"], dict(to="events", coalesce="whole")),
        (["--to", "events", "--no-dedupe", "--redact"], dict(to="events", dedupe=False, redact=True)),
        # Pinned: documents stamp the clock on a session without a time.
        (["--to", "documents", "--compact", "--created", "5"], dict(to="documents", compact=True, created=5)),
        (["--to", "markdown", "--no-redact", "--no-thinking"], dict(to="markdown", redact=False, no_thinking=True)),
        (["--to", "text", "--color", "always", "--shell-lines", "1"],
         dict(to="text", color=True, shell_lines=1)),
        (["--to", "events", "--since", "2025-06-15"], dict(to="events", since="2025-06-15")),
        (["--to", "events", "--since", "2025-06-15"],
         dict(to="events", since=dt.datetime(2025, 6, 15, tzinfo=dt.timezone.utc))),
        (["--to", "events", "--until", "2025-06-15"], dict(to="events", until=dt.date(2025, 6, 15))),
    ]
    for flags, options in cases:
        want = cli([*flags, str(fixture)])
        assert want.returncode == 0, flags
        assert cstream.convert(fixture, **options) == want.stdout, flags  # type: ignore[arg-type]


def test_events_are_lazy_and_memory_stays_bounded() -> None:
    """A generated 120 MB stream, read through a file object: the first
    event comes after little input, and the whole run adds little to the
    process's peak memory (run in a child, whose peak is its own)."""
    code = r"""
import resource, sys, cstream
INIT = b'{"type":"system","subtype":"init","session_id":"s","model":"m"}\n'
HEAD = b'{"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"'
TAIL = b'x' * 1000 + b'"}]}}\n'
class Endless:
    name = "endless.jsonl"
    def __init__(self, lines): self.left = lines; self.read_bytes = 0; self.first = True
    def read(self, n):
        if self.first:
            self.first = False; self.read_bytes += len(INIT); return INIT
        k = min(self.left, max(1, n // 1100))
        # Each text its own (the same text twice is a recap, dropped).
        chunk = b"".join(HEAD + b"%d " % (self.left - i) + TAIL for i in range(k))
        self.left -= k
        self.read_bytes += len(chunk)
        return chunk
src = Endless(120_000)
it = cstream.events(src)
next(it)
first = src.read_bytes
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n = 1 + sum(1 for _ in it)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(first, n, (after - before) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    first, n, grown_mib = map(int, out.stdout.split())
    assert n == 120_001  # session_started and one text_delta per line
    assert first < 4 * 1024 * 1024, f"{first} bytes read before the first event"
    assert grown_mib < 48, f"peak memory grew by {grown_mib} MiB over a 120 MB stream"


def test_dropping_the_iterator_stops_the_conversion() -> None:
    src = io.BytesIO(stream(200_000))
    it = cstream.events(src)
    next(it)
    del it
    # The converting thread stops at its next batch; it does not read on.
    time.sleep(0.5)
    assert src.tell() < len(src.getvalue())


def test_the_gil_is_released_while_converting() -> None:
    data = stream(400_000)
    done = threading.Event()
    ticks = 0

    def work() -> None:
        cstream.convert(data, to="events")
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
    t.join()
    # With the GIL held through the conversion, this thread would not run
    # at all until it ended.
    assert ticks > 10_000, ticks


def test_report_and_outputs(tmp_path: Path) -> None:
    failing = FIXTURES / "cursor" / "error-max-turns.jsonl"
    if not failing.exists():
        failing = next(FIXTURES.rglob("*error*.jsonl"))
    out = tmp_path / "o.json"
    report = cstream.convert(failing, out=out, created=5)
    assert out.read_bytes() == cli(["--to", "documents", "--created", "5", str(failing)]).stdout
    assert report.failed_sessions + report.incomplete_sessions >= 1
    assert report.exit_code_e == 3
    assert "Report(sessions=" in repr(report)
    assert set(cstream.FORMATS) >= {"events", "documents", "openai-sse", "anthropic-sse", "html"}
    assert "claude-project" in cstream.DIALECTS
    assert cstream.__version__


def test_schema_version_is_the_command_lines() -> None:
    # `cstream --version` prints `cstream X.Y.Z (events schema N)`.
    printed = cli(["--version"]).stdout.decode()
    found = re.search(r"\(events schema (\d+)\)", printed)
    assert found, printed
    assert isinstance(cstream.SCHEMA_VERSION, int)
    assert cstream.SCHEMA_VERSION == int(found.group(1))
    # And it is the number the events carry.
    first = next(iter(cstream.events(INIT)))
    assert first["schemaVersion"] == cstream.SCHEMA_VERSION
