"""Which broker coordinates which group or transaction: the client's FindCoordinator
cache, and the requests that fill it.

:class:`Coordinators` is the one owner of the cache. ``AIOKafkaClient`` asks it
(:meth:`Coordinators.find`) with a connection to any broker, forgets entries after
NOT_COORDINATOR and the like (:meth:`Coordinators.forget`), and drops the entries of
brokers that left the cluster when new metadata arrives (:meth:`Coordinators.retain`).
No asyncio task of its own: :meth:`Coordinators.find` runs in its caller's.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import TYPE_CHECKING

from aiokafka.errors import for_code
from aiokafka.protocol import messages as _messages
from aiokafka.structs import BrokerMetadata

if TYPE_CHECKING:
    from aiokafka.net.connection import AIOKafkaConnection

__all__ = ["CoordinatorType", "Coordinators"]


class CoordinatorType(enum.IntEnum):
    """FindCoordinator ``key_type``."""

    GROUP = 0
    TRANSACTION = 1


class Coordinators:
    """Cached coordinators by ``(key_type, key)``."""

    def __init__(self) -> None:
        self._cache: dict[tuple[CoordinatorType, str], BrokerMetadata] = {}

    def get(self, key: str, key_type: CoordinatorType = CoordinatorType.GROUP) -> int | None:
        """The cached coordinator's node id, or ``None`` if none is cached."""
        broker = self._cache.get((CoordinatorType(key_type), key))
        return None if broker is None else int(broker.nodeId)

    def broker(self, node_id: object) -> BrokerMetadata | None:
        """The address of a cached coordinator (it may be missing from the metadata)."""
        for broker in self._cache.values():
            if broker.nodeId == node_id:
                return broker
        return None

    def forget(self, key: str, key_type: CoordinatorType = CoordinatorType.GROUP) -> None:
        """Drop the cached coordinator of ``key``."""
        self._cache.pop((CoordinatorType(key_type), key), None)

    def retain(self, brokers: Collection[int]) -> None:
        """Drop the coordinators on brokers not in ``brokers`` (they cannot be valid)."""
        for key, broker in list(self._cache.items()):
            if broker.nodeId not in brokers:
                del self._cache[key]

    async def find(
        self,
        keys: Iterable[str],
        key_type: CoordinatorType,
        connect: Callable[[], Awaitable[AIOKafkaConnection]],
    ) -> dict[str, int]:
        """The node id of every key's coordinator. Those not cached are looked up on
        a connection to any broker, made by ``connect()`` only then: one FindCoordinator
        v4+ request for all of them, or one per key from a broker without batching.

        Raises:
            aiokafka.errors.CoordinatorNotAvailableError: and the other errors a
                FindCoordinator answer carries (the first one met).
        """
        key_type = CoordinatorType(key_type)
        result: dict[str, int] = {}
        missing: list[str] = []
        for key in dict.fromkeys(keys):
            cached = self.get(key, key_type)
            if cached is None:
                missing.append(key)
            else:
                result[key] = cached
        if not missing:
            return result
        conn = await connect()
        request_type = _messages.FindCoordinatorRequest
        if conn.api_version(request_type.API_KEY) >= 4:
            response = await conn.send(request_type(key_type=key_type, coordinator_keys=missing))
            entries = [
                (c.key, c.error_code, c.error_message, c.node_id, c.host, c.port)
                for c in response.coordinators
            ]
        else:
            entries = []
            for key in missing:
                r = await conn.send(request_type(key=key, key_type=key_type))
                entries.append((key, r.error_code, r.error_message, r.node_id, r.host, r.port))
        for key, code, message, node, host, port in entries:
            if code:
                raise for_code(code)(f"FindCoordinator({key_type.name} {key!r}): {message or ''}")
            self._cache[(key_type, key)] = BrokerMetadata(node, host, port, None)
            result[key] = node
        return result
