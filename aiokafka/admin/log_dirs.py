"""Log directories (KIP-113), asked of each broker for itself: what each directory
holds, where a replica lives, and moving replicas between a broker's directories."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from aiokafka.admin._base import AdminBase, check, error_for, gather_all, instances
from aiokafka.admin.results import LogDirDescription, ReplicaInfo
from aiokafka.admin.types import TopicPartitionReplica, check_count, check_name
from aiokafka.errors import KafkaError, KafkaProtocolError
from aiokafka.protocol._gen import alter_replica_log_dirs as _ard
from aiokafka.protocol._gen import describe_log_dirs as _dld
from aiokafka.protocol.topic_lists import by_topic
from aiokafka.structs import TopicPartition

__all__ = ["LogDirsMixin", "ReplicaLogDirInfo"]


@dataclass(frozen=True)
class ReplicaLogDirInfo:
    """Where a replica lives on its broker (``describe_replica_log_dirs``).

    Attributes:
        current_dir: The directory of the replica, or ``None`` if the broker does
            not host it.
        current_offset_lag: How far its log end is behind the partition's high
            watermark (-1 without a current replica).
        future_dir: The directory it is being moved to by
            ``alter_replica_log_dirs``, or ``None`` when no move is under way.
        future_offset_lag: How far the copy in ``future_dir`` is behind the current
            replica (-1 without a move).
    """

    current_dir: str | None = None
    current_offset_lag: int = -1
    future_dir: str | None = None
    future_offset_lag: int = -1


class LogDirsMixin(AdminBase):
    """Log-directory operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

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
            None
            if topic_partitions is None
            else by_topic(instances("topic_partitions", topic_partitions, TopicPartition))
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
        moves = {
            _replica("replica_assignments", key): check_name(f"replica_assignments[{key!r}]", path)
            for key, path in replica_assignments.items()
        }

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

    async def describe_replica_log_dirs(
        self, replicas: Sequence[TopicPartitionReplica]
    ) -> dict[TopicPartitionReplica, ReplicaLogDirInfo]:
        """Where each replica lives on its broker, and where it is moving to (Java's
        ``describeReplicaLogDirs``): one ``describe_log_dirs`` per broker, for its
        replicas only.

        Args:
            replicas: ``TopicPartitionReplica`` (or ``(topic, partition, broker_id)``)
                values.

        Returns:
            Each replica's :class:`ReplicaLogDirInfo`; one its broker does not host
            has no directories.
        """
        wanted = [_replica("replicas", r) for r in replicas]
        by_broker: dict[int, list[TopicPartition]] = {}
        for r in wanted:
            by_broker.setdefault(r.broker_id, []).append(TopicPartition(r.topic, r.partition))
        brokers = list(by_broker)
        answers = await gather_all(*(self.describe_log_dirs([b], by_broker[b]) for b in brokers))
        found: dict[TopicPartitionReplica, ReplicaLogDirInfo] = {}
        for broker, answer in zip(brokers, answers, strict=True):
            for path, d in answer.get(broker, {}).items():
                for tp, info in d.replicas.items():
                    key = TopicPartitionReplica(tp.topic, tp.partition, broker)
                    was = found.get(key, ReplicaLogDirInfo())
                    lag = info.offset_lag
                    if info.is_future:
                        found[key] = replace(was, future_dir=path, future_offset_lag=lag)
                    else:
                        found[key] = replace(was, current_dir=path, current_offset_lag=lag)
        return {r: found.get(r, ReplicaLogDirInfo()) for r in wanted}


def _replica(arg: str, value: object) -> TopicPartitionReplica:
    """``value`` (a ``TopicPartitionReplica`` or a 3-tuple) checked, naming ``arg``."""
    if not isinstance(value, tuple) or len(value) != 3:
        raise TypeError(f"{arg}: {value!r} is not a TopicPartitionReplica")
    replica = TopicPartitionReplica(*value)
    check_name(f"{arg}: topic", replica.topic)
    check_count(f"{arg}: partition", replica.partition, 0)
    check_count(f"{arg}: broker_id", replica.broker_id, 0)
    return replica
