"""The pure parts of the classic group protocol: protocol choice, JoinGroup metadata,
the leader's assignment, cooperative revocation and the error table."""

from __future__ import annotations

import asyncio

import pytest

from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.group.assignors import (
    Assignment,
    CooperativeStickyAssignor,
    RangePartitionAssignor,
    RebalanceProtocol,
    RoundRobinPartitionAssignor,
    StaticCluster,
    StickyPartitionAssignor,
    decode_assignment,
    decode_subscription,
)
from aiokafka.consumer.group.classic import ClassicMembership, _assignor_of
from aiokafka.consumer.group.classic_state import (
    NO_GENERATION,
    ErrorAction,
    Generation,
    assignment_changes,
    compute_assignment,
    error_action,
    join_protocols,
    select_rebalance_protocol,
)
from aiokafka.consumer.group.membership import MembershipHooks
from aiokafka.consumer.subscription import SubscriptionState
from aiokafka.errors import (
    CommitFailedError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    GroupAuthorizationFailedError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    KafkaConnectionError,
    MemberIdRequired,
    NotCoordinatorError,
    RebalanceInProgressError,
    RequestTimedOutError,
    UnknownMemberIdError,
)
from aiokafka.structs import OffsetAndMetadata, TopicPartition

T = "t"


def tp(p: int) -> TopicPartition:
    return TopicPartition(T, p)


def test_protocol_is_the_most_advanced_all_assignors_support() -> None:
    coop = CooperativeStickyAssignor()
    assert select_rebalance_protocol([coop]) is RebalanceProtocol.COOPERATIVE
    # Java: a cooperative-capable list with an eager-only assignor falls back to eager.
    assert select_rebalance_protocol([RangePartitionAssignor(), coop]) is RebalanceProtocol.EAGER
    assert select_rebalance_protocol([coop, RangePartitionAssignor()]) is RebalanceProtocol.EAGER
    assert select_rebalance_protocol([StickyPartitionAssignor()]) is RebalanceProtocol.EAGER
    with pytest.raises(ValueError, match="partition_assignment_strategy"):
        select_rebalance_protocol([])


def test_assignor_names_resolve_to_builtins() -> None:
    assert isinstance(_assignor_of("range"), RangePartitionAssignor)
    assert isinstance(_assignor_of("roundrobin"), RoundRobinPartitionAssignor)
    assert isinstance(_assignor_of("cooperative-sticky"), CooperativeStickyAssignor)
    assert isinstance(_assignor_of(StickyPartitionAssignor), StickyPartitionAssignor)
    with pytest.raises(ValueError, match="unknown assignor name 'nope'"):
        _assignor_of("nope")


def test_join_protocols_carry_owned_generation_and_rack_in_order() -> None:
    protocols = join_protocols(
        [CooperativeStickyAssignor(), RangePartitionAssignor(), RangePartitionAssignor()],
        ["b", "a", "a"],
        {tp(1), tp(0)},
        7,
        "rack-1",
    )
    assert [name for name, _ in protocols] == ["cooperative-sticky", "range"]
    for _, metadata in protocols:
        sub = decode_subscription(metadata)
        assert sub.topics == ("a", "b")
        assert sub.owned_partitions == (tp(0), tp(1))
        assert sub.generation_id == 7
        assert sub.rack_id == "rack-1"


def test_leader_assignment_covers_every_member() -> None:
    def meta(topics: list[str]) -> bytes:
        ((_, data),) = join_protocols([RangePartitionAssignor()], topics, (), -1, None)
        return data

    members = [("m1", None, meta([T])), ("m2", "static-2", meta([T])), ("m3", None, meta(["x"]))]
    encoded, topics = compute_assignment(RangePartitionAssignor(), StaticCluster({T: 4}), members)
    assert topics == {T, "x"}  # x is unknown to the cluster: nobody gets it
    assert set(encoded) == {"m1", "m2", "m3"}
    got = {mid: decode_assignment(data).partitions() for mid, data in encoded.items()}
    assert sorted(got["m1"] + got["m2"]) == [tp(p) for p in range(4)]
    assert got["m3"] == []


def test_eager_changes_announce_everything_and_never_revoke() -> None:
    changes = assignment_changes(RebalanceProtocol.EAGER, (), {tp(0), tp(1)})
    assert changes.added == {tp(0), tp(1)}
    assert not changes.revoked and not changes.rejoin


def test_cooperative_changes_revoke_only_what_moves() -> None:
    owned = {tp(0), tp(1), tp(2)}
    changes = assignment_changes(RebalanceProtocol.COOPERATIVE, owned, {tp(1), tp(2), tp(3)})
    assert changes.revoked == {tp(0)}
    assert changes.added == {tp(3)}
    assert changes.rejoin  # the revoked partition goes to its new owner next round
    same = assignment_changes(RebalanceProtocol.COOPERATIVE, owned, owned)
    assert not same.revoked and not same.added and not same.rejoin


def test_generation_reset() -> None:
    gen = Generation(5, "member-1", "range")
    assert gen.valid
    assert gen.without_generation() == Generation(-1, "member-1", None)
    assert not gen.without_generation().valid
    assert not NO_GENERATION.valid
    assert not Generation(3, "", None).valid


@pytest.mark.parametrize(
    ("exc", "action"),
    [
        (MemberIdRequired(), ErrorAction.MEMBER_ID_REQUIRED),
        (RebalanceInProgressError(), ErrorAction.REJOIN),
        (UnknownMemberIdError(), ErrorAction.RESET_MEMBER),
        (IllegalGenerationError(), ErrorAction.RESET_GENERATION),
        (FencedInstanceIdError(), ErrorAction.FATAL),
        (GroupAuthorizationFailedError(), ErrorAction.FATAL),
        (InconsistentGroupProtocolError(), ErrorAction.FATAL),
        (NotCoordinatorError(), ErrorAction.FIND_COORDINATOR),
        (CoordinatorNotAvailableError(), ErrorAction.FIND_COORDINATOR),
        (KafkaConnectionError(), ErrorAction.FIND_COORDINATOR),
        (RequestTimedOutError(), ErrorAction.FIND_COORDINATOR),
        (CoordinatorLoadInProgressError(), ErrorAction.RETRY),
    ],
)
def test_error_table(exc: Exception, action: ErrorAction) -> None:
    assert error_action(exc) is action


# -- membership state transitions, without a broker -------------------------------------


class _FakeClient:
    """Only what the error handling touches: coordinator invalidation and config."""

    def __init__(self) -> None:
        from aiokafka.cluster.config import ClientConfig

        self.config = ClientConfig()
        self.invalidated: list[str] = []

    def invalidate_coordinator(self, key: str, key_type: object = None) -> None:
        self.invalidated.append(key)

    def topic_interest(self, name: str) -> InterestHandle:
        return InterestHandle(TopicInterest(), name, _covered)


def _covered(topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
    """A fake client's metadata covers every topic asked for."""
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    done.set_result(True)
    return done


class _Listener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.events.append(("revoked", revoked))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.events.append(("assigned", assigned))

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.events.append(("lost", lost))


def _membership(
    strategy: str = "range", instance_id: str | None = None
) -> tuple[ClassicMembership, SubscriptionState, _Listener, list[str], _FakeClient]:
    config = ConsumerConfig.from_options(
        group_id="g", group_instance_id=instance_id, partition_assignment_strategy=[strategy]
    )
    subs = SubscriptionState()
    listener = _Listener()
    subs.subscribe([T], listener)
    subs.assign_from_subscribed([tp(0), tp(1)])
    calls: list[str] = []

    async def commit_revoked(tps: list[TopicPartition]) -> None:
        calls.append(f"commit {tps}")

    def stop_fetching(tps: list[TopicPartition]) -> None:
        calls.append(f"forget {tps}")

    client = _FakeClient()
    membership = ClassicMembership(
        client,  # type: ignore[arg-type]
        subs,
        config,
        None,  # type: ignore[arg-type]
        MembershipHooks(commit_revoked, stop_fetching),
    )
    membership._generation = Generation(4, "m-1", strategy)
    membership._rejoin_reason = None
    return membership, subs, listener, calls, client


async def test_unknown_member_loses_partitions_and_resets_member_id() -> None:
    membership, subs, listener, calls, _ = _membership()
    action = await membership._handle_error(UnknownMemberIdError())
    assert action is ErrorAction.RESET_MEMBER
    assert membership.group_metadata().member_id == ""
    assert membership.group_metadata().generation_id == -1
    assert listener.events == [("lost", {tp(0), tp(1)})]
    assert calls == [f"forget {[tp(0), tp(1)]}"]  # nothing committed for lost partitions
    assert subs.assigned_partitions() == frozenset()
    assert membership._rejoin_reason is not None


async def test_illegal_generation_keeps_the_member_id() -> None:
    membership, _, listener, _, _ = _membership()
    await membership._handle_error(IllegalGenerationError())
    meta = membership.group_metadata()
    assert (meta.generation_id, meta.member_id) == (-1, "m-1")
    assert listener.events == [("lost", {tp(0), tp(1)})]


async def test_coordinator_errors_rediscover_without_losing_partitions() -> None:
    membership, subs, listener, _, client = _membership()
    await membership._handle_error(NotCoordinatorError())
    assert client.invalidated == ["g"]
    assert listener.events == []
    assert subs.assigned_partitions() == {tp(0), tp(1)}
    assert membership.group_metadata().generation_id == 4


async def test_eager_prepare_commits_then_revokes_everything() -> None:
    membership, subs, listener, calls, _ = _membership("range")
    await membership._prepare_join()
    assert calls == [f"commit {[tp(0), tp(1)]}", f"forget {[tp(0), tp(1)]}"]
    assert listener.events == [("revoked", {tp(0), tp(1)})]
    assert subs.assigned_partitions() == frozenset()
    # A retried JoinGroup of the same rebalance does not announce it again...
    await membership._prepare_join()
    assert listener.events == [("revoked", {tp(0), tp(1)})]
    # ...the next rebalance does, with nothing owned: revoked(set()) as in aiokafka.
    await membership._complete(Assignment.of([]))
    assert listener.events[-1] == ("assigned", set())
    await membership._prepare_join()
    assert listener.events[-1] == ("revoked", set())
    assert all(type(tps) is set for _, tps in listener.events)


async def test_eager_first_join_announces_an_empty_revoke_once() -> None:
    membership, subs, listener, calls, _ = _membership("range")
    subs.assign_from_subscribed([])
    await membership._prepare_join()
    await membership._prepare_join()  # JoinGroup failed and is retried
    assert listener.events == [("revoked", set())] and calls == []
    await membership._complete(Assignment.of([tp(0)]))
    assert listener.events == [("revoked", set()), ("assigned", {tp(0)})]


async def test_cooperative_prepare_keeps_partitions() -> None:
    membership, subs, listener, calls, _ = _membership("cooperative-sticky")
    await membership._prepare_join()
    assert calls == [] and listener.events == []
    assert subs.assigned_partitions() == {tp(0), tp(1)}


async def test_cooperative_complete_revokes_only_what_moved() -> None:
    membership, subs, listener, calls, _ = _membership("cooperative-sticky")
    await membership._complete(Assignment.of([tp(1), tp(2)]))
    assert listener.events == [("revoked", {tp(0)}), ("assigned", {tp(2)})]
    assert calls == [f"commit {[tp(0)]}", f"forget {[tp(0)]}"]
    assert subs.assigned_partitions() == {tp(1), tp(2)}
    assert membership._rejoin_reason is not None  # tp0 goes to its new owner next round


async def test_fatal_error_raised_once_but_fenced_every_time() -> None:
    membership, _, _, _, _ = _membership(instance_id="static-1")
    await membership._handle_error(GroupAuthorizationFailedError())
    with pytest.raises(GroupAuthorizationFailedError):
        membership.check_errors()
    membership.check_errors()  # raised once; the next poll retries
    await membership._handle_error(FencedInstanceIdError())
    for _ in range(2):
        with pytest.raises(FencedInstanceIdError):
            membership.check_errors()
    assert membership.group_metadata().member_id == ""


async def test_commit_without_generation_explains_what_to_do() -> None:
    membership, _, _, _, _ = _membership()
    membership._generation = NO_GENERATION
    with pytest.raises(CommitFailedError, match="max_poll_interval_ms"):
        await membership.commit({tp(0): OffsetAndMetadata(5, "")})
