"""Running assignors written for aiokafka 0.x or kafka-python.

The consumer passes every entry of ``partition_assignment_strategy`` through
:func:`as_assignor`. Native assignors (subclasses of
:class:`~aiokafka.consumer.group.assignors.abstract.AbstractPartitionAssignor`) are
used as they are, a class being instantiated. Anything else with ``name``,
``assign``, ``metadata`` and ``on_assignment`` is wrapped in :class:`AssignorAdapter`,
which translates both ways:

* ``metadata(topics)`` is called with a ``set`` of topics and may return a
  :class:`Subscription`, an aiokafka 0.x :class:`ConsumerProtocolMemberMetadata`
  (``version, subscription, user_data``), a kafka-python or generated
  ``ConsumerProtocolSubscription`` (``topics, user_data, owned_partitions, ...``) or
  encoded bytes.
* ``assign(cluster, members)`` gets the cluster as a :class:`LegacyClusterView`
  (``topics()``, ``partitions_for_topic()``, ...). aiokafka 0.x style
  assignors (``on_assignment(assignment)``) get ``members`` as a dict of member id to
  :class:`GroupMember`, which answers ``.subscription`` and ``.user_data``.
  kafka-python 3 style assignors (``on_assignment(assignment, generation)``) get a
  list of :class:`GroupMember`, which answers ``.member_id``,
  ``.group_instance_id`` and ``.metadata.topics`` / ``.user_data`` /
  ``.owned_partitions``. The values returned may be an :class:`Assignment`, anything
  with a ``partitions()`` method (aiokafka 0.x and kafka-python assignments), a
  generated ``ConsumerProtocolAssignment``, or encoded bytes.
* ``on_assignment`` gets an :class:`Assignment` (it has ``partitions()``,
  ``assignment`` and ``user_data``), plus the generation for kafka-python 3 style;
  ``on_generation_assignment(generation)`` is forwarded if the assignor has it.

Classes are instantiated without arguments unless they are abstract (aiokafka 0.x
assignors were used as classes with classmethods, which works either way).
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, TypeVar

from aiokafka.structs import TopicPartition

from .abstract import AbstractPartitionAssignor
from .codec import decode_assignment, decode_subscription, encode_assignment, encode_subscription
from .types import Assignment, ClusterView, GroupMember, RebalanceProtocol, Subscription

__all__ = [
    "AssignorAdapter",
    "ConsumerProtocol",
    "ConsumerProtocolMemberAssignment",
    "ConsumerProtocolMemberMetadata",
    "LegacyClusterView",
    "LegacyPartitionAssignor",
    "as_assignor",
    "to_assignment",
    "to_subscription",
]

_T = TypeVar("_T")


class _Struct:
    """aiokafka 0.x's mutable structs: equal by their ``_FIELDS``, unhashable, and a
    repr naming each field."""

    __slots__ = ()
    _FIELDS: ClassVar[tuple[str, ...]]

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the 0.x structs

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__name__}({fields})"


class ConsumerProtocolMemberMetadata(_Struct):
    """aiokafka 0.x JoinGroup member metadata: ``(version, subscription, user_data)``."""

    __slots__ = ("subscription", "user_data", "version")
    _FIELDS = ("version", "subscription", "user_data")

    def __init__(self, version: int, subscription: Iterable[str], user_data: bytes | None) -> None:
        self.version = version
        self.subscription = list(subscription)
        self.user_data = user_data

    def encode(self) -> bytes:
        """Encode with the int16 version header (body of version 0)."""
        return encode_subscription(Subscription(tuple(self.subscription), self.user_data), 0)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> ConsumerProtocolMemberMetadata:
        """Decode member metadata of any version (fields beyond v0 are dropped)."""
        sub = decode_subscription(data)
        return cls(int.from_bytes(bytes(data[:2]), "big", signed=True), sub.topics, sub.user_data)


class ConsumerProtocolMemberAssignment(_Struct):
    """aiokafka 0.x SyncGroup assignment: ``(version, [(topic, [partition])], user_data)``."""

    __slots__ = ("assignment", "user_data", "version")
    _FIELDS = ("version", "assignment", "user_data")

    def __init__(
        self,
        version: int,
        assignment: Iterable[tuple[str, Iterable[int]]],
        user_data: bytes | None,
    ) -> None:
        self.version = version
        self.assignment = [(topic, list(parts)) for topic, parts in assignment]
        self.user_data = user_data

    def partitions(self) -> list[TopicPartition]:
        """The assigned partitions."""
        return [TopicPartition(t, p) for t, parts in self.assignment for p in parts]

    def encode(self) -> bytes:
        """Encode with the int16 version header (body of version 0)."""
        return encode_assignment(Assignment.of(self.partitions(), self.user_data), 0)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> ConsumerProtocolMemberAssignment:
        """Decode an assignment of any version."""
        decoded = decode_assignment(data)
        version = int.from_bytes(bytes(data[:2]), "big", signed=True) if len(data) else 0
        return cls(version, decoded.assignment, decoded.user_data)


class ConsumerProtocol:
    """aiokafka 0.x names of the embedded consumer protocol."""

    PROTOCOL_TYPE = "consumer"
    METADATA = ConsumerProtocolMemberMetadata
    ASSIGNMENT = ConsumerProtocolMemberAssignment


class LegacyPartitionAssignor(abc.ABC):
    """The aiokafka 0.x ``AbstractPartitionAssignor`` shape, for existing subclasses.

    Such subclasses return :class:`ConsumerProtocolMemberMetadata` /
    :class:`ConsumerProtocolMemberAssignment` and are wrapped by
    :class:`AssignorAdapter`. New code should subclass
    :class:`~aiokafka.consumer.group.assignors.abstract.AbstractPartitionAssignor`,
    which is registered as a virtual subclass of this one so ``issubclass`` checks
    written against the old name still accept the built-in assignors.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The assignment protocol name."""

    # Classmethods as in aiokafka 0.x; subclasses may implement them either way.
    @classmethod
    @abc.abstractmethod
    def assign(cls, cluster: Any, members: Any) -> Mapping[str, Any]:
        """Return ``{member_id: ConsumerProtocolMemberAssignment}``."""

    @classmethod
    @abc.abstractmethod
    def metadata(cls, topics: Any) -> Any:
        """Return the member's ``ConsumerProtocolMemberMetadata``."""

    @classmethod
    @abc.abstractmethod
    def on_assignment(cls, assignment: Any) -> None:
        """Called with this member's assignment."""


# mypy rejects abstract classes as arguments typed type[T]; registering one is fine.
LegacyPartitionAssignor.register(AbstractPartitionAssignor)  # type: ignore[type-abstract]


def _expand(items: Iterable[Any]) -> list[TopicPartition]:
    """Partitions from ``[(topic, [p, ...])]``, ``[(topic, p)]`` or structs with
    ``.topic`` and ``.partitions`` / ``.partition``."""
    out: list[TopicPartition] = []
    for item in items:
        if hasattr(item, "topic") and hasattr(item, "partitions"):
            out.extend(TopicPartition(item.topic, int(p)) for p in item.partitions)
        elif hasattr(item, "topic") and hasattr(item, "partition"):
            out.append(TopicPartition(item.topic, int(item.partition)))
        else:
            topic, parts = item
            if isinstance(parts, int):
                out.append(TopicPartition(topic, parts))
            else:
                out.extend(TopicPartition(topic, int(p)) for p in parts)
    return out


def _opt_bytes(value: Any) -> bytes | None:
    """User data as bytes; kafka-python's sticky assignor puts an unencoded struct there."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    encode = getattr(value, "encode", None)
    if callable(encode):
        # kafka-python structs prefix a version header unless told not to; the user
        # data formats (e.g. Java's StickyAssignor one) have none.
        try:
            takes_header = "header" in inspect.signature(encode).parameters
        except (TypeError, ValueError):
            takes_header = False
        return bytes(encode(header=False) if takes_header else encode())
    raise TypeError(f"user_data must be bytes, got {type(value).__name__}")


def _normalize(
    value: Any,
    cls: type[_T],
    decode: Callable[[bytes | bytearray | memoryview], _T],
    legacy: Callable[[Any], _T | None],
    returned_by: str,
) -> _T:
    """``value`` as a ``cls``: itself, decoded if it is one's wire bytes (an assignor
    written against the protocol), or what ``legacy`` makes of an aiokafka 0.x or
    kafka-python struct.

    Raises:
        TypeError: ``value`` has none of these shapes (``returned_by`` names the
            assignor method that returned it).
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return decode(value)
    converted = legacy(value)
    if converted is None:
        raise TypeError(f"{returned_by} returned an unsupported {type(value).__name__}")
    return converted


def to_subscription(value: Any) -> Subscription:
    """Normalize what an assignor's ``metadata()`` returned (see the module docstring).

    Raises:
        TypeError: ``value`` has none of the known shapes.
    """
    return _normalize(
        value, Subscription, decode_subscription, _legacy_subscription, "assignor metadata()"
    )


def _legacy_subscription(value: Any) -> Subscription | None:
    if hasattr(value, "topics"):
        generation = getattr(value, "generation_id", -1)
        return Subscription(
            tuple(value.topics),
            _opt_bytes(getattr(value, "user_data", None)),
            tuple(_expand(getattr(value, "owned_partitions", None) or ())),
            -1 if generation is None else int(generation),
            getattr(value, "rack_id", None),
        )
    if hasattr(value, "subscription"):
        return Subscription(tuple(value.subscription), _opt_bytes(value.user_data))
    return None


def to_assignment(value: Any) -> Assignment:
    """Normalize one value of an assignor's ``assign()`` result.

    Raises:
        TypeError: ``value`` has none of the known shapes.
    """
    return _normalize(value, Assignment, decode_assignment, _legacy_assignment, "assignor assign()")


def _legacy_assignment(value: Any) -> Assignment | None:
    user_data = _opt_bytes(getattr(value, "user_data", None))
    if callable(getattr(value, "partitions", None)):
        return Assignment.of(_expand(value.partitions()), user_data)
    for attr in ("assigned_partitions", "assignment"):
        items = getattr(value, attr, None)
        if items is not None:
            return Assignment.of(_expand(items), user_data)
    return None


def _takes_generation(on_assignment: Any) -> bool:
    try:
        params = inspect.signature(on_assignment).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


class LegacyClusterView:
    """The cluster as aiokafka 0.x / kafka-python assignors read it.

    Those call ``cluster.topics()`` besides ``partitions_for_topic``; here it lists
    the topics the group subscribes to that the cluster knows. Every other attribute
    is looked up on the wrapped view.
    """

    def __init__(self, cluster: ClusterView, members: Mapping[str, GroupMember]) -> None:
        self._cluster = cluster
        subscribed = {t for m in members.values() for t in m.topics}
        self._topics = {t for t in subscribed if cluster.partitions_for_topic(t) is not None}

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        """Subscribed topics the cluster knows (the argument is accepted and ignored)."""
        return set(self._topics)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """Partition ids of ``topic``, or ``None`` if unknown."""
        partitions = self._cluster.partitions_for_topic(topic)
        return None if partitions is None else set(partitions)

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        """Partitions with a leader if the wrapped view can tell, else all of them."""
        available = getattr(self._cluster, "available_partitions_for_topic", None)
        if callable(available):
            result = available(topic)
            return None if result is None else set(result)
        return self.partitions_for_topic(topic)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)


class AssignorAdapter(AbstractPartitionAssignor):
    """Runs an aiokafka 0.x or kafka-python style assignor as a native one.

    Args:
        legacy: The assignor instance (or class with classmethods).
        members_as_list: Pass ``members`` to ``assign`` as a list (kafka-python 3) or
            as a dict by member id (aiokafka 0.x). ``None`` (default) decides by the
            signature of ``on_assignment``: two parameters mean kafka-python 3.
    """

    def __init__(self, legacy: Any, *, members_as_list: bool | None = None) -> None:
        for attr in ("name", "assign", "metadata", "on_assignment"):
            if not hasattr(legacy, attr):
                raise TypeError(f"{legacy!r} is not a partition assignor: it has no {attr!r}")
        self._legacy = legacy
        self._with_generation = _takes_generation(legacy.on_assignment)
        self._as_list = self._with_generation if members_as_list is None else members_as_list
        self._generation = -1

    @property
    def legacy(self) -> Any:
        """The wrapped assignor."""
        return self._legacy

    @property
    def name(self) -> str:
        """The wrapped assignor's protocol name."""
        return str(self._legacy.name)

    @property
    def version(self) -> int:  # type: ignore[override]  # ClassVar in the base
        """The wrapped assignor's version (0 if it has none)."""
        return int(getattr(self._legacy, "version", 0))

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """What the wrapped assignor declares (method or list), else ``[EAGER]``."""
        declared = getattr(self._legacy, "supported_protocols", None)
        if declared is None:
            return [RebalanceProtocol.EAGER]
        values = declared() if callable(declared) else declared
        return [RebalanceProtocol(int(v)) for v in values]

    def metadata(self, topics: Iterable[str]) -> Subscription:
        """The wrapped ``metadata(set(topics))``, normalized."""
        return to_subscription(self._legacy.metadata(set(topics)))

    def assign(
        self, cluster: ClusterView, members: Mapping[str, GroupMember]
    ) -> dict[str, Assignment]:
        """The wrapped ``assign``, with members in the shape it expects."""
        arg: Any = list(members.values()) if self._as_list else dict(members)
        result = self._legacy.assign(LegacyClusterView(cluster, members), arg)
        return {str(mid): to_assignment(value) for mid, value in result.items()}

    def on_assignment(self, assignment: Assignment) -> None:
        """Forward the assignment (and, kafka-python 3 style, the generation)."""
        if self._with_generation:
            self._legacy.on_assignment(assignment, self._generation)
        else:
            self._legacy.on_assignment(assignment)

    def on_generation_assignment(self, generation: int) -> None:
        """Remember the generation; forward it if the wrapped assignor takes it."""
        self._generation = generation
        hook = getattr(self._legacy, "on_generation_assignment", None)
        if callable(hook):
            hook(generation)

    def __repr__(self) -> str:
        return f"<AssignorAdapter {self._legacy!r}>"


def as_assignor(strategy: Any) -> AbstractPartitionAssignor:
    """Turn one ``partition_assignment_strategy`` entry into a native assignor.

    Args:
        strategy: A native assignor instance or class, or an aiokafka 0.x /
            kafka-python assignor instance or class.

    Raises:
        TypeError: ``strategy`` is not an assignor.
    """
    if isinstance(strategy, AbstractPartitionAssignor):
        return strategy
    if isinstance(strategy, type):
        if issubclass(strategy, AbstractPartitionAssignor):
            return strategy()
        # 0.x assignors were classes with classmethods; an abstract one still works
        # through its classmethods, so it is wrapped without instantiating it.
        legacy = strategy if inspect.isabstract(strategy) else strategy()
        return AssignorAdapter(legacy)
    return AssignorAdapter(strategy)
