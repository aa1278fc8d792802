"""Fetched data of one partition, turned into records lazily, batch by batch.

No I/O and no asyncio here. A :class:`PartitionRecords` wraps the ``records`` blob
of one partition from one Fetch response. Constructing it reads only batch headers
(to know where the next fetch starts); a batch's records are decoded, filtered and
turned into :class:`~aiokafka.structs.ConsumerRecord` objects only when the user pulls
from it, so ``max_poll_records`` never forces decoding the whole response.

Under ``read_committed`` :class:`AbortedTransactionFilter` drops the batches of
aborted transactions using the response's ``aborted_transactions`` list, the way
Kafka's own consumer does: an aborted transaction starts at its ``first_offset`` and
ends at the producer's ABORT control marker. Control batches are never returned.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from aiokafka._extensions import compiled_or
from aiokafka.errors import KafkaError
from aiokafka.metrics.consumer import RecordTally
from aiokafka.record import MemoryRecords, RecordBatch
from aiokafka.record.compression import CODEC_MASK
from aiokafka.record.default_records import CONTROL_ABORT, DefaultRecordBatch, parse_control_key
from aiokafka.record.legacy_records import LegacyRecordBatch
from aiokafka.record.v2_layout import (
    CONTROL_MASK,
    HEADER_SIZE,
    HEADER_STRUCT,
    LOG_HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
)
from aiokafka.structs import ConsumerRecord, TopicPartition

from .record_decode import decode_batch, deserialize, span_decoder
from .subscription import PartitionState

__all__ = ["AbortedTransactionFilter", "PartitionRecords"]

Deserializer = Callable[[bytes], Any]

#: Where a v2 batch lies in the fetched blob, found by :func:`_scan_v2`:
#: ``(start, end, next_offset, attributes)``.
_Span = tuple[int, int, int, int]


def _scan_v2(
    data: bytes | bytearray | memoryview, fetch_offset: int
) -> tuple[list[_Span], int, int] | None:
    """The batches of ``data`` that end after ``fetch_offset``, from their headers
    alone, when every batch is v2: ``(spans, valid_bytes, next_fetch_offset)``.

    Reading the headers in one loop, and making a batch object only when one is
    decoded, costs a fraction of iterating :class:`MemoryRecords`, which matters when
    a fetch holds thousands of small batches. ``None`` when a batch is not v2 or a
    header is one :class:`DefaultRecordBatch` would refuse: the caller then reads the
    blob with :class:`MemoryRecords`, which stores the same error as before.
    """
    spans: list[_Span] = []
    pos = 0
    n = len(data)
    next_fetch = fetch_offset
    unpack = HEADER_STRUCT.unpack_from
    while n - pos >= HEADER_SIZE:
        base, length, _epoch, magic, _crc, attributes, last_delta, *_, count = unpack(data, pos)
        total = length + LOG_OVERHEAD
        if magic != 2 or total < HEADER_SIZE or count < 0:
            return None
        if total > n - pos:
            break  # a partial trailing batch: the broker cut it
        next_offset = base + last_delta + 1
        if next_offset > fetch_offset:
            spans.append((pos, pos + total, next_offset, attributes))
            next_fetch = next_offset
        pos += total
    else:
        if n - pos > MAGIC_OFFSET:
            # A trailing piece of a header, as the broker cuts a response at the fetch
            # size (about one fetch in 25 of 5-record batches here). A v2 one with a
            # possible length is a partial batch, as MemoryRecords reads it; anything
            # else is for MemoryRecords to judge (and to store its error).
            _base, length = LOG_HEADER_STRUCT.unpack_from(data, pos)
            if data[pos + MAGIC_OFFSET] != 2 or length + LOG_OVERHEAD < HEADER_SIZE:
                return None
    return spans, pos, next_fetch


class AbortedTransactionFilter:
    """Decides which transactional batches of one fetch belong to aborted transactions.

    Args:
        aborted: ``(producer_id, first_offset)`` of every aborted transaction the
            broker listed for the fetched range.

    Batches must be passed to :meth:`skip` in offset order.
    """

    __slots__ = ("_aborted_pids", "_pending")

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        # Ordered by first offset: a transaction becomes "open and aborted" once the
        # reader passes its first offset.
        self._pending = [(first, pid) for pid, first in aborted]
        heapq.heapify(self._pending)
        self._aborted_pids: set[int] = set()

    def skip(self, batch: DefaultRecordBatch) -> bool:
        """True if no record of ``batch`` may be returned.

        Control batches are always skipped; an ABORT marker also ends the aborted
        transaction of its producer, so later batches of that producer (a new
        transaction) are returned again.
        """
        pending = self._pending
        last = batch.last_offset
        while pending and pending[0][0] <= last:
            self._aborted_pids.add(heapq.heappop(pending)[1])
        if batch.is_control_batch:
            if batch.has_producer_id and _is_abort_marker(batch):
                self._aborted_pids.discard(batch.producer_id)
            return True
        return batch.is_transactional and batch.producer_id in self._aborted_pids


def _is_abort_marker(batch: DefaultRecordBatch) -> bool:
    for _offset, _ts, key, _value, _headers, _size in batch.record_tuples():
        parsed = parse_control_key(key)
        return parsed is not None and parsed[1] == CONTROL_ABORT
    return False


class _PyRecordCursor:
    """What the C ``_cready.RecordCursor`` is when the extension is not built: the
    decoded batch, the next record's index and ``take_fast()``'s common case (see
    :meth:`PartitionRecords._take_fast_slow` for the rest). The members are written
    by :class:`PartitionRecords` alone."""

    __slots__ = ("_recs", "_recs_idx", "_within_end", "state")

    _recs: list[ConsumerRecord[Any, Any]]
    _recs_idx: int
    _within_end: int
    state: PartitionState

    def take_fast(self) -> ConsumerRecord[Any, Any] | None:
        i = self._recs_idx
        if i <= self._within_end and self.state.cursor is self:
            self._recs_idx = i + 1
            return self._recs[i]
        return self._take_fast_slow()

    def _take_fast_slow(self) -> ConsumerRecord[Any, Any] | None:
        raise NotImplementedError

    def consumed_position(self) -> tuple[int, int | None] | None:
        raise NotImplementedError


if TYPE_CHECKING:
    _RecordCursor = _PyRecordCursor
else:
    _RecordCursor = compiled_or("aiokafka.consumer._cready", "RecordCursor", _PyRecordCursor)


class PartitionRecords(_RecordCursor):
    """Records of one partition from one Fetch response, consumed in order.

    Args:
        tp: The partition.
        state: Its subscription state, the position's owner: records taken
            advance it through :meth:`PartitionState.advance` (per batch slice a
            ``take`` returns, per record otherwise).
        fetch_offset: The offset the fetch asked for.
        data: The response's ``records`` blob.
        check_crcs: Verify batch checksums before decoding.
        aborted: ``(producer_id, first_offset)`` pairs under ``read_committed``;
            ``None`` under ``read_uncommitted`` (nothing is filtered but control
            batches).
        key_deserializer, value_deserializer: Applied per record if set.
        error: An error to raise once the records before it are consumed.
        tally: Counts the records of each batch as it starts handing them out
            (per batch, for the metrics; see :mod:`aiokafka.metrics.consumer`).
    """

    __slots__ = (
        "_batch_idx",
        "_batch_next",
        "_batches",
        "_check_crcs",
        "_decode_c",
        "_deserializing",
        "_filter",
        "_follow_from",
        "_key_deserializer",
        "_value_deserializer",
        "_view",
        "epoch",
        "error",
        "fetch_offset",
        "next_fetch_offset",
        "size",
        "tally",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        state: PartitionState,
        fetch_offset: int,
        data: bytes | bytearray | memoryview | None,
        *,
        check_crcs: bool = True,
        aborted: Iterable[tuple[int, int]] | None = None,
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
        error: KafkaError | None = None,
        tally: RecordTally | None = None,
    ) -> None:
        self.tp = tp
        self.tally = tally if tally is not None else RecordTally()
        self.state = state
        self.epoch = state.epoch
        self.fetch_offset = fetch_offset
        self.error = error
        self._key_deserializer = key_deserializer
        self._value_deserializer = value_deserializer
        # No aborted transaction listed: only control batches are dropped, as without
        # a filter (an ABORT marker could only end a transaction nobody listed).
        self._filter = AbortedTransactionFilter(aborted) if aborted else None
        self._check_crcs = check_crcs
        self._view = memoryview(data if data is not None else b"")
        # Headers only: the records of each batch stay encoded until taken. Batch
        # objects are made as batches are decoded when every batch is v2 and nothing
        # is filtered; else up front, as MemoryRecords reads them.
        scanned = _scan_v2(self._view, fetch_offset) if self._filter is None else None
        self._batches: list[RecordBatch | _Span]
        if scanned is not None:
            self._batches, self.size, self.next_fetch_offset = scanned  # type: ignore[assignment]
        else:
            batches: list[RecordBatch] = []
            memory = MemoryRecords(data, check_crc=check_crcs)
            try:
                for batch in memory:
                    if batch.next_offset > fetch_offset:
                        batches.append(batch)
            except KafkaError as exc:  # an impossible batch header
                self.error = exc
            self._batches = batches  # type: ignore[assignment]
            self.size = memory.valid_bytes()
            self.next_fetch_offset = batches[-1].next_offset if batches else fetch_offset
        self._batch_idx = 0
        self._recs: list[ConsumerRecord[Any, Any]] = []
        # Index of the decoded batch's last record, whose position is the batch's
        # next offset (_batch_next) rather than its offset + 1.
        self._within_end = -1
        self._batch_next = fetch_offset
        self._recs_idx = 0
        # Index of the first record take_fast handed out since the state followed.
        self._follow_from = 0
        self._deserializing = key_deserializer is not None or value_deserializer is not None
        # The C decoder of uncompressed v2 batches (None: decode through batch objects).
        self._decode_c = span_decoder(check_crcs)

    @property
    def is_stale(self) -> bool:
        """The position was moved (seek, reset, reassignment) since the fetch."""
        return self.epoch != self.state.epoch

    @property
    def has_records(self) -> bool:
        """Undelivered records may remain (a batch may still turn out to be empty)."""
        return self._recs_idx < len(self._recs) or self._batch_idx < len(self._batches)

    @property
    def is_drained(self) -> bool:
        """Nothing left: no records and no error to raise."""
        return self.error is None and not self.has_records

    def drop(self) -> None:
        """Discard what is left (seek, pause of a stale buffer, unassignment)."""
        self.state.unfollow(self)  # keep the position of what was handed out
        # The rest of the decoded batch was counted, never handed out.
        self.tally.records -= len(self._recs) - self._recs_idx
        self._batches = []
        self._batch_idx = 0
        self._view = memoryview(b"")  # the fetched blob can be freed now
        self._recs = []
        self._within_end = -1
        self._recs_idx = 0
        self._follow_from = 0
        self.error = None

    def take(self, max_records: int | None) -> list[ConsumerRecord[Any, Any]]:
        """Return up to ``max_records`` records (all if ``None``), advancing the position.

        Raises:
            KafkaError: the stored error (e.g. ``CorruptRecordError``,
                ``OffsetOutOfRangeError``) once every record before it was taken and
                none is taken in this call. It stays stored, so it is raised again
                until the user seeks.
            Exception: what a deserializer raised for the next batch, when no record
                is taken in this call; the batch stays, so the next call decodes it
                again.
        """
        out: list[ConsumerRecord[Any, Any]] = []
        need = max_records if max_records is not None else -1
        state = self.state
        while need != 0:
            recs = self._recs
            idx = self._recs_idx
            if idx >= len(recs):
                try:
                    loaded = self._load_next_batch()
                except Exception:
                    if not out:
                        raise
                    # A deserializer failed on the next batch. The records taken
                    # already moved the position past them: hand them out, or they
                    # are lost. The failing batch stays and raises at the next call.
                    break
                if not loaded:
                    break
                continue
            if need < 0 or len(recs) - idx <= need:
                chunk = recs[idx:] if idx else recs
                self._recs_idx = len(recs)
                # Whole batch consumed: the position moves past it, which also
                # skips compacted-away offsets and a trailing control record.
                state.advance(self._batch_next, chunk[-1].leader_epoch)
            else:
                chunk = recs[idx : idx + need]
                self._recs_idx = idx + need
                state.advance(chunk[-1].offset + 1, chunk[-1].leader_epoch)
            if out:
                out.extend(chunk)
            else:
                out = chunk
            if need > 0:
                need -= len(chunk)
        if not out and self.error is not None and not self.has_records:
            raise self.error
        return out

    def take_one(self) -> ConsumerRecord[Any, Any] | None:
        """One record, or ``None`` if none is left (``getone()``'s fast path)."""
        while self._recs_idx >= len(self._recs):
            if not self._load_next_batch():
                if self.error is not None:
                    raise self.error
                return None
        rec = self._recs[self._recs_idx]
        self._recs_idx += 1
        if self._recs_idx == len(self._recs):
            self.state.advance(self._batch_next, rec.leader_epoch)
        else:
            self.state.advance(rec.offset + 1, rec.leader_epoch)
        return rec

    # take_fast() (the base class, C when built): the next record, if that is
    # trivially safe (``async for``'s hot path); ``None`` means "ask take_one()": the
    # position moved, the partition is paused, or no batch is left to load (or the
    # next one's error was stored). The state follows this chunk
    # (PartitionState.follow) while it hands records out that way, so a record costs
    # no call to move the position, and the state still following it means nothing
    # moved, paused or unassigned the partition since: the only check per record.
    # Every other case comes here. A deserializer's error for the next batch is
    # raised (the batch stays, as take_one() leaves it).

    def _take_fast_slow(self) -> ConsumerRecord[Any, Any] | None:
        i = self._recs_idx
        state = self.state
        if self.epoch != state.epoch or state.paused:
            return None
        if i > self._within_end:
            recs = self._recs
            if recs:
                # The batch was handed out: the position moves past it (and the state
                # stops following) before the batch is forgotten. _batch_next is also
                # past batches skipped since, whose skip kept this leader epoch.
                state.advance(self._batch_next, recs[-1].leader_epoch)
            # Small batches (a few records each, as web services produce them) made
            # every batch boundary a trip through getone(): load the next one here.
            if not self._load_next_batch():
                return None
            i = self._recs_idx
        # (Else another chunk or nobody is followed: follow() stores its position.)
        state.follow(self)  # first: it may store what this chunk handed out so far
        self._follow_from = i
        self._recs_idx = i + 1
        return self._recs[i]

    def consumed_position(self) -> tuple[int, int | None] | None:
        """The position after the records :meth:`take_fast` handed out since the state
        began following this chunk, with their leader epoch; ``None`` if none was
        (see :class:`~aiokafka.consumer.subscription.PositionCursor`)."""
        i = self._recs_idx
        if i <= self._follow_from:
            return None
        rec = self._recs[i - 1]
        # The batch's last record: the position moves past the whole batch, which also
        # skips compacted-away offsets and a trailing control record.
        return (self._batch_next if i > self._within_end else rec.offset + 1), rec.leader_epoch

    def _load_next_batch(self) -> bool:
        """Decode the next batch into ``_recs``; False when no batch is left.

        Filtered batches (control, aborted) move the position past them right away
        so that a ``take`` ending on them does not fetch them again.
        """
        batches = self._batches
        state = self.state
        if state.cursor is self:
            # The state reads the position from the batch about to be replaced.
            state.unfollow(self)
        while self._batch_idx < len(batches):
            item = batches[self._batch_idx]
            self._batch_idx += 1
            try:
                if type(item) is tuple:  # a v2 batch found by _scan_v2 (no filter)
                    start, end, next_offset, attributes = item
                    if attributes & CONTROL_MASK:
                        state.skip_to(next_offset)
                        self._batch_next = next_offset
                        continue
                    # Inline (no call per batch): batches of a few records are common.
                    view = self._view[start:end]
                    c_decode = self._decode_c
                    if c_decode is None or attributes & CODEC_MASK:
                        recs = self._decode_v2(DefaultRecordBatch(view, check_crc=self._check_crcs))
                    else:
                        topic, partition = self.tp
                        got = c_decode[0](view, c_decode[1], ConsumerRecord, topic, partition, True)
                        if got is None:  # handed back (corrupt, unusual): the batch object's turn
                            recs = self._decode_v2(
                                DefaultRecordBatch(view, check_crc=self._check_crcs)
                            )
                        else:
                            recs = got
                            if self._deserializing:
                                deserialize(recs, self._key_deserializer, self._value_deserializer)
                else:
                    batch = cast(RecordBatch, item)
                    next_offset = batch.next_offset
                    if batch.magic == 2:
                        v2 = cast(DefaultRecordBatch, batch)
                        flt = self._filter
                        if (flt is not None and flt.skip(v2)) or v2.is_control_batch:
                            state.skip_to(next_offset)
                            self._batch_next = next_offset
                            continue
                        recs = self._decode_v2(v2)
                    else:
                        recs = self._decode_legacy(cast(LegacyRecordBatch, batch))
            except KafkaError as exc:
                # The position stays at this batch: the error is raised (again and
                # again) until the user seeks past it; other partitions keep flowing.
                self.error = exc
                self._batch_idx = len(batches)
                self._recs = []
                self._within_end = -1
                self._recs_idx = 0
                return False
            except BaseException:
                # A deserializer failed (or the task was cancelled): leave the batch
                # in place so the next take decodes it again.
                self._batch_idx -= 1
                raise
            start = 0
            # A batch may start before the fetch offset (compressed ones, or one the
            # fetch offset falls inside). The position is the last batch's next offset
            # (_batch_next) or the fetch offset for the first, so only a batch starting
            # before that needs the position read (a call per batch otherwise).
            if recs and recs[0].offset < self._batch_next:
                position = state.position
                if position is not None and recs[0].offset < position:
                    start = bisect.bisect_left([r.offset for r in recs], position)
            if start >= len(recs):
                state.skip_to(next_offset)
                self._batch_next = next_offset
                continue
            self._recs = recs
            self._within_end = len(recs) - 1
            self._batch_next = next_offset
            self._recs_idx = start
            self.tally.records += len(recs) - start
            return True
        self._recs = []
        self._within_end = -1
        self._recs_idx = 0
        return False

    def _decode_v2(self, batch: DefaultRecordBatch) -> list[ConsumerRecord[Any, Any]]:
        # At most one tracked object per record, and no gc.disable(): see record_decode.
        # The C loop leaves records untracked by the collector while they hold only
        # bytes; deserialize() tracks those that get a collectable key or value.
        recs = decode_batch(batch, self.tp.topic, self.tp.partition, untracked=True)
        return self._deserialized(recs)

    def _deserialized(self, recs: list[ConsumerRecord[Any, Any]]) -> list[ConsumerRecord[Any, Any]]:
        kd = self._key_deserializer
        vd = self._value_deserializer
        if kd is not None or vd is not None:
            deserialize(recs, kd, vd)
        return recs

    def _decode_legacy(self, batch: LegacyRecordBatch) -> list[ConsumerRecord[Any, Any]]:
        topic, partition = self.tp
        kd = self._key_deserializer
        vd = self._value_deserializer
        out: list[ConsumerRecord[Any, Any]] = []
        for r in batch:
            k = r.key
            v = r.value
            out.append(
                ConsumerRecord(
                    topic,
                    partition,
                    r.offset,
                    r.timestamp,
                    r.timestamp_type,
                    k if kd is None or k is None else kd(k),
                    v if vd is None or v is None else vd(v),
                    r.checksum,
                    -1 if k is None else len(k),
                    -1 if v is None else len(v),
                    (),
                    None,
                )
            )
        return out

    def __repr__(self) -> str:
        return (
            f"PartitionRecords({self.tp}, fetch_offset={self.fetch_offset}, "
            f"next_fetch_offset={self.next_fetch_offset}, error={self.error!r})"
        )
