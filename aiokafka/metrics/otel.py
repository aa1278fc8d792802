"""An OpenTelemetry metrics adapter for our clients (extra ``otel``:
``pip install aiokafka[otel]``): observable instruments that read the client's
snapshot when the SDK collects.

::

    from opentelemetry import metrics
    from aiokafka.metrics.otel import instrument

    registration = instrument(metrics.get_meter("my-service"), producer, client_id="orders")
    ...
    registration.close()  # stop observing (e.g. after producer.stop())

One instrument per name: ``kafka.<kind>.<java name>`` (``kafka.producer.record-send-rate``),
``kafka.<kind>.<scope>.<java name>`` for per-topic, per-partition and per-node values
(``kafka.consumer.partition.records-lag``), with the attributes ``client.id`` and
``topic``, ``partition`` or ``node.id``. ``*-total`` values are observable counters, the
rest observable gauges. One snapshot per collection serves every instrument (taken on the
client's event loop, see :func:`aiokafka.metrics.export.read_snapshot`).

Metrics only: spans for send/receive/commit and W3C trace context in record headers are
:mod:`aiokafka.otel` (``docs/tracing.md``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, Observation

from .consumer import CoordinatorMetrics, FetchMetrics
from .export import HasMetrics, Sample, client_kind, read_snapshot, samples
from .network import NetworkMetrics, NodeMetrics
from .producer import ProducerMetrics
from .share import TOPIC_NAMES as SHARE_TOPIC_NAMES
from .share import ShareCoordinatorMetrics, ShareFetchMetrics, SharePollMetrics

__all__ = ["Registration", "instrument"]

#: A snapshot is reused by the instruments of one collection for this long.
_REUSE = 0.5

_ATTRIBUTE = {"node_id": "node.id"}

#: Names holding one of these are milliseconds.
_MS_WORDS = ("latency", "queue-time", "throttle-time", "time-between-poll", "response-time")


def _names(kind: str) -> dict[str, set[str]]:
    """Every name a client of ``kind`` reports, by scope ("" = client-wide)."""
    now = time.monotonic()
    names: dict[str, set[str]] = {"": set(NetworkMetrics().snapshot(0)) - {"nodes"}}
    names["node"] = set(NodeMetrics().snapshot(now))
    if kind == "producer":
        producer = ProducerMetrics().snapshot()
        names[""] |= set(producer) - {"topics"}
        names[""] |= {"buffer-total-bytes", "buffer-available-bytes"}
        names["topic"] = set(ProducerMetrics.TOPIC_NAMES)
    elif kind == "consumer":
        fetch = FetchMetrics().snapshot((), False)
        names[""] |= set(fetch) - {"topics", "partitions"}
        names[""] |= set(CoordinatorMetrics().snapshot())
        names["topic"] = set(FetchMetrics.TOPIC_NAMES)
        names["partition"] = set(FetchMetrics.PARTITION_NAMES)
    elif kind == "share_consumer":
        names[""] |= set(SharePollMetrics().snapshot())
        names[""] |= set(ShareFetchMetrics().snapshot())
        names[""] |= set(ShareCoordinatorMetrics().snapshot())
        names["topic"] = set(SHARE_TOPIC_NAMES)
    return names


class Registration:
    """The instruments made for one client; :meth:`close` stops their observations
    (OpenTelemetry instruments cannot be removed from a meter)."""

    def __init__(
        self,
        client: HasMetrics,
        loop: asyncio.AbstractEventLoop | None,
        client_id: str,
        timeout: float,
    ) -> None:
        self._client: HasMetrics | None = client
        self._loop = loop
        self._client_id = client_id
        self._timeout = timeout
        self._cached: tuple[float, dict[tuple[str, str], list[Sample]]] | None = None

    def close(self) -> None:
        """Observe nothing more (and drop the reference to the client)."""
        self._client = None
        self._cached = None

    def _samples(self) -> dict[tuple[str, str], list[Sample]]:
        now = time.monotonic()
        if self._cached is not None and now - self._cached[0] < _REUSE:
            return self._cached[1]
        client = self._client
        grouped: dict[tuple[str, str], list[Sample]] = {}
        if client is not None:
            snapshot = read_snapshot(client, self._loop, self._timeout)
            for sample in samples(snapshot):
                grouped.setdefault((sample.scope, sample.name), []).append(sample)
        self._cached = (now, grouped)
        return grouped

    def callback(self, scope: str, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        """The observable callback of one instrument."""

        def observe(options: CallbackOptions) -> Iterable[Observation]:
            out = []
            for sample in self._samples().get((scope, name), ()):
                attributes: dict[str, Any] = {"client.id": self._client_id}
                for key, value in sample.labels.items():
                    attributes[_ATTRIBUTE.get(key, key)] = value
                out.append(Observation(sample.value, attributes))
            return out

        return observe


def instrument(
    meter: Meter,
    client: HasMetrics,
    client_id: str,
    loop: asyncio.AbstractEventLoop | None = None,
    timeout: float = 5.0,
) -> Registration:
    """Create observable instruments on ``meter`` for ``client``'s metrics.

    Args:
        meter: From ``opentelemetry.metrics.get_meter(...)`` (or a provider's).
        client: An ``AIOKafkaProducer``, ``AIOKafkaConsumer`` or
            ``AIOKafkaAdminClient``.
        client_id: The ``client.id`` attribute of its observations.
        loop: The loop ``client`` runs on; default: the running loop, if any.
        timeout: Seconds a collection waits for that loop.

    Returns:
        The registration; ``close()`` it when the client is gone.
    """
    kind = client_kind(client)
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
    registration = Registration(client, loop, client_id, timeout)
    for scope, names in _names(kind).items():
        for name in sorted(names):
            full = f"kafka.{kind}.{scope + '.' if scope else ''}{name}"
            unit = "ms" if any(word in name for word in _MS_WORDS) else "1"
            callbacks = [registration.callback(scope, name)]
            if name.endswith("-total"):
                meter.create_observable_counter(full, callbacks, unit=unit)
            else:
                meter.create_observable_gauge(full, callbacks, unit=unit)
    return registration
