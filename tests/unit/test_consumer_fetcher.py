"""Fetcher buffer and response handling with hand-made responses (no broker).

Each test drives the fetcher through :meth:`Fetcher.run_once` (one turn of its loop,
run in the test's task) over :class:`tests.unit._fetcher_stub.FetcherStub`, which
answers the Fetch requests the fetcher sends with the responses the test queued.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import (
    CorruptRecordError,
    IllegalStateError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
)
from aiokafka.protocol import messages as m
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.record.util import calc_crc32c
from aiokafka.structs import TopicPartition

from ._fetcher_stub import FetcherStub, metadata

A = TopicPartition("t", 0)
B = TopicPartition("t", 1)


def records(base: int, n: int) -> bytes:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"v%d" % (base + i), headers=[])
    return bytes(b.build())


def make(reset: str = "earliest", **options: Any) -> tuple[Fetcher, SubscriptionState, FetcherStub]:
    """Partitions A and B at offset 0, both led by node 1."""
    cfg = ConsumerConfig.from_options(auto_offset_reset=reset, **options)
    subs = SubscriptionState(reset)
    client = FetcherStub(metadata({A: (1, 0), B: (1, 0)}))
    fetcher = Fetcher(client, subs, cfg, OffsetsClient(client, None))
    subs.assign_from_user([A, B])
    subs.seek(A, 0)
    subs.seek(B, 0)
    return fetcher, subs, client


async def respond(
    fetcher: Fetcher,
    client: FetcherStub,
    parts: dict[TopicPartition, Any],
    *,
    session_id: int = 0,
    error: int = 0,
) -> None:
    """One fetcher turn whose Fetch to node 1 gets ``parts`` as its answer."""
    client.answer_fetch(
        1,
        m.FetchResponse(
            error_code=error,
            session_id=session_id,
            responses=[m.FetchableTopicResponse(topic="t", partitions=list(parts.values()))],
        ),
    )
    await asyncio.wait_for(fetcher.run_once(), 5)


def pdata(tp: TopicPartition, data: bytes | None = None, error: int = 0, **kw: Any) -> Any:
    return m.FetchResponsePartitionData(
        partition_index=tp.partition,
        error_code=error,
        high_watermark=kw.pop("hw", 10),
        last_stable_offset=kw.pop("lso", 10),
        records=data,
        **kw,
    )


async def test_response_fills_buffer_and_metadata() -> None:
    fetcher, subs, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 3)), B: pdata(B, None)}, session_id=5)
    session = fetcher.session(1)
    assert session is not None and session.session_id == 5 and session.epoch == 1
    assert fetcher.buffered_partitions() == {A}
    assert subs.state(B).highwater == 10 and subs.state(A).last_poll_ms is not None
    got = fetcher.drain(None, None)
    assert [r.value for r in got[A]] == [b"v0", b"v1", b"v2"]
    assert subs.state(A).position == 3


async def test_corrupt_partition_does_not_block_others() -> None:
    fetcher, subs, client = make()
    bad = bytearray(records(0, 2))
    bad[-1] ^= 0xFF
    await respond(fetcher, client, {A: pdata(A, bytes(bad)), B: pdata(B, records(0, 2))})
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
    await respond(fetcher, client, {A: pdata(A, bytes(bad)), B: pdata(B, records(2, 2))})
    assert fetcher.next_record(None).value == b"v2"  # type: ignore[union-attr]
    with pytest.raises(CorruptRecordError):
        fetcher.next_record(None)
    assert fetcher.next_record(None).value == b"v3"  # type: ignore[union-attr]
    with pytest.raises(CorruptRecordError):
        fetcher.next_record(None)


async def test_offset_out_of_range_resets_or_raises() -> None:
    fetcher, subs, client = make("earliest")
    await respond(fetcher, client, {A: pdata(A, error=OffsetOutOfRangeError.errno)})
    assert subs.state(A).reset_strategy == "earliest"
    fetcher2, _, client2 = make("none")
    await respond(fetcher2, client2, {A: pdata(A, error=OffsetOutOfRangeError.errno)})
    with pytest.raises(OffsetOutOfRangeError):
        fetcher2.drain(None, None)


async def test_not_leader_applies_hint_and_fatal_errors_surface() -> None:
    fetcher, _, client = make()
    leader = m.FetchResponseLeaderIdAndEpoch(leader_id=2, leader_epoch=7)
    await respond(fetcher, client, {A: pdata(A, error=6, current_leader=leader)})
    assert client.hints == [(A, 2, 7)]
    assert fetcher.drain(None, None) == {}
    await respond(fetcher, client, {B: pdata(B, error=TopicAuthorizationFailedError.errno)})
    with pytest.raises(TopicAuthorizationFailedError):
        fetcher.drain(None, None)


async def test_session_errors_reset_session() -> None:
    fetcher, _, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 1))}, session_id=7)
    await respond(fetcher, client, {A: pdata(A, records(1, 1))}, session_id=0, error=70)
    session = fetcher.session(1)
    assert session is not None and session.session_id == 0 and session.epoch == 0
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0]  # not the second


async def test_stale_response_and_stale_buffer_are_dropped() -> None:
    fetcher, subs, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 5))})
    subs.seek(A, 4)  # moves the position: the buffered chunk is stale
    assert fetcher.drain(None, None) == {}
    # A response to a fetch sent before a seek is ignored on arrival.
    client.during_send = lambda: subs.seek(A, 1)
    await respond(fetcher, client, {A: pdata(A, records(0, 5))})
    assert client.last_fetch_offsets()[A] == 4
    assert fetcher.buffered_partitions() == frozenset()
    client.during_send = None
    await respond(fetcher, client, {A: pdata(A, records(0, 5))})  # a current one is kept
    assert client.last_fetch_offsets()[A] == 1
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [1, 2, 3, 4]


async def test_max_records_round_robin_and_pause() -> None:
    fetcher, subs, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 5)), B: pdata(B, records(0, 5))})
    first = fetcher.drain(None, 3)
    second = fetcher.drain(None, 3)
    assert set(first) | set(second) == {A, B}
    subs.pause([B])
    rest = fetcher.drain(None, None)
    assert set(rest) <= {A}
    subs.resume([B])
    assert B in fetcher.drain(None, None) or subs.state(B).position == 5


async def test_prefetch_depth_limits_fetchable_partitions() -> None:
    fetcher, _, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 2))})
    chunk_two = m.FetchResponsePartitionData(partition_index=0, records=records(2, 2))
    await respond(fetcher, client, {A: chunk_two})
    # The next fetch continued after the buffered chunk.
    assert client.last_fetch_offsets()[A] == 2
    await respond(fetcher, client, {})
    # Two chunks buffered: A has no room, so the fetch asks for B only.
    assert client.last_fetch_offsets() == {B: 0}
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0, 1, 2, 3]


async def test_next_record_fast_crosses_batches() -> None:
    """``async for``'s hot path serves the records of the chunk next_record() used,
    batch after batch: after a batch's last record the position is the batch's next
    offset (past offsets compaction removed), and it stops at a pause, a seek, and
    the end of the chunk."""
    fetcher, subs, client = make()
    assert fetcher.buffer.next_record_fast() is None  # nothing taken yet
    compacted = bytearray(records(0, 3))  # offsets 0-2, and 3-4 compacted away:
    struct.pack_into(">i", compacted, 23, 4)  # lastOffsetDelta 4, next offset 5
    struct.pack_into(">I", compacted, 17, calc_crc32c(memoryview(compacted)[21:]))
    await respond(fetcher, client, {A: pdata(A, bytes(compacted) + records(5, 3))})
    first = fetcher.next_record(None)
    assert first is not None and first.offset == 0
    got = fetcher.buffer.next_record_fast()
    assert got is not None and got.offset == 1 and subs.state(A).position == 2
    got = fetcher.buffer.next_record_fast()
    assert got is not None and got.offset == 2 and subs.state(A).position == 5
    got = fetcher.buffer.next_record_fast()  # the next batch, loaded by the hot path
    assert got is not None and got.offset == 5 and subs.state(A).position == 6
    subs.pause([A])
    assert fetcher.buffer.next_record_fast() is None
    subs.resume([A])
    assert [fetcher.buffer.next_record_fast().offset for _ in range(2)] == [6, 7]  # type: ignore[union-attr]
    assert subs.state(A).position == 8
    assert fetcher.buffer.next_record_fast() is None  # the chunk is used up: next_record's turn
    subs.seek(A, 0)
    assert fetcher.buffer.next_record_fast() is None


async def test_next_record_fast_with_deserializers() -> None:
    """With deserializers the hot path crosses batches too; one that raises for the
    next batch raises from it, as from next_record, and the batch stays."""
    calls: list[bytes] = []

    def decode(value: bytes) -> str:
        calls.append(value)
        if value == b"v2" and calls.count(value) < 3:
            raise ValueError("bad v2")
        return value.decode()

    fetcher, subs, client = make(value_deserializer=decode)
    await respond(fetcher, client, {A: pdata(A, records(0, 2) + records(2, 2))})
    assert fetcher.next_record(None).value == "v0"  # type: ignore[union-attr]
    got = fetcher.buffer.next_record_fast()
    assert got is not None and got.value == "v1" and subs.state(A).position == 2
    with pytest.raises(ValueError, match="bad v2"):
        fetcher.buffer.next_record_fast()
    assert subs.state(A).position == 2
    with pytest.raises(ValueError, match="bad v2"):
        fetcher.next_record(None)  # the slow path meets the same batch and error
    assert fetcher.next_record(None).value == "v2"  # type: ignore[union-attr]
    assert fetcher.buffer.next_record_fast().value == "v3"  # type: ignore[union-attr]
    assert subs.state(A).position == 4 and calls.count(b"v2") == 3


async def test_close_ends_the_fast_path() -> None:
    fetcher, _, client = make()
    await respond(fetcher, client, {A: pdata(A, records(0, 5))})
    assert fetcher.next_record(None) is not None
    await fetcher.close()
    assert fetcher.buffer.next_record_fast() is None
    assert fetcher.buffered_partitions() == frozenset()


async def test_run_once_refuses_a_running_loop() -> None:
    fetcher, _, _ = make()
    fetcher.start()
    try:
        with pytest.raises(IllegalStateError, match="loop is not running"):
            await fetcher.run_once()
    finally:
        await fetcher.close()


class _SlowRefreshStub(FetcherStub):
    """Refreshes stay pending until the test answers them; reads of the metadata are
    counted, and a loop that spins without yielding is stopped by an error."""

    def __init__(self, cluster: ClusterMetadata) -> None:
        self.reads = 0
        self.pending: list[asyncio.Future[ClusterMetadata]] = []
        super().__init__(cluster)

    @property  # type: ignore[override]
    def cluster(self) -> ClusterMetadata:
        self.reads += 1
        if self.reads > 2000:
            raise AssertionError("the fetch loop reads the metadata without end")
        return self._cluster

    @cluster.setter
    def cluster(self, cluster: ClusterMetadata) -> None:
        self._cluster = cluster

    def request_refresh(self, reason: str) -> asyncio.Future[ClusterMetadata]:
        self.refreshes.append(reason)
        refresh: asyncio.Future[ClusterMetadata] = asyncio.get_running_loop().create_future()
        self.pending.append(refresh)
        return refresh


async def test_a_partition_missing_from_metadata_waits_for_the_refresh_without_spinning() -> None:
    """The topic is known but the assigned partition is not (added after the last
    refresh): the loop asks for a refresh and sleeps until it ends. It used to set
    its own wake-up on every turn while the refresh was pending and so never yielded
    to the event loop: the refresh could not run, and getmany() hung."""
    cfg = ConsumerConfig.from_options(auto_offset_reset="earliest")
    subs = SubscriptionState("earliest")
    client = _SlowRefreshStub(metadata({A: (1, 0)}))  # no partition 1 yet
    fetcher = Fetcher(client, subs, cfg, OffsetsClient(client, None))
    subs.assign_from_user([B])
    subs.seek(B, 0)
    fetcher.start()
    try:
        await asyncio.sleep(0.3)
        assert client.reads < 200, client.reads
        assert len(client.pending) == 1  # one refresh asked for, and waited for
        client.cluster = metadata({A: (1, 0), B: (1, 0)})
        client.pending[0].set_result(client.cluster)
        for _ in range(100):
            if client.fetches():
                break
            await asyncio.sleep(0.01)
        assert client.last_fetch_offsets() == {B: 0}
    finally:
        await fetcher.close()
