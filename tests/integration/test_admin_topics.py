"""Admin client against a real broker: topics (create, wait for, describe, KIP-966
ELR), cluster, configs, features."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

import pytest

from aiokafka import AIOKafkaProducer
from aiokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    NewPartitions,
    NewTopic,
)
from aiokafka.errors import (
    InvalidConfigurationError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    KafkaProtocolError,
    KafkaTimeoutError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from aiokafka.protocol._gen import describe_topic_partitions as _dtp
from tests.support.inject_relay import InjectingRelay
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster

T = TypeVar("T")


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def test_create_describe_delete_topic(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    name = _name("admin-create")
    created = await admin.create_topics(
        [NewTopic(name, 3, 1, topic_configs={"cleanup.policy": "compact"})]
    )
    assert created[name].num_partitions == 3
    assert created[name].replication_factor == 1
    assert created[name].configs["cleanup.policy"] == "compact"
    assert created[name].topic_id.int != 0

    # Second path: the rig's own metadata client sees the topic and its partitions.
    def visible() -> bool:
        topic = kafka.metadata([name]).topics.get(name)
        return topic is not None and not topic.error_code and len(topic.partitions) == 3

    kafka.wait_for("topic in metadata", visible)
    assert name in await admin.list_topics()
    (desc,) = await admin.describe_topics([name])
    assert desc.name == name and not desc.is_internal
    assert [p.partition for p in desc.partitions] == [0, 1, 2]
    assert all(p.replicas == [kafka.nodes[0].node_id] for p in desc.partitions)
    assert desc.topic_id == created[name].topic_id

    await admin.delete_topics([name])
    assert name not in await eventually(admin.list_topics, lambda names: name not in names)
    with pytest.raises(UnknownTopicOrPartitionError, match=name):
        await admin.describe_topics([name], raise_errors=True)
    (gone,) = await admin.describe_topics([name])
    assert isinstance(gone.error, UnknownTopicOrPartitionError) and gone.partitions == []


async def test_validate_only_creates_nothing(admin: AIOKafkaAdminClient) -> None:
    name = _name("admin-validate")
    result = await admin.create_topics([NewTopic(name, 2, 1)], validate_only=True)
    assert result[name].num_partitions == 2
    # A topic created afterwards becomes visible; the metadata log is ordered, so the
    # validated one would be visible by then too had it been created.
    later = _name("admin-after-validate")
    await admin.create_topics([NewTopic(later, 1, 1)])
    names = await eventually(admin.list_topics, lambda names: later in names)
    assert later in names and name not in names
    await admin.delete_topics([later])
    with pytest.raises(UnknownTopicOrPartitionError):
        await admin.describe_topics([name], raise_errors=True)


async def test_bad_create_input_gives_typed_errors(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    existing = new_topic()
    with pytest.raises(TopicAlreadyExistsError, match=existing):
        await admin.create_topics([NewTopic(existing, 1, 1)], raise_errors=True)
    with pytest.raises(InvalidReplicationFactorError):
        await admin.create_topics([NewTopic(_name("admin-rf"), 1, 3)], raise_errors=True)
    with pytest.raises(InvalidConfigurationError, match=r"no\.such\.config"):
        await admin.create_topics(
            [NewTopic(_name("admin-cfg"), 1, 1, topic_configs={"no.such.config": "1"})],
            raise_errors=True,
        )
    # By default the same failures come back per topic, as in aiokafka.
    bad_rf = _name("admin-rf")
    result = await admin.create_topics([NewTopic(existing, 1, 1), NewTopic(bad_rf, 1, 3)])
    assert isinstance(result[existing].error, TopicAlreadyExistsError)
    assert isinstance(result[bad_rf].error, InvalidReplicationFactorError)
    assert set(result.errors) == {existing, bad_rf}
    with pytest.raises(ValueError, match="duplicate"):
        await admin.create_topics([NewTopic("x", 1, 1), NewTopic("x", 1, 1)])


async def test_partial_create_names_every_failure(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    existing = new_topic()
    fresh = _name("admin-partial")
    with pytest.raises(TopicAlreadyExistsError) as info:
        await admin.create_topics(
            [NewTopic(existing, 1, 1), NewTopic(fresh, 1, 1), NewTopic(_name("bad"), 1, 5)],
            raise_errors=True,
        )
    assert existing in str(info.value) and "2 of 3 failed" in str(info.value)
    # The valid topic of the batch was created anyway.
    assert fresh in await eventually(admin.list_topics, lambda names: fresh in names)
    await admin.delete_topics([fresh])


async def test_delete_unknown_topic_fails_fast(admin: AIOKafkaAdminClient) -> None:
    missing = _name("admin-missing")
    with pytest.raises(UnknownTopicOrPartitionError):
        await admin.delete_topics([missing], raise_errors=True)
    result = await admin.delete_topics([missing])
    assert isinstance(result.errors[missing], UnknownTopicOrPartitionError)
    assert result.topic_error_codes == [(missing, 3)]


async def test_create_partitions(admin: AIOKafkaAdminClient, new_topic: Callable[..., str]) -> None:
    name = new_topic(partitions=1)
    await admin.create_partitions({name: NewPartitions(4)}, validate_only=True)
    # Growing to 2 succeeds only if the validation left the topic at 1 partition.
    await admin.create_partitions({name: NewPartitions(2)})
    await admin.create_partitions({name: NewPartitions(4)})
    (desc,) = await eventually(
        lambda: admin.describe_topics([name]), lambda d: len(d[0].partitions) == 4
    )
    assert len(desc.partitions) == 4
    with pytest.raises(InvalidPartitionsError):
        await admin.create_partitions({name: NewPartitions(3)})


async def test_describe_cluster_and_features(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    cluster = await admin.describe_cluster()
    assert cluster.cluster_id == kafka.cluster_id
    assert [b.nodeId for b in cluster.brokers] == [n.node_id for n in kafka.nodes]
    assert cluster.brokers[0].port == kafka.nodes[0].ports["PLAINTEXT"]
    features = await admin.describe_features()
    assert "metadata.version" in features.finalized
    assert "metadata.version" in features.supported
    _low, high = features.finalized["metadata.version"]
    assert 0 < high <= features.supported["metadata.version"][1]


async def test_incremental_alter_configs_is_described(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    name = new_topic()
    res = ConfigResource(ConfigResourceType.TOPIC, name)
    await admin.incremental_alter_configs(
        {
            res: [
                AlterConfigOp("retention.ms", "123456"),
                AlterConfigOp("cleanup.policy", "compact", AlterConfigOpType.APPEND),
            ]
        }
    )
    (desc,) = await eventually(
        lambda: admin.describe_configs([ConfigResource("topic", name)]),
        lambda d: d[0].configs["cleanup.policy"].value != "delete",
    )
    entry = desc.configs["retention.ms"]
    assert entry.value == "123456" and entry.source is ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert set(str(desc.configs["cleanup.policy"].value).split(",")) == {"delete", "compact"}

    await admin.incremental_alter_configs(
        {
            res: [
                AlterConfigOp("retention.ms", op_type=AlterConfigOpType.DELETE),
                AlterConfigOp("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT),
            ]
        }
    )
    (desc,) = await eventually(
        lambda: admin.describe_configs(
            [ConfigResource("TOPIC", name, {"retention.ms": None, "cleanup.policy": None})],
            include_synonyms=True,
        ),
        lambda d: d[0].configs["cleanup.policy"].value == "compact",
    )
    assert set(desc.configs) == {"retention.ms", "cleanup.policy"}
    assert desc.configs["retention.ms"].is_default
    assert desc.configs["retention.ms"].value == "604800000"
    assert desc.configs["cleanup.policy"].value == "compact"

    with pytest.raises(InvalidConfigurationError):
        await admin.incremental_alter_configs({res: [AlterConfigOp("no.such.config", "1")]})


async def test_alter_configs_replaces_dynamic_set(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    name = new_topic()
    res = ConfigResource("TOPIC", name)
    await admin.alter_configs([ConfigResource("TOPIC", name, {"retention.ms": "1000"})])
    (desc,) = await eventually(
        lambda: admin.describe_configs([res]),
        lambda d: d[0].configs["retention.ms"].value == "1000",
    )
    assert desc.configs["retention.ms"].value == "1000"
    # validate_only changes nothing: a later real change shows up, the validated
    # value never does.
    await admin.alter_configs(
        [ConfigResource("TOPIC", name, {"retention.ms": "2000"})], validate_only=True
    )
    await admin.incremental_alter_configs({res: [AlterConfigOp("segment.ms", "3600000")]})
    (desc,) = await eventually(
        lambda: admin.describe_configs([res]),
        lambda d: d[0].configs["segment.ms"].value == "3600000",
    )
    assert desc.configs["segment.ms"].value == "3600000"
    assert desc.configs["retention.ms"].value == "1000"
    # The legacy call replaces the whole dynamic set: retention.ms reverts.
    await admin.alter_configs([ConfigResource("TOPIC", name, {"segment.ms": "7200000"})])
    (desc,) = await eventually(
        lambda: admin.describe_configs([res]),
        lambda d: d[0].configs["segment.ms"].value == "7200000",
    )
    assert desc.configs["retention.ms"].is_default


async def test_broker_config_goes_to_that_broker(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    node = str(kafka.nodes[0].node_id)
    (desc,) = await admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, node)])
    assert desc.configs["node.id"].value == node
    assert desc.configs["num.io.threads"].source is ConfigSource.STATIC_BROKER_CONFIG
    # A dynamic per-broker change is seen, then reverted.
    res = ConfigResource(ConfigResourceType.BROKER, node)
    await admin.incremental_alter_configs({res: [AlterConfigOp("log.cleaner.threads", "2")]})
    try:
        # The controller commits the change; the broker applies it from the metadata
        # log a moment later, so poll.
        query = [ConfigResource("BROKER", node, {"log.cleaner.threads": None})]
        for _ in range(100):
            (desc,) = await admin.describe_configs(query)
            if desc.configs["log.cleaner.threads"].value == "2":
                break
            await asyncio.sleep(0.1)
        assert desc.configs["log.cleaner.threads"].value == "2"
        assert desc.configs["log.cleaner.threads"].source is ConfigSource.DYNAMIC_BROKER_CONFIG
    finally:
        await admin.incremental_alter_configs(
            {res: [AlterConfigOp("log.cleaner.threads", op_type=AlterConfigOpType.DELETE)]}
        )


async def test_describe_unknown_topic_config(admin: AIOKafkaAdminClient) -> None:
    missing = _name("admin-nope")
    with pytest.raises(UnknownTopicOrPartitionError):
        await admin.describe_configs([ConfigResource("TOPIC", missing)], raise_errors=True)
    (desc,) = await admin.describe_configs([ConfigResource("TOPIC", missing)])
    assert isinstance(desc.error, UnknownTopicOrPartitionError) and desc.configs == {}
    assert desc.resources[0][0] == 3


async def test_wait_for_topics_returns_when_every_partition_has_a_leader(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    name = _name("wait-ready")
    await admin.create_topics([NewTopic(name, 4, 1)])
    await admin.wait_for_topics([name], timeout_ms=20000)
    # Second path: the rig's own metadata client sees a leader for each partition.
    topic = kafka.metadata([name]).topics[name]
    assert not topic.error_code
    assert sorted(p.partition for p in topic.partitions) == [0, 1, 2, 3]
    assert all(p.leader >= 0 for p in topic.partitions)
    # And a producer started now writes to every partition without waiting on errors.
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for partition in range(4):
            meta = await producer.send_and_wait(name, b"v", partition=partition)
            assert (meta.partition, meta.offset) == (partition, 0)


async def test_wait_for_topics_waits_for_a_topic_created_while_polling(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    name = _name("wait-later")
    waiting = asyncio.ensure_future(admin.wait_for_topics([name], timeout_ms=20000))
    await asyncio.sleep(0.5)
    assert not waiting.done()  # the topic does not exist yet
    await admin.create_topics([NewTopic(name, 2, 1)])
    await asyncio.wait_for(waiting, 25)
    (desc,) = await admin.describe_topics([name])
    assert [p.leader >= 0 for p in desc.partitions] == [True, True]


async def test_wait_for_topics_times_out_naming_each_missing_topic(
    admin: AIOKafkaAdminClient,
) -> None:
    ready = _name("wait-exists")
    missing = _name("wait-missing")
    await admin.create_topics([NewTopic(ready, 1, 1)])
    started = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        await admin.wait_for_topics([ready, missing], timeout_ms=1500)
    elapsed = time.monotonic() - started
    assert 1.4 <= elapsed < 5
    text = str(info.value)
    assert f"1 of 2 topics not ready after 1500 ms: {missing}: UnknownTopicOrPartitionError" in text
    assert ready not in text


async def test_wait_for_topics_bad_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(TypeError, match="topics must be a list of str"):
        await admin.wait_for_topics("abc")
    with pytest.raises(ValueError, match="timeout_ms"):
        await admin.wait_for_topics(["abc"], timeout_ms=-1)
    with pytest.raises(ValueError, match="topics: duplicate names"):
        await admin.wait_for_topics(["abc", "abc"])
    started = time.monotonic()
    await admin.wait_for_topics([])
    assert time.monotonic() - started < 0.5


async def test_describe_topic_partitions_pages_match_metadata(
    admin: AIOKafkaAdminClient,
) -> None:
    five, three, missing = _name("dtp-a"), _name("dtp-b"), _name("dtp-missing")
    await admin.create_topics([NewTopic(five, 5, 1), NewTopic(three, 3, 1)])
    await admin.wait_for_topics([five, three], timeout_ms=20000)
    # A limit of 2 partitions per answer: 8 partitions take four answers, and the
    # five-partition topic is split over three of them.
    got = await admin.describe_topic_partitions([three, missing, five], response_partition_limit=2)
    assert [d.name for d in got] == [three, missing, five]
    by_metadata = {d.name: d for d in await admin.describe_topics([five, three])}
    for d in (got[0], got[2]):
        assert d.error is None
        assert d.topic_id == by_metadata[d.name].topic_id != uuid.UUID(int=0)
        expected = by_metadata[d.name].partitions
        assert [p.partition for p in d.partitions] == [p.partition for p in expected]
        for p, q in zip(d.partitions, expected, strict=True):
            assert (p.leader, p.leader_epoch, p.replicas, p.isr) == (
                q.leader,
                q.leader_epoch,
                q.replicas,
                q.isr,
            )
            # Metadata carries no ELR; this API does (empty: the one replica is in sync).
            assert q.eligible_leader_replicas is None
            assert p.eligible_leader_replicas == [] and p.last_known_elr == []
    assert isinstance(got[1].error, UnknownTopicOrPartitionError)
    assert got[1].partitions == [] and got[1]["error_code"] == 3
    # One answer holds them all when the limit allows: the same description.
    whole = await admin.describe_topic_partitions([three, missing, five])
    assert (whole[0], whole[2]) == (got[0], got[2])  # errors do not compare equal
    assert isinstance(whole[1].error, UnknownTopicOrPartitionError)


async def test_describe_topic_partitions_all_topics_sorted(admin: AIOKafkaAdminClient) -> None:
    names = sorted(_name("dtp-all") for _ in range(2))
    await admin.create_topics([NewTopic(n, 2, 1) for n in names])
    await admin.wait_for_topics(names, timeout_ms=20000)
    everything = await admin.describe_topic_partitions(response_partition_limit=3)
    listed = [d.name for d in everything]
    assert listed == sorted(listed)
    assert set(names) <= set(listed)
    for d in everything:
        if d.name in names:
            assert [p.partition for p in d.partitions] == [0, 1]


async def test_describe_topic_partitions_bad_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(TypeError, match="topics must be a list of str"):
        await admin.describe_topic_partitions("abc")
    with pytest.raises(ValueError, match="response_partition_limit"):
        await admin.describe_topic_partitions(["abc"], response_partition_limit=0)
    assert await admin.describe_topic_partitions([]) == []  # not every topic


async def test_describe_topic_partitions_cursor_that_does_not_advance(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    """A broker whose cursor stays put would keep the paging loop going for ever; the
    relay rewrites each answer's cursor to point at partition 1 again."""
    name = _name("dtp-stuck")
    await admin.create_topics([NewTopic(name, 3, 1)])
    await admin.wait_for_topics([name], timeout_ms=20000)

    def stuck(body: bytes, version: int) -> bytes:
        response = _dtp.DescribeTopicPartitionsResponse.decode(body, version)
        response.next_cursor = _dtp.Cursor(topic_name=name, partition_index=1)
        return response.encode(version)

    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.rewrite_responses(_dtp.DescribeTopicPartitionsRequest.API_KEY, stuck)
        async with AIOKafkaAdminClient(bootstrap_servers=relay.bootstrap_servers) as stuck_admin:
            with pytest.raises(KafkaProtocolError, match=rf"did not advance past {name}\[1\]"):
                await stuck_admin.describe_topic_partitions([name], response_partition_limit=1)
        assert relay.forwarded[_dtp.DescribeTopicPartitionsRequest.API_KEY] == 2
