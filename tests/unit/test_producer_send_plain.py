"""``send()``'s shortcut for the common record (no serializers, key and value bytes or
None, no headers or timestamp): what it queues is what the full path queues, and every
other record still goes through ``RecordSerializer.serialize`` and its errors."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata
from aiokafka.producer import AIOKafkaProducer
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.records import RecordSerializer
from aiokafka.record import MemoryRecords
from aiokafka.structs import BrokerMetadata, PartitionMetadata


class _Client:
    """What ``send()`` reads from the cluster client: the metadata snapshot (one
    partition: the sticky partitioner picks one at random)."""

    def __init__(self) -> None:
        parts = {p: PartitionMetadata("t", p, 1, (1,), (1,), 0, 0) for p in (0,)}
        self.cluster = ClusterMetadata(
            MappingProxyType({1: BrokerMetadata(1, "h", 9092, None)}),
            MappingProxyType({"t": TopicMetadata("t", partitions=MappingProxyType(parts))}),
            created_at=time.monotonic(),
        )
        self.topics = frozenset({"t"})


_MADE: list[AIOKafkaProducer] = []


@pytest.fixture(autouse=True)
def _stopped() -> Iterator[None]:
    """The producers made by a test count as stopped after it (no ResourceWarning)."""
    yield
    for producer in _MADE:
        producer._state = "closed"
    _MADE.clear()


def running(**options: Any) -> tuple[AIOKafkaProducer, RecordAccumulator]:
    """A producer as start() leaves it, minus the network (the sender never runs)."""
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:9", **options)
    _MADE.append(producer)
    config = producer.config
    acc = RecordAccumulator.from_config(
        config, linger_ms=0, on_batch_closed=producer._on_batch_closed
    )
    client = _Client()
    producer._client = client  # type: ignore[assignment]
    producer._acc = acc
    producer._state = "running"
    producer._accepting = True
    producer._entry_from("t", client.cluster)
    return producer, acc


RECORDS: list[dict[str, Any]] = [
    {"value": b"v"},
    {"value": None, "key": b"k"},
    {"value": b"v2", "key": b"k2", "partition": 0},
    {"value": bytearray(b"ba")},
    {"value": memoryview(b"mv"), "key": bytearray(b"kb")},
    {"value": b"h", "headers": [("a", b"1"), ("b", None)]},
    {"value": b"h", "headers": []},
    {"value": b"t", "timestamp_ms": 1_700_000_000_123},
    {"value": None, "key": None},
]


async def queued(producer: AIOKafkaProducer, acc: RecordAccumulator) -> list[Any]:
    futures = [await producer.send("t", **record) for record in RECORDS]
    out = []
    for batch in acc.all_queued():
        out.append((batch.tp, batch.builder.record_count))
    out.append([(f._results.tp, f._index) for f in futures])
    return out


async def test_shortcut_queues_what_the_full_path_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []
    serialize = RecordSerializer.serialize

    def spy(self: RecordSerializer, *args: Any) -> Any:
        calls.append(args)
        return serialize(self, *args)

    monkeypatch.setattr(RecordSerializer, "serialize", spy)
    producer, acc = running()
    fast = await queued(producer, acc)
    # Only the records the shortcut does not take were serialized.
    assert [c[1] for c in calls] == [
        bytearray(b"ba"),
        memoryview(b"mv"),
        b"h",
        b"h",
        b"t",
    ]
    calls.clear()
    full_producer, full_acc = running()
    full_producer._plain = False  # every record through serialize()
    full = await queued(full_producer, full_acc)
    assert len(calls) == len(RECORDS)
    assert fast == full
    # The records themselves, read back from the batches both queued.
    fast_records = records_of(acc)
    assert len(fast_records) == len(RECORDS)
    assert fast_records == records_of(full_acc)
    assert (0, b"kb", b"mv", [], "now") in fast_records


def records_of(acc: RecordAccumulator) -> list[Any]:
    out = []
    for batch in acc.all_queued():
        for rb in MemoryRecords(bytes(batch.builder.build())):
            for r in rb:
                ts = r.timestamp if r.timestamp == 1_700_000_000_123 else "now"
                out.append((batch.tp.partition, r.key, r.value, list(r.headers), ts))
    return out


async def test_serializers_and_bad_types_keep_the_full_path() -> None:
    producer, acc = running(value_serializer=lambda v: v.encode())
    fut = await producer.send("t", "text")
    assert fut._index == 0
    producer, acc = running()
    with pytest.raises(TypeError, match="value must be bytes"):
        await producer.send("t", "text")
    with pytest.raises(TypeError, match="key must be bytes"):
        await producer.send("t", b"v", key=3)
    with pytest.raises(TypeError, match="timestamp_ms must be an int"):
        await producer.send("t", b"v", timestamp_ms="now")
    assert acc.all_queued() == []
