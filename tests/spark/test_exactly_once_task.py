"""One exactly-once write task without Spark: the marker makes a replay write nothing,
an empty task commits cleanly, a newer attempt fences an older one."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pyarrow as pa

from aiokafka.spark.options import parse_write_options
from aiokafka.spark.writer import TaskIdentity, transactional_id, write_exactly_once
from tools.kafka.rig import KafkaCluster

from .helpers import consume_all


def _batch(values: list[bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"value": pa.array(values, pa.binary())})


def test_replayed_task_writes_once(kafka: KafkaCluster, new_topic: Callable[..., str]) -> None:
    bs = kafka.bootstrap_servers
    topic = new_topic()
    options = parse_write_options(
        {"kafka.bootstrap.servers": bs, "topic": topic, "exactlyOnce": "true"}
    )
    query = f"q-{topic}"
    assert transactional_id("aiokafka-spark", TaskIdentity(query, 0, 3)) == (
        f"aiokafka-spark-{query}-3"
    )

    def run(batch_id: int, values: list[bytes]) -> tuple[int, bool]:
        who = TaskIdentity(query, batch_id, 0)
        message = asyncio.run(write_exactly_once(options, iter([_batch(values)]), who))
        return message.records, message.skipped

    assert run(0, [b"a", b"b"]) == (2, False)
    assert run(0, [b"a", b"b"]) == (0, True)  # Spark ran batch 0 again
    assert run(1, []) == (0, False)  # an empty task: nothing to mark, no failure
    assert run(2, [b"c"]) == (1, False)
    assert run(1, [b"late"]) == (0, True)  # older than the marker: already done
    seen = sorted(v for _, _, v in consume_all(bs, topic, "read_committed"))
    assert seen == [b"a", b"b", b"c"]
