"""``wait_for`` without the cancellation race of Python 3.10/3.11's ``asyncio.wait_for``.

Before Python 3.12, ``asyncio.wait_for`` could swallow a cancellation of the caller
when the awaited operation finished at the same moment (CPython gh-86296): the caller
went on as if never cancelled, and a ``stop()`` waiting for it could hang. Python 3.12
rebuilt ``wait_for`` on ``asyncio.timeout``, which counts cancellations
(``Task.uncancel``) and always re-raises a cancellation that did not come from the
deadline. This module gives every Python we support that behaviour: ``asyncio.timeout``
on 3.11+, ``async_timeout`` (same semantics) on 3.10.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from typing import TypeVar

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:  # pragma: no cover - exercised on Python 3.10 only
    from async_timeout import timeout  # type: ignore[import-not-found,no-redef,unused-ignore]

__all__ = ["timeout", "wait_for"]

T = TypeVar("T")


async def wait_for(aw: Awaitable[T], delay: float | None) -> T:
    """Await ``aw`` for at most ``delay`` seconds (None: no limit).

    Raises:
        TimeoutError: the deadline passed (``asyncio.TimeoutError`` is the same class
            on 3.11+; on 3.10 ``async_timeout`` raises ``asyncio.TimeoutError``).
    """
    async with timeout(delay):
        return await aw
