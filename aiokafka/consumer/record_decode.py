"""Decode a v2 record batch straight into :class:`~aiokafka.structs.ConsumerRecord`.

No I/O and no asyncio here. The record layer's
:meth:`~aiokafka.record.default_records.DefaultRecordBatch.record_tuples` returns one
tuple and one (usually empty) headers list per record; the consumer then builds a
``ConsumerRecord`` from each tuple. All three are container objects the cyclic garbage
collector tracks, and the application keeps the records of a whole batch (often
10,000) alive at once, so the collector runs generation-1 and full collections over
them again and again while the batch is decoded: measured as ~40% of the decode cost.
The library must not switch the collector off to avoid that (it is process-wide and
the application's decision), so this module allocates less instead: it decodes each
record directly into its ``ConsumerRecord`` (no intermediate tuple) and gives records
without headers the shared empty tuple, leaving one tracked object per record.

The loop is the record layer's ``_decode_records`` with the record built in place;
``tests/unit/test_consumer_records.py`` checks the two agree record by record.

The optional C extension ``aiokafka.record._cdecode`` does the same loop in C (about
4x faster per record). It returns ``None`` for anything it does not decode exactly as
this code would (corrupt data included), and this loop then runs: the Python code is
the fallback and the reference, and the errors are always its errors. It can also leave
the records untracked by the collector (see :func:`decode_batch`).
``tests/unit/test_record_cdecode.py`` compares the two record for record.
``AIOKAFKA_NO_EXTENSIONS=1`` (read once, at import) forces the Python loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiokafka._extensions import load_extension
from aiokafka.errors import CorruptRecordError
from aiokafka.record.default_records import DefaultRecordBatch
from aiokafka.record.util import ZIGZAG_ONE_BYTE, decode_varint
from aiokafka.structs import ConsumerRecord

__all__ = ["decode_batch", "decode_records_py", "deserialize"]

_NO_HEADERS: tuple[tuple[str, bytes | None], ...] = ()

_cdecode = load_extension("aiokafka.record._cdecode")
# None: the pure-Python loop. Tests set it to None to compare both paths.
_c_decode_records: Callable[..., list[Any] | None] | None = (
    None if _cdecode is None else _cdecode.decode_records
)
_c_deserialize: Callable[..., bool] | None = None if _cdecode is None else _cdecode.deserialize


def _read_headers(data: bytes, pos: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    """``headersCount`` and the headers at ``data[pos]`` (the rare path)."""
    count, pos = decode_varint(data, pos)
    if count < 0 or count > len(data) - pos:
        raise CorruptRecordError(f"impossible record header count {count}")
    headers: list[tuple[str, bytes | None]] = []
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


def decode_batch(
    batch: DefaultRecordBatch, topic: str, partition: int, *, untracked: bool = False
) -> list[ConsumerRecord[Any, Any]]:
    """Every record of ``batch`` as a ``ConsumerRecord`` (serialized key and value).

    ``headers`` is a tuple of ``(key, value)`` pairs (the shared empty tuple when the
    record has none); ``leader_epoch`` is the batch's (``None`` if unknown); under
    LogAppendTime every timestamp is the batch's max timestamp.

    ``untracked=True`` lets the C loop leave the records out of the cyclic garbage
    collector (the Python loop ignores it). As built, a record holds only str, int,
    bytes, None and tuples of those, so it cannot be in a reference cycle, and the
    collector's repeated passes over the records of large batches that the application
    keeps alive cost more than decoding them. The caller then stores deserialized keys
    and values only through :func:`deserialize`, which tracks a record again when it
    gets an object that could be part of a cycle. The application could still assign a
    field such an object itself, and a cycle through that record would not be
    collected (plain reference counting still frees everything else).

    Raises:
        CorruptRecordError: CRC mismatch, undecodable compressed data, or records that
            do not match the declared count and lengths.
        aiokafka.errors.UnsupportedCodecError: the codec's library is not installed.
    """
    data = batch.records_data()
    count = batch.records_count
    base_offset = batch.base_offset
    base_ts = batch.first_timestamp
    ts_type = batch.timestamp_type
    append_time = batch.max_timestamp if ts_type else None
    epoch: int | None = batch.partition_leader_epoch
    if epoch is not None and epoch < 0:
        epoch = None
    c_decode = _c_decode_records
    if c_decode is not None:
        out = c_decode(
            data,
            count,
            base_offset,
            base_ts,
            append_time,
            topic,
            partition,
            ts_type,
            epoch,
            ConsumerRecord,
            untracked,
        )
        if out is not None:
            return out
    return decode_records_py(
        data, count, base_offset, base_ts, append_time, topic, partition, ts_type, epoch
    )


def deserialize(
    records: list[ConsumerRecord[Any, Any]],
    key_deserializer: Callable[[bytes], object] | None,
    value_deserializer: Callable[[bytes], object] | None,
) -> None:
    """Replace every key, then every value, that is not ``None`` by its deserialized
    form (in that order, so the first failing call is the same on both paths).

    The C version also tracks a record left untracked by :func:`decode_batch` once it
    holds an object of a collectable type (anything but str, bytes, numbers, None...).

    Raises:
        Exception: whatever a deserializer raises.
    """
    c_deserialize = _c_deserialize
    if c_deserialize is not None and c_deserialize(
        records, key_deserializer, value_deserializer, ConsumerRecord
    ):
        return
    # The Python loops: records made by the Python decoder are always tracked.
    if key_deserializer is not None:
        for r in records:
            if r.key is not None:
                r.key = key_deserializer(r.key)
    if value_deserializer is not None:
        for r in records:
            if r.value is not None:
                r.value = value_deserializer(r.value)


def decode_records_py(
    data: bytes,
    count: int,
    base_offset: int,
    base_ts: int,
    append_time: int | None,
    topic: str,
    partition: int,
    ts_type: int,
    epoch: int | None,
) -> list[ConsumerRecord[Any, Any]]:
    """The pure-Python loop of :func:`decode_batch` over a records section ``data``
    (the reference the C decoder is compared with).

    Raises:
        CorruptRecordError: records that do not match the declared count and lengths.
    """
    # Headers may hold None values (the record format allows it); the struct's
    # annotation is narrower, hence Any.
    cr: Any = ConsumerRecord
    out: list[ConsumerRecord[Any, Any]] = []
    append = out.append
    zz = ZIGZAG_ONE_BYTE
    slow = decode_varint
    no_headers = _NO_HEADERS
    pos = 0
    try:
        for _ in range(count):
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
            append(
                cr(
                    topic,
                    partition,
                    base_offset + offset_delta,
                    base_ts + ts_delta if append_time is None else append_time,
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
