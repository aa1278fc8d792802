"""From a client's metrics snapshot to the points of one KIP-714 push.

Names follow the KIP's convention (the Java client's
``TelemetryMetricNamingConvention``): ``org.apache.kafka.`` + the Java metric group
without ``-metrics`` + the metric name, lower case, with dots for hyphens. So
``record-send-rate`` of the producer (group ``producer-metrics``) is
``org.apache.kafka.producer.record.send.rate``, a consumer's ``records-lag`` of a
partition (group ``consumer-fetch-manager-metrics``, tags ``topic`` and
``partition``) is ``org.apache.kafka.consumer.fetch.manager.records.lag``, and a
broker's ``request-latency-avg`` (group ``producer-node-metrics``, tag ``node-id``)
is ``org.apache.kafka.producer.node.request.latency.avg`` with the attribute
``node_id`` = ``node-1``.

``*-total`` values are counts since the client was created: monotonic sums,
cumulative or, when the subscription asks for delta temporality, the change since
the last push. Everything else is a gauge. No asyncio.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .otlp import CUMULATIVE, DELTA, Point

__all__ = ["PREFIX", "Collector", "Selection", "metric_groups"]

#: Every pushed name starts with this (the KIP's domain).
PREFIX = "org.apache.kafka"

_NODE = {"producer": "producer.node", "consumer": "consumer.node", "admin": "admin.client.node"}
_CLIENT = {"producer": "producer", "consumer": "consumer", "admin": "admin.client"}


def _dotted(name: str) -> str:
    return name.lower().replace("-", ".")


@functools.cache
def _consumer_names() -> tuple[frozenset[str], frozenset[str]]:
    from aiokafka.metrics.consumer import CoordinatorMetrics, FetchMetrics

    return frozenset(FetchMetrics().snapshot((), False)), frozenset(CoordinatorMetrics().snapshot())


def _consumer_group(name: str) -> str:
    fetch, coordinator = _consumer_names()
    if name in fetch:
        return "consumer.fetch.manager"
    if name in coordinator:
        return "consumer.coordinator"
    return "consumer"  # network values: the Java consumer's consumer-metrics


def metric_groups(kind: str) -> dict[str, str]:
    """The group word of each scope of ``kind``'s snapshot (``""``: client-wide,
    for the producer and admin; the consumer's are per name)."""
    if kind == "producer":
        return {"": "producer", "topic": "producer.topic", "node": _NODE[kind]}
    if kind == "consumer":
        return {"topic": "consumer.fetch.manager", "partition": "consumer.fetch.manager"}
    return {"": _CLIENT.get(kind, kind), "node": _NODE.get(kind, f"{kind}.node")}


class Selection:
    """The subscription's ``RequestedMetrics``: nothing (empty), everything
    (``["*"]``) or the names starting with one of the given prefixes."""

    __slots__ = ("_all", "_prefixes")

    def __init__(self, requested: Sequence[str]) -> None:
        self._all = list(requested) == ["*"]
        self._prefixes = tuple(p for p in requested if p)

    @property
    def empty(self) -> bool:
        """No metric is asked for."""
        return not self._all and not self._prefixes

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (self._all or name.startswith(self._prefixes))


def _names(kind: str, snapshot: dict[str, Any]) -> Iterator[tuple[str, dict[str, str], float]]:
    """Every number of ``snapshot`` as (full name, attributes, value)."""
    groups = metric_groups(kind)
    for name, value in snapshot.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            group = _consumer_group(name) if kind == "consumer" else groups[""]
            yield f"{PREFIX}.{group}.{_dotted(name)}", {}, float(value)
    topic_group = groups.get("topic")
    if topic_group is not None:
        for topic, values in snapshot.get("topics", {}).items():
            for name, value in values.items():
                yield f"{PREFIX}.{topic_group}.{_dotted(name)}", {"topic": str(topic)}, float(value)
    partition_group = groups.get("partition")
    if partition_group is not None:
        for topic, partitions in snapshot.get("partitions", {}).items():
            for partition, values in partitions.items():
                labels = {"topic": str(topic), "partition": str(partition)}
                for name, value in values.items():
                    yield f"{PREFIX}.{partition_group}.{_dotted(name)}", labels, float(value)
    node_group = _NODE.get(kind, f"{kind}.node")
    for node, values in snapshot.get("nodes", {}).items():
        # The Java client's node-id tag: "node-1"; bootstrap connections keep their label.
        node_id = f"node-{node}" if isinstance(node, int) else str(node)
        for name, value in values.items():
            yield f"{PREFIX}.{node_group}.{_dotted(name)}", {"node_id": node_id}, float(value)


class Collector:
    """Turns snapshots into push points, keeping what delta temporality needs.

    Args:
        kind: ``"producer"``, ``"consumer"`` or ``"admin"``.
        clock: Wall clock in seconds (a test seam).
    """

    def __init__(self, kind: str, clock: Any = time.time) -> None:
        self.kind = kind
        self._clock = clock
        self._started_ns = int(clock() * 1e9)
        # (name, attributes) -> (value, time in ns) of the last push, for deltas.
        self._last: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, int]] = {}
        self._delta: bool | None = None

    def points(self, snapshot: dict[str, Any], selection: Selection, delta: bool) -> list[Point]:
        """The selected metrics of ``snapshot``.

        Client-wide values come first, then per topic, partition and node, so a
        payload cut to fit ``TelemetryMaxBytes`` keeps the most general ones.

        Args:
            snapshot: The client's ``metrics()``.
            selection: What the subscription asks for.
            delta: Sums as changes since the previous call (the subscription's
                ``DeltaTemporality``); a change of temporality starts over.
        """
        if self._delta is not None and delta != self._delta:
            self._last.clear()
        self._delta = delta
        now = int(self._clock() * 1e9)
        out: list[Point] = []
        for name, labels, value in _names(self.kind, snapshot):
            if name not in selection:
                continue
            if not name.endswith(".total"):
                out.append(Point(name, value, now, labels))
                continue
            if not delta:
                out.append(Point(name, value, now, labels, CUMULATIVE, self._started_ns))
                continue
            key = (name, tuple(sorted(labels.items())))
            before, since = self._last.get(key, (0.0, self._started_ns))
            self._last[key] = (value, now)
            out.append(Point(name, value - before, now, labels, DELTA, since))
        return out

    def rewind(self, points: Sequence[Point]) -> None:
        """Forget that ``points`` were taken: a push that did not reach the broker
        must not lose its deltas (the next push carries them)."""
        for point in points:
            if point.temporality != DELTA:
                continue
            key = (point.name, tuple(sorted(point.attributes.items())))
            value, _ = self._last.get(key, (point.value, point.time_ns))
            self._last[key] = (value - point.value, point.start_ns)
