"""The metrics' arithmetic without a broker: sensors and their windows, what the
producer, fetcher, coordinator and connections record, and the snapshots' shapes.
(``tests/integration/test_metrics.py`` checks the values against a real broker.)"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass, field

import pytest

from aiokafka.consumer.fetch_records import PartitionRecords
from aiokafka.consumer.subscription import PartitionState
from aiokafka.metrics import WINDOW, Sensor
from aiokafka.metrics.consumer import CoordinatorMetrics, FetchMetrics, consumer_snapshot
from aiokafka.metrics.network import NetworkMetrics
from aiokafka.metrics.producer import ProducerMetrics, producer_snapshot
from aiokafka.record.default_builder import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition


def test_sensor_totals_avg_max_rate() -> None:
    s = Sensor()
    now = time.monotonic()
    for v in (1.0, 5.0, 3.0):
        s.record(v, now)
    assert (s.count, s.total) == (3, 9.0)
    assert s.avg(now) == 3.0
    assert s.max(now) == 5.0
    # A young sensor's rate is over one whole window, as in the Java client.
    assert s.rate(now) == pytest.approx(9.0 / WINDOW)
    assert s.count_rate(now) == pytest.approx(3.0 / WINDOW)


def test_sensor_empty_reads_zero() -> None:
    s = Sensor()
    assert (s.avg(), s.max(), s.rate(), s.count_rate()) == (0.0, 0.0, 0.0, 0.0)


def test_sensor_windows_roll_and_expire() -> None:
    s = Sensor()
    start = time.monotonic()
    s.record(10.0, start)
    s.record(2.0, start + WINDOW + 1)  # second window; the first is kept
    assert s.max(start + WINDOW + 1) == 10.0
    assert s.avg(start + WINDOW + 1) == 6.0
    assert s.rate(start + WINDOW + 1) == pytest.approx(12.0 / (WINDOW + 1))
    # One window later the first has gone: only the 2.0 is left.
    later = start + 2 * WINDOW + 2
    assert s.max(later) == 2.0
    assert s.avg(later) == 2.0
    # Long idle: nothing in the windows, the totals stay.
    idle = start + 10 * WINDOW
    assert (s.avg(idle), s.max(idle), s.rate(idle)) == (0.0, 0.0, 0.0)
    assert (s.count, s.total) == (2, 12.0)


@dataclass
class _TP:
    topic: str
    partition: int = 0


@dataclass
class _Batch:
    tp: _TP
    record_count: int
    created: float = field(default_factory=time.monotonic)


def test_producer_metrics_per_request_and_topic() -> None:
    m = ProducerMetrics()
    batches = [_Batch(_TP("a"), 10), _Batch(_TP("a", 1), 5), _Batch(_TP("b"), 1)]
    m.request_sent(batches, [100, 60, 20])
    m.request_sent([_Batch(_TP("b"), 4)], [40])
    m.batch_retried(batches[2])
    m.batch_failed(batches[1])
    snap = m.snapshot()
    assert snap["record-send-total"] == 20
    assert snap["produce-request-total"] == 2
    assert snap["records-per-request-avg"] == 10.0  # (16 + 4) / 2
    assert snap["batch-size-avg"] == 55.0  # (100 + 60 + 20 + 40) / 4
    assert snap["batch-size-max"] == 100.0
    assert snap["record-error-total"] == 5 and snap["record-error-rate"] > 0
    assert snap["record-retry-total"] == 1
    assert snap["topics"]["a"]["record-send-total"] == 15
    assert snap["topics"]["a"]["byte-total"] == 160
    assert snap["topics"]["a"]["record-error-total"] == 5
    assert snap["topics"]["b"]["record-send-total"] == 5
    assert snap["topics"]["b"]["record-retry-total"] == 1


def test_producer_snapshot_before_start_has_every_name() -> None:
    snap = producer_snapshot(None, None, 1000, 0)
    for name in (
        "record-send-rate",
        "record-error-rate",
        "request-latency-avg",
        "request-latency-max",
        "batch-size-avg",
        "records-per-request-avg",
        "buffer-available-bytes",
        "connection-count",
    ):
        assert snap[name] == (1000.0 if name == "buffer-available-bytes" else 0.0), name
    assert snap["topics"] == {} and snap["nodes"] == {}
    assert producer_snapshot(None, None, 1000, 300)["buffer-available-bytes"] == 700.0
    json.dumps(snap)


def test_network_metrics_per_node_and_total() -> None:
    net = NetworkMetrics()
    now = time.monotonic()
    one, two = net.node(1), net.node(2)
    one.request_sent(100, now)
    one.response_received(0.010, 50, now)
    two.request_sent(300, now)
    two.response_received(0.030, 150, now)
    net.connections_created.record()
    net.connections_created.record()
    snap = net.snapshot(connection_count=1)
    assert snap["request-total"] == 2 and snap["response-total"] == 2
    assert snap["request-latency-avg"] == pytest.approx(20.0)  # ms
    assert snap["request-latency-max"] == pytest.approx(30.0)
    assert snap["outgoing-byte-total"] == 400 and snap["incoming-byte-total"] == 200
    assert snap["connection-count"] == 1
    assert snap["connection-creation-total"] == 2 and snap["connection-close-total"] == 1
    assert snap["nodes"][1]["request-latency-avg"] == pytest.approx(10.0)
    assert snap["nodes"][2]["request-size-avg"] == 300
    assert net.node(None) is net.node(None)  # a connection without a node id


def _chunk(
    tp: TopicPartition, state: PartitionState, n: int, base: int = 0, m: FetchMetrics | None = None
) -> PartitionRecords:
    b = DefaultRecordBatchBuilder(base_offset=base, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=1, key=None, value=b"v", headers=[])
    tally = m.tally(tp) if m is not None else None
    return PartitionRecords(tp, state, base, bytes(b.build()), tally=tally)


def test_partition_records_count_per_batch_and_take_back_on_drop() -> None:
    tp = TopicPartition("t", 0)
    state = PartitionState()
    state.seek(0)
    chunk = _chunk(tp, state, 10)
    assert chunk.tally.records == 0  # nothing decoded yet
    assert len(chunk.take(3)) == 3
    # The batch is counted as it starts being handed out: all of it.
    assert chunk.tally.records == 10
    assert chunk.take_one() is not None
    assert chunk.take_fast() is not None  # async for's path: nothing per record
    assert chunk.tally.records == 10
    chunk.drop()  # seek/revocation: the 5 records never handed out are taken back
    assert chunk.tally.records == 5


def test_fetch_metrics_collect_consumed_and_lag() -> None:
    m = FetchMetrics()
    tp = TopicPartition("t", 0)
    state = PartitionState()
    state.seek(0)
    state.highwater = 20
    first = _chunk(tp, state, 10, m=m)
    m.chunk_added(tp, first.size)
    m.fetch_done(0.050)
    assert len(first.take(None)) == 10
    second = _chunk(tp, state, 10, base=10, m=m)
    m.chunk_added(tp, second.size)  # collects the first chunk's records
    assert len(second.take(None)) == 10
    state.highwater = 26
    snap = m.snapshot([(tp, state)], read_committed=False)
    assert snap["records-consumed-total"] == 20
    assert snap["records-consumed-rate"] > 0
    assert snap["topics"]["t"]["records-consumed-total"] == 20
    assert snap["partitions"]["t"][0] == {"records-consumed-total": 20.0, "records-lag": 6.0}
    assert snap["records-lag-max"] == 6.0
    assert snap["fetch-total"] == 1 and snap["fetch-latency-avg"] == pytest.approx(50.0)
    assert snap["bytes-fetched-total"] == first.size + second.size
    # Counted once: a second snapshot adds nothing.
    assert m.snapshot([(tp, state)], False)["records-consumed-total"] == 20
    # read_committed: the lag is to the last stable offset.
    state.last_stable_offset = 22
    assert m.snapshot([(tp, state)], True)["records-lag-max"] == 2.0
    # Unknown high watermark: no lag value for the partition.
    other = PartitionState()
    other.seek(3)
    snap = m.snapshot([(TopicPartition("u", 1), other)], False)
    assert snap["partitions"]["u"][1] == {"records-consumed-total": 0.0}


def test_coordinator_metrics() -> None:
    m = CoordinatorMetrics()
    assert m.snapshot()["last-rebalance-seconds-ago"] == -1
    started = time.monotonic() - 0.5
    m.rebalance_done(started, 3)
    m.commit_done(time.monotonic() - 0.01)
    snap = m.snapshot()
    assert snap["rebalance-total"] == 1 and snap["rebalance-latency-avg"] >= 500
    assert snap["assigned-partitions"] == 3
    assert snap["commit-total"] == 1 and snap["commit-latency-avg"] >= 10
    assert 0 <= snap["last-rebalance-seconds-ago"] < 60


def test_consumer_snapshot_before_start_has_every_name() -> None:
    snap = consumer_snapshot(None, None, None)
    for name in (
        "records-lag-max",
        "records-consumed-rate",
        "fetch-rate",
        "fetch-latency-avg",
        "commit-latency-avg",
        "rebalance-total",
        "connection-count",
        "request-latency-avg",
    ):
        assert snap[name] == 0.0, name
    assert snap["topics"] == {} and snap["partitions"] == {} and snap["nodes"] == {}


def test_facades_answer_before_start() -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    assert AIOKafkaProducer().metrics()["record-send-total"] == 0
    assert AIOKafkaConsumer().metrics()["records-consumed-total"] == 0


def test_import_aiokafka_loads_no_adapter() -> None:
    code = (
        "import sys, aiokafka\n"
        "print(sorted(m for m in sys.modules if m.startswith(('prometheus_client', "
        "'opentelemetry', 'aiokafka.metrics.otel', 'aiokafka.metrics.prometheus'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
