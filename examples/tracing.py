"""OpenTelemetry tracing: one trace from the HTTP-like request that produces an order to
the consumer that bills it (``pip install aiokafka[otel] opentelemetry-sdk``).

Run it against any broker (``python -m tools.kafka start`` starts one here)::

    python examples/tracing.py --bootstrap localhost:9092 --topic orders

It prints the spans it made, one per line, and checks they form one trace: the
producer's span context travels in each record's ``traceparent`` header.
"""

from __future__ import annotations

import argparse
import asyncio

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.otel import instrument, record_context

ORDERS = [b"order-1", b"order-2"]


def set_up_tracing() -> InMemorySpanExporter:
    # A real service exports to a collector instead, e.g. with
    # BatchSpanProcessor(OTLPSpanExporter()) from opentelemetry-exporter-otlp.
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


async def checkout(bootstrap: str, topic: str) -> None:
    tracer = trace.get_tracer("shop.checkout")
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        instrument(producer)  # spans from the global tracer provider set above
        # The application's span: each send span is its child, and the send span's
        # context goes into the record's headers.
        with tracer.start_as_current_span("POST /checkout"):
            for order in ORDERS:
                await producer.send_and_wait(topic, order, key=b"customer-7")


async def bill(bootstrap: str, topic: str, group: str) -> None:
    tracer = trace.get_tracer("shop.billing")
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    ) as consumer:
        instrument(consumer)
        billed = 0
        async for record in consumer:
            # record_context(record): the record's "process" span, itself a child of
            # the producer's span: the billing work joins the checkout's trace.
            with tracer.start_as_current_span("bill", context=record_context(record)):
                billed += 1
            if billed == len(ORDERS):
                break
        await consumer.commit()  # a "commit" span


def report(exporter: InMemorySpanExporter) -> None:
    spans = exporter.get_finished_spans()
    names = {span.context.span_id: span.name for span in spans if span.context}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = names.get(span.parent.span_id, "-") if span.parent else "-"
        trace_id = f"{span.context.trace_id:032x}"[:8] if span.context else "?"
        print(f"span {span.name!r} kind={span.kind.name} trace={trace_id} parent={parent!r}")
    checkout_traces = {
        span.context.trace_id
        for span in spans
        if span.context and span.name != "commit" and not span.name.startswith("commit ")
    }
    print(f"one trace from checkout to billing: {len(checkout_traces) == 1}")


async def main(bootstrap: str, topic: str, group: str) -> None:
    exporter = set_up_tracing()
    await checkout(bootstrap, topic)
    await bill(bootstrap, topic, group)
    report(exporter)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--group", default="billing")
    args = parser.parse_args()
    asyncio.run(main(args.bootstrap, args.topic, args.group))
