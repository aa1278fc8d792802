"""Fetcher buffer and response handling with hand-made responses (no broker, no loop task)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetch_session import FetchSession, PartitionFetch
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import CorruptRecordError, OffsetOutOfRangeError, TopicAuthorizationFailedError
from aiokafka.protocol import messages as m
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition

A = TopicPartition("t", 0)
B = TopicPartition("t", 1)


class FakeClient:
    """Just what the response path touches."""

    def __init__(self) -> None:
        self.hints: list[tuple[TopicPartition, int, int]] = []
        self.config = ConsumerConfig.from_options().client

    def apply_leader_hint(
        self, tp: TopicPartition, leader: int, epoch: int, endpoints: Any
    ) -> bool:
        self.hints.append((tp, leader, epoch))
        return True

    def topic_interest(self, name: str) -> InterestHandle:
        return InterestHandle(TopicInterest(), name, _covered)


def _covered(topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
    """A fake client's metadata covers every topic asked for."""
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    done.set_result(True)
    return done


def records(base: int, n: int) -> bytes:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"v%d" % (base + i), headers=[])
    return bytes(b.build())


def make(reset: str = "earliest", **options: Any) -> tuple[Fetcher, SubscriptionState, FakeClient]:
    cfg = ConsumerConfig.from_options(auto_offset_reset=reset, **options)
    subs = SubscriptionState(reset)
    client = FakeClient()
    fetcher = Fetcher(client, subs, cfg, OffsetsClient(client, None))  # type: ignore[arg-type]
    subs.assign_from_user([A, B])
    subs.seek(A, 0)
    subs.seek(B, 0)
    return fetcher, subs, client


def respond(
    fetcher: Fetcher, parts: dict[TopicPartition, Any], *, session_id: int = 0, error: int = 0
) -> FetchSession:
    session = FetchSession()
    subs = fetcher._subs
    wanted = {
        tp: PartitionFetch(fetcher._fetch_offset(tp, subs.state(tp)) or 0, -1, 1 << 20)
        for tp in parts
    }
    plan = session.plan(wanted)
    response = m.FetchResponse(
        error_code=error,
        session_id=session_id,
        responses=[m.FetchableTopicResponse(topic="t", partitions=list(parts.values()))],
    )
    epochs = {tp: fetcher._subs.state(tp).epoch for tp in parts}
    fetcher._handle_response(1, session, plan, 12, response, {}, epochs)
    return session


def pdata(tp: TopicPartition, data: bytes | None = None, error: int = 0, **kw: Any) -> Any:
    return m.FetchResponsePartitionData(
        partition_index=tp.partition,
        error_code=error,
        high_watermark=kw.pop("hw", 10),
        last_stable_offset=kw.pop("lso", 10),
        records=data,
        **kw,
    )


def test_response_fills_buffer_and_metadata() -> None:
    fetcher, subs, _ = make()
    session = respond(fetcher, {A: pdata(A, records(0, 3)), B: pdata(B, None)}, session_id=5)
    assert session.session_id == 5 and session.epoch == 1
    assert fetcher.buffered_partitions() == {A}
    assert subs.state(B).highwater == 10 and subs.state(A).last_poll_ms is not None
    got = fetcher.drain(None, None)
    assert [r.value for r in got[A]] == [b"v0", b"v1", b"v2"]
    assert subs.state(A).position == 3


def test_corrupt_partition_does_not_block_others() -> None:
    fetcher, subs, _ = make()
    bad = bytearray(records(0, 2))
    bad[-1] ^= 0xFF
    respond(fetcher, {A: pdata(A, bytes(bad)), B: pdata(B, records(0, 2))})
    got = fetcher.drain(None, None)  # A's error waits: B's records come first
    assert [r.value for r in got[B]] == [b"v0", b"v1"]
    with pytest.raises(CorruptRecordError):
        fetcher.drain(None, None)
    with pytest.raises(CorruptRecordError):
        fetcher.drain(None, None)  # until the user seeks
    subs.seek(A, 2)
    assert fetcher.drain(None, None) == {}
    # Same through getone's path, with B still flowing between the errors.
    subs.seek(A, 0)
    respond(fetcher, {A: pdata(A, bytes(bad)), B: pdata(B, records(2, 2))})
    assert fetcher.next_record(None).value == b"v2"  # type: ignore[union-attr]
    with pytest.raises(CorruptRecordError):
        fetcher.next_record(None)
    assert fetcher.next_record(None).value == b"v3"  # type: ignore[union-attr]
    with pytest.raises(CorruptRecordError):
        fetcher.next_record(None)


def test_offset_out_of_range_resets_or_raises() -> None:
    fetcher, subs, _ = make("earliest")
    respond(fetcher, {A: pdata(A, error=OffsetOutOfRangeError.errno)})
    assert subs.state(A).reset_strategy == "earliest"
    fetcher2, _, _ = make("none")
    respond(fetcher2, {A: pdata(A, error=OffsetOutOfRangeError.errno)})
    with pytest.raises(OffsetOutOfRangeError):
        fetcher2.drain(None, None)


def test_not_leader_applies_hint_and_fatal_errors_surface() -> None:
    fetcher, _, client = make()
    leader = m.FetchResponseLeaderIdAndEpoch(leader_id=2, leader_epoch=7)
    respond(fetcher, {A: pdata(A, error=6, current_leader=leader)})
    assert client.hints == [(A, 2, 7)]
    assert fetcher.drain(None, None) == {}
    respond(fetcher, {B: pdata(B, error=TopicAuthorizationFailedError.errno)})
    with pytest.raises(TopicAuthorizationFailedError):
        fetcher.drain(None, None)


def test_session_errors_reset_session() -> None:
    fetcher, _, _ = make()
    session = respond(fetcher, {A: pdata(A, records(0, 1))}, session_id=0, error=70)
    assert session.session_id == 0 and session.epoch == 0
    assert fetcher.buffered_partitions() == frozenset()


def test_stale_response_and_stale_buffer_are_dropped() -> None:
    fetcher, subs, _ = make()
    respond(fetcher, {A: pdata(A, records(0, 5))})
    subs.seek(A, 4)  # moves the position: the buffered chunk is stale
    assert fetcher.drain(None, None) == {}
    # A response to a fetch sent before a seek is ignored on arrival.
    session = FetchSession()
    plan = session.plan({A: PartitionFetch(4, -1, 1 << 20)})
    epochs = {A: subs.state(A).epoch}
    subs.seek(A, 1)
    response = m.FetchResponse(
        responses=[m.FetchableTopicResponse(topic="t", partitions=[pdata(A, records(0, 5))])]
    )
    fetcher._handle_response(1, session, plan, 12, response, {}, epochs)
    assert fetcher.buffered_partitions() == frozenset()
    respond(fetcher, {A: pdata(A, records(0, 5))})  # a current one is kept
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [1, 2, 3, 4]


def test_max_records_round_robin_and_pause() -> None:
    fetcher, subs, _ = make()
    respond(fetcher, {A: pdata(A, records(0, 5)), B: pdata(B, records(0, 5))})
    first = fetcher.drain(None, 3)
    second = fetcher.drain(None, 3)
    assert set(first) | set(second) == {A, B}
    subs.pause([B])
    rest = fetcher.drain(None, None)
    assert set(rest) <= {A}
    subs.resume([B])
    assert B in fetcher.drain(None, None) or subs.state(B).position == 5


def test_prefetch_depth_limits_fetchable_partitions() -> None:
    fetcher, subs, _ = make()
    respond(fetcher, {A: pdata(A, records(0, 2))})
    state = subs.state(A)
    assert fetcher._fetch_offset(A, state) == 2  # the next fetch continues after the chunk
    chunk_two = m.FetchResponsePartitionData(partition_index=0, records=records(2, 2))
    session = FetchSession()
    plan = session.plan({A: PartitionFetch(2, -1, 1 << 20)})
    response = m.FetchResponse(
        responses=[m.FetchableTopicResponse(topic="t", partitions=[chunk_two])]
    )
    fetcher._handle_response(1, session, plan, 12, response, {}, {A: state.epoch})
    assert fetcher._fetch_offset(A, state) is None  # two chunks buffered: no more room
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0, 1, 2, 3]


def test_next_record_fast_stays_within_a_batch() -> None:
    """``async for``'s hot path serves only records that are not the last of their
    batch, from the chunk next_record() used, and stops at a seek, a pause or close."""
    fetcher, subs, _ = make()
    assert fetcher.next_record_fast() is None  # nothing taken yet
    respond(fetcher, {A: pdata(A, records(0, 3) + records(3, 3))})
    first = fetcher.next_record(None)
    assert first is not None and first.offset == 0
    second = fetcher.next_record_fast()
    assert second is not None and second.offset == 1 and subs.state(A).position == 2
    assert fetcher.next_record_fast() is None  # offset 2 ends its batch: the slow path
    third = fetcher.next_record(None)
    assert third is not None and third.offset == 2 and subs.state(A).position == 3
    assert fetcher.next_record(None).offset == 3  # type: ignore[union-attr]
    subs.pause([A])
    assert fetcher.next_record_fast() is None
    subs.resume([A])
    assert fetcher.next_record_fast().offset == 4  # type: ignore[union-attr]
    subs.seek(A, 0)
    assert fetcher.next_record_fast() is None


async def test_close_ends_the_fast_path() -> None:
    fetcher, _, _ = make()
    respond(fetcher, {A: pdata(A, records(0, 5))})
    assert fetcher.next_record(None) is not None
    await fetcher.close()
    assert fetcher.next_record_fast() is None
    assert fetcher.buffered_partitions() == frozenset()
