"""``describe_topic_partitions`` (DescribeTopicPartitions, KIP-966) against a real
broker: cursor pages followed to the end, the same partitions as the Metadata path,
per-topic errors, and the eligible-leader-replica fields."""

from __future__ import annotations

import uuid

import pytest

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaProtocolError, UnknownTopicOrPartitionError
from aiokafka.protocol._gen import describe_topic_partitions as _dtp
from tests.support.inject_relay import InjectingRelay
from tools.kafka.rig import KafkaCluster


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def test_pages_match_metadata_and_errors_are_per_topic(
    admin: AIOKafkaAdminClient,
) -> None:
    five, three, missing = _name("dtp-a"), _name("dtp-b"), _name("dtp-missing")
    await admin.create_topics([NewTopic(five, 5, 1), NewTopic(three, 3, 1)])
    await admin.wait_for_topics([five, three], timeout_ms=20000)
    # A limit of 2 partitions per answer: 8 partitions take four answers, and the
    # five-partition topic is split over three of them.
    got = await admin.describe_topic_partitions([three, missing, five], response_partition_limit=2)
    assert [d.name for d in got] == [three, missing, five]
    by_metadata = {d.name: d for d in await admin.describe_topics([five, three])}
    for d in (got[0], got[2]):
        assert d.error is None
        assert d.topic_id == by_metadata[d.name].topic_id != uuid.UUID(int=0)
        expected = by_metadata[d.name].partitions
        assert [p.partition for p in d.partitions] == [p.partition for p in expected]
        for p, q in zip(d.partitions, expected, strict=True):
            assert (p.leader, p.leader_epoch, p.replicas, p.isr) == (
                q.leader,
                q.leader_epoch,
                q.replicas,
                q.isr,
            )
            # Metadata carries no ELR; this API does (empty: the one replica is in sync).
            assert q.eligible_leader_replicas is None
            assert p.eligible_leader_replicas == [] and p.last_known_elr == []
    assert isinstance(got[1].error, UnknownTopicOrPartitionError)
    assert got[1].partitions == [] and got[1]["error_code"] == 3
    # One answer holds them all when the limit allows: the same description.
    whole = await admin.describe_topic_partitions([three, missing, five])
    assert (whole[0], whole[2]) == (got[0], got[2])  # errors do not compare equal
    assert isinstance(whole[1].error, UnknownTopicOrPartitionError)


async def test_all_topics_sorted(admin: AIOKafkaAdminClient) -> None:
    names = sorted(_name("dtp-all") for _ in range(2))
    await admin.create_topics([NewTopic(n, 2, 1) for n in names])
    await admin.wait_for_topics(names, timeout_ms=20000)
    everything = await admin.describe_topic_partitions(response_partition_limit=3)
    listed = [d.name for d in everything]
    assert listed == sorted(listed)
    assert set(names) <= set(listed)
    for d in everything:
        if d.name in names:
            assert [p.partition for p in d.partitions] == [0, 1]


async def test_bad_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(TypeError, match="topics must be a list of str"):
        await admin.describe_topic_partitions("abc")
    with pytest.raises(ValueError, match="response_partition_limit"):
        await admin.describe_topic_partitions(["abc"], response_partition_limit=0)


async def test_a_cursor_that_does_not_advance_is_a_protocol_error(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    """A broker whose cursor stays put would keep the paging loop going for ever; the
    relay rewrites each answer's cursor to point at partition 1 again."""
    name = _name("dtp-stuck")
    await admin.create_topics([NewTopic(name, 3, 1)])
    await admin.wait_for_topics([name], timeout_ms=20000)

    def stuck(body: bytes, version: int) -> bytes:
        response = _dtp.DescribeTopicPartitionsResponse.decode(body, version)
        response.next_cursor = _dtp.Cursor(topic_name=name, partition_index=1)
        return response.encode(version)

    node = kafka.nodes[0]
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        relay.rewrite_responses(_dtp.DescribeTopicPartitionsRequest.API_KEY, stuck)
        async with AIOKafkaAdminClient(bootstrap_servers=relay.bootstrap_servers) as stuck_admin:
            with pytest.raises(KafkaProtocolError, match=rf"did not advance past {name}\[1\]"):
                await stuck_admin.describe_topic_partitions([name], response_partition_limit=1)
        assert relay.forwarded[_dtp.DescribeTopicPartitionsRequest.API_KEY] == 2
