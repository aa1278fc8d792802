"""``AIOKafkaProducer``: the public producer facade.

Tasks (see ``docs/DESIGN.md``): the constructor starts nothing. :meth:`start`
connects the cluster client (metadata, its maintenance task), starts the sender task
and fetches a producer id when idempotent. :meth:`stop` then, in this order: refuses
new sends, sends everything buffered (while deliveries make progress; see
:meth:`AIOKafkaProducer.stop` for the bound), cancels the sender and its request
tasks, fails whatever is left with :class:`~aiokafka.errors.ProducerClosed`, and
closes the connections.

Transactions (``transactional_id``): :meth:`start` also runs InitProducerId (which
fences older producers with the same id); then records are sent only between
:meth:`begin_transaction` and :meth:`commit_transaction`/:meth:`abort_transaction`
(or inside ``async with producer.transaction():``). The requests and states live in
``transactions.py`` and ``txn_state.py``.

Hot path: ``send()`` serializes, picks a partition from a per-topic cache, and
appends to the partition's open batch synchronously (no task, no lock, no await
unless metadata or buffer memory is missing). Once per batch that fills up it yields
to the event loop before starting the next one, so the sender puts the full batch on
the wire while the caller goes on producing. Record futures are resolved in bulk
when the batch's response arrives.
"""

from __future__ import annotations

import asyncio
import logging
import random
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from aiokafka import errors
from aiokafka.errors import (
    IllegalStateError,
    KafkaError,
    KafkaTimeoutError,
    ProducerClosed,
    for_code,
)
from aiokafka.hooks import Instrumentable
from aiokafka.options import RESOLVED, StartStop
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.options import ProducerOptions
from aiokafka.producer.partitioner import StickyPartitionState, murmur2_partition
from aiokafka.producer.records import BatchBuilder, RecordSerializer
from aiokafka.producer.transactional import TransactionalAPI
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import KT, VT, RecordMetadata, TopicPartition

if TYPE_CHECKING:
    from aiokafka.cluster.client import AIOKafkaClient
    from aiokafka.cluster.interest import InterestHandle
    from aiokafka.cluster.metadata import ClusterMetadata
    from aiokafka.producer.accumulator import RecordAccumulator
    from aiokafka.producer.config import ProducerConfig
    from aiokafka.producer.futures import RecordFuture
    from aiokafka.producer.sender import Sender
    from aiokafka.producer.transactions import TransactionManager

__all__ = ["AIOKafkaProducer", "BatchBuilder"]

log = logging.getLogger(__name__)

_BATCH_HEADER = 61

#: aiokafka 0.14's name for the default of ``acks`` ("not given"). Code written for it
#: imports it to pass "no choice" on (FastStream: ``from aiokafka.producer.producer
#: import _missing``, then ``AIOKafkaProducer(acks=_missing)``), so it is our sentinel:
#: an option left at it resolves as if not given.
_missing = RESOLVED


@dataclass(slots=True)
class _TopicEntry:
    """Partition lists of one topic, valid for one metadata snapshot."""

    cluster: ClusterMetadata
    all_partitions: tuple[int, ...]
    available: tuple[int, ...]
    tps: dict[int, TopicPartition]
    #: The sticky partition of keyless records while it does not change (set on
    #: first use, cleared when its batch closes): no partitioner call per record.
    sticky: TopicPartition | None = None


class AIOKafkaProducer(ProducerOptions[KT, VT], TransactionalAPI, Instrumentable, StartStop):
    """An asyncio Kafka producer (aiokafka-compatible).

    Every option is a typed keyword of the constructor
    (:class:`~aiokafka.producer.options.ProducerOptions`); see
    :class:`~aiokafka.producer.config.ProducerConfig` for the idempotence rules
    (idempotence and ``acks="all"`` are on unless disabled or incompatible options
    are given). The serializers set the key and value types ``send()`` takes
    (``bytes`` without them).

    Example::

        async with AIOKafkaProducer(bootstrap_servers="localhost:9092") as producer:
            fut = await producer.send("topic", b"value", key=b"key")
            metadata = await fut

    Raises:
        ValueError: an option is invalid (the message names it). An unknown option
            or a value of the wrong type raises
            :class:`~aiokafka.producer.InvalidOptionError`, which is also a
            ``TypeError`` (as in aiokafka 0.x) and suggests the closest option name.
    """

    def _setup(self, config: ProducerConfig) -> None:
        # Called by ProducerOptions.__init__ with the validated options.
        self._config = config
        self._serializer = RecordSerializer(config.key_serializer, config.value_serializer)
        # No serializers: send() skips serialize() for a record of bytes (or None).
        self._plain = self._serializer.plain
        self._partitioner = config.partitioner
        self._sticky = StickyPartitionState()
        self._max_request_size = config.max_request_size
        self._max_record = min(config.max_request_size, config.buffer_memory)
        self._max_block = config.max_block_ms / 1000
        self._topics: dict[str, _TopicEntry] = {}
        self._ids = (
            ProducerIdState(config.transactional_id, config.transaction_timeout_ms)
            if config.enable_idempotence
            else None
        )
        self._state = "new"  # new -> running -> closing -> closed
        # One flag for the hot path: running, and no transactional_id (transactional
        # sends also check the transaction state). Everything else is checked by
        # _check_running().
        self._accepting = False
        self._txn: TransactionManager | None = None
        self._client: AIOKafkaClient | None = None
        #: The topics this producer sends to, as the client's metadata interest.
        self._interest: InterestHandle | None = None
        self._sender: Sender | None = None
        self._acc: RecordAccumulator | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._close_task: asyncio.Task[None] | None = None

    @property
    def config(self) -> ProducerConfig:
        """The validated configuration."""
        return self._config

    @property
    def client(self) -> AIOKafkaClient:
        """The cluster client (after :meth:`start`)."""
        if self._client is None:
            raise IllegalStateError("AIOKafkaProducer.start() was not called")
        return self._client

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster and start the sender task.

        Raises:
            aiokafka.errors.KafkaConnectionError: no bootstrap server answered within
                ``request_timeout_ms``.
            aiokafka.errors.IllegalStateError: called twice.
        """
        if self._state != "new":
            raise IllegalStateError(f"AIOKafkaProducer.start(): the producer is {self._state}")
        self._loop = asyncio.get_running_loop()
        # Imported by the first start() for import cost (issue 14): the cluster client
        # (with the connection layer), the accumulator and the sender are most of the
        # producer's code, and a program may import the producer without starting one.
        # None of them imports this module (no cycle).
        from aiokafka.cluster.client import AIOKafkaClient
        from aiokafka.producer.accumulator import RecordAccumulator
        from aiokafka.producer.sender import Sender

        config = self._config
        self._client = AIOKafkaClient(config.client)
        # Registered before the bootstrap: a producer that has sent nothing asks
        # for no topic's metadata (not, as an empty set would, for all of them).
        self._interest = self._client.topic_interest("producer")
        self._state = "running"
        try:
            await self._client.start()
        except BaseException:
            self._state = "closed"
            raise
        self._acc = RecordAccumulator.from_config(
            config,
            # The callback does not hold the producer: its tasks must not keep it
            # alive, so that one dropped without stop() is collected and released
            # (__del__). Wake-ups go to the sender, which registers itself.
            on_batch_closed=(
                partial(_sticky_batch_closed, self._topics, self._sticky)
                if self._partitioner is None
                else _ignore_batch_closed
            ),
        )
        if config.transactional_id is not None:
            assert self._ids is not None  # transactional_id requires idempotence
            # Imported here for import cost only: a producer without transactional_id
            # never loads it; transactions.py imports nothing of this module (no cycle).
            from aiokafka.producer.transactions import TransactionManager

            self._txn = TransactionManager(
                self._client,
                self._ids,
                config.transactional_id,
                config.transaction_timeout_ms,
                config.max_block_ms,
            )
        self._sender = Sender(self._client, self._acc, config, self._ids, self._txn)
        self._sender.start()
        # KIP-714 resource attributes of a producer (the Java client's).
        resource = {"transactional_id": config.transactional_id, "client_rack": config.client_rack}
        self._client.push_metrics(
            "producer", self.metrics, {k: v for k, v in resource.items() if v}
        )
        if self._txn is not None:
            try:
                await self._txn.initialize()
            except BaseException:
                # Shielded and bounded: a failed start must not leave tasks behind.
                await asyncio.shield(self.stop(timeout=0))
                raise
        self._accepting = config.transactional_id is None
        log.debug("Producer started (idempotent=%s, acks=%s)", self._ids is not None, config.acks)

    async def stop(self, timeout: float | None = None) -> None:
        """Send buffered records, then close (see the module docstring for the order).

        How long buffered records are waited for (``docs/producer-shutdown.md``):
        without ``timeout``, as long as deliveries make progress: ``stop()`` gives up
        once no batch got an outcome (acknowledged or failed) for
        ``request_timeout_ms``, and never waits longer than ``delivery_timeout_ms``
        in all. So a broker that is gone or stalled delays shutdown by about
        ``request_timeout_ms`` (40 s by default), not the whole delivery timeout,
        and a healthy one still receives everything buffered. Records without an
        outcome then fail with :class:`~aiokafka.errors.ProducerClosed`, whose
        message says why ``stop()`` gave up and which records they were, and whose
        ``__cause__`` is their batch's last error.

        Args:
            timeout: Seconds to wait for buffered records at most, instead of the
                rule above (``0``: fail them at once).
        """
        if self._state == "new":
            self._state = "closed"
            return
        if self._close_task is None:
            self._state = "closing"
            self._accepting = False
            self._close_task = asyncio.create_task(self._close(timeout))
        # Shielded: a caller giving up on stop() must not leave connections open; the
        # close itself is bounded by the timeout above.
        await asyncio.shield(self._close_task)

    async def _close(self, timeout: float | None) -> None:
        try:
            if self._sender is not None:
                await self._sender.close(
                    timeout, ProducerClosed("the producer was stopped before delivery")
                )
        finally:
            if self._client is not None:
                await self._client.close(timeout)  # bounds the final metrics push
            self._state = "closed"

    def __del__(self, _warn: Callable[..., None] = warnings.warn) -> None:
        # As aiokafka does: a started producer dropped without stop() warns (only a
        # started one: an unstarted producer holds nothing, though aiokafka warns for
        # that too). Unlike aiokafka, which left it running, what it left is then
        # stopped in the background as stop() would (see closing.release_abandoned).
        if getattr(self, "_state", None) != "running":
            return
        self._state = "closed"
        _warn(f"Unclosed AIOKafkaProducer {self!r}", ResourceWarning, source=self)
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_exception_handler(
            {"producer": self, "message": "Unclosed AIOKafkaProducer (stop() was not called)"}
        )
        # Loaded with the sender at start(), so no import runs here at collection time.
        from aiokafka.producer.closing import release_abandoned

        try:
            loop.call_soon_threadsafe(release_abandoned, self._sender, self._client)
        except RuntimeError:
            pass  # the loop closed meanwhile: nothing can run any more

    def _check_running(self, sending: bool = False) -> None:
        if self._state == "running":
            fatal = self._sender.fatal_error if self._sender is not None else None
            if fatal is not None:
                raise fatal
            if sending and self._txn is not None:
                self._txn.state.check_send()
            return
        if self._state == "new":
            raise IllegalStateError("AIOKafkaProducer.start() was not called")
        raise ProducerClosed("the producer is stopped")

    # -- sending ------------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        value: VT | None = None,
        key: KT | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> RecordFuture:
        """Queue a record; return a future of its :class:`~aiokafka.structs.RecordMetadata`.

        Waits only when the topic's metadata is not known yet or ``buffer_memory``
        is full (at most ``max_block_ms`` for each), and yields to the event loop
        once when the partition's batch has just filled up. Cancelling this
        coroutine before it returns leaves nothing queued; cancelling the returned
        future does not stop the record from being sent.

        Args:
            topic: Topic name.
            value: Value (bytes, or anything the ``value_serializer`` takes).
            key: Key (bytes, or anything the ``key_serializer`` takes).
            partition: Explicit partition; otherwise the partitioner chooses.
            timestamp_ms: Record timestamp (ms since the epoch); default now.
            headers: ``(str, bytes)`` pairs.

        Returns:
            A future resolved with the record's metadata when the broker acknowledged
            it (with ``acks=0``: resolved to ``None`` once the request is written, as
            in aiokafka), or failed with the typed error.

        Raises:
            TypeError: key/value/headers/timestamp of the wrong type.
            ValueError: ``partition`` out of range.
            aiokafka.errors.MessageSizeTooLargeError: the record is larger than
                ``max_request_size`` (or ``buffer_memory``).
            aiokafka.errors.UnknownTopicOrPartitionError: the topic does not exist
                after ``max_block_ms``.
            aiokafka.errors.KafkaTimeoutError: no buffer space within ``max_block_ms``.
            aiokafka.errors.ProducerClosed: the producer is stopped.
        """
        if not self._accepting:
            self._check_running(sending=True)
        key_bytes: bytes | None
        value_bytes: bytes | None
        header_list: list[tuple[str, bytes | None]] | None
        if (
            headers is None
            and timestamp_ms is None
            and self._plain
            and (value is None or type(value) is bytes)
            and (key is None or type(key) is bytes)
        ):
            # The common record (no serializers, bytes or None, no headers or
            # timestamp) has nothing to convert or check: what serialize() would
            # return, without its call (this runs once per record).
            # (mypy does not narrow a type variable by these checks.)
            key_bytes, value_bytes, header_list = key, value, None  # type: ignore[assignment]
        else:
            key_bytes, value_bytes, header_list = self._serializer.serialize(
                key, value, headers, timestamp_ms
            )
        size = (len(value_bytes) if value_bytes is not None else 0) + (
            len(key_bytes) if key_bytes is not None else 0
        )
        if size + 100 > self._max_record or header_list:
            self._check_size(key_bytes, value_bytes, header_list)

        entry = self._topics.get(topic)
        # A new snapshot (refreshed metadata) rebuilds the entry.
        if entry is None or entry.cluster is not self._client.cluster:  # type: ignore[union-attr]
            entry = await self._topic_entry(topic)
        sticky = False
        if partition is None:
            if self._partitioner is not None:
                tp = entry.tps[self._partitioner_choice(topic, entry, key_bytes)]
            elif key_bytes is not None:
                tp = entry.tps[murmur2_partition(key_bytes, len(entry.all_partitions))]
            else:
                sticky = True
                tp = entry.sticky  # type: ignore[assignment]
                if tp is None:
                    tp = self._sticky_tp(topic, entry)
        else:
            if partition not in entry.tps:
                entry = await self._check_partition(topic, partition)
            tp = entry.tps[partition]
        acc = self._acc
        assert acc is not None
        future = acc.append_to_open(tp, timestamp_ms, key_bytes, value_bytes, header_list)
        if future is None:
            # A new batch. Unless the partition's batch just filled up, it starts here:
            # no coroutine of its own on a lone send_and_wait's path.
            if acc.has_closed_batch(tp):
                return await self._append_after_full(
                    tp, timestamp_ms, key_bytes, value_bytes, header_list, entry if sticky else None
                )
            future = acc.append_to_new(tp, timestamp_ms, key_bytes, value_bytes, header_list)
            if future is None:
                future = await self._append_when_memory(
                    tp, timestamp_ms, key_bytes, value_bytes, header_list
                )
        return future

    # aiokafka 0.14's names for what OpenTelemetry's aiokafka instrumentation reads to
    # give a send span its partition (aiokafka.options says why they exist).

    @property
    def _key_serializer(self) -> Callable[[Any], bytes] | None:
        return self._config.key_serializer

    @property
    def _value_serializer(self) -> Callable[[Any], bytes] | None:
        return self._config.value_serializer

    def _partition(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        serialized_key: bytes | None,
        serialized_value: bytes | None,
    ) -> int:
        """The partition :meth:`send` picks for a record of ``topic`` (its metadata
        known), chosen as :meth:`send` chooses it."""
        if partition is not None:
            return partition
        cluster = self.client.cluster
        entry = self._topics.get(topic)
        if entry is None or entry.cluster is not cluster:
            entry = self._entry_from(topic, cluster)
            if entry is None:
                raise errors.UnknownTopicOrPartitionError(f"topic {topic!r}")
        if self._partitioner is not None:
            return self._partitioner_choice(topic, entry, serialized_key)
        if serialized_key is not None:
            return murmur2_partition(serialized_key, len(entry.all_partitions))
        return (entry.sticky or self._sticky_tp(topic, entry)).partition

    def _partitioner_choice(self, topic: str, entry: _TopicEntry, key: bytes | None) -> int:
        """The constructor's partitioner's choice for a record with ``key`` (``None``
        also for a batch), checked against the topic's partitions."""
        assert self._partitioner is not None
        partition = self._partitioner(key, list(entry.all_partitions), list(entry.available))
        if partition not in entry.tps:
            raise ValueError(f"partitioner returned {partition!r}, not a partition of {topic!r}")
        return partition

    def _sticky_tp(self, topic: str, entry: _TopicEntry) -> TopicPartition:
        partition = self._sticky.partition(topic, entry.all_partitions, entry.available)
        tp = entry.sticky = entry.tps[partition]
        return tp

    async def _append_after_full(
        self,
        tp: TopicPartition,
        timestamp_ms: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        sticky: _TopicEntry | None = None,
    ) -> RecordFuture:
        """The record needs a new batch because ``tp``'s batch just filled up.

        Let the sender put that batch on the wire now, so the broker works while the
        caller goes on producing: a caller that never awaits anything else would
        otherwise fill all of buffer_memory before the first request goes out, then
        alternate with the broker (each idle while the other works). Yielding before
        appending keeps the cancellation contract: nothing of this record is queued
        yet.

        ``sticky``: the topic's entry when the sticky partitioner chose ``tp``. The
        partitioner has moved on (KIP-480), and so does this record: starting
        ``tp``'s next batch with it would leave a one-record batch behind, sent on
        its own after ``linger_ms``.
        """
        acc = self._acc
        assert acc is not None
        await asyncio.sleep(0)
        self._check_running(sending=True)
        if sticky is not None:
            tp = sticky.sticky or self._sticky_tp(tp.topic, sticky)
        future = acc.append(tp, timestamp_ms, key, value, headers)
        if future is None:
            future = await self._append_when_memory(tp, timestamp_ms, key, value, headers)
        return future

    def _check_size(
        self, key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes | None]] | None
    ) -> None:
        size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
        if size > self._max_request_size:
            raise errors.MessageSizeTooLargeError(
                f"the record is {size} bytes, more than max_request_size ({self._max_request_size})"
            )
        if size > self._config.buffer_memory:
            raise errors.MessageSizeTooLargeError(
                f"the record is {size} bytes, more than buffer_memory "
                f"({self._config.buffer_memory})"
            )

    async def _append_when_memory(
        self,
        tp: TopicPartition,
        timestamp_ms: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
    ) -> RecordFuture:
        acc = self._acc
        assert acc is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._max_block
        size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
        while True:
            await acc.wait_for_memory(size, max(0.0, deadline - loop.time()))
            self._check_running()
            future = acc.append(tp, timestamp_ms, key, value, headers)
            if future is not None:
                return future

    async def send_and_wait(
        self,
        topic: str,
        value: VT | None = None,
        key: KT | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> RecordMetadata:
        """:meth:`send` and wait for the record's metadata (same arguments/errors)."""
        future = await self.send(topic, value, key, partition, timestamp_ms, headers)
        return await future

    def create_batch(self) -> BatchBuilder:
        """An empty :class:`BatchBuilder` of ``max_batch_size`` bytes (compressed with
        the producer's codec) for :meth:`send_batch`."""
        config = self._config
        builder = DefaultRecordBatchBuilder(
            2,
            config.codec,
            config.transactional_id is not None,
            batch_size=config.max_batch_size,
            compression_level=config.compression_level,
        )
        return BatchBuilder(self._serializer, builder)

    async def send_batch(
        self, batch: BatchBuilder, topic: str, *, partition: int | None
    ) -> asyncio.Future[RecordMetadata]:
        """Queue a batch made with :meth:`create_batch` for ``topic``/``partition``.

        ``partition=None`` lets the producer choose, as aiokafka 0.14 did: the
        ``partitioner`` given to the constructor, called with no key, or else a random
        available partition.

        Returns:
            A future of the :class:`RecordMetadata` of the batch's first record
            (``None`` with ``acks=0``, as in aiokafka).

        Raises:
            ValueError: ``partition`` out of range, or the batch is empty.
            aiokafka.errors.MessageSizeTooLargeError: larger than ``max_request_size``.
        """
        self._check_running(sending=True)
        if not isinstance(batch, BatchBuilder):
            raise TypeError("batch must come from create_batch()")
        if batch.record_count() == 0:
            raise ValueError("batch: an empty batch cannot be sent")
        if batch.size() > self._max_request_size:
            raise errors.MessageSizeTooLargeError(
                f"the batch is {batch.size()} bytes, more than max_request_size "
                f"({self._max_request_size})"
            )
        entry = self._topics.get(topic)
        if entry is None or entry.cluster is not self.client.cluster:
            entry = await self._topic_entry(topic)
        if partition is None:
            partition = self._keyless_batch_partition(topic, entry)
        elif partition not in entry.tps:
            entry = await self._check_partition(topic, partition)
        assert self._acc is not None
        return self._acc.add_batch(entry.tps[partition], batch.close_for_send())

    def _keyless_batch_partition(self, topic: str, entry: _TopicEntry) -> int:
        # aiokafka 0.14's send_batch(partition=None) asked its partitioner with no key
        # (its default one: a random available partition); FastStream sends batches so
        # when its user names no partition.
        if self._partitioner is None:
            return random.choice(entry.available or entry.all_partitions)
        return self._partitioner_choice(topic, entry, None)

    async def flush(self, timeout: float | None = None) -> None:
        """Send every buffered record now and wait for all their outcomes.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until done (records
                still fail by ``delivery_timeout_ms``).

        Raises:
            aiokafka.errors.KafkaTimeoutError: ``timeout`` passed first.
        """
        if self._acc is None:
            return
        waiters = self._acc.begin_flush()
        try:
            if waiters:
                _, pending = await asyncio.wait(waiters, timeout=timeout)
                if pending:
                    raise KafkaTimeoutError(f"flush() did not finish within {timeout} s")
        finally:
            self._acc.end_flush()

    def metrics(self) -> dict[str, Any]:
        """A snapshot of the producer's metrics, under the Java client's names.

        Counted per request and per batch, never per record, so collecting them costs
        nothing measurable; reading them is cheap too. See ``docs/metrics.md`` for
        every name.

        Returns:
            ``{name: number}`` (``record-send-rate``, ``request-latency-avg``,
            ``buffer-available-bytes``, ...) plus ``"topics"``:
            ``{topic: {name: number}}`` and ``"nodes"``: ``{node id: {name:
            number}}``. Zeros before :meth:`start`.
        """
        from aiokafka.metrics.producer import producer_snapshot

        acc, client = self._acc, self._client
        return producer_snapshot(
            self._sender.metrics if self._sender is not None else None,
            client.network_metrics() if client is not None else None,
            self._config.buffer_memory,
            acc.used_memory if acc is not None else 0,
        )

    # -- metadata -----------------------------------------------------------------------

    async def partitions_for(self, topic: str) -> set[int]:
        """All partitions of ``topic`` (waits up to ``max_block_ms`` for metadata).

        Raises:
            aiokafka.errors.UnknownTopicOrPartitionError: the topic does not exist.
        """
        self._check_running()
        entry = await self._topic_entry(topic)
        return set(entry.all_partitions)

    async def _topic_entry(self, topic: str) -> _TopicEntry:
        # Loaded with the connection layer at start(), not at import (import cost).
        from aiokafka._timeout import wait_for

        if not isinstance(topic, str):
            raise TypeError(f"topic must be a str, not {type(topic).__name__}")
        if not topic:
            raise ValueError("topic must not be empty")
        client = self.client
        interest = self._interest
        assert interest is not None  # set in start(), with the client
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._max_block
        if topic not in interest.topics or topic not in client.cluster.topics:
            # add() starts (or joins) a refresh only if the topic has no metadata
            # yet; then wait for it, also when another send() added the topic a moment
            # ago (instead of sleeping a back-off before asking again). Otherwise do
            # not yield: concurrent first sends of a topic keep their order.
            added = interest.add((topic,))
            if topic not in client.cluster.topics:
                await wait_for(added, self._max_block)
        while True:
            if self._state != "running":
                raise ProducerClosed("the producer was stopped while waiting for metadata")
            cluster = client.cluster
            entry = self._entry_from(topic, cluster)
            if entry is not None:
                return entry
            code = cluster.topic_error(topic)
            # errors.X, not imported names: aiokafka.errors loads its code table on
            # first use (issue 14), and these are read only on this slow path.
            if code in (errors.InvalidTopicError.errno, errors.TopicAuthorizationFailedError.errno):
                self._forget_topic(topic)
                raise for_code(code)(f"topic {topic!r}")
            remaining = deadline - loop.time()
            if remaining <= 0:
                self._forget_topic(topic)
                if code == errors.UnknownTopicOrPartitionError.errno or code is None:
                    raise errors.UnknownTopicOrPartitionError(
                        f"topic {topic!r} not found in the cluster metadata within max_block_ms "
                        f"({self._config.max_block_ms} ms)"
                    )
                raise KafkaTimeoutError(
                    f"no metadata for topic {topic!r} within max_block_ms (last error code {code})"
                )
            # The client's throttle spaces these (retry_backoff_ms and up).
            refresh = client.request_refresh(f"no metadata for topic {topic!r}")
            try:
                await wait_for(refresh, max(remaining, 0.001))
            except (KafkaError, asyncio.TimeoutError) as exc:
                log.debug("Metadata refresh for %r failed: %s", topic, exc)

    def _forget_topic(self, topic: str) -> None:
        # An unknown topic must not stay in every later metadata request (and
        # dropping the producer's last topic asks for none, not for all).
        if self._interest is not None and topic not in self._topics:
            self._interest.remove((topic,))

    def _entry_from(self, topic: str, cluster: ClusterMetadata) -> _TopicEntry | None:
        parts = cluster.partitions_for_topic(topic)
        if not parts:
            return None
        available = cluster.available_partitions_for_topic(topic) or frozenset()
        old = self._topics.get(topic)
        all_partitions = tuple(sorted(parts))
        if old is not None and old.all_partitions == all_partitions:
            tps = old.tps
        else:
            tps = {p: TopicPartition(topic, p) for p in all_partitions}
        entry = _TopicEntry(cluster, all_partitions, tuple(sorted(available)), tps)
        self._topics[topic] = entry
        return entry

    async def _check_partition(self, topic: str, partition: Any) -> _TopicEntry:
        # Loaded with the connection layer at start(), not at import (import cost).
        from aiokafka._timeout import wait_for

        if not isinstance(partition, int) or isinstance(partition, bool):
            raise TypeError(f"partition must be an int, not {type(partition).__name__}")
        if partition < 0:
            raise ValueError(f"partition must be >= 0, got {partition}")
        # Maybe partitions were added since the last metadata: look once more.
        refresh = self.client.request_refresh(f"partition {partition} of {topic!r} unknown")
        try:
            await wait_for(refresh, self._max_block)
        except (KafkaError, asyncio.TimeoutError) as exc:
            log.debug("Metadata refresh for %r failed: %s", topic, exc)
        entry = self._entry_from(topic, self.client.cluster)
        if entry is None or partition not in entry.tps:
            count = 0 if entry is None else len(entry.all_partitions)
            raise ValueError(
                f"partition {partition} is out of range: topic {topic!r} has {count} partitions"
            )
        return entry

    def _on_batch_closed(self, tp: TopicPartition) -> None:
        if self._partitioner is None:
            _sticky_batch_closed(self._topics, self._sticky, tp)

    # -- introspection ------------------------------------------------------------------

    @property
    def _closed(self) -> bool | None:
        # aiokafka 0.14's private flag, which FastStream 0.7 reads to tell whether its
        # producer is closed: None before start(), False while running, True once
        # stop() began.
        if self._state == "new":
            return None
        return self._state != "running"

    @property
    def buffered_bytes(self) -> int:
        """Bytes of ``buffer_memory`` currently reserved by unfinished batches."""
        return 0 if self._acc is None else self._acc.used_memory


def _sticky_batch_closed(
    topics: dict[str, _TopicEntry], sticky: StickyPartitionState, tp: TopicPartition
) -> None:
    """A partition's batch closed: the sticky partitioner moves on (KIP-480)."""
    entry = topics.get(tp.topic)
    # The sticky partition is the only available one (a lone send_and_wait's batches
    # close one by one): the choice cannot move, and the next record skips the
    # partitioner. (The state's choice may predate the entry, so the check is on tp.)
    if entry is not None and not (entry.sticky is tp and entry.available == (tp.partition,)):
        sticky.on_batch_complete(tp.topic, tp.partition, entry.all_partitions, entry.available)
        entry.sticky = None  # the next keyless record asks the sticky state


def _ignore_batch_closed(tp: TopicPartition) -> None:
    """A custom partitioner chooses every partition itself."""
