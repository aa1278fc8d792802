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

The loop is the record layer's :func:`~aiokafka.record.default_records.decode_records`
(one decoder for both record shapes), told to build each ``ConsumerRecord`` in place.

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
from aiokafka.record.default_records import DefaultRecordBatch, decode_records
from aiokafka.record.util import crc32c_function
from aiokafka.structs import ConsumerRecord

__all__ = [
    "SpanDecoder",
    "decode_batch",
    "decode_records_py",
    "deserialize",
    "span_decoder",
]

_cdecode = load_extension("aiokafka.record._cdecode")
# None: the pure-Python loop. Tests set it to None to compare both paths.
_c_decode_records: Callable[..., list[Any] | None] | None = (
    None if _cdecode is None else _cdecode.decode_records
)
_c_deserialize: Callable[..., bool] | None = None if _cdecode is None else _cdecode.deserialize
_c_decode_batch: Callable[..., list[Any] | None] | None = (
    None if _cdecode is None else _cdecode.decode_batch
)


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
    return batch.decode_as(
        ConsumerRecord, topic, partition, untracked=untracked,
        accelerated=_c_decode_records is not None,
    )  # fmt: skip


#: ``(decode, crc32c)`` of :func:`span_decoder`.
SpanDecoder = tuple[Callable[..., "list[Any] | None"], Any]


def span_decoder(check_crc: bool) -> SpanDecoder | None:
    """The C decoder of a whole uncompressed v2 batch and its checksum argument:
    ``decode(batch, crc32c, ConsumerRecord, topic, partition, True)`` returns the
    records of the batch whose bytes are ``batch`` (untracked, as :func:`decode_batch`
    with ``untracked=True``), or ``None`` when it hands the batch back (corrupt,
    unusual): then decode it with :func:`decode_batch`, which returns the records or
    raises the error. Looked up once per fetched chunk, so that batches of a few
    records cost no Python call of ours. ``None`` when there is no C decoder."""
    c_decode = _c_decode_batch
    if c_decode is None or _c_decode_records is None:
        return None
    return c_decode, crc32c_function() if check_crc else None


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
    (the reference the C decoder is compared with): the record layer's
    :func:`~aiokafka.record.default_records.decode_records` building ``ConsumerRecord``s.

    Raises:
        CorruptRecordError: records that do not match the declared count and lengths.
    """
    return decode_records(
        data, count, base_offset, base_ts, append_time, topic, partition, ts_type, epoch,
        ConsumerRecord,
    )  # fmt: skip
