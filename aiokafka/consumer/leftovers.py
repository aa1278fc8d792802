"""Releasing what a consumer garbage-collected without ``stop()`` left running.

``AIOKafkaConsumer.__del__`` warns (``ResourceWarning``, as aiokafka does) and hands
its started parts to :class:`Leftovers`, which stops them in one background task:
no final commit (the application never asked to stop), LeaveGroup as on ``stop()``,
connections closed. aiokafka leaves them running until the event loop closes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiokafka.cluster import AIOKafkaClient

    from .commits import Committer
    from .fetcher import Fetcher
    from .group.membership import GroupMembership
    from .no_group import NoGroupAssigner

__all__ = ["Leftovers"]


@dataclass(eq=False)
class Leftovers:
    """What a consumer garbage-collected without ``stop()`` left running.

    ``release_soon`` runs on the event loop (scheduled from ``__del__``) and starts
    one task that stops all of it; the task is kept in :data:`_RELEASING` until done.
    """

    committer: Committer | None
    no_group: NoGroupAssigner | None
    fetcher: Fetcher | None
    membership: GroupMembership | None
    closing: list[asyncio.Task[None]]
    client: AIOKafkaClient | None

    def release_later(self, loop: asyncio.AbstractEventLoop | None, owner: object) -> None:
        """Report ``owner`` to the loop's exception handler (as aiokafka does) and
        schedule :meth:`release_soon` on ``loop``; nothing if the loop is closed."""
        if loop is None or loop.is_closed():
            return
        loop.call_exception_handler(
            {"consumer": owner, "message": "Unclosed AIOKafkaConsumer (stop() was not called)"}
        )
        try:
            loop.call_soon_threadsafe(self.release_soon)
        except RuntimeError:
            pass  # the loop closed meanwhile: nothing can run any more

    def release_soon(self) -> None:
        task = asyncio.get_running_loop().create_task(
            self.release(), name="aiokafka-consumer-release"
        )
        _RELEASING.add(task)
        task.add_done_callback(_RELEASING.discard)

    async def release(self) -> None:
        try:
            if self.committer is not None:
                await self.committer.stop()
            if self.no_group is not None:
                await self.no_group.close()
            if self.fetcher is not None:
                await self.fetcher.close()
            if self.membership is not None:
                await self.membership.close()
            if self.closing:
                await asyncio.wait(self.closing)
        finally:
            if self.client is not None:
                await self.client.close()


#: Release tasks of abandoned consumers (see :class:`Leftovers`), owned until done.
_RELEASING: set[asyncio.Task[None]] = set()
