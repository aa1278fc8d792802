"""One record batch of the producer for one partition, with its records' futures.

:class:`ProducerBatch` belongs to the :class:`~aiokafka.producer.accumulator.RecordAccumulator`
while it fills and waits, and to the sender while a request carries it. Completing it
(:meth:`ProducerBatch.complete` / :meth:`ProducerBatch.fail`) is one operation on its
:class:`~aiokafka.producer.futures.BatchResults`, not one per record.
"""

from __future__ import annotations

import asyncio
from operator import attrgetter as _attrgetter
from typing import TYPE_CHECKING

from aiokafka.errors import KafkaError
from aiokafka.producer.futures import BatchResults
from aiokafka.producer.idempotence import NO_SEQUENCE
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import RecordMetadata, TopicPartition

__all__ = ["ProducerBatch"]

_CREATE_TIME = 0
_LOG_APPEND_TIME = 1


class ProducerBatch:
    """One record batch for one partition, with the futures of its records.

    Attributes:
        tp: The partition.
        builder: Encodes the records.
        closed: No more records are appended (full, drained or sent).
        created: ``time.monotonic()`` at creation (linger and expiry start here).
        deadline: ``time.monotonic()`` after which it fails with KafkaTimeoutError.
        attempts: Produce requests that carried it so far.
        retry_at: Not sendable before this ``time.monotonic()`` (retry back-off).
        base_sequence: Idempotent sequence of its first record, or -1 before the
            first drain.
        order: Creation order (keeps retried batches in send order); the parts of a
            split batch extend their batch's order: ``(7,) < (7, 0) < (7, 1) < (8,)``.
        results: Outcomes of its records (shared with the batch it was split from).
        first: Index in ``results`` of its first record.
        reserved: Bytes of ``buffer_memory`` it holds.
        in_flight: A request carrying it has not been answered yet.
        last_error: The error of the last failed attempt.
        replaced: Split into smaller batches (:meth:`RecordAccumulator.split`): its
            records' outcomes come from those, never from this one.
        batch_future: The future of a whole batch from ``send_batch``, else ``None``.
        settled: Every record future has its outcome (:attr:`done` is resolved).
    """

    __slots__ = ("_done", "add", "attempts", "base_sequence", "batch_future", "builder",
                 "closed", "created", "deadline", "first", "in_flight", "last_error", "order",
                 "producer_epoch", "replaced", "reserved", "results", "retry_at", "settled",
                 "tp")  # fmt: skip

    def __init__(
        self,
        tp: TopicPartition,
        builder: DefaultRecordBatchBuilder,
        now: float,
        deadline: float,
        order: tuple[int, ...],
        reserved: int,
        results: BatchResults,
        first: int = 0,
    ) -> None:
        self.tp = tp
        self.builder = builder
        #: The builder's ``add`` at the next offset (in C when built: encoding and
        #: counters in one call, the record's timestamp back), for ``append_to_open``.
        self.add = builder.adder()
        self.results = results
        self.first = first
        self.replaced = False
        self.batch_future: asyncio.Future[RecordMetadata] | None = None
        self.closed = False
        self.created = now
        self.deadline = deadline
        self.attempts = 0
        self.retry_at = 0.0
        self.base_sequence = NO_SEQUENCE
        self.producer_epoch = -1
        self.order = order
        self.reserved = reserved
        self.in_flight = False
        self.last_error: KafkaError | None = None
        #: Every record future has its outcome (see :attr:`done`).
        self.settled = False
        # Made when first asked for (flush and close wait on it; most batches are
        # never waited on this way): one asyncio future less per batch.
        self._done: asyncio.Future[None] | None = None

    @property
    def done(self) -> asyncio.Future[None]:
        """Resolved (never failed) once every record future has its outcome."""
        done = self._done
        if done is None:
            done = self._done = self.results.loop.create_future()
            if self.settled:
                done.set_result(None)
        return done

    def finish(self) -> None:
        """Mark the batch settled: resolve :attr:`done` (idempotent)."""
        self.settled = True
        done = self._done
        if done is not None and not done.done():
            done.set_result(None)

    if TYPE_CHECKING:

        @property
        def record_count(self) -> int:
            """Records in the batch."""
            return self.builder.record_count

    else:
        # A C getter, not a Python frame (the sender reads it per request and answer).
        record_count = property(_attrgetter("builder.record_count"), doc="Records in the batch.")

    def complete(self, base_offset: int, log_append_time: int, log_start_offset: int) -> None:
        """Resolve every record future (the metadata is made when asked for)."""
        if self.settled or self.replaced:
            return
        first = self.first
        self.results.resolve(
            first, first + self.builder.record_count, base_offset, log_append_time, log_start_offset
        )
        whole = self.batch_future
        if whole is not None and not whole.done():
            tp = self.tp
            lso = None if log_start_offset < 0 else log_start_offset
            ts_type = _LOG_APPEND_TIME if log_append_time >= 0 else _CREATE_TIME
            whole.set_result(
                RecordMetadata(
                    tp.topic, tp.partition, tp, base_offset, log_append_time, ts_type, lso
                )
            )
        self.finish()

    def complete_unacknowledged(self) -> None:
        """Resolve every record future (and the batch's) to ``None``: sent with
        ``acks=0``, the broker says nothing back."""
        if self.settled or self.replaced:
            return
        first = self.first
        self.results.resolve_unacknowledged(first, first + self.builder.record_count)
        whole = self.batch_future
        if whole is not None and not whole.done():
            whole.set_result(None)  # type: ignore[arg-type]  # acks=0, as in aiokafka
        self.finish()

    def fail(self, exc: BaseException) -> None:
        """Fail every record future with ``exc``."""
        if self.settled or self.replaced:
            return
        first = self.first
        self.results.fail(first, first + self.builder.record_count, exc)
        whole = self.batch_future
        if whole is not None and not whole.done():
            whole.set_exception(exc)
        self.finish()

    def __repr__(self) -> str:
        return (
            f"ProducerBatch({self.tp.topic}-{self.tp.partition}, records={self.record_count}, "
            f"seq={self.base_sequence}, attempts={self.attempts})"
        )
