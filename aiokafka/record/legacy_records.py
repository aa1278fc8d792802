"""Legacy message sets: magic v0 (Kafka 0.8-0.9) and v1 (0.10), read-mostly.

A message set is a run of ``offset int64 | size int32 | message``; a message is
``crc uint32 | magic int8 | attributes int8 | [timestamp int64, v1 only] |
key bytes | value bytes`` with the CRC-32 covering magic..value. A compressed
message is a *wrapper*: its value is a compressed message set of inner
messages. In v0 inner offsets are absolute; in v1 they are relative and the
wrapper carries the absolute offset of the last inner message.

Each top-level message is one :class:`LegacyRecordBatch`. The builder exists to
produce fixtures for tests and is deliberately small.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from aiokafka._readers import slot_reader
from aiokafka.errors import CorruptRecordError, IllegalStateError
from aiokafka.record.compression import (
    CODEC_LZ4,
    CODEC_MASK,
    CODEC_NONE,
    CODEC_ZSTD,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    check_codec,
    compress,
    decompress,
    xxh32,
)
from aiokafka.record.default_records import BaseRecord, BaseRecordBatch, Header, RecordTuple
from aiokafka.record.util import calc_crc32
from aiokafka.record.v2_layout import LOG_HEADER_STRUCT, LOG_OVERHEAD

__all__ = [
    "NO_TIMESTAMP",
    "NO_TIMESTAMP_TYPE",
    "LegacyRecord",
    "LegacyRecordBatch",
    "LegacyRecordBatchBuilder",
    "LegacyRecordMetadata",
]

NO_TIMESTAMP: Final = -1
#: Timestamp type of magic v0 records, which have no timestamp.
NO_TIMESTAMP_TYPE: Final = -1
_TIMESTAMP_TYPE_MASK: Final = 0x08

_V0_HEADER: Final = struct.Struct(">Ibb")  # crc, magic, attributes
_V1_HEADER: Final = struct.Struct(">Ibbq")  # + timestamp
_INT32: Final = struct.Struct(">i")
_CRC: Final = struct.Struct(">I")

# Smallest message: crc + magic + attributes [+ timestamp] + 2 null lengths.
MIN_MESSAGE_SIZE: Final = {0: 14, 1: 22}


@dataclass(slots=True, eq=False, repr=False)
class LegacyRecord(BaseRecord):
    """One message of a legacy message set.

    Attributes:
        offset: absolute offset.
        timestamp: ms since the epoch, -1 for magic v0.
        timestamp_type: 0 CreateTime, 1 LogAppendTime, -1 for magic v0.
        key: key bytes or None.
        value: value bytes or None.
        checksum: the message's CRC-32.
        size_in_bytes: size of the message including offset and size fields.
    """

    checksum: int
    size_in_bytes: int

    @property
    def headers(self) -> list[Header]:
        """Legacy messages have no headers."""
        return []

    def __repr__(self) -> str:
        return (
            f"LegacyRecord(offset={self.offset}, timestamp={self.timestamp}, "
            f"key={self.key!r}, value={self.value!r}, checksum={self.checksum})"
        )


# (offset, magic, attributes, timestamp, key, value, crc, size)
_Message = tuple[int, int, int, int, bytes | None, bytes | None, int, int]


def _parse_message(data: bytes, pos: int, end: int, check_crc: bool) -> tuple[_Message, int]:
    """Parse the message whose log header starts at ``data[pos]``."""
    if pos + LOG_OVERHEAD > end:
        raise CorruptRecordError("message set ends inside a message header")
    offset, size = LOG_HEADER_STRUCT.unpack_from(data, pos)
    body = pos + LOG_OVERHEAD
    stop = body + size
    if size < MIN_MESSAGE_SIZE[0] or stop > end:
        raise CorruptRecordError(f"impossible legacy message size {size}")
    crc, magic, attributes = _V0_HEADER.unpack_from(data, body)
    if magic == 0:
        cursor = body + _V0_HEADER.size
        timestamp = NO_TIMESTAMP
    elif magic == 1:
        if size < MIN_MESSAGE_SIZE[1]:
            raise CorruptRecordError(f"impossible legacy message size {size}")
        timestamp = _V1_HEADER.unpack_from(data, body)[3]
        cursor = body + _V1_HEADER.size
    else:
        raise CorruptRecordError(f"unexpected magic {magic} in a legacy message set")
    if check_crc and calc_crc32(memoryview(data)[body + 4 : stop]) != crc:
        raise CorruptRecordError(f"legacy message at offset {offset} failed its CRC-32 check")
    key, cursor = _read_bytes(data, cursor, stop)
    value, cursor = _read_bytes(data, cursor, stop)
    if cursor != stop:
        raise CorruptRecordError(f"legacy message at offset {offset} has trailing bytes")
    return (offset, magic, attributes, timestamp, key, value, crc, size + LOG_OVERHEAD), stop


def _read_bytes(data: bytes, pos: int, stop: int) -> tuple[bytes | None, int]:
    if pos + 4 > stop:
        raise CorruptRecordError("legacy message ends inside a length field")
    (length,) = _INT32.unpack_from(data, pos)
    pos += 4
    if length == -1:
        return None, pos
    if length < 0 or pos + length > stop:
        raise CorruptRecordError(f"impossible legacy key/value length {length}")
    return data[pos : pos + length], pos + length


class LegacyRecordBatch(BaseRecordBatch):
    """One top-level legacy message (a single record, or a compressed wrapper).

    Args:
        buffer: the message from its offset field to its end (longer buffers
            are cut to the declared size).
        check_crc: verify the CRC-32 of every message when iterating.
        max_decompressed_size: cap on a wrapper's decompressed size.

    Raises:
        CorruptRecordError: truncated buffer, bad size or magic.
    """

    __slots__ = (
        "_magic",
        "_offset",
        "_timestamp",
    )

    def __init__(
        self,
        buffer: bytes | bytearray | memoryview,
        *,
        check_crc: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        if len(buffer) < LOG_OVERHEAD + MIN_MESSAGE_SIZE[0]:
            raise CorruptRecordError(f"legacy message needs at least 26 bytes, got {len(buffer)}")
        offset, size = LOG_HEADER_STRUCT.unpack_from(buffer, 0)
        crc, magic, attributes = _V0_HEADER.unpack_from(buffer, LOG_OVERHEAD)
        if magic not in (0, 1):
            raise CorruptRecordError(f"expected a legacy message, got magic {magic}")
        total = LOG_OVERHEAD + size
        if size < MIN_MESSAGE_SIZE[magic] or total > len(buffer):
            raise CorruptRecordError(f"impossible legacy message size {size}")
        self._buffer = buffer if total == len(buffer) else memoryview(buffer)[:total]
        self._offset: int = offset
        self._crc = crc
        self._magic: int = magic
        self._attributes = attributes
        self._timestamp: int = (
            _V1_HEADER.unpack_from(buffer, LOG_OVERHEAD)[3] if magic == 1 else NO_TIMESTAMP
        )
        self._check_crc = check_crc
        self._max_decompressed_size = max_decompressed_size

    magic = slot_reader("_magic", int, "0 or 1.")

    base_offset = slot_reader(
        "_offset", int, "Offset of the top-level message (for a wrapper: of its last record)."
    )

    last_offset = slot_reader("_offset", int, "Offset of the last record.")

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime, -1 (no timestamps) for magic v0."""
        if self._magic == 0:
            return NO_TIMESTAMP_TYPE
        return 1 if self._attributes & _TIMESTAMP_TYPE_MASK else 0

    timestamp = slot_reader(
        "_timestamp", int, "Timestamp of the top-level message, -1 for magic v0."
    )

    # Fields of v2 batches, constant here, so consumers can treat both alike.
    is_transactional: Final = False
    is_control_batch: Final = False
    producer_id: Final = -1
    producer_epoch: Final = -1
    base_sequence: Final = -1

    def validate_crc(self) -> bool:
        """True when the top-level message's CRC-32 matches."""
        return calc_crc32(memoryview(self._buffer)[LOG_OVERHEAD + 4 :]) == self._crc

    def _messages(self) -> list[_Message]:
        data = bytes(self._buffer)
        outer, _ = _parse_message(data, 0, len(data), self._check_crc)
        codec = self._attributes & CODEC_MASK
        if codec == CODEC_NONE:
            return [outer]
        value = outer[5]
        if value is None:
            raise CorruptRecordError("compressed legacy message has a null value")
        inner_data = decompress(
            codec, value, max_size=self._max_decompressed_size, legacy_lz4=self._magic == 0
        )
        messages: list[_Message] = []
        pos = 0
        end = len(inner_data)
        while pos < end:
            message, pos = _parse_message(inner_data, pos, end, self._check_crc)
            if message[2] & CODEC_MASK:
                raise CorruptRecordError("compressed legacy message nests a compressed message")
            messages.append(message)
        if not messages:
            raise CorruptRecordError("compressed legacy message holds no messages")
        if self._magic >= 1:
            # Inner offsets are relative; the wrapper holds the last one's absolute offset.
            shift = self._offset - messages[-1][0]
            if self._attributes & _TIMESTAMP_TYPE_MASK:
                stamp = self._timestamp
                messages = [
                    (o + shift, m, a, stamp, k, v, c, s) for (o, m, a, _, k, v, c, s) in messages
                ]
            else:
                messages = [
                    (o + shift, m, a, t, k, v, c, s) for (o, m, a, t, k, v, c, s) in messages
                ]
        return messages

    def record_tuples(self) -> list[RecordTuple]:
        """Decode the records: ``(offset, timestamp, key, value, headers, size)`` each.

        Raises:
            CorruptRecordError: CRC mismatch or malformed (inner) messages.
            UnsupportedCodecError: the codec's library is not installed.
        """
        return [(o, t, k, v, [], s) for (o, _, _, t, k, v, _, s) in self._messages()]

    def __iter__(self) -> Iterator[LegacyRecord]:
        ts_type = self.timestamp_type
        for offset, _magic, _attrs, timestamp, key, value, crc, size in self._messages():
            yield LegacyRecord(offset, timestamp, ts_type, key, value, crc, size)

    def __repr__(self) -> str:
        return (
            f"LegacyRecordBatch(offset={self._offset}, magic={self._magic}, "
            f"compression_type={self.compression_type})"
        )


class LegacyRecordMetadata:
    """Metadata of a record appended by :class:`LegacyRecordBatchBuilder`."""

    __slots__ = ("crc", "offset", "size", "timestamp")

    def __init__(self, offset: int, crc: int, size: int, timestamp: int) -> None:
        self.offset = offset
        self.crc = crc
        self.size = size
        self.timestamp = timestamp


def _encode_message(
    offset: int,
    magic: int,
    attributes: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
) -> tuple[bytes, int]:
    parts = [struct.pack(">bb", magic, attributes)]
    if magic == 1:
        parts.append(struct.pack(">q", timestamp))
    for field in (key, value):
        if field is None:
            parts.append(_INT32.pack(-1))
        else:
            parts.append(_INT32.pack(len(field)))
            parts.append(field)
    body = b"".join(parts)
    crc = calc_crc32(body)
    return LOG_HEADER_STRUCT.pack(offset, len(body) + 4) + _CRC.pack(crc) + body, crc


def _break_lz4_header_checksum(frame: bytes) -> bytes:
    """Reproduce ``KafkaLZ4BlockOutputStream``'s header checksum (magic v0)."""
    flags = frame[4]
    descriptor_end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    checksum = (xxh32(frame[:descriptor_end]) >> 8) & 0xFF
    return frame[:descriptor_end] + bytes((checksum,)) + frame[descriptor_end + 1 :]


class LegacyRecordBatchBuilder:
    """Builds a v0/v1 message set (test fixtures; producers write v2).

    Args:
        magic: 0 or 1.
        compression_type: ``CODEC_NONE``, gzip, snappy or lz4.
        batch_size: soft size limit; the first record is always accepted.
        compression_level: codec-specific level, None for the default.
    """

    def __init__(
        self,
        magic: int,
        compression_type: int = CODEC_NONE,
        batch_size: int = 16384,
        *,
        compression_level: int | None = None,
    ) -> None:
        if magic not in (0, 1):
            raise ValueError(f"magic must be 0 or 1, got {magic}")
        if compression_type not in range(CODEC_ZSTD):  # zstd needs magic v2
            raise ValueError(
                f"compression_type must be 0..3 for legacy messages, got {compression_type!r}"
            )
        check_codec(compression_type)
        self._magic = magic
        self._compression_type = compression_type
        self._compression_level = compression_level
        self._batch_size = batch_size
        self._buffer = bytearray()
        self._max_timestamp = NO_TIMESTAMP
        self._last_offset = -1
        self._built = False

    def append(
        self,
        offset: int,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> LegacyRecordMetadata | None:
        """Append a message; None when the batch is full.

        Raises:
            ValueError: headers given (legacy messages have none) or offset
                not increasing.
            IllegalStateError: already built.
        """
        if self._built:
            raise IllegalStateError("cannot append to a message set after build()")
        if headers:
            raise ValueError("headers are not supported by magic v0/v1 messages")
        if offset <= self._last_offset:
            raise ValueError(f"offset must increase: got {offset} after {self._last_offset}")
        if self._magic == 0:
            timestamp = NO_TIMESTAMP
        elif timestamp is None:
            timestamp = time.time_ns() // 1_000_000
        message, crc = _encode_message(offset, self._magic, 0, timestamp, key, value)
        if self._buffer and len(self._buffer) + len(message) > self._batch_size:
            return None
        self._buffer += message
        self._last_offset = offset
        self._max_timestamp = max(self._max_timestamp, timestamp)
        return LegacyRecordMetadata(offset, crc, len(message), timestamp)

    def size_in_bytes(self) -> int:
        """Current uncompressed size."""
        return len(self._buffer)

    def build(self) -> bytearray:
        """The message set; with a codec, one wrapper message around it."""
        self._built = True
        if self._compression_type == CODEC_NONE:
            return bytearray(self._buffer)
        payload = compress(self._compression_type, bytes(self._buffer), self._compression_level)
        if self._compression_type == CODEC_LZ4 and self._magic == 0:
            payload = _break_lz4_header_checksum(payload)
        wrapper, _ = _encode_message(
            self._last_offset,
            self._magic,
            self._compression_type,
            self._max_timestamp,
            None,
            payload,
        )
        return bytearray(wrapper)
