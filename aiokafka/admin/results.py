"""Typed results of the admin client's operations (immutable dataclasses).

Where aiokafka returned tuples (``list_consumer_groups``) the result is a
``NamedTuple`` whose leading fields are aiokafka's, so unpacking keeps working.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import NamedTuple

from aiokafka.admin.acl_types import AclOperation
from aiokafka.admin.scram import ScramMechanism
from aiokafka.admin.types import ConfigResourceType, ConfigSource, ConfigType
from aiokafka.errors import KafkaError
from aiokafka.structs import BrokerMetadata, TopicPartition

__all__ = [
    "ClusterDescription",
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
    "PartitionDescription",
    "PartitionReassignment",
    "ProducerStateInfo",
    "ReplicaInfo",
    "ScramCredentialInfo",
    "TopicCreationResult",
    "TopicDescription",
    "TransactionDescription",
    "TransactionListing",
]


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


@dataclass(frozen=True)
class PartitionDescription:
    """One partition of a described topic."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]


@dataclass(frozen=True)
class TopicDescription:
    """A topic as described by the cluster metadata.

    Attributes:
        authorized_operations: What the caller may do with the topic, or ``None``
            when not requested.
    """

    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: list[PartitionDescription]
    authorized_operations: frozenset[AclOperation] | None = None


@dataclass(frozen=True)
class ClusterDescription:
    """The cluster: id, controller (``None`` if unknown) and brokers."""

    cluster_id: str | None
    controller_id: int | None
    brokers: list[BrokerMetadata]
    authorized_operations: frozenset[AclOperation] | None = None


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
    """The configs of one resource, by name."""

    resource_type: ConfigResourceType
    name: str
    configs: dict[str, ConfigEntry]


class ConsumerGroupListing(NamedTuple):
    """A group from ``list_consumer_groups``: ``(group_id, protocol_type, ...)``.

    Attributes:
        state: e.g. ``"Stable"``, ``"Empty"`` (ListGroups v4+, else ``None``).
        group_type: ``"classic"``, ``"consumer"``, ``"share"`` (v5+, else ``None``).
    """

    group_id: str
    protocol_type: str
    state: str | None = None
    group_type: str | None = None


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
