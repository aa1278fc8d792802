"""Batch and streaming writers of the ``aiokafka`` data source.

Every Spark task writes its rows with its own producer on its own event loop, both
closed when the task ends or fails. Rows arrive as Arrow batches with a ``value``
column and optional ``key``, ``topic``, ``partition`` and ``headers`` columns; the
``topic`` option, when set, overrides the column (as in Spark's connector).

At-least-once (the default): the task succeeds only after every record is
acknowledged (``acks=all``, idempotent producer); a task or batch Spark runs again
writes its records again.

Exactly-once (``exactlyOnce=true``, streaming only): each task writes in one Kafka
transaction whose ``transactional_id`` is ``<prefix>-<query id>-<task partition id>``
(stable across restarts of the query and attempts of the task, so a new attempt fences
the old one). The transaction also commits, to the consumer group named like the
transactional id, an offset equal to the Spark batch id: a marker that becomes visible
atomically with the records. Before writing, the task reads that group's committed
offset (``require_stable``, after ``init_transactions`` has finished any transaction
left open by an earlier attempt); if it is at or past this batch id, the batch's
records are already committed and the task writes nothing. ``docs/spark.md`` states
the guarantee and its limits.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from aiokafka.producer import AIOKafkaProducer
from aiokafka.producer.partitioner import murmur2_partition
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from .options import WriteOptions
from .runtime import PrivateLoop, close_quietly, new_admin, new_producer

log = logging.getLogger(__name__)

# Local properties Spark sets on every task of a streaming micro-batch.
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"

# Unacknowledged record batches per task (each up to kafka.batch.size bytes): bounds
# memory, and a failing topic stops the task early.
_MAX_PENDING_BATCHES = 64


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one task wrote: ``records`` sent, ``skipped`` when exactly-once found the
    batch already committed by an earlier attempt."""

    partition_id: int
    records: int
    skipped: bool = False


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


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index).to_pylist()


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
    """

    def __init__(self, producer: AIOKafkaProducer, topic_option: str | None) -> None:
        self._producer = producer
        self._topic = topic_option
        self._pending: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._partition_counts: dict[str, int] = {}
        self._sticky = 0
        self.count = 0

    async def _partitions(self, topic: str) -> int:
        count = self._partition_counts.get(topic)
        if count is None:
            count = len(await self._producer.partitions_for(topic))
            self._partition_counts[topic] = count
        return count

    async def send_batch(self, batch: pa.RecordBatch) -> str | None:
        """Send one Arrow batch; returns the first topic written (for the marker)."""
        values = _column(batch, "value")
        if values is None:
            raise ValueError("the data to write has no 'value' column")
        n = len(values)
        keys = _column(batch, "key") or [None] * n
        topics = [self._topic] * n if self._topic else _column(batch, "topic")
        if topics is None:
            raise ValueError("no 'topic' option and no 'topic' column to write to")
        partitions = _column(batch, "partition") or [None] * n
        headers = _column(batch, "headers") or [None] * n
        groups: dict[tuple[str, int], list[int]] = {}
        self._sticky += 1
        for i in range(n):
            topic = topics[i]
            if topic is None:
                raise ValueError("a row has a null 'topic' and no 'topic' option is set")
            partition = partitions[i]
            if partition is None:
                count = await self._partitions(topic)
                key = _as_bytes(keys[i])
                partition = (
                    murmur2_partition(key, count) if key is not None else self._sticky % count
                )
            groups.setdefault((topic, partition), []).append(i)
        for (topic, partition), rows in groups.items():
            await self._send_rows(topic, partition, rows, keys, values, headers)
        self.count += n
        return topics[0] if n else None

    async def _send_rows(
        self,
        topic: str,
        partition: int,
        rows: list[int],
        keys: list[Any],
        values: list[Any],
        headers: list[Any],
    ) -> None:
        producer = self._producer
        builder = producer.create_batch()
        for i in rows:
            row_headers = (
                [(h["key"], _as_bytes(h["value"])) for h in headers[i]] if headers[i] else None
            )
            key = _as_bytes(keys[i])
            value = _as_bytes(values[i])
            if builder.append(key=key, value=value, headers=row_headers) is None:
                await self._send(builder, topic, partition)
                builder = producer.create_batch()
                if builder.append(key=key, value=value, headers=row_headers) is None:
                    raise ValueError(f"a row of {topic!r} does not fit in kafka.batch.size")
        if builder.record_count():
            await self._send(builder, topic, partition)

    async def _send(self, builder: Any, topic: str, partition: int) -> None:
        self._pending.append(await self._producer.send_batch(builder, topic, partition=partition))
        while len(self._pending) > _MAX_PENDING_BATCHES:
            await self._pending.popleft()  # raises the delivery error

    async def finish(self) -> None:
        """Wait until every record is acknowledged; raise the first failure."""
        await self._producer.flush()
        while self._pending:
            await self._pending.popleft()


async def _write_plain(options: WriteOptions, batches: Iterator[pa.RecordBatch]) -> int:
    producer = new_producer(options.producer_kwargs, options.ssl_options)
    await producer.start()
    try:
        sender = _RowSender(producer, options.topic)
        for batch in batches:
            await sender.send_batch(batch)
        await sender.finish()
    except BaseException:
        await close_quietly(producer.stop())
        raise
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
    txn_id = transactional_id(options.transactional_id_prefix, who)
    producer = new_producer(options.producer_kwargs, options.ssl_options, transactional_id=txn_id)
    # start() runs InitProducerId: it fences earlier attempts and completes or aborts
    # a transaction they left open, so the marker read next is final.
    await producer.start()
    try:
        if await _committed_batch(options, txn_id) >= who.batch_id:
            skipped = sum(batch.num_rows for batch in batches)
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
        for batch in batches:
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


def _run_task(
    options: WriteOptions, batches: Iterator[pa.RecordBatch], exactly_once: bool
) -> KafkaCommitMessage:
    loop = PrivateLoop()
    try:
        if exactly_once:
            return loop.run(write_exactly_once(options, batches, TaskIdentity.current()))
        return KafkaCommitMessage(_partition_id(), loop.run(_write_plain(options, batches)))
    finally:
        loop.close()


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("aiokafka")``: at-least-once, one producer per task."""

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """Write one task's rows (runs in a Python worker)."""
        return _run_task(self._options, iterator, exactly_once=False)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("aiokafka")``: at-least-once, or exactly-once with
    ``exactlyOnce=true`` (see the module docstring)."""

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """Write one task's rows of a micro-batch (runs in a Python worker)."""
        return _run_task(self._options, iterator, self._options.exactly_once)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Log what the micro-batch wrote (each task already committed its records)."""
        written = sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))
        log.debug("micro-batch %d: %d records written", batchId, written)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo here: a failed exactly-once task aborted its own transaction
        (or the next attempt's ``init_transactions`` does); at-least-once writes stay."""
        log.warning("micro-batch %d aborted", batchId)
