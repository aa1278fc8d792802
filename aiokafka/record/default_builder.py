"""Builder of magic v2 record batches, designed for the producer's hot path.

Records are encoded straight into one ``bytearray`` behind a reserved 61-byte
header. :meth:`DefaultRecordBatchBuilder.build` compresses the records (when a
codec is set), fills in the header and the CRC-32C. Producer id, epoch and base
sequence are set *before* building (:meth:`~DefaultRecordBatchBuilder.set_producer_state`),
never while encoding, so building twice gives the same bytes and a retry with a
new sequence only has to rebuild the header.

The per-record encoding has two implementations giving the same bytes and errors:
the optional C extension ``aiokafka.record._cbuilder`` (built by ``pip install``
when a compiler is there) and the pure-Python code of :meth:`~DefaultRecordBatchBuilder.add`,
used when the extension is missing or ``AIOKAFKA_NO_EXTENSIONS=1`` is set (read once,
at import). The extension also has the whole of
:meth:`~DefaultRecordBatchBuilder.append_next` (encoding, counters, metadata) in one
call, for ``create_batch()``: :meth:`~DefaultRecordBatchBuilder.appender`.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NamedTuple

from aiokafka._extensions import load_extension
from aiokafka._readers import slot_reader
from aiokafka.errors import IllegalStateError
from aiokafka.record.compression import (
    CODEC_NONE,
    CODEC_ZSTD,
    check_codec,
    compress,
)
from aiokafka.record.util import calc_crc32c, encode_varint, size_of_varint
from aiokafka.record.v2_layout import (
    ATTRIBUTES_OFFSET,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CONTROL_MASK,
    CRC_OFFSET,
    HEADER_SIZE,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    check_producer_state,
    marker_key_value,
)

__all__ = [
    "DefaultRecordBatchBuilder",
    "DefaultRecordMetadata",
    "build_control_batch",
]

_CRC_STRUCT: Final = struct.Struct(">I")

# Encoded varints of -8192..8191 (one and two bytes): offset deltas, lengths and
# timestamp deltas of a typical batch fall in this range. A tuple indexed by
# ``value - _CACHED_MIN``, and its non-negative half indexed by the value itself
# (lengths and offset deltas): the per-record path does a bounds check and a
# subscript instead of encoding (or a dict lookup, a method call).
_CACHED_MIN: Final = -8192
_CACHED_MAX: Final = 8191


# Filled by _ensure_tables() when the first builder is made (only the pure-Python
# add() reads them, and building 16k objects cost ~3 ms of every ``import aiokafka``).
_SIGNED: tuple[bytes, ...] = ()
_UNSIGNED: tuple[bytes, ...] = ()


def _ensure_tables() -> None:
    global _SIGNED, _UNSIGNED
    if _SIGNED:
        return
    # From the unsigned encodings of 0..16383 (zigzag maps -8192..8191 onto exactly
    # those) by slicing, ~3x faster than encoding each value.
    enc = [bytes((u,)) for u in range(128)]
    enc += [bytes(((u & 0x7F) | 0x80, u >> 7)) for u in range(128, 16384)]
    # zigzag(v) = -2v - 1 for v < 0 (16383, 16381, ..., 1 for -8192..-1), 2v for v >= 0
    signed = tuple(enc[16383:0:-2] + enc[0::2])
    _UNSIGNED = signed[-_CACHED_MIN:]
    _SIGNED = signed


_time_ns = time.time_ns
_new_tuple = tuple.__new__
_new_object = object.__new__

# Upper bounds used by the size estimators: a record length varint of a
# record below 256 MiB takes at most 5 bytes, a timestamp delta at most 10,
# an offset delta at most 5.
_MAX_LENGTH_VARINT: Final = 5
_MAX_TIMESTAMP_DELTA_VARINT: Final = 10
_MAX_OFFSET_DELTA_VARINT: Final = 5

_MAX_OFFSET_DELTA: Final = (1 << 31) - 1  # lastOffsetDelta is an int32
_MIN_INT64: Final = -(1 << 63)
_MAX_INT64: Final = (1 << 63) - 1


_cbuilder = load_extension("aiokafka.record._cbuilder")
# None: the pure-Python path. Tests set it to None to compare both paths.
_c_append_record: Callable[[bytearray, int, int, int, object, object, object], bool] | None = (
    None if _cbuilder is None else _cbuilder.append_record
)
_c_append_values: Callable[[bytearray, int, int, int, list[Any], int], int] | None = (
    None if _cbuilder is None else _cbuilder.append_values
)


def _varint(value: int) -> bytes:
    if _CACHED_MIN <= value <= _CACHED_MAX:
        return _SIGNED[value - _CACHED_MIN]
    return encode_varint(value)


def _as_bytes(data: object, name: str) -> bytes:
    """Accept bytes-like ``data`` for a record field, or fail without side effects."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(
        f"record {name} must be bytes, bytearray, memoryview or None, not {type(data).__name__}"
    )


def _encode_headers(headers: Iterable[tuple[str, bytes | None]]) -> bytes:
    """Encode ``headersCount`` and the headers."""
    parts: list[bytes] = []
    count = 0
    for item in headers:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(
                f"record headers must be (str, bytes | None) pairs, got {item!r}"
            ) from None
        if not isinstance(key, str):
            raise TypeError(f"record header key must be str, not {type(key).__name__}")
        encoded_key = key.encode("utf-8")
        parts.append(_varint(len(encoded_key)))
        parts.append(encoded_key)
        if value is None:
            parts.append(_varint(-1))
        else:
            if not isinstance(value, bytes):
                value = _as_bytes(value, "header value")
            parts.append(_varint(len(value)))
            parts.append(value)
        count += 1
    return _varint(count) + b"".join(parts)


class DefaultRecordMetadata(NamedTuple):
    """What :meth:`DefaultRecordBatchBuilder.append` reports for an accepted record:
    ``offset``, ``size``, ``timestamp`` (and ``crc``, always ``None``).

    A named tuple ``(offset, size, timestamp)``:
    :meth:`~DefaultRecordBatchBuilder.append` makes one per record of
    ``create_batch()``, and a tuple is made without a Python ``__init__`` call.

    Attributes:
        offset: Offset of the record relative to the batch's base offset.
        size: Encoded size of the record in bytes.
        timestamp: The record's timestamp (ms).
    """

    offset: int
    size: int
    timestamp: int

    @property
    def crc(self) -> None:
        """v2 records have no per-record checksum."""
        return None


_Data = bytes | bytearray | memoryview | None
_Headers = Iterable[tuple[str, bytes | None]] | None
#: What :meth:`DefaultRecordBatchBuilder.appender` returns: ``append_next(timestamp,
#: key, value, headers)``.
Appender = Callable[[int | None, _Data, _Data, _Headers], DefaultRecordMetadata | None]
#: What :meth:`DefaultRecordBatchBuilder.adder` returns: ``add(timestamp, key, value,
#: headers)``, the record's timestamp or None (the batch is full).
Adder = Callable[[int | None, _Data, _Data, _Headers], int | None]


class DefaultRecordBatchBuilder:
    """Accumulates records into one magic v2 batch.

    Args:
        magic: must be 2 (legacy formats: ``LegacyRecordBatchBuilder``).
        compression_type: codec id (``aiokafka.record.compression.CODEC_*``).
        is_transactional: set the transactional attribute bit.
        producer_id: producer id, -1 when not idempotent.
        producer_epoch: producer epoch, -1 when not idempotent.
        base_sequence: sequence of the first record, -1 when not idempotent.
        batch_size: soft limit in bytes on the uncompressed batch; a record
            that would cross it is refused unless the batch is empty.
        compression_level: codec-specific level, None for the default.
        base_offset: base offset written in the header (producers use 0;
            the broker assigns real offsets).
        timestamp_type: 0 = CreateTime, 1 = LogAppendTime (for tests; brokers
            set it).

    Raises:
        ValueError: invalid argument.
        UnsupportedCodecError: the codec is unknown or its library is missing.
    """

    __slots__ = (
        "_attributes",
        "_base_offset",
        "_base_sequence",
        "_batch_size",
        "_buffer",
        "_built",
        "_compressed",
        "_compression_level",
        "_compression_type",
        "_count",
        "_first_timestamp",
        "_last_offset",
        "_max_timestamp",
        "_producer_epoch",
        "_producer_id",
    )

    def __init__(
        self,
        magic: int = 2,
        compression_type: int = CODEC_NONE,
        is_transactional: bool = False,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = -1,
        base_sequence: int = NO_SEQUENCE,
        batch_size: int = 16384,
        *,
        compression_level: int | None = None,
        base_offset: int = 0,
        timestamp_type: int = 0,
    ) -> None:
        if magic != 2:
            raise ValueError(f"magic must be 2 for DefaultRecordBatchBuilder, got {magic}")
        if (
            not isinstance(compression_type, int)
            or not CODEC_NONE <= compression_type <= CODEC_ZSTD
        ):
            raise ValueError(f"compression_type must be a codec id 0..4, got {compression_type!r}")
        check_codec(compression_type)
        if batch_size < 0:
            raise ValueError(f"batch_size must be >= 0, got {batch_size}")
        if timestamp_type not in (0, 1):
            raise ValueError(f"timestamp_type must be 0 or 1, got {timestamp_type}")
        if not -(1 << 63) <= base_offset < (1 << 63):
            raise ValueError(f"base_offset must fit in int64, got {base_offset}")
        check_producer_state(producer_id, producer_epoch, base_sequence)
        self._compression_type = compression_type
        self._compression_level = compression_level
        self._attributes = compression_type
        if is_transactional:
            self._attributes |= TRANSACTIONAL_MASK
        if timestamp_type:
            self._attributes |= TIMESTAMP_TYPE_MASK
        self._base_offset = base_offset
        self._batch_size = batch_size
        _ensure_tables()  # for the pure-Python add(); a no-op after the first builder
        self._set_empty()
        self._producer_id = producer_id
        self._producer_epoch = producer_epoch
        self._base_sequence = base_sequence

    def empty_like(self, batch_size: int) -> DefaultRecordBatchBuilder:
        """A new, empty builder with this one's codec, compression level, attributes
        (transactional bit, timestamp type; never the control bit) and base offset,
        no producer state, and a ``batch_size`` (>= 0) limit.

        What a producer makes for every batch: this builder's constructor validated
        all of it once, so the new one skips the checks (about a third of the Python
        work of starting a batch on a lone ``send_and_wait``'s path).
        """
        new: DefaultRecordBatchBuilder = _new_object(type(self))
        new._compression_type = self._compression_type
        new._compression_level = self._compression_level
        new._attributes = self._attributes & ~CONTROL_MASK
        new._base_offset = self._base_offset
        new._batch_size = batch_size
        new._set_empty()
        new._producer_id = NO_PRODUCER_ID
        new._producer_epoch = -1
        new._base_sequence = NO_SEQUENCE
        return new

    def _set_empty(self) -> None:
        # No records yet: the state the constructor and empty_like() start from.
        self._buffer = bytearray(HEADER_SIZE)
        self._count = 0
        self._first_timestamp = -1
        self._max_timestamp = -1
        self._last_offset = -1
        self._compressed: bytes | None = None
        self._built = False

    def _mark_control(self) -> None:
        self._attributes |= CONTROL_MASK

    # ----------------------------------------------------------------- producer state

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        """Set the idempotence fields written by the next :meth:`build`.

        Raises:
            ValueError: a value does not fit its header field.
        """
        check_producer_state(producer_id, producer_epoch, base_sequence)
        self._producer_id = producer_id
        self._producer_epoch = producer_epoch
        self._base_sequence = base_sequence

    producer_id = slot_reader("_producer_id", int, "Producer id the header will carry.")

    producer_epoch = slot_reader("_producer_epoch", int, "Producer epoch the header will carry.")

    base_sequence = slot_reader("_base_sequence", int, "Base sequence the header will carry.")

    @property
    def is_transactional(self) -> bool:
        """Whether the transactional bit is set."""
        return bool(self._attributes & TRANSACTIONAL_MASK)

    compression_type = slot_reader("_compression_type", int, "Codec id.")

    # The producer reads it a few times per batch (a C getter: see slot_reader).
    record_count = slot_reader("_count", int, "Number of records appended so far.")

    @property
    def size_limit(self) -> int:
        """Bytes (uncompressed, header included) past which :meth:`add` and
        :meth:`append` refuse a record; the first record always fits. The producer
        raises it while a batch fills (it reserves memory step by step)."""
        return self._batch_size

    @size_limit.setter
    def size_limit(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"size_limit must be >= 0, got {limit}")
        self._batch_size = limit

    # ------------------------------------------------------------------------ append

    def append(
        self,
        offset: int,
        timestamp: int | None,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> DefaultRecordMetadata | None:
        """Append a record, or refuse it when the batch is full.

        Args:
            offset: offset relative to the batch start; strictly increasing
                (normally 0, 1, 2, ...).
            timestamp: ms since the epoch; None means now.
            key: key bytes or None.
            value: value bytes or None.
            headers: ``(str, bytes | None)`` pairs.

        Returns:
            Metadata of the appended record, or None if it would push the batch
            past ``batch_size`` (the first record is always accepted).

        Raises:
            TypeError: a field has the wrong type (nothing is appended).
            ValueError: offset not increasing.
            IllegalStateError: the batch was already built.
        """
        if self._built:
            raise IllegalStateError("cannot append to a record batch after build()")
        if not self._last_offset < offset <= _MAX_OFFSET_DELTA:
            raise ValueError(
                f"offset must increase and fit in int32: got {offset} after {self._last_offset}"
            )
        if timestamp is not None and not _MIN_INT64 <= timestamp <= _MAX_INT64:
            raise ValueError(f"timestamp must fit in int64, got {timestamp}")
        buffer = self._buffer
        before = len(buffer)
        appended = self.add(timestamp, key, value, headers, offset)
        if appended is None:
            return None
        return _new_tuple(DefaultRecordMetadata, (offset, len(buffer) - before, appended))

    def append_next(
        self,
        timestamp: int | None,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> DefaultRecordMetadata | None:
        """:meth:`append` at the next offset (:attr:`record_count`), for callers that
        checked ``timestamp`` (int64) already: ``create_batch()``'s per-record path.

        Returns:
            Metadata of the appended record, or None if the batch is full.

        Raises:
            TypeError: a field has the wrong type (nothing is appended).
            IllegalStateError: the batch was already built.
        """
        buffer = self._buffer
        before = len(buffer)
        appended = self.add(timestamp, key, value, headers)
        if appended is None:
            return None
        return _new_tuple(DefaultRecordMetadata, (self._count - 1, len(buffer) - before, appended))

    def appender(self) -> Appender:
        """:meth:`append_next` of this builder, for a caller that appends many records:
        the C one (``_cbuilder.c``) when the extension is built. Same arguments,
        results and errors (it hands every record it does not handle itself, e.g.
        one with headers, to :meth:`append_next`)."""
        if _c_append_next is None:
            return self.append_next
        return _c_append_next.__get__(self)  # type: ignore[no-any-return]

    def adder(self) -> Adder:
        """:meth:`add` of this builder for the next offset, for a caller that adds many
        records (the producer's batches): the C one (``_cbuilder.c``) when the
        extension is built. Same arguments, results and errors (it hands every record
        it does not handle itself, e.g. one with headers, to :meth:`add`)."""
        if _c_add is None:
            return self.add
        return _c_add.__get__(self)  # type: ignore[no-any-return]

    def add(
        self,
        timestamp: int | None,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
        offset: int | None = None,
    ) -> int | None:
        """Append a record at the next offset (:attr:`record_count`): the producer's
        per-record path, which needs no metadata object. A ``timestamp`` must fit
        in int64 (unchecked here; :meth:`append` checks it).

        Args:
            timestamp: ms since the epoch; None means now.
            key: key bytes or None.
            value: value bytes or None.
            headers: ``(str, bytes | None)`` pairs.
            offset: for :meth:`append`, which checked it: an offset greater than
                the last one, at most 2**31 - 1, instead of the next.

        Returns:
            The record's timestamp, or None if the batch is full (the first record
            always fits).

        Raises:
            TypeError: a field has the wrong type (nothing is appended).
            IllegalStateError: the batch was already built.
        """
        if self._built:
            raise IllegalStateError("cannot append to a record batch after build()")
        if timestamp is None:
            timestamp = _time_ns() // 1_000_000
        count = self._count
        if offset is None:
            offset = count
        if _c_append_record is not None:
            # The same encoding in C (_cbuilder.c): limit -1 lets the first record in.
            if count:
                if not _c_append_record(
                    self._buffer,
                    self._batch_size,
                    offset,
                    timestamp - self._first_timestamp,
                    key,
                    value,
                    headers,
                ):
                    return None
            else:
                _c_append_record(self._buffer, -1, offset, 0, key, value, headers)
        else:
            # Varints of small values come from the tables (see _UNSIGNED): each lookup
            # below is a bounds check and a subscript, this runs once per record.
            if key is None:
                key = b""
                key_len = b"\x01"  # varint(-1)
            else:
                if type(key) is not bytes:
                    key = _as_bytes(key, "key")
                n = len(key)
                key_len = _UNSIGNED[n] if n <= _CACHED_MAX else encode_varint(n)
            if value is None:
                value = b""
                value_len = b"\x01"
            else:
                if type(value) is not bytes:
                    value = _as_bytes(value, "value")
                n = len(value)
                value_len = _UNSIGNED[n] if n <= _CACHED_MAX else encode_varint(n)
            if count:
                delta = timestamp - self._first_timestamp
                ts_bytes = (
                    _SIGNED[delta - _CACHED_MIN]
                    if _CACHED_MIN <= delta <= _CACHED_MAX
                    else encode_varint(delta)
                )
            else:
                ts_bytes = b"\x00"
            body = b"".join(
                (
                    b"\x00",
                    ts_bytes,
                    _UNSIGNED[offset] if offset <= _CACHED_MAX else encode_varint(offset),
                    key_len,
                    key,
                    value_len,
                    value,
                    b"\x00" if not headers else _encode_headers(headers),
                )
            )
            n = len(body)
            length = _UNSIGNED[n] if n <= _CACHED_MAX else encode_varint(n)
            buffer = self._buffer
            if count and len(buffer) + len(length) + n > self._batch_size:
                return None
            buffer += length
            buffer += body
        if not count:
            self._first_timestamp = self._max_timestamp = timestamp
        elif timestamp > self._max_timestamp:
            self._max_timestamp = timestamp
        self._count = count + 1
        self._last_offset = offset
        # (No need to drop self._compressed: nothing can be appended after build().)
        return timestamp

    def add_values(
        self,
        values: Sequence[bytes | bytearray | memoryview | None],
        start: int = 0,
        timestamp: int | None = None,
    ) -> int:
        """Append ``values[start:]`` as records with no key and no headers, at the next
        offsets and all with one ``timestamp`` (None: now), until the batch is full.

        A columnar writer's path (the Spark data source): one call for a run of
        records, where :meth:`add` is a call per record. With the C extension a
        list of bytes and None is encoded in one pass, without a metadata object or
        a clock reading per record.

        Returns:
            The index of the first value not appended (``len(values)``: all were).

        Raises:
            TypeError: a value is not bytes-like (those before it are appended).
            IllegalStateError: the batch was already built.
        """
        if self._built:
            raise IllegalStateError("cannot append to a record batch after build()")
        if timestamp is None:
            timestamp = _time_ns() // 1_000_000
        end, i = len(values), start
        while i < end:
            count = self._count
            if _c_append_values is not None and type(values) is list:
                first = self._first_timestamp if count else timestamp
                done = _c_append_values(
                    self._buffer, self._batch_size, count, timestamp - first, values, i
                )
                if done > i:
                    if not count:
                        self._first_timestamp = self._max_timestamp = timestamp
                    elif timestamp > self._max_timestamp:
                        self._max_timestamp = timestamp
                    self._count = count + done - i
                    self._last_offset = self._count - 1
                    i = done
                    if i == end:
                        break
                value = values[i]
                if value is None or type(value) is bytes:
                    return i  # the batch is full
            # Without the C path, or a value it leaves to Python (bytearray, ...).
            if self.add(timestamp, None, values[i]) is None:
                return i
            i += 1
        return i

    # ------------------------------------------------------------------------- sizes

    def size_in_bytes(self) -> int:
        """Current size of the batch before compression, header included."""
        return len(self._buffer)

    @staticmethod
    def size_of(
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> int:
        """Upper bound of one record's encoded size (worst-case deltas)."""
        # A length below 64 is a one-byte varint, below 8192 a two-byte one: no call
        # for the usual record.
        if key is None:
            size = 1
        else:
            key_size = len(key)
            size = key_size + (
                1 if key_size < 64 else 2 if key_size < 8192 else size_of_varint(key_size)
            )
        if value is None:
            size += 1
        else:
            value_size = len(value)
            size += value_size + (
                1 if value_size < 64 else 2 if value_size < 8192 else size_of_varint(value_size)
            )
        size += 1 + _MAX_TIMESTAMP_DELTA_VARINT + _MAX_OFFSET_DELTA_VARINT  # + attributes
        if headers:
            header_list = list(headers)
            size += size_of_varint(len(header_list))
            for header_key, header_value in header_list:
                encoded_key = header_key.encode("utf-8")
                size += size_of_varint(len(encoded_key)) + len(encoded_key)
                if header_value is None:
                    size += 1
                else:
                    size += size_of_varint(len(header_value)) + len(header_value)
        else:
            size += 1
        return _MAX_LENGTH_VARINT + size

    @classmethod
    def estimate_size_in_bytes(
        cls,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> int:
        """Upper bound of the size of a batch holding only this record."""
        return HEADER_SIZE + cls.size_of(key, value, headers)

    # ------------------------------------------------------------------------- build

    def build(self) -> bytearray:
        """Finish the batch: compress, write the header and the CRC.

        May be called again (e.g. after :meth:`set_producer_state` for a
        retry); the compressed records are reused. No records can be appended
        afterwards. Without compression the returned buffer is the builder's
        own (no copy) and is rewritten by the next ``build()``.

        Returns:
            The encoded batch.
        """
        self._built = True
        if self._compression_type == CODEC_NONE:
            out = self._buffer
        else:
            if self._compressed is None:
                self._compressed = compress(
                    self._compression_type,
                    memoryview(self._buffer)[HEADER_SIZE:],
                    self._compression_level,
                )
            out = bytearray(HEADER_SIZE)
            out += self._compressed
        HEADER_STRUCT.pack_into(
            out,
            0,
            self._base_offset,
            len(out) - LOG_OVERHEAD,
            -1,  # partitionLeaderEpoch: set by the broker
            2,
            0,  # crc, written below
            self._attributes,
            max(self._last_offset, 0),
            self._first_timestamp,
            self._max_timestamp,
            self._producer_id,
            self._producer_epoch,
            self._base_sequence,
            self._count,
        )
        _CRC_STRUCT.pack_into(out, CRC_OFFSET, calc_crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
        return out

    def __repr__(self) -> str:
        return (
            f"DefaultRecordBatchBuilder(records={self._count}, size={len(self._buffer)}, "
            f"compression_type={self._compression_type})"
        )


#: :meth:`DefaultRecordBatchBuilder.append_next` in C, a method descriptor (bound by
#: :meth:`~DefaultRecordBatchBuilder.appender`), or None: the pure-Python path. Tests
#: set it to None to compare both paths.
_c_append_next: Any = (
    None
    if _cbuilder is None
    else _cbuilder.bind_builder(
        DefaultRecordBatchBuilder,
        DefaultRecordMetadata,
        DefaultRecordBatchBuilder.append_next,
    )
)
#: :meth:`DefaultRecordBatchBuilder.add` in C for the next offset, a method descriptor
#: (bound by :meth:`~DefaultRecordBatchBuilder.adder`), or None: the pure-Python path.
_c_add: Any = None if _cbuilder is None else _cbuilder.bind_adder(DefaultRecordBatchBuilder.add)


def build_control_batch(
    control_type: int,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int | None = None,
    base_offset: int = 0,
) -> bytearray:
    """Build a transaction marker batch (what the coordinator writes on commit/abort).

    Args:
        control_type: ``CONTROL_ABORT`` (0) or ``CONTROL_COMMIT`` (1).
        producer_id: transactional producer id.
        producer_epoch: its epoch.
        coordinator_epoch: epoch of the transaction coordinator.
        timestamp: marker timestamp (ms), None for now.
        base_offset: offset of the marker.

    Raises:
        ValueError: unknown control type.
    """
    if control_type not in (CONTROL_ABORT, CONTROL_COMMIT):
        raise ValueError(f"control_type must be 0 (ABORT) or 1 (COMMIT), got {control_type}")
    builder = DefaultRecordBatchBuilder(
        is_transactional=True,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_offset=base_offset,
    )
    builder._mark_control()
    key, value = marker_key_value(control_type, coordinator_epoch)
    builder.append(0, timestamp, key, value)
    return builder.build()
