"""What the admin client's transaction recovery calls take and return:
``find_hanging_transactions`` and ``abort_transaction`` (KIP-664), ``fence_producers``."""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka.admin.results import ProducerStateInfo
from aiokafka.admin.types import check_count
from aiokafka.structs import TopicPartition

__all__ = ["AbortTransactionSpec", "FencedProducer", "HangingTransaction"]


@dataclass(frozen=True)
class AbortTransactionSpec:
    """A hanging transaction to abort on one partition.

    The values come from :meth:`~aiokafka.admin.AIOKafkaAdminClient.describe_producers`
    on that partition: the producer whose ``current_txn_start_offset`` is not -1
    holds the partition's last stable offset back. :meth:`of` builds the spec from
    that description.

    Raises:
        TypeError, ValueError: a field of the wrong type or out of range (named).
    """

    topic_partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __post_init__(self) -> None:
        if not isinstance(self.topic_partition, TopicPartition):
            raise TypeError(
                "topic_partition must be a TopicPartition, got "
                f"{type(self.topic_partition).__name__}"
            )
        check_count("producer_id", self.producer_id, 0)
        check_count("producer_epoch", self.producer_epoch, 0)
        if self.producer_epoch > 32767:
            raise ValueError(f"producer_epoch must be <= 32767, got {self.producer_epoch}")
        check_count("coordinator_epoch", self.coordinator_epoch, 0)

    @classmethod
    def of(
        cls, topic_partition: TopicPartition, producer: ProducerStateInfo | HangingTransaction
    ) -> AbortTransactionSpec:
        """The spec for ``producer``, as ``describe_producers`` reported it on
        ``topic_partition`` (or as ``find_hanging_transactions`` found it).

        A partition that never saw a marker of the producer's coordinator reports
        coordinator epoch -1; the spec then carries 0, the lowest a coordinator
        has, as ``kafka-transactions.sh`` sends.
        """
        return cls(
            topic_partition,
            producer.producer_id,
            producer.producer_epoch,
            max(0, producer.coordinator_epoch),
        )


@dataclass(frozen=True)
class FencedProducer:
    """The producer id and the new epoch a transactional id got when it was fenced:
    a producer that still holds an older epoch fails with ``ProducerFenced``."""

    producer_id: int
    producer_epoch: int


@dataclass(frozen=True)
class HangingTransaction:
    """An open transaction on a partition that its coordinator does not track.

    Found by :meth:`~aiokafka.admin.AIOKafkaAdminClient.find_hanging_transactions`;
    abort it with ``abort_transaction(hanging.spec())``.

    Attributes:
        start_offset: The transaction's first offset on the partition: its last
            stable offset, where ``read_committed`` consumers stop.
        last_timestamp: When the producer last wrote to the partition (ms since the
            epoch).
        transactional_id: The id the producer id belongs to, ``None`` when no
            coordinator knows the producer id any more.
    """

    topic_partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    transactional_id: str | None

    def spec(self) -> AbortTransactionSpec:
        """What :meth:`~aiokafka.admin.AIOKafkaAdminClient.abort_transaction` takes to
        abort this transaction."""
        return AbortTransactionSpec.of(self.topic_partition, self)
