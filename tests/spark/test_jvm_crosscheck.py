"""The aiokafka data source against Spark's own JVM Kafka connector (spark-sql-kafka-0-10,
resolved from Maven Central by tools/kafka/spark-connector-pom.xml): the same job over
the same topic gives the same rows, and the checkpoint offsets mean the same thing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aiokafka.producer import AIOKafkaProducer
from tools.kafka.rig import KafkaCluster

from .helpers import produce_transactions


def _has_jvm_connector(spark: Any) -> bool:
    return "spark-sql-kafka" in (spark.conf.get("spark.jars", "") or "")


def _produce(bootstrap: str, topic: str) -> None:
    async def go() -> None:
        async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
            for i in range(40):
                await producer.send(
                    topic,
                    f"v{i}".encode() if i % 9 else None,
                    key=f"k{i}".encode() if i % 4 else None,
                    partition=i % 2,
                    headers=[("n", str(i).encode()), ("e", b"")] if i % 3 else None,
                )

    asyncio.run(go())


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (
            r.topic,
            r.partition,
            r.offset,
            r.key,
            r.value,
            r.timestamp,
            r.timestampType,
            tuple((h.key, h.value) for h in r.headers or ()),
        )
        for r in df.collect()
    )


def _last_offsets(checkpoint: Path) -> Any:
    newest = max((checkpoint / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    return json.loads(newest.read_text().splitlines()[2])


def test_same_rows_and_checkpoint_offsets_as_the_jvm_connector(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    if not _has_jvm_connector(spark):
        pytest.skip("Spark's Kafka connector could not be fetched (Maven)")
    bs = kafka.bootstrap_servers
    topic = new_topic(partitions=2)
    _produce(bs, topic)
    # A transactional tail (committed then aborted): markers and aborted records.
    produce_transactions(bs, topic, [([b"t1", b"t2"], True), ([b"x"], False)], f"x-{topic}")
    options = {
        "kafka.bootstrap.servers": bs,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "includeHeaders": "true",
    }
    for isolation in ("read_committed", "read_uncommitted"):
        batch = {**options, "endingOffsets": "latest", "kafka.isolation.level": isolation}
        ours = _rows(spark.read.format("aiokafka").options(**batch).load())
        theirs = _rows(spark.read.format("kafka").options(**batch).load())
        assert ours == theirs
        assert len(ours) == 40 + (2 if isolation == "read_committed" else 3)

    # Streaming: the same availableNow job; the checkpoints hold the same offsets.
    results = {}
    for fmt in ("aiokafka", "kafka"):
        checkpoint = tmp_path / fmt
        query = (
            spark.readStream.format(fmt)
            .options(**options)
            .load()
            .writeStream.format("memory")
            .queryName(f"cross_{fmt}")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(180)
        results[fmt] = (_rows(spark.table(f"cross_{fmt}")), _last_offsets(checkpoint))
    assert results["aiokafka"] == results["kafka"]
    assert results["aiokafka"][1] == {topic: {"0": 25, "1": 20}}
