"""Share-group requests at the versions Kafka 4.1+ brokers accept (no asyncio).

The generated codec (``aiokafka/protocol/_gen/``) comes from Kafka 4.0's message
definitions, where ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch and
ShareAcknowledge exist only as the early-access version 0. Kafka 4.1 removed version 0
and made version 1 the first stable one, so a 4.x broker rejects every generated share
request. Until the definitions are updated this module speaks version 1:

* ShareGroupHeartbeat, ShareGroupDescribe and ShareAcknowledge v1 have exactly the
  layout of v0 (checked against the 4.3 broker's schemas), so their requests wrap the
  generated v0 message and encode it as v0 bytes; their responses decode as v0.
* ShareFetch v1 differs: the request gained ``MaxRecords`` and ``BatchSize`` and lost
  ``PartitionMaxBytes``; the response gained ``AcquisitionLockTimeoutMs``. Both are
  written here by hand with the protocol primitives.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import ClassVar

from aiokafka.protocol import messages as _messages
from aiokafka.protocol.primitives import (
    as_view,
    malformed,
    read_bytes,
    read_string,
    read_tagged_fields,
    read_uuid,
    uvarint_at,
    write_string,
    write_tagged_fields,
    write_unsigned_varint,
    write_uuid,
)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_FETCH_HEAD = struct.Struct(">iiiiii")  # epoch, max wait, min/max bytes, max records, batch
_ACQUIRED = struct.Struct(">qqh")

#: AcknowledgeTypes values (KIP-932); 0 is a gap (an offset that holds no record).
GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3


class _V0Layout:
    """A v1 request whose bytes are the generated v0 message's."""

    MIN_VERSION: ClassVar[int] = 1
    MAX_VERSION: ClassVar[int] = 1
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    def __init__(self, body: object) -> None:
        self.body = body

    def encode(self, version: int) -> bytes:
        del version  # v1 has the v0 layout
        encoded: bytes = self.body.encode(0)  # type: ignore[attr-defined]
        return encoded


class HeartbeatResponseV1:
    """ShareGroupHeartbeat v1 response: decoded as the generated v0 response."""

    API_KEY: ClassVar[int] = 76
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(
        cls, data: bytes | bytearray | memoryview, version: int
    ) -> _messages.ShareGroupHeartbeatResponse:
        del version
        return _messages.ShareGroupHeartbeatResponse.decode(data, 0)


class HeartbeatRequestV1(_V0Layout):
    """ShareGroupHeartbeat v1 (API key 76)."""

    API_KEY: ClassVar[int] = 76
    RESPONSE_TYPE: ClassVar[type[HeartbeatResponseV1]] = HeartbeatResponseV1


class DescribeResponseV1:
    """ShareGroupDescribe v1 response: decoded as the generated v0 response."""

    API_KEY: ClassVar[int] = 77
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(
        cls, data: bytes | bytearray | memoryview, version: int
    ) -> _messages.ShareGroupDescribeResponse:
        del version
        return _messages.ShareGroupDescribeResponse.decode(data, 0)


class DescribeRequestV1(_V0Layout):
    """ShareGroupDescribe v1 (API key 77)."""

    API_KEY: ClassVar[int] = 77
    RESPONSE_TYPE: ClassVar[type[DescribeResponseV1]] = DescribeResponseV1


class AcknowledgeResponseV1:
    """ShareAcknowledge v1 response: decoded as the generated v0 response."""

    API_KEY: ClassVar[int] = 79
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(
        cls, data: bytes | bytearray | memoryview, version: int
    ) -> _messages.ShareAcknowledgeResponse:
        del version
        return _messages.ShareAcknowledgeResponse.decode(data, 0)


class AcknowledgeRequestV1(_V0Layout):
    """ShareAcknowledge v1 (API key 79)."""

    API_KEY: ClassVar[int] = 79
    RESPONSE_TYPE: ClassVar[type[AcknowledgeResponseV1]] = AcknowledgeResponseV1


# -- ShareFetch v1 -----------------------------------------------------------------------

#: One acknowledgement batch: (first offset, last offset, one type or one per offset).
AckBatch = tuple[int, int, list[int]]


@dataclass(slots=True)
class AcquiredRange:
    """Offsets ``first..last`` acquired by this member, delivered ``delivery_count`` times."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(slots=True)
class FetchedPartition:
    """One partition of a ShareFetch v1 response."""

    partition: int
    error_code: int
    error_message: str | None
    acknowledge_error_code: int
    acknowledge_error_message: str | None
    leader_id: int
    leader_epoch: int
    records: bytes | None
    acquired: list[AcquiredRange] = field(default_factory=list)


@dataclass(slots=True)
class ShareFetchResponseV1:
    """ShareFetch v1 response (node endpoints are read and dropped: leaders come
    from metadata)."""

    API_KEY: ClassVar[int] = 78
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    acquisition_lock_timeout_ms: int = 0
    topics: dict[uuid.UUID, list[FetchedPartition]] = field(default_factory=dict)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> ShareFetchResponseV1:
        """Decode a body (no header).

        Raises:
            aiokafka.errors.KafkaProtocolError: malformed or trailing bytes.
        """
        del version
        buf = as_view(data)
        try:
            resp, pos = _decode_fetch(buf)
        except (struct.error, IndexError, ValueError) as exc:
            raise malformed(f"ShareFetchResponse v1: {exc}") from exc
        if pos != len(buf):
            raise malformed(f"{len(buf) - pos} trailing bytes after ShareFetchResponse v1")
        return resp


def _count(buf: memoryview, pos: int) -> tuple[int, int]:
    n, pos = uvarint_at(buf, pos)
    return max(n - 1, 0), pos


def _decode_fetch(buf: memoryview) -> tuple[ShareFetchResponseV1, int]:
    resp = ShareFetchResponseV1()
    (resp.throttle_time_ms,) = _I32.unpack_from(buf, 0)
    (resp.error_code,) = _I16.unpack_from(buf, 4)
    resp.error_message, pos = read_string(buf, 6, compact=True, nullable=True)
    (resp.acquisition_lock_timeout_ms,) = _I32.unpack_from(buf, pos)
    n_topics, pos = _count(buf, pos + 4)
    for _ in range(n_topics):
        topic_id, pos = read_uuid(buf, pos)
        n_parts, pos = _count(buf, pos)
        parts: list[FetchedPartition] = []
        for _ in range(n_parts):
            (index,) = _I32.unpack_from(buf, pos)
            (code,) = _I16.unpack_from(buf, pos + 4)
            message, pos = read_string(buf, pos + 6, compact=True, nullable=True)
            (ack_code,) = _I16.unpack_from(buf, pos)
            ack_message, pos = read_string(buf, pos + 2, compact=True, nullable=True)
            (leader_id,) = _I32.unpack_from(buf, pos)
            (leader_epoch,) = _I32.unpack_from(buf, pos + 4)
            _, pos = read_tagged_fields(buf, pos + 8)
            records, pos = read_bytes(buf, pos, compact=True, nullable=True)
            n_acq, pos = _count(buf, pos)
            acquired: list[AcquiredRange] = []
            for _ in range(n_acq):
                first, last, count = _ACQUIRED.unpack_from(buf, pos)
                _, pos = read_tagged_fields(buf, pos + _ACQUIRED.size)
                acquired.append(AcquiredRange(first, last, count))
            _, pos = read_tagged_fields(buf, pos)
            parts.append(
                FetchedPartition(
                    index,
                    code,
                    message,
                    ack_code,
                    ack_message,
                    leader_id,
                    leader_epoch,
                    records,
                    acquired,
                )
            )
        _, pos = read_tagged_fields(buf, pos)
        resp.topics[topic_id] = parts
    n_nodes, pos = _count(buf, pos)
    for _ in range(n_nodes):
        pos += 4  # node id
        _, pos = read_string(buf, pos, compact=True, nullable=False)
        pos += 4  # port
        _, pos = read_string(buf, pos, compact=True, nullable=True)
        _, pos = read_tagged_fields(buf, pos)
    _, pos = read_tagged_fields(buf, pos)
    return resp, pos


@dataclass(slots=True)
class ShareFetchRequestV1:
    """ShareFetch v1 (API key 78): fetch and acknowledge in one request.

    ``topics`` maps a topic id to ``{partition: [ack batches]}``; a partition with no
    batches is fetched only. ``forgotten`` removes partitions from the share session.
    """

    API_KEY: ClassVar[int] = 78
    MIN_VERSION: ClassVar[int] = 1
    MAX_VERSION: ClassVar[int] = 1
    FLEXIBLE_MIN: ClassVar[int | None] = 0
    RESPONSE_TYPE: ClassVar[type[ShareFetchResponseV1]] = ShareFetchResponseV1

    group_id: str
    member_id: str
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    batch_size: int
    topics: dict[uuid.UUID, dict[int, list[AckBatch]]] = field(default_factory=dict)
    forgotten: dict[uuid.UUID, list[int]] = field(default_factory=dict)

    def encode(self, version: int) -> bytes:
        """The body (no header); ``version`` is always 1."""
        del version
        w = bytearray()
        write_string(w, self.group_id, compact=True, nullable=True)
        write_string(w, self.member_id, compact=True, nullable=True)
        w += _FETCH_HEAD.pack(
            self.share_session_epoch,
            self.max_wait_ms,
            self.min_bytes,
            self.max_bytes,
            self.max_records,
            self.batch_size,
        )
        write_unsigned_varint(w, len(self.topics) + 1)
        for topic_id, partitions in self.topics.items():
            write_uuid(w, topic_id)
            write_unsigned_varint(w, len(partitions) + 1)
            for index, batches in partitions.items():
                w += _I32.pack(index)
                encode_ack_batches(w, batches)
                w.append(0)  # tagged fields
            w.append(0)
        write_unsigned_varint(w, len(self.forgotten) + 1)
        for topic_id, indexes in self.forgotten.items():
            write_uuid(w, topic_id)
            write_unsigned_varint(w, len(indexes) + 1)
            for index in indexes:
                w += _I32.pack(index)
            w.append(0)
        write_tagged_fields(w, {})
        return bytes(w)


def encode_ack_batches(w: bytearray, batches: list[AckBatch]) -> None:
    """Append the compact array of AcknowledgementBatch structs."""
    write_unsigned_varint(w, len(batches) + 1)
    for first, last, types in batches:
        w += _I64.pack(first)
        w += _I64.pack(last)
        write_unsigned_varint(w, len(types) + 1)
        w += bytes(types)
        w.append(0)
