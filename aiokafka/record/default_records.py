"""Reader of magic v2 record batches (Kafka 0.11+).

Batch layout (big-endian; see docs/implementation.html, "Record Batch")::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8
    | crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
    | maxTimestamp int64 | producerId int64 | producerEpoch int16
    | baseSequence int32 | recordsCount int32 | records...

The CRC-32C covers everything from ``attributes`` to the end of the batch.
Each record is ``length varint | attributes int8 | timestampDelta varlong |
offsetDelta varint | key (varint length, -1 = null) | value (same) |
headersCount varint | headers``.

Speed: :meth:`DefaultRecordBatch.record_tuples` decodes all records of a batch
in one loop over a ``bytes`` object, with the one- and two-byte varint cases
inlined, producing plain tuples (the cheapest Python object to create). Record
objects (:class:`DefaultRecord`) are a convenience layered on top.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from aiokafka._extensions import load_extension
from aiokafka._readers import slot_reader
from aiokafka.errors import CorruptRecordError
from aiokafka.record.compression import (
    CODEC_MASK,
    CODEC_NONE,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    decompress,
)
from aiokafka.record.util import ZIGZAG_ONE_BYTE, calc_crc32c, crc32c_function, decode_varint
from aiokafka.record.v2_layout import (
    ATTRIBUTES_OFFSET,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CONTROL_MASK,
    CREATE_TIME,
    DELETE_HORIZON_MASK,
    HEADER_SIZE,
    HEADER_STRUCT,
    LOG_APPEND_TIME,
    LOG_OVERHEAD,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    parse_control_key,
    parse_marker_epoch,
)

# The layout names others import from here are in __all__ too (their home before
# v2_layout.py).
__all__ = [
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "HEADER_SIZE",
    "ControlRecord",
    "DefaultRecord",
    "DefaultRecordBatch",
    "Header",
    "RecordTuple",
    "decode_records",
    "decode_with",
    "parse_control_key",
]

Header: TypeAlias = tuple[str, bytes | None]

#: One decoded record: ``(offset, timestamp, key, value, headers, size_in_bytes)``.
#: The timestamp type is the batch's (:attr:`DefaultRecordBatch.timestamp_type`).
RecordTuple: TypeAlias = tuple[int, int, bytes | None, bytes | None, list[Header], int]

_cdecode = load_extension("aiokafka.record._cdecode")
# The optional C loop (record/_cdecode.c), which builds these tuples too when given no
# record class; None: the pure-Python decode_records. It returns None for anything it
# does not decode exactly as decode_records would, which then runs and raises.
_c_decode_records: Callable[..., list[Any] | None] | None = (
    None if _cdecode is None else _cdecode.decode_records
)
_c_decode_batch: Callable[..., list[Any] | None] | None = (
    None if _cdecode is None else _cdecode.decode_batch
)


@dataclass(slots=True, eq=False, repr=False)
class BaseRecord:
    """The fields a record of every format has, first in each one's constructor
    (:class:`DefaultRecord`, :class:`~aiokafka.record.legacy_records.LegacyRecord`)."""

    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None


@dataclass(slots=True, eq=False, repr=False)
class DefaultRecord(BaseRecord):
    """One record of a v2 batch.

    Attributes:
        offset: absolute offset.
        timestamp: milliseconds since the epoch (the batch's max timestamp when
            the topic uses LogAppendTime).
        timestamp_type: 0 = CreateTime, 1 = LogAppendTime.
        key: key bytes or None.
        value: value bytes or None.
        headers: list of ``(key, value)``.
        size_in_bytes: encoded size of the record, its length prefix included.
    """

    headers: list[Header]
    size_in_bytes: int

    @property
    def checksum(self) -> None:
        """Per-record checksums do not exist in v2 (the batch has one)."""
        return None

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(offset={self.offset}, timestamp={self.timestamp}, "
            f"timestamp_type={self.timestamp_type}, key={self.key!r}, value={self.value!r}, "
            f"headers={self.headers!r})"
        )


class ControlRecord(DefaultRecord):
    """The record of a control batch (transaction marker or KRaft control data).

    The key is ``version int16 | type int16``; for COMMIT/ABORT markers the
    value is ``version int16 | coordinator_epoch int32``.
    """

    __slots__ = ()

    @property
    def version(self) -> int:
        """Version of the control key schema."""
        return self._parse_key()[0]

    @property
    def type(self) -> int:
        """Control type: 0 = ABORT, 1 = COMMIT, others are KRaft internals."""
        return self._parse_key()[1]

    @property
    def abort(self) -> bool:
        """True for a transaction ABORT marker."""
        return self.type == CONTROL_ABORT

    @property
    def commit(self) -> bool:
        """True for a transaction COMMIT marker."""
        return self.type == CONTROL_COMMIT

    @property
    def coordinator_epoch(self) -> int | None:
        """Epoch of the transaction coordinator that wrote a COMMIT/ABORT marker."""
        if self.type not in (CONTROL_ABORT, CONTROL_COMMIT):
            return None
        epoch = parse_marker_epoch(self.value)
        if epoch is None:
            raise CorruptRecordError("transaction marker value is shorter than 6 bytes")
        return epoch

    def _parse_key(self) -> tuple[int, int]:
        parsed = parse_control_key(self.key)
        if parsed is None:
            raise CorruptRecordError("control record key is shorter than 4 bytes")
        return parsed

    def __repr__(self) -> str:
        return f"ControlRecord(offset={self.offset}, type={self.type})"


class BaseRecordBatch:
    """What a batch reader of every format has: the header's CRC and attribute bits,
    and the buffer (:class:`DefaultRecordBatch`,
    :class:`~aiokafka.record.legacy_records.LegacyRecordBatch`, one top-level
    message). The subclass's constructor sets these slots."""

    __slots__ = ("_attributes", "_buffer", "_check_crc", "_crc", "_max_decompressed_size")

    _attributes: int
    _buffer: bytes | bytearray | memoryview
    _check_crc: bool
    _crc: int
    _max_decompressed_size: int

    @property
    def last_offset(self) -> int:
        """Offset of the last record."""
        raise NotImplementedError  # pragma: no cover - each format's

    @property
    def next_offset(self) -> int:
        """Offset just after the batch."""
        return self.last_offset + 1

    @property
    def size_in_bytes(self) -> int:
        """Size of the batch (of a legacy top-level message), log header included."""
        return len(self._buffer)

    crc = slot_reader(
        "_crc", int, "The checksum stored in the header: CRC-32C in v2, CRC-32 in v0/v1."
    )

    attributes = slot_reader("_attributes", int, "Raw attribute bits.")

    @property
    def compression_type(self) -> int:
        """Codec id (``aiokafka.record.compression.CODEC_*``)."""
        return int(self._attributes & CODEC_MASK)


class DefaultRecordBatch(BaseRecordBatch):
    """A magic v2 record batch read from a buffer.

    Constructing one parses only the 61-byte header; the records are decoded
    (and the CRC checked) each time :meth:`record_tuples` or iteration runs.

    Args:
        buffer: the batch, from its base offset to its last byte. A longer
            buffer is cut to the batch length the header declares.
        check_crc: verify the CRC-32C before decoding records.
        max_decompressed_size: cap on the decompressed size of the records.

    Raises:
        CorruptRecordError: the buffer is shorter than the header or the
            declared length, the magic is not 2, or a length is impossible.
    """

    __slots__ = (
        "_base_offset",
        "_base_sequence",
        "_first_timestamp",
        "_last_offset_delta",
        "_leader_epoch",
        "_max_timestamp",
        "_producer_epoch",
        "_producer_id",
        "_records_count",
    )

    _base_offset: int
    _base_sequence: int
    _first_timestamp: int
    _last_offset_delta: int
    _leader_epoch: int
    _max_timestamp: int
    _producer_epoch: int
    _producer_id: int
    _records_count: int

    def __init__(
        self,
        buffer: bytes | bytearray | memoryview,
        *,
        check_crc: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        if len(buffer) < HEADER_SIZE:
            raise CorruptRecordError(
                f"record batch needs at least {HEADER_SIZE} bytes, got {len(buffer)}"
            )
        (
            self._base_offset,
            length,
            self._leader_epoch,
            magic,
            self._crc,
            self._attributes,
            self._last_offset_delta,
            self._first_timestamp,
            self._max_timestamp,
            self._producer_id,
            self._producer_epoch,
            self._base_sequence,
            self._records_count,
        ) = HEADER_STRUCT.unpack_from(buffer, 0)
        if magic != 2:
            raise CorruptRecordError(f"expected a magic v2 record batch, got magic {magic}")
        total = length + LOG_OVERHEAD
        if total < HEADER_SIZE:
            raise CorruptRecordError(f"impossible record batch length {length}")
        if total > len(buffer):
            raise CorruptRecordError(
                f"record batch declares {total} bytes but only {len(buffer)} are present"
            )
        if self._records_count < 0:
            raise CorruptRecordError(f"negative record count {self._records_count}")
        self._buffer = buffer if total == len(buffer) else memoryview(buffer)[:total]
        self._check_crc = check_crc
        self._max_decompressed_size = max_decompressed_size

    # ----------------------------------------------------------------- header fields

    @property
    def magic(self) -> int:
        """Always 2."""
        return 2

    base_offset = slot_reader("_base_offset", int, "Offset of the first record of the batch.")

    partition_leader_epoch = slot_reader(
        "_leader_epoch", int, "Leader epoch the broker stamped on the batch (-1 from producers)."
    )

    leader_epoch = partition_leader_epoch

    @property
    def timestamp_type(self) -> int:
        """0 = CreateTime, 1 = LogAppendTime."""
        return LOG_APPEND_TIME if self._attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        """The batch belongs to a transaction."""
        return bool(self._attributes & TRANSACTIONAL_MASK)

    @property
    def is_control_batch(self) -> bool:
        """The batch holds a control record (e.g. a transaction marker)."""
        return bool(self._attributes & CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        """The base timestamp is the compaction delete horizon (KIP-534)."""
        return bool(self._attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon if set, else None."""
        return int(self._first_timestamp) if self.has_delete_horizon else None

    last_offset_delta = slot_reader(
        "_last_offset_delta", int, "Offset delta of the last record (kept by compaction)."
    )

    @property
    def last_offset(self) -> int:
        """Offset of the last record the batch was written with."""
        return int(self._base_offset + self._last_offset_delta)

    first_timestamp = slot_reader(
        "_first_timestamp", int, "Base timestamp: record timestamps are deltas from it."
    )

    base_timestamp = first_timestamp

    max_timestamp = slot_reader(
        "_max_timestamp", int, "Largest record timestamp (the append time under LogAppendTime)."
    )

    producer_id = slot_reader(
        "_producer_id", int, "Idempotent/transactional producer id, -1 if none."
    )

    @property
    def has_producer_id(self) -> bool:
        """The batch was written by an idempotent or transactional producer."""
        return self._producer_id > NO_PRODUCER_ID

    producer_epoch = slot_reader("_producer_epoch", int, "Producer epoch, -1 if none.")

    base_sequence = slot_reader(
        "_base_sequence", int, "Sequence number of the first record, -1 if none."
    )

    @property
    def has_sequence(self) -> bool:
        """The batch carries sequence numbers."""
        return self._base_sequence != NO_SEQUENCE

    @property
    def last_sequence(self) -> int:
        """Sequence number of the last record (wraps at 2**31), -1 if none."""
        if self._base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return int((self._base_sequence + self._last_offset_delta) % (1 << 31))

    records_count = slot_reader("_records_count", int, "Number of records the header declares.")

    # ----------------------------------------------------------------------- records

    def validate_crc(self) -> bool:
        """True when the stored CRC-32C matches the batch contents."""
        return calc_crc32c(memoryview(self._buffer)[ATTRIBUTES_OFFSET:]) == self._crc

    def _records_data(self) -> bytes:
        if self._check_crc and not self.validate_crc():
            raise CorruptRecordError(
                f"record batch at offset {self._base_offset} failed its CRC-32C check"
            )
        data = memoryview(self._buffer)[HEADER_SIZE:]
        codec = self._attributes & CODEC_MASK
        if codec == CODEC_NONE:
            return bytes(data)
        return decompress(codec, data, max_size=self._max_decompressed_size)

    def records_data(self) -> bytes:
        """The batch's records section, CRC-checked and decompressed (for decoders
        that build their own record objects, e.g. the consumer's).

        Raises:
            CorruptRecordError: CRC mismatch or undecodable compressed data.
            UnsupportedCodecError: the codec's library is not installed.
        """
        return self._records_data()

    def record_tuples(self) -> list[RecordTuple]:
        """Decode every record of the batch (the consumer's fast path).

        Returns:
            ``(offset, timestamp, key, value, headers, size_in_bytes)`` per
            record, in order. Under LogAppendTime every timestamp is the
            batch's max timestamp. Control batches are returned raw.

        Raises:
            CorruptRecordError: CRC mismatch, undecodable compressed data, or
                records that do not match the declared count and lengths.
            UnsupportedCodecError: the codec's library is not installed.
        """
        # No topic, partition or record class: tuples.
        return self.decode_as(None, None, None)

    def decode_as(
        self,
        record: type[Any] | None,
        topic: str | None,
        partition: int | None,
        *,
        untracked: bool = False,
        accelerated: bool = True,
    ) -> list[Any]:
        """Every record of the batch built by ``record``, as :func:`decode_records`
        builds them (``None``: :meth:`record_tuples`' tuples), with the batch's
        timestamp type and leader epoch (``None`` when negative).

        With the C extension, an uncompressed batch is decoded by one call
        (``_cdecode.decode_batch``: header, CRC and records), which matters for
        small batches; anything else, or anything that call does not decode
        exactly as the Python code would, takes the path below, whose errors are
        the ones raised. ``accelerated=False`` skips the C code (tests compare).
        ``untracked``: see ``consumer.record_decode.decode_batch``.

        Raises:
            CorruptRecordError: CRC mismatch, undecodable compressed data, or
                records that do not match the declared count and lengths.
            UnsupportedCodecError: the codec's library is not installed.
        """
        if accelerated and _c_decode_batch is not None:
            crc = crc32c_function() if self._check_crc else None
            out = _c_decode_batch(self._buffer, crc, record, topic, partition, untracked)
            if out is not None:
                return out
        ts_type = self.timestamp_type
        append_time = self._max_timestamp if ts_type == LOG_APPEND_TIME else None
        epoch: int | None = self._leader_epoch if self._leader_epoch >= 0 else None
        args = (self._records_data(), self._records_count, self._base_offset,
                self._first_timestamp, append_time, topic, partition, ts_type, epoch,
                record)  # fmt: skip
        return decode_with(_c_decode_records if accelerated else None, args, untracked)

    def __iter__(self) -> Iterator[DefaultRecord]:
        """Decode the records and yield them as objects (see :meth:`record_tuples`)."""
        cls = ControlRecord if self._attributes & CONTROL_MASK else DefaultRecord
        ts_type = self.timestamp_type
        for offset, timestamp, key, value, headers, size in self.record_tuples():
            yield cls(offset, timestamp, ts_type, key, value, headers, size)

    def __repr__(self) -> str:
        return (
            f"DefaultRecordBatch(base_offset={self._base_offset}, "
            f"records_count={self._records_count}, compression_type={self.compression_type}, "
            f"is_transactional={self.is_transactional}, "
            f"is_control_batch={self.is_control_batch}, producer_id={self._producer_id})"
        )


_NO_HEADERS: tuple[Header, ...] = ()


def _read_headers(data: bytes, pos: int) -> tuple[tuple[Header, ...], int]:
    """Decode ``headersCount`` and the headers at ``data[pos]`` (the rare path)."""
    count, pos = decode_varint(data, pos)
    if count < 0 or count > len(data) - pos:
        raise CorruptRecordError(f"impossible record header count {count}")
    headers: list[Header] = []
    for _ in range(count):
        key_len, pos = decode_varint(data, pos)
        if key_len < 0 or pos + key_len > len(data):
            raise CorruptRecordError(f"impossible record header key length {key_len}")
        try:
            key = data[pos : pos + key_len].decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptRecordError("record header key is not valid UTF-8") from None
        pos += key_len
        value_len, pos = decode_varint(data, pos)
        if value_len < -1 or pos + value_len > len(data):
            raise CorruptRecordError(f"impossible record header value length {value_len}")
        if value_len == -1:
            headers.append((key, None))
        else:
            headers.append((key, data[pos : pos + value_len]))
            pos += value_len
    return tuple(headers), pos


def decode_with(
    c_decode: Callable[..., list[Any] | None] | None, args: tuple[Any, ...], untracked: bool = False
) -> list[Any]:
    """:func:`decode_records` of ``args``, by the C loop ``c_decode`` when given and it
    decodes them (it returns ``None`` for anything it does not decode exactly as the
    Python loop, which then runs and raises)."""
    if c_decode is not None:
        out = c_decode(*args, untracked)
        if out is not None:
            return out
    return decode_records(*args)


def decode_records(
    data: bytes,
    count: int,
    base_offset: int,
    base_ts: int,
    append_time: int | None,
    topic: str | None,
    partition: int | None,
    ts_type: int | None,
    epoch: int | None,
    record: Callable[..., Any] | None,
) -> list[Any]:
    """Decode ``count`` records filling the records section ``data`` exactly: the
    pure-Python loop, and the reference of the C one (``_cdecode.decode_records``,
    which takes the same arguments).

    ``record`` builds each record: ``record(topic, partition, offset, timestamp,
    ts_type, key, value, None, key_size, value_size, headers, epoch)`` (the
    consumer passes ``ConsumerRecord``; ``headers`` a tuple of pairs, the shared
    empty tuple when there are none). ``None``: the record layer's tuples,
    ``(offset, timestamp, key, value, headers list, size_in_bytes)``, and ``topic``,
    ``partition``, ``ts_type`` and ``epoch`` are not used. Under LogAppendTime
    (``append_time`` not ``None``) every timestamp is ``append_time``.

    This is the consumer's innermost loop: varints of one and two bytes (two
    bytes covers deltas and lengths up to 8191, e.g. offsets past 63 or
    100-byte values) are decoded inline; anything longer goes through
    :func:`decode_varint`. A truncated buffer surfaces as IndexError from an
    index past the end, which is turned into CorruptRecordError once, outside
    the loop, instead of bounds checks on every field.

    Raises:
        CorruptRecordError: records that do not match the declared count and lengths.
    """
    out: list[Any] = []
    append = out.append
    zz = ZIGZAG_ONE_BYTE
    slow = decode_varint
    no_headers = _NO_HEADERS
    pos = 0
    try:
        for _ in range(count):
            start = pos
            # length
            b = data[pos]
            if b < 128:
                length = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 128:
                    v = b + (b2 << 7) - 128
                    length = (v >> 1) ^ -(v & 1)
                    pos += 2
                else:
                    length, pos = slow(data, pos)
            end = pos + length
            # attributes (unused, skipped) then timestampDelta
            b = data[pos + 1]
            if b < 128:
                ts_delta = zz[b]
                pos += 2
            else:
                b2 = data[pos + 2]
                if b2 < 128:
                    v = b + (b2 << 7) - 128
                    ts_delta = (v >> 1) ^ -(v & 1)
                    pos += 3
                else:
                    ts_delta, pos = slow(data, pos + 1)
            # offsetDelta
            b = data[pos]
            if b < 128:
                offset_delta = zz[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 128:
                    v = b + (b2 << 7) - 128
                    offset_delta = (v >> 1) ^ -(v & 1)
                    pos += 2
                else:
                    offset_delta, pos = slow(data, pos)
            # key: "b & 0x81 == 0" is a one-byte, non-negative length
            b = data[pos]
            if not b & 0x81:
                pos += 1
                stop = pos + (b >> 1)
                key: bytes | None = data[pos:stop]
                key_size = stop - pos
                pos = stop
            elif b == 1:
                key = None
                key_size = -1
                pos += 1
            else:
                key_size, pos = slow(data, pos)
                if key_size < 0:
                    raise CorruptRecordError(f"impossible record key length {key_size}")
                key = data[pos : pos + key_size]
                pos += key_size
            # value
            b = data[pos]
            if not b & 0x81:
                pos += 1
                stop = pos + (b >> 1)
                value: bytes | None = data[pos:stop]
                value_size = stop - pos
                pos = stop
            elif b == 1:
                value = None
                value_size = -1
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 128 and not b & 1:
                    pos += 2
                    stop = pos + ((b + (b2 << 7) - 128) >> 1)
                else:
                    n, pos = slow(data, pos)
                    if n < 0:
                        raise CorruptRecordError(f"impossible record value length {n}")
                    stop = pos + n
                value = data[pos:stop]
                value_size = stop - pos
                pos = stop
            # headers
            if data[pos]:
                headers, pos = _read_headers(data, pos)
            else:
                headers = no_headers
                pos += 1
            if pos != end:
                raise CorruptRecordError(
                    f"record at offset {base_offset + offset_delta} declares length "
                    f"{length} but its fields end elsewhere"
                )
            ts = base_ts + ts_delta if append_time is None else append_time
            if record is None:
                append((base_offset + offset_delta, ts, key, value, list(headers), pos - start))
            else:
                append(
                    record(
                        topic,
                        partition,
                        base_offset + offset_delta,
                        ts,
                        ts_type,
                        key,
                        value,
                        None,
                        key_size,
                        value_size,
                        headers,
                        epoch,
                    )
                )
    except IndexError:
        raise CorruptRecordError(
            f"record data ends before the {count} records the batch declares"
        ) from None
    if pos != len(data):
        raise CorruptRecordError(
            f"{len(data) - pos} bytes follow the {count} records the batch declares"
        )
    return out
