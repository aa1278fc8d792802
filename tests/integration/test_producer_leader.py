"""A partition whose metadata names a leader that is not among the brokers (node 99),
made by rewriting the real broker's Metadata answers in flight
(tests/support/inject_relay.py): the producer refreshes metadata with a growing,
bounded back-off, fails the records at the delivery timeout with that cause in the
error, and delivers them as soon as the metadata names a real leader again."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable

import pytest

from aiokafka.errors import KafkaTimeoutError, LeaderNotAvailableError
from aiokafka.producer import AIOKafkaProducer
from aiokafka.protocol import messages as m
from aiokafka.protocol._gen import metadata as _md
from tests.integration.test_producer_basic import read_confluent
from tests.support.inject_relay import InjectingRelay
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)

_METADATA = m.MetadataRequest.API_KEY
_GHOST = 99


def _ghost_leader(topic: str, seen: list[float]) -> Callable[[bytes, int], bytes]:
    """A rewrite naming node 99 (absent from the brokers) as the leader of
    ``topic``-0; records the time of every Metadata answer in ``seen``."""

    def rewrite(body: bytes, version: int) -> bytes:
        seen.append(time.monotonic())
        response = _md.MetadataResponse.decode(body, version)
        for t in response.topics:
            if t.name == topic:
                for p in t.partitions:
                    if p.partition_index == 0:
                        p.leader_id = _GHOST
        return response.encode(version)

    return rewrite


def _producer(relay: InjectingRelay, **kw: object) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        bootstrap_servers=relay.bootstrap_servers,
        retry_backoff_ms=50,
        reconnect_backoff_max_ms=400,  # the bound of the metadata back-off
        linger_ms=0,
        **kw,  # type: ignore[arg-type]
    )


async def test_unknown_leader_fails_with_the_cause_after_bounded_refreshes(
    kafka: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    topic = new_topic()
    node = kafka.nodes[0]
    caplog.set_level(logging.INFO, "aiokafka.producer")
    seen: list[float] = []
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.rewrite_responses(_METADATA, _ghost_leader(topic, seen))
        async with _producer(relay, request_timeout_ms=2000, delivery_timeout_ms=5000) as producer:
            seen.clear()
            t0 = time.monotonic()
            futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(5)]
            with pytest.raises(KafkaTimeoutError) as info:
                await asyncio.wait_for(futures[0], 30)
            waited = time.monotonic() - t0
            refreshes = [t for t in seen if t >= t0]
            assert all(f.done() and f.exception() is not None for f in futures)
    # The cause, not "attempts: 0, last error: None".
    message = str(info.value)
    assert f"leader {_GHOST} of {topic}-0 is not among the brokers in metadata" in message
    assert "delivery_timeout_ms (5000 ms)" in message
    assert isinstance(info.value.__cause__, LeaderNotAvailableError)
    assert 4.5 < waited < 15
    # Refreshed again and again while waiting, but at a bounded rate: the back-off
    # grows from retry_backoff_ms (50 ms) to its bound (400 ms, jitter +-20%), so
    # ~15 refreshes in 5 s; at a fixed 50 ms it would be ~100.
    assert len(refreshes) >= 5, refreshes
    assert len(refreshes) <= 30, len(refreshes)
    gaps = [b - a for a, b in itertools.pairwise(refreshes)]
    assert min(gaps[-3:]) >= 0.3, gaps  # grown to the bound (never shorter than 0.8 x 400 ms)
    assert max(gaps) < 2.0, gaps  # and bounded
    warnings = [
        r for r in caplog.records if r.levelno >= logging.WARNING and "leader 99" in r.getMessage()
    ]
    assert len(warnings) == 1, warnings  # once, not per refresh


async def test_records_are_delivered_when_the_leader_is_known_again(
    kafka: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    topic = new_topic()
    node = kafka.nodes[0]
    caplog.set_level(logging.INFO, "aiokafka.producer")
    seen: list[float] = []
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.rewrite_responses(_METADATA, _ghost_leader(topic, seen))
        async with _producer(relay, delivery_timeout_ms=60000) as producer:
            futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(20)]
            await asyncio.sleep(1.5)
            assert not any(f.done() for f in futures)  # nowhere to send them
            relay.rewrite_responses(_METADATA, None)  # the metadata is right again
            t0 = time.monotonic()
            results = await asyncio.wait_for(asyncio.gather(*futures), 30)
            # The next refresh (the back-off is at most 400 ms) finds the leader.
            assert time.monotonic() - t0 < 5
    assert [r.offset for r in results] == list(range(20))
    msgs = await asyncio.to_thread(read_confluent, kafka.bootstrap_servers, topic, 1, 20)
    assert [msg.value() for msg in msgs] == [b"v%d" % i for i in range(20)]
    recovered = [r for r in caplog.records if "has a leader again" in r.getMessage()]
    assert len(recovered) == 1 and recovered[0].levelno == logging.INFO
