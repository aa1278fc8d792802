"""The consumer on the three-broker cluster: parallel fetches per leader, leader failover."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.structs import TopicPartition
from tests.support.wait import drain
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
        first = await drain(c, 300)
        assert len(first) == 300
        fetcher = c._record_fetcher
        assert fetcher is not None
        leaders = {c._client.cluster.leader_for(tp) for tp in tps}  # type: ignore[union-attr]
        assert len(leaders) > 1  # spread over brokers: one session per leader
        assert {n for n in leaders if fetcher.session(n) is not None} == leaders

        victim = c._client.cluster.leader_for(tps[0])  # type: ignore[union-attr]
        assert victim is not None
        kafka_cluster.kill(victim)
        try:
            produce(kafka_cluster.bootstrap_servers, topic, 6, 50, b"b")
            second = await drain(c, 300)
            values = sorted(r.value for r in second)
            assert values == sorted(b"b-%d-%d" % (p, i) for p in range(6) for i in range(50))
            for tp in tps:
                assert await c.position(tp) == 100
        finally:
            kafka_cluster.restart(victim)


def _leader(kafka_cluster: KafkaCluster, topic: str) -> int:
    (partition,) = kafka_cluster.metadata([topic]).topics[topic].partitions
    return partition.leader


async def test_leader_loss_validates_the_position_and_loses_nothing(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=1, replication_factor=3, cluster=kafka_cluster)
    tp = TopicPartition(topic, 0)
    produce(kafka_cluster.bootstrap_servers, topic, 1, 100, b"a")
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        auto_offset_reset="none",  # a truncation would raise instead of moving on
        fetch_max_wait_ms=100,
        request_timeout_ms=10000,
    ) as c:
        c.assign([tp])
        c.seek(tp, 0)
        first = await drain(c, 100)
        assert [r.value for r in first] == [b"a-0-%d" % i for i in range(100)]
        fetcher = c._record_fetcher
        assert fetcher is not None
        state = c._subscriptions.state(tp)
        old_epoch = state.position_epoch
        assert old_epoch is not None and old_epoch >= 0  # records carry their epoch
        assert fetcher.validator.requests_sent == 0

        victim = _leader(kafka_cluster, topic)
        kafka_cluster.kill(victim)
        try:
            # acks=all: these go to the new leader once the old one is fenced.
            produce(kafka_cluster.bootstrap_servers, topic, 1, 100, b"b")
            second = await drain(c, 100)
            assert [r.value for r in second] == [b"b-0-%d" % i for i in range(100)]
            assert [r.offset for r in second] == list(range(100, 200))
            # The new leader was asked where epoch `old_epoch` ends before fetching.
            assert fetcher.validator.requests_sent >= 1
            assert fetcher.validator.truncations == 0
            assert state.position == 200
            assert state.position_epoch is not None and state.position_epoch > old_epoch
            assert fetcher.fetched_from(tp) != victim
        finally:
            kafka_cluster.restart(victim)


async def test_client_rack_fetches_from_the_follower_in_that_rack(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=1, replication_factor=3, cluster=kafka_cluster)
    tp = TopicPartition(topic, 0)
    leader = _leader(kafka_cluster, topic)
    follower = next(n.node_id for n in kafka_cluster.nodes if n.node_id != leader)
    rack = kafka_cluster.rack(follower)
    assert rack is not None and rack != kafka_cluster.rack(leader)
    produce(kafka_cluster.bootstrap_servers, topic, 1, 50, b"a")
    async with AIOKafkaConsumer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        client_rack=rack,
        fetch_max_wait_ms=100,
        request_timeout_ms=10000,
    ) as c:
        c.assign([tp])
        got = await drain(c, 50)
        assert [r.value for r in got] == [b"a-0-%d" % i for i in range(50)]
        fetcher = c._record_fetcher
        assert fetcher is not None
        state = c._subscriptions.state(tp)
        # The leader named the follower in our rack; the records came from there.
        assert state.preferred_read_replica == follower
        assert fetcher.fetched_from(tp) == follower
        session = fetcher.session(follower)
        assert session is not None and session.full_fetches + session.incremental_fetches > 0

        # The follower dies: fetches go back to the leader; nothing is lost.
        kafka_cluster.kill(follower)
        try:
            produce(kafka_cluster.bootstrap_servers, topic, 1, 50, b"b")
            more = await drain(c, 50)
            assert [r.value for r in more] == [b"b-0-%d" % i for i in range(50)]
            assert fetcher.fetched_from(tp) != follower
        finally:
            kafka_cluster.restart(follower)
