"""Producer behaviour that aiokafka 0.14 code relies on (issue 19), against the real
broker: ``await begin_transaction()``, aiokafka's exception types for transactional
misuse, ``None`` results with ``acks=0``, and the ``ResourceWarning`` for a producer
dropped without ``stop()``."""

from __future__ import annotations

import asyncio
import gc
import inspect
import uuid
import warnings
from collections.abc import Callable

import pytest

from aiokafka.errors import IllegalOperation, IllegalStateError
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.integration.test_producer_basic import read_confluent
from tests.integration.test_producer_faults import _is_aiokafka_task
from tests.integration.test_producer_transactions import read_ours
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)


async def test_begin_transaction_is_awaited_as_in_aiokafka(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic()
    assert inspect.iscoroutinefunction(AIOKafkaProducer.begin_transaction)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, transactional_id=f"t-{uuid.uuid4().hex}"
    ) as producer:
        assert await producer.begin_transaction() is None
        await producer.send(topic, b"committed")
        await producer.commit_transaction()
        await producer.begin_transaction()
        await producer.send(topic, b"aborted")
        await producer.abort_transaction()
        # aiokafka's TransactionContext awaits begin_transaction() too.
        async with producer.transaction():
            await producer.send(topic, b"in context")
    assert await read_ours(kafka, topic, 1, "read_committed", 2) == {
        0: [b"committed", b"in context"]
    }


async def test_transactional_misuse_raises_illegal_operation(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """aiokafka 0.14 raises IllegalOperation; the class raised is also the
    IllegalStateError raised here before, so code written for either catches it."""
    topic = new_topic()
    offsets = {TopicPartition(topic, 0): 1}
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as plain:
        for call in (
            plain.begin_transaction,
            plain.commit_transaction,
            plain.abort_transaction,
            lambda: plain.send_offsets_to_transaction(offsets, "g"),
            lambda: plain.send_offsets_to_transaction(offsets, None),  # type: ignore[arg-type]
        ):
            with pytest.raises(IllegalOperation, match="transactional_id") as info:
                await call()
            assert isinstance(info.value, IllegalStateError)
        with pytest.raises(IllegalOperation):
            async with plain.transaction():
                pass
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, transactional_id=f"t-{uuid.uuid4().hex}"
    ) as producer:
        with pytest.raises(IllegalOperation, match="begin_transaction"):
            await producer.send(topic, b"outside")
        batch = producer.create_batch()
        batch.append(key=None, value=b"outside", timestamp=None)
        with pytest.raises(IllegalOperation, match="begin_transaction"):
            await producer.send_batch(batch, topic, partition=0)
        # aiokafka checks the transaction before the arguments: no TypeError here.
        with pytest.raises(IllegalOperation, match="begin_transaction"):
            await producer.send_offsets_to_transaction(offsets, None)  # type: ignore[arg-type]
        async with producer.transaction():
            # Inside a transaction a missing group id is aiokafka's ValueError.
            with pytest.raises(ValueError, match="group_id"):
                await producer.send_offsets_to_transaction(offsets, None)  # type: ignore[arg-type]
            # aiokafka's (offset, metadata) pairs are accepted.
            await producer.send_offsets_to_transaction(
                {TopicPartition(topic, 0): (1, "meta")}, f"g-{uuid.uuid4().hex}"
            )
            await producer.send(topic, b"inside")
        # After the commit the producer is outside a transaction again.
        with pytest.raises(IllegalOperation):
            await producer.send(topic, b"after")
    assert await read_ours(kafka, topic, 1, "read_committed", 1) == {0: [b"inside"]}


async def test_acks_0_resolves_futures_to_none(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, acks=0) as producer:
        futures = [await producer.send(topic, b"r%d" % i, partition=0) for i in range(20)]
        assert await producer.send_and_wait(topic, b"r20", partition=0) is None
        batch = producer.create_batch()
        batch.append(key=None, value=b"b0", timestamp=None)
        batch_future = await producer.send_batch(batch, topic, partition=0)
        assert await batch_future is None
        assert await asyncio.gather(*futures) == [None] * 20
        assert [f.result() for f in futures] == [None] * 20
        assert "result=None" in repr(futures[0])
    # Written all the same.
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 22)
    assert [m.value() for m in msgs] == [b"r%d" % i for i in range(21)] + [b"b0"]


async def test_unclosed_started_producer_warns_and_is_released(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """As in aiokafka: a started producer garbage-collected without stop() gives a
    ResourceWarning (and a report to the loop's exception handler); stopped or never
    started ones give none. Unlike aiokafka, which left it running, what it left is
    then stopped as stop() would: buffered records are delivered, tasks and
    connections end."""
    topic = new_topic()
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, linger_ms=500)
        await producer.start()
        await producer.send_and_wait(topic, b"first")
        buffered = await producer.send(topic, b"lingering")  # not sent yet
        with pytest.warns(ResourceWarning, match="Unclosed AIOKafkaProducer"):
            del producer  # its own tasks do not keep it alive
            gc.collect()
        messages = [str(c.get("message", "")) for c in reported]
        assert any(m.startswith("Unclosed AIOKafkaProducer") for m in messages), messages
        assert (await asyncio.wait_for(buffered, 10)).offset == 1
        left = [t for t in asyncio.all_tasks() if _is_aiokafka_task(t)]
        assert left  # the release, or what it stops
        await asyncio.wait(left, timeout=10)
        await asyncio.sleep(0)
        assert not [t for t in asyncio.all_tasks() if _is_aiokafka_task(t)]

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stopped = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
            await stopped.start()
            await stopped.stop()
            never_started = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
            del stopped, never_started
            gc.collect()
        assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    finally:
        loop.set_exception_handler(previous)
