"""Share-group offset admin requests (KIP-932), written by hand (no asyncio).

DescribeShareGroupOffsets (API 90), AlterShareGroupOffsets (91) and
DeleteShareGroupOffsets (92) came after the Kafka 4.0 message definitions the
generated codec is built from. All three are flexible from version 0; the requests
here use version 1 of DescribeShareGroupOffsets (it adds each partition's lag) and
version 0 of the others.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import ClassVar

from aiokafka.protocol.primitives import (
    as_view,
    malformed,
    read_string,
    read_tagged_fields,
    read_uuid,
    uvarint_at,
    write_string,
    write_unsigned_varint,
)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def _array(w: bytearray, n: int | None) -> None:
    write_unsigned_varint(w, 0 if n is None else n + 1)


def _count(buf: memoryview, pos: int) -> tuple[int, int]:
    n, pos = uvarint_at(buf, pos)
    return max(n - 1, 0), pos


def _error(buf: memoryview, pos: int) -> tuple[int, str | None, int]:
    (code,) = _I16.unpack_from(buf, pos)
    message, pos = read_string(buf, pos + 2, compact=True, nullable=True)
    return code, message, pos


def _finish(name: str, decode_body: object, data: bytes | bytearray | memoryview) -> object:
    buf = as_view(data)
    try:
        obj, pos = decode_body(buf)  # type: ignore[operator]
    except (struct.error, IndexError, ValueError) as exc:
        raise malformed(f"{name}: {exc}") from exc
    if pos != len(buf):
        raise malformed(f"{len(buf) - pos} trailing bytes after {name}")
    return obj


@dataclass(slots=True)
class PartitionResult:
    """One partition in a share-group offsets response."""

    partition: int
    error_code: int = 0
    error_message: str | None = None
    start_offset: int = -1
    leader_epoch: int = -1
    lag: int = -1


@dataclass(slots=True)
class TopicResult:
    """One topic in a share-group offsets response."""

    topic: str
    topic_id: uuid.UUID
    partitions: list[PartitionResult] = field(default_factory=list)
    error_code: int = 0
    error_message: str | None = None


@dataclass(slots=True)
class OffsetsResponse:
    """The answer of any of the three APIs (describe: one group's entry)."""

    error_code: int = 0
    error_message: str | None = None
    topics: list[TopicResult] = field(default_factory=list)


# -- DescribeShareGroupOffsets v1 -----------------------------------------------------------


class DescribeOffsetsResponse:
    """DescribeShareGroupOffsets v1 response (one group asked per request)."""

    API_KEY: ClassVar[int] = 90
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> OffsetsResponse:
        """Decode a body; ``version`` is 1."""
        del version
        out = _finish("DescribeShareGroupOffsetsResponse v1", _decode_describe, data)
        assert isinstance(out, OffsetsResponse)
        return out


def _decode_describe(buf: memoryview) -> tuple[OffsetsResponse, int]:
    resp = OffsetsResponse()
    n_groups, pos = _count(buf, 4)  # after throttle_time_ms
    for _ in range(n_groups):
        _, pos = read_string(buf, pos, compact=True, nullable=False)
        n_topics, pos = _count(buf, pos)
        for _ in range(n_topics):
            name, pos = read_string(buf, pos, compact=True, nullable=False)
            topic_id, pos = read_uuid(buf, pos)
            topic = TopicResult(name or "", topic_id)
            n_parts, pos = _count(buf, pos)
            for _ in range(n_parts):
                (index,) = _I32.unpack_from(buf, pos)
                (start,) = _I64.unpack_from(buf, pos + 4)
                (epoch,) = _I32.unpack_from(buf, pos + 12)
                (lag,) = _I64.unpack_from(buf, pos + 16)
                code, message, pos = _error(buf, pos + 24)
                _, pos = read_tagged_fields(buf, pos)
                topic.partitions.append(PartitionResult(index, code, message, start, epoch, lag))
            _, pos = read_tagged_fields(buf, pos)
            resp.topics.append(topic)
        resp.error_code, resp.error_message, pos = _error(buf, pos)
        _, pos = read_tagged_fields(buf, pos)
    _, pos = read_tagged_fields(buf, pos)
    return resp, pos


@dataclass(slots=True)
class DescribeOffsetsRequest:
    """DescribeShareGroupOffsets v1 for one group; ``topics=None`` asks for every
    topic the group has state for."""

    API_KEY: ClassVar[int] = 90
    MIN_VERSION: ClassVar[int] = 1
    MAX_VERSION: ClassVar[int] = 1
    FLEXIBLE_MIN: ClassVar[int | None] = 0
    RESPONSE_TYPE: ClassVar[type[DescribeOffsetsResponse]] = DescribeOffsetsResponse

    group_id: str
    topics: dict[str, list[int]] | None = None

    def encode(self, version: int) -> bytes:
        """The body (no header)."""
        del version
        w = bytearray()
        _array(w, 1)
        write_string(w, self.group_id, compact=True, nullable=False)
        _array(w, None if self.topics is None else len(self.topics))
        for name, partitions in (self.topics or {}).items():
            write_string(w, name, compact=True, nullable=False)
            _array(w, len(partitions))
            for p in partitions:
                w += _I32.pack(p)
            w.append(0)
        w.append(0)  # group's tagged fields
        w.append(0)  # request's tagged fields
        return bytes(w)


# -- AlterShareGroupOffsets v0 --------------------------------------------------------------


class AlterOffsetsResponse:
    """AlterShareGroupOffsets v0 response."""

    API_KEY: ClassVar[int] = 91
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> OffsetsResponse:
        """Decode a body; ``version`` is 0."""
        del version
        out = _finish("AlterShareGroupOffsetsResponse v0", _decode_alter, data)
        assert isinstance(out, OffsetsResponse)
        return out


def _decode_alter(buf: memoryview) -> tuple[OffsetsResponse, int]:
    resp = OffsetsResponse()
    resp.error_code, resp.error_message, pos = _error(buf, 4)
    n_topics, pos = _count(buf, pos)
    for _ in range(n_topics):
        name, pos = read_string(buf, pos, compact=True, nullable=False)
        topic_id, pos = read_uuid(buf, pos)
        topic = TopicResult(name or "", topic_id)
        n_parts, pos = _count(buf, pos)
        for _ in range(n_parts):
            (index,) = _I32.unpack_from(buf, pos)
            code, message, pos = _error(buf, pos + 4)
            _, pos = read_tagged_fields(buf, pos)
            topic.partitions.append(PartitionResult(index, code, message))
        _, pos = read_tagged_fields(buf, pos)
        resp.topics.append(topic)
    _, pos = read_tagged_fields(buf, pos)
    return resp, pos


@dataclass(slots=True)
class AlterOffsetsRequest:
    """AlterShareGroupOffsets v0: ``offsets`` maps topic -> partition -> start offset."""

    API_KEY: ClassVar[int] = 91
    MIN_VERSION: ClassVar[int] = 0
    MAX_VERSION: ClassVar[int] = 0
    FLEXIBLE_MIN: ClassVar[int | None] = 0
    RESPONSE_TYPE: ClassVar[type[AlterOffsetsResponse]] = AlterOffsetsResponse

    group_id: str
    offsets: dict[str, dict[int, int]]

    def encode(self, version: int) -> bytes:
        """The body (no header)."""
        del version
        w = bytearray()
        write_string(w, self.group_id, compact=True, nullable=False)
        _array(w, len(self.offsets))
        for name, partitions in self.offsets.items():
            write_string(w, name, compact=True, nullable=False)
            _array(w, len(partitions))
            for p, offset in partitions.items():
                w += _I32.pack(p)
                w += _I64.pack(offset)
                w.append(0)
            w.append(0)
        w.append(0)
        return bytes(w)


# -- DeleteShareGroupOffsets v0 -------------------------------------------------------------


class DeleteOffsetsResponse:
    """DeleteShareGroupOffsets v0 response."""

    API_KEY: ClassVar[int] = 92
    FLEXIBLE_MIN: ClassVar[int | None] = 0

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> OffsetsResponse:
        """Decode a body; ``version`` is 0."""
        del version
        out = _finish("DeleteShareGroupOffsetsResponse v0", _decode_delete, data)
        assert isinstance(out, OffsetsResponse)
        return out


def _decode_delete(buf: memoryview) -> tuple[OffsetsResponse, int]:
    resp = OffsetsResponse()
    resp.error_code, resp.error_message, pos = _error(buf, 4)
    n_topics, pos = _count(buf, pos)
    for _ in range(n_topics):
        name, pos = read_string(buf, pos, compact=True, nullable=False)
        topic_id, pos = read_uuid(buf, pos)
        code, message, pos = _error(buf, pos)
        _, pos = read_tagged_fields(buf, pos)
        resp.topics.append(TopicResult(name or "", topic_id, [], code, message))
    _, pos = read_tagged_fields(buf, pos)
    return resp, pos


@dataclass(slots=True)
class DeleteOffsetsRequest:
    """DeleteShareGroupOffsets v0: forget the group's state for whole topics."""

    API_KEY: ClassVar[int] = 92
    MIN_VERSION: ClassVar[int] = 0
    MAX_VERSION: ClassVar[int] = 0
    FLEXIBLE_MIN: ClassVar[int | None] = 0
    RESPONSE_TYPE: ClassVar[type[DeleteOffsetsResponse]] = DeleteOffsetsResponse

    group_id: str
    topics: list[str]

    def encode(self, version: int) -> bytes:
        """The body (no header)."""
        del version
        w = bytearray()
        write_string(w, self.group_id, compact=True, nullable=False)
        _array(w, len(self.topics))
        for name in self.topics:
            write_string(w, name, compact=True, nullable=False)
            w.append(0)
        w.append(0)
        return bytes(w)
