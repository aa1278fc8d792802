"""aiokafka 0.x and kafka-python assignors run through the adapter; old import paths."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.coordinator.assignors.cooperative_sticky import (
    CooperativeStickyAssignor as KpCooperativeSticky,
)
from kafka.coordinator.assignors.sticky.sticky_assignor import (
    StickyPartitionAssignor as KpSticky,
)

from aiokafka.consumer.group.assignors import (
    AbstractPartitionAssignor,
    Assignment,
    AssignorAdapter,
    GroupMember,
    RebalanceProtocol,
    StaticCluster,
    StickyPartitionAssignor,
    Subscription,
    as_assignor,
    decode_assignment,
    decode_subscription,
    encode_subscription,
    to_assignment,
    to_subscription,
)
from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor as OldAbstract
from aiokafka.coordinator.protocol import (
    ConsumerProtocol,
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from aiokafka.structs import TopicPartition as TP


class OldStyleAssignor(OldAbstract):
    """Written against aiokafka 0.x: classmethods and the 0.x protocol structs."""

    name = "old-style"
    version = 0
    seen: list[Any] = []

    @classmethod
    def assign(cls, cluster: Any, member_metadata: Any) -> dict[str, Any]:
        # Everything to the first member, by the 0.x attribute names.
        first = sorted(member_metadata)[0]
        out = {}
        for member_id, metadata in member_metadata.items():
            topics = metadata.subscription if member_id == first else []
            assignment = [(t, sorted(cluster.partitions_for_topic(t))) for t in topics]
            out[member_id] = ConsumerProtocolMemberAssignment(cls.version, assignment, b"")
        return out

    @classmethod
    def metadata(cls, topics: Any) -> ConsumerProtocolMemberMetadata:
        return ConsumerProtocolMemberMetadata(cls.version, sorted(topics), b"old")

    @classmethod
    def on_assignment(cls, assignment: Any) -> None:
        cls.seen.append(("assignment", assignment.partitions()))

    @classmethod
    def on_generation_assignment(cls, generation: int) -> None:
        cls.seen.append(("generation", generation))


def test_old_style_assignor_class() -> None:
    OldStyleAssignor.seen.clear()
    assignor = as_assignor(OldStyleAssignor)
    assert isinstance(assignor, AssignorAdapter)
    assert assignor.name == "old-style"
    assert assignor.supported_protocols() == [RebalanceProtocol.EAGER]
    sub = assignor.metadata(["b", "a"])
    assert sub == Subscription(("a", "b"), b"old")
    members = {
        "m1": GroupMember("m1", ("a", "b")),
        "m2": GroupMember("m2", ("a",)),
    }
    result = assignor.assign(StaticCluster({"a": 2, "b": 1}), members)
    assert result == {
        "m1": Assignment((TP("a", 0), TP("a", 1), TP("b", 0)), b""),
        "m2": Assignment((), b""),
    }
    assignor.receive_assignment(result["m1"], 5)
    assert OldStyleAssignor.seen == [
        ("generation", 5),
        ("assignment", [TP("a", 0), TP("a", 1), TP("b", 0)]),
    ]


def test_kafka_python_sticky_reads_our_user_data_and_gets_the_generation() -> None:
    """kafka-python's sticky assignor (kafka-python 3 style, instance methods)."""
    ours = StickyPartitionAssignor()
    ours.receive_assignment(Assignment.of([TP("t", 0), TP("t", 1), TP("t", 2)]), 3)
    theirs = as_assignor(KpSticky)
    assert theirs.name == "sticky"
    members = {
        "a": GroupMember.from_subscription("a", ours.metadata(["t"])),
        "b": GroupMember("b", ("t",)),
    }
    result = theirs.assign(StaticCluster({"t": 4}), members)
    # a keeps two of the three partitions it reported in our user data format.
    assert len(set(result["a"].topic_partitions) & {TP("t", 0), TP("t", 1), TP("t", 2)}) == 2
    assert len(result["b"].topic_partitions) == 2
    # kafka-python's on_assignment(assignment, generation) gets both.
    theirs.receive_assignment(result["a"], 4)
    legacy = theirs.legacy  # type: ignore[attr-defined]
    assert legacy.generation == 4
    assert sorted(legacy.member_assignment) == sorted(result["a"].topic_partitions)
    # And its metadata (user data is a kafka-python struct) reads back with our codec.
    sub = theirs.metadata(["t"])
    assert (
        StickyPartitionAssignor()
        .assign(
            StaticCluster({"t": 4}),
            {"a": GroupMember.from_subscription("a", sub), "b": GroupMember("b", ("t",))},
        )["a"]
        .topic_partitions
        == result["a"].topic_partitions
    )


def test_kafka_python_cooperative_protocols() -> None:
    assert as_assignor(KpCooperativeSticky()).supported_protocols() == [
        RebalanceProtocol.COOPERATIVE
    ]


def test_native_assignors_pass_through() -> None:
    instance = StickyPartitionAssignor()
    assert as_assignor(instance) is instance
    made = as_assignor(StickyPartitionAssignor)
    assert type(made) is StickyPartitionAssignor


def test_not_an_assignor() -> None:
    with pytest.raises(TypeError, match="no 'name'"):
        as_assignor(object())


def test_members_shape_can_be_forced() -> None:
    class ListStyle:
        name = "list-style"

        def assign(self, cluster: Any, members: Any) -> dict[str, Any]:
            assert isinstance(members, list)
            return {
                m.member_id: Assignment.of([TP(t, 0) for t in m.metadata.topics]) for m in members
            }

        def metadata(self, topics: Any) -> Subscription:
            return Subscription(tuple(topics))

        def on_assignment(self, assignment: Any) -> None:
            pass

    adapter = AssignorAdapter(ListStyle(), members_as_list=True)
    result = adapter.assign(StaticCluster({"t": 1}), {"m": GroupMember("m", ("t",))})
    assert result == {"m": Assignment((TP("t", 0),))}


@pytest.mark.parametrize(
    "value",
    [
        Subscription(("t",), b"u", (TP("t", 1),), 2, None),
        encode_subscription(Subscription(("t",), b"u", (TP("t", 1),), 2, None)),
        GroupMember("x", ("t",), None, b"u", (TP("t", 1),), 2).metadata,
    ],
    ids=["native", "bytes", "generated-struct"],
)
def test_to_subscription_shapes(value: Any) -> None:
    assert to_subscription(value) == Subscription(("t",), b"u", (TP("t", 1),), 2, None)


@pytest.mark.parametrize(
    "value",
    [
        Assignment((TP("t", 0), TP("u", 2)), b"u"),
        ConsumerProtocolMemberAssignment(0, [("t", [0]), ("u", [2])], b"u"),
        ConsumerProtocolMemberAssignment(0, [("u", [2]), ("t", [0])], b"u").encode(),
    ],
    ids=["native", "0.x-struct", "bytes"],
)
def test_to_assignment_shapes(value: Any) -> None:
    assert to_assignment(value) == Assignment((TP("t", 0), TP("u", 2)), b"u")


def test_unknown_shapes_are_type_errors() -> None:
    with pytest.raises(TypeError):
        to_subscription(42)
    with pytest.raises(TypeError):
        to_assignment("nope")


def test_old_protocol_structs_round_trip() -> None:
    meta = ConsumerProtocolMemberMetadata(0, ["a", "b"], b"ud")
    assert ConsumerProtocol.METADATA.decode(meta.encode()) == meta
    assert decode_subscription(meta.encode()) == Subscription(("a", "b"), b"ud")
    assign = ConsumerProtocolMemberAssignment(0, [("a", [1, 0])], None)
    assert assign.partitions() == [TP("a", 1), TP("a", 0)]
    again = ConsumerProtocol.ASSIGNMENT.decode(assign.encode())
    assert again.assignment == [("a", [0, 1])] and again.user_data is None
    assert decode_assignment(assign.encode()).partitions() == [TP("a", 0), TP("a", 1)]
    assert ConsumerProtocol.PROTOCOL_TYPE == "consumer"


def test_old_import_paths() -> None:
    from aiokafka.consumer.group.assignors import sticky
    from aiokafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyPartitionAssignor as OldSticky,
    )

    assert OldSticky is StickyPartitionAssignor
    assert CooperativeStickyAssignor is sticky.CooperativeStickyAssignor
    for cls in (RangePartitionAssignor, RoundRobinPartitionAssignor, OldSticky):
        # issubclass checks written against the 0.x base still accept built-ins.
        assert issubclass(cls, OldAbstract)
        assert issubclass(cls, AbstractPartitionAssignor)
    assert not issubclass(OldStyleAssignor, AbstractPartitionAssignor)
