"""What every admin operation shares: routing, retries and error conversion.

Each operation module (``topics.py``, ``configs.py``, ...) is a mixin over
:class:`AdminBase`; :class:`~aiokafka.admin.client.AIOKafkaAdminClient` combines them.

Retries go through the shared client's policy
(:meth:`aiokafka.cluster.AIOKafkaClient.call_with_retry`): a retriable error raised
by an attempt (connection lost, NOT_CONTROLLER, NOT_COORDINATOR, NOT_LEADER...) makes
it refresh metadata or forget the coordinator as the error table says, back off and
try again until the deadline. Batched operations retry only the items that failed
retriably (:meth:`AdminBase._retry_items`), so e.g. a topic already created by the
first attempt is not created twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from aiokafka.cluster import AIOKafkaClient, CoordinatorType
from aiokafka.errors import (
    CoordinatorNotAvailableError,
    KafkaError,
    KafkaProtocolError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NoBrokersAvailable,
    NotCoordinatorError,
    UnknownTopicOrPartitionError,
    for_code,
)
from aiokafka.structs import TopicPartition

if TYPE_CHECKING:
    from aiokafka.protocol.request import Request

__all__ = ["AdminBase", "error_for", "gather_all", "instances", "raise_first"]

K = TypeVar("K", bound=Hashable)
# The response type of a request (``Request[R]`` -> ``R``).
R = TypeVar("R")
T = TypeVar("T")

#: An attempt's outcome per item: a result, or the error for that item.
Outcome = dict[K, Any]


def error_for(code: int, message: str | None, what: str) -> KafkaError | None:
    """The typed error for a response's error ``code`` about ``what`` (``None`` if 0)."""
    if not code:
        return None
    cls = for_code(code)
    detail = f": {message}" if message else ""
    return cls(f"{what}{detail}")


class PartitionResult(Protocol):
    """A response's per-partition entry (some versions add an ``error_message``)."""

    partition_index: int
    error_code: int


class TopicResult(Protocol):
    """A response's per-topic entry: its name and its partitions' entries."""

    name: str

    @property
    def partitions(self) -> Sequence[PartitionResult]: ...


def check(code: int, message: str | None, what: str) -> None:
    """Raise the typed error for ``code`` (no-op for 0)."""
    err = error_for(code, message, what)
    if err is not None:
        raise err


def instances(name: str, values: Iterable[object], cls: type[T]) -> list[T]:
    """``values`` as a list, each checked to be a ``cls``.

    Raises:
        TypeError: naming the argument ``name`` and the first wrong value.
    """
    items: list[T] = []
    for item in values:
        if not isinstance(item, cls):
            raise TypeError(f"{name} must be {cls.__name__} instances, got {item!r}")
        items.append(item)
    return items


async def gather_all(*calls: Awaitable[T]) -> list[T]:
    """Await ``calls`` concurrently, each to its end (none is left running), and give
    their results in order, or raise the first one's error."""
    answers = await asyncio.gather(*calls, return_exceptions=True)
    results: list[T] = []
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
        results.append(answer)
    return results


def raise_first(outcome: Mapping[Any, object]) -> None:
    """Raise if any value of ``outcome`` is an error.

    The raised exception has the class of the first error; its message lists every
    failed item, so one exception reports a partly failed batch.
    """
    errors = [v for v in outcome.values() if isinstance(v, KafkaError)]
    if not errors:
        return
    first = errors[0]
    if len(errors) == 1:
        raise first
    text = "; ".join(f"{type(e).__name__}: {e}" for e in errors)
    raise type(first)(f"{len(errors)} of {len(outcome)} failed: {text}") from first


class AdminBase:
    """Routing and retry helpers over one :class:`AIOKafkaClient`."""

    _client: AIOKafkaClient

    @staticmethod
    def _partition_errors(
        topics: Iterable[TopicResult], what: Callable[[TopicPartition], str]
    ) -> dict[TopicPartition, KafkaError | None]:
        """Each partition of a response's ``topics`` with its typed error (``None``
        where it succeeded); ``what(tp)`` names what failed, as :func:`error_for`
        takes it."""
        return {
            tp: error_for(p.error_code, getattr(p, "error_message", None), what(tp))
            for t in topics
            for p in t.partitions
            for tp in (TopicPartition(t.name, p.partition_index),)
        }

    @property
    def _request_timeout_ms(self) -> int:
        return self._client.config.request_timeout_ms

    def _deadline(self, timeout_ms: int | None = None) -> float:
        # A broker-side timeout (CreateTopics timeout_ms, ...) may exceed the request
        # timeout; leave room for both, or the client would give up first.
        budget = self._request_timeout_ms + (timeout_ms or 0)
        return time.monotonic() + budget / 1000

    def _send_timeout(self, timeout_ms: int | None) -> int | None:
        return None if not timeout_ms else timeout_ms + self._request_timeout_ms

    def _any_node(self) -> int:
        node = self._client.least_loaded_node()
        if node is None:
            raise NoBrokersAvailable("no broker known")
        return node

    async def _send_any(self, request: Request[R], timeout_ms: int | None = None) -> R:
        """Send to the least loaded broker, retrying retriable errors."""

        async def attempt() -> R:
            return await self._client.send(
                self._any_node(), request, timeout_ms=self._send_timeout(timeout_ms)
            )

        return await self._client.call_with_retry(attempt, self._deadline(timeout_ms))

    async def _send_node(self, node_id: int, request: Request[R]) -> R:
        """Send to one broker, retrying retriable errors (e.g. reconnecting)."""

        async def attempt() -> R:
            return await self._client.send(node_id, request)

        return await self._client.call_with_retry(attempt, self._deadline())

    async def _send_coordinator(
        self,
        key: str,
        key_type: CoordinatorType,
        request: Request[R],
        check_response: Callable[[R], None] | None = None,
    ) -> tuple[int, R]:
        """Send to ``key``'s coordinator; NOT_COORDINATOR & co. are retried after
        looking the coordinator up again.

        ``check_response`` raises the response's top-level error, so a retriable one
        (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) is retried. Returns the
        coordinator's node id and the response.
        """

        async def attempt() -> tuple[int, R]:
            node = await self._client.coordinator_for(key, key_type)
            response = await self._client.send(node, request)
            if check_response is not None:
                check_response(response)
            return node, response

        return await self._client.call_with_retry(
            attempt, self._deadline(), coordinator=(key, key_type)
        )

    async def _retry_items(
        self,
        keys: Iterable[K],
        attempt: Callable[[list[K]], Awaitable[Mapping[K, Any]]],
        *,
        deadline: float | None = None,
        coordinator: tuple[str, CoordinatorType] | None = None,
        final: tuple[type[KafkaError], ...] = (),
    ) -> dict[K, Any]:
        """Run ``attempt(pending)`` until no item failed retriably or time is up.

        ``attempt`` returns a result or a :class:`KafkaError` per item; items with a
        retriable error are tried again (the first such error drives the client's
        retry policy: metadata refresh, coordinator lookup, back-off). Items still
        failing at the deadline get their last error. An exception raised by
        ``attempt`` itself fails every pending item if retriable, else propagates.
        Per-item errors of the ``final`` classes are not retried even if retriable
        (e.g. UNKNOWN_TOPIC_OR_PARTITION when deleting a topic means it is gone).
        """
        results: dict[K, Any] = {}
        pending = list(dict.fromkeys(keys))
        last: dict[K, KafkaError] = {}

        async def once() -> None:
            nonlocal pending
            try:
                outcome = await attempt(list(pending))
            except KafkaError as exc:
                if exc.retriable:
                    last.update(dict.fromkeys(pending, exc))
                raise
            retry: list[K] = []
            first: KafkaError | None = None
            for key in pending:
                value = outcome.get(key, KafkaProtocolError(f"the response omitted {key!r}"))
                if (
                    isinstance(value, KafkaError)
                    and value.retriable
                    and not isinstance(value, final)
                ):
                    retry.append(key)
                    last[key] = value
                    first = first or value
                else:
                    results[key] = value
            pending = retry
            if first is not None:
                raise first

        try:
            await self._client.call_with_retry(once, deadline, coordinator=coordinator)
        except KafkaTimeoutError as exc:
            for key in pending:
                results[key] = last.get(key, exc)
        return {key: results[key] for key in dict.fromkeys(keys) if key in results}

    async def _per_coordinator(
        self,
        keys: list[str],
        key_type: CoordinatorType,
        send: Callable[[int, list[str]], Awaitable[Mapping[str, Any]]],
        forced: int | None = None,
    ) -> dict[str, Any]:
        """One attempt of a batched coordinator request (an ``attempt`` of
        :meth:`_retry_items`): ``send(node, its_keys)`` for each coordinator of
        ``keys`` in turn, or once to the node id ``forced``.

        A :class:`KafkaError` raised by ``send`` fails that node's keys. The retry
        loop knows one coordinator key at most, so each key whose coordinator moved
        (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) is forgotten here, and the next
        attempt looks it up again. Returns a result or an error per key.
        """
        by_node: dict[int, list[str]] = {}
        if forced is not None:
            by_node[forced] = list(keys)
        else:
            coordinators = await self._client.coordinators_for(keys, key_type)
            for key in keys:
                by_node.setdefault(coordinators[key], []).append(key)
        out: dict[str, Any] = {}
        for node, names in by_node.items():
            try:
                out.update(await send(node, names))
            except KafkaError as exc:
                out.update(dict.fromkeys(names, exc))
        for key, value in out.items():
            if isinstance(value, (NotCoordinatorError, CoordinatorNotAvailableError)):
                self._client.invalidate_coordinator(key, key_type)
        return out

    # -- partition leaders ---------------------------------------------------------------

    async def _require_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Fail fast if a topic/partition does not exist (after one refresh), instead
        of retrying UNKNOWN_TOPIC_OR_PARTITION until the deadline."""
        tps = instances("partitions", partitions, TopicPartition)
        if all(self._client.cluster.partition(tp) is not None for tp in tps):
            return
        await self._client.refresh_metadata()
        missing = [tp for tp in tps if self._client.cluster.partition(tp) is None]
        if missing:
            raise UnknownTopicOrPartitionError(
                "unknown partitions: " + ", ".join(f"{tp.topic}[{tp.partition}]" for tp in missing)
            )

    async def _per_leader(
        self,
        partitions: Iterable[TopicPartition],
        send: Callable[[int, list[TopicPartition]], Awaitable[Mapping[TopicPartition, Any]]],
        deadline: float | None = None,
    ) -> dict[TopicPartition, Any]:
        """Call ``send(leader, its_partitions)`` for each leader concurrently; retry
        partitions whose leader moved or failed.

        Returns a result or a :class:`KafkaError` per partition.
        """
        tps = list(dict.fromkeys(partitions))
        await self._require_partitions(tps)

        async def attempt(pending: list[TopicPartition]) -> dict[TopicPartition, Any]:
            out: dict[TopicPartition, Any] = {}
            by_leader: dict[int, list[TopicPartition]] = {}
            for tp in pending:
                leader = self._client.cluster.leader_for(tp)
                if leader is None:
                    out[tp] = LeaderNotAvailableError(f"{tp.topic}[{tp.partition}] has no leader")
                else:
                    by_leader.setdefault(leader, []).append(tp)
            leaders = list(by_leader)
            answers = await asyncio.gather(
                *(send(node, by_leader[node]) for node in leaders), return_exceptions=True
            )
            for node, answer in zip(leaders, answers, strict=True):
                if isinstance(answer, KafkaError):
                    out.update(dict.fromkeys(by_leader[node], answer))
                elif isinstance(answer, BaseException):
                    raise answer  # a bug or cancellation: never hidden
                else:
                    out.update(answer)
            return out

        return await self._retry_items(tps, attempt, deadline=deadline)
