"""``metrics()`` of the producer, consumer and admin client against a real broker:
produce N records, consume them in a group, commit, and check that the numbers agree
with what happened.

Every wait is bounded; timeouts are generous because the machine is shared.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka._timeout import timeout
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

N = 3000
PARTITIONS = 3


async def _produce(kafka: KafkaCluster, topic: str) -> dict[str, Any]:
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, linger_ms=5) as producer:
        before = producer.metrics()
        assert before["record-send-total"] == 0
        futures = [
            await producer.send(topic, b"v" * 50, partition=i % PARTITIONS) for i in range(N)
        ]
        await asyncio.wait_for(asyncio.gather(*futures), 60)
        return producer.metrics()


async def test_producer_consumer_metrics_agree(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=PARTITIONS)
    sent = await _produce(kafka, topic)

    assert sent["record-send-total"] == N
    assert sent["topics"][topic]["record-send-total"] == N
    assert sent["record-error-total"] == 0 and sent["record-error-rate"] == 0
    assert sent["record-send-rate"] > 0
    # Batches of 50-byte records: more than one record per request and per batch.
    assert sent["records-per-request-avg"] > 1
    assert sent["batch-size-avg"] > 50 and sent["batch-size-max"] >= sent["batch-size-avg"]
    assert sent["produce-request-total"] >= 1
    assert 0 < sent["request-latency-avg"] <= sent["request-latency-max"] < 60_000
    # Every batch was acknowledged, so the buffer is free again.
    assert sent["buffer-available-bytes"] == sent["buffer-total-bytes"] > 0
    assert sent["connection-count"] >= 1
    assert sent["connection-creation-total"] >= sent["connection-count"]
    assert sent["nodes"] and all(n["request-total"] >= 1 for n in sent["nodes"].values())
    assert sent["outgoing-byte-total"] > N * 50
    json.dumps(sent)  # plain data: serializable as it is

    group = f"metrics-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    assert consumer.metrics()["records-consumed-total"] == 0  # before start(): zeros
    await consumer.start()
    try:
        seen = 0
        async with timeout(60):
            # Both paths: getmany() and async for (its per-batch fast path).
            while seen < N // 2:
                batches = await consumer.getmany(timeout_ms=1000, max_records=500)
                seen += sum(len(records) for records in batches.values())
            async for _ in consumer:
                seen += 1
                if seen == N:
                    break
        await consumer.commit()
        got = consumer.metrics()
    finally:
        await consumer.stop()

    assert got["records-consumed-total"] == N
    assert got["topics"][topic]["records-consumed-total"] == N
    per_partition = got["partitions"][topic]
    assert sorted(per_partition) == list(range(PARTITIONS))
    assert sum(p["records-consumed-total"] for p in per_partition.values()) == N
    assert all(p["records-lag"] == 0 for p in per_partition.values())
    assert got["records-lag-max"] == 0
    assert got["records-consumed-rate"] > 0
    assert got["fetch-total"] >= 1 and got["fetch-rate"] > 0
    assert 0 < got["fetch-latency-avg"] <= got["fetch-latency-max"]
    assert got["bytes-fetched-total"] > N * 50
    assert got["commit-total"] >= 1
    assert got["commit-latency-avg"] > 0
    assert got["rebalance-total"] >= 1
    assert got["rebalance-latency-avg"] > 0
    assert got["assigned-partitions"] == PARTITIONS
    assert 0 <= got["last-rebalance-seconds-ago"] < 120
    assert got["request-latency-avg"] > 0 and got["connection-count"] >= 1
    json.dumps(got)


async def test_lag_shows_records_not_consumed(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=1)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        # One record per batch: a batch counts as consumed as it starts being handed
        # out, so batches of one make the count exact at any point.
        for i in range(100):
            await producer.send_and_wait(topic, b"%d" % i)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        async with timeout(30):
            taken = 0
            while taken < 40:
                batches = await consumer.getmany(tp, timeout_ms=1000, max_records=40 - taken)
                taken += len(batches.get(tp, []))
        got = consumer.metrics()
    assert got["records-consumed-total"] == 40
    assert got["partitions"][topic][0]["records-lag"] == 60
    assert got["records-lag-max"] == 60
    # No group: the coordinator values stay at zero.
    assert got["rebalance-total"] == 0 and got["commit-total"] == 0


async def test_admin_metrics(kafka: KafkaCluster) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        await admin.list_topics()
        got = admin.metrics()
    assert got["request-total"] >= 2  # ApiVersions and Metadata at least
    assert got["request-latency-avg"] > 0
    assert got["response-total"] >= 1
    assert got["nodes"]


@pytest.mark.parametrize("protocol", ["consumer"])
async def test_kip848_group_counts_rebalance_and_commit(
    kafka: KafkaCluster, new_topic: NewTopic, protocol: str
) -> None:
    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(10):
            await producer.send(topic, b"x", partition=i % 2)
        await producer.flush()
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=f"metrics-848-{uuid.uuid4().hex[:8]}",
        group_protocol=protocol,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    ) as consumer:
        async with timeout(60):
            seen = 0
            async for _ in consumer:
                seen += 1
                if seen == 10:
                    break
        await consumer.commit()
        got = consumer.metrics()
    assert got["records-consumed-total"] == 10
    assert got["rebalance-total"] >= 1
    assert got["commit-total"] >= 1 and got["commit-latency-avg"] > 0
    assert got["records-lag-max"] == 0


async def test_prometheus_collector_exports_the_snapshot(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    pytest.importorskip("prometheus_client")
    from prometheus_client import CollectorRegistry, generate_latest

    from aiokafka.metrics.prometheus import KafkaCollector

    topic = new_topic(partitions=1)
    registry = CollectorRegistry()
    collector = KafkaCollector()
    registry.register(collector)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        collector.add(producer, client_id="p1")
        for _ in range(25):
            await producer.send(topic, b"x")
        await producer.flush()
        # A scrape runs in the HTTP server's thread: the snapshot is taken on the loop.
        text = (await asyncio.to_thread(generate_latest, registry)).decode()
        value = await asyncio.to_thread(
            registry.get_sample_value,
            "kafka_producer_topic_record_send_total",
            {"client_id": "p1", "topic": topic},
        )
    assert value == 25
    assert 'kafka_producer_record_send_total{client_id="p1"} 25.0' in text
    assert "# TYPE kafka_producer_request_latency_avg gauge" in text
    assert 'kafka_producer_node_request_total{client_id="p1",node_id=' in text
    with pytest.raises(ValueError, match="already exported"):
        collector.add(producer, client_id="p1")
    collector.remove("p1")
    assert (
        registry.get_sample_value("kafka_producer_record_send_total", {"client_id": "p1"}) is None
    )


async def test_otel_instruments_observe_the_snapshot(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    pytest.importorskip("opentelemetry.sdk.metrics")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from aiokafka.metrics.otel import instrument

    topic = new_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(30):
            await producer.send(topic, b"x", partition=i % 2)
        await producer.flush()
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=f"metrics-otel-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
    ) as consumer:
        registration = instrument(provider.get_meter("test"), consumer, client_id="c1")
        async with timeout(60):
            seen = 0
            while seen < 30:
                batches = await consumer.getmany(timeout_ms=1000)
                seen += sum(len(r) for r in batches.values())
        # The SDK's periodic reader collects from its own thread.
        data = await asyncio.to_thread(reader.get_metrics_data)
        registration.close()
    provider.shutdown()
    points: dict[str, list[Any]] = {}
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points[metric.name] = list(metric.data.data_points)
    (total,) = points["kafka.consumer.records-consumed-total"]
    assert total.value == 30 and dict(total.attributes) == {"client.id": "c1"}
    lags = points["kafka.consumer.partition.records-lag"]
    assert sorted(p.attributes["partition"] for p in lags) == ["0", "1"]
    assert all(p.value == 0 and p.attributes["topic"] == topic for p in lags)
    (rebalances,) = points["kafka.consumer.rebalance-total"]
    assert rebalances.value >= 1
    assert "kafka.consumer.node.request-latency-avg" in points
