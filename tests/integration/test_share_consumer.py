"""AIOKafkaShareConsumer against the rig's Kafka (share groups are on by default in 4.x)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections import Counter
from collections.abc import Callable

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.errors import ConsumerStoppedError, IllegalStateError, InvalidRecordStateError
from aiokafka.share import AIOKafkaShareConsumer, ShareConsumerRecord
from aiokafka.structs import TopicPartition

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:  # Python 3.10
    from async_timeout import timeout


async def _produce(bootstrap: str, topic: str, n: int, *, one_per_batch: bool = False) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(n):
            sent = await producer.send(topic, str(i).encode())
            if one_per_batch:
                # The broker acquires whole batches: small batches let members share.
                await sent
        await producer.flush()


def _group() -> str:
    return f"share-{uuid.uuid4().hex[:8]}"


async def _group_configs(bootstrap: str, group: str, **configs: str) -> None:
    # Group configs (KIP-932) through incremental alter configs on a GROUP resource.
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource(ConfigResourceType.GROUP, group): [
                    AlterConfigOp(name.replace("_", "."), value) for name, value in configs.items()
                ]
            }
        )


async def _set_earliest(bootstrap: str, group: str) -> None:
    await _group_configs(bootstrap, group, share_auto_offset_reset="earliest")


async def test_one_member_receives_and_accepts(kafka, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 10)
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as c:
        got: list[ShareConsumerRecord[bytes, bytes]] = []
        async with timeout(30):
            while len(got) < 10:
                for recs in (await c.getmany(timeout_ms=1000)).values():
                    got.extend(recs)
        assert sorted(int(r.value) for r in got) == list(range(10))
        assert all(r.delivery_count == 1 for r in got)
        results = await c.commit()
        assert results and all(e is None for e in results.values())


async def _drain(
    c: AIOKafkaShareConsumer, want: int, seconds: float = 40
) -> list[ShareConsumerRecord[bytes, bytes]]:
    got: list[ShareConsumerRecord[bytes, bytes]] = []
    async with timeout(seconds):
        while len(got) < want:
            for recs in (await c.getmany(timeout_ms=500)).values():
                got.extend(recs)
    return got


async def test_several_members_accept_each_record_once(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    n = 300
    await _produce(kafka.bootstrap_servers, topic, n, one_per_batch=True)
    members = [
        AIOKafkaShareConsumer(
            topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers, max_poll_records=10
        )
        for _ in range(3)
    ]
    for m in members:
        await m.start()
    seen: Counter[int] = Counter()
    per_member: list[int] = [0, 0, 0]
    done = asyncio.Event()

    async def work(i: int, m: AIOKafkaShareConsumer) -> None:
        while not done.is_set():
            batch = await m.getmany(timeout_ms=300)
            for recs in batch.values():
                for r in recs:
                    seen[int(r.value)] += 1
                    per_member[i] += 1
            await m.commit()
            if sum(seen.values()) >= n:
                done.set()
            await asyncio.sleep(0.01)  # "work", so the others get a turn

    try:
        # Work starts once all have joined, or the first could drain the topic alone.
        async with timeout(30):
            while not all(m.assignment() for m in members):  # noqa: ASYNC110 - no event
                await asyncio.sleep(0.05)
        async with timeout(60):
            await asyncio.gather(*(work(i, m) for i, m in enumerate(members)))
    finally:
        for m in members:
            await m.stop()
    assert sorted(seen) == list(range(n))
    assert all(count == 1 for count in seen.values())
    # The work was shared: more than one member got records.
    assert sum(1 for c in per_member if c) >= 2, per_member


async def test_release_redelivers_with_growing_delivery_count(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 1)
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    ) as c:
        counts = []
        for _ in range(3):
            (record,) = await _drain(c, 1)
            counts.append(record.delivery_count)
            c.acknowledge(record, "release")
            results = await c.commit()
            assert list(results.values()) == [None]
        assert counts == [1, 2, 3]
        (record,) = await _drain(c, 1)
        c.acknowledge(record, "accept")
        assert all(e is None for e in (await c.commit()).values())
        assert await c.getmany(timeout_ms=1500) == {}


async def test_reject_is_never_redelivered_and_explicit_mode_enforced(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 2)
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    ) as c:
        records = await _drain(c, 2)
        with pytest.raises(IllegalStateError):
            await c.getmany(timeout_ms=100)
        c.acknowledge(records[0], "reject")
        c.acknowledge(records[1], "release")
        with pytest.raises(IllegalStateError):
            c.acknowledge(records[1], "accept")  # already acknowledged
        await c.commit()
        (again,) = await _drain(c, 1)
        assert again.offset == records[1].offset and again.delivery_count == 2
        c.acknowledge(again)
        await c.commit()
        assert await c.getmany(timeout_ms=1500) == {}


async def test_delivery_count_limit_archives_record(kafka, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    group = _group()
    await _group_configs(
        kafka.bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_delivery_count_limit="2",
    )
    await _produce(kafka.bootstrap_servers, topic, 1)
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    ) as c:
        for expected in (1, 2):
            (record,) = await _drain(c, 1)
            assert record.delivery_count == expected
            c.acknowledge(record, "release")
            await c.commit()
        # Two deliveries used up: the broker archived it.
        assert await c.getmany(timeout_ms=2000) == {}


_WORKER = """
import asyncio, sys
from aiokafka.share import AIOKafkaShareConsumer

async def main():
    c = AIOKafkaShareConsumer(sys.argv[2], group_id=sys.argv[3], bootstrap_servers=sys.argv[1],
                              acknowledgement_mode="explicit")
    await c.start()
    while True:
        batch = await c.getmany(timeout_ms=500)
        offsets = [r.offset for recs in batch.values() for r in recs]
        if offsets:
            print(" ".join(map(str, offsets)), flush=True)
            await asyncio.sleep(3600)  # holds its records until killed

asyncio.run(main())
"""


async def test_killed_member_loses_its_records_after_the_lock(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _group_configs(
        kafka.bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_record_lock_duration_ms="2000",
    )
    await _produce(kafka.bootstrap_servers, topic, 5)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WORKER,
        kafka.bootstrap_servers,
        topic,
        group,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        held = [int(x) for x in line.split()]
        if not held:
            proc.kill()
            assert proc.stderr is not None
            pytest.fail((await proc.stderr.read()).decode()[-2000:])
    finally:
        proc.kill()
        await proc.wait()
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as c:
        got = await _drain(c, 5)
    by_offset = {r.offset: r.delivery_count for r in got}
    assert sorted(by_offset) == list(range(5))
    assert all(by_offset[o] == 2 for o in held)


async def test_share_group_beside_consumer_group(kafka, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 20)
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as sc:
        shared = await _drain(sc, 20)
    async with AIOKafkaConsumer(
        topic,
        group_id=f"classic-{group}",
        bootstrap_servers=kafka.bootstrap_servers,
        auto_offset_reset="earliest",
    ) as cc:
        normal = []
        async with timeout(30):
            while len(normal) < 20:
                for recs in (await cc.getmany(timeout_ms=500)).values():
                    normal.extend(recs)
    # Each group reads the whole topic independently.
    assert sorted(r.offset for r in shared) == sorted(r.offset for r in normal) == list(range(20))


async def test_getone_and_async_for_hand_out_each_record_once(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 6)  # one batch: the broker sends all 6
    async with AIOKafkaShareConsumer(
        topic, group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as c:
        async with timeout(30):
            first = [await c.getone() for _ in range(3)]
            rest = []
            async for record in c:
                rest.append(record)
                if len(rest) == 3:
                    break
        assert [r.offset for r in first + rest] == list(range(6))
        assert list((await c.commit()).values()) == [None]
        assert await c.getmany(timeout_ms=1000) == {}


async def test_acknowledgement_after_the_lock_expired_is_reported(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _group_configs(
        kafka.bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_record_lock_duration_ms="1000",
    )
    await _produce(kafka.bootstrap_servers, topic, 1)
    reported: list[dict[TopicPartition, Exception | None]] = []
    async with AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
        acknowledgement_commit_callback=reported.append,
    ) as c:
        (record,) = await _drain(c, 1)
        await asyncio.sleep(3)  # the 1 s lock runs out: the record is available again
        c.acknowledge(record, "accept")
        results = await c.commit()
        (error,) = results.values()
        assert isinstance(error, InvalidRecordStateError), results
        assert reported == [results]
        # The broker delivers it again.
        (again,) = await _drain(c, 1)
        assert again.offset == record.offset and again.delivery_count == 2
        c.acknowledge(again)
        assert list((await c.commit()).values()) == [None]


async def test_subscribe_and_unsubscribe_change_the_assignment(
    kafka, new_topic: Callable[..., str]
) -> None:
    first, second = new_topic(), new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, first, 2)
    await _produce(kafka.bootstrap_servers, second, 3)
    async with AIOKafkaShareConsumer(
        group_id=group, bootstrap_servers=kafka.bootstrap_servers
    ) as c:
        assert c.subscription() == frozenset()
        c.subscribe([first])
        assert {r.topic for r in await _drain(c, 2)} == {first}
        c.subscribe([second])
        got = await _drain(c, 3)
        assert {r.topic for r in got} == {second}
        assert c.assignment() == frozenset({TopicPartition(second, 0)})
        c.unsubscribe()
        async with timeout(30):
            while c.assignment():  # noqa: ASYNC110 - no event to wait on
                await asyncio.sleep(0.1)
        assert await c.getmany(timeout_ms=500) == {}


async def test_a_raising_acknowledgement_callback_loses_no_record(
    kafka, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 6, one_per_batch=True)
    calls = 0

    def callback(results: dict[TopicPartition, Exception | None]) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("callback failed")

    c = AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_commit_callback=callback,
        max_poll_records=1,  # one batch of one record per ShareFetch
    )
    await c.start()
    got: list[ShareConsumerRecord[bytes, bytes]] = []
    raised = 0
    try:
        async with timeout(40):
            while len(got) < 6:
                try:
                    batch = await c.getmany(timeout_ms=500)
                except RuntimeError:
                    # The poll that carried the previous records' acknowledgements
                    # may also have fetched: those records come with the next poll.
                    raised += 1
                    continue
                for recs in batch.values():
                    got.extend(recs)
    finally:
        with pytest.raises(RuntimeError, match="callback failed"):
            await c.stop()  # the callback's exception, once stopped
    assert raised >= 1 and calls >= raised
    assert sorted(int(r.value) for r in got) == list(range(6))
    # None was lost and redelivered after its lock ran out.
    assert all(r.delivery_count == 1 for r in got)
    with pytest.raises(ConsumerStoppedError):
        await c.getmany()


async def test_record_limit_acquires_only_max_poll_records(
    kafka, new_topic: Callable[..., str]
) -> None:
    # One batch of 6 records. A record-limit member (ShareFetch v2) with
    # max_poll_records=2 acquires 2 of them and leaves the rest to another member;
    # in the default batch mode it would have acquired (locked) all 6.
    topic = new_topic()
    group = _group()
    await _set_earliest(kafka.bootstrap_servers, group)
    await _produce(kafka.bootstrap_servers, topic, 6)
    limited = AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
        max_poll_records=2,
        share_acquire_mode="record_limit",
    )
    other = AIOKafkaShareConsumer(
        topic,
        group_id=group,
        bootstrap_servers=kafka.bootstrap_servers,
        acknowledgement_mode="explicit",
    )
    await limited.start()
    try:
        first = await _drain(limited, 1, seconds=30)
        assert [r.offset for r in first] == [0, 1]
        await other.start()
        rest = await _drain(other, 4, seconds=20)  # well within the 30 s lock
        # The first member's two records stay locked by it (30 s lock), so the other
        # member gets exactly the four the first one did not acquire.
        assert sorted(r.offset for r in rest) == [2, 3, 4, 5]
        for c, recs in ((limited, first), (other, rest)):
            for r in recs:
                c.acknowledge(r, "accept")
            assert all(e is None for e in (await c.commit()).values())
    finally:
        await limited.stop()
        await other.stop()
