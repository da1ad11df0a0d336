"""Read coding-agent streams and saved sessions as one event model.

``convert`` turns a stream or a saved session (cursor-agent, Claude Code,
Codex, Gemini CLI, ACP, the Cursor SDK) into any format the ``cstream``
command line writes; ``events`` yields its events one dict at a time. Both
run the same Rust library as the command line, with the GIL released, and
produce byte for byte what it writes.
"""

from __future__ import annotations

import datetime as _dt
import json as _json
import os
import warnings as _warnings
from typing import IO, Any, Callable, Dict, Optional, Union, overload

from . import _cstream
from ._cstream import DIALECTS, FORMATS, SCHEMA_VERSION, Events, Report, __version__

__all__ = [
    "convert",
    "events",
    "schema",
    "CstreamError",
    "CstreamWarning",
    "Events",
    "Report",
    "FORMATS",
    "DIALECTS",
    "SCHEMA_VERSION",
    "__version__",
]

#: What ``convert`` and ``events`` read: bytes, a path, or a binary file
#: object (anything with ``read(n)`` returning bytes).
Source = Union[bytes, bytearray, str, "os.PathLike[str]", IO[bytes]]

#: What ``errors`` takes besides a callable.
Errors = Union[str, Callable[["CstreamWarning"], object]]

# How many warnings ``errors="warn"`` shows before it only counts them, as
# the command line does per kind of warning.
_SHOWN = 20


class _Located(Exception):
    """A message about a place in the input: ``file`` names the input (a
    path, the file object's name, or ``-``) and ``line`` its 1-based line,
    or ``None``; ``str()`` says ``file:line: message``."""

    def __init__(self, message: str, file: str = "-", line: Optional[int] = None):
        self.message = message
        self.file = file
        self.line = line
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {message}")


class CstreamError(_Located):
    """The input could not be read, or (with ``errors="raise"``) a line
    that is not valid input. ``file`` names the input (a path, the file
    object's name, or ``-``) and ``line`` its 1-based line, or ``None``."""


class CstreamWarning(_Located, UserWarning):
    """A line that is not valid input, or a repair (the run goes on past
    it). Same attributes as ``CstreamError``."""


class _Warner:
    """Turns the extension's warning tuples into what ``errors`` asks for."""

    def __init__(self, errors: Errors):
        if not (callable(errors) or errors in ("warn", "raise", "ignore")):
            raise ValueError('errors: "warn", "raise", "ignore" or a callable')
        self.errors = errors
        self.shown = 0

    def __call__(self, file: str, line: Optional[int], message: str, fatal: bool) -> None:
        if fatal:
            raise CstreamError(message, file, line)
        if callable(self.errors):
            self.errors(CstreamWarning(message, file, line))
        elif self.errors == "raise":
            raise CstreamError(message, file, line)
        elif self.errors == "warn":
            self.shown += 1
            if self.shown <= _SHOWN:
                _warnings.warn(CstreamWarning(message, file, line), stacklevel=3)
            elif self.shown == _SHOWN + 1:
                _warnings.warn(
                    CstreamWarning(
                        "more warnings not shown (errors=<callable> sees them all)", file
                    ),
                    stacklevel=3,
                )


def _options(options: Dict[str, Any]) -> Dict[str, Any]:
    for key in ("since", "until"):
        value = options.get(key)
        if isinstance(value, _dt.datetime):
            if value.tzinfo is None:
                raise ValueError(f"{key}: a datetime with a time zone")
            options[key] = int(value.timestamp() * 1000)
        elif isinstance(value, _dt.date):
            options[key] = value.isoformat()
    return options


@overload
def convert(
    src: Source,
    to: str = ...,
    from_: str = ...,
    *,
    out: None = ...,
    errors: Errors = ...,
    **options: Any,
) -> bytes: ...
@overload
def convert(
    src: Source,
    to: str = ...,
    from_: str = ...,
    *,
    out: Union[str, "os.PathLike[str]", IO[bytes]],
    errors: Errors = ...,
    **options: Any,
) -> Report: ...
def convert(
    src: Source,
    to: str = "documents",
    from_: str = "auto",
    *,
    out: Union[None, str, "os.PathLike[str]", IO[bytes]] = None,
    errors: Errors = "warn",
    **options: Any,
) -> Union[bytes, Report]:
    """Convert ``src`` (bytes, a path, or a binary file object) to the format
    ``to`` names (one of ``FORMATS``), reading it as ``from_`` (``"auto"``:
    detected, or one of ``DIALECTS``).

    Returns the output as bytes, or, with ``out`` (a path or a file object
    with ``write``), writes it there and returns the ``Report``. ``errors``:
    ``"warn"`` (a ``CstreamWarning`` per bad line, the run goes on),
    ``"raise"`` (stop at the first bad line with ``CstreamError``, as
    ``--strict``), ``"ignore"``, or a callable given each ``CstreamWarning``.
    An input that cannot be read raises ``CstreamError`` whatever ``errors``
    says. The other options are the command line's flags (docs/python.md).
    """
    warner = _Warner(errors)
    output, report, warnings = _cstream._convert(
        src, out, to, from_, errors == "raise", _options(options)
    )
    for w in warnings:
        warner(*w)
    if out is None:
        assert output is not None
        return output
    return report


def events(
    src: Source, from_: str = "auto", *, errors: Errors = "warn", **options: Any
) -> Events:
    """Yield ``src``'s events one dict at a time: each is ``json.loads`` of
    a line of ``cstream --to events``. Reads lazily, in constant memory,
    from a converting thread; the iterator's ``report`` is set once it is
    exhausted. ``errors`` and the options are ``convert``'s."""
    warner = _Warner(errors)
    return Events(
        src,
        from_,
        errors == "raise",
        warner,
        _options(options),
    )


def schema(name: str = "events") -> Dict[str, Any]:
    """The JSON Schema (a dict) of the ``events`` lines or the ``documents``
    object, as ``cstream --schema NAME`` prints it."""
    result: Dict[str, Any] = _json.loads(_cstream._schema(name))
    return result
