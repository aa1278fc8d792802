"""``wait_for_topics`` against a real broker: it returns once every partition of a
new topic has a leader, waits for a topic created while it polls, and times out
naming the topic and why."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaTimeoutError
from tools.kafka.rig import KafkaCluster


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def test_returns_when_every_partition_has_a_leader(
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


async def test_waits_for_a_topic_created_while_polling(
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


async def test_times_out_naming_each_missing_topic(admin: AIOKafkaAdminClient) -> None:
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


async def test_bad_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(TypeError, match="topics must be a list of str"):
        await admin.wait_for_topics("abc")
    with pytest.raises(ValueError, match="timeout_ms"):
        await admin.wait_for_topics(["abc"], timeout_ms=-1)
    with pytest.raises(ValueError, match="topics: duplicate names"):
        await admin.wait_for_topics(["abc", "abc"])
    started = time.monotonic()
    await admin.wait_for_topics([])
    assert time.monotonic() - started < 0.5
