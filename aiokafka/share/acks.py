"""Acknowledgement state of a share consumer (no asyncio, no I/O).

A share consumer holds records it acquired until it acknowledges them. This module
keeps, per partition, the offsets handed to the application and the acknowledgement
given to each, and turns them into the ``AcknowledgementBatch`` runs of the wire
(contiguous offsets sharing one type collapse to one ``(first, last, [type])``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from aiokafka.errors import IllegalStateError
from aiokafka.structs import TopicPartition

#: AcknowledgeTypes values (KIP-932); 0 is a gap (an offset that holds no record).
GAP, ACCEPT, RELEASE, REJECT = 0, 1, 2, 3

#: One acknowledgement batch: (first offset, last offset, one type or one per offset).
AckBatch = tuple[int, int, list[int]]

AckType = Literal["accept", "release", "reject"]

_TYPES: dict[str, int] = {"accept": ACCEPT, "release": RELEASE, "reject": REJECT}


def ack_code(kind: str) -> int:
    """The wire value of ``"accept"``, ``"release"`` or ``"reject"``.

    Raises:
        ValueError: any other name.
    """
    try:
        return _TYPES[kind]
    except KeyError:
        raise ValueError(
            f"acknowledgement type must be 'accept', 'release' or 'reject', not {kind!r}"
        ) from None


def to_batches(acks: dict[int, int]) -> list[AckBatch]:
    """Runs of consecutive offsets with the same type, in offset order."""
    out: list[AckBatch] = []
    for offset in sorted(acks):
        kind = acks[offset]
        if out:
            first, last, types = out[-1]
            if offset == last + 1 and types[0] == kind:
                out[-1] = (first, offset, types)
                continue
        out.append((offset, offset, [kind]))
    return out


class AcknowledgementState:
    """Which delivered records await an acknowledgement, and which are ready to send.

    Args:
        explicit: ``True`` if the application must acknowledge every record itself;
            ``False`` (implicit) accepts whatever it left unacknowledged when it polls
            again or commits.
    """

    def __init__(self, *, explicit: bool) -> None:
        self.explicit = explicit
        # Records handed out and not yet acknowledged: tp -> offsets.
        self._delivered: dict[TopicPartition, set[int]] = {}
        # Acknowledgements not yet sent: tp -> offset -> type.
        self._ready: dict[TopicPartition, dict[int, int]] = {}

    def delivered(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Record that the records at ``offsets`` of ``tp`` went to the application."""
        self._delivered.setdefault(tp, set()).update(offsets)

    def gaps(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Acquired offsets that hold no record (compacted, control batches): the
        broker needs them acknowledged as gaps to complete the acquired range."""
        ready = self._ready.setdefault(tp, {})
        for offset in offsets:
            ready[offset] = GAP

    def acknowledge(self, tp: TopicPartition, offset: int, kind: str) -> None:
        """Acknowledge one delivered record.

        Raises:
            ValueError: unknown ``kind``.
            aiokafka.errors.IllegalStateError: the record was not delivered by the
                latest polls or is already acknowledged.
        """
        code = ack_code(kind)
        waiting = self._delivered.get(tp)
        if waiting is None or offset not in waiting:
            raise IllegalStateError(
                f"{tp.topic}-{tp.partition}@{offset} is not awaiting an acknowledgement"
            )
        waiting.discard(offset)
        self._ready.setdefault(tp, {})[offset] = code

    def before_poll(self) -> None:
        """Settle the previous poll's records before the next one.

        Implicit mode accepts every record still unacknowledged. Explicit mode
        requires that the application acknowledged them all.

        Raises:
            aiokafka.errors.IllegalStateError: explicit mode with records left.
        """
        if self.explicit:
            left = sum(len(v) for v in self._delivered.values())
            if left:
                raise IllegalStateError(
                    f"{left} records of the previous poll are not acknowledged "
                    "(explicit acknowledgement mode)"
                )
            return
        self.accept_all()

    def accept_all(self) -> None:
        """Implicit acknowledgement: accept everything delivered and not acknowledged."""
        for tp, offsets in self._delivered.items():
            ready = self._ready.setdefault(tp, {})
            for offset in offsets:
                ready[offset] = ACCEPT
        self._delivered.clear()

    def take(
        self, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, dict[int, int]]:
        """Remove and return the acknowledgements ready to send (of ``partitions``,
        or all)."""
        if partitions is None:
            out = {tp: acks for tp, acks in self._ready.items() if acks}
            self._ready = {}
            return out
        out = {}
        for tp in partitions:
            acks = self._ready.pop(tp, None)
            if acks:
                out[tp] = acks
        return out

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Drop state of partitions no longer assigned (the broker already released
        their records with the session)."""
        for tp in partitions:
            self._delivered.pop(tp, None)
            self._ready.pop(tp, None)

    def pending(self) -> int:
        """Delivered records without an acknowledgement."""
        return sum(len(v) for v in self._delivered.values())
