"""Client metrics: what ``producer.metrics()``, ``consumer.metrics()``,
``admin.metrics()`` and the share consumer's ``metrics()`` return.

Each client records into a few :class:`~aiokafka.metrics.stats.Sensor` objects owned
by its components (connections, sender, fetcher, group membership, share sessions),
once per request, batch or fetched chunk, never per record; a snapshot turns them
into a dict keyed by the Java client's metric names. ``docs/metrics.md`` lists every name.

The OpenTelemetry and Prometheus adapters (:mod:`aiokafka.metrics.otel`,
:mod:`aiokafka.metrics.prometheus`) read those snapshots; they are imported only when
asked for (extras ``otel`` and ``prometheus``).
"""

from __future__ import annotations

from .stats import WINDOW, Sensor

__all__ = ["WINDOW", "Sensor"]
