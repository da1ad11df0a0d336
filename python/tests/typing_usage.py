"""Checked by `mypy --strict` in CI (not run): the stubs give each call
the type a user expects, so a wrong use fails the type check."""

from __future__ import annotations

import io

import cstream

as_bytes: bytes = cstream.convert(b"", to="events")
report: cstream.Report = cstream.convert(b"", out=io.BytesIO())
code: int = report.exit_code
for event in cstream.events("run.jsonl", errors="ignore"):
    kind: str = event["type"]
it = cstream.events(b"")
done: cstream.Report | None = it.report
schema: dict[str, object] = cstream.schema("documents")
names: list[str] = cstream.FORMATS + cstream.DIALECTS
schema_version: int = cstream.SCHEMA_VERSION
