"""Client quota types (KIP-546): entities, filters and alterations."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aiokafka.admin.types import check_name

__all__ = [
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilterComponent",
    "ClientQuotaMatchType",
    "ClientQuotaOp",
]

#: Entity types Kafka knows; others are passed through (the broker rejects them).
ENTITY_TYPES = ("user", "client-id", "ip")


@dataclass(frozen=True)
class ClientQuotaEntity:
    """The entity a quota applies to, e.g. user ``alice`` with client id ``app``.

    Hashable, so it keys the result of ``describe_client_quotas``. Build it with
    :meth:`of`; ``None`` as a name means that entity type's default quota.

    Attributes:
        entries: Sorted ``(entity_type, name)`` pairs.
    """

    entries: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, entity: Mapping[str, str | None]) -> ClientQuotaEntity:
        """Build from ``{"user": "alice", "client-id": None}``.

        Raises:
            ValueError: ``entity`` is empty.
        """
        if not entity:
            raise ValueError("entity must name at least one entity type")
        for k, v in entity.items():
            check_name("entity type", k)
            if v is not None and not isinstance(v, str):
                raise TypeError(f"entity name of {k!r} must be a str or None")
        return cls(tuple(sorted(entity.items())))

    def as_dict(self) -> dict[str, str | None]:
        """The entity as ``{entity_type: name}``."""
        return dict(self.entries)


class ClientQuotaMatchType(enum.IntEnum):
    """How a filter component matches (``DescribeClientQuotas`` ``MatchType``)."""

    EXACT = 0
    DEFAULT = 1
    SPECIFIED = 2


@dataclass(frozen=True)
class ClientQuotaFilterComponent:
    """One component of a ``describe_client_quotas`` filter.

    Use :meth:`of_entity`, :meth:`of_default_entity` or :meth:`of_entity_type`.
    """

    entity_type: str
    match_type: ClientQuotaMatchType
    match: str | None = None

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> ClientQuotaFilterComponent:
        """Match the entity ``name`` of ``entity_type`` exactly."""
        return cls(
            check_name("entity_type", entity_type),
            ClientQuotaMatchType.EXACT,
            check_name("name", name),
        )

    @classmethod
    def of_default_entity(cls, entity_type: str) -> ClientQuotaFilterComponent:
        """Match the default entity of ``entity_type``."""
        return cls(check_name("entity_type", entity_type), ClientQuotaMatchType.DEFAULT)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> ClientQuotaFilterComponent:
        """Match any specified (non-default) entity of ``entity_type``."""
        return cls(check_name("entity_type", entity_type), ClientQuotaMatchType.SPECIFIED)


@dataclass(frozen=True)
class ClientQuotaOp:
    """Set quota ``key`` to ``value``, or remove it when ``value`` is ``None``.

    Keys are e.g. ``producer_byte_rate``, ``consumer_byte_rate``,
    ``request_percentage``, ``controller_mutation_rate``.
    """

    key: str
    value: float | None

    def __post_init__(self) -> None:
        check_name("key", self.key)
        if self.value is not None and (
            not isinstance(self.value, (int, float)) or isinstance(self.value, bool)
        ):
            raise TypeError(f"value of quota {self.key!r} must be a number or None")


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """Quota changes for one entity."""

    entity: ClientQuotaEntity
    ops: Sequence[ClientQuotaOp]

    def __post_init__(self) -> None:
        if not isinstance(self.entity, ClientQuotaEntity):
            raise TypeError("entity must be a ClientQuotaEntity (use ClientQuotaEntity.of)")
        object.__setattr__(self, "ops", tuple(self.ops))
        for op in self.ops:
            if not isinstance(op, ClientQuotaOp):
                raise TypeError("ops must be ClientQuotaOp instances")
