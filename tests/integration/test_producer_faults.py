"""The producer behind a fault proxy (tests/support/fault_proxy.py): a stalled broker
makes send() block on buffer_memory and then raise KafkaTimeoutError; memory stays
bounded; cut connections are retried without duplicates; stop() is bounded: with a
stalled or vanished broker it gives up after request_timeout_ms without progress and
fails what is left with ProducerClosed saying why, while a slow but working broker
(or a healthy one) still gets everything buffered."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.errors import KafkaTimeoutError, ProducerClosed
from aiokafka.producer import AIOKafkaProducer
from tests.integration.test_producer_basic import read_confluent
from tests.support.fault_proxy import FaultProxy
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def proxy(kafka: KafkaCluster, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FaultProxy]:
    """A proxy in front of the single broker, and metadata that points every broker at
    it (the broker advertises its real port, which would bypass the proxy)."""
    host, port = kafka.bootstrap_servers.split(",")[0].rsplit(":", 1)
    async with FaultProxy(host, int(port)) as p:
        original = ClusterMetadata.from_response.__func__  # type: ignore[attr-defined]

        def through_proxy(cls: type[ClusterMetadata], response: Any, generation: int = 0) -> Any:
            md = original(cls, response, generation)
            brokers = {n: b._replace(host=p.host, port=p.port) for n, b in md.brokers.items()}
            return dataclasses.replace(md, brokers=MappingProxyType(brokers))

        monkeypatch.setattr(ClusterMetadata, "from_response", classmethod(through_proxy))
        yield p


async def test_stalled_broker_blocks_send_then_times_out(
    proxy: FaultProxy, new_topic: NewTopic
) -> None:
    topic = new_topic()
    buffer_memory = 64 * 1024
    producer = AIOKafkaProducer(
        bootstrap_servers=proxy.address,
        buffer_memory=buffer_memory,
        max_batch_size=16384,
        max_block_ms=1000,
        request_timeout_ms=30000,
        linger_ms=0,
    )
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"before")
        proxy.stall()
        value = b"x" * 1000
        futures = []
        t0 = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="buffer_memory"):
            for _ in range(1000):
                futures.append(await producer.send(topic, value))
                assert producer.buffered_bytes <= buffer_memory
        blocked = time.monotonic() - t0
        # It blocked for max_block_ms on the full buffer, not longer.
        assert 0.9 <= blocked < 3
        assert 40 <= len(futures) <= 70  # ~64 KiB of 1 KB records
        assert producer.buffered_bytes <= buffer_memory
        assert not any(f.done() for f in futures)
        # Another send times out the same way: nothing is corrupted by the failure.
        with pytest.raises(KafkaTimeoutError):
            await producer.send(topic, value)
        proxy.resume()
        results = await asyncio.wait_for(asyncio.gather(*futures), 60)
        assert [r.offset for r in results] == list(range(1, len(futures) + 1))
        # Usable again.
        md = await asyncio.wait_for(producer.send_and_wait(topic, b"after"), 30)
        assert md.offset == len(futures) + 1
    finally:
        proxy.resume()
        await producer.stop()


async def test_repeatedly_blocked_sends_keep_memory_bounded(
    proxy: FaultProxy, new_topic: NewTopic
) -> None:
    """Not only the producer's own accounting (buffered_bytes): the memory Python
    actually allocates while send() blocks on a full buffer again and again stays
    within a small multiple of buffer_memory."""
    topic = new_topic()
    buffer_memory = 64 * 1024
    rounds, per_round, size = 12, 500, 1000
    producer = AIOKafkaProducer(
        bootstrap_servers=proxy.address,
        buffer_memory=buffer_memory,
        max_block_ms=150,
        request_timeout_ms=30000,
        linger_ms=0,
    )
    await producer.start()
    futures: list[Any] = []
    try:
        await producer.send_and_wait(topic, b"before")
        proxy.stall()
        value = b"x" * size
        timeouts = 0
        tracemalloc.start()
        try:
            for _ in range(rounds):
                try:
                    for _ in range(per_round):
                        futures.append(await producer.send(topic, value))
                except KafkaTimeoutError:
                    timeouts += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # Every round ended blocked on the full buffer; had send() not blocked, the
        # loop would have queued rounds * per_round * size = 6 MB of values.
        assert timeouts == rounds
        assert len(futures) * size <= buffer_memory
        # What may legitimately be alive at the peak: the buffered batches (at most
        # buffer_memory), the encoded copy of a request being written (and the
        # transport's buffer of unsent bytes), and the fault proxy's read buffers (it
        # runs in this process). Measured: ~5.4x (~2x after the stall, once written);
        # 8x leaves room and is a twelfth of what an unbounded loop would allocate.
        assert peak <= 8 * buffer_memory, f"peak {peak} bytes"
        proxy.resume()
        results = await asyncio.wait_for(asyncio.gather(*futures), 60)
        assert [r.offset for r in results] == list(range(1, len(futures) + 1))
    finally:
        proxy.resume()
        await producer.stop()


async def test_cut_connections_are_retried_without_duplicates(
    kafka: KafkaCluster, proxy: FaultProxy, new_topic: NewTopic
) -> None:
    topic = new_topic()
    count = 3000
    async with AIOKafkaProducer(
        bootstrap_servers=proxy.address,
        linger_ms=2,
        retry_backoff_ms=50,
        request_timeout_ms=5000,
        delivery_timeout_ms=30000,
    ) as producer:
        # Connected (and a producer id) before the first cut.
        await producer.send_and_wait(topic, b"warm-up")
        futures = []
        for i in range(count):
            futures.append(await producer.send(topic, b"%06d" % i))
            if i % 300 == 150:
                await asyncio.sleep(0.01)  # let requests get in flight ...
                proxy.cut()  # ... and kill them
        results = await asyncio.wait_for(asyncio.gather(*futures), 60)
    assert proxy.connections_total > 3
    assert [r.offset for r in results] == list(range(1, count + 1))
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, count + 1)
    assert [m.value() for m in msgs] == [b"warm-up"] + [b"%06d" % i for i in range(count)]


async def test_stop_with_stalled_broker_is_bounded(proxy: FaultProxy, new_topic: NewTopic) -> None:
    topic = new_topic()
    producer = AIOKafkaProducer(bootstrap_servers=proxy.address, request_timeout_ms=30000)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"before")
        proxy.stall()
        futures = [await producer.send(topic, b"v") for _ in range(10)]
        assert [t for t in asyncio.all_tasks() if _is_aiokafka_task(t)]  # sender, client
        t0 = time.monotonic()
        await producer.stop(timeout=0.5)
        assert time.monotonic() - t0 < 3
    finally:
        proxy.resume()
    for f in futures:
        with pytest.raises(ProducerClosed, match=r"stop\(\)'s timeout \(0.5 s\) passed"):
            f.result()
    await asyncio.sleep(0)
    # Nothing of the producer or its client is left running (the proxy's own
    # connection handlers are the proxy's business).
    leftover = [t for t in asyncio.all_tasks() if _is_aiokafka_task(t)]
    assert not leftover


def _is_aiokafka_task(task: asyncio.Task[Any]) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    return code is not None and "/aiokafka/" in code.co_filename


@pytest.mark.parametrize("fault", ["stalled", "gone"])
async def test_stop_gives_up_after_request_timeout_without_progress(
    proxy: FaultProxy, new_topic: NewTopic, fault: str
) -> None:
    """The broker hangs (requests sit unanswered) or disappears (connections cut and
    refused): stop() without a timeout returns after about request_timeout_ms, not
    delivery_timeout_ms (120 s here), and the pending futures fail with ProducerClosed
    saying why."""
    topic = new_topic()
    producer = AIOKafkaProducer(
        bootstrap_servers=proxy.address, request_timeout_ms=3000, delivery_timeout_ms=120000
    )
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"before")
        if fault == "stalled":
            proxy.stall()
        else:
            proxy.refuse = True
            proxy.cut()
        futures = [await producer.send(topic, b"v%d" % i) for i in range(10)]
        t0 = time.monotonic()
        await producer.stop()
        elapsed = time.monotonic() - t0
    finally:
        proxy.resume()
        proxy.refuse = False
        await producer.stop()
    assert 2.5 <= elapsed < 3 + 7, elapsed  # request_timeout_ms, with slack for a loaded machine
    for f in futures:
        with pytest.raises(ProducerClosed) as info:
            f.result()
        message = str(info.value)
        assert "no batch was delivered within request_timeout_ms (3000 ms)" in message
        assert "stop() gave up" in message and f"for {topic}-0" in message
    if fault == "gone":
        # Why the records could not go: the lost broker connection.
        assert info.value.__cause__ is not None


async def test_stop_waits_while_delivery_progresses(proxy: FaultProxy, new_topic: NewTopic) -> None:
    """A slow broker that still answers: stop() takes longer than request_timeout_ms in
    all (one request in flight, each delayed), but each batch completes within it, so
    stop() waits and everything buffered is delivered."""
    topic = new_topic()
    producer = AIOKafkaProducer(
        bootstrap_servers=proxy.address,
        request_timeout_ms=4000,
        max_in_flight_requests_per_connection=1,
        max_batch_size=16384,
        linger_ms=0,
    )
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"before")
        proxy.delay_ms = 250  # per forwarded chunk, both ways: ~0.5 s or more per request
        value = b"x" * 1000
        # About 12 batches of one partition: one batch per request, so ~12 round trips.
        futures = [await producer.send(topic, value, partition=0) for _ in range(190)]
        t0 = time.monotonic()
        await producer.stop()
        elapsed = time.monotonic() - t0
    finally:
        proxy.delay_ms = 0
        await producer.stop()
    results = [f.result() for f in futures]  # none failed
    assert [r.offset for r in results] == list(range(1, 191))
    assert elapsed > 4, elapsed  # it waited past request_timeout_ms, as deliveries went on


async def test_stop_with_a_healthy_broker_delivers_everything(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=3)
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, linger_ms=10000, request_timeout_ms=5000
    )
    await producer.start()
    try:
        # Batches created while a request is in flight linger (up to 10 s) at stop().
        futures = [await producer.send(topic, b"%05d" % i) for i in range(3000)]
        t0 = time.monotonic()
        await producer.stop()
        assert time.monotonic() - t0 < 10
    finally:
        await producer.stop()
    assert all(f.exception() is None for f in futures)
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 3, 3000)
    assert sorted(m.value() for m in msgs) == [b"%05d" % i for i in range(3000)]
