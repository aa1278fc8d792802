"""The awaitable ``AIOKafkaConsumer.__anext__`` returns for a record already buffered:
the C ``_cready.ready`` when built (no coroutine per record, see ``_cready.c``), else
:func:`ready_coroutine`, which behaves the same. ``fast_anext`` is the C iterator
``__aiter__`` returns when it may (``None`` without the extension: the consumer is
its own iterator).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from aiokafka._extensions import load_extension

__all__ = ["fast_anext", "ready", "ready_coroutine"]

_T = TypeVar("_T")


async def ready_coroutine(value: _T) -> _T:
    """``_cready.ready``'s pure-Python stand-in: an awaitable that gives ``value``."""
    return value


_cready = load_extension("aiokafka.consumer._cready")
ready: Callable[[_T], Awaitable[_T]] = ready_coroutine if _cready is None else _cready.ready
fast_anext: Callable[[Any, Any, Any], AsyncIterator[Any]] | None = (
    None if _cready is None else _cready.Anext
)
