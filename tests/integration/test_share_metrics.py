"""``AIOKafkaShareConsumer.metrics()`` against the rig's Kafka: the counters follow what
the consumer fetched, handed out and acknowledged, and the adapters export them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest

from aiokafka import AIOKafkaProducer
from aiokafka._timeout import timeout
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.errors import InvalidRecordStateError
from aiokafka.share import AIOKafkaShareConsumer, ShareConsumerRecord


async def _group_configs(bootstrap: str, group: str, **configs: str) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp(name.replace("_", "."), value) for name, value in configs.items()
                ]
            }
        )


async def _produce(bootstrap: str, topic: str, n: int, partitions: int = 1) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(n):
            await producer.send(topic, b"v%d" % i, partition=i % partitions)
        await producer.flush()


async def _drain(c: AIOKafkaShareConsumer, want: int) -> list[ShareConsumerRecord[bytes, bytes]]:
    got: list[ShareConsumerRecord[bytes, bytes]] = []
    async with timeout(40):
        while len(got) < want:
            for recs in (await c.getmany(timeout_ms=500)).values():
                got.extend(recs)
    return got


async def test_counters_follow_consumed_and_acknowledged_records(
    kafka, new_topic: Callable[..., str]
) -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry

    from aiokafka.metrics.prometheus import KafkaCollector

    topic = new_topic(partitions=2)
    group = f"share-metrics-{uuid.uuid4().hex[:8]}"
    await _group_configs(kafka.bootstrap_servers, group, share_auto_offset_reset="earliest")
    n = 40
    await _produce(kafka.bootstrap_servers, topic, n, partitions=2)
    consumer = AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    )
    before = consumer.metrics()
    assert before["records-consumed-total"] == 0 and before["fetch-total"] == 0
    assert before["last-poll-seconds-ago"] == -1
    async with consumer:
        got = await _drain(consumer, n)
        assert len(got) == n  # the broker acquired each record once
        results = await consumer.commit()
        assert results and all(e is None for e in results.values())
        m = consumer.metrics()
        registry = CollectorRegistry()
        collector = KafkaCollector()
        registry.register(collector)
        collector.add(consumer, client_id="s1")
        exported = await asyncio.to_thread(
            registry.get_sample_value,
            "kafka_share_consumer_acknowledgements_send_total",
            {"client_id": "s1"},
        )
    assert m["records-consumed-total"] == n
    assert m["records-consumed-rate"] > 0
    assert m["acknowledgements-send-total"] == n
    assert m["acknowledgements-send-rate"] > 0
    assert m["acknowledgements-error-total"] == 0
    assert m["fetch-total"] >= 1 and m["fetch-rate"] > 0 and m["fetch-latency-avg"] > 0
    assert m["fetch-latency-max"] >= m["fetch-latency-avg"]
    assert m["bytes-consumed-total"] > 0 and m["fetch-size-max"] > 0
    assert m["records-per-request-max"] >= 1
    assert m["heartbeat-total"] >= 1 and m["heartbeat-response-time-max"] > 0
    assert m["last-heartbeat-seconds-ago"] >= 0
    assert m["rebalance-total"] >= 1 and m["assigned-partitions"] == 2
    assert 0 <= m["last-poll-seconds-ago"] < 30
    assert 0 < m["poll-idle-ratio-avg"] <= 1
    per_topic = m["topics"][topic]
    assert per_topic["records-consumed-total"] == n
    assert per_topic["acknowledgements-send-total"] == n
    assert per_topic["acknowledgements-error-total"] == 0
    assert per_topic["bytes-consumed-total"] == m["bytes-consumed-total"]
    assert m["nodes"] and m["request-total"] > 0
    assert exported == n
    after_stop = consumer.metrics()
    # Stopping sends nothing more to acknowledge: everything was committed.
    assert after_stop["acknowledgements-send-total"] == n


async def test_failed_acknowledgements_are_counted(kafka, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    group = f"share-metrics-{uuid.uuid4().hex[:8]}"
    await _group_configs(
        kafka.bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_record_lock_duration_ms="1000",
    )
    await _produce(kafka.bootstrap_servers, topic, 3)
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    ) as c:
        records = await _drain(c, 3)
        await asyncio.sleep(3)  # the 1 s locks run out before the acknowledgements
        for record in records:
            c.acknowledge(record, "accept")
        (error,) = (await c.commit()).values()
        assert isinstance(error, InvalidRecordStateError)
        m = c.metrics()
    assert m["acknowledgements-send-total"] == 3
    assert m["acknowledgements-error-total"] == 3
    assert m["acknowledgements-error-rate"] > 0
    assert m["topics"][topic]["acknowledgements-error-total"] == 3
