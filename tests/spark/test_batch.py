"""Batch read and write through the aiokafka data source, local[2], real broker."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from tools.kafka.config import DEFAULT_USERS
from tools.kafka.rig import KafkaCluster

from .helpers import delete_records, produce, produce_transactions


def _read(spark: Any, bootstrap: str, **options: str) -> Any:
    reader = spark.read.format("aiokafka").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_write_then_read_every_column(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    first, second = new_topic(partitions=3), new_topic(partitions=1)
    bs = kafka.bootstrap_servers
    rows = [
        (
            f"k{i}".encode() if i % 5 else None,
            f"v{i}".encode(),
            first if i % 4 else second,
            (i % 3) if i % 4 else None,
            [("h1", f"x{i}".encode()), ("h2", None)] if i % 2 else [],
        )
        for i in range(60)
    ]
    df = spark.createDataFrame(
        rows,
        "key binary, value binary, topic string, partition int, "
        "headers array<struct<key:string,value:binary>>",
    )
    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) - dt.timedelta(seconds=5)
    df.write.format("aiokafka").mode("append").option("kafka.bootstrap.servers", bs).save()
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(seconds=5)

    got = _read(spark, bs, subscribePattern=f"({first}|{second})", includeHeaders="true").collect()
    assert len(got) == 60
    by_value = {r.value: r for r in got}
    for key, value, topic, partition, headers in rows:
        r = by_value[value]
        assert r.key == key
        assert r.topic == topic
        if partition is not None:
            assert r.partition == partition
        assert before <= r.timestamp <= after
        assert r.timestampType == 0
        assert [(h.key, h.value) for h in r.headers] == headers
    # Offsets per partition are 0..n-1, in the order written.
    for topic in (first, second):
        for p in range(3):
            offsets = sorted(r.offset for r in got if r.topic == topic and r.partition == p)
            assert offsets == list(range(len(offsets)))
    schema = _read(spark, bs, subscribe=first).schema.simpleString()
    assert schema == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int>"
    )
    # Offsets and ranges: a JSON start, an end, split into more tasks than partitions.
    part = _read(
        spark,
        bs,
        subscribe=first,
        startingOffsets=f'{{"{first}": {{"0": 2, "1": -2, "2": -2}}}}',
        endingOffsets=f'{{"{first}": {{"0": 5, "1": -1, "2": -1}}}}',
        minPartitions="7",
    )
    assert part.rdd.getNumPartitions() >= 7
    picked = part.select("partition", "offset").collect()
    p0 = sorted(r.offset for r in picked if r.partition == 0)
    assert p0 == [2, 3, 4]
    assert len(picked) == 3 + sum(1 for r in got if r.topic == first and r.partition != 0)


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_transactional_topic_reads_to_the_end(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str], isolation: str
) -> None:
    topic = new_topic()
    bs = kafka.bootstrap_servers
    committed = [f"c{i}".encode() for i in range(20)]
    aborted = [f"a{i}".encode() for i in range(7)]
    # The log ends with markers (and aborted records): the last offset is no record.
    produce_transactions(
        bs,
        topic,
        [(committed[:10], True), (aborted, False), (committed[10:], True), ([b"x"], False)],
        f"spark-txn-{topic}",
    )
    df = _read(spark, bs, subscribe=topic, **{"kafka.isolation.level": isolation})
    values = sorted(r.value for r in df.select("value").collect())
    if isolation == "read_committed":
        assert values == sorted(committed)
    else:
        assert values == sorted([*committed, *aborted, b"x"])
    # Ranges cut at arbitrary offsets (markers included) still end.
    split = _read(
        spark, bs, subscribe=topic, minPartitions="6", **{"kafka.isolation.level": isolation}
    )
    assert split.count() == len(values)


def test_bad_options_fail_at_planning(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    bs = kafka.bootstrap_servers
    with pytest.raises(Exception, match="startingOffsets"):
        _read(spark, bs, subscribe="t", startingOffsets='{"t": {"0": 1}').collect()
    with pytest.raises(Exception, match=r"kafka\.fetch\.maximum\.bytes"):
        _read(spark, bs, subscribe="t", **{"kafka.fetch.maximum.bytes": "1"}).collect()
    df = spark.createDataFrame([(b"v",)], "value binary")
    with pytest.raises(Exception, match="topic"):
        df.write.format("aiokafka").mode("append").option("kafka.bootstrap.servers", bs).save()


def test_fail_on_data_loss_batch(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    bs = kafka.bootstrap_servers
    produce(bs, topic, [f"v{i}".encode() for i in range(30)])
    delete_records(bs, topic, 0, 12)
    start = f'{{"{topic}": {{"0": 0}}}}'
    with pytest.raises(Exception, match=rf"topic '{topic}' partition 0 offsets \[0, 30\)"):
        _read(spark, bs, subscribe=topic, startingOffsets=start).collect()
    rows = _read(spark, bs, subscribe=topic, startingOffsets=start, failOnDataLoss="false")
    assert sorted(r.offset for r in rows.collect()) == list(range(12, 30))


def test_sasl_scram_through_kafka_options(
    spark: Any, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    user, password = DEFAULT_USERS["SCRAM-SHA-512"]
    secured = {
        "kafka.bootstrap.servers": kafka.bootstrap("SASL_PLAINTEXT"),
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{user}" password="{password}";'
        ),
    }
    df = spark.createDataFrame([(f"v{i}",) for i in range(10)], "value string")
    df.write.format("aiokafka").mode("append").options(**secured).option("topic", topic).save()
    got = spark.read.format("aiokafka").options(**secured).option("subscribe", topic).load()
    assert sorted(r.value for r in got.collect()) == sorted(f"v{i}".encode() for i in range(10))
    wrong = {
        **secured,
        "kafka.sasl.jaas.config": secured["kafka.sasl.jaas.config"].replace(password, "nope"),
    }
    with pytest.raises(Exception, match=r"(?i)authentication"):
        spark.read.format("aiokafka").options(**wrong).option("subscribe", topic).load().collect()
