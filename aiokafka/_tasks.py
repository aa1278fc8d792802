"""Ending the background tasks a component owns."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(*tasks: asyncio.Future[Any] | None) -> None:
    """Cancel the owned ``tasks`` (``None`` entries are skipped) and wait until every one
    has ended.

    A task's own ``CancelledError`` or error is not raised here (``asyncio.wait`` leaves
    them in the task, for its owner to read); a cancellation of the caller still
    propagates, and the tasks then end on their own.
    """
    owned = [task for task in tasks if task is not None]
    for task in owned:
        task.cancel()
    if owned:
        await asyncio.wait(owned)
