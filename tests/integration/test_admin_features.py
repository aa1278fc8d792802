"""update_features against real brokers: a finalized level changed and changed back,
proven by describe_features and by the transaction protocol a producer then uses;
validate_only changes nothing; the controller's refusals arrive as typed errors."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, FeatureUpdate, FeatureUpdateType
from aiokafka.errors import InvalidUpdateVersionError
from tests.conftest import START_TIMEOUT
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster

TV = "transaction.version"


@pytest.fixture(scope="module")
def kafka_tv1() -> Iterator[KafkaCluster]:
    """A node formatted with ``transaction.version`` 1, whose level the tests move."""
    cluster = KafkaCluster(1, listeners=["PLAINTEXT"], features={TV: 1}, label="features").start(
        timeout=START_TIMEOUT
    )
    yield cluster
    cluster.stop()


@pytest.fixture
async def admin_tv1(kafka_tv1: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka_tv1.bootstrap_servers, request_timeout_ms=15000
    ) as admin:
        yield admin


async def _level(admin: AIOKafkaAdminClient) -> int:
    return (await admin.describe_features()).finalized[TV][1]


async def _bumps_epoch_per_transaction(kafka: KafkaCluster, admin: AIOKafkaAdminClient) -> bool:
    """Whether a committed transaction bumps the producer epoch (transaction
    version 2, KIP-890) on this cluster."""
    txn_id = f"features-{uuid.uuid4().hex[:8]}"
    topic = kafka.create_topic(f"features-{uuid.uuid4().hex[:8]}", 1, 1)
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, transactional_id=txn_id)
    await producer.start()
    try:
        before = (await admin.describe_transactions([txn_id]))[txn_id].producer_epoch
        async with producer.transaction():
            await producer.send_and_wait(topic, b"in a transaction")
        after = (await admin.describe_transactions([txn_id]))[txn_id].producer_epoch
    finally:
        await producer.stop()
    return after > before


async def test_update_features_upgrades_and_downgrades(
    kafka_tv1: KafkaCluster, admin_tv1: AIOKafkaAdminClient
) -> None:
    admin = admin_tv1
    assert await _level(admin) == 1
    supported = (await admin.describe_features()).supported[TV]
    assert supported[1] >= 2

    await admin.update_features({TV: FeatureUpdate(2)}, validate_only=True)
    assert await _level(admin) == 1
    # A downgrade needs its type.
    with pytest.raises(InvalidUpdateVersionError, match=TV):
        await admin.update_features({TV: FeatureUpdate(0)})

    await admin.update_features({TV: FeatureUpdate(2)})
    try:
        assert await eventually(lambda: _level(admin), lambda level: level == 2) == 2
        assert await _bumps_epoch_per_transaction(kafka_tv1, admin)
    finally:
        await admin.update_features({TV: FeatureUpdate(1, FeatureUpdateType.SAFE_DOWNGRADE)})
    assert await eventually(lambda: _level(admin), lambda level: level == 1) == 1
    assert not await _bumps_epoch_per_transaction(kafka_tv1, admin)


async def test_update_features_refuses(admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(InvalidUpdateVersionError, match="no-such-feature"):
        await admin.update_features({"no-such-feature": FeatureUpdate(1)})
    supported = (await admin.describe_features()).supported[TV]
    with pytest.raises(InvalidUpdateVersionError, match=TV):
        await admin.update_features({TV: FeatureUpdate(supported[1] + 1)}, validate_only=True)
    with pytest.raises(TypeError, match="FeatureUpdate"):
        await admin.update_features({TV: 2})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="max_version_level"):
        FeatureUpdate(-1)
    with pytest.raises(ValueError):
        FeatureUpdate(1, 7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout_ms"):
        await admin.update_features({TV: FeatureUpdate(2)}, timeout_ms=0)
    await admin.update_features({})  # nothing to change
