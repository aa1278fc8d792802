"""The balancing algorithm behind the ``sticky`` and ``cooperative-sticky`` assignors.

Goals, in order (KIP-54, as in Java's AbstractStickyAssignor):

1. Balance: when no partition can move from a member to another member with at
   least two fewer partitions that also subscribes to its topic, the assignment is
   balanced. With identical subscriptions this means counts differ by at most one.
2. Stickiness: keep as many partitions as possible with their previous owner.

Steps:

1. :func:`resolve_ownership` decides who owned what before this rebalance. Members
   may disagree (a member that missed a rebalance still reports its old partitions):
   the claim with the highest generation wins; two claims in the same highest
   generation cancel each other out (Java logs "Found multiple consumers ... claiming
   the same TopicPartition" and drops both); claims on topics that are gone or no
   longer subscribed by the claimant are ignored. A member whose claim lost to a
   newer one is remembered as the partition's previous owner.
2. Partitions nobody owns go, fewest-candidates first, to the subscribed member with
   the fewest partitions (ties: Java member order). With identical subscriptions and
   no previous owners this deals partitions round robin, as Java does.
3. While some member has at least two more partitions than a member that could take
   one of them, move partitions from the most loaded such member to the least
   loaded one. Each move strictly lowers the sum of squared member counts, so the
   loop ends. Partitions the giver received in step 2 or 3 move first, then ones
   whose previous owner is the taker, so that partitions stay where they were.
   A batch of several moves never takes the giver below the next most loaded
   member or the taker above the next least loaded one, so batching gives the same
   counts as single moves; with identical subscriptions the number of partitions
   that change owner is then the minimum any balanced assignment needs (the unit
   tests check this against the computed lower bound).
"""

from __future__ import annotations

import heapq
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiokafka.structs import TopicPartition

from .types import java_string_key

__all__ = ["MemberClaim", "OwnershipResult", "balance", "resolve_ownership", "sticky_assign"]

log = logging.getLogger(__name__)

_NO_GENERATION = -1


@dataclass(frozen=True, slots=True)
class MemberClaim:
    """What one member brings to a sticky rebalance.

    Attributes:
        topics: Topics the member subscribes to.
        owned: Partitions the member says it owned before this rebalance.
        generation: Generation of ``owned``, or ``None`` if the member did not say.
    """

    topics: frozenset[str]
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None


@dataclass(frozen=True, slots=True)
class OwnershipResult:
    """Outcome of :func:`resolve_ownership`.

    Attributes:
        owner: The valid previous owner of each claimed partition.
        previous_owner: For partitions with an older, losing claim, that claimant.
    """

    owner: dict[TopicPartition, str]
    previous_owner: dict[TopicPartition, str]


def _partition_key(tp: TopicPartition) -> tuple[bytes, int]:
    return (java_string_key(tp.topic), tp.partition)


def resolve_ownership(
    partitions: Mapping[str, Sequence[int]],
    claims: Mapping[str, MemberClaim],
    order: Sequence[str],
) -> OwnershipResult:
    """Decide the valid previous owner of each partition (step 1 of the module doc).

    Args:
        partitions: Existing partition ids by topic.
        claims: Each member's claim by member id.
        order: Member ids in Java member order (used only to make logs stable).
    """
    existing = {topic: frozenset(parts) for topic, parts in partitions.items()}
    by_partition: defaultdict[TopicPartition, list[tuple[int, str]]] = defaultdict(list)
    for member_id in order:
        claim = claims[member_id]
        generation = _NO_GENERATION if claim.generation is None else claim.generation
        for tp in set(claim.owned):
            if tp.topic in claim.topics and tp.partition in existing.get(tp.topic, ()):
                by_partition[tp].append((generation, member_id))

    owner: dict[TopicPartition, str] = {}
    previous_owner: dict[TopicPartition, str] = {}
    for tp, claimants in by_partition.items():
        claimants.sort(key=lambda c: -c[0])  # stable: keeps member order within a generation
        top_generation = claimants[0][0]
        winners = [m for g, m in claimants if g == top_generation]
        if len(winners) > 1:
            log.error(
                "Members %s all claim %s in generation %d; the claims are dropped",
                winners,
                tp,
                top_generation,
            )
        else:
            owner[tp] = winners[0]
        older = [m for g, m in claimants if g < top_generation]
        if older:
            previous_owner[tp] = older[0]
    return OwnershipResult(owner, previous_owner)


def sticky_assign(
    partitions: Mapping[str, Sequence[int]],
    claims: Mapping[str, MemberClaim],
    order: Sequence[str],
) -> dict[str, list[TopicPartition]]:
    """Balanced, sticky assignment of ``partitions`` to the members of ``claims``.

    Args:
        partitions: Existing partition ids of every topic some member subscribes to.
        claims: Each member's subscription and previously owned partitions.
        order: All member ids in Java member order (tie-breaks).

    Returns:
        The partitions of every member id, sorted.
    """
    ownership = resolve_ownership(partitions, claims, order)
    subscribers: dict[str, list[str]] = {
        topic: [m for m in order if topic in claims[m].topics] for topic in partitions
    }
    assignment: dict[str, set[TopicPartition]] = {m: set() for m in order}
    for tp, member_id in ownership.owner.items():
        assignment[member_id].add(tp)
    kept = {m: frozenset(tps) for m, tps in assignment.items()}

    _assign_unowned(partitions, subscribers, assignment, order, set(ownership.owner))
    balance(claims, assignment, order, kept, ownership.previous_owner)
    return {m: sorted(tps, key=_partition_key) for m, tps in assignment.items()}


def _assign_unowned(
    partitions: Mapping[str, Sequence[int]],
    subscribers: Mapping[str, list[str]],
    assignment: dict[str, set[TopicPartition]],
    order: Sequence[str],
    owned: set[TopicPartition],
) -> None:
    rank = {m: i for i, m in enumerate(order)}
    unowned = [
        TopicPartition(topic, p)
        for topic, parts in partitions.items()
        if subscribers[topic]
        for p in parts
        if TopicPartition(topic, p) not in owned
    ]
    unowned.sort(key=lambda tp: (len(subscribers[tp.topic]), *_partition_key(tp)))
    # One lazy min-heap of (count, rank, member) per distinct subscriber list. Counts
    # only grow in this phase, so an entry whose count is stale is re-pushed with the
    # current count when it surfaces.
    heaps: dict[tuple[str, ...], list[tuple[int, int, str]]] = {}
    for tp in unowned:
        key = tuple(subscribers[tp.topic])
        heap = heaps.get(key)
        if heap is None:
            heap = [(len(assignment[m]), rank[m], m) for m in key]
            heapq.heapify(heap)
            heaps[key] = heap
        while True:
            count, r, member_id = heap[0]
            current = len(assignment[member_id])
            if count == current:
                break
            heapq.heapreplace(heap, (current, r, member_id))
        assignment[member_id].add(tp)
        heapq.heapreplace(heap, (count + 1, r, member_id))


def balance(
    claims: Mapping[str, MemberClaim],
    assignment: dict[str, set[TopicPartition]],
    order: Sequence[str],
    kept: Mapping[str, frozenset[TopicPartition]],
    previous_owner: Mapping[TopicPartition, str],
) -> int:
    """Move partitions until balanced (step 3 of the module doc); returns moves made."""
    rank = {m: i for i, m in enumerate(order)}
    moves = 0
    while True:
        lights = sorted(order, key=lambda m: (len(assignment[m]), rank[m]))
        heavies = sorted(order, key=lambda m: (-len(assignment[m]), rank[m]))
        batch = _find_move(claims, assignment, lights, heavies)
        if batch is None:
            return moves
        giver, taker, candidates = batch
        h, low = len(assignment[giver]), len(assignment[taker])
        # Second most / least loaded counts bound the batch (see module docstring).
        h2 = max((len(assignment[m]) for m in order if m != giver), default=low)
        l2 = min((len(assignment[m]) for m in order if m != taker), default=h)
        k = max(1, min((h - low) // 2, h - h2, l2 - low, len(candidates)))
        k = min(k, len(candidates))
        candidates.sort(
            key=lambda tp: (
                tp in kept[giver],
                previous_owner.get(tp) != taker,
                tp not in kept[taker],
                _partition_key(tp),
            )
        )
        for tp in candidates[:k]:
            assignment[giver].remove(tp)
            assignment[taker].add(tp)
        moves += k


def _find_move(
    claims: Mapping[str, MemberClaim],
    assignment: Mapping[str, set[TopicPartition]],
    lights: Sequence[str],
    heavies: Sequence[str],
) -> tuple[str, str, list[TopicPartition]] | None:
    for taker in lights:
        low = len(assignment[taker])
        topics = claims[taker].topics
        for giver in heavies:
            if len(assignment[giver]) < low + 2:
                break
            candidates = [tp for tp in assignment[giver] if tp.topic in topics]
            if candidates:
                return giver, taker, candidates
    return None
