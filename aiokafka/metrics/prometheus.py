"""A Prometheus collector for our clients' metrics (extra ``prometheus``:
``pip install aiokafka[prometheus]``).

::

    from prometheus_client import REGISTRY, start_http_server
    from aiokafka.metrics.prometheus import KafkaCollector

    collector = KafkaCollector()
    collector.add(producer, client_id="orders-api")
    REGISTRY.register(collector)
    start_http_server(9100)

Each scrape takes one snapshot per client (on its event loop, see
:func:`aiokafka.metrics.export.read_snapshot`). Names are the Java client's with ``-``
as ``_`` under ``kafka_<kind>_`` (``kafka_producer_record_send_rate``); per-topic,
per-partition and per-node values add ``topic_``, ``partition_`` or ``node_`` and the
labels ``topic``, ``partition``, ``node_id``; every series has ``client_id``.
``*-total`` values are counters, the rest gauges.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .export import HasMetrics, client_kind, read_snapshot, samples

__all__ = ["KafkaCollector"]


class KafkaCollector(Collector):
    """Exposes the metrics of any number of producers, consumers and admin clients.

    Args:
        prefix: The first word of every name.
        timeout: Seconds a scrape waits for a client's event loop.
    """

    def __init__(self, prefix: str = "kafka", timeout: float = 5.0) -> None:
        self._prefix = prefix
        self._timeout = timeout
        self._clients: dict[str, tuple[HasMetrics, str, asyncio.AbstractEventLoop | None]] = {}

    def add(
        self,
        client: HasMetrics,
        client_id: str,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Export ``client``'s metrics with the label ``client_id``.

        Args:
            client: An ``AIOKafkaProducer``, ``AIOKafkaConsumer`` or
                ``AIOKafkaAdminClient``.
            client_id: Its label value (unique in this collector).
            loop: The loop ``client`` runs on; default: the running loop (call
                ``add()`` from it), if any.

        Raises:
            ValueError: ``client_id`` is taken.
            TypeError: not one of our clients.
        """
        if client_id in self._clients:
            raise ValueError(f"client_id {client_id!r} is already exported")
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
        self._clients[client_id] = (client, client_kind(client), loop)

    def remove(self, client_id: str) -> None:
        """Stop exporting the client added as ``client_id`` (no error if unknown)."""
        self._clients.pop(client_id, None)

    def collect(self) -> Iterator[Metric]:
        """One family per exported name, with a series per client and label set."""
        families: dict[str, Any] = {}
        for client_id, (client, kind, loop) in list(self._clients.items()):
            snapshot = read_snapshot(client, loop, self._timeout)
            for sample in samples(snapshot):
                scope = f"{sample.scope}_" if sample.scope else ""
                base = f"{self._prefix}_{kind}_{scope}{sample.name.replace('-', '_')}"
                labels = {"client_id": client_id, **sample.labels}
                family = families.get(base)
                if family is None:
                    if sample.is_total:
                        family = CounterMetricFamily(
                            base[: -len("_total")], _help(sample.name), labels=list(labels)
                        )
                    else:
                        family = GaugeMetricFamily(base, _help(sample.name), labels=list(labels))
                    families[base] = family
                family.add_metric(list(labels.values()), sample.value)
        yield from families.values()


def _help(name: str) -> str:
    return f"Kafka client metric {name} (docs/metrics.md)"
