"""KIP-320 position validation and KIP-392 follower fetching in the fetcher, driven by
recorded responses (a real broker cannot be made to truncate its log on demand)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetch_session import FetchSession, PartitionFetch, build_fetch_request
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.consumer.validation import Verdict, judge
from aiokafka.errors import (
    FencedLeaderEpochError,
    KafkaConnectionError,
    LogTruncationError,
    NotLeaderForPartitionError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
)
from aiokafka.protocol import messages as m
from aiokafka.protocol._gen import offset_for_leader_epoch as _oe
from aiokafka.record import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition

from ._fetcher_stub import FetcherStub, metadata

A = TopicPartition("t", 0)
B = TopicPartition("t", 1)


class FakeClient(FetcherStub):
    """The cluster client as the fetcher sees it (tests/unit/_fetcher_stub.py), with
    OffsetForLeaderEpoch answers per node in ``answers`` and no leader hint applied."""

    def __init__(self, cluster: ClusterMetadata) -> None:
        super().__init__(cluster)
        self.answers = self.epoch_answers
        self.hint_result = False


def epoch_end(tp: TopicPartition, end_offset: int, leader_epoch: int, error: int = 0) -> Any:
    return _oe.OffsetForLeaderEpochResponse(
        topics=[
            _oe.OffsetForLeaderTopicResult(
                topic=tp.topic,
                partitions=[
                    _oe.EpochEndOffset(
                        partition=tp.partition,
                        error_code=error,
                        leader_epoch=leader_epoch,
                        end_offset=end_offset,
                    )
                ],
            )
        ]
    )


def records(base: int, n: int) -> bytes:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"v%d" % (base + i), headers=[])
    return bytes(b.build())


def make(
    reset: str = "earliest", leaders: dict[TopicPartition, tuple[int, int]] | None = None
) -> tuple[Fetcher, SubscriptionState, FakeClient]:
    """A at offset 10 read under leader epoch 3, B at 0 without an epoch; the
    metadata already names a new leader (node 2, epoch 4) for A."""
    cfg = ConsumerConfig.from_options(auto_offset_reset=reset, client_rack="r2")
    subs = SubscriptionState(reset)
    client = FakeClient(metadata(leaders or {A: (2, 4), B: (1, 1)}))
    fetcher = Fetcher(client, subs, cfg, OffsetsClient(client, None))  # type: ignore[arg-type]
    subs.assign_from_user([A, B])
    subs.seek(A, 10, 3)
    subs.seek(B, 0)
    return fetcher, subs, client


def respond(fetcher: Fetcher, node: int, parts: dict[TopicPartition, Any]) -> None:
    session = FetchSession()
    subs = fetcher._subs
    wanted = {
        tp: PartitionFetch(fetcher._fetch_offset(tp, subs.state(tp)) or 0, -1, 1 << 20)
        for tp in parts
    }
    plan = session.plan(wanted)
    response = m.FetchResponse(
        responses=[m.FetchableTopicResponse(topic="t", partitions=list(parts.values()))]
    )
    epochs = {tp: subs.state(tp).epoch for tp in parts}
    fetcher._handle_response(node, session, plan, 12, response, {}, epochs)


def pdata(tp: TopicPartition, data: bytes | None = None, error: int = 0, **kw: Any) -> Any:
    return m.FetchResponsePartitionData(
        partition_index=tp.partition,
        error_code=error,
        high_watermark=20,
        last_stable_offset=20,
        records=data,
        **kw,
    )


def needs(fetcher: Fetcher, tp: TopicPartition) -> bool:
    state = fetcher._subs.state(tp)
    return fetcher.validator.needs_validation(tp, state, fetcher._client.cluster.leader_epoch(tp))


def test_judge() -> None:
    assert judge(10, 0, 12, 3) is Verdict.VALID
    assert judge(10, 0, 10, 3) is Verdict.VALID
    assert judge(10, 0, 7, 3) is Verdict.TRUNCATED
    assert judge(10, 0, -1, -1) is Verdict.UNDEFINED
    assert judge(10, FencedLeaderEpochError.errno, -1, -1) is Verdict.RETRY
    assert judge(10, NotLeaderForPartitionError.errno, -1, -1) is Verdict.RETRY
    assert judge(10, TopicAuthorizationFailedError.errno, -1, -1) is Verdict.FAILED


def test_only_positions_with_an_epoch_under_a_new_leader_wait() -> None:
    fetcher, subs, client = make()
    assert needs(fetcher, A)  # read under epoch 3, leader now at 4
    assert not needs(fetcher, B)  # a plain seek names no epoch: nothing to check
    assert fetcher.validator.pending() == [A]
    subs.seek(A, 5)  # the user moves the position: the check is moot
    assert fetcher.validator.pending() == []
    assert not needs(fetcher, A)
    # Position 5 now counts as checked under epoch 4; a later leader change with a
    # consumed epoch asks again.
    subs.state(A).advance(5, 4)  # a record of leader epoch 4 consumed
    client.cluster = metadata({A: (3, 5), B: (1, 1)})
    assert needs(fetcher, A)


async def test_intact_log_resumes_at_the_position() -> None:
    fetcher, subs, client = make()
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, 12, 3)
    await fetcher._validate([A])
    ((node, request),) = client.sent
    assert node == 2 and request.replica_id == -1
    (part,) = request.topics[0].partitions
    assert (part.partition, part.current_leader_epoch, part.leader_epoch) == (0, 4, 3)
    assert subs.state(A).position == 10
    assert not needs(fetcher, A) and fetcher.validator.requests_sent == 1
    assert fetcher.validator.truncations == 0


async def test_truncation_with_reset_policy_seeks_to_the_divergence(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fetcher, subs, client = make("latest")
    respond(fetcher, 1, {A: pdata(A, records(10, 3))})  # prefetched from the old leader
    assert fetcher.buffered_partitions() == {A}
    client.answers[1] = KafkaConnectionError("not asked in this test")
    fetcher._send_fetches()  # A waits for validation: its buffer goes, B is fetched
    assert fetcher.buffered_partitions() == frozenset()
    assert fetcher.validator.pending() == [A]
    await asyncio.gather(*fetcher._in_flight.values())  # B's fetch fails; no matter
    # Checked once the fetch ran: under an eager task factory it has already ended
    # inside _send_fetches() (the stub answers without suspending).
    assert [(node, set(client.last_fetch_offsets())) for node, _ in client.fetches()] == [(1, {B})]
    client.answers[2] = epoch_end(A, 7, 3)
    with caplog.at_level(logging.WARNING, logger="aiokafka.consumer.validation"):
        await fetcher._validate([A])
    assert (subs.state(A).position, subs.state(A).position_epoch) == (7, 3)
    assert "truncated" in caplog.text
    assert fetcher.validator.truncations == 1
    assert not needs(fetcher, A)  # the new position is already validated
    assert fetcher.drain(None, None) == {}  # the old leader's records are gone


async def test_truncation_without_reset_policy_raises_for_that_partition_only() -> None:
    fetcher, subs, client = make("none")
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, 7, 3)
    await fetcher._validate([A])
    respond(fetcher, 1, {B: pdata(B, records(0, 2))})
    got = fetcher.drain(None, None)  # B's records first
    assert [r.offset for r in got[B]] == [0, 1]
    with pytest.raises(LogTruncationError) as info:
        fetcher.drain(None, None)
    assert isinstance(info.value, OffsetOutOfRangeError)
    assert info.value.divergent_offsets == {A: 7}
    assert subs.state(A).position == 10  # untouched: the user decides
    subs.pause([B])
    fetcher._send_fetches()  # no fetch and no new validation while the error stands
    assert fetcher.validator.pending() == [] and not fetcher.in_flight_nodes
    subs.seek(A, 7)
    assert fetcher.drain(None, None) == {}


async def test_unknown_end_offset_resets_by_policy() -> None:
    fetcher, subs, client = make("earliest")
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, -1, -1)
    await fetcher._validate([A])
    assert subs.state(A).reset_strategy == "earliest"
    fetcher, subs, client = make("none")
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, -1, -1)
    await fetcher._validate([A])
    with pytest.raises(OffsetOutOfRangeError):
        fetcher.drain(None, None)


async def test_fenced_or_failed_request_is_retried_after_a_metadata_refresh() -> None:
    fetcher, subs, client = make()
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, -1, -1, error=FencedLeaderEpochError.errno)
    await fetcher._validate([A])
    assert fetcher.validator.pending() == [A] and fetcher._refresh_wanted
    fetcher._refresh_wanted = False
    client.answers[2] = KafkaConnectionError("gone")
    await fetcher._validate([A])
    assert fetcher.validator.pending() == [A] and fetcher._refresh_wanted
    client.answers[2] = epoch_end(A, 15, 3)
    await fetcher._validate([A])
    assert fetcher.validator.pending() == [] and subs.state(A).position == 10


async def test_answer_for_a_moved_position_is_ignored_and_old_brokers_are_trusted() -> None:
    fetcher, subs, client = make("none")
    assert needs(fetcher, A)
    client.answers[2] = epoch_end(A, 7, 3)
    client.during_send = lambda: subs.seek(A, 3)  # while the request is in flight
    await fetcher._validate([A])
    assert len(client.sent) == 1
    assert subs.state(A).position == 3 and fetcher.drain(None, None) == {}
    fetcher, subs, client = make("none")
    client.versions[2] = 2  # before KIP-320's consumer support
    assert needs(fetcher, A)
    await fetcher._validate([A])
    assert client.sent == [] and fetcher.validator.pending() == []


def test_data_for_a_partition_awaiting_validation_is_dropped() -> None:
    fetcher, _, _ = make()
    assert needs(fetcher, A)
    respond(fetcher, 1, {A: pdata(A, records(10, 3))})  # answer from the old leader
    assert fetcher.buffered_partitions() == frozenset()


def test_preferred_replica_is_followed_until_metadata_or_errors_change() -> None:
    fetcher, subs, client = make(leaders={A: (1, 4), B: (1, 1)})
    state = subs.state(B)
    respond(fetcher, 1, {B: pdata(B, None, preferred_read_replica=3)})
    assert fetcher._read_replica(B, state, 0.0) == 3
    respond(fetcher, 3, {B: pdata(B, records(0, 2))})
    assert fetcher.fetched_from(B) == 3
    # A new leader epoch (leader change) sends fetches back to the leader.
    client.cluster = metadata({A: (1, 4), B: (2, 2)})
    assert fetcher._read_replica(B, state, 0.0) == 2 and state.preferred_read_replica == -1
    # So does a failed fetch from the replica...
    respond(fetcher, 2, {B: pdata(B, None, preferred_read_replica=3)})
    fetcher._leave_replica(3, [B])
    assert fetcher._read_replica(B, state, 0.0) == 2
    # ...and OFFSET_OUT_OF_RANGE from a lagging follower (no reset).
    respond(fetcher, 2, {B: pdata(B, None, preferred_read_replica=3)})
    respond(fetcher, 3, {B: pdata(B, error=OffsetOutOfRangeError.errno)})
    assert state.reset_strategy is None and fetcher._read_replica(B, state, 0.0) == 2


def test_fetch_request_carries_leader_epoch_and_rack() -> None:
    fetcher, _, client = make()
    plan = FetchSession().plan({A: PartitionFetch(10, 4, 1 << 20)})
    request, _ = build_fetch_request(plan, 12, client.cluster, fetcher._config)
    assert request.rack_id == "r2"
    (part,) = request.topics[0].partitions
    assert (part.fetch_offset, part.current_leader_epoch) == (10, 4)
    # Below v9 / v11 the generated encoder drops them: on the wire they are absent.
    old, _ = build_fetch_request(plan, 8, client.cluster, fetcher._config)
    sent = m.FetchRequest.decode(old.encode(8), 8)
    assert sent.rack_id == "" and sent.topics[0].partitions[0].current_leader_epoch == -1
