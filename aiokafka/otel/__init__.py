"""OpenTelemetry tracing of producers and consumers (extra ``otel``:
``pip install aiokafka[otel]``; ``import aiokafka`` never imports this package).

::

    from aiokafka.otel import instrument, record_context

    producer = AIOKafkaProducer(bootstrap_servers=...)
    instrument(producer)   # spans from the global tracer provider
    consumer = AIOKafkaConsumer("orders", bootstrap_servers=..., group_id="billing")
    instrument(consumer, tracer_provider=provider)

    async for record in consumer:
        with tracer.start_as_current_span("bill", context=record_context(record)):
            ...

Spans follow the OpenTelemetry semantic conventions for messaging and Kafka (v1.44):
``send {topic}`` per ``send()`` (ended with the broker's answer; its context travels in
the record's ``traceparent``/``tracestate`` headers), ``poll {topic}`` per
``getmany()`` that returned records (linked to each record's producer span),
``process {topic}`` per record of ``getone()``/``async for``, ``commit {topic}`` per
``commit()``. See ``docs/tracing.md``, :mod:`aiokafka.otel.producer` and
:mod:`aiokafka.otel.consumer`. Metrics are :mod:`aiokafka.metrics.otel`.

Instrumentation wraps the methods of the one client given (through the client's
public :meth:`~aiokafka.hooks.Instrumentable.set_instrumentation`); other clients run
unchanged, at no cost. Without an OpenTelemetry SDK configured the spans are the API's
no-op spans and nothing is written into record headers.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.producer.producer import AIOKafkaProducer
from aiokafka.structs import ConsumerRecord

from .common import ClientAttributes, creation_context, get_tracer, inject
from .consumer import ConsumerTracing, record_span_context
from .producer import ProducerTracing

__all__ = ["context_headers", "instrument", "record_context", "uninstrument"]


def instrument(
    client: AIOKafkaProducer[Any, Any] | AIOKafkaConsumer[Any, Any],
    tracer_provider: trace.TracerProvider | None = None,
) -> None:
    """Trace ``client``'s operations (again: replaces the earlier instrumentation).

    May be called before or after ``start()``.

    Args:
        client: An ``AIOKafkaProducer`` (``send``, ``send_batch``) or
            ``AIOKafkaConsumer`` (``getone``, ``getmany``, ``async for``,
            ``commit``).
        tracer_provider: Where the spans go; default: the global tracer provider
            (``opentelemetry.trace.set_tracer_provider``).

    Raises:
        TypeError: ``client`` is neither a producer nor a consumer.
    """
    tracer = get_tracer(tracer_provider)
    if isinstance(client, AIOKafkaProducer):
        config = client.config
        producer = ProducerTracing(
            tracer, ClientAttributes(config.client_id, config.bootstrap_servers)
        )
        client.set_instrumentation(producer.wrappers())
    elif isinstance(client, AIOKafkaConsumer):
        cfg = client.config
        consumer = ConsumerTracing(
            tracer,
            ClientAttributes(cfg.client.client_id, cfg.client.bootstrap_servers),
            cfg.group_id,
        )
        client.set_instrumentation(consumer.wrappers(), consumer.iteration)
    else:
        raise TypeError(
            f"client: an AIOKafkaProducer or AIOKafkaConsumer, not {type(client).__name__}"
        )


def uninstrument(client: AIOKafkaProducer[Any, Any] | AIOKafkaConsumer[Any, Any]) -> None:
    """Stop tracing ``client`` (its methods are the class's again)."""
    client.set_instrumentation(None)


def record_context(record: ConsumerRecord[Any, Any], context: Context | None = None) -> Context:
    """The context to process ``record`` in: parent of the application's spans.

    For a record handed out by an instrumented ``getone()``/``async for``, its
    ``process`` span (among the last 1024 records); otherwise the producer's span
    from the record's ``traceparent`` header; otherwise ``context`` unchanged.

    Args:
        record: A consumed record.
        context: The context to extend; default: the current one.

    Returns:
        A context for ``tracer.start_as_current_span(..., context=...)`` or
        ``opentelemetry.context.attach()``.
    """
    base = otel_context.get_current() if context is None else context
    span_context = record_span_context(record) or creation_context(record.headers)
    if span_context is None:
        return base
    return trace.set_span_in_context(trace.NonRecordingSpan(span_context), base)


def context_headers(context: Context | None = None) -> list[tuple[str, bytes | None]]:
    """The trace-context headers of ``context`` (default: the current one), for
    records sent without ``send()``'s instrumentation, e.g. appended to a
    :meth:`~aiokafka.AIOKafkaProducer.create_batch` batch. Empty without a valid span.
    """
    headers: list[tuple[str, bytes | None]] = []
    inject(headers, otel_context.get_current() if context is None else context)
    return headers
