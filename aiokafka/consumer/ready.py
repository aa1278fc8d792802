"""The awaitable ``AIOKafkaConsumer.__anext__`` returns for a record already buffered:
the C ``_cready.ready`` when built (no coroutine per record, see ``_cready.c``), else
:func:`ready_coroutine`, which behaves the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiokafka._extensions import load_extension

__all__ = ["ready", "ready_coroutine"]

_T = TypeVar("_T")


async def ready_coroutine(value: _T) -> _T:
    """``_cready.ready``'s pure-Python stand-in: an awaitable that gives ``value``."""
    return value


_cready = load_extension("aiokafka.consumer._cready")
ready: Callable[[_T], Awaitable[_T]] = ready_coroutine if _cready is None else _cready.ready
