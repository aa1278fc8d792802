"""The pure parts of the classic group protocol: protocol choice, JoinGroup metadata,
the leader's assignment, cooperative revocation and the error table."""

from __future__ import annotations

import pytest

from aiokafka.consumer.group.assignors import (
    CooperativeStickyAssignor,
    RangePartitionAssignor,
    RebalanceProtocol,
    RoundRobinPartitionAssignor,
    StaticCluster,
    StickyPartitionAssignor,
    decode_assignment,
    decode_subscription,
)
from aiokafka.consumer.group.classic import _assignor_of
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
from aiokafka.errors import (
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
from aiokafka.structs import TopicPartition

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
