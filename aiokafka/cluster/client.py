"""``AIOKafkaClient``: cluster metadata, request routing and retries.

Tasks owned by the client (see ``docs/DESIGN.md``):

* the *maintenance* task, started by :meth:`AIOKafkaClient.start`: refreshes
  metadata every ``metadata_max_age_ms`` and closes idle connections;
* the *metadata refresh* task of :class:`~aiokafka.cluster.refresh.MetadataRefresher`,
  the one owner of refreshes (coalesced, one throttle), running while someone waits.

The topics refreshes ask for come from the owners registered in
:class:`~aiokafka.cluster.interest.TopicInterest` (:meth:`AIOKafkaClient.topic_interest`).

:meth:`AIOKafkaClient.close` cancels and awaits both, then closes every connection.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from aiokafka._tasks import cancel_and_wait
from aiokafka._timeout import wait_for
from aiokafka.cluster.config import ClientConfig
from aiokafka.cluster.connections import ConnectionGroup, ConnectionPool, NodeId
from aiokafka.cluster.coordinators import Coordinators, CoordinatorType
from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.options import ClientOptions
from aiokafka.cluster.refresh import MetadataRefresher, as_bool
from aiokafka.cluster.retry import Action, action_for
from aiokafka.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NoBrokersAvailable,
    NotControllerError,
    StaleMetadata,
    UnknownTopicOrPartitionError,
)
from aiokafka.net.backoff import ExponentialBackoff
from aiokafka.net.connection import AIOKafkaConnection, OnAnswer
from aiokafka.options import ClientAttrs, StartClose
from aiokafka.protocol import messages as _messages
from aiokafka.structs import BrokerMetadata, TopicPartition

if TYPE_CHECKING:
    # typing.Unpack is 3.11+; annotations are not evaluated, so no import at run time.
    from typing_extensions import Unpack

    from aiokafka.protocol.request import Request
    from aiokafka.telemetry import TelemetryReporter

__all__ = ["AIOKafkaClient", "ConnectionGroup", "CoordinatorType"]

log = logging.getLogger(__name__)

T = TypeVar("T")
# The response type of the request being sent (``Request[R]`` -> ``R``).
R = TypeVar("R")


class SendOptions(TypedDict, total=False):
    """The keyword options of :meth:`AIOKafkaClient.send`, which the sends routed by
    the client (:meth:`~AIOKafkaClient.send_to_leader`,
    :meth:`~AIOKafkaClient.send_to_controller`) pass on as they are."""

    group: ConnectionGroup
    max_version: int | None
    timeout_ms: int | None


class AIOKafkaClient(ClientOptions, StartClose, ClientAttrs):
    """Connections to a Kafka cluster with cached metadata and routing.

    Either pass a :class:`~aiokafka.cluster.config.ClientConfig` or the same options
    as keywords (aiokafka's names), e.g.
    ``AIOKafkaClient(bootstrap_servers="host:9092", request_timeout_ms=10000)``.
    The constructor only validates; :meth:`start` connects.

    Raises:
        ValueError, TypeError: an option is invalid (the message names it).
    """

    GROUP = CoordinatorType.GROUP
    TRANSACTION = CoordinatorType.TRANSACTION

    def _setup(self, config: ClientConfig) -> None:
        # Called by ClientOptions.__init__ with the validated options.
        self.config = config
        cfg = self.config
        self._pool = ConnectionPool(
            cfg.connection,
            reconnect_backoff_ms=cfg.reconnect_backoff_ms,
            reconnect_backoff_max_ms=cfg.reconnect_backoff_max_ms,
            connections_max_idle_ms=cfg.connections_max_idle_ms,
        )
        self._retry_backoff = ExponentialBackoff(cfg.retry_backoff_ms, cfg.retry_backoff_ms)
        #: The current metadata snapshot (immutable; replaced on refresh, by this client
        #: only). A plain attribute, not a property: the producer compares it with its
        #: topic entry's snapshot once per record.
        self.cluster = ClusterMetadata()
        self._generation = 0
        self._interest = TopicInterest()
        # set_topics()/add_topic(): aiokafka's single set, as one owner among the
        # others (not declaring: a bare client keeps aiokafka's "empty = all").
        self._user_topics = InterestHandle(self._interest, "set_topics()", self._interest_grew)
        self._interest.register(self._user_topics, declares=False)
        self._refresher = MetadataRefresher(
            self._refresh,
            lambda: self._interest.version,
            retry_backoff_ms=cfg.retry_backoff_ms,
            max_backoff_ms=cfg.reconnect_backoff_max_ms,
        )
        self._maintenance_task: asyncio.Task[None] | None = None
        self._coordinators = Coordinators()
        self._state = "new"  # new -> started -> closed
        # KIP-714 metrics push, set up by the facade that owns this client (push_metrics).
        self._telemetry: TelemetryReporter | None = None

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Fetch metadata from a bootstrap server and start the maintenance task.

        Bounded by ``request_timeout_ms``.

        Raises:
            aiokafka.errors.KafkaConnectionError: no bootstrap server answered (the
                message lists them and why each failed).
            aiokafka.errors.AuthenticationFailedError,
            aiokafka.errors.SaslAuthenticationFailed: credentials or TLS are wrong.
        """
        if self._state != "new":
            raise IllegalStateError("AIOKafkaClient.start() may be called once")
        self._state = "started"
        try:
            timeout = self.config.request_timeout_ms / 1000
            metadata = await wait_for(self._bootstrap(), timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise KafkaConnectionError(
                f"Unable to bootstrap from {self._servers_text()}: no answer within "
                f"{self.config.request_timeout_ms} ms"
            ) from None
        except BaseException:
            await self.close()
            raise
        self._install(metadata)
        self._maintenance_task = asyncio.create_task(
            self._maintenance_loop(), name="aiokafka-client-maintenance"
        )

    bootstrap = start  # aiokafka's name

    def push_metrics(
        self, kind: str, metrics: Callable[[], dict[str, Any]], resource: dict[str, str]
    ) -> None:
        """Push ``metrics()`` to the cluster when it subscribes to them (KIP-714), unless
        ``enable_metrics_push`` is off: starts the telemetry task, which this client owns
        and :meth:`close` ends (after a final push). Call after :meth:`start`, once.

        Args:
            kind: ``"producer"``, ``"consumer"`` or ``"admin"`` (the metric names' group).
            metrics: The facade's ``metrics`` (a bound method is held weakly).
            resource: The client's KIP-714 resource attributes (``group_id``, ...).
        """
        if not self.config.enable_metrics_push or self._state != "started":
            return
        if self._telemetry is not None:
            raise IllegalStateError("push_metrics() was already called")
        from aiokafka.telemetry import TelemetryReporter

        self._telemetry = TelemetryReporter(
            self, kind, metrics, resource, self.config.request_timeout_ms
        )
        self._telemetry.start()

    async def close(self, timeout: float | None = None) -> None:
        """Cancel and await the client's tasks, then close every connection.

        Idempotent. Requests still running fail with
        :class:`~aiokafka.errors.KafkaConnectionError`.

        Args:
            timeout: Seconds the final metrics push (KIP-714, when the cluster
                subscribed to this client's metrics) may take; default
                ``request_timeout_ms``; ``0`` skips it.
        """
        telemetry, self._telemetry = self._telemetry, None
        try:
            if telemetry is not None:  # first: the final push needs the connections
                limit = self.config.request_timeout_ms / 1000 if timeout is None else timeout
                await telemetry.close(limit)
        finally:
            self._state = "closed"
            task, self._maintenance_task = self._maintenance_task, None
            await cancel_and_wait(task)
            await self._refresher.close()
            await self._pool.close()

    def _check_started(self) -> None:
        if self._state != "started":
            raise IllegalStateError(f"AIOKafkaClient is {self._state}; call start() first")

    def _servers_text(self) -> str:
        return ", ".join(f"{h}:{p}" for h, p in self.config.bootstrap_addresses)

    async def _bootstrap(self) -> ClusterMetadata:
        errors: list[str] = []
        for label, host, port, server_name in await self._bootstrap_endpoints(errors):
            # From the pool (not pooled): its failure log and once-per-client warnings.
            conn = self._pool.connection(host, port, node_id=label, server_hostname=server_name)
            try:
                await conn.connect()
                response = await conn.send(self._metadata_request())
            except KafkaError as exc:
                if not exc.retriable:
                    raise  # wrong credentials/TLS: trying other servers only hides it
                shown = server_name if server_name == host else f"{server_name} ({host})"
                errors.append(f"{shown}:{port}: {exc}")
                continue
            finally:
                await conn.close()
            log.debug("Bootstrapped from %s:%s", host, port)
            return self._snapshot(response)
        raise KafkaConnectionError(
            f"Unable to bootstrap from {self._servers_text()}: " + "; ".join(errors)
        )

    async def _bootstrap_endpoints(self, errors: list[str]) -> list[tuple[str, str, int, str]]:
        # Every address a name resolves to is tried (e.g. a DNS name listing all
        # brokers); the TLS certificate is still checked against the name.
        loop = asyncio.get_running_loop()
        endpoints: list[tuple[str, str, int, str]] = []
        for i, (host, port) in enumerate(self.config.bootstrap_addresses):
            try:
                infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                errors.append(f"{host}:{port}: cannot resolve ({exc})")
                continue
            seen: set[str] = set()
            for *_, sockaddr in infos:
                addr = str(sockaddr[0])
                if addr not in seen:
                    seen.add(addr)
                    endpoints.append((f"bootstrap-{i}", addr, port, host))
        return endpoints

    # -- metadata -----------------------------------------------------------------------

    @property
    def topics(self) -> frozenset[str]:
        """Topics whose metadata is kept: those some owner holds (see
        :meth:`topic_interest`; ``set_topics()`` is one owner). Whether every
        topic is asked for instead is :attr:`wants_all_topics`."""
        return self._interest.topics

    @property
    def wants_all_topics(self) -> bool:
        """Whether metadata requests ask for every topic: an owner asked for that
        (:meth:`InterestHandle.want_all`), or no owner registered and no topic is
        held (aiokafka's meaning of an empty ``set_topics()``)."""
        return self._interest.wants_all

    def topic_interest(self, name: str) -> InterestHandle:
        """A new owner's handle on the topics this client keeps metadata of.

        Metadata requests name every topic some handle holds; once a handle is
        registered, holding no topic asks for none (never silently for all).
        Close the handle when its owner stops.

        Args:
            name: Who owns it, for ``repr`` and logs (``"producer"``, ``"fetcher"``).
        """
        handle = InterestHandle(self._interest, name, self._interest_grew)
        self._interest.register(handle)
        return handle

    def _interest_grew(self, topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
        # A handle asked for ``topics`` (or every topic): refresh now unless the
        # cache covers them. Before start() the bootstrap request names them.
        if self._state == "new" or (not all_topics and topics <= self.cluster.topics.keys()):
            done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            done.set_result(True)
            return done
        self._check_started()
        reason = "every topic" if all_topics else f"new topics {sorted(topics)}"
        version = self._interest.version
        return as_bool(self._refresher.request(reason, urgent=True, interest_version=version), None)

    def request_refresh(self, reason: str) -> asyncio.Future[ClusterMetadata]:
        """Ask for fresher metadata because something looks stale (an unknown
        leader, NOT_LEADER_OR_FOLLOWER, an unknown topic id).

        The client's one throttle applies: coalesced with other requests, started
        ``retry_backoff_ms`` or more after the last refresh (growing up to
        ``reconnect_backoff_max_ms`` while requests come back to back or refreshes
        fail; see :mod:`aiokafka.cluster.refresh`). Not awaiting the result is
        fine; awaiting it raises what the refresh raised.

        Args:
            reason: Why, for the debug log.

        Returns:
            A future of the caller's own: the snapshot of a refresh that started
            after this call.

        Raises:
            aiokafka.errors.IllegalStateError: the client is not started.
        """
        self._check_started()
        return self._refresher.request(reason)

    @property
    def refresher(self) -> MetadataRefresher:
        """The owner of this client's refreshes (counters for tests, diagnostics)."""
        return self._refresher

    def _metadata_request(self) -> _messages.MetadataRequest:
        names = self._interest.request_topics()
        topics = None
        if names is not None:
            topic_type = _messages.MetadataRequestTopic
            topics = [topic_type(name=t) for t in names]
        return _messages.MetadataRequest(
            topics=topics, allow_auto_topic_creation=self.config.allow_auto_topic_creation
        )

    def _snapshot(self, response: _messages.MetadataResponse) -> ClusterMetadata:
        self._generation += 1
        return ClusterMetadata.from_response(response, self._generation)

    def _install(self, metadata: ClusterMetadata) -> None:
        if not metadata.brokers:
            # A response naming no brokers would leave nowhere to send anything.
            log.warning("Ignoring a metadata response without brokers")
            return
        self.cluster = metadata
        self._coordinators.retain(metadata.brokers)

    async def refresh_metadata(self) -> ClusterMetadata:
        """Fetch metadata now (no throttle); concurrent callers share one refresh.

        Returns the snapshot of a refresh that started after the call.

        Raises:
            aiokafka.errors.KafkaConnectionError, aiokafka.errors.NoBrokersAvailable:
                no broker answered (``KafkaConnectionError`` also if the client was
                closed meanwhile).
        """
        self._check_started()
        return await self._refresher.request("refresh_metadata()", urgent=True)

    async def _refresh(self) -> ClusterMetadata:
        request = self._metadata_request()
        last: KafkaError | None = None
        for node_id in self._refresh_candidates():
            try:
                conn = await self._connection(node_id)
                response = await conn.send(request)
            except KafkaError as exc:
                if not exc.retriable:
                    raise
                last = exc
                continue
            metadata = self._snapshot(response)
            self._install(metadata)
            log.debug(
                "Metadata refreshed from node %s: %d brokers, %d topics, controller %s",
                node_id,
                len(metadata.brokers),
                len(metadata.topics),
                metadata.controller_id,
            )
            return self.cluster
        err = NoBrokersAvailable(f"no broker answered a metadata request (last error: {last})")
        raise err from last

    def _refresh_candidates(self) -> list[NodeId]:
        # Connected and least loaded first, nodes in reconnect back-off last.
        brokers = sorted(
            self.cluster.brokers,
            key=lambda n: (
                self._pool.connected(n) is None,
                self._pool.in_backoff(n),
                self._pool.in_flight(n),
            ),
        )
        return [*brokers, *(f"bootstrap-{i}" for i in range(len(self.config.bootstrap_addresses)))]

    def force_metadata_update(self) -> asyncio.Future[bool]:
        """Start a metadata refresh (or join the one in flight), as in aiokafka.

        A plain method: the refresh runs whether or not the result is awaited.

        Returns:
            A future that resolves to ``True`` once the metadata is refreshed, or
            ``False`` if no broker answered (the maintenance task keeps retrying).
        """
        self._check_started()
        return as_bool(self._refresher.request("force_metadata_update()", urgent=True), False)

    def add_topic(self, topic: str) -> asyncio.Future[bool]:
        """Track ``topic`` too; see :meth:`set_topics`."""
        return self._user_topics.add((topic,))

    def set_topics(self, topics: Iterable[str]) -> asyncio.Future[bool]:
        """Track exactly ``topics`` (aiokafka's kind: a plain method returning a future).

        They are one owner's topics, this client's user's: what other owners hold
        (a producer's, a consumer's; see :meth:`topic_interest`) stays tracked. As
        in aiokafka, an empty set on a client nobody else registered with means
        every topic; on a producer's or consumer's client it adds none.

        Metadata is fetched at once if one of them is not known yet; the returned
        future resolves to ``True`` when the metadata is current. Awaiting it raises
        what the refresh raised (``NoBrokersAvailable``, ...); not awaiting it is
        fine too (the refresh still runs, and a failure is retried by the
        maintenance task).

        Raises:
            ValueError: a topic name is not a non-empty str (raised at the call).
            TypeError: ``topics`` is a str (a topic name passed by mistake).
        """
        return self._user_topics.set(topics)

    async def fetch_all_metadata(self) -> ClusterMetadata:
        """Metadata of every topic, without changing the cache or tracked topics."""
        self._check_started()
        node_id = self.least_loaded_node()
        if node_id is None:
            raise NoBrokersAvailable("no broker known")
        response = await self.send(node_id, _messages.MetadataRequest(topics=None))
        return ClusterMetadata.from_response(response, self._generation)

    def apply_leader_hint(
        self,
        tp: TopicPartition,
        leader_id: int,
        leader_epoch: int,
        endpoints: Iterable[BrokerMetadata] = (),
    ) -> bool:
        """Apply a KIP-951 leader hint from a Produce/Fetch response.

        Args:
            tp: The partition.
            leader_id: ``CurrentLeader.LeaderId``.
            leader_epoch: ``CurrentLeader.LeaderEpoch``.
            endpoints: ``NodeEndpoints`` of the response as
                :class:`~aiokafka.structs.BrokerMetadata`.

        Returns:
            True if the cache changed (the hint was newer than the cached epoch).
        """
        updated = self.cluster.with_leader(tp, leader_id, leader_epoch, endpoints)
        if updated is None:
            return False
        self.cluster = updated
        log.debug("Leader hint applied: %s -> node %d (epoch %d)", tp, leader_id, leader_epoch)
        return True

    async def _maintenance_loop(self) -> None:
        max_age = self.config.metadata_max_age_ms / 1000
        # metadata_max_age_ms=0 would otherwise refresh in a tight loop.
        min_interval = max(self.config.retry_backoff_ms / 1000, 0.01)
        failures = 0
        while True:
            wait = max(max_age - self.cluster.age(), min_interval)
            await asyncio.sleep(min(wait, self._pool.next_idle_check()) + 0.001)
            if self.cluster.age() >= max_age:
                try:
                    # Due: no wait. After a failure the refresher's back-off (growing
                    # with each failure) spaces the retries.
                    await self._refresher.request("metadata_max_age_ms", urgent=not failures)
                    failures = 0
                except KafkaError as exc:
                    failures += 1
                    # Once per outage at WARNING; the retries that follow at DEBUG.
                    level = logging.WARNING if failures == 1 else logging.DEBUG
                    log.log(level, "Periodic metadata refresh failed: %s", exc)
            await self._pool.close_idle()

    # -- connections and routing ----------------------------------------------------------

    def _endpoint(self, node_id: NodeId) -> tuple[str, int, str | None]:
        if isinstance(node_id, str) and node_id.startswith("bootstrap-"):
            host, port = self.config.bootstrap_addresses[int(node_id.split("-", 1)[1])]
            return host, port, None
        broker = self.cluster.brokers.get(node_id) if isinstance(node_id, int) else None
        if broker is None:
            broker = self._coordinators.broker(node_id)
        if broker is None:
            raise StaleMetadata(f"broker {node_id} is not in the cluster metadata")
        return broker.host, broker.port, None

    async def _connection(
        self, node_id: NodeId, group: ConnectionGroup = ConnectionGroup.DEFAULT
    ) -> AIOKafkaConnection:
        self._check_started()
        host, port, server_hostname = self._endpoint(node_id)
        key = node_id if group is ConnectionGroup.DEFAULT else f"coordination-{node_id}"
        return await self._pool.get(key, host, port, server_hostname)

    def network_metrics(self) -> dict[str, Any]:
        """Request and connection metrics of this client's connections: client-wide
        values and ``"nodes"`` per broker (``docs/metrics.md``)."""
        return self._pool.metrics.snapshot(self._pool.connection_count)

    def is_connected(self, node_id: NodeId) -> bool:
        """True if a connection to ``node_id`` is open (no I/O)."""
        return self._pool.connected(node_id) is not None

    async def coordinator_lookup(self, coordinator_type: int, coordinator_key: str) -> int:
        """aiokafka's name for :meth:`coordinator_for` (arguments in aiokafka's order):
        the node id of the group (``0``) or transaction (``1``) coordinator of
        ``coordinator_key``.

        Raises:
            aiokafka.errors.CoordinatorNotAvailableError: and other FindCoordinator
                errors.
        """
        return await self.coordinator_for(coordinator_key, CoordinatorType(coordinator_type))

    async def ready(
        self, node_id: NodeId, *, group: ConnectionGroup = ConnectionGroup.DEFAULT
    ) -> bool:
        """Connect to ``node_id`` if needed (``group``: which of its connections, see
        :class:`ConnectionGroup`); True if a connection is open."""
        try:
            await self._connection(node_id, group)
        except KafkaError:
            return False
        return True

    async def api_version(
        self,
        node_id: NodeId,
        api_key: int,
        max_version: int | None = None,
        group: ConnectionGroup = ConnectionGroup.DEFAULT,
    ) -> int:
        """The version requests with ``api_key`` to ``node_id`` would use."""
        conn = await self._connection(node_id, group)
        return conn.api_version(api_key, max_version)

    async def finalized_level(self, node_id: NodeId, feature: str) -> int:
        """The finalized level of ``feature`` that ``node_id`` reported at connect
        time (0 if none)."""
        conn = await self._connection(node_id)
        return conn.api_versions.finalized_level(feature)

    async def send(
        self,
        node_id: NodeId,
        request: Request[R],
        *,
        group: ConnectionGroup = ConnectionGroup.DEFAULT,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> R:
        """Send ``request`` to a broker (connecting if needed); return its response.

        See :meth:`aiokafka.net.connection.AIOKafkaConnection.send` for the arguments;
        ``group`` picks the connection to ``node_id`` (see :class:`ConnectionGroup`).
        The response has the type the request class names.
        Errors are not retried here; wrap in :meth:`call_with_retry` for that.
        """
        conn = await self._connection(node_id, group)
        return await conn.send(request, max_version=max_version, timeout_ms=timeout_ms)

    async def send_without_response(
        self,
        node_id: NodeId,
        request: Request[object],
        *,
        max_version: int | None = None,
    ) -> None:
        """:meth:`send` of a request the broker does not answer (Produce with
        ``acks=0``): returns once it is written (see
        ``AIOKafkaConnection.send_without_response``)."""
        conn = await self._connection(node_id, ConnectionGroup.DEFAULT)
        await conn.send_without_response(request, max_version=max_version)

    def write_nowait(
        self,
        node_id: NodeId,
        request: Request[R],
        on_answer: OnAnswer,
        *,
        max_version: int | None = None,
    ) -> bool:
        """Write ``request`` to an open connection now, its response (or error) going
        to ``on_answer``; False if that would mean waiting (see
        ``AIOKafkaConnection.write_nowait``; no connection to ``node_id`` open either)."""
        conn = self._pool.connected(node_id)
        return conn is not None and conn.write_nowait(request, on_answer, max_version=max_version)

    def leader_for(self, tp: TopicPartition) -> int:
        """The leader of ``tp`` from the cached metadata.

        Raises:
            aiokafka.errors.UnknownTopicOrPartitionError: the partition is unknown.
            aiokafka.errors.LeaderNotAvailableError: it has no leader right now.
            (Both ask the retry policy to refresh metadata.)
        """
        if self.cluster.partition(tp) is None:
            raise UnknownTopicOrPartitionError(f"{tp} is not in the cluster metadata")
        leader = self.cluster.leader_for(tp)
        if leader is None:
            raise LeaderNotAvailableError(f"{tp} has no leader")
        return leader

    async def send_to_leader(
        self, tp: TopicPartition, request: Request[R], **options: Unpack[SendOptions]
    ) -> R:
        """Send ``request`` to the leader of ``tp`` (see :meth:`leader_for`); the
        keyword arguments are :meth:`send`'s."""
        return await self.send(self.leader_for(tp), request, **options)

    async def send_to_controller(self, request: Request[R], **options: Unpack[SendOptions]) -> R:
        """Send ``request`` to the controller named by the cached metadata; the keyword
        arguments are :meth:`send`'s.

        Raises:
            aiokafka.errors.NotControllerError: the metadata names no controller (the
                retry policy then refreshes metadata).
        """
        controller = self.cluster.controller_id
        if controller is None:
            raise NotControllerError("the cluster metadata names no controller")
        return await self.send(controller, request, **options)

    def least_loaded_node(self) -> int | None:
        """The broker with the fewest requests in flight, preferring connected brokers
        and avoiding those in reconnect back-off; ``None`` if no broker is known."""
        brokers = list(self.cluster.brokers)
        if not brokers:
            return None
        return min(
            brokers,
            key=lambda n: (
                self._pool.in_backoff(n),
                self._pool.connected(n) is None,
                self._pool.in_flight(n),
            ),
        )

    # -- coordinators -------------------------------------------------------------------

    async def coordinator_for(
        self, key: str, key_type: CoordinatorType = CoordinatorType.GROUP
    ) -> int:
        """The node id of the group/transaction coordinator for ``key`` (cached).

        Raises:
            aiokafka.errors.CoordinatorNotAvailableError: and other FindCoordinator
                errors (retriable ones are meant for :meth:`call_with_retry`).
        """
        found = await self.coordinators_for([key], key_type)
        return found[key]

    async def coordinators_for(
        self, keys: Iterable[str], key_type: CoordinatorType = CoordinatorType.GROUP
    ) -> dict[str, int]:
        """Coordinators of several keys, in one FindCoordinator v4+ request when the
        broker supports batching (one request per key otherwise)."""

        async def connect() -> AIOKafkaConnection:
            node_id = self.least_loaded_node()
            if node_id is None:
                raise NoBrokersAvailable("no broker known")
            return await self._connection(node_id)

        return await self._coordinators.find(keys, key_type, connect)

    def known_coordinator(
        self, key: str, key_type: CoordinatorType = CoordinatorType.GROUP
    ) -> int | None:
        """The cached coordinator of ``key``, or ``None`` (no request is made)."""
        return self._coordinators.get(key, key_type)

    def invalidate_coordinator(
        self, key: str, key_type: CoordinatorType = CoordinatorType.GROUP
    ) -> None:
        """Forget the cached coordinator of ``key`` (after NOT_COORDINATOR etc.)."""
        self._coordinators.forget(key, key_type)

    # -- retries ------------------------------------------------------------------------

    async def call_with_retry(
        self,
        fn: Callable[[], Awaitable[T]],
        deadline: float | None = None,
        *,
        coordinator: tuple[str, CoordinatorType] | None = None,
    ) -> T:
        """Run ``fn()`` until it succeeds, retrying retriable Kafka errors.

        Between attempts the loop waits ``retry_backoff_ms`` (with jitter), refreshes
        metadata (:meth:`request_refresh`, throttled) after invalid-metadata errors
        (e.g. NOT_LEADER_OR_FOLLOWER, a lost connection) and forgets the coordinator
        of ``coordinator`` after NOT_COORDINATOR/COORDINATOR_NOT_AVAILABLE.
        Non-retriable errors propagate at once.

        Args:
            fn: Makes one attempt (re-reading metadata each time, so a retry goes to
                the new leader/coordinator).
            deadline: ``time.monotonic()`` value after which no new attempt starts;
                default now + ``request_timeout_ms``.
            coordinator: ``(key, key_type)`` whose cached coordinator ``fn`` uses.

        Raises:
            aiokafka.errors.KafkaTimeoutError: the deadline passed; ``__cause__`` is
                the last error.
        """
        if deadline is None:
            deadline = time.monotonic() + self.config.request_timeout_ms / 1000
        attempt = 0
        while True:
            try:
                return await fn()
            except KafkaError as exc:
                action = action_for(exc)
                if not action & Action.RETRY:
                    raise
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise KafkaTimeoutError(
                        f"gave up after {attempt + 1} attempts; last error: {exc}"
                    ) from exc
                log.debug("Retrying after %s (attempt %d)", exc, attempt + 1)
                if action & Action.FIND_COORDINATOR and coordinator is not None:
                    self.invalidate_coordinator(*coordinator)
                if action & Action.REFRESH_METADATA:
                    try:
                        reason = f"retrying after {type(exc).__name__}"
                        await wait_for(self.request_refresh(reason), remaining)
                    except (KafkaError, asyncio.TimeoutError) as refresh_exc:
                        log.debug("Metadata refresh during retry failed: %s", refresh_exc)
                remaining = deadline - time.monotonic()
                await asyncio.sleep(max(0.0, min(self._retry_backoff.delay(attempt), remaining)))
                attempt += 1
