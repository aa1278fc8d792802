"""Bytes of the consumer protocol: JoinGroup subscriptions, SyncGroup assignments and
the sticky assignors' user data.

Subscriptions and assignments travel inside JoinGroup/SyncGroup as opaque bytes: an
int16 version followed by the ``ConsumerProtocolSubscription`` /
``ConsumerProtocolAssignment`` body of that version. Newer clients may send versions
this client does not know; as in Kafka's ``ConsumerProtocol``, such a blob is read
with the highest version we know, because new versions only append fields, and the
unread tail is ignored. A negative version is malformed.
"""

from __future__ import annotations

import struct

from aiokafka.errors import KafkaProtocolError, UnsupportedVersionError
from aiokafka.protocol import messages as m
from aiokafka.structs import TopicPartition

from .types import Assignment, Subscription, group_by_topic, subscription_struct

# The generated classes are read through the lazy ``messages`` module (``m.X``) at the
# call sites: the default assignors are constructor defaults, so this module loads with
# ``import aiokafka`` and must not pull in the generated modules there.

__all__ = [
    "ASSIGNMENT_VERSION",
    "SUBSCRIPTION_VERSION",
    "StickyUserData",
    "decode_assignment",
    "decode_generation_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_generation_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
]

#: Highest ConsumerProtocolSubscription version known (3: rack id, KIP-881). A literal,
#: so the generated module is not loaded at import; a unit test pins it to MAX_VERSION.
SUBSCRIPTION_VERSION = 3
#: Highest ConsumerProtocolAssignment version known (pinned the same way).
ASSIGNMENT_VERSION = 3

_VERSION = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def _read_version(data: bytes | bytearray | memoryview, what: str, highest: int) -> int:
    if len(data) < 2:
        raise KafkaProtocolError(f"{what} is {len(data)} bytes, too short for its version")
    (version,) = _VERSION.unpack_from(data, 0)
    if version < 0:
        raise KafkaProtocolError(f"{what} has unsupported version {version}")
    return min(int(version), highest)


def encode_subscription(subscription: Subscription, version: int = SUBSCRIPTION_VERSION) -> bytes:
    """Encode JoinGroup member metadata: int16 ``version`` + body.

    Fields the version lacks must be at their defaults (owned partitions need v1,
    generation v2, rack v3), otherwise ``UnsupportedVersionError`` is raised.
    """
    _check_subscription_fields(subscription, version)
    return _VERSION.pack(version) + subscription_struct(subscription).encode(version)


def _check_subscription_fields(subscription: Subscription, version: int) -> None:
    # The generated encoder writes only the fields of ``version`` and would drop the
    # rest silently; losing owned partitions would break cooperative rebalancing.
    if version < 1 and subscription.owned_partitions:
        raise UnsupportedVersionError("owned_partitions need subscription version 1+")
    if version < 2 and subscription.generation_id != -1:
        raise UnsupportedVersionError("generation_id needs subscription version 2+")
    if version < 3 and subscription.rack_id is not None:
        raise UnsupportedVersionError("rack_id needs subscription version 3+")


def decode_subscription(data: bytes | bytearray | memoryview) -> Subscription:
    """Decode JoinGroup member metadata of any version (see the module docstring).

    Raises:
        KafkaProtocolError: The bytes are truncated or otherwise malformed.
    """
    version = _read_version(data, "subscription", SUBSCRIPTION_VERSION)
    msg = m.ConsumerProtocolSubscription.decode(memoryview(data)[2:], version)
    return Subscription(
        topics=tuple(msg.topics),
        user_data=msg.user_data,
        owned_partitions=tuple(
            TopicPartition(tp.topic, p) for tp in msg.owned_partitions for p in tp.partitions
        ),
        generation_id=msg.generation_id,
        rack_id=msg.rack_id,
    )


def encode_assignment(assignment: Assignment, version: int = ASSIGNMENT_VERSION) -> bytes:
    """Encode one member's SyncGroup assignment: int16 ``version`` + body."""
    msg = m.ConsumerProtocolAssignment(
        assigned_partitions=[
            m.ConsumerProtocolAssignmentTopicPartition(topic=t, partitions=p)
            for t, p in group_by_topic(assignment.topic_partitions)
        ],
        user_data=assignment.user_data,
    )
    return _VERSION.pack(version) + msg.encode(version)


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """Decode a SyncGroup assignment of any version.

    Empty bytes decode as an empty assignment: a coordinator hands an empty blob to a
    member that the leader left out of the assignment.

    Raises:
        KafkaProtocolError: The bytes are truncated or otherwise malformed.
    """
    if len(data) == 0:
        return Assignment()
    version = _read_version(data, "assignment", ASSIGNMENT_VERSION)
    msg = m.ConsumerProtocolAssignment.decode(memoryview(data)[2:], version)
    return Assignment.of(
        (TopicPartition(tp.topic, p) for tp in msg.assigned_partitions for p in tp.partitions),
        msg.user_data,
    )


# -- sticky assignor user data --------------------------------------------------------
#
# The eager "sticky" assignor (KIP-54) carries the member's previous assignment in
# the subscription's user data, because eager members revoke everything before they
# rejoin and so report no owned partitions. Java's StickyAssignor schema, with no
# version prefix: v0 = [topic: string, partitions: [int32]]; v1 appends the int32
# generation. Readers try v1 and fall back to v0.


class StickyUserData:
    """Decoded sticky-assignor user data.

    Attributes:
        partitions: The member's previous assignment.
        generation: Its generation, or ``None`` for v0 data (no generation).
    """

    __slots__ = ("generation", "partitions")

    def __init__(self, partitions: tuple[TopicPartition, ...], generation: int | None) -> None:
        self.partitions = partitions
        self.generation = generation

    def __repr__(self) -> str:
        return f"StickyUserData(partitions={self.partitions!r}, generation={self.generation!r})"


def encode_sticky_user_data(
    partitions: tuple[TopicPartition, ...], generation: int | None
) -> bytes:
    """Encode the previous assignment (v1 with ``generation``, v0 when it is ``None``)."""
    out = bytearray()
    grouped = group_by_topic(partitions)
    out += _INT32.pack(len(grouped))
    for topic, parts in grouped:
        name = topic.encode("utf-8")
        out += _VERSION.pack(len(name)) + name
        out += _INT32.pack(len(parts))
        out += struct.pack(f">{len(parts)}i", *parts)
    if generation is not None:
        out += _INT32.pack(generation)
    return bytes(out)


def _read_sticky_partitions(data: memoryview) -> tuple[tuple[TopicPartition, ...], int]:
    pos = 0
    (n_topics,) = _INT32.unpack_from(data, pos)
    pos += 4
    if n_topics < 0:
        raise ValueError("negative topic count")
    result: list[TopicPartition] = []
    for _ in range(n_topics):
        (name_len,) = _VERSION.unpack_from(data, pos)
        pos += 2
        if name_len < 0 or pos + name_len > len(data):
            raise ValueError("bad topic name length")
        topic = str(data[pos : pos + name_len], "utf-8")
        pos += name_len
        (n_parts,) = _INT32.unpack_from(data, pos)
        pos += 4
        if n_parts < 0 or pos + 4 * n_parts > len(data):
            raise ValueError("bad partition count")
        result.extend(
            TopicPartition(topic, p) for p in struct.unpack_from(f">{n_parts}i", data, pos)
        )
        pos += 4 * n_parts
    return tuple(result), pos


def decode_sticky_user_data(data: bytes | bytearray | memoryview | None) -> StickyUserData:
    """Decode sticky user data; missing or undecodable data reads as "owns nothing".

    Java's StickyAssignor is lenient in the same way: a member whose user data cannot
    be read simply loses its claim to stickiness instead of failing the rebalance.
    """
    if not data:
        return StickyUserData((), None)
    view = memoryview(data)
    try:
        partitions, pos = _read_sticky_partitions(view)
    except (struct.error, ValueError):  # UnicodeDecodeError is a ValueError
        return StickyUserData((), None)
    if len(view) - pos >= 4:
        (generation,) = _INT32.unpack_from(view, pos)
        return StickyUserData(partitions, generation)
    return StickyUserData(partitions, None)


def encode_generation_user_data(generation: int) -> bytes:
    """Cooperative-sticky user data: the int32 generation.

    Java's CooperativeStickyAssignor sends it for readers of subscription v0/v1,
    which have no generation field.
    """
    return _INT32.pack(generation)


def decode_generation_user_data(data: bytes | bytearray | memoryview | None) -> int | None:
    """Read the cooperative-sticky generation; ``None`` if absent or not 4+ bytes."""
    if data is None or len(data) < 4:
        return None
    (generation,) = _INT32.unpack_from(data, 0)
    return int(generation)
