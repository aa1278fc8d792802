"""Spans of an instrumented :class:`~aiokafka.AIOKafkaConsumer`.

``getmany()``: one ``poll {topic}`` span of kind CLIENT (a "receive" in the
conventions) per call that returned records, from the call to its return, child of
the caller's context, with a link to each record's creation context (the producer's
span, read from the record's ``traceparent`` header). Calls that return nothing make
no span: a consumer polling an idle topic would otherwise fill the trace store.

``getone()`` and ``async for``: one ``process {topic}`` span of kind CONSUMER per
record, from the call to the hand-out, linked to the record's creation context. With
no span current in the caller, the creation context is also its parent, so the
record's processing continues the producer's trace (the conventions' single-message
option); under a current span (say, an HTTP request's) that span is the parent. Its
context is what :func:`aiokafka.otel.record_context` returns for the record, for the
application's own spans.

``commit()``: one ``commit {topic}`` span of kind CLIENT (a "settle"). Auto-commits
and the final commit of ``stop()`` are the consumer's own work and make no span.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Tracer

from aiokafka.errors import ConsumerStoppedError
from aiokafka.structs import ConsumerRecord, TopicPartition

from .common import (
    BATCH_COUNT,
    DESTINATION,
    GROUP,
    OFFSET,
    PARTITION,
    ClientAttributes,
    creation_context,
    end_failed,
    end_raised,
    link_to,
    now_ns,
    record_attributes,
)

__all__ = ["ConsumerTracing", "record_span_context"]

# Set while an instrumented ``async for`` waits in ``__anext__``, which may call
# ``getone()``: that call's wrapper leaves the span to the iteration (one per record).
_ITERATING: ContextVar[bool] = ContextVar("aiokafka_otel_iterating", default=False)

#: How many handed-out records' span contexts are remembered for record_context().
_REMEMBERED = 1024

# (topic, partition, offset) -> (id(record), span context). Records have no weak
# references (slots), and keeping them alive could hold large values: the id
# tells a remembered record from another one read at the same offset.
_record_spans: OrderedDict[tuple[str, int, int], tuple[int, SpanContext]] = OrderedDict()


def record_span_context(record: ConsumerRecord[Any, Any]) -> SpanContext | None:
    """The context of the ``process`` span made when ``record`` was handed out by an
    instrumented ``getone()``/``async for``, while it is among the last 1024."""
    found = _record_spans.get((record.topic, record.partition, record.offset))
    if found is None or found[0] != id(record):
        return None
    return found[1]


def _remember(record: ConsumerRecord[Any, Any], span_context: SpanContext) -> None:
    key = (record.topic, record.partition, record.offset)
    _record_spans[key] = (id(record), span_context)
    _record_spans.move_to_end(key)
    if len(_record_spans) > _REMEMBERED:
        _record_spans.popitem(last=False)


class ConsumerTracing:
    """The wrappers of one consumer's ``getone()``, ``getmany()``, ``commit()`` and
    ``async for``. Holds no reference to the consumer (which holds the wrappers).

    Args:
        tracer: Makes the spans.
        attributes: The client's attributes.
        group_id: The consumer's group (``messaging.consumer.group.name``).
    """

    def __init__(
        self,
        tracer: Tracer,
        attributes: ClientAttributes,
        group_id: str | None,
    ) -> None:
        self._tracer = tracer
        self._attributes = attributes
        self._group: dict[str, Any] = {GROUP: group_id} if group_id else {}

    def wrappers(self) -> dict[str, Callable[..., Any]]:
        """For :meth:`~aiokafka.hooks.Instrumentable.set_instrumentation`."""
        return {"getone": self.getone, "getmany": self.getmany, "commit": self.commit}

    def iteration(self, consumer: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """What ``async for`` iterates over instead of ``consumer``."""
        return _TracedIteration(consumer, self)

    async def getone(
        self, getone: Callable[..., Awaitable[ConsumerRecord[Any, Any]]], *partitions: Any
    ) -> ConsumerRecord[Any, Any]:
        """``getone()`` and a ``process`` span for its record."""
        if _ITERATING.get():
            return await getone(*partitions)
        start = now_ns()
        parent = otel_context.get_current()
        try:
            record = await getone(*partitions)
        except Exception as error:
            self._failed_poll(error, start)
            raise
        self.process_span(record, start, parent)
        return record

    async def getmany(
        self,
        getmany: Callable[..., Awaitable[dict[TopicPartition, list[ConsumerRecord[Any, Any]]]]],
        *partitions: Any,
        **options: Any,
    ) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        """``getmany()`` and, if it returned records, a ``poll`` span linking to them."""
        start = now_ns()
        try:
            records = await getmany(*partitions, **options)
        except Exception as error:
            self._failed_poll(error, start)
            raise
        if records:
            self._poll_span(records, start)
        return records

    async def commit(self, commit: Callable[..., Awaitable[None]], *args: Any, **kw: Any) -> None:
        """``commit()`` in a ``commit`` span."""
        offsets = args[0] if args else kw.get("offsets")
        tps: list[Any] = list(offsets) if isinstance(offsets, Mapping) else []
        consumer = getattr(commit, "__self__", None)  # the consumer's bound commit()
        if offsets is None and consumer is not None:
            tps = list(consumer.assignment())  # what commit() without offsets commits
        topics = {getattr(tp, "topic", None) for tp in tps}
        more: dict[str, Any] = dict(self._group)
        name = "commit"
        if len(topics) == 1 and isinstance(topic := next(iter(topics)), str):
            name = f"commit {topic}"
            more[DESTINATION] = topic
            if len(tps) == 1 and isinstance(tps[0], TopicPartition):
                more[PARTITION] = str(tps[0].partition)
        span = self._tracer.start_span(
            name,
            kind=SpanKind.CLIENT,
            attributes=self._attributes.operation("settle", "commit", **more),
        )
        try:
            await commit(*args, **kw)
        except BaseException as error:
            end_raised(span, error)
            raise
        span.end()

    def process_span(self, record: ConsumerRecord[Any, Any], start: int, parent: Context) -> None:
        """The ``process`` span of one handed-out record (ended at once)."""
        creation = creation_context(record.headers)
        context = parent
        if creation is not None and not trace.get_current_span(parent).get_span_context().is_valid:
            context = trace.set_span_in_context(NonRecordingSpan(creation), parent)
        more = record_attributes(record.topic, record.partition, record.key, record.value)
        more[OFFSET] = record.offset
        more.update(self._group)
        span = self._tracer.start_span(
            f"process {record.topic}",
            context=context,
            kind=SpanKind.CONSUMER,
            attributes=self._attributes.operation("process", "process", **more),
            links=[link_to(creation)] if creation is not None else None,
            start_time=start,
        )
        span.end()
        span_context = span.get_span_context()
        if span_context.is_valid:  # else a no-op span with no parent: nothing to remember
            _remember(record, span_context)

    def _poll_span(
        self, records: dict[TopicPartition, list[ConsumerRecord[Any, Any]]], start: int
    ) -> None:
        topics = {tp.topic for tp in records}
        one_topic = len(topics) == 1
        links: list[Link] = []
        count = 0
        for tp, batch in records.items():
            count += len(batch)
            for record in batch:
                creation = creation_context(record.headers)
                if creation is not None:
                    # Per-record values go on the links (the conventions' rule for
                    # attributes that vary within a batch).
                    per_record: dict[str, Any] = {
                        PARTITION: str(tp.partition),
                        OFFSET: record.offset,
                    }
                    if not one_topic:
                        per_record[DESTINATION] = tp.topic
                    links.append(link_to(creation, **per_record))
        more: dict[str, Any] = dict(self._group)
        more[BATCH_COUNT] = count
        name = "poll"
        if one_topic:
            topic = next(iter(topics))
            name = f"poll {topic}"
            more[DESTINATION] = topic
            if len(records) == 1:
                more[PARTITION] = str(next(iter(records)).partition)
        span = self._tracer.start_span(
            name,
            kind=SpanKind.CLIENT,
            attributes=self._attributes.operation("receive", "poll", **more),
            links=links,
            start_time=start,
        )
        span.end()

    def _failed_poll(self, error: Exception, start: int) -> None:
        if isinstance(error, ConsumerStoppedError):
            return  # the end of consuming, not a failure
        span = self._tracer.start_span(
            "poll",
            kind=SpanKind.CLIENT,
            attributes=self._attributes.operation("receive", "poll", **self._group),
            start_time=start,
        )
        end_failed(span, error)


class _TracedIteration:
    """``async for`` over an instrumented consumer: a ``process`` span per record."""

    def __init__(self, consumer: AsyncIterator[Any], tracing: ConsumerTracing) -> None:
        self._consumer = consumer
        self._tracing = tracing

    def __aiter__(self) -> _TracedIteration:
        return self

    async def __anext__(self) -> Any:
        start = now_ns()
        parent = otel_context.get_current()
        token = _ITERATING.set(True)
        try:
            record = await self._consumer.__anext__()
        finally:
            _ITERATING.reset(token)
        self._tracing.process_span(record, start, parent)
        return record
