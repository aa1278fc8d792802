"""Config changes proven by what the brokers do, not only by what they describe.

* A topic's ``max.message.bytes`` set incrementally makes the broker refuse a bigger
  record (MESSAGE_TOO_LARGE), and deleting the override lets it in again;
  ``validate_only`` changes neither the described value nor the behaviour.
* On the three-broker cluster a ``BROKER`` resource naming one broker id reaches that
  broker: a per-broker dynamic config set on it is described there and nowhere else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from aiokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
)
from aiokafka.admin.results import ConfigEntry
from aiokafka.errors import MessageSizeTooLargeError
from aiokafka.producer import AIOKafkaProducer
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster

# Brokers apply a committed change from the metadata log a moment after the admin call
# returns; every "until" loop below gives up after this long.
SETTLE = 10.0
BIG = b"b" * 8000
SMALL = b"s" * 200


async def _topic_entry(admin: AIOKafkaAdminClient, topic: str, key: str) -> ConfigEntry:
    (desc,) = await admin.describe_configs([ConfigResource("TOPIC", topic, {key: None})])
    return desc.configs[key]


async def _accepted(producer: AIOKafkaProducer, topic: str, value: bytes) -> bool:
    """Whether the broker appends ``value`` (True) or refuses it as too large (False)."""
    try:
        meta = await asyncio.wait_for(producer.send_and_wait(topic, value), SETTLE)
    except MessageSizeTooLargeError:
        return False
    assert meta.offset >= 0
    return True


async def _until_accepted(
    producer: AIOKafkaProducer, topic: str, value: bytes, expect: bool
) -> bool:
    # The log picks up a topic config from the metadata log a moment after the
    # controller committed it (and after DescribeConfigs may already show it).
    deadline = time.monotonic() + SETTLE
    while True:
        got = await _accepted(producer, topic, value)
        if got == expect or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.2)


async def test_max_message_bytes_is_enforced_by_the_broker(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    res = ConfigResource(ConfigResourceType.TOPIC, topic)
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=10000
    ) as producer:
        assert await _accepted(producer, topic, BIG)
        before = await _topic_entry(admin, topic, "max.message.bytes")
        assert before.is_default and int(str(before.value)) > len(BIG)

        # validate_only: checked, not applied. A real change made afterwards shows up;
        # the metadata log is ordered, so the validated one would have shown up by then.
        await admin.incremental_alter_configs(
            {res: [AlterConfigOp("max.message.bytes", "1024")]}, validate_only=True
        )
        await admin.incremental_alter_configs({res: [AlterConfigOp("retention.ms", "3600000")]})
        deadline = time.monotonic() + SETTLE
        while (await _topic_entry(admin, topic, "retention.ms")).value != "3600000":
            assert time.monotonic() < deadline, "retention.ms change never became visible"
            await asyncio.sleep(0.1)
        assert await _topic_entry(admin, topic, "max.message.bytes") == before
        assert await _accepted(producer, topic, BIG)

        # The real change: the broker refuses the big record, still takes a small one.
        await admin.incremental_alter_configs({res: [AlterConfigOp("max.message.bytes", "1024")]})
        assert not await _until_accepted(producer, topic, BIG, expect=False)
        entry = await _topic_entry(admin, topic, "max.message.bytes")
        assert entry.value == "1024" and entry.source is ConfigSource.DYNAMIC_TOPIC_CONFIG
        assert await _accepted(producer, topic, SMALL)

        # Deleting the override restores the default: the big record is accepted again.
        await admin.incremental_alter_configs(
            {res: [AlterConfigOp("max.message.bytes", op_type=AlterConfigOpType.DELETE)]}
        )
        assert await _until_accepted(producer, topic, BIG, expect=True)
        assert await _topic_entry(admin, topic, "max.message.bytes") == before


# -- per-broker routing on the three-broker cluster ----------------------------------------


@pytest.mark.cluster
async def test_broker_resource_reaches_the_named_broker(kafka_cluster: KafkaCluster) -> None:
    ids = [n.node_id for n in kafka_cluster.nodes]
    target, other, third = ids[1], ids[0], ids[2]
    key = "log.cleaner.backoff.ms"  # default 15000, dynamic per broker
    not_dynamic = (ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG)

    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers, request_timeout_ms=20000
    ) as admin:

        async def described(node: int) -> tuple[str | None, ConfigEntry]:
            # node.id is static and a broker describes only itself (another id is
            # INVALID_REQUEST): it shows which broker answered.
            (desc,) = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.BROKER, str(node), {"node.id": None, key: None})]
            )
            return desc.configs["node.id"].value, desc.configs[key]

        async def until_value(node: int, value: str) -> ConfigEntry:
            deadline = time.monotonic() + SETTLE
            while True:
                answered_by, entry = await described(node)
                assert answered_by == str(node)
                if entry.value == value or time.monotonic() > deadline:
                    return entry
                await asyncio.sleep(0.1)

        for node in ids:
            answered_by, entry = await described(node)
            assert answered_by == str(node) and entry.source in not_dynamic

        on_target = ConfigResource(ConfigResourceType.BROKER, str(target))
        on_other = ConfigResource(ConfigResourceType.BROKER, str(other))
        try:
            await admin.incremental_alter_configs({on_target: [AlterConfigOp(key, "16000")]})
            entry = await until_value(target, "16000")
            assert entry.value == "16000" and entry.source is ConfigSource.DYNAMIC_BROKER_CONFIG
            # A later change on `other`: once `other` shows it, it has applied the
            # target's change too (the metadata log is ordered), and must not carry it.
            await admin.incremental_alter_configs({on_other: [AlterConfigOp(key, "17000")]})
            entry = await until_value(other, "17000")
            assert entry.value == "17000" and entry.source is ConfigSource.DYNAMIC_BROKER_CONFIG
            assert (await described(target))[1].value == "16000"
            answered_by, entry = await described(third)
            assert answered_by == str(third)
            assert entry.value == "15000" and entry.source in not_dynamic
        finally:
            delete = [AlterConfigOp(key, op_type=AlterConfigOpType.DELETE)]
            await admin.incremental_alter_configs({on_target: delete, on_other: delete})
        for node in (target, other):
            deadline = time.monotonic() + SETTLE
            while (await described(node))[1].source not in not_dynamic:
                assert time.monotonic() < deadline, f"broker {node} kept its override"
                await asyncio.sleep(0.1)


async def test_client_metrics_resources_are_listed_while_they_exist(
    admin: AIOKafkaAdminClient,
) -> None:
    """A CLIENT_METRICS subscription made with incremental_alter_configs is listed by
    name, and is gone from the list once its configs are deleted."""
    name = f"admin-cm-{time.monotonic_ns()}"
    resource = ConfigResource(ConfigResourceType.CLIENT_METRICS, name)
    settings = {"metrics": "org.apache.kafka.producer.", "interval.ms": "60000"}
    await admin.incremental_alter_configs(
        {resource: [AlterConfigOp(k, v) for k, v in settings.items()]}
    )

    async def listed_until(present: bool) -> list[str]:
        return await eventually(
            admin.list_client_metrics_resources, lambda names: (name in names) == present, SETTLE
        )

    names = await listed_until(True)
    assert name in names and names == sorted(names)
    (desc,) = await admin.describe_configs([resource])
    assert desc.configs["interval.ms"].value == "60000"
    await admin.incremental_alter_configs(
        {resource: [AlterConfigOp(k, None, AlterConfigOpType.DELETE) for k in settings]}
    )
    assert name not in await listed_until(False)
