"""Spans of an instrumented :class:`~aiokafka.AIOKafkaProducer`.

``send()``: one ``send {topic}`` span of kind PRODUCER per record, started when
``send()`` is called and ended when the record's future completes (the broker's
acknowledgement, or the error). Its context is the record's creation context,
injected into the record's headers (``traceparent``, ``tracestate``), after the
user's headers. A record whose headers already hold a ``traceparent`` keeps it (the
conventions: a custom creation context is not modified); its span is then of kind
CLIENT and links to that context.

``send_batch()``: one ``send {topic}`` span of kind CLIENT per batch with
``messaging.batch.message_count``; the batch's records were encoded before, so
nothing is injected into them (see :func:`aiokafka.otel.context_headers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Tracer

from aiokafka.structs import RecordMetadata

from .common import (
    BATCH_COUNT,
    DESTINATION,
    OFFSET,
    PARTITION,
    ClientAttributes,
    creation_context,
    end_failed,
    end_raised,
    has_traceparent,
    inject,
    link_to,
    record_attributes,
)

__all__ = ["ProducerTracing"]

_Headers = list[tuple[str, "bytes | None"]]


class ProducerTracing:
    """The wrappers of one producer's ``send()`` and ``send_batch()``."""

    def __init__(self, tracer: Tracer, attributes: ClientAttributes) -> None:
        self._tracer = tracer
        self._attributes = attributes

    def wrappers(self) -> dict[str, Callable[..., Any]]:
        """For :meth:`~aiokafka.hooks.Instrumentable.set_instrumentation`."""
        return {"send": self.send, "send_batch": self.send_batch}

    async def send(
        self,
        send: Callable[..., Awaitable[asyncio.Future[RecordMetadata]]],
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> asyncio.Future[RecordMetadata]:
        """``send()`` in a span; the span's context goes into the record's headers."""
        # A list of our own: the caller's headers are kept (first) and not modified.
        carrier = _header_list(headers)
        pairs = carrier is not None and _are_pairs(carrier)
        custom = creation_context(carrier) if carrier and pairs else None  # the caller's own
        span = self._tracer.start_span(
            f"send {topic}",
            kind=SpanKind.CLIENT if custom is not None else SpanKind.PRODUCER,
            attributes=self._attributes.operation(
                "send", "send", **record_attributes(topic, partition, key, value)
            ),
            links=[link_to(custom)] if custom is not None else None,
        )
        # An invalid context (no SDK and no current span) has nothing to propagate.
        if (
            carrier is not None
            and pairs
            and custom is None
            and span.get_span_context().is_valid
            and not has_traceparent(carrier)
        ):
            inject(carrier, trace.set_span_in_context(span, otel_context.get_current()))
        try:
            future = await send(
                topic, value, key, partition, timestamp_ms, headers if carrier is None else carrier
            )
        except BaseException as error:
            # Failed for an error; ended plainly if cancelled (nothing was queued).
            end_raised(span, error)
            raise
        if span.is_recording():  # a no-op span (no SDK, sampled out) has nothing to end
            future.add_done_callback(partial(_delivered, span))
        return future

    async def send_batch(
        self,
        send_batch: Callable[..., Awaitable[asyncio.Future[RecordMetadata]]],
        batch: Any,
        topic: str,
        *,
        partition: int | None,
    ) -> asyncio.Future[RecordMetadata]:
        """``send_batch()`` in a span (ended with the batch's outcome)."""
        more: dict[str, Any] = {DESTINATION: topic}
        if partition is not None:  # None: the producer chooses, after the span starts
            more[PARTITION] = str(partition)
        count = batch.record_count() if hasattr(batch, "record_count") else None
        if isinstance(count, int):
            more[BATCH_COUNT] = count
        span = self._tracer.start_span(
            f"send {topic}",
            kind=SpanKind.CLIENT,
            attributes=self._attributes.operation("send", "send", **more),
        )
        try:
            future = await send_batch(batch, topic, partition=partition)
        except BaseException as error:
            end_raised(span, error)
            raise
        if span.is_recording():
            future.add_done_callback(partial(_delivered, span))
        return future


def _header_list(headers: Any) -> _Headers | None:
    """``headers`` as a new list (``None``: not iterable; ``send()`` says so)."""
    if headers is None:
        return []
    try:
        return list(headers)
    except TypeError:
        return None


def _are_pairs(headers: _Headers) -> bool:
    # Malformed headers get nothing injected: send() raises its own TypeError for them.
    return all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in headers
    )


def _delivered(span: Span, future: asyncio.Future[RecordMetadata]) -> None:
    # The future's done-callback: the broker's answer (or the error) ends the span.
    if future.cancelled():
        span.end()
        return
    error = future.exception()
    if error is not None:
        end_failed(span, error)
        return
    metadata = future.result()
    # None: acks=0, no answer; offset -1: the broker gave none (a duplicate batch).
    if metadata is not None and span.is_recording():
        span.set_attribute(PARTITION, str(metadata.partition))
        if metadata.offset >= 0:
            span.set_attribute(OFFSET, metadata.offset)
    span.end()
