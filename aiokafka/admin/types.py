"""Input types of the admin client: what to create, alter, look up or delete.

Constructors keep aiokafka's signatures (``NewTopic``, ``NewPartitions``,
``ConfigResource``, ``RecordsToDelete``) and validate eagerly, raising
``ValueError``/``TypeError`` naming the argument, so a bad request fails before any
I/O. ACL and quota types live in :mod:`aiokafka.admin.acl_types` and
:mod:`aiokafka.admin.quota_types`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "AlterConfigOp",
    "AlterConfigOpType",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigType",
    "ElectionType",
    "FeatureUpdate",
    "FeatureUpdateType",
    "IsolationLevel",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "RecordsToDelete",
    "TopicPartitionReplica",
]


def check_name(arg: str, value: object) -> str:
    """Return ``value`` if it is a non-empty str, else raise naming ``arg``."""
    if not isinstance(value, str):
        raise TypeError(f"{arg} must be a str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{arg} must not be empty")
    return value


def check_count(arg: str, value: object, low: int) -> int:
    """Return ``value`` if it is an int (not bool) ``>= low``, else raise naming ``arg``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{arg} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{arg} must be >= {low}, got {value}")
    return value


def _broker_ids(arg: str, value: object) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{arg} must be a sequence of broker ids")
    return [check_count(arg, b, 0) for b in value]


class ConfigResourceType(enum.IntEnum):
    """What a :class:`ConfigResource` names (Kafka's ``ConfigResource.Type`` codes)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    """Where a config value comes from (``ConfigSource`` of DescribeConfigs v1+)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(enum.IntEnum):
    """The value type of a config (DescribeConfigs v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class AlterConfigOpType(enum.IntEnum):
    """IncrementalAlterConfigs operations (KIP-339)."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ElectionType(enum.IntEnum):
    """Leader election kinds (KIP-460)."""

    PREFERRED = 0
    UNCLEAN = 1


class IsolationLevel(enum.IntEnum):
    """Which offsets ListOffsets may return: ``READ_COMMITTED`` stops at the last
    stable offset (before open transactions)."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1


@dataclass(init=False)
class NewTopic:
    """A topic to create.

    Args:
        name: Topic name.
        num_partitions: Partition count, or -1 for the broker default (required to be
            -1 when ``replica_assignments`` is given).
        replication_factor: Replicas per partition, or -1 for the broker default
            (required to be -1 when ``replica_assignments`` is given).
        replica_assignments: Partition index -> broker ids, to place replicas by hand.
        topic_configs: Topic-level configs, e.g. ``{"cleanup.policy": "compact"}``.

    Raises:
        ValueError, TypeError: an argument is invalid (the message names it).
    """

    name: str
    num_partitions: int
    replication_factor: int
    replica_assignments: dict[int, list[int]]
    topic_configs: dict[str, str]

    def __init__(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        replica_assignments: Mapping[int, Sequence[int]] | None = None,
        topic_configs: Mapping[str, str] | None = None,
    ) -> None:
        self.name = check_name("name", name)
        self.num_partitions = check_count("num_partitions", num_partitions, -1)
        self.replication_factor = check_count("replication_factor", replication_factor, -1)
        if self.num_partitions == 0:
            raise ValueError("num_partitions must be >= 1 or -1 (broker default), got 0")
        if self.replication_factor == 0:
            raise ValueError("replication_factor must be >= 1 or -1 (broker default), got 0")
        self.replica_assignments = {
            check_count("replica_assignments", p, 0): _broker_ids("replica_assignments", b)
            for p, b in (replica_assignments or {}).items()
        }
        if self.replica_assignments and (
            self.num_partitions != -1 or self.replication_factor != -1
        ):
            # The broker rejects the combination; say so before sending anything.
            raise ValueError(
                "with replica_assignments, num_partitions and replication_factor must be -1"
            )
        self.topic_configs = {
            check_name("topic_configs", k): _config_value("topic_configs", v)
            for k, v in (topic_configs or {}).items()
        }


def _config_value(arg: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{arg} values must be str, got {type(value).__name__}")
    return value


@dataclass(init=False)
class NewPartitions:
    """A new partition count for an existing topic.

    Args:
        total_count: The total number of partitions after the change.
        new_assignments: Broker ids for each added partition, in order (one list per
            new partition), or ``None`` to let the controller place them.
    """

    total_count: int
    new_assignments: list[list[int]] | None

    def __init__(
        self, total_count: int, new_assignments: Sequence[Sequence[int]] | None = None
    ) -> None:
        self.total_count = check_count("total_count", total_count, 1)
        self.new_assignments = (
            None
            if new_assignments is None
            else [_broker_ids("new_assignments", a) for a in new_assignments]
        )


@dataclass(init=False, eq=False)
class ConfigResource:
    """A topic, broker, broker logger, client-metrics or group config resource.

    Equality and hashing use ``(resource_type, name)`` only, so a resource can key a
    mapping (as :meth:`~aiokafka.admin.AIOKafkaAdminClient.incremental_alter_configs`
    expects) while ``configs`` stays mutable as in aiokafka.

    Args:
        resource_type: A :class:`ConfigResourceType` or its name (``"TOPIC"``,
            case-insensitive).
        name: Topic name, broker id as a string (``""`` for the cluster-wide broker
            default), group name, ...
        configs: Values to set with ``alter_configs``, or names to describe
            (``describe_configs`` returns only those when given).
    """

    resource_type: ConfigResourceType
    name: str
    configs: dict[str, str | None] | None

    def __init__(
        self,
        resource_type: ConfigResourceType | str | int,
        name: str,
        configs: Mapping[str, str | None] | None = None,
    ) -> None:
        self.resource_type = _resource_type(resource_type)
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if not name and self.resource_type is not ConfigResourceType.BROKER:
            raise ValueError("name must not be empty")
        self.name = name
        self.configs = None if configs is None else dict(configs)

    def _key(self) -> tuple[int, str]:
        return (int(self.resource_type), self.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ConfigResource):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def _resource_type(value: ConfigResourceType | str | int) -> ConfigResourceType:
    try:
        if isinstance(value, str):
            return ConfigResourceType[value.upper()]
        return ConfigResourceType(value)
    except (KeyError, ValueError):
        names = ", ".join(t.name for t in ConfigResourceType if t is not ConfigResourceType.UNKNOWN)
        raise ValueError(f"resource_type must be one of {names}, got {value!r}") from None


@dataclass(frozen=True)
class AlterConfigOp:
    """One incremental config change (KIP-339).

    Args:
        name: The config name.
        value: The value (``SET``), or the list element(s), comma-separated, to add
            (``APPEND``) or remove (``SUBTRACT``); ignored for ``DELETE``.
        op_type: What to do; ``DELETE`` reverts to the default.
    """

    name: str
    value: str | None = None
    op_type: AlterConfigOpType = AlterConfigOpType.SET

    def __post_init__(self) -> None:
        check_name("name", self.name)
        op = AlterConfigOpType(self.op_type)
        object.__setattr__(self, "op_type", op)
        if op is not AlterConfigOpType.DELETE and not isinstance(self.value, str):
            raise TypeError(f"value must be a str for {op.name} of {self.name!r}")


@dataclass(frozen=True)
class RecordsToDelete:
    """aiokafka's argument type of ``delete_records``: delete records before
    ``before_offset`` (-1 means the high watermark, i.e. everything)."""

    before_offset: int

    def __post_init__(self) -> None:
        check_count("before_offset", self.before_offset, -1)


@dataclass(frozen=True)
class OffsetSpec:
    """Which offset ``list_offsets`` looks up for a partition.

    Build with :meth:`earliest`, :meth:`latest`, :meth:`max_timestamp` or
    :meth:`for_timestamp`; ``timestamp`` holds the ListOffsets query value (the
    negative sentinels -2, -1, -3 or a time in ms).
    """

    timestamp: int

    EARLIEST = -2
    LATEST = -1
    MAX_TIMESTAMP = -3

    def __post_init__(self) -> None:
        check_count("timestamp", self.timestamp, -3)

    @classmethod
    def earliest(cls) -> OffsetSpec:
        """The log start offset."""
        return cls(cls.EARLIEST)

    @classmethod
    def latest(cls) -> OffsetSpec:
        """The high watermark (or last stable offset with ``READ_COMMITTED``)."""
        return cls(cls.LATEST)

    @classmethod
    def max_timestamp(cls) -> OffsetSpec:
        """The offset of the record with the largest timestamp (KIP-734)."""
        return cls(cls.MAX_TIMESTAMP)

    @classmethod
    def for_timestamp(cls, timestamp_ms: int) -> OffsetSpec:
        """The first offset whose timestamp is >= ``timestamp_ms``."""
        check_count("timestamp_ms", timestamp_ms, 0)
        return cls(timestamp_ms)


class FeatureUpdateType(enum.IntEnum):
    """How :class:`FeatureUpdate` may move a finalized feature's level (KIP-584)."""

    UPGRADE = 1
    #: Down, where the feature's new level can read all the old level wrote.
    SAFE_DOWNGRADE = 2
    #: Down even where data the old level wrote is lost.
    UNSAFE_DOWNGRADE = 3


@dataclass(frozen=True)
class FeatureUpdate:
    """A finalized feature's new maximum level, for ``update_features``.

    ``max_version_level`` 0 removes the feature (a downgrade).
    """

    max_version_level: int
    upgrade_type: FeatureUpdateType = FeatureUpdateType.UPGRADE

    def __post_init__(self) -> None:
        check_count("max_version_level", self.max_version_level, 0)
        if self.max_version_level > 32767:
            raise ValueError(f"max_version_level must be <= 32767, got {self.max_version_level}")
        object.__setattr__(self, "upgrade_type", FeatureUpdateType(self.upgrade_type))


class TopicPartitionReplica(NamedTuple):
    """A partition's replica on one broker (``alter_replica_log_dirs``; kafka-python's
    ``TopicPartitionReplica``)."""

    topic: str
    partition: int
    broker_id: int
