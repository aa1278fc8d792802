"""KIP-714 client metrics push: when the cluster subscribes to a client's metrics
(GetTelemetrySubscriptions), the client pushes them (PushTelemetry) as OpenTelemetry
``MetricsData``, under the KIP's names (``org.apache.kafka.producer.record.send.rate``).

``otlp.py`` encodes the protobuf message (no dependency), ``collect.py`` maps a
client's ``metrics()`` snapshot to named points (selection, delta temporality),
``reporter.py`` is the task each client's
:class:`~aiokafka.cluster.client.AIOKafkaClient` owns. ``enable_metrics_push=False``
turns it off; ``docs/metrics.md`` describes it. Not imported by ``import aiokafka``: the
client imports it when a facade starts.
"""

from __future__ import annotations

from .reporter import TelemetryReporter

__all__ = ["TelemetryReporter"]
