"""Iteration over the record batches of a Fetch response's ``records`` blob.

Every batch format starts with ``offset int64 | length int32`` and has its magic
byte at offset 16, so the format of each batch is known before parsing it. A
broker may cut the last batch of a Fetch response short (it fills the
response up to the fetch size); that partial trailing batch is skipped, and the
consumer fetches it again from its offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, TypeAlias

from aiokafka.errors import CorruptRecordError
from aiokafka.record.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from aiokafka.record.default_records import HEADER_SIZE as V2_HEADER_SIZE
from aiokafka.record.default_records import DefaultRecordBatch
from aiokafka.record.legacy_records import MIN_MESSAGE_SIZE, LegacyRecordBatch
from aiokafka.record.v2_layout import LOG_HEADER_STRUCT, LOG_OVERHEAD, MAGIC_OFFSET

__all__ = ["MemoryRecords", "RecordBatch"]

RecordBatch: TypeAlias = DefaultRecordBatch | LegacyRecordBatch

# Smallest valid batch per magic, counting the 12-byte log header.
_MIN_SIZE: Final = {
    0: LOG_OVERHEAD + MIN_MESSAGE_SIZE[0],
    1: LOG_OVERHEAD + MIN_MESSAGE_SIZE[1],
    2: V2_HEADER_SIZE,
}


class MemoryRecords:
    """The batches in a ``records`` blob, read lazily one at a time.

    Batches are views into ``data`` (no copy); their records are decoded only
    when a batch is iterated.

    Args:
        data: the blob; None (a null ``records`` field) reads as empty.
        check_crc: passed to each batch (verify checksums before decoding).
        max_decompressed_size: passed to each batch (decompression bomb guard).
    """

    __slots__ = ("_check_crc", "_data", "_max_decompressed_size", "_next", "_pos")

    def __init__(
        self,
        data: bytes | bytearray | memoryview | None,
        *,
        check_crc: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        # A memoryview so each batch is a zero-copy slice of the response.
        self._data = memoryview(b"" if data is None else data).cast("B")
        self._pos = 0
        self._check_crc = check_crc
        self._max_decompressed_size = max_decompressed_size
        self._next: RecordBatch | None = None

    def size_in_bytes(self) -> int:
        """Size of the whole blob."""
        return len(self._data)

    def valid_bytes(self) -> int:
        """Bytes consumed by the batches returned so far."""
        return self._pos if self._next is None else self._pos - self._next.size_in_bytes

    def _read_next(self) -> RecordBatch | None:
        data = self._data
        pos = self._pos
        remaining = len(data) - pos
        if remaining < MAGIC_OFFSET + 1:
            return None  # nothing, or a partial trailing batch header
        _, length = LOG_HEADER_STRUCT.unpack_from(data, pos)
        magic = data[pos + MAGIC_OFFSET]
        if magic not in _MIN_SIZE:
            raise CorruptRecordError(f"unknown record batch magic {magic} at byte {pos}")
        total = LOG_OVERHEAD + length
        if total < _MIN_SIZE[magic]:
            raise CorruptRecordError(f"impossible record batch length {length} at byte {pos}")
        if total > remaining:
            return None  # partial trailing batch: the broker cut it
        view = data[pos : pos + total]
        self._pos = pos + total
        if magic == 2:
            return DefaultRecordBatch(
                view,
                check_crc=self._check_crc,
                max_decompressed_size=self._max_decompressed_size,
            )
        return LegacyRecordBatch(
            view, check_crc=self._check_crc, max_decompressed_size=self._max_decompressed_size
        )

    def has_next(self) -> bool:
        """True if another complete batch follows.

        Raises:
            CorruptRecordError: the next batch's header is impossible.
        """
        if self._next is None:
            self._next = self._read_next()
        return self._next is not None

    def next_batch(self) -> RecordBatch | None:
        """The next complete batch, or None at the end (or a partial trailing batch).

        Raises:
            CorruptRecordError: the next batch's header is impossible.
        """
        batch = self._next
        if batch is None:
            return self._read_next()
        self._next = None
        return batch

    def __iter__(self) -> Iterator[RecordBatch]:
        while (batch := self.next_batch()) is not None:
            yield batch
