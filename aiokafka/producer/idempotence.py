"""Producer id, epoch and per-partition sequence numbers (idempotence, KIP-98/360).

Pure state, no I/O and no asyncio: the sender asks this object what to do and sends
the InitProducerId request itself. A transaction manager (a later addition) extends
:class:`ProducerIdState` with the transaction state machine; everything about
sequences lives here so the two share it.

Invariants:

* A batch gets its base sequence when it is first drained for sending
  (:meth:`ProducerIdState.assign_sequence`), *before* it is encoded; retries keep it,
  so the broker can recognise a resent batch as a duplicate.
* Sequences of one partition are contiguous in drain order; the accumulator keeps
  retried batches in that order.
* When a sequenced batch fails for good (timeout, non-retriable error), the broker
  will never see its sequence, so later batches would be out of order forever. The
  epoch is then bumped (KIP-360) and every partition restarts at sequence 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from aiokafka.protocol import messages as m

__all__ = ["NO_PRODUCER_EPOCH", "NO_PRODUCER_ID", "NO_SEQUENCE", "ProducerIdState"]

NO_PRODUCER_ID: Final = -1
NO_PRODUCER_EPOCH: Final = -1
NO_SEQUENCE: Final = -1
_MAX_SEQUENCE: Final = 2**31 - 1
_MAX_EPOCH: Final = 2**15 - 1

# InitProducerId v3 (Kafka 2.5, KIP-360) lets an idempotent producer bump its own
# epoch by sending its current id and epoch.
BUMP_MIN_VERSION: Final = 3


class ProducerIdState:
    """The producer id/epoch and the sequence numbers of every partition.

    Args:
        transactional_id: ``None`` for an idempotent-only producer.
        transaction_timeout_ms: Sent in InitProducerId.
    """

    def __init__(self, transactional_id: str | None = None, transaction_timeout_ms: int = 60000):
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.producer_id: int = NO_PRODUCER_ID
        self.producer_epoch: int = NO_PRODUCER_EPOCH
        #: Set when sequences must restart under a new epoch (see module docstring).
        self.bump_required = False
        self._next_sequence: dict[TopicPartition, int] = {}
        self._last_acked: dict[TopicPartition, int] = {}

    # -- producer id --------------------------------------------------------------------

    @property
    def has_producer_id(self) -> bool:
        """True once InitProducerId succeeded (and no bump is pending)."""
        return self.producer_id != NO_PRODUCER_ID and not self.bump_required

    def init_request(self, api_version: int) -> m.InitProducerIdRequest:
        """The InitProducerId request to send now (first id, or an epoch bump when
        :attr:`bump_required` and the broker supports it at ``api_version``)."""
        # Imported here for import cost: the producer facade builds this state in its
        # constructor, and the message table loads with the first request anyway.
        from aiokafka.protocol import messages as m

        bump = self.producer_id != NO_PRODUCER_ID and api_version >= BUMP_MIN_VERSION
        return m.InitProducerIdRequest(
            transactional_id=self.transactional_id,
            transaction_timeout_ms=self.transaction_timeout_ms,
            producer_id=self.producer_id if bump else NO_PRODUCER_ID,
            producer_epoch=self.producer_epoch if bump else NO_PRODUCER_EPOCH,
        )

    def set_producer_id(self, producer_id: int, producer_epoch: int) -> None:
        """Install a new id/epoch: every partition restarts at sequence 0."""
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.bump_required = False
        self._next_sequence.clear()
        self._last_acked.clear()

    def request_bump(self) -> None:
        """Ask for a new epoch before any further sequenced batch is sent."""
        self.bump_required = True

    # -- sequences ----------------------------------------------------------------------

    def assign_sequence(self, tp: TopicPartition, record_count: int) -> int:
        """Reserve ``record_count`` sequence numbers of ``tp``; return the first."""
        seq = self._next_sequence.get(tp, 0)
        nxt = seq + record_count
        # Sequences wrap at int32 like the Java client (DefaultRecordBatch.incrementSequence).
        self._next_sequence[tp] = nxt if nxt <= _MAX_SEQUENCE else nxt - _MAX_SEQUENCE - 1
        return seq

    def on_acked(self, tp: TopicPartition, base_sequence: int, record_count: int) -> None:
        """A batch was written: remember its last sequence."""
        last = base_sequence + record_count - 1
        self._last_acked[tp] = last if last <= _MAX_SEQUENCE else last - _MAX_SEQUENCE - 1

    def last_acked(self, tp: TopicPartition) -> int:
        """The last sequence of ``tp`` the broker confirmed, or -1."""
        return self._last_acked.get(tp, NO_SEQUENCE)

    def awaiting_first_ack(self, tp: TopicPartition) -> bool:
        """True if a batch of ``tp`` got sequences under the current epoch but none has
        been acknowledged yet.

        The broker takes any first sequence from a producer it has no state for (it
        may have expired): if the first batch fails (say NOT_LEADER on a new
        partition) while the second one, sent behind it, gets written, the first can
        never follow. So a partition sends one batch until its first is acknowledged.
        """
        return tp not in self._last_acked and self._next_sequence.get(tp, 0) != 0

    def is_next_expected(self, tp: TopicPartition, base_sequence: int) -> bool:
        """True if ``base_sequence`` directly follows the last acknowledged one, i.e.
        no earlier batch of ``tp`` is still unresolved.

        An OUT_OF_ORDER_SEQUENCE_NUMBER for such a batch means the broker lost its
        state (or records): the epoch must be bumped. For any other batch it only
        means an earlier batch was not written yet, and a retry in order fixes it.
        """
        last = self._last_acked.get(tp, NO_SEQUENCE)
        expected = 0 if last in (NO_SEQUENCE, _MAX_SEQUENCE) else last + 1
        return base_sequence == expected
