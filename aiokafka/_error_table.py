"""The broker error classes by code, loaded by :mod:`aiokafka.errors` on first use.

The generated table (:mod:`aiokafka._gen.error_codes`: one class per protocol error
code, 128 of them), the classes derived from generated ones and the lookup behind
:func:`aiokafka.errors.for_code`. Importing :mod:`aiokafka.errors` does not load this
module (issue 14): the first read of one of its names there, or the first
``for_code()`` call, does. Import these names from :mod:`aiokafka.errors`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from aiokafka._errors_base import BrokerResponseError
from aiokafka._gen import error_codes as _codes
from aiokafka._gen.error_codes import *  # noqa: F403 - served by aiokafka.errors
from aiokafka._gen.error_codes import (
    ERROR_CLASSES,
    OffsetOutOfRangeError,
    UnknownError,
    UnsupportedVersionError,
)

__all__ = [
    "IncompatibleBrokerVersion",
    "LogTruncationError",
    "UnrecognizedErrorCode",
    "for_code",
    "kafka_errors",
]
__all__ += _codes.__all__


class IncompatibleBrokerVersion(UnsupportedVersionError):
    """The client found (from ApiVersions) that the broker lacks an API version the
    requested feature needs. A subclass of the broker's ``UnsupportedVersionError`` so
    one ``except`` handles both."""

    message = "The broker does not support a protocol version this feature requires."


class LogTruncationError(OffsetOutOfRangeError):
    """The leader's log was truncated below the consumer's position (KIP-320).

    Raised for one partition when ``auto_offset_reset="none"`` and the new leader no
    longer has the records the consumer already read (an unclean election, or a
    leader change that lost unreplicated writes). Seek the partition to continue;
    :attr:`divergent_offsets` says where the logs diverge.

    A subclass of :class:`OffsetOutOfRangeError`, as in the Java client.

    Attributes:
        divergent_offsets: Partition -> first offset whose records may differ from
            what was consumed (the leader's end offset for the consumed epoch).
    """

    message = "The log was truncated below the consumer's position."

    def __init__(self, *args: Any, divergent_offsets: dict[Any, int] | None = None) -> None:
        super().__init__(*args)
        self.divergent_offsets: dict[Any, int] = dict(divergent_offsets or {})

    def __reduce__(self) -> Any:
        return (_rebuild_log_truncation, (self.args, self.divergent_offsets))


def _rebuild_log_truncation(args: tuple[Any, ...], divergent: dict[Any, int]) -> Any:
    return LogTruncationError(*args, divergent_offsets=divergent)


class UnrecognizedErrorCode(UnknownError):
    """Base of the classes :func:`for_code` makes for codes missing from the table.

    A subclass of ``UnknownError`` (what aiokafka returned for such codes), so old
    ``except UnknownError`` clauses still catch them; each code gets its own subclass
    whose ``errno`` is that code.
    """

    error_name = "UNRECOGNIZED"
    message = "The broker returned an error code this client does not know."
    description = message
    _per_code: ClassVar[bool] = False

    def __reduce__(self) -> str | tuple[Any, ...]:
        # The per-code classes are made at run time, so pickle cannot find them by
        # name; rebuild them from the code instead (errors cross process boundaries).
        if type(self)._per_code:
            return (_rebuild_unrecognized, (self.errno, self.args))
        return super().__reduce__()


def _rebuild_unrecognized(code: int, args: tuple[object, ...]) -> BrokerResponseError:
    return for_code(code)(*args)


_INT16_MIN: Final = -(2**15)
_INT16_MAX: Final = 2**15 - 1
_unrecognized: dict[int, type[BrokerResponseError]] = {}


def for_code(error_code: int) -> type[BrokerResponseError]:
    """:func:`aiokafka.errors.for_code`, which documents it, once the table is loaded."""
    code = error_code  # aiokafka's parameter name, kept for callers passing it by name
    if not isinstance(code, int) or isinstance(code, bool):
        raise TypeError(f"code must be an int, got {type(code).__name__}")
    known = ERROR_CLASSES.get(code)
    if known is not None:
        return known
    if not _INT16_MIN <= code <= _INT16_MAX:
        raise ValueError(f"code must be an int16, got {code}")
    cls = _unrecognized.get(code)
    if cls is None:
        name = f"UnrecognizedErrorCode[{code}]"
        attrs = {
            "errno": code,
            "__qualname__": name,
            "__module__": "aiokafka.errors",
            "_per_code": True,
        }
        made = type(name, (UnrecognizedErrorCode,), attrs)
        # setdefault: if two threads race, both get the same class.
        cls = _unrecognized.setdefault(code, made)
    return cls


#: aiokafka's table of the broker error classes by code (``errno`` -> class); prefer
#: :func:`for_code`, which also covers codes newer than this table.
kafka_errors: dict[int, type[BrokerResponseError]] = dict(ERROR_CLASSES)


def _adopt_classes() -> None:
    # Show these classes as aiokafka.errors.X in tracebacks and docs, as the hand-written
    # ones are; pickle finds them there too (aiokafka.errors resolves them).
    for name in __all__:
        obj = globals()[name]
        if isinstance(obj, type) and obj.__module__ != "aiokafka.errors":
            obj.__module__ = "aiokafka.errors"


_adopt_classes()
