"""The pure parts of the classic group protocol (no I/O, no asyncio).

:mod:`aiokafka.consumer.group.classic` drives JoinGroup/SyncGroup/Heartbeat; the
decisions it takes that do not need the network live here so that unit tests can
check them directly:

* which rebalance protocol a member follows (:func:`select_rebalance_protocol`);
* the JoinGroup protocol list a member sends (:func:`join_protocols`);
* the leader's assignment (:func:`compute_assignment`);
* what a new assignment changes under each protocol (:func:`assignment_changes`);
* what to do with each error code of the group requests (:func:`error_action`),
  one table instead of ``if`` chains, following the Java client.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from aiokafka.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    IllegalGenerationError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    MemberIdRequired,
    NotCoordinatorError,
    RebalanceInProgressError,
    RequestTimedOutError,
    UnknownMemberIdError,
)
from aiokafka.structs import TopicPartition

from .assignors import (
    AbstractPartitionAssignor,
    Assignment,
    ClusterView,
    GroupMember,
    RebalanceProtocol,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

__all__ = [
    "NO_GENERATION",
    "AssignmentChanges",
    "ErrorAction",
    "Generation",
    "assignment_changes",
    "compute_assignment",
    "error_action",
    "join_protocols",
    "select_rebalance_protocol",
]


@dataclass(frozen=True, slots=True)
class Generation:
    """The member's place in the group: generation id, member id, chosen protocol.

    Attributes:
        generation_id: The group generation, -1 when the member has none.
        member_id: The id the coordinator gave the member ("" before the first join).
        protocol_name: The assignor the group chose, or ``None``.
    """

    generation_id: int = -1
    member_id: str = ""
    protocol_name: str | None = None

    @property
    def valid(self) -> bool:
        """The member joined and the generation was not reset since."""
        return self.generation_id >= 0 and bool(self.member_id)

    def without_generation(self) -> Generation:
        """Keep the member id, drop the generation (ILLEGAL_GENERATION, Java's
        ``resetGenerationOnResponseError`` keeps the member id)."""
        return Generation(-1, self.member_id, None)


#: No generation and no member id: the state before the first join.
NO_GENERATION = Generation()


def select_rebalance_protocol(assignors: Sequence[AbstractPartitionAssignor]) -> RebalanceProtocol:
    """The rebalance protocol a member follows, as the Java client picks it.

    Only protocols every configured assignor supports are candidates; of those the
    most advanced (highest id) wins. So ``["range", "cooperative-sticky"]`` is eager
    (range only knows EAGER), while ``["cooperative-sticky"]`` is cooperative.

    Raises:
        ValueError: no assignor, or no protocol all assignors support.
    """
    if not assignors:
        raise ValueError("partition_assignment_strategy: at least one assignor is needed")
    common = set(RebalanceProtocol)
    for assignor in assignors:
        common &= set(assignor.supported_protocols())
    if not common:
        raise ValueError(
            "partition_assignment_strategy: the assignors have no rebalance protocol in "
            f"common ({[a.name for a in assignors]})"
        )
    return max(common)


def join_protocols(
    assignors: Sequence[AbstractPartitionAssignor],
    topics: Iterable[str],
    owned: Collection[TopicPartition],
    generation_id: int,
    rack_id: str | None,
) -> list[tuple[str, bytes]]:
    """``(name, metadata)`` of every assignor, in the configured (preference) order.

    The subscription of each assignor gets the fields the coordinator owns: the
    partitions held now (empty for eager members, which revoked everything first),
    the generation they belong to and the client rack.
    """
    out: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    for assignor in assignors:
        if assignor.name in seen:
            continue  # the broker rejects duplicate protocol names
        seen.add(assignor.name)
        sub = assignor.metadata(sorted(set(topics)))
        sub = replace(
            sub,
            owned_partitions=tuple(sorted(owned)),
            generation_id=generation_id,
            rack_id=rack_id,
        )
        out.append((assignor.name, encode_subscription(sub)))
    return out


def compute_assignment(
    assignor: AbstractPartitionAssignor,
    cluster: ClusterView,
    members: Iterable[tuple[str, str | None, bytes]],
) -> tuple[dict[str, bytes], set[str]]:
    """The leader's SyncGroup assignments.

    Args:
        assignor: The assignor the group chose.
        cluster: Partition ids of the subscribed topics.
        members: ``(member_id, group_instance_id, metadata)`` from JoinGroup.

    Returns:
        ``({member_id: encoded assignment}, every topic some member subscribes to)``.
        Every member gets an entry (members the assignor left out get an empty one).
    """
    decoded: dict[str, GroupMember] = {}
    topics: set[str] = set()
    for member_id, instance_id, metadata in members:
        sub = decode_subscription(metadata)
        decoded[member_id] = GroupMember.from_subscription(member_id, sub, instance_id)
        topics.update(sub.topics)
    result = assignor.assign(cluster, decoded)
    encoded = {mid: encode_assignment(result.get(mid, Assignment())) for mid in decoded}
    return encoded, topics


@dataclass(frozen=True, slots=True)
class AssignmentChanges:
    """What installing a new assignment means for the listener.

    Attributes:
        revoked: Partitions to revoke now (cooperative: owned, not in the new
            assignment; eager: nothing, everything was revoked before JoinGroup).
        added: Partitions to pass to ``on_partitions_assigned``.
        rejoin: Another rebalance is needed (cooperative members that gave up
            partitions rejoin so the new owners get them, KIP-429).
    """

    revoked: frozenset[TopicPartition]
    added: frozenset[TopicPartition]
    rejoin: bool


def assignment_changes(
    protocol: RebalanceProtocol,
    owned: Collection[TopicPartition],
    assigned: Collection[TopicPartition],
) -> AssignmentChanges:
    """Compare the partitions owned with the new assignment (Java's onJoinComplete).

    Under EAGER the member owns nothing at this point, so every assigned partition is
    "added". Under COOPERATIVE only the difference moves: partitions kept are neither
    revoked nor re-announced.
    """
    new = frozenset(assigned)
    if protocol is RebalanceProtocol.EAGER:
        return AssignmentChanges(frozenset(), new, False)
    old = frozenset(owned)
    revoked = old - new
    return AssignmentChanges(revoked, new - old, bool(revoked))


class ErrorAction(enum.Enum):
    """What the membership does with an error of JoinGroup/SyncGroup/Heartbeat."""

    #: JoinGroup v4+ asked for the member id it returned: join again at once.
    MEMBER_ID_REQUIRED = "member_id_required"
    #: A rebalance started: join again (keeping member id and owned partitions).
    REJOIN = "rejoin"
    #: The member id is unknown: drop it and the generation, partitions are lost.
    RESET_MEMBER = "reset_member"
    #: The generation is stale: drop the generation (keep the member id), partitions
    #: are lost.
    RESET_GENERATION = "reset_generation"
    #: The coordinator moved or is down: find it again after a back-off.
    FIND_COORDINATOR = "find_coordinator"
    #: Transient (e.g. coordinator loading): retry after a back-off.
    RETRY = "retry"
    #: Cannot be fixed by retrying (authorization, fenced static member, bad config):
    #: raised to the application by the next getone/getmany.
    FATAL = "fatal"


def error_action(exc: BaseException) -> ErrorAction:
    """The action for ``exc`` (see :class:`ErrorAction`)."""
    if isinstance(exc, MemberIdRequired):
        return ErrorAction.MEMBER_ID_REQUIRED
    if isinstance(exc, RebalanceInProgressError):
        return ErrorAction.REJOIN
    if isinstance(exc, UnknownMemberIdError):
        return ErrorAction.RESET_MEMBER
    if isinstance(exc, IllegalGenerationError):
        return ErrorAction.RESET_GENERATION
    if isinstance(exc, FencedInstanceIdError):
        # Another instance with our group_instance_id took over: Java treats this
        # as fatal for this consumer.
        return ErrorAction.FATAL
    if isinstance(
        exc,
        NotCoordinatorError
        | CoordinatorNotAvailableError
        | KafkaConnectionError
        | KafkaTimeoutError
        | RequestTimedOutError,
    ):
        # No answer from the coordinator is treated like a lost connection to it
        # (Java marks the coordinator unknown after a disconnect or timeout).
        return ErrorAction.FIND_COORDINATOR
    if isinstance(exc, CoordinatorLoadInProgressError):
        return ErrorAction.RETRY
    if isinstance(exc, KafkaError) and exc.retriable:
        return ErrorAction.FIND_COORDINATOR if exc.invalid_metadata else ErrorAction.RETRY
    return ErrorAction.FATAL
