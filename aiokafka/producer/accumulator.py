"""Per-partition record batches waiting to be sent, and the memory they hold.

``send()`` appends a record to the last open batch of its partition
(:meth:`RecordAccumulator.append`, synchronous, no task and no lock). The sender task
asks which brokers have something to send (:meth:`RecordAccumulator.ready`), takes at
most one batch per partition for each of them (:meth:`RecordAccumulator.drain`) and
hands failed batches back in their original order (:meth:`RecordAccumulator.reenqueue`).

Memory: a new batch reserves ``max(FIRST_RESERVE, size of its first record)`` bytes of
``buffer_memory`` (at most ``max_batch_size``) and doubles its reservation each time it
fills it, up to ``max_batch_size``, while the buffer has room; when it has none, the
batch is full. Batches return their memory when their outcome is known. So a large
``max_batch_size`` (which halves the per-record cost of a busy producer: fewer
batches, requests and responses on both sides) does not make each of many sparse
partitions hold ``max_batch_size`` bytes. ``send()`` waits in FIFO order for space
(:meth:`RecordAccumulator.wait_for_memory`).

Record futures are :class:`~aiokafka.producer.futures.RecordFuture` views on their
batch's :class:`~aiokafka.producer.futures.BatchResults`: completing a batch is one
operation, not one per record (:class:`~aiokafka.producer.batch.ProducerBatch`, which
this module re-exports).
A batch the broker refuses as too large is rebuilt as smaller batches that keep those
futures (:meth:`RecordAccumulator.split`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable, Container, Iterable
from typing import TYPE_CHECKING

from aiokafka._timeout import wait_for
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.errors import KafkaError, KafkaTimeoutError
from aiokafka.producer.batch import ProducerBatch
from aiokafka.producer.futures import (
    BatchResults,
    RecordFuture,
    bind_append_to_open,
    new_record_future,
)
from aiokafka.record import DefaultRecordBatch, DefaultRecordBatchBuilder
from aiokafka.structs import RecordMetadata, TopicPartition

if TYPE_CHECKING:
    from aiokafka.producer.config import ProducerConfig

__all__ = ["FIRST_RESERVE", "RECORD_OVERHEAD", "ProducerBatch", "RecordAccumulator"]

#: Bytes of ``buffer_memory`` a new batch reserves (unless its first record is larger,
#: or ``max_batch_size`` smaller). The Java client's whole batch size.
FIRST_RESERVE = 16384

#: Bytes of Python objects a buffered record holds besides its encoded bytes: its
#: future (~56, usually kept by the caller until the outcome is known), its
#: timestamp int and list slot, the RecordMetadata a caller asks for. Counted in
#: ``buffer_memory`` so that the bound is on real memory and (for small records) on
#: the number of live objects the garbage collector walks: with 100-byte records,
#: 32 MiB holds ~90k records instead of ~300k.
RECORD_OVERHEAD = 256

# What a snapshot's leader cache (RecordAccumulator._leaders_in) holds for a partition
# it was not asked about yet (None is cached too: no sendable leader).
_UNCACHED = -2

# ready()'s "nothing to look at later" (a constant: it runs on every sender pass).
_NEVER = float("inf")


class RecordAccumulator:
    """Batches per partition, memory accounting and the decisions of what to send.

    Args:
        batch_size: ``max_batch_size``.
        buffer_memory: Bytes all unsent/unanswered batches may reserve.
        linger_ms: How long a batch that is not full may wait while a request to
            its leader is in flight (see :meth:`ready`).
        delivery_timeout_ms: Time from a batch's creation to its failure.
        retry_backoff_ms: Pause before a failed batch is sent again.
        codec: Compression codec id.
        compression_level: Codec level or ``None``.
        is_transactional: Set the transactional bit of batches.
        wakeup: Called when the sender should look again (a batch was created or
            filled up, memory is short, a flush began).
        on_batch_closed: Called with a partition whose open batch stopped taking
            records (sticky partitioning moves on).
    """

    def __init__(
        self,
        *,
        batch_size: int,
        buffer_memory: int,
        linger_ms: int,
        delivery_timeout_ms: int,
        retry_backoff_ms: int,
        codec: int,
        compression_level: int | None = None,
        is_transactional: bool = False,
        wakeup: Callable[[], None] = lambda: None,
        on_batch_closed: Callable[[TopicPartition], None] = lambda tp: None,
    ) -> None:
        self.batch_size = batch_size
        self.buffer_memory = buffer_memory
        self.linger = linger_ms / 1000
        self.delivery_timeout = delivery_timeout_ms / 1000
        self.retry_backoff = retry_backoff_ms / 1000
        # Every batch's builder is an empty copy of this one (validated once, here).
        self._template = DefaultRecordBatchBuilder(
            2, codec, is_transactional, batch_size=0, compression_level=compression_level
        )
        self._wakeup = wakeup
        self._on_batch_closed = on_batch_closed
        self._batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        # The batch of each partition that takes records: the last queued one, until
        # it closes (_close) or leaves the queue (expired, abort_all). One lookup on
        # the per-record path instead of the queue, its last batch and its flag.
        self._open: dict[TopicPartition, ProducerBatch] = {}
        self._incomplete: set[ProducerBatch] = set()
        self._used = 0
        self._mem_waiters: deque[object] = deque()
        self._mem_changed: asyncio.Future[None] | None = None
        self._closed_error: KafkaError | None = None
        self._order = itertools.count()
        self._flushing = 0
        self._closing = False
        self._drain_start: dict[int, int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop of the first batch
        self._first_reserve = min(batch_size, FIRST_RESERVE, buffer_memory)
        # A record without headers whose key and value take at most this many bytes
        # together fits in a batch of _first_reserve bytes: each length varint of
        # size_of() grows by at most 4 bytes from the 1 of an empty key and value.
        # append_to_new() then needs no size estimate (two Python calls per batch).
        self._small_record = self._first_reserve - (
            DefaultRecordBatchBuilder.estimate_size_in_bytes(b"", b"") + 8
        )
        # sendable_leader() of one snapshot, per partition: ready() and drain() ask it
        # for every queued partition on each pass, and a snapshot never changes (a
        # refresh or a leader hint makes a new one).
        self._leaders_of: ClusterMetadata | None = None
        self._leaders: dict[TopicPartition, int | None] = {}
        self._resume_below = buffer_memory - max(self._first_reserve, buffer_memory // 8)

    @classmethod
    def from_config(
        cls,
        config: ProducerConfig,
        *,
        linger_ms: int | None = None,
        codec: int | None = None,
        wakeup: Callable[[], None] = lambda: None,
        on_batch_closed: Callable[[TopicPartition], None] = lambda tp: None,
    ) -> RecordAccumulator:
        """The accumulator of a producer with ``config``: its batch size, memory,
        linger, delivery timeout, back-off, codec and transactional bit
        (``linger_ms`` and ``codec`` replace the config's when given)."""
        return cls(
            batch_size=config.max_batch_size,
            buffer_memory=config.buffer_memory,
            linger_ms=config.linger_ms if linger_ms is None else linger_ms,
            delivery_timeout_ms=config.delivery_timeout_ms,
            retry_backoff_ms=config.retry_backoff_ms,
            codec=config.codec if codec is None else codec,
            compression_level=config.compression_level,
            is_transactional=config.transactional_id is not None,
            wakeup=wakeup,
            on_batch_closed=on_batch_closed,
        )

    def set_wakeup(self, wakeup: Callable[[], None]) -> None:
        """Call ``wakeup`` (instead of the constructor's) when the sender should look
        again: the sender registers itself, as it is made after the accumulator."""
        self._wakeup = wakeup

    # -- appending ----------------------------------------------------------------------

    @property
    def used_memory(self) -> int:
        """Bytes reserved by batches whose outcome is not known yet."""
        return self._used

    def append(
        self,
        tp: TopicPartition,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> RecordFuture | None:
        """Append a record to ``tp``'s open batch, creating one if needed.

        Returns:
            The record's future, or None if a new batch was needed and
            ``buffer_memory`` has no room for it (the caller waits with
            :meth:`wait_for_memory` and tries again).
        """
        future = self.append_to_open(tp, timestamp, key, value, headers)
        if future is None:
            future = self.append_to_new(tp, timestamp, key, value, headers)
        return future

    def append_to_open(
        self,
        tp: TopicPartition,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> RecordFuture | None:
        """Append a record to ``tp``'s open batch (the per-record path of ``send()``).

        Returns:
            The record's future, or None if ``tp`` has no open batch or the record
            does not fit in it (the batch is then closed: it is ready to be sent);
            the caller goes on with :meth:`append_to_new`.
        """
        batch = self._open.get(tp)
        if batch is not None:
            # This runs once per record (in C when built: see the end of the module).
            # Without headers the builder's C add does all of add() (no Python
            # frame); it hands records with headers to the Python one.
            ts = batch.add(timestamp, key, value, headers or None)
            if ts is None and batch.builder.size_limit < self.batch_size:
                ts = self._grow_and_add(batch, timestamp, key, value, headers)
            if ts is not None:
                results = batch.results
                timestamps = results.timestamps
                # An open batch has results of its own (first == 0): the record's
                # index is the number of records before it.
                index = len(timestamps)
                timestamps.append(ts)
                return new_record_future(RecordFuture, results, index)
            self._close(batch)
        return None

    def _grow_and_add(
        self,
        batch: ProducerBatch,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> int | None:
        """Double ``batch``'s reservation (up to ``batch_size``) while ``buffer_memory``
        has room and nobody waits for it, until the record fits; its timestamp, or
        None (the batch is then full)."""
        builder = batch.builder
        while True:
            limit = builder.size_limit
            target = min(self.batch_size, limit * 2)
            extra = target - limit
            if extra <= 0 or self._used + extra > self.buffer_memory or self._mem_waiters:
                return None
            self._used += extra
            batch.reserved += extra
            builder.size_limit = target
            ts = builder.add(timestamp, key, value, headers)
            if ts is not None:
                return ts

    def has_closed_batch(self, tp: TopicPartition) -> bool:
        """True if ``tp``'s newest queued batch takes no more records (it filled up):
        a batch the sender can send at once."""
        dq = self._batches.get(tp)
        return dq is not None and bool(dq) and dq[-1].closed

    def append_to_new(
        self,
        tp: TopicPartition,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> RecordFuture | None:
        """Start a new batch for ``tp`` with this record (after :meth:`append_to_open`
        found no room).

        Returns:
            The record's future, or None if ``buffer_memory`` has no room for a new
            batch (the caller waits with :meth:`wait_for_memory` and tries again).
        """
        if (
            headers is None
            and (0 if key is None else len(key)) + (0 if value is None else len(value))
            <= self._small_record
        ):
            reserve = self._first_reserve
        else:
            size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
            reserve = size if size > self._first_reserve else self._first_reserve
        # Waiters go first, so a stream of small appends cannot starve them.
        if self._used + reserve > self.buffer_memory or self._mem_waiters:
            return None
        batch = self._new_batch(tp, reserve)
        dq = self._batches.get(tp)
        if dq is None:
            dq = self._batches[tp] = deque()
        dq.append(batch)
        self._open[tp] = batch
        # The record goes in as every other one does; it fits (the batch reserved
        # room for it).
        future = self.append_to_open(tp, timestamp, key, value, headers)
        assert future is not None
        self._wakeup()
        return future

    def _close(self, batch: ProducerBatch) -> None:
        """Stop appending to ``batch``; account for its records' Python objects."""
        batch.closed = True
        if self._open.get(batch.tp) is batch:
            del self._open[batch.tp]
        # Done per batch, not per record, to keep append() cheap; until a batch
        # closes, its record overhead is not counted (at most one open batch per
        # partition).
        overhead = batch.builder.record_count * RECORD_OVERHEAD
        batch.reserved += overhead
        self._used += overhead
        self._on_batch_closed(batch.tp)

    def _new_batch(self, tp: TopicPartition, reserve: int) -> ProducerBatch:
        now = time.monotonic()
        self._used += reserve
        loop = self._loop
        if loop is None:  # asyncio.get_running_loop() is a getpid() system call
            loop = self._loop = asyncio.get_running_loop()
        batch = ProducerBatch(
            tp,
            # Limited to what it reserved; _grow_and_add raises both together.
            self._template.empty_like(min(reserve, self.batch_size)),
            now,
            now + self.delivery_timeout,
            (next(self._order),),
            reserve,
            BatchResults(loop, tp),
        )
        self._incomplete.add(batch)
        return batch

    def add_batch(
        self, tp: TopicPartition, builder: DefaultRecordBatchBuilder
    ) -> asyncio.Future[RecordMetadata]:
        """Queue a batch built by the caller (``send_batch``); its memory is
        reserved even beyond ``buffer_memory`` (the records exist already).

        Returns:
            A future for the batch's :class:`RecordMetadata` (offset of its first
            record).
        """
        dq = self._batches.setdefault(tp, deque())
        if dq and not dq[-1].closed:
            # Records appended later must not overtake this batch.
            self._close(dq[-1])
        batch = self._new_batch(tp, builder.size_in_bytes())
        batch.builder = builder
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        batch.batch_future = future
        batch.closed = True
        dq.append(batch)
        self._wakeup()
        return future

    async def wait_for_memory(self, size: int, timeout: float) -> None:
        """Wait (FIFO) until a batch of ``size`` bytes fits in ``buffer_memory``.

        Raises:
            aiokafka.errors.KafkaTimeoutError: no room within ``timeout`` seconds.
            aiokafka.errors.ProducerClosed: the producer closed meanwhile.
        """
        reserve = max(size, self._first_reserve)
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + timeout
        ticket = object()
        self._mem_waiters.append(ticket)
        # Batches waiting for linger are sent now: memory is what we are short of.
        self._wakeup()
        try:
            while True:
                if self._closed_error is not None:
                    raise self._closed_error
                if self._mem_waiters[0] is ticket and self._used + reserve <= self.buffer_memory:
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise KafkaTimeoutError(
                        f"buffer_memory ({self.buffer_memory} bytes) stayed full for "
                        f"{timeout * 1000:.0f} ms (max_block_ms)"
                    )
                if self._mem_changed is None:
                    self._mem_changed = loop.create_future()
                # Shielded: the future is shared by all waiters; one timing out must
                # not cancel it for the others.
                try:
                    await wait_for(asyncio.shield(self._mem_changed), remaining)
                except asyncio.TimeoutError:
                    continue  # the loop raises KafkaTimeoutError (or returns if it fits)
        finally:
            self._mem_waiters.remove(ticket)
            self._notify_memory()

    def _notify_memory(self) -> None:
        # Broadcast: every waiter re-checks; only the first in line may take memory.
        changed = self._mem_changed
        if changed is not None:
            self._mem_changed = None
            if not changed.done():
                changed.set_result(None)

    # -- completing ---------------------------------------------------------------------

    def release(self, batch: ProducerBatch) -> None:
        """Return ``batch``'s memory; call after completing or failing it."""
        if batch in self._incomplete:
            self._incomplete.discard(batch)
            self._used -= batch.reserved
            # A producer blocked on memory is woken once a good part of the buffer
            # is free, not per released batch: each wake-up costs an event loop
            # round trip through several tasks for one batch's worth of records.
            if self._mem_changed is not None and (
                self._used <= self._resume_below or not self._incomplete
            ):
                self._notify_memory()  # someone waits for memory

    def complete(
        self, batch: ProducerBatch, base_offset: int, log_append_time: int, log_start_offset: int
    ) -> None:
        """Resolve ``batch``'s futures and release it."""
        self.release(batch)
        batch.complete(base_offset, log_append_time, log_start_offset)

    def complete_unacknowledged(self, batch: ProducerBatch) -> None:
        """Resolve ``batch``'s futures to ``None`` (``acks=0``) and release it."""
        self.release(batch)
        batch.complete_unacknowledged()

    def fail(self, batch: ProducerBatch, exc: BaseException) -> None:
        """Fail ``batch``'s futures and release it."""
        self.release(batch)
        batch.fail(exc)

    # -- sending decisions --------------------------------------------------------------

    def has_unsent(self) -> bool:
        """True if some batch waits in a queue."""
        return any(self._batches.values())

    def has_incomplete(self) -> bool:
        """True if some batch has no outcome yet."""
        return bool(self._incomplete)

    def ready(
        self, cluster: ClusterMetadata, now: float, busy: Container[int] = ()
    ) -> tuple[set[int], float, list[TopicPartition]]:
        """Which brokers have a batch that may be sent now.

        The linger rule: a batch that is not full waits for ``linger_ms`` only while
        a request to its leader is in flight (``busy``). When nothing is in flight to
        that broker it is sendable at once: waiting could not make the request
        cheaper for anyone, only later. So an idle producer sends each record
        without delay, and a busy one batches for as long as its requests take (or
        ``linger_ms``, whichever ends first: the response wakes the sender).

        Args:
            cluster: The metadata to route by.
            now: ``time.monotonic()``.
            busy: Brokers with a request in flight.

        Returns:
            ``(nodes, next_check, unknown_leader)``: the leader ids with a sendable
            batch; seconds until some other batch becomes sendable (linger, back-off
            or expiry), ``inf`` if none; the partitions with queued batches whose
            leader is unknown or not among the brokers of ``cluster`` (metadata
            should be refreshed; empty if none).
        """
        nodes: set[int] = set()
        next_check = _NEVER
        unknown: list[TopicPartition] = []
        eager = self._flushing > 0 or self._closing or bool(self._mem_waiters)
        linger = self.linger
        leaders = self._leaders_in(cluster)
        for tp, dq in self._batches.items():
            if not dq:
                continue
            batch = dq[0]
            leader = leaders.get(tp, _UNCACHED)
            if leader == _UNCACHED:
                leader = leaders[tp] = cluster.sendable_leader(tp)
            if leader is None:
                unknown.append(tp)
                next_check = min(next_check, batch.deadline - now)
                continue
            if leader in nodes:
                continue
            if batch.retry_at > now:
                next_check = min(next_check, batch.retry_at - now)
                continue
            if eager or batch.closed or len(dq) > 1 or batch.attempts:
                nodes.add(leader)
                continue
            if leader not in busy:
                nodes.add(leader)
                continue
            wait = batch.created + linger - now
            if wait <= 0:
                nodes.add(leader)
            else:
                next_check = min(next_check, wait, batch.deadline - now)
        return nodes, next_check if next_check > 0.0 else 0.0, unknown

    def _leaders_in(self, cluster: ClusterMetadata) -> dict[TopicPartition, int | None]:
        """The leader cache of ``cluster`` (emptied when it is another snapshot)."""
        if cluster is not self._leaders_of:
            self._leaders_of = cluster
            self._leaders = {}
        return self._leaders

    def drain(
        self,
        cluster: ClusterMetadata,
        nodes: Iterable[int],
        max_request_size: int,
        now: float,
        can_send: Callable[[ProducerBatch], bool] | None = None,
    ) -> dict[int, list[ProducerBatch]]:
        """Take at most one sendable batch per partition for each node in ``nodes``,
        up to ``max_request_size`` bytes per node (at least one batch).

        ``can_send(batch)``, if given, may veto a batch (e.g. sequenced batches while
        an epoch bump is pending). Drained batches are closed; the caller owns them
        until it completes, fails or re-enqueues them.
        """
        wanted = set(nodes)
        by_node: dict[int, list[TopicPartition]] = {}
        leaders = self._leaders_in(cluster)
        for tp, dq in self._batches.items():
            if dq:
                leader = leaders.get(tp, _UNCACHED)
                if leader == _UNCACHED:
                    leader = leaders[tp] = cluster.sendable_leader(tp)
                if leader is not None and leader in wanted:
                    by_node.setdefault(leader, []).append(tp)
        result: dict[int, list[ProducerBatch]] = {}
        for node, tps in by_node.items():
            count = len(tps)
            # Start where the last drain of this node stopped, so one busy partition
            # cannot keep the others out of size-limited requests.
            start = self._drain_start.get(node, 0) % count if count > 1 else 0
            size = 0
            taken: list[ProducerBatch] = []
            for i in range(count):
                tp = tps[(start + i) % count]
                dq = self._batches[tp]
                batch = dq[0]
                if batch.retry_at > now or (can_send is not None and not can_send(batch)):
                    continue
                if count > 1:  # sizes matter only when another batch may follow
                    batch_size = batch.builder.size_in_bytes()
                    if taken and size + batch_size > max_request_size:
                        self._drain_start[node] = start + i
                        break
                    size += batch_size
                dq.popleft()
                if not batch.closed:
                    self._close(batch)
                taken.append(batch)
            if taken:
                result[node] = taken
        return result

    def reenqueue(self, batch: ProducerBatch, now: float) -> None:
        """Put a failed batch back for a retry after the back-off, before every batch
        created after it (record order within the partition is kept)."""
        batch.in_flight = False
        batch.retry_at = now + self.retry_backoff
        self._insert_in_order(batch)

    def _insert_in_order(self, batch: ProducerBatch) -> None:
        dq = self._batches.setdefault(batch.tp, deque())
        index = 0
        for index, queued in enumerate(dq):  # noqa: B007 - index is used after the loop
            if queued.order > batch.order:
                break
        else:
            index = len(dq)
        dq.insert(index, batch)

    def split(self, batch: ProducerBatch) -> list[ProducerBatch]:
        """Rebuild a batch the broker refused as too large (MESSAGE_TOO_LARGE) as
        batches of at most half its size, queued first for its partition.

        The parts are sendable at once. Each record keeps its future, timestamp,
        headers and place in the partition's order. The parts carry no producer id
        or sequence (``base_sequence`` -1): the sender assigns them when it drains
        them. ``batch`` itself must not be sent again: its memory is released,
        completing or failing it changes nothing any more, and its ``done`` resolves
        once every part has an outcome.

        Args:
            batch: A batch drained earlier and not completed, failed or re-enqueued.

        Returns:
            The parts in order, or an empty list if ``batch`` cannot be split (a
            single record, or a batch from ``send_batch``, which has no record
            futures): the caller then fails it.
        """
        count = batch.builder.record_count
        if count < 2 or batch.batch_future is not None or batch.settled:
            return []
        records = DefaultRecordBatch(batch.builder.build()).record_tuples()
        limit = max(batch.builder.size_in_bytes() // 2, 1)
        parts: list[ProducerBatch] = []
        builder: DefaultRecordBatchBuilder | None = None
        first = batch.first
        for index, (_, timestamp, key, value, headers, _) in enumerate(records):
            record = (timestamp, key, value, headers or None)
            if builder is None or builder.add(*record) is None:
                builder = self._template.empty_like(limit)
                builder.add(*record)  # the first record always fits
                parts.append(
                    ProducerBatch(
                        batch.tp,
                        builder,
                        batch.created,
                        batch.deadline,
                        (*batch.order, len(parts)),
                        0,
                        batch.results,
                        first + index,
                    )
                )
        batch.replaced = True
        batch.closed = True
        if self._open.get(batch.tp) is batch:
            del self._open[batch.tp]
        queue = self._batches.get(batch.tp)
        if queue and batch in queue:  # not drained after all: the parts replace it
            queue.remove(batch)
        # The old batch's reservation is returned; each part reserves its size.
        self.release(batch)
        for part in parts:
            part.closed = True
            part.last_error = batch.last_error
            part.reserved = part.builder.size_in_bytes() + part.builder.record_count * (
                RECORD_OVERHEAD
            )
            self._used += part.reserved
            self._incomplete.add(part)
            self._insert_in_order(part)
        self._chain_done(batch, parts)
        self._wakeup()
        return parts

    @staticmethod
    def _chain_done(batch: ProducerBatch, parts: list[ProducerBatch]) -> None:
        # flush() may already wait on the old batch's ``done``.
        remaining = [len(parts)]

        def part_done(_: asyncio.Future[None]) -> None:
            remaining[0] -= 1
            if not remaining[0]:
                batch.finish()

        for part in parts:
            part.done.add_done_callback(part_done)

    def expired(self, now: float) -> list[ProducerBatch]:
        """Remove and return queued batches whose delivery deadline passed."""
        out: list[ProducerBatch] = []
        for dq in self._batches.values():
            while dq and dq[0].deadline <= now:
                batch = dq.popleft()
                if not batch.closed:
                    self._close(batch)  # no record may join a batch that is failing
                out.append(batch)
            # Later batches are younger, except re-enqueued ones, which sit first.
        return out

    def unsent_batches(self, tp: TopicPartition) -> list[ProducerBatch]:
        """Queued batches of ``tp`` (read-only view for sequence resets)."""
        return list(self._batches.get(tp, ()))

    def all_queued(self) -> list[ProducerBatch]:
        """Every queued batch."""
        return [b for dq in self._batches.values() for b in dq]

    # -- flush and close ----------------------------------------------------------------

    def begin_flush(self) -> list[asyncio.Future[None]]:
        """Make every batch sendable now; return the ``done`` futures to wait for."""
        self._flushing += 1
        self._wakeup()
        return [b.done for b in self._incomplete]

    def end_flush(self) -> None:
        """Undo one :meth:`begin_flush`."""
        self._flushing -= 1

    def begin_close(self) -> None:
        """From now on batches are sent without lingering."""
        self._closing = True
        self._wakeup()

    def incomplete_batches(self) -> list[ProducerBatch]:
        """Every batch without an outcome yet (queued or in flight)."""
        return list(self._incomplete)

    def abort_all(
        self, exc: KafkaError, error_for: Callable[[ProducerBatch], KafkaError] | None = None
    ) -> None:
        """Fail every batch without an outcome (queued or in flight) with ``exc``, or
        with ``error_for(batch)``; appends after this raise ``exc``."""
        for dq in self._batches.values():
            dq.clear()
        self._open.clear()
        for batch in sorted(self._incomplete, key=lambda b: b.order):
            self.fail(batch, exc if error_for is None else error_for(batch))
        self._closed_error = exc
        self._notify_memory()

    def drop_empty_queues(self) -> None:
        """Forget partitions without queued batches (bounded memory for many topics)."""
        for tp in [tp for tp, dq in self._batches.items() if not dq]:
            del self._batches[tp]


#: :meth:`RecordAccumulator.append_to_open` as written above: the whole path, to which
#: the C one (``_cfuture.c``, when built) hands every record but the common one. Tests
#: compare the two.
python_append_to_open = RecordAccumulator.append_to_open
RecordAccumulator.append_to_open = bind_append_to_open(  # type: ignore[method-assign]
    RecordAccumulator, python_append_to_open
)
