"""Incomplete first batches: grown fetch limits (pre-KIP-74 brokers) and a typed error
instead of a silent re-fetch loop. Responses are hand-made; the fetcher has no loop task."""

from __future__ import annotations

import logging
import struct
from typing import Any

import pytest

from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetch_session import FetchSession, PartitionFetch
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.partial_batch import Action, PartialBatches, declared_size
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import RecordTooLargeError
from aiokafka.protocol import messages as m
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition

from ._fetcher_stub import FetcherStub, metadata

A = TopicPartition("t", 0)
B = TopicPartition("t", 1)


def batch(base: int, n: int, size: int = 10) -> bytes:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 22)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"x" * size, headers=[])
    return bytes(b.build())


def inflate(data: bytes, extra: int) -> bytes:
    """``data`` whose first batch's length field claims ``extra`` more bytes."""
    (length,) = struct.unpack_from(">i", data, 8)
    return data[:8] + struct.pack(">i", length + extra) + data[12:]


def make(**options: Any) -> tuple[Fetcher, SubscriptionState]:
    cfg = ConsumerConfig.from_options(**options)
    subs = SubscriptionState("earliest")
    client = FetcherStub(metadata({A: (1, 0), B: (1, 0)}))
    fetcher = Fetcher(client, subs, cfg, OffsetsClient(client, None))
    subs.assign_from_user([A, B])
    subs.seek(A, 0)
    subs.seek(B, 0)
    return fetcher, subs


def respond(fetcher: Fetcher, parts: dict[TopicPartition, bytes], version: int = 12) -> None:
    """Answer a fetch of ``parts`` (planned as the fetcher would) with their data."""
    subs = fetcher._subs
    wanted = {
        tp: PartitionFetch(subs.state(tp).position or 0, -1, fetcher._partials.max_bytes(tp))
        for tp in parts
    }
    session = FetchSession()
    plan = session.plan(wanted)
    partitions = [
        m.FetchResponsePartitionData(
            partition_index=tp.partition, high_watermark=100, last_stable_offset=100, records=d
        )
        for tp, d in parts.items()
    ]
    response = m.FetchResponse(
        responses=[m.FetchableTopicResponse(topic="t", partitions=partitions)]
    )
    epochs = {tp: subs.state(tp).epoch for tp in parts}
    fetcher._handle_response(1, session, plan, version, response, {}, epochs)


def test_declared_size() -> None:
    data = batch(0, 3)
    assert declared_size(data, 0) == len(data)
    assert declared_size(data[:20], 0) == len(data)
    assert declared_size(data[:11], 0) is None
    assert declared_size(data + data[:12], len(data)) == len(data)


def test_inflated_batch_retries_once_then_raises_naming_the_partition(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A v3+ broker never sends an incomplete first batch within the limit: one more
    fetch (after the back-off), then RecordTooLargeError, logged once at WARNING."""
    fetcher, subs = make()
    bad = inflate(batch(0, 5), 500)
    caplog.set_level(logging.DEBUG, "aiokafka.consumer")
    respond(fetcher, {A: bad, B: batch(0, 2)})
    assert A in fetcher._tp_backoff  # fetched again, but not in a tight loop
    assert fetcher._partials.max_bytes(A) == 1048576  # growing would not help
    assert [r.offset for r in fetcher.drain(None, None)[B]] == [0, 1]
    assert fetcher.drain(None, None) == {}  # nothing yet, no error yet
    respond(fetcher, {A: bad})
    with pytest.raises(RecordTooLargeError) as info:
        fetcher.drain(None, None)
    text = str(info.value)
    assert "topic 't' partition 0 offset 0" in text and "broken response" in text
    with pytest.raises(RecordTooLargeError):  # stays until the user seeks
        fetcher.next_record(None)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "offset 0" in warnings[0].getMessage()
    assert fetcher._fetch_offset(A, subs.state(A)) is None  # A is not fetched meanwhile
    # A seek past it (here: back to the same offset, now healthy) resumes the fetches.
    subs.seek(A, 0)
    assert fetcher._fetch_offset(A, subs.state(A)) == 0
    respond(fetcher, {A: batch(0, 5)})
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0, 1, 2, 3, 4]


def test_truncated_batch_after_earlier_batches_raises_at_its_offset() -> None:
    fetcher, subs = make()
    subs.seek(A, 3)
    data = batch(0, 3) + batch(3, 4)[:-9]  # a batch before the position, then a cut one
    respond(fetcher, {A: data})
    respond(fetcher, {A: data})
    with pytest.raises(RecordTooLargeError, match=r"offset 3: .*declares"):
        fetcher.drain(None, None)
    assert subs.state(A).position == 3


def test_pre_kip74_broker_grows_the_partition_limit_to_the_batch_size() -> None:
    """Fetch v2: the broker cuts a batch at the partition limit every time; the next
    request asks for the batch's declared size and gets it whole."""
    fetcher, _ = make(max_partition_fetch_bytes=1000, fetch_max_bytes=100_000)
    big = batch(0, 4, size=1500)
    respond(fetcher, {A: big[:1000], B: batch(0, 1)}, version=2)
    assert fetcher._partials.max_bytes(A) == len(big)  # the declared size
    assert fetcher._partials.max_bytes(B) == 1000
    assert A not in fetcher._tp_backoff  # fetched again at once
    respond(fetcher, {A: big + batch(4, 1, size=1500)[:500]}, version=2)
    assert [r.offset for r in fetcher.drain(None, None)[A]] == [0, 1, 2, 3]
    assert fetcher._partials.max_bytes(A) == 1000  # back to normal after progress


def test_growth_is_bounded_and_then_raises() -> None:
    fetcher, _ = make(max_partition_fetch_bytes=1000, fetch_max_bytes=4000)
    big = batch(0, 4, size=1500)  # ~6 KB: more than fetch_max_bytes
    respond(fetcher, {A: big[:1000]}, version=2)
    with pytest.raises(RecordTooLargeError, match=r"declares \d+ bytes, more than the 4000"):
        fetcher.drain(None, None)
    # Header cut too (size unknown): doubled up to the cap, then one retry, then the error.
    partials = PartialBatches(1000, 4000)
    limits, action = [], None
    for _ in range(10):
        limits.append(partials.max_bytes(A))
        action = partials.on_incomplete(A, 0, limits[-1], b"\0" * 5, 0, True)
        if isinstance(action, RecordTooLargeError):
            break
    assert limits == [1000, 2000, 4000, 4000]
    assert "cut at the fetch limit of 4000" in str(action)


def test_tracker_forgets_unassigned_and_resets_on_seek_back() -> None:
    partials = PartialBatches(1000, 10_000)
    cut = batch(0, 3, size=800)[:1000]
    assert partials.on_incomplete(A, 0, 1000, cut, 0, True) is Action.GROW
    assert partials.max_bytes(A) == len(batch(0, 3, size=800))
    partials.retain([B])
    assert partials.max_bytes(A) == 1000
    assert partials.on_incomplete(A, 0, 1000, cut, 0, False) is Action.RETRY
    assert isinstance(partials.on_incomplete(A, 0, 1000, cut, 0, False), RecordTooLargeError)
    # After the error a seek back to the offset gets one more try.
    assert partials.on_incomplete(A, 0, 1000, cut, 0, False) is Action.RETRY
    # Another offset is a new incident.
    assert partials.on_incomplete(A, 5, 1000, cut, 0, False) is Action.RETRY


def test_huge_length_within_the_limit_is_a_broken_response() -> None:
    """A length field claiming 2 GB in data well under the limit is not a size cut:
    the error says the response is broken instead of asking for larger limits."""
    partials = PartialBatches(1000, 10_000)
    data = batch(0, 2)
    bad = data[:8] + struct.pack(">i", 2**31 - 1) + data[12:]
    assert partials.on_incomplete(A, 0, 1000, bad, 0, False) is Action.RETRY
    error = partials.on_incomplete(A, 0, 1000, bad, 0, False)
    assert isinstance(error, RecordTooLargeError)
    assert "broken response" in str(error) and "increase" not in str(error)
