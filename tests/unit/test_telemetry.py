"""KIP-714 telemetry without a broker: the OTLP encoding (decoded by an independent
reader), the metric names, prefix selection, delta temporality, the size cut, and the
reporter's error table through its ``TelemetryClient`` seam (error codes a real broker
only sends when something is broken; ``tests/integration/test_telemetry.py`` covers
the real flow).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from aiokafka import errors
from aiokafka.protocol import messages
from aiokafka.record import compression
from aiokafka.telemetry import TelemetryReporter
from aiokafka.telemetry.collect import Collector, Selection
from aiokafka.telemetry.otlp import CUMULATIVE, DELTA, Point, encode_metrics_data
from aiokafka.telemetry.reporter import kafka_uuid
from tests.support.otlp_decode import decode_metrics_data

INSTANCE = uuid.uuid4()


def test_otlp_round_trip() -> None:
    points = [
        Point("a.gauge", 1.5, 10, {"topic": "t"}),
        Point("a.total", 7.0, 20, {}, DELTA, 15),
        Point("b.total", 9.0, 30, {"node_id": "node-1"}, CUMULATIVE, 5),
    ]
    decoded = decode_metrics_data(encode_metrics_data({"group_id": "g"}, points))
    assert decoded.resource == {"group_id": "g"}
    got = [(p.name, p.kind, p.value, p.attributes, p.time_ns, p.start_ns) for p in decoded.points]
    assert got == [
        ("a.gauge", "gauge", 1.5, {"topic": "t"}, 10, 0),
        ("a.total", "sum", 7.0, {}, 20, 15),
        ("b.total", "sum", 9.0, {"node_id": "node-1"}, 30, 5),
    ]
    assert [(p.temporality, p.monotonic) for p in decoded.points[1:]] == [(1, True), (2, True)]


def _producer_snapshot() -> dict[str, Any]:
    return {
        "record-send-total": 5.0,
        "record-send-rate": 0.5,
        "buffer-total-bytes": 100.0,
        "request-total": 3.0,
        "topics": {"orders": {"record-send-total": 5.0, "byte-rate": 1.0}},
        "nodes": {1: {"request-total": 2.0}, "bootstrap-0": {"request-total": 1.0}},
    }


def test_names_follow_the_kip() -> None:
    points = Collector("producer").points(_producer_snapshot(), Selection(["*"]), delta=False)
    got = {(p.name, tuple(p.attributes.items())) for p in points}
    assert got == {
        ("org.apache.kafka.producer.record.send.total", ()),
        ("org.apache.kafka.producer.record.send.rate", ()),
        ("org.apache.kafka.producer.buffer.total.bytes", ()),
        ("org.apache.kafka.producer.request.total", ()),
        ("org.apache.kafka.producer.topic.record.send.total", (("topic", "orders"),)),
        ("org.apache.kafka.producer.topic.byte.rate", (("topic", "orders"),)),
        ("org.apache.kafka.producer.node.request.total", (("node_id", "node-1"),)),
        ("org.apache.kafka.producer.node.request.total", (("node_id", "bootstrap-0"),)),
    }
    # *-total are monotonic sums, the rest gauges.
    kinds = {p.name: p.temporality for p in points}
    assert kinds["org.apache.kafka.producer.record.send.total"] == CUMULATIVE
    assert kinds["org.apache.kafka.producer.record.send.rate"] is None


def test_consumer_groups() -> None:
    snapshot = {
        "records-lag-max": 1.0,
        "commit-total": 2.0,
        "request-total": 3.0,
        "partitions": {"t": {0: {"records-lag": 4.0}}},
    }
    points = Collector("consumer").points(snapshot, Selection(["*"]), delta=False)
    got = {p.name: p.attributes for p in points}
    assert got == {
        "org.apache.kafka.consumer.fetch.manager.records.lag.max": {},
        "org.apache.kafka.consumer.coordinator.commit.total": {},
        "org.apache.kafka.consumer.request.total": {},
        "org.apache.kafka.consumer.fetch.manager.records.lag": {"topic": "t", "partition": "0"},
    }
    admin = Collector("admin").points({"request-total": 1.0}, Selection(["*"]), delta=False)
    assert [p.name for p in admin] == ["org.apache.kafka.admin.client.request.total"]


def test_selection_by_prefix() -> None:
    assert Selection([]).empty
    assert "anything" in Selection(["*"])
    selection = Selection(["org.apache.kafka.producer.record.", "org.apache.kafka.producer.node"])
    points = Collector("producer").points(_producer_snapshot(), selection, delta=False)
    assert {p.name for p in points} == {
        "org.apache.kafka.producer.record.send.total",
        "org.apache.kafka.producer.record.send.rate",
        "org.apache.kafka.producer.node.request.total",
    }


def test_delta_temporality_and_rewind() -> None:
    clock = iter([100.0, 101.0, 102.0, 103.0, 104.0]).__next__
    collector = Collector("admin", clock=clock)
    everything = Selection(["*"])
    first = collector.points({"request-total": 3.0}, everything, delta=True)
    assert [(p.value, p.start_ns, p.temporality) for p in first] == [(3.0, 100 * 10**9, DELTA)]
    second = collector.points({"request-total": 5.0}, everything, delta=True)
    assert [(p.value, p.start_ns) for p in second] == [(2.0, 101 * 10**9)]
    # The push carrying `second` failed: the next one carries its change too.
    collector.rewind(second)
    third = collector.points({"request-total": 6.0}, everything, delta=True)
    assert [(p.value, p.start_ns) for p in third] == [(3.0, 101 * 10**9)]
    # Back to cumulative: totals again, from the start.
    cumulative = collector.points({"request-total": 6.0}, everything, delta=False)
    assert [(p.value, p.start_ns) for p in cumulative] == [(6.0, 100 * 10**9)]


def test_kafka_uuid_text() -> None:
    assert kafka_uuid(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"


class FakeClient:
    """The TelemetryClient seam: answers from a script, records what was sent."""

    def __init__(self, answers: list[Any], supported: bool = True) -> None:
        self.answers = answers
        self.sent: list[Any] = []
        self.supported = supported

    def least_loaded_node(self) -> int | None:
        return 1

    async def api_version(self, node_id: int, api_key: int, max_version: int | None = None) -> int:
        if not self.supported:
            raise errors.UnsupportedVersionError("no telemetry")
        return 0

    async def send(self, node_id: int, request: Any, *, timeout_ms: int | None = None) -> Any:
        self.sent.append(request)
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            await asyncio.sleep(3600)  # nothing scripted: hang like an idle broker
        if isinstance(answer, Exception):
            raise answer
        return answer


def _subscription(**kw: Any) -> Any:
    fields: dict[str, Any] = {
        "client_instance_id": INSTANCE,
        "subscription_id": 7,
        "accepted_compression_types": [compression.CODEC_GZIP],
        "push_interval_ms": 20,
        "telemetry_max_bytes": 1 << 20,
        "delta_temporality": True,
        "requested_metrics": ["*"],
    }
    fields.update(kw)
    return messages.GetTelemetrySubscriptionsResponse(**fields)


def _push(code: int = 0, throttle_ms: int = 0) -> Any:
    return messages.PushTelemetryResponse(throttle_time_ms=throttle_ms, error_code=code)


def _names(client: FakeClient) -> list[str]:
    return [type(r).__name__.removesuffix("Request") for r in client.sent]


async def _run(client: FakeClient, until: int, metrics: Any = None) -> TelemetryReporter:
    reporter = TelemetryReporter(
        client, "admin", metrics or (lambda: {"request-total": 1.0}), {}, 1000
    )
    reporter.start()
    for _ in range(500):
        if len(client.sent) >= until:
            break
        await asyncio.sleep(0.01)
    return reporter


async def test_pushes_compressed_then_terminating_push_on_close() -> None:
    client = FakeClient([_subscription(), _push(), _push(), _push()])
    # Enough repetition for gzip to win (a smaller result is sent uncompressed).
    snapshot = {"nodes": {i: {"request-total": 1.0} for i in range(50)}}
    reporter = await _run(client, 3, metrics=lambda: snapshot)
    await reporter.close(1.0)
    assert _names(client)[:3] == ["GetTelemetrySubscriptions", "PushTelemetry", "PushTelemetry"]
    pushes = [r for r in client.sent if isinstance(r, messages.PushTelemetryRequest)]
    assert pushes[-1].terminating and not any(p.terminating for p in pushes[:-1])
    assert all(p.compression_type == compression.CODEC_GZIP for p in pushes)
    assert all(p.subscription_id == 7 and p.client_instance_id == INSTANCE for p in pushes)
    decoded = decode_metrics_data(compression.decompress(compression.CODEC_GZIP, pushes[0].metrics))
    assert decoded.resource["client_instance_id"] == kafka_uuid(INSTANCE)
    assert reporter.client_instance_id == INSTANCE


@pytest.mark.parametrize(
    "code",
    [errors.UnknownSubscriptionIdError.errno, errors.UnsupportedCompressionTypeError.errno],
)
async def test_errors_that_fetch_the_subscription_again(code: int) -> None:
    client = FakeClient([_subscription(), _push(code), _subscription(subscription_id=8), _push()])
    reporter = await _run(client, 4)
    await reporter.close(0)
    assert _names(client)[:4] == [
        "GetTelemetrySubscriptions",
        "PushTelemetry",
        "GetTelemetrySubscriptions",
        "PushTelemetry",
    ]
    # The second ask names the instance the broker gave, the push the new subscription.
    assert client.sent[2].client_instance_id == INSTANCE
    assert client.sent[3].subscription_id == 8


@pytest.mark.parametrize(
    "code",
    [
        errors.InvalidRecordError.errno,
        errors.InvalidRequestError.errno,
        errors.UnsupportedVersionError.errno,
    ],
)
async def test_errors_that_stop(code: int, caplog: pytest.LogCaptureFixture) -> None:
    client = FakeClient([_subscription(), _push(code)])
    reporter = await _run(client, 2)
    await asyncio.sleep(0.2)
    await reporter.close(1.0)
    # Nothing after the failed push, not even a terminating one.
    assert _names(client) == ["GetTelemetrySubscriptions", "PushTelemetry"]
    assert "Client telemetry disabled" in caplog.text


async def test_too_large_waits_an_interval_then_asks_again() -> None:
    code = errors.TelemetryTooLargeError.errno
    client = FakeClient([_subscription(push_interval_ms=300), _push(code), _subscription()])
    reporter = await _run(client, 2)
    await asyncio.sleep(0.1)
    assert len(client.sent) == 2  # not at once: after the interval
    for _ in range(300):
        if len(client.sent) >= 3:
            break
        await asyncio.sleep(0.01)
    await reporter.close(0)
    assert _names(client)[2] == "GetTelemetrySubscriptions"


async def test_throttle_time_delays_the_next_push() -> None:
    client = FakeClient([_subscription(), _push(throttle_ms=400), _push()])
    reporter = await _run(client, 2)
    await asyncio.sleep(0.2)
    assert len(client.sent) == 2  # the 20 ms interval waits for the 400 ms throttle
    await reporter.close(0)


async def test_broker_without_the_api_gets_nothing() -> None:
    client = FakeClient([], supported=False)
    reporter = await _run(client, 0)
    for _ in range(500):  # the task ends by itself
        if not any(t.get_name() == "aiokafka-telemetry" for t in asyncio.all_tasks()):
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the telemetry task did not end")
    await reporter.close(1.0)
    assert client.sent == []


async def test_payload_is_cut_to_telemetry_max_bytes() -> None:
    snapshot = {"nodes": {i: {"request-total": float(i)} for i in range(200)}}
    client = FakeClient([_subscription(accepted_compression_types=[], telemetry_max_bytes=2000)])
    client.answers += [_push()] * 3
    reporter = await _run(client, 2, metrics=lambda: snapshot)
    await reporter.close(0)
    push = client.sent[1]
    assert push.compression_type == compression.CODEC_NONE
    assert 0 < len(push.metrics) <= 2000
    kept = decode_metrics_data(push.metrics).points
    assert 0 < len(kept) < 200


async def test_a_failing_metrics_source_is_logged_and_ends_only_telemetry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("snapshot bug")

    client = FakeClient([_subscription(), _push()])
    reporter = await _run(client, 1, metrics=broken)
    for _ in range(300):
        if "Client telemetry failed" in caplog.text:
            break
        await asyncio.sleep(0.01)
    await reporter.close(1.0)  # telemetry is over: no terminating push either
    assert "snapshot bug" in caplog.text
    assert _names(client) == ["GetTelemetrySubscriptions"]
