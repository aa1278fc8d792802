"""The adapters' shared part: flattening a snapshot, reading it from another thread,
and the name lists the OpenTelemetry adapter declares instruments from."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from aiokafka.metrics.consumer import FetchMetrics
from aiokafka.metrics.export import Sample, client_kind, read_snapshot, samples
from aiokafka.metrics.producer import ProducerMetrics
from aiokafka.structs import TopicPartition


def test_samples_flatten_scopes_with_labels() -> None:
    snapshot: dict[str, Any] = {
        "record-send-total": 3,
        "request-latency-avg": 1.5,
        "topics": {"t": {"record-send-total": 3.0}},
        "partitions": {"t": {0: {"records-lag": 7.0}}},
        "nodes": {1: {"request-total": 2.0}, "bootstrap-0": {"request-total": 1.0}},
    }
    got = list(samples(snapshot))
    assert Sample("", "record-send-total", {}, 3.0) in got
    assert Sample("", "request-latency-avg", {}, 1.5) in got
    assert Sample("topic", "record-send-total", {"topic": "t"}, 3.0) in got
    assert Sample("partition", "records-lag", {"topic": "t", "partition": "0"}, 7.0) in got
    assert Sample("node", "request-total", {"node_id": "1"}, 2.0) in got
    assert Sample("node", "request-total", {"node_id": "bootstrap-0"}, 1.0) in got
    assert len(got) == 6
    assert got[0].is_total and not got[1].is_total


class _Counting:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def metrics(self) -> dict[str, Any]:
        self.threads.append(threading.get_ident())
        return {"x": 1.0}


async def test_read_snapshot_runs_on_the_loop_thread() -> None:
    client = _Counting()
    loop = asyncio.get_running_loop()
    assert await asyncio.to_thread(read_snapshot, client, loop) == {"x": 1.0}
    assert read_snapshot(client, loop) == {"x": 1.0}  # on the loop: directly
    assert client.threads == [threading.get_ident()] * 2


def test_read_snapshot_without_a_running_loop_reads_directly() -> None:
    client = _Counting()
    assert read_snapshot(client, None) == {"x": 1.0}
    loop = asyncio.new_event_loop()
    try:
        assert read_snapshot(client, loop) == {"x": 1.0}
    finally:
        loop.close()


def test_client_kind() -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient

    assert client_kind(AIOKafkaProducer()) == "producer"
    assert client_kind(AIOKafkaConsumer()) == "consumer"
    assert client_kind(AIOKafkaAdminClient()) == "admin"
    with pytest.raises(TypeError):
        client_kind(object())


def test_declared_names_match_the_snapshots() -> None:
    producer = ProducerMetrics()

    class TP:
        topic = "t"

    class Batch:
        tp = TP()
        record_count = 1
        created = 0.0

    producer.request_sent([Batch()], [10])
    assert tuple(producer.snapshot()["topics"]["t"]) == ProducerMetrics.TOPIC_NAMES

    fetch = FetchMetrics()

    class State:
        position = 0
        highwater = 5
        last_stable_offset = 5

    tp = TopicPartition("t", 0)
    fetch.tally(tp).records = 1
    fetch.chunk_added(tp, 10)
    snap = fetch.snapshot([(tp, State())], False)
    assert tuple(snap["topics"]["t"]) == FetchMetrics.TOPIC_NAMES
    assert tuple(snap["partitions"]["t"][0]) == FetchMetrics.PARTITION_NAMES
