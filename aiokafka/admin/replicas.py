"""Replica operations sent to the controller: leader election and partition
reassignment (a broker's log directories are in ``log_dirs.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.results import PartitionReassignment
from aiokafka.admin.types import ElectionType, check_count
from aiokafka.errors import KafkaError
from aiokafka.protocol._gen import alter_partition_reassignments as _apr
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
