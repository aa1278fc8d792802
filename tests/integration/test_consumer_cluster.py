"""The consumer on the three-broker cluster: parallel fetches per leader, leader failover."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.cluster


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int, tag: bytes) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5}
    )
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=b"%s-%d-%d" % (tag, p, i), partition=p)
    assert producer.flush(60) == 0


async def read_all(c: AIOKafkaConsumer[Any, Any], n: int, timeout: float = 60) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in (await c.getmany(timeout_ms=500)).values():
            out.extend(recs)
    return out


async def test_fetches_from_every_leader_and_survives_leader_loss(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=6, replication_factor=3, cluster=kafka_cluster)
    tps = [TopicPartition(topic, p) for p in range(6)]
    produce(kafka_cluster.bootstrap_servers, topic, 6, 50, b"a")
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
        request_timeout_ms=10000,
        metadata_max_age_ms=5000,
    ) as c:
        c.assign(tps)
        first = await read_all(c, 300)
        assert len(first) == 300
        fetcher = c._fetcher
        assert fetcher is not None
        leaders = {c._client.cluster.leader_for(tp) for tp in tps}  # type: ignore[union-attr]
        assert len(leaders) > 1  # spread over brokers: one session per leader
        assert {n for n in leaders if fetcher.session(n) is not None} == leaders

        victim = c._client.cluster.leader_for(tps[0])  # type: ignore[union-attr]
        assert victim is not None
        kafka_cluster.kill(victim)
        try:
            produce(kafka_cluster.bootstrap_servers, topic, 6, 50, b"b")
            second = await read_all(c, 300)
            values = sorted(r.value for r in second)
            assert values == sorted(b"b-%d-%d" % (p, i) for p in range(6) for i in range(50))
            for tp in tps:
                assert await c.position(tp) == 100
        finally:
            kafka_cluster.restart(victim)
