"""aiokafka 0.14 code that reads per-item error codes and indexes per-broker
responses runs unchanged, against the real broker; and ``client.cluster`` answers
aiokafka's ``ClusterMetadata`` queries.

aiokafka 0.14 returned the raw responses of ``create_topics``, ``delete_topics``,
``describe_topics``, ``describe_configs``, ``alter_configs`` and
``describe_consumer_groups`` without raising for per-item error codes; it raised from
``create_partitions``. Ours does the same by default and raises with
``raise_errors=True``.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
import uuid
from collections.abc import Callable

import pytest

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.client import AIOKafkaClient, CoordinationType
from aiokafka.cluster import ClusterMetadata, TopicMetadata
from aiokafka.errors import (
    InvalidConfigurationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition
from tools.kafka.rig import KafkaCluster

TOPIC_ALREADY_EXISTS = 36
UNKNOWN_TOPIC_OR_PARTITION = 3
INVALID_REPLICATION_FACTOR = 38
INVALID_CONFIG = 40


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_create_topics_returns_error_codes(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    existing = new_topic()
    fresh, too_many_replicas = _name("compat-fresh"), _name("compat-rf")
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        resp = await admin.create_topics(
            [NewTopic(existing, 1, 1), NewTopic(fresh, 1, 1), NewTopic(too_many_replicas, 1, 3)]
        )
        codes = {topic: code for topic, code, _message in resp.topic_errors}
        assert codes == {
            existing: TOPIC_ALREADY_EXISTS,
            fresh: 0,
            too_many_replicas: INVALID_REPLICATION_FACTOR,
        }
        messages = {topic: message for topic, _code, message in resp.topic_errors}
        assert messages[fresh] is None and existing in (messages[existing] or "")
        # The typed view of the same result.
        assert isinstance(resp[existing].error, TopicAlreadyExistsError)
        assert isinstance(resp[too_many_replicas].error, InvalidReplicationFactorError)
        assert resp[fresh].error is None and resp[fresh].num_partitions == 1
        # The valid topic of the batch was created (second path: the rig's metadata).
        await asyncio.to_thread(kafka.wait_topic, fresh, 1, 30.0)

        with pytest.raises(TopicAlreadyExistsError, match=existing):
            await admin.create_topics([NewTopic(existing, 1, 1)], raise_errors=True)

        deleted = await admin.delete_topics([fresh, _name("compat-absent")])
        (fresh_code, absent_code) = (code for _topic, code in deleted.topic_error_codes)
        assert (fresh_code, absent_code) == (0, UNKNOWN_TOPIC_OR_PARTITION)
        with pytest.raises(UnknownTopicOrPartitionError):
            await admin.delete_topics([_name("compat-absent")], raise_errors=True)


async def test_describe_topics_reports_missing_topic_as_error_code(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic, missing = new_topic(partitions=2), _name("compat-missing")
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        found, absent = await admin.describe_topics([topic, missing])
        assert (found["topic"], found["error_code"], len(found["partitions"])) == (topic, 0, 2)
        assert (absent["topic"], absent["error_code"], absent["partitions"]) == (
            missing,
            UNKNOWN_TOPIC_OR_PARTITION,
            [],
        )
        assert isinstance(absent.error, UnknownTopicOrPartitionError) and found.error is None
        with pytest.raises(UnknownTopicOrPartitionError, match=missing):
            await admin.describe_topics([topic, missing], raise_errors=True)
    # Describing did not create the topic.
    assert missing not in (await asyncio.to_thread(kafka.metadata, None)).topics


async def test_describe_configs_indexes_as_aiokafka_responses(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    first, second = new_topic(config={"retention.ms": "111111"}), new_topic()
    missing = _name("compat-missing")
    topic = ConfigResourceType.TOPIC
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        resp = await admin.describe_configs(
            [
                ConfigResource(topic, first, {"retention.ms": None}),
                ConfigResource(topic, second),
                ConfigResource(topic, missing),
                ConfigResource(ConfigResourceType.BROKER, "1", {"log.dirs": None}),
            ]
        )
        # aiokafka: the topics went in one request (resp[0] lists all three) and
        # broker 1's resource in another.
        assert [r[3] for r in resp[0].resources] == [first, second, missing]
        error_code, _msg, resource_type, name, entries = resp[0].resources[0]
        assert (error_code, resource_type, name) == (0, topic, first)
        assert [(e[0], e[1]) for e in entries] == [("retention.ms", "111111")]
        assert resp[0].resources[2][0] == UNKNOWN_TOPIC_OR_PARTITION
        # A loop over every item's .resources sees each resource once.
        seen = [(r[2], r[3]) for response in resp for r in response.resources]
        assert seen == [(topic, first), (topic, second), (topic, missing), (4, "1")]
        # The typed view: one item per resource, in order, errors on the item.
        assert [d.name for d in resp] == [first, second, missing, "1"]
        assert isinstance(resp[2].error, UnknownTopicOrPartitionError) and resp[2].configs == {}
        assert resp[0].configs["retention.ms"].value == "111111"
        with pytest.raises(UnknownTopicOrPartitionError):
            await admin.describe_configs([ConfigResource(topic, missing)], raise_errors=True)


async def test_alter_configs_returns_error_codes(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    good, bad = new_topic(), new_topic()
    topic = ConfigResourceType.TOPIC
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        resp = await admin.alter_configs(
            [
                ConfigResource(topic, good, {"retention.ms": "222222"}),
                ConfigResource(topic, bad, {"no.such.config": "1"}),
            ]
        )
        codes = {r[3]: r[0] for item in resp for r in item.resources}
        assert codes == {good: 0, bad: INVALID_CONFIG}
        # aiokafka sent both topics in one request: resp[0] lists both.
        assert [(r[0], r[3]) for r in resp[0].resources] == [(0, good), (INVALID_CONFIG, bad)]
        assert resp[1].resources == []
        assert isinstance(resp[1].error, InvalidConfigurationError) and resp[0].error is None
        # The valid resource changed anyway (second path: describe it).
        (desc,) = await admin.describe_configs([ConfigResource(topic, good)])
        assert desc.configs["retention.ms"].value == "222222"
        with pytest.raises(InvalidConfigurationError):
            await admin.alter_configs(
                [ConfigResource(topic, bad, {"no.such.config": "1"})], raise_errors=True
            )


async def test_create_partitions_still_raises_as_aiokafka(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        with pytest.raises(InvalidPartitionsError):
            await admin.create_partitions({topic: NewPartitions(1)})


async def test_describe_consumer_groups_indexes_as_aiokafka_responses(
    kafka: KafkaCluster,
) -> None:
    groups = [_name("compat-g") for _ in range(3)]
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        resp = await admin.describe_consumer_groups(groups)
        # One coordinator, so aiokafka returned one response listing every group.
        assert sorted(g[1] for g in resp[0].groups) == sorted(groups)
        assert all(error_code == 0 for error_code, *_ in resp[0].groups)
        assert resp[1].groups == [] and resp[2].groups == []
        assert [g for response in resp for g in response.groups] == resp[0].groups
        assert [d.group_id for d in resp] == groups  # typed: one per group, in order
        assert all(d.state == "Dead" and d.coordinator == 1 for d in resp)


async def test_client_cluster_answers_aiokafka_cluster_metadata(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=3)
    client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers)
    await client.bootstrap()
    try:
        assert await client.set_topics([topic]) is True
        cluster = client.cluster
        _host, port = kafka.bootstrap_servers.split(",")[0].rsplit(":", 1)
        (broker,) = cluster.brokers()
        assert isinstance(cluster.brokers(), set) and isinstance(broker, BrokerMetadata)
        assert (broker.nodeId, broker.port) == (1, int(port))
        assert cluster.broker_metadata(1) == broker and cluster.broker_metadata(99) is None
        assert cluster.controller == broker
        assert topic in cluster.topics() and isinstance(cluster.topics(), set)
        assert cluster.partitions_for_topic(topic) == {0, 1, 2}
        assert cluster.available_partitions_for_topic(topic) == {0, 1, 2}
        assert cluster.leader_for_partition(TopicPartition(topic, 0)) == 1
        assert cluster.leader_for_partition(TopicPartition(topic, 7)) is None
        assert cluster.leader_for_partition(TopicPartition("no-such-topic", 0)) is None
        assert cluster.partitions_for_broker(1) >= {TopicPartition(topic, p) for p in range(3)}
        assert cluster.partitions_for_topic("no-such-topic") is None
        assert not cluster.unauthorized_topics and "x" not in cluster.unauthorized_topics
        assert cluster.is_bootstrap(1) is False
        # Our mapping view is still there beside aiokafka's calls.
        assert cluster.brokers[1] == broker and cluster.topics[topic].name == topic
        with pytest.raises(TypeError, match="immutable"):
            cluster.brokers[2] = broker

        # Internal topics are left out of topics() unless asked for. A coordinator
        # lookup makes the broker create __consumer_offsets if no test did yet.
        assert await client.coordinator_lookup(CoordinationType.GROUP, _name("g")) == 1
        for _ in range(100):  # up to ~20 s for the new internal topic to have leaders
            assert await client.set_topics([topic, "__consumer_offsets"]) is True
            cluster = client.cluster
            if "__consumer_offsets" in cluster.topics(exclude_internal_topics=False):
                break
            await asyncio.sleep(0.2)
        assert "__consumer_offsets" in cluster.topics(exclude_internal_topics=False)
        assert "__consumer_offsets" in cluster.internal_topics
        assert "__consumer_offsets" not in cluster.topics()
    finally:
        await client.close()


def test_cluster_snapshot_maps_are_read_only_and_copyable() -> None:
    broker = BrokerMetadata(1, "h", 9092, None)
    cluster = ClusterMetadata({1: broker}, {"t": TopicMetadata("t")}, controller_id=1)
    assert cluster.brokers() == {broker} and cluster.topics() == {"t"}
    for change in (
        lambda: cluster.brokers.update({2: broker}),
        lambda: cluster.brokers.pop(1),
        lambda: cluster.topics.clear(),
        lambda: cluster.topics.setdefault("u", TopicMetadata("u")),
    ):
        with pytest.raises(TypeError, match="immutable"):
            change()
    for copied in (copy.deepcopy(cluster.brokers), pickle.loads(pickle.dumps(cluster.brokers))):
        assert copied == {1: broker} and type(copied) is type(cluster.brokers)
        assert copied() == {broker}
    # A snapshot derived from a leader hint keeps the callable maps and answers
    # aiokafka's queries with the new leader.
    leaderless = PartitionMetadata("t", 0, -1, (1, 2), (1,), 5, 3, ())
    cluster = ClusterMetadata({1: broker}, {"t": TopicMetadata("t", partitions={0: leaderless})})
    tp = TopicPartition("t", 0)
    assert cluster.leader_for_partition(tp) == -1
    assert cluster.available_partitions_for_topic("t") == set()
    other = BrokerMetadata(2, "h2", 9092, None)
    hinted = cluster.with_leader(tp, 2, 4, [other])
    assert hinted is not None and hinted.leader_for_partition(tp) == 2
    assert hinted.brokers() == {broker, other} and hinted.partitions_for_broker(2) == {tp}
