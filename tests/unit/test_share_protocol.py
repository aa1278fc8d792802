"""Share-group codecs and acknowledgement state (bytes in, bytes out; no broker)."""

from __future__ import annotations

import struct
import uuid

import pytest

from aiokafka.errors import IllegalStateError, KafkaProtocolError
from aiokafka.protocol import messages as _messages
from aiokafka.protocol.api import request_header_version, response_header_version
from aiokafka.protocol.primitives import write_bytes, write_string, write_unsigned_varint
from aiokafka.record.default_builder import DefaultRecordBatchBuilder
from aiokafka.share import admin_wire
from aiokafka.share.acks import AcknowledgementState, ack_code, to_batches
from aiokafka.share.records import acquired_records
from aiokafka.share.wire import (
    ACCEPT,
    GAP,
    REJECT,
    RELEASE,
    AcknowledgeRequestV1,
    AcquiredRange,
    HeartbeatRequestV1,
    ShareFetchRequestV1,
    ShareFetchResponseV1,
)
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


def test_share_fetch_request_v1_bytes() -> None:
    request = ShareFetchRequestV1(
        group_id="g",
        member_id="m",
        share_session_epoch=2,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1000,
        max_records=10,
        batch_size=10,
        topics={TID: {0: [(4, 5, [ACCEPT])]}},
        forgotten={TID: [1]},
    )
    expected = (
        b"\x02g\x02m"
        + struct.pack(">iiiiii", 2, 500, 1, 1000, 10, 10)
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
    assert request.encode(1) == expected
    # Flexible from v0: request header v2, response header v1.
    assert request_header_version(78, 1) == 2 and response_header_version(78, 1) == 1
    for key in (90, 91, 92):
        assert request_header_version(key, 0) == 2


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


def test_share_fetch_response_v1_and_acquired_records() -> None:
    data = _batch(0, 3)  # offsets 0..2; 3 is acquired but holds no record
    resp = ShareFetchResponseV1.decode(_fetch_response(data), 1)
    assert resp.acquisition_lock_timeout_ms == 30000
    (part,) = resp.topics[TID]
    assert (part.leader_id, part.leader_epoch) == (1, 7)
    assert part.acquired == [AcquiredRange(0, 1, 1), AcquiredRange(2, 3, 4)]
    recs, gaps = acquired_records(TP, part.records, part.acquired, None, bytes.decode)
    assert [(r.offset, r.value, r.delivery_count) for r in recs] == [
        (0, "v0", 1),
        (1, "v1", 1),
        (2, "v2", 4),
    ]
    assert gaps == [3]
    # Records outside the acquired ranges (another member's) are dropped.
    recs, gaps = acquired_records(TP, data, [AcquiredRange(1, 1, 2)], None, None)
    assert [r.offset for r in recs] == [1] and gaps == []
    with pytest.raises(KafkaProtocolError):
        ShareFetchResponseV1.decode(_fetch_response(data) + b"\x00", 1)


def test_v1_requests_with_v0_layout_encode_the_generated_bytes() -> None:
    body = _messages.ShareGroupHeartbeatRequest(group_id="g", member_id="m", member_epoch=3)
    assert HeartbeatRequestV1(body).encode(1) == body.encode(0)
    ack = _messages.ShareAcknowledgeRequest(group_id="g", member_id="m", share_session_epoch=1)
    assert AcknowledgeRequestV1(ack).encode(1) == ack.encode(0)


def test_admin_offsets_codecs() -> None:
    req = admin_wire.DescribeOffsetsRequest("g", None)
    assert req.encode(1) == b"\x02\x02g\x00\x00\x00"
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
    resp = admin_wire.DescribeOffsetsResponse.decode(bytes(w), 1)
    (topic,) = resp.topics
    assert topic.topic == "t" and topic.topic_id == TID
    assert topic.partitions == [admin_wire.PartitionResult(0, 0, None, 10, 0, 3)]
    alter = admin_wire.AlterOffsetsRequest("g", {"t": {0: 4}})
    assert alter.encode(0) == (b"\x02g\x02\x02t\x02" + struct.pack(">iq", 0, 4) + b"\x00\x00\x00")
    assert admin_wire.DeleteOffsetsRequest("g", ["t"]).encode(0) == b"\x02g\x02\x02t\x00\x00"
