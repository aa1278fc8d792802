"""What the producer's and the consumer's tracing share: attribute names (OpenTelemetry
semantic conventions for messaging and Kafka, v1.44), the record-header carrier of the
W3C trace context, and how a failed operation is recorded on its span."""

from __future__ import annotations

import time
from collections.abc import Iterable, MutableSequence, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.propagate import get_global_textmap
from opentelemetry.propagators.textmap import Getter, Setter
from opentelemetry.trace import Link, Span, SpanContext, Status, StatusCode, Tracer

from aiokafka.cluster.config import parse_bootstrap_servers

__all__ = [
    "SCHEMA_URL",
    "ClientAttributes",
    "creation_context",
    "end_failed",
    "end_raised",
    "get_tracer",
    "has_traceparent",
    "inject",
    "link_to",
    "now_ns",
    "record_attributes",
]

SCHEMA_URL = "https://opentelemetry.io/schemas/1.44.0"

SYSTEM = "messaging.system"
OPERATION_TYPE = "messaging.operation.type"
OPERATION_NAME = "messaging.operation.name"
DESTINATION = "messaging.destination.name"
PARTITION = "messaging.destination.partition.id"
BATCH_COUNT = "messaging.batch.message_count"
CLIENT_ID = "messaging.client.id"
GROUP = "messaging.consumer.group.name"
KEY = "messaging.kafka.message.key"
OFFSET = "messaging.kafka.offset"
TOMBSTONE = "messaging.kafka.message.tombstone"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

#: The W3C trace-context header a producer writes and a consumer reads.
TRACEPARENT = "traceparent"

now_ns = time.time_ns


class ClientAttributes:
    """The attributes every span of one client carries, computed once."""

    def __init__(self, client_id: str | None, bootstrap_servers: str | Sequence[str]) -> None:
        attributes: dict[str, Any] = {SYSTEM: "kafka"}
        if client_id:
            attributes[CLIENT_ID] = client_id
        # The first bootstrap server: the spans cannot know which broker answered
        # without reaching into the client, and the conventions want the address
        # the application configured ("without reverse DNS lookup").
        servers = parse_bootstrap_servers(bootstrap_servers)
        if servers:
            attributes[SERVER_ADDRESS], attributes[SERVER_PORT] = servers[0]
        self.base = attributes

    def operation(self, kind: str, name: str, **more: Any) -> dict[str, Any]:
        """The base attributes with ``messaging.operation.type``/``.name`` and ``more``."""
        attributes = dict(self.base)
        attributes[OPERATION_TYPE] = kind
        attributes[OPERATION_NAME] = name
        attributes.update(more)
        return attributes


class _HeaderGetter(Getter[Sequence[tuple[str, "bytes | None"]]]):
    """Reads ``(str, bytes)`` record headers (the last value of a repeated key)."""

    def get(self, carrier: Sequence[tuple[str, bytes | None]], key: str) -> list[str] | None:
        found = None
        for name, value in carrier:
            if name == key and value is not None:
                found = value
        if found is None:
            return None
        try:
            return [bytes(found).decode()]
        except (TypeError, UnicodeDecodeError):  # not something a propagator wrote
            return None

    def keys(self, carrier: Sequence[tuple[str, bytes | None]]) -> list[str]:
        return [name for name, _ in carrier]


class _HeaderSetter(Setter[MutableSequence[tuple[str, "bytes | None"]]]):
    """Appends ``(str, bytes)`` record headers."""

    def set(self, carrier: MutableSequence[tuple[str, bytes | None]], key: str, value: str) -> None:
        carrier.append((key, value.encode()))


_GETTER = _HeaderGetter()
_SETTER = _HeaderSetter()


def has_traceparent(headers: Iterable[tuple[str, Any]]) -> bool:
    """Whether ``headers`` already carry a creation context (the user's own)."""
    return any(name == TRACEPARENT for name, _ in headers)


def inject(headers: MutableSequence[tuple[str, bytes | None]], context: Context) -> None:
    """Append ``context`` (``traceparent``, ``tracestate``, baggage: whatever the
    global propagator writes) to ``headers``. Nothing for an invalid span context,
    e.g. when no SDK is configured."""
    get_global_textmap().inject(headers, context=context, setter=_SETTER)


def creation_context(headers: Sequence[tuple[str, bytes | None]]) -> SpanContext | None:
    """The span context a producer wrote into ``headers``, if valid."""
    for name, _ in headers:
        if name == TRACEPARENT:
            break
    else:
        # Most records of an uninstrumented producer: no propagator call.
        return None
    context = get_global_textmap().extract(headers, getter=_GETTER)
    span_context = trace.get_current_span(context).get_span_context()
    return span_context if span_context.is_valid else None


def link_to(span_context: SpanContext, **attributes: Any) -> Link:
    """A link to a record's creation context (with per-record attributes)."""
    return Link(span_context, attributes or None)


def end_failed(span: Span, error: BaseException, end_time: int | None = None) -> None:
    """Record ``error`` on ``span`` and end it (``error.type``: the exception's class,
    e.g. ``MessageSizeTooLargeError``, as the conventions recommend)."""
    if span.is_recording():
        span.set_attribute(ERROR_TYPE, type(error).__qualname__)
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__qualname__))
    span.end(end_time)


def end_raised(span: Span, error: BaseException) -> None:
    """End ``span`` of an operation that raised ``error``: as failed
    (:func:`end_failed`) for an ``Exception``; plainly for a cancellation, which is
    not the operation failing."""
    if isinstance(error, Exception):
        end_failed(span, error)
    else:
        span.end()


def record_attributes(topic: str, partition: int | None, key: Any, value: Any) -> dict[str, Any]:
    """The attributes that describe one record: its topic, its partition (if known),
    its key (only a ``str`` one: bytes are not readable text) and ``tombstone`` for a
    ``None`` value."""
    attributes: dict[str, Any] = {DESTINATION: topic}
    if partition is not None:
        attributes[PARTITION] = str(partition)
    if isinstance(key, str):
        attributes[KEY] = key
    if value is None:
        attributes[TOMBSTONE] = True
    return attributes


def get_tracer(tracer_provider: trace.TracerProvider | None) -> Tracer:
    """The tracer of this instrumentation (the global provider's by default)."""
    from aiokafka import __version__

    return trace.get_tracer(
        "aiokafka.otel", __version__, tracer_provider=tracer_provider, schema_url=SCHEMA_URL
    )
