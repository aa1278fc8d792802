"""Bad input, lifecycle and cancellation against a real broker: every error is typed,
nothing hangs, and the producer stays usable after a bad call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.errors import (
    IllegalStateError,
    MessageSizeTooLargeError,
    ProducerClosed,
    UnknownTopicOrPartitionError,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import RecordMetadata
from tests.integration.test_producer_basic import read_confluent
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def make(kafka: KafkaCluster, **kw: Any) -> AIOKafkaProducer:
    return AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, **kw)


async def test_bad_records_raise_and_producer_stays_usable(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=2)
    async with make(kafka, max_request_size=10000) as p:
        with pytest.raises(MessageSizeTooLargeError, match="max_request_size"):
            await p.send(topic, b"x" * 20000)
        with pytest.raises(TypeError, match="value"):
            await p.send(topic, "a str")
        with pytest.raises(TypeError, match="key"):
            await p.send(topic, b"v", key=123)
        with pytest.raises(TypeError, match="header"):
            await p.send(topic, b"v", headers=[(b"bytes-key", b"v")])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="header"):
            await p.send(topic, b"v", headers=[("k", "str value")])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="timestamp_ms"):
            await p.send(topic, b"v", timestamp_ms=1.5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="timestamp_ms"):
            await p.send(topic, b"v", timestamp_ms=-3)
        with pytest.raises(ValueError, match="out of range"):
            await p.send(topic, b"v", partition=2)
        with pytest.raises(ValueError, match="partition"):
            await p.send(topic, b"v", partition=-1)
        with pytest.raises(TypeError, match="partition"):
            await p.send(topic, b"v", partition="0")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="topic"):
            await p.send(b"bytes-topic", b"v")  # type: ignore[arg-type]
        # Still usable; nothing half-queued before this record.
        md = await p.send_and_wait(topic, b"ok", partition=1)
        assert (md.partition, md.offset) == (1, 0)
        assert p.buffered_bytes == 0


async def test_broker_rejects_too_large_batch_with_typed_error(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(config={"max.message.bytes": "2000"})
    async with make(kafka) as p:
        big = await p.send(topic, b"x" * 5000)
        with pytest.raises(MessageSizeTooLargeError):
            await asyncio.wait_for(big, 10)
        # Only that batch failed; the idempotent producer goes on (epoch bumped if needed).
        md = await asyncio.wait_for(p.send_and_wait(topic, b"small"), 10)
        assert md.offset == 0


async def test_unknown_topic_fails_after_max_block(kafka: KafkaCluster) -> None:
    async with make(kafka, max_block_ms=1500, allow_auto_topic_creation=False) as p:
        t0 = time.monotonic()
        with pytest.raises(UnknownTopicOrPartitionError, match="max_block_ms"):
            await p.send(f"missing-{time.time_ns()}", b"v")
        assert 1.4 <= time.monotonic() - t0 < 5
        with pytest.raises(UnknownTopicOrPartitionError):
            await p.partitions_for(f"missing-{time.time_ns()}")
        # The unknown topics are not kept in the metadata requests.
        assert not [t for t in p.client.topics if t.startswith("missing-")]


async def test_lifecycle_errors_and_no_leaked_tasks(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    before = asyncio.all_tasks()
    p = make(kafka)
    with pytest.raises(IllegalStateError, match="start"):
        await p.send(topic, b"v")
    await p.start()
    with pytest.raises(IllegalStateError):
        await p.start()
    await p.send_and_wait(topic, b"v")
    await p.stop()
    await p.stop()  # idempotent
    with pytest.raises(ProducerClosed):
        await p.send(topic, b"v")
    with pytest.raises(ProducerClosed):
        await p.send_and_wait(topic, b"v")
    await asyncio.sleep(0)
    assert asyncio.all_tasks() == before
    # stop() of a never-started producer is fine too.
    await make(kafka).stop()


async def test_stop_flushes_lingering_records(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    p = make(kafka, linger_ms=30000, delivery_timeout_ms=120000)
    await p.start()
    futures = [await p.send(topic, b"r%d" % i) for i in range(100)]
    t0 = time.monotonic()
    await p.stop()
    assert time.monotonic() - t0 < 5  # linger does not delay stop()
    assert [f.result().offset for f in futures] == list(range(100))


async def test_cancelling_send_and_wait_keeps_state_consistent(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    async with make(kafka, linger_ms=200) as p:
        # The topic's metadata first (the client asks only for topics sent to), so
        # that the sends below append at once instead of waiting for it.
        await p.partitions_for(topic)
        tasks = [asyncio.create_task(p.send_and_wait(topic, b"c%d" % i)) for i in range(20)]
        # One loop turn: every task has appended its record and waits for it. (The
        # batch goes out at once, the broker being idle: linger does not hold it.)
        await asyncio.sleep(0)
        for t in tasks[::2]:
            t.cancel()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(d, asyncio.CancelledError) for d in done[::2])
        offsets = [d.offset for d in done[1::2] if isinstance(d, RecordMetadata)]
        assert offsets == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
        # Cancelled waits do not cancel delivery: every record is there exactly once.
        md = await p.send_and_wait(topic, b"after")
        assert md.offset == 20
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 21)
    assert [m.value() for m in msgs] == [b"c%d" % i for i in range(20)] + [b"after"]


async def test_cancelling_send_waiting_for_metadata(kafka: KafkaCluster) -> None:
    async with make(kafka, max_block_ms=10000, allow_auto_topic_creation=False) as p:
        task = asyncio.create_task(p.send(f"missing-{time.time_ns()}", b"v"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert p.buffered_bytes == 0


async def test_stop_releases_send_waiting_for_metadata(kafka: KafkaCluster) -> None:
    p = make(kafka, max_block_ms=30000, allow_auto_topic_creation=False)
    await p.start()
    task = asyncio.create_task(p.send(f"missing-{time.time_ns()}", b"v"))
    await asyncio.sleep(0.3)
    t0 = time.monotonic()
    await p.stop()
    with pytest.raises(ProducerClosed):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - t0 < 5
