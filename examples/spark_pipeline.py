"""`make spark-demo`: a PySpark streaming pipeline on the ``aiokafka`` data source.

JSON events ``{"user": ..., "amount": ..., "ts": <ms>}`` are read from the topic
``events``, totalled per user in one-minute event-time windows with a watermark of
30 seconds, and each closed window is written exactly once (``exactlyOnce=true``:
Kafka transactions keyed to the query and task) to ``user-totals`` as JSON. The query
runs with ``trigger(availableNow=True)`` so the demo ends; then the results are read
back with ``read_committed`` and printed.

Without ``--bootstrap`` a local broker is started by the project's test rig and
stopped at the end. Needs the ``spark`` extra and Java 17+.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaProducer
from tools.kafka.rig import start_single

EVENTS = "events"
TOTALS = "user-totals"
USERS = ["ada", "bob", "cy"]


async def produce_events(bootstrap: str) -> int:
    """Three minutes of events, one arriving late (but within the watermark), and a
    last event that moves the watermark past every window so that they are emitted."""
    start = (int(time.time() * 1000) // 60_000 - 10) * 60_000  # a minute boundary
    events: list[dict[str, Any]] = []
    for i in range(90):
        events.append({"user": USERS[i % 3], "amount": i % 7 + 1, "ts": start + i * 2_000})
    events.append({"user": "ada", "amount": 100, "ts": start + 170_000 - 20_000})  # late, kept
    events.append({"user": "cy", "amount": 0, "ts": start + 10 * 60_000})  # closes windows
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for event in events:
            await producer.send(EVENTS, json.dumps(event).encode(), key=event["user"].encode())
    return len(events)


def run_pipeline(spark: Any, bootstrap: str, checkpoint: str) -> None:
    """The streaming job: parse, window with watermark, write exactly once."""
    from pyspark.sql import functions as F

    events = (
        spark.readStream.format("aiokafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", EVENTS)
        .option("startingOffsets", "earliest")
        # Several micro-batches, so the watermark advances between them.
        .option("maxOffsetsPerTrigger", "40")
        .load()
        .select(
            F.from_json(F.col("value").cast("string"), "user string, amount long, ts long").alias(
                "e"
            )
        )
        .select("e.user", "e.amount", (F.col("e.ts") / 1000).cast("timestamp").alias("time"))
    )
    totals = (
        events.withWatermark("time", "30 seconds")
        .groupBy(F.window("time", "1 minute"), "user")
        .agg(F.sum("amount").alias("total"), F.count("*").alias("events"))
        .select(
            F.col("user").alias("key"),
            F.to_json(
                F.struct(
                    F.col("window.start").cast("string").alias("window"),
                    "user",
                    "total",
                    "events",
                )
            ).alias("value"),
        )
    )
    query = (
        totals.writeStream.format("aiokafka")
        .outputMode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", TOTALS)
        .option("exactlyOnce", "true")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"the streaming query failed: {query.exception()}")


def print_results(spark: Any, bootstrap: str) -> int:
    """Read what the job wrote, as a read_committed consumer sees it."""
    rows = (
        spark.read.format("aiokafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", TOTALS)
        .option("kafka.isolation.level", "read_committed")
        .load()
        .selectExpr("cast(value as string) as value")
        .collect()
    )
    results = sorted((json.loads(r.value) for r in rows), key=lambda d: (d["window"], d["user"]))
    print(f"{len(results)} window totals written to {TOTALS!r}:")
    for d in results:
        print(f"  {d['window']}  {d['user']:>4}  total={d['total']:>4}  events={d['events']}")
    return len(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="an existing broker (default: start one)")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    cluster = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        print("starting a local Apache Kafka broker (KRaft, loopback)...")
        cluster = start_single()
        bootstrap = cluster.bootstrap_servers
    try:
        if cluster is not None:
            cluster.create_topic(EVENTS, 3)
            cluster.create_topic(TOTALS, 1)
        sent = asyncio.run(produce_events(bootstrap))
        print(f"produced {sent} JSON events to {EVENTS!r}")

        from pyspark.sql import SparkSession

        from aiokafka.spark import register

        spark = (
            SparkSession.builder.master("local[2]")
            .appName("aiokafka-spark-pipeline")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        with tempfile.TemporaryDirectory(prefix="spark-pipeline-") as checkpoint:
            run_pipeline(spark, bootstrap, checkpoint)
        if print_results(spark, bootstrap) == 0:
            raise SystemExit("spark-demo failed: no window totals were written")
        spark.stop()
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
