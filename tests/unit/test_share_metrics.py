"""The share consumer's metrics without a broker: the snapshot's names (the Java share
consumer's), what each recording adds, and the adapters' view of a share consumer."""

from __future__ import annotations

import pytest

from aiokafka.errors import InvalidRecordStateError
from aiokafka.metrics.export import client_kind
from aiokafka.metrics.share import (
    TOPIC_NAMES,
    ShareCoordinatorMetrics,
    ShareFetchMetrics,
    SharePollMetrics,
    share_consumer_snapshot,
)
from aiokafka.share import AIOKafkaShareConsumer
from aiokafka.structs import TopicPartition

# Kafka 4.3.1's KafkaShareConsumer: consumer-share-fetch-manager-metrics,
# consumer-share-coordinator-metrics (heartbeat and rebalance) and consumer-share-metrics.
JAVA_NAMES = {
    "fetch-size-avg",
    "fetch-size-max",
    "bytes-consumed-rate",
    "bytes-consumed-total",
    "records-per-request-avg",
    "records-per-request-max",
    "records-consumed-rate",
    "records-consumed-total",
    "acknowledgements-send-rate",
    "acknowledgements-send-total",
    "acknowledgements-error-rate",
    "acknowledgements-error-total",
    "fetch-latency-avg",
    "fetch-latency-max",
    "fetch-rate",
    "fetch-total",
    "fetch-throttle-time-avg",
    "fetch-throttle-time-max",
    "heartbeat-response-time-max",
    "heartbeat-rate",
    "heartbeat-total",
    "last-heartbeat-seconds-ago",
    "rebalance-total",
    "rebalance-rate-per-hour",
    "last-poll-seconds-ago",
    "time-between-poll-avg",
    "time-between-poll-max",
    "poll-idle-ratio-avg",
}


def test_unstarted_consumer_reports_every_name_as_zero() -> None:
    consumer = AIOKafkaShareConsumer("t", group_id="g")
    got = consumer.metrics()
    assert JAVA_NAMES <= set(got)
    assert got["topics"] == {} and got["nodes"] == {}
    assert got["last-poll-seconds-ago"] == -1 and got["last-heartbeat-seconds-ago"] == -1
    assert all(got[name] == 0 for name in JAVA_NAMES if not name.startswith("last-")), got


def test_fetch_and_acknowledgement_recordings() -> None:
    poll = SharePollMetrics()
    fetch = ShareFetchMetrics(poll.topics)
    fetch.fetch_done(0.004, throttle_ms=0)
    fetch.fetched({"a": (10, 1000), "b": (5, 200)})
    a0, a1, b0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
    fetch.acknowledged(
        {a0: {0: 1, 1: 1}, a1: {7: 1}, b0: {3: 2, 4: 2, 5: 3}},
        {a0: None, a1: InvalidRecordStateError("late"), b0: None},
    )
    fetch.acknowledged({}, {})  # nothing sent: nothing recorded
    started = poll.poll_started()
    poll.poll_ended(started, {a0: [object()] * 10, b0: [object()] * 5})
    got = share_consumer_snapshot(poll, fetch, None, None)
    assert got["fetch-total"] == 1 and got["fetch-latency-max"] == pytest.approx(4.0)
    assert got["bytes-consumed-total"] == 1200 and got["fetch-size-max"] == 1200
    assert got["records-per-request-max"] == 15
    assert got["records-consumed-total"] == 15
    assert got["acknowledgements-send-total"] == 6
    assert got["acknowledgements-error-total"] == 1
    assert set(got["topics"]) == {"a", "b"}
    assert set(got["topics"]["a"]) == set(TOPIC_NAMES)
    assert got["topics"]["a"]["records-consumed-total"] == 10
    assert got["topics"]["a"]["bytes-consumed-total"] == 1000
    assert got["topics"]["a"]["acknowledgements-send-total"] == 3
    assert got["topics"]["a"]["acknowledgements-error-total"] == 1
    assert got["topics"]["b"]["acknowledgements-error-total"] == 0


def test_coordinator_recordings() -> None:
    coordinator = ShareCoordinatorMetrics()
    coordinator.heartbeat_done(started=0.0)  # monotonic 0: a long heartbeat
    coordinator.assignment_changed(3)
    coordinator.assignment_changed(2)
    got = coordinator.snapshot()
    assert got["heartbeat-total"] == 1 and got["heartbeat-response-time-max"] > 0
    assert got["rebalance-total"] == 2 and got["rebalance-rate-per-hour"] > 0
    assert got["assigned-partitions"] == 2


def test_adapters_know_the_share_consumer() -> None:
    consumer = AIOKafkaShareConsumer("t", group_id="g")
    assert client_kind(consumer) == "share_consumer"


def test_otel_declares_every_share_name() -> None:
    pytest.importorskip("opentelemetry.sdk.metrics")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from aiokafka.metrics.otel import instrument

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    consumer = AIOKafkaShareConsumer("t", group_id="g")
    registration = instrument(provider.get_meter("test"), consumer, client_id="s1")
    data = reader.get_metrics_data()
    registration.close()
    provider.shutdown()
    assert data is not None
    names = {
        metric.name
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert {f"kafka.share_consumer.{name}" for name in JAVA_NAMES} <= names


def test_pattern_subscription_is_refused_clearly() -> None:
    consumer = AIOKafkaShareConsumer(group_id="g")
    with pytest.raises(ValueError, match="topic name only"):
        consumer.subscribe(pattern="^orders-.*")
    with pytest.raises(ValueError, match="topic name only"):
        consumer.subscribe(["a"], pattern="b")
    assert consumer.subscription() == frozenset()
    consumer.subscribe(("a", "b"))
    assert consumer.subscription() == frozenset({"a", "b"})
