"""OpenTelemetry tracing (aiokafka.otel) against the real broker, spans collected by the
SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka._timeout import timeout
from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.otel import context_headers, instrument, record_context, uninstrument
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.clear()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider
    provider.shutdown()


def _spans(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name == name]


async def _until_spans(exporter: InMemorySpanExporter, name: str, count: int) -> list[ReadableSpan]:
    # A send span ends in the future's done-callback, one loop turn after the await.
    for _ in range(1000):
        if len(_spans(exporter, name)) >= count:
            break
        await asyncio.sleep(0.01)
    return _spans(exporter, name)


async def test_send_and_process_spans_share_the_trace_through_the_header(
    kafka: KafkaCluster,
    new_topic: NewTopic,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
) -> None:
    topic = new_topic()
    group = f"tracing-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, client_id="traced-producer"
    ) as producer:
        instrument(producer, tracer_provider=provider)
        assert producer.instrumented
        metadata = await producer.send_and_wait(
            topic, b"v1", key=b"bytes-key", headers=[("user", b"kept")]
        )
    (send,) = await _until_spans(exporter, f"send {topic}", 1)
    assert send.kind is SpanKind.PRODUCER
    assert send.status.status_code is StatusCode.UNSET
    host, port = kafka.bootstrap_servers.split(",")[0].rsplit(":", 1)
    assert dict(send.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": "0",
        "messaging.kafka.offset": metadata.offset,
        "messaging.client.id": "traced-producer",
        "server.address": host,
        "server.port": int(port),
    }
    assert send.context is not None

    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    ) as consumer:
        instrument(consumer, tracer_provider=provider)
        async with timeout(30):
            async for received in consumer:
                record = received
                break
        # The user's header first, then the producer span's context.
        assert record.headers[0] == ("user", b"kept")
        names = [name for name, _ in record.headers]
        assert names[1:] == ["traceparent"]
        await consumer.commit()

    (process,) = _spans(exporter, f"process {topic}")
    assert process.kind is SpanKind.CONSUMER
    assert process.context is not None and process.parent is not None
    assert process.context.trace_id == send.context.trace_id
    assert process.parent.span_id == send.context.span_id
    assert [link.context.span_id for link in process.links] == [send.context.span_id]
    attributes = dict(process.attributes or {})
    assert attributes["messaging.consumer.group.name"] == group
    assert attributes["messaging.operation.type"] == "process"
    assert attributes["messaging.destination.partition.id"] == "0"
    assert attributes["messaging.kafka.offset"] == record.offset
    assert "messaging.kafka.message.key" not in attributes  # bytes, not a string
    # The application's spans are children of the process span.
    context_span = trace.get_current_span(record_context(record)).get_span_context()
    assert context_span.span_id == process.context.span_id

    (commit,) = _spans(exporter, f"commit {topic}")
    assert commit.kind is SpanKind.CLIENT
    assert dict(commit.attributes or {})["messaging.operation.type"] == "settle"
    assert dict(commit.attributes or {})["messaging.operation.name"] == "commit"
    assert dict(commit.attributes or {})["messaging.consumer.group.name"] == group


async def test_getmany_links_each_record_and_getone_keeps_the_callers_parent(
    kafka: KafkaCluster,
    new_topic: NewTopic,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
) -> None:
    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, key_serializer=str.encode
    ) as producer:
        instrument(producer, tracer_provider=provider)
        futures = [await producer.send(topic, b"v", key=f"k{i}", partition=i % 2) for i in range(4)]
        await asyncio.gather(*futures)
        tombstone = await producer.send_and_wait(topic, None, key="gone", partition=0)
    sends = await _until_spans(exporter, f"send {topic}", 5)
    assert sorted(dict(s.attributes or {})["messaging.kafka.message.key"] for s in sends) == [
        "gone",
        "k0",
        "k1",
        "k2",
        "k3",
    ]
    (dead,) = [
        s for s in sends if dict(s.attributes or {})["messaging.kafka.message.key"] == "gone"
    ]
    assert dict(dead.attributes or {})["messaging.kafka.message.tombstone"] is True
    assert dict(dead.attributes or {})["messaging.kafka.offset"] == tombstone.offset
    send_ids = {s.context.span_id for s in sends if s.context is not None}

    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, key_deserializer=bytes.decode
    ) as consumer:
        consumer.assign([tp0, tp1])
        await consumer.seek_to_beginning()
        instrument(consumer, tracer_provider=provider)
        # Partition 0 holds k0, k2, then the tombstone: take two, leave it for getone().
        async with timeout(30):
            for tp in (tp1, tp0):
                received = 0
                while received < 2:
                    batches = await consumer.getmany(tp, timeout_ms=1000, max_records=2 - received)
                    received += sum(len(records) for records in batches.values())
        # getone() under the caller's span: that span is the parent, the producer's a link.
        tracer = provider.get_tracer("test")
        with tracer.start_as_current_span("request") as request:
            async with timeout(30):
                record = await consumer.getone()
    assert record.key == "gone" and record.value is None
    polls = _spans(exporter, f"poll {topic}")
    assert polls and all(p.kind is SpanKind.CLIENT for p in polls)
    links = [link for poll in polls for link in poll.links]
    assert {link.context.span_id for link in links} <= send_ids
    assert len(links) == 4
    assert sum(dict(p.attributes or {})["messaging.batch.message_count"] for p in polls) == 4
    assert all(
        set(dict(link.attributes or {}))
        == {"messaging.destination.partition.id", "messaging.kafka.offset"}
        for link in links
    )
    (process,) = _spans(exporter, f"process {topic}")
    assert process.parent is not None
    assert process.parent.span_id == request.get_span_context().span_id
    assert dead.context is not None
    assert [link.context.span_id for link in process.links] == [dead.context.span_id]
    attributes = dict(process.attributes or {})
    assert attributes["messaging.kafka.message.key"] == "gone"
    assert attributes["messaging.kafka.message.tombstone"] is True
    assert "messaging.consumer.group.name" not in attributes  # no group


async def test_failed_sends_set_error_status(
    kafka: KafkaCluster,
    new_topic: NewTopic,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
) -> None:
    topic = new_topic(config={"max.message.bytes": "2000"})
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, enable_idempotence=False
    ) as producer:
        instrument(producer, tracer_provider=provider)
        # The broker refuses the record: the future fails, the span ends with the error.
        future = await producer.send(topic, b"x" * 5000)
        with pytest.raises(MessageSizeTooLargeError):
            await future
        # send() itself refuses the value: the span ends at once.
        with pytest.raises(TypeError):
            await producer.send(topic, 12345)  # type: ignore[arg-type]
        # Malformed headers get nothing injected: send() reports them as without tracing.
        with pytest.raises(TypeError, match="header key must be str"):
            await producer.send(topic, b"v", headers=[(b"key", b"v")])  # type: ignore[list-item]
        # Headers from a generator are read once, kept, and extended.
        pairs = (pair for pair in [("a", b"1")])
        metadata = await producer.send_and_wait(topic, b"ok", headers=pairs)
    spans = await _until_spans(exporter, f"send {topic}", 4)
    failed = [span for span in spans if span.status.status_code is StatusCode.ERROR]
    for span in failed:
        assert [event.name for event in span.events] == ["exception"]
    error_types = sorted(dict(span.attributes or {})["error.type"] for span in failed)
    assert error_types == ["MessageSizeTooLargeError", "TypeError", "TypeError"]
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, metadata.offset)
        async with timeout(30):
            record = await consumer.getone()
    assert [name for name, _ in record.headers] == ["a", "traceparent"]


async def test_without_a_tracer_provider_clients_work_and_add_no_context(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """The global provider is the API's default (no SDK): no-op spans, no headers."""
    topic = new_topic()
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        instrument(producer)
        await producer.send_and_wait(topic, b"a", headers=[("user", b"1")])
        await producer.send_and_wait(topic, b"b")
        uninstrument(producer)
        assert not producer.instrumented and "send" not in vars(producer)
        await producer.send_and_wait(topic, b"c")
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=f"tracing-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
    ) as consumer:
        instrument(consumer)
        async with timeout(30):
            records = [await consumer.getone() for _ in range(2)]
            batches = {}
            while not batches:
                batches = await consumer.getmany(timeout_ms=1000)
        await consumer.commit()
    records += [r for rs in batches.values() for r in rs]
    assert [r.value for r in records] == [b"a", b"b", b"c"]
    assert [list(r.headers) for r in records] == [[("user", b"1")], [], []]
    assert context_headers() == []


async def test_uninstrumented_clients_add_no_headers(
    kafka: KafkaCluster,
    new_topic: NewTopic,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
) -> None:
    topic = new_topic()
    tracer = provider.get_tracer("test")
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        assert not producer.instrumented
        # Even under a current span: only instrumented clients write trace context.
        with tracer.start_as_current_span("app"):
            await producer.send_and_wait(topic, b"plain")
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        async with timeout(30):
            record = await consumer.getone()
    assert list(record.headers) == []
    assert [span.name for span in exporter.get_finished_spans()] == ["app"]


async def test_a_callers_creation_context_is_kept(
    kafka: KafkaCluster,
    new_topic: NewTopic,
    provider: TracerProvider,
    exporter: InMemorySpanExporter,
) -> None:
    """Headers that already carry a traceparent are not modified: the send span is a
    CLIENT span linking to that context (the conventions' custom creation context)."""
    topic = new_topic()
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("created") as created:
        headers = context_headers()
    assert [name for name, _ in headers] == ["traceparent"]
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        instrument(producer, tracer_provider=provider)
        await producer.send_and_wait(topic, b"v", headers=headers)
        batch = producer.create_batch()
        batch.append(key=None, value=b"b1", timestamp=None, headers=headers)
        batch.append(key=None, value=b"b2", timestamp=None)
        await (await producer.send_batch(batch, topic, partition=0))
    single, sent_batch = await _until_spans(exporter, f"send {topic}", 2)
    assert single.kind is SpanKind.CLIENT
    assert [link.context.span_id for link in single.links] == [created.get_span_context().span_id]
    assert sent_batch.kind is SpanKind.CLIENT
    assert dict(sent_batch.attributes or {})["messaging.batch.message_count"] == 2
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        async with timeout(30):
            record = await consumer.getone()
    assert list(record.headers) == headers
