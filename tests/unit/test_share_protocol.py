"""Share-group messages and acknowledgement state (bytes in, bytes out; no broker).

The share-group APIs come from the generated codec (``tools/codegen/definitions/``);
the expected bytes here are written out field by field from the protocol, so a
definition that drifts from Kafka 4.3's layout fails. ``tests/integration/
test_share_protocol_versions.py`` round-trips the broker's own bytes."""

from __future__ import annotations

import struct
import uuid

import pytest

from aiokafka.errors import IllegalStateError, KafkaProtocolError
from aiokafka.protocol import messages as _messages
from aiokafka.protocol.api import request_header_version, response_header_version
from aiokafka.protocol.primitives import write_bytes, write_string, write_unsigned_varint
from aiokafka.record.default_builder import DefaultRecordBatchBuilder
from aiokafka.share.acks import (
    ACCEPT,
    GAP,
    REJECT,
    RELEASE,
    AcknowledgementState,
    ack_code,
    to_batches,
)
from aiokafka.share.records import acquired_records
from aiokafka.structs import TopicPartition

TID = uuid.UUID("12345678-1234-5678-1234-567812345678")
TP = TopicPartition("t", 0)


def test_runs_of_one_type_collapse() -> None:
    acks = {5: ACCEPT, 6: ACCEPT, 7: RELEASE, 9: RELEASE, 10: REJECT, 3: GAP}
    assert to_batches(acks) == [
        (3, 3, [GAP]),
        (5, 6, [ACCEPT]),
        (7, 7, [RELEASE]),
        (9, 9, [RELEASE]),
        (10, 10, [REJECT]),
    ]
    assert to_batches({}) == []
    with pytest.raises(ValueError, match="accept"):
        ack_code("ok")


def test_implicit_mode_accepts_what_is_left() -> None:
    state = AcknowledgementState(explicit=False)
    state.delivered(TP, [1, 2, 3])
    state.acknowledge(TP, 2, "release")
    state.before_poll()
    assert state.take() == {TP: {1: ACCEPT, 2: RELEASE, 3: ACCEPT}}
    assert state.take() == {}
    with pytest.raises(IllegalStateError):
        state.acknowledge(TP, 2, "accept")  # not awaiting any more


def test_explicit_mode_requires_every_record() -> None:
    state = AcknowledgementState(explicit=True)
    state.delivered(TP, [1, 2])
    state.acknowledge(TP, 1, "reject")
    with pytest.raises(IllegalStateError, match="1 records"):
        state.before_poll()
    state.acknowledge(TP, 2, "accept")
    state.before_poll()
    state.gaps(TP, [3])
    assert state.take([TP]) == {TP: {1: REJECT, 2: ACCEPT, 3: GAP}}


def _fetch_request(version_fields: dict[str, int]) -> _messages.ShareFetchRequest:
    return _messages.ShareFetchRequest(
        group_id="g",
        member_id="m",
        share_session_epoch=2,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1000,
        max_records=10,
        batch_size=10,
        topics=[
            _messages.ShareFetchRequestFetchTopic(
                topic_id=TID,
                partitions=[
                    _messages.ShareFetchRequestFetchPartition(
                        partition_index=0,
                        acknowledgement_batches=[
                            _messages.ShareFetchRequestAcknowledgementBatch(
                                first_offset=4, last_offset=5, acknowledge_types=[ACCEPT]
                            )
                        ],
                    )
                ],
            )
        ],
        forgotten_topics_data=[
            _messages.ShareFetchRequestForgottenTopic(topic_id=TID, partitions=[1])
        ],
        **version_fields,
    )


def _fetch_request_bytes(v2_fields: bytes) -> bytes:
    return (
        b"\x02g\x02m"
        + struct.pack(">iiiiii", 2, 500, 1, 1000, 10, 10)
        + v2_fields  # v2: ShareAcquireMode (int8), IsRenewAck (bool)
        + b"\x02"
        + TID.bytes  # one topic
        + b"\x02"
        + struct.pack(">i", 0)  # one partition
        + b"\x02"
        + struct.pack(">qq", 4, 5)
        + b"\x02\x01\x00"  # one batch: accept
        + b"\x00\x00"  # partition, topic tagged fields
        + b"\x02"
        + TID.bytes
        + b"\x02"
        + struct.pack(">i", 1)
        + b"\x00"  # forgotten
        + b"\x00"
    )


def test_share_fetch_request_v1_and_v2_bytes() -> None:
    assert _messages.ShareFetchRequest.MIN_VERSION == 1
    assert _messages.ShareFetchRequest.MAX_VERSION == 2
    assert _fetch_request({}).encode(1) == _fetch_request_bytes(b"")
    assert _fetch_request({}).encode(2) == _fetch_request_bytes(b"\x00\x00")
    record_limit = _fetch_request({"share_acquire_mode": 1})
    assert record_limit.encode(2) == _fetch_request_bytes(b"\x01\x00")
    # The acquire mode is ignorable: v1 drops it (the broker then acquires whole batches).
    assert record_limit.encode(1) == _fetch_request_bytes(b"")
    assert _messages.ShareFetchRequest.decode(_fetch_request_bytes(b"\x01\x00"), 2) == record_limit
    # Flexible from v0: request header v2, response header v1.
    assert request_header_version(78, 1) == 2 and response_header_version(78, 1) == 1
    for key in (76, 77, 79, 90, 91, 92):
        assert request_header_version(key, 1) == 2 and response_header_version(key, 0) == 1


def _fetch_response(records: bytes | None) -> bytes:
    w = bytearray(struct.pack(">ih", 0, 0))
    write_string(w, None, compact=True, nullable=True)
    w += struct.pack(">i", 30000)  # acquisition lock timeout
    write_unsigned_varint(w, 2)
    w += TID.bytes
    write_unsigned_varint(w, 2)
    w += struct.pack(">ih", 0, 0)
    write_string(w, None, compact=True, nullable=True)
    w += struct.pack(">h", 0)
    write_string(w, None, compact=True, nullable=True)
    w += struct.pack(">ii", 1, 7) + b"\x00"  # current leader + tags
    write_bytes(w, records, compact=True, nullable=True)
    write_unsigned_varint(w, 3)
    w += struct.pack(">qqh", 0, 1, 1) + b"\x00"
    w += struct.pack(">qqh", 2, 3, 4) + b"\x00"
    w += b"\x00\x00"  # partition, topic tags
    write_unsigned_varint(w, 1)  # no node endpoints
    w += b"\x00"
    return bytes(w)


def _batch(base: int, n: int) -> bytes:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"v%d" % (base + i), headers=[])
    return bytes(b.build())


def _acquired(first: int, last: int, count: int) -> _messages.AcquiredRecords:
    return _messages.AcquiredRecords(first_offset=first, last_offset=last, delivery_count=count)


@pytest.mark.parametrize("version", [1, 2])
def test_share_fetch_response_and_acquired_records(version: int) -> None:
    data = _batch(0, 3)  # offsets 0..2; 3 is acquired but holds no record
    resp = _messages.ShareFetchResponse.decode(_fetch_response(data), version)
    assert resp.acquisition_lock_timeout_ms == 30000
    (topic,) = resp.responses
    assert topic.topic_id == TID
    (part,) = topic.partitions
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (1, 7)
    assert part.acquired_records == [_acquired(0, 1, 1), _acquired(2, 3, 4)]
    assert resp.encode(version) == _fetch_response(data)
    recs, gaps = acquired_records(TP, part.records, part.acquired_records, None, bytes.decode)
    assert [(r.offset, r.value, r.delivery_count) for r in recs] == [
        (0, "v0", 1),
        (1, "v1", 1),
        (2, "v2", 4),
    ]
    assert gaps == [3]
    # Records outside the acquired ranges (another member's) are dropped.
    recs, gaps = acquired_records(TP, data, [_acquired(1, 1, 2)], None, None)
    assert [r.offset for r in recs] == [1] and gaps == []
    with pytest.raises(KafkaProtocolError):
        _messages.ShareFetchResponse.decode(_fetch_response(data) + b"\x00", version)
    # Records are not nullable from v1 on: a null (length 0) is malformed.
    with pytest.raises(KafkaProtocolError):
        _messages.ShareFetchResponse.decode(_fetch_response(None), version)


def test_heartbeat_and_acknowledge_bytes() -> None:
    body = _messages.ShareGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=3)
    # GroupId, MemberId, MemberEpoch, RackId (null), SubscribedTopicNames (null), tags.
    assert body.encode(1) == b"\x02g\x02m" + struct.pack(">i", 3) + b"\x00\x00\x00"
    ack = _messages.ShareAcknowledgeRequest(group_id="g", member_id="m", share_session_epoch=1)
    head = b"\x02g\x02m" + struct.pack(">i", 1)
    assert ack.encode(1) == head + b"\x01\x00"  # no topics, tags
    assert ack.encode(2) == head + b"\x00\x01\x00"  # IsRenewAck false first
    w = bytearray(struct.pack(">ih", 0, 0) + b"\x00")  # throttle, error, null message
    v2 = bytes(w) + struct.pack(">i", 15000) + b"\x01\x01\x00"
    resp = _messages.ShareAcknowledgeResponse.decode(v2, 2)
    assert resp.acquisition_lock_timeout_ms == 15000 and resp.responses == []
    assert _messages.ShareAcknowledgeResponse.decode(bytes(w) + b"\x01\x01\x00", 1) == (
        _messages.ShareAcknowledgeResponse()
    )


def test_admin_offsets_messages() -> None:
    describe = _messages.DescribeShareGroupOffsetsRequest(
        groups=[_messages.DescribeShareGroupOffsetsRequestGroup(group_id="g", topics=None)]
    )
    assert describe.encode(1) == b"\x02\x02g\x00\x00\x00"
    w = bytearray(struct.pack(">i", 0))
    write_unsigned_varint(w, 2)
    write_string(w, "g", compact=True, nullable=False)
    write_unsigned_varint(w, 2)
    write_string(w, "t", compact=True, nullable=False)
    w += TID.bytes
    write_unsigned_varint(w, 2)
    w += struct.pack(">iqiqh", 0, 10, 0, 3, 0) + b"\x00" + b"\x00"  # null message, tags
    w += b"\x00"  # topic tags
    w += struct.pack(">h", 0) + b"\x00" + b"\x00"  # group error, null message, tags
    w += b"\x00"
    resp = _messages.DescribeShareGroupOffsetsResponse.decode(bytes(w), 1)
    (group,) = resp.groups
    (topic,) = group.topics
    assert topic.topic_name == "t" and topic.topic_id == TID
    (p,) = topic.partitions
    assert (p.partition_index, p.start_offset, p.leader_epoch, p.lag) == (0, 10, 0, 3)
    # v0 has no lag: it decodes as -1 (unknown).
    v0 = bytes(w).replace(struct.pack(">iqiqh", 0, 10, 0, 3, 0), struct.pack(">iqih", 0, 10, 0, 0))
    (p0,) = _messages.DescribeShareGroupOffsetsResponse.decode(v0, 0).groups[0].topics[0].partitions
    assert (p0.start_offset, p0.lag) == (10, -1)
    alter = _messages.AlterShareGroupOffsetsRequest(
        group_id="g",
        topics=[
            _messages.AlterShareGroupOffsetsRequestTopic(
                topic_name="t",
                partitions=[
                    _messages.AlterShareGroupOffsetsRequestPartition(
                        partition_index=0, start_offset=4
                    )
                ],
            )
        ],
    )
    assert alter.encode(0) == (b"\x02g\x02\x02t\x02" + struct.pack(">iq", 0, 4) + b"\x00\x00\x00")
    delete = _messages.DeleteShareGroupOffsetsRequest(
        group_id="g", topics=[_messages.DeleteShareGroupOffsetsRequestTopic(topic_name="t")]
    )
    assert delete.encode(0) == b"\x02g\x02\x02t\x00\x00"
