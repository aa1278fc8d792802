"""Topic interest (per owner, counted, explicit all-topics mode) and the metadata
refresher (coalescing, one throttle), without a broker."""

from __future__ import annotations

import asyncio
import time

import pytest

from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.cluster.refresh import MetadataRefresher, as_bool
from aiokafka.errors import KafkaConnectionError, NoBrokersAvailable

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
    """A fetch that takes ``latency`` seconds and fails while ``down``."""

    def __init__(self, latency: float = 0.02) -> None:
        self.latency = latency
        self.down = False
        self.started: list[float] = []
        self.version = 0

    async def fetch(self) -> ClusterMetadata:
        self.started.append(time.monotonic())
        await asyncio.sleep(self.latency)
        if self.down:
            raise NoBrokersAvailable("down")
        return ClusterMetadata(generation=len(self.started))


def refresher(broker: Broker, backoff_ms: float = 50, max_ms: float = 400) -> MetadataRefresher:
    return MetadataRefresher(
        broker.fetch, lambda: broker.version, retry_backoff_ms=backoff_ms, max_backoff_ms=max_ms
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
    broker = Broker(latency=0.0)
    r = refresher(broker, backoff_ms=50, max_ms=400)
    await r.request("first")  # nothing before it: at once
    t0 = time.monotonic()
    for _ in range(4):
        await r.request("leader unknown")
    # 50, 100, 200, 400 ms (+-20%) after each previous one: growing, capped.
    gaps = [b - a for a, b in zip(broker.started, broker.started[1:], strict=False)]
    assert gaps[0] >= 0.035 and gaps[-1] >= 0.25, gaps
    assert time.monotonic() - t0 < 3
    # A pause as long as the bound resets it.
    await asyncio.sleep(0.45)
    t1 = time.monotonic()
    await r.request("again")
    assert time.monotonic() - t1 < 0.15
    await r.close()


async def test_urgent_requests_skip_the_wait_but_failures_slow_retries() -> None:
    broker = Broker(latency=0.0)
    r = refresher(broker, backoff_ms=200, max_ms=800)
    await r.request("first")
    t0 = time.monotonic()
    await r.request("new topic", urgent=True)
    assert time.monotonic() - t0 < 0.15  # no retry_backoff_ms wait
    # A throttled request waiting out the back-off is started early by an urgent one.
    waiting = r.request("stale")
    await asyncio.sleep(0.01)
    await r.request("new topic", urgent=True)
    assert waiting.done()
    broker.down = True
    with pytest.raises(NoBrokersAvailable):
        await r.request("x", urgent=True)
    t1 = time.monotonic()
    with pytest.raises(NoBrokersAvailable):
        await r.request("retry")
    assert time.monotonic() - t1 >= 0.15  # failures grow the wait from 200 ms
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
