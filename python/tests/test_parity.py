"""The package writes what the command line writes: every fixture, every
format, every kind of source; its events are the `--to events` lines."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import cstream
from conftest import cli, fixture_flags, flags_to_options

# The chat formats stamp a creation time when the session has none.
CREATED = 1_700_000_000


def warning_lines(stderr: bytes) -> list[str]:
    """The command line's warnings, as `CstreamWarning`s print them."""
    prefix = "cstream: warning: "
    return [
        line[len(prefix):]
        for line in stderr.decode().splitlines()
        if line.startswith(prefix) and " not shown (" not in line
    ]


def test_convert_is_the_command_line_in_every_format(fixture_path: Path) -> None:
    flags = fixture_flags(fixture_path)
    options = flags_to_options(flags)
    for fmt in cstream.FORMATS:
        want = cli(["--to", fmt, "--created", str(CREATED), *flags, str(fixture_path)])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = cstream.convert(fixture_path, to=fmt, created=CREATED, **options)
        assert got == want.stdout, f"--to {fmt}"
        shown = [str(w.message) for w in caught if issubclass(w.category, cstream.CstreamWarning)]
        expected = warning_lines(want.stderr)
        # Records not understood: the package warns of each at its line,
        # the command line says how many of each type at the end
        # (docs/dialects.md#drift). Their numbers agree.
        said = [w for w in shown if w.endswith("reader does not understand (kept as an unknown event)")]
        shown = [w for w in shown if w not in said]
        totals = [w for w in expected if " not understood (kept as unknown events; first at " in w]
        expected = [w for w in expected if w not in totals]
        if len(caught) < 20:
            counted = sum(int(t.split(": ")[1].split(" ")[0]) for t in totals)
            assert len(said) == counted, f"--to {fmt}"
        if len(expected) < 20:
            assert shown == expected, f"--to {fmt}"
        # The same run into a file object reports the command line's exit status.
        sink = io.BytesIO()
        report = cstream.convert(
            str(fixture_path), to=fmt, created=CREATED, out=sink, errors="ignore", **options
        )
        assert sink.getvalue() == want.stdout, f"--to {fmt}, out=file object"
        assert report.exit_code == want.returncode, f"--to {fmt}"


def test_events_are_the_event_lines(fixture_path: Path) -> None:
    flags = fixture_flags(fixture_path)
    want = cli(["--to", "events", *flags, str(fixture_path)])
    lines = [json.loads(line) for line in want.stdout.decode().split("\n")[:-1]]
    it = cstream.events(fixture_path, errors="ignore", **flags_to_options(flags))
    assert it.report is None
    got = list(it)
    assert got == lines
    assert it.report is not None
    assert it.report.exit_code == want.returncode


def test_bytes_and_file_objects_are_standard_input(fixture_path: Path) -> None:
    """Bytes and a file object carry no path: they read as the command
    line reads its standard input (a saved session's side files are not
    found)."""
    # Pinned: a session without a time of its own is stamped with the clock,
    # which may tick between the command line's run and the package's.
    flags = ["--created", str(CREATED), *fixture_flags(fixture_path)]
    options = {**flags_to_options(flags[2:]), "created": CREATED}
    data = fixture_path.read_bytes()
    want = cli(["--to", "documents", *flags], stdin=fixture_path)
    assert cstream.convert(data, errors="ignore", **options) == want.stdout
    assert cstream.convert(bytearray(data), errors="ignore", **options) == want.stdout
    # A small read size on purpose: records cross many read() calls.
    class Trickle(io.RawIOBase):
        def __init__(self, b: bytes) -> None:
            self.f = io.BytesIO(b)

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            return self.f.read(min(n, 7) if n >= 0 else 7)

    # And one that gives more than it is asked for, which must lose nothing.
    class Generous(Trickle):
        def read(self, n: int = -1) -> bytes:
            return self.f.read(n + 5 if n >= 0 else -1)

    assert cstream.convert(Trickle(data), errors="ignore", **options) == want.stdout
    assert cstream.convert(Generous(data), errors="ignore", **options) == want.stdout
    events = list(cstream.events(Trickle(data), errors="ignore", **options))
    lines = cli(["--to", "events", *flags], stdin=fixture_path).stdout.decode().split("\n")[:-1]
    assert events == [json.loads(line) for line in lines]


def test_the_schemas_are_the_command_lines() -> None:
    for name in ("events", "documents"):
        assert cstream.schema(name) == json.loads(cli(["--schema", name]).stdout)
