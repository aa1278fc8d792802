"""Tasks the client starts, under ``asyncio.eager_task_factory`` (Python 3.12+, set by
applications for speed): a new task runs inside ``create_task()`` up to its first
suspension, and one that never suspends has ended, its ``finally`` included, before
``create_task()`` returns. Code that records the task after ``create_task()`` and
forgets it in the task's ``finally`` would then keep a finished task forever."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.refresh import MetadataRefresher
from aiokafka.errors import KafkaConnectionError
from aiokafka.protocol import messages as m
from tests.support.fake_clock import FakeClock

from .test_consumer_fetcher import A, make, pdata, records, respond
from .test_producer_sender import ScriptedClient, response, run_sender

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="asyncio.eager_task_factory is new in Python 3.12"
)


@pytest.fixture
async def eager() -> AsyncIterator[None]:
    """The test's loop starts tasks eagerly (as an application's loop would)."""
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined,unused-ignore]
    yield
    loop.set_task_factory(None)


async def test_sender_retries_a_connection_that_failed_before_suspending(eager: None) -> None:
    """A connection attempt that failed at once (the broker not in the metadata yet,
    say) used to leave the node marked as connecting for good: the sender never tried
    it again and every record for it expired at delivery.timeout.ms."""

    async def produce(request: Any) -> Any:
        return response(0, base_offset=3)

    class FailsOnce(ScriptedClient):
        attempts = 0

        def is_connected(self, node: int) -> bool:
            return self.attempts > 1

        async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
            if api_key != m.ProduceRequest.API_KEY:
                return await super().api_version(node, api_key, max_version)
            self.attempts += 1
            if self.attempts == 1:
                raise KafkaConnectionError("refused")  # no await before: ends in create_task()
            return await super().api_version(node, api_key, max_version)

    client = FailsOnce(produce)
    (fut,), sender, _ = await run_sender(client, 1, delivery_timeout_ms=2000)
    try:
        assert (await asyncio.wait_for(fut, 1.5)).offset == 3
    finally:
        await sender.close(1, KafkaConnectionError("closed"))
    assert client.attempts == 2


async def test_fetcher_fetches_again_after_a_fetch_that_never_suspended(eager: None) -> None:
    """A fetch answered (or failed) without suspending, as a send on a connection that
    just closed fails, used to leave the node marked as in flight for good: the
    consumer never fetched from that broker again."""
    fetcher, _, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 1))})
    await respond(fetcher, client, {A: pdata(A, records(1, 1))})
    assert len(client.fetches()) == 2
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0, 1]
    assert fetcher.in_flight_nodes == frozenset()


async def test_sender_retries_a_failing_connection_once_per_loop_turn(eager: None) -> None:
    """An attempt that fails inside ``create_task()`` must not wake the sender for
    another pass at once: that pass would start the next attempt, which fails at
    once too, in a loop that never yields to the event loop."""
    loop = asyncio.get_running_loop()
    turns = 0

    def tick() -> None:
        nonlocal turns
        turns += 1
        ticker[0] = loop.call_soon(tick)

    ticker = [loop.call_soon(tick)]
    twenty = asyncio.Event()

    async def produce(request: Any) -> Any:
        raise AssertionError("never connected")

    class AlwaysFails(ScriptedClient):
        turns_seen: list[int] = []

        def is_connected(self, node: int) -> bool:
            return False

        async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
            if api_key != m.ProduceRequest.API_KEY:
                return await super().api_version(node, api_key, max_version)
            self.turns_seen.append(turns)
            if len(self.turns_seen) == 20:
                twenty.set()
            if len(self.turns_seen) > 20:
                await asyncio.sleep(0.01)  # ends a loop that would otherwise never yield
            raise KafkaConnectionError("refused")

    client = AlwaysFails(produce)
    (fut,), sender, _ = await run_sender(client, 1, delivery_timeout_ms=2000)
    try:
        await asyncio.wait_for(twenty.wait(), 5)
    finally:
        ticker[0].cancel()
        await sender.close(0, KafkaConnectionError("closed"))
    first = client.turns_seen[:20]
    assert len(set(first)) == len(first), first
    with pytest.raises(KafkaConnectionError):
        fut.result()


async def test_metadata_requests_of_one_loop_turn_share_one_refresh(eager: None) -> None:
    """The refresher's task starts inside the first request(): it used to send that
    refresh at once, so the other callers of the same turn waited for a second one,
    throttled behind it."""
    fetched: list[int] = []

    async def fetch() -> ClusterMetadata:
        fetched.append(len(fetched))
        await asyncio.sleep(0.01)
        return ClusterMetadata(generation=len(fetched))

    refresher = MetadataRefresher(fetch, lambda: 0, retry_backoff_ms=50, max_backoff_ms=400)
    try:
        results = await asyncio.gather(*(refresher.request(f"caller {i}") for i in range(5)))
    finally:
        await refresher.close()
    assert fetched == [0]
    assert {r.generation for r in results} == {1}


async def test_a_throttled_refresh_is_cut_short_by_an_urgent_request(eager: None) -> None:
    """The throttle's two waits (the clock's sleep, the urgent wake-up) start eagerly
    inside ``_throttle``; the urgent request must still end the wait at once, and both
    waits must be over when the refresh runs."""
    clock = FakeClock(autojump=False)
    fetched: list[float] = []

    async def fetch() -> ClusterMetadata:
        fetched.append(clock.monotonic())
        await asyncio.sleep(0)
        return ClusterMetadata(generation=len(fetched))

    refresher = MetadataRefresher(
        fetch, lambda: 0, retry_backoff_ms=200, max_backoff_ms=800, clock=clock
    )
    try:
        await refresher.request("first")
        waiting = refresher.request("stale")  # asked back to back: throttled
        await clock.until_sleeping()
        assert clock.sleeping == 1 and not waiting.done()
        await refresher.request("new topic", urgent=True)
        assert waiting.done() and (await waiting).generation == 2
        assert clock.sleeping == 0 and fetched == [clock.now, clock.now]
    finally:
        await refresher.close()


async def test_kip848_reconciliation_that_never_suspended_is_not_kept(
    eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconciliation that ends inside ``create_task()`` (nothing to await) cleared
    ``_reconcile_task`` in its ``finally`` before the membership recorded the finished
    task; kept, it read as still reconciling, so a member back to stable never set the
    event ``start()`` waits for."""
    import uuid

    from .test_consumer_group_kip848_membership import _member

    membership, _ = _member()
    machine = membership._machine
    machine.on_heartbeat(machine.member_id, 8, {uuid.uuid4(): frozenset({0})})
    assert machine.state.name == "RECONCILING"
    steps: list[int] = []

    async def step_without_suspending() -> None:
        steps.append(1)

    monkeypatch.setattr(membership, "_reconcile_step", step_without_suspending)
    membership._maybe_reconcile()
    assert steps == [1]  # it ran inside create_task()
    assert membership._reconcile_task is None
