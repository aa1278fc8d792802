"""Event loops and clients inside Spark's Python processes.

Spark calls the data source synchronously, from planner processes (the driver side:
offsets, partitions, commits) and from reused Python workers (the tasks). Each task
gets its own event loop and its own client, both closed when the task ends or fails,
so nothing outlives the task in a reused worker. The driver-side stream reader keeps
one loop and one admin client for the life of the query (``stop()`` closes them),
because it is asked for offsets every trigger. Nothing here is pickled: objects that
Spark ships hold only options and create these on first use.

Each client class is imported when the first one is made: a Python worker that only
reads never imports the producer or the admin client (the admin client alone takes
most of a second to import on a loaded machine, paid by every new worker).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from .kafka_options import build_ssl_context

if TYPE_CHECKING:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.consumer import AIOKafkaConsumer
    from aiokafka.producer import AIOKafkaProducer

T = TypeVar("T")

# Bounded clean-up: closing a client must not hang a Spark task that already failed.
CLOSE_TIMEOUT_S = 10.0


class PrivateLoop:
    """An event loop owned by one task (or by the driver-side reader) and run with
    :meth:`run`; :meth:`close` finishes async generators and closes it."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion on this loop."""
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the loop (idempotent)."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()


def _with_ssl(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> dict[str, Any]:
    context = build_ssl_context(ssl_opts, str(kwargs.get("security_protocol", "PLAINTEXT")))
    return kwargs if context is None else {**kwargs, "ssl_context": context}


def new_consumer(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> AIOKafkaConsumer[Any, Any]:
    """A consumer (not started) from parsed options; call inside the loop that runs it."""
    from aiokafka.consumer import AIOKafkaConsumer

    return AIOKafkaConsumer(**_with_ssl(kwargs, ssl_opts))


def new_producer(
    kwargs: dict[str, Any], ssl_opts: dict[str, str], **extra: Any
) -> AIOKafkaProducer:
    """A producer (not started) from parsed options plus ``extra`` keyword arguments."""
    from aiokafka.producer import AIOKafkaProducer

    return AIOKafkaProducer(**_with_ssl({**kwargs, **extra}, ssl_opts))


def new_admin(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> AIOKafkaAdminClient:
    """An admin client (not started) from a consumer's or producer's parsed options:
    only the options every client shares are kept."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin.config import ADMIN_OPTIONS

    shared = {k: v for k, v in kwargs.items() if k in ADMIN_OPTIONS}
    return AIOKafkaAdminClient(**_with_ssl(shared, ssl_opts))


async def close_quietly(closer: Coroutine[Any, Any, Any]) -> None:
    """Await a client's ``stop()``/``close()`` within :data:`CLOSE_TIMEOUT_S`.

    Used on the failure path only, where the task's own error is the one to report;
    a timeout here is not raised over it. Cancellation still propagates.
    """
    try:
        await asyncio.wait_for(closer, CLOSE_TIMEOUT_S)
    except asyncio.CancelledError:
        raise
    except Exception:
        return
