"""Consumer protocol bytes: subscriptions, assignments and sticky user data."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment as KpAssignment,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolSubscription as KpSubscription,
)

from aiokafka.consumer.group.assignors import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from aiokafka.consumer.group.assignors.codec import (
    decode_generation_user_data,
    decode_sticky_user_data,
    encode_generation_user_data,
    encode_sticky_user_data,
)
from aiokafka.errors import KafkaProtocolError, UnsupportedVersionError
from aiokafka.structs import TopicPartition as TP

names = st.text(min_size=1, max_size=8)
partitions = st.lists(st.builds(TP, names, st.integers(0, 2**31 - 1)), max_size=8, unique=True).map(
    lambda tps: tuple(sorted(tps))
)
user_data = st.none() | st.binary(max_size=16)


@st.composite
def subscriptions(draw: st.DrawFn, version: int) -> Subscription:
    return Subscription(
        topics=tuple(draw(st.lists(names, max_size=5))),
        user_data=draw(user_data),
        owned_partitions=draw(partitions) if version >= 1 else (),
        generation_id=draw(st.integers(-(2**31), 2**31 - 1)) if version >= 2 else -1,
        rack_id=draw(st.none() | names) if version >= 3 else None,
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@given(data=st.data())
def test_subscription_round_trip(version: int, data: st.DataObject) -> None:
    sub = data.draw(subscriptions(version))
    blob = encode_subscription(sub, version)
    assert struct.unpack_from(">h", blob)[0] == version
    assert decode_subscription(blob) == sub


@given(partitions, user_data)
def test_assignment_round_trip(tps: tuple[TP, ...], data: bytes | None) -> None:
    a = Assignment(tps, data)
    assert decode_assignment(encode_assignment(a)) == a
    assert decode_assignment(encode_assignment(a, 0)) == a


def test_higher_subscription_version_is_read_as_the_highest_known() -> None:
    sub = Subscription(("t1", "t2"), b"ud", (TP("t1", 0),), 7, "rack-a")
    body = encode_subscription(sub, 3)[2:]
    # A version-9 writer appended fields we do not know (here 6 bytes).
    blob = struct.pack(">h", 9) + body + b"\x00\x00\x00\x05\xff\xee"
    assert decode_subscription(blob) == sub


def test_higher_assignment_version_is_read_as_the_highest_known() -> None:
    a = Assignment((TP("t", 0), TP("t", 3)), b"x")
    blob = struct.pack(">h", 4) + encode_assignment(a)[2:] + b"future fields"
    assert decode_assignment(blob) == a


def test_lower_version_reader_ignores_newer_fields() -> None:
    """A v3 blob carries everything; cutting it to v0 semantics must still decode."""
    sub = Subscription(("a",), None, (TP("a", 1),), 3, "r")
    blob = encode_subscription(sub, 3)
    # kafka-python's v0 reader is an older client; it must read topics and user data.
    old = KpSubscription.decode(blob[2:], header=False, version=0)
    assert list(old.topics) == ["a"] and old.user_data is None


@pytest.mark.parametrize(
    "blob",
    [b"", b"\x00", b"\xff\xff" + b"\x00" * 8, b"\x00\x00\x00\x00\x00\x05\x00\x01a"],
    ids=["empty", "half-version", "negative-version", "truncated-topics"],
)
def test_malformed_subscription(blob: bytes) -> None:
    with pytest.raises(KafkaProtocolError):
        decode_subscription(blob)


def test_malformed_assignment() -> None:
    with pytest.raises(KafkaProtocolError):
        decode_assignment(b"\xff\xfe\x00\x00\x00\x00")
    with pytest.raises(KafkaProtocolError):
        decode_assignment(b"\x00\x00\x00\x00\x00\x02\x00\x01")


def test_empty_assignment_blob_is_an_empty_assignment() -> None:
    assert decode_assignment(b"") == Assignment()


def test_fields_a_version_lacks_are_rejected() -> None:
    with pytest.raises(UnsupportedVersionError):
        encode_subscription(Subscription(("t",), owned_partitions=(TP("t", 0),)), 0)
    with pytest.raises(UnsupportedVersionError):
        encode_subscription(Subscription(("t",), generation_id=4), 1)
    with pytest.raises(UnsupportedVersionError):
        encode_subscription(Subscription(("t",), rack_id="r"), 2)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_bytes_match_kafka_python(version: int) -> None:
    kp_owned = [KpSubscription.TopicPartition(topic="a", partitions=[0, 2])]
    kp = KpSubscription(
        version=version,
        topics=["a", "b"],
        user_data=b"\x01\x02",
        owned_partitions=kp_owned if version >= 1 else [],
        generation_id=5 if version >= 2 else -1,
        rack_id="r1" if version >= 3 else None,
    )
    ours = Subscription(
        ("a", "b"),
        b"\x01\x02",
        (TP("a", 0), TP("a", 2)) if version >= 1 else (),
        5 if version >= 2 else -1,
        "r1" if version >= 3 else None,
    )
    expected = kp.encode(version=version)
    assert encode_subscription(ours, version) == expected
    assert decode_subscription(expected) == ours


def test_assignment_bytes_match_kafka_python() -> None:
    kp = KpAssignment(version=0, assigned_partitions=[("t", [0, 1]), ("u", [4])], user_data=b"")
    ours = Assignment((TP("t", 0), TP("t", 1), TP("u", 4)), b"")
    assert encode_assignment(ours, 0) == kp.encode(version=0)
    assert decode_assignment(kp.encode(version=0)) == ours


def test_assignment_of_sorts_and_groups() -> None:
    a = Assignment.of([TP("b", 1), TP("a", 2), TP("b", 0), TP("a", 2)], b"u")
    assert a.topic_partitions == (TP("a", 2), TP("b", 0), TP("b", 1))
    assert a.partitions() == [TP("a", 2), TP("b", 0), TP("b", 1)]
    assert a.assignment == [("a", [2]), ("b", [0, 1])]


# -- sticky user data ---------------------------------------------------------------


@given(partitions, st.none() | st.integers(-(2**31), 2**31 - 1))
def test_sticky_user_data_round_trip(tps: tuple[TP, ...], generation: int | None) -> None:
    decoded = decode_sticky_user_data(encode_sticky_user_data(tps, generation))
    assert sorted(decoded.partitions) == sorted(tps)
    assert decoded.generation == generation


def test_sticky_user_data_v0_layout() -> None:
    # Java StickyAssignor v0: [topic: string, partitions: [int32]], no version prefix.
    blob = (
        b"\x00\x00\x00\x01"
        + b"\x00\x02t0"
        + b"\x00\x00\x00\x02"
        + b"\x00\x00\x00\x00\x00\x00\x00\x01"
    )
    assert encode_sticky_user_data((TP("t0", 0), TP("t0", 1)), None) == blob
    assert decode_sticky_user_data(blob).generation is None
    assert decode_sticky_user_data(blob + b"\x00\x00\x00\x09").generation == 9


@pytest.mark.parametrize("blob", [None, b"", b"\x00\x00", b"\x00\x00\x00\x05\x00\x09ab"])
def test_unreadable_sticky_user_data_claims_nothing(blob: bytes | None) -> None:
    decoded = decode_sticky_user_data(blob)
    assert decoded.partitions == () and decoded.generation is None


def test_generation_user_data() -> None:
    assert decode_generation_user_data(encode_generation_user_data(42)) == 42
    assert decode_generation_user_data(encode_generation_user_data(-1)) == -1
    assert decode_generation_user_data(None) is None
    assert decode_generation_user_data(b"\x00") is None


def test_known_versions_match_the_generated_classes() -> None:
    # codec.py writes the versions as literals so that importing it (a constructor
    # default of the consumer) does not load the generated modules; keep them true.
    from aiokafka.consumer.group.assignors import ASSIGNMENT_VERSION, SUBSCRIPTION_VERSION
    from aiokafka.protocol.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription

    assert SUBSCRIPTION_VERSION == ConsumerProtocolSubscription.MAX_VERSION
    assert ASSIGNMENT_VERSION == ConsumerProtocolAssignment.MAX_VERSION
