"""The fetched data waiting for the user: per partition, the chunks the fetcher added.

No I/O and no asyncio. The fetch loop (:class:`~aiokafka.consumer.fetcher.Fetcher`)
adds :class:`~aiokafka.consumer.fetch_records.PartitionRecords` chunks and asks
:meth:`FetchBuffer.fetch_offset` where the next fetch of a partition starts;
``getmany()``, ``getone()`` and ``async for`` take records through
:meth:`FetchBuffer.drain`, :meth:`FetchBuffer.next_record` and
:attr:`FetchBuffer.next_record_fast`. Each partition holds at most
:data:`MAX_CHUNKS_PER_PARTITION` chunks. Chunks fetched for a position that has since
moved (seek, reset, reassignment) are dropped, both when the fetcher plans its next
fetch and when the user pulls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from aiokafka.errors import KafkaError
from aiokafka.structs import ConsumerRecord, TopicPartition

from .fetch_records import PartitionRecords
from .subscription import PartitionState, SubscriptionState

__all__ = ["MAX_CHUNKS_PER_PARTITION", "FetchBuffer", "Records"]

#: Fetched responses buffered per partition: one being consumed, one prefetched, so
#: the next fetch overlaps with the user's processing.
MAX_CHUNKS_PER_PARTITION = 2

Records = dict[TopicPartition, list[ConsumerRecord[Any, Any]]]


class FetchBuffer:
    """Fetched chunks per partition, taken in order by the user.

    Args:
        subscriptions: The consumer's subscription state (a chunk whose partition
            state was replaced, by a reassignment, is dropped).
        on_freed: Called when chunks are taken or dropped: a partition may have room
            for another fetch.

    Attributes:
        next_record_fast: ``async for``'s hot path: the next record of the chunk the
            last :meth:`next_record` took from, when that needs no checks, else
            ``None`` ("ask next_record"). It is that chunk's
            :meth:`PartitionRecords.take_fast` itself (no call of ours in between,
            one Python call less per record), or a function returning ``None``.
    """

    __slots__ = ("_chunks", "_current", "_deferred_error", "_on_freed", "_subs", "next_record_fast")

    def __init__(self, subscriptions: SubscriptionState, on_freed: Callable[[], None]) -> None:
        self._subs = subscriptions
        self._on_freed = on_freed
        self._chunks: dict[TopicPartition, deque[PartitionRecords]] = {}
        # A partition whose error was skipped so others' records could be returned.
        self._deferred_error: TopicPartition | None = None
        # The chunk next_record() took from last, for next_record_fast. Never set
        # while an error is deferred (both are reset by every drain/next_record).
        self._current: PartitionRecords | None = None
        self.next_record_fast: Callable[[], ConsumerRecord[Any, Any] | None] = _no_record

    # -- the fetcher's side -------------------------------------------------------------

    def fetch_offset(self, tp: TopicPartition, state: PartitionState) -> int | None:
        """Where the next fetch of ``tp`` starts, or ``None`` if it has no room (or
        waits on a stored error)."""
        chunks = self._chunks.get(tp)
        if chunks:
            while chunks and chunks[0].is_stale:
                chunks.popleft().drop()
            if chunks:
                last = chunks[-1]
                if len(chunks) >= MAX_CHUNKS_PER_PARTITION or last.error is not None:
                    return None
                return last.next_fetch_offset
        return state.position

    def has_error(self, tp: TopicPartition) -> bool:
        """``tp`` has a stored error that is still current."""
        chunks = self._chunks.get(tp)
        if not chunks:
            return False
        last = chunks[-1]
        return last.error is not None and not last.is_stale

    def add(self, tp: TopicPartition, chunk: PartitionRecords) -> None:
        """Append a fetched chunk (or an error-only one) to ``tp``'s queue."""
        chunks = self._chunks.get(tp)
        if chunks is None:
            self._chunks[tp] = deque((chunk,))
        else:
            chunks.append(chunk)

    def drop(self, tp: TopicPartition) -> None:
        """Discard what ``tp`` holds (e.g. data from a leader that may be truncated)."""
        chunks = self._chunks.pop(tp, None)
        for chunk in chunks or ():
            chunk.drop()
        if self._current is not None and self._current.tp == tp:
            self._set_current(None)

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Drop what ``partitions`` hold (e.g. revoked by a rebalance)."""
        self._set_current(None)
        for tp in partitions:
            chunks = self._chunks.pop(tp, None)
            for c in chunks or ():
                c.drop()
        self._on_freed()

    def clear(self) -> None:
        """Drop everything (the consumer stopped)."""
        self._chunks.clear()
        self._set_current(None)
        self._deferred_error = None

    def partitions(self) -> frozenset[TopicPartition]:
        """Partitions with buffered chunks."""
        return frozenset(tp for tp, c in self._chunks.items() if c)

    # -- the user's side ----------------------------------------------------------------

    def _raise_deferred(self, partitions: frozenset[TopicPartition] | None) -> None:
        """Raise the error a previous call skipped to return other partitions' records."""
        tp = self._deferred_error
        if tp is None:
            return
        self._deferred_error = None
        if partitions is not None and tp not in partitions:
            return
        chunks = self._chunks.get(tp)
        if not chunks:
            return
        chunk = chunks[0]
        if chunk.is_stale or chunk.state.paused or chunk.has_records or chunk.error is None:
            return
        raise chunk.error

    def drain(
        self, partitions: frozenset[TopicPartition] | None, max_records: int | None
    ) -> Records:
        """Take buffered records.

        A partition's stored error (corrupt batch, out of range with
        ``auto_offset_reset="none"``, authorization) does not hold up the others:
        their records are returned first and the error is raised by the next call
        (or by this one when no other partition has records).

        Raises:
            KafkaError: a partition's stored error, see above.
            Exception: what a deserializer raised, when no record was taken before it
                in this call (else those records are returned and the next call
                raises it).
        """
        self._raise_deferred(partitions)
        self._set_current(None)
        result: Records = {}
        remaining = max_records
        buffer = self._chunks
        freed = False
        error: tuple[TopicPartition, KafkaError] | None = None
        failed: TopicPartition | None = None
        for tp in list(buffer):
            if partitions is not None and tp not in partitions:
                continue
            chunks = buffer[tp]
            state = chunks[0].state if chunks else None
            if state is None or self._subs.get(tp) is not state:
                for c in chunks:
                    c.drop()
                del buffer[tp]
                freed = True
                continue
            if state.paused:
                continue
            taken: list[ConsumerRecord[Any, Any]] | None = None
            while chunks:
                chunk = chunks[0]
                if chunk.is_stale:
                    chunks.popleft().drop()
                    freed = True
                    continue
                try:
                    recs = chunk.take(remaining)
                except KafkaError as exc:
                    if error is None:
                        error = (tp, exc)
                    break
                except Exception:
                    # A deserializer failed; the chunk keeps the batch and raises again
                    # at its next take. Records taken before it in this call already
                    # moved their positions, so they are returned, not lost.
                    if taken is None and not result:
                        raise
                    failed = tp
                    break
                if recs:
                    if taken is None:
                        taken = recs
                    else:
                        taken.extend(recs)
                    if remaining is not None:
                        remaining -= len(recs)
                if chunk.is_drained:
                    chunks.popleft()
                    freed = True
                elif not recs:
                    break  # an error waits behind the records taken
                if remaining == 0:
                    break
            if taken:
                result[tp] = taken
            if failed is not None:
                # The failing partition goes first next time, so that its error is
                # raised by the next call instead of waiting behind other partitions.
                self._chunks = buffer = {tp: buffer.pop(tp), **buffer}
                break
            if not chunks:
                del buffer[tp]
            else:
                # Round-robin: a partition with more data goes to the back, so a small
                # max_records cannot starve the others.
                buffer[tp] = buffer.pop(tp)
            if remaining == 0:
                break
        if freed:
            self._on_freed()
        if error is not None:
            if not result:
                raise error[1]
            self._deferred_error = error[0]
        return result

    def _set_current(self, chunk: PartitionRecords | None) -> None:
        if chunk is not self._current:
            self._current = chunk
            self.next_record_fast = _no_record if chunk is None else chunk.take_fast

    def next_record(
        self, partitions: frozenset[TopicPartition] | None
    ) -> ConsumerRecord[Any, Any] | None:
        """One buffered record, or ``None``.

        Raises:
            KafkaError: a partition's stored error, as in :meth:`drain`.
        """
        self._set_current(None)
        if self._deferred_error is not None:
            self._raise_deferred(partitions)
        buffer = self._chunks
        error: tuple[TopicPartition, KafkaError] | None = None
        for tp, chunks in buffer.items():
            if partitions is not None and tp not in partitions:
                continue
            while chunks:
                chunk = chunks[0]
                if chunk.is_stale or self._subs.get(tp) is not chunk.state:
                    chunks.popleft().drop()
                    self._on_freed()
                    continue
                if chunk.state.paused:
                    break
                try:
                    rec = chunk.take_one()
                except KafkaError as exc:
                    if error is None:
                        error = (tp, exc)
                    break
                if rec is not None:
                    if error is not None:
                        self._deferred_error = error[0]
                    elif partitions is None:
                        self._set_current(chunk)
                    return rec
                chunks.popleft()
                self._on_freed()
        # Nothing found: drop emptied partitions (not while iterating).
        for tp in [tp for tp, c in buffer.items() if not c]:
            del buffer[tp]
        if error is not None:
            raise error[1]
        return None


def _no_record() -> None:
    """:attr:`FetchBuffer.next_record_fast` while no chunk is current."""
    return None
