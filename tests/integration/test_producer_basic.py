"""AIOKafkaProducer against a real broker: codecs, headers, timestamps, acks,
send_batch, flush, partitions_for, murmur2 parity and interop with other clients."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.errors import IllegalStateError
from aiokafka.producer import AIOKafkaProducer, murmur2_partition
from aiokafka.record import DefaultRecordBatch
from aiokafka.structs import RecordMetadata
from tests.support.request_log import RequestLog
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def read_confluent(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    """Read ``expected`` records from the start of every partition with confluent-kafka."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{time.time_ns()}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.assign([CTopicPartition(topic, p, 0) for p in range(partitions)])
        out: list[Any] = []
        deadline = time.monotonic() + 30
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                out.append(msg)
        # Anything beyond `expected` would be a duplicate: look a little longer.
        out.extend(m for m in consumer.consume(num_messages=1000, timeout=0.5) if not m.error())
        return out
    finally:
        consumer.close()


def read_kafka_python(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    """Same with kafka-python."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    try:
        tps = [KTopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        out: list[Any] = []
        deadline = time.monotonic() + 30
        while len(out) < expected and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                out.extend(records)
        return out
    finally:
        consumer.close()


@pytest.fixture
async def producer(kafka: KafkaCluster) -> Any:
    p = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, linger_ms=2)
    await p.start()
    yield p
    await p.stop()


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
async def test_every_codec_round_trips(
    kafka: KafkaCluster, new_topic: NewTopic, codec: Any
) -> None:
    topic = new_topic()
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, compression_type=codec, linger_ms=5
    ) as p:
        values = [f"value-{i}-".encode() * 20 for i in range(300)]
        futures = [await p.send(topic, v, key=b"k%d" % i) for i, v in enumerate(values)]
        results = await asyncio.gather(*futures)
    assert [r.offset for r in results] == list(range(300))
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 300)
    assert [m.value() for m in msgs] == values
    assert [m.key() for m in msgs] == [b"k%d" % i for i in range(300)]


async def test_headers_timestamps_keys_interop(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    topic = new_topic()
    sent = []
    for i in range(20):
        headers = [("trace", b"t%d" % i), ("empty", b""), ("none", None)]
        ts = 1_700_000_000_000 + i
        md = await producer.send_and_wait(
            topic, b"v%d" % i, key=b"k%d" % i, timestamp_ms=ts, headers=headers
        )
        assert isinstance(md, RecordMetadata)
        assert (md.topic, md.partition, md.offset, md.timestamp, md.timestamp_type) == (
            topic,
            0,
            i,
            ts,
            0,
        )
        sent.append((b"k%d" % i, b"v%d" % i, ts, headers))
    # No key, no value: a tombstone without key is legal too.
    await producer.send_and_wait(topic, None, key=b"tomb")

    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 21)
    assert len(msgs) == 21
    for msg, (key, value, ts, headers) in zip(msgs, sent, strict=False):
        assert (msg.key(), msg.value(), msg.timestamp()[1]) == (key, value, ts)
        assert msg.headers() == headers
    assert (msgs[20].key(), msgs[20].value()) == (b"tomb", None)

    records = await asyncio.to_thread(read_kafka_python, kafka.bootstrap_servers, topic, 1, 21)
    assert len(records) == 21
    for rec, (key, value, ts, headers) in zip(records, sent, strict=False):
        assert (rec.key, rec.value, rec.timestamp) == (key, value, ts)
        assert [(k, v) for k, v in rec.headers] == headers


@pytest.mark.parametrize("acks", [0, 1, "all"])
async def test_acks(kafka: KafkaCluster, new_topic: NewTopic, acks: Any) -> None:
    topic = new_topic()
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, acks=acks) as p:
        assert p.config.enable_idempotence is (acks == "all")
        results = await asyncio.gather(*[await p.send(topic, b"x%d" % i) for i in range(50)])
    if acks == 0:
        assert results == [None] * 50  # no answer: None, as in aiokafka
    else:
        assert [r.offset for r in results] == list(range(50))
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 50)
    assert [m.value() for m in msgs] == [b"x%d" % i for i in range(50)]


async def test_serializers(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers,
        key_serializer=lambda k: k.encode() if k is not None else None,
        value_serializer=lambda v: repr(v).encode(),
    ) as p:
        await p.send_and_wait(topic, {"a": 1}, key="key")
    (msg,) = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 1)
    assert (msg.key(), msg.value()) == (b"key", b"{'a': 1}")


async def test_send_batch(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, max_batch_size=2000, compression_type="lz4"
    ) as p:
        batch = p.create_batch()
        appended = 0
        while batch.append(key=b"k", value=b"v" * 50, timestamp=None) is not None:
            appended += 1
        assert 10 < appended < 40
        assert batch.record_count() == appended
        fut = await p.send_batch(batch, topic, partition=1)
        md = await fut
        assert (md.partition, md.offset) == (1, 0)
        # A second batch gets the next offsets.
        batch2 = p.create_batch()
        batch2.append(key=None, value=b"z", timestamp=1234, headers=[("h", b"1")])
        md2 = await (await p.send_batch(batch2, topic, partition=1))
        assert md2.offset == appended
        with pytest.raises(ValueError, match="empty"):
            await p.send_batch(p.create_batch(), topic, partition=1)
        full = p.create_batch()
        full.append(value=b"x")
        with pytest.raises(ValueError, match="out of range"):
            await p.send_batch(full, topic, partition=5)
        with pytest.raises(IllegalStateError):
            batch.append(value=b"late")  # already sent
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 2, appended + 1)
    assert len(msgs) == appended + 1
    assert msgs[-1].headers() == [("h", b"1")] and msgs[-1].timestamp()[1] == 1234


async def test_flush_and_partitions_for(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=3)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, linger_ms=60000, delivery_timeout_ms=120000
    ) as p:
        assert await p.partitions_for(topic) == {0, 1, 2}
        futures = [await p.send(topic, b"x", partition=i % 3) for i in range(30)]
        # linger_ms holds batches only while a request to their broker is in flight:
        # an idle broker gets them at once, not after 60 s.
        await asyncio.wait_for(asyncio.gather(*futures), 10)
        futures += [await p.send(topic, b"y", partition=i % 3) for i in range(30)]
        t0 = time.monotonic()
        await p.flush()
        assert time.monotonic() - t0 < 5
        assert all(f.done() and f.exception() is None for f in futures)
        assert p.buffered_bytes == 0


async def test_keyed_partitioning_matches_librdkafka_murmur2_random(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    from confluent_kafka import Producer

    partitions = 7
    ours, theirs = new_topic(partitions=partitions), new_topic(partitions=partitions)
    keys = [f"key-{i}-{'x' * (i % 13)}".encode() for i in range(400)]
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, linger_ms=5) as p:
        results = await asyncio.gather(*[await p.send(ours, b"v", key=k) for k in keys])
    ours_map = {k: r.partition for k, r in zip(keys, results, strict=True)}
    assert ours_map == {k: murmur2_partition(k, partitions) for k in keys}

    def produce_confluent() -> None:
        prod = Producer(
            {"bootstrap.servers": kafka.bootstrap_servers, "partitioner": "murmur2_random"}
        )
        for k in keys:
            prod.produce(theirs, b"v", key=k)
        assert prod.flush(30) == 0

    await asyncio.to_thread(produce_confluent)
    msgs = await asyncio.to_thread(
        read_confluent, kafka.bootstrap_servers, theirs, partitions, len(keys)
    )
    theirs_map = {m.key(): m.partition() for m in msgs}
    assert len(theirs_map) == len(keys)
    assert theirs_map == ours_map
    assert len(set(ours_map.values())) == partitions


async def test_keyless_records_are_sticky(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=4)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, linger_ms=50, max_batch_size=1000
    ) as p:
        results = await asyncio.gather(*[await p.send(topic, b"v" * 80) for _ in range(200)])
    parts = [r.partition for r in results]
    switches = sum(1 for a, b in itertools.pairwise(parts) if a != b)
    # ~10 records fill a 1000-byte batch: the partition changes per batch, not per record.
    assert 5 <= switches <= 40
    assert len(set(parts)) > 1


async def test_sticky_switch_leaves_no_one_record_batch(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """KIP-480: the record that finds its sticky partition's batch full goes to the
    next sticky partition, not into a new batch of the old one (which would then be
    sent alone after linger_ms)."""
    topic = new_topic(partitions=4)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, linger_ms=200, max_batch_size=1000
    ) as p:
        log = RequestLog(p._client)
        futures = [await p.send(topic, b"v" * 80) for _ in range(300)]
        await p.flush()
    # (partition, base sequence) -> records: a retried batch is counted once.
    sizes: dict[tuple[int, int], int] = {}
    for request in log.of("ProduceRequest"):
        for topic_data in request.topic_data:
            for part in topic_data.partition_data:
                batch = DefaultRecordBatch(bytes(part.records))
                sizes[(part.index, batch.base_sequence)] = batch.last_offset_delta + 1
    assert all(f.exception() is None for f in futures)
    assert sum(sizes.values()) == 300, sizes
    # ~10 records fill a batch; only the batch open at flush() may be short.
    assert sum(1 for n in sizes.values() if n < 8) <= 1, sizes


async def test_custom_partitioner(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=3)
    calls: list[tuple[Any, list[int], list[int]]] = []

    def last(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        calls.append((key, all_partitions, available))
        return all_partitions[-1]

    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, partitioner=last) as p:
        md = await p.send_and_wait(topic, b"v", key=b"k")
        md2 = await p.send_and_wait(topic, b"v")
    assert md.partition == md2.partition == 2
    assert calls[0] == (b"k", [0, 1, 2], [0, 1, 2])
    assert calls[1][0] is None
