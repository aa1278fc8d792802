"""Consumer groups with the classic protocol against a real broker.

Every wait is bounded; timeouts are generous because the machine is shared.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.consumer.group.assignors import RebalanceProtocol
from aiokafka.errors import FencedInstanceIdError, IllegalOperation
from aiokafka.structs import TopicPartition
from tests.support.wait import wait_until
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 500}


def produce(bootstrap: str, topic: str, values: Iterable[bytes], partitions: int) -> None:
    """Write records round-robin over ``partitions`` with confluent-kafka."""
    import confluent_kafka

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, v in enumerate(values):
        producer.produce(topic, value=v, partition=i % partitions)
    assert producer.flush(30) == 0


def group_consumer(kafka: KafkaCluster, group: str, **config: Any) -> AIOKafkaConsumer[Any, Any]:
    config.setdefault("auto_offset_reset", "earliest")
    config.setdefault("fetch_max_wait_ms", 100)
    for k, v in FAST.items():
        config.setdefault(k, v)
    return AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers, group_id=group, **config)


class Log(ConsumerRebalanceListener):
    """Records every callback as ``(kind, sorted partitions)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, list[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.events.append(("revoked", sorted(revoked)))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.events.append(("assigned", sorted(assigned)))

    def on_partitions_lost(self, lost: list[TopicPartition]) -> None:
        self.events.append(("lost", sorted(lost)))


async def poll_until(
    consumers: list[AIOKafkaConsumer[Any, Any]],
    what: str,
    predicate: Callable[[], bool],
    sink: list[tuple[str, int, int]] | None = None,
    timeout: float = 60.0,
) -> None:
    """Poll every consumer (so none hits max_poll_interval) until ``predicate()``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        for c in consumers:
            batch = await c.getmany(timeout_ms=50)
            if sink is not None:
                for tp, recs in batch.items():
                    sink.extend((tp.topic, tp.partition, r.offset) for r in recs)


async def test_two_members_share_partitions_range(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    produce(kafka.bootstrap_servers, topic, [b"%d" % i for i in range(200)], 4)
    log1, log2 = Log(), Log()
    # A session far longer than the waits below: c2's departure is only noticed in
    # time because stop() sends LeaveGroup.
    slow = {"session_timeout_ms": 120000, "partition_assignment_strategy": ["range"]}
    c1 = group_consumer(kafka, group, **slow)
    c2 = group_consumer(kafka, group, **slow)
    seen: list[tuple[str, int, int]] = []
    c1.subscribe([topic], listener=log1)
    await c1.start()
    try:
        await poll_until([c1], "c1 owns all", lambda: len(c1.assignment()) == 4, seen)
        c2.subscribe([topic], listener=log2)
        await c2.start()
        try:
            await poll_until(
                [c1, c2],
                "both own two",
                lambda: len(c1.assignment()) == 2 and len(c2.assignment()) == 2,
                seen,
            )
            assert c1.assignment() | c2.assignment() == {TopicPartition(topic, p) for p in range(4)}
            await poll_until([c1, c2], "all records", lambda: len(set(seen)) >= 200, seen)
            meta1, meta2 = c1.group_metadata(), c2.group_metadata()
            assert meta1.generation_id == meta2.generation_id >= 1
            assert meta1.member_id and meta2.member_id and meta1.member_id != meta2.member_id
        finally:
            await c2.stop()
        await poll_until(
            [c1], "c1 owns all again", lambda: len(c1.assignment()) == 4, seen, timeout=40
        )
    finally:
        await c1.stop()
    assert {(t, p, o) for t, p, o in seen} == {(topic, p, o) for p in range(4) for o in range(50)}
    # Eager: revoked everything before each join (nothing before the first, as in
    # aiokafka), then assigned.
    assert log1.events[:2] == [
        ("revoked", []),
        ("assigned", [TopicPartition(topic, p) for p in range(4)]),
    ]
    assert ("revoked", [TopicPartition(topic, p) for p in range(4)]) in log1.events
    assert log2.events[:1] == [("revoked", [])] and log2.events[1][0] == "assigned"


async def test_group_metadata_without_subscription(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    c = group_consumer(kafka, "g-meta-" + uuid.uuid4().hex[:6])
    await c.start()
    try:
        c.assign([TopicPartition(topic, 0)])
        meta = c.group_metadata()
        assert (meta.generation_id, meta.member_id) == (-1, "")
    finally:
        await c.stop()
    c2: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers)
    with pytest.raises(IllegalOperation):
        c2.group_metadata()


async def committed_offsets(kafka: KafkaCluster, group: str) -> dict[TopicPartition, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        found = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {tp: om.offset for tp, om in found.items() if om is not None}


class AsyncLog(Log):
    """The same log, with coroutine callbacks."""

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.events.append(("revoked", sorted(revoked)))

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.events.append(("assigned", sorted(assigned)))

    async def on_partitions_lost(self, lost: list[TopicPartition]) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.events.append(("lost", sorted(lost)))


class Member:
    """A consumer polling in its own task and recording what it gets."""

    def __init__(self, name: str, consumer: AIOKafkaConsumer[Any, Any]) -> None:
        self.name = name
        self.consumer = consumer
        self.records: list[tuple[TopicPartition, int]] = []
        self._task: asyncio.Task[None] | None = None
        self._running = False

    async def start(self) -> None:
        await self.consumer.start()
        self._running = True
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while self._running:
            batch = await self.consumer.getmany(timeout_ms=100)
            for tp, recs in batch.items():
                self.records.extend((tp, r.offset) for r in recs)

    async def stop(self) -> None:
        self._running = False
        if self._task is not None:
            await asyncio.wait_for(self._task, 30)
        await self.consumer.stop()


def stable(members: list[Member], partitions: set[TopicPartition]) -> bool:
    """Every member owns something, nobody shares, and all partitions are owned."""
    owned = [m.consumer.assignment() for m in members]
    union: set[TopicPartition] = set().union(*owned)
    return all(owned) and union == partitions and sum(map(len, owned)) == len(partitions)


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
async def test_members_join_and_leave(
    kafka: KafkaCluster, new_topic: NewTopic, assignor: str
) -> None:
    topic = new_topic(partitions=6)
    group = f"g-{assignor}-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(6)}
    per_round = 120

    def member(name: str) -> Member:
        c = group_consumer(
            kafka,
            group,
            partition_assignment_strategy=[assignor],
            auto_commit_interval_ms=500,
        )
        c.subscribe([topic])
        return Member(name, c)

    produced = 0

    def produce_round() -> None:
        nonlocal produced
        produce(kafka.bootstrap_servers, topic, [b"x"] * per_round, 6)
        produced += per_round

    a, b, c, d = member("a"), member("b"), member("c"), member("d")
    live = [a, b]
    a_last: dict[TopicPartition, int] = {}
    try:
        produce_round()
        await a.start()
        await b.start()
        await wait_until("a, b stable", lambda: stable(live, all_tps))
        produce_round()
        await c.start()
        live.append(c)
        await wait_until("a, b, c stable", lambda: stable(live, all_tps))
        produce_round()
        live.remove(a)
        await a.stop()
        # a's final commit (its partitions move on only after its LeaveGroup).
        a_last = await committed_offsets(kafka, group)
        await d.start()
        live.append(d)
        produce_round()
        await wait_until("b, c, d stable", lambda: stable(live, all_tps))
        produce_round()

        def consumed() -> set[tuple[TopicPartition, int]]:
            return {r for m in (a, b, c, d) for r in m.records}

        await wait_until("every record consumed", lambda: len(consumed()) == produced)
        ends = await b.consumer.end_offsets(sorted(all_tps))
        assert sum(ends.values()) == produced
        committed: dict[TopicPartition, int] = {}
        for _ in range(100):
            committed = await committed_offsets(kafka, group)
            if committed == ends:
                break
            await asyncio.sleep(0.3)
        assert committed == ends
    finally:
        for m in live:
            await m.stop()
    counts: dict[tuple[TopicPartition, int], int] = {}
    for m in (a, b, c, d):
        for r in m.records:
            counts[r] = counts.get(r, 0) + 1
    duplicates = {r for r, n in counts.items() if n > 1}
    # Only records the member that left consumed after its last commit may come twice.
    allowed = {(tp, o) for tp, o in a.records if o >= a_last.get(tp, 0)}
    assert duplicates <= allowed, sorted(duplicates - allowed)[:10]


async def test_cooperative_keeps_unmoved_partitions(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=6)
    group = f"g-coop-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(6)}
    logs = [Log(), AsyncLog(), Log()]
    members = []
    for i in range(3):
        c = group_consumer(kafka, group, partition_assignment_strategy=["cooperative-sticky"])
        c.subscribe([topic], listener=logs[i])
        members.append(Member(str(i), c))
    live: list[Member] = []
    try:
        for m in members:
            await m.start()
            live.append(m)
            await wait_until(f"{len(live)} stable", lambda: stable(live, all_tps))
        # Both follow-up rebalances of KIP-429 done: every member has its final share.
        await wait_until("2 each", lambda: all(len(m.consumer.assignment()) == 2 for m in live))
        # Let the last listener calls finish; then take assignments and logs together
        # (stopping members rebalances the others again).
        await asyncio.sleep(2)
        finals = [m.consumer.assignment() for m in members]
        events = [list(log.events) for log in logs]
    finally:
        for m in live:
            await m.stop()
    assert all(len(f) == 2 for f in finals)
    assert events[0][0] == ("assigned", sorted(all_tps))
    for log_events, final in zip(events, finals, strict=True):
        assert all(kind != "lost" for kind, _ in log_events), log_events
        revoked = [tp for kind, tps in log_events if kind == "revoked" for tp in tps]
        assigned = [tp for kind, tps in log_events if kind == "assigned" for tp in tps]
        # A partition is revoked at most once, never one the member keeps, and
        # on_partitions_assigned only names partitions the member did not have.
        assert sorted(revoked) == sorted(set(revoked))
        assert not final & set(revoked)
        assert sorted(assigned) == sorted(set(assigned))
        assert set(assigned) - set(revoked) == final, log_events
    # The first member kept two partitions through both rebalances and gave up four.
    assert len([tp for kind, tps in events[0] if kind == "revoked" for tp in tps]) == 4


async def test_static_member_restart_causes_no_rebalance(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=4)
    group = f"g-static-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(4)}
    log1 = Log()

    def static(instance: str, listener: ConsumerRebalanceListener | None = None) -> Member:
        c = group_consumer(kafka, group, group_instance_id=instance, session_timeout_ms=20000)
        c.subscribe([topic], listener=listener)
        return Member(instance, c)

    m1, m2 = static("s1", log1), static("s2")
    live = [m1]
    try:
        await m1.start()
        await wait_until("m1 owns all", lambda: stable(live, all_tps))
        await m2.start()
        live.append(m2)
        await wait_until("m1, m2 stable", lambda: stable(live, all_tps))
        before_events = list(log1.events)
        generation = m1.consumer.group_metadata().generation_id
        owned2 = m2.consumer.assignment()
        live.remove(m2)
        await m2.stop()  # static: no LeaveGroup
        m3 = static("s2")
        await m3.start()
        live.append(m3)
        await wait_until("m3 assigned", lambda: bool(m3.consumer.assignment()))
        assert m3.consumer.assignment() == owned2
        # Give a rebalance, if one were coming, time to show.
        await asyncio.sleep(3)
        assert log1.events == before_events
        assert m1.consumer.group_metadata().generation_id == generation
        assert m3.consumer.group_metadata().group_instance_id == "s2"
    finally:
        for m in live:
            await m.stop()


@pytest.mark.parametrize("partitions", [2, 1])
async def test_poll_timeout_leaves_and_next_poll_rejoins(
    kafka: KafkaCluster, new_topic: NewTopic, partitions: int
) -> None:
    # One partition for two members: the idle one owns nothing, and must still leave
    # when it stops polling and rejoin when it polls again.
    topic = new_topic(partitions=partitions)
    group = f"g-poll-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(partitions)}
    c1 = group_consumer(kafka, group, max_poll_interval_ms=3000)
    c2 = group_consumer(kafka, group, max_poll_interval_ms=3000)
    c1.subscribe([topic])
    c2.subscribe([topic])
    await c1.start()
    await c2.start()
    try:
        await poll_until(
            [c1, c2],
            "both joined",
            lambda: (
                c1.assignment() | c2.assignment() == all_tps
                and c1.group_metadata().generation_id == c2.group_metadata().generation_id
                and c2.group_metadata().generation_id > 0
                and c1.group_metadata().generation_id > 0
            ),
        )
        # The idle member owns nothing when there is one partition.
        busy, idle = (c1, c2) if len(c1.assignment()) >= len(c2.assignment()) else (c2, c1)
        assert len(idle.assignment()) == partitions - 1
        idle_id = idle.group_metadata().member_id
        generation = busy.group_metadata().generation_id
        # idle stops polling; busy keeps polling and sees the group rebalance.
        await poll_until(
            [busy],
            "idle left",
            lambda: (
                idle.group_metadata().member_id == ""
                and busy.group_metadata().generation_id > generation
                and busy.assignment() == all_tps
            ),
        )
        assert idle.assignment() == frozenset()
        await poll_until(
            [busy, idle],
            "idle back",
            lambda: (
                idle.group_metadata().member_id not in ("", idle_id)
                and busy.group_metadata().generation_id == idle.group_metadata().generation_id
                # Which member gets the one partition depends on the random member ids.
                and len(idle.assignment()) + len(busy.assignment()) == partitions
                and idle.assignment() | busy.assignment() == all_tps
            ),
        )
    finally:
        await c1.stop()
        await c2.stop()


async def test_stop_commits_and_leaves_no_tasks(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    group = f"g-stop-{uuid.uuid4().hex[:8]}"
    produce(kafka.bootstrap_servers, topic, [b"%d" % i for i in range(40)], 2)
    before = asyncio.all_tasks()
    c = group_consumer(kafka, group, auto_commit_interval_ms=600000)
    c.subscribe([topic])
    await c.start()
    got = 0
    try:
        deadline = asyncio.get_running_loop().time() + 60
        while got < 25 and asyncio.get_running_loop().time() < deadline:
            batch = await c.getmany(timeout_ms=100, max_records=5)
            got += sum(len(v) for v in batch.values())
        positions = {tp: await c.position(tp) for tp in c.assignment()}
    finally:
        await c.stop()
    assert got >= 25
    assert asyncio.all_tasks() == before
    committed = await committed_offsets(kafka, group)
    assert committed == {tp: p for tp, p in positions.items() if p > 0}
    assert sum(committed.values()) == got


async def test_partitions_lost_when_session_expires(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = f"g-lost-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(2)}
    log1, log2 = AsyncLog(), Log()
    c1 = group_consumer(kafka, group, session_timeout_ms=3000, heartbeat_interval_ms=300)
    c2 = group_consumer(kafka, group, session_timeout_ms=3000, heartbeat_interval_ms=300)
    c1.subscribe([topic], listener=log1)
    c2.subscribe([topic], listener=log2)
    await c1.start()
    await c2.start()
    try:
        await poll_until(
            [c1, c2],
            "shared",
            lambda: len(c1.assignment()) == 1 and len(c2.assignment()) == 1,
        )
        owned1 = sorted(c1.assignment())
        membership = c1._membership
        assert membership is not None
        # Silence c1's heartbeats (as a long GC pause or network partition would) until
        # the coordinator expires its session and gives everything to c2.
        original = membership._heartbeat_once  # type: ignore[attr-defined]

        async def silent(interval: float, retry: float) -> float:
            return interval

        membership._heartbeat_once = silent  # type: ignore[attr-defined]
        await poll_until([c1, c2], "c2 owns all", lambda: c2.assignment() == all_tps)
        membership._heartbeat_once = original  # type: ignore[attr-defined]
        await poll_until([c1, c2], "c1 notices", lambda: ("lost", owned1) in log1.events)
        await poll_until(
            [c1, c2],
            "shared again",
            lambda: len(c1.assignment()) == 1 and len(c2.assignment()) == 1,
        )
    finally:
        await c1.stop()
        await c2.stop()
    assert all(kind != "lost" for kind, _ in log2.events)


async def test_pattern_subscription_picks_up_new_topics(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    group = f"g-{prefix}"
    first = kafka.create_topic(f"{prefix}-a", 2, 1, None)
    c = group_consumer(kafka, group, metadata_max_age_ms=1000)
    c.subscribe(pattern=f"{prefix}-.*")
    await c.start()
    try:
        await poll_until([c], "first topic", lambda: {tp.topic for tp in c.assignment()} == {first})
        second = kafka.create_topic(f"{prefix}-b", 1, 1, None)
        await poll_until(
            [c], "second topic", lambda: {tp.topic for tp in c.assignment()} == {first, second}
        )
        assert c.subscription() == {first, second}
    finally:
        await c.stop()


async def test_mixed_eager_and_cooperative_members(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    # "range" first makes the second member eager (Java's rule); the group can only
    # agree on cooperative-sticky, which the cooperative member alone supports.
    topic = new_topic(partitions=4)
    group = f"g-mixed-{uuid.uuid4().hex[:8]}"
    all_tps = {TopicPartition(topic, p) for p in range(4)}
    produce(kafka.bootstrap_servers, topic, [b"m"] * 80, 4)
    coop = group_consumer(kafka, group, partition_assignment_strategy=["cooperative-sticky"])
    eager = group_consumer(
        kafka, group, partition_assignment_strategy=["range", "cooperative-sticky"]
    )
    log_coop, log_eager = Log(), Log()
    coop.subscribe([topic], listener=log_coop)
    eager.subscribe([topic], listener=log_eager)
    seen: list[tuple[str, int, int]] = []
    await coop.start()
    await eager.start()
    try:
        await poll_until(
            [coop, eager],
            "shared",
            lambda: (
                len(coop.assignment()) == 2
                and len(eager.assignment()) == 2
                and coop.assignment() | eager.assignment() == all_tps
            ),
            seen,
        )
        await poll_until([coop, eager], "all records", lambda: len(set(seen)) == 80, seen)
        assert coop._membership.rebalance_protocol is RebalanceProtocol.COOPERATIVE  # type: ignore[union-attr]
        assert eager._membership.rebalance_protocol is RebalanceProtocol.EAGER  # type: ignore[union-attr]
    finally:
        await coop.stop()
        await eager.stop()
    assert all(kind != "lost" for kind, _ in log_coop.events + log_eager.events)


async def test_fenced_static_member_gets_the_error(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    group = f"g-fenced-{uuid.uuid4().hex[:8]}"
    first = group_consumer(kafka, group, group_instance_id="same")
    second = group_consumer(kafka, group, group_instance_id="same")
    first.subscribe([topic])
    second.subscribe([topic])
    await first.start()
    try:
        await poll_until([first], "first joined", lambda: len(first.assignment()) == 2)
        await second.start()
        try:
            await poll_until([second], "second took over", lambda: len(second.assignment()) == 2)
            generation = second.group_metadata().generation_id
            # The first one's next heartbeat (or commit) finds it fenced: a poll raises.
            with pytest.raises(FencedInstanceIdError):
                await poll_until([first], "first fenced", lambda: False, timeout=30)
            assert first.assignment() == frozenset()
            # It stays out (no ping-pong with the new owner of the instance id).
            with pytest.raises(FencedInstanceIdError):
                await first.getmany(timeout_ms=100)
            await asyncio.sleep(3)
            assert len(second.assignment()) == 2
            assert second.group_metadata().generation_id == generation
        finally:
            await second.stop()
    finally:
        await first.stop()


async def test_commit_does_not_wait_behind_a_long_poll_fetch(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """A broker answers a connection's requests one at a time: a commit written behind
    a Fetch waiting fetch_max_wait_ms for data that never comes waited as long (faust
    found every commit taking 0.5 s, aiokafka 0.14 2 ms). Group coordination has a
    connection of its own (ConnectionGroup.COORDINATION), as in aiokafka and Java."""
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    c = group_consumer(kafka, f"g-{uuid.uuid4().hex[:8]}", fetch_max_wait_ms=5000)
    c.subscribe([topic])
    async with c:
        await wait_until("assigned", lambda: c.assignment() == {tp})
        assert await c.getmany(timeout_ms=300) == {}  # the fetcher now long-polls
        loop = asyncio.get_running_loop()
        took = []
        for _ in range(3):
            started = loop.time()
            await c.commit({tp: 0})
            took.append(loop.time() - started)
            await asyncio.sleep(0.2)
        assert max(took) < 2.0, took  # behind the fetch: about 5 s each
        nodes = c.metrics()["nodes"]
        assert any(str(n).startswith("coordination-") for n in nodes), nodes
