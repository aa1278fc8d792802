"""Immutable snapshots of cluster metadata.

The client replaces its :class:`ClusterMetadata` object on every refresh instead of
mutating it, so a reader (producer partitioner, fetcher) holding a snapshot sees one
consistent view of brokers, leaders and epochs. Building a snapshot from a
MetadataResponse and applying KIP-951 leader hints are pure functions (no I/O).

A snapshot also answers aiokafka 0.14's ``ClusterMetadata`` queries that user code
calls: ``brokers()`` and ``topics()`` (the ``brokers`` and ``topics`` mappings are
callable), ``broker_metadata``, ``leader_for_partition``, ``controller``,
``internal_topics``, ``unauthorized_topics`` (a set that may also be called),
``partitions_for_topic``, ``available_partitions_for_topic`` and
``partitions_for_broker``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from aiokafka.errors import for_code
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition

if TYPE_CHECKING:
    from aiokafka.protocol.messages import MetadataResponse

__all__ = ["BrokerMap", "ClusterMetadata", "TopicMap", "TopicMetadata", "TopicNames"]

_NO_LEADER = -1
_ZERO_UUID = uuid.UUID(int=0)
_EMPTY: Mapping[Any, Any] = MappingProxyType({})


def _error_name(code: int) -> str:
    return f"{code} {for_code(code).__name__}"


_K = TypeVar("_K")
_V = TypeVar("_V")


class _ReadOnlyDict(dict[_K, _V]):
    """A dict that refuses changes: snapshots are shared between readers.

    A dict (not a Mapping wrapper) so that lookups on the send path stay C calls.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is part of an immutable metadata snapshot")

    def __setitem__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def __delitem__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def __ior__(self, *args: Any, **kwargs: Any) -> NoReturn:  # type: ignore[misc]
        self._refuse()

    def clear(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def pop(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def popitem(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def setdefault(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def __reduce__(self) -> tuple[Any, ...]:
        # copy/pickle rebuild from a plain dict instead of setting items one by one.
        return (type(self), (dict(self),))


class BrokerMap(_ReadOnlyDict[int, BrokerMetadata]):
    """Live brokers by node id (read-only). Calling it, as aiokafka's
    ``cluster.brokers()``, gives the set of :class:`BrokerMetadata`."""

    __slots__ = ()

    def __call__(self) -> set[BrokerMetadata]:
        return set(self.values())


class TopicMap(_ReadOnlyDict[str, "TopicMetadata"]):
    """Topics by name (read-only), those that came back with an error included.
    Calling it, as aiokafka's ``cluster.topics(exclude_internal_topics=True)``,
    gives the names of the topics known without error."""

    __slots__ = ()

    def __call__(self, exclude_internal_topics: bool = True) -> set[str]:
        return {
            name
            for name, t in self.items()
            if not t.error_code and not (exclude_internal_topics and t.is_internal)
        }


class TopicNames(frozenset[str]):
    """A set of topic names that may also be called (returning itself as a plain
    frozenset), so ``"t" in cluster.unauthorized_topics`` (aiokafka's attribute)
    and ``cluster.unauthorized_topics()`` (ours) both work."""

    __slots__ = ()

    def __call__(self) -> frozenset[str]:
        return frozenset(self)


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """One topic in a snapshot.

    Attributes:
        name: Topic name.
        topic_id: The topic's UUID (zero UUID if the broker did not send one).
        is_internal: True for ``__consumer_offsets`` and the like.
        error_code: The topic-level error of the last response (0 if fine), e.g. 3
            (unknown topic) or 29 (not authorized).
        partitions: Partition metadata by partition index.
    """

    name: str
    topic_id: uuid.UUID = _ZERO_UUID
    is_internal: bool = False
    error_code: int = 0
    partitions: Mapping[int, PartitionMetadata] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """A consistent view of the cluster at one moment.

    Attributes:
        brokers: Live brokers by node id; ``brokers()`` is aiokafka's set of them.
        topics: Topics by name (including topics that came back with an error);
            ``topics()`` is aiokafka's set of names.
        cluster_id: The cluster id, if the broker sent one.
        controller_id: The node id the metadata names as controller, or ``None``.
        generation: Increases with every snapshot the client installs.
        created_at: ``time.monotonic()`` when the snapshot was built.
    """

    # Any Mapping is accepted and stored as the read-only, callable maps.
    brokers: BrokerMap = field(default_factory=BrokerMap)
    topics: TopicMap = field(default_factory=TopicMap)
    cluster_id: str | None = None
    controller_id: int | None = None
    generation: int = 0
    created_at: float = 0.0

    def __post_init__(self) -> None:
        # Frozen dataclass: object.__setattr__ is how a field is normalised once.
        if type(self.brokers) is not BrokerMap:
            object.__setattr__(self, "brokers", BrokerMap(self.brokers))
        if type(self.topics) is not TopicMap:
            object.__setattr__(self, "topics", TopicMap(self.topics))

    @classmethod
    def from_response(cls, response: MetadataResponse, generation: int = 0) -> ClusterMetadata:
        """Build a snapshot from a decoded ``MetadataResponse`` (any version)."""
        brokers = {
            b.node_id: BrokerMetadata(b.node_id, b.host, b.port, b.rack) for b in response.brokers
        }
        topics: dict[str, TopicMetadata] = {}
        for t in response.topics:
            if t.name is None:  # v10+ lookups by id may omit the name; nothing to key on
                continue
            parts = {
                p.partition_index: PartitionMetadata(
                    t.name,
                    p.partition_index,
                    p.leader_id,
                    tuple(p.replica_nodes),
                    tuple(p.isr_nodes),
                    p.error_code,
                    p.leader_epoch,
                    tuple(p.offline_replicas),
                )
                for p in t.partitions
            }
            topics[t.name] = TopicMetadata(
                t.name,
                getattr(t, "topic_id", _ZERO_UUID),
                bool(t.is_internal),
                t.error_code,
                MappingProxyType(parts),
            )
        controller = response.controller_id
        return cls(
            BrokerMap(brokers),
            TopicMap(topics),
            response.cluster_id,
            controller if controller >= 0 else None,
            generation,
            time.monotonic(),
        )

    # -- queries ------------------------------------------------------------------------

    def age(self) -> float:
        """Seconds since this snapshot was built."""
        return time.monotonic() - self.created_at

    def broker(self, node_id: int) -> BrokerMetadata | None:
        """The broker with ``node_id``, if listed."""
        return self.brokers.get(node_id)

    def partition(self, tp: TopicPartition) -> PartitionMetadata | None:
        """Metadata of one partition, if known."""
        topic = self.topics.get(tp.topic)
        return None if topic is None else topic.partitions.get(tp.partition)

    def leader_for(self, tp: TopicPartition) -> int | None:
        """The leader's node id, or ``None`` if unknown or leaderless."""
        p = self.partition(tp)
        if p is None or p.leader == _NO_LEADER:
            return None
        return p.leader

    def sendable_leader(self, tp: TopicPartition) -> int | None:
        """The leader's node id if this snapshot also lists that broker (so a
        connection can be made to it), else ``None``.

        A response may name a leader that is not among its brokers (a broker that is
        starting or leaving, or a mangled answer): to a sender that leader is as
        unknown as none at all. :meth:`leader_problem` says which case it is.
        """
        p = self.partition(tp)
        if p is None or p.leader == _NO_LEADER or p.leader not in self.brokers:
            return None
        return p.leader

    def leader_problem(self, tp: TopicPartition) -> str | None:
        """Why records for ``tp`` cannot be sent with this snapshot, in words for an
        error message or a log line; ``None`` if :meth:`sendable_leader` has a node."""
        name = f"{tp.topic}-{tp.partition}"
        topic = self.topics.get(tp.topic)
        if topic is None:
            return f"{name}: topic {tp.topic!r} is not in the cluster metadata"
        p = topic.partitions.get(tp.partition)
        if p is None:
            detail = f" (topic error {_error_name(topic.error_code)})" if topic.error_code else ""
            return f"{name} is not in the cluster metadata{detail}"
        if p.leader == _NO_LEADER:
            detail = f" (partition error {_error_name(p.error)})" if p.error else ""
            return f"{name} has no leader in the cluster metadata{detail}"
        if p.leader not in self.brokers:
            return (
                f"leader {p.leader} of {name} is not among the brokers in metadata "
                f"({', '.join(map(str, sorted(self.brokers))) or 'none'})"
            )
        return None

    def leader_epoch(self, tp: TopicPartition) -> int:
        """The partition's leader epoch, or -1 if unknown."""
        p = self.partition(tp)
        return -1 if p is None else p.leader_epoch

    def partitions_for_topic(self, topic: str) -> frozenset[int] | None:
        """All partition indexes of ``topic``, or ``None`` if the topic is unknown."""
        t = self.topics.get(topic)
        if t is None or (t.error_code and not t.partitions):
            return None
        return frozenset(t.partitions)

    def available_partitions_for_topic(self, topic: str) -> frozenset[int] | None:
        """Partitions of ``topic`` that currently have a leader listed among the
        brokers (see :meth:`sendable_leader`): where a partitioner may put a keyless
        record."""
        t = self.topics.get(topic)
        if t is None or (t.error_code and not t.partitions):
            return None
        brokers = self.brokers
        return frozenset(
            i for i, p in t.partitions.items() if p.leader != _NO_LEADER and p.leader in brokers
        )

    def partitions_for_broker(self, broker_id: int) -> frozenset[TopicPartition]:
        """Partitions led by ``broker_id`` (empty if none; aiokafka gave ``None``)."""
        return frozenset(
            TopicPartition(name, i)
            for name, t in self.topics.items()
            for i, p in t.partitions.items()
            if p.leader == broker_id
        )

    def topic_error(self, topic: str) -> int | None:
        """The topic-level error code of the last response (``None`` if not asked)."""
        t = self.topics.get(topic)
        return None if t is None else t.error_code

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """The topic's id, or ``None`` if unknown (or the broker sent none)."""
        t = self.topics.get(topic)
        if t is None or t.topic_id == _ZERO_UUID:
            return None
        return t.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """Reverse of :meth:`topic_id`."""
        for name, t in self.topics.items():
            if t.topic_id == topic_id:
                return name
        return None

    @property
    def unauthorized_topics(self) -> TopicNames:
        """Topics the last response refused with TOPIC_AUTHORIZATION_FAILED (29): a
        set, as aiokafka's attribute, that may also be called."""
        return TopicNames(n for n, t in self.topics.items() if t.error_code == 29)

    # -- aiokafka 0.14's ClusterMetadata queries ----------------------------------------

    @property
    def controller(self) -> BrokerMetadata | None:
        """The controller's :class:`BrokerMetadata` (aiokafka's attribute), or
        ``None`` if unknown or not among the brokers."""
        return None if self.controller_id is None else self.brokers.get(self.controller_id)

    @property
    def internal_topics(self) -> frozenset[str]:
        """Names of the internal topics known (``__consumer_offsets``, ...)."""
        return frozenset(n for n, t in self.topics.items() if t.is_internal)

    def broker_metadata(self, broker_id: int) -> BrokerMetadata | None:
        """The broker with ``broker_id``, or ``None`` (aiokafka's name for
        :meth:`broker`)."""
        return self.brokers.get(broker_id)

    def leader_for_partition(self, partition: TopicPartition) -> int | None:
        """The leader's node id as aiokafka answered it: -1 for a partition without
        a leader, ``None`` for an unknown partition (see :meth:`leader_for`)."""
        p = self.partition(partition)
        return None if p is None else p.leader

    def is_bootstrap(self, node_id: object) -> bool:
        """Whether ``node_id`` names a bootstrap address (``"bootstrap-0"``...)
        rather than a broker id."""
        return not isinstance(node_id, int)

    # -- derived snapshots --------------------------------------------------------------

    def with_leader(
        self,
        tp: TopicPartition,
        leader_id: int,
        leader_epoch: int,
        endpoints: Iterable[BrokerMetadata] = (),
        generation: int | None = None,
    ) -> ClusterMetadata | None:
        """Apply a KIP-951 leader hint (``CurrentLeader`` + ``NodeEndpoints`` of a
        Produce/Fetch response).

        Returns:
            A new snapshot with the partition's leader and epoch replaced (and the
            endpoints added to the brokers), or ``None`` when the hint is not newer
            than what this snapshot knows (epoch not greater), the partition is
            unknown, or the new leader has no known endpoint.
        """
        current = self.partition(tp)
        if current is None or leader_id < 0 or leader_epoch <= current.leader_epoch:
            return None
        brokers = dict(self.brokers)
        for b in endpoints:
            brokers[int(b.nodeId)] = b
        if leader_id not in brokers:
            return None
        topic = self.topics[tp.topic]
        parts = dict(topic.partitions)
        parts[tp.partition] = current._replace(leader=leader_id, leader_epoch=leader_epoch)
        topics = dict(self.topics)
        topics[tp.topic] = replace(topic, partitions=MappingProxyType(parts))
        return replace(
            self,
            brokers=BrokerMap(brokers),
            topics=TopicMap(topics),
            generation=self.generation if generation is None else generation,
        )
