"""One Spark read task: the records of one offset range as Arrow record batches.

The task reads until the consumer's *position* reaches the range's end, never until
it has seen a record at ``end - 1``: on a topic written with transactions the last
offsets before the end can be commit/abort markers or aborted records that are
never returned, and the consumer's position steps over them.

An out-of-range position (records deleted by retention or truncation) fails the task
with :class:`~aiokafka.spark.planning.DataLossError` when ``failOnDataLoss`` is true,
else reading skips to the earliest offset still there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.errors import OffsetOutOfRangeError
from aiokafka.structs import ConsumerRecord, TopicPartition

from .options import ReadOptions
from .planning import DataLossError, OffsetRange, data_loss_message
from .runtime import PrivateLoop, close_quietly, new_consumer

log = logging.getLogger(__name__)

HEADER_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))

# One fetch wait; the task's overall patience is kafkaConsumer.pollTimeoutMs.
_FETCH_WAIT_MS = 500


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The Arrow schema Spark expects for the read schema (timestamps in UTC)."""
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", HEADER_TYPE))
    return pa.schema(fields)


def to_batch(records: list[ConsumerRecord[Any, Any]], schema: pa.Schema) -> pa.RecordBatch:
    """Arrow columns of ``records`` (all of one partition)."""
    n = len(records)
    topic = records[0].topic
    stamps = pa.array([r.timestamp * 1000 for r in records], pa.int64())
    arrays = [
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        pa.array([topic] * n, pa.string()),
        pa.array([records[0].partition] * n, pa.int32()),
        pa.array([r.offset for r in records], pa.int64()),
        stamps.cast(pa.timestamp("us", tz="UTC")),
        pa.array([r.timestamp_type for r in records], pa.int32()),
    ]
    if len(schema) == 8:
        arrays.append(
            pa.array(
                [
                    [{"key": k, "value": v} for k, v in r.headers] if r.headers else []
                    for r in records
                ],
                HEADER_TYPE,
            )
        )
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


class RangeReader:
    """Reads one :class:`OffsetRange` with its own consumer (see the module docstring)."""

    def __init__(self, options: ReadOptions, offsets: OffsetRange) -> None:
        self._options = options
        self._range = offsets
        self._tp = TopicPartition(offsets.topic, offsets.partition)
        self._consumer: AIOKafkaConsumer[Any, Any] | None = None
        self._done = offsets.size <= 0

    def _what(self) -> str:
        r = self._range
        return f"topic {r.topic!r} partition {r.partition} offsets [{r.start}, {r.end})"

    async def start(self) -> None:
        """Create and start the consumer, positioned at the range's start."""
        if self._done:
            return
        consumer = new_consumer(self._options.consumer_kwargs, self._options.ssl_options)
        self._consumer = consumer
        await consumer.start()
        consumer.assign([self._tp])
        consumer.seek(self._tp, self._range.start)

    async def close(self) -> None:
        """Stop the consumer (bounded)."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            await close_quietly(consumer.stop())

    async def next_records(self) -> list[ConsumerRecord[Any, Any]] | None:
        """The next records below the end (possibly empty), None when the range is done.

        Raises:
            DataLossError: offsets of the range are gone and ``failOnDataLoss`` is set.
            TimeoutError: no progress for ``kafkaConsumer.pollTimeoutMs``.
        """
        if self._done or self._consumer is None:
            return None
        consumer = self._consumer
        end = self._range.end
        deadline = time.monotonic() + self._options.poll_timeout_ms / 1000
        while True:
            position = await consumer.position(self._tp)
            if position >= end:
                self._done = True
                return None
            try:
                got = await consumer.getmany(
                    self._tp,
                    timeout_ms=_FETCH_WAIT_MS,
                    max_records=self._options.max_records_per_batch,
                )
            except OffsetOutOfRangeError:
                if not await self._after_data_loss(consumer, position):
                    self._done = True
                    return None
                continue
            records = [r for r in got.get(self._tp, ()) if r.offset < end]
            if records:
                return records
            if await consumer.position(self._tp) > position:
                # Markers or aborted records only: progress without rows.
                deadline = time.monotonic() + self._options.poll_timeout_ms / 1000
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no record of {self._what()} arrived within kafkaConsumer.pollTimeoutMs="
                    f"{self._options.poll_timeout_ms} (position {position})"
                )

    async def _after_data_loss(self, consumer: AIOKafkaConsumer[Any, Any], position: int) -> bool:
        """Handle an out-of-range position; True to go on reading."""
        earliest = (await consumer.beginning_offsets([self._tp]))[self._tp]
        what = (
            f"cannot read {self._what()}: offset {position} is out of range, the earliest "
            f"offset available is {earliest}"
        )
        if self._options.fail_on_data_loss:
            raise DataLossError(data_loss_message(what))
        log.warning("%s; failOnDataLoss=false: skipping what is gone", what)
        if earliest <= position or earliest >= self._range.end:
            # Truncated below the position (or everything left is gone): nothing more.
            return False
        consumer.seek(self._tp, earliest)
        return True


def read_range(options: ReadOptions, offsets: OffsetRange) -> Iterator[pa.RecordBatch]:
    """Arrow batches of one range, on a private event loop closed when the iteration
    ends, fails or is abandoned (Spark closes the iterator)."""
    schema = arrow_schema(options.include_headers)
    loop = PrivateLoop()
    reader = RangeReader(options, offsets)
    try:
        loop.run(reader.start())
        while True:
            records = loop.run(reader.next_records())
            if records is None:
                return
            if records:
                yield to_batch(records, schema)
    finally:
        try:
            loop.run(reader.close())
        finally:
            loop.close()
