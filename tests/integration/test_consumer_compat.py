"""Consumer behaviour that aiokafka 0.14 code relies on (issue 19), against the real
broker: aiokafka's exception types and the order of its checks, stop semantics of
pending getone()/getmany() and of ``async for``, ``subscription()`` with a pattern,
rebalance listener arguments (sets, the first ``on_partitions_revoked(set())``) and
the ``ResourceWarning`` for a consumer dropped without ``stop()``."""

from __future__ import annotations

import asyncio
import gc
import re
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.errors import (
    ConsumerStoppedError,
    IllegalOperation,
    IllegalStateError,
    InvalidSessionTimeoutError,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from tests.support.wait import wait_until
from tools.kafka.rig import KafkaCluster

from .test_consumer_fetch import consumer, other_tasks, produce

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)


# -- item 2: exception types and the order of checks ----------------------------------


async def test_commit_without_group_raises_illegal_operation(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    tp = TopicPartition(new_topic(), 0)
    c = consumer(kafka)
    # aiokafka checks group_id first, before anything else (even before start()).
    with pytest.raises(IllegalOperation):
        await c.commit({tp: 1})
    async with c:
        c.assign([tp])
        await c.position(tp)
        with pytest.raises(IllegalOperation, match="group_id"):
            await c.commit({tp: 0})
        with pytest.raises(IllegalOperation):
            await c.commit()
        with pytest.raises(IllegalOperation):
            await c.committed(tp)
        # Assigned partition, no group: the missing group_id is the error.
        with pytest.raises(IllegalOperation):
            await c.seek_to_committed(tp)
        with pytest.raises(IllegalOperation):
            c.group_metadata()
    with pytest.raises(IllegalOperation):
        await c.commit({tp: 1})


async def test_seek_on_unassigned_partition_raises_illegal_state(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    for group_id in (None, f"g-{uuid.uuid4().hex[:8]}"):
        async with consumer(kafka, group_id=group_id, enable_auto_commit=False) as c:
            c.assign([tp0])
            # aiokafka checks the assignment before group_id: IllegalStateError, also
            # from seek_to_committed() without a group.
            for seek in (c.seek_to_beginning, c.seek_to_end, c.seek_to_committed):
                with pytest.raises(IllegalStateError, match="not assigned"):
                    await seek(tp1)
                with pytest.raises(TypeError):
                    await seek(1)  # type: ignore[arg-type]
            with pytest.raises(ValueError):
                c.seek(tp1, -1)
            with pytest.raises(IllegalStateError):
                c.seek(tp1, 0)
            # aiokafka's seek_to_beginning/end return whether the reset completed.
            assert await c.seek_to_beginning(tp0) is True
            assert await c.seek_to_end(tp0) is True
            assert await c.position(tp0) == 0


async def test_subscribe_argument_errors(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    async with consumer(kafka) as c:
        # aiokafka raises TypeError; ours raised ValueError: the error is both.
        for exc in (TypeError, ValueError):
            with pytest.raises(exc, match=r"topics.*pattern"):
                c.subscribe(topics=[topic], pattern="x.*")
            with pytest.raises(exc, match=r"topics.*pattern"):
                c.subscribe(topics=(), pattern=None)
        with pytest.raises(ValueError, match="pattern"):
            c.subscribe(pattern="^(bad(")
        with pytest.raises(TypeError):
            c.subscribe(topics=[topic], listener=object())  # type: ignore[arg-type]
        assert c.subscription() == set()


async def test_commit_argument_validation(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    """The checks of aiokafka's test_consumer_commit_validation, in its order."""
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    group = f"g-{uuid.uuid4().hex[:8]}"
    async with consumer(kafka, group_id=group, enable_auto_commit=False) as c:
        c.subscribe([topic])
        await wait_until("assigned", lambda: c.assignment() == {tp})
        offset = await c.position(tp)
        with pytest.raises(ValueError):
            await c.commit({})
        with pytest.raises(ValueError):
            await c.commit("something")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await c.commit({tp: (offset, "metadata", 100)})
        for exc in (TypeError, ValueError):
            with pytest.raises(exc, match="Key should be TopicPartition instance"):
                await c.commit({"my_topic": OffsetAndMetadata(offset, "")})  # type: ignore[dict-item]
            with pytest.raises(exc, match="Metadata should be a string"):
                await c.commit({tp: (offset, 1000)})
            with pytest.raises(exc, match="Metadata should be a string"):
                await c.commit({tp: (offset, b"\x00\x02")})
        with pytest.raises(IllegalStateError, match=r"Partition .* is not assigned"):
            await c.commit({TopicPartition(topic, 10): 1000})
        await c.commit({tp: (offset, "fine")})
        assert await c.committed(tp) == offset
        c.unsubscribe()
        with pytest.raises(IllegalStateError, match="Not subscribed to any topics"):
            await c.commit({tp: 1000})
    async with consumer(kafka, group_id=group) as c:
        c.subscribe([topic])
        # Subscribed, but the group has not assigned anything yet.
        with pytest.raises(IllegalStateError, match="No partitions assigned"):
            await c.commit({tp: 1000})


async def test_start_returns_with_the_subscribed_partitions_assigned(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """aiokafka's start() waits for the first assignment of a consumer subscribed to
    topics before it (so e.g. seek_to_beginning() right after it sees them)."""
    topic = new_topic(partitions=2)
    tps = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    produce(kafka.bootstrap_servers, topic, [b"r0", b"r1"])
    for group_id in (f"g-{uuid.uuid4().hex[:8]}", None):
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka.bootstrap_servers,
            group_id=group_id,
            auto_offset_reset="latest",
            enable_auto_commit=False,
        )
        async with c:
            assert c.assignment() == tps
            assert await c.seek_to_beginning() is True
            got = [(await asyncio.wait_for(c.getone(), 20)).value for _ in range(2)]
            assert got == [b"r0", b"r1"]


async def test_start_loads_the_metadata_of_assigned_topics(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """aiokafka's start() waits for the metadata of the topics assigned before it, so
    the first position look-up goes out as soon as it returns. FastStream's
    test_manual_partition_consume relies on that: a record written right after
    start() by a producer yet to learn the topic is consumed under
    auto_offset_reset="latest" (start() used to return first, and the look-up, a
    metadata round trip later, came after the record: the position skipped it)."""
    topic, other = new_topic(), new_topic()
    tp = TopicPartition(topic, 0)
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        # Connected to the broker, as FastStream's producer is by then: its first
        # send to ``topic`` takes a metadata and a produce round trip.
        await producer.send_and_wait(other, b"warm-up")
        c = consumer(kafka, auto_offset_reset="latest")
        c.assign([tp])
        async with c:
            assert c.partitions_for_topic(topic) == {0}
            await producer.send_and_wait(topic, b"first", partition=0)
            record = await asyncio.wait_for(c.getone(), 20)
            assert (record.offset, record.value) == (0, b"first")


async def test_start_with_a_missing_assigned_topic_waits_at_most_the_request_timeout(
    kafka: KafkaCluster,
) -> None:
    """The wait above is bounded by request_timeout_ms, and a topic still missing then
    is not an error of start() (aiokafka raised UnknownTopicOrPartitionError): the
    fetcher goes on waiting for it."""
    tp = TopicPartition(f"missing-{uuid.uuid4().hex[:8]}", 0)
    c = consumer(kafka, request_timeout_ms=1500)
    c.assign([tp])
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with c:
        assert 1.4 <= loop.time() - started < 10
        assert c.assignment() == {tp}
        assert await c.getmany(timeout_ms=200) == {}


async def test_start_raises_a_fatal_join_error(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    """aiokafka's test_consumer_invalid_session_timeout: the join's error comes out
    of start() (the broker's minimum session timeout here is 1000 ms)."""
    c = consumer(
        kafka,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        session_timeout_ms=200,
        heartbeat_interval_ms=100,
    )
    c.subscribe([new_topic()])
    with pytest.raises(InvalidSessionTimeoutError):
        await asyncio.wait_for(c.start(), 60)
    await c.stop()  # already stopped by the failed start(): a no-op
    with pytest.raises(ConsumerStoppedError):
        await c.getmany()


@pytest.mark.parametrize("call", ["getone", "getmany"])
async def test_get_from_a_partition_the_group_has_yet_to_assign(
    kafka: KafkaCluster, new_topic: NewTopic, call: str
) -> None:
    """aiokafka's test_consumer_cleanup_unassigned_data_*: after subscribe() the
    records of the old topic are dropped, and getone(tp)/getmany(tp) for a partition
    of the new one waits until the group assigns it (it raises after assign())."""
    first, second, third = new_topic(), new_topic(), new_topic()
    produce(kafka.bootstrap_servers, first, [b"1", b"2", b"3"])
    produce(kafka.bootstrap_servers, second, [b"5", b"6", b"7"])
    produce(kafka.bootstrap_servers, third, [b"8"])

    async def get(c: AIOKafkaConsumer[Any, Any], *tps: TopicPartition) -> bytes:
        if call == "getone":
            record = await asyncio.wait_for(c.getone(*tps), 30)
        else:
            batches = await c.getmany(*tps, timeout_ms=30000, max_records=1)
            ((record,),) = batches.values()
        return bytes(record.value)

    c = consumer(kafka, group_id=f"g-{uuid.uuid4().hex[:8]}", heartbeat_interval_ms=200)
    c.subscribe([first])
    async with c:
        assert await get(c) == b"1"
        c.subscribe([second])
        assert await get(c) == b"5"
        c.subscribe([third])
        assert await get(c, TopicPartition(third, 0)) == b"8"
        c.unsubscribe()
        c.assign([TopicPartition(first, 0)])
        with pytest.raises(IllegalStateError):
            await get(c, TopicPartition(third, 0))


# -- item 3: stop semantics -----------------------------------------------------------


async def test_pending_getmany_returns_empty_at_stop(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    tp = TopicPartition(new_topic(), 0)
    c = consumer(kafka)
    await c.start()
    c.assign([tp])
    task = asyncio.create_task(c.getmany(timeout_ms=30000))
    await asyncio.sleep(0.3)
    assert not task.done()
    await c.stop()
    # aiokafka: the interrupted call returns no records (the caller checks for stop
    # itself); every later call raises ConsumerStoppedError.
    assert await asyncio.wait_for(task, 10) == {}
    with pytest.raises(ConsumerStoppedError):
        await c.getmany(timeout_ms=10000)
    with pytest.raises(ConsumerStoppedError):
        await c.getmany(timeout_ms=0)


async def test_pending_getone_raises_at_stop(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    tp = TopicPartition(new_topic(), 0)
    c = consumer(kafka)
    await c.start()
    c.assign([tp])
    task = asyncio.create_task(c.getone())
    await asyncio.sleep(0.3)
    assert not task.done()
    await c.stop()
    with pytest.raises(ConsumerStoppedError):
        await asyncio.wait_for(task, 10)
    with pytest.raises(ConsumerStoppedError):
        await c.getone()


async def test_async_for_ends_at_stop_and_cannot_start_after(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    produce(kafka.bootstrap_servers, topic, [b"a", b"b"])
    c = consumer(kafka)
    await c.start()
    c.assign([tp])
    seen: list[bytes] = []

    async def iterate() -> None:
        async for record in c:
            seen.append(record.value)

    task = asyncio.create_task(iterate())
    await wait_until("both records read", lambda: len(seen) == 2)
    await c.stop()
    # An iteration in progress just ends (StopAsyncIteration inside __anext__)...
    await asyncio.wait_for(task, 10)
    assert seen == [b"a", b"b"]
    # ...but a new one on a stopped consumer raises, as aiokafka's __aiter__ does.
    with pytest.raises(ConsumerStoppedError):
        async for _ in c:
            pass


# -- item 7: subscription() with a pattern ---------------------------------------------


@pytest.mark.parametrize("group", [True, False], ids=["group", "no_group"])
async def test_pattern_subscription_follows_new_topics(kafka: KafkaCluster, group: bool) -> None:
    """aiokafka's test_consumer_subscribe_pattern_with_autocreate (and its
    no-group twin): subscription() is the matched topics, empty before any."""
    prefix = f"compat-pattern-{uuid.uuid4().hex[:8]}"
    async with consumer(
        kafka,
        group_id=f"g-{prefix}" if group else None,
        metadata_max_age_ms=200,
        fetch_max_wait_ms=50,
    ) as c:
        c.subscribe(pattern=f"^{re.escape(prefix)}-.*$")
        getter = asyncio.create_task(c.getone())
        try:
            await asyncio.sleep(0.3)
            assert not getter.done()
            assert c.subscription() == set()
            # aiokafka's test allows 0.3 s with metadata_max_age_ms=200; the machine
            # running this one may be loaded.
            first = await asyncio.to_thread(kafka.create_topic, f"{prefix}-1")
            await wait_until("first matched", lambda: c.subscription() == {first}, timeout=5)
            second = await asyncio.to_thread(kafka.create_topic, f"{prefix}-2")
            await wait_until(
                "second matched", lambda: c.subscription() == {first, second}, timeout=5
            )
            assert not getter.done()
            await wait_until(
                "both assigned",
                lambda: c.assignment() == {TopicPartition(first, 0), TopicPartition(second, 0)},
            )
            produce(kafka.bootstrap_servers, first, [b"test msg"])
            record = await asyncio.wait_for(getter, 20)
            assert (record.topic, record.value) == (first, b"test msg")
        finally:
            getter.cancel()
            await asyncio.wait([getter])


async def test_subscription_right_after_start_and_after_assign(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """aiokafka's test_exclude_internal_topics: a pattern subscribed before start()
    is matched when start() returns; after assign(), the assigned topics."""
    topic = new_topic()
    async with consumer(kafka, group_id=f"g-{uuid.uuid4().hex[:8]}") as c:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        assert c.subscription() == {topic}
        await c.commit({tp: 0})  # the broker creates __consumer_offsets
        c.unsubscribe()
        assert c.subscription() == set()
    pattern = f"^(__consumer_offsets|{re.escape(topic)})$"
    for exclude, expected in ((False, {topic, "__consumer_offsets"}), (True, {topic})):
        c = consumer(kafka, group_id=f"g-{uuid.uuid4().hex[:8]}", exclude_internal_topics=exclude)
        c.subscribe(pattern=pattern)
        async with c:
            assert c.subscription() == expected


# -- item 11: rebalance listener arguments ---------------------------------------------


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.assigned = asyncio.Event()

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append(("revoked", revoked))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append(("assigned", assigned))
        self.assigned.set()


async def test_listener_gets_sets_and_a_first_empty_revoke(kafka: KafkaCluster) -> None:
    """aiokafka's test_consumer_rebalance_on_new_topic, with the listener's calls
    checked: the classic (eager) member is told ``on_partitions_revoked(set())``
    before its first JoinGroup and before every later one, sets every time."""
    prefix = f"compat-rebalance-{uuid.uuid4().hex[:8]}"
    group = f"g-{prefix}"
    listeners = [RecordingListener(), RecordingListener()]
    consumers = [
        consumer(kafka, group_id=group, metadata_max_age_ms=200, heartbeat_interval_ms=100)
        for _ in listeners
    ]
    try:
        for c, listener in zip(consumers, listeners, strict=True):
            c.subscribe(pattern=f"^{re.escape(prefix)}-.*$", listener=listener)
            await c.start()
        for listener in listeners:
            await asyncio.wait_for(listener.assigned.wait(), 30)
        c1, c2 = consumers
        assert c1.assignment() == set() and c2.assignment() == set()
        # An empty assignment is an assignment: commit() commits nothing, as aiokafka.
        await c1.commit()
        for listener in listeners:
            assert listener.calls[0] == ("revoked", set())

        topic = await asyncio.to_thread(kafka.create_topic, f"{prefix}-1", 2)
        expected = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
        await wait_until(
            "the new topic's partitions are assigned",
            lambda: (
                c1.assignment() | c2.assignment() == expected
                # The last call, not any call: a member that has seen the new topic
                # may start one more rebalance, and mid-way its last call is a revoke
                # (an earlier ("assigned", set()) would match too early).
                and all(
                    lst.calls[-1] == ("assigned", c.assignment())
                    for c, lst in zip(consumers, listeners, strict=True)
                )
            ),
        )
        for c, listener in zip(consumers, listeners, strict=True):
            # Eager: every rebalance revokes what the member had (nothing until the
            # topic came), then assigns; a new set each time.
            kinds = [kind for kind, _ in listener.calls]
            assert kinds == ["revoked", "assigned"] * (len(kinds) // 2), listener.calls
            assert all(type(tps) is set for _, tps in listener.calls)
            assert listener.calls[-1] == ("assigned", c.assignment())
    finally:
        for c in consumers:
            await c.stop()


class CommittingListener(ConsumerRebalanceListener):
    """aiokafka's test_rebalance_listener_with_coroutines listener: commits in
    on_partitions_revoked, records the calls."""

    def __init__(self, consumer: AIOKafkaConsumer[Any, Any]) -> None:
        self.consumer = consumer
        self.revoked: list[set[TopicPartition]] = []
        self.assigned: list[set[TopicPartition]] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.revoked.append(revoked)
        await self.consumer.commit()
        await asyncio.sleep(0.2)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.assigned.append(assigned)
        await asyncio.sleep(0.2)


async def test_listener_calls_as_in_aiokafka(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    produce(kafka.bootstrap_servers, topic, [b"0", b"1"], partition=0)
    produce(kafka.bootstrap_servers, topic, [b"10", b"11"], partition=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    c1 = consumer(kafka, group_id=group, enable_auto_commit=False)
    c2 = consumer(kafka, group_id=group, enable_auto_commit=False)
    l1, l2 = CommittingListener(c1), CommittingListener(c2)
    c1.subscribe([topic], listener=l1)
    await c1.start()
    try:
        assert (await c1.getone(tp0)).value == b"0"
        assert (await c1.getone(tp1)).value == b"10"
        assert (l1.revoked, l1.assigned) == ([set()], [{tp0, tp1}])
        c2.subscribe([topic], listener=l2)
        await c2.start()  # the rebalance: c1 revokes both (committing 1 and 11)
        m1 = await asyncio.wait_for(c1.getone(), 20)
        m2 = await asyncio.wait_for(c2.getone(), 20)
        assert {m1.value, m2.value} == {b"1", b"11"}
        assert l1.revoked == [set(), {tp0, tp1}]
        assert l1.assigned == [{tp0, tp1}, c1.assignment()]
        assert (l2.revoked, l2.assigned) == ([set()], [c2.assignment()])
        assert c1.assignment() | c2.assignment() == {tp0, tp1}
    finally:
        await c2.stop()
        await c1.stop()


# -- item 8: unclosed consumer -----------------------------------------------------------


async def wait_assigned(c: AIOKafkaConsumer[Any, Any]) -> None:
    await wait_until("assigned", lambda: bool(c.assignment()))


async def test_unclosed_started_consumer_warns_and_is_released(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """As aiokafka: a started consumer garbage-collected without stop() gives a
    ResourceWarning (and a report to the loop's exception handler); stopped or never
    started ones give none. Beyond aiokafka, its tasks and connections are released."""
    topic = new_topic()
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    before = other_tasks()
    try:
        for group_id in (None, f"g-{uuid.uuid4().hex[:8]}"):
            c = consumer(kafka, group_id=group_id)
            await c.start()
            c.subscribe([topic])
            await wait_assigned(c)
            with pytest.warns(ResourceWarning, match="Unclosed AIOKafkaConsumer"):
                del c
                gc.collect()
        messages = [str(ctx.get("message")) for ctx in reported]
        assert sum(m.startswith("Unclosed AIOKafkaConsumer") for m in messages) == 2, messages
        await wait_until("the abandoned consumers' tasks ended", lambda: other_tasks() <= before)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stopped = consumer(kafka)
            await stopped.start()
            await stopped.stop()
            never_started = consumer(kafka)
            del stopped, never_started
            gc.collect()
        assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    finally:
        loop.set_exception_handler(previous)
