"""Small value types shared by the producer, consumer, admin client and cluster code.

Field names and positional order are aiokafka's, so code that builds, indexes or
unpacks these keeps working. Newer fields are added only where they cannot break
that: at the end with a default (``ConsumerRecord.leader_epoch``,
``PartitionMetadata.leader_epoch``), or outside the tuple as a keyword-only attribute
(``OffsetAndMetadata.leader_epoch``, ``OffsetAndTimestamp.leader_epoch``), so that
``offset, metadata = committed`` still unpacks two values.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, cast

if TYPE_CHECKING:
    from typing_extensions import TypeVar
else:
    from typing import TypeVar
# typing_extensions only where typing lacks it: importing it costs ~3 ms.
if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

# aiokafka 0.14's structs module imported KafkaError, and code imports it from here.
from aiokafka.errors import KafkaError as KafkaError

__all__ = [
    "KT",
    "VT",
    "BrokerMetadata",
    "ConsumerGroupMetadata",
    "ConsumerRecord",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "PartitionMetadata",
    "RecordMetadata",
    "TopicPartition",
]

# PEP 696 defaults: a client or record built without (de)serializers is typed with
# bytes, so ``AIOKafkaConsumer("t")`` needs no annotation under mypy --strict. Only type
# checkers use the default: before Python 3.13 the runtime TypeVar has none (see above).
if TYPE_CHECKING or sys.version_info >= (3, 13):
    #: The type of a record key (after deserialization; ``bytes`` without one).
    KT = TypeVar("KT", default=bytes)
    #: The type of a record value (after deserialization; ``bytes`` without one).
    VT = TypeVar("VT", default=bytes)
else:
    KT = TypeVar("KT")
    VT = TypeVar("VT")


class TopicPartition(NamedTuple):
    """A topic and a partition number; hashable, so usable as a dict key."""

    topic: str
    partition: int


class BrokerMetadata(NamedTuple):
    """A broker as listed in cluster metadata.

    Attributes:
        nodeId: The broker id (a string such as ``"bootstrap-0"`` for a bootstrap
            address whose id is not known yet).
        host: The advertised host name.
        port: The advertised port.
        rack: The broker's rack, used by rack-aware assignment, or ``None``.
    """

    nodeId: int | str
    host: str
    port: int
    rack: str | None


class PartitionMetadata(NamedTuple):
    """A partition as listed in cluster metadata.

    Attributes:
        topic: The topic name.
        partition: The partition number.
        leader: The leader's broker id, or -1 if there is no leader.
        replicas: Broker ids of all replicas.
        isr: Broker ids of the in-sync replicas.
        error: The partition's error code (0 for none).
        leader_epoch: The leader epoch, or -1 if the broker did not send one.
        offline_replicas: Broker ids of replicas that are offline.
    """

    topic: str
    partition: int
    leader: int
    replicas: Sequence[int]
    isr: Sequence[int]
    error: int
    leader_epoch: int = -1
    offline_replicas: Sequence[int] = ()


class RecordMetadata(NamedTuple):
    """Where a record sent by the producer was stored.

    Attributes:
        topic: The topic name.
        partition: The partition number.
        topic_partition: ``TopicPartition(topic, partition)``.
        offset: The record's offset in the partition.
        timestamp: The record's timestamp in ms (the broker's if the topic uses
            LogAppendTime), or ``None`` if unknown.
        timestamp_type: 0 for CreateTime, 1 for LogAppendTime.
        log_start_offset: The partition's log start offset, or ``None`` if unknown.
    """

    topic: str
    partition: int
    topic_partition: TopicPartition
    offset: int
    timestamp: int | None
    timestamp_type: int
    log_start_offset: int | None


@dataclass(slots=True)
class _ConsumerRecordFields(Generic[KT, VT]):
    """The fields of :class:`ConsumerRecord` (slots the C decoder fills in place)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: KT | None
    value: VT | None
    checksum: int | None
    serialized_key_size: int
    serialized_value_size: int
    headers: Sequence[tuple[str, bytes]]
    leader_epoch: int | None = None


class ConsumerRecord(_ConsumerRecordFields[KT, VT]):
    """A record returned by the consumer.

    Attributes:
        topic: The topic the record was fetched from.
        partition: The partition the record was fetched from.
        offset: The record's position in the partition.
        timestamp: The record's timestamp in ms.
        timestamp_type: 0 for CreateTime, 1 for LogAppendTime.
        key: The deserialized key, or ``None`` if the record has no key.
        value: The deserialized value, or ``None`` for a null value (tombstone).
        checksum: Deprecated: the record's CRC for message formats v0/v1, ``None``
            for v2 (whose CRC covers the whole batch).
        serialized_key_size: Size of the serialized key in bytes, -1 if there is none.
        serialized_value_size: Size of the serialized value in bytes, -1 if none.
        headers: The record headers as ``(key, value)`` pairs.
        leader_epoch: The partition leader epoch of the batch, ``None`` if unknown.
    """

    # A __dict__ besides the field slots: as on aiokafka 0.14's (plain dataclass)
    # record, code may set attributes of its own on a record (FastStream 0.7 sets
    # record.consumer). Empty (no dict allocated) until it does.
    __slots__ = ("__dict__",)


class _LeaderEpochTuple(tuple[Any, ...]):
    """Adds a keyword-only ``leader_epoch`` attribute outside the tuple.

    The tuple keeps aiokafka's two fields, so equality, hashing, indexing and
    unpacking are unchanged: ``leader_epoch`` is extra information and does not take
    part in ``==``. It lives in the instance ``__dict__`` (a tuple subclass cannot
    have slots) and is read-only like the fields.
    """

    @property
    def leader_epoch(self) -> int | None:
        """The leader epoch, or ``None`` if unknown."""
        epoch: int | None = self.__dict__.get("leader_epoch")
        return epoch

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _set_leader_epoch(self, leader_epoch: int | None) -> None:
        if leader_epoch is not None:
            if not isinstance(leader_epoch, int) or isinstance(leader_epoch, bool):
                raise TypeError(
                    f"leader_epoch must be an int or None, got {type(leader_epoch).__name__}"
                )
            self.__dict__["leader_epoch"] = leader_epoch

    def __repr__(self) -> str:
        names: tuple[str, ...] = cast(Any, self)._fields  # from the NamedTuple base
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(names, self, strict=True))
        return f"{type(self).__name__}({fields}, leader_epoch={self.leader_epoch!r})"

    def _replace(self, **changes: Any) -> Self:
        # NamedTuple's _replace would drop the epoch; it is kept unless changed.
        epoch = changes.pop("leader_epoch", self.leader_epoch)
        names: tuple[str, ...] = cast(Any, self)._fields  # from the NamedTuple base
        fields = {**dict(zip(names, self, strict=True)), **changes}
        make: Callable[..., Self] = type(self)  # the subclass's keyword constructor
        return make(**fields, leader_epoch=epoch)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # Rebuild through __new__ so the read-only attribute is set the normal way.
        return (_rebuild, (type(self), tuple(self), self.leader_epoch))


def _rebuild(cls: Any, fields: tuple[Any, ...], leader_epoch: int | None) -> Any:
    return cls(*fields, leader_epoch=leader_epoch)


class _OffsetAndMetadataFields(NamedTuple):
    offset: int
    metadata: str


class OffsetAndMetadata(_LeaderEpochTuple, _OffsetAndMetadataFields):
    """An offset to commit (or a committed one) with its metadata string.

    ``OffsetAndMetadata(offset, metadata, *, leader_epoch=None)``. ``leader_epoch`` is
    the epoch of the last consumed record, which lets the broker detect log
    truncation (KIP-320); it is not part of the tuple (see the module docstring).
    """

    def __new__(cls, offset: int, metadata: str = "", *, leader_epoch: int | None = None) -> Self:
        self = tuple.__new__(cls, (offset, metadata))
        self._set_leader_epoch(leader_epoch)
        return self


class _OffsetAndTimestampFields(NamedTuple):
    offset: int
    timestamp: int | None


class OffsetAndTimestamp(_LeaderEpochTuple, _OffsetAndTimestampFields):
    """The result of an offset-for-time lookup.

    ``OffsetAndTimestamp(offset, timestamp, *, leader_epoch=None)``; ``timestamp`` is
    that of the record found. ``leader_epoch`` is not part of the tuple.
    """

    def __new__(
        cls, offset: int, timestamp: int | None, *, leader_epoch: int | None = None
    ) -> Self:
        self = tuple.__new__(cls, (offset, timestamp))
        self._set_leader_epoch(leader_epoch)
        return self


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """A consumer's group membership, for ``send_offsets_to_transaction`` (KIP-447).

    Returned by ``AIOKafkaConsumer.group_metadata()``. The transaction coordinator
    checks ``generation_id`` and ``member_id`` when it commits offsets, so a consumer
    that was dropped from the group (a zombie) cannot commit through a transaction.

    Attributes:
        group_id: The consumer group.
        generation_id: The group generation (classic protocol) or the member epoch
            (KIP-848); -1 when not known.
        member_id: The member id given by the coordinator; empty when not known.
        group_instance_id: The static member id (KIP-345), or None.
    """

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
