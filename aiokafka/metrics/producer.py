"""The producer's metrics: what the sender sends and what fails.

:class:`ProducerMetrics` belongs to the producer's
:class:`~aiokafka.producer.sender.Sender`, which records once per Produce request
(records, batches and their sizes) and once per failed batch: never per record. Names
are the Java client's ``producer-metrics`` and ``producer-topic-metrics``: as there,
``record-send-total`` counts the records of every Produce request, so a retried batch
counts again (and in ``record-retry-total``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from .network import empty_network
from .stats import Sensor, TopicSensors, topic_metric_names

__all__ = ["ProducerMetrics", "SentBatch"]


class _Partition(Protocol):
    @property
    def topic(self) -> str: ...


class SentBatch(Protocol):
    """What the metrics read of a batch (``ProducerBatch`` has it)."""

    @property
    def tp(self) -> _Partition: ...

    @property
    def record_count(self) -> int: ...

    @property
    def created(self) -> float: ...


# Each topic's sensors (each reported as <name>-total and <name>-rate).
_SENT, _BYTES, _ERRORS, _RETRIES = "record-send", "byte", "record-error", "record-retry"


class ProducerMetrics:
    """Sensors of one producer."""

    #: The names of each ``"topics"`` entry of a snapshot.
    TOPIC_NAMES = topic_metric_names(_SENT, _BYTES, _ERRORS, _RETRIES)

    def __init__(self) -> None:
        #: Records per Produce request (its total is record-send-total).
        self.records_per_request = Sensor()
        #: Bytes per batch sent.
        self.batch_size = Sensor()
        #: Seconds from a batch's creation to its (first or later) send.
        self.queue_time = Sensor()
        #: Records of failed batches (record-error-*).
        self.errors = Sensor()
        #: Records of batches queued again after a failed attempt.
        self.retries = Sensor()
        self._topics = TopicSensors(_SENT, _BYTES, _ERRORS, _RETRIES)

    def request_sent(self, batches: Sequence[SentBatch], sizes: Sequence[int]) -> None:
        """One Produce request carrying ``batches``, whose encoded sizes are
        ``sizes`` (in the same order)."""
        now = time.monotonic()
        if len(batches) == 1:  # the usual request (and every lone send_and_wait's)
            batch = batches[0]
            count = batch.record_count
            size = sizes[0]
            self.queue_time.record(now - batch.created, now)
            self.batch_size.record(size, now)
            sensors = self._topics(batch.tp.topic)
            sensors[_SENT].record(count, now)
            sensors[_BYTES].record(size, now)
            self.records_per_request.record(count, now)
            return
        records = 0
        queue_time = self.queue_time.record
        batch_size = self.batch_size.record
        topics = self._topics
        for batch, size in zip(batches, sizes, strict=True):
            count = batch.record_count
            records += count
            queue_time(now - batch.created, now)
            batch_size(size, now)
            sensors = topics(batch.tp.topic)
            sensors[_SENT].record(count, now)
            sensors[_BYTES].record(size, now)
        self.records_per_request.record(records, now)

    def batch_failed(self, batch: SentBatch) -> None:
        """A batch failed for good: its records are errors."""
        count = batch.record_count
        self.errors.record(count)
        self._topics(batch.tp.topic)[_ERRORS].record(count)

    def batch_retried(self, batch: SentBatch) -> None:
        """A batch goes back to its queue for another attempt."""
        count = batch.record_count
        self.retries.record(count)
        self._topics(batch.tp.topic)[_RETRIES].record(count)

    def snapshot(self) -> dict[str, Any]:
        """``producer-metrics`` values and ``"topics"``: ``{topic: {name: value}}``."""
        now = time.monotonic()
        sent, size, errors, retries = (
            self.records_per_request,
            self.batch_size,
            self.errors,
            self.retries,
        )
        out: dict[str, Any] = {
            "record-send-total": sent.total,
            "record-send-rate": sent.rate(now),
            "records-per-request-avg": sent.avg(now),
            "produce-request-total": float(sent.count),
            "produce-request-rate": sent.count_rate(now),
            "batch-size-avg": size.avg(now),
            "batch-size-max": size.max(now),
            "record-queue-time-avg": self.queue_time.avg(now) * 1000,
            "record-queue-time-max": self.queue_time.max(now) * 1000,
            "record-error-total": errors.total,
            "record-error-rate": errors.rate(now),
            "record-retry-total": retries.total,
            "record-retry-rate": retries.rate(now),
        }
        out["topics"] = self._topics.snapshot(now)
        return out


def producer_snapshot(
    metrics: ProducerMetrics | None,
    network: dict[str, Any] | None,
    buffer_total: int,
    buffer_used: int,
) -> dict[str, Any]:
    """What ``AIOKafkaProducer.metrics()`` returns: the producer's sensors (zeros before
    ``start()``), its buffer, and its client's request and connection metrics."""
    out = (metrics if metrics is not None else ProducerMetrics()).snapshot()
    topics = out.pop("topics")
    out["buffer-total-bytes"] = float(buffer_total)
    out["buffer-available-bytes"] = float(buffer_total - buffer_used)
    out.update(network if network is not None else empty_network())
    out["topics"] = topics
    return out
