"""KIP-848 membership around its state machine, with stub client and offsets (no broker):
the order of a revocation against a real fetcher buffer, and commit error messages."""

from __future__ import annotations

from typing import Any

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.consumer.group.consumer_protocol import ConsumerProtocolMembership
from aiokafka.consumer.group.membership import MembershipHooks
from aiokafka.consumer.offsets import OffsetsClient
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.structs import ConsumerRecord, TopicPartition

from .test_consumer_fetcher import FakeClient, pdata, records, respond

A = TopicPartition("t", 0)  # revoked
B = TopicPartition("t", 1)  # kept


class _Listener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.revoked: list[list[TopicPartition]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.revoked.append(list(revoked))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        pass


def _subscribed_fetcher() -> tuple[Fetcher, SubscriptionState, FakeClient, ConsumerConfig]:
    config = ConsumerConfig.from_options(group_id="g", group_protocol="consumer")
    subs = SubscriptionState("earliest")
    client = FakeClient()
    fetcher = Fetcher(client, subs, config, OffsetsClient(client, "g"))  # type: ignore[arg-type]
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
    respond(fetcher, {A: pdata(A, records(0, 5)), B: pdata(B, records(0, 5))})
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
