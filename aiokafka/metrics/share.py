"""The share consumer's metrics: what ``AIOKafkaShareConsumer.metrics()`` returns.

Three owners record, none of them per record:

- :class:`ShareFetchMetrics` belongs to the consumer's share sessions: once per
  ShareFetch response (latency, throttle, bytes and acquired records of the response)
  and once per acknowledging call (a poll's ShareFetch/ShareAcknowledge round, a
  ``commit()``, the close), counting the acknowledged offsets of each partition with
  ``len()`` of its batch of acknowledgements;
- :class:`SharePollMetrics` belongs to the consumer facade: once per poll
  (``getmany``, and so ``getone`` and ``async for``), with the records handed to the
  application counted per partition of the poll's result;
- :class:`ShareCoordinatorMetrics` belongs to the membership: once per heartbeat
  answered and once per new assignment installed.

Names are the Java share consumer's (``consumer-share-fetch-manager-metrics``,
``consumer-share-coordinator-metrics``, ``consumer-share-metrics``, Kafka 4.3), plus
per-topic values and ``assigned-partitions``, which the Java share consumer does not
have. ``docs/metrics.md`` lists every name.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sized
from typing import Any, Protocol

from aiokafka.structs import TopicPartition

from .network import empty_network
from .stats import Sensor, TopicSensors, topic_metric_names

__all__ = [
    "ShareCoordinatorMetrics",
    "ShareFetchMetrics",
    "SharePollMetrics",
    "ShareTopicMetrics",
    "share_consumer_snapshot",
]

# Each topic's sensors (each reported as <name>-total and <name>-rate).
_RECORDS, _BYTES, _ACKS_SENT, _ACKS_FAILED = (
    "records-consumed",
    "bytes-consumed",
    "acknowledgements-send",
    "acknowledgements-error",
)

#: The names of each ``"topics"`` entry of a share consumer's snapshot.
TOPIC_NAMES = topic_metric_names(_RECORDS, _BYTES, _ACKS_SENT, _ACKS_FAILED)


class ShareTopicMetrics(TopicSensors):
    """Per-topic sensors, shared by the fetch and poll metrics of one consumer."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_RECORDS, _BYTES, _ACKS_SENT, _ACKS_FAILED)


class ShareFetchMetrics:
    """Sensors of one consumer's share sessions: ShareFetch requests and
    acknowledgements.

    Args:
        topics: The per-topic sensors this consumer's snapshot reports (a fresh set
            when not given).
    """

    def __init__(self, topics: ShareTopicMetrics | None = None) -> None:
        #: Seconds per ShareFetch request (the broker's wait for data included).
        self.fetch_latency = Sensor()
        #: Milliseconds the broker asked this client to wait (``ThrottleTimeMs``).
        self.throttle = Sensor()
        #: Bytes of record data per ShareFetch response.
        self.bytes = Sensor()
        #: Records acquired per ShareFetch response.
        self.records = Sensor()
        #: Offsets acknowledged per acknowledging call, and those that failed.
        self.acks_sent = Sensor()
        self.acks_failed = Sensor()
        self.topics = topics if topics is not None else ShareTopicMetrics()

    def fetch_done(self, latency: float, throttle_ms: int) -> None:
        """A ShareFetch was answered after ``latency`` seconds."""
        now = time.monotonic()
        self.fetch_latency.record(latency, now)
        self.throttle.record(throttle_ms, now)

    def fetched(self, per_topic: Mapping[str, tuple[int, int]]) -> None:
        """One ShareFetch response held ``{topic: (records acquired, bytes)}``."""
        now = time.monotonic()
        records = size = 0
        for topic, (n, b) in per_topic.items():
            records += n
            size += b
            if b:
                self.topics(topic)[_BYTES].record(b, now)
        self.records.record(records, now)
        self.bytes.record(size, now)

    def acknowledged(
        self,
        acks: Mapping[TopicPartition, Sized],
        results: Mapping[TopicPartition, BaseException | None],
    ) -> None:
        """``acks`` (``{partition: its acknowledged offsets}``) were sent, or tried;
        ``results`` says which partitions failed."""
        if not acks:
            return
        now = time.monotonic()
        sent = failed = 0
        for tp, offsets in acks.items():
            n = len(offsets)
            sensors = self.topics(tp.topic)
            sensors[_ACKS_SENT].record(n, now)
            sent += n
            if results.get(tp) is not None:
                sensors[_ACKS_FAILED].record(n, now)
                failed += n
        self.acks_sent.record(sent, now)
        if failed:
            self.acks_failed.record(failed, now)

    def snapshot(self) -> dict[str, float]:
        """``consumer-share-fetch-manager-metrics`` values (without the records handed
        to the application, which :class:`SharePollMetrics` counts)."""
        now = time.monotonic()
        latency, size, records = self.fetch_latency, self.bytes, self.records
        return {
            "fetch-total": float(latency.count),
            "fetch-rate": latency.count_rate(now),
            "fetch-latency-avg": latency.avg(now) * 1000,
            "fetch-latency-max": latency.max(now) * 1000,
            "fetch-throttle-time-avg": self.throttle.avg(now),
            "fetch-throttle-time-max": self.throttle.max(now),
            "fetch-size-avg": size.avg(now),
            "fetch-size-max": size.max(now),
            "bytes-consumed-total": size.total,
            "bytes-consumed-rate": size.rate(now),
            "records-per-request-avg": records.avg(now),
            "records-per-request-max": records.max(now),
            "acknowledgements-send-total": self.acks_sent.total,
            "acknowledgements-send-rate": self.acks_sent.rate(now),
            "acknowledgements-error-total": self.acks_failed.total,
            "acknowledgements-error-rate": self.acks_failed.rate(now),
        }


class SharePollMetrics:
    """Sensors of the consumer facade: polls and the records they hand out."""

    def __init__(self) -> None:
        self.topics = ShareTopicMetrics()
        #: Records handed to the application, per poll that handed out any.
        self.records = Sensor()
        #: Seconds from one poll's start to the next one's.
        self.between = Sensor()
        #: Fraction of the time since the previous poll spent inside this one.
        self.idle = Sensor()
        self._last_start: float | None = None
        self._since_last = 0.0

    def poll_started(self) -> float:
        """A poll starts; returns its start (``time.monotonic()``)."""
        now = time.monotonic()
        last = self._last_start
        self._since_last = 0.0 if last is None else now - last
        self.between.record(self._since_last, now)
        self._last_start = now
        return now

    def poll_ended(self, started: float, handed_out: Mapping[TopicPartition, Sized]) -> None:
        """The poll that began at ``started`` returned ``handed_out``."""
        now = time.monotonic()
        inside = now - started
        span = inside + self._since_last
        self.idle.record(inside / span if span > 0 else 1.0, now)
        if handed_out:
            total = 0
            for tp, recs in handed_out.items():
                n = len(recs)
                total += n
                self.topics(tp.topic)[_RECORDS].record(n, now)
            self.records.record(total, now)

    def snapshot(self) -> dict[str, float]:
        """``consumer-share-metrics`` values and ``records-consumed-*``."""
        now = time.monotonic()
        last = self._last_start
        return {
            "records-consumed-total": self.records.total,
            "records-consumed-rate": self.records.rate(now),
            "last-poll-seconds-ago": -1.0 if last is None else now - last,
            "time-between-poll-avg": self.between.avg(now) * 1000,
            "time-between-poll-max": self.between.max(now) * 1000,
            "poll-idle-ratio-avg": self.idle.avg(now),
        }


class ShareCoordinatorMetrics:
    """Sensors of one share-group membership: heartbeats and assignment changes."""

    def __init__(self) -> None:
        #: Seconds per ShareGroupHeartbeat answered (with or without an error code).
        self.heartbeat = Sensor()
        self._last_heartbeat: float | None = None
        #: One value per new assignment installed (the share group's "rebalance").
        self.rebalances = Sensor()
        #: Partitions assigned now.
        self.assigned_partitions = 0

    def heartbeat_done(self, started: float) -> None:
        """A heartbeat sent at ``started`` (``time.monotonic()``) was answered."""
        now = time.monotonic()
        self.heartbeat.record(now - started, now)
        self._last_heartbeat = started

    def assignment_changed(self, assigned: int) -> None:
        """The coordinator gave this member a new assignment of ``assigned``
        partitions."""
        self.rebalances.record(1.0)
        self.assigned_partitions = assigned

    def snapshot(self) -> dict[str, float]:
        """``consumer-share-coordinator-metrics`` values."""
        now = time.monotonic()
        heartbeat, last = self.heartbeat, self._last_heartbeat
        return {
            "heartbeat-total": float(heartbeat.count),
            "heartbeat-rate": heartbeat.count_rate(now),
            "heartbeat-response-time-max": heartbeat.max(now) * 1000,
            "last-heartbeat-seconds-ago": -1.0 if last is None else now - last,
            "rebalance-total": float(self.rebalances.count),
            "rebalance-rate-per-hour": self.rebalances.count_rate(now) * 3600,
            "assigned-partitions": float(self.assigned_partitions),
        }


class _Client(Protocol):
    def network_metrics(self) -> dict[str, Any]: ...


def share_consumer_snapshot(
    poll: SharePollMetrics,
    fetch: ShareFetchMetrics | None,
    coordinator: ShareCoordinatorMetrics | None,
    client: _Client | None,
) -> dict[str, Any]:
    """What ``AIOKafkaShareConsumer.metrics()`` returns: poll, fetch and coordinator
    values (zeros before ``start()``), the client's network values, then ``"topics"``
    and ``"nodes"``."""
    out: dict[str, Any] = poll.snapshot()
    out.update((fetch if fetch is not None else ShareFetchMetrics()).snapshot())
    out.update((coordinator if coordinator is not None else ShareCoordinatorMetrics()).snapshot())
    out.update(client.network_metrics() if client is not None else empty_network())
    nodes = out.pop("nodes", {})
    out["topics"] = poll.topics.snapshot(time.monotonic())
    out["nodes"] = nodes
    return out
