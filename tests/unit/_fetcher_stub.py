"""A stand-in for :class:`~aiokafka.cluster.client.AIOKafkaClient` under the consumer's
fetcher: a metadata snapshot the test sets, and answers scripted per broker.

Tests drive the fetcher through its public :meth:`~aiokafka.consumer.fetcher.Fetcher.run_once`
(one loop turn, its fetches and validation answered): Fetch requests to a node get the
answers queued with :meth:`FetcherStub.answer_fetch` (a response, or an exception to
raise), an empty response once the queue is empty; OffsetForLeaderEpoch requests get
``epoch_answers[node]``. Everything sent is in :attr:`FetcherStub.sent`.

It satisfies :class:`~aiokafka.cluster.ports.FetcherClient` and
:class:`~aiokafka.cluster.ports.OffsetsRequestClient`, so it is passed without casts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from types import MappingProxyType
from typing import Any, TypeVar

from aiokafka.cluster.interest import InterestHandle, TopicInterest
from aiokafka.cluster.metadata import BrokerMap, ClusterMetadata, TopicMap, TopicMetadata
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.protocol import messages as m
from aiokafka.structs import BrokerMetadata, PartitionMetadata, TopicPartition

T = TypeVar("T")


def metadata(leaders: dict[TopicPartition, tuple[int, int]]) -> ClusterMetadata:
    """Brokers 1-3 (racks r0-r2) and topic ``"t"``: ``{tp: (leader, leader_epoch)}``,
    every partition replicated on all three."""
    parts = {
        tp.partition: PartitionMetadata(
            "t", tp.partition, leader, (1, 2, 3), (1, 2, 3), 0, epoch, ()
        )
        for tp, (leader, epoch) in leaders.items()
    }
    brokers = {n: BrokerMetadata(n, "127.0.0.1", 9000 + n, f"r{n - 1}") for n in (1, 2, 3)}
    topic = TopicMetadata("t", partitions=MappingProxyType(parts))
    return ClusterMetadata(BrokerMap(brokers), TopicMap({"t": topic}))


def _covered(topics: frozenset[str], all_topics: bool) -> asyncio.Future[bool]:
    """The stub's metadata covers every topic asked for."""
    done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
    done.set_result(True)
    return done


class FetcherStub:
    """The cluster client as the fetcher sees it."""

    def __init__(self, cluster: ClusterMetadata) -> None:
        self.cluster = cluster
        self.config = ConsumerConfig.from_options().client
        #: ``(node, request)`` of every request sent, in order.
        self.sent: list[tuple[int, Any]] = []
        #: OffsetForLeaderEpoch answers by node (a response, or an exception to raise).
        self.epoch_answers: dict[int, Any] = {}
        #: OffsetForLeaderEpoch version per node (4 unless set).
        self.versions: dict[int, int] = {}
        #: Called as each request is sent (to change state while it is in flight).
        self.during_send: Callable[[], object] | None = None
        #: What apply_leader_hint() returns, and the hints it got.
        self.hint_result = True
        self.hints: list[tuple[TopicPartition, int, int]] = []
        #: Reasons of the metadata refreshes asked for.
        self.refreshes: list[str] = []
        self._fetch_answers: dict[int, list[Any]] = {}

    def answer_fetch(self, node: int, answer: Any) -> None:
        """Queue the answer to the next Fetch sent to ``node``."""
        self._fetch_answers.setdefault(node, []).append(answer)

    def fetches(self) -> list[tuple[int, Any]]:
        """``(node, FetchRequest)`` of every Fetch sent."""
        return [(n, r) for n, r in self.sent if isinstance(r, m.FetchRequest)]

    def last_fetch_offsets(self) -> dict[TopicPartition, int]:
        """The partitions and offsets of the last Fetch sent (``{}`` if none)."""
        fetches = self.fetches()
        if not fetches:
            return {}
        request = fetches[-1][1]
        return {
            TopicPartition(t.topic, p.partition): p.fetch_offset
            for t in request.topics
            for p in t.partitions
        }

    # -- the client's methods the fetcher and its offsets client use ----------------------

    async def api_version(self, node: int, api_key: int, max_version: int | None = None) -> int:
        if api_key == m.FetchRequest.API_KEY:
            return 12  # topic names, not ids
        return self.versions.get(node, 4)

    async def send(self, node: int, request: Any, **kw: Any) -> Any:
        self.sent.append((node, request))
        if self.during_send is not None:
            self.during_send()
        if isinstance(request, m.FetchRequest):
            queued = self._fetch_answers.get(node)
            answer = queued.pop(0) if queued else m.FetchResponse()
        else:
            answer = self.epoch_answers[node]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def apply_leader_hint(
        self, tp: TopicPartition, leader: int, epoch: int, endpoints: Iterable[BrokerMetadata]
    ) -> bool:
        self.hints.append((tp, leader, epoch))
        return self.hint_result

    def request_refresh(self, reason: str) -> asyncio.Future[ClusterMetadata]:
        self.refreshes.append(reason)
        done: asyncio.Future[ClusterMetadata] = asyncio.get_running_loop().create_future()
        done.set_result(self.cluster)
        return done

    def topic_interest(self, name: str) -> InterestHandle:
        return InterestHandle(TopicInterest(), name, _covered)

    def leader_for(self, tp: TopicPartition) -> int:
        leader = self.cluster.leader_for(tp)
        if leader is None:
            raise AssertionError(f"no leader for {tp} in the stub's metadata")
        return leader

    async def coordinator_for(self, key: str, key_type: Any = None) -> int:
        raise AssertionError("the fetcher tests have no group coordinator")

    async def call_with_retry(
        self, fn: Callable[[], Awaitable[T]], deadline: float | None = None, **kw: Any
    ) -> T:
        return await fn()
