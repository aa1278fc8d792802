"""ACL types: resource patterns, bindings and binding filters (KIP-140, KIP-290).

The enum codes are Kafka's wire values. A binding names one concrete ACL; a filter
may use ``ANY`` (and ``None`` for name/principal/host) to match many.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "ResourcePattern",
    "ResourcePatternType",
    "ResourceType",
]


class ResourceType(enum.IntEnum):
    """The kind of resource an ACL protects."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class ResourcePatternType(enum.IntEnum):
    """How an ACL's resource name matches (``MATCH``/``ANY`` only in filters)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    """The operation an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(enum.IntEnum):
    """Whether an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_FILTER_ONLY_TYPES = (ResourceType.ANY, ResourceType.UNKNOWN)
_FILTER_ONLY_PATTERNS = (
    ResourcePatternType.ANY,
    ResourcePatternType.MATCH,
    ResourcePatternType.UNKNOWN,
)


@dataclass(frozen=True)
class ResourcePattern:
    """A concrete resource pattern, e.g. all topics prefixed ``"orders-"``.

    Args:
        resource_type: What kind of resource.
        name: Resource name (``"*"`` for all, ``"kafka-cluster"`` for the cluster).
        pattern_type: ``LITERAL`` (default) or ``PREFIXED``.

    Raises:
        ValueError: a filter-only value (``ANY``, ``MATCH``, ``UNKNOWN``) was given.
    """

    resource_type: ResourceType
    name: str
    pattern_type: ResourcePatternType = ResourcePatternType.LITERAL

    def __post_init__(self) -> None:
        rtype = ResourceType(self.resource_type)
        ptype = ResourcePatternType(self.pattern_type)
        if rtype in _FILTER_ONLY_TYPES:
            raise ValueError(f"resource_type {rtype.name} is only valid in a filter")
        if ptype in _FILTER_ONLY_PATTERNS:
            raise ValueError(f"pattern_type {ptype.name} is only valid in a filter")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty str")
        object.__setattr__(self, "resource_type", rtype)
        object.__setattr__(self, "pattern_type", ptype)


@dataclass(frozen=True)
class AclBinding:
    """One ACL: ``principal`` from ``host`` may (or may not) do ``operation`` on
    ``pattern``.

    Args:
        pattern: The resource(s) the ACL applies to.
        principal: e.g. ``"User:alice"``.
        host: Client host, ``"*"`` for any.
        operation: The operation (not ``ANY``).
        permission_type: ``ALLOW`` or ``DENY``.
    """

    pattern: ResourcePattern
    principal: str
    host: str = "*"
    operation: AclOperation = AclOperation.ALL
    permission_type: AclPermissionType = AclPermissionType.ALLOW

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, ResourcePattern):
            raise TypeError("pattern must be a ResourcePattern")
        op = AclOperation(self.operation)
        perm = AclPermissionType(self.permission_type)
        if op in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise ValueError(f"operation {op.name} is only valid in a filter")
        if perm in (AclPermissionType.ANY, AclPermissionType.UNKNOWN):
            raise ValueError(f"permission_type {perm.name} is only valid in a filter")
        for arg in ("principal", "host"):
            value = getattr(self, arg)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{arg} must be a non-empty str")
        object.__setattr__(self, "operation", op)
        object.__setattr__(self, "permission_type", perm)

    def to_filter(self) -> AclBindingFilter:
        """A filter matching exactly this binding."""
        return AclBindingFilter(
            self.pattern.resource_type,
            self.pattern.name,
            self.pattern.pattern_type,
            self.principal,
            self.host,
            self.operation,
            self.permission_type,
        )


@dataclass(frozen=True)
class AclBindingFilter:
    """Matches ACLs for ``describe_acls``/``delete_acls``; the defaults match all.

    Args:
        resource_type: ``ANY`` or a type.
        name: Resource name, or ``None`` for any.
        pattern_type: ``ANY``, ``MATCH`` (literal, wildcard and prefixed patterns
            that match ``name``), ``LITERAL`` or ``PREFIXED``.
        principal: Principal, or ``None`` for any.
        host: Host, or ``None`` for any.
        operation: ``ANY`` or an operation.
        permission_type: ``ANY``, ``ALLOW`` or ``DENY``.
    """

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: ResourcePatternType = ResourcePatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource_type", ResourceType(self.resource_type))
        object.__setattr__(self, "pattern_type", ResourcePatternType(self.pattern_type))
        object.__setattr__(self, "operation", AclOperation(self.operation))
        object.__setattr__(self, "permission_type", AclPermissionType(self.permission_type))
        for arg in ("name", "principal", "host"):
            value = getattr(self, arg)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{arg} must be a str or None")
