"""KIP-848 membership around its state machine, with stub client and offsets (no broker):
the order of a revocation against a real fetcher buffer, and what commit errors say."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.group.consumer_protocol import ConsumerProtocolMembership
from aiokafka.consumer.group.membership import MembershipHooks
from aiokafka.consumer.group.reconcile import MemberState
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import (
    CommitFailedError,
    FencedMemberEpochError,
    KafkaError,
    StaleMemberEpochError,
    UnknownMemberIdError,
)
from aiokafka.structs import ConsumerRecord, TopicPartition

from ._fetcher_stub import FetcherStub, metadata
from .test_consumer_fetcher import pdata, records, respond

A = TopicPartition("t", 0)  # revoked
B = TopicPartition("t", 1)  # kept


class _Listener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.revoked: list[list[TopicPartition]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.revoked.append(list(revoked))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        pass


def _subscribed_fetcher() -> tuple[Fetcher, SubscriptionState, FetcherStub, ConsumerConfig]:
    config = ConsumerConfig.from_options(group_id="g", group_protocol="consumer")
    subs = SubscriptionState("earliest")
    client = FetcherStub(metadata({A: (1, 0), B: (1, 0)}))
    fetcher = Fetcher(client, subs, config, OffsetsClient(client, "g"))
    subs.subscribe(["t"], _Listener())
    subs.assign_from_subscribed([A, B])
    subs.seek(A, 0)
    subs.seek(B, 0)
    return fetcher, subs, client, config


async def test_revoke_stops_handing_out_records_before_the_commit() -> None:
    """A getmany() while the revoke commit is in flight must not return records of the
    revoked partition: the commit took its position before, so the next owner would
    read them again (duplicates). Records of kept partitions still flow."""
    fetcher, subs, client, config = _subscribed_fetcher()
    await respond(fetcher, client, {A: pdata(A, records(0, 5)), B: pdata(B, records(0, 5))})
    # The application has read two records of A before the rebalance.
    assert [r.offset for r in fetcher.drain(frozenset({A}), 2)[A]] == [0, 1]

    during_commit: dict[TopicPartition, list[ConsumerRecord[Any, Any]]] = {}
    committed: dict[TopicPartition, int] = {}

    async def commit_revoked(tps: list[TopicPartition]) -> None:
        for tp in tps:
            committed[tp] = subs.state(tp).position  # type: ignore[assignment]
        # The commit is "in flight": the application polls meanwhile.
        during_commit.update(fetcher.drain(None, None))

    hooks = MembershipHooks(commit_revoked=commit_revoked, stop_fetching=fetcher.forget)
    membership = ConsumerProtocolMembership(
        client,  # type: ignore[arg-type]
        subs,
        config,
        None,  # type: ignore[arg-type]
        hooks,
    )
    await membership._revoke(frozenset({A}))

    assert committed == {A: 2}
    assert A not in during_commit, "records of a partition being revoked were handed out"
    assert [r.offset for r in during_commit[B]] == [0, 1, 2, 3, 4]
    assert subs.state(A).position == 2  # nothing consumed after the commit took it
    assert fetcher.buffered_partitions() == frozenset()
    listener = subs.listener
    assert isinstance(listener, _Listener) and listener.revoked == [[A]]
    assert not subs.state(B).paused


class _FailingOffsets:
    """OffsetCommit answered with ``error``."""

    def __init__(self, error: KafkaError | None) -> None:
        self.error = error
        self.calls: list[tuple[int, str]] = []

    async def commit(self, offsets: Any, *, generation: int, member_id: str) -> None:
        self.calls.append((generation, member_id))
        if self.error is not None:
            raise self.error


def _member(error: KafkaError | None = None) -> tuple[ConsumerProtocolMembership, _FailingOffsets]:
    config = ConsumerConfig.from_options(
        group_id="g", group_protocol="consumer", max_poll_interval_ms=45000
    )
    subs = SubscriptionState()
    subs.subscribe(["t"])
    offsets = _FailingOffsets(error)

    async def commit_revoked(tps: list[TopicPartition]) -> None:
        pass

    membership = ConsumerProtocolMembership(
        FetcherStub(metadata({})),  # type: ignore[arg-type]
        subs,
        config,
        offsets,  # type: ignore[arg-type]
        MembershipHooks(commit_revoked, lambda tps: None),
    )
    machine = membership._machine
    machine.join()
    machine.on_heartbeat(machine.member_id, 7, {})  # a member at epoch 7, nothing owned
    assert machine.state is MemberState.STABLE
    return membership, offsets


async def test_commit_after_max_poll_interval_says_what_to_do() -> None:
    membership, offsets = _member()
    membership._machine.stale()
    with pytest.raises(CommitFailedError) as info:
        await membership.commit({A: 5})
    text = str(info.value)
    assert "max_poll_interval_ms (45000 ms)" in text and "max_poll_records" in text
    assert "poll again" in text
    assert offsets.calls == []  # refused locally, nothing sent


async def test_commit_while_rejoining_after_fencing_says_what_to_do() -> None:
    membership, _ = _member()
    membership._machine.fence()
    membership._machine.join()
    with pytest.raises(CommitFailedError, match="fenced") as info:
        await membership.commit({A: 5})
    assert "max_poll_interval_ms" in str(info.value) and "rejoins" in str(info.value)


async def test_commit_fenced_by_the_coordinator_says_what_to_do() -> None:
    for error in (FencedMemberEpochError(), UnknownMemberIdError()):
        membership, offsets = _member(error)
        with pytest.raises(CommitFailedError) as info:
            await membership.commit({A: 5})
        text = str(info.value)
        assert "fenced member epoch 7" in text and "another member" in text
        assert "max_poll_interval_ms (45000 ms)" in text and "max_poll_records" in text
        assert "group.consumer.session.timeout.ms" in text
        assert info.value.__cause__ is error
        assert offsets.calls == [(7, membership.member_id)]


async def test_commit_with_a_stale_epoch_says_to_poll_and_commit_again() -> None:
    membership, _ = _member(StaleMemberEpochError())
    with pytest.raises(CommitFailedError, match="member epoch 7 is stale") as info:
        await membership.commit({A: 5})
    assert "Poll again" in str(info.value) and "revoked" in str(info.value)


async def test_commit_after_leaving_is_refused() -> None:
    membership, _ = _member()
    membership._machine.leave(static=False)
    with pytest.raises(CommitFailedError, match="left the group"):
        await membership.commit({A: 5})
