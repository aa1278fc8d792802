"""Position validation after a leader change (KIP-320): truncation detection.

When a partition's leader changes, the new leader's log may end before the
consumer's position: records the old leader had (and the consumer read) were never
replicated and are gone (an unclean election, or writes with ``acks=1``). Before
fetching from the new leader, the consumer asks it with OffsetForLeaderEpoch where
the epoch of the last consumed record ends in its log:

* end offset >= position: the log is intact; fetching resumes at the position;
* end offset < position: the log was truncated; with ``auto_offset_reset``
  ``"earliest"``/``"latest"`` the position moves back to the end offset (the first
  offset that may differ, as the Java client does) with a warning; with ``"none"``
  :class:`~aiokafka.errors.LogTruncationError` is raised for that partition;
* no end offset known for the epoch: the position is reset by the policy (or the
  error is raised with ``"none"``).

A partition needs validation when its position names a leader epoch (the epoch of
the last consumed record, or of a committed offset) and the leader epoch in the
metadata is newer than the one the position was last checked (or fetched) under.
Positions without an epoch (a plain ``seek()``, a reset) are taken as they are.

:class:`PositionValidator` keeps the per-partition bookkeeping, sends the requests
(:meth:`PositionValidator.validate`, run by the fetcher's validation task) and
judges the answers (:func:`judge`, pure).
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, NamedTuple

from aiokafka.errors import (
    KafkaError,
    LogTruncationError,
    OffsetOutOfRangeError,
    UnsupportedVersionError,
    for_code,
)
from aiokafka.protocol import messages as _oe
from aiokafka.structs import TopicPartition

from .subscription import PartitionState, SubscriptionState

if TYPE_CHECKING:
    from aiokafka.cluster.metadata import ClusterMetadata
    from aiokafka.cluster.ports import FetcherClient

__all__ = [
    "MIN_VALIDATION_VERSION",
    "Check",
    "PositionValidator",
    "Verdict",
    "judge",
]

log = logging.getLogger(__name__)

#: OffsetForLeaderEpoch v3 is the first a consumer may send (``replica_id`` -1, and
#: the broker checks ``current_leader_epoch``); older brokers are not asked.
MIN_VALIDATION_VERSION = 3
_CONSUMER_REPLICA_ID = -1


class Verdict(enum.Enum):
    """What an OffsetForLeaderEpoch answer means for one partition."""

    VALID = "valid"  # the log holds the position: fetch on
    TRUNCATED = "truncated"  # the log ends before the position
    UNDEFINED = "undefined"  # the leader knows no end offset for the epoch
    RETRY = "retry"  # leader moved, epoch fenced/unknown, ...: refresh and ask again
    FAILED = "failed"  # a non-retriable error (authorization, ...)


def judge(position: int, error_code: int, end_offset: int, end_epoch: int) -> Verdict:
    """Classify one partition of an OffsetForLeaderEpoch response (pure).

    Args:
        position: The consumer's position when the request was sent.
        error_code: The partition's error code.
        end_offset: The end offset the leader returned for the requested epoch.
        end_epoch: The largest epoch <= the requested one the leader knows.
    """
    if error_code:
        return Verdict.RETRY if for_code(error_code).retriable else Verdict.FAILED
    if end_offset < 0 or end_epoch < 0:
        return Verdict.UNDEFINED
    if end_offset < position:
        return Verdict.TRUNCATED
    return Verdict.VALID


class Check(NamedTuple):
    """One partition in an OffsetForLeaderEpoch request."""

    tp: TopicPartition
    state: PartitionState
    state_epoch: int
    position: int
    position_epoch: int
    current_leader_epoch: int


class PositionValidator:
    """Which partitions must be validated, the requests to do it, and their outcome.

    Args:
        subscriptions: The consumer's subscription state (positions are moved here).

    Attributes:
        requests_sent: OffsetForLeaderEpoch requests sent (for tests and metrics).
        truncations: Partitions found truncated.
    """

    def __init__(self, subscriptions: SubscriptionState) -> None:
        self._subs = subscriptions
        # tp -> (state, state.epoch, leader epoch) the position was last checked
        # under; another state object or epoch means the position was moved from
        # outside (seek, reset, reassignment).
        self._checked: dict[TopicPartition, tuple[PartitionState, int, int]] = {}
        # tp -> (state, state.epoch) when validation became necessary.
        self._pending: dict[TopicPartition, tuple[PartitionState, int]] = {}
        self.requests_sent = 0
        self.truncations = 0

    def needs_validation(
        self, tp: TopicPartition, state: PartitionState, leader_epoch: int
    ) -> bool:
        """Whether ``tp`` must be validated before it is fetched again.

        Args:
            tp: An assigned, fetchable partition.
            state: Its state.
            leader_epoch: The leader epoch the metadata has for it (-1 if unknown).
        """
        pending = self._pending.get(tp)
        if pending is not None:
            if pending == (state, state.epoch):
                return True
            del self._pending[tp]  # the user moved the position: judge it afresh
        seen = self._checked.get(tp)
        if seen is not None and seen[:2] == (state, state.epoch) and leader_epoch <= seen[2]:
            return False
        # New position, or the leader changed since the position was checked.
        if state.position_epoch is None or state.position_epoch < 0 or leader_epoch < 0:
            self._checked[tp] = (state, state.epoch, leader_epoch)
            return False
        self._pending[tp] = (state, state.epoch)
        return True

    def is_pending(self, tp: TopicPartition, state: PartitionState) -> bool:
        """``tp`` waits for validation (its fetched data must not be used)."""
        return self._pending.get(tp) == (state, state.epoch)

    def pending(self) -> list[TopicPartition]:
        """Partitions waiting for validation whose position did not move meanwhile."""
        out = []
        for tp, mark in list(self._pending.items()):
            state = self._subs.get(tp)
            if state is None or mark != (state, state.epoch):
                del self._pending[tp]
            else:
                out.append(tp)
        return out

    def retain(self, assigned: Collection[TopicPartition]) -> None:
        """Drop the bookkeeping of partitions no longer assigned (a partition assigned
        again gets a fresh state whose epochs must not match old entries)."""
        for table in (self._checked, self._pending):
            for tp in [tp for tp in table if tp not in assigned]:
                del table[tp]

    def skip(self, tps: Iterable[TopicPartition], cluster: ClusterMetadata) -> None:
        """Take the positions of ``tps`` as valid (the broker cannot validate them)."""
        for tp in tps:
            state = self._subs.get(tp)
            if state is not None and self._pending.get(tp) == (state, state.epoch):
                del self._pending[tp]
                self._checked[tp] = (state, state.epoch, cluster.leader_epoch(tp))

    # -- requests -----------------------------------------------------------------------

    async def validate(
        self, client: FetcherClient, tps: list[TopicPartition]
    ) -> tuple[dict[TopicPartition, KafkaError], bool]:
        """Ask the leaders of ``tps`` (in parallel) where their positions' epochs end
        and apply the answers.

        Returns:
            ``(errors, refresh)``: errors to raise per partition, and whether the
            metadata must be refreshed (unknown leaders, fenced epochs, failures)
            before the partitions still pending are asked again.
        """
        per_node, refresh = self.plan(tps, client.cluster)
        errors: dict[TopicPartition, KafkaError] = {}
        results = await asyncio.gather(
            *(self._validate_node(client, node, checks) for node, checks in per_node.items())
        )
        for node_errors, node_refresh in results:
            errors.update(node_errors)
            refresh = refresh or node_refresh
        return errors, refresh

    async def _validate_node(
        self, client: FetcherClient, node: int, checks: list[Check]
    ) -> tuple[dict[TopicPartition, KafkaError], bool]:
        try:
            try:
                version = await client.api_version(node, _oe.OffsetForLeaderEpochRequest.API_KEY)
            except UnsupportedVersionError:
                version = -1
            if version < MIN_VALIDATION_VERSION:
                # Brokers before 2.3 cannot validate a consumer's position: trust it.
                self.skip([c.tp for c in checks], client.cluster)
                return {}, False
            self.requests_sent += 1
            response = await client.send(node, self.request(checks), max_version=version)
        except KafkaError as exc:
            log.debug("OffsetForLeaderEpoch to node %s failed: %r", node, exc)
            if exc.retriable or exc.invalid_metadata:
                return {}, True
            return {c.tp: exc for c in checks}, False
        return self.on_response(checks, response)

    def plan(
        self, tps: Iterable[TopicPartition], cluster: ClusterMetadata
    ) -> tuple[dict[int, list[Check]], bool]:
        """Group the partitions to validate by leader.

        Returns:
            ``({leader: [Check, ...]}, leaderless)``: ``leaderless`` is true if some
            partition has no known leader (the metadata needs a refresh).
        """
        per_node: dict[int, list[Check]] = {}
        leaderless = False
        for tp in tps:
            state = self._subs.get(tp)
            if state is None or state.position is None or state.position_epoch is None:
                self.skip([tp], cluster)  # nothing to validate against
                continue
            leader = cluster.leader_for(tp)
            if leader is None:
                leaderless = True
                continue
            per_node.setdefault(leader, []).append(
                Check(
                    tp,
                    state,
                    state.epoch,
                    state.position,
                    state.position_epoch,
                    cluster.leader_epoch(tp),
                )
            )
        return per_node, leaderless

    @staticmethod
    def request(checks: list[Check]) -> _oe.OffsetForLeaderEpochRequest:
        """The OffsetForLeaderEpoch request for one broker's ``checks``."""
        topics: dict[str, list[_oe.OffsetForLeaderPartition]] = {}
        for c in checks:
            topics.setdefault(c.tp.topic, []).append(
                _oe.OffsetForLeaderPartition(
                    partition=c.tp.partition,
                    # The broker fences the request if it leads under another epoch.
                    current_leader_epoch=c.current_leader_epoch,
                    leader_epoch=c.position_epoch,
                )
            )
        return _oe.OffsetForLeaderEpochRequest(
            replica_id=_CONSUMER_REPLICA_ID,
            topics=[_oe.OffsetForLeaderTopic(topic=t, partitions=p) for t, p in topics.items()],
        )

    def on_response(
        self, checks: list[Check], response: _oe.OffsetForLeaderEpochResponse
    ) -> tuple[dict[TopicPartition, KafkaError], bool]:
        """Apply one broker's answer.

        Positions are moved (truncation with a reset policy) or reset here; partitions
        that must be asked again stay pending.

        Returns:
            ``(errors, refresh)``: errors to raise per partition (truncation with
            ``auto_offset_reset="none"``, authorization, ...), and whether the
            metadata should be refreshed before asking again.
        """
        by_tp = {c.tp: c for c in checks}
        answered: set[TopicPartition] = set()
        errors: dict[TopicPartition, KafkaError] = {}
        refresh = False
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.topic, p.partition)
                check = by_tp.get(tp)
                if check is None:
                    continue
                answered.add(tp)
                state = self._subs.get(tp)
                if state is not check.state or state.epoch != check.state_epoch:
                    continue  # moved or unassigned while we asked
                verdict = judge(check.position, p.error_code, p.end_offset, p.leader_epoch)
                if verdict is Verdict.RETRY:
                    log.debug("Validating %s: %r; retrying", tp, for_code(p.error_code)())
                    refresh = True
                    continue
                self._pending.pop(tp, None)
                if verdict is Verdict.VALID:
                    self._checked[tp] = (state, state.epoch, check.current_leader_epoch)
                elif verdict is Verdict.FAILED:
                    errors[tp] = for_code(p.error_code)(f"OffsetForLeaderEpoch {tp}")
                else:
                    error = self._truncated(check, p.end_offset, p.leader_epoch, verdict)
                    if error is not None:
                        errors[tp] = error
        if len(answered) < len(checks):
            refresh = True  # partitions the broker left out are asked again
        return errors, refresh

    def _truncated(
        self, check: Check, end_offset: int, end_epoch: int, verdict: Verdict
    ) -> KafkaError | None:
        tp = check.tp
        self.truncations += 1
        policy = self._subs.default_reset
        if verdict is Verdict.UNDEFINED:
            if policy == "none":
                return OffsetOutOfRangeError(
                    f"{tp}: the leader knows no end offset for leader epoch "
                    f"{check.position_epoch} of position {check.position}"
                )
            log.warning(
                "%s: the leader knows no end offset for leader epoch %d of position %d; "
                "resetting to %s",
                tp,
                check.position_epoch,
                check.position,
                policy,
            )
            self._subs.request_reset([tp])
            return None
        if policy == "none":
            return LogTruncationError(
                f"{tp}: the log was truncated to {end_offset} (leader epoch {end_epoch}) "
                f"below the position {check.position}",
                divergent_offsets={tp: end_offset},
            )
        log.warning(
            "%s: the log was truncated to %d (leader epoch %d) below the position %d; "
            "records from there on are read again",
            tp,
            end_offset,
            end_epoch,
            check.position,
        )
        self._subs.seek(tp, end_offset, end_epoch)
        state = self._subs.state(tp)
        self._checked[tp] = (state, state.epoch, check.current_leader_epoch)
        return None
