"""Call sites written for aiokafka 0.14 run unchanged, against the real broker.

Each test is aiokafka code as its documentation and tests write it: the admin
client's result shapes (``topic_errors``, dict keys, ``resources``, ``groups``,
``(group_id, protocol_type)`` pairs), ``AIOKafkaClient``'s aiokafka methods, and the
constructor arguments aiokafka accepted (``loop=``, ``api_version=``).
"""

from __future__ import annotations

import asyncio
import uuid
import warnings
from collections.abc import Callable

import pytest

from aiokafka import AIOKafkaConsumer, ConsumerStoppedError, IllegalOperation
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.client import AIOKafkaClient, ConnectionGroup, CoordinationType
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.errors import ConsumerStoppedError as ErrorsConsumerStopped
from aiokafka.errors import IllegalOperation as ErrorsIllegalOperation
from aiokafka.errors import IllegalStateError, NotControllerError, kafka_errors
from aiokafka.protocol.messages import MetadataRequest
from aiokafka.structs import KafkaError, TopicPartition
from tools.kafka.rig import KafkaCluster


def _group() -> str:
    return f"compat-{uuid.uuid4().hex[:10]}"


async def test_topic_and_config_changes_answer_aiokafka_responses(kafka: KafkaCluster) -> None:
    name = f"compat-create-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        response = await admin.create_topics([NewTopic(name, 2, 1)])
        for topic, error_code, _message in response.topic_errors:
            assert (topic, error_code) == (name, 0)
        assert response[name].num_partitions == 2  # the typed result, beside it

        grown = await admin.create_partitions({name: NewPartitions(3)})
        assert grown.topic_errors == [(name, 0, None)]
        altered = await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, name, {"retention.ms": "654321"})]
        )
        for result in altered:
            for error_code, _msg, resource_type, resource_name in result.resources:
                assert (error_code, resource_type, resource_name) == (0, 2, name)

        deleted = await admin.delete_topics([name])
        assert deleted.topic_error_codes == [(name, 0)]


async def test_admin_start_twice_is_a_no_op(kafka: KafkaCluster) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    await admin.start()  # aiokafka 0.14 returns at once when started
    assert await admin.list_topics() is not None
    await admin.close()
    with pytest.raises(IllegalStateError, match="closed"):
        await admin.start()


async def test_describe_topics_and_cluster_as_dicts(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        (described,) = await admin.describe_topics([topic])
        assert described["topic"] == topic
        assert described["error_code"] == 0
        assert described["is_internal"] is False
        assert sorted(p["partition"] for p in described["partitions"]) == [0, 1]
        assert all(p["leader"] == 1 and p["isr"] == [1] for p in described["partitions"])
        assert dict(described)["topic"] == topic  # keys() + __getitem__
        assert described.name == topic  # the typed result, beside it

        cluster = await admin.describe_cluster()
        assert cluster["controller_id"] == 1
        assert cluster["cluster_id"] == cluster.cluster_id
        (broker,) = cluster["brokers"]
        port = int(kafka.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
        assert (broker["node_id"], broker["port"]) == (1, port)
        assert cluster.get("no-such-key", "absent") == "absent"


async def test_describe_configs_resources(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(config={"retention.ms": "123456"})
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        responses = await admin.describe_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": None}),
                ConfigResource(ConfigResourceType.BROKER, "1"),
            ]
        )
        seen = {}
        for response in responses:
            for error_code, _msg, resource_type, resource_name, entries in response.resources:
                assert error_code == 0
                seen[(resource_type, resource_name)] = {e[0]: e for e in entries}
        retention = seen[(ConfigResourceType.TOPIC, topic)]["retention.ms"]
        name, value, read_only, source, sensitive, synonyms = retention
        assert (name, value, read_only, sensitive, synonyms) == (
            "retention.ms",
            "123456",
            False,
            False,
            [],
        )
        assert source == 1  # DYNAMIC_TOPIC_CONFIG
        assert "log.dirs" in seen[(ConfigResourceType.BROKER, "1")]


async def test_groups_as_aiokafka_returned_them(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        client_id="compat-c",
        partition_assignment_strategy=(RangePartitionAssignor,),
    )
    await consumer.start()
    try:
        async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
            for _ in range(300):  # up to ~60 s
                if consumer.assignment():
                    break
                await consumer.getmany(timeout_ms=200)
            assert consumer.assignment()
            listed = dict(await admin.list_consumer_groups())
            assert listed[group] == "consumer"
            for group_id, protocol_type in await admin.list_consumer_groups():
                assert isinstance(group_id, str) and isinstance(protocol_type, str)

            assert await admin.find_coordinator(group) == 1
            (response,) = await admin.describe_consumer_groups([group])
            (described,) = response.groups
            error_code, group_id, state, protocol_type, protocol, members, _ops = described
            assert (error_code, group_id, state, protocol_type) == (0, group, "Stable", "consumer")
            assert protocol == "range"
            (member,) = members
            member_id, client_id, _host, metadata, assignment = member
            assert client_id == "compat-c" and member_id and metadata and assignment
    finally:
        await consumer.stop()


async def test_client_methods_of_aiokafka(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=3)
    client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers, api_version=None)
    await client.bootstrap()
    try:
        (host, port, _family) = client.hosts[0]
        assert f"{host}:{port}" == kafka.bootstrap_servers.split(",")[0]
        assert client.get_random_node() == 1

        update = client.force_metadata_update()
        assert isinstance(update, asyncio.Future)  # a plain method returning a future
        assert await update is True

        # set_topics/add_topic return futures; the refresh runs even if not awaited.
        pending = client.set_topics([topic])
        assert isinstance(pending, asyncio.Future)
        assert await pending is True
        assert client.cluster.partitions_for_topic(topic) == frozenset({0, 1, 2})
        assert await client.add_topic(topic) is True  # already tracked: resolved future

        group = _group()
        assert await client.coordinator_lookup(CoordinationType.GROUP, group) == 1
        assert await client.ready(1, group=ConnectionGroup.COORDINATION)
        response = await client.send(1, MetadataRequest(topics=[]), group=ConnectionGroup.DEFAULT)
        assert response.controller_id == 1
    finally:
        await client.close()


async def test_force_metadata_update_resolves_false_without_brokers(kafka: KafkaCluster) -> None:
    client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=3000)
    await client.bootstrap()
    kafka.pause(1)
    try:
        assert await asyncio.wait_for(client.force_metadata_update(), 60) is False
    finally:
        kafka.resume(1)
        await client.close()


def test_assignor_metadata_is_a_classmethod() -> None:
    for cls in (RangePartitionAssignor, RoundRobinPartitionAssignor):
        subscription = cls.metadata(["b", "a"])
        assert subscription.subscription == ["a", "b"]
        assert cls().metadata({"a"}).subscription == ["a"]


def test_top_level_and_structs_names() -> None:
    assert ConsumerStoppedError is ErrorsConsumerStopped
    assert IllegalOperation is ErrorsIllegalOperation
    assert issubclass(NotControllerError, KafkaError)
    assert kafka_errors[NotControllerError.errno] is NotControllerError
    assert TopicPartition("t", 0) == ("t", 0)


@pytest.mark.parametrize("version", [None, "auto", "2.0.0", "3.9", "4.0"])
def test_api_version_values_accepted_and_ignored(version: str | None) -> None:
    from aiokafka import AIOKafkaAdminClient as Admin
    from aiokafka import AIOKafkaProducer

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for cls in (AIOKafkaProducer, AIOKafkaConsumer, Admin, AIOKafkaClient):
            cls(bootstrap_servers="127.0.0.1:1", api_version=version)


def test_loop_argument_accepted_with_deprecation_warning() -> None:
    from aiokafka import AIOKafkaAdminClient as Admin
    from aiokafka import AIOKafkaProducer

    loop = asyncio.new_event_loop()
    try:
        for cls in (AIOKafkaProducer, AIOKafkaConsumer, Admin, AIOKafkaClient):
            cls(bootstrap_servers="127.0.0.1:1", loop=None)
            with pytest.warns(DeprecationWarning, match="loop"):
                cls(bootstrap_servers="127.0.0.1:1", loop=loop)
    finally:
        loop.close()
