"""Partitions whose queued records have no leader to go to, and why.

The sender asks :class:`LeaderOutages` on every pass that finds such partitions. It
keeps the reason of each (set as the batches' ``last_error``, so the error the
delivery timeout raises names it) and makes an outage visible once: WARNING when it
starts, INFO when the partition has a leader again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from aiokafka.errors import LeaderNotAvailableError
from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from aiokafka.cluster.metadata import ClusterMetadata
    from aiokafka.producer.batch import ProducerBatch

__all__ = ["LeaderOutages"]

# The sender's logger: these lines were always the sender's, and users filter on it.
log = logging.getLogger("aiokafka.producer.sender")


class LeaderOutages:
    """The producer's partitions with queued batches and no leader, with the reason.

    Args:
        unsent_batches: The queued batches of a partition (the accumulator's).
    """

    __slots__ = ("_leaderless", "_unsent_batches")

    def __init__(self, unsent_batches: Callable[[TopicPartition], Iterable[ProducerBatch]]) -> None:
        self._unsent_batches = unsent_batches
        self._leaderless: dict[TopicPartition, LeaderNotAvailableError] = {}

    def __bool__(self) -> bool:
        """True while some partition is in an outage."""
        return bool(self._leaderless)

    def track(self, cluster: ClusterMetadata, unknown: list[TopicPartition]) -> None:
        """``unknown`` are the partitions with queued batches and no leader now: note
        why on their batches, log each new outage at WARNING, and each partition
        that has a leader again at INFO."""
        leaderless = self._leaderless
        for tp in unknown:
            problem = cluster.leader_problem(tp) or f"{tp.topic}-{tp.partition} has no leader"
            error = leaderless.get(tp)
            if error is None or error.args[0] != problem:
                if error is None:
                    log.warning("%s: its records wait; refreshing metadata with back-off", problem)
                error = leaderless[tp] = LeaderNotAvailableError(problem)
            for batch in self._unsent_batches(tp):
                batch.last_error = error
        if len(leaderless) > len(unknown):  # some have a leader again (or no batches)
            waiting = set(unknown)
            for tp in [tp for tp in leaderless if tp not in waiting]:
                del leaderless[tp]
                leader = cluster.sendable_leader(tp)
                if leader is not None:
                    log.info("%s-%s has a leader again: node %d", tp.topic, tp.partition, leader)
