"""SASL (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) and TLS through AIOKafkaClient."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import pytest

from aiokafka.abc import AbstractTokenProvider
from aiokafka.cluster import AIOKafkaClient
from aiokafka.cluster import connections as connections_module
from aiokafka.cluster.connections import ConnectionPool
from aiokafka.errors import IllegalSaslStateError, KafkaConnectionError, SaslAuthenticationFailed
from aiokafka.helpers import create_ssl_context
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.protocol.messages import MetadataRequest
from tools.kafka.rig import KafkaCluster


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


class UnsecuredJwt(AbstractTokenProvider):
    """An unsigned JWT (alg "none"), which the rig's broker accepts for OAUTHBEARER."""

    def __init__(self, lifetime_s: float = 3600) -> None:
        super().__init__()
        self.lifetime_s = lifetime_s

    async def token(self) -> str:
        now = time.time()
        claims = {"sub": "oauth-user", "iat": now - 10, "exp": now + self.lifetime_s}
        return f"{_b64({'alg': 'none'})}.{_b64(claims)}."

    def extensions(self) -> dict[str, str]:
        return {"traceId": "abc123"}


def sasl_client(
    kafka: KafkaCluster, protocol: str, mechanism: str, **extra: object
) -> AIOKafkaClient:
    options: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(protocol),
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "request_timeout_ms": 10000,
    }
    if mechanism in kafka.users:
        options["sasl_plain_username"], options["sasl_plain_password"] = kafka.users[mechanism]
    if protocol.endswith("SSL"):
        options["ssl_context"] = create_ssl_context(cafile=kafka.ca_file)
    options.update(extra)
    return AIOKafkaClient(**options)


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_sasl_login(kafka: KafkaCluster, protocol: str, mechanism: str) -> None:
    async with sasl_client(kafka, protocol, mechanism) as client:
        assert client.cluster.cluster_id
        node = client.least_loaded_node()
        assert node is not None
        # A request on an authenticated connection to the advertised SASL listener.
        metadata = await client.fetch_all_metadata()
        assert node in metadata.brokers


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_wrong_password_fails_fast_and_clearly(kafka: KafkaCluster, mechanism: str) -> None:
    client = sasl_client(kafka, "SASL_PLAINTEXT", mechanism, sasl_plain_password="wrong")
    start = time.monotonic()
    with pytest.raises(SaslAuthenticationFailed, match=r"authentication .* failed") as info:
        await client.start()
    assert time.monotonic() - start < 5
    assert not info.value.retriable
    assert mechanism in str(info.value)
    await client.close()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
async def test_failed_authentication_closes_and_never_reuses_the_connection(
    kafka: KafkaCluster, mechanism: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Through the pool the client routes every request by: each attempt builds a new
    # connection, the rejected one is closed and never handed out, and a later request
    # fails the same way (after the reconnect back-off) instead of hanging on it.
    created: list[AIOKafkaConnection] = []

    class RecordingConnection(AIOKafkaConnection):
        async def connect(self) -> None:
            created.append(self)
            await super().connect()

    monkeypatch.setattr(connections_module, "AIOKafkaConnection", RecordingConnection)
    config = sasl_client(kafka, "SASL_PLAINTEXT", mechanism, sasl_plain_password="wrong").config
    pool = ConnectionPool(
        config.connection,
        reconnect_backoff_ms=50,
        reconnect_backoff_max_ms=200,
        connections_max_idle_ms=60000,
    )
    host, port = kafka.bootstrap("SASL_PLAINTEXT").rsplit(":", 1)
    start = time.monotonic()
    try:
        with pytest.raises(SaslAuthenticationFailed) as first:
            await asyncio.wait_for(pool.get(1, host, int(port)), 10)
        assert len(created) == 1
        rejected = created[0]
        assert rejected.closed and not rejected.connected
        # The broker hangs up right after its answer, so the reader may have closed the
        # connection (EOF) before connect() did with the authentication error.
        assert rejected.close_error is not None
        assert mechanism in str(first.value)
        assert pool.connected(1) is None
        with pytest.raises(KafkaConnectionError, match="is closed"):
            await rejected.send(MetadataRequest(topics=[]))

        with pytest.raises(SaslAuthenticationFailed):
            await asyncio.wait_for(pool.get(1, host, int(port)), 10)
        assert len(created) == 2
        assert created[1] is not rejected
        assert created[1].closed
        assert pool.connected(1) is None
    finally:
        await pool.close()
    assert time.monotonic() - start < 10


async def test_unknown_scram_user(kafka: KafkaCluster) -> None:
    client = sasl_client(kafka, "SASL_PLAINTEXT", "SCRAM-SHA-256", sasl_plain_username="nobody")
    with pytest.raises(SaslAuthenticationFailed):
        await client.start()
    await client.close()


async def test_oauthbearer(kafka: KafkaCluster) -> None:
    async with sasl_client(
        kafka, "SASL_PLAINTEXT", "OAUTHBEARER", sasl_oauth_token_provider=UnsecuredJwt()
    ) as client:
        assert client.cluster.brokers


async def test_oauthbearer_expired_token_rejected(kafka: KafkaCluster) -> None:
    client = sasl_client(
        kafka,
        "SASL_PLAINTEXT",
        "OAUTHBEARER",
        sasl_oauth_token_provider=UnsecuredJwt(lifetime_s=-3600),
    )
    start = time.monotonic()
    with pytest.raises(SaslAuthenticationFailed):
        await client.start()
    assert time.monotonic() - start < 5
    await client.close()


async def test_sasl_against_plaintext_listener(kafka: KafkaCluster) -> None:
    client = AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap("PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="u",
        sasl_plain_password="p",
        request_timeout_ms=5000,
    )
    start = time.monotonic()
    with pytest.raises(IllegalSaslStateError, match="is it a SASL listener") as info:
        await client.start()
    assert time.monotonic() - start < 5
    assert not info.value.retriable
    await client.close()


async def test_ssl_client(kafka: KafkaCluster) -> None:
    async with AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap("SSL"),
        security_protocol="SSL",
        ssl_context=create_ssl_context(cafile=kafka.ca_file),
    ) as client:
        assert client.cluster.brokers
        assert await client.fetch_all_metadata()
