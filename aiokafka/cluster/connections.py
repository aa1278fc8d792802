"""The client's connections: one per broker, reconnect back-off, idle closing.

At most one connection per node id is open; concurrent callers wanting the same
node wait on a per-node lock, so only one connect attempt runs at a time. After a
failed attempt the node is in back-off (exponential with jitter, between
``reconnect_backoff_ms`` and ``reconnect_backoff_max_ms``); the next attempt waits
for it to pass. A connection that closes (error or idle) is dropped from the pool
at once (it has already let go of its socket and buffers) and its reader task is
awaited by the next :meth:`ConnectionPool.get`, :meth:`ConnectionPool.reap` or
:meth:`ConnectionPool.close`.

The pool owns the client's :class:`~aiokafka.net.failure_log.FailureLog` and gives it
to every connection it makes, pooled or not (:meth:`ConnectionPool.connection`, for
bootstrap), so the logging policy's rate limits span the whole client. It also warns
once per client when SASL PLAIN sends the password over a connection without TLS.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass
from typing import Protocol

from aiokafka._clock import SYSTEM_CLOCK, Clock
from aiokafka.errors import KafkaConnectionError, KafkaError
from aiokafka.metrics.network import NetworkMetrics
from aiokafka.net.backoff import ExponentialBackoff
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection, CloseCallback
from aiokafka.net.failure_log import FailureLog

__all__ = ["ConnectionFactory", "ConnectionGroup", "ConnectionPool", "NodeId"]

log = logging.getLogger(__name__)

#: A broker id, or a label such as ``"bootstrap-0"`` for an address not yet known by id.
NodeId = int | str


class ConnectionGroup(enum.IntEnum):
    """Which connection to a broker a request takes (``ready()`` / ``send()``'s
    ``group``, as in aiokafka).

    ``DEFAULT`` is the broker's pipelined connection. A broker handles one request
    of a connection at a time, in order, so a request written behind a Fetch that
    waits up to ``fetch_max_wait_ms`` for data waits as long. Group coordination
    (joins, heartbeats, commits, committed-offset look-ups) therefore takes a
    connection of its own, ``COORDINATION`` (pool key ``"coordination-<id>"``),
    as the Java consumer's coordinator does.
    """

    DEFAULT = 0
    COORDINATION = 1


class ConnectionFactory(Protocol):
    """Makes the pool's connections; :class:`AIOKafkaConnection` itself by default.

    Tests pass one that builds connections over an in-memory stream
    (``stream_factory``) or records what the pool made.
    """

    def __call__(
        self,
        host: str,
        port: int,
        config: ConnectionConfig,
        *,
        node_id: NodeId,
        server_hostname: str | None,
        on_close: CloseCallback | None,
        failure_log: FailureLog,
        metrics: NetworkMetrics,
    ) -> AIOKafkaConnection: ...


@dataclass(slots=True)
class _NodeState:
    failures: int = 0
    next_attempt: float = 0.0


class ConnectionPool:
    """Connections by node id.

    Args:
        config: Options for every connection.
        reconnect_backoff_ms: First reconnect pause.
        reconnect_backoff_max_ms: Largest reconnect pause.
        connections_max_idle_ms: Idle time after which :meth:`close_idle` closes a
            connection.
        failure_log: The logging policy for broker failures (a new one by default).
        connection_factory: Makes each connection (pooled or not);
            :class:`AIOKafkaConnection` by default.
        clock: Times and waits out the reconnect back-off (the system clock by
            default; tests pass a fake one).
    """

    def __init__(
        self,
        config: ConnectionConfig,
        *,
        reconnect_backoff_ms: int,
        reconnect_backoff_max_ms: int,
        connections_max_idle_ms: int,
        failure_log: FailureLog | None = None,
        connection_factory: ConnectionFactory | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._clock = clock
        self._config = config
        self._make_connection: ConnectionFactory = (
            connection_factory if connection_factory is not None else AIOKafkaConnection
        )
        self._backoff = ExponentialBackoff(reconnect_backoff_ms, reconnect_backoff_max_ms)
        self._max_idle = connections_max_idle_ms / 1000
        self._conns: dict[NodeId, AIOKafkaConnection] = {}
        self._locks: dict[NodeId, asyncio.Lock] = {}
        self._states: dict[NodeId, _NodeState] = {}
        self._dead: list[AIOKafkaConnection] = []
        self._closed = False
        self._failure_log = failure_log if failure_log is not None else FailureLog()
        self._cleartext_warned = False
        self._metrics = NetworkMetrics()

    @property
    def metrics(self) -> NetworkMetrics:
        """Request and connection metrics of every connection this pool made."""
        return self._metrics

    @property
    def connection_count(self) -> int:
        """Pooled connections open now (bootstrap connections are not pooled)."""
        return sum(1 for conn in self._conns.values() if conn.connected)

    def connected(self, node_id: NodeId) -> AIOKafkaConnection | None:
        """The open connection to ``node_id``, if any (no I/O)."""
        conn = self._conns.get(node_id)
        return conn if conn is not None and conn.connected else None

    def in_backoff(self, node_id: NodeId) -> bool:
        """True if the last attempt to reach ``node_id`` failed and its back-off is
        still running."""
        state = self._states.get(node_id)
        return state is not None and state.next_attempt > self._clock.monotonic()

    def in_flight(self, node_id: NodeId) -> int:
        """Requests in flight to ``node_id`` (0 without a connection)."""
        conn = self._conns.get(node_id)
        return conn.in_flight if conn is not None else 0

    async def get(
        self, node_id: NodeId, host: str, port: int, server_hostname: str | None = None
    ) -> AIOKafkaConnection:
        """Return the connection to ``node_id``, connecting (after any back-off) if
        needed.

        Raises:
            aiokafka.errors.KafkaConnectionError: the pool is closed, or connecting
                failed (retriable).
            aiokafka.errors.AuthenticationFailedError: and other non-retriable
                errors of :meth:`AIOKafkaConnection.connect`.
        """
        conn = self.connected(node_id)
        if conn is not None:
            return conn
        if self._dead:
            await self.reap()
        lock = self._locks.setdefault(node_id, asyncio.Lock())
        async with lock:
            conn = self.connected(node_id)
            if conn is not None:
                return conn
            if self._closed:
                raise KafkaConnectionError("the client is closed")
            state = self._states.setdefault(node_id, _NodeState())
            wait = state.next_attempt - self._clock.monotonic()
            if wait > 0:
                await self._clock.sleep(wait)
            conn = self._new(host, port, node_id, server_hostname, on_close=self._on_close)
            try:
                await conn.connect()
            except KafkaError as exc:
                state.failures += 1
                pause = self._backoff.delay(state.failures - 1)
                state.next_attempt = self._clock.monotonic() + pause
                log.debug("Connecting to node %s failed (%s); backing off", node_id, exc)
                raise
            if self._closed:  # closed while connecting: do not leak the new connection
                await conn.close()
                raise KafkaConnectionError("the client is closed")
            state.failures = 0
            state.next_attempt = 0.0
            self._conns[node_id] = conn
            self._metrics.connections_created.record()
            return conn

    def connection(
        self, host: str, port: int, *, node_id: NodeId, server_hostname: str | None = None
    ) -> AIOKafkaConnection:
        """A new connection that is not pooled (the caller connects and closes it), made
        like the pooled ones: same options, same failure log. For bootstrap."""
        return self._new(host, port, node_id, server_hostname)

    def _new(
        self,
        host: str,
        port: int,
        node_id: NodeId,
        server_hostname: str | None,
        on_close: CloseCallback | None = None,
    ) -> AIOKafkaConnection:
        self._warn_cleartext_password()
        return self._make_connection(
            host,
            port,
            self._config,
            node_id=node_id,
            server_hostname=server_hostname,
            on_close=on_close,
            failure_log=self._failure_log,
            metrics=self._metrics,
        )

    def _warn_cleartext_password(self) -> None:
        # A log WARNING, not warnings.warn(): applications and their test suites run
        # with -W error / filterwarnings=error, which would turn a UserWarning into an
        # exception out of start() for a setup that works (a trusted network, a local
        # broker). Once per client: the pool is the client's.
        config = self._config
        if self._cleartext_warned or config.security_protocol != "SASL_PLAINTEXT":
            return
        if config.sasl_mechanism != "PLAIN":
            return  # SCRAM sends a proof, GSSAPI a ticket, never the password
        self._cleartext_warned = True
        log.warning(
            "sasl_mechanism='PLAIN' with security_protocol='SASL_PLAINTEXT': the password "
            "is sent to the brokers unencrypted; use SASL_SSL (or SCRAM) unless the "
            "network is trusted"
        )

    def _on_close(self, conn: AIOKafkaConnection, error: KafkaError) -> None:
        node_id = conn.node_id
        if node_id is not None and self._conns.get(node_id) is conn:
            del self._conns[node_id]
        self._dead.append(conn)

    async def reap(self) -> None:
        """Finish closing connections that failed (awaits their reader tasks)."""
        dead, self._dead = self._dead, []
        for conn in dead:
            await conn.close()

    async def close_idle(self) -> None:
        """Close connections idle for longer than ``connections_max_idle_ms``."""
        for node_id, conn in list(self._conns.items()):
            if conn.idle_seconds() > self._max_idle:
                log.debug("Closing idle connection to node %s", node_id)
                await conn.close()
        await self.reap()

    def next_idle_check(self) -> float:
        """Seconds until the next connection could pass the idle limit."""
        if not self._conns:
            return self._max_idle
        return max(0.0, min(self._max_idle - c.idle_seconds() for c in self._conns.values()))

    async def close_node(self, node_id: NodeId) -> None:
        """Close the connection to ``node_id``, if open."""
        conn = self._conns.pop(node_id, None)
        if conn is not None:
            await conn.close()
        await self.reap()

    async def close(self) -> None:
        """Close every connection; later :meth:`get` calls fail."""
        self._closed = True
        conns = list(self._conns.values())
        self._conns.clear()
        for conn in conns:
            await conn.close()
        await self.reap()
