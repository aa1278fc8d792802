"""Names and behaviours that frameworks built on aiokafka 0.14 rely on.

Each test stands for a call site in such a framework (FastStream, the OpenTelemetry
instrumentation), written without importing it: only what that code does with the
aiokafka API.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType
from aiokafka.admin.results import (
    ConfigAlterationResult,
    ConfigDescription,
    ConfigEntry,
    ConfigSynonym,
    GroupDescription,
    MemberDescription,
    PartitionCreationResult,
    TopicCreationResult,
    TopicCreationResults,
    TopicDeletionResult,
    group_as_responses,
)
from aiokafka.admin.types import ConfigSource
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import (
    InvalidConfigurationError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from tests.support.wait import DEFAULT_TIMEOUT, eventually
from tools.kafka.rig import KafkaCluster


@pytest.mark.parametrize(
    "others",
    [{}, {"enable_idempotence": False}, {"enable_idempotence": True}, {"transactional_id": "t"}],
)
def test_producer_missing_acks_resolves_as_not_given(others: dict[str, Any]) -> None:
    # FastStream 0.7: ``from aiokafka.producer.producer import _missing`` and passes
    # ``acks=_missing`` on when its user set no acks. aiokafka 0.14 then picks acks
    # from enable_idempotence (-1 if idempotent, else 1); we resolve it from the same
    # options, as if acks were not given.
    from aiokafka.producer.producer import _missing

    passed = AIOKafkaProducer(acks=_missing, **others).config
    omitted = AIOKafkaProducer(**others).config
    assert passed.acks == omitted.acks
    assert passed.enable_idempotence == omitted.enable_idempotence


def test_admin_topic_results_answer_to_object() -> None:
    # FastStream 0.7 (kafka/helpers/admin.py) reads create_topics' outcome as
    # ``response.to_object()["topic_errors"]``, items with "topic", "error_code" and
    # "error_message". aiokafka 0.14 (CreateTopicsResponse_v3, CreatePartitions v1,
    # DeleteTopics v3) answers these dicts; throttle_time_ms is 0 from a broker that
    # does not throttle.
    created = TopicCreationResults(
        a=TopicCreationResult("a", uuid.uuid4(), 1, 1),
        b=TopicCreationResult("b", uuid.UUID(int=0), -1, -1, error=TopicAlreadyExistsError("b")),
    )
    obj = created.to_object()
    assert obj["throttle_time_ms"] == 0
    assert [(e["topic"], e["error_code"]) for e in obj["topic_errors"]] == [("a", 0), ("b", 36)]
    assert obj["topic_errors"][0]["error_message"] is None
    assert "b" in obj["topic_errors"][1]["error_message"]

    deleted = TopicDeletionResult(["a", "gone"], {"gone": UnknownTopicOrPartitionError("gone")})
    assert deleted.to_object() == {
        "throttle_time_ms": 0,
        "topic_error_codes": [{"topic": "a", "error_code": 0}, {"topic": "gone", "error_code": 3}],
    }
    grown = PartitionCreationResult(["a"])
    assert grown.to_object() == {
        "throttle_time_ms": 0,
        "topic_errors": [{"topic": "a", "error_code": 0, "error_message": None}],
    }


def test_admin_config_and_group_results_answer_to_object() -> None:
    # aiokafka 0.14 returned DescribeConfigsResponse_v2, AlterConfigsResponse_v1 and
    # DescribeGroupsResponse_v2 objects (recorded against Kafka 4.1); code written
    # for it calls their to_object(). Ours: the first item of each aiokafka response
    # answers the whole response's dict, the items it lists answer no rows.
    topic = ConfigResourceType.TOPIC
    policy = ConfigEntry(
        "cleanup.policy",
        "delete",
        read_only=False,
        is_default=True,
        source=ConfigSource.DEFAULT_CONFIG,
        is_sensitive=False,
        synonyms=[ConfigSynonym("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG)],
    )
    missing = UnknownTopicOrPartitionError("describe configs of TOPIC 'm'")
    described = group_as_responses(
        [
            ConfigDescription(topic, "t", {"cleanup.policy": policy}),
            ConfigDescription(topic, "m", {}, error=missing),
        ],
        lambda d: d.resource_type,
    )
    obj = described[0].to_object()
    assert obj["throttle_time_ms"] == 0
    assert obj["resources"][0] == {
        "error_code": 0,
        "error_message": "",
        "resource_type": 2,
        "resource_name": "t",
        "config_entries": [
            {
                "config_names": "cleanup.policy",  # sic: aiokafka's key
                "config_value": "delete",
                "read_only": False,
                "config_source": 5,
                "is_sensitive": False,
                "config_synonyms": [
                    {
                        "config_name": "log.cleanup.policy",
                        "config_value": "delete",
                        "config_source": 5,
                    }
                ],
            }
        ],
    }
    failed = obj["resources"][1]
    assert (failed["error_code"], failed["resource_name"], failed["config_entries"]) == (3, "m", [])
    assert described[1].to_object() == {"throttle_time_ms": 0, "resources": []}

    bad = InvalidConfigurationError("Unknown topic config name: x")
    altered = group_as_responses(
        [ConfigAlterationResult(topic, "t"), ConfigAlterationResult(topic, "u", bad)],
        lambda d: d.resource_type,
    )
    rows = altered[0].to_object()["resources"]
    assert rows[0] == {
        "error_code": 0,
        "error_message": None,
        "resource_type": 2,
        "resource_name": "t",
    }
    assert (rows[1]["error_code"], rows[1]["resource_name"]) == (40, "u")
    assert "Unknown topic config name" in rows[1]["error_message"]

    member = MemberDescription("m-1", None, "cid", "/127.0.0.1", [], b"meta", b"assign")
    group = GroupDescription("g", "Stable", "consumer", "range", [member], coordinator=1)
    assert group.to_object() == {
        "throttle_time_ms": 0,
        "groups": [
            {
                "error_code": 0,
                "group": "g",
                "state": "Stable",
                "protocol_type": "consumer",
                "protocol": "range",
                "members": [
                    {
                        "member_id": "m-1",
                        "client_id": "cid",
                        "client_host": "/127.0.0.1",
                        "member_metadata": b"meta",
                        "member_assignment": b"assign",
                    }
                ],
            }
        ],
    }


async def test_admin_results_to_object_from_the_broker(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # The same calls as aiokafka 0.14 made against the rig's broker, whose
    # to_object() had these keys and values (group member bytes aside: they are the
    # consumer's own subscription and assignment encoding).
    t = new_topic()
    g = f"g-{uuid.uuid4().hex[:8]}"
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        asked = ConfigResource(ConfigResourceType.TOPIC, t, {"retention.ms": None})
        described = await admin.describe_configs([asked])
        (resource,) = described[0].to_object()["resources"]
        assert resource["error_code"] == 0 and resource["error_message"] == ""
        assert (resource["resource_type"], resource["resource_name"]) == (2, t)
        assert resource["config_entries"] == [
            {
                "config_names": "retention.ms",
                "config_value": "604800000",
                "read_only": False,
                "config_source": 5,
                "is_sensitive": False,
                "config_synonyms": [],
            }
        ]
        change = ConfigResource(ConfigResourceType.TOPIC, t, {"retention.ms": "1000"})
        altered = await admin.alter_configs([change])
        assert altered[0].to_object() == {
            "throttle_time_ms": 0,
            "resources": [
                {"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": t}
            ],
        }
        consumer = AIOKafkaConsumer(
            t, bootstrap_servers=kafka.bootstrap_servers, group_id=g, client_id="cid"
        )
        async with consumer:
            groups = (await admin.describe_consumer_groups([g]))[0].to_object()["groups"]
        (group,) = groups
        assert {k: v for k, v in group.items() if k != "members"} == {
            "error_code": 0,
            "group": g,
            "state": "Stable",
            "protocol_type": "consumer",
            "protocol": "roundrobin",
        }
        (member,) = group["members"]
        assert member["client_id"] == "cid" and member["member_id"].startswith("cid-")
        assert sorted(member) == [
            "client_host",
            "client_id",
            "member_assignment",
            "member_id",
            "member_metadata",
        ]


async def test_send_batch_without_partition_asks_the_partitioner(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # FastStream 0.7 publishes a batch with ``send_batch(batch, topic,
    # partition=None)`` when its user names no partition. aiokafka 0.14 then asks its
    # partitioner with no key (the default one: a random available partition).
    topic = new_topic(partitions=3)
    asked: list[tuple[object, list[int], list[int]]] = []

    def last(key: object, all_partitions: list[int], available: list[int]) -> int:
        asked.append((key, all_partitions, available))
        return all_partitions[-1]

    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as default:
        batch = default.create_batch()
        batch.append(key=None, value=b"d", timestamp=None)
        meta = await (await default.send_batch(batch, topic, partition=None))
        assert meta.topic == topic and meta.partition in (0, 1, 2)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, partitioner=last
    ) as producer:
        batch = producer.create_batch()
        batch.append(key=b"ignored", value=b"p", timestamp=None)
        meta = await (await producer.send_batch(batch, topic, partition=None))
        assert meta.partition == 2
        assert asked == [(None, [0, 1, 2], [0, 1, 2])]


async def test_private_names_frameworks_read(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # FastStream 0.7's rebalance listener logs consumer._coordinator.member_id,
    # consumer._group_id and consumer._subscription.topics on each assignment (an
    # AttributeError there skipped its user's listener), and reads producer._closed.
    # aiokafka 0.14: _coordinator is None until start(), then has the member id ("" until
    # joined); _subscription.topics is the set of subscribed topics; _closed is None
    # before start(), False while running, True from stop() on.
    topic = new_topic()
    group = f"fw-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=kafka.bootstrap_servers, group_id=group)
    assert consumer._coordinator is None
    assert consumer._group_id == group
    assert consumer._subscription.topics == {topic}
    members: list[str] = []

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked: object) -> None:
            pass

        async def on_partitions_assigned(self, assigned: object) -> None:
            assert consumer._coordinator is not None
            members.append(consumer._coordinator.member_id)

    consumer.unsubscribe()
    consumer.subscribe([topic], listener=Listener())
    async with consumer:

        async def joined() -> bool:
            await consumer.getmany(timeout_ms=200)
            return bool(members)

        assert await eventually(joined, bool, timeout=DEFAULT_TIMEOUT)
        assert members and members[0] != ""
        assert consumer._coordinator.member_id == members[-1]
        assert consumer._coordinator.group_id == group

    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    assert producer._closed is None
    await producer.start()
    assert producer._closed is False
    await producer.stop()
    assert producer._closed is True
    never_started = AIOKafkaProducer()
    await never_started.stop()
    assert never_started._closed is True


def test_client_private_options_the_otel_instrumentation_reads() -> None:
    # opentelemetry-instrumentation-aiokafka sets server.address to
    # json.dumps(client._bootstrap_servers) and messaging.client.id to
    # client._client_id, on producer.client and consumer._client: in aiokafka 0.14
    # the constructor's arguments as given.
    servers = ["127.0.0.1:1", "127.0.0.1:2"]
    client = AIOKafkaClient(bootstrap_servers=servers, client_id="otel")
    assert client._bootstrap_servers == servers
    assert client._client_id == "otel"
    assert AIOKafkaClient(bootstrap_servers="h:1")._bootstrap_servers == "h:1"
