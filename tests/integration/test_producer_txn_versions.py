"""Both transaction protocols against real brokers: Kafka 4.x's default transaction
version 2 (KIP-890 part 2: no AddPartitionsToTxn/AddOffsetsToTxn, an epoch bump with
every EndTxn) and version 1 on a node formatted with ``transaction.version=1``.

Each test checks the flow through the requests the producer sent and, independently,
through the broker: what the coordinator reports (describe_transactions), what
read_committed / read_uncommitted consumers see, and the group's committed offsets."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.conftest import START_TIMEOUT
from tests.support.request_log import RequestLog
from tools.kafka.rig import KafkaCluster

from .test_producer_transactions import NewTopic, read_ours, txn_id, txn_producer

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def kafka_tv1() -> Iterator[KafkaCluster]:
    """A single node whose cluster finalized ``transaction.version`` 1."""
    cluster = KafkaCluster(
        1, listeners=["PLAINTEXT"], features={"transaction.version": 1}, label="tv1"
    ).start(timeout=START_TIMEOUT)
    yield cluster
    cluster.stop()


async def run_flow(kafka: KafkaCluster, topic: str, group: str) -> tuple[int, RequestLog, Any]:
    """Commit a transaction over two partitions with offsets for ``group``, abort a
    second one, commit a third; return (transaction version, request log, epochs)."""
    tid = txn_id()
    producer = await txn_producer(kafka, tid)
    log = RequestLog(producer._client)
    assert producer._txn is not None and producer._ids is not None
    epochs = [producer._ids.producer_epoch]
    try:
        async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
            await producer.begin_transaction()
            for p in (0, 1):
                await (await producer.send(topic, b"committed-%d" % p, partition=p))
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 5}, group)
            # The coordinator knows both partitions, however they were added.
            ongoing = (await admin.describe_transactions([tid]))[tid]
            assert ongoing.state == "Ongoing"
            assert set(ongoing.partitions) >= {TopicPartition(topic, 0), TopicPartition(topic, 1)}
            await producer.commit_transaction()
            epochs.append(producer._ids.producer_epoch)

            await producer.begin_transaction()
            await (await producer.send(topic, b"aborted", partition=0))
            await producer.abort_transaction()
            epochs.append(producer._ids.producer_epoch)

            async with producer.transaction():
                await producer.send(topic, b"after", partition=1)
            epochs.append(producer._ids.producer_epoch)
            # The coordinator's epoch is the one the producer uses now.
            deadline = time.monotonic() + 15
            while True:  # markers are written after EndTxn answers: PrepareCommit first
                done = (await admin.describe_transactions([tid]))[tid]
                if done.state == "CompleteCommit" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
            assert done.state == "CompleteCommit"
            assert (done.producer_id, done.producer_epoch) == (
                producer._ids.producer_id,
                producer._ids.producer_epoch,
            )
            offsets = await admin.list_consumer_group_offsets(group)
            assert offsets[TopicPartition(topic, 0)].offset == 5
        version = producer._txn.transaction_version
    finally:
        await producer.stop()
    committed = await read_ours(kafka, topic, 2, "read_committed", 3)
    assert committed == {0: [b"committed-0"], 1: [b"committed-1", b"after"]}
    everything = await read_ours(kafka, topic, 2, "read_uncommitted", 4)
    assert everything == {0: [b"committed-0", b"aborted"], 1: [b"committed-1", b"after"]}
    return version, log, epochs


async def test_kafka_4_runs_transaction_version_2(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=2)
    version, log, epochs = await run_flow(kafka, topic, f"g-{uuid.uuid4().hex}")
    assert version == 2
    # Partitions and the group joined the transaction through Produce v12+ and
    # TxnOffsetCommit v5; no separate request added them.
    assert not log.names() & {"AddPartitionsToTxnRequest", "AddOffsetsToTxnRequest"}
    assert min(log.versions("ProduceRequest")) >= 12
    assert log.versions("TxnOffsetCommitRequest") == {5}
    assert log.versions("EndTxnRequest") == {5}
    # Every commit and abort bumped the epoch.
    assert epochs == [epochs[0] + i for i in range(4)]


async def test_transaction_version_1_cluster_uses_the_older_flow(
    kafka_tv1: KafkaCluster,
) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=kafka_tv1.bootstrap_servers) as admin:
        finalized = (await admin.describe_features()).finalized
    assert finalized["transaction.version"] == (1, 1)
    topic = kafka_tv1.create_topic(f"tv1-{uuid.uuid4().hex[:8]}", 2, 1, None)
    version, log, epochs = await run_flow(kafka_tv1, topic, f"g-{uuid.uuid4().hex}")
    assert version == 1
    assert {"AddPartitionsToTxnRequest", "AddOffsetsToTxnRequest"} <= log.names()
    assert log.versions("ProduceRequest") == {11}
    assert max(log.versions("TxnOffsetCommitRequest")) <= 4
    assert max(log.versions("EndTxnRequest")) <= 4
    # Version 1 keeps the epoch from InitProducerId across transactions.
    assert epochs == [epochs[0]] * 4


async def test_idempotent_producer_outside_transactions_uses_produce_v12(
    kafka_tv1: KafkaCluster,
) -> None:
    """The version 1 cap applies to transactions only: a plain idempotent producer
    speaks the newest Produce both sides know, as the Java client does."""
    topic = kafka_tv1.create_topic(f"idem-{uuid.uuid4().hex[:8]}", 1, 1, None)
    producer = AIOKafkaProducer(bootstrap_servers=kafka_tv1.bootstrap_servers)
    await producer.start()
    log = RequestLog(producer._client)
    try:
        await producer.send_and_wait(topic, b"x")
    finally:
        await producer.stop()
    assert min(log.versions("ProduceRequest")) >= 12
