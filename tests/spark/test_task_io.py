"""One read task and one write task without Spark, against the broker: a task's ranges
of several partitions read by one consumer (ends, data loss attributed to the right
partition), the writer's row grouping (no keys, keys, partition column, per-row
topics) with Spark's input pulled in the task's thread, and the worker's pool of
clients kept between tasks (only those of tasks that ended cleanly)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa
import pytest

from aiokafka.spark.options import parse_read_options, parse_write_options
from aiokafka.spark.planning import DataLossError, OffsetRange
from aiokafka.spark.reading import read_ranges
from aiokafka.spark.runtime import worker_runtime
from aiokafka.spark.writer import KafkaBatchWriter, KafkaCommitMessage
from tools.kafka.rig import KafkaCluster

from .helpers import add_partitions, consume_all, delete_records, produce


def _rows(batches: Iterator[pa.RecordBatch]) -> dict[int, list[tuple[int, bytes]]]:
    out: dict[int, list[tuple[int, bytes]]] = {}
    for batch in batches:
        for r in batch.to_pylist():
            out.setdefault(r["partition"], []).append((r["offset"], r["value"]))
    return out


def test_one_consumer_reads_ranges_of_several_partitions(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=3)
    for p in range(3):
        produce(bs, topic, [f"{p}-{i}".encode() for i in range(20)], partition=p)
    options = parse_read_options(
        {"kafka.bootstrap.servers": bs, "subscribe": topic, "maxRecordsPerBatch": "4"},
        streaming=True,
    )
    ranges = [
        OffsetRange(topic, 0, 0, 20),
        OffsetRange(topic, 1, 5, 9),
        OffsetRange(topic, 2, 7, 7),  # empty: never fetched
    ]
    got = _rows(read_ranges(options, ranges))
    assert got == {
        0: [(i, f"0-{i}".encode()) for i in range(20)],
        1: [(i, f"1-{i}".encode()) for i in range(5, 9)],
    }
    with pytest.raises(ValueError, match="distinct partitions"):
        list(read_ranges(options, [OffsetRange(topic, 0, 0, 5), OffsetRange(topic, 0, 5, 9)]))


def test_data_loss_names_the_partition_among_several(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=2)
    for p in range(2):
        produce(bs, topic, [f"{p}-{i}".encode() for i in range(10)], partition=p)
    delete_records(bs, topic, 1, 6)  # partition 1 now starts at offset 6
    ranges = [OffsetRange(topic, 0, 0, 10), OffsetRange(topic, 1, 2, 10)]
    strict = parse_read_options({"kafka.bootstrap.servers": bs, "subscribe": topic}, True)
    with pytest.raises(DataLossError, match=r"partition 1 offsets \[2, 10\).*offset 2"):
        list(read_ranges(strict, ranges))
    lenient = parse_read_options(
        {"kafka.bootstrap.servers": bs, "subscribe": topic, "failOnDataLoss": "false"}, True
    )
    got = _rows(read_ranges(lenient, ranges))
    assert [o for o, _ in got[0]] == list(range(10))
    assert [o for o, _ in got[1]] == list(range(6, 10))  # what is still there


def test_writer_groups_rows_by_partition(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=3)
    other = new_topic(partitions=2)
    batches = [
        # values only: the whole batch to one partition
        pa.RecordBatch.from_pydict({"value": pa.array([b"v0", b"v1", b"v2"])}),
        # string values and keys (cast by Arrow), an explicit partition on one row
        pa.RecordBatch.from_pydict(
            {
                "key": pa.array(["k", None, "k"], pa.string()),
                "value": pa.array(["s0", "s1", "s2"], pa.string()),
                "partition": pa.array([None, 2, None], pa.int32()),
            }
        ),
    ]
    writer = KafkaBatchWriter(parse_write_options({"kafka.bootstrap.servers": bs, "topic": topic}))
    message = writer.write(iter(batches))
    assert isinstance(message, KafkaCommitMessage) and message.records == 6
    # per-row topics (no topic option)
    per_row = pa.RecordBatch.from_pydict(
        {"value": pa.array([b"t0", b"t1"]), "topic": pa.array([topic, other])}
    )
    message = KafkaBatchWriter(parse_write_options({"kafka.bootstrap.servers": bs})).write(
        iter([per_row])
    )
    assert isinstance(message, KafkaCommitMessage) and message.records == 2
    seen = consume_all(bs, topic, "read_uncommitted")
    by_value = {v: (p, k) for p, k, v in seen}
    assert len({by_value[v][0] for v in (b"v0", b"v1", b"v2")}) == 1
    assert by_value[b"s1"] == (2, None)
    # the same key, the same partition (murmur2, as the Java client)
    assert by_value[b"s0"] == by_value[b"s2"] and by_value[b"s0"][1] == b"k"
    assert b"t0" in by_value and b"t1" not in by_value
    assert [v for _, _, v in consume_all(bs, other, "read_uncommitted")] == [b"t1"]


def test_single_batch_tasks_spread_over_the_partitions(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    """Each task's values-only batch goes to one partition, and tasks do not all pick
    the same one (a sender's sticky counter starts at a random partition). Twelve
    one-batch tasks over three partitions all landing on one: about 6 in a million."""
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=3)
    options = parse_write_options({"kafka.bootstrap.servers": bs, "topic": topic})
    for task in range(12):
        batch = pa.RecordBatch.from_pydict({"value": pa.array([f"t{task}".encode()] * 2)})
        message = KafkaBatchWriter(options).write(iter([batch]))
        assert isinstance(message, KafkaCommitMessage) and message.records == 2
    seen = consume_all(bs, topic, "read_uncommitted")
    assert len(seen) == 24
    partitions = {p for p, _, _ in seen}
    assert len(partitions) > 1, partitions
    for task in range(12):  # a task's batch stays whole, in one partition
        assert len({p for p, _, v in seen if v == f"t{task}".encode()}) == 1


def test_worker_pool_keeps_clients_of_clean_tasks_only(
    kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    """A worker's tasks with the same options reuse one started consumer and one
    producer; a consumer of an abandoned or failed read is closed, not kept."""
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=2)
    for p in range(2):
        produce(bs, topic, [f"{p}-{i}".encode() for i in range(10)], partition=p)
    runtime = worker_runtime()
    before = len(runtime.consumers)
    # A client id of its own: idle clients of other tests have other options.
    options = parse_read_options(
        {
            "kafka.bootstrap.servers": bs,
            "subscribe": topic,
            "kafka.client.id": f"pool-{topic}",
            "maxRecordsPerBatch": "3",
        },
        streaming=True,
    )
    got = _rows(read_ranges(options, [OffsetRange(topic, 0, 0, 10)]))
    assert [o for o, _ in got[0]] == list(range(10))
    assert len(runtime.consumers) == before + 1
    # The pooled consumer left partition 0 paused at its end: another task with
    # other partitions and an overlapping range of partition 0 reads them all.
    ranges = [OffsetRange(topic, 0, 4, 8), OffsetRange(topic, 1, 2, 5)]
    got = _rows(read_ranges(options, ranges))
    assert got == {
        0: [(i, f"0-{i}".encode()) for i in range(4, 8)],
        1: [(i, f"1-{i}".encode()) for i in range(2, 5)],
    }
    assert len(runtime.consumers) == before + 1
    # A partition added since: the pooled consumer's metadata refresh finds it.
    add_partitions(bs, topic, 3)
    produce(bs, topic, [b"2-0", b"2-1"], partition=2)
    got = _rows(read_ranges(options, [OffsetRange(topic, 2, 0, 2)]))
    assert got == {2: [(0, b"2-0"), (1, b"2-1")]}
    assert len(runtime.consumers) == before + 1
    abandoned = read_ranges(options, [OffsetRange(topic, 1, 0, 10)])
    next(abandoned)
    abandoned.close()  # Spark closing the iterator of a task that stopped early
    assert len(runtime.consumers) == before
    delete_records(bs, topic, 1, 6)
    with pytest.raises(DataLossError):
        list(read_ranges(options, [OffsetRange(topic, 1, 0, 10)]))
    assert len(runtime.consumers) == before
    producers = len(runtime.producers)
    write = parse_write_options(
        {"kafka.bootstrap.servers": bs, "topic": topic, "kafka.client.id": f"pool-{topic}"}
    )
    for value in (b"w0", b"w1"):
        batch = pa.RecordBatch.from_pydict({"value": pa.array([value])})
        message = KafkaBatchWriter(write).write(iter([batch]))
        assert isinstance(message, KafkaCommitMessage) and message.records == 1
        assert len(runtime.producers) == producers + 1
    values = {v for _, _, v in consume_all(bs, topic, "read_uncommitted")}
    assert {b"w0", b"w1"} <= values
