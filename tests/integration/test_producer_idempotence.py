"""Idempotence on the three-broker cluster: the leader's broker is killed and restarted
mid-stream; every acknowledged record must be present exactly once and in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.integration.test_producer_basic import read_confluent
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]


async def _stream(
    producer: AIOKafkaProducer, topic: str, count: int, seconds: float
) -> list[asyncio.Future[Any]]:
    """Send ``count`` numbered records spread over about ``seconds``."""
    futures = []
    chunk = 100
    pause = seconds / (count / chunk)
    for i in range(count):
        futures.append(await producer.send(topic, b"%08d" % i, key=b"%d" % (i % 50)))
        if i % chunk == chunk - 1:
            await asyncio.sleep(pause)
    return futures


async def test_leader_killed_and_restarted_mid_stream(
    kafka_cluster: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="aiokafka.producer")
    partitions = 3
    topic = new_topic(
        partitions=partitions,
        replication_factor=3,
        cluster=kafka_cluster,
        config={"min.insync.replicas": "2"},
    )
    count = 6000
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        linger_ms=5,
        request_timeout_ms=5000,
        retry_backoff_ms=100,
        delivery_timeout_ms=120000,
        metadata_max_age_ms=5000,
    )
    await producer.start()
    killed: int | None = None
    try:
        assert producer.config.enable_idempotence
        await producer.send_and_wait(topic, b"warm-up", partition=0)
        leader = producer.client.cluster.leader_for(TopicPartition(topic, 0))
        assert leader is not None
        stream = asyncio.create_task(_stream(producer, topic, count, seconds=8.0))
        await asyncio.sleep(2.0)
        killed = leader
        await asyncio.to_thread(kafka_cluster.kill, leader)
        await asyncio.sleep(3.0)
        await asyncio.to_thread(kafka_cluster.restart, leader)
        killed = None
        futures = await stream
        results = await asyncio.wait_for(
            asyncio.gather(*futures, return_exceptions=True), timeout=150
        )
    finally:
        if killed is not None:
            await asyncio.to_thread(kafka_cluster.restart, killed)
        await producer.stop()

    # The kill really hit in-flight or queued batches (otherwise this proves nothing).
    retries = [r for r in caplog.records if r.getMessage().startswith("Retrying")]
    assert retries, "no batch was retried: the kill did not disturb the stream"
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, f"{len(errors)} records failed, first: {errors[0]!r}"
    acked: dict[bytes, Any] = {b"%08d" % i: r for i, r in enumerate(results)}

    msgs = await asyncio.to_thread(
        read_confluent, kafka_cluster.bootstrap_servers, topic, partitions, count + 1
    )
    values = [m.value() for m in msgs if m.value() != b"warm-up"]
    # Exactly once: no duplicates, nothing acknowledged missing.
    assert len(values) == len(set(values)), "duplicates after retries"
    assert set(values) == set(acked)
    # In order per partition, at the offsets the futures reported.
    for p in range(partitions):
        in_partition = [m for m in msgs if m.partition() == p and m.value() != b"warm-up"]
        numbers = [int(m.value()) for m in in_partition]
        assert numbers == sorted(numbers), f"partition {p} out of order"
        for m in in_partition:
            md = acked[m.value()]
            assert (md.partition, md.offset) == (p, m.offset())


async def test_partition_offline_while_its_only_broker_restarts(
    kafka_cluster: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    # Replication factor 1: no failover, the partition is offline until its broker is
    # back. The producer must wait and then resume on its own, with no duplicates and
    # no sequence deadlock (aiokafka raised OutOfOrderSequenceNumber here and stalled).
    caplog.set_level(logging.DEBUG, logger="aiokafka.producer")
    caplog.set_level(logging.DEBUG, logger="aiokafka.cluster.connections")
    topic = new_topic(partitions=1, replication_factor=1, cluster=kafka_cluster)
    count = 3000
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        linger_ms=5,
        request_timeout_ms=5000,
        retry_backoff_ms=200,
        delivery_timeout_ms=120000,
    )
    await producer.start()
    killed: int | None = None
    try:
        await producer.send_and_wait(topic, b"warm-up")
        leader = producer.client.cluster.leader_for(TopicPartition(topic, 0))
        assert leader is not None
        stream = asyncio.create_task(_stream(producer, topic, count, seconds=6.0))
        await asyncio.sleep(1.5)
        killed = leader
        await asyncio.to_thread(kafka_cluster.kill, leader)
        await asyncio.sleep(3.0)
        await asyncio.to_thread(kafka_cluster.restart, leader)
        killed = None
        futures = await stream
        results = await asyncio.wait_for(
            asyncio.gather(*futures, return_exceptions=True), timeout=150
        )
    finally:
        if killed is not None:
            await asyncio.to_thread(kafka_cluster.restart, killed)
        await producer.stop()

    # The outage was felt: requests in flight at the kill were retried, or (nothing is
    # drained for a node without an open connection) reconnecting failed until the restart.
    assert [
        r
        for r in caplog.records
        if r.getMessage().startswith("Retrying")
        or (r.getMessage().startswith(f"Connecting to node {leader} failed"))
    ]
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, f"{len(errors)} records failed, first: {errors[0]!r}"
    msgs = await asyncio.to_thread(
        read_confluent, kafka_cluster.bootstrap_servers, topic, 1, count + 1
    )
    values = [m.value() for m in msgs]
    assert values == [b"warm-up"] + [b"%08d" % i for i in range(count)]
    assert [r.offset for r in results] == list(range(1, count + 1))  # type: ignore[union-attr]
