"""The admin client against librdkafka's mock cluster: NOT_COORDINATOR is retried.

The mock implements OffsetCommit and OffsetFetch (not DescribeGroups or the other
group admin APIs, nor CreateTopics: see tests/integration/test_admin_injected_errors.py
for NOT_CONTROLLER), so the group operations used here are
``alter_consumer_group_offsets`` and ``list_consumer_group_offsets``.

Mock deviation (librdkafka 2.x mock): an OffsetFetch v6 asking for all of a group's
partitions (``topics`` null) is answered with a null ``topics`` array, which the
response schema does not allow, and without the committed offsets that Kafka returns.
So the offsets are listed for explicit partitions here.
"""

from __future__ import annotations

import uuid

import pytest

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaTimeoutError, NotCoordinatorError
from aiokafka.structs import TopicPartition
from tests.support.mock_cluster import ApiKey, MockCluster, MockRelay

NOT_COORDINATOR = 16


async def test_group_offsets_retry_not_coordinator(
    mock_cluster: MockCluster, mock_relay: MockRelay
) -> None:
    topic = f"mock-admin-{uuid.uuid4().hex[:8]}"
    group = f"mock-admin-{uuid.uuid4().hex[:8]}"
    mock_cluster.create_topic(topic, partitions=2, replication_factor=3)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with AIOKafkaAdminClient(
        bootstrap_servers=mock_relay.bootstrap_servers,
        request_timeout_ms=10000,
        retry_backoff_ms=50,
    ) as admin:
        mock_cluster.push_request_errors(ApiKey.OFFSET_COMMIT, [NOT_COORDINATOR])
        await admin.alter_consumer_group_offsets(group, {tp0: 5, tp1: 9})

        # The control test below shows the mock does answer OffsetFetch with the
        # pushed errors; here two of them are retried away.
        mock_cluster.push_request_errors(ApiKey.OFFSET_FETCH, [NOT_COORDINATOR, NOT_COORDINATOR])
        offsets = await admin.list_consumer_group_offsets(group, partitions=[tp0, tp1])
        assert {tp: o.offset for tp, o in offsets.items()} == {tp0: 5, tp1: 9}


async def test_not_coordinator_until_the_deadline_is_raised(
    mock_cluster: MockCluster, mock_relay: MockRelay
) -> None:
    """The control: the injected error does reach the client and is not retried forever."""
    group = f"mock-admin-{uuid.uuid4().hex[:8]}"
    topic = f"mock-admin-{uuid.uuid4().hex[:8]}"
    mock_cluster.create_topic(topic, partitions=1, replication_factor=3)
    async with AIOKafkaAdminClient(
        bootstrap_servers=mock_relay.bootstrap_servers,
        request_timeout_ms=1500,
        retry_backoff_ms=50,
    ) as admin:
        mock_cluster.push_request_errors(ApiKey.OFFSET_FETCH, [NOT_COORDINATOR] * 1000)
        try:
            # A single-request admin call gives up as call_with_retry does: a timeout
            # whose cause is the last retriable error.
            with pytest.raises(KafkaTimeoutError) as info:
                await admin.list_consumer_group_offsets(
                    group, partitions=[TopicPartition(topic, 0)]
                )
            assert isinstance(info.value.__cause__, NotCoordinatorError)
            assert "attempts" in str(info.value)
        finally:
            mock_cluster.clear_request_errors(ApiKey.OFFSET_FETCH)
