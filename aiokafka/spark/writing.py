"""One Spark write task: Arrow batches of rows written with one producer.

The task side of :mod:`aiokafka.spark.writer` (which states the guarantees), imported
by a writer's ``write()`` in the Python worker that runs the task: the planner
processes that make the writer and commit the job never load pyarrow, the producer or
an event loop for it.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import json
import logging
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark import TaskContext

from aiokafka.producer.partitioner import murmur2_partition
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from .commit import KafkaCommitMessage
from .options import WriteOptions
from .runtime import (
    ClientPool,
    close_quietly,
    freeze_long_lived,
    new_admin,
    new_producer,
    worker_runtime,
)

if TYPE_CHECKING:
    from aiokafka.producer import AIOKafkaProducer

# The writer's logger, as documented (docs/logging.md).
log = logging.getLogger("aiokafka.spark.writer")

# Local properties Spark sets on every task of a streaming micro-batch.
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"

# Unacknowledged record batches per task (each up to kafka.batch.size bytes): bounds
# memory, and a failing topic stops the task early.
_MAX_PENDING_BATCHES = 64


@dataclass(frozen=True)
class TaskIdentity:
    """Who writes: the streaming query, its batch and the task's partition."""

    query_id: str
    batch_id: int
    partition_id: int

    @classmethod
    def current(cls) -> TaskIdentity:
        """From the running Spark task's context.

        Raises:
            RuntimeError: not inside a streaming micro-batch task.
        """
        context = TaskContext.get()
        if context is None:
            raise RuntimeError("exactlyOnce: not running inside a Spark task")
        query = context.getLocalProperty(QUERY_ID_PROPERTY)
        batch = context.getLocalProperty(BATCH_ID_PROPERTY)
        if not query or batch is None:
            raise RuntimeError("exactlyOnce: the task is not part of a streaming micro-batch")
        return cls(query, int(batch), context.partitionId())


def _partition_id() -> int:
    context = TaskContext.get()
    return 0 if context is None else context.partitionId()


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    """The column ``name``, or None when it is absent or holds only nulls."""
    index = batch.schema.get_field_index(name)
    if index < 0:
        return None
    column = batch.column(index)
    return None if column.null_count == len(column) else column


def _bytes_column(batch: pa.RecordBatch, name: str) -> list[bytes | None] | None:
    """A binary or string column as Python bytes (a string column viewed as binary:
    same layout, its UTF-8 bytes, no per-row Python step); None when absent or all
    null."""
    column = _column(batch, name)
    if column is None:
        return None
    # A view, not a cast: casting loads pyarrow.compute, which a new Python worker
    # has not imported (a tenth of a second or more).
    if pa.types.is_string(column.type):
        column = column.view(pa.binary())
    elif pa.types.is_large_string(column.type):
        column = column.view(pa.large_binary())
    elif not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        column = column.cast(pa.binary())
    values: list[bytes | None] = column.to_pylist()
    return values


def _headers(value: Any) -> list[tuple[str, bytes | None]] | None:
    if not value:
        return None
    return [(h["key"], _as_bytes(h["value"])) for h in value]


def _as_bytes(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


class _RowSender:
    """Sends the rows of Arrow batches with one producer, as whole record batches.

    Rows are grouped by topic and partition (the ``partition`` column, else the
    Java client's murmur2 partition of the key, else one partition per Arrow batch
    and topic, taking turns: the sticky partitioning of KIP-480) and appended to
    ``create_batch()`` builders sent with ``send_batch()``: no per-row ``send()``.
    Order is kept within a partition. At most :data:`_MAX_PENDING_BATCHES` batches
    are unacknowledged at a time, which bounds the task's memory.

    Columns become Python lists in one Arrow call each. An Arrow batch without keys,
    headers, partitions or per-row topics (the common shape) goes to its partition
    without any grouping, a batch's worth of rows per ``BatchBuilder.append_values``
    call (encoded in one pass, stamped with one time); other rows take one
    ``BatchBuilder.append`` call each.
    """

    def __init__(self, producer: AIOKafkaProducer, topic_option: str | None) -> None:
        self._producer = producer
        self._topic = topic_option
        self._pending: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._partition_counts: dict[str, int] = {}
        # A random first partition, as Kafka's sticky partitioner picks one: every
        # task gets a sender of its own, and a counter from 0 sent the first (often
        # only) batch of every task to the same partition.
        self._sticky = random.randrange(1 << 30)
        self.count = 0

    async def _partitions(self, topic: str) -> int:
        count = self._partition_counts.get(topic)
        if count is None:
            count = len(await self._producer.partitions_for(topic))
            self._partition_counts[topic] = count
        return count

    def _topics(self, batch: pa.RecordBatch) -> str | list[str | None]:
        """The one topic of the batch's rows, or each row's topic."""
        if self._topic:
            return self._topic
        column = _column(batch, "topic")
        if column is None:
            raise ValueError("no 'topic' option and no 'topic' column to write to")
        if column.null_count:
            raise ValueError("a row has a null 'topic' and no 'topic' option is set")
        # Array.unique loads pyarrow.compute on first use: only writes with a topic
        # column pay for that import.
        distinct = column.unique().to_pylist()
        if len(distinct) == 1:
            return str(distinct[0])
        topics: list[str | None] = column.to_pylist()
        return topics

    async def send_batch(self, batch: pa.RecordBatch) -> str | None:
        """Send one Arrow batch; returns the first topic written (for the marker)."""
        values = _bytes_column(batch, "value")
        n = batch.num_rows
        if batch.schema.get_field_index("value") < 0:
            raise ValueError("the data to write has no 'value' column")
        if n == 0:
            return None
        if values is None:
            values = [None] * n
        keys = _bytes_column(batch, "key")
        column = _column(batch, "headers")
        headers = None if column is None else [_headers(h) for h in column.to_pylist()]
        partition_column = _column(batch, "partition")
        partitions = None if partition_column is None else partition_column.to_pylist()
        topics = self._topics(batch)
        self._sticky += 1
        if isinstance(topics, str) and partitions is None and keys is None:
            # No choice per row: the whole batch goes to the topic's sticky partition.
            sticky = self._sticky % await self._partitions(topics)
            await self._send_rows(topics, sticky, None, keys, values, headers)
            self.count += n
            return topics
        per_row = [topics] * n if isinstance(topics, str) else topics
        counts = {t: await self._partitions(t) for t in set(per_row) if t is not None}
        groups: dict[tuple[str, int], list[int]] = {}
        for i in range(n):
            topic = per_row[i]
            assert topic is not None  # _topics() refused null topics
            partition = None if partitions is None else partitions[i]
            if partition is None:
                key = None if keys is None else keys[i]
                count = counts[topic]
                partition = (
                    murmur2_partition(key, count) if key is not None else self._sticky % count
                )
            groups.setdefault((topic, partition), []).append(i)
        for (topic, partition), rows in groups.items():
            await self._send_rows(topic, partition, rows, keys, values, headers)
        self.count += n
        return per_row[0]

    async def _send_rows(
        self,
        topic: str,
        partition: int,
        rows: list[int] | None,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        headers: list[list[tuple[str, bytes | None]] | None] | None,
    ) -> None:
        """Append ``rows`` (None: every row, in order) to record batches and send them."""
        producer = self._producer
        builder = producer.create_batch()
        append = builder.append
        if rows is None and keys is None and headers is None:
            # The common shape, values only: a run of rows per call, encoded in one
            # pass (BatchBuilder.append_values), a new batch when one is full.
            i = builder.append_values(values)
            while i < len(values):
                await self._send(builder, topic, partition)
                builder = producer.create_batch()
                done = builder.append_values(values, i)
                if done == i:
                    raise ValueError(f"a row of {topic!r} does not fit in kafka.batch.size")
                i = done
        else:
            for i in range(len(values)) if rows is None else rows:
                key = None if keys is None else keys[i]
                row_headers = None if headers is None else headers[i]
                if append(key=key, value=values[i], headers=row_headers) is None:
                    await self._send(builder, topic, partition)
                    builder = producer.create_batch()
                    append = builder.append
                    if append(key=key, value=values[i], headers=row_headers) is None:
                        raise ValueError(f"a row of {topic!r} does not fit in kafka.batch.size")
        if builder.record_count():
            await self._send(builder, topic, partition)

    async def _send(self, builder: Any, topic: str, partition: int) -> None:
        self._pending.append(await self._producer.send_batch(builder, topic, partition=partition))
        while len(self._pending) > _MAX_PENDING_BATCHES:
            await self._pending.popleft()  # raises the delivery error
        # Let the sender put the batch on the wire while the next one is built: awaiting
        # futures that are already done never suspends.
        await asyncio.sleep(0)

    async def finish(self) -> None:
        """Wait until every record is acknowledged; raise the first failure."""
        await self._producer.flush()
        while self._pending:
            await self._pending.popleft()


class _Input:
    """Spark's blocking iterator of Arrow batches, pulled one batch ahead in a thread
    owned by the task.

    While Spark delivers the next batch (the JVM, or an upstream Python worker still
    reading Kafka), the task's event loop goes on: the producer starts, the sender
    writes and reads acknowledgements. Only one pull runs at a time, so the iterator is
    never used by two threads at once. :meth:`close` lets the thread end; a pull still
    blocked then ends when Spark closes the task's input.
    """

    def __init__(self, batches: Iterator[pa.RecordBatch]) -> None:
        self._batches = iter(batches)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="aiokafka-spark-input")
        self._next: asyncio.Future[pa.RecordBatch | None] | None = None

    def _pull(self) -> asyncio.Future[pa.RecordBatch | None]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._pool, next, self._batches, None)

    def start(self) -> None:
        """Start pulling the first batch (call on the task's loop)."""
        if self._next is None:
            self._next = self._pull()

    def __aiter__(self) -> _Input:
        return self

    async def __anext__(self) -> pa.RecordBatch:
        self.start()
        assert self._next is not None
        batch = await self._next
        if batch is None:
            self._next = None
            raise StopAsyncIteration
        self._next = self._pull()
        return batch

    def close(self) -> None:
        """Stop the thread once its current pull (if any) returns."""
        self._pool.shutdown(wait=False, cancel_futures=True)


async def _write_plain(
    options: WriteOptions, batches: _Input, pool: ClientPool[AIOKafkaProducer] | None = None
) -> int:
    """Write a task's rows at-least-once with a producer from ``pool`` (given back
    once every record is acknowledged), or with a new one closed at the end."""
    kwargs, ssl_opts = options.producer_kwargs, options.ssl_options
    batches.start()  # Spark delivers the first rows while the producer starts
    if pool is not None:
        producer = await pool.take(kwargs, ssl_opts)
    else:
        producer = new_producer(kwargs, ssl_opts)
        await producer.start()
    try:
        sender = _RowSender(producer, options.topic)
        async for batch in batches:
            await sender.send_batch(batch)
        await sender.finish()
    except BaseException:
        await close_quietly(producer.stop())
        raise
    if pool is not None:
        await pool.give_back(kwargs, ssl_opts, producer)
    else:
        await producer.stop()
    return sender.count


def transactional_id(prefix: str, who: TaskIdentity) -> str:
    """The transactional id (and marker group) of a query's task partition."""
    return f"{prefix}-{who.query_id}-{who.partition_id}"


async def _committed_batch(options: WriteOptions, group: str) -> int:
    """The highest batch id committed by this task partition's transactions, or -1."""
    admin = new_admin(options.producer_kwargs, options.ssl_options)
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(group, require_stable=True)
    finally:
        await close_quietly(admin.close())
    return max((o.offset for o in found.values()), default=-1)


async def write_exactly_once(
    options: WriteOptions, batches: Iterator[pa.RecordBatch], who: TaskIdentity
) -> KafkaCommitMessage:
    """Write one task's rows in one transaction, unless its marker says that this
    batch is already committed (see the module docstring).

    Raises:
        aiokafka.errors.KafkaError: the transaction failed (it is aborted) or the
            producer was fenced by a newer attempt of the same task.
    """
    rows = _Input(batches)
    try:
        return await _write_exactly_once(options, rows, who)
    finally:
        rows.close()


async def _write_exactly_once(
    options: WriteOptions, batches: _Input, who: TaskIdentity
) -> KafkaCommitMessage:
    txn_id = transactional_id(options.transactional_id_prefix, who)
    producer = new_producer(options.producer_kwargs, options.ssl_options, transactional_id=txn_id)
    batches.start()
    # start() runs InitProducerId: it fences earlier attempts and completes or aborts
    # a transaction they left open, so the marker read next is final.
    await producer.start()
    try:
        if await _committed_batch(options, txn_id) >= who.batch_id:
            skipped = sum([batch.num_rows async for batch in batches])
            log.info(
                "%s: batch %d already committed; %d rows not written again",
                txn_id,
                who.batch_id,
                skipped,
            )
            await producer.stop()
            return KafkaCommitMessage(who.partition_id, 0, skipped=True)
        # A coroutine in aiokafka 0.14 (a plain call in some versions of this client).
        opened: Any = producer.begin_transaction()
        if inspect.isawaitable(opened):
            await opened
        sender = _RowSender(producer, options.topic)
        marker_topic = None
        async for batch in batches:
            marker_topic = marker_topic or await sender.send_batch(batch)
        await sender.finish()
        if marker_topic is not None:
            meta = json.dumps({"query": who.query_id, "batch": who.batch_id})
            await producer.send_offsets_to_transaction(
                {TopicPartition(marker_topic, 0): OffsetAndMetadata(who.batch_id, meta)}, txn_id
            )
        await producer.commit_transaction()
    except BaseException:
        await close_quietly(producer.stop())
        raise
    await producer.stop()
    return KafkaCommitMessage(who.partition_id, sender.count)


def run_task(
    options: WriteOptions, batches: Iterator[pa.RecordBatch], exactly_once: bool
) -> KafkaCommitMessage:
    """One write task on the worker's loop (a plain producer is pooled, a transactional
    one is closed at the end: see :mod:`aiokafka.spark.runtime`)."""
    freeze_long_lived("write")
    runtime = worker_runtime()
    rows = _Input(batches)
    try:
        if exactly_once:
            return runtime.loop.run(_write_exactly_once(options, rows, TaskIdentity.current()))
        written = runtime.loop.run(_write_plain(options, rows, runtime.producers))
        return KafkaCommitMessage(_partition_id(), written)
    finally:
        rows.close()
