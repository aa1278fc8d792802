"""The KIP-848 member state machine and heartbeat field selection (pure, no broker)."""

from __future__ import annotations

import uuid

import pytest

from aiokafka.consumer.group.reconcile import (
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    HeartbeatFields,
    MemberState,
    MemberStateMachine,
    SentFields,
)
from aiokafka.structs import TopicPartition

A = uuid.UUID(int=1)
B = uuid.UUID(int=2)
NAMES = {A: "a", B: "b"}


def names(tid: uuid.UUID) -> str | None:
    return NAMES.get(tid)


def tps(topic: str, *parts: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in parts}


def joined(assignment: dict[uuid.UUID, frozenset[int]]) -> MemberStateMachine:
    """A member that joined, got ``assignment`` at epoch 1 and installed it."""
    machine = MemberStateMachine("m1")
    machine.join()
    machine.on_heartbeat("m1", 1, assignment)
    plan = machine.plan(names)
    assert plan is not None
    assert machine.reconciled(plan)
    machine.on_heartbeat("m1", 1, None)  # the acknowledgment was accepted
    assert state(machine) is MemberState.STABLE
    return machine


def state(machine: MemberStateMachine) -> MemberState:
    """The state, read through a call so mypy does not narrow it across transitions."""
    return machine.state


def build(machine: MemberStateMachine, sent: SentFields, **kw: object) -> HeartbeatFields:
    args: dict[str, object] = {
        "instance_id": None,
        "rack_id": "r1",
        "rebalance_timeout_ms": 30000,
        "subscribed_topics": ["a", "b"],
        "server_assignor": "uniform",
    }
    args.update(kw)
    return HeartbeatFields.build(machine, sent, **args)  # type: ignore[arg-type]


def test_join_then_first_assignment_adds_everything() -> None:
    machine = MemberStateMachine("m1")
    assert state(machine) is MemberState.UNSUBSCRIBED and not machine.in_group
    machine.join()
    assert state(machine) is MemberState.JOINING and machine.member_epoch == 0
    machine.on_heartbeat("m1", 5, {A: frozenset({0, 1}), B: frozenset({0})})
    assert state(machine) is MemberState.RECONCILING and machine.member_epoch == 5
    plan = machine.plan(names)
    assert plan is not None
    assert plan.revoked == frozenset()
    assert plan.added == tps("a", 0, 1) | tps("b", 0)
    assert plan.epoch == 5
    assert machine.reconciled(plan)
    assert state(machine) is MemberState.ACKNOWLEDGING
    assert machine.owned == tps("a", 0, 1) | tps("b", 0)
    machine.on_heartbeat("m1", 5, None)
    assert state(machine) is MemberState.STABLE


def test_join_with_empty_assignment_is_stable_at_once() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    machine.on_heartbeat("m1", 3, {})
    assert state(machine) is MemberState.STABLE
    assert machine.plan(names) is None


def test_reassignment_revokes_and_adds_only_what_moved() -> None:
    machine = joined({A: frozenset({0, 1, 2, 3})})
    machine.on_heartbeat("m1", 2, {A: frozenset({0, 1}), B: frozenset({4})})
    plan = machine.plan(names)
    assert plan is not None
    assert plan.revoked == tps("a", 2, 3)
    assert plan.added == tps("b", 4)
    assert plan.assignment == tps("a", 0, 1) | tps("b", 4)


def test_revocation_only_step_keeps_the_unchanged_partitions() -> None:
    machine = joined({A: frozenset({0, 1, 2, 3})})
    machine.on_heartbeat("m1", 2, {A: frozenset({0, 1})})
    plan = machine.plan(names)
    assert plan is not None and plan.added == frozenset()
    assert machine.reconciled(plan)
    assert machine.owned == tps("a", 0, 1)
    assert machine.owned_ids == {A: frozenset({0, 1})}


def test_unknown_topic_id_asks_for_metadata() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    unknown = uuid.UUID(int=99)
    machine.on_heartbeat("m1", 1, {A: frozenset({0}), unknown: frozenset({1})})
    with pytest.raises(LookupError) as info:
        machine.plan(names)
    assert info.value.args[0] == {unknown}
    assert state(machine) is MemberState.RECONCILING  # still to do
    NAMES[unknown] = "late"
    try:
        plan = machine.plan(names)
    finally:
        del NAMES[unknown]
    assert plan is not None and plan.added == tps("a", 0) | tps("late", 1)


def test_unsubscribed_topics_are_dropped_locally() -> None:
    machine = joined({A: frozenset({0}), B: frozenset({0})})
    machine.on_heartbeat("m1", 2, {A: frozenset({0}), B: frozenset({0, 1})})
    plan = machine.plan(names, subscribed=lambda t: t == "a")
    assert plan is not None
    assert plan.revoked == tps("b", 0)
    assert plan.assignment == tps("a", 0)


def test_same_target_again_does_nothing() -> None:
    machine = joined({A: frozenset({0, 1})})
    machine.on_heartbeat("m1", 2, {A: frozenset({0, 1})})
    assert state(machine) is MemberState.STABLE
    assert machine.plan(names) is None
    assert machine.member_epoch == 2


def test_new_target_while_acknowledging() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    machine.on_heartbeat("m1", 1, {A: frozenset({0, 1})})
    plan = machine.plan(names)
    assert plan is not None and machine.reconciled(plan)
    # The response to the acknowledgment already carries the next target.
    machine.on_heartbeat("m1", 2, {A: frozenset({0})})
    assert state(machine) is MemberState.RECONCILING
    plan = machine.plan(names)
    assert plan is not None and plan.revoked == tps("a", 1)


def test_fencing_loses_everything_and_rejoin_starts_at_epoch_zero() -> None:
    machine = joined({A: frozenset({0, 1})})
    lost = machine.fence()
    assert lost == tps("a", 0, 1)
    assert state(machine) is MemberState.FENCED
    assert machine.owned == frozenset() and machine.member_epoch == 0
    machine.join()
    assert machine.member_id == "m1"  # KIP-1082: the id is kept
    assert state(machine) is MemberState.JOINING


def test_plan_made_before_fencing_is_not_installed() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    machine.on_heartbeat("m1", 1, {A: frozenset({0})})
    plan = machine.plan(names)
    assert plan is not None
    machine.fence()
    assert not machine.reconciled(plan)
    assert machine.owned == frozenset()


def test_response_after_fencing_is_ignored() -> None:
    machine = joined({A: frozenset({0})})
    machine.fence()
    machine.on_heartbeat("m1", 7, {A: frozenset({0, 1})})
    assert machine.member_epoch == 0 and machine.target is None


def test_stale_and_leave_epochs() -> None:
    machine = joined({A: frozenset({0})})
    assert machine.stale() == tps("a", 0)
    assert state(machine) is MemberState.STALE and not machine.in_group
    machine.join()
    assert machine.leave(static=False) == LEAVE_EPOCH
    assert machine.leave(static=True) == STATIC_LEAVE_EPOCH
    machine.left()
    assert state(machine) is MemberState.UNSUBSCRIBED


def test_join_heartbeat_carries_full_state() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    fields = build(machine, SentFields(), instance_id="i1")
    assert fields.member_epoch == 0 and fields.member_id == "m1"
    assert fields.instance_id == "i1" and fields.rack_id == "r1"
    assert fields.rebalance_timeout_ms == 30000
    assert fields.subscribed_topics == ["a", "b"]
    assert fields.server_assignor == "uniform"
    assert fields.owned == {}  # a joining member owns nothing


def test_later_heartbeats_carry_only_changes() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    sent = SentFields()
    build(machine, sent).sent_into(sent)
    machine.on_heartbeat("m1", 1, {})
    fields = build(machine, sent)
    assert fields.member_epoch == 1
    assert fields.rack_id is None
    assert fields.rebalance_timeout_ms == -1
    assert fields.subscribed_topics is None
    assert fields.server_assignor is None
    assert fields.owned is None
    # A subscription change is sent once.
    fields = build(machine, sent, subscribed_topics=["a"])
    assert fields.subscribed_topics == ["a"]
    fields.sent_into(sent)
    assert build(machine, sent, subscribed_topics=["a"]).subscribed_topics is None


def test_acknowledgment_sends_the_new_owned_set() -> None:
    machine = MemberStateMachine("m1")
    machine.join()
    sent = SentFields()
    build(machine, sent).sent_into(sent)
    machine.on_heartbeat("m1", 1, {A: frozenset({2, 0})})
    assert build(machine, sent).owned is None  # not reconciled yet: nothing changed
    plan = machine.plan(names)
    assert plan is not None and machine.reconciled(plan)
    fields = build(machine, sent)
    assert fields.owned == {A: frozenset({0, 2})}
    fields.sent_into(sent)
    machine.on_heartbeat("m1", 1, None)
    assert build(machine, sent).owned is None


def test_after_a_failed_heartbeat_everything_is_sent_again() -> None:
    machine = joined({A: frozenset({0})})
    fields = build(machine, SentFields())  # what the member sends after a reset
    assert fields.rebalance_timeout_ms == 30000
    assert fields.subscribed_topics == ["a", "b"]
    assert fields.owned == {A: frozenset({0})}


def test_plan_restricted_after_a_subscription_change() -> None:
    machine = joined({A: frozenset({0}), B: frozenset({0})})
    machine.on_heartbeat("m1", 2, {A: frozenset({0, 1}), B: frozenset({0, 1})})
    plan = machine.plan(names)
    assert plan is not None and plan.added == tps("a", 1) | tps("b", 1)
    # "b" was unsubscribed while the revoke listener ran.
    narrowed = plan.restricted(lambda t: t == "a")
    assert narrowed.assignment == tps("a", 0, 1)
    assert narrowed.assignment_ids == {A: frozenset({0, 1})}
    assert narrowed.revoked == tps("b", 0)  # owned: now revoked too
    assert narrowed.added == tps("a", 1)
    assert plan.restricted(lambda t: True) is plan
