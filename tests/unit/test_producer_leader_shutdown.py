"""Unit tests (no broker) for a partition without a usable leader and for the bound
of ``Sender.close()``: the metadata's explanation, the client's refresh throttle
under the sender and the delivery-timeout message, and stop()'s rule (wait while
batches complete, give up after request_timeout_ms without one). The same behaviour
against the real broker is in tests/integration/test_producer_leader.py and
test_producer_faults.py."""

from __future__ import annotations

import asyncio
import time
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.errors import KafkaTimeoutError, LeaderNotAvailableError, ProducerClosed
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition

from .test_producer_sender import TP, ScriptedClient, response, run_sender


def metadata(leader: int, error: int = 0) -> ClusterMetadata:
    part = PartitionMetadata("t", 0, leader, (1,), (1,), error, 3)
    topic = TopicMetadata("t", partitions=MappingProxyType({0: part}))
    return ClusterMetadata(
        MappingProxyType({1: BrokerMetadata(1, "h", 1, None), 2: BrokerMetadata(2, "h", 2, None)}),
        MappingProxyType({"t": topic}),
        created_at=time.monotonic(),
    )


def test_leader_problem_names_the_cause() -> None:
    good = metadata(1)
    assert good.sendable_leader(TP) == 1 and good.leader_problem(TP) is None
    ghost = metadata(99)
    assert ghost.leader_for(TP) == 99  # what the metadata says ...
    assert ghost.sendable_leader(TP) is None  # ... but nowhere to connect to
    assert ghost.available_partitions_for_topic("t") == frozenset()  # keyless records avoid it
    assert good.available_partitions_for_topic("t") == frozenset({0})
    assert ghost.leader_problem(TP) == (
        "leader 99 of t-0 is not among the brokers in metadata (1, 2)"
    )
    none = metadata(-1, error=5)
    assert none.sendable_leader(TP) is None
    assert none.leader_problem(TP) == (
        "t-0 has no leader in the cluster metadata (partition error 5 LeaderNotAvailableError)"
    )
    assert good.leader_problem(TopicPartition("t", 7)) == "t-7 is not in the cluster metadata"
    assert good.leader_problem(TopicPartition("u", 0)) == (
        "u-0: topic 'u' is not in the cluster metadata"
    )


class _Never:
    """Produce requests that are never answered (a hung broker)."""

    def __init__(self) -> None:
        self.requests = 0

    async def __call__(self, request: Any) -> Any:
        self.requests += 1
        await asyncio.Event().wait()


async def test_unknown_leader_refreshes_with_growing_bounded_backoff_then_times_out() -> None:
    never = _Never()
    client = ScriptedClient(never)
    client.cluster = metadata(99)
    client.refresh_backoff_ms = (10, 80)  # the client's throttle, from the same options
    futures, sender, _ = await run_sender(
        client,
        3,
        retry_backoff_ms=10,
        reconnect_backoff_max_ms=80,
        request_timeout_ms=500,
        delivery_timeout_ms=1500,
        linger_ms=0,
    )
    t0 = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        await asyncio.wait_for(futures[0], 10)
    elapsed = time.monotonic() - t0
    await sender.close(1, ProducerClosed("closed"))
    assert never.requests == 0  # nothing is sent to node 99
    # 10, 20, 40, then 80 ms (+-20%): ~20 refreshes in 1.5 s; a fixed 10 ms would be ~150.
    assert 8 <= client.refreshes <= 40, client.refreshes
    assert elapsed < 5
    message = str(info.value)
    assert "within delivery_timeout_ms (1500 ms): [Error 5] LeaderNotAvailableError: " in message
    assert "leader 99 of t-0 is not among the brokers in metadata (1, 2) (attempts: 0)" in message
    assert isinstance(info.value.__cause__, LeaderNotAvailableError)


async def test_records_go_out_once_a_refresh_finds_the_leader() -> None:
    async def produce(request: Any) -> Any:
        return response(0, base_offset=10)

    class Recovering(ScriptedClient):
        async def refresh_metadata(self) -> ClusterMetadata:
            self.refreshes += 1
            if self.refreshes == 4:
                self.cluster = metadata(1)
            return self.cluster

    client = Recovering(produce)
    client.cluster = metadata(99)
    futures, sender, _ = await run_sender(client, 3, retry_backoff_ms=10)
    results = await asyncio.wait_for(asyncio.gather(*futures), 5)
    await sender.close(1, ProducerClosed("closed"))
    assert [r.offset for r in results] == [10, 11, 12]
    assert client.refreshes == 4


async def test_close_gives_up_after_request_timeout_without_progress() -> None:
    client = ScriptedClient(_Never())
    futures, sender, acc = await run_sender(client, 5, request_timeout_ms=300)
    await asyncio.sleep(0.05)  # in flight
    t0 = time.monotonic()
    await sender.close(None, ProducerClosed("the producer was stopped before delivery"))
    elapsed = time.monotonic() - t0
    assert 0.25 <= elapsed < 2, elapsed
    for f in futures:
        with pytest.raises(ProducerClosed) as info:
            f.result()
        assert str(info.value).startswith(
            "ProducerClosed: the producer was stopped before delivery: no batch was delivered "
            "within request_timeout_ms (300 ms), so stop() gave up waiting; 5 record(s) for t-0"
        )
    assert acc.used_memory == 0


async def test_close_waits_while_batches_complete() -> None:
    """Each request takes 0.15 s, one at a time, so the whole takes longer than
    request_timeout_ms (0.3 s) while no batch waits longer than that: close() waits."""
    offsets = iter(range(0, 10_000, 1))

    async def slow(request: Any) -> Any:
        await asyncio.sleep(0.15)
        return response(0, base_offset=next(offsets))

    client = ScriptedClient(slow)
    futures, sender, _ = await run_sender(
        client,
        8,
        request_timeout_ms=300,
        delivery_timeout_ms=10000,
        max_batch_size=64,
        max_in_flight_requests_per_connection=1,
    )
    t0 = time.monotonic()
    await sender.close(None, ProducerClosed("stopped"))
    elapsed = time.monotonic() - t0
    assert all(f.exception() is None for f in futures)
    assert elapsed > 0.6, elapsed  # several requests after another, beyond 0.3 s
    assert len(client.sent) >= 5


async def test_close_with_a_timeout_is_a_plain_bound() -> None:
    async def slow(request: Any) -> Any:
        await asyncio.sleep(0.1)
        return response(0)

    client = ScriptedClient(slow)
    futures, sender, _ = await run_sender(
        client,
        40,
        request_timeout_ms=5000,
        delivery_timeout_ms=10000,
        max_batch_size=64,
        max_in_flight_requests_per_connection=1,
    )
    t0 = time.monotonic()
    await sender.close(0.35, ProducerClosed("stopped"))
    assert time.monotonic() - t0 < 1.5
    failed = [f.exception() for f in futures if f.exception() is not None]
    assert failed and all("stop()'s timeout (0.35 s) passed" in str(e) for e in failed)
    # The batches that were delivered before the bound kept their results.
    assert any(f.exception() is None for f in futures)
