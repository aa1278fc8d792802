"""Metadata snapshots built from MetadataResponse objects, and KIP-951 hints."""

from __future__ import annotations

import uuid

import pytest

from aiokafka.cluster import ClusterMetadata
from aiokafka.protocol.messages import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from aiokafka.structs import BrokerMetadata, TopicPartition

TOPIC_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def response() -> MetadataResponse:
    return MetadataResponse(
        brokers=[
            MetadataResponseBroker(node_id=1, host="h1", port=9092, rack="r1"),
            MetadataResponseBroker(node_id=2, host="h2", port=9092, rack=None),
        ],
        cluster_id="cid",
        controller_id=2,
        topics=[
            MetadataResponseTopic(
                name="t",
                topic_id=TOPIC_ID,
                partitions=[
                    MetadataResponsePartition(
                        partition_index=0,
                        leader_id=1,
                        leader_epoch=5,
                        replica_nodes=[1, 2],
                        isr_nodes=[1],
                        offline_replicas=[2],
                    ),
                    MetadataResponsePartition(
                        partition_index=1, leader_id=-1, leader_epoch=3, error_code=5
                    ),
                ],
            ),
            MetadataResponseTopic(name="missing", error_code=3),
            MetadataResponseTopic(name="secret", error_code=29),
        ],
    )


def test_snapshot_from_response() -> None:
    md = ClusterMetadata.from_response(response(), generation=7)
    assert md.generation == 7
    assert md.cluster_id == "cid"
    assert md.controller_id == 2
    assert md.broker(1) == BrokerMetadata(1, "h1", 9092, "r1")
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert md.leader_for(tp0) == 1
    assert md.leader_epoch(tp0) == 5
    p0 = md.partition(tp0)
    assert p0 is not None
    assert (p0.replicas, p0.isr, p0.offline_replicas) == ((1, 2), (1,), (2,))
    assert md.leader_for(tp1) is None
    assert md.partitions_for_topic("t") == frozenset({0, 1})
    assert md.available_partitions_for_topic("t") == frozenset({0})
    assert md.partitions_for_broker(1) == {tp0}
    assert md.topic_id("t") == TOPIC_ID
    assert md.topic_name(TOPIC_ID) == "t"
    assert md.partitions_for_topic("missing") is None
    assert md.topic_error("missing") == 3
    assert md.topic_error("never-asked") is None
    assert md.unauthorized_topics() == {"secret"}
    assert md.leader_for(TopicPartition("nope", 0)) is None


def test_snapshot_is_immutable() -> None:
    md = ClusterMetadata.from_response(response())
    with pytest.raises(TypeError):
        md.brokers[3] = BrokerMetadata(3, "h", 1, None)  # type: ignore[index]
    with pytest.raises(AttributeError):
        md.cluster_id = "x"  # type: ignore[misc]


def test_no_controller() -> None:
    resp = response()
    resp.controller_id = -1
    assert ClusterMetadata.from_response(resp).controller_id is None


def test_leader_hint_newer_epoch_applies() -> None:
    md = ClusterMetadata.from_response(response())
    tp = TopicPartition("t", 0)
    new = md.with_leader(tp, 3, 6, [BrokerMetadata(3, "h3", 9093, None)])
    assert new is not None
    assert new.leader_for(tp) == 3
    assert new.leader_epoch(tp) == 6
    assert new.broker(3) == BrokerMetadata(3, "h3", 9093, None)
    # The old snapshot is unchanged.
    assert md.leader_for(tp) == 1
    assert md.broker(3) is None
    # Other partitions are untouched.
    assert new.partition(TopicPartition("t", 1)) == md.partition(TopicPartition("t", 1))


@pytest.mark.parametrize(
    ("tp", "leader", "epoch"),
    [
        (TopicPartition("t", 0), 2, 5),  # same epoch: not newer
        (TopicPartition("t", 0), 2, 4),  # older
        (TopicPartition("t", 0), 9, 6),  # unknown broker and no endpoint
        (TopicPartition("t", 9), 2, 9),  # unknown partition
        (TopicPartition("t", 0), -1, 9),  # no leader
    ],
)
def test_leader_hint_ignored(tp: TopicPartition, leader: int, epoch: int) -> None:
    md = ClusterMetadata.from_response(response())
    assert md.with_leader(tp, leader, epoch) is None


def test_empty_snapshot() -> None:
    md = ClusterMetadata()
    assert not md.brokers
    assert md.partitions_for_topic("t") is None
    assert md.controller_id is None
