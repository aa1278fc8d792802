"""Typed results of the admin client's operations (immutable dataclasses).

aiokafka 0.14 returned raw protocol responses, dicts and tuples. Every typed result
here also answers the aiokafka shape of the same call, so code written for aiokafka
runs unchanged (``docs/migration-from-aiokafka.md`` has the table):

* ``create_topics(...)`` returns :class:`TopicCreationResults` (a dict by topic name)
  with aiokafka's ``.topic_errors`` list of ``(topic, error_code, error_message)``;
  it, ``delete_topics``' and ``create_partitions``' results also answer the
  response's ``to_object()`` dict.
* ``describe_topics()`` items (:class:`TopicDescription`) and ``describe_cluster()``
  (:class:`ClusterDescription`) are subscriptable with aiokafka's dict keys
  (``t["topic"]``, ``t["partitions"]``, ``c["controller_id"]``, ...).
* ``describe_configs(...)`` and ``alter_configs(...)`` items answer ``.resources``
  and ``describe_consumer_groups(...)`` items answer ``.groups`` with aiokafka's
  response tuples. aiokafka returned one response per broker asked; here the first item of
  each such response lists every resource (group) of that response and the others
  list none, so ``resp[0].resources[1]`` and a loop over every item's
  ``.resources`` both see what aiokafka's responses held (see
  :func:`group_as_responses`); their ``to_object()`` is the response's dict made
  of those rows. A failed row's ``error_message`` is the typed error's text (it
  holds the broker's message, after the code and what was asked).
* ``list_consumer_groups()`` items are ``(group_id, protocol_type)`` pairs with
  ``state`` and ``group_type`` as extra attributes.

Per-item errors are carried, not raised, where aiokafka 0.14 returned error codes
(``create_topics``, ``delete_topics``, ``describe_topics``, ``describe_configs``,
``alter_configs``, ``describe_consumer_groups``): the item's ``error`` is the typed
exception (``None`` on success) and aiokafka's ``error_code`` fields are non-zero.
Those calls take ``raise_errors=True`` to raise instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, KeysView
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

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


def _error_message(error: KafkaError | None) -> str | None:
    return None if error is None else str(error)


def _topic_error_dicts(rows: list[tuple[str, int, str | None]]) -> list[dict[str, Any]]:
    """``topic_errors`` rows as aiokafka's ``Response.to_object()`` lists them."""
    return [{"topic": t, "error_code": c, "error_message": m} for t, c, m in rows]


_T = TypeVar("_T")


def group_as_responses(items: list[_T], key: Callable[[_T], Hashable]) -> list[_T]:
    """``items`` (in order) with aiokafka's response grouping attached.

    Items with the same ``key`` went into one aiokafka response. The first item of
    each group gets the others as ``response_peers`` (so its ``.resources`` /
    ``.groups`` list the whole response); the others get ``in_earlier_response``
    (so theirs are empty and a loop over all items sees each resource once).
    """
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(key(item), []).append(i)
    out = list(items)
    for indexes in groups.values():
        if len(indexes) < 2:
            continue
        first, rest = indexes[0], indexes[1:]
        out[first] = replace(  # type: ignore[type-var]
            items[first], response_peers=tuple(items[i] for i in rest)
        )
        for i in rest:
            out[i] = replace(items[i], in_earlier_response=True)  # type: ignore[type-var]
    return out


class _InResponse(Protocol):
    """An item :func:`group_as_responses` may group (it sets these fields)."""

    @property
    def response_peers(self) -> tuple[Any, ...]: ...

    @property
    def in_earlier_response(self) -> bool: ...


_G = TypeVar("_G", bound=_InResponse)
_R = TypeVar("_R")


def _response_rows(item: _G, row: Callable[[_G], _R]) -> list[_R]:
    """The rows of aiokafka's response as :func:`group_as_responses` grouped it:
    ``row`` of ``item`` and of its ``response_peers``, none if an earlier item lists it."""
    if item.in_earlier_response:
        return []
    return [row(item)] + [row(p) for p in item.response_peers]


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
    """What the broker created (or, with ``validate_only``, would create), or why not.

    Attributes:
        name: Topic name.
        topic_id: The new topic's id (zero UUID for ``validate_only`` or a failure).
        num_partitions: Partition count (-1 if the broker did not say).
        replication_factor: Replication factor (-1 if the broker did not say).
        configs: The topic's effective configs (CreateTopics v5+), name -> value.
        error: Why the topic was not created (e.g. ``TopicAlreadyExistsError``),
            ``None`` if it was.
    """

    name: str
    topic_id: uuid.UUID
    num_partitions: int
    replication_factor: int
    configs: dict[str, str | None] = field(default_factory=dict)
    error: KafkaError | None = None


class TopicCreationResults(dict[str, TopicCreationResult]):
    """What ``create_topics`` returns: topic name -> :class:`TopicCreationResult`.

    A topic that was not created has its ``error`` set (unless ``create_topics``
    was asked to ``raise_errors``).
    """

    @property
    def topic_errors(self) -> list[tuple[str, int, str | None]]:
        """aiokafka's ``CreateTopicsResponse.topic_errors``: ``(topic, error_code,
        error_message)`` each, ``(topic, 0, None)`` for a created topic."""
        return [(n, _error_code(r.error), _error_message(r.error)) for n, r in self.items()]

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``CreateTopicsResponse.to_object()``: ``{"throttle_time_ms": 0,
        "topic_errors": [{"topic", "error_code", "error_message"}, ...]}`` (FastStream
        reads its topic creation outcome from it)."""
        return {"throttle_time_ms": 0, "topic_errors": _topic_error_dicts(self.topic_errors)}

    @property
    def errors(self) -> dict[str, KafkaError]:
        """The topics that were not created, with why."""
        return {n: r.error for n, r in self.items() if r.error is not None}


@dataclass(frozen=True)
class TopicDeletionResult:
    """What ``delete_topics`` returns: every topic asked, in order, and the errors of
    those not deleted. ``.topic_error_codes`` answers aiokafka's
    ``DeleteTopicsResponse``.

    Attributes:
        topics: The topics asked, in order.
        errors: Topic -> why it was not deleted (e.g.
            ``UnknownTopicOrPartitionError``); empty when all were deleted.
    """

    topics: list[str]
    errors: dict[str, KafkaError] = field(default_factory=dict)

    @property
    def topic_error_codes(self) -> list[tuple[str, int]]:
        """``(topic, error_code)`` per topic (0 if deleted), as aiokafka's response
        listed them."""
        return [(t, _error_code(self.errors.get(t))) for t in self.topics]

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``DeleteTopicsResponse.to_object()``: ``{"throttle_time_ms": 0,
        "topic_error_codes": [{"topic", "error_code"}, ...]}``."""
        return {
            "throttle_time_ms": 0,
            "topic_error_codes": [
                {"topic": t, "error_code": code} for t, code in self.topic_error_codes
            ],
        }


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

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``CreatePartitionsResponse.to_object()``: ``{"throttle_time_ms":
        0, "topic_errors": [{"topic", "error_code", "error_message"}, ...]}``."""
        return {"throttle_time_ms": 0, "topic_errors": _topic_error_dicts(self.topic_errors)}


@dataclass(frozen=True)
class ConfigAlterationResult:
    """One resource of what ``alter_configs`` returns. ``.resources`` answers
    aiokafka's ``AlterConfigsResponse``: on the first item of each aiokafka request
    it lists every resource of that request (this one and ``response_peers``); on
    the others (``in_earlier_response``) it is empty.

    Attributes:
        error: Why the resource was not altered (e.g.
            ``InvalidConfigurationError``), ``None`` if it was.
        response_peers: The later items that shared aiokafka's response with this
            one (aiokafka compatibility; not part of equality).
        in_earlier_response: An earlier item's ``.resources`` lists this one.
    """

    resource_type: ConfigResourceType
    name: str
    error: KafkaError | None = None
    response_peers: tuple[ConfigAlterationResult, ...] = field(
        default=(), repr=False, compare=False
    )
    in_earlier_response: bool = field(default=False, repr=False, compare=False)

    @property
    def resources(self) -> list[tuple[int, str | None, int, str]]:
        """``[(error_code, error_message, resource_type, resource_name), ...]`` as
        aiokafka listed it (``error_code`` 0 and message ``None`` on success)."""
        return _response_rows(self, ConfigAlterationResult._resource)

    def _resource(self) -> tuple[int, str | None, int, str]:
        return (
            _error_code(self.error),
            _error_message(self.error),
            int(self.resource_type),
            self.name,
        )

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``AlterConfigsResponse.to_object()`` (v1): ``{"throttle_time_ms":
        0, "resources": [{"error_code", "error_message", "resource_type",
        "resource_name"}, ...]}`` with the rows of :attr:`resources` (none on an item
        an earlier one lists)."""
        keys = ("error_code", "error_message", "resource_type", "resource_name")
        return {
            "throttle_time_ms": 0,
            "resources": [dict(zip(keys, row, strict=True)) for row in self.resources],
        }


@dataclass(frozen=True)
class PartitionDescription(_DictKeys):
    """One partition of a described topic; also aiokafka's dict keys (``p["leader"]``).

    Attributes:
        eligible_leader_replicas: The replicas outside the ISR that may still become
            leader without losing data (KIP-966 ELR), from
            ``describe_topic_partitions``; ``None`` from ``describe_topics`` (the
            Metadata API does not carry it) or where ELR is off.
        last_known_elr: The ELR members when the partition last had a leader chosen
            from them (KIP-966), as ``eligible_leader_replicas``.
    """

    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]
    eligible_leader_replicas: list[int] | None = None
    last_known_elr: list[int] | None = None

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
    ``t["error_code"]`` (e.g. 3 for a topic that does not exist) and
    ``t["partitions"]`` (a list of dicts with ``partition``, ``leader``,
    ``replicas``, ``isr``, ...).

    Attributes:
        authorized_operations: What the caller may do with the topic, or ``None``
            when not requested.
        error: Why the topic could not be described (e.g.
            ``UnknownTopicOrPartitionError``; then ``partitions`` is empty), or
            ``None``.
    """

    name: str
    topic_id: uuid.UUID
    is_internal: bool
    partitions: list[PartitionDescription]
    authorized_operations: frozenset[AclOperation] | None = None
    error: KafkaError | None = None

    def _legacy(self) -> dict[str, Any]:
        return {
            "error_code": _error_code(self.error),
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

    ``.resources`` is aiokafka's ``DescribeConfigsResponse.resources``: on the first
    item of each aiokafka response it lists every resource of that response (this
    one and ``response_peers``); on the others (``in_earlier_response``) it is empty.

    Attributes:
        error: Why the resource could not be described (e.g.
            ``UnknownTopicOrPartitionError``; then ``configs`` is empty), or ``None``.
        response_peers: The later items that shared aiokafka's response with this
            one (aiokafka compatibility; not part of equality).
        in_earlier_response: An earlier item's ``.resources`` lists this one.
    """

    resource_type: ConfigResourceType
    name: str
    configs: dict[str, ConfigEntry]
    error: KafkaError | None = None
    response_peers: tuple[ConfigDescription, ...] = field(default=(), repr=False, compare=False)
    in_earlier_response: bool = field(default=False, repr=False, compare=False)

    @property
    def resources(self) -> list[tuple[Any, ...]]:
        """``[(error_code, error_message, resource_type, resource_name, entries),
        ...]`` as aiokafka returned it; each entry is ``(name, value, read_only,
        config_source, is_sensitive, [(synonym_name, value, source), ...])``."""
        return _response_rows(self, ConfigDescription._resource)

    def _resource(self) -> tuple[Any, ...]:
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
        message = "" if self.error is None else str(self.error)
        return (_error_code(self.error), message, int(self.resource_type), self.name, entries)

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``DescribeConfigsResponse.to_object()`` (v2, what it sends):
        ``{"throttle_time_ms": 0, "resources": [{"error_code", "error_message",
        "resource_type", "resource_name", "config_entries": [{"config_names",
        "config_value", "read_only", "config_source", "is_sensitive",
        "config_synonyms": [{"config_name", "config_value", "config_source"}]}]}]}``
        with the rows of :attr:`resources` (none on an item an earlier one lists).
        ``config_names`` is aiokafka's key for an entry's name."""
        entry_keys = ("config_names", "config_value", "read_only", "config_source")
        synonym_keys = ("config_name", "config_value", "config_source")
        resources = []
        for code, message, rtype, rname, entries in self.resources:
            config_entries = [
                {
                    **dict(zip(entry_keys, entry[:4], strict=True)),
                    "is_sensitive": entry[4],
                    "config_synonyms": [dict(zip(synonym_keys, s, strict=True)) for s in entry[5]],
                }
                for entry in entries
            ]
            resources.append(
                {
                    "error_code": code,
                    "error_message": message,
                    "resource_type": rtype,
                    "resource_name": rname,
                    "config_entries": config_entries,
                }
            )
        return {"throttle_time_ms": 0, "resources": resources}


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

    ``.groups`` is aiokafka's ``DescribeGroupsResponse.groups``: on the first item
    of each aiokafka response (one per coordinator) it lists every group of that
    response (this one and ``response_peers``); on the others
    (``in_earlier_response``) it is empty.

    Attributes:
        state: ``"Stable"``, ``"Empty"``, ``"Dead"`` (also for a group that does not
            exist), ...
        protocol: The chosen assignor (e.g. ``"range"``).
        coordinator: The node that described the group (``None`` if none answered).
        response_peers: The later items that shared aiokafka's response with this
            one (aiokafka compatibility; not part of equality).
        in_earlier_response: An earlier item's ``.groups`` lists this one.
    """

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberDescription]
    coordinator: int | None = None
    authorized_operations: frozenset[AclOperation] | None = None
    error: KafkaError | None = None
    response_peers: tuple[GroupDescription, ...] = field(default=(), repr=False, compare=False)
    in_earlier_response: bool = field(default=False, repr=False, compare=False)

    @property
    def groups(self) -> list[tuple[Any, ...]]:
        """aiokafka's ``DescribeGroupsResponse.groups``: ``[(error_code, group,
        state, protocol_type, protocol, members, authorized_operations), ...]``,
        each member ``(member_id, client_id, client_host, member_metadata,
        member_assignment)``."""
        return _response_rows(self, GroupDescription._group)

    def _group(self) -> tuple[Any, ...]:
        members = [
            (m.member_id, m.client_id, m.client_host, m.member_metadata, m.member_assignment)
            for m in self.members
        ]
        return (
            _error_code(self.error),
            self.group_id,
            self.state,
            self.protocol_type,
            self.protocol,
            members,
            _ops_bits(self.authorized_operations),
        )

    def to_object(self) -> dict[str, Any]:
        """aiokafka's ``DescribeGroupsResponse.to_object()``: ``{"throttle_time_ms": 0,
        "groups": [{"error_code", "group", "state", "protocol_type", "protocol",
        "members": [{"member_id", "client_id", "client_host", "member_metadata",
        "member_assignment"}]}, ...]}`` with the rows of :attr:`groups` (none on an
        item an earlier one lists). That is v2, what aiokafka sends; a group described
        with ``include_authorized_operations=True`` also has v3's
        ``"authorized_operations"`` bit field (aiokafka 0.14 failed to decode v3)."""
        group_keys = ("error_code", "group", "state", "protocol_type", "protocol")
        member_keys = (
            "member_id",
            "client_id",
            "client_host",
            "member_metadata",
            "member_assignment",
        )
        groups = []
        for row in self.groups:
            group = dict(zip(group_keys, row[:5], strict=True))
            group["members"] = [dict(zip(member_keys, m, strict=True)) for m in row[5]]
            if row[6] != _OPS_NOT_REQUESTED:
                group["authorized_operations"] = row[6]
            groups.append(group)
        return {"throttle_time_ms": 0, "groups": groups}


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
