"""What tracing integrations written for aiokafka 0.14 use, against the real broker.

Datadog's ``ddtrace`` (and OpenTelemetry's aiokafka instrumentation, in part) wrap
``AIOKafkaProducer.send``, ``AIOKafkaConsumer.getone`` / ``getmany`` and
``GroupCoordinator.commit_offsets`` on the class, read private attributes of the clients
for span tags, and build a ``MetadataRequest`` from aiokafka's import path to read the
cluster id. With our package, ddtrace's whole aiokafka integration failed to load
(``aiokafka.protocol.metadata`` and ``aiokafka.consumer.group_coordinator`` did not
exist), and with those two present every traced ``send()``/``getone()`` raised
``AttributeError``. These tests do what those integrations do, without installing them
(checked by hand with ddtrace 4.16: the same spans and tags as with aiokafka 0.14).
"""

from __future__ import annotations

import functools
import importlib.metadata
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.cluster import AIOKafkaClient
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.errors import UnknownTopicOrPartitionError
from aiokafka.protocol.metadata import MetadataRequest
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from tools.kafka.rig import KafkaCluster


def _wrap(monkeypatch: pytest.MonkeyPatch, cls: type, name: str, seen: list[Any]) -> None:
    """Replace ``cls.name`` with a wrapper that records ``(instance, args)``, as wrapt's
    ``wrap_function_wrapper`` does for the tracing integrations."""
    original = getattr(cls, name)

    @functools.wraps(original)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((self, args))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapper)


def test_private_attribute_names_read_for_span_tags() -> None:
    client = AIOKafkaClient(bootstrap_servers=["h1:9092", "h2:9092"], client_id="svc")
    assert client._bootstrap_servers == ["h1:9092", "h2:9092"]  # as given, as in 0.14
    assert client._client_id == "svc"
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers="h1:9092", group_id="g", enable_auto_commit=False
    )
    assert consumer._group_id == "g" and consumer._enable_auto_commit is False
    assert consumer._client is None  # before start(), as in 0.14
    with pytest.raises(AttributeError):
        client._bootstrap_servers = "x"  # type: ignore[misc]  # read-only views


async def test_traced_calls_see_every_record_and_commit(
    kafka: KafkaCluster, new_topic: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = new_topic(partitions=1)
    sends: list[Any] = []
    getones: list[Any] = []
    commits: list[Any] = []
    _wrap(monkeypatch, AIOKafkaProducer, "send", sends)
    _wrap(monkeypatch, AIOKafkaConsumer, "getone", getones)
    _wrap(monkeypatch, GroupCoordinator, "commit_offsets", commits)

    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        assert producer.client._bootstrap_servers == kafka.bootstrap_servers
        for i in range(3):
            await producer.send_and_wait(topic, b"v%d" % i)
    assert len(sends) == 3

    group = f"tracing-{uuid.uuid4().hex[:8]}"
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    async with consumer:
        assert consumer._client is not None
        assert consumer._client._bootstrap_servers == kafka.bootstrap_servers
        values = []
        async for record in consumer:  # as in aiokafka 0.14: each record from getone()
            values.append(record.value)
            if len(values) == 3:
                break
        assert values == [b"v0", b"v1", b"v2"]
        assert [instance for instance, _ in getones] == [consumer] * 3
        await consumer.commit()
    ((instance, args),) = commits
    assert instance.group_id == group  # what ddtrace's data streams read
    _assignment, offsets = args
    assert offsets == {TopicPartition(topic, 0): OffsetAndMetadata(3, "")}


async def test_metadata_request_from_aiokafkas_import_path(kafka: KafkaCluster) -> None:
    async with AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers) as client:
        node = client.get_random_node()
        assert node is not None
        none = await client.send(node, MetadataRequest(topics=[], allow_auto_topic_creation=False))
        assert none.cluster_id and none.topics == []
        every = await client.send(node, MetadataRequest())
        assert every.cluster_id == none.cluster_id


async def test_partition_lookups_for_send_spans(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    """OpenTelemetry's instrumentation asks, before each send, for the topic's partitions
    (``client._wait_on_metadata``) and the partition the record will go to
    (``producer._partition``), reading the serializers to get the key's bytes."""
    topic = new_topic(partitions=3)

    def encode(key: str | None) -> bytes | None:  # called for a missing key too, as in 0.14
        return None if key is None else key.encode()

    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers,
        key_serializer=encode,
    ) as producer:
        assert producer._key_serializer is encode and producer._value_serializer is None
        assert await producer.client._wait_on_metadata(topic) == {0, 1, 2}
        with pytest.raises(UnknownTopicOrPartitionError):
            await producer.client._wait_on_metadata(f"missing-{uuid.uuid4().hex[:8]}")
        for key in ("a", "b", "c", "d"):
            chosen = producer._partition(topic, None, key, b"v", key.encode(), b"v")
            sent = await producer.send_and_wait(topic, b"v", key=key)
            assert sent.partition == chosen
        assert producer._partition(topic, 2, "a", b"v", b"a", b"v") == 2
        keyless = producer._partition(topic, None, None, b"v", None, b"v")
        assert (await producer.send_and_wait(topic, b"v")).partition == keyless


def test_version_satisfies_the_instrumentations_pins() -> None:
    """OpenTelemetry's instrumentor checks the installed aiokafka against
    ``aiokafka >= 0.8, < 1.0`` and instruments nothing outside it (silently but for one
    log line); this package was versioned 1.0.0.dev0, outside."""
    from packaging.specifiers import SpecifierSet

    installed = importlib.metadata.version("aiokafka")
    assert installed == aiokafka.__version__
    assert SpecifierSet(">=0.8, <1.0").contains(installed)  # opentelemetry-instrumentation
    assert SpecifierSet(">=0.9.0").contains(installed)  # ddtrace
