"""The producer's one background task: turn ready batches into Produce requests.

Loop (:meth:`Sender._run`): fail expired batches; make sure a producer id exists
(idempotence); ask the accumulator which brokers have sendable batches; drain them,
one Produce request per broker; sleep until woken (a batch was created or filled
up, a response arrived, a flush began) or until the next linger/back-off deadline.
Nothing runs while there is nothing to do.

Linger never costs latency: a batch waits for ``linger_ms`` only while a request to
its leader is in flight (:meth:`RecordAccumulator.ready` is told which brokers are
busy). A broker with nothing in flight gets what is queued at once, and the records
appended while its request is out go in the next one, sent when the response
arrives or ``linger_ms`` after the batch began, whichever is first. This is how
aiokafka batches; the Java client always waits ``linger.ms``, which with
``linger_ms=5`` made a web service's every ``send_and_wait`` at least 5 ms.

A pass that needs no ``await`` (no transaction step, no producer id to get) runs as
a plain loop callback while the task sleeps (:meth:`Sender._pass_soon`), not as a
wake-up of the task (a future, a task step, a coroutine resumed and suspended).

A Produce request is written by the pass that drained it (``write_nowait``, the
answer comes back by callback), or, if the connection cannot take it at once, by
its own short task (cancelled by :meth:`Sender.close`) started eagerly
(:func:`~aiokafka.producer.eager.start_eagerly`). Requests to one broker are written
in the order they were drained: sequence numbers stay in order on the wire.

What happens to a partition's batch after a response is decided by one table
(:func:`~aiokafka.producer.outcome.classify`; the rules are in that module), not by
``if`` chains spread over the code.

Transactional producers (``txn`` given): the transaction manager owns the producer
id (no InitProducerId here). Before draining, partitions with queued batches that
the coordinator does not know yet are added with one AddPartitionsToTxn, and
:meth:`RecordAccumulator.drain` vetoes batches of partitions still not added. A
batch that fails for good makes the transaction abortable (or the producer fenced);
while the transaction is abortable or aborting, queued batches fail with
:class:`~aiokafka.errors.TransactionAbortedError` instead of being sent.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from aiokafka._tasks import cancel_and_wait
from aiokafka.cluster.client import CoordinatorType
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.ports import SenderClient
from aiokafka.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NoBrokersAvailable,
    TransactionAbortedError,
    for_code,
)
from aiokafka.metrics.producer import ProducerMetrics
from aiokafka.producer.accumulator import ProducerBatch, RecordAccumulator
from aiokafka.producer.closing import wait_delivered
from aiokafka.producer.config import ProducerConfig
from aiokafka.producer.eager import start_eagerly
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.leaders import LeaderOutages
from aiokafka.producer.outcome import TOO_LARGE, Outcome, classify, timeout_error
from aiokafka.producer.txn_state import TxnState
from aiokafka.protocol import messages as m
from aiokafka.structs import BrokerMetadata

if TYPE_CHECKING:
    # Loaded with the first transactional producer (see producer.py).
    from aiokafka.producer.transactions import TransactionManager

__all__ = ["Outcome", "Sender", "classify"]

log = logging.getLogger(__name__)


class Sender:
    """Owns the sender task and the Produce request tasks.

    Args:
        client: The started cluster client.
        accumulator: Where batches wait.
        config: The producer's config.
        id_state: Producer id and sequences, or ``None`` without idempotence.
        txn: The transaction manager of a transactional producer.
    """

    def __init__(
        self,
        client: SenderClient,
        accumulator: RecordAccumulator,
        config: ProducerConfig,
        id_state: ProducerIdState | None,
        txn: TransactionManager | None = None,
    ) -> None:
        self._client = client
        self._acc = accumulator
        self._config = config
        self._ids = id_state
        self._txn = txn
        self._acks: int = config.acks
        self._request_timeout_ms = config.request_timeout_ms
        self._max_in_flight = config.max_in_flight_requests_per_connection
        self._retry_backoff = config.retry_backoff_ms / 1000
        # Woken: look at the accumulator again. The sleeping loop waits on _waiter, a
        # bare future (an asyncio.Event's wait() costs a deque and a try/finally per
        # wake-up, and the sender is woken once per request).
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None
        #: The sleeping loop's linger/back-off timer, if any.
        self._timer: asyncio.TimerHandle | None = None
        #: A pass is scheduled as a loop callback (see _pass_soon).
        self._pass_scheduled = False
        #: The context of passes run as loop callbacks: like the sender task's (tasks
        #: they start copy it, not the context of the send() that scheduled them).
        self._context = contextvars.copy_context()
        self._task: asyncio.Task[None] | None = None
        # Produce request tasks (see _dispatch) and connect tasks: close() cancels
        # them.
        self._requests: set[asyncio.Future[Any]] = set()
        #: Connect tasks by node (in ``_requests`` too, so close() cancels them).
        self._connecting: dict[int, asyncio.Task[None]] = {}
        #: Requests in flight by node; only nodes with some (so it is the busy set).
        self._in_flight: dict[int, int] = {}
        #: The refresh asked of the client, while it has not ended (one at a time).
        self._metadata_wait: asyncio.Future[ClusterMetadata] | None = None
        #: Partitions with queued batches and no leader to send to, with the reason.
        self._outages = LeaderOutages(accumulator.unsent_batches)
        self._next_init_at = 0.0
        self._closing = False
        # Set by close(): answers to requests written by write_nowait are dropped.
        self._detached = False
        #: Set when the producer cannot go on (e.g. not authorized for idempotence).
        self.fatal_error: KafkaError | None = None
        #: Recorded per request and per failed/retried batch, never per record.
        self.metrics = ProducerMetrics()
        accumulator.set_wakeup(self._pass_soon)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the sender task."""
        # The task runs in a copy of this context; the passes run as loop callbacks
        # in another copy (the same values: the sender sets no context variables).
        self._context = contextvars.copy_context()
        self._task = asyncio.create_task(self._run(), name="aiokafka-producer-sender")

    def wakeup(self) -> None:
        """Make the sender look at the accumulator again."""
        self._woken = True
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def close(self, timeout: float | None, error: KafkaError) -> None:
        """Send what is buffered, then cancel every task and fail whatever has no
        outcome yet with an error of ``error``'s class saying why.

        How long buffered records are waited for:

        * ``timeout`` given: at most ``timeout`` seconds.
        * ``timeout=None``: as long as deliveries make progress. It gives up once no
          batch got an outcome (acknowledged or failed) for ``request_timeout_ms``,
          and never waits more than ``delivery_timeout_ms`` in all. A broker that is
          gone or stalled thus delays shutdown by about ``request_timeout_ms``, not
          by the whole delivery timeout, while a healthy one still gets everything.
        """
        self._closing = True
        self._acc.begin_close()
        reason = "the sender was not running"
        if self._task is not None and not self._task.done():
            waiters = self._acc.begin_flush()
            try:
                reason = await wait_delivered(
                    waiters,
                    timeout,
                    self._config.delivery_timeout_ms,
                    self._request_timeout_ms,
                )
            finally:
                self._acc.end_flush()
        if self._metadata_wait is not None:
            self._metadata_wait.cancel()  # our own future: the refresh is the client's
        self._detached = True
        await cancel_and_wait(self._task, *self._requests)
        self._task = None
        self._requests.clear()
        left = self._acc.incomplete_batches()
        if left:
            log.warning(
                "Stopping: %d record(s) in %d batch(es) not delivered: %s",
                sum(b.record_count for b in left),
                len(left),
                reason,
            )

        base = str(error.args[0]) if error.args else error.message

        def error_for(batch: ProducerBatch) -> KafkaError:
            last = batch.last_error
            exc = type(error)(
                f"{base}: {reason}; {batch.record_count} record(s) for "
                f"{batch.tp.topic}-{batch.tp.partition} (attempts: {batch.attempts}, "
                f"last error: {last!r})"
            )
            exc.__cause__ = last
            return exc

        self._acc.abort_all(error, error_for)

    # -- the loop -----------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._woken = False
            try:
                delay = await self._run_once()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug must not silently stop delivery for good
                log.exception("Unexpected error in the producer's sender; continuing")
                delay = self._retry_backoff
            if self._woken:
                continue
            waiter = self._waiter = loop.create_future()
            if delay != float("inf"):
                self._timer = loop.call_later(delay, self.wakeup)
            try:
                await waiter
            finally:
                self._waiter = None
                timer = self._timer
                if timer is not None:
                    self._timer = None
                    timer.cancel()

    def _pass_soon(self) -> None:
        """Make the sender look at the accumulator again (the accumulator's wake-up).

        While the task sleeps and the pass needs no ``await``, the pass runs as a
        loop callback, later in this loop turn as the task's step would (so the
        records appended in this turn still share a batch), without waking the
        task; otherwise the task is woken (:meth:`wakeup`).
        """
        if self._pass_scheduled:
            return
        waiter = self._waiter
        if waiter is None or not self._inline_ok():
            self.wakeup()
            return
        self._pass_scheduled = True
        waiter.get_loop().call_soon(self._inline_pass, context=self._context)

    def _inline_ok(self) -> bool:
        """True if a pass needs no ``await``: no transaction step, no producer id
        to get, not closing."""
        ids = self._ids
        return self._txn is None and not self._closing and (ids is None or ids.has_producer_id)

    def _inline_pass(self) -> None:
        """:meth:`_run_once` as a loop callback while the task sleeps."""
        self._pass_scheduled = False
        waiter = self._waiter
        if waiter is None or not self._inline_ok():
            self.wakeup()  # the task's pass does it (or is running already)
            return
        try:
            now = time.monotonic()
            self._expire(now)
            delay = self._send_ready(now, None if self._ids is None else self._sequenced_can_send)
        except Exception:  # as in _run: the task's pass tries again
            log.exception("Unexpected error in the producer's sender; continuing")
            self.wakeup()
            return
        if delay != float("inf"):
            # Something must be looked at again by then: the sleeping task's timer
            # is moved earlier if it would ring later.
            loop = waiter.get_loop()
            timer = self._timer
            when = loop.time() + delay
            if timer is None or timer.when() > when:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(when, self.wakeup)

    def _expire(self, now: float) -> None:
        for batch in self._acc.expired(now):
            self._fail(batch, timeout_error(batch, self._config.delivery_timeout_ms))

    async def _run_once(self) -> float:
        """One pass; returns how long to sleep unless woken earlier."""
        now = time.monotonic()
        self._expire(now)
        ids = self._ids
        can_send = None if ids is None else self._sequenced_can_send
        if self._txn is not None:
            wait = await self._transaction_step()
            if wait is not None:
                return wait
            can_send = self._txn_can_send
        elif ids is not None and not ids.has_producer_id:
            if self.fatal_error is not None:
                self._fail_queued(self.fatal_error)
                return float("inf")
            # A bump waits for every in-flight request: their outcomes decide which
            # sequences are acknowledged before all partitions restart at 0.
            if sum(self._in_flight.values()):
                return float("inf")
            if now < self._next_init_at:
                return self._next_init_at - now
            if not self._acc.has_unsent():
                return float("inf")
            await self._init_producer_id()
            now = time.monotonic()
            if not ids.has_producer_id:
                return max(0.0, self._next_init_at - now)
        next_check = self._send_ready(now, can_send)
        if self._txn is not None and self._txn.state.pending:
            # Partitions that arrived while AddPartitionsToTxn was in flight, or
            # whose add timed out: the next pass adds them.
            next_check = min(next_check, self._retry_backoff)
        return next_check

    def _send_ready(self, now: float, can_send: Callable[[ProducerBatch], bool] | None) -> float:
        """Drain and send what may be sent now; seconds until the next look."""
        cluster = self._client.cluster
        in_flight = self._in_flight
        nodes, next_check, unknown_leader = self._acc.ready(cluster, now, in_flight)
        if unknown_leader or self._outages:
            self._outages.track(cluster, unknown_leader)
        if unknown_leader:
            self._request_metadata("a partition with queued records has no leader")
        if in_flight:
            limit = self._max_in_flight
            nodes = {n for n in nodes if in_flight.get(n, 0) < limit}
        if nodes:
            nodes = self._connected(nodes)
        if nodes:
            max_size = self._config.max_request_size
            drained = (
                self._acc.drain(cluster, nodes, max_size, now)
                if can_send is None
                else self._acc.drain(cluster, nodes, max_size, now, can_send)
            )
            for node, batches in drained.items():
                self._dispatch(node, batches)
        return next_check

    def _connected(self, nodes: set[int]) -> set[int]:
        """The nodes of ``nodes`` with an open connection; the others are connected to
        in the background, and the loop is woken when that ends.

        Requests to a node must reach it in the order they were drained (sequence
        numbers). A request task that finds the connection open writes at once, but
        one started while the connection is being made waits for the pool's lock, and
        a later request that finds the connection just opened would overtake it: the
        broker then answers OUT_OF_ORDER_SEQUENCE_NUMBER. So nothing is drained for a
        node before its connection is open (as the Java client's sender does).
        """
        client = self._client
        if len(nodes) == 1:  # a lone request's node, or a single broker's
            for node in nodes:
                if client.is_connected(node):
                    return nodes
        ready = {node for node in nodes if client.is_connected(node)}
        if len(ready) == len(nodes):
            return ready
        for node in nodes - ready:
            if node not in self._connecting:
                task = asyncio.create_task(self._connect(node))
                if task.done():
                    # An eager task factory ran a failed attempt to its end (and its
                    # finally) inside create_task(): recorded now, the node would stay
                    # "connecting" for good and never be tried again.
                    continue
                self._connecting[node] = task
                self._requests.add(task)
                task.add_done_callback(self._requests.discard)
        return ready

    async def _connect(self, node: int) -> None:
        try:
            # api_version() connects as ready() does, but raises why it could not.
            await self._client.api_version(node, m.ProduceRequest.API_KEY)
        except KafkaError as exc:
            # The pool logged it and backs the node off; the batches wait for the next
            # attempt or their delivery timeout, which then names this error. The
            # leader may have moved: look.
            cluster = self._client.cluster
            for tp in cluster.partitions_for_broker(node):
                for batch in self._acc.unsent_batches(tp):
                    batch.last_error = exc
            self._request_metadata(f"cannot connect to node {node}")
        finally:
            self._connecting.pop(node, None)
            # On the next loop turn, not now: under an eager task factory an attempt
            # that fails without suspending (the node not in the metadata) ends inside
            # the pass that started it, and waking the sender from here would make it
            # run that pass again at once, and again, in a loop that never yields.
            asyncio.get_running_loop().call_soon(self.wakeup)

    # -- transactions -------------------------------------------------------------------

    def _sequenced_can_send(self, batch: ProducerBatch) -> bool:
        ids = self._ids
        assert ids is not None
        # A batch not sequenced yet waits while its partition's first batch under this
        # epoch is unacknowledged (see ProducerIdState.awaiting_first_ack).
        return batch.producer_epoch == ids.producer_epoch or not ids.awaiting_first_ack(batch.tp)

    def _txn_can_send(self, batch: ProducerBatch) -> bool:
        txn = self._txn
        assert txn is not None
        return txn.state.is_added(batch.tp) and self._sequenced_can_send(batch)

    async def _transaction_step(self) -> float | None:
        """Transactional duties before draining; a delay to sleep, or ``None`` to go
        on and drain."""
        txn = self._txn
        ids = self._ids
        assert txn is not None and ids is not None
        state = txn.state
        if state.fatal_error is not None:
            self._fail_queued(state.fatal_error)
            return float("inf")
        if state.state in (TxnState.ABORTABLE_ERROR, TxnState.ABORTING):
            self.abort_queued(state.abortable_error)
            return float("inf")
        if not state.in_transaction:
            # Appended by a send() that passed its state check while the transaction
            # was open and then waited (metadata, memory) until after its end.
            late = IllegalStateError("the record's transaction ended before it was queued")
            self._fail_queued(late)
            return float("inf")
        if not ids.has_producer_id:
            return float("inf")  # the abort bumps the epoch; nothing may go out before
        queued = self._acc.all_queued()
        if queued and (state.maybe_add({b.tp for b in queued}) or state.pending):
            await txn.add_pending_partitions()
        return None

    def abort_queued(self, cause: BaseException | None) -> None:
        """Fail every queued (not in flight) batch: its transaction is being aborted."""
        for batch in self._acc.expired(float("inf")):
            exc = TransactionAbortedError(
                f"{batch.record_count} record(s) for {batch.tp} were not sent: the "
                f"transaction is aborted ({cause!r})"
            )
            exc.__cause__ = cause
            self._fail(batch, exc)

    # -- producer id --------------------------------------------------------------------

    async def _init_producer_id(self) -> None:
        ids = self._ids
        assert ids is not None
        client = self._client

        async def attempt() -> m.InitProducerIdResponse:
            if ids.transactional_id is not None:
                node = await client.coordinator_for(
                    ids.transactional_id, CoordinatorType.TRANSACTION
                )
            else:
                least = client.least_loaded_node()
                if least is None:
                    raise NoBrokersAvailable("no broker known")
                node = least
            version = await client.api_version(node, m.InitProducerIdRequest.API_KEY)
            response = await client.send(node, ids.init_request(version))
            if response.error_code:
                raise for_code(response.error_code)(
                    f"InitProducerId failed with error {response.error_code}"
                )
            return response

        deadline = time.monotonic() + self._request_timeout_ms / 1000
        coordinator = (
            (ids.transactional_id, CoordinatorType.TRANSACTION)
            if ids.transactional_id is not None
            else None
        )
        try:
            response = await client.call_with_retry(attempt, deadline, coordinator=coordinator)
        except KafkaTimeoutError as exc:
            log.warning("Could not get a producer id (will retry): %s", exc)
            self._next_init_at = time.monotonic() + self._retry_backoff
            return
        except KafkaError as exc:
            if self._closing:
                return  # the client is being closed under us; close() fails the batches
            log.error("Producer id request failed for good: %s", exc)
            self.fatal_error = exc
            self._fail_queued(exc)
            return
        log.debug(
            "Producer id %d epoch %d (was %d/%d)",
            response.producer_id,
            response.producer_epoch,
            ids.producer_id,
            ids.producer_epoch,
        )
        ids.set_producer_id(response.producer_id, response.producer_epoch)

    # -- requests -----------------------------------------------------------------------

    def _dispatch(self, node: int, batches: list[ProducerBatch]) -> None:
        ids = self._ids
        partitions: list[m.PartitionProduceData] = []
        sizes: list[int] = []
        failed: list[ProducerBatch] | None = None
        for batch in batches:
            if ids is not None and batch.producer_epoch != ids.producer_epoch:
                # First send, or the first after an epoch bump: sequences are
                # assigned here, before encoding, and kept by later retries.
                batch.producer_epoch = ids.producer_epoch
                batch.base_sequence = ids.assign_sequence(batch.tp, batch.record_count)
                batch.builder.set_producer_state(
                    ids.producer_id, ids.producer_epoch, batch.base_sequence
                )
            batch.in_flight = True
            batch.attempts += 1
            try:
                records = batch.builder.build()
            except Exception as exc:
                # A bug or a broken installation (e.g. no CRC-32C): the drained batch
                # is in no queue now, so it fails here or its futures would hang.
                log.error("Could not encode a batch for %s", batch.tp, exc_info=exc)
                self._fail(batch, exc)
                failed = [batch] if failed is None else [*failed, batch]
                continue
            sizes.append(len(records))
            partitions.append(m.PartitionProduceData(index=batch.tp.partition, records=records))
        if failed is not None:
            batches = [b for b in batches if b not in failed]
            if not batches:
                return
        if len(batches) == 1:  # the lone send_and_wait's request: no grouping
            topic_data = [m.TopicProduceData(name=batches[0].tp.topic, partition_data=partitions)]
        else:
            topics: dict[str, list[m.PartitionProduceData]] = {}
            for batch, partition in zip(batches, partitions, strict=True):
                topics.setdefault(batch.tp.topic, []).append(partition)
            topic_data = [m.TopicProduceData(name=t, partition_data=p) for t, p in topics.items()]
        request = m.ProduceRequest(
            transactional_id=ids.transactional_id if ids is not None else None,
            acks=self._acks,
            timeout_ms=self._request_timeout_ms,
            topic_data=topic_data,
        )
        self.metrics.request_sent(batches, sizes)
        self._in_flight[node] = self._in_flight.get(node, 0) + 1
        # A transaction of version 1 must not send Produce v12 (see transactions).
        max_version = None if self._txn is None else self._txn.produce_max_version
        if self._acks != 0:
            # The usual case, a free slot on an open connection: the request is written
            # now and a callback takes the response as soon as it is read (no task, no
            # coroutine chain, no future).
            try:
                written = self._client.write_nowait(
                    node,
                    request,
                    functools.partial(self._answered, node, batches),
                    max_version=max_version,
                )
            except Exception:  # the task below meets the same error and handles it
                written = False
            if written:
                return
        task = start_eagerly(self._produce(node, batches, request, max_version))
        if task is not None:
            self._requests.add(task)
            task.add_done_callback(self._requests.discard)

    async def _produce(
        self,
        node: int,
        batches: list[ProducerBatch],
        request: m.ProduceRequest,
        max_version: int | None,
    ) -> None:
        response: m.ProduceResponse | None = None
        error: Exception | None = None
        try:
            if self._acks == 0:
                await self._client.send_without_response(node, request)
                for batch in batches:
                    self._acc.complete_unacknowledged(batch)
            else:
                response = await self._client.send(node, request, max_version=max_version)
        except asyncio.CancelledError:
            self._request_ended(node)  # close() fails the batches
            self.wakeup()
            raise
        except Exception as exc:
            error = exc
        self._answered(node, batches, response, error)

    def _answered(
        self,
        node: int,
        batches: list[ProducerBatch],
        response: m.ProduceResponse | None,
        error: Exception | None,
    ) -> None:
        """How a Produce request ends, whichever way it was sent: the callback of a
        request written by ``write_nowait`` (called by the connection's reader as the
        response is read, or with the request's error), and the end of
        :meth:`_produce` (neither response nor error: an ``acks=0`` request, written)."""
        if self._detached:
            return  # close() gave up on it and fails the batches
        try:
            if error is not None:
                self._on_send_error(node, batches, error)
            elif response is not None:
                self._on_response(node, batches, response)
        finally:
            self._request_ended(node)
            # Also when nothing is queued: the callers woken by this answer may send
            # again in the next loop turn, and the pass, scheduled after them, then
            # takes what they appended (one request, at once, not one per record).
            self._pass_soon()

    def _request_ended(self, node: int) -> None:
        left = self._in_flight[node] - 1
        if left:
            self._in_flight[node] = left
        else:
            del self._in_flight[node]

    def _on_send_error(self, node: int, batches: list[ProducerBatch], exc: BaseException) -> None:
        if isinstance(exc, KafkaError):
            self._on_request_error(batches, exc)
            return
        # A bug; the futures must not hang.
        log.error("Produce request to node %s failed unexpectedly", node, exc_info=exc)
        for batch in batches:
            self._fail(batch, exc)

    def _on_request_error(self, batches: Iterable[ProducerBatch], exc: KafkaError) -> None:
        # The outcome is unknown (possibly persisted); a retry with the same
        # sequence lets the broker drop it as a duplicate.
        if exc.retriable:
            if exc.invalid_metadata or isinstance(exc, KafkaConnectionError):
                self._request_metadata(f"Produce failed: {type(exc).__name__}")
            for batch in batches:
                self._retry(batch, exc)
        else:
            for batch in batches:
                self._fail(batch, exc)

    def _on_response(
        self, node: int, batches: list[ProducerBatch], response: m.ProduceResponse
    ) -> None:
        results: dict[tuple[str, int], m.PartitionProduceResponse] = {}
        for topic in response.responses:
            for answer in topic.partition_responses:
                results[(topic.name, answer.index)] = answer
        ids = self._ids
        idempotent = ids is not None
        for batch in batches:
            part = results.get(batch.tp)
            if part is None:
                self._retry(batch, KafkaError(f"no result for {batch.tp} in the Produce response"))
                continue
            code = part.error_code
            outcome = Outcome.SUCCESS if code == 0 else classify(code, idempotent)
            if outcome is Outcome.SUCCESS:
                if ids is not None:
                    ids.on_acked(batch.tp, batch.base_sequence, batch.record_count)
                batch.in_flight = False
                self._acc.complete(
                    batch, part.base_offset, part.log_append_time_ms, part.log_start_offset
                )
                continue
            exc = for_code(code)(part.error_message or f"Produce to {batch.tp} failed")
            if outcome is Outcome.SEQUENCE_CHECK:
                self._on_sequence_error(batch, exc)
            elif outcome is Outcome.RETRY_REFRESH:
                leader = part.current_leader
                endpoints = [
                    BrokerMetadata(e.node_id, e.host, e.port, e.rack)
                    for e in response.node_endpoints
                ]
                hinted = leader.leader_id >= 0 and self._client.apply_leader_hint(
                    batch.tp, leader.leader_id, leader.leader_epoch, endpoints
                )
                if not hinted:
                    self._request_metadata(f"Produce to {batch.tp} failed: {type(exc).__name__}")
                self._retry(batch, exc)
            elif outcome is Outcome.RETRY:
                self._retry(batch, exc)
            elif code in TOO_LARGE and self._split(batch):
                log.info("%r was too large for the broker (%s): split", batch, exc)
            else:
                self._fail(batch, exc)

    def _split(self, batch: ProducerBatch) -> bool:
        """Re-queue a batch the broker found too large as smaller parts (as the Java
        client does); False if it cannot be split (a single record)."""
        batch.in_flight = False
        parts = self._acc.split(batch)
        if not parts:
            return False
        ids = self._ids
        if (
            ids is not None
            and batch.base_sequence >= 0
            and batch.producer_epoch == ids.producer_epoch
        ):
            # The broker never wrote the batch, so it still expects its base sequence
            # next; the parts take its sequences in order, and later batches (which may
            # be in flight already) keep theirs.
            seq = batch.base_sequence
            for part in parts:
                part.producer_epoch = batch.producer_epoch
                part.base_sequence = seq
                part.builder.set_producer_state(ids.producer_id, batch.producer_epoch, seq)
                seq = (seq + part.record_count) % 2**31  # wraps like assign_sequence
        return True

    def _on_sequence_error(self, batch: ProducerBatch, exc: KafkaError) -> None:
        ids = self._ids
        assert ids is not None
        if batch.producer_epoch == ids.producer_epoch and ids.is_next_expected(
            batch.tp, batch.base_sequence
        ):
            if self._txn is not None:
                # A transactional producer bumps its epoch only when it aborts: the
                # transaction cannot commit without this batch.
                self._fail(batch, exc)
                return
            log.warning(
                "%s for the first unacknowledged batch of %s: bumping the producer epoch",
                type(exc).__name__,
                batch.tp,
            )
            ids.request_bump()
        self._retry(batch, exc)

    # -- outcomes -----------------------------------------------------------------------

    def _retry(self, batch: ProducerBatch, exc: KafkaError) -> None:
        batch.last_error = exc
        now = time.monotonic()
        if now >= batch.deadline:
            self._fail(batch, timeout_error(batch, self._config.delivery_timeout_ms))
            return
        log.debug("Retrying %r after %s", batch, exc)
        self.metrics.batch_retried(batch)
        self._acc.reenqueue(batch, now)

    def _fail(self, batch: ProducerBatch, exc: BaseException) -> None:
        batch.in_flight = False
        self.metrics.batch_failed(batch)
        if self._ids is not None and batch.base_sequence >= 0 and batch.attempts:
            # Its sequence will never reach the broker: later batches of the
            # partition would be out of order forever without a new epoch.
            self._ids.request_bump()
        if self._txn is not None and not isinstance(exc, TransactionAbortedError):
            self._txn.on_produce_error(exc)
        self._acc.fail(batch, exc)

    def _fail_queued(self, exc: KafkaError) -> None:
        for batch in self._acc.expired(float("inf")):
            self.metrics.batch_failed(batch)
            self._acc.fail(batch, exc)

    # -- metadata -----------------------------------------------------------------------

    def _request_metadata(self, reason: str) -> None:
        """Ask the client for a metadata refresh; the loop is woken when it ends.

        The client's throttle spaces refreshes (``retry_backoff_ms``, doubling up to
        ``reconnect_backoff_max_ms`` while they are asked back to back), so a leader
        that stays unknown costs a bounded rate of Metadata requests, not a loop.
        One request at a time: the passes in between need not ask again.
        """
        pending = self._metadata_wait
        if pending is not None and not pending.done():
            return
        pending = self._metadata_wait = self._client.request_refresh(reason)
        pending.add_done_callback(self._metadata_done)

    def _metadata_done(self, refresh: asyncio.Future[ClusterMetadata]) -> None:
        if not refresh.cancelled() and refresh.exception() is not None:
            log.debug("Metadata refresh for the producer failed: %s", refresh.exception())
        self.wakeup()
