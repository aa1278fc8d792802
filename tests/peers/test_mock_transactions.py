"""Transactions against librdkafka's mock cluster, which injects the coordinator errors a
real broker gives only under load or failover: every retriable one is retried with
back-off and the transaction still commits exactly what it holds.

The mock finalizes no ``transaction.version``, so this is the version 1 flow
(AddPartitionsToTxn, AddOffsetsToTxn, EndTxn v4 at most)."""

from __future__ import annotations

import asyncio
import uuid

from aiokafka.structs import TopicPartition
from tests.support.mock_cluster import CoordType, MockCluster, MockRelay
from tests.support.request_log import RequestLog

from .test_mock_cluster import DEADLINE, new_topic, producer_for, read_all

COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
CONCURRENT_TRANSACTIONS = 51

ADD_PARTITIONS_TO_TXN = 24
ADD_OFFSETS_TO_TXN = 25
END_TXN = 26
TXN_OFFSET_COMMIT = 28


async def test_transaction_retries_coordinator_errors(
    mock_cluster: MockCluster, mock_relay: MockRelay
) -> None:
    topic = new_topic(mock_cluster, partitions=2)
    tid = f"txn-{uuid.uuid4().hex[:8]}"
    group = f"g-{uuid.uuid4().hex[:8]}"
    mock_cluster.coordinator_set(CoordType.TXN, tid, 1)
    producer = producer_for(mock_relay, transactional_id=tid)
    await asyncio.wait_for(producer.start(), DEADLINE)
    log = RequestLog(producer._client)
    try:
        assert producer._txn is not None and producer._txn.transaction_version == 1
        mock_cluster.push_request_errors(
            ADD_PARTITIONS_TO_TXN, [CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_AVAILABLE]
        )
        mock_cluster.push_request_errors(
            ADD_OFFSETS_TO_TXN, [COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS]
        )
        mock_cluster.push_request_errors(TXN_OFFSET_COMMIT, [COORDINATOR_NOT_AVAILABLE])
        mock_cluster.push_request_errors(
            END_TXN, [CONCURRENT_TRANSACTIONS, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS]
        )
        await producer.begin_transaction()
        futures = [await producer.send(topic, b"v%d" % i, partition=i % 2) for i in range(20)]
        await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 10}, group)
        await asyncio.wait_for(producer.commit_transaction(), DEADLINE)
        offsets = [((m := await f).partition, m.offset) for f in futures]
        # Each injected error cost one more request of its kind: all were retried.
        assert log.count("AddPartitionsToTxnRequest") == 3
        assert log.count("AddOffsetsToTxnRequest") == 3
        assert log.count("TxnOffsetCommitRequest") == 2
        assert log.count("EndTxnRequest") == 4
        # A transaction that moves its coordinator between transactions: the producer
        # finds the new one (NOT_COORDINATOR from the old) and commits again.
        mock_cluster.coordinator_set(CoordType.TXN, tid, 2)
        async with producer.transaction():
            await producer.send(topic, b"v20", partition=0)
    finally:
        await producer.stop()
    assert len(set(offsets)) == 20
    got = await read_all(mock_relay, topic, 2, 21)
    assert got == {
        0: [b"v%d" % i for i in range(0, 20, 2)] + [b"v20"],
        1: [b"v%d" % i for i in range(1, 20, 2)],
    }
