"""Structs keep aiokafka's field names and order; abc defaults behave as documented."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from aiokafka.abc import AbstractTokenProvider, ConsumerRebalanceListener
from aiokafka.structs import (
    BrokerMetadata,
    ConsumerRecord,
    OffsetAndMetadata,
    OffsetAndTimestamp,
    PartitionMetadata,
    RecordMetadata,
    TopicPartition,
)

# aiokafka's (and kafka-python's) field order, which positional construction and
# unpacking depend on.
AIOKAFKA_FIELDS: list[tuple[Any, tuple[str, ...]]] = [
    (TopicPartition, ("topic", "partition")),
    (BrokerMetadata, ("nodeId", "host", "port", "rack")),
    (PartitionMetadata, ("topic", "partition", "leader", "replicas", "isr", "error")),
    (
        RecordMetadata,
        (
            "topic",
            "partition",
            "topic_partition",
            "offset",
            "timestamp",
            "timestamp_type",
            "log_start_offset",
        ),
    ),
    (OffsetAndMetadata, ("offset", "metadata")),
    (OffsetAndTimestamp, ("offset", "timestamp")),
]

CONSUMER_RECORD_FIELDS = (
    "topic",
    "partition",
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "checksum",
    "serialized_key_size",
    "serialized_value_size",
    "headers",
)


@pytest.mark.parametrize(
    ("cls", "fields"), AIOKAFKA_FIELDS, ids=lambda x: getattr(x, "__name__", "")
)
def test_namedtuple_field_order_starts_with_aiokafkas(cls: Any, fields: tuple[str, ...]) -> None:
    assert cls._fields[: len(fields)] == fields


def test_only_defaulted_fields_were_appended() -> None:
    assert PartitionMetadata._fields[6:] == ("leader_epoch", "offline_replicas")
    assert set(PartitionMetadata._field_defaults) == {"leader_epoch", "offline_replicas"}
    pm = PartitionMetadata("t", 0, 1, [1, 2], [1], 0)
    assert pm.leader_epoch == -1
    assert pm.offline_replicas == ()


def test_consumer_record_field_order() -> None:
    names = tuple(f.name for f in dataclasses.fields(ConsumerRecord))
    assert names == (*CONSUMER_RECORD_FIELDS, "leader_epoch")


def test_consumer_record_positional_as_in_aiokafka() -> None:
    rec = ConsumerRecord[bytes, str]("t", 1, 5, 1000, 0, b"k", "v", None, 1, 1, [("h", b"x")])
    assert (rec.topic, rec.partition, rec.offset, rec.timestamp) == ("t", 1, 5, 1000)
    assert (rec.key, rec.value, rec.checksum) == (b"k", "v", None)
    assert rec.headers == [("h", b"x")]
    assert rec.leader_epoch is None
    assert rec == ConsumerRecord("t", 1, 5, 1000, 0, b"k", "v", None, 1, 1, [("h", b"x")])
    rec.value = "changed"  # mutable, as in aiokafka
    assert rec.value == "changed"


def test_consumer_record_fields_are_slots_and_other_attributes_can_be_set() -> None:
    rec = ConsumerRecord[bytes, bytes](
        "t", 0, 0, 0, 0, None, None, None, -1, -1, [], leader_epoch=4
    )
    assert rec.leader_epoch == 4
    # Slots for the fields: records are made by the million. A __dict__ beside them,
    # empty until used: aiokafka 0.14's records took attributes of their users' own
    # (FastStream 0.7 sets record.consumer).
    for name in ("topic", "key", "value", "leader_epoch"):
        assert type(getattr(ConsumerRecord, name)).__name__ == "member_descriptor"
    rec.consumer = "mine"  # type: ignore[attr-defined]
    assert rec.consumer == "mine"  # type: ignore[attr-defined]
    assert rec == ConsumerRecord("t", 0, 0, 0, 0, None, None, None, -1, -1, [], leader_epoch=4)
    assert repr(rec).startswith("ConsumerRecord(topic='t',")


def test_topic_partition_is_a_hashable_tuple() -> None:
    tp = TopicPartition("t", 3)
    assert tp == ("t", 3)
    assert {tp: 1}[TopicPartition("t", 3)] == 1
    topic, partition = tp
    assert (topic, partition) == ("t", 3)


def test_record_metadata() -> None:
    tp = TopicPartition("t", 0)
    md = RecordMetadata("t", 0, tp, 10, 1234, 0, 0)
    assert md.topic_partition is tp
    assert md.offset == 10
    assert md.log_start_offset == 0


def test_offset_and_metadata_backward_compatible() -> None:
    om = OffsetAndMetadata(10, "meta")
    offset, metadata = om  # still two values
    assert (offset, metadata) == (10, "meta")
    assert tuple(om) == (10, "meta")
    assert len(om) == 2
    assert om.leader_epoch is None
    assert OffsetAndMetadata(10).metadata == ""
    assert om._asdict() == {"offset": 10, "metadata": "meta"}


def test_offset_and_metadata_leader_epoch() -> None:
    om = OffsetAndMetadata(10, "m", leader_epoch=7)
    assert om.leader_epoch == 7
    assert om == OffsetAndMetadata(10, "m")  # the epoch is not part of equality
    assert hash(om) == hash((10, "m"))
    assert repr(om) == "OffsetAndMetadata(offset=10, metadata='m', leader_epoch=7)"
    with pytest.raises(AttributeError):
        om.leader_epoch = 8  # type: ignore[misc]  # read-only property
    with pytest.raises(TypeError, match="leader_epoch"):
        OffsetAndMetadata(1, "", leader_epoch="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        OffsetAndMetadata(1, "", 3)  # type: ignore[call-arg]  # keyword-only


def test_offset_and_metadata_copies_keep_leader_epoch() -> None:
    om = OffsetAndMetadata(10, "m", leader_epoch=7)
    for other in (pickle.loads(pickle.dumps(om)), copy.copy(om), copy.deepcopy(om)):
        assert type(other) is OffsetAndMetadata
        assert other == om
        assert other.leader_epoch == 7
    replaced = om._replace(offset=11)
    assert replaced == (11, "m")
    assert replaced.leader_epoch == 7
    assert om._replace(leader_epoch=None).leader_epoch is None


def test_offset_and_timestamp() -> None:
    ot = OffsetAndTimestamp(5, 1000)
    assert tuple(ot) == (5, 1000)
    assert (ot.offset, ot.timestamp, ot.leader_epoch) == (5, 1000, None)
    ot2 = OffsetAndTimestamp(5, 1000, leader_epoch=2)
    assert ot2 == ot  # the epoch is not part of equality
    assert ot2.leader_epoch == 2
    assert pickle.loads(pickle.dumps(ot2)).leader_epoch == 2
    assert ot2._replace(timestamp=9) == (5, 9)


def test_broker_metadata() -> None:
    bm = BrokerMetadata(1, "localhost", 9092, None)
    assert bm.nodeId == 1
    assert bm == (1, "localhost", 9092, None)


# -- abc -----------------------------------------------------------------------------


class _SyncListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[TopicPartition]]] = []

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.calls.append(("revoked", revoked))

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.calls.append(("assigned", assigned))


class _AsyncListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.revoked: list[TopicPartition] = []

    async def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        self.revoked.extend(revoked)

    async def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        raise AssertionError("not called here")


def test_listener_methods_are_abstract() -> None:
    class Partial(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
            pass

    with pytest.raises(TypeError):
        Partial()  # type: ignore[abstract]


def test_on_partitions_lost_defaults_to_revoked() -> None:
    listener = _SyncListener()
    lost = [TopicPartition("t", 0)]
    assert listener.on_partitions_lost(lost) is None
    assert listener.calls == [("revoked", lost)]


async def test_on_partitions_lost_default_returns_the_coroutine() -> None:
    listener = _AsyncListener()
    result = listener.on_partitions_lost([TopicPartition("t", 1)])
    assert result is not None
    await result
    assert listener.revoked == [TopicPartition("t", 1)]


async def test_token_provider() -> None:
    class Provider(AbstractTokenProvider):
        async def token(self) -> str:
            return "tok"

    provider = Provider(anything=1)
    assert await provider.token() == "tok"
    assert provider.extensions() == {}
    with pytest.raises(TypeError):
        AbstractTokenProvider()  # type: ignore[abstract]
