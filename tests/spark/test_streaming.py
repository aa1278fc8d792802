"""Streaming through the aiokafka data source: checkpoints, restarts, new partitions,
read limits, exactly-once replay and data loss; local[2] against the real broker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions
from tools.kafka.rig import KafkaCluster

from .helpers import consume_all, delete_records, produce

QUERY_TIMEOUT_S = 180


def _stream(spark: Any, bootstrap: str, **options: str) -> Any:
    reader = spark.readStream.format("aiokafka").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def _run_to_end(df: Any, bootstrap: str, checkpoint: Path, **options: str) -> Any:
    """Run an availableNow query writing ``df`` to Kafka until it ends."""
    writer = (
        df.writeStream.format("aiokafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
    )
    for key, value in options.items():
        writer = writer.option(key, value)
    query = writer.start()
    try:
        assert query.awaitTermination(QUERY_TIMEOUT_S), "the streaming query did not finish"
    finally:
        query.stop()
    if query.exception() is not None:
        raise AssertionError(str(query.exception()))
    return query


def _last_offsets(checkpoint: Path) -> dict[str, Any]:
    newest = max((checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    # v1 format: a version line, a metadata line, then one line per source.
    return dict(json.loads(newest.read_text().splitlines()[2]))


def _add_partitions(bootstrap: str, topic: str, total: int) -> None:
    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_partitions({topic: NewPartitions(total_count=total)})

    asyncio.run(go())


def test_streaming_copy_restart_new_partitions_and_limit(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    bs = kafka.bootstrap_servers
    src, dst = new_topic(partitions=2), new_topic(partitions=2)
    for p in range(2):
        produce(bs, src, [f"p{p}-{i}".encode() for i in range(40)], partition=p)
    checkpoint = tmp_path / "ck"

    def copy() -> Any:
        df = _stream(
            spark, bs, subscribe=src, startingOffsets="earliest", maxOffsetsPerTrigger="30"
        )
        return _run_to_end(
            df.selectExpr("key", "upper(cast(value as string)) as value"),
            bs,
            checkpoint,
            topic=dst,
        )

    first = copy()
    # 80 offsets with at most 30 per trigger: at least three micro-batches.
    assert len([p for p in first.recentProgress if p["numInputRows"] > 0]) >= 3
    assert _last_offsets(checkpoint) == {src: {"0": 40, "1": 40}}
    # More records, and a partition added while the query is down.
    produce(bs, src, [f"p1-{i}".encode() for i in range(40, 50)], partition=1)
    _add_partitions(bs, src, 3)
    produce(bs, src, [f"p2-{i}".encode() for i in range(5)], partition=2)
    copy()
    assert _last_offsets(checkpoint) == {src: {"0": 40, "1": 50, "2": 5}}
    copied = sorted(v for _, _, v in consume_all(bs, dst) if v is not None)
    expected = sorted(
        [f"P0-{i}".encode() for i in range(40)]
        + [f"P1-{i}".encode() for i in range(50)]
        + [f"P2-{i}".encode() for i in range(5)]
    )
    assert copied == expected  # each once: the restart went on from the checkpoint


@pytest.mark.parametrize("exactly_once", [True, False])
def test_replayed_batch_adds_nothing_with_exactly_once(
    spark: Any,
    kafka: KafkaCluster,
    new_topic: Callable[..., str],
    tmp_path: Path,
    exactly_once: bool,
) -> None:
    bs = kafka.bootstrap_servers
    src, dst = new_topic(partitions=2), new_topic()
    for p in range(2):
        produce(bs, src, [f"{p}-{i}".encode() for i in range(50)], partition=p)
    checkpoint = tmp_path / "ck"
    options = {"topic": dst, "exactlyOnce": str(exactly_once).lower()}

    def run() -> None:
        df = _stream(spark, bs, subscribe=src, startingOffsets="earliest")
        _run_to_end(df.select("key", "value"), bs, checkpoint, **options)

    run()
    assert len(consume_all(bs, dst)) == 100
    # Spark died after the sink committed but before it recorded the batch: the last
    # commit file is missing, so the restarted query runs that batch again.
    commits = sorted((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    assert commits
    commits[-1].unlink()
    # The checksum file too, else Spark takes the leftover for a concurrent writer.
    (commits[-1].parent / f".{commits[-1].name}.crc").unlink(missing_ok=True)
    run()
    seen = consume_all(bs, dst, "read_committed")
    if exactly_once:
        assert len(seen) == 100
        assert len({v for _, _, v in seen}) == 100
    else:
        assert len(seen) > 100  # at-least-once: the replay wrote again


@pytest.mark.parametrize("fail", [True, False])
def test_fail_on_data_loss_streaming(
    spark: Any,
    kafka: KafkaCluster,
    new_topic: Callable[..., str],
    tmp_path: Path,
    fail: bool,
) -> None:
    bs = kafka.bootstrap_servers
    src, dst = new_topic(), new_topic()
    produce(bs, src, [f"a{i}".encode() for i in range(10)])
    checkpoint = tmp_path / "ck"
    options = {"failOnDataLoss": str(fail).lower()}

    def run() -> None:
        df = _stream(spark, bs, subscribe=src, startingOffsets="earliest", **options)
        _run_to_end(df.select("value"), bs, checkpoint, topic=dst)

    run()
    # While the query is down, records it has not read yet are deleted.
    produce(bs, src, [f"b{i}".encode() for i in range(20)])
    delete_records(bs, src, 0, 25)
    if fail:
        with pytest.raises(Exception, match=rf"topic '{src}' partition 0 offsets \[10, 30\)"):
            run()
    else:
        run()
        values = sorted(v for _, _, v in consume_all(bs, dst) if v is not None)
        assert values == sorted(
            [f"a{i}".encode() for i in range(10)] + [f"b{i}".encode() for i in range(15, 20)]
        )
