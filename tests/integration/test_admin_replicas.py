"""Admin client on the three-broker cluster: reassignments and leader election."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest

from aiokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    ElectionType,
    NewTopic,
)
from aiokafka.admin.results import PartitionDescription
from aiokafka.errors import (
    ElectionNotNeededError,
    InvalidReplicaAssignmentError,
    NoReassignmentInProgressError,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster

pytestmark = pytest.mark.cluster


@pytest.fixture
async def admin(kafka_cluster: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=20000
    ) as client:
        yield client


async def _create(admin: AIOKafkaAdminClient, cluster: KafkaCluster, topic: NewTopic) -> None:
    """Create ``topic`` and wait until every broker's metadata has it and its leaders.

    CreateTopics is answered once the controller committed the topic; each broker
    applies it to its metadata cache a little later, and a Metadata request (which
    describe_topics sends to any broker) reaching a lagging one answers
    UNKNOWN_TOPIC_OR_PARTITION. The Java admin client behaves the same; callers wait.
    """
    await admin.create_topics([topic], raise_errors=True)
    await asyncio.to_thread(cluster.wait_topic, topic.name, None, 30.0)


async def _partition(admin: AIOKafkaAdminClient, topic: str) -> PartitionDescription:
    (desc,) = await admin.describe_topics([topic], raise_errors=True)
    return desc.partitions[0]


async def _wait_partition(
    admin: AIOKafkaAdminClient, topic: str, replicas: list[int], leader: int | None = None
) -> PartitionDescription:
    for _ in range(150):
        p = await _partition(admin, topic)
        if p.replicas == replicas and sorted(p.isr) == sorted(replicas):
            if leader is None or p.leader == leader:
                return p
        await asyncio.sleep(0.2)
    return p


async def test_reassign_then_elect_preferred_leader(
    admin: AIOKafkaAdminClient, kafka_cluster: KafkaCluster
) -> None:
    a, b, c = (n.node_id for n in kafka_cluster.nodes)
    topic = f"admin-reassign-{uuid.uuid4().hex[:8]}"
    await _create(admin, kafka_cluster, NewTopic(topic, -1, -1, replica_assignments={0: [a]}))
    tp = TopicPartition(topic, 0)
    p = await _wait_partition(admin, topic, [a], a)
    assert p.leader == a

    # Move the single replica to b, then widen to [a, b, c] with a preferred.
    await admin.alter_partition_reassignments({tp: [b]})
    p = await _wait_partition(admin, topic, [b], b)
    assert (p.replicas, p.leader) == ([b], b)
    assert tp not in await admin.list_partition_reassignments([tp])

    await admin.alter_partition_reassignments({tp: [a, b, c]})
    p = await _wait_partition(admin, topic, [a, b, c])
    assert p.replicas == [a, b, c]
    assert tp not in await admin.list_partition_reassignments()

    # b still leads although a is preferred: a preferred election moves it to a.
    assert p.leader == b
    result = await admin.elect_leaders(ElectionType.PREFERRED, [tp])
    assert result == {tp: None}
    p = await _wait_partition(admin, topic, [a, b, c], a)
    assert p.leader == a
    again = await admin.elect_leaders(ElectionType.PREFERRED, [tp])
    assert isinstance(again[tp], ElectionNotNeededError)

    with pytest.raises(NoReassignmentInProgressError):
        await admin.alter_partition_reassignments({tp: None})
    with pytest.raises(InvalidReplicaAssignmentError):
        await admin.alter_partition_reassignments({tp: [a, a]})
    await admin.delete_topics([topic])


# Replication throttles (KIP-73): a byte rate per broker, applied to the replicas a
# topic lists ("*": all of them).
_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


async def _unthrottle(admin: AIOKafkaAdminClient, topic: str, brokers: list[int]) -> None:
    delete = AlterConfigOpType.DELETE
    await admin.incremental_alter_configs(
        {
            ConfigResource(ConfigResourceType.TOPIC, topic): [
                AlterConfigOp(k, op_type=delete) for k in _REPLICAS
            ],
            **{
                ConfigResource(ConfigResourceType.BROKER, str(n)): [
                    AlterConfigOp(k, op_type=delete) for k in _RATES
                ]
                for n in brokers
            },
        }
    )


async def test_throttled_reassignment_is_listed_while_in_progress(
    admin: AIOKafkaAdminClient, kafka_cluster: KafkaCluster
) -> None:
    brokers = [n.node_id for n in kafka_cluster.nodes]
    a, b, _c = brokers
    topic = f"admin-inflight-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    await _create(admin, kafka_cluster, NewTopic(topic, -1, -1, replica_assignments={0: [a]}))
    # 2.5 MB on a's replica: a follower fetch returns at most replica.fetch.max.bytes
    # (1 MiB) before the throttle below holds the copy to b back.
    async with AIOKafkaProducer(
        bootstrap_servers=kafka_cluster.bootstrap_servers, linger_ms=5, request_timeout_ms=20000
    ) as producer:
        await asyncio.wait_for(
            asyncio.gather(
                *[await producer.send(topic, b"r" * 10_000, partition=0) for _ in range(250)]
            ),
            60,
        )
    try:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.TOPIC, topic): [
                    AlterConfigOp(k, "*") for k in _REPLICAS
                ],
                **{
                    ConfigResource(ConfigResourceType.BROKER, str(n)): [
                        AlterConfigOp(k, "10000") for k in _RATES
                    ]
                    for n in brokers
                },
            }
        )
        await admin.alter_partition_reassignments({tp: [b]})

        # At 10 kB/s the copy takes minutes: the controller lists it as ongoing.
        listed = await admin.list_partition_reassignments()
        assert tp in listed, listed
        ongoing = listed[tp]
        assert (ongoing.adding_replicas, ongoing.removing_replicas) == ([b], [a])
        assert sorted(ongoing.replicas) == sorted([a, b])
        assert await admin.list_partition_reassignments([tp]) == {tp: ongoing}
        # Second path: the partition's metadata (from a broker, which applies the
        # controller's change a moment later) has both replicas, b not yet in sync.
        for _ in range(50):
            p = await _partition(admin, topic)
            if len(p.replicas) == 2:
                break
            await asyncio.sleep(0.1)
        assert sorted(p.replicas) == sorted([a, b]) and b not in p.isr
        await asyncio.sleep(1.0)
        assert tp in await admin.list_partition_reassignments([tp])

        # Without the throttles the copy completes: b alone, nothing listed.
        await _unthrottle(admin, topic, brokers)
        p = await _wait_partition(admin, topic, [b], b)
        assert (p.replicas, p.leader) == ([b], b)
        for _ in range(50):
            remaining = await admin.list_partition_reassignments()
            if tp not in remaining:
                break
            await asyncio.sleep(0.2)
        assert tp not in remaining
        assert await admin.list_partition_reassignments([tp]) == {}
    finally:
        await _unthrottle(admin, topic, brokers)
        await admin.delete_topics([topic])


async def test_describe_log_dirs_of_every_broker(
    admin: AIOKafkaAdminClient, kafka_cluster: KafkaCluster
) -> None:
    topic = f"admin-logdirs-{uuid.uuid4().hex[:8]}"
    await _create(admin, kafka_cluster, NewTopic(topic, 1, 3))
    tp = TopicPartition(topic, 0)
    # Each broker creates its replica when it applies the new topic from the
    # metadata log; poll until all three report it.
    for _ in range(100):
        dirs = await admin.describe_log_dirs(topic_partitions=[tp])
        holders = {
            n for n, per_dir in dirs.items() if any(tp in d.replicas for d in per_dir.values())
        }
        if len(holders) == 3:
            break
        await asyncio.sleep(0.1)
    assert sorted(dirs) == sorted(n.node_id for n in kafka_cluster.nodes)
    assert holders == set(dirs)
    cluster = await admin.describe_cluster()
    assert len(cluster.brokers) == 3 and cluster.controller_id is not None
    await admin.delete_topics([topic])


async def test_group_ops_follow_a_coordinator_failover(kafka_cluster: KafkaCluster) -> None:
    topic = f"admin-failover-{uuid.uuid4().hex[:8]}"
    group = f"admin-failover-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=40000
    ) as admin:
        await _create(admin, kafka_cluster, NewTopic(topic, 1, 3))
        await admin.alter_consumer_group_offsets(group, {tp: 5})
        (desc,) = await admin.describe_consumer_groups([group])
        coordinator = desc.coordinator
        assert coordinator is not None
        kafka_cluster.kill(coordinator)
        try:
            # The cached coordinator is gone: the request fails (connection refused,
            # then NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS from the others)
            # and is retried until the group's new coordinator answers.
            offsets = await admin.list_consumer_group_offsets(group)
            # Seen once in a CI-like run: right after the failover the new coordinator
            # answered OffsetFetch without error but with no partitions (the group's
            # state not loaded yet). The commit was written with acks=all, so it must
            # show up: wait for it, bounded.
            deadline = time.monotonic() + 20
            while tp not in offsets and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
                offsets = await admin.list_consumer_group_offsets(group)
            assert offsets[tp].offset == 5
            await admin.alter_consumer_group_offsets(group, {tp: 7})
            (moved,) = await admin.describe_consumer_groups([group])
            assert moved.error is None and moved.coordinator not in (None, coordinator)
            assert (await admin.list_consumer_group_offsets(group))[tp].offset == 7
        finally:
            kafka_cluster.restart(coordinator)
        await admin.delete_topics([topic])


async def test_describe_topic_partitions_reports_eligible_leader_replicas(
    admin: AIOKafkaAdminClient, kafka_cluster: KafkaCluster
) -> None:
    """KIP-966: with min.insync.replicas = 3, a follower fenced out of the ISR of a
    three-replica partition becomes an eligible leader replica (ELR). Only the
    DescribeTopicPartitions path carries it; Metadata's ISR agrees."""
    topic = f"admin-elr-{uuid.uuid4().hex[:8]}"
    await _create(
        admin, kafka_cluster, NewTopic(topic, 1, 3, topic_configs={"min.insync.replicas": "3"})
    )
    (before,) = await admin.describe_topic_partitions([topic])
    p = before.partitions[0]
    assert sorted(p.isr) == sorted(p.replicas) and len(p.replicas) == 3
    assert p.eligible_leader_replicas == []
    follower = next(r for r in p.replicas if r != p.leader)
    kafka_cluster.kill(follower)
    try:
        # The controller fences the follower after 6 s of silence.
        (after,) = await eventually(
            lambda: admin.describe_topic_partitions([topic]),
            lambda ds: follower not in ds[0].partitions[0].isr,
            40,
            0.5,
        )
        q = after.partitions[0]
        assert follower not in q.isr and len(q.isr) == 2
        assert q.eligible_leader_replicas == [follower]
        (meta,) = await admin.describe_topics([topic])
        assert sorted(meta.partitions[0].isr) == sorted(q.isr)
        assert meta.partitions[0].eligible_leader_replicas is None
    finally:
        kafka_cluster.restart(follower)
    await admin.delete_topics([topic])
