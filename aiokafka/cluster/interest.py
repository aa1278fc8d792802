"""Topic interest: which topics' metadata the client keeps, and who wants each.

Every part of a client that needs partition leaders holds an :class:`InterestHandle`
from :meth:`aiokafka.cluster.AIOKafkaClient.topic_interest` and says through it what
it wants: the producer the topics it sends to, the fetcher the topics of its
assignment, the group membership the subscribed topics, the admin client every topic.
The topics a Metadata request names are derived from all handles together
(:meth:`TopicInterest.request_topics`): a topic is asked for while at least one
owner holds it (a count per topic), and every topic only while some owner asked for
that explicitly (:meth:`InterestHandle.want_all`).

Why not one shared set that everybody rewrites: with ``set_topics(client.topics | x)``
at eight places, one owner dropping a topic dropped it for all, and dropping the last
one made the set empty, which aiokafka reads as "every topic": a producer that forgot
its only topic made the client fetch the metadata of the whole cluster, every
``metadata_max_age_ms``. Here an empty union asks for no topic (brokers and controller
only) once any owner has registered; only a client nobody registered with (a bare
:class:`~aiokafka.cluster.AIOKafkaClient`, as aiokafka 0.14 code uses it) keeps
aiokafka's meaning of an empty set.

:class:`TopicInterest` is plain bookkeeping (no asyncio, no I/O).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

__all__ = ["GrowCallback", "InterestHandle", "TopicInterest", "check_topic_names"]

#: Called by a handle after it asked for ``topics`` (or for every topic when the
#: flag is true); returns a future that resolves when the metadata covers them.
GrowCallback = Callable[[frozenset[str], bool], "asyncio.Future[bool]"]


def check_topic_names(topics: Iterable[str]) -> frozenset[str]:
    """``topics`` as a frozenset, checked.

    Raises:
        TypeError: ``topics`` is a str (one topic name passed by mistake).
        ValueError: a name is not a non-empty str.
    """
    if isinstance(topics, str):
        raise TypeError("topics must be a collection of topic names, not a str")
    names = frozenset(topics)
    for t in names:
        if not isinstance(t, str) or not t:
            raise ValueError(f"topics: invalid topic name {t!r}")
    return names


class TopicInterest:
    """Topics wanted per owner, counted across owners, and the all-topics owners.

    Owners are any hashable objects (the client uses its handles). ``version``
    increases with every change of what a Metadata request would ask, so the
    refresher can tell whether a refresh in flight already covers a new topic.
    """

    def __init__(self) -> None:
        self._owned: dict[object, frozenset[str]] = {}
        self._counts: dict[str, int] = {}
        self._all: set[object] = set()
        self._declared = False
        self._union: frozenset[str] | None = frozenset()
        self.version = 0

    def register(self, owner: object, *, declares: bool = True) -> None:
        """Make ``owner`` known (with no topics). A declaring owner ends the
        aiokafka default of a client nobody registered with: from then on an empty
        union asks for no topic. The client's own handle behind ``set_topics()``
        does not declare."""
        self._owned.setdefault(owner, frozenset())
        if declares and not self._declared:
            self._declared = True
            self._changed()

    def set(self, owner: object, topics: Iterable[str]) -> frozenset[str]:
        """Make ``owner``'s topics exactly ``topics``; returns the topics no owner
        held before (those the next Metadata request adds)."""
        new = frozenset(topics)
        old = self._owned.get(owner, frozenset())
        self._owned[owner] = new
        added = []
        for t in new - old:
            count = self._counts.get(t, 0)
            if not count:
                added.append(t)
            self._counts[t] = count + 1
        removed = False
        for t in old - new:
            count = self._counts[t] - 1
            if count:
                self._counts[t] = count
            else:
                del self._counts[t]
                removed = True
        if added or removed:
            self._changed()
        return frozenset(added)

    def add(self, owner: object, topics: Iterable[str]) -> frozenset[str]:
        """Add ``topics`` to ``owner``'s; returns the topics no owner held before."""
        return self.set(owner, self._owned.get(owner, frozenset()) | frozenset(topics))

    def remove(self, owner: object, topics: Iterable[str]) -> None:
        """Drop ``topics`` from ``owner``'s (those it does not hold are ignored)."""
        self.set(owner, self._owned.get(owner, frozenset()) - frozenset(topics))

    def want_all(self, owner: object, enabled: bool) -> bool:
        """Turn ``owner``'s all-topics mode on or off; True if this turned the
        client's all-topics requests on."""
        before = self.wants_all
        if enabled:
            self._all.add(owner)
        else:
            self._all.discard(owner)
        if before != self.wants_all:
            self._changed()
        return not before and self.wants_all

    def release(self, owner: object) -> None:
        """Forget ``owner``: its topics and its all-topics mode."""
        self.set(owner, ())
        self.want_all(owner, False)
        self._owned.pop(owner, None)

    def _changed(self) -> None:
        self._union = None
        self.version += 1

    # -- queries ------------------------------------------------------------------------

    def owned(self, owner: object) -> frozenset[str]:
        """The topics ``owner`` holds."""
        return self._owned.get(owner, frozenset())

    def holders(self, topic: str) -> int:
        """How many owners hold ``topic``."""
        return self._counts.get(topic, 0)

    def wants_all_mode(self, owner: object) -> bool:
        """Whether ``owner`` asked for every topic."""
        return owner in self._all

    @property
    def topics(self) -> frozenset[str]:
        """Every topic some owner holds."""
        union = self._union
        if union is None:
            union = self._union = frozenset(self._counts)
        return union

    @property
    def wants_all(self) -> bool:
        """Whether Metadata requests ask for every topic: some owner asked for
        that, or no owner registered and no topic is held (aiokafka's default)."""
        return bool(self._all) or (not self._declared and not self._counts)

    def request_topics(self) -> list[str] | None:
        """What a MetadataRequest's ``topics`` should be: ``None`` for every topic,
        else the sorted names (possibly none: brokers and controller only)."""
        if self.wants_all:
            return None
        return sorted(self.topics)


class InterestHandle:
    """One owner's say in which topics the client keeps metadata of.

    Made by :meth:`aiokafka.cluster.AIOKafkaClient.topic_interest`. The methods that
    ask for more return a future that resolves to ``True`` once the client's
    metadata covers what was asked (at once if it already does) and raises what the
    refresh raised; not awaiting it is fine (the refresh runs anyway, a failure is
    retried by the client's periodic refresh).
    """

    def __init__(self, interest: TopicInterest, name: str, grow: GrowCallback) -> None:
        self.name = name
        self._interest = interest
        self._grow = grow
        self._closed = False

    def __repr__(self) -> str:
        return f"<InterestHandle {self.name!r} topics={sorted(self.topics)}>"

    @property
    def topics(self) -> frozenset[str]:
        """The topics this owner holds."""
        return self._interest.owned(self)

    @property
    def all_topics(self) -> bool:
        """Whether this owner asked for every topic."""
        return self._interest.wants_all_mode(self)

    def add(self, topics: Iterable[str]) -> asyncio.Future[bool]:
        """Hold ``topics`` too (holding one twice is holding it once).

        Raises:
            TypeError, ValueError: see :func:`check_topic_names` (at the call).
        """
        return self._change(self._interest.add, topics)

    def set(self, topics: Iterable[str]) -> asyncio.Future[bool]:
        """Hold exactly ``topics``; an empty set holds none (never "every topic").

        Raises:
            TypeError, ValueError: see :func:`check_topic_names` (at the call).
        """
        return self._change(self._interest.set, topics)

    def _change(
        self, change: Callable[[object, frozenset[str]], object], topics: Iterable[str]
    ) -> asyncio.Future[bool]:
        # A closed handle holds nothing any more: the change is dropped.
        names = check_topic_names(topics)
        if self._closed:
            return self._grow(frozenset(), False)
        change(self, names)
        return self._grow(names, False)

    def remove(self, topics: Iterable[str]) -> None:
        """Stop holding ``topics``. The metadata already cached keeps them until the
        next refresh; other owners holding them keep them asked for."""
        self._interest.remove(self, check_topic_names(topics))

    def want_all(self, enabled: bool = True) -> asyncio.Future[bool]:
        """Ask for every topic's metadata (``enabled=False``: stop asking)."""
        if self._closed:
            return self._grow(frozenset(), False)
        grew = self._interest.want_all(self, enabled)
        return self._grow(frozenset(), grew)

    def close(self) -> None:
        """Release everything this owner holds (idempotent). Later calls hold
        nothing (their futures resolve at once): an owner's task that is still
        winding down while its owner stops must not fail for it."""
        if not self._closed:
            self._closed = True
            self._interest.release(self)
