"""One TCP (optionally TLS) connection to a Kafka broker.

Frames are ``int32 size`` + header + body. Requests are pipelined: up to
``max_in_flight_requests_per_connection`` are written before their responses
arrive. Each response is matched to its request by correlation id and completes that
request's future, or calls its callback (:meth:`AIOKafkaConnection.write_nowait`). Over
TCP the frames come from the transport's protocol (:class:`~aiokafka.net.streams.TcpStream`)
in the loop turn they are read in; another :class:`~aiokafka.net.streams.ByteStream` is
read by a reader task owned by the connection.

Failure model (see ``docs/DESIGN.md``): the first read/write error, protocol error or
request timeout closes the connection and fails every request in flight with a
retriable :class:`~aiokafka.errors.KafkaConnectionError` (the timed-out one with
:class:`~aiokafka.errors.RequestTimedOutError`). A closed connection is never
reused; the owner makes a new one. A failed connection lets go of its stream at once,
so a partly read frame is not kept alive by a dead connection.

The stream comes from a :class:`~aiokafka.net.streams.StreamFactory` (TCP/TLS by
default), so unit tests can drive framing and failures with an in-memory stream.

A response's length prefix is checked against the connection's frame limit before
its body is read (:mod:`aiokafka.net.frames`), so a peer that is not a Kafka broker
cannot make the reader buffer gigabytes.

Failures and the first success after them are reported to the client's
:class:`~aiokafka.net.failure_log.FailureLog`, which decides what is logged at which
level.

A caller that cancels its own request does not disturb the framing: the request
stays registered, its response is read and dropped.

Re-authentication (KIP-368): when the broker gives the SASL session a lifetime, a task
owned by the connection runs the SASL exchange again before it ends
(:mod:`aiokafka.net.reauth` says when). Meanwhile a gate holds back new requests: the
broker reads a connection's requests one at a time, in order, so requests already
written are answered before the re-authentication starts, and none may be written
between its SaslHandshake and its last SaslAuthenticate. Held-back requests go out
when it is done. A failed re-authentication closes the connection with an
:class:`~aiokafka.errors.AuthenticationFailedError`; requests in flight get a
retriable :class:`~aiokafka.errors.KafkaConnectionError` caused by it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from aiokafka._timeout import wait_for
from aiokafka.errors import (
    CorrelationIdError,
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaProtocolError,
    RequestTimedOutError,
    UnsupportedVersionError,
)
from aiokafka.metrics.network import NetworkMetrics
from aiokafka.net.auth import authenticate
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.failure_log import FailureLog
from aiokafka.net.frames import MIN_FRAME_SIZE, frame_size_error, response_allowance
from aiokafka.net.handshake import negotiate_versions
from aiokafka.net.in_flight import (
    DeadlineTimer,
    OnAnswer,
    Pending,
    Slots,
    deliver,
    fail_pending,
)
from aiokafka.net.reauth import ReauthSchedule, reauth_failure
from aiokafka.net.streams import (
    ByteStream,
    StreamFactory,
    TcpStream,
    open_tcp_stream,
    read_frames,
)
from aiokafka.net.transport_errors import TRANSPORT_ERRORS, translate_transport_error
from aiokafka.net.versions import ApiVersionTable
from aiokafka.protocol import api as _api
from aiokafka.protocol import messages as _messages

if TYPE_CHECKING:
    from aiokafka.protocol.request import Request

__all__ = ["AIOKafkaConnection", "CloseCallback", "OnAnswer"]

log = logging.getLogger(__name__)

#: Called once when the connection closes, with the error in-flight requests got.
CloseCallback = Callable[["AIOKafkaConnection", KafkaError], None]

# The response type of the request being sent (``Request[_R]`` -> ``_R``).
_R = TypeVar("_R")

_MAX_CORRELATION_ID = 2**31 - 1
_HEADER_V0_LEN = MIN_FRAME_SIZE


class AIOKafkaConnection:
    """A connection to one broker.

    Construct, then ``await connect()`` (TCP, TLS, ApiVersions, SASL); use
    :meth:`send`; ``await close()``. The constructor starts nothing.

    Args:
        host: Broker host.
        port: Broker port.
        config: Timeouts, pipelining, security and SASL options.
        node_id: The broker id (or a bootstrap label), for logs and errors.
        server_hostname: Name to verify the TLS certificate against, default ``host``.
        on_close: Called once, synchronously, when the connection closes.
        failure_log: Where failures and recoveries are reported (one per client, so
            its rate limits span the client's connections); a private one by
            default.
        metrics: Where requests and responses are counted (the pool's, shared by
            the client's connections); a private one by default.
        stream_factory: Opens the byte stream (:mod:`aiokafka.net.streams`): TCP,
            with TLS if configured, by default; tests pass an in-memory one.
    """

    def __init__(
        self,
        host: str,
        port: int,
        config: ConnectionConfig | None = None,
        *,
        node_id: int | str | None = None,
        server_hostname: str | None = None,
        on_close: CloseCallback | None = None,
        failure_log: FailureLog | None = None,
        metrics: NetworkMetrics | None = None,
        stream_factory: StreamFactory = open_tcp_stream,
    ) -> None:
        self.host = host
        self.port = port
        self.node_id = node_id
        self.config = config if config is not None else ConnectionConfig()
        self._server_hostname = server_hostname
        # For the failure log: state by address, messages with the node id too.
        self._address = f"{host}:{port}"
        self._peer = self.peer
        self._on_close = on_close
        self._state = "new"  # new -> connecting -> ready -> closed
        self._open_stream = stream_factory
        self._stream: ByteStream | TcpStream | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._pending: dict[int, Pending] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop of its first request
        self._codec = _api.RequestCodec(self.config.client_id)
        # One timer for the deadlines of every request in flight (see in_flight).
        self._timer = DeadlineTimer(self._on_timer)
        self._slots = Slots(self.config.max_in_flight_requests_per_connection)
        self._next_id = 0
        self._close_error: KafkaError | None = None
        self._versions: ApiVersionTable | None = None
        self._failure_log = failure_log if failure_log is not None else FailureLog()
        # This broker's sensors: one call per request and one per response.
        self._metrics = (metrics if metrics is not None else NetworkMetrics()).node(node_id)
        # Raised (never lowered) by requests allowed larger answers (Fetch max_bytes).
        self._frame_limit = self.config.max_response_size
        self.last_activity = time.monotonic()
        # KIP-368: set while a re-authentication runs; requests wait for it.
        self._reauth_gate: asyncio.Event | None = None
        self._reauth_task: asyncio.Task[None] | None = None
        self._reauth_schedule = ReauthSchedule()
        self._reauthentications = 0

    def __repr__(self) -> str:
        node = f"node={self.node_id} " if self.node_id is not None else ""
        return f"<AIOKafkaConnection {node}{self.host}:{self.port} {self._state}>"

    @property
    def peer(self) -> str:
        """``"host:port"`` with the node id, for messages."""
        node = f" (node {self.node_id})" if self.node_id is not None else ""
        return f"{self.host}:{self.port}{node}"

    # -- state ------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """True once :meth:`connect` succeeded and until the connection closes."""
        return self._state == "ready"

    @property
    def closed(self) -> bool:
        """True once the connection failed or was closed."""
        return self._state == "closed"

    @property
    def close_error(self) -> KafkaError | None:
        """The error that closed the connection, if it is closed."""
        return self._close_error

    @property
    def frame_limit(self) -> int:
        """The largest response frame this connection reads, in bytes."""
        return self._frame_limit

    @property
    def reauthentications(self) -> int:
        """Successful SASL re-authentications of this connection (KIP-368)."""
        return self._reauthentications

    @property
    def in_flight(self) -> int:
        """Requests written whose responses have not arrived."""
        return len(self._pending)

    def idle_seconds(self) -> float:
        """Seconds since the last byte was sent or received (0 while requests are
        in flight)."""
        if self._pending:
            return 0.0
        return time.monotonic() - self.last_activity

    @property
    def api_versions(self) -> ApiVersionTable:
        """The broker's advertised version ranges (after the handshake)."""
        if self._versions is None:
            raise IllegalStateError(f"{self!r}: ApiVersions handshake not done")
        return self._versions

    def api_version(self, api_key: int, max_version: int | None = None) -> int:
        """The version :meth:`send` uses for ``api_key``: the highest both the
        codec and the broker support, capped by ``max_version``.

        Raises:
            aiokafka.errors.UnsupportedVersionError: no common version, or the
                codec does not know ``api_key``.
        """
        request_type = _messages.REQUEST_TYPES.get(api_key)
        if request_type is None:
            raise UnsupportedVersionError(f"the client does not implement API key {api_key}")
        return self.api_versions.choose(request_type, max_version)

    # -- connect ----------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the socket, negotiate API versions and authenticate.

        Bounded by ``request_timeout_ms``. On any failure the connection is closed
        before the error propagates.

        Raises:
            aiokafka.errors.KafkaConnectionError: unreachable, reset or timed out
                (retriable).
            aiokafka.errors.AuthenticationFailedError: TLS verification/handshake or
                client-side SASL failure (not retriable).
            aiokafka.errors.SaslAuthenticationFailed: the broker rejected the
                credentials (not retriable).
        """
        if self._state != "new":
            raise IllegalStateError(f"{self!r}: connect() may be called once")
        self._state = "connecting"
        timeout = self.config.request_timeout_ms / 1000
        try:
            await wait_for(self._connect_steps(), timeout)
        except asyncio.CancelledError:
            # The caller gave up; not a broker failure.
            err = KafkaConnectionError(f"connecting to {self.peer} cancelled")
            await asyncio.shield(self.close(err))
            raise
        except asyncio.TimeoutError:
            err = KafkaConnectionError(
                f"connecting to {self.peer} timed out after {self.config.request_timeout_ms} ms"
            )
            await self._connect_failed(err)
            raise err from None
        except KafkaError as exc:
            await self._connect_failed(exc)
            raise
        except BaseException as exc:
            await self._connect_failed(KafkaConnectionError(f"connecting to {self.peer}: {exc!r}"))
            raise
        if self._close_error is not None:
            # The reader task can fail the connection while the handshake's last response
            # is being processed (EOF right after it); marking it ready then would hand out
            # a closed connection that fails every send.
            raise self._close_error
        self._state = "ready"
        log.debug("Connected to %s", self.peer)
        if self._reauth_schedule.due is not None:
            self._reauth_task = asyncio.create_task(
                self._reauth_loop(), name=f"aiokafka-conn-reauth-{self.peer}"
            )

    async def _connect_failed(self, error: KafkaError) -> None:
        # Reported once: if the reader already failed the connection, its error (the
        # real cause, which the handshake request got too) was reported then.
        self._fail(error)
        # Bounded: the transport is aborted, so waiting for it is short.
        await asyncio.shield(self.close(error))

    async def _connect_steps(self) -> None:
        ssl_context = self.config.ssl_context if self.config.uses_ssl else None
        server_hostname = (self._server_hostname or self.host) if ssl_context else None
        try:
            stream = await self._open_stream(
                self.host, self.port, ssl=ssl_context, server_hostname=server_hostname
            )
        except TRANSPORT_ERRORS as exc:
            raise translate_transport_error(
                exc, self.peer, handshake=True, server_hostname=server_hostname
            ) from exc
        if self._close_error is not None:
            # close() ran while the socket was opening; it had nothing to abort then.
            stream.abort()
            raise self._unusable()
        self._stream = stream
        self.last_activity = time.monotonic()
        if isinstance(stream, TcpStream):
            stream.start_reading(self._frame_received, self._reading_failed, self._check_frame_size)
        else:
            self._reader_task = asyncio.create_task(
                self._read_loop(stream), name=f"aiokafka-conn-reader-{self.peer}"
            )
        self._versions = await negotiate_versions(self._send, self.peer)
        if self.config.uses_sasl:
            started = time.monotonic()
            lifetime_ms = await authenticate(self, self.config, self.host, send=self._send_sasl)
            self._reauth_schedule.session_started(started, lifetime_ms)

    # -- requests ---------------------------------------------------------------------

    async def send(
        self,
        request: Request[_R],
        *,
        version: int | None = None,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> _R:
        """Send ``request`` and return its decoded response.

        The response's type is the one the request class names
        (:class:`~aiokafka.protocol.request.Request`), so callers are type-checked
        against the response's fields. A request the broker does not answer (Produce
        with ``acks=0``) goes through :meth:`send_without_response` instead.

        Args:
            request: A generated request object (``aiokafka.protocol.messages``).
            version: Exact version to use; by default the negotiated one.
            max_version: Cap for the negotiated version.
            timeout_ms: Overrides ``request_timeout_ms`` for this request (e.g. a
                Fetch with a long ``max_wait_ms``).

        Raises:
            aiokafka.errors.UnsupportedVersionError: no common version (the
                connection stays usable).
            aiokafka.errors.KafkaConnectionError: the connection is or became closed.
            aiokafka.errors.RequestTimedOutError: no response within the timeout (the
                connection is closed).
        """
        version = self._version_for(request, version, max_version)
        return await self._send(request, version, self._decoder(request, version), timeout_ms)

    async def send_without_response(
        self,
        request: Request[object],
        *,
        version: int | None = None,
        max_version: int | None = None,
    ) -> None:
        """Write ``request``, which the broker does not answer (Produce with
        ``acks=0``), and return once its bytes are written.

        Arguments and errors as in :meth:`send` (there is no response to time out).
        """
        version = self._version_for(request, version, max_version)
        await self._take_slot(sasl=False)
        # Nothing gets registered, so the slot goes back as soon as the write is done.
        _, frame = self._frame(request, version)
        self._metrics.request_sent(len(frame), time.monotonic())
        try:
            await self._write(frame)
        finally:
            self._slots.release()

    def _version_for(
        self, request: Request[object], version: int | None, max_version: int | None
    ) -> int:
        """The version to send ``request`` at (see :meth:`send`), on a usable connection."""
        if self._state not in ("connecting", "ready"):
            raise self._unusable()
        if version is None:
            version = self.api_versions.choose(type(request), max_version)
        return version

    def send_nowait(
        self, request: Request[_R], *, max_version: int | None = None
    ) -> asyncio.Future[_R] | None:
        """Write ``request`` now and return the future of its response, or ``None``
        if that would mean waiting: the connection is not ready, is
        re-authenticating, or every in-flight slot is taken (then use :meth:`send`).

        For the producer's requests: no task or coroutine per request. The future
        fails with what :meth:`send` would raise; cancelling it drops the response.
        The write does not wait for the transport's buffer to drain: the in-flight
        slots bound what it holds.

        Raises:
            aiokafka.errors.UnsupportedVersionError: no common version.
        """
        pending = self._write_now(request, max_version, None)
        return None if pending is None else pending.future

    def write_nowait(
        self, request: Request[_R], on_answer: OnAnswer, *, max_version: int | None = None
    ) -> bool:
        """:meth:`send_nowait` with a callback instead of a future: False if the
        request was not written (see there), else ``on_answer(response, None)`` is
        called by the reader as soon as the response is decoded, in the loop turn it
        arrived in (no future, no loop turn for a done-callback), or
        ``on_answer(None, error)`` on a later loop turn with what :meth:`send` would
        raise. ``on_answer`` must not raise (what it raises goes to the loop's
        exception handler).

        Raises:
            aiokafka.errors.UnsupportedVersionError: no common version.
        """
        return self._write_now(request, max_version, on_answer) is not None

    def _write_now(
        self, request: Request[_R], max_version: int | None, on_answer: OnAnswer | None
    ) -> Pending | None:
        slots = self._slots
        # take_now() is locked()'s check and the take in one call; the slot goes back
        # if there is no common version.
        if self._state != "ready" or self._reauth_gate is not None or not slots.take_now():
            return None
        try:
            version = self.api_versions.choose(type(request), max_version)
            decode = self._decoder(request, version)
        except BaseException:
            slots.release()
            raise
        corr, frame = self._frame(request, version)
        pending = self._register(request, version, corr, frame, decode, None, on_answer)
        stream = self._stream
        assert stream is not None  # _frame() checked it
        try:
            stream.write(frame)
        except TRANSPORT_ERRORS as exc:
            # Fails every registered request, this one included: it gets the error.
            self._fail(translate_transport_error(exc, self.peer))
        else:
            # The clock _register read for the request's latency: no second read.
            self.last_activity = pending.started
        return pending

    def _frame(self, request: Request[object], version: int) -> tuple[int, bytes]:
        """A correlation id and the encoded frame of ``request``, for a caller holding
        a slot (released if this raises)."""
        try:
            if self._close_error is not None or self._stream is None:
                raise self._unusable()
            corr = self._next_correlation_id()
            return corr, self._codec.frame(request, version, corr)
        except BaseException:
            self._slots.release()
            raise

    def _register(
        self,
        request: Request[object],
        version: int,
        corr: int,
        frame: bytes,
        decode: Callable[[memoryview], _R],
        timeout_ms: int | None,
        on_answer: OnAnswer | None = None,
    ) -> Pending:
        """Register ``corr`` as in flight (its slot taken) with a timeout; its entry,
        with the future of its response unless ``on_answer`` takes it."""
        started = time.monotonic()
        self._metrics.request_sent(len(frame), started)
        loop = self._loop
        if loop is None:  # asyncio.get_running_loop() is a getpid() system call
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[_R] | None = None if on_answer is not None else loop.create_future()
        timeout = (timeout_ms if timeout_ms is not None else self.config.request_timeout_ms) / 1000
        deadline = loop.time() + timeout
        self._pending[corr] = pending = Pending(
            future, on_answer, decode, type(request), version, corr, started, deadline, timeout
        )
        self._timer.watch(loop, deadline)
        return pending

    async def _send_sasl(self, request: Request[_R]) -> _R:
        # The SASL exchange's own requests: they pass the re-authentication gate.
        version = self.api_versions.choose(type(request))
        return await self._send(request, version, self._decoder(request, version), sasl=True)

    def _decoder(self, request: Request[_R], version: int) -> Callable[[memoryview], _R]:
        allowance = response_allowance(request, version)
        if allowance > self._frame_limit:
            self._frame_limit = allowance
        return self._codec.decoder(request, version)

    def _unusable(self) -> KafkaError:
        if self._state == "new":
            return IllegalStateError(f"{self!r}: connect() first")
        err = KafkaConnectionError(f"connection to {self.peer} is closed")
        err.__cause__ = self._close_error
        return err

    async def _send(
        self,
        request: Request[object],
        version: int,
        decode: Callable[[memoryview], _R],
        timeout_ms: int | None = None,
        *,
        sasl: bool = False,
    ) -> _R:
        """Write ``request`` at ``version`` and return its response read with
        ``decode``; the handshake's requests come here too, and the SASL exchange's
        with ``sasl`` (they pass the re-authentication gate)."""
        await self._take_slot(sasl=sasl)
        # From here the slot is released by _frame_received() or _fail() once a registered
        # request is answered or failed, or by _frame() if framing fails.
        corr, frame = self._frame(request, version)
        future: asyncio.Future[_R] | None = self._register(
            request, version, corr, frame, decode, timeout_ms
        ).future
        assert future is not None
        try:
            await self._write(frame)
            # Written (the transport or the kernel has the bytes): drop the encoded
            # frame before waiting, or every request in flight keeps it alive until
            # its response (a produce request's batches twice over).
            del frame
            return await future
        except asyncio.CancelledError:
            # The request stays registered so its response is read and dropped;
            # cancelling the future tells the reader nobody wants it.
            future.cancel()
            raise
        except KafkaError:
            if future.done() and not future.cancelled():
                # The write failed and closed the connection; the future got the
                # error in-flight requests get. Mark it retrieved.
                future.exception()
            raise

    async def _take_slot(self, *, sasl: bool) -> None:
        """Wait for an in-flight slot, and for a re-authentication to end unless this
        is one of its (``sasl``) requests."""
        while True:
            gate = self._reauth_gate
            if gate is not None and not sasl:
                await gate.wait()
                continue
            await self._slots.acquire()
            # Checked again with the slot in hand, and nothing awaited from here to the
            # write: a re-authentication that began while this request waited for its
            # slot must not see the request written between its SASL frames.
            if self._reauth_gate is None or sasl:
                return
            self._slots.release()

    async def _write(self, frame: bytes) -> None:
        stream = self._stream
        if stream is None or self._close_error is not None:
            raise self._unusable()
        try:
            stream.write(frame)
            await stream.drain()
        except TRANSPORT_ERRORS as exc:
            err = translate_transport_error(exc, self.peer)
            self._fail(err)
            raise err from exc
        self.last_activity = time.monotonic()

    def _next_correlation_id(self) -> int:
        corr = self._next_id
        # Wrap within int32; ids still in flight after 2**31 requests are not a
        # practical concern (the window is max_in_flight wide).
        self._next_id = 0 if corr >= _MAX_CORRELATION_ID else corr + 1
        return corr

    # -- reading ----------------------------------------------------------------------

    async def _read_loop(self, reader: ByteStream) -> None:
        """Read a :class:`ByteStream` (a :class:`TcpStream` reads by itself)."""
        try:
            await read_frames(reader, self._check_frame_size, self._frame_received)
        except Exception as exc:
            self._reading_failed(exc)

    def _check_frame_size(self, size: int, prefix: bytes) -> None:
        if size < _HEADER_V0_LEN or size > self._frame_limit:
            raise frame_size_error(size, self._frame_limit, self.peer, prefix)

    def _reading_failed(self, exc: BaseException) -> None:
        if isinstance(exc, TRANSPORT_ERRORS):
            # EOF at a frame boundary with nothing in flight: the broker closed an idle
            # connection (its connections.max.idle.ms, a restart), not a failure.
            idle_eof = (
                isinstance(exc, asyncio.IncompleteReadError)
                and not exc.partial
                and not self._pending
            )
            self._fail(translate_transport_error(exc, self.peer), benign=idle_eof)
        elif isinstance(exc, KafkaError):
            # Without its traceback: the frames in it (the reader's, the stream's)
            # would keep the reader and its buffer alive as long as anyone holds the
            # error, and every request in flight gets it.
            self._fail(exc.with_traceback(None))
        else:  # a bug must not leave callers waiting forever
            log.warning("Unexpected error reading from %s", self.peer, exc_info=exc)
            self._fail(KafkaConnectionError(f"reading from {self.peer} failed: {exc!r}"))

    def _frame_received(self, frame: memoryview) -> None:
        now = self.last_activity = time.monotonic()
        corr = _api.read_correlation_id(frame)
        pending = self._pending.pop(corr, None)
        if pending is None:
            # Framing is intact, but request/response pairing no longer is: a
            # response for a request we did not send means we cannot trust which
            # future any later frame belongs to.
            raise CorrelationIdError(
                f"{self.peer} sent a response with correlation id {corr}, "
                f"expected one of {sorted(self._pending)}"
            )
        self._slots.release()
        self._metrics.response_received(now - pending.started, len(frame) + 4, now)
        future = pending.future
        if future is not None and future.done():
            return  # cancelled by its caller: read and dropped
        try:
            response = pending.decode(frame)
        except KafkaError as exc:
            if isinstance(exc, KafkaProtocolError):
                self._failure_log.failure(self._address, exc, self._peer)
            fail_pending(pending, exc)
        except Exception as exc:
            err = KafkaProtocolError(
                f"cannot decode the {pending.description} response from {self.peer}: {exc!r}"
            )
            self._failure_log.failure(self._address, err, self._peer)
            fail_pending(pending, err)
        else:
            if future is not None:
                future.set_result(response)
            else:
                deliver(pending, response)
            if self._state == "ready":
                # Handshake answers do not count: a broker whose later responses are
                # all broken has not recovered because ApiVersions went through.
                # (A dict lookup when nothing failed.)
                self._failure_log.success(self._address, self._peer)

    def _on_timer(self) -> None:
        due = self._timer.due(asyncio.get_running_loop(), self._pending.values())
        if due is None:
            return
        timed_out = RequestTimedOutError(
            f"{due.description} to {self.peer} got no response within {due.timeout * 1000:.0f} ms"
        )
        self._fail(
            KafkaConnectionError(f"connection to {self.peer} closed after a request timed out"),
            {due.corr: timed_out},
            report=timed_out,
        )

    # -- failure and close ------------------------------------------------------------

    def _fail(
        self,
        error: KafkaError,
        specific: dict[int, KafkaError] | None = None,
        *,
        requested: bool = False,
        benign: bool = False,
        report: KafkaError | None = None,
    ) -> None:
        """Close the connection now and fail every request in flight (idempotent).

        ``requested`` marks a close the owner asked for (logged at DEBUG); ``benign`` a
        close by the broker that broke nothing (INFO). Anything else is a failure,
        reported to the failure log as ``report`` (default ``error``).
        """
        if self._close_error is not None:
            return
        self._close_error = error
        previous, self._state = self._state, "closed"
        # Drop the stream now, not in close(): its read buffer may hold most of a
        # large frame, and an owner may keep a dead connection around for a while.
        # The reader task keeps its own reference until it ends, which the cancel
        # below makes prompt.
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort()
        self._timer.cancel()
        pending, self._pending = self._pending, {}
        for corr, p in pending.items():
            self._slots.release()
            fail_pending(p, (specific or {}).get(corr, error))
        current = asyncio.current_task()
        for task in (self._reader_task, self._reauth_task):
            if task is not None and task is not current:
                task.cancel()
        # Requests held back by a re-authentication wake up and find the connection closed.
        gate, self._reauth_gate = self._reauth_gate, None
        if gate is not None:
            gate.set()
        if requested:
            if previous == "ready":
                log.debug("Connection to %s closed: %s", self.peer, error)
        elif benign:
            log.info("Connection to %s closed by the broker: %s", self.peer, error)
        else:
            self._failure_log.failure(
                self._address, report if report is not None else error, self._peer
            )
        if self._on_close is not None:
            self._on_close(self, error)

    async def close(self, reason: KafkaError | None = None) -> None:
        """Close the connection; requests in flight fail with ``reason`` (default a
        retriable :class:`~aiokafka.errors.KafkaConnectionError`). Idempotent; awaits
        the reader task."""
        if self._state == "new":
            self._state = "closed"
            self._close_error = reason or KafkaConnectionError(f"{self.peer} closed")
            return
        self._fail(
            reason or KafkaConnectionError(f"connection to {self.peer} closed"), requested=True
        )
        current = asyncio.current_task()
        tasks = [t for t in (self._reader_task, self._reauth_task) if t not in (None, current)]
        self._reader_task = self._reauth_task = None
        if tasks:
            await asyncio.wait(tasks)

    # -- re-authentication (KIP-368) ---------------------------------------------------

    async def _reauth_loop(self) -> None:
        while True:
            delay = self._reauth_schedule.delay()
            if delay is None:
                return
            await asyncio.sleep(delay)
            if not await self._reauthenticate():
                return

    async def _reauthenticate(self) -> bool:
        """Run the SASL exchange again; False (and the connection closed) if it failed."""
        gate = self._reauth_gate = asyncio.Event()
        # Re-authenticating is not use: an otherwise idle connection stays idle for the
        # pool's idle limit. With nothing in flight, only our frames move meanwhile.
        idle_since = None if self._pending else self.last_activity
        started = time.monotonic()
        timeout = self.config.request_timeout_ms / 1000
        try:
            lifetime_ms = await wait_for(
                authenticate(self, self.config, self.host, send=self._send_sasl), timeout
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._reauth_failed(exc)
            return False
        finally:
            if self._reauth_gate is gate:
                self._reauth_gate = None
            gate.set()
        if idle_since is not None:
            self.last_activity = idle_since
        self._reauthentications += 1
        self._reauth_schedule.session_started(started, lifetime_ms)
        log.debug("Re-authenticated to %s", self.peer)
        return True

    def _reauth_failed(self, exc: Exception) -> None:
        if self._close_error is not None:
            return  # the connection failed underneath (and that was reported)
        error, lost = reauth_failure(
            exc, self.peer, self.config.sasl_mechanism, self.config.request_timeout_ms
        )
        self._fail(error, dict.fromkeys(self._pending, lost))
