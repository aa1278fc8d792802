"""What the fetcher does when a partition's data holds no complete batch at its position.

No I/O and no asyncio. A broker fills a Fetch response up to the request's limits
(``partition_max_bytes`` per partition, ``max_bytes`` per request) and may cut the last
batch short; the consumer drops that partial tail and fetches it again. Whether the
*first* batch at the fetch position can be cut depends on the version:

- Fetch v0-v2 (before KIP-74) treat the limits as hard: a batch larger than the
  partition's limit comes back cut, every time. The only way forward is a larger
  limit for that partition, which :class:`PartialBatches` grows (to the size the
  batch declares, else doubled) up to :attr:`PartialBatches.cap`.
- From v3 the broker returns the first batch whole even past the limits when it is
  the first data of the response, and otherwise sends no data for that partition
  (an incomplete first batch is replaced by an empty one). A real broker never sends
  an incomplete first batch there; one that does sent a broken response.

Either way the fetcher must not loop silently: when growing cannot help (the limit
did not cut the data, or is already at the cap) the partition is fetched once more,
and if the data is still incomplete it gets a
:class:`~aiokafka.errors.RecordTooLargeError` naming topic, partition and offset (the
type aiokafka 0.14 raises here), raised by ``getmany()``/``getone()`` until the user
seeks.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Collection
from typing import Final

from aiokafka.errors import RecordTooLargeError
from aiokafka.structs import TopicPartition

__all__ = ["Action", "PartialBatches", "declared_size"]

_LOG_HEADER: Final = struct.Struct(">qi")  # base offset, batch length after this header


def declared_size(data: bytes | bytearray | memoryview, start: int) -> int | None:
    """The whole size (12-byte log header included) the batch at byte ``start`` of
    ``data`` declares, or ``None`` if its header is cut too."""
    if len(data) - start < _LOG_HEADER.size:
        return None
    _base, length = _LOG_HEADER.unpack_from(data, start)
    return int(_LOG_HEADER.size + length)


class Action(enum.Enum):
    """What the fetcher does after an incomplete first batch."""

    GROW = "grow"
    """Fetch again at once with the larger limit :meth:`PartialBatches.max_bytes` gives."""
    RETRY = "retry"
    """Fetch once more with the same limit, after the retry back-off."""


class _Incident:
    __slots__ = ("offset", "retried")

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.retried = False


class PartialBatches:
    """Per-partition fetch limits grown for batches larger than the limit, and the
    incomplete first batches seen, so a repeat becomes an error instead of a loop.

    Args:
        default_max_bytes: The per-partition limit (``max_partition_fetch_bytes``).
        fetch_max_bytes: The per-request limit; the grown limit never passes the
            larger of the two, so one partition's fetch stays within what the user
            allowed a whole response to hold.
    """

    __slots__ = ("_default", "_grown", "_incidents", "cap")

    def __init__(self, default_max_bytes: int, fetch_max_bytes: int) -> None:
        self._default = default_max_bytes
        self.cap = max(default_max_bytes, fetch_max_bytes)
        """The largest per-partition limit a fetch may ask for."""
        self._grown: dict[TopicPartition, int] = {}
        self._incidents: dict[TopicPartition, _Incident] = {}

    def max_bytes(self, tp: TopicPartition) -> int:
        """The per-partition limit to ask for ``tp`` with."""
        return self._grown.get(tp, self._default)

    def on_progress(self, tp: TopicPartition) -> None:
        """``tp``'s fetch returned a complete batch: back to the default limit."""
        if self._grown or self._incidents:
            self._grown.pop(tp, None)
            self._incidents.pop(tp, None)

    def retain(self, assigned: Collection[TopicPartition]) -> None:
        """Forget partitions that are no longer assigned."""
        for table in (self._grown, self._incidents):
            for tp in [tp for tp in table if tp not in assigned]:
                del table[tp]

    def on_incomplete(
        self,
        tp: TopicPartition,
        offset: int,
        sent_max_bytes: int,
        data: bytes | bytearray | memoryview,
        valid_bytes: int,
        limit_hit: bool,
    ) -> Action | RecordTooLargeError:
        """Decide what to do about ``tp``'s data, fetched at ``offset`` with
        ``sent_max_bytes``, that holds no complete batch at ``offset``.

        Args:
            tp: The partition.
            offset: The fetch offset.
            sent_max_bytes: The partition limit the request carried.
            data: The partition's ``records`` blob.
            valid_bytes: Bytes of ``data`` taken by complete batches (all of them
                before ``offset``); the incomplete batch starts there.
            limit_hit: The request's limit could be what cut the data (it filled
                the partition limit the request carried).

        Returns:
            :attr:`Action.GROW`, :attr:`Action.RETRY`, or the error to raise to the
            user (the partition's record of the incident is then cleared, so a seek
            back to the same offset gets one more try).
        """
        incident = self._incidents.get(tp)
        if incident is None or incident.offset != offset:
            incident = self._incidents[tp] = _Incident(offset)
        declared = declared_size(data, valid_bytes)
        received = len(data) - valid_bytes
        if limit_hit:
            # A size cut (a length that is not one is a broken response, below).
            if declared is not None and declared > self.cap:
                return self._fail(
                    tp,
                    offset,
                    f"the record batch there declares {declared} bytes, more than the "
                    f"{self.cap} bytes a fetch may ask for (max_partition_fetch_bytes / "
                    "fetch_max_bytes); increase them to read it",
                )
            if sent_max_bytes < self.cap:
                wanted = sent_max_bytes * 2
                if declared is not None and declared > wanted:
                    wanted = declared
                self._grown[tp] = min(wanted, self.cap)
                return Action.GROW
        if not incident.retried:
            incident.retried = True
            return Action.RETRY
        if limit_hit:
            cause = (
                f"the data is cut at the fetch limit of {sent_max_bytes} bytes, the most "
                "max_partition_fetch_bytes / fetch_max_bytes allow"
            )
        elif received == 0:
            cause = "the data holds only record batches that end before it (a broken response)"
        else:
            size = "an unknown size" if declared is None else f"{declared} bytes"
            cause = (
                f"the broker sent {received} bytes of a record batch that declares {size}, "
                f"within the fetch limit of {sent_max_bytes} bytes (a broken response)"
            )
        return self._fail(tp, offset, cause)

    def _fail(self, tp: TopicPartition, offset: int, cause: str) -> RecordTooLargeError:
        self._incidents.pop(tp, None)
        self._grown.pop(tp, None)
        return RecordTooLargeError(
            f"topic {tp.topic!r} partition {tp.partition} offset {offset}: no complete "
            f"record batch could be fetched there: {cause}. Raised until the consumer "
            "seeks past it."
        )
