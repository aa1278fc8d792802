"""Typed results of the admin client's operations (immutable dataclasses).

aiokafka 0.14 returned raw protocol responses, dicts and tuples. Every typed result
here also answers the aiokafka shape of the same call, so code written for aiokafka
runs unchanged (``docs/migration-from-aiokafka.md`` has the table):

* ``create_topics(...)`` returns :class:`TopicCreationResults` (a dict by topic name)
  with aiokafka's ``.topic_errors`` list of ``(topic, error_code, error_message)``.
* ``describe_topics()`` items (:class:`TopicDescription`) and ``describe_cluster()``
  (:class:`ClusterDescription`) are subscriptable with aiokafka's dict keys
  (``t["topic"]``, ``t["partitions"]``, ``c["controller_id"]``, ...).
* ``describe_configs(...)`` items answer ``.resources`` and
  ``describe_consumer_groups(...)`` items answer ``.groups`` with aiokafka's response
  tuples (one resource or group per item).
* ``list_consumer_groups()`` items are ``(group_id, protocol_type)`` pairs with
  ``state`` and ``group_type`` as extra attributes.
"""

from __future__ import annotations

import uuid
from collections.abc import KeysView
from dataclasses import dataclass, field
from typing import Any

from aiokafka.admin.acl_types import AclOperation
from aiokafka.admin.scram import ScramMechanism
from aiokafka.admin.types import ConfigResourceType, ConfigSource, ConfigType
from aiokafka.errors import KafkaError
from aiokafka.structs import BrokerMetadata, TopicPartition

__all__ = [
    "ClusterDescription",
    "ConfigAlterationResult",
    "ConfigDescription",
    "ConfigEntry",
    "ConfigSynonym",
    "ConsumerGroupListing",
    "FeatureMetadata",
    "GroupDescription",
    "GroupOffsetDescription",
    "ListOffsetsResultInfo",
    "LogDirDescription",
    "MemberDescription",
    "PartitionCreationResult",
    "PartitionDescription",
    "PartitionReassignment",
    "ProducerStateInfo",
    "ReplicaInfo",
    "ScramCredentialInfo",
    "TopicCreationResult",
    "TopicCreationResults",
    "TopicDeletionResult",
    "TopicDescription",
    "TransactionDescription",
    "TransactionListing",
]


# Kafka sends INT32_MIN as authorized operations when they were not requested.
_OPS_NOT_REQUESTED = -(2**31)


def _ops_bits(ops: frozenset[AclOperation] | None) -> int:
    if ops is None:
        return _OPS_NOT_REQUESTED
    return sum(1 << int(op) for op in ops)


def _error_code(error: KafkaError | None) -> int:
    if error is None:
        return 0
    return error.errno if error.errno is not None else -1


class _DictKeys:
    """aiokafka's dict keys on a typed result: ``result["key"]``, ``.keys()``, ``.get()``.

    Only lookups by key; iteration and equality stay the dataclass's.
    """

    def _legacy(self) -> dict[str, Any]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self._legacy()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._legacy()

    def keys(self) -> KeysView[str]:
        """aiokafka's dict keys (``dict(result)`` gives aiokafka's dict)."""
        return self._legacy().keys()

    def get(self, key: str, default: Any = None) -> Any:
        """``result[key]``, or ``default`` for a key aiokafka's dict does not have."""
        return self._legacy().get(key, default)


@dataclass(frozen=True)
class TopicCreationResult:
    """What the broker created (or, with ``validate_only``, would create).

    Attributes:
        name: Topic name.
        topic_id: The new topic's id (zero UUID for ``validate_only``).
        num_partitions: Partition count (-1 if the broker did not say).
        replication_factor: Replication factor (-1 if the broker did not say).
        configs: The topic's effective configs (CreateTopics v5+), name -> value.
    """

    name: str
    topic_id: uuid.UUID
    num_partitions: int
    replication_factor: int
    configs: dict[str, str | None] = field(default_factory=dict)


class TopicCreationResults(dict[str, TopicCreationResult]):
    """What ``create_topics`` returns: topic name -> :class:`TopicCreationResult`.

    Failures raise (see ``create_topics``), so every topic here was created.
    """

    @property
    def topic_errors(self) -> list[tuple[str, int, str | None]]:
        """aiokafka's ``CreateTopicsResponse.topic_errors``: ``(topic, 0, None)`` each."""
        return [(name, 0, None) for name in self]


@dataclass(frozen=True)
class TopicDeletionResult:
    """What ``delete_topics`` returns: the deleted topics, in order (a failure
    raises). ``.topic_error_codes`` answers aiokafka's ``DeleteTopicsResponse``."""

    topics: list[str]

    @property
    def topic_error_codes(self) -> list[tuple[str, int]]:
        """``(topic, 0)`` per deleted topic, as aiokafka's response listed them."""
        return [(t, 0) for t in self.topics]


@dataclass(frozen=True)
class PartitionCreationResult:
    """What ``create_partitions`` returns: the topics that grew (or, with
    ``validate_only``, would), in order; a failure raises. ``.topic_errors``
    answers aiokafka's ``CreatePartitionsResponse``."""

    topics: list[str]

    @property
    def topic_errors(self) -> list[tuple[str, int, str | None]]:
        """``(topic, 0, None)`` per topic, as aiokafka's response listed them."""
        return [(t, 0, None) for t in self.topics]


@dataclass(frozen=True)
class ConfigAlterationResult:
    """One altered resource, an item of what ``alter_configs`` returns (a failure
    raises). ``.resources`` answers aiokafka's ``AlterConfigsResponse``."""

    resource_type: ConfigResourceType
    name: str

    @property
    def resources(self) -> list[tuple[int, str | None, int, str]]:
        """``[(0, None, resource_type, resource_name)]`` as aiokafka listed it."""
        return [(0, None, int(self.resource_type), self.name)]


@dataclass(frozen=True)
class PartitionDescription(_DictKeys):
    """One partition of a described topic; also aiokafka's dict keys (``p["leader"]``)."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]

    def _legacy(self) -> dict[str, Any]:
        return {
            "error_code": 0,
            "partition": self.partition,
            "leader": self.leader,
            "replicas": list(self.replicas),
            "isr": list(self.isr),
            "offline_replicas": list(self.offline_replicas),
        }


@dataclass(frozen=True)
class TopicDescription(_DictKeys):
    """A topic as described by the cluster metadata.

    Also subscriptable with aiokafka's keys: ``t["topic"]``, ``t["is_internal"]``,
    ``t["error_code"]`` (0: a failure raises) and ``t["partitions"]`` (a list of
    dicts with ``partition``, ``leader``, ``replicas``, ``isr``, ...).

    Attributes:
        authorized_operations: What the caller may do with the topic, or ``None``
            when not requested.
    """

    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: list[PartitionDescription]
    authorized_operations: frozenset[AclOperation] | None = None

    def _legacy(self) -> dict[str, Any]:
        return {
            "error_code": 0,
            "topic": self.name,
            "is_internal": self.is_internal,
            "partitions": [p._legacy() for p in self.partitions],
        }


@dataclass(frozen=True)
class ClusterDescription(_DictKeys):
    """The cluster: id, controller (``None`` if unknown) and brokers.

    Also subscriptable with aiokafka's keys: ``c["cluster_id"]``,
    ``c["controller_id"]`` (-1 if unknown) and ``c["brokers"]`` (dicts with
    ``node_id``, ``host``, ``port``, ``rack``).
    """

    cluster_id: str | None
    controller_id: int | None
    brokers: list[BrokerMetadata]
    authorized_operations: frozenset[AclOperation] | None = None

    def _legacy(self) -> dict[str, Any]:
        return {
            "throttle_time_ms": 0,
            "brokers": [
                {"node_id": b.nodeId, "host": b.host, "port": b.port, "rack": b.rack}
                for b in self.brokers
            ],
            "cluster_id": self.cluster_id,
            "controller_id": -1 if self.controller_id is None else self.controller_id,
        }


@dataclass(frozen=True)
class ConfigSynonym:
    """A lower-precedence value of a config (``include_synonyms=True``)."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One config of a described resource.

    Attributes:
        value: The value (``None`` for sensitive configs).
        config_type: The value type, ``UNKNOWN`` if not reported.
        documentation: Text, when ``include_documentation=True``.
    """

    name: str
    value: str | None
    read_only: bool
    is_default: bool
    source: ConfigSource
    is_sensitive: bool
    synonyms: list[ConfigSynonym] = field(default_factory=list)
    config_type: ConfigType = ConfigType.UNKNOWN
    documentation: str | None = None


@dataclass(frozen=True)
class ConfigDescription:
    """The configs of one resource, by name.

    ``.resources`` is aiokafka's ``DescribeConfigsResponse.resources`` for this one
    resource.
    """

    resource_type: ConfigResourceType
    name: str
    configs: dict[str, ConfigEntry]

    @property
    def resources(self) -> list[tuple[Any, ...]]:
        """``[(error_code, error_message, resource_type, resource_name, entries)]``
        as aiokafka returned it; each entry is ``(name, value, read_only,
        config_source, is_sensitive, [(synonym_name, value, source), ...])``."""
        entries = [
            (
                e.name,
                e.value,
                e.read_only,
                int(e.source),
                e.is_sensitive,
                [(s.name, s.value, int(s.source)) for s in e.synonyms],
            )
            for e in self.configs.values()
        ]
        return [(0, "", int(self.resource_type), self.name, entries)]


class ConsumerGroupListing(tuple[str, str]):
    """A group from ``list_consumer_groups``: the pair ``(group_id, protocol_type)``
    as in aiokafka, with the newer fields as attributes.

    Attributes:
        group_id: The group.
        protocol_type: ``"consumer"`` for consumer groups, ``""`` for groups that
            only store offsets.
        state: e.g. ``"Stable"``, ``"Empty"`` (ListGroups v4+, else ``None``).
        group_type: ``"classic"``, ``"consumer"``, ``"share"`` (v5+, else ``None``).
    """

    state: str | None
    group_type: str | None

    def __new__(
        cls,
        group_id: str,
        protocol_type: str,
        state: str | None = None,
        group_type: str | None = None,
    ) -> ConsumerGroupListing:
        self = super().__new__(cls, (group_id, protocol_type))
        self.state = state
        self.group_type = group_type
        return self

    @property
    def group_id(self) -> str:
        """The group id (``listing[0]``)."""
        return self[0]

    @property
    def protocol_type(self) -> str:
        """The protocol type (``listing[1]``)."""
        return self[1]

    def __repr__(self) -> str:
        return (
            f"ConsumerGroupListing(group_id={self[0]!r}, protocol_type={self[1]!r}, "
            f"state={self.state!r}, group_type={self.group_type!r})"
        )

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (self[0], self[1], self.state, self.group_type)


@dataclass(frozen=True)
class MemberDescription:
    """A member of a described group.

    Attributes:
        assignment: The member's partitions, decoded when the group uses the
            ``consumer`` protocol (empty otherwise; see ``member_assignment``).
        member_metadata: Raw protocol metadata (subscription) bytes.
        member_assignment: Raw assignment bytes.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: list[TopicPartition]
    member_metadata: bytes = b""
    member_assignment: bytes = b""


@dataclass(frozen=True)
class GroupDescription:
    """A described group; ``error`` is set (and the rest empty) when the broker
    could not describe it, e.g. ``GroupAuthorizationFailedError``.

    Attributes:
        state: ``"Stable"``, ``"Empty"``, ``"Dead"`` (also for a group that does not
            exist), ...
        protocol: The chosen assignor (e.g. ``"range"``).
    """

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberDescription]
    coordinator: int | None = None
    authorized_operations: frozenset[AclOperation] | None = None
    error: KafkaError | None = None

    @property
    def groups(self) -> list[tuple[Any, ...]]:
        """aiokafka's ``DescribeGroupsResponse.groups`` for this one group:
        ``[(error_code, group, state, protocol_type, protocol, members,
        authorized_operations)]``, each member ``(member_id, client_id,
        client_host, member_metadata, member_assignment)``."""
        members = [
            (m.member_id, m.client_id, m.client_host, m.member_metadata, m.member_assignment)
            for m in self.members
        ]
        return [
            (
                _error_code(self.error),
                self.group_id,
                self.state,
                self.protocol_type,
                self.protocol,
                members,
                _ops_bits(self.authorized_operations),
            )
        ]


@dataclass(frozen=True)
class GroupOffsetDescription:
    """A group's position in one partition.

    Attributes:
        committed_offset: The committed offset, -1 if none.
        log_end_offset: The partition's high watermark.
        lag: ``log_end_offset - committed_offset``, or ``None`` without a commit.
    """

    committed_offset: int
    metadata: str
    leader_epoch: int | None
    log_end_offset: int
    lag: int | None


@dataclass(frozen=True)
class ListOffsetsResultInfo:
    """An offset found by ``list_offsets``: the offset, the timestamp of that record
    (-1 when the lookup was not by time) and its leader epoch (``None`` if unknown).
    An offset of -1 means no record matched the timestamp."""

    offset: int
    timestamp: int
    leader_epoch: int | None


@dataclass(frozen=True)
class ReplicaInfo:
    """A replica in a log directory (``describe_log_dirs``)."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True)
class LogDirDescription:
    """One log directory of a broker.

    Attributes:
        error: e.g. ``KafkaStorageError`` for an offline directory, else ``None``.
        total_bytes: Volume size (-1 if the broker did not say).
        usable_bytes: Free space (-1 if the broker did not say).
    """

    path: str
    error: KafkaError | None
    replicas: dict[TopicPartition, ReplicaInfo]
    total_bytes: int = -1
    usable_bytes: int = -1


@dataclass(frozen=True)
class PartitionReassignment:
    """An ongoing reassignment: the full replica set and what moves."""

    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]


@dataclass(frozen=True)
class ProducerStateInfo:
    """An active producer on a partition (``describe_producers``)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int


@dataclass(frozen=True)
class TransactionListing:
    """A transaction from ``list_transactions``."""

    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionDescription:
    """A described transaction.

    Attributes:
        start_time_ms: Start of the ongoing transaction, -1 if none.
        partitions: Partitions in the ongoing transaction.
    """

    transactional_id: str
    coordinator: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int
    partitions: list[TopicPartition]


@dataclass(frozen=True)
class ScramCredentialInfo:
    """A user's SCRAM credential (the secret itself is never returned)."""

    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True)
class FeatureMetadata:
    """Feature flags (KIP-584) from an ApiVersions response.

    Attributes:
        supported: What the broker can run: name -> (min_version, max_version).
        finalized: What the cluster runs: name -> (min_level, max_level).
        finalized_epoch: Epoch of the finalized features, -1 if unknown.
    """

    supported: dict[str, tuple[int, int]]
    finalized: dict[str, tuple[int, int]]
    finalized_epoch: int
