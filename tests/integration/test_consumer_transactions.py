"""read_committed against a real transactional producer (confluent-kafka)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def txn_producer(kafka: KafkaCluster) -> Any:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "transactional.id": f"txn-{uuid.uuid4().hex}",
            "linger.ms": 1,
        }
    )
    producer.init_transactions(30)
    return producer


def plain_producer(kafka: KafkaCluster) -> Any:
    import confluent_kafka

    return confluent_kafka.Producer({"bootstrap.servers": kafka.bootstrap_servers})


async def drain(c: AIOKafkaConsumer[Any, Any], until_offset: int, tp: TopicPartition) -> list[Any]:
    out = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for recs in (await c.getmany(timeout_ms=300)).values():
            out.extend(recs)
        if await c.position(tp) >= until_offset:
            break
    return out


async def test_read_committed_skips_aborted_and_control_records(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    txn = txn_producer(kafka)
    plain = plain_producer(kafka)

    txn.begin_transaction()
    for i in range(5):
        txn.produce(topic, value=b"committed-%d" % i, partition=0)
    txn.commit_transaction(30)

    txn.begin_transaction()
    for i in range(5):
        txn.produce(topic, value=b"aborted-%d" % i, partition=0)
    txn.flush(30)
    # A non-transactional record between the aborted ones and their marker.
    plain.produce(topic, value=b"plain", partition=0)
    plain.flush(30)
    txn.abort_transaction(30)

    txn.begin_transaction()
    txn.produce(topic, value=b"after", partition=0)
    txn.commit_transaction(30)

    config = {
        "bootstrap_servers": kafka.bootstrap_servers,
        "auto_offset_reset": "earliest",
        "fetch_max_wait_ms": 100,
    }
    async with AIOKafkaConsumer(isolation_level="read_committed", **config) as c:
        c.assign([tp])
        end = (await c.end_offsets([tp]))[tp]
        got = await drain(c, end, tp)
        values = [r.value for r in got]
        assert values == [*(b"committed-%d" % i for i in range(5)), b"plain", b"after"]
        assert await c.position(tp) == end  # moved past the trailing COMMIT marker
        assert c.last_stable_offset(tp) == end
        assert c.highwater(tp) == end

    async with AIOKafkaConsumer(isolation_level="read_uncommitted", **config) as c:
        c.assign([tp])
        got = await drain(c, end, tp)
        values = [r.value for r in got]
        # Aborted records are visible here, control records (3 markers) never.
        assert values.count(b"plain") == 1
        assert sum(v.startswith(b"aborted") for v in values) == 5
        assert len(values) == 12 and end == 15
        offsets = [r.offset for r in got]
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)


async def test_read_committed_stops_at_open_transaction(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    plain = plain_producer(kafka)
    plain.produce(topic, value=b"before", partition=0)
    plain.flush(30)
    txn = txn_producer(kafka)
    txn.begin_transaction()
    txn.produce(topic, value=b"open", partition=0)
    txn.flush(30)
    plain.produce(topic, value=b"behind-open", partition=0)
    plain.flush(30)
    config = {
        "bootstrap_servers": kafka.bootstrap_servers,
        "auto_offset_reset": "earliest",
        "fetch_max_wait_ms": 100,
        "isolation_level": "read_committed",
    }
    async with AIOKafkaConsumer(**config) as c:
        c.assign([tp])
        first = await c.getone()
        assert first.value == b"before"
        assert await c.getmany(timeout_ms=1000) == {}  # held back at the LSO
        assert c.last_stable_offset(tp) == 1
        assert c.highwater(tp) == 3
        assert await c.end_offsets([tp]) == {tp: 1}  # read_committed: the LSO
        txn.commit_transaction(30)
        rest = [r.value for r in await drain(c, 4, tp)]
        assert rest == [b"open", b"behind-open"]
