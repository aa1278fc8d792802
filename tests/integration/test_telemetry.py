"""KIP-714 client metrics push against a real broker.

A broker offers GetTelemetrySubscriptions/PushTelemetry only with a metrics reporter
implementing its client-telemetry interface: this module starts one with
``tools/kafka/telemetry-plugin`` (``FileTelemetryExporter``: every pushed payload to a
file, as the broker decoded it) and creates client-metrics subscriptions with
IncrementalAlterConfigs on ``CLIENT_METRICS`` resources, each matching one test's
``client_id`` so tests do not see each other's clients. The payloads are decoded
(``tests/support/otlp_decode.py``) and compared with ``producer.metrics()``.

Timing bounds are generous: the machine is shared.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.cluster import AIOKafkaClient
from tests.support.otlp_decode import Metrics, decode_metrics_data
from tests.support.request_log import RequestLog
from tools.kafka import telemetry_plugin
from tools.kafka.rig import KafkaCluster, KafkaStartError

INTERVAL_MS = 1000


@dataclass
class Push:
    received_ms: int
    instance_id: str
    terminating: bool
    client_id: str
    push_interval_ms: int
    metrics: Metrics


@dataclass
class TelemetryBroker:
    cluster: KafkaCluster
    payloads: Path

    def pushes(self, client_id: str) -> list[Push]:
        """Every payload the broker received from ``client_id``, in arrival order."""
        out = []
        for path in sorted(self.payloads.glob("*.push")):
            head, _, body = path.read_bytes().partition(b"\n")
            fields = dict(item.split("=", 1) for item in head.decode().split("\t"))
            if fields["client_id"] != client_id:
                continue
            out.append(
                Push(
                    int(fields["received_ms"]),
                    fields["client_instance_id"],
                    fields["terminating"] == "true",
                    fields["client_id"],
                    int(fields["push_interval_ms"]),
                    decode_metrics_data(body),
                )
            )
        return out

    async def wait_pushes(self, client_id: str, count: int, timeout: float = 60) -> list[Push]:
        deadline = time.monotonic() + timeout
        while True:
            pushes = self.pushes(client_id)
            if len(pushes) >= count:
                return pushes
            assert time.monotonic() < deadline, f"{len(pushes)} pushes of {client_id}"
            await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
def telemetry_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TelemetryBroker]:
    try:
        plugin = telemetry_plugin.build()
    except telemetry_plugin.PluginBuildError as exc:
        pytest.fail(f"cannot build the telemetry plugin (make telemetry-plugin): {exc}")
    payloads = tmp_path_factory.mktemp("telemetry")
    cluster = KafkaCluster(
        1,
        listeners=["PLAINTEXT"],
        extra_config=telemetry_plugin.broker_config(payloads),
        classpath=[plugin],
        label="telemetry",
    )
    try:
        cluster.start(timeout=120)
    except KafkaStartError as exc:
        pytest.fail(f"the telemetry broker did not start:\n{exc}", pytrace=False)
    yield TelemetryBroker(cluster, payloads)
    cluster.stop()


@pytest.fixture
async def admin(telemetry_broker: TelemetryBroker) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers,
        request_timeout_ms=15000,
        enable_metrics_push=False,
    ) as client:
        yield client


async def _subscribe(
    admin: AIOKafkaAdminClient, client_id: str, metrics: str, interval_ms: int = INTERVAL_MS
) -> ConfigResource:
    """A client-metrics subscription of ``metrics`` for ``client_id`` only."""
    resource = ConfigResource(ConfigResourceType.CLIENT_METRICS, f"sub-{client_id}")
    await admin.incremental_alter_configs(
        {
            resource: [
                AlterConfigOp("metrics", metrics),
                AlterConfigOp("interval.ms", str(interval_ms)),
                AlterConfigOp("match", f"client_id={client_id}"),
            ]
        }
    )
    return resource


def _producer_names(snapshot: dict[str, object], topic: str) -> set[str]:
    """The KIP names of the producer's ``record-*`` values and per-topic values."""
    top = {
        f"org.apache.kafka.producer.{name.replace('-', '.')}"
        for name in snapshot
        if name.startswith("record-")
    }
    per_topic = snapshot["topics"]
    assert isinstance(per_topic, dict)
    return top | {
        f"org.apache.kafka.producer.topic.{name.replace('-', '.')}" for name in per_topic[topic]
    }


async def test_producer_pushes_what_it_is_subscribed_to(
    telemetry_broker: TelemetryBroker, admin: AIOKafkaAdminClient
) -> None:
    client_id = f"tel-{uuid.uuid4().hex[:8]}"
    topic = f"telemetry-{client_id}"
    telemetry_broker.cluster.create_topic(topic, partitions=2)
    # Prefix-matched selection: the producer's record-* and per-topic metrics only.
    await _subscribe(
        admin, client_id, "org.apache.kafka.producer.record.,org.apache.kafka.producer.topic."
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers, client_id=client_id
    )
    await producer.start()
    try:
        for i in range(20):
            await producer.send_and_wait(topic, b"x" * 10, partition=i % 2)
        pushes = await telemetry_broker.wait_pushes(client_id, 4)
        # A push taken after the last send: its record counts are final.
        snapshot = producer.metrics()
        pushes = await telemetry_broker.wait_pushes(client_id, len(pushes) + 1)
    finally:
        await producer.stop()
    final = await telemetry_broker.wait_pushes(client_id, len(pushes) + 1, timeout=30)

    assert not any(p.terminating for p in final[:-1])
    assert final[-1].terminating, "stop() sends the terminating push"
    assert {p.instance_id for p in final} == {final[0].instance_id}
    assert all(p.push_interval_ms == INTERVAL_MS for p in final)

    # The KIP's names, and nothing the subscription did not select.
    expected = _producer_names(snapshot, topic)
    for push in final:
        names = set(push.metrics.by_name())
        assert names <= expected, names - expected
        assert push.metrics.resource["client_instance_id"] == push.instance_id
    for push in final[len(pushes) - 1 :]:  # taken after the snapshot: every name
        assert set(push.metrics.by_name()) == expected

    # Kafka asks for delta temporality: counts are changes since the previous push,
    # each starting where the previous one ended, and add up to the client's totals.
    sent = [p.metrics.value("org.apache.kafka.producer.record.send.total") for p in final]
    assert sum(sent) == snapshot["record-send-total"] == 20
    per_topic = [
        p.value
        for push in final
        for p in push.metrics.points
        if p.name == "org.apache.kafka.producer.topic.record.send.total"
    ]
    assert all(
        p.attributes == {"topic": topic}
        for push in final
        for p in push.metrics.points
        if p.name.startswith("org.apache.kafka.producer.topic.")
    )
    assert sum(per_topic) == 20
    sums = [
        p
        for push in final
        for p in push.metrics.points
        if p.name == "org.apache.kafka.producer.record.send.total"
    ]
    assert all(p.kind == "sum" and p.temporality == 1 and p.monotonic for p in sums)
    assert all(b.start_ns == a.time_ns for a, b in itertools.pairwise(sums))
    gauges = final[-1].metrics.by_name()["org.apache.kafka.producer.record.send.rate"]
    assert gauges[0].kind == "gauge"

    # The push interval is honoured (the first push is staggered, 0.5-1.5 intervals).
    regular = [p.received_ms for p in final if not p.terminating]
    gaps = [b - a for a, b in itertools.pairwise(regular)]
    assert min(gaps) >= 0.9 * INTERVAL_MS, gaps
    assert statistics.median(gaps) < 3 * INTERVAL_MS, gaps


async def test_changed_subscription_is_fetched_again(
    telemetry_broker: TelemetryBroker, admin: AIOKafkaAdminClient
) -> None:
    """Altering the subscription changes its id: the next push is answered
    UNKNOWN_SUBSCRIPTION_ID, and the client fetches the new one and pushes that."""
    client_id = f"tel-{uuid.uuid4().hex[:8]}"
    await _subscribe(admin, client_id, "org.apache.kafka.producer.record.send.total")
    async with AIOKafkaProducer(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers, client_id=client_id
    ):
        first = await telemetry_broker.wait_pushes(client_id, 1)
        assert set(first[0].metrics.by_name()) == {"org.apache.kafka.producer.record.send.total"}
        await _subscribe(admin, client_id, "org.apache.kafka.producer.buffer.")
        deadline = time.monotonic() + 60
        while True:
            pushes = telemetry_broker.pushes(client_id)
            if set(pushes[-1].metrics.by_name()) == {
                "org.apache.kafka.producer.buffer.total.bytes",
                "org.apache.kafka.producer.buffer.available.bytes",
            }:
                break
            assert time.monotonic() < deadline, [set(p.metrics.by_name()) for p in pushes]
            await asyncio.sleep(0.2)
        assert pushes[-1].metrics.value("org.apache.kafka.producer.buffer.total.bytes") == 33554432


async def test_consumer_names_and_resource(
    telemetry_broker: TelemetryBroker, admin: AIOKafkaAdminClient
) -> None:
    client_id = f"tel-{uuid.uuid4().hex[:8]}"
    await _subscribe(admin, client_id, "org.apache.kafka.consumer.")
    async with AIOKafkaConsumer(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers,
        client_id=client_id,
        group_id=f"g-{client_id}",
        client_rack="rack-a",
    ):
        pushes = await telemetry_broker.wait_pushes(client_id, 1)
    push = pushes[0]
    assert push.metrics.resource["group_id"] == f"g-{client_id}"
    assert push.metrics.resource["client_rack"] == "rack-a"
    names = set(push.metrics.by_name())
    assert "org.apache.kafka.consumer.fetch.manager.records.consumed.total" in names
    assert "org.apache.kafka.consumer.coordinator.commit.total" in names
    assert "org.apache.kafka.consumer.request.total" in names
    node = push.metrics.by_name()["org.apache.kafka.consumer.node.request.total"]
    assert {p.attributes["node_id"] for p in node} >= {"node-1"}


async def test_enable_metrics_push_false_pushes_nothing(
    telemetry_broker: TelemetryBroker, admin: AIOKafkaAdminClient
) -> None:
    client_id = f"tel-{uuid.uuid4().hex[:8]}"
    await _subscribe(admin, client_id, "*", interval_ms=200)
    async with AIOKafkaProducer(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers,
        client_id=client_id,
        enable_metrics_push=False,
    ):
        await asyncio.sleep(3)
    await asyncio.sleep(0.5)
    assert telemetry_broker.pushes(client_id) == []


async def test_without_subscription_one_request_and_nothing_else(
    telemetry_broker: TelemetryBroker,
) -> None:
    """No subscription matches: one GetTelemetrySubscriptions, then nothing until the
    broker's push interval (5 minutes) has passed, and no terminating push."""
    client = AIOKafkaClient(
        bootstrap_servers=telemetry_broker.cluster.bootstrap_servers,
        client_id=f"tel-none-{uuid.uuid4().hex[:8]}",
    )
    await client.start()
    log = RequestLog(client)
    try:
        client.push_metrics("admin", lambda: {"request-total": 1.0}, {})
        deadline = time.monotonic() + 30
        while log.count("GetTelemetrySubscriptionsRequest") == 0:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        await asyncio.sleep(3)
    finally:
        await client.close()
    assert log.count("GetTelemetrySubscriptionsRequest") == 1
    assert log.count("PushTelemetryRequest") == 0
    assert log.names() <= {"GetTelemetrySubscriptionsRequest", "MetadataRequest"}


async def test_broker_without_telemetry_gets_no_request(kafka: KafkaCluster) -> None:
    """A broker without a telemetry plugin does not offer the APIs: the task ends
    quietly without sending anything."""
    client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers)
    await client.start()
    log = RequestLog(client)
    try:
        client.push_metrics("admin", lambda: {"request-total": 1.0}, {})
        deadline = time.monotonic() + 30
        while any(t.get_name() == "aiokafka-telemetry" for t in asyncio.all_tasks()):
            assert time.monotonic() < deadline, "the telemetry task did not end"
            await asyncio.sleep(0.05)
    finally:
        await client.close()
    assert log.count("GetTelemetrySubscriptionsRequest") == 0
    assert log.count("PushTelemetryRequest") == 0


async def test_dropped_producer_is_collected_and_its_push_ends(
    telemetry_broker: TelemetryBroker, admin: AIOKafkaAdminClient
) -> None:
    """The telemetry task holds the producer's metrics() weakly: a producer dropped
    without stop() is still collected, and its release closes the client, which ends
    the task with the terminating push."""
    client_id = f"tel-{uuid.uuid4().hex[:8]}"
    await _subscribe(admin, client_id, "org.apache.kafka.producer.record.send.total")
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, _context: None)  # the "Unclosed" report
    try:
        producer = AIOKafkaProducer(
            bootstrap_servers=telemetry_broker.cluster.bootstrap_servers, client_id=client_id
        )
        await producer.start()
        await telemetry_broker.wait_pushes(client_id, 1)
        with pytest.warns(ResourceWarning, match="Unclosed AIOKafkaProducer"):
            del producer
            gc.collect()
        pushes = await telemetry_broker.wait_pushes(client_id, 2)
        while not pushes[-1].terminating:
            pushes = await telemetry_broker.wait_pushes(client_id, len(pushes) + 1)
        deadline = time.monotonic() + 30
        while any(t.get_name() == "aiokafka-telemetry" for t in asyncio.all_tasks()):
            assert time.monotonic() < deadline, "the telemetry task did not end"
            await asyncio.sleep(0.05)
        # Nothing left to read: the terminating push carries no metrics.
        assert pushes[-1].metrics.points == []
    finally:
        loop.set_exception_handler(previous)
