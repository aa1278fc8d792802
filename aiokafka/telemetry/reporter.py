"""The KIP-714 telemetry task: ask a broker what to push, then push it.

One :class:`TelemetryReporter` per client, owned by its
:class:`~aiokafka.cluster.client.AIOKafkaClient` (started by the facade's ``start()``
through :meth:`~aiokafka.cluster.client.AIOKafkaClient.push_metrics`, closed first
thing in the client's ``close()``, so the final push still has its connections). Its
one task:

1. GetTelemetrySubscriptions to one broker (the least loaded). A broker whose
   ApiVersions lacks the API (no client-telemetry plugin configured, or older than
   3.7) ends the task at once, quietly: telemetry is off for this client.
2. No metrics asked for: ask again after ``PushIntervalMs``.
3. Otherwise push every ``PushIntervalMs`` (the first push after a random 0.5-1.5
   of it, so clients started together do not push together), PushTelemetry with the
   selected metrics as an OTLP ``MetricsData``, compressed with the first type in the
   broker's ``AcceptedCompressionTypes`` we can write (else none), cut to
   ``TelemetryMaxBytes``.
4. Errors (the Java client's table): ``UNKNOWN_SUBSCRIPTION_ID`` and
   ``UNSUPPORTED_COMPRESSION_TYPE``: fetch the subscription again now;
   ``TELEMETRY_TOO_LARGE`` and ``THROTTLING_QUOTA_EXCEEDED``: again after the
   interval; ``INVALID_REQUEST``, ``INVALID_RECORD``, ``UNSUPPORTED_VERSION`` and
   anything else: stop. A failed connection or a timeout: fetch the subscription
   again after the interval (5 minutes before any), from whichever broker is least
   loaded then. A response's ``ThrottleTimeMs`` delays the next request at least
   that long.

:meth:`TelemetryReporter.close` cancels the task, then, if a subscription asked for
metrics, sends one last push with ``Terminating=true``, bounded by the close timeout.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
import random
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from aiokafka import errors
from aiokafka._tasks import cancel_and_wait
from aiokafka._timeout import timeout as _timeout
from aiokafka.errors import KafkaError
from aiokafka.protocol import messages as _messages
from aiokafka.record import compression

from .collect import Collector, Selection
from .otlp import Point, encode_metrics_data

if TYPE_CHECKING:
    from aiokafka.protocol.request import Request

__all__ = ["DEFAULT_PUSH_INTERVAL_MS", "TelemetryClient", "TelemetryReporter"]

log = logging.getLogger(__name__)

# The response type of a request (``Request[_R]`` -> ``_R``).
_R = TypeVar("_R")

#: Wait after a failed request when no subscription gave an interval (Java's).
DEFAULT_PUSH_INTERVAL_MS = 5 * 60 * 1000

_GET_TELEMETRY_SUBSCRIPTIONS = 71
_ZERO_UUID = uuid.UUID(int=0)

# What a push or subscription error means: fetch the subscription again now, after
# the interval, or stop for good (the Java client's ClientTelemetryUtils table).
_NOW, _LATER, _STOP = "now", "later", "stop"
_ERROR_ACTIONS = {
    errors.UnknownSubscriptionIdError.errno: _NOW,
    errors.UnsupportedCompressionTypeError.errno: _NOW,
    errors.TelemetryTooLargeError.errno: _LATER,
    errors.ThrottlingQuotaExceededError.errno: _LATER,
}

# Compression types in the order we try them when the broker accepts several: its
# own order is its preference, but it may list codecs whose library is missing here.
_CODECS = (
    compression.CODEC_ZSTD,
    compression.CODEC_LZ4,
    compression.CODEC_GZIP,
    compression.CODEC_SNAPPY,
)


class TelemetryClient(Protocol):
    """What the reporter needs of :class:`~aiokafka.cluster.client.AIOKafkaClient`."""

    def least_loaded_node(self) -> int | None: ...

    async def api_version(
        self, node_id: int, api_key: int, max_version: int | None = None
    ) -> int: ...

    async def send(
        self, node_id: int, request: Request[_R], *, timeout_ms: int | None = None
    ) -> _R: ...


@dataclass(frozen=True, slots=True)
class Subscription:
    """A GetTelemetrySubscriptions answer."""

    node_id: int
    instance_id: uuid.UUID
    subscription_id: int
    interval: float  # seconds
    selection: Selection
    delta: bool
    max_bytes: int
    codec: int


def kafka_uuid(value: uuid.UUID) -> str:
    """A UUID as Kafka writes it (``Uuid.toString()``: URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def _codec(accepted: list[int]) -> int:
    """The first accepted compression type we can write, else none."""
    for codec in accepted:
        if codec in _CODECS:
            try:
                compression.check_codec(codec)
            except KafkaError:
                continue  # its optional library is not installed
            return codec
    return compression.CODEC_NONE


class _Stop(Exception):
    """Telemetry is over for this client."""


class TelemetryReporter:
    """Pushes one client's metrics to the cluster when a subscription asks for them.

    Args:
        client: The cluster client that sends the requests.
        kind: ``"producer"``, ``"consumer"`` or ``"admin"`` (names the metrics).
        metrics: Returns the client's snapshot (``producer.metrics()``); a bound
            method is held weakly, so a facade dropped without ``stop()`` is still
            collected (the task then has nothing more to push).
        resource: The KIP's client resource attributes (``transactional_id``,
            ``group_id``, ``client_rack``, ...); ``client_instance_id`` is added.
        request_timeout_ms: Deadline of each telemetry request.
    """

    def __init__(
        self,
        client: TelemetryClient,
        kind: str,
        metrics: Callable[[], dict[str, Any]],
        resource: Mapping[str, str],
        request_timeout_ms: int,
    ) -> None:
        self._client = client
        self._source: Callable[[], Callable[[], dict[str, Any]] | None]
        if inspect.ismethod(metrics):
            self._source = weakref.WeakMethod(metrics)
        else:
            self._source = lambda: metrics
        self._collector = Collector(kind)
        self._resource = dict(resource)
        self._timeout_ms = request_timeout_ms
        self._instance_id = _ZERO_UUID
        self._subscription: Subscription | None = None
        self._not_before = 0.0  # monotonic time before which no request goes out
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def client_instance_id(self) -> uuid.UUID | None:
        """The id the broker gave this client (``None`` before the first answer)."""
        return None if self._instance_id == _ZERO_UUID else self._instance_id

    def start(self) -> None:
        """Start the task (once)."""
        if self._task is None and not self._closed:
            self._task = asyncio.create_task(self._run(), name="aiokafka-telemetry")

    async def close(self, timeout: float) -> None:
        """Stop the task, then send the terminating push if a subscription asked for
        metrics (within ``timeout`` seconds; errors are logged at DEBUG).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        task, self._task = self._task, None
        await cancel_and_wait(task)
        subscription = self._subscription
        if subscription is None or subscription.selection.empty or timeout <= 0:
            return
        try:
            async with _timeout(timeout):
                await self._push(subscription, terminating=True)
        except (KafkaError, asyncio.TimeoutError, _Stop) as exc:
            log.debug("Telemetry: the terminating push failed: %s", exc)
        except Exception:
            log.exception("Client telemetry: the terminating push failed")

    # -- the task -----------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while True:
                subscription = await self._subscribe()
                if subscription.selection.empty:
                    await self._sleep(subscription.interval)
                    continue
                delay = subscription.interval * random.uniform(0.5, 1.5)
                while True:
                    await self._sleep(delay)
                    action = await self._push(subscription, terminating=False)
                    if action is not None:
                        break
                    delay = subscription.interval
                if action == _LATER:
                    await self._sleep(subscription.interval)
        except _Stop as stop:
            log.debug("Telemetry stopped: %s", stop)
            self._subscription = None
        except Exception:
            # A bug (or a metrics() that raised) must not go unnoticed, nor end anything
            # but telemetry; CancelledError (close()) is not an Exception and passes.
            log.exception("Client telemetry failed; no more metrics are pushed")
            self._subscription = None

    async def _sleep(self, seconds: float) -> None:
        wait = max(seconds, self._not_before - time.monotonic())
        await asyncio.sleep(max(wait, 0.0))

    async def _request(self, node_id: int, request: Request[_R]) -> _R:
        response = await self._client.send(node_id, request, timeout_ms=self._timeout_ms)
        throttle = getattr(response, "throttle_time_ms", 0)
        if throttle > 0:
            self._not_before = time.monotonic() + throttle / 1000
        return response

    async def _subscribe(self) -> Subscription:
        """Ask for the subscription until a broker answers; raise _Stop when
        telemetry cannot work with this cluster."""
        while True:
            node_id = self._client.least_loaded_node()
            if node_id is None:
                raise _Stop("no broker known")
            try:
                await self._client.api_version(node_id, _GET_TELEMETRY_SUBSCRIPTIONS)
            except errors.UnsupportedVersionError:
                raise _Stop(f"broker {node_id} does not offer client telemetry") from None
            except KafkaError as exc:
                log.debug("Telemetry: cannot reach broker %s: %s", node_id, exc)
                await self._sleep(self._retry_interval())
                continue
            request = _messages.GetTelemetrySubscriptionsRequest(
                client_instance_id=self._instance_id
            )
            try:
                response = await self._request(node_id, request)
            except KafkaError as exc:
                log.debug("Telemetry: GetTelemetrySubscriptions to %s failed: %s", node_id, exc)
                await self._sleep(self._retry_interval())
                continue
            code = response.error_code
            if code:
                action = self._error_action(code, "GetTelemetrySubscriptions")
                await self._sleep(0 if action == _NOW else self._retry_interval())
                continue
            return self._install(node_id, response)

    def _retry_interval(self) -> float:
        subscription = self._subscription
        if subscription is not None:
            return subscription.interval
        return DEFAULT_PUSH_INTERVAL_MS / 1000

    def _install(
        self, node_id: int, response: _messages.GetTelemetrySubscriptionsResponse
    ) -> Subscription:
        instance_id = response.client_instance_id
        if instance_id == _ZERO_UUID:
            raise _Stop("the broker gave no client instance id")
        interval_ms = response.push_interval_ms
        if interval_ms <= 0:
            interval_ms = DEFAULT_PUSH_INTERVAL_MS  # as Java: an invalid interval
        subscription = Subscription(
            node_id=node_id,
            instance_id=instance_id,
            subscription_id=response.subscription_id,
            interval=interval_ms / 1000,
            selection=Selection(response.requested_metrics),
            delta=response.delta_temporality,
            max_bytes=response.telemetry_max_bytes,
            codec=_codec(list(response.accepted_compression_types)),
        )
        if self._instance_id != instance_id:
            log.info(
                "Client telemetry registered with client instance id %s", kafka_uuid(instance_id)
            )
        self._instance_id = instance_id
        self._subscription = subscription
        log.debug("Telemetry subscription: %s", subscription)
        return subscription

    def _error_action(self, code: int, api: str) -> str:
        action = _ERROR_ACTIONS.get(code, _STOP)
        error = errors.for_code(code)
        if action == _STOP:
            # Unrecoverable by retrying (INVALID_REQUEST, INVALID_RECORD,
            # UNSUPPORTED_VERSION, unknown codes): the operator should hear once.
            log.warning("Client telemetry disabled: %s answered %s", api, error.__name__)
            raise _Stop(error.__name__)
        log.debug("Telemetry: %s answered %s", api, error.__name__)
        return action

    async def _push(self, subscription: Subscription, terminating: bool) -> str | None:
        """One PushTelemetry; ``None`` when it was accepted, else what to do next."""
        source = self._source()
        points = (
            []
            if source is None
            else self._collector.points(source(), subscription.selection, subscription.delta)
        )
        payload, codec, points = self._payload(subscription, points)
        request = _messages.PushTelemetryRequest(
            client_instance_id=subscription.instance_id,
            subscription_id=subscription.subscription_id,
            terminating=terminating,
            compression_type=codec,
            metrics=payload,
        )
        try:
            response = await self._request(subscription.node_id, request)
        except KafkaError as exc:
            self._collector.rewind(points)
            if terminating:
                raise
            log.debug("Telemetry: PushTelemetry to %s failed: %s", subscription.node_id, exc)
            return _LATER
        except BaseException:
            self._collector.rewind(points)
            raise
        if response.error_code:
            self._collector.rewind(points)
            return self._error_action(response.error_code, "PushTelemetry")
        return None

    def _payload(
        self, subscription: Subscription, points: list[Point]
    ) -> tuple[bytes, int, list[Point]]:
        """The encoded, compressed metrics, cut to ``TelemetryMaxBytes`` (dropping
        the last, most specific points, which are rewound for the next push)."""
        resource = {**self._resource, "client_instance_id": kafka_uuid(subscription.instance_id)}
        limit = subscription.max_bytes if subscription.max_bytes > 0 else None
        kept = points
        while True:
            raw = encode_metrics_data(resource, kept)
            codec, data = subscription.codec, raw
            if codec != compression.CODEC_NONE:
                try:
                    data = compression.compress(codec, raw)
                except KafkaError:
                    codec, data = compression.CODEC_NONE, raw
                if len(data) >= len(raw):
                    codec, data = compression.CODEC_NONE, raw  # nothing gained
            if limit is None or len(data) <= limit or not kept:
                break
            keep = len(kept) * max(limit, 1) // len(data)
            kept = kept[: min(keep, len(kept) - 1)]
        if len(kept) < len(points):
            self._collector.rewind(points[len(kept) :])
            log.debug(
                "Telemetry: %d of %d metrics fit in TelemetryMaxBytes=%d",
                len(kept),
                len(points),
                subscription.max_bytes,
            )
        return data, codec, kept
