"""One Spark read task: the records of its offset ranges as Arrow record batches.

A task's ranges (one per partition) are read with one consumer, fetched together.
The task reads until the consumer's *position* reaches the range's end, never until
it has seen a record at ``end - 1``: on a topic written with transactions the last
offsets before the end can be commit/abort markers or aborted records that are
never returned, and the consumer's position steps over them.

An out-of-range position (records deleted by retention or truncation) fails the task
with :class:`~aiokafka.spark.planning.DataLossError` when ``failOnDataLoss`` is true,
else reading skips to the earliest offset still there.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any

import numpy as np
import pyarrow as pa

from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.errors import OffsetOutOfRangeError
from aiokafka.structs import ConsumerRecord, TopicPartition

from .options import ReadOptions
from .planning import OffsetRange, data_lost
from .runtime import ClientPool, close_quietly, freeze_long_lived, new_consumer, worker_runtime

HEADER_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))

# One fetch wait; the task's overall patience is kafkaConsumer.pollTimeoutMs.
_FETCH_WAIT_MS = 500

#: The task consumer's ``fetch_max_wait_ms`` unless ``kafka.fetch.max.wait.ms`` is set.
#: A task reads only offsets that are already in the log, so a broker never needs to
#: hold a fetch for data; but the fetcher keeps one fetch per broker in flight, and
#: one sent for partitions at their end just before the task finished is still
#: outstanding when a pooled consumer starts its next task, which then waits for it
#: (up to the consumer default of 500 ms on a quiet stream).
TASK_FETCH_MAX_WAIT_MS = 100


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


# Columns are made from buffers (numpy arrays, bytes.join) rather than pa.array(list):
# pyarrow's pa.array checks whether its argument is a pandas object, which imports
# pandas (half a second and more, paid by every new Python worker; PySpark's own read
# path never imports it), and a cast to the timestamp type imports pyarrow.compute.
# numpy is loaded by pyarrow already.
_INT32_MAX = 2**31 - 1
_TIMESTAMP = pa.timestamp("us", tz="UTC")


def _fixed(data: np.ndarray[Any, Any], arrow_type: pa.DataType) -> pa.Array:
    """A fixed-width column without nulls from a numpy array of its type."""
    return pa.Array.from_buffers(arrow_type, len(data), [None, pa.py_buffer(data)])


# One field of every record: map(attrgetter) runs the loop in C, about twice as fast
# per record as a list comprehension reading the attribute.
_KEY = attrgetter("key")
_VALUE = attrgetter("value")
_KEY_SIZE = attrgetter("serialized_key_size")
_VALUE_SIZE = attrgetter("serialized_value_size")
_OFFSET = attrgetter("offset")
_TIMESTAMP_MS = attrgetter("timestamp")
_TIMESTAMP_TYPE = attrgetter("timestamp_type")


def _field(
    records: list[ConsumerRecord[Any, Any]], get: attrgetter[Any], dtype: type[np.generic]
) -> np.ndarray[Any, Any]:
    return np.fromiter(map(get, records), dtype, len(records))


def _binary(
    records: list[ConsumerRecord[Any, Any]], get: attrgetter[Any], size: attrgetter[Any]
) -> pa.Array:
    """The binary column of field ``get`` (whose byte length, -1 for null, is ``size``).

    The record's serialized size gives the lengths and the nulls in one pass (the task
    consumer has no deserializer: the field is those bytes), a column of nulls only
    (keys, usually) needs no other pass, and nulls go in a validity bitmap.
    """
    n = len(records)
    sizes = _field(records, size, np.int64)
    valid = sizes >= 0
    nulls = n - int(np.count_nonzero(valid))
    if nulls == n:
        return pa.nulls(n, pa.binary())
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.where(valid, sizes, 0) if nulls else sizes, out=offsets[1:])
    # b"" adds nothing to the join, so filter(None) drops only what is not there.
    data = b"".join(filter(None, map(get, records)))
    if len(data) != offsets[-1] or offsets[-1] > _INT32_MAX:
        # Sizes not those of the bytes (never with the task's consumer), or a batch too
        # large for int32 offsets (pyarrow's own error).
        return pa.array(list(map(get, records)), pa.binary())
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(
        pa.binary(),
        n,
        [bitmap, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
        null_count=nulls,
    )


def _repeated_string(value: str, n: int) -> pa.Array:
    encoded = value.encode()
    if len(encoded) * n > _INT32_MAX:
        return pa.array([value] * n, pa.string())  # pyarrow's own error for a too-large batch
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(encoded))
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(encoded * n)]
    )


def to_batch(records: list[ConsumerRecord[Any, Any]], schema: pa.Schema) -> pa.RecordBatch:
    """Arrow columns of ``records`` (all of one partition, in offset order)."""
    n = len(records)
    first = records[0]
    if records[-1].offset - first.offset == n - 1:
        # Increasing offsets spanning n - 1: every offset is there (no compaction gap,
        # no transaction marker), the common case, and no pass over the records.
        offsets = np.arange(first.offset, first.offset + n, dtype=np.int64)
    else:
        offsets = _field(records, _OFFSET, np.int64)
    micros = _field(records, _TIMESTAMP_MS, np.int64)
    micros *= 1000
    arrays = [
        _binary(records, _KEY, _KEY_SIZE),
        _binary(records, _VALUE, _VALUE_SIZE),
        _repeated_string(first.topic, n),
        _fixed(np.full(n, first.partition, np.int32), pa.int32()),
        _fixed(offsets, pa.int64()),
        _fixed(micros, _TIMESTAMP),
        _fixed(_field(records, _TIMESTAMP_TYPE, np.int32), pa.int32()),
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


class TaskReader:
    """Reads a task's :class:`OffsetRange` s (one per partition) with one consumer.

    Every partition is assigned and positioned at its range's start, so one fetch
    round brings records of all of them; a partition is paused once its position
    reaches its range's end. See the module docstring for ends and data loss.
    """

    def __init__(
        self,
        options: ReadOptions,
        ranges: Sequence[OffsetRange],
        pool: ClientPool[AIOKafkaConsumer[Any, Any]] | None = None,
    ) -> None:
        self._options = options
        self._pool = pool
        self._kwargs = {"fetch_max_wait_ms": TASK_FETCH_MAX_WAIT_MS, **options.consumer_kwargs}
        self._ranges = {TopicPartition(r.topic, r.partition): r for r in ranges if r.size > 0}
        if len(self._ranges) != len([r for r in ranges if r.size > 0]):
            raise ValueError("a task's offset ranges must be of distinct partitions")
        self._active = set(self._ranges)
        self._consumer: AIOKafkaConsumer[Any, Any] | None = None

    def _what(self, tp: TopicPartition) -> str:
        r = self._ranges[tp]
        return f"topic {r.topic!r} partition {r.partition} offsets [{r.start}, {r.end})"

    async def start(self) -> None:
        """Take a started consumer from the pool (or start one), each partition
        assigned, resumed and positioned at its range's start."""
        if not self._active:
            return
        ssl_opts = self._options.ssl_options
        if self._pool is not None:
            # A partition added since a pooled consumer's last metadata is found by its
            # fetcher's refresh, as for any assigned partition without a leader yet.
            consumer = await self._pool.take(self._kwargs, ssl_opts)
        else:
            consumer = new_consumer(self._kwargs, ssl_opts)
            await consumer.start()
        self._consumer = consumer
        tps = list(self._ranges)
        consumer.assign(tps)
        consumer.resume(*tps)  # a pooled consumer kept its partitions paused
        for tp, r in self._ranges.items():
            consumer.seek(tp, r.start)

    async def close(self, reusable: bool = False) -> None:
        """Stop the consumer (bounded), or, when ``reusable`` (every range was read)
        and there is a pool, pause its partitions and give it back."""
        consumer, self._consumer = self._consumer, None
        if consumer is None:
            return
        if reusable and self._pool is not None:
            consumer.pause(*consumer.assignment())
            await self._pool.give_back(self._kwargs, self._options.ssl_options, consumer)
        else:
            await close_quietly(consumer.stop())

    async def _positions(self, consumer: AIOKafkaConsumer[Any, Any]) -> dict[TopicPartition, int]:
        """Positions of the partitions still below their end; pauses the others."""
        positions = {}
        for tp in sorted(self._active):
            position = await consumer.position(tp)
            if position >= self._ranges[tp].end:
                self._active.discard(tp)
                consumer.pause(tp)
            else:
                positions[tp] = position
        return positions

    async def next_records(self) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]] | None:
        """The next records below the ends, by partition (possibly empty); None when
        every range is done.

        Raises:
            DataLossError: offsets of a range are gone and ``failOnDataLoss`` is set.
            TimeoutError: no progress for ``kafkaConsumer.pollTimeoutMs``.
        """
        consumer = self._consumer
        if consumer is None:
            return None
        deadline = time.monotonic() + self._options.poll_timeout_ms / 1000
        while True:
            positions = await self._positions(consumer)
            if not positions:
                return None
            try:
                got = await consumer.getmany(
                    *positions,
                    timeout_ms=_FETCH_WAIT_MS,
                    max_records=self._options.max_records_per_batch,
                )
            except OffsetOutOfRangeError:
                await self._after_data_loss(consumer, positions)
                continue
            out = {}
            for tp, records in got.items():
                end = self._ranges[tp].end
                if records and records[-1].offset < end:
                    below = records  # the common case: all of them, no copy
                else:
                    # Offsets increase: the records below the end are a prefix.
                    below = records[: bisect_left(records, end, key=_OFFSET)]
                if below:
                    out[tp] = below
            if out:
                return out
            now = [await consumer.position(tp) for tp in positions]
            if any(n > p for n, p in zip(now, positions.values(), strict=True)):
                # Markers or aborted records only: progress without rows.
                deadline = time.monotonic() + self._options.poll_timeout_ms / 1000
                continue
            if time.monotonic() > deadline:
                stuck = "; ".join(f"{self._what(tp)} at {p}" for tp, p in positions.items())
                raise TimeoutError(
                    f"no record arrived within kafkaConsumer.pollTimeoutMs="
                    f"{self._options.poll_timeout_ms} ({stuck})"
                )

    async def _after_data_loss(
        self, consumer: AIOKafkaConsumer[Any, Any], positions: dict[TopicPartition, int]
    ) -> None:
        """Handle an out-of-range position: fail, or skip what is gone.

        The partitions whose position is outside ``[earliest, latest]`` are the lost
        ones (all of those read, if that names none).
        """
        tps = list(positions)
        earliest = await consumer.beginning_offsets(tps)
        latest = await consumer.end_offsets(tps)
        lost = [tp for tp in tps if not earliest[tp] <= positions[tp] <= latest[tp]] or tps
        for tp in lost:
            position = positions[tp]
            what = (
                f"cannot read {self._what(tp)}: offset {position} is out of range, the "
                f"earliest offset available is {earliest[tp]}"
            )
            data_lost(what, self._options.fail_on_data_loss, "skipping what is gone")
            if earliest[tp] <= position or earliest[tp] >= self._ranges[tp].end:
                # Truncated below the position (or everything left is gone): nothing more.
                self._active.discard(tp)
                consumer.pause(tp)
            else:
                consumer.seek(tp, earliest[tp])


def read_ranges(options: ReadOptions, ranges: Sequence[OffsetRange]) -> Iterator[pa.RecordBatch]:
    """Arrow batches of a task's ranges (one per partition), read with one consumer on
    the worker's event loop (see :mod:`aiokafka.spark.runtime`). The consumer goes
    back to the worker's pool when every range was read; it is closed when reading
    fails or is abandoned (Spark closes the iterator)."""
    freeze_long_lived("read")  # see aiokafka.spark.runtime
    schema = arrow_schema(options.include_headers)
    runtime = worker_runtime()
    reader = TaskReader(options, ranges, runtime.consumers)
    done = False
    try:
        runtime.loop.run(reader.start())
        while True:
            found = runtime.loop.run(reader.next_records())
            if found is None:
                done = True
                return
            for records in found.values():
                yield to_batch(records, schema)
    finally:
        runtime.loop.run(reader.close(reusable=done))
