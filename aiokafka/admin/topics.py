"""Topic and cluster operations: create/delete/list/describe topics, partitions,
cluster description."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aiokafka._timeout import wait_for
from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.acl_types import AclOperation
from aiokafka.admin.results import (
    ClusterDescription,
    PartitionCreationResult,
    PartitionDescription,
    TopicCreationResult,
    TopicCreationResults,
    TopicDeletionResult,
    TopicDescription,
)
from aiokafka.admin.types import NewPartitions, NewTopic, check_count
from aiokafka.errors import (
    KafkaError,
    KafkaProtocolError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
)
from aiokafka.protocol._gen import create_partitions as _cp
from aiokafka.protocol._gen import create_topics as _ct
from aiokafka.protocol._gen import delete_topics as _dt
from aiokafka.protocol._gen import describe_cluster as _dc
from aiokafka.protocol._gen import describe_topic_partitions as _dtp
from aiokafka.protocol._gen import metadata as _md
from aiokafka.structs import BrokerMetadata

__all__ = ["TopicsMixin", "authorized_operations"]

_ZERO_UUID = uuid.UUID(int=0)
# Kafka sends INT32_MIN when authorized operations were not requested.
_OPS_NOT_REQUESTED = -(2**31)


def authorized_operations(bits: int) -> frozenset[AclOperation] | None:
    """Decode an authorized-operations bit field (bit ``n`` = ``AclOperation(n)``)."""
    if bits == _OPS_NOT_REQUESTED:
        return None
    return frozenset(op for op in AclOperation if bits & (1 << int(op)))


def _timeout(arg: str, value: int | None, default: int) -> int:
    if value is None:
        return default
    return check_count(arg, value, 0)


def _names(arg: str, values: object) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{arg} must be a list of str")
    out = list(values)
    for v in out:
        if not isinstance(v, str) or not v:
            raise ValueError(f"{arg}: invalid name {v!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"{arg}: duplicate names")
    return out


class TopicsMixin(AdminBase):
    """Topic and cluster operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
        *,
        raise_errors: bool = False,
    ) -> TopicCreationResults:
        """Create topics (sent to the controller).

        Per item, as in aiokafka: a topic that could not be created comes back with
        its ``error`` set (``TopicAlreadyExistsError``,
        ``InvalidReplicationFactorError``, ``InvalidConfigurationError``,
        ``PolicyViolationError``, ...) and a non-zero code in ``.topic_errors``;
        nothing is raised for it unless ``raise_errors``. Topics are independent:
        the others are created.

        Args:
            new_topics: What to create.
            timeout_ms: How long the controller may wait for the topics to be
                created; default ``request_timeout_ms``.
            validate_only: Check the request (names, configs, replication factor
                against live brokers) without creating anything.
            raise_errors: Raise the first failed topic's error class (its message
                names every failed topic) instead of returning it.

        Returns:
            Per topic, what was (or would be) created or why not; ``.topic_errors``
            answers aiokafka's ``(topic, error_code, error_message)`` list and
            ``.errors`` maps each failed topic to its error.

        Raises:
            aiokafka.errors.KafkaError: a per-topic error with ``raise_errors``; a
                request that failed as a whole (no controller, lost connection
                after retries) always.
            ValueError, TypeError: bad arguments (duplicate names, not NewTopic).
        """
        topics = instances("new_topics", new_topics, NewTopic)
        _names("new_topics", [t.name for t in topics])
        timeout = _timeout("timeout_ms", timeout_ms, self._request_timeout_ms)
        by_name = {t.name: t for t in topics}

        async def attempt(pending: list[str]) -> dict[str, Any]:
            request = _ct.CreateTopicsRequest(
                topics=[_creatable(by_name[n]) for n in pending],
                timeout_ms=timeout,
                validate_only=bool(validate_only),
            )
            response = await self._client.send_to_controller(
                request, timeout_ms=self._send_timeout(timeout)
            )
            out: dict[str, Any] = {}
            for r in response.topics:
                err = error_for(r.error_code, r.error_message, f"create topic {r.name!r}")
                out[r.name] = err or TopicCreationResult(
                    r.name,
                    r.topic_id,
                    r.num_partitions,
                    r.replication_factor,
                    {c.name: c.value for c in r.configs or ()},
                )
            return out

        outcome = await self._retry_items(by_name, attempt, deadline=self._deadline(timeout))
        if raise_errors:
            raise_first(outcome)
        return TopicCreationResults(
            {
                n: TopicCreationResult(n, _ZERO_UUID, -1, -1, error=v)
                if isinstance(v, KafkaError)
                else v
                for n, v in outcome.items()
            }
        )

    async def delete_topics(
        self,
        topics: Sequence[str],
        timeout_ms: int | None = None,
        *,
        raise_errors: bool = False,
    ) -> TopicDeletionResult:
        """Delete topics (sent to the controller).

        Per item, as in aiokafka: a topic that could not be deleted
        (``UnknownTopicOrPartitionError``, ``TopicAuthorizationFailedError``, ...)
        is in the result's ``errors`` with a non-zero code in
        ``.topic_error_codes``; the other topics are still deleted.

        Args:
            topics: Topic names.
            timeout_ms: How long the controller may wait; default
                ``request_timeout_ms``.
            raise_errors: Raise the first failed topic's error class (its message
                names every failed topic) instead of returning it.

        Returns:
            The topics asked and the errors of those not deleted;
            ``.topic_error_codes`` answers aiokafka's response.

        Raises:
            aiokafka.errors.KafkaError: a per-topic error with ``raise_errors``; a
                request that failed as a whole always.
        """
        names = _names("topics", topics)
        timeout = _timeout("timeout_ms", timeout_ms, self._request_timeout_ms)

        async def attempt(pending: list[str]) -> dict[str, Any]:
            request = _dt.DeleteTopicsRequest(
                topic_names=pending,
                topics=[_dt.DeleteTopicState(name=n) for n in pending],
                timeout_ms=timeout,
            )
            response = await self._client.send_to_controller(
                request, timeout_ms=self._send_timeout(timeout)
            )
            # Names are nullable from v6 (a delete by topic id); these deletes are by
            # name, so an entry without one answers nothing asked (the topic then
            # fails as omitted from the response).
            return {
                r.name: error_for(r.error_code, r.error_message, f"delete topic {r.name!r}")
                for r in response.responses
                if r.name is not None
            }

        outcome = await self._retry_items(
            names,
            attempt,
            deadline=self._deadline(timeout),
            final=(UnknownTopicOrPartitionError,),
        )
        if raise_errors:
            raise_first(outcome)
        errors = {n: v for n, v in outcome.items() if isinstance(v, KafkaError)}
        return TopicDeletionResult(names, errors)

    async def list_topics(self) -> list[str]:
        """Names of all topics, internal ones included, sorted."""
        response = await self._metadata(None, False)
        return sorted(t.name for t in response.topics if t.name is not None)

    async def describe_topics(
        self,
        topics: Sequence[str] | None = None,
        include_authorized_operations: bool = False,
        *,
        raise_errors: bool = False,
    ) -> list[TopicDescription]:
        """Describe topics (partitions, leaders, replicas) from cluster metadata.

        Per item, as in aiokafka: a topic that does not exist (or may not be
        described) comes back with its ``error`` set
        (``UnknownTopicOrPartitionError``, ``TopicAuthorizationFailedError``), no
        partitions and ``t["error_code"]`` non-zero.

        Args:
            topics: Names, or ``None`` for all topics.
            include_authorized_operations: Also report what the caller may do.
            raise_errors: Raise the first failed topic's error class (its message
                names every failed topic) instead of returning it.

        Returns:
            One description per topic, in the order asked (sorted for ``None``);
            each also answers aiokafka's dict keys (``t["topic"]``,
            ``t["partitions"]``, ``t["error_code"]``).

        Raises:
            aiokafka.errors.KafkaError: a per-topic error with ``raise_errors``; a
                request that failed as a whole always.
        """
        names = None if topics is None else _names("topics", topics)
        response = await self._metadata(names, bool(include_authorized_operations))
        found: dict[str, Any] = {}
        for t in response.topics:
            if t.name is None:
                continue
            found[t.name] = error_for(t.error_code, None, f"topic {t.name!r}")
            # A topic just created may have no leaders yet; it still exists.
            if found[t.name] is None or isinstance(found[t.name], LeaderNotAvailableError):
                found[t.name] = _describe_topic(t)
        if names is not None:
            for n in names:
                found.setdefault(n, UnknownTopicOrPartitionError(f"topic {n!r}"))
            found = {n: found[n] for n in names}
        if raise_errors:
            raise_first(found)
        return [
            TopicDescription(n, _ZERO_UUID, False, [], error=v) if isinstance(v, KafkaError) else v
            for n, v in ((n, found[n]) for n in (names if names is not None else sorted(found)))
        ]

    async def describe_topic_partitions(
        self, topics: Sequence[str] | None = None, response_partition_limit: int = 2000
    ) -> list[TopicDescription]:
        """Describe topics with the DescribeTopicPartitions API (KIP-966, Kafka 3.7+):
        what :meth:`describe_topics` says plus each partition's eligible leader
        replicas (``eligible_leader_replicas``, ``last_known_elr``).

        The broker answers at most ``response_partition_limit`` partitions at a time
        and a cursor to the rest; this follows the cursor to the end, so a topic
        split over several answers comes back whole.

        Args:
            topics: Names, or ``None`` for every topic the caller may describe.
            response_partition_limit: Partitions per answer (1 or more).

        Returns:
            One description per topic, in the order asked (by name for ``None``); a
            topic that does not exist or may not be described has its ``error`` set
            and no partitions, as :meth:`describe_topics` reports it.

        Raises:
            aiokafka.errors.UnsupportedVersionError: the broker lacks the API.
            aiokafka.errors.KafkaProtocolError: the broker's cursor did not advance.
        """
        names = None if topics is None else _names("topics", topics)
        check_count("response_partition_limit", response_partition_limit, 1)
        if names == []:
            return []  # an empty topic list on the wire asks for every topic
        described: dict[str, Any] = {}
        partitions: dict[str, list[Any]] = {}
        cursor: _dtp.Cursor | None = None
        while True:
            request = _dtp.DescribeTopicPartitionsRequest(
                topics=[_dtp.TopicRequest(name=n) for n in names or ()],
                response_partition_limit=response_partition_limit,
                cursor=cursor,
            )
            response = await self._send_any(request)
            for t in response.topics:
                if t.name is None:
                    continue
                err = error_for(t.error_code, None, f"topic {t.name!r}")
                if err is not None and not isinstance(err, LeaderNotAvailableError):
                    described[t.name] = err
                    continue
                described.setdefault(t.name, t)
                partitions.setdefault(t.name, []).extend(t.partitions)
            nxt = response.next_cursor
            if nxt is None:
                break
            if cursor is not None and (nxt.topic_name, nxt.partition_index) <= (
                cursor.topic_name,
                cursor.partition_index,
            ):
                raise KafkaProtocolError(
                    f"DescribeTopicPartitions cursor did not advance past "
                    f"{cursor.topic_name}[{cursor.partition_index}]"
                )
            cursor = _dtp.Cursor(topic_name=nxt.topic_name, partition_index=nxt.partition_index)
        order = names if names is not None else sorted(described)
        out: list[TopicDescription] = []
        for n in order:
            entry = described.get(n) or UnknownTopicOrPartitionError(f"topic {n!r}")
            if isinstance(entry, KafkaError):
                out.append(TopicDescription(n, _ZERO_UUID, False, [], error=entry))
            else:
                out.append(_describe_topic(entry, partitions[n]))
        return out

    async def wait_for_topics(self, topics: Sequence[str], timeout_ms: int = 10000) -> None:
        """Wait until every topic of ``topics`` is ready to use: the cluster metadata
        has it without error and every one of its partitions has a leader.

        ``create_topics`` returns once the controller accepted the topics; the
        brokers learn of them, and elect their leaders, a moment later (a producer
        or consumer started at once may see ``UnknownTopicOrPartitionError`` or no
        leader). This polls :meth:`describe_topics`, first after 50 ms and then
        twice as long each time, up to 1 s between polls.

        Args:
            topics: Names (an empty list returns at once).
            timeout_ms: How long to wait in all.

        Raises:
            aiokafka.errors.KafkaTimeoutError: a topic is not ready after
                ``timeout_ms``; the message names each one and why.
        """
        names = _names("topics", topics)
        check_count("timeout_ms", timeout_ms, 0)
        deadline = time.monotonic() + timeout_ms / 1000
        pause = 0.05
        pending: dict[str, str] = dict.fromkeys(names, "not described yet")
        while pending:
            remaining = deadline - time.monotonic()
            try:
                described = await wait_for(self.describe_topics(list(pending)), remaining)
            except (asyncio.TimeoutError, KafkaTimeoutError):
                break
            pending = {d.name: why for d in described if (why := _not_ready(d)) is not None}
            remaining = deadline - time.monotonic()
            if not pending or remaining <= 0:
                break
            await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 2, 1.0)
        if pending:
            detail = "; ".join(f"{n}: {why}" for n, why in pending.items())
            raise KafkaTimeoutError(
                f"{len(pending)} of {len(names)} topics not ready after {timeout_ms} ms: {detail}"
            )

    async def describe_cluster(
        self, include_authorized_operations: bool = False
    ) -> ClusterDescription:
        """The cluster id, the controller and the live brokers.

        Uses DescribeCluster (KIP-700), or Metadata on brokers without it. The
        result also answers aiokafka's dict keys (``["controller_id"]``,
        ``["cluster_id"]``, ``["brokers"]``).
        """
        request = _dc.DescribeClusterRequest(
            include_cluster_authorized_operations=bool(include_authorized_operations)
        )
        try:
            response = await self._send_any(request)
        except UnsupportedVersionError:
            md = await self._metadata([], bool(include_authorized_operations))
            brokers = [BrokerMetadata(b.node_id, b.host, b.port, b.rack) for b in md.brokers]
            return _cluster(
                md.cluster_id, md.controller_id, brokers, md.cluster_authorized_operations
            )
        check(response.error_code, response.error_message, "describe cluster")
        brokers = [BrokerMetadata(b.broker_id, b.host, b.port, b.rack) for b in response.brokers]
        return _cluster(
            response.cluster_id,
            response.controller_id,
            brokers,
            response.cluster_authorized_operations,
        )

    async def create_partitions(
        self,
        topic_partitions: Mapping[str, NewPartitions],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> PartitionCreationResult:
        """Add partitions to existing topics (sent to the controller).

        A per-topic error raises, as aiokafka 0.14's ``create_partitions`` did (unlike
        ``create_topics``, which returns them).

        Args:
            topic_partitions: Topic name -> its new total partition count.
            timeout_ms: How long the controller may wait; default
                ``request_timeout_ms``.
            validate_only: Check without changing anything.

        Returns:
            The topics; ``.topic_errors`` answers aiokafka's response.

        Raises:
            aiokafka.errors.InvalidPartitionsError: the count does not grow.
            aiokafka.errors.UnknownTopicOrPartitionError: a topic does not exist.
                Per-topic errors: the other topics still change; the exception
                names every failure.
        """
        names = _names("topic_partitions", topic_partitions)
        for n in names:
            if not isinstance(topic_partitions[n], NewPartitions):
                raise TypeError(f"topic_partitions[{n!r}] must be a NewPartitions")
        timeout = _timeout("timeout_ms", timeout_ms, self._request_timeout_ms)

        async def attempt(pending: list[str]) -> dict[str, Any]:
            request = _cp.CreatePartitionsRequest(
                topics=[_partitions_topic(n, topic_partitions[n]) for n in pending],
                timeout_ms=timeout,
                validate_only=bool(validate_only),
            )
            response = await self._client.send_to_controller(
                request, timeout_ms=self._send_timeout(timeout)
            )
            return {
                r.name: error_for(r.error_code, r.error_message, f"create partitions of {r.name!r}")
                for r in response.results
            }

        outcome = await self._retry_items(
            names,
            attempt,
            deadline=self._deadline(timeout),
            final=(UnknownTopicOrPartitionError,),
        )
        raise_first(outcome)
        return PartitionCreationResult(names)

    async def _metadata(self, topics: list[str] | None, authorized: bool) -> _md.MetadataResponse:
        request = _md.MetadataRequest(
            topics=None if topics is None else [_md.MetadataRequestTopic(name=n) for n in topics],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=authorized and topics != [],
            include_cluster_authorized_operations=authorized and topics == [],
        )
        return await self._send_any(request)


def _cluster(
    cluster_id: str | None, controller_id: int, brokers: list[BrokerMetadata], operations: int
) -> ClusterDescription:
    """DescribeCluster's answer, or Metadata's from a broker without DescribeCluster."""
    return ClusterDescription(
        cluster_id,
        controller_id if controller_id >= 0 else None,
        sorted(brokers, key=lambda b: int(b.nodeId)),
        authorized_operations(operations),
    )


def _creatable(topic: NewTopic) -> _ct.CreatableTopic:
    return _ct.CreatableTopic(
        name=topic.name,
        num_partitions=topic.num_partitions,
        replication_factor=topic.replication_factor,
        assignments=[
            _ct.CreatableReplicaAssignment(partition_index=p, broker_ids=list(b))
            for p, b in sorted(topic.replica_assignments.items())
        ],
        configs=[_ct.CreatableTopicConfig(name=k, value=v) for k, v in topic.topic_configs.items()],
    )


def _partitions_topic(name: str, spec: NewPartitions) -> _cp.CreatePartitionsTopic:
    return _cp.CreatePartitionsTopic(
        name=name,
        count=spec.total_count,
        assignments=None
        if spec.new_assignments is None
        else [_cp.CreatePartitionsAssignment(broker_ids=list(a)) for a in spec.new_assignments],
    )


def _optional_list(values: list[int] | None) -> list[int] | None:
    return None if values is None else list(values)


def _not_ready(d: TopicDescription) -> str | None:
    """Why a described topic is not ready to use yet, or ``None``."""
    if d.error is not None:
        return f"{type(d.error).__name__}"
    if not d.partitions:
        return "no partitions yet"
    leaderless = [p.partition for p in d.partitions if p.leader < 0]
    if leaderless:
        return f"no leader for partitions {leaderless}"
    return None


def _describe_topic(t: Any, partitions: Iterable[Any] | None = None) -> TopicDescription:
    """A Metadata or DescribeTopicPartitions topic as a description (``partitions``:
    its partitions gathered over several answers, else ``t.partitions``)."""
    return TopicDescription(
        t.name,
        t.topic_id if isinstance(t.topic_id, uuid.UUID) else _ZERO_UUID,
        bool(t.is_internal),
        [
            PartitionDescription(
                p.partition_index,
                p.leader_id,
                p.leader_epoch,
                list(p.replica_nodes),
                list(p.isr_nodes),
                list(p.offline_replicas),
                _optional_list(getattr(p, "eligible_leader_replicas", None)),
                _optional_list(getattr(p, "last_known_elr", None)),
            )
            for p in sorted(
                t.partitions if partitions is None else partitions,
                key=lambda p: p.partition_index,
            )
        ],
        authorized_operations(t.topic_authorized_operations),
    )
