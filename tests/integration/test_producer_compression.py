"""compression_level against a real broker: gzip, lz4 and zstd at non-default levels
round-trip (another client reads every record back intact), a higher level stores a
smaller batch for compressible data. (A level outside the codec's range is a
ValueError at construction: tests/unit/test_producer_config.py.)"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from aiokafka.producer import AIOKafkaProducer
from tests.integration.test_producer_basic import read_confluent
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(120)

RECORDS = 300

# (codec, a low level, a high level): levels far enough apart that the higher one
# compresses log-like text measurably better (lz4 0 is the fast mode, 9 is HC).
LEVELS = [("gzip", 1, 9), ("lz4", 0, 9), ("zstd", 1, 19)]


def _values() -> list[bytes]:
    """Compressible but not trivially so: log lines from a small vocabulary, with
    numbers that repeat only sometimes (a fast level misses matches a slow one finds)."""
    rng = random.Random(7)
    words = [rng.randbytes(4).hex() for _ in range(60)]
    return [
        (
            f"ts={1_700_000_000 + i} level={rng.choice(['INFO', 'WARN', 'DEBUG'])} "
            f"user={rng.choice(words)} path=/api/{rng.choice(words)}/{rng.choice(words)} "
            f"status={rng.choice([200, 200, 200, 404, 500])} bytes={rng.randrange(10**5)} "
            f"agent={rng.choice(words)}-{rng.choice(words)}"
        ).encode()
        for i in range(RECORDS)
    ]


def _log_bytes(kafka: KafkaCluster, topic: str) -> int:
    """Bytes of partition 0's log segments on the (single) broker: the batches exactly
    as the producer built them (the broker keeps the producer's compression)."""
    (node,) = kafka.nodes
    partition_dir = Path(node.dir) / "data" / f"{topic}-0"
    return sum(p.stat().st_size for p in partition_dir.glob("*.log"))


async def _produce_one_batch(
    kafka: KafkaCluster, topic: str, codec: str, level: int, values: list[bytes]
) -> None:
    # Everything fits one batch (large max_batch_size, long linger, then flush), so
    # both levels compress exactly the same bytes.
    async with AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers,
        compression_type=codec,
        compression_level=level,
        max_batch_size=1024 * 1024,
        linger_ms=10_000,
    ) as producer:
        futures = [await producer.send(topic, v, key=b"k%d" % i) for i, v in enumerate(values)]
        await producer.flush(timeout=30)
        results = await asyncio.gather(*futures)
    assert [r.offset for r in results] == list(range(len(values)))


@pytest.mark.parametrize(("codec", "low", "high"), LEVELS)
async def test_levels_round_trip_and_higher_levels_store_less(
    kafka: KafkaCluster, new_topic: NewTopic, codec: str, low: int, high: int
) -> None:
    pytest.importorskip({"gzip": "zlib", "lz4": "lz4", "zstd": "zstandard"}[codec])
    values = _values()
    raw = sum(len(v) for v in values)
    sizes = {}
    for level in (low, high):
        topic = new_topic()
        await _produce_one_batch(kafka, topic, codec, level, values)
        msgs = await asyncio.to_thread(
            read_confluent, kafka.bootstrap_servers, topic, 1, len(values)
        )
        assert [m.value() for m in msgs] == values, f"{codec} level {level}"
        assert [m.key() for m in msgs] == [b"k%d" % i for i in range(len(values))]
        sizes[level] = _log_bytes(kafka, topic)
    # Both compress (the stored batch is well under the raw values), and the higher
    # level stores less.
    assert 0 < sizes[high] < sizes[low] < raw, (codec, sizes, raw)
