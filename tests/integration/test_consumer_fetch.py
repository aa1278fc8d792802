"""AIOKafkaConsumer against a real broker: codecs, iteration styles, seeks, pause, offsets.

Test data comes from confluent-kafka and kafka-python (both write record batch v2).
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.errors import (
    ConsumerStoppedError,
    IllegalStateError,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
)
from aiokafka.protocol import messages as m
from aiokafka.structs import ConsumerRecord, TopicPartition
from tests.support.inject_relay import InjectingRelay
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def produce(
    bootstrap: str,
    topic: str,
    values: Iterable[bytes],
    *,
    partition: int = 0,
    compression: str = "none",
    key: bytes | None = None,
    headers: list[tuple[str, bytes]] | None = None,
    timestamps: Iterable[int] | None = None,
) -> None:
    """Write records with confluent-kafka and wait until all are acknowledged."""
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "compression.type": compression, "linger.ms": 5}
    )
    stamps = iter(timestamps) if timestamps is not None else None
    for v in values:
        kwargs: dict[str, Any] = {}
        if stamps is not None:
            kwargs["timestamp"] = next(stamps)
        producer.produce(
            topic, value=v, key=key, partition=partition, headers=headers or None, **kwargs
        )
    assert producer.flush(30) == 0


def consumer(kafka: KafkaCluster, **config: Any) -> AIOKafkaConsumer[Any, Any]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("fetch_max_wait_ms", 100)
    return AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers, **config)


async def read(c: AIOKafkaConsumer[Any, Any], n: int, timeout: float = 20) -> list[Any]:
    out: list[ConsumerRecord[Any, Any]] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in (await c.getmany(timeout_ms=500)).values():
            out.extend(recs)
    return out


def other_tasks() -> set[asyncio.Task[Any]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
async def test_every_codec_getmany_getone_async_for(
    kafka: KafkaCluster, new_topic: NewTopic, codec: str
) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(
        kafka.bootstrap_servers,
        topic,
        [b"value-%d" % i for i in range(300)],
        compression=codec,
        key=b"key",
        headers=[("h", b"1")],
    )
    async with consumer(kafka) as c:
        c.assign([tp])
        first = await c.getone()
        assert (first.offset, first.key, first.value) == (0, b"key", b"value-0")
        assert list(first.headers) == [("h", b"1")]
        assert first.serialized_value_size == len(b"value-0") and first.checksum is None
        batch = await c.getmany(timeout_ms=5000, max_records=99)
        assert [r.offset for r in batch[tp]] == list(range(1, 100))
        rest = []
        async for rec in c:
            rest.append(rec.value)
            if len(rest) == 200:
                break
        assert rest == [b"value-%d" % i for i in range(100, 300)]
        assert await c.position(tp) == 300
        assert c.highwater(tp) == 300


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
async def test_kafka_python_produced(kafka: KafkaCluster, new_topic: NewTopic, codec: str) -> None:
    """Records written by kafka-python's KafkaProducer, every codec, read intact with
    each read style: getone(), getmany() and ``async for``."""
    import kafka as kafka_python

    topic = new_topic()
    tp = TopicPartition(topic, 0)
    base_ts = 1_600_000_000_000
    sent = []
    for i in range(90):
        key = None if i % 10 == 0 else b"key-%d" % i
        # A null value (tombstone) needs a key with kafka-python.
        value = None if i % 17 == 5 else f"kp-{i}-".encode() + bytes(range(i % 256))
        headers = [] if i % 3 == 0 else [("n", b"%d" % i), ("empty", b""), ("u\u00e9", b"\x00\xff")]
        sent.append((key, value, headers, base_ts + i * 1000 - (i % 4) * 7))
    producer = kafka_python.KafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers,
        compression_type=None if codec == "none" else codec,
        linger_ms=20,
    )
    try:
        for key, value, headers, ts in sent:
            producer.send(
                topic, value=value, key=key, headers=headers, partition=0, timestamp_ms=ts
            )
        producer.flush(30)
    finally:
        producer.close(10)

    def check(rec: ConsumerRecord[Any, Any]) -> None:
        key, value, headers, ts = sent[rec.offset]
        assert (rec.key, rec.value, rec.timestamp, rec.timestamp_type) == (key, value, ts, 0)
        assert list(rec.headers) == headers
        assert rec.serialized_value_size == (-1 if value is None else len(value))

    async with consumer(kafka) as c:
        c.assign([tp])
        for expected in range(30):
            rec = await asyncio.wait_for(c.getone(), 20)
            assert rec.offset == expected
            check(rec)
        batch: list[ConsumerRecord[Any, Any]] = []
        deadline = time.monotonic() + 20
        while len(batch) < 30 and time.monotonic() < deadline:
            got = await c.getmany(tp, timeout_ms=500, max_records=30 - len(batch))
            batch.extend(got.get(tp, []))
        assert [r.offset for r in batch] == list(range(30, 60))
        for rec in batch:
            check(rec)
        rest: list[ConsumerRecord[Any, Any]] = []

        async def iterate() -> None:
            async for rec in c:
                rest.append(rec)
                if len(rest) == 30:
                    break

        await asyncio.wait_for(iterate(), 20)
        assert [r.offset for r in rest] == list(range(60, 90))
        for rec in rest:
            check(rec)
        assert c.highwater(tp) == 90


async def test_multiple_partitions_and_max_records(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=3)
    for p in range(3):
        produce(
            kafka.bootstrap_servers, topic, [b"%d-%d" % (p, i) for i in range(100)], partition=p
        )
    async with consumer(kafka, max_poll_records=40) as c:
        tps = [TopicPartition(topic, p) for p in range(3)]
        c.assign(tps)
        seen: dict[TopicPartition, list[int]] = {tp: [] for tp in tps}
        deadline = time.monotonic() + 20
        while sum(map(len, seen.values())) < 300 and time.monotonic() < deadline:
            got = await c.getmany(timeout_ms=500)
            assert sum(map(len, got.values())) <= 40
            for tp, recs in got.items():
                seen[tp].extend(r.offset for r in recs)
        assert all(v == list(range(100)) for v in seen.values())
        only = await c.getmany(tps[1], timeout_ms=100)
        assert set(only) <= {tps[1]}
        with pytest.raises(IllegalStateError):
            await c.getmany(TopicPartition(topic, 9))


async def test_seek_family_and_offset_lookups(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    base = int(time.time() * 1000) - 100_000
    produce(
        kafka.bootstrap_servers,
        topic,
        [b"%d" % i for i in range(20)],
        timestamps=[base + i * 1000 for i in range(20)],
    )
    async with consumer(kafka, auto_offset_reset="latest") as c:
        c.assign([tp])
        assert await c.beginning_offsets([tp]) == {tp: 0}
        assert await c.end_offsets([tp]) == {tp: 20}
        found = await c.offsets_for_times({tp: base + 5500})
        assert found[tp] is not None
        assert (found[tp].offset, found[tp].timestamp) == (6, base + 6000)  # type: ignore[union-attr]
        assert (await c.offsets_for_times({tp: base + 10**9}))[tp] is None
        with pytest.raises(ValueError, match="timestamp"):
            await c.offsets_for_times({tp: -5})
        assert await c.position(tp) == 20  # latest: no committed offset, no group
        c.seek(tp, 15)
        assert [r.offset for r in await read(c, 5)] == [15, 16, 17, 18, 19]
        await c.seek_to_beginning(tp)
        assert await c.position(tp) == 0
        assert (await c.getone()).offset == 0
        await c.seek_to_end()
        assert await c.position(tp) == 20
        assert await c.getmany(timeout_ms=300) == {}
        c.seek(tp, 3)
        assert (await c.getone()).value == b"3"
        with pytest.raises(ValueError):
            c.seek(tp, -1)
        with pytest.raises(IllegalStateError):
            c.seek(TopicPartition(topic, 7), 0)
        assert c.partitions_for_topic(topic) == {0}
        assert topic in await c.topics()


async def test_seek_discards_prefetched_data(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(kafka.bootstrap_servers, topic, [b"%d" % i for i in range(1000)])
    async with consumer(kafka, max_poll_records=10) as c:
        c.assign([tp])
        assert [r.offset for r in (await c.getmany(timeout_ms=5000))[tp]] == list(range(10))
        c.seek(tp, 500)  # the buffer holds 10..; it must not leak out
        recs = await read(c, 10)
        assert recs[0].offset == 500


async def test_pause_resume(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    produce(kafka.bootstrap_servers, topic, [b"a"] * 10, partition=0)
    produce(kafka.bootstrap_servers, topic, [b"b"] * 10, partition=1)
    async with consumer(kafka) as c:
        c.assign([a, b])
        c.pause(a)
        assert c.paused() == {a}
        got: dict[TopicPartition, int] = {}
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for tp, recs in (await c.getmany(timeout_ms=200)).items():
                got[tp] = got.get(tp, 0) + len(recs)
        assert got == {b: 10}
        c.resume(a)
        assert c.paused() == frozenset()
        recs = await read(c, 10)
        assert {(r.partition, r.value) for r in recs} == {(0, b"a")} and len(recs) == 10


async def test_auto_offset_reset_policies(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(kafka.bootstrap_servers, topic, [b"x"] * 5)
    async with consumer(kafka, auto_offset_reset="earliest") as c:
        c.assign([tp])
        assert await c.position(tp) == 0
    async with consumer(kafka, auto_offset_reset="latest") as c:
        c.assign([tp])
        assert await c.position(tp) == 5
        produce(kafka.bootstrap_servers, topic, [b"new"])
        assert (await c.getone()).value == b"new"
    async with consumer(kafka, auto_offset_reset="none") as c:
        c.assign([tp])
        with pytest.raises(NoOffsetForPartitionError):
            await c.getmany(timeout_ms=3000)
        with pytest.raises(NoOffsetForPartitionError):
            await c.position(tp)
        c.seek(tp, 100)  # past the end: the broker answers OFFSET_OUT_OF_RANGE
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(30):
                await c.getmany(timeout_ms=200)
        c.seek(tp, 2)
        assert (await c.getone()).offset == 2
    async with consumer(kafka, auto_offset_reset="earliest") as c:
        c.assign([tp])
        c.seek(tp, 100)  # out of range -> reset to earliest
        assert (await c.getone()).offset == 0


async def test_commit_and_committed(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    produce(kafka.bootstrap_servers, topic, [b"v"] * 10, partition=0)
    group = f"g-{topic}"
    async with consumer(kafka, group_id=group, enable_auto_commit=False) as c:
        c.assign([a, b])
        assert await c.committed(a) is None
        await read(c, 4)  # all 10 of a may be read; commit what was returned
        await c.commit()
        assert await c.committed(a) == await c.position(a)
        await c.commit({a: 3, b: (0, "meta")})
        assert (await c.committed(a), await c.committed(b)) == (3, 0)
        with pytest.raises(ValueError):
            await c.commit({a: "x"})
        with pytest.raises(IllegalStateError):
            await c.commit({TopicPartition(topic, 5): 1})
    # A new consumer of the group starts at the committed offset.
    async with consumer(kafka, group_id=group) as c:
        c.assign([a])
        assert (await c.getone()).offset == 3
        c.seek(a, 8)
        assert await c.seek_to_committed(a) == {a: 3}
        assert await c.position(a) == 3
        await c.getmany(timeout_ms=1000)
    # enable_auto_commit commits the position on stop().
    async with consumer(kafka, group_id=group, enable_auto_commit=False) as c:
        assert await c.committed(a) == 10


async def test_stop_leaves_no_tasks_and_ends_iteration(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    before = other_tasks()
    c = consumer(kafka)
    await c.start()
    c.assign([TopicPartition(topic, 0)])
    waiter = asyncio.create_task(c.getone())
    collected: list[Any] = []

    async def iterate() -> None:
        async for rec in c:
            collected.append(rec)

    iterating = asyncio.create_task(iterate())
    await asyncio.sleep(0.5)
    await c.stop()
    with pytest.raises(ConsumerStoppedError):
        await waiter
    await asyncio.wait_for(iterating, 5)  # StopAsyncIteration ends the loop cleanly
    assert collected == []
    assert other_tasks() - before == set()
    await c.stop()  # idempotent
    with pytest.raises(ConsumerStoppedError):
        await c.getmany()


async def test_async_for_in_c_sees_seeks_pauses_and_subclasses(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """The started consumer's ``__aiter__`` is the C iterator (when built): it hands
    out records in order, follows a seek and a pause made inside the loop, and gives
    way to a subclass's own ``__anext__``."""
    from aiokafka.consumer.ready import fast_anext

    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(kafka.bootstrap_servers, topic, [b"%d" % i for i in range(60)])
    async with consumer(kafka, group_id=f"g-{topic}") as c:
        c.subscribe([topic])
        iterator = c.__aiter__()
        assert (iterator is c) == (fast_anext is None)
        seen: list[int] = []
        async for rec in c:
            seen.append(rec.offset)
            if rec.offset == 19:
                c.seek(tp, 5)  # the rest of the buffered batch must not come out
            if len(seen) == 30:
                c.pause(tp)
                break
        assert seen == list(range(20)) + list(range(5, 15))
        assert await c.position(tp) == 15
        assert await c.getmany(timeout_ms=300) == {}
        c.resume(tp)
        rest = []
        async for rec in c:
            rest.append(rec.offset)
            if rec.offset == 59:
                break
        assert rest == list(range(15, 60))

    class Counting(AIOKafkaConsumer[Any, Any]):
        calls = 0

        def __anext__(self) -> Any:
            Counting.calls += 1
            return super().__anext__()

    sub = Counting(bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest")
    async with sub:
        sub.assign([tp])
        assert sub.__aiter__() is sub
        async for rec in sub:
            if rec.offset == 9:
                break
        assert Counting.calls == 10


async def test_subscribe_without_group_assigns_all_partitions(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    produce(kafka.bootstrap_servers, topic, [b"s"] * 3, partition=1)
    async with consumer(kafka) as c:
        c.subscribe([topic])
        assert (await c.getone()).partition == 1
        assert c.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
        assert c.subscription() == {topic}
        with pytest.raises(IllegalStateError):
            c.assign([TopicPartition(topic, 0)])


def _first_batch_mutation(kind: str) -> Callable[[bytes, int], bytes]:
    """A Fetch response rewrite whose partitions' first record batch is incomplete:
    ``"truncate"`` cuts it short, ``"inflate"`` makes its length field claim more bytes
    than the response holds."""

    def rewrite(body: bytes, version: int) -> bytes:
        response = m.FetchResponse.decode(body, version)
        for topic in response.responses:
            for p in topic.partitions:
                data = bytes(p.records or b"")
                if len(data) < 61:  # no whole batch header (v2: 61 bytes)
                    continue
                (length,) = struct.unpack_from(">i", data, 8)
                if kind == "truncate":
                    p.records = data[: 12 + length - 7]
                else:
                    p.records = data[:8] + struct.pack(">i", len(data) + 1000) + data[12:]
        return response.encode(version)

    return rewrite


@pytest.mark.parametrize("kind", ["truncate", "inflate"])
async def test_incomplete_first_batch_raises_record_too_large(
    kafka: KafkaCluster, new_topic: NewTopic, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A response whose first batch at the position is incomplete (cut short, or with an
    inflated length) makes getmany()/getone() raise RecordTooLargeError naming topic,
    partition and offset within seconds, logged once at WARNING, without re-fetching in
    a loop; a seek once the broker's answers are healthy again resumes consumption."""
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(kafka.bootstrap_servers, topic, [b"r-%d" % i for i in range(20)])
    caplog.set_level(logging.WARNING, "aiokafka.consumer")
    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.rewrite_responses(m.FetchRequest.API_KEY, _first_batch_mutation(kind))
        async with AIOKafkaConsumer(
            bootstrap_servers=relay.bootstrap_servers,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=100,
        ) as c:
            c.assign([tp])
            start = time.monotonic()
            with pytest.raises(RecordTooLargeError) as info:
                while time.monotonic() - start < 30:
                    assert await c.getmany(timeout_ms=500) == {}
            assert time.monotonic() - start < 10
            assert f"topic {topic!r} partition 0 offset 0" in str(info.value)
            fetches = relay.forwarded[m.FetchRequest.API_KEY]
            assert fetches <= 6  # the first fetch, one more try (maybe a long poll in flight)
            with pytest.raises(RecordTooLargeError):  # again, until the user seeks
                await c.getone()
            await asyncio.sleep(1)
            assert relay.forwarded[m.FetchRequest.API_KEY] <= fetches + 1  # no fetch loop
            warnings = [
                r
                for r in caplog.records
                if r.levelno >= logging.WARNING and topic in r.getMessage()
            ]
            assert len(warnings) == 1, warnings
            relay.rewrite_responses(m.FetchRequest.API_KEY, None)
            c.seek(tp, 0)
            got = await read(c, 20)
            assert [r.value for r in got] == [b"r-%d" % i for i in range(20)]


async def test_records_larger_than_fetch_limits_are_delivered(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """KIP-74: a record larger than max_partition_fetch_bytes (and fetch_max_bytes)
    still comes back whole from a real broker, on two partitions at once, between small
    records."""
    topic = new_topic(partitions=2)
    big = [bytes([i]) * 300_000 for i in range(3)]
    for p in range(2):
        values = [b"small-0", big[0], b"small-2", big[1], big[2], b"small-5"]
        produce(kafka.bootstrap_servers, topic, values, partition=p)
    async with consumer(
        kafka, max_partition_fetch_bytes=64 * 1024, fetch_max_bytes=100 * 1024
    ) as c:
        tps = [TopicPartition(topic, p) for p in range(2)]
        c.assign(tps)
        got = await read(c, 12, timeout=30)
        for tp in tps:
            values = [r.value for r in got if r.partition == tp.partition]
            assert values == [b"small-0", big[0], b"small-2", big[1], big[2], b"small-5"]


async def test_assigned_partition_added_later_is_fetched_once_it_exists(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """assign() of a partition the topic does not have yet (its topic is known): the
    fetcher waits on metadata refreshes without spinning, and reads the partition once
    it is created. The loop used to wake itself on every turn while a refresh was in
    flight and never yielded: the refresh never ran and getmany() never returned."""
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions

    topic = new_topic(partitions=1)
    produce(kafka.bootstrap_servers, topic, [b"p0"], partition=0)
    later = TopicPartition(topic, 1)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        auto_offset_reset="earliest",
        metadata_max_age_ms=500,
        retry_backoff_ms=50,
    )
    async with consumer:
        consumer.assign([TopicPartition(topic, 0), later])
        got = await consumer.getmany(timeout_ms=5000)
        assert [r.value for r in got[TopicPartition(topic, 0)]] == [b"p0"]
        assert await consumer.getmany(timeout_ms=300) == {}  # returns: the loop yields
        async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
            await admin.create_partitions({topic: NewPartitions(total_count=2)})
        produce(kafka.bootstrap_servers, topic, [b"p1"], partition=1)
        deadline = time.monotonic() + 30
        values: list[bytes | None] = []
        while not values and time.monotonic() < deadline:
            batch = await consumer.getmany(later, timeout_ms=1000)
            values = [r.value for r in batch.get(later, [])]
        assert values == [b"p1"]
