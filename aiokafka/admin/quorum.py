"""The KRaft metadata quorum: who leads it and how far each replica has caught up.

A broker forwards DescribeQuorum to the active controller, so any broker answers.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from aiokafka.admin._base import AdminBase, check
from aiokafka.errors import KafkaProtocolError
from aiokafka.protocol._gen import describe_quorum as _dq

__all__ = ["QuorumInfo", "QuorumNode", "QuorumReplica"]

#: The metadata log: the one partition the quorum replicates.
_METADATA_TOPIC = "__cluster_metadata"


@dataclass(frozen=True)
class QuorumReplica:
    """A voter's or an observer's progress on the metadata log.

    Attributes:
        replica_directory_id: The replica's log directory id (DescribeQuorum v2+,
            KIP-853), ``None`` when the controller did not report one.
        last_fetch_timestamp: Milliseconds since the epoch of the replica's last
            fetch from the leader; ``None`` when unknown (as for the leader itself
            on older controllers).
        last_caught_up_timestamp: When the replica last reached the leader's log end
            offset; ``None`` when unknown.
    """

    replica_id: int
    replica_directory_id: uuid.UUID | None
    log_end_offset: int
    last_fetch_timestamp: int | None
    last_caught_up_timestamp: int | None


@dataclass(frozen=True)
class QuorumNode:
    """A voter's listeners: name to ``(host, port)`` (DescribeQuorum v2+)."""

    node_id: int
    endpoints: dict[str, tuple[str, int]]


@dataclass(frozen=True)
class QuorumInfo:
    """The metadata quorum, as :meth:`describe_metadata_quorum` reports it.

    Attributes:
        leader_id: The active controller's node id.
        leader_epoch: The leader's epoch: it grows at each election.
        high_watermark: The metadata log's committed end offset.
        voters: The controllers that vote, the leader among them.
        observers: Replicas that follow the log without voting (brokers).
        nodes: Each voter's listeners by node id (empty before v2).
    """

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[QuorumReplica]
    observers: list[QuorumReplica]
    nodes: dict[int, QuorumNode]


def _replica(state: _dq.ReplicaState) -> QuorumReplica:
    directory = state.replica_directory_id
    return QuorumReplica(
        state.replica_id,
        None if directory.int == 0 else directory,
        state.log_end_offset,
        None if state.last_fetch_timestamp < 0 else state.last_fetch_timestamp,
        None if state.last_caught_up_timestamp < 0 else state.last_caught_up_timestamp,
    )


class QuorumMixin(AdminBase):
    """The metadata quorum call of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def describe_metadata_quorum(self) -> QuorumInfo:
        """Describe the KRaft metadata quorum (KIP-836): its leader, voters and observers.

        Raises:
            aiokafka.errors.ClusterAuthorizationFailedError: the caller lacks DESCRIBE
                on the cluster.
            aiokafka.errors.KafkaError: another error from the controller.
        """
        request = _dq.DescribeQuorumRequest(
            topics=[
                _dq.DescribeQuorumRequestTopicData(
                    topic_name=_METADATA_TOPIC,
                    partitions=[_dq.DescribeQuorumRequestPartitionData(partition_index=0)],
                )
            ]
        )
        response = await self._send_any(request)
        check(response.error_code, response.error_message, "describe the metadata quorum")
        partitions = [p for t in response.topics for p in t.partitions]
        if len(partitions) != 1:
            raise KafkaProtocolError(
                f"DescribeQuorum answered {len(partitions)} partitions of the metadata log"
            )
        (p,) = partitions
        check(p.error_code, p.error_message, "describe the metadata quorum")
        return QuorumInfo(
            p.leader_id,
            p.leader_epoch,
            p.high_watermark,
            [_replica(v) for v in p.current_voters],
            [_replica(o) for o in p.observers],
            {
                n.node_id: QuorumNode(n.node_id, {e.name: (e.host, e.port) for e in n.listeners})
                for n in response.nodes
            },
        )
