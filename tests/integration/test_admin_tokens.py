"""Delegation tokens against a real broker: created over SCRAM, used by a producer and
a consumer that authenticate with the token alone, renewed, described, expired (after
which the token no longer authenticates); refused over PLAINTEXT and to a client that
itself logged in with a token."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, DelegationToken
from aiokafka.errors import (
    DelegationTokenNotFound,
    DelegationTokenRequestNotAllowed,
    SaslAuthenticationFailed,
)
from tests.support.wait import drain, eventually
from tools.kafka.rig import KafkaCluster

MECH = "SCRAM-SHA-256"


def _scram(kafka: KafkaCluster) -> dict[str, Any]:
    user, password = kafka.users[MECH]
    return {
        "bootstrap_servers": kafka.bootstrap("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": MECH,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        "request_timeout_ms": 15000,
    }


@pytest.fixture
async def scram_admin(kafka: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    """An admin client logged in as the rig's SCRAM-SHA-256 user."""
    async with AIOKafkaAdminClient(**_scram(kafka)) as admin:
        yield admin


def _token_options(kafka: KafkaCluster, token: DelegationToken) -> dict[str, Any]:
    return {
        "bootstrap_servers": kafka.bootstrap("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT",
        "request_timeout_ms": 5000,
        **token.credentials(MECH),
    }


async def _logs_in(kafka: KafkaCluster, token: DelegationToken) -> bool:
    """Whether a client can authenticate with ``token`` and be answered. Around an
    expiry one connection may authenticate and the next fail: any failure is False."""
    admin = AIOKafkaAdminClient(**_token_options(kafka, token))
    try:
        await admin.start()
        return bool((await admin.describe_cluster()).brokers)
    except SaslAuthenticationFailed:
        return False
    finally:
        await admin.close()


async def test_delegation_token_lifecycle(
    scram_admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    user = kafka.users[MECH][0]
    token = await scram_admin.create_delegation_token(["User:scheduler"], max_lifetime_ms=3_600_000)
    assert token.owner == token.requester == f"User:{user}"
    assert token.renewers == ("User:scheduler",)
    assert token.issue_timestamp_ms < token.expiry_timestamp_ms <= token.max_timestamp_ms
    assert token.max_timestamp_ms - token.issue_timestamp_ms <= 3_600_000
    # The HMAC is the secret: never in repr.
    secret = token.hmac.get_secret_value()
    assert secret and secret not in repr(token) and secret not in str(token.credentials())

    # The token alone authenticates clients (once the broker applied its creation).
    assert await eventually(lambda: _logs_in(kafka, token), bool, timeout=15) is True
    topic = new_topic()
    async with AIOKafkaProducer(**_token_options(kafka, token)) as producer:
        await producer.send_and_wait(topic, b"sent with a token")
    consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest", **_token_options(kafka, token))
    await consumer.start()
    try:
        assert [r.value for r in await drain(consumer, 1, timeout=30)] == [b"sent with a token"]
    finally:
        await consumer.stop()

    # A client that logged in with a token may not create another.
    async with AIOKafkaAdminClient(**_token_options(kafka, token)) as token_admin:
        with pytest.raises(DelegationTokenRequestNotAllowed):
            await token_admin.create_delegation_token()

    described = {t.token_id: t for t in await scram_admin.describe_delegation_token()}
    assert described[token.token_id].hmac == token.hmac
    assert described[token.token_id].renewers == ("User:scheduler",)
    mine = await scram_admin.describe_delegation_token([f"User:{user}"])
    assert token.token_id in {t.token_id for t in mine}
    assert await scram_admin.describe_delegation_token(["User:nobody-at-all"]) == []

    renewed = await scram_admin.renew_delegation_token(token, 60_000)
    assert token.issue_timestamp_ms < renewed <= token.max_timestamp_ms

    expired = await scram_admin.expire_delegation_token(token)
    assert expired <= renewed
    assert await eventually(lambda: _logs_in(kafka, token), lambda ok: not ok, timeout=15) is False
    # Gone from the broker's view too.
    assert token.token_id not in {t.token_id for t in await scram_admin.describe_delegation_token()}
    with pytest.raises(DelegationTokenNotFound):
        await scram_admin.renew_delegation_token(token.hmac_bytes())


async def test_delegation_tokens_need_an_authenticated_channel(
    admin: AIOKafkaAdminClient,
) -> None:
    with pytest.raises(DelegationTokenRequestNotAllowed):
        await admin.create_delegation_token()


async def test_delegation_token_arguments(scram_admin: AIOKafkaAdminClient) -> None:
    with pytest.raises(ValueError, match="renewers"):
        await scram_admin.create_delegation_token(["scheduler"])
    with pytest.raises(TypeError, match="renewers"):
        await scram_admin.create_delegation_token("User:scheduler")
    with pytest.raises(ValueError, match="owner"):
        await scram_admin.create_delegation_token(owner="User:")
    with pytest.raises(TypeError, match="max_lifetime_ms"):
        await scram_admin.create_delegation_token(max_lifetime_ms=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="token"):
        await scram_admin.renew_delegation_token("hmac")  # type: ignore[arg-type]
    token = await scram_admin.create_delegation_token(max_lifetime_ms=60_000)
    with pytest.raises(ValueError, match="sasl_mechanism"):
        token.credentials("PLAIN")
    assert token.credentials("SCRAM-SHA-512")["sasl_mechanism"] == "SCRAM-SHA-512"
