"""``AIOKafkaShareConsumer``: a member of a share group (KIP-932, queues for Kafka).

Members of a share group take records from the same partitions cooperatively; the
broker locks each record delivered to a member until the member acknowledges it
(accept, release, reject) or the lock runs out, and counts deliveries.

Tasks: one, the membership's heartbeat loop. Fetches run inside ``getmany()`` (one
ShareFetch per partition leader, in parallel) and carry the acknowledgements of the
previous poll; ``commit()`` sends them at once in ShareAcknowledge requests. One lock
serializes the data path, because each broker's share session numbers its requests.

Stop order: acknowledge what is pending and close the share sessions (final
ShareAcknowledge, epoch -1), leave the group (heartbeat epoch -1), close connections.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from aiokafka._timeout import wait_for
from aiokafka.cluster.client import AIOKafkaClient
from aiokafka.cluster.config import ClientConfig
from aiokafka.cluster.interest import InterestHandle
from aiokafka.errors import ConsumerStoppedError, IllegalStateError, KafkaError
from aiokafka.metrics.share import ShareFetchMetrics, SharePollMetrics, share_consumer_snapshot
from aiokafka.options import StartStop
from aiokafka.structs import TopicPartition

from .acks import AcknowledgementState
from .membership import ShareMembership
from .records import ShareConsumerRecord
from .session import AckResults, ShareSessions

log = logging.getLogger(__name__)

AcknowledgementCallback = Callable[[AckResults], None]
Polled = dict[TopicPartition, list[ShareConsumerRecord[Any, Any]]]


class AIOKafkaShareConsumer(StartStop):
    """A share-group consumer.

    Args:
        *topics: Topics to subscribe to at ``start()``.
        group_id: The share group (required).
        acknowledgement_mode: ``"implicit"`` (default): records of a poll not
            acknowledged are accepted by the next poll or ``commit()``.
            ``"explicit"``: every record must be acknowledged with
            :meth:`acknowledge` before the next poll.
        acknowledgement_commit_callback: Called on the event loop with
            ``{TopicPartition: None or the error}`` each time brokers answered
            acknowledgements: those a poll carried, a :meth:`commit`'s and the last
            ones, sent by :meth:`stop`. Errors are ``InvalidRecordStateError`` (the
            record's lock ran out first) and similar. An exception it raises comes
            out of the call that sent them; fetched records are kept.
        key_deserializer, value_deserializer: Applied to each record's key/value.
        fetch_max_wait_ms: Longest time a broker holds a ShareFetch for data.
        fetch_min_bytes, fetch_max_bytes: ShareFetch byte limits.
        max_poll_records: Records per ShareFetch (``MaxRecords``; default 500). The
            broker hands out whole batches, so a fetch may bring more; the rest wait
            in the consumer for the next polls, their locks running.
        share_acquire_mode: ``"batch_optimized"`` (default): the broker acquires
            whole record batches, as above. ``"record_limit"``: a fetch acquires at
            most ``max_poll_records`` records (fewer if ``getmany(max_records=...)``
            asks for fewer), splitting batches, so no record is locked before the
            application asks for it (KIP-1206, ShareFetch v2, Kafka 4.2+; an older
            broker ignores it and acquires whole batches).
        **config: Client options as :class:`~aiokafka.AIOKafkaConsumer` takes them
            (``bootstrap_servers``, ``client_id``, security, timeouts...).
    """

    def __init__(
        self,
        *topics: str,
        group_id: str,
        acknowledgement_mode: str = "implicit",
        acknowledgement_commit_callback: AcknowledgementCallback | None = None,
        key_deserializer: Callable[[bytes], Any] | None = None,
        value_deserializer: Callable[[bytes], Any] | None = None,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        max_poll_records: int = 500,
        share_acquire_mode: str = "batch_optimized",
        **config: Any,
    ) -> None:
        if not group_id:
            raise ValueError("group_id: a share consumer needs a group")
        if acknowledgement_mode not in ("implicit", "explicit"):
            raise ValueError("acknowledgement_mode must be 'implicit' or 'explicit'")
        if share_acquire_mode not in ("batch_optimized", "record_limit"):
            raise ValueError("share_acquire_mode must be 'batch_optimized' or 'record_limit'")
        for name, value in (
            ("fetch_max_wait_ms", fetch_max_wait_ms),
            ("fetch_min_bytes", fetch_min_bytes),
            ("fetch_max_bytes", fetch_max_bytes),
            ("max_poll_records", max_poll_records),
        ):
            if value < 0 or (value == 0 and name != "fetch_max_wait_ms"):
                raise ValueError(f"{name}: must be positive, got {value}")
        self._client_config = ClientConfig(**config)
        self._topics = list(topics)
        self._group_id = group_id
        self._acks = AcknowledgementState(explicit=acknowledgement_mode == "explicit")
        self._callback = acknowledgement_commit_callback
        self._kd = key_deserializer
        self._vd = value_deserializer
        self._fetch = (fetch_max_wait_ms, fetch_min_bytes, fetch_max_bytes, max_poll_records)
        self._record_limit = share_acquire_mode == "record_limit"
        self._client: AIOKafkaClient | None = None
        self._interest: InterestHandle | None = None  # the subscription's metadata
        self._membership: ShareMembership | None = None
        self._sessions: ShareSessions | None = None
        self._lock = asyncio.Lock()
        # Acquired records not yet handed to the application (see _hand_out).
        self._buffer: list[ShareConsumerRecord[Any, Any]] = []
        self._state = "new"
        self._poll_metrics = SharePollMetrics()

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, and join the group if topics were given.

        Raises:
            aiokafka.errors.IllegalStateError: started twice.
            aiokafka.errors.KafkaConnectionError: no bootstrap server answered.
        """
        if self._state != "new":
            raise IllegalStateError(f"start() on a {self._state} share consumer")
        self._state = "started"
        client = AIOKafkaClient(self._client_config)
        # Registered before the bootstrap, which then asks for the subscribed topics
        # only (a client without an owner would ask for every topic).
        self._interest = client.topic_interest("share subscription")
        self._interest.set(self._topics)
        await client.start()
        self._client = client
        self._membership = ShareMembership(
            client,
            self._group_id,
            rack_id=self._client_config.client_rack or None,
            retry_backoff_ms=self._client_config.retry_backoff_ms,
        )
        self._sessions = ShareSessions(
            client,
            self._group_id,
            self._membership.member_id,
            ShareFetchMetrics(self._poll_metrics.topics),
        )
        if self._topics:
            self.subscribe(self._topics)
        self._membership.start()

    async def stop(self) -> None:
        """Acknowledge what is pending (implicit mode accepts the last poll's
        records), close the share sessions, leave the group and disconnect."""
        if self._state != "started":
            self._state = "stopped"
            return
        self._state = "stopping"
        client, membership, sessions = self._client, self._membership, self._sessions
        assert client is not None and membership is not None and sessions is not None
        timeout = self._client_config.request_timeout_ms / 1000
        results: AckResults = {}
        try:
            async with self._lock:
                if not self._acks.explicit:
                    self._acks.accept_all()
                # Records never handed out are released when the sessions close.
                self._buffer.clear()
                try:
                    results = await wait_for(sessions.close(self._acks.take()), timeout)
                except (KafkaError, asyncio.TimeoutError) as exc:
                    log.info("Share group %s: closing sessions failed: %s", self._group_id, exc)
            await membership.stop(timeout)
        finally:
            self._state = "stopped"
            await client.close()
        # Once stopped: an exception from the callback cannot keep the member in the group.
        self._report(results)

    # -- subscription ---------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str] = (), pattern: str | None = None) -> None:
        """Replace the subscription with ``topics``.

        Args:
            topics: Topic names (an empty list subscribes to nothing).
            pattern: Not supported: a share group subscribes by topic name only
                (KIP-932's ShareGroupHeartbeat carries names, and Kafka's own
                ``KafkaShareConsumer`` has no pattern subscription). Resolve the
                names yourself, e.g. from ``AIOKafkaAdminClient.list_topics()``.

        Raises:
            ValueError: ``pattern`` given.
            TypeError: ``topics`` is a single string.
        """
        if pattern is not None:
            raise ValueError(
                "subscribe(pattern=...): share groups subscribe by topic name only "
                "(Kafka has no pattern subscription for share groups); pass the topic names"
            )
        if isinstance(topics, str):
            raise TypeError("topics: a list of topic names, not a string")
        self._topics = list(topics)
        if self._membership is not None and self._interest is not None:
            self._interest.set(self._topics)
            self._membership.subscribe(self._topics)

    def unsubscribe(self) -> None:
        """Subscribe to nothing: the coordinator takes this member's partitions away."""
        self.subscribe([])

    def subscription(self) -> frozenset[str]:
        """The subscribed topic names."""
        return frozenset(self._topics)

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions the group coordinator currently assigns to this member."""
        return self._membership.assignment if self._membership is not None else frozenset()

    @property
    def member_id(self) -> str | None:
        """This member's id in the share group (after ``start()``)."""
        return self._membership.member_id if self._membership is not None else None

    # -- consuming ------------------------------------------------------------------------

    def _started(self) -> tuple[ShareMembership, ShareSessions]:
        if self._state in ("stopping", "stopped"):
            raise ConsumerStoppedError()
        if self._membership is None or self._sessions is None:
            raise IllegalStateError("the share consumer is not started")
        return self._membership, self._sessions

    async def getmany(
        self, *partitions: TopicPartition, timeout_ms: int = 0, max_records: int | None = None
    ) -> Polled:
        """Fetch records acquired for this member, waiting up to ``timeout_ms``.

        The records of the previous poll are settled first: implicit mode accepts
        those not acknowledged; explicit mode raises if any is left. Their
        acknowledgements travel with this poll's ShareFetch requests.

        Args:
            *partitions: Only these assigned partitions (default: all assigned).
            timeout_ms: Longest wait for records.
            max_records: Cap on records in this call (default: all fetched).

        Raises:
            aiokafka.errors.IllegalStateError: explicit mode and records of the
                previous poll not acknowledged.
            aiokafka.errors.ConsumerStoppedError: the consumer is stopped.
        """
        membership, sessions = self._started()
        started = self._poll_metrics.poll_started()
        out: Polled = {}
        try:
            out = await self._poll(membership, sessions, partitions, timeout_ms, max_records)
            return out
        finally:
            self._poll_metrics.poll_ended(started, out)

    async def _poll(
        self,
        membership: ShareMembership,
        sessions: ShareSessions,
        partitions: tuple[TopicPartition, ...],
        timeout_ms: int,
        max_records: int | None,
    ) -> Polled:
        deadline = time.monotonic() + timeout_ms / 1000
        async with self._lock:
            self._acks.before_poll()
            while True:
                membership.check()
                ready = self._hand_out(partitions, max_records)
                if ready:
                    # Acknowledgements must not wait for the next fetch: their
                    # records' locks are running.
                    pending = self._acks.take()
                    if pending:
                        self._report(await sessions.acknowledge(pending))
                    return ready
                wanted = membership.assignment
                if partitions:
                    wanted = wanted & frozenset(partitions)
                remaining = deadline - time.monotonic()
                if not wanted:
                    pending = self._acks.take()
                    if pending:
                        self._report(await sessions.acknowledge(pending))
                    if remaining <= 0:
                        return {}
                    membership.changed.clear()
                    try:
                        await wait_for(membership.changed.wait(), remaining)
                    except asyncio.TimeoutError:
                        return {}
                    continue
                max_wait, min_bytes, max_bytes, limit = self._fetch
                fetched, results = await sessions.fetch(
                    membership.assignment,
                    self._acks.take(),
                    max_wait_ms=max(0, min(max_wait, int(remaining * 1000))),
                    min_bytes=min_bytes,
                    max_bytes=max_bytes,
                    max_records=limit if max_records is None else min(limit, max_records),
                    record_limit=self._record_limit,
                    key_deserializer=self._kd,
                    value_deserializer=self._vd,
                )
                for tp, (recs, gaps) in fetched.items():
                    self._acks.gaps(tp, gaps)
                    self._buffer.extend(recs)
                # After buffering: a callback that raises must not lose acquired records.
                self._report(results)
                if not self._buffer and time.monotonic() >= deadline:
                    return {}

    def _hand_out(self, partitions: tuple[TopicPartition, ...], max_records: int | None) -> Polled:
        # The broker may return more records than asked (it keeps batches whole) and
        # records of partitions the caller did not ask for: those stay buffered,
        # acquired but not yet delivered, so implicit mode never accepts a record
        # the application has not seen.
        wanted = frozenset(partitions)
        out: Polled = {}
        kept: list[ShareConsumerRecord[Any, Any]] = []
        budget = max_records if max_records is not None else len(self._buffer)
        for record in self._buffer:
            tp = TopicPartition(record.topic, record.partition)
            if budget > 0 and (not wanted or tp in wanted):
                out.setdefault(tp, []).append(record)
                budget -= 1
            else:
                kept.append(record)
        self._buffer = kept
        for tp, recs in out.items():
            self._acks.delivered(tp, (r.offset for r in recs))
        return out

    async def getone(self, *partitions: TopicPartition) -> ShareConsumerRecord[Any, Any]:
        """One record (waits until there is one); it counts as one poll, so in
        implicit mode the next poll accepts it."""
        while True:
            batch = await self.getmany(*partitions, timeout_ms=1000, max_records=1)
            for recs in batch.values():
                if recs:
                    return recs[0]

    def __aiter__(self) -> AsyncIterator[ShareConsumerRecord[Any, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ShareConsumerRecord[Any, Any]]:
        while True:
            try:
                batch = await self.getmany(timeout_ms=1000)
            except ConsumerStoppedError:
                return
            for recs in batch.values():
                for record in recs:
                    yield record

    # -- acknowledgement ------------------------------------------------------------------

    def acknowledge(self, record: ShareConsumerRecord[Any, Any], type: str = "accept") -> None:
        """Acknowledge one delivered record: ``"accept"`` (done), ``"release"``
        (deliver again, to any member) or ``"reject"`` (never deliver again).

        Sent with the next poll or :meth:`commit`.

        Raises:
            ValueError: unknown ``type``.
            aiokafka.errors.IllegalStateError: the record is not awaiting one.
        """
        self._acks.acknowledge(TopicPartition(record.topic, record.partition), record.offset, type)

    async def commit(self) -> AckResults:
        """Send the acknowledgements given so far (implicit mode: accept the last
        poll's records) and wait for each partition's leader to answer.

        Returns:
            ``{TopicPartition: None or the error}``; errors are also passed to
            ``acknowledgement_commit_callback``.
        """
        _, sessions = self._started()
        async with self._lock:
            if not self._acks.explicit:
                self._acks.accept_all()
            results = await sessions.acknowledge(self._acks.take())
        self._report(results)
        return results

    # -- metrics --------------------------------------------------------------------------

    def metrics(self) -> dict[str, Any]:
        """A snapshot of the share consumer's metrics, keyed by the Java share
        consumer's names, plus ``"topics"`` and ``"nodes"`` (``docs/metrics.md``);
        zeros before :meth:`start`. Call it on the consumer's event loop thread."""
        sessions, membership = self._sessions, self._membership
        return share_consumer_snapshot(
            self._poll_metrics,
            sessions.metrics if sessions is not None else None,
            membership.metrics if membership is not None else None,
            self._client,
        )

    def _report(self, results: AckResults) -> None:
        if results and self._callback is not None:
            self._callback(results)
        for tp, exc in results.items():
            if exc is not None:
                log.warning(
                    "Share group %s: acknowledgement for %s failed: %s", self._group_id, tp, exc
                )
