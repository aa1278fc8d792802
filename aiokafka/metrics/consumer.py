"""The consumer's metrics: fetches, records handed to the application, lag, and the
group coordinator's commits and rebalances.

:class:`FetchMetrics` belongs to the consumer's
:class:`~aiokafka.consumer.fetcher.Fetcher`: it records once per Fetch request and once
per fetched partition chunk. Records handed to the application are counted per batch
into the partition's :class:`RecordTally` by the chunk that decodes it
(``PartitionRecords``), as the batch starts being handed out; a chunk dropped (seek,
revocation) takes back what it never handed out. So the ``async for`` path costs
nothing per record, and a snapshot taken while a batch is half read counts its rest
already. The tallies are collected into the rate sensors when a chunk of the partition
arrives and when a snapshot is taken. Lag is computed when a snapshot is taken,
from each assigned partition's position and the high watermark (last stable offset
under ``read_committed``) of its last fetch.

:class:`CoordinatorMetrics` belongs to the group membership: one record per commit
and per completed rebalance.

Names are the Java client's ``consumer-fetch-manager-metrics`` and
``consumer-coordinator-metrics``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, Protocol

from aiokafka.structs import TopicPartition

from .network import empty_network
from .stats import Sensor, TopicSensors, topic_metric_names

__all__ = ["CoordinatorMetrics", "FetchMetrics", "RecordTally", "consumer_snapshot"]


class RecordTally:
    """Records of one partition handed to the application (see the module), written by
    its fetched chunks, read by :class:`FetchMetrics`."""

    __slots__ = ("collected", "records")

    def __init__(self) -> None:
        self.records = 0
        #: The part of ``records`` already in the sensors.
        self.collected = 0


class Position(Protocol):
    """What the lag needs of a partition's state (``PartitionState`` has it)."""

    @property
    def position(self) -> int | None: ...

    @property
    def highwater(self) -> int | None: ...

    @property
    def last_stable_offset(self) -> int | None: ...


# Each topic's sensors (each reported as <name>-total and <name>-rate).
_RECORDS, _BYTES = "records-consumed", "bytes-fetched"


class FetchMetrics:
    """Sensors of one consumer's fetcher."""

    #: The names of each ``"topics"`` entry of a snapshot.
    TOPIC_NAMES = topic_metric_names(_RECORDS, _BYTES)
    #: The names a ``"partitions"`` entry may have (``records-lag`` once fetched).
    PARTITION_NAMES = ("records-consumed-total", "records-lag")

    def __init__(self) -> None:
        #: Seconds per Fetch request (request to response, the broker's wait included).
        self.fetch_latency = Sensor()
        #: Records handed to the application (recorded per collection, see the module).
        self.records = Sensor()
        #: Bytes of the fetched partition data.
        self.bytes = Sensor()
        self._topics = TopicSensors(_RECORDS, _BYTES)
        self._tallies: dict[TopicPartition, RecordTally] = {}

    def fetch_done(self, latency: float) -> None:
        """A Fetch request was answered after ``latency`` seconds."""
        self.fetch_latency.record(latency)

    def tally(self, tp: TopicPartition) -> RecordTally:
        """The counter ``tp``'s fetched chunks count handed-out records into."""
        tally = self._tallies.get(tp)
        if tally is None:
            tally = self._tallies[tp] = RecordTally()
        return tally

    def chunk_added(self, tp: TopicPartition, size: int) -> None:
        """A fetched chunk of ``size`` bytes of ``tp`` was buffered for the application."""
        now = time.monotonic()
        self.bytes.record(size, now)
        self._topics(tp.topic)[_BYTES].record(size, now)
        tally = self._tallies.get(tp)
        if tally is not None:
            self._collect(tp, tally, now)

    def _collect(self, tp: TopicPartition, tally: RecordTally, now: float) -> None:
        delta = tally.records - tally.collected
        if delta:
            tally.collected = tally.records
            self.records.record(delta, now)
            self._topics(tp.topic)[_RECORDS].record(delta, now)

    def snapshot(
        self, partitions: Iterable[tuple[TopicPartition, Position]], read_committed: bool
    ) -> dict[str, Any]:
        """``consumer-fetch-manager-metrics`` values, ``"topics"`` and ``"partitions"``
        (``{topic: {partition: {name: value}}}``) for the assigned ``partitions``."""
        now = time.monotonic()
        for tp, tally in list(self._tallies.items()):
            self._collect(tp, tally, now)
        latency, records, fetched = self.fetch_latency, self.records, self.bytes
        out: dict[str, Any] = {
            "fetch-total": float(latency.count),
            "fetch-rate": latency.count_rate(now),
            "fetch-latency-avg": latency.avg(now) * 1000,
            "fetch-latency-max": latency.max(now) * 1000,
            "records-consumed-total": records.total,
            "records-consumed-rate": records.rate(now),
            "bytes-fetched-total": fetched.total,
            "bytes-fetched-rate": fetched.rate(now),
            "fetch-size-avg": fetched.total / latency.count if latency.count else 0.0,
        }
        per_partition: dict[str, dict[int, dict[str, float]]] = {}
        lag_max = 0.0
        for tp, state in partitions:
            end = state.last_stable_offset if read_committed else state.highwater
            counted = self._tallies.get(tp)
            values = {"records-consumed-total": float(counted.records if counted else 0)}
            position = state.position
            if end is not None and end >= 0 and position is not None:
                lag = float(max(end - position, 0))
                values["records-lag"] = lag
                lag_max = max(lag_max, lag)
            per_partition.setdefault(tp.topic, {})[tp.partition] = values
        out["records-lag-max"] = lag_max
        out["topics"] = self._topics.snapshot(now)
        out["partitions"] = per_partition
        return out


class CoordinatorMetrics:
    """Sensors of one group membership: commits and rebalances."""

    def __init__(self) -> None:
        #: Seconds per successful OffsetCommit made by the membership.
        self.commit_latency = Sensor()
        #: Seconds per completed rebalance (JoinGroup to installed assignment, or a
        #: KIP-848 reconciliation).
        self.rebalance_latency = Sensor()
        self._last_rebalance: float | None = None
        #: Partitions assigned now (set by the membership after each rebalance).
        self.assigned_partitions = 0

    def commit_done(self, started: float) -> None:
        """A commit that began at ``started`` (``time.monotonic()``) succeeded."""
        self.commit_latency.record(time.monotonic() - started)

    def rebalance_done(self, started: float, assigned: int) -> None:
        """A rebalance that began at ``started`` installed ``assigned`` partitions."""
        now = time.monotonic()
        self.rebalance_latency.record(now - started, now)
        self._last_rebalance = now
        self.assigned_partitions = assigned

    def snapshot(self) -> dict[str, float]:
        """``consumer-coordinator-metrics`` values."""
        now = time.monotonic()
        commit, rebalance = self.commit_latency, self.rebalance_latency
        last = self._last_rebalance
        return {
            "commit-total": float(commit.count),
            "commit-rate": commit.count_rate(now),
            "commit-latency-avg": commit.avg(now) * 1000,
            "commit-latency-max": commit.max(now) * 1000,
            "rebalance-total": float(rebalance.count),
            "rebalance-rate-per-hour": rebalance.count_rate(now) * 3600,
            "rebalance-latency-avg": rebalance.avg(now) * 1000,
            "rebalance-latency-max": rebalance.max(now) * 1000,
            "rebalance-latency-total": rebalance.total * 1000,
            "last-rebalance-seconds-ago": -1.0 if last is None else now - last,
            "assigned-partitions": float(self.assigned_partitions),
        }


class _Fetcher(Protocol):
    def metrics_snapshot(self) -> dict[str, Any]: ...


class _Membership(Protocol):
    @property
    def metrics(self) -> CoordinatorMetrics: ...


class _Client(Protocol):
    def network_metrics(self) -> dict[str, Any]: ...


def consumer_snapshot(
    fetcher: _Fetcher | None, membership: _Membership | None, client: _Client | None
) -> dict[str, Any]:
    """What ``AIOKafkaConsumer.metrics()`` returns: fetch and coordinator values (zeros
    without a fetcher or a group), the client's network values, then ``"topics"``,
    ``"partitions"`` and ``"nodes"``."""
    out = fetcher.metrics_snapshot() if fetcher is not None else FetchMetrics().snapshot((), False)
    topics, partitions = out.pop("topics"), out.pop("partitions")
    coordinator = membership.metrics if membership is not None else CoordinatorMetrics()
    out.update(coordinator.snapshot())
    out.update(client.network_metrics() if client is not None else empty_network())
    out["topics"] = topics
    out["partitions"] = partitions
    return out
