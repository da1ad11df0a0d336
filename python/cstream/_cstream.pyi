# Type stubs of the extension module (python/src/lib.rs). The public API is
# re-exported, with its documentation, by cstream/__init__.py.
from typing import Any, Callable, Final, Iterator, Optional, Union, final
import os

_Source = Union[bytes, bytearray, str, os.PathLike[str], Any]
_Warn = Callable[[str, Optional[int], str, bool], object]

__all__ = ["_convert", "_schema", "Events", "Report", "FORMATS", "DIALECTS", "SCHEMA_VERSION", "__version__"]

FORMATS: Final[list[str]]
DIALECTS: Final[list[str]]
__version__: Final[str]
#: The events and documents schemas' version (``schemaVersion``).
SCHEMA_VERSION: Final[int]

@final
class Report:
    """What a run saw; ``exit_code`` is the command line's exit status,
    ``exit_code_e`` the one it gives with ``-e``."""

    @property
    def sessions(self) -> int: ...
    @property
    def failed_sessions(self) -> int: ...
    @property
    def incomplete_sessions(self) -> int: ...
    @property
    def bad_lines(self) -> int: ...
    @property
    def read_failed(self) -> bool: ...
    @property
    def stopped(self) -> bool: ...
    @property
    def exit_code(self) -> int: ...
    @property
    def exit_code_e(self) -> int: ...

@final
class Events(Iterator[dict[str, Any]]):
    """The iterator ``cstream.events()`` returns: one dict per event."""

    def __new__(
        cls,
        src: _Source,
        from_: str,
        strict: bool,
        warn: Optional[_Warn],
        options: Optional[dict[str, Any]] = None,
    ) -> Events: ...
    def __iter__(self) -> Events: ...
    def __next__(self) -> dict[str, Any]: ...
    @property
    def report(self) -> Optional[Report]:
        """What the run saw, once the iterator is exhausted."""

def _convert(
    src: _Source,
    out: Any,
    to: str,
    from_: str,
    strict: bool,
    options: Optional[dict[str, Any]] = None,
) -> tuple[Optional[bytes], Report, list[tuple[str, Optional[int], str, bool]]]: ...
def _schema(name: str) -> str: ...
