"""Admin client against a real broker: SCRAM users, client quotas, log dirs."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest

from aiokafka.admin import (
    AIOKafkaAdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    ClientQuotaOp,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from aiokafka.errors import (
    DuplicateResourceError,
    ResourceNotFoundError,
    SaslAuthenticationFailed,
)
from aiokafka.structs import TopicPartition
from tests.support.wait import eventually
from tools.kafka.rig import KafkaCluster


async def _can_login(kafka: KafkaCluster, mechanism: str, user: str, password: str) -> bool:
    client = AIOKafkaAdminClient(
        bootstrap_servers=kafka.bootstrap("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism=mechanism,
        sasl_plain_username=user,
        sasl_plain_password=password,
        request_timeout_ms=5000,
    )
    try:
        await client.start()
    except SaslAuthenticationFailed:
        return False
    try:
        return bool((await client.describe_cluster()).brokers)
    finally:
        await client.close()


async def _eventually_login(
    kafka: KafkaCluster, mechanism: str, user: str, password: str, expect: bool
) -> bool:
    # Credentials reach the broker through the metadata log, a moment after the
    # controller accepted them.
    for _ in range(50):
        if await _can_login(kafka, mechanism, user, password) == expect:
            return expect
        await asyncio.sleep(0.2)
    return not expect


async def _described_eventually(
    admin: AIOKafkaAdminClient, user: str, want: list[tuple[ScramMechanism, int]] | None
) -> list[tuple[ScramMechanism, int]] | ResourceNotFoundError:
    """The user's sorted (mechanism, iterations) once they equal ``want``, or the last read.

    ``want=None`` waits for the broker to answer RESOURCE_NOT_FOUND. The controller
    commits an alteration; the broker that answers a describe applies it from the
    metadata log a moment later (seen under load both ways: a new user not found yet,
    a deleted one still described).
    """

    async def read() -> list[tuple[ScramMechanism, int]] | ResourceNotFoundError:
        try:
            described = await admin.describe_user_scram_credentials([user])
        except ResourceNotFoundError as e:
            return e
        return sorted((c.mechanism, c.iterations) for c in described[user])

    def ok(value: list[tuple[ScramMechanism, int]] | ResourceNotFoundError) -> bool:
        return isinstance(value, ResourceNotFoundError) if want is None else value == want

    return await eventually(read, ok, timeout=15, interval=0.2)


async def test_scram_user_created_authenticates_then_deleted(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster
) -> None:
    user = f"admin-user-{uuid.uuid4().hex[:8]}"
    password = "s3cret-" + uuid.uuid4().hex
    # The broker refuses two alterations of one user in a request.
    with pytest.raises(DuplicateResourceError, match=user):
        await admin.alter_user_scram_credentials(
            [
                UserScramCredentialUpsertion(user, ScramMechanism.SCRAM_SHA_256, password),
                UserScramCredentialUpsertion(user, "SCRAM-SHA-512", password),
            ]
        )
    with pytest.raises(ResourceNotFoundError):
        await admin.describe_user_scram_credentials([user])
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, ScramMechanism.SCRAM_SHA_256, password)]
    )
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, "SCRAM-SHA-512", password, iterations=8192)]
    )
    want = [(ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 8192)]
    assert await _described_eventually(admin, user, want) == want
    assert user in await admin.describe_user_scram_credentials()

    # Second path: the new user authenticates with both mechanisms, not with a bad
    # password.
    assert await _eventually_login(kafka, "SCRAM-SHA-256", user, password, True)
    assert await _eventually_login(kafka, "SCRAM-SHA-512", user, password, True)
    assert not await _can_login(kafka, "SCRAM-SHA-256", user, password + "x")

    await admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256)]
    )
    assert not await _eventually_login(kafka, "SCRAM-SHA-256", user, password, False)
    left = [(ScramMechanism.SCRAM_SHA_512, 8192)]
    assert await _described_eventually(admin, user, left) == left

    await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, "SCRAM-SHA-512")])
    gone = await _described_eventually(admin, user, None)
    assert isinstance(gone, ResourceNotFoundError) and user in str(gone), gone
    with pytest.raises(ResourceNotFoundError):
        await admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion(user, "SCRAM-SHA-512")]
        )


async def test_client_quotas_set_describe_remove(admin: AIOKafkaAdminClient) -> None:
    user = f"quota-user-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity.of({"user": user})
    both = ClientQuotaEntity.of({"user": user, "client-id": "app"})
    await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(
                entity,
                [
                    ClientQuotaOp("producer_byte_rate", 1024),
                    ClientQuotaOp("consumer_byte_rate", 2048.0),
                ],
            ),
            ClientQuotaAlteration(both, [ClientQuotaOp("request_percentage", 50)]),
        ]
    )

    async def described(strict: bool) -> dict[ClientQuotaEntity, dict[str, float]]:
        return await admin.describe_client_quotas(
            [ClientQuotaFilterComponent.of_entity("user", user)], strict=strict
        )

    # Quotas reach the brokers' view through the metadata log; poll briefly.
    for _ in range(50):
        got = await described(False)
        if len(got) == 2:
            break
        await asyncio.sleep(0.1)
    assert got == {
        entity: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0},
        both: {"request_percentage": 50.0},
    }
    assert await described(True) == {entity: got[entity]}

    # Removing a key removes it (validate_only and enforcement: test_admin_quotas.py).
    await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(entity, [ClientQuotaOp("producer_byte_rate", None)]),
            ClientQuotaAlteration(both, [ClientQuotaOp("request_percentage", None)]),
        ]
    )
    for _ in range(50):
        got = await described(False)
        if len(got) == 1 and len(got[entity]) == 1:
            break
        await asyncio.sleep(0.1)
    assert got == {entity: {"consumer_byte_rate": 2048.0}}
    await admin.alter_client_quotas(
        [ClientQuotaAlteration(entity, [ClientQuotaOp("consumer_byte_rate", None)])]
    )


async def test_describe_log_dirs(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    import kafka as kafka_python

    topic = new_topic(partitions=2)
    producer = kafka_python.KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    for _ in range(20):
        producer.send(topic, value=b"x" * 100, partition=1)
    producer.flush()
    producer.close()

    node = kafka.nodes[0].node_id
    dirs = await admin.describe_log_dirs(
        topic_partitions=[TopicPartition(topic, 0), TopicPartition(topic, 1)]
    )
    assert list(dirs) == [node]
    (log_dir,) = dirs[node].values()
    assert log_dir.error is None and log_dir.total_bytes > 0 and log_dir.usable_bytes > 0
    assert log_dir.replicas[TopicPartition(topic, 1)].size > 2000
    assert log_dir.replicas[TopicPartition(topic, 0)].size == 0
    assert not log_dir.replicas[TopicPartition(topic, 1)].is_future
    everything = await admin.describe_log_dirs([node])
    assert TopicPartition(topic, 1) in everything[node][log_dir.path].replicas
