"""Kafka's 4-byte size framing for the test relays that read, rewrite or answer whole
requests and responses (``mock_cluster.MockRelay``, ``inject_relay.InjectingRelay``)."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Coroutine
from typing import Any

_SIZE = struct.Struct(">i")


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """The next frame without its size prefix, or ``None`` once the peer is gone."""
    try:
        (size,) = _SIZE.unpack(await reader.readexactly(4))
        return await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def framed(payload: bytes) -> bytes:
    """``payload`` with its size prefix."""
    return _SIZE.pack(len(payload)) + payload


async def pump_until_either_ends(
    to_broker: Coroutine[Any, Any, None], to_client: Coroutine[Any, Any, None]
) -> None:
    """Run both directions of a relayed connection until one ends, then stop the other."""
    tasks = {asyncio.create_task(to_broker), asyncio.create_task(to_client)}
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
