"""Admin calls that repair a cluster's state, against real brokers: find and abort a
hanging transaction (made on a node that lets one hang), fence a transactional id,
remove static members from a group, reset a group's offsets; and the metadata quorum's
description on one node and on three.

Each effect is proven by what clients then see (a read_committed consumer's last
stable offset, a fenced producer's failure, a group's members), not only by what the
call returned.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import (
    AbortTransactionSpec,
    AIOKafkaAdminClient,
    FencedProducer,
    IsolationLevel,
    OffsetSpec,
    QuorumInfo,
    RecordsToDelete,
)
from aiokafka.cluster import AIOKafkaClient
from aiokafka.errors import (
    ProducerFenced,
    UnknownMemberIdError,
    UnknownTopicOrPartitionError,
)
from aiokafka.protocol._gen.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition
from tests.conftest import START_TIMEOUT
from tests.support.wait import drain, eventually
from tools.kafka.rig import KafkaCluster


async def _end_offsets(admin: AIOKafkaAdminClient, tp: TopicPartition) -> tuple[int, int]:
    """(last stable offset, high watermark) of ``tp``."""
    stable = await admin.list_offsets(
        {tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED
    )
    high = await admin.list_offsets({tp: OffsetSpec.latest()})
    return stable[tp].offset, high[tp].offset


@pytest.fixture
async def open_transaction(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> AsyncIterator[tuple[AIOKafkaProducer, TopicPartition, str]]:
    """A transactional producer with one record written in a transaction left open
    (at offset 0 of a new topic); its coordinator would abort it only after a minute."""
    tp = TopicPartition(new_topic(), 0)
    txn_id = f"recovery-{uuid.uuid4().hex[:8]}"
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers,
        transactional_id=txn_id,
        transaction_timeout_ms=60000,
    )
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait(tp.topic, b"pending", partition=tp.partition)
        yield producer, tp, txn_id
    finally:
        # The transaction may be aborted or fenced already: stop() must still end.
        await asyncio.wait_for(producer.stop(), 60)


async def _read_committed(kafka: KafkaCluster, tp: TopicPartition) -> tuple[int, list[bytes]]:
    """Where a read_committed consumer from the start of ``tp`` gets to, and what it reads."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        values: list[bytes] = []
        for _ in range(4):
            for records in (await consumer.getmany(timeout_ms=500)).values():
                values.extend(r.value for r in records if r.value is not None)
        return await consumer.position(tp), values
    finally:
        await consumer.stop()


async def test_abort_transaction_releases_the_last_stable_offset(
    admin: AIOKafkaAdminClient,
    kafka: KafkaCluster,
    open_transaction: tuple[AIOKafkaProducer, TopicPartition, str],
) -> None:
    _, tp, _ = open_transaction
    (state,) = (await admin.describe_producers([tp]))[tp]
    assert state.current_txn_start_offset == 0
    # The open transaction holds read_committed readers at its first offset.
    assert await _end_offsets(admin, tp) == (0, 1)
    assert await _read_committed(kafka, tp) == (0, [])

    # Its coordinator tracks it (Ongoing, with this partition): not hanging, however old.
    assert await admin.find_hanging_transactions([tp], max_transaction_timeout_ms=0) == []

    await admin.abort_transaction(AbortTransactionSpec.of(tp, state))

    # The abort marker is offset 1; nothing is open any more, and the record is
    # skipped by read_committed readers, which now reach the end.
    ends = await eventually(lambda: _end_offsets(admin, tp), lambda e: e == (2, 2))
    assert ends == (2, 2)
    (after,) = (await admin.describe_producers([tp]))[tp]
    assert after.current_txn_start_offset == -1
    assert await _read_committed(kafka, tp) == (2, [])


@pytest.fixture(scope="module")
def kafka_unverified() -> Iterator[KafkaCluster]:
    """A node on the older transaction protocol (``transaction.version`` 1) without
    partition verification (KIP-890 part 1): it appends a transactional write to a
    partition the coordinator was never told of, which is how transactions came to
    hang before Kafka 3.6 and what KIP-664's tools repair."""
    cluster = KafkaCluster(
        1,
        listeners=["PLAINTEXT"],
        features={"transaction.version": 1},
        extra_config={"transaction.partition.verification.enable": "false"},
        label="hanging",
    ).start(timeout=START_TIMEOUT)
    yield cluster
    cluster.stop()


def _transactional_write(
    tp: TopicPartition, transactional_id: str, producer_id: int, producer_epoch: int
) -> ProduceRequest:
    builder = DefaultRecordBatchBuilder(
        is_transactional=True,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=0,
    )
    assert builder.append(0, None, None, b"untracked") is not None
    return ProduceRequest(
        transactional_id=transactional_id,
        acks=-1,
        timeout_ms=10000,
        topic_data=[
            TopicProduceData(
                name=tp.topic,
                partition_data=[PartitionProduceData(index=tp.partition, records=builder.build())],
            )
        ],
    )


async def test_find_and_abort_a_hanging_transaction(
    kafka_unverified: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    kafka = kafka_unverified
    topic = new_topic(partitions=2, cluster=kafka)
    tracked, hung = TopicPartition(topic, 0), TopicPartition(topic, 1)
    txn_id = f"hanging-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=15000
    ) as admin:
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka.bootstrap_servers, transactional_id=txn_id
        )
        await producer.start()
        try:
            await producer.begin_transaction()
            await producer.send_and_wait(topic, b"tracked", partition=tracked.partition)
            (state,) = (await admin.describe_producers([tracked]))[tracked]
            # The same producer id and epoch write to partition 1, behind the
            # coordinator's back.
            client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers)
            await client.start()
            try:
                request = _transactional_write(
                    hung, txn_id, state.producer_id, state.producer_epoch
                )
                # Produce v12+ asks the broker to add the partition to the
                # transaction itself (KIP-890 part 2); v11 does not.
                response = await client.send(kafka.nodes[0].node_id, request, max_version=11)
                ((answer,),) = [t.partition_responses for t in response.responses]
                assert answer.error_code == 0, answer
            finally:
                await client.close()
            # The abort writes markers only where the coordinator knows of: partition 0.
            await producer.abort_transaction()
        finally:
            await producer.stop()

        # The coordinator writes its markers just after EndTxn returns.
        ends = await eventually(lambda: _end_offsets(admin, tracked), lambda e: e == (2, 2))
        assert ends == (2, 2)
        assert await _end_offsets(admin, hung) == (0, 1)
        # Younger than the brokers' 15-minute maximum: not reported by default.
        assert await admin.find_hanging_transactions([tracked, hung]) == []
        found = await admin.find_hanging_transactions([tracked, hung], max_transaction_timeout_ms=0)
        assert [
            (h.topic_partition, h.producer_id, h.transactional_id, h.start_offset) for h in found
        ] == [(hung, state.producer_id, txn_id, 0)]
        # By default every partition of every topic is looked at.
        assert await admin.find_hanging_transactions(max_transaction_timeout_ms=0) == found

        await admin.abort_transaction(found[0].spec())
        ends = await eventually(lambda: _end_offsets(admin, hung), lambda e: e == (2, 2))
        assert ends == (2, 2)
        assert await _read_committed(kafka, hung) == (2, [])
        assert await admin.find_hanging_transactions([hung], max_transaction_timeout_ms=0) == []
        with pytest.raises(ValueError, match="max_transaction_timeout_ms"):
            await admin.find_hanging_transactions([hung], max_transaction_timeout_ms=-1)


async def test_abort_transaction_refuses_bad_input(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    tp = TopicPartition(new_topic(), 0)
    with pytest.raises(TypeError, match="spec must be an AbortTransactionSpec"):
        await admin.abort_transaction((tp, 1, 0, 0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="topic_partition"):
        AbortTransactionSpec((tp.topic, 0), 1, 0, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="producer_epoch"):
        AbortTransactionSpec(tp, 1, 40000, 0)
    with pytest.raises(ValueError, match="producer_id"):
        AbortTransactionSpec(tp, -1, 0, 0)
    with pytest.raises(UnknownTopicOrPartitionError, match=rf"{tp.topic}\[5\]"):
        await admin.abort_transaction(AbortTransactionSpec(TopicPartition(tp.topic, 5), 1, 0, 0))


async def test_fence_producers_fails_the_running_producer(
    admin: AIOKafkaAdminClient,
    kafka: KafkaCluster,
    open_transaction: tuple[AIOKafkaProducer, TopicPartition, str],
) -> None:
    producer, tp, txn_id = open_transaction
    before = (await admin.describe_transactions([txn_id]))[txn_id]
    assert before.state == "Ongoing"

    fenced = await admin.fence_producers([txn_id])
    assert list(fenced) == [txn_id]
    assert fenced[txn_id].producer_id == before.producer_id
    assert fenced[txn_id].producer_epoch > before.producer_epoch

    # The fenced producer can no longer commit what it wrote...
    with pytest.raises(ProducerFenced):
        await producer.commit_transaction()
    # ...and the coordinator aborted it: read_committed readers pass over it.
    ends = await eventually(lambda: _end_offsets(admin, tp), lambda e: e[0] == e[1] >= 2)
    assert ends[0] == ends[1] >= 2, ends
    position, values = await _read_committed(kafka, tp)
    assert (position, values) == (ends[1], [])

    # An id never used gets a producer id of its own, as a new producer would.
    fresh = f"recovery-fresh-{uuid.uuid4().hex[:8]}"
    got = await admin.fence_producers([fresh])
    assert isinstance(got[fresh], FencedProducer) and got[fresh].producer_id >= 0
    assert got[fresh].producer_id != before.producer_id

    with pytest.raises(ValueError, match="transactional_ids"):
        await admin.fence_producers(txn_id)
    with pytest.raises(ValueError, match="timeout_ms"):
        await admin.fence_producers([txn_id], timeout_ms=0)


async def _static_members(
    kafka: KafkaCluster, topic: str, group: str, instances: list[str]
) -> None:
    """Join ``group`` as these static members together, then stop them without leaving
    (a static member sends no LeaveGroup, so the group keeps them)."""
    consumers = [
        AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka.bootstrap_servers,
            group_id=group,
            group_instance_id=instance,
            session_timeout_ms=45000,
            enable_auto_commit=False,
        )
        for instance in instances
    ]
    try:
        for consumer in consumers:
            await consumer.start()
        for _ in range(60):
            await asyncio.gather(*(c.getmany(timeout_ms=300) for c in consumers))
            if sum(len(c.assignment()) for c in consumers) == len(instances):
                break
        assert [len(c.assignment()) for c in consumers] == [1] * len(instances)
    finally:
        for consumer in consumers:
            await consumer.stop()


async def test_remove_static_members_from_group(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=3)
    group = f"recovery-group-{uuid.uuid4().hex[:8]}"
    await _static_members(kafka, topic, group, ["a", "b", "c"])

    async def instances() -> list[str]:
        (described,) = await admin.describe_consumer_groups([group], raise_errors=True)
        return sorted(m.group_instance_id or "" for m in described.members)

    # Stopped static members stay in the group until their session times out.
    assert await eventually(instances, lambda got: got == ["a", "b", "c"]) == ["a", "b", "c"]

    await admin.remove_members_from_consumer_group(group, ["a"], reason="host retired")
    assert await instances() == ["b", "c"]
    with pytest.raises(UnknownMemberIdError, match="'a'"):
        await admin.remove_members_from_consumer_group(group, ["a", "b"])
    assert await instances() == ["c"]  # "b" was removed all the same
    # Without names: every member the group has now.
    await admin.remove_members_from_consumer_group(group)
    assert await instances() == []
    (described,) = await admin.describe_consumer_groups([group], raise_errors=True)
    assert described.state == "Empty"
    await admin.remove_members_from_consumer_group(group)  # none left: nothing to do

    with pytest.raises(TypeError, match="group_instance_ids"):
        await admin.remove_members_from_consumer_group(group, "a")
    with pytest.raises(ValueError, match="group_instance_ids"):
        await admin.remove_members_from_consumer_group(group, [""])


async def test_remove_members_kicks_a_running_dynamic_member(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = f"recovery-dynamic-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        for _ in range(60):
            await consumer.getmany(timeout_ms=500)
            if consumer.assignment():
                break
        first = consumer.group_metadata().member_id
        assert first and consumer.assignment()

        await admin.remove_members_from_consumer_group(group)

        # The member learns it was removed at its next heartbeat and joins again
        # under a new member id; the group never lists the old one again.
        async def member_ids() -> list[str]:
            (described,) = await admin.describe_consumer_groups([group], raise_errors=True)
            return [m.member_id for m in described.members]

        async def rejoined() -> list[str]:
            await consumer.getmany(timeout_ms=200)
            return await member_ids()

        ids = await eventually(rejoined, lambda got: len(got) == 1 and got[0] != first, 30)
        assert len(ids) == 1 and ids[0] != first, (first, ids)
        assert consumer.group_metadata().member_id == ids[0]
    finally:
        await consumer.stop()


async def test_reset_consumer_group_offsets(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    base = 1_700_000_000_000
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(10):
            await producer.send(topic, b"%d" % i, partition=0, timestamp_ms=base + 1000 * i)
        await producer.send_and_wait(topic, b"only", partition=1, timestamp_ms=base)
    await admin.delete_records({p0: RecordsToDelete(2)})  # p0 now spans offsets 2..10
    group = f"recovery-reset-{uuid.uuid4().hex[:8]}"
    await admin.alter_consumer_group_offsets(group, {p0: 5, p1: 0})

    async def committed() -> dict[TopicPartition, int]:
        return {tp: o.offset for tp, o in (await admin.list_consumer_group_offsets(group)).items()}

    cases: list[tuple[OffsetSpec | int, int]] = [
        (OffsetSpec.earliest(), 2),
        (OffsetSpec.latest(), 10),
        (OffsetSpec.for_timestamp(base + 7000), 7),
        (OffsetSpec.for_timestamp(base + 60_000), 10),  # after the last record: latest
        (OffsetSpec.max_timestamp(), 9),
        (0, 2),  # below the earliest: clamped up
        (100, 10),  # past the end: clamped down
        (6, 6),
    ]
    for target, want in cases:
        got = await admin.reset_consumer_group_offsets(group, {p0: target, p1: OffsetSpec.latest()})
        assert got == {p0: want, p1: 1}, target
        assert await committed() == {p0: want, p1: 1}, target

    # A member of the group starts where the reset put it.
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        records = await drain(consumer, 4, timeout=30)
        assert sorted((r.partition, r.offset) for r in records) == [(0, 6), (0, 7), (0, 8), (0, 9)]
        # Not while the group has an active member.
        with pytest.raises(UnknownMemberIdError):
            await admin.reset_consumer_group_offsets(group, {p0: OffsetSpec.earliest()})
    finally:
        await consumer.stop()

    with pytest.raises(TypeError, match="OffsetSpec or an int"):
        await admin.reset_consumer_group_offsets(group, {p0: "earliest"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=">= 0"):
        await admin.reset_consumer_group_offsets(group, {p0: -1})
    with pytest.raises(TypeError, match="TopicPartition"):
        await admin.reset_consumer_group_offsets(group, {(topic, 0): 1})  # type: ignore[dict-item]
    assert await admin.reset_consumer_group_offsets(group, {}) == {}


def _check_quorum(info: QuorumInfo, voters: set[int]) -> None:
    assert {v.replica_id for v in info.voters} == voters
    assert info.leader_id in voters and info.leader_epoch >= 1
    assert info.high_watermark > 0
    for v in info.voters:
        assert 0 < v.log_end_offset
    (leader,) = [v for v in info.voters if v.replica_id == info.leader_id]
    assert leader.log_end_offset >= info.high_watermark
    # v2 (Kafka 3.9+) lists every voter's controller endpoints.
    assert set(info.nodes) == voters
    for node in info.nodes.values():
        assert node.endpoints and all(
            isinstance(host, str) and port > 0 for host, port in node.endpoints.values()
        )


async def test_describe_metadata_quorum_single_node(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    _check_quorum(await admin.describe_metadata_quorum(), {n.node_id for n in kafka.nodes})


async def test_describe_metadata_quorum_three_nodes(kafka_cluster: KafkaCluster) -> None:
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=15000
    ) as admin:
        # Followers report a fetch time once they fetched from the leader.
        info = await eventually(
            admin.describe_metadata_quorum,
            lambda i: all(v.last_fetch_timestamp is not None for v in i.voters),
        )
        _check_quorum(info, {n.node_id for n in kafka_cluster.nodes})
        assert all(v.last_caught_up_timestamp is not None for v in info.voters)
