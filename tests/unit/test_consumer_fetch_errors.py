"""The fetcher's error table and the Fetch request at every version (no broker)."""

from __future__ import annotations

import uuid
from types import MappingProxyType

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetch_errors import (
    CORRUPT_MESSAGE,
    FETCH_SESSION_ID_NOT_FOUND,
    INVALID_FETCH_SESSION_EPOCH,
    OFFSET_OUT_OF_RANGE,
    PartitionAction,
    ResponseAction,
    partition_action,
    response_action,
)
from aiokafka.consumer.fetch_session import (
    FIRST_TOPIC_ID_VERSION,
    FetchSession,
    PartitionFetch,
    build_fetch_request,
)
from aiokafka.errors import (
    FencedLeaderEpochError,
    NotLeaderForPartitionError,
    ReplicaNotAvailableError,
    TopicAuthorizationFailedError,
    UnknownTopicIdError,
    for_code,
)
from aiokafka.protocol import messages as m
from aiokafka.structs import TopicPartition

A = TopicPartition("t", 0)


@pytest.mark.parametrize(
    ("code", "action"),
    [
        (0, PartitionAction.DATA),
        (OFFSET_OUT_OF_RANGE, PartitionAction.OUT_OF_RANGE),
        # Retriable by Kafka's table, but the same bytes would come back.
        (CORRUPT_MESSAGE, PartitionAction.FAIL),
        (TopicAuthorizationFailedError.errno, PartitionAction.FAIL),
        (NotLeaderForPartitionError.errno, PartitionAction.RETRY_REFRESH),
        (FencedLeaderEpochError.errno, PartitionAction.RETRY_REFRESH),
        (UnknownTopicIdError.errno, PartitionAction.RETRY_REFRESH),
        (ReplicaNotAvailableError.errno, PartitionAction.RETRY_REFRESH),
        (-1, PartitionAction.FAIL),  # UNKNOWN_SERVER_ERROR
        (32767, PartitionAction.FAIL),  # a code this client does not know
    ],
)
def test_partition_error_table(code: int, action: PartitionAction) -> None:
    assert partition_action(code) is action


def test_partition_retry_without_refresh_for_retriable_codes_with_fresh_metadata() -> None:
    # Every retriable code that does not mark the metadata stale is a plain retry.
    plain = [
        c
        for c in range(1, 130)
        if c not in (CORRUPT_MESSAGE, OFFSET_OUT_OF_RANGE)
        and for_code(c).retriable
        and not for_code(c).invalid_metadata
    ]
    assert plain, "the error table has retriable codes with fresh metadata"
    assert {partition_action(c) for c in plain} == {PartitionAction.RETRY}


def test_response_error_table() -> None:
    assert response_action(0) is ResponseAction.OK
    assert response_action(FETCH_SESSION_ID_NOT_FOUND) is ResponseAction.SESSION_LOST
    assert response_action(INVALID_FETCH_SESSION_EPOCH) is ResponseAction.SESSION_LOST
    assert response_action(TopicAuthorizationFailedError.errno) is ResponseAction.BACK_OFF


@pytest.mark.parametrize(
    "version", range(m.FetchRequest.MIN_VERSION, m.FetchRequest.MAX_VERSION + 1)
)
def test_fetch_request_encodes_at_every_version(version: int) -> None:
    """The request names every field; the generated encoder keeps those the version has."""
    topic_id = uuid.uuid4()
    cluster = ClusterMetadata(
        MappingProxyType({}), MappingProxyType({"t": TopicMetadata("t", topic_id=topic_id)})
    )
    cfg = ConsumerConfig.from_options(
        client_rack="r1", isolation_level="read_committed", fetch_max_bytes=1 << 22
    )
    session = FetchSession()
    session.session_id, session.epoch = 7, 3  # an established session (incremental plan)
    plan = session.plan({A: PartitionFetch(10, 4, 1 << 20)})
    request, ids = build_fetch_request(plan, version, cluster, cfg)
    sent = m.FetchRequest.decode(request.encode(version), version)
    (topic,) = sent.topics
    (part,) = topic.partitions
    assert (part.partition, part.fetch_offset, part.partition_max_bytes) == (0, 10, 1 << 20)
    if version >= FIRST_TOPIC_ID_VERSION:
        assert topic.topic_id == topic_id and ids == {topic_id: "t"}
    else:
        assert topic.topic == "t" and ids == {}
    assert part.current_leader_epoch == (4 if version >= 9 else -1)
    assert sent.max_bytes == (1 << 22 if version >= 3 else 0x7FFFFFFF)
    assert sent.isolation_level == (1 if version >= 4 else 0)
    assert (sent.session_id, sent.session_epoch) == ((7, 3) if version >= 7 else (0, -1))
    assert sent.rack_id == ("r1" if version >= 11 else "")
