"""The helpers that JoinGroup/SyncGroup, the assignor adapters and the partition
position share: one timeout rule for rebalance requests, one normalization of what an
assignor returns, one read of a followed cursor."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from aiokafka.cluster.config import ClientConfig
from aiokafka.cluster.connections import ConnectionGroup
from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.group.assignors import Assignment, encode_assignment
from aiokafka.consumer.group.assignors.compat import to_assignment, to_subscription
from aiokafka.consumer.group.classic import ClassicMembership
from aiokafka.consumer.group.classic_state import Generation
from aiokafka.consumer.group.membership import MembershipHooks
from aiokafka.consumer.subscription import PartitionState, SubscriptionState
from aiokafka.protocol import messages as m
from aiokafka.structs import TopicPartition

TP0 = TopicPartition("t", 0)


def _covered(topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    done.set_result(True)
    return done


class _RecordingClient:
    """Answers JoinGroup and SyncGroup at once and records how they were sent."""

    def __init__(self) -> None:
        self.config = ClientConfig(request_timeout_ms=40000)
        self.versions: list[tuple[int, int, ConnectionGroup]] = []
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def topic_interest(self, name: str) -> InterestHandle:
        return InterestHandle(TopicInterest(), name, _covered)

    async def api_version(self, node: int, api_key: int, *, group: ConnectionGroup) -> int:
        self.versions.append((node, api_key, group))
        return 5

    async def send(self, node: int, request: Any, **kwargs: Any) -> Any:
        self.sent.append((type(request).__name__, kwargs))
        if isinstance(request, m.JoinGroupRequest):
            return m.JoinGroupResponse(
                error_code=0,
                generation_id=7,
                protocol_name="range",
                leader="other",
                member_id="m-1",
                members=[],
            )
        return m.SyncGroupResponse(
            error_code=0, assignment=encode_assignment(Assignment((TP0,), None))
        )


def _membership(rebalance_timeout_ms: int) -> tuple[ClassicMembership, _RecordingClient]:
    config = ConsumerConfig.from_options(group_id="g", rebalance_timeout_ms=rebalance_timeout_ms)
    subs = SubscriptionState()
    subs.subscribe(["t"], None)
    client = _RecordingClient()

    async def commit(tps: list[TopicPartition]) -> None:
        pass

    membership = ClassicMembership(
        client,  # type: ignore[arg-type]
        subs,
        config,
        None,  # type: ignore[arg-type]
        MembershipHooks(commit, lambda tps: None),
    )
    return membership, client


@pytest.mark.parametrize("rebalance_timeout_ms", [10000, 300000])
async def test_join_and_sync_wait_for_the_whole_rebalance(rebalance_timeout_ms: int) -> None:
    membership, client = _membership(rebalance_timeout_ms)
    join = await membership._join(3, "test")
    assert join.generation_id == 7
    membership._generation = Generation(7, "m-1", "range")
    assignment = await membership._sync(3, {})
    assert assignment.topic_partitions == (TP0,)
    # The coordinator holds both until the rebalance ends: the longer of the request
    # and rebalance timeouts, plus the Java client's 5 s grace.
    expected = max(40000, rebalance_timeout_ms) + 5000
    assert [name for name, _ in client.sent] == ["JoinGroupRequest", "SyncGroupRequest"]
    for _, kwargs in client.sent:
        assert kwargs == {
            "timeout_ms": expected,
            "max_version": 5,
            "group": ConnectionGroup.COORDINATION,
        }
    assert client.versions == [
        (3, m.JoinGroupRequest.API_KEY, ConnectionGroup.COORDINATION),
        (3, m.SyncGroupRequest.API_KEY, ConnectionGroup.COORDINATION),
    ]


def test_unknown_assignor_results_name_the_method() -> None:
    with pytest.raises(TypeError, match=r"assignor metadata\(\) returned an unsupported int"):
        to_subscription(42)
    with pytest.raises(TypeError, match=r"assignor assign\(\) returned an unsupported str"):
        to_assignment("nope")


def test_wire_bytes_and_native_values_pass_through() -> None:
    native = Assignment((TP0,), b"u")
    assert to_assignment(native) is native
    assert to_assignment(bytearray(encode_assignment(native))) == native


class _Cursor:
    def __init__(self, moved: tuple[int, int | None] | None) -> None:
        self.moved = moved

    def consumed_position(self) -> tuple[int, int | None] | None:
        return self.moved


def test_position_and_epoch_read_the_followed_cursor_together() -> None:
    state = PartitionState()
    state.advance(10, 2)
    assert (state.position, state.position_epoch, state.position_and_epoch) == (10, 2, (10, 2))
    cursor = _Cursor(None)
    state.follow(cursor)
    assert state.position_and_epoch == (10, 2)  # nothing handed out yet
    cursor.moved = (15, 3)
    assert (state.position, state.position_epoch, state.position_and_epoch) == (15, 3, (15, 3))
    state.unfollow(cursor)  # keeps what the cursor reached
    cursor.moved = (99, 9)
    assert state.position_and_epoch == (15, 3)
