"""KIP-848 consumer group protocol against a real Kafka 4.x broker.

The membership (:class:`ConsumerProtocolMembership`) runs on a cluster client, a
subscription state and an offsets client, as the consumer facade wires it; records are
read by a manually assigned consumer over the partitions the membership holds.
Each test group gets a 500 ms heartbeat interval (a group config, KIP-848) so
rebalances finish in seconds; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.cluster import AIOKafkaClient
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.consumer.group.consumer_protocol import ConsumerProtocolMembership
from aiokafka.consumer.group.membership import MembershipHooks
from aiokafka.consumer.group.reconcile import MemberState
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import (
    CommitFailedError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
    UnsupportedVersionError,
)
from aiokafka.producer.producer import AIOKafkaProducer
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from tests.support.wait import wait_until
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]
WAIT = 60.0


class Log(ConsumerRebalanceListener):
    """Records every listener call as (what, partitions)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, frozenset[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.calls.append(("revoked", frozenset(revoked)))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.calls.append(("assigned", frozenset(assigned)))

    def on_partitions_lost(self, lost: list[TopicPartition]) -> None:
        self.calls.append(("lost", frozenset(lost)))


class Member:
    """A membership with its own client, subscription and offsets client."""

    def __init__(self, kafka: KafkaCluster, group: str, topics: list[str], **options: Any) -> None:
        options.setdefault("group_protocol", "consumer")
        self.config = ConsumerConfig.from_options(
            bootstrap_servers=kafka.bootstrap_servers, group_id=group, **options
        )
        self.client = AIOKafkaClient(self.config.client)
        self.subs = SubscriptionState("earliest")
        self.log = Log()
        self.subs.subscribe(topics, listener=self.log)
        self.topics = topics
        self.committed_on_revoke: list[TopicPartition] = []
        self.stopped: list[TopicPartition] = []
        self.offsets = OffsetsClient(self.client, group, self.config.group_instance_id)

        async def commit_revoked(tps: list[TopicPartition]) -> None:
            self.committed_on_revoke.extend(tps)

        self.membership = ConsumerProtocolMembership(
            self.client,
            self.subs,
            self.config,
            self.offsets,
            MembershipHooks(commit_revoked, self.stopped.extend),
        )

    async def start(self) -> Member:
        await self.client.start()
        await self.client.set_topics(self.topics)
        self.membership.start()
        return self

    async def close(self) -> None:
        await self.membership.close()
        await self.client.close()

    @property
    def assigned(self) -> frozenset[TopicPartition]:
        return self.subs.assigned_partitions()


async def fast_group(kafka: KafkaCluster, group: str, session_ms: int = 6000) -> None:
    """Shorter heartbeat interval and session timeout for one group (KIP-848 group configs)."""
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp("consumer.heartbeat.interval.ms", "500"),
                    AlterConfigOp("consumer.session.timeout.ms", str(session_ms)),
                ]
            }
        )


async def new_group(kafka: KafkaCluster, session_ms: int = 6000) -> str:
    group = f"kip848-{uuid.uuid4().hex[:10]}"
    await fast_group(kafka, group, session_ms)
    return group


async def produce(kafka: KafkaCluster, topic: str, partitions: int, per_partition: int) -> None:
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        futures = [
            await producer.send(topic, f"{p}-{i}".encode(), partition=p)
            for p in range(partitions)
            for i in range(per_partition)
        ]
        await asyncio.gather(*futures)


async def drain(kafka: KafkaCluster, member: Member) -> list[bytes]:
    """Read the member's partitions from the committed offset to the end and commit
    through the membership (member id + epoch)."""
    tps = sorted(member.assigned)
    if not tps:
        return []
    committed = await member.offsets.fetch_committed(tps)
    reader: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    await reader.start()
    try:
        reader.assign(tps)
        for tp in tps:
            c = committed.get(tp)
            reader.seek(tp, c.offset if c is not None else 0)
        ends = await reader.end_offsets(tps)
        values: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while [tp for tp in tps if await reader.position(tp) < ends[tp]]:
            assert time.monotonic() < deadline, "reading timed out"
            for records in (await reader.getmany(timeout_ms=500)).values():
                values.extend(r.value for r in records if r.value is not None)
        await member.membership.commit({tp: OffsetAndMetadata(ends[tp]) for tp in tps})
        return values
    finally:
        await reader.stop()


async def test_two_members_split_partitions_each_record_once(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=6)
    await produce(kafka, topic, 6, 10)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic]).start()
    b = await Member(kafka, group, [topic]).start()
    try:
        await wait_until(
            "a 3+3 split",
            lambda: (
                len(a.assigned) == 3
                and len(b.assigned) == 3
                and a.membership.state is MemberState.STABLE
                and b.membership.state is MemberState.STABLE
            ),
        )
        assert not a.assigned & b.assigned
        assert a.membership.member_epoch > 0 and b.membership.member_epoch > 0
        meta = a.membership.group_metadata()
        assert meta.generation_id == a.membership.member_epoch
        assert meta.member_id == a.membership.member_id and meta.group_id == group
        values = await drain(kafka, a) + await drain(kafka, b)
        assert sorted(values) == sorted(f"{p}-{i}".encode() for p in range(6) for i in range(10))
        # The commits went through with member id and epoch: the group has them.
        committed = await a.offsets.fetch_committed([TopicPartition(topic, p) for p in range(6)])
        assert {tp.partition: o.offset for tp, o in committed.items() if o} == dict.fromkeys(
            range(6), 10
        )
        # A second pass reads nothing: each record once.
        assert await drain(kafka, a) == [] and await drain(kafka, b) == []
    finally:
        await b.close()
        await a.close()


async def test_leaving_member_gives_only_its_partitions_to_the_other(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic]).start()
    try:
        assert await a.membership.wait_until_assigned(WAIT)
        await wait_until("a owns all four", lambda: len(a.assigned) == 4)
        everything = frozenset(TopicPartition(topic, p) for p in range(4))
        assert a.log.calls == [("assigned", everything)]
        b = await Member(kafka, group, [topic]).start()
        try:
            await wait_until(
                "a 2+2 split",
                lambda: (
                    len(a.assigned) == 2
                    and len(b.assigned) == 2
                    and b.membership.state is MemberState.STABLE
                ),
            )
            moved = b.assigned
            # Only the moved partitions were revoked (committed first, fetching stopped);
            # nothing was added (the assigned callback runs anyway, as in Java).
            assert a.log.calls[1:] == [("revoked", moved), ("assigned", frozenset())]
            assert set(a.committed_on_revoke) == moved == set(a.stopped)
            assert b.log.calls == [("assigned", moved)]
        finally:
            await b.close()
        await wait_until("a owns all four again", lambda: a.assigned == everything)
        await wait_until("a's assigned callback", lambda: len(a.log.calls) == 4)
        assert a.log.calls[3] == ("assigned", moved)
        assert b.membership.state is MemberState.UNSUBSCRIBED
    finally:
        await a.close()


async def test_static_member_restart_keeps_assignment_without_rebalance(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    group = await new_group(kafka, session_ms=30000)
    a = await Member(kafka, group, [topic], group_instance_id="static-a").start()
    b = await Member(kafka, group, [topic]).start()
    try:
        await wait_until(
            "a 2+2 split",
            lambda: (
                len(a.assigned) == 2
                and len(b.assigned) == 2
                and a.membership.state is MemberState.STABLE
                and b.membership.state is MemberState.STABLE
            ),
        )
        before = a.assigned
        b_calls = list(b.log.calls)
        b_epoch = b.membership.member_epoch
        await a.close()  # leaves with epoch -2: the coordinator keeps a's partitions
        # While a is away, the same instance id cannot join twice.
        a2 = await Member(kafka, group, [topic], group_instance_id="static-a").start()
        try:
            assert await a2.membership.wait_until_assigned(WAIT)
            await wait_until("a2 owns a's partitions", lambda: a2.assigned == before)
            await asyncio.sleep(2)  # several heartbeat intervals: b must see nothing
            assert b.log.calls == b_calls
            assert b.assigned != before and len(b.assigned) == 2
            assert b.membership.member_epoch == b_epoch
            dup = await Member(kafka, group, [topic], group_instance_id="static-a").start()
            try:
                with pytest.raises(UnreleasedInstanceIdError):
                    await dup.membership.wait_until_assigned(WAIT)
                assert dup.membership.state is MemberState.FATAL
            finally:
                await dup.close()
            assert a2.assigned == before
        finally:
            await a2.close()
    finally:
        await b.close()


async def committed_offset(member: Member, tp: TopicPartition) -> int | None:
    found = (await member.offsets.fetch_committed([tp]))[tp]
    return None if found is None else found.offset


async def test_commit_with_member_epoch_and_stale_epoch_fails(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic]).start()
    b: Member | None = None
    try:
        assert await a.membership.wait_until_assigned(WAIT)
        await wait_until("a owns both", lambda: len(a.assigned) == 2)
        old_epoch = a.membership.member_epoch
        for tp in a.assigned:
            await a.membership.commit({tp: OffsetAndMetadata(5, "m")})
            assert await committed_offset(a, tp) == 5
        b = await Member(kafka, group, [topic]).start()
        await wait_until(
            "a 1+1 split",
            lambda: (
                len(a.assigned) == 1
                and len(b is not None and b.assigned) == 1
                and a.membership.state is MemberState.STABLE
            ),
        )
        assert a.membership.member_epoch > old_epoch
        (kept,) = a.assigned
        (moved,) = b.assigned
        # The current epoch commits what the member owns.
        await a.membership.commit({kept: OffsetAndMetadata(6)})
        assert await committed_offset(a, kept) == 6
        # A zombie's commit: the epoch the member had when it owned the moved
        # partition is refused (Kafka 4.x accepts an older epoch only for partitions
        # still assigned since then), and so is an epoch from the future.
        current = a.membership.member_epoch
        for epoch in (old_epoch, current + 5):
            a.membership._machine.member_epoch = epoch
            try:
                with pytest.raises(CommitFailedError):
                    await a.membership.commit({moved: OffsetAndMetadata(8)})
            finally:
                a.membership._machine.member_epoch = current
        assert await committed_offset(a, moved) == 5
    finally:
        if b is not None:
            await b.close()
        await a.close()
    # Not a member any more: refused before anything is sent.
    with pytest.raises(CommitFailedError):
        await a.membership.commit({TopicPartition(topic, 0): 9})


async def test_fenced_member_loses_partitions_and_rejoins(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic]).start()
    try:
        assert await a.membership.wait_until_assigned(WAIT)
        await wait_until("a owns both", lambda: len(a.assigned) == 2)
        owned = a.assigned
        # A wrong epoch in the next heartbeat: the coordinator answers
        # FENCED_MEMBER_EPOCH, as after a missed session.
        a.membership._machine.member_epoch += 100
        await wait_until("partitions lost", lambda: ("lost", owned) in a.log.calls)
        await wait_until(
            "rejoined", lambda: a.assigned == owned and a.membership.state is MemberState.STABLE
        )
        lost_at = a.log.calls.index(("lost", owned))
        assert a.log.calls[lost_at + 1 :] == [("assigned", owned)]
        assert a.membership.member_epoch > 0
    finally:
        await a.close()


async def test_unsupported_server_assignor_is_fatal(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=1)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic], group_remote_assignor="no-such-assignor").start()
    try:
        with pytest.raises(UnsupportedAssignorError):
            await a.membership.wait_until_assigned(WAIT)
        assert a.membership.state is MemberState.FATAL
        a.membership.check_errors()  # raised once already
    finally:
        await a.close()


async def test_broker_without_consumer_protocol_says_use_classic(
    new_topic: NewTopic,
) -> None:
    # A broker that only speaks the classic protocol (as before Kafka 4.0).
    with KafkaCluster(
        listeners=["PLAINTEXT"],
        extra_config={"group.coordinator.rebalance.protocols": "classic"},
        label="kip848-classic-only",
    ).start() as classic_only:
        topic = new_topic(partitions=1, cluster=classic_only)
        a = await Member(classic_only, f"g-{uuid.uuid4().hex[:8]}", [topic]).start()
        try:
            with pytest.raises(UnsupportedVersionError, match='group_protocol="classic"'):
                await a.membership.wait_until_assigned(WAIT)
            assert a.membership.state is MemberState.FATAL
        finally:
            await a.close()
        c: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            bootstrap_servers=classic_only.bootstrap_servers,
            group_id="g-facade",
            group_protocol="consumer",
        )
        c.subscribe([topic])
        # Subscribed before start(): start() waits for the first assignment (as in
        # aiokafka), so it raises the error (and stops the consumer).
        with pytest.raises(UnsupportedVersionError, match='group_protocol="classic"'):
            await c.start()
        c = AIOKafkaConsumer(
            bootstrap_servers=classic_only.bootstrap_servers,
            group_id="g-facade",
            group_protocol="consumer",
        )
        await c.start()
        c.subscribe([topic])
        try:
            with pytest.raises(UnsupportedVersionError, match='group_protocol="classic"'):
                deadline = time.monotonic() + WAIT
                while time.monotonic() < deadline:
                    await c.getmany(timeout_ms=200)
        finally:
            await c.stop()


async def test_range_assignor_and_subscription_change(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    t1 = new_topic(partitions=2)
    t2 = new_topic(partitions=2)
    group = await new_group(kafka)
    a = await Member(kafka, group, [t1], group_remote_assignor="range").start()
    try:
        assert await a.membership.wait_until_assigned(WAIT)
        await wait_until("t1 assigned", lambda: {tp.topic for tp in a.assigned} == {t1})
        a.subs.change_subscription([t1, t2])
        await a.client.set_topics([t1, t2])
        a.membership.subscription_changed()
        await wait_until("t1+t2 assigned", lambda: len(a.assigned) == 4)
        assert a.log.calls[-1] == (
            "assigned",
            frozenset({TopicPartition(t2, 0), TopicPartition(t2, 1)}),
        )
        a.subs.change_subscription([t2])
        a.membership.subscription_changed()
        await wait_until("only t2", lambda: {tp.topic for tp in a.assigned} == {t2})
        assert ("revoked", frozenset({TopicPartition(t1, 0), TopicPartition(t1, 1)})) in (
            a.log.calls
        )
    finally:
        await a.close()


async def test_max_poll_interval_leaves_and_next_poll_rejoins(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = await new_group(kafka)
    a = await Member(kafka, group, [topic], max_poll_interval_ms=3000).start()
    b = await Member(kafka, group, [topic], max_poll_interval_ms=600000).start()

    async def keep_polling() -> None:
        while True:
            a.membership.poll_called()
            await asyncio.sleep(0.2)

    poller = asyncio.create_task(keep_polling())
    try:
        try:
            await wait_until("a 1+1 split", lambda: len(a.assigned) == 1 and len(b.assigned) == 1)
        finally:
            poller.cancel()
            await asyncio.wait({poller})
        a_owned = a.assigned
        # a never polls: after 3 s it leaves, its partition is lost, b gets both.
        await wait_until("a stale", lambda: a.membership.state is MemberState.STALE)
        assert ("lost", a_owned) in a.log.calls and a.assigned == frozenset()
        await wait_until("b owns both", lambda: len(b.assigned) == 2)
        a.membership.poll_called()
        await wait_until(
            "a back", lambda: len(a.assigned) == 1 and len(b.assigned) == 1, timeout=WAIT
        )
    finally:
        await b.close()
        await a.close()


# -- end to end through AIOKafkaConsumer(group_protocol="consumer") --------------------


def group_consumer(
    kafka: KafkaCluster, group: str, **config: Any
) -> AIOKafkaConsumer[bytes, bytes]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("fetch_max_wait_ms", 100)
    return AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        group_protocol="consumer",
        **config,
    )


async def poll_all(
    consumers: list[AIOKafkaConsumer[bytes, bytes]],
    what: str,
    done: Callable[[], bool],
    sink: dict[str, list[tuple[int, int]]] | None = None,
    names: list[str] | None = None,
    commit: bool = True,
) -> None:
    """Poll every consumer (records into ``sink[name]`` as (partition, offset)) until
    ``done()``; commits what each consumer read after every poll unless told not to."""
    deadline = time.monotonic() + WAIT
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        for i, c in enumerate(consumers):
            batch = await c.getmany(timeout_ms=200)
            if sink is not None and names is not None:
                for tp, records in batch.items():
                    sink[names[i]].extend((tp.partition, r.offset) for r in records)
            if batch and commit:
                await c.commit()


async def test_consumer_facade_two_members_each_record_once(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    await produce(kafka, topic, 4, 25)
    group = await new_group(kafka)
    logs = {"a": Log(), "b": Log()}
    a = group_consumer(kafka, group, enable_auto_commit=False)
    b = group_consumer(kafka, group, enable_auto_commit=False)
    a.subscribe([topic], listener=logs["a"])
    b.subscribe([topic], listener=logs["b"])
    seen: dict[str, list[tuple[int, int]]] = {"a": [], "b": []}
    await a.start()
    await b.start()
    try:
        await poll_all(
            [a, b],
            "both members own 2 partitions and everything is read",
            lambda: (
                len(a.assignment()) == 2
                and len(b.assignment()) == 2
                and len(seen["a"]) + len(seen["b"]) >= 100
            ),
            seen,
            ["a", "b"],
        )
        # Drain what is left, then check: every record once (no partition was read by
        # both members past the committed offsets).
        polls = iter(range(5))
        await poll_all(
            [a, b], "five more polls", lambda: next(polls, None) is None, seen, ["a", "b"]
        )
        every = seen["a"] + seen["b"]
        assert sorted(set(every)) == [(p, o) for p in range(4) for o in range(25)]
        assert len(every) == 100, "a record was delivered twice"
        assert a.assignment().isdisjoint(b.assignment())
        meta = a.group_metadata()
        assert meta.generation_id > 0 and meta.member_id
        committed = {p: await a.committed(TopicPartition(topic, p)) for p in range(4)}
        assert committed == dict.fromkeys(range(4), 25)
    finally:
        await b.stop()
        await a.stop()
    # A new member of the group starts at the committed offsets: nothing left.
    c = group_consumer(kafka, group)
    c.subscribe([topic])
    await c.start()
    try:
        await poll_all([c], "c owns everything", lambda: len(c.assignment()) == 4)
        assert await c.getmany(timeout_ms=1000) == {}
    finally:
        await c.stop()


async def test_consumer_facade_stop_moves_only_its_partitions(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    group = await new_group(kafka)
    log_a, log_b = Log(), Log()
    a = group_consumer(kafka, group)
    b = group_consumer(kafka, group)
    a.subscribe([topic], listener=log_a)
    b.subscribe([topic], listener=log_b)
    await a.start()
    try:
        await poll_all([a], "a owns all", lambda: len(a.assignment()) == 4)
        await b.start()
        try:
            await poll_all(
                [a, b],
                "2+2",
                lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2,
            )
            moved = frozenset(b.assignment())
            await poll_all([a, b], "b's callback", lambda: ("assigned", moved) in log_b.calls)
            assert ("revoked", moved) in log_a.calls
            assert all(kind != "revoked" or tps == moved for kind, tps in log_a.calls)
        finally:
            await b.stop()
        n = len(log_a.calls)
        await poll_all([a], "a owns all again", lambda: len(a.assignment()) == 4)
        await poll_all([a], "a's callback", lambda: len(log_a.calls) > n)
        assert log_a.calls[n:] == [("assigned", moved)]
    finally:
        await a.stop()


async def test_consumer_facade_static_member_restart(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    group = await new_group(kafka, session_ms=30000)
    log_b = Log()
    a = group_consumer(kafka, group, group_instance_id="facade-static")
    b = group_consumer(kafka, group)
    a.subscribe([topic])
    b.subscribe([topic], listener=log_b)
    await a.start()
    await b.start()
    try:
        await poll_all([a, b], "2+2", lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2)
        await poll_all([a, b], "settled", lambda: len(log_b.calls) >= 1)
        before, calls = frozenset(a.assignment()), list(log_b.calls)
        await a.stop()
        a = group_consumer(kafka, group, group_instance_id="facade-static")
        a.subscribe([topic])
        await a.start()
        await poll_all([a, b], "a back", lambda: frozenset(a.assignment()) == before)
        polls = iter(range(10))  # several heartbeat intervals
        await poll_all([a, b], "ten polls", lambda: next(polls, None) is None)
        assert log_b.calls == calls
    finally:
        await b.stop()
        await a.stop()


async def test_consumer_facade_pattern_subscription_picks_up_new_topics(
    kafka: KafkaCluster,
) -> None:
    prefix = f"kip848pat{uuid.uuid4().hex[:8]}"
    first = kafka.create_topic(f"{prefix}-a", 2, 1, None)
    group = await new_group(kafka)
    log = Log()
    c = group_consumer(kafka, group, metadata_max_age_ms=1000)
    c.subscribe(pattern=rf"{prefix}-.*", listener=log)
    await c.start()
    try:
        await poll_all([c], "first topic", lambda: {tp.topic for tp in c.assignment()} == {first})
        second = kafka.create_topic(f"{prefix}-b", 1, 1, None)
        await poll_all([c], "second topic", lambda: len(c.assignment()) == 3)
        assert c.subscription() == {first, second}
        assert ("assigned", frozenset({TopicPartition(second, 0)})) in log.calls
    finally:
        await c.stop()


async def test_coordinator_killed_members_find_the_new_one(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4, replication_factor=3, cluster=kafka_cluster)
    group = await new_group(kafka_cluster, session_ms=30000)
    a = await Member(kafka_cluster, group, [topic]).start()
    b = await Member(kafka_cluster, group, [topic]).start()
    victim: int | None = None
    try:

        def split() -> bool:
            return (
                len(a.assigned) == 2
                and len(b.assigned) == 2
                and not a.assigned & b.assigned
                and a.membership.state is MemberState.STABLE
                and b.membership.state is MemberState.STABLE
            )

        await wait_until("a 2+2 split", split)
        victim = await a.client.coordinator_for(group)
        epoch_before = a.membership.member_epoch
        kafka_cluster.kill(victim)
        # Heartbeats fail, the coordinator is looked up again (with back-off) and the
        # members carry on with the new one.
        await wait_until(
            "a heartbeat to a new coordinator",
            lambda: (
                a.membership.member_epoch >= epoch_before
                and a.membership._next_heartbeat > time.monotonic()
                and a.client.known_coordinator(group) not in (None, victim)
            ),
            timeout=90,
        )
        await wait_until("members stable again", split, timeout=90)
        a.membership.check_errors()  # no fatal error
        b.membership.check_errors()
    finally:
        await b.close()
        await a.close()
        if victim is not None:
            kafka_cluster.restart(victim)


async def test_consumer_facade_kept_partitions_keep_their_position(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    await produce(kafka, topic, 4, 10)
    group = await new_group(kafka)
    seen: dict[str, list[tuple[int, int]]] = {"a": [], "b": []}
    a = group_consumer(kafka, group, enable_auto_commit=False)
    b = group_consumer(kafka, group, enable_auto_commit=False)
    a.subscribe([topic])
    b.subscribe([topic])
    await a.start()
    try:
        # a alone reads everything and commits nothing.
        await poll_all([a], "a read all", lambda: len(seen["a"]) == 40, seen, ["a"], False)
        seen["a"].clear()
    except BaseException:
        await a.stop()
        raise
    await b.start()
    try:
        await poll_all(
            [a, b],
            "2+2 and b read its partitions",
            lambda: len(a.assignment()) == 2 and len(seen["b"]) == 20,
            seen,
            ["a", "b"],
            False,
        )
        # b starts from the (absent) committed offsets: everything of its partitions.
        b_parts = {tp.partition for tp in b.assignment()}
        assert sorted(seen["b"]) == [(p, o) for p in sorted(b_parts) for o in range(10)]
        # a's kept partitions kept their positions through the rebalance: nothing of
        # them was delivered again.
        kept = {tp.partition for tp in a.assignment()}
        assert not [r for r in seen["a"] if r[0] in kept]
        for tp in a.assignment():
            assert await a.position(tp) == 10
    finally:
        await b.stop()
        await a.stop()


class SlowRevoke(Log):
    """A revoke listener that takes longer than the session timeout."""

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:  # type: ignore[override]
        self.calls.append(("revoking", frozenset(revoked)))
        await asyncio.sleep(8)
        self.calls.append(("revoked", frozenset(revoked)))


async def test_heartbeats_continue_while_a_slow_listener_runs(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = await new_group(kafka, session_ms=6000)
    a = Member(kafka, group, [topic])
    a.log = SlowRevoke()
    a.subs.listener = a.log
    await a.start()
    b = await Member(kafka, group, []).start()  # subscribes later
    try:
        await wait_until("a owns both", lambda: len(a.assigned) == 2)
        b.subs.change_subscription([topic])
        await b.client.set_topics([topic])
        b.membership.subscription_changed()
        await wait_until("a revoking", lambda: a.log.calls[-1][0] == "revoking")
        # 8 s in the listener, longer than the 6 s session: still a member, because
        # the heartbeat task kept going (the rebalance timeout bounds the listener).
        await wait_until("1+1", lambda: len(a.assigned) == 1 and len(b.assigned) == 1)
        assert not [c for c in a.log.calls if c[0] == "lost"]
        assert a.membership.state in (MemberState.STABLE, MemberState.ACKNOWLEDGING)
        assert a.log.calls[-2][0] == "revoked"
    finally:
        await b.close()
        await a.close()
