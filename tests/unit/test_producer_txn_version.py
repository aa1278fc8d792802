"""Transaction version 1 and 2 (KIP-890 part 2) with a scripted coordinator: which flow is
chosen, and which requests, at which version caps, each flow sends."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka.errors import UnsupportedVersionError
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.sender import Sender
from aiokafka.producer.transactions import TransactionManager
from aiokafka.producer.txn_state import TxnState
from aiokafka.protocol import messages
from aiokafka.structs import (
    ConsumerGroupMetadata,
    OffsetAndMetadata,
    TopicPartition,
)

from ._producer_stub import StubClient, send_one_in_transaction, transactional_sender

TP0 = TopicPartition("t", 0)

# What a Kafka 4.x broker advertises (the parts that matter here).
BROKER_MAX = {
    messages.ProduceRequest.API_KEY: 13,
    messages.TxnOffsetCommitRequest.API_KEY: 5,
    messages.EndTxnRequest.API_KEY: 5,
    messages.InitProducerIdRequest.API_KEY: 5,
}


class Coordinator(StubClient):
    """A stand-in cluster client whose one broker is leader and both coordinators.

    ``feature_level`` is the finalized ``transaction.version`` it advertises (``None``:
    none at all); ``broker_max`` caps what it speaks per API key.
    """

    def __init__(self, feature_level: int | None, broker_max: dict[int, int] | None = None):
        super().__init__()
        self.feature_level = feature_level
        self.broker_max = dict(BROKER_MAX if broker_max is None else broker_max)
        self.epoch = 0
        #: (request class name, max_version the caller passed)
        self.log: list[tuple[str, int | None]] = []

    async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
        if api_key not in self.broker_max:
            raise UnsupportedVersionError(f"no API {api_key}")
        ours = messages.REQUEST_TYPES[api_key].MAX_VERSION
        high = min(ours, self.broker_max[api_key])
        return high if max_version is None else min(high, max_version)

    async def finalized_level(self, node: Any, feature: str) -> int:
        assert feature == "transaction.version"
        return 0 if self.feature_level is None else self.feature_level

    async def send(self, node: Any, request: Any, **kw: Any) -> Any:
        name = type(request).__name__
        self.log.append((name, kw.get("max_version")))
        if name == "InitProducerIdRequest":
            return messages.InitProducerIdResponse(producer_id=5, producer_epoch=self.epoch)
        if name == "AddPartitionsToTxnRequest":
            return messages.AddPartitionsToTxnResponse()
        if name == "AddOffsetsToTxnRequest":
            return messages.AddOffsetsToTxnResponse()
        if name == "TxnOffsetCommitRequest":
            return messages.TxnOffsetCommitResponse()
        if name == "EndTxnRequest":
            if kw.get("max_version") is None:  # v5: the coordinator bumps the epoch
                self.epoch += 1
                return messages.EndTxnResponse(producer_id=5, producer_epoch=self.epoch)
            return messages.EndTxnResponse()
        assert name == "ProduceRequest"
        part = messages.PartitionProduceResponse(index=0, base_offset=7)
        return messages.ProduceResponse(
            responses=[messages.TopicProduceResponse(name="t", partition_responses=[part])]
        )

    def names(self) -> list[str]:
        return [name for name, _ in self.log]

    def cap(self, name: str) -> int | None:
        caps = {cap for n, cap in self.log if n == name}
        assert len(caps) == 1, (name, self.log)
        return caps.pop()


async def manager(client: Coordinator) -> tuple[TransactionManager, ProducerIdState]:
    ids = ProducerIdState("tid")
    txn = TransactionManager(client, ids, "tid", 60000, 1000)
    await txn.initialize()
    return txn, ids


@pytest.mark.parametrize(
    ("level", "broker_max", "expected"),
    [
        (2, None, 2),
        (1, None, 1),
        (None, None, 1),  # no finalized feature: an older cluster
        # Finalized, but this broker cannot speak the version 2 requests.
        (2, {**BROKER_MAX, messages.ProduceRequest.API_KEY: 11}, 1),
        (2, {**BROKER_MAX, messages.EndTxnRequest.API_KEY: 4}, 1),
    ],
)
async def test_transaction_version_follows_the_coordinator(
    level: int | None, broker_max: dict[int, int] | None, expected: int
) -> None:
    txn, _ = await manager(Coordinator(level, broker_max))
    assert txn.transaction_version == expected
    assert txn.produce_max_version == (None if expected == 2 else 11)


async def start_sender(client: Coordinator) -> tuple[Sender, RecordAccumulator, Any]:
    txn, ids = await manager(client)
    sender, acc = transactional_sender(client, ids, txn)
    return sender, acc, txn


async def produce_one(client: Coordinator) -> TransactionManager:
    sender, acc, txn = await start_sender(client)
    meta = await send_one_in_transaction(sender, acc, txn)
    assert meta.offset == 7
    return txn


async def test_v2_produces_without_add_partitions() -> None:
    client = Coordinator(2)
    txn = await produce_one(client)
    assert client.names() == ["InitProducerIdRequest", "ProduceRequest"]
    assert client.cap("ProduceRequest") is None  # v12+: the leader adds the partition
    assert txn.state.is_added(TP0)
    assert txn.state.has_data  # so the commit sends EndTxn


async def test_v1_adds_the_partition_and_caps_produce_at_v11() -> None:
    client = Coordinator(1)
    await produce_one(client)
    assert client.names() == [
        "InitProducerIdRequest",
        "AddPartitionsToTxnRequest",
        "ProduceRequest",
    ]
    assert client.cap("ProduceRequest") == 11


@pytest.mark.parametrize("level", [1, 2])
async def test_offsets_and_end(level: int) -> None:
    client = Coordinator(level)
    txn, ids = await manager(client)
    offsets = {TP0: OffsetAndMetadata(3, "")}
    group = ConsumerGroupMetadata("g", 4, "member", None)
    for round_ in range(2):
        txn.begin()
        await txn.send_offsets(offsets, group)
        ids.assign_sequence(TP0, 10)  # as if the transaction had produced
        txn.state.begin_commit()
        await txn.end(commit=True)
        assert txn.state.state is TxnState.READY
        if level == 2:
            # EndTxn v5 bumped the epoch; the next transaction restarts sequences at 0.
            assert ids.producer_epoch == round_ + 1
            assert ids.assign_sequence(TP0, 1) == 0
        else:
            assert ids.producer_epoch == 0
            assert ids.assign_sequence(TP0, 1) > 0
    if level == 2:
        assert "AddOffsetsToTxnRequest" not in client.names()
        assert client.cap("TxnOffsetCommitRequest") is None
        assert client.cap("EndTxnRequest") is None
    else:
        assert client.names().count("AddOffsetsToTxnRequest") == 2
        assert client.cap("TxnOffsetCommitRequest") == 4
        assert client.cap("EndTxnRequest") == 4
