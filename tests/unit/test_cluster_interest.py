"""Topic interest (per owner, counted, explicit all-topics mode) and the metadata
refresher (coalescing, one throttle), without a broker."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka._clock import SYSTEM_CLOCK, Clock
from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.refresh import MetadataRefresher, as_bool
from aiokafka.errors import KafkaConnectionError, NoBrokersAvailable
from tests.support.fake_clock import FakeClock

# -- TopicInterest ------------------------------------------------------------------------


def test_topics_are_counted_across_owners() -> None:
    interest = TopicInterest()
    producer, fetcher = object(), object()
    interest.register(producer)
    interest.register(fetcher)
    assert interest.add(producer, ["a"]) == {"a"}
    assert interest.add(fetcher, ["a", "b"]) == {"b"}  # "a" was held already
    assert interest.add(producer, ["a"]) == frozenset()  # held twice by one owner = once
    assert interest.holders("a") == 2
    interest.remove(producer, ["a"])
    assert interest.topics == {"a", "b"}  # the fetcher still holds "a"
    interest.release(fetcher)
    assert interest.topics == frozenset()
    assert interest.holders("a") == 0


def test_the_last_topic_removed_asks_for_no_topic_not_all() -> None:
    interest = TopicInterest()
    producer = object()
    interest.register(producer)
    interest.add(producer, ["a"])
    assert interest.request_topics() == ["a"]
    interest.remove(producer, ["a"])
    assert not interest.wants_all
    assert interest.request_topics() == []  # brokers and controller only


def test_bare_client_default_is_all_topics_until_an_owner_declares() -> None:
    interest = TopicInterest()
    user = object()
    interest.register(user, declares=False)  # set_topics()'s owner
    assert interest.request_topics() is None  # aiokafka: empty set = every topic
    interest.set(user, ["a"])
    assert interest.request_topics() == ["a"]
    interest.set(user, [])
    assert interest.request_topics() is None
    interest.register(object())  # a producer/consumer/admin registered
    assert interest.request_topics() == []


def test_all_topics_mode_is_explicit_and_per_owner() -> None:
    interest = TopicInterest()
    admin, pattern = object(), object()
    interest.register(admin)
    interest.register(pattern)
    interest.add(pattern, ["x"])
    assert interest.want_all(admin, True) is True  # turned all-topics on
    assert interest.want_all(pattern, True) is False  # already on
    assert interest.request_topics() is None
    interest.want_all(admin, False)
    assert interest.request_topics() is None  # the other owner still wants all
    interest.release(pattern)
    assert interest.request_topics() == []


def test_version_changes_only_with_the_request() -> None:
    interest = TopicInterest()
    a, b = object(), object()
    interest.register(a)
    interest.register(b)
    v = interest.version
    interest.add(a, ["t"])
    assert interest.version == v + 1
    interest.add(b, ["t"])  # the request names the same topics
    assert interest.version == v + 1
    interest.remove(a, ["t"])
    assert interest.version == v + 1
    interest.remove(b, ["t"])
    assert interest.version == v + 2


async def test_handle_checks_names_and_reports_growth() -> None:
    interest = TopicInterest()
    grown: list[tuple[frozenset[str], bool]] = []

    def grow(topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
        grown.append((topics, all_topics))
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        done.set_result(True)
        return done

    handle = InterestHandle(interest, "producer", grow)
    interest.register(handle)
    with pytest.raises(TypeError, match="not a str"):
        handle.add("topic")
    with pytest.raises(ValueError, match="invalid topic name"):
        handle.add([""])
    assert await handle.add(["a"]) is True
    assert await handle.want_all() is True
    assert handle.all_topics and handle.topics == {"a"}
    assert grown == [(frozenset({"a"}), False), (frozenset(), True)]
    handle.close()
    handle.close()
    assert interest.topics == frozenset() and not interest.wants_all_mode(handle)
    assert await handle.add(["b"]) is True  # a closed owner holds nothing more
    assert interest.topics == frozenset()


# -- MetadataRefresher --------------------------------------------------------------------


class Broker:
    """A fetch that takes ``latency`` seconds on ``clock`` and fails while ``down``."""

    def __init__(self, latency: float = 0.02, clock: Clock = SYSTEM_CLOCK) -> None:
        self.latency = latency
        self.clock = clock
        self.down = False
        #: When each fetch started, on the clock.
        self.started: list[float] = []
        self.version = 0

    async def fetch(self) -> ClusterMetadata:
        self.started.append(self.clock.monotonic())
        if self.latency:
            await self.clock.sleep(self.latency)
        else:
            await asyncio.sleep(0)
        if self.down:
            raise NoBrokersAvailable("down")
        return ClusterMetadata(generation=len(self.started))


def refresher(broker: Broker, backoff_ms: float = 50, max_ms: float = 400) -> MetadataRefresher:
    return MetadataRefresher(
        broker.fetch,
        lambda: broker.version,
        retry_backoff_ms=backoff_ms,
        max_backoff_ms=max_ms,
        clock=broker.clock,
    )


async def test_concurrent_requests_share_one_refresh() -> None:
    broker = Broker()
    r = refresher(broker)
    results = await asyncio.gather(*(r.request(f"caller {i}") for i in range(20)))
    assert len(broker.started) == 1
    assert all(md is results[0] for md in results)
    assert r.last_reasons[:2] == ("caller 0", "caller 1")
    await r.close()


async def test_a_request_during_a_refresh_gets_the_next_one() -> None:
    broker = Broker(latency=0.1)
    r = refresher(broker, backoff_ms=10)
    first = r.request("a", urgent=True)
    await asyncio.sleep(0.03)
    assert r.in_flight
    # Something went stale after the refresh in flight was sent: it needs the next.
    later = [r.request("stale"), r.request("stale too")]
    # Waits only for topics the refresh in flight already names: joins it.
    joined = r.request("topic", urgent=True, interest_version=broker.version)
    assert (await first).generation == 1
    assert (await joined).generation == 1
    assert {(await f).generation for f in later} == {2}
    assert len(broker.started) == 2
    await r.close()


async def test_throttle_spaces_stale_requests_and_grows_back_to_back() -> None:
    clock = FakeClock()
    broker = Broker(latency=0.0, clock=clock)
    r = refresher(broker, backoff_ms=50, max_ms=400)
    await r.request("first")
    assert clock.sleeps == []  # nothing before it: at once
    for _ in range(4):
        await r.request("leader unknown")
    # 50, 100, 200, 400 ms (+-20%, capped at 400) after each previous one: growing.
    gaps = [b - a for a, b in zip(broker.started, broker.started[1:], strict=False)]
    bounds = [(0.04, 0.06), (0.08, 0.12), (0.16, 0.24), (0.32, 0.4)]
    assert all(low <= gap <= high + 1e-9 for gap, (low, high) in zip(gaps, bounds, strict=True))
    assert clock.sleeps == pytest.approx(gaps)  # each wait was the throttle's
    # A pause as long as the bound resets it: the next request starts at once.
    clock.advance(0.45)
    waits = len(clock.sleeps)
    await r.request("again")
    assert len(clock.sleeps) == waits and broker.started[-1] == clock.now
    await r.close()


async def test_urgent_requests_skip_the_wait_but_failures_slow_retries() -> None:
    clock = FakeClock(autojump=False)  # a sleeper waits until the test advances time
    broker = Broker(latency=0.0, clock=clock)
    r = refresher(broker, backoff_ms=200, max_ms=800)
    await r.request("first")
    await r.request("new topic", urgent=True)
    assert clock.sleeps == []  # no retry_backoff_ms wait
    # A throttled request waiting out the back-off is started early by an urgent one.
    waiting = r.request("stale")
    await clock.until_sleeping()
    assert not waiting.done() and clock.sleeps[-1] > 0.15
    await r.request("new topic", urgent=True)
    assert waiting.done() and clock.sleeping == 0  # its wait is over, no time passed
    assert len(broker.started) == 3
    broker.down = True
    with pytest.raises(NoBrokersAvailable):
        await r.request("x", urgent=True)
    retry = r.request("retry")
    await clock.until_sleeping()
    # The failure doubled the wait: 400 ms +-20%.
    assert 0.32 <= clock.sleeps[-1] <= 0.48
    clock.advance(0.5)
    with pytest.raises(NoBrokersAvailable):
        await retry
    await r.close()


async def test_a_caller_giving_up_cancels_nothing_for_the_others() -> None:
    broker = Broker(latency=0.1)
    r = refresher(broker)
    impatient = r.request("a")
    patient = r.request("b")
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(impatient, 0.01)
    assert (await patient).generation == 1
    await r.close()


async def test_close_fails_waiters_and_later_requests() -> None:
    broker = Broker(latency=5)
    r = refresher(broker)
    pending = r.request("a")
    as_aiokafka = as_bool(r.request("b"), failed=False)
    await asyncio.sleep(0.01)
    await r.close()
    with pytest.raises(KafkaConnectionError, match="closed"):
        await pending
    assert await as_aiokafka is False
    with pytest.raises(KafkaConnectionError):
        await r.request("after close")


async def test_unawaited_failures_are_not_reported_as_never_retrieved() -> None:
    broker = Broker(latency=0.0)
    broker.down = True
    r = refresher(broker)
    r.request("nobody awaits this")
    errors: list[object] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))
    await asyncio.sleep(0.05)
    import gc

    gc.collect()
    assert not errors
    await r.close()
