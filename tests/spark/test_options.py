"""Option parsing of the aiokafka data source: pure, no SparkSession, no broker."""

from __future__ import annotations

import itertools
import pickle
import subprocess
import sys

import pytest

from aiokafka.spark.kafka_options import OptionError, client_kwargs, parse_jaas_config
from aiokafka.spark.options import (
    EARLIEST,
    LATEST,
    OffsetSpec,
    parse_read_options,
    parse_write_options,
)
from aiokafka.spark.planning import (
    OffsetRange,
    from_json,
    group_ranges,
    rate_limit,
    split_ranges,
    to_json,
)

BS = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_import_aiokafka_never_imports_pyspark() -> None:
    code = (
        "import sys, aiokafka, aiokafka.consumer, aiokafka.producer, aiokafka.admin, "
        "aiokafka.helpers, aiokafka.structs, aiokafka.errors\n"
        "from aiokafka import AIOKafkaConsumer, AIOKafkaProducer\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow', "
        "'pandas', 'py4j') or m.startswith('aiokafka.spark'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_java_names_map_to_keywords() -> None:
    got = client_kwargs(
        {
            **BS,
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "SCRAM-SHA-256",
            "kafka.isolation.level": "read_committed",
            "kafka.fetch.max.bytes": "1000",
            "kafka.max.partition.fetch.bytes": "500",
            "kafka.client.id": "me",
            "kafka.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                'username="alice" password="p\\"w;d";'
            ),
        },
        "consumer",
    )
    assert got["bootstrap_servers"] == "127.0.0.1:9092"
    assert got["security_protocol"] == "SASL_PLAINTEXT"
    assert got["sasl_mechanism"] == "SCRAM-SHA-256"
    assert got["isolation_level"] == "read_committed"
    assert got["fetch_max_bytes"] == 1000
    assert got["max_partition_fetch_bytes"] == 500
    assert got["client_id"] == "me"
    assert (got["sasl_plain_username"], got["sasl_plain_password"]) == ("alice", 'p"w;d')
    assert got["enable_auto_commit"] is False
    producer = client_kwargs(
        {**BS, "kafka.acks": "all", "kafka.linger.ms": "5", "kafka.compression.type": "lz4"},
        "producer",
    )
    assert (producer["acks"], producer["linger_ms"], producer["compression_type"]) == (
        "all",
        5,
        "lz4",
    )


def test_jaas_plain_unquoted_and_errors() -> None:
    assert parse_jaas_config(
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        "username=bob password=secret;"
    ) == ("bob", "secret")
    with pytest.raises(OptionError, match=r"kafka\.sasl\.jaas\.config.*not supported"):
        parse_jaas_config("com.sun.security.auth.module.Krb5LoginModule required;")
    with pytest.raises(OptionError, match="username and password") as info:
        parse_jaas_config(
            'org.apache.kafka.common.security.plain.PlainLoginModule required password="hush";'
        )
    assert "hush" not in str(info.value)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"subscribe": "t", "startingOffset": "earliest"}, "startingOffset"),
        ({"subscribe": "t", "kafka.fetch.max.byte": "1"}, "kafka.fetch.max.byte"),
        ({"subscribe": "t", "kafka.acks": "1"}, "kafka.acks"),
        ({"subscribe": "t", "kafka.auto.offset.reset": "earliest"}, "kafka.auto.offset.reset"),
        ({"subscribe": "t", "startingOffsets": '{"t": {"0": 1}'}, "startingOffsets"),
        ({"subscribe": "t", "startingOffsets": '{"t": {"x": 1}}'}, "startingOffsets"),
        ({"subscribe": "t", "endingOffsets": '{"t": {"0": -2}}'}, "endingOffsets"),
        ({"assign": '{"t": [0, "1"]}'}, "assign"),
        ({"assign": "[0]"}, "assign"),
        ({"subscribe": "t", "subscribePattern": "t.*"}, "subscribePattern"),
        ({}, "subscribe"),
        ({"subscribePattern": "("}, "subscribePattern"),
        ({"subscribe": "t", "minPartitions": "0"}, "minPartitions"),
        ({"subscribe": "t", "failOnDataLoss": "yes"}, "failOnDataLoss"),
        ({"subscribe": "t", "kafka.fetch.max.bytes": "lots"}, "kafka.fetch.max.bytes"),
        ({"subscribe": "t", "maxOffsetsPerTrigger": "10"}, "maxOffsetsPerTrigger"),
        ({"subscribe": "t", "startingOffsets": "latest"}, "startingOffsets"),
    ],
)
def test_bad_read_options_name_the_option(options: dict[str, str], named: str) -> None:
    with pytest.raises(OptionError, match=named.replace(".", r"\.")):
        parse_read_options({**BS, **options}, streaming=False)


def test_bootstrap_required() -> None:
    with pytest.raises(OptionError, match=r"kafka\.bootstrap\.servers"):
        parse_read_options({"subscribe": "t"}, streaming=True)


def test_read_options_parsed_case_insensitively() -> None:
    opts = parse_read_options(
        {
            **BS,
            "SUBSCRIBE": "a, b",
            "startingoffsets": '{"a": {"0": 5, "1": -2}, "b": {"0": -1}}',
            "maxOffsetsPerTrigger": "100",
            "includeHeaders": "TRUE",
        },
        streaming=True,
    )
    assert opts.subscription.topics == ("a", "b")
    assert opts.starting == OffsetSpec(
        "offsets", offsets={("a", 0): 5, ("a", 1): EARLIEST, ("b", 0): LATEST}
    )
    assert opts.max_offsets_per_trigger == 100
    assert opts.include_headers is True
    assert opts.fail_on_data_loss is True
    # What Spark ships to executors must pickle.
    assert pickle.loads(pickle.dumps(opts)) == opts
    assigned = parse_read_options({**BS, "assign": '{"t": [1, 0]}'}, streaming=False)
    assert assigned.subscription.partitions == (("t", 0), ("t", 1))
    by_time = parse_read_options(
        {**BS, "subscribe": "t", "startingOffsetsByTimestamp": '{"t": {"0": 1000}}'}, False
    )
    assert by_time.starting == OffsetSpec("timestamps", offsets={("t", 0): 1000})


def test_write_options() -> None:
    opts = parse_write_options({**BS, "topic": "out", "exactlyOnce": "true"})
    assert (opts.topic, opts.exactly_once, opts.transactional_id_prefix) == (
        "out",
        True,
        "aiokafka-spark",
    )
    with pytest.raises(OptionError, match=r"kafka\.transactional\.id"):
        parse_write_options({**BS, "kafka.transactional.id": "x"})
    with pytest.raises(OptionError, match="subscribe"):
        parse_write_options({**BS, "subscribe": "x"})
    with pytest.raises(OptionError, match=r"kafka\.isolation\.level"):
        parse_write_options({**BS, "kafka.isolation.level": "read_committed"})
    with pytest.raises(OptionError, match="transactionalIdPrefix"):
        parse_write_options({**BS, "transactionalIdPrefix": "a b"})


def test_offsets_json_round_trip() -> None:
    offsets = {("t", 0): 5, ("t", 10): 7, ("u", 1): 0}
    assert to_json(offsets) == {"t": {"0": 5, "10": 7}, "u": {"1": 0}}
    assert from_json(to_json(offsets)) == offsets
    with pytest.raises(ValueError):
        from_json([1])


def test_split_ranges_covers_every_offset_once() -> None:
    ranges = [OffsetRange("t", 0, 0, 100), OffsetRange("t", 1, 10, 20), OffsetRange("t", 2, 5, 5)]
    split = split_ranges(ranges, 6)
    assert len(split) >= 6
    for p, (start, end) in ((0, (0, 100)), (1, (10, 20))):
        pieces = sorted((r.start, r.end) for r in split if r.partition == p)
        assert pieces[0][0] == start and pieces[-1][1] == end
        assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert not [r for r in split if r.partition == 2]
    assert split_ranges(ranges, None) == ranges[:2]


def test_group_ranges_balances_tasks_deterministically() -> None:
    sizes = [40, 10, 30, 25, 5, 20]
    ranges = [OffsetRange("t", p, 100, 100 + n) for p, n in enumerate(sizes)]
    groups = group_ranges(ranges, 2)
    assert [sum(r.size for r in g) for g in groups] == [65, 65]
    assert sorted(r.partition for g in groups for r in g) == list(range(6))
    assert all(list(g) == sorted(g, key=lambda r: r.partition) for g in groups)
    assert group_ranges(list(reversed(ranges)), 2) == groups  # same ranges, same tasks
    assert group_ranges(ranges, 1) == [tuple(ranges)]
    assert len(group_ranges(ranges[:2], 5)) == 2  # no empty tasks


def test_rate_limit_shares_by_backlog() -> None:
    start = {("t", 0): 0, ("t", 1): 0}
    latest = {("t", 0): 900, ("t", 1): 100, ("t", 2): 50}
    limited = rate_limit(start, latest, 100)
    assert limited[("t", 0)] == 90 and limited[("t", 1)] == 10
    # A partition without a start (new) is not read by this batch through the limit.
    assert limited[("t", 2)] == 50
    assert rate_limit(start, {("t", 0): 5}, 100) == {("t", 0): 5}


def test_starting_defaults_as_spark() -> None:
    assert parse_read_options({**BS, "subscribe": "t"}, streaming=False).starting.kind == (
        "earliest"
    )
    assert parse_read_options({**BS, "subscribe": "t"}, streaming=True).starting.kind == "latest"
    with pytest.raises(OptionError, match="endingOffsets"):
        parse_read_options({**BS, "subscribe": "t", "endingOffsets": "latest"}, streaming=True)


def test_stream_reader_pickles_without_clients() -> None:
    from aiokafka.spark.reader import KafkaStreamReader

    reader = KafkaStreamReader(parse_read_options({**BS, "subscribe": "t"}, streaming=True))
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.reportLatestOffset() is None
    copy.stop()  # nothing was opened: nothing to close
