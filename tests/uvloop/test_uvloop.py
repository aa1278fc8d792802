"""The clients on uvloop's event loop, against the real broker.

Web services commonly run on uvloop (uvicorn picks it when it is installed). Its
transports, handles and TLS layer are its own classes, not asyncio's: an
``isinstance(transport, asyncio.Transport)`` check once made every connection fail on
it. Each test here runs on uvloop (``conftest.py`` here) and checks that it does;
``make test-uvloop`` runs the whole suite on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
import uvloop

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka._timeout import timeout
from aiokafka.helpers import create_ssl_context
from aiokafka.structs import RecordMetadata, TopicPartition
from tests.support.wait import drain
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(180)

# Larger than the connection's 64 KiB read buffer: the Fetch response that carries it
# is read into a buffer of its own (TcpStream's other path).
BIG = 200_000


def _on_uvloop() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)


async def test_every_way_of_sending_and_receiving(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    _on_uvloop()
    topic = new_topic(partitions=1)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        first = await producer.send_and_wait(topic, b"v0", key=b"k")
        assert isinstance(first, RecordMetadata)
        assert (first.topic, first.partition, first.offset) == (topic, 0, 0)
        futures = [await producer.send(topic, b"v%d" % i) for i in range(1, 101)]
        gathered = await asyncio.gather(*futures)
        assert [m.offset for m in gathered] == list(range(1, 101))
        called: list[int] = []
        last = await producer.send(topic, b"v101")
        last.add_done_callback(lambda fut: called.append(fut.result().offset))
        await producer.flush()
        await asyncio.sleep(0)  # done-callbacks run on a later loop turn
        assert called == [101]
        batch = producer.create_batch()
        for i in range(102, 112):
            assert batch.append(key=None, value=b"v%d" % i, timestamp=None) is not None
        assert (await (await producer.send_batch(batch, topic, partition=0))).offset == 102
        assert (await producer.send_and_wait(topic, b"x" * BIG)).offset == 112
        # Many waiters at once, as a web service's request handlers are.
        concurrent = await asyncio.gather(
            *(producer.send_and_wait(topic, b"c%d" % i) for i in range(50))
        )
        assert sorted(m.offset for m in concurrent) == list(range(113, 163))

    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    async with consumer:
        consumer.assign([tp])
        records = await drain(consumer, 163, 30)
        assert [r.offset for r in records] == list(range(163))
        assert records[0].key == b"k"
        assert [r.value for r in records[:112]] == [b"v%d" % i for i in range(112)]
        assert records[112].value == b"x" * BIG
        consumer.seek(tp, 100)
        seen = []
        async with timeout(30):  # asyncio.timeout is 3.11+
            async for record in consumer:
                seen.append(record.value)
                if record.offset == 112:
                    break
        assert seen[0] == b"v100" and seen[-1] == b"x" * BIG and len(seen) == 13


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
async def test_tls(kafka: KafkaCluster, new_topic: NewTopic, protocol: str) -> None:
    """uvloop's own TLS layer under our buffered protocol, both directions, with a
    response larger than the read buffer."""
    _on_uvloop()
    topic = new_topic(partitions=1)
    options: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(protocol),
        "security_protocol": protocol,
        "ssl_context": create_ssl_context(cafile=kafka.ca_file),
    }
    if protocol == "SASL_SSL":
        options["sasl_mechanism"] = "SCRAM-SHA-256"
        user, password = kafka.users["SCRAM-SHA-256"]
        options["sasl_plain_username"], options["sasl_plain_password"] = user, password
    async with AIOKafkaProducer(**options) as producer:
        for i in range(20):
            await producer.send(topic, b"t%d" % i)
        await producer.send_and_wait(topic, b"y" * BIG)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        auto_offset_reset="earliest", enable_auto_commit=False, **options
    )
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        values = [r.value for r in await drain(consumer, 21, 30)]
    assert values == [b"t%d" % i for i in range(20)] + [b"y" * BIG]


async def test_group_and_transaction(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    """A consume-process-produce step: a consumer group, a transaction with the
    group's offsets, and a read_committed reader."""
    _on_uvloop()
    src, dst = new_topic(partitions=2), new_topic(partitions=1)
    bs = kafka.bootstrap_servers
    async with AIOKafkaProducer(bootstrap_servers=bs) as producer:
        for i in range(10):
            await producer.send(src, b"in%d" % i, partition=i % 2)
    group = f"uvloop-{dst}"
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        src,
        bootstrap_servers=bs,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    txn = AIOKafkaProducer(bootstrap_servers=bs, transactional_id=f"uvloop-{dst}")
    async with consumer, txn:
        records = await drain(consumer, 10, 30)
        assert len(records) == 10
        async with txn.transaction():
            for record in records:
                await txn.send(dst, record.value.upper())
            offsets = {
                TopicPartition(src, p): max(r.offset for r in records if r.partition == p) + 1
                for p in (0, 1)
            }
            await txn.send_offsets_to_transaction(offsets, group)
        assert await consumer.committed(TopicPartition(src, 0)) == 5
        assert await consumer.committed(TopicPartition(src, 1)) == 5
    reader: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bs,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    async with reader:
        reader.assign([TopicPartition(dst, 0)])
        out = sorted(r.value for r in await drain(reader, 10, 30))
    assert out == sorted(b"IN%d" % i for i in range(10))
