"""Replica operations: leader election, partition reassignment (controller) and
log directories (each broker)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence

from aiokafka.admin._base import AdminBase, check, error_for, gather_all, instances, raise_first
from aiokafka.admin.results import LogDirDescription, PartitionReassignment, ReplicaInfo
from aiokafka.admin.types import ElectionType, TopicPartitionReplica, check_count, check_name
from aiokafka.errors import KafkaError, KafkaProtocolError
from aiokafka.protocol._gen import alter_partition_reassignments as _apr
from aiokafka.protocol._gen import alter_replica_log_dirs as _ard
from aiokafka.protocol._gen import describe_log_dirs as _dld
from aiokafka.protocol._gen import elect_leaders as _el
from aiokafka.protocol._gen import list_partition_reassignments as _lpr
from aiokafka.protocol.topic_lists import by_topic, per_topic
from aiokafka.structs import TopicPartition

__all__ = ["ReplicasMixin"]


def _by_topic(name: str, tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    return by_topic(instances(name, tps, TopicPartition))


class ReplicasMixin(AdminBase):
    """Replica operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def elect_leaders(
        self,
        election_type: ElectionType,
        partitions: Sequence[TopicPartition] | None = None,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, KafkaError | None]:
        """Elect partition leaders (KIP-460), sent to the controller.

        Per item: returns each partition's error or ``None``;
        ``ElectionNotNeededError`` means the preferred replica already leads.

        Args:
            election_type: ``PREFERRED`` or ``UNCLEAN``.
            partitions: Partitions, or ``None`` for every eligible partition.
            timeout_ms: How long the controller may wait; default
                ``request_timeout_ms``.

        Raises:
            aiokafka.errors.ClusterAuthorizationFailedError: and other top-level
                errors.
        """
        etype = ElectionType(election_type)
        timeout = self._request_timeout_ms if timeout_ms is None else timeout_ms
        check_count("timeout_ms", timeout, 0)
        topics = None if partitions is None else _by_topic("partitions", partitions)
        request = _el.ElectLeadersRequest(
            election_type=int(etype),
            topic_partitions=None
            if topics is None
            else [_el.TopicPartitions(topic=t, partitions=p) for t, p in topics.items()],
            timeout_ms=timeout,
        )

        async def attempt() -> _el.ElectLeadersResponse:
            response = await self._client.send_to_controller(
                request, timeout_ms=self._send_timeout(timeout)
            )
            check(response.error_code, None, "elect leaders")
            return response

        response = await self._client.call_with_retry(attempt, self._deadline(timeout))
        return {
            TopicPartition(r.topic, p.partition_id): error_for(
                p.error_code, p.error_message, f"elect leader of {r.topic}[{p.partition_id}]"
            )
            for r in response.replica_election_results
            for p in r.partition_result
        }

    async def alter_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, Sequence[int] | None],
        timeout_ms: int | None = None,
    ) -> None:
        """Start (or, with ``None``, cancel) moving partitions to new replica sets
        (KIP-455), sent to the controller.

        Args:
            reassignments: Partition -> target broker ids (first is preferred
                leader), or ``None`` to cancel an ongoing reassignment.
            timeout_ms: How long the controller may wait; default
                ``request_timeout_ms``.

        Raises:
            aiokafka.errors.NoReassignmentInProgressError: cancelling nothing.
            aiokafka.errors.InvalidReplicaAssignmentError: and other per-partition
                errors (the exception names every failure; others still move).
        """
        instances("reassignments", reassignments, TopicPartition)  # the keys
        targets: dict[TopicPartition, list[int] | None] = {}
        for tp, replicas in reassignments.items():
            if replicas is not None:
                replicas = [check_count(f"reassignments[{tp}]", b, 0) for b in replicas]
                if not replicas:
                    raise ValueError(f"reassignments[{tp}] must name at least one broker")
            targets[tp] = replicas
        timeout = self._request_timeout_ms if timeout_ms is None else timeout_ms
        check_count("timeout_ms", timeout, 0)
        request = _apr.AlterPartitionReassignmentsRequest(
            timeout_ms=timeout,
            topics=per_topic(
                targets,
                _apr.ReassignableTopic,
                lambda tp: _apr.ReassignablePartition(
                    partition_index=tp.partition, replicas=targets[tp]
                ),
            ),
        )

        async def attempt() -> _apr.AlterPartitionReassignmentsResponse:
            response = await self._client.send_to_controller(
                request, timeout_ms=self._send_timeout(timeout)
            )
            check(response.error_code, response.error_message, "alter partition reassignments")
            return response

        response = await self._client.call_with_retry(attempt, self._deadline(timeout))
        raise_first(
            self._partition_errors(
                response.responses, lambda tp: f"reassign {tp.topic}[{tp.partition}]"
            )
        )

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """Ongoing reassignments (of ``partitions``, or all), from the controller.

        Partitions without an ongoing reassignment are absent from the result.
        """
        topics = None if partitions is None else _by_topic("partitions", partitions)
        request = _lpr.ListPartitionReassignmentsRequest(
            timeout_ms=self._request_timeout_ms,
            topics=None
            if topics is None
            else [
                _lpr.ListPartitionReassignmentsTopics(name=t, partition_indexes=p)
                for t, p in topics.items()
            ],
        )

        async def attempt() -> _lpr.ListPartitionReassignmentsResponse:
            response = await self._client.send_to_controller(request)
            check(response.error_code, response.error_message, "list partition reassignments")
            return response

        response = await self._client.call_with_retry(attempt, self._deadline())
        return {
            TopicPartition(t.name, p.partition_index): PartitionReassignment(
                list(p.replicas), list(p.adding_replicas), list(p.removing_replicas)
            )
            for t in response.topics
            for p in t.partitions
        }

    async def describe_log_dirs(
        self,
        broker_ids: Sequence[int] | None = None,
        topic_partitions: Sequence[TopicPartition] | None = None,
    ) -> dict[int, dict[str, LogDirDescription]]:
        """Log directories of brokers, with the replicas each holds (KIP-113).

        Per item: an offline directory comes back with ``error`` set
        (``KafkaStorageError``) rather than raising.

        Args:
            broker_ids: Brokers to ask (each answers for itself); default all.
            topic_partitions: Only these replicas; default all.

        Returns:
            Broker id -> directory path -> description.

        Raises:
            aiokafka.errors.ClusterAuthorizationFailedError: and other top-level
                errors of a broker.
        """
        nodes = list(self._client.cluster.brokers) if broker_ids is None else list(broker_ids)
        topics = (
            None if topic_partitions is None else _by_topic("topic_partitions", topic_partitions)
        )
        request = _dld.DescribeLogDirsRequest(
            topics=None
            if topics is None
            else [_dld.DescribableLogDirTopic(topic=t, partitions=p) for t, p in topics.items()]
        )

        async def one(node: int) -> dict[str, LogDirDescription]:
            response = await self._send_node(node, request)
            check(response.error_code, None, f"describe log dirs of broker {node}")
            return {
                d.log_dir: LogDirDescription(
                    d.log_dir,
                    error_for(d.error_code, None, f"log dir {d.log_dir!r} of broker {node}"),
                    {
                        TopicPartition(t.name, p.partition_index): ReplicaInfo(
                            p.partition_size, p.offset_lag, bool(p.is_future_key)
                        )
                        for t in d.topics
                        for p in t.partitions
                    },
                    d.total_bytes,
                    d.usable_bytes,
                )
                for d in response.results
            }

        results = await asyncio.gather(*(one(n) for n in nodes))
        return dict(zip(nodes, results, strict=True))

    async def alter_replica_log_dirs(
        self, replica_assignments: Mapping[TopicPartitionReplica, str]
    ) -> dict[TopicPartitionReplica, KafkaError | None]:
        """Move replicas between the log directories of the brokers that host them
        (KIP-113), as ``kafka-reassign-partitions.sh`` does with ``log_dirs``.

        Each broker gets the moves of its own replicas (all brokers at once). It
        copies a replica into the new directory as a *future* replica
        (``describe_log_dirs`` shows ``is_future``) and swaps it in once it caught
        up, so the call returns before the move has finished.

        Per item: returns each replica's error or ``None`` (e.g.
        ``LogDirNotFoundError`` for a path the broker does not have,
        ``ReplicaNotAvailableError`` for a replica it does not host).

        Args:
            replica_assignments: ``TopicPartitionReplica`` (or a
                ``(topic, partition, broker_id)`` tuple) -> absolute directory path.
        """
        if not isinstance(replica_assignments, Mapping):
            raise TypeError(
                "replica_assignments must be a mapping of TopicPartitionReplica to path"
            )
        moves: dict[TopicPartitionReplica, str] = {}
        for key, path in replica_assignments.items():
            if not isinstance(key, tuple) or len(key) != 3:
                raise TypeError(f"replica_assignments: {key!r} is not a TopicPartitionReplica")
            replica = TopicPartitionReplica(*key)
            check_name("replica_assignments: topic", replica.topic)
            check_count("replica_assignments: partition", replica.partition, 0)
            check_count("replica_assignments: broker_id", replica.broker_id, 0)
            moves[replica] = check_name(f"replica_assignments[{key!r}]", path)

        async def one(
            node: int, mine: dict[TopicPartitionReplica, str]
        ) -> dict[TopicPartitionReplica, KafkaError | None]:
            by_path: dict[str, dict[str, list[int]]] = {}
            for r, path in mine.items():
                by_path.setdefault(path, {}).setdefault(r.topic, []).append(r.partition)
            request = _ard.AlterReplicaLogDirsRequest(
                dirs=[
                    _ard.AlterReplicaLogDir(
                        path=path,
                        topics=[
                            _ard.AlterReplicaLogDirTopic(name=t, partitions=ps)
                            for t, ps in topics.items()
                        ],
                    )
                    for path, topics in by_path.items()
                ]
            )
            response = await self._send_node(node, request)
            answered = {
                TopicPartitionReplica(t.topic_name, p.partition_index, node): error_for(
                    p.error_code, None, f"move {t.topic_name}[{p.partition_index}] on broker {node}"
                )
                for t in response.results
                for p in t.partitions
            }
            return {
                r: answered.get(r, KafkaProtocolError(f"broker {node} did not answer for {r}"))
                for r in mine
            }

        by_broker: dict[int, dict[TopicPartitionReplica, str]] = {}
        for r, path in moves.items():
            by_broker.setdefault(r.broker_id, {})[r] = path
        out: dict[TopicPartitionReplica, KafkaError | None] = {}
        for answer in await gather_all(*(one(n, mine) for n, mine in by_broker.items())):
            out.update(answer)
        return out
