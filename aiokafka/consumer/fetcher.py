"""The fetcher: one background loop prefetching from every broker into a bounded buffer.

Tasks (see ``docs/DESIGN.md``): :meth:`Fetcher.start` starts the *fetch loop*. The
loop owns one request task per broker with a Fetch in flight (at most one per
broker, which incremental fetch sessions require) and at most one validation
task, and :meth:`Fetcher.close` cancels and awaits them all. Each turn the loop

1. makes sure the client tracks the metadata of the assigned topics;
2. resolves missing positions (committed offset, else ``auto_offset_reset``);
3. starts the *validation task* if partitions whose leader changed wait for
   their position to be checked against the new leader's log (KIP-320, see
   :mod:`aiokafka.consumer.validation`); they are not fetched until then;
4. sends a Fetch to every broker that leads fetchable partitions (or to the
   replica the leader preferred for them, KIP-392) and has none in flight,
   listing only partitions with room in the buffer;
5. sleeps on an event until a response arrives, the user drains the buffer, the
   assignment/positions/pause state change, or a back-off expires. It never polls.

The buffer (:mod:`aiokafka.consumer.fetch_buffer`) holds, per partition, at most
:data:`MAX_CHUNKS_PER_PARTITION` fetched
:class:`~aiokafka.consumer.fetch_records.PartitionRecords`, so at most that many
``max_partition_fetch_bytes`` per partition (and ``fetch_max_bytes`` per request).
Data fetched for a position that has since moved (seek, reset, reassignment) is
dropped, both on arrival and when the user pulls it. A partition whose data holds no
complete batch at its position is handled by :mod:`aiokafka.consumer.partial_batch`
(grown limit, one more fetch, then ``RecordTooLargeError``), never re-fetched in a
loop.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.ports import FetcherClient
from aiokafka.errors import (
    ConsumerStoppedError,
    IllegalStateError,
    KafkaError,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
    for_code,
)
from aiokafka.metrics.consumer import FetchMetrics
from aiokafka.protocol import messages as m
from aiokafka.structs import BrokerMetadata, ConsumerRecord, TopicPartition

from .config import ConsumerConfig
from .fetch_buffer import MAX_CHUNKS_PER_PARTITION, FetchBuffer, Records
from .fetch_errors import PartitionAction, ResponseAction, partition_action, response_action
from .fetch_records import PartitionRecords
from .fetch_session import (
    FIRST_TOPIC_ID_VERSION,
    FetchPlan,
    FetchSession,
    PartitionFetch,
    build_fetch_request,
)
from .offsets import OffsetsClient
from .partial_batch import Action, PartialBatches
from .positions import resolve_positions
from .subscription import PartitionState, SubscriptionState
from .validation import PositionValidator

if TYPE_CHECKING:
    from uuid import UUID

__all__ = ["MAX_CHUNKS_PER_PARTITION", "Fetcher"]

log = logging.getLogger(__name__)


class Retry(enum.Enum):
    """The fetch loop's own steps that wait out ``retry_backoff_ms`` after a failure
    (brokers and partitions have their own back-off tables; metadata refreshes are
    spaced by the client's one throttle)."""

    POSITIONS = "positions"  # committed-offset / reset look-ups
    VALIDATION = "validation"  # OffsetForLeaderEpoch of moved leaders


class Fetcher:
    """Prefetches records of the assigned partitions.

    Args:
        client: The started cluster client.
        subscriptions: The consumer's subscription state.
        config: The consumer config.
        offsets: Offset look-ups (positions of partitions without one).

    Attributes:
        buffer: The fetched records waiting for the user. ``async for``'s hot path
            calls its :attr:`~FetchBuffer.next_record_fast` directly (no extra call
            per record); everything else goes through this class's methods.
    """

    def __init__(
        self,
        client: FetcherClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        offsets: OffsetsClient,
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._config = config
        self._offsets = offsets
        self._sessions: dict[int, FetchSession] = {}
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._node_backoff: dict[int, float] = {}
        self._step_backoff: dict[Retry, float] = {}
        self._tp_backoff: dict[TopicPartition, float] = {}
        self._wakeup = asyncio.Event()  # wakes the fetch loop
        self.buffer = FetchBuffer(subscriptions, self._wakeup.set)
        self._data_ready = asyncio.Event()  # wakes getmany/getone waiters
        self._task: asyncio.Task[None] | None = None
        self._fatal: BaseException | None = None
        self._closed = False
        self._tracked_version = -1
        #: The topics of the assignment, as the client's metadata interest.
        self._interest = client.topic_interest("fetcher")
        self._refresh_wanted = False
        #: The refresh asked of the client, while it has not ended (one at a time).
        self._refresh: asyncio.Future[ClusterMetadata] | None = None
        self._retry_backoff = config.client.retry_backoff_ms / 1000
        self._validator = PositionValidator(subscriptions)
        self._validating: asyncio.Task[None] | None = None
        # KIP-392: the leader epoch under which the leader named a preferred replica;
        # a new epoch (leader change) sends fetches back to the leader.
        self._preferred_epoch: dict[TopicPartition, int] = {}
        self._fetched_from: dict[TopicPartition, int] = {}
        self._partials = PartialBatches(config.max_partition_fetch_bytes, config.fetch_max_bytes)
        #: Fetch latency, records handed out, bytes fetched (see ``docs/metrics.md``).
        self.metrics = FetchMetrics()
        subscriptions.add_listener(self._on_subscription_change)

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the fetch loop (call once, from the running event loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._fetch_loop(), name="aiokafka-fetcher")

    async def close(self) -> None:
        """Cancel the loop and its in-flight fetches and wait for them; wake waiters."""
        self._closed = True
        self.buffer.clear()  # buffer.next_record_fast() returns nothing from now on
        self._subs.remove_listener(self._on_subscription_change)
        self._interest.close()
        if self._refresh is not None:
            self._refresh.cancel()  # our own future: the refresh is the client's
        while True:
            # Re-collected each round: a cancellation swallowed by a library call
            # (asyncio.wait_for before 3.12) may let the loop start a new fetch; the
            # loop also returns by itself once it sees _closed.
            tasks = (self._task, self._validating, *self._in_flight.values())
            pending = [t for t in tasks if t is not None and not t.done()]
            if not pending:
                break
            for task in pending:
                task.cancel()
            await asyncio.wait(pending, timeout=1.0)
        self._in_flight.clear()
        self.buffer.clear()
        self._data_ready.set()

    def _on_subscription_change(self) -> None:
        # Called synchronously by SubscriptionState; stale chunks are dropped lazily.
        self._wakeup.set()
        self._data_ready.set()

    @property
    def in_flight_nodes(self) -> frozenset[int]:
        """Brokers with a Fetch in flight (for tests and diagnostics)."""
        return frozenset(self._in_flight)

    def session(self, node_id: int) -> FetchSession | None:
        """The fetch session with ``node_id``, if any (for tests and diagnostics)."""
        return self._sessions.get(node_id)

    @property
    def validator(self) -> PositionValidator:
        """Leader-epoch validation state and counters (for tests and diagnostics)."""
        return self._validator

    def fetched_from(self, tp: TopicPartition) -> int | None:
        """The node the last successful Fetch of ``tp`` went to (leader or preferred
        replica), if any (for tests and diagnostics)."""
        return self._fetched_from.get(tp)

    # -- the loop -----------------------------------------------------------------------

    async def _fetch_loop(self) -> None:
        try:
            while not self._closed:
                self._wakeup.clear()
                await self._turn()
                if self._closed:
                    break
                await _wait_event(self._wakeup, self._next_backoff_expiry())
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._crashed("loop", exc)
            raise

    def _crashed(self, part: str, exc: BaseException) -> None:
        # A bug, not a Kafka error (those are handled per partition): surface it to
        # the user instead of letting getmany() wait forever.
        log.exception("Fetcher %s crashed", part)
        self._fatal = exc
        self._data_ready.set()

    async def _turn(self) -> None:
        """One turn of the loop, up to its wait: steps 1-4 of the module docstring."""
        await self._track_topics()
        await self._update_positions()
        if self._closed:
            return
        self._send_fetches()
        self._start_validation()

    async def run_once(self) -> None:
        """Run one turn of the fetch loop in the caller's task, and wait for the
        fetches and the validation it started to be answered and handled.

        For tests and tools that drive a fetcher whose loop is not started: each call
        sends, through the client, what one turn of :meth:`start`'s loop would send
        (back-offs and in-flight limits apply as in the loop).

        Raises:
            aiokafka.errors.IllegalStateError: the loop is running.
        """
        if self._task is not None:
            raise IllegalStateError("run_once() drives a fetcher whose loop is not running")
        self._wakeup.clear()
        await self._turn()
        started = [
            task
            for task in (self._validating, *self._in_flight.values())
            if task is not None and not task.done()
        ]
        await asyncio.gather(*started)

    def _next_backoff_expiry(self) -> float | None:
        now = time.monotonic()
        expiries = [
            *self._node_backoff.values(),
            *self._tp_backoff.values(),
            *self._step_backoff.values(),
        ]
        if not expiries:
            return None
        # Expired back-offs are removed when fetches are planned.
        return max(0.0, min(expiries) - now) + 0.001

    async def _track_topics(self) -> None:
        version = self._subs.assignment_version
        if version != self._tracked_version:
            assigned = self._subs.assigned_partitions()
            wanted = {tp.topic for tp in assigned}
            self._tracked_version = version
            self._validator.retain(assigned)
            self._partials.retain(assigned)
            for table in (self._preferred_epoch, self._fetched_from):
                for tp in [tp for tp in table if tp not in assigned]:
                    del table[tp]
            try:
                # Waits only when a topic has no metadata yet (a new assignment).
                await self._interest.set(wanted)
            except KafkaError as exc:
                log.debug("Metadata for the fetcher's topics failed: %s", exc)
                self._refresh_wanted = True
        if self._refresh_wanted:
            self._refresh_wanted = False
            pending = self._refresh
            if pending is None or pending.done():
                # The client's throttle spaces these; the loop wakes when it ends.
                pending = self._refresh = self._client.request_refresh("fetcher: stale leaders")
                pending.add_done_callback(self._refresh_done)

    def _refresh_done(self, refresh: asyncio.Future[ClusterMetadata]) -> None:
        if not refresh.cancelled() and refresh.exception() is not None:
            log.debug("Metadata refresh for the fetcher failed: %s", refresh.exception())
            self._refresh_wanted = True  # asked again, after the client's back-off
        self._wakeup.set()

    # -- positions ----------------------------------------------------------------------

    async def _update_positions(self) -> None:
        subs = self._subs
        missing = [tp for tp in subs.missing_positions() if not self.buffer.has_error(tp)]
        if not missing:
            return
        if self._step_backoff.get(Retry.POSITIONS, 0.0) > time.monotonic():
            return  # a failed look-up is waiting out its back-off
        self._step_backoff.pop(Retry.POSITIONS, None)
        # A partition without a known leader (e.g. not created yet) waits for a
        # metadata refresh; it must not hold up the others' look-ups (ListOffsets
        # goes to leaders), as the Java consumer does.
        cluster = self._client.cluster
        leaderless = {tp for tp in missing if cluster.leader_for(tp) is None}
        if leaderless:
            self._want_metadata()
            missing = [tp for tp in missing if tp not in leaderless]
            if not missing:
                return
        try:
            await self.resolve_positions(missing, raise_errors=False)
        except KafkaError as exc:
            if exc.retriable or isinstance(exc, KafkaTimeoutError):
                log.debug("Offset look-up failed, retrying: %s", exc)
                self._step_backoff[Retry.POSITIONS] = time.monotonic() + self._retry_backoff
                return
            for tp in missing:
                if subs.is_assigned(tp):
                    self._push_error(tp, exc)

    async def resolve_positions(
        self, partitions: Iterable[TopicPartition], *, raise_errors: bool = True
    ) -> None:
        """Find positions of ``partitions`` that have none: the committed offset, else
        ``auto_offset_reset``; pending resets (seek_to_beginning/end) are applied.

        Safe to run concurrently with the fetch loop doing the same: results are
        applied only if the partition's state did not change meanwhile.

        Raises:
            NoOffsetForPartitionError: ``auto_offset_reset="none"`` and nothing is
                committed (only with ``raise_errors``; otherwise the error is stored
                and raised by getone/getmany).
            aiokafka.errors.KafkaError: a look-up failed.
        """

        def store(tp: TopicPartition, exc: KafkaError) -> None:
            if not self.buffer.has_error(tp):
                self._push_error(tp, exc)

        await resolve_positions(
            self._subs, self._offsets, self._config, partitions, None if raise_errors else store
        )
        self._wakeup.set()

    def _push_error(self, tp: TopicPartition, exc: KafkaError, offset: int | None = None) -> None:
        state = self._subs.get(tp)
        if state is None:
            return
        if offset is None:
            offset = state.position if state.position is not None else -1
        self.buffer.add(tp, PartitionRecords(tp, state, offset, None, error=exc))
        self._data_ready.set()

    # -- sending ------------------------------------------------------------------------

    def _fetch_offset(self, tp: TopicPartition, state: PartitionState) -> int | None:
        return self.buffer.fetch_offset(tp, state)

    def _send_fetches(self) -> None:
        now = time.monotonic()
        for node_key in [k for k, t in self._node_backoff.items() if t <= now]:
            del self._node_backoff[node_key]
        for tp_key in [k for k, t in self._tp_backoff.items() if t <= now]:
            del self._tp_backoff[tp_key]
        for step in [k for k, t in self._step_backoff.items() if t <= now]:
            del self._step_backoff[step]
        cluster = self._client.cluster
        per_node: dict[int, dict[TopicPartition, PartitionFetch]] = {}
        max_bytes = self._partials.max_bytes
        need_metadata = False
        for tp, state in self._subs.items():
            if not state.is_fetchable or tp in self._tp_backoff or self.buffer.has_error(tp):
                continue
            if self._validator.needs_validation(tp, state, cluster.leader_epoch(tp)):
                # Data fetched from the old leader may lie beyond the new leader's
                # log end; it is fetched again once the position is validated.
                self.buffer.drop(tp)
                continue
            offset = self._fetch_offset(tp, state)
            if offset is None:
                continue
            node = self._read_replica(tp, state, now)
            if node is None:
                need_metadata = True
                continue
            if node in self._in_flight or node in self._node_backoff:
                continue
            per_node.setdefault(node, {})[tp] = PartitionFetch(
                offset, cluster.leader_epoch(tp), max_bytes(tp)
            )
        if need_metadata:
            self._want_metadata()
        for node, wanted in per_node.items():
            session = self._sessions.setdefault(node, FetchSession())
            task = asyncio.create_task(
                self._fetch_node(node, session, wanted), name=f"aiokafka-fetch-{node}"
            )
            # An eager task factory may have run a fetch that never suspended (a send on
            # a connection that just closed fails at once) to its end, its finally
            # included, inside create_task(): recorded then, the node would stay "in
            # flight" for good and never be fetched from again.
            if not task.done():
                self._in_flight[node] = task

    def _read_replica(self, tp: TopicPartition, state: PartitionState, now: float) -> int | None:
        """The replica the leader preferred (KIP-392) while valid, else the leader."""
        cluster = self._client.cluster
        replica = state.preferred_read_replica
        if replica >= 0:
            part = cluster.partition(tp)
            if (
                state.preferred_until > now
                and part is not None
                and replica in part.replicas
                and cluster.broker(replica) is not None
                and self._preferred_epoch.get(tp) == part.leader_epoch
            ):
                return replica
            # Expired, or the metadata changed (new leader epoch, replica gone).
            self._clear_preferred(tp, state)
        return cluster.leader_for(tp)

    def _clear_preferred(self, tp: TopicPartition, state: PartitionState) -> None:
        if state.preferred_read_replica >= 0:
            log.debug("%s: back to the leader (was replica %d)", tp, state.preferred_read_replica)
        state.preferred_read_replica = -1
        self._preferred_epoch.pop(tp, None)

    def _leave_replica(self, node: int, tps: Iterable[TopicPartition]) -> None:
        """A fetch from ``node`` failed: the partitions it served go back to the leader."""
        for tp in tps:
            state = self._subs.get(tp)
            if state is not None and state.preferred_read_replica == node:
                self._clear_preferred(tp, state)

    # -- validation (KIP-320) -----------------------------------------------------------

    def _start_validation(self) -> None:
        if self._validating is not None and not self._validating.done():
            return
        if self._step_backoff.get(Retry.VALIDATION, 0.0) > time.monotonic():
            return
        tps = [tp for tp in self._validator.pending() if not self.buffer.has_error(tp)]
        if tps:
            self._validating = asyncio.create_task(
                self._validate(tps), name="aiokafka-fetcher-validation"
            )

    async def _validate(self, tps: list[TopicPartition]) -> None:
        try:
            errors, refresh = await self._validator.validate(self._client, tps)
            for tp, error in errors.items():
                self._push_error(tp, error)
            if refresh:
                self._want_metadata()
            if self._validator.pending():
                # Some must be asked again (after a metadata refresh): not in a loop.
                self._step_backoff[Retry.VALIDATION] = time.monotonic() + self._retry_backoff
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._crashed("validation", exc)  # its partitions would wait forever
        finally:
            self._wakeup.set()

    def _want_metadata(self) -> None:
        if self._refresh_wanted:
            return
        self._refresh_wanted = True
        pending = self._refresh
        if pending is None or pending.done():
            self._wakeup.set()  # the loop asks for one at its next turn
        # Else the refresh in flight wakes the loop when it ends (_refresh_done).
        # Waking it now would make the loop run again at once, find the same
        # partition without a leader, and wake itself again: a turn that never
        # yields, so the refresh it waits for could never run.

    async def _fetch_node(
        self, node: int, session: FetchSession, wanted: dict[TopicPartition, PartitionFetch]
    ) -> None:
        try:
            version = await self._client.api_version(node, m.FetchRequest.API_KEY)
            cluster = self._client.cluster
            if version >= FIRST_TOPIC_ID_VERSION and any(
                cluster.topic_id(tp.topic) is None for tp in wanted
            ):
                # Topic ids unknown (older metadata): use the last version with names.
                version = FIRST_TOPIC_ID_VERSION - 1
            plan = session.plan(wanted)
            request, ids = build_fetch_request(plan, version, cluster, self._config)
            epochs = {tp: state.epoch for tp in wanted if (state := self._subs.get(tp))}
            # The broker may hold the request up to max_wait; allow for it.
            timeout = self._config.client.request_timeout_ms + self._config.fetch_max_wait_ms
            started = time.monotonic()
            response = await self._client.send(
                node, request, max_version=version, timeout_ms=timeout
            )
            self.metrics.fetch_done(time.monotonic() - started)
            self._handle_response(node, session, plan, version, response, ids, epochs)
        except asyncio.CancelledError:
            session.reset()
            raise
        except KafkaError as exc:
            session.reset()
            self._leave_replica(node, wanted)
            log.debug("Fetch from node %s failed: %s", node, exc)
            self._node_backoff[node] = time.monotonic() + self._retry_backoff
            if exc.invalid_metadata or exc.retriable:
                self._want_metadata()
        finally:
            self._in_flight.pop(node, None)
            self._wakeup.set()

    # -- responses ----------------------------------------------------------------------

    def _handle_response(
        self,
        node: int,
        session: FetchSession,
        plan: FetchPlan,
        version: int,
        response: m.FetchResponse,
        ids: dict[UUID, str],
        epochs: dict[TopicPartition, int],
    ) -> None:
        action = response_action(response.error_code)
        if action is not ResponseAction.OK:
            exc = for_code(response.error_code)(f"Fetch from node {node}")
            session.reset()
            self._leave_replica(node, plan.wanted)
            if action is ResponseAction.SESSION_LOST:
                log.debug("Fetch session with node %s lost (%r); next fetch is full", node, exc)
            else:
                log.warning("Fetch from node %s failed: %r", node, exc)
                self._node_backoff[node] = time.monotonic() + self._retry_backoff
            return
        # Below v7 the decoded session id is 0 (no session): a full fetch each time.
        session.on_response(plan, response.session_id)
        endpoints = [
            BrokerMetadata(e.node_id, e.host, e.port, e.rack) for e in response.node_endpoints
        ]
        use_ids = version >= FIRST_TOPIC_ID_VERSION
        for topic_data in response.responses:
            topic = ids.get(topic_data.topic_id) if use_ids else topic_data.topic
            if topic is None:
                continue
            for p in topic_data.partitions:
                self._handle_partition(
                    node, TopicPartition(topic, p.partition_index), p, plan, epochs, endpoints
                )

    def _on_incomplete(
        self,
        tp: TopicPartition,
        sent: PartitionFetch,
        data: bytes | bytearray | memoryview,
        valid: int,
    ) -> None:
        """``tp``'s data holds no complete batch at the position: grow its limit, fetch
        it once more, or store a RecordTooLargeError (see :mod:`.partial_batch`)."""
        # Only a pre-KIP-74 broker cuts a first batch, at the partition limit; from v3
        # it sends such a batch whole or not at all, so the limit is never the cause.
        action = self._partials.on_incomplete(
            tp, sent.fetch_offset, sent.max_bytes, data, valid, len(data) >= sent.max_bytes
        )
        if action is Action.GROW:
            limit = self._partials.max_bytes(tp)
            log.debug("%s: batch at %d cut; asking for %d bytes", tp, sent.fetch_offset, limit)
        elif action is Action.RETRY:
            log.debug("%s: incomplete batch at %d; fetching once more", tp, sent.fetch_offset)
            self._tp_backoff[tp] = time.monotonic() + self._retry_backoff
        else:
            log.warning("Fetch of %s stopped: %s", tp, action)
            self._push_error(tp, action, sent.fetch_offset)

    def _handle_partition(
        self,
        node: int,
        tp: TopicPartition,
        p: Any,
        plan: FetchPlan,
        epochs: dict[TopicPartition, int],
        endpoints: list[BrokerMetadata],
    ) -> None:
        sent = plan.wanted.get(tp)
        state = self._subs.get(tp)
        if sent is None or state is None or state.epoch != epochs.get(tp):
            return  # unassigned or moved while the fetch was in flight
        if self._validator.is_pending(tp, state):
            return  # the leader changed meanwhile: this data waits for validation
        if self._fetch_offset(tp, state) != sent.fetch_offset:
            return
        action = partition_action(p.error_code)
        if action is PartitionAction.DATA:
            self._on_data(node, tp, state, sent, p)
        elif action is PartitionAction.OUT_OF_RANGE:
            self._on_out_of_range(node, tp, state, sent)
        elif action is PartitionAction.FAIL:
            self._push_error(tp, for_code(p.error_code)(f"Fetch {tp}"))
        else:
            self._on_retriable(tp, state, p, action, endpoints)

    def _on_data(
        self, node: int, tp: TopicPartition, state: PartitionState, sent: PartitionFetch, p: Any
    ) -> None:
        self._fetched_from[tp] = node
        self._subs.update_fetch_metadata(
            state, p.high_watermark, p.last_stable_offset, p.log_start_offset
        )
        if p.preferred_read_replica >= 0 and p.preferred_read_replica != node:
            # KIP-392: the leader names a replica closer to client_rack; fetch
            # there until it fails, the leader changes or metadata_max_age_ms.
            log.debug("%s: leader prefers replica %d", tp, p.preferred_read_replica)
            state.preferred_read_replica = p.preferred_read_replica
            state.preferred_until = (
                time.monotonic() + self._config.client.metadata_max_age_ms / 1000
            )
            self._preferred_epoch[tp] = self._client.cluster.leader_epoch(tp)
        records = p.records
        if records is None or len(records) == 0:
            return
        aborted = None
        if self._config.read_committed:
            aborted = [(a.producer_id, a.first_offset) for a in p.aborted_transactions or ()]
        chunk = PartitionRecords(
            tp,
            state,
            sent.fetch_offset,
            records,
            check_crcs=self._config.check_crcs,
            aborted=aborted,
            key_deserializer=self._config.key_deserializer,
            value_deserializer=self._config.value_deserializer,
            tally=self.metrics.tally(tp),
        )
        if chunk.is_drained and chunk.next_fetch_offset == sent.fetch_offset:
            self._on_incomplete(tp, sent, records, chunk.size)  # a partial batch only
            return
        self._partials.on_progress(tp)
        self.buffer.add(tp, chunk)
        self.metrics.chunk_added(tp, chunk.size)
        self._data_ready.set()

    def _on_out_of_range(
        self, node: int, tp: TopicPartition, state: PartitionState, sent: PartitionFetch
    ) -> None:
        if state.preferred_read_replica == node:
            # A follower behind the leader's high watermark: ask the leader.
            self._clear_preferred(tp, state)
            return
        if state.position != sent.fetch_offset:
            return  # the prefetch ran past a truncated log; the current chunk still holds
        if self._subs.default_reset == "none":
            self._push_error(
                tp,
                OffsetOutOfRangeError(f"fetch offset {sent.fetch_offset} is out of range for {tp}"),
            )
        else:
            log.info(
                "Fetch offset %d out of range for %s; resetting to %s",
                sent.fetch_offset,
                tp,
                self._subs.default_reset,
            )
            self._subs.request_reset([tp])

    def _on_retriable(
        self,
        tp: TopicPartition,
        state: PartitionState,
        p: Any,
        action: PartitionAction,
        endpoints: list[BrokerMetadata],
    ) -> None:
        # Leadership moved, topic recreated, epoch fenced, replica not ready...
        exc = for_code(p.error_code)(f"Fetch {tp}")
        self._clear_preferred(tp, state)
        leader = p.current_leader
        hinted = False
        if leader is not None and leader.leader_id >= 0:
            hinted = self._client.apply_leader_hint(
                tp, leader.leader_id, leader.leader_epoch, endpoints
            )
        if not hinted:
            self._tp_backoff[tp] = time.monotonic() + self._retry_backoff
            if action is PartitionAction.RETRY_REFRESH:
                self._want_metadata()
        log.debug("Fetch %s: %r (leader hint applied: %s)", tp, exc, hinted)

    # -- consuming ----------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._fatal is not None:
            raise ConsumerStoppedError(f"the fetcher failed: {self._fatal!r}") from self._fatal
        if self._closed:
            raise ConsumerStoppedError("the consumer was stopped")

    def drain(
        self, partitions: frozenset[TopicPartition] | None, max_records: int | None
    ) -> Records:
        """Take buffered records without waiting (see :meth:`FetchBuffer.drain`).

        Raises:
            ConsumerStoppedError: the consumer was stopped, or the fetcher failed.
            KafkaError: a partition's stored error (corrupt batch, out of range with
                ``auto_offset_reset="none"``, authorization, record too large), raised
                once other partitions' records were returned.
        """
        self._check_usable()
        return self.buffer.drain(partitions, max_records)

    def next_record(
        self, partitions: frozenset[TopicPartition] | None
    ) -> ConsumerRecord[Any, Any] | None:
        """One buffered record, or ``None`` (``getone()``'s path).

        Raises:
            ConsumerStoppedError: the consumer was stopped, or the fetcher failed.
            KafkaError: a partition's stored error, as in :meth:`drain`.
        """
        self._check_usable()
        return self.buffer.next_record(partitions)

    async def wait_for_data(self, timeout: float | None) -> bool:
        """Wait until new data (or a state change) may be available, or ``timeout``.

        Returns:
            False if ``timeout`` was already used up; True otherwise (the caller
            checks its own deadline: a wake-up may also be another waiter's timer).
        """
        self._check_usable()
        self._data_ready.clear()
        if timeout is not None and timeout <= 0:
            return False
        await _wait_event(self._data_ready, timeout)
        self._check_usable()
        return True

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Drop buffered data of ``partitions`` (e.g. revoked by a rebalance)."""
        self.buffer.forget(partitions)

    def metrics_snapshot(self) -> dict[str, Any]:
        """Fetch metrics, with records lag of the assigned partitions (see
        :class:`~aiokafka.metrics.consumer.FetchMetrics`)."""
        subs = self._subs
        partitions = [(tp, state) for tp in subs.assigned_partitions() if (state := subs.get(tp))]
        return self.metrics.snapshot(partitions, self._config.read_committed)

    def buffered_partitions(self) -> frozenset[TopicPartition]:
        """Partitions with buffered chunks (for tests and diagnostics)."""
        return self.buffer.partitions()


async def _wait_event(event: asyncio.Event, timeout: float | None) -> None:
    """``await event.wait()``, woken after ``timeout`` seconds at the latest.

    Not ``asyncio.wait_for``: on Python < 3.12 it can swallow a cancellation that
    arrives just as the inner wait completes, which left the fetch loop running
    after ``close()`` cancelled it (and ``close()`` waiting forever). A timer that
    sets the event has no such race; a spurious wake-up only costs a loop turn.
    """
    if event.is_set():
        # Set during the turn: wait() would return without suspending. Yield once,
        # so a loop that keeps waking itself still lets other tasks (the metadata
        # refresh it may wait for) run.
        await asyncio.sleep(0)
        return
    if timeout is None:
        await event.wait()
        return
    handle = asyncio.get_running_loop().call_later(timeout, event.set)
    try:
        await event.wait()
    finally:
        handle.cancel()
