"""Admin client against a real broker: list_offsets, delete_records, producers and
transactions (records written by confluent-kafka)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.admin import AIOKafkaAdminClient, IsolationLevel, OffsetSpec, RecordsToDelete
from aiokafka.errors import (
    OffsetOutOfRangeError,
    TransactionalIdNotFoundError,
    UnknownTopicOrPartitionError,
)
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

BASE_TS = 1_700_000_000_000


def _produce_timestamped(kafka: KafkaCluster, topic: str, count: int) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": kafka.bootstrap_servers, "enable.idempotence": True}
    )
    # Timestamps rise by 1000 ms except record 5, which carries the largest one.
    for i in range(count):
        ts = BASE_TS + 1000 * i if i != 5 else BASE_TS + 10**6
        producer.produce(topic, value=b"v%d" % i, partition=0, timestamp=ts)
    assert producer.flush(30) == 0


async def test_list_offsets_specs_and_delete_records(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=2)
    tp, empty = TopicPartition(topic, 0), TopicPartition(topic, 1)
    await asyncio.to_thread(_produce_timestamped, kafka, topic, 10)

    found = await admin.list_offsets({tp: OffsetSpec.earliest(), empty: OffsetSpec.latest()})
    assert found[tp].offset == 0 and found[empty].offset == 0
    latest = await admin.list_offsets({tp: OffsetSpec.latest()})
    assert latest[tp].offset == 10
    by_time = await admin.list_offsets({tp: OffsetSpec.for_timestamp(BASE_TS + 2500)})
    assert by_time[tp].offset == 3 and by_time[tp].timestamp == BASE_TS + 3000
    assert by_time[tp].leader_epoch is not None
    too_late = await admin.list_offsets({tp: OffsetSpec.for_timestamp(BASE_TS + 10**7)})
    assert too_late[tp].offset == -1
    newest = await admin.list_offsets({tp: OffsetSpec.max_timestamp()})
    assert (newest[tp].offset, newest[tp].timestamp) == (5, BASE_TS + 10**6)

    low = await admin.delete_records({tp: RecordsToDelete(before_offset=4), empty: -1})
    assert low == {tp: 4, empty: 0}
    # Second path: the log start offset moved.
    after = await admin.list_offsets({tp: OffsetSpec.earliest()})
    assert after[tp].offset == 4
    with pytest.raises(OffsetOutOfRangeError):
        await admin.delete_records({tp: 11})


async def test_unknown_partition_fails_fast(
    admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(UnknownTopicOrPartitionError, match=rf"{topic}\[3\]"):
        await admin.list_offsets({TopicPartition(topic, 3): OffsetSpec.latest()})
    assert loop.time() - start < 5


def _open_transaction(kafka: KafkaCluster, topic: str, txn_id: str) -> Any:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": kafka.bootstrap_servers, "transactional.id": txn_id}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"committed", partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"pending", partition=0)
    assert producer.flush(30) == 0
    return producer


async def test_producers_and_open_transaction(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    txn_id = f"admin-txn-{uuid.uuid4().hex[:8]}"
    producer = await asyncio.to_thread(_open_transaction, kafka, topic, txn_id)
    try:
        producers = await admin.describe_producers([tp])
        (state,) = producers[tp]
        # Offsets: 0 committed record, 1 commit marker, 2 the pending record.
        assert state.producer_id >= 0 and state.current_txn_start_offset == 2

        listed = {t.transactional_id: t for t in await admin.list_transactions()}
        assert listed[txn_id].state == "Ongoing"
        assert listed[txn_id].producer_id == state.producer_id
        assert txn_id in {
            t.transactional_id for t in await admin.list_transactions(states=["Ongoing"])
        }
        described = await admin.describe_transactions([txn_id])
        assert described[txn_id].state == "Ongoing"
        assert described[txn_id].partitions == [tp]
        assert described[txn_id].producer_id == state.producer_id

        # READ_COMMITTED stops at the open transaction; READ_UNCOMMITTED does not.
        committed = await admin.list_offsets(
            {tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED
        )
        uncommitted = await admin.list_offsets({tp: OffsetSpec.latest()})
        assert (committed[tp].offset, uncommitted[tp].offset) == (2, 3)
    finally:
        await asyncio.to_thread(producer.abort_transaction, 30)

    with pytest.raises(TransactionalIdNotFoundError):
        await admin.describe_transactions([f"admin-txn-missing-{uuid.uuid4().hex[:8]}"])
