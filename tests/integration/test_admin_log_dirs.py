"""alter_replica_log_dirs and describe_replica_log_dirs against a real broker with two
log directories: a replica moves to the other directory (describe_log_dirs and
describe_replica_log_dirs show it there, its records still read back), and the
broker's refusals come back per replica."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import (
    AIOKafkaAdminClient,
    NewTopic,
    ReplicaLogDirInfo,
    TopicPartitionReplica,
)
from aiokafka.errors import LogDirNotFoundError
from aiokafka.structs import TopicPartition
from tests.conftest import START_TIMEOUT
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster


@pytest.fixture(scope="module")
def two_dirs() -> Iterator[tuple[KafkaCluster, list[str]]]:
    """A node whose ``log.dirs`` are two directories (the first also holds the
    metadata log)."""
    with tempfile.TemporaryDirectory(prefix="aiokafka-logdirs-") as tmp:
        dirs = [str(Path(tmp, "a")), str(Path(tmp, "b"))]
        cluster = KafkaCluster(
            1, listeners=["PLAINTEXT"], extra_config={"log.dirs": ",".join(dirs)}, label="logdirs"
        ).start(timeout=START_TIMEOUT)
        try:
            yield cluster, dirs
        finally:
            cluster.stop()


@pytest.fixture
async def admin(two_dirs: tuple[KafkaCluster, list[str]]) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(
        bootstrap_servers=two_dirs[0].bootstrap_servers, request_timeout_ms=15000
    ) as client:
        yield client


async def _dir_of(admin: AIOKafkaAdminClient, node: int, tp: TopicPartition) -> list[str]:
    """The directories holding a current (not future) replica of ``tp``."""
    dirs = (await admin.describe_log_dirs([node], [tp]))[node]
    return sorted(
        path for path, d in dirs.items() if tp in d.replicas and not d.replicas[tp].is_future
    )


async def test_replica_moves_to_the_other_directory(
    admin: AIOKafkaAdminClient, two_dirs: tuple[KafkaCluster, list[str]]
) -> None:
    cluster, dirs = two_dirs
    node = cluster.nodes[0].node_id
    topic = f"logdirs-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    await admin.create_topics([NewTopic(topic, 1, 1)])
    await admin.wait_for_topics([topic], timeout_ms=20000)
    async with AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers) as producer:
        for i in range(5):
            await producer.send_and_wait(topic, b"r-%d" % i, partition=0)
    (before,) = await _dir_of(admin, node, tp)
    target = next(d for d in dirs if d != before)
    replica = TopicPartitionReplica(topic, 0, node)
    absent = TopicPartitionReplica(f"{topic}-absent", 0, node)
    where = await admin.describe_replica_log_dirs([replica, absent])
    assert where == {replica: ReplicaLogDirInfo(before, 0), absent: ReplicaLogDirInfo()}

    assert await admin.alter_replica_log_dirs({replica: target}) == {replica: None}
    after = await eventually(lambda: _dir_of(admin, node, tp), lambda d: d == [target], 30)
    assert after == [target]
    moved = await eventually(
        lambda: admin.describe_replica_log_dirs([(topic, 0, node)]),
        lambda w: w[replica].future_dir is None,
        30,
    )
    assert moved == {replica: ReplicaLogDirInfo(target, 0)}

    async with AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        got: list[bytes] = []
        while len(got) < 5:
            batch = await consumer.getmany(tp, timeout_ms=5000)
            assert batch, got
            got += [r.value for r in batch[tp] if r.value is not None]
    assert got == [b"r-%d" % i for i in range(5)]

    # A plain (topic, partition, broker) tuple works too, and the replica moves back;
    # a path the broker does not have is refused for that replica only.
    assert await admin.alter_replica_log_dirs({(topic, 0, node): before}) == {replica: None}
    back = await eventually(lambda: _dir_of(admin, node, tp), lambda d: d == [before], 30)
    assert back == [before]
    missing = await admin.alter_replica_log_dirs({replica: "/nonexistent/dir"})
    assert list(missing) == [replica] and isinstance(missing[replica], LogDirNotFoundError)


async def test_bad_arguments(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(TypeError, match="replica_assignments must be a mapping"):
        await admin.alter_replica_log_dirs([("t", 0, 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is not a TopicPartitionReplica"):
        await admin.alter_replica_log_dirs({("t", 0): "/x"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="partition"):
        await admin.alter_replica_log_dirs({TopicPartitionReplica("t", -1, 1): "/x"})
    with pytest.raises(ValueError, match="must not be empty"):
        await admin.alter_replica_log_dirs({TopicPartitionReplica("t", 0, 1): ""})
    assert await admin.alter_replica_log_dirs({}) == {}
    with pytest.raises(TypeError, match="replicas: 'x' is not a TopicPartitionReplica"):
        await admin.describe_replica_log_dirs(["x"])  # type: ignore[list-item]
