"""Batch and streaming readers of the ``aiokafka`` data source.

Where each method runs (PySpark 4.x): ``partitions()`` of the batch reader, and
``initialOffset``/``latestOffset``/``partitions``/``commit``/``stop`` of the stream
reader, run in Spark's Python planner processes on the driver; ``read()`` runs in a
Python worker per task, on a pickled copy of the reader. The stream reader keeps one
admin client and its loop in the planner process for the life of the query; pickling
drops them (only options travel).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from .options import EARLIEST, LATEST, ReadOptions
from .planning import (
    OffsetRange,
    Offsets,
    data_lost,
    discover,
    from_json,
    group_ranges,
    isolation,
    list_offsets,
    rate_limit,
    resolve,
    split_ranges,
    to_json,
)
from .runtime import PrivateLoop, close_quietly, new_admin

if TYPE_CHECKING:
    import pyarrow as pa

    from aiokafka.admin import AIOKafkaAdminClient


T = TypeVar("T")


class KafkaInputPartition(InputPartition):
    """One Spark task's share: one or more :class:`OffsetRange` read in turn
    (``value``, a tuple)."""

    def __init__(self, value: tuple[OffsetRange, ...]) -> None:
        super().__init__(value)
        self.value: tuple[OffsetRange, ...] = value


#: Offsets per task of a streaming micro-batch (without ``minPartitions``): a batch of
#: ``n`` offsets over ``k`` partitions is read by ``min(k, ceil(n / TASK_OFFSETS))``
#: tasks, each reading its partitions' ranges with one consumer. A trigger-0 query on a
#: modest stream then runs one read task (and one write task downstream) per
#: micro-batch instead of one per Kafka partition: each task costs Spark's scheduling
#: and Python worker round trips, and on ``local[2]`` six tasks run in three waves,
#: while one task reads tens of thousands of records in well under the time of a
#: wave. A batch that grew while the query caught up stays one or two tasks (which
#: keeps it on warm workers and pooled clients). Replays plan the same offsets, hence
#: the same tasks.
TASK_OFFSETS = 50_000


def _ranges_to_partitions(ranges: list[OffsetRange]) -> list[InputPartition]:
    return [KafkaInputPartition((r,)) for r in ranges]


def _read(options: ReadOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    value = partition.value
    if not isinstance(value, tuple):
        return  # PySpark's placeholder partition when none was planned
    # The task side (pyarrow, the consumer) is imported by the worker that runs a task,
    # not by the planner processes that unpickle this module.
    from .reading import read_ranges

    by_partition: dict[tuple[str, int], list[OffsetRange]] = {}
    for offsets in value:
        by_partition.setdefault((offsets.topic, offsets.partition), []).append(offsets)
    if all(len(same) == 1 for same in by_partition.values()):
        yield from read_ranges(options, value)  # one consumer for all of them
        return
    for offsets in value:  # not planned here; read in turn, each with its own consumer
        yield from read_ranges(options, [offsets])


class KafkaBatchReader(DataSourceReader):
    """``spark.read.format("aiokafka")``: offsets resolved once, at planning."""

    def __init__(self, options: ReadOptions) -> None:
        self._options = options

    def partitions(self) -> Sequence[InputPartition]:
        """Offset ranges between ``startingOffsets`` and ``endingOffsets``.

        Raises:
            ValueError: a starting offset is past its ending offset, or an offsets
                option names unknown partitions.
        """
        loop = PrivateLoop()
        try:
            return _ranges_to_partitions(loop.run(self._plan()))
        finally:
            loop.close()

    async def _plan(self) -> list[OffsetRange]:
        opts = self._options
        admin = new_admin(opts.consumer_kwargs, opts.ssl_options)
        await admin.start()
        try:
            tps = await discover(admin, opts.subscription)
            start = await resolve(admin, tps, opts.starting, opts, "startingOffsets")
            end = await resolve(admin, tps, opts.ending, opts, "endingOffsets")
        finally:
            await close_quietly(admin.close())
        ranges = []
        for tp in tps:
            if start[tp] > end[tp]:
                raise ValueError(
                    f"the starting offset {start[tp]} of topic {tp[0]!r} partition {tp[1]} is "
                    f"past its ending offset {end[tp]} (options startingOffsets/endingOffsets)"
                )
            ranges.append(OffsetRange(tp[0], tp[1], start[tp], end[tp]))
        return split_ranges(ranges, opts.min_partitions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The records of one planned range (runs in a Python worker)."""
        return _read(self._options, partition)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("aiokafka")`` (see the module docstring)."""

    def __init__(self, options: ReadOptions) -> None:
        self._options = options
        self._loop: PrivateLoop | None = None
        self._admin: AIOKafkaAdminClient | None = None
        self._target: Offsets | None = None
        self._latest: Offsets | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"_options": self._options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A copy in a worker or another planner process starts without clients.
        self._options = state["_options"]
        self._loop = None
        self._admin = None
        self._target = None
        self._latest = None

    def _run(self, step: Callable[[AIOKafkaAdminClient], Awaitable[T]]) -> T:
        if self._loop is None:
            self._loop = PrivateLoop()
        return self._loop.run(self._call(step))

    async def _call(self, step: Callable[[AIOKafkaAdminClient], Awaitable[T]]) -> T:
        if self._admin is None:
            opts = self._options
            admin = new_admin(opts.consumer_kwargs, opts.ssl_options)
            await admin.start()
            self._admin = admin
        return await step(self._admin)

    async def _initial(self, admin: AIOKafkaAdminClient) -> Offsets:
        tps = await discover(admin, self._options.subscription)
        return await resolve(admin, tps, self._options.starting, self._options, "startingOffsets")

    async def _latest_offsets(self, admin: AIOKafkaAdminClient) -> Offsets:
        tps = await discover(admin, self._options.subscription)
        return await list_offsets(admin, tps, LATEST, isolation(self._options))

    def initialOffset(self) -> dict[str, Any]:
        """Offsets where a new query starts (``startingOffsets``, resolved now)."""
        initial = self._run(self._initial)
        return to_json(initial)

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the end of an ``availableNow`` query at the latest offsets of now."""
        self._target = self._run(self._latest_offsets)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a read limit."""
        limit = self._options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """The end of the next micro-batch: the latest offsets (capped by the
        ``availableNow`` target and the read limit). Partitions added since the last
        trigger join here.

        Raises:
            DataLossError: a partition being read disappeared and ``failOnDataLoss``.
        """
        begin = from_json(start)
        latest = self._run(self._latest_offsets)
        self._latest = dict(latest)
        gone = sorted(set(begin) - set(latest))
        if gone:
            what = ", ".join(
                f"topic {t!r} partition {p} (at offset {begin[(t, p)]})" for t, p in gone
            )
            data_lost(f"partitions disappeared: {what}", self._options.fail_on_data_loss, "dropped")
        if self._target is not None:
            latest = {
                tp: min(o, self._target[tp]) for tp, o in latest.items() if tp in self._target
            }
            # Partitions of the target that were already read stay where they are.
            latest.update({tp: o for tp, o in begin.items() if tp in latest and o > latest[tp]})
        # New partitions enter at their start (the earliest offset, fixed in partitions()).
        if isinstance(limit, ReadMaxRows):
            latest = rate_limit(begin, latest, limit.max_rows)
        return to_json(latest)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The latest offsets seen by the last ``latestOffset`` call."""
        return None if self._latest is None else to_json(self._latest)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """Offset ranges of one micro-batch; partitions without a start offset (new
        ones) start at their earliest offset.

        Raises:
            DataLossError: an end offset is below its start (the partition was
                truncated or re-created) and ``failOnDataLoss``.
        """
        begin = from_json(start)
        until = from_json(end)
        new = [tp for tp in until if tp not in begin]
        if new:
            level = isolation(self._options)
            begin.update(self._run(lambda admin: list_offsets(admin, new, EARLIEST, level)))
        ranges = []
        for tp, stop in sorted(until.items()):
            first = begin.get(tp, stop)
            if stop < first:
                what = (
                    f"topic {tp[0]!r} partition {tp[1]}: the end offset {stop} is below the "
                    f"offset {first} already read (truncated or re-created)"
                )
                data_lost(what, self._options.fail_on_data_loss, "skipped")
                continue
            ranges.append(OffsetRange(tp[0], tp[1], first, stop))
        ranges = [r for r in ranges if r.size > 0]
        if self._options.min_partitions is None and 1 < len(ranges):
            tasks = min(len(ranges), math.ceil(sum(r.size for r in ranges) / TASK_OFFSETS))
            if tasks < len(ranges):
                return [KafkaInputPartition(group) for group in group_ranges(ranges, tasks)]
        return _ranges_to_partitions(split_ranges(ranges, self._options.min_partitions))

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The records of one planned range (runs in a Python worker)."""
        return _read(self._options, partition)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: the offsets live in Spark's checkpoint, not in Kafka."""

    def stop(self) -> None:
        """Close the admin client and the loop (the query ended)."""
        loop, self._loop = self._loop, None
        admin, self._admin = self._admin, None
        if loop is None:
            return
        try:
            if admin is not None:
                loop.run(close_quietly(admin.close()))
        finally:
            loop.close()
