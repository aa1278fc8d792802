"""What the OpenTelemetry and Prometheus adapters share: reading a client's snapshot
from their own thread, and flattening it into labelled samples.

A snapshot must be taken on the client's event loop thread: the sensors are updated
there without locks. Exporters call from their own threads (Prometheus' HTTP server, the
OpenTelemetry SDK's periodic reader), so :func:`read_snapshot` hands the call to the
loop and waits for it (bounded); called on the loop's thread, or with the loop stopped,
it reads directly.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["HasMetrics", "Sample", "client_kind", "read_snapshot", "samples"]

#: ``"topics"`` -> label names of its keys, and the scope word in exported names.
_SCOPES = {"topics": ("topic",), "partitions": ("topic", "partition"), "nodes": ("node_id",)}


class HasMetrics(Protocol):
    """A producer, consumer, share consumer or admin client."""

    def metrics(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Sample:
    """One value of a snapshot.

    Attributes:
        scope: ``""`` (client-wide), ``"topic"``, ``"partition"`` or ``"node"``.
        name: The Java client's name, e.g. ``record-send-rate``.
        labels: ``{"topic": ...}``, ``{"topic": ..., "partition": ...}``,
            ``{"node_id": ...}`` or empty.
        value: The number.
    """

    scope: str
    name: str
    labels: dict[str, str]
    value: float

    @property
    def is_total(self) -> bool:
        """A count since the client was created (a monotonic counter)."""
        return self.name.endswith("-total")


def client_kind(client: object) -> str:
    """``"producer"``, ``"consumer"``, ``"share_consumer"`` or ``"admin"`` for one of
    our clients."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.consumer import AIOKafkaConsumer
    from aiokafka.producer import AIOKafkaProducer
    from aiokafka.share import AIOKafkaShareConsumer

    if isinstance(client, AIOKafkaProducer):
        return "producer"
    if isinstance(client, AIOKafkaConsumer):
        return "consumer"
    if isinstance(client, AIOKafkaShareConsumer):
        return "share_consumer"
    if isinstance(client, AIOKafkaAdminClient):
        return "admin"
    raise TypeError(
        f"{type(client).__name__} is not a producer, consumer, share consumer or admin client"
    )


def read_snapshot(
    client: HasMetrics, loop: asyncio.AbstractEventLoop | None, timeout: float = 5.0
) -> dict[str, Any]:
    """``client.metrics()``, taken on ``loop``'s thread when that loop runs elsewhere.

    Raises:
        TimeoutError: the loop did not run the call within ``timeout`` seconds.
    """
    if loop is None or not loop.is_running() or _running_loop() is loop:
        return client.metrics()
    result: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()

    def take() -> None:
        try:
            result.set_result(client.metrics())
        except Exception as exc:
            result.set_exception(exc)

    loop.call_soon_threadsafe(take)
    return result.result(timeout)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def samples(snapshot: dict[str, Any]) -> Iterator[Sample]:
    """Every number of ``snapshot`` with its scope and labels."""
    for name, value in snapshot.items():
        if isinstance(value, int | float):
            yield Sample("", name, {}, float(value))
    for key, (first, *rest) in _SCOPES.items():
        scope = key[:-1]
        for outer, inner in snapshot.get(key, {}).items():
            if rest:  # partitions: {topic: {partition: {name: value}}}
                for partition, values in inner.items():
                    labels = {first: str(outer), rest[0]: str(partition)}
                    for name, value in values.items():
                        yield Sample(scope, name, labels, float(value))
            else:
                for name, value in inner.items():
                    yield Sample(scope, name, {first: str(outer)}, float(value))
