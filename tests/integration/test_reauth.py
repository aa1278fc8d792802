"""SASL re-authentication on long-lived connections (KIP-368) against a real broker.

A dedicated single-node cluster sets ``connections.max.reauth.ms`` to a few seconds, so
every SASL session it grants ends after :data:`MAX_REAUTH_MS` (an OAUTHBEARER session
earlier, when the token expires first). The broker closes a connection that sends a
request after its session ended; connections that re-authenticate in time keep going.
Each test runs for more than three session lifetimes and checks that the same
connections carried the traffic throughout.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.cluster import connections as connections_module
from aiokafka.errors import AuthenticationFailedError, KafkaConnectionError, KafkaError
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.net.reauth import ReauthSchedule
from aiokafka.protocol.messages import MetadataRequest
from tools.kafka.rig import KafkaCluster, KafkaStartError

START_TIMEOUT = float(os.environ.get("AIOKAFKA_RIG_START_TIMEOUT", "90"))
#: The broker's session lifetime for PLAIN and SCRAM.
MAX_REAUTH_MS = 5000
#: OAUTHBEARER tokens expire sooner, so their expiry sets the session lifetime.
TOKEN_LIFETIME_S = 4.0
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def unsecured_jwt(subject: str, lifetime_s: float) -> str:
    """An unsigned JWT (alg "none"), which the broker's default validator accepts."""
    now = time.time()
    claims = {"sub": subject, "iat": now - 10, "exp": now + lifetime_s}
    return f"{_b64({'alg': 'none'})}.{_b64(claims)}."


class CountingTokens(AbstractTokenProvider):
    """A fresh short-lived token per call; ``calls`` counts them."""

    def __init__(self, lifetime_s: float = TOKEN_LIFETIME_S) -> None:
        super().__init__()
        self.lifetime_s = lifetime_s
        self.calls = 0

    async def token(self) -> str:
        self.calls += 1
        return unsecured_jwt("reauth-user", self.lifetime_s)


class FirstTokenOnly(CountingTokens):
    """The first token is good; later calls give an expired token or raise."""

    def __init__(self, later: str) -> None:
        super().__init__(lifetime_s=60)
        self.later = later

    async def token(self) -> str:
        self.calls += 1
        if self.calls == 1:
            return unsecured_jwt("reauth-user", TOKEN_LIFETIME_S)
        if self.later == "expired":
            return unsecured_jwt("reauth-user", -3600)
        raise RuntimeError("identity provider unreachable")


@pytest.fixture(scope="module")
def reauth_kafka() -> Iterator[KafkaCluster]:
    """One node whose SASL sessions last :data:`MAX_REAUTH_MS` at most."""
    cluster = KafkaCluster(
        1,
        listeners=["PLAINTEXT", "SASL_PLAINTEXT"],
        extra_config={"connections.max.reauth.ms": str(MAX_REAUTH_MS)},
        label="reauth",
    )
    try:
        cluster.start(timeout=START_TIMEOUT)
    except KafkaStartError as exc:
        pytest.fail(f"Kafka with connections.max.reauth.ms did not start:\n{exc}", pytrace=False)
    yield cluster
    cluster.stop()


def sasl_options(
    cluster: KafkaCluster, mechanism: str, tokens: AbstractTokenProvider | None = None
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "request_timeout_ms": 15000,
    }
    if mechanism == "OAUTHBEARER":
        options["sasl_oauth_token_provider"] = tokens or CountingTokens()
    else:
        options["sasl_plain_username"], options["sasl_plain_password"] = cluster.users[mechanism]
    return options


def lifetime_s(mechanism: str) -> float:
    return TOKEN_LIFETIME_S if mechanism == "OAUTHBEARER" else MAX_REAUTH_MS / 1000


async def raw_connection(
    cluster: KafkaCluster, mechanism: str, tokens: AbstractTokenProvider | None = None
) -> AIOKafkaConnection:
    host, port = cluster.bootstrap("SASL_PLAINTEXT").rsplit(":", 1)
    options = sasl_options(cluster, mechanism, tokens)
    config = ConnectionConfig(max_in_flight_requests_per_connection=4, **options)
    conn = AIOKafkaConnection(host, int(port), config, node_id=1)
    await conn.connect()
    return conn


def reauth_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("aiokafka-conn-reauth")]


async def hammer(conn: AIOKafkaConnection, until: float, errors: list[BaseException]) -> int:
    """Pipelined Metadata requests until ``until``; returns how many were answered."""
    answered = 0
    while time.monotonic() < until:
        try:
            response = await conn.send(MetadataRequest(topics=[]))
        except KafkaError as exc:
            errors.append(exc)
            return answered
        assert [b.node_id for b in response.brokers] == [1]
        answered += 1
        await asyncio.sleep(0.01)
    return answered


@pytest.mark.timeout(90)
async def test_every_mechanism_reauthenticates_with_pipelined_requests(
    reauth_kafka: KafkaCluster,
) -> None:
    # One connection per mechanism, side by side, each with four requests in flight at
    # a time for over three session lifetimes: every request is answered (correlated to
    # its own request), and the broker never closes a connection.
    tokens = CountingTokens()
    conns = {m: await raw_connection(reauth_kafka, m, tokens) for m in MECHANISMS}
    errors: list[BaseException] = []
    try:
        until = time.monotonic() + 3.3 * MAX_REAUTH_MS / 1000
        counts = await asyncio.gather(
            *(hammer(conn, until, errors) for conn in conns.values() for _ in range(4))
        )
        assert errors == []
        assert min(counts) > 20
        for mechanism, conn in conns.items():
            assert conn.connected, (mechanism, conn.close_error)
            assert conn.reauthentications >= 3, mechanism
        # A new token for the first authentication and for every re-authentication.
        assert tokens.calls == 1 + conns["OAUTHBEARER"].reauthentications
    finally:
        for conn in conns.values():
            await conn.close()
    assert reauth_tasks() == []


@pytest.mark.timeout(60)
async def test_idle_connection_is_renewed_but_stays_idle(reauth_kafka: KafkaCluster) -> None:
    # Nothing sent for two session lifetimes: the session is renewed anyway (the broker
    # would close the connection at its next request otherwise), and renewing is not
    # use, so the pool's idle limit still sees an idle connection.
    conn = await raw_connection(reauth_kafka, "SCRAM-SHA-512")
    try:
        await conn.send(MetadataRequest(topics=[]))
        await asyncio.sleep(2 * MAX_REAUTH_MS / 1000)
        assert conn.reauthentications >= 1
        assert conn.idle_seconds() > 1.8 * MAX_REAUTH_MS / 1000
        response = await conn.send(MetadataRequest(topics=[]))
        assert [b.node_id for b in response.brokers] == [1]
        assert conn.connected
    finally:
        await conn.close()
    assert reauth_tasks() == []


def record_connections(monkeypatch: pytest.MonkeyPatch) -> list[AIOKafkaConnection]:
    created: list[AIOKafkaConnection] = []

    class RecordingConnection(AIOKafkaConnection):
        async def connect(self) -> None:
            created.append(self)
            await super().connect()

    monkeypatch.setattr(connections_module, "AIOKafkaConnection", RecordingConnection)
    return created


def broker_connections(created: list[AIOKafkaConnection]) -> list[AIOKafkaConnection]:
    # Bootstrap connections are closed by the client once it knows the brokers.
    return [c for c in created if not str(c.node_id).startswith("bootstrap-")]


async def produce_and_consume(
    cluster: KafkaCluster, options: dict[str, Any], duration_s: float
) -> tuple[list[bytes], list[bytes]]:
    """A producer sending every 50 ms and a group consumer reading along."""
    topic = cluster.create_topic(f"reauth-{uuid.uuid4().hex[:8]}")
    bootstrap = cluster.bootstrap("SASL_PLAINTEXT")
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", **options)
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"reauth-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        # A Fetch waiting in the broker holds back the re-authentication queued behind
        # it; the default 500 ms is a large part of these few-second sessions' margin.
        fetch_max_wait_ms=100,
        **options,
    )
    sent: list[bytes] = []
    received: list[bytes] = []
    await producer.start()
    await consumer.start()
    try:
        until = time.monotonic() + duration_s
        while time.monotonic() < until:
            value = b"v%d" % len(sent)
            await producer.send_and_wait(topic, value)
            sent.append(value)
            batches = await consumer.getmany(timeout_ms=50)
            received += [r.value for records in batches.values() for r in records]
        deadline = time.monotonic() + 20
        while len(received) < len(sent) and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=200)
            received += [r.value for records in batches.values() for r in records]
    finally:
        await consumer.stop()
        await producer.stop()
    return sent, received


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mechanism", ["OAUTHBEARER", "PLAIN", "SCRAM-SHA-512"])
async def test_producer_and_consumer_keep_their_connections(
    reauth_kafka: KafkaCluster,
    mechanism: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="aiokafka")
    created = record_connections(monkeypatch)
    tokens = CountingTokens()
    options = sasl_options(reauth_kafka, mechanism, tokens)

    sent, received = await produce_and_consume(
        reauth_kafka, options, duration_s=3.3 * lifetime_s(mechanism)
    )
    assert sent and received == sent
    conns = broker_connections(created)
    # The producer's and the consumer's connections to the broker (the consumer's group
    # coordinator has its own): each opened once, used throughout, re-authenticated at
    # least three times, and never closed by the broker (stop() closed them).
    assert len(conns) >= 2
    assert len({(id(c.config), c.node_id) for c in conns}) == len(conns), "reconnected"
    for conn in conns:
        assert conn.reauthentications >= 3, conn
        error = conn.close_error
        assert isinstance(error, KafkaConnectionError) and str(error).endswith(" closed"), error
    if mechanism == "OAUTHBEARER":
        authentications = len(created) + sum(c.reauthentications for c in conns)
        assert tokens.calls == authentications
    # No connection failure was logged (the failure log's WARNINGs).
    failures = [r for r in caplog.records if r.name.startswith("aiokafka.net")]
    assert [r.getMessage() for r in failures if r.levelno >= logging.WARNING] == []
    assert reauth_tasks() == []


@pytest.mark.timeout(90)
async def test_without_reauthentication_the_broker_closes_the_connection(
    reauth_kafka: KafkaCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control for the tests above: the same traffic with re-authentication turned
    # off. The broker closes each connection at its first request after the session
    # ended, so the clients have to open new ones.
    monkeypatch.setattr(ReauthSchedule, "delay", lambda self: None)
    created = record_connections(monkeypatch)
    options = sasl_options(reauth_kafka, "PLAIN")
    sent, received = await produce_and_consume(
        reauth_kafka, options, duration_s=2.2 * MAX_REAUTH_MS / 1000
    )
    assert received == sent  # the clients recover by reconnecting
    conns = broker_connections(created)
    assert all(c.reauthentications == 0 for c in conns)
    assert len({(id(c.config), c.node_id) for c in conns}) < len(conns), "never reconnected"


@pytest.mark.timeout(60)
async def test_raw_connection_without_reauthentication_is_closed_after_the_session(
    reauth_kafka: KafkaCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ReauthSchedule, "delay", lambda self: None)
    conn = await raw_connection(reauth_kafka, "SCRAM-SHA-256")
    try:
        await conn.send(MetadataRequest(topics=[]))
        await asyncio.sleep(MAX_REAUTH_MS / 1000 + 0.5)
        with pytest.raises(KafkaConnectionError):
            await conn.send(MetadataRequest(topics=[]))
        assert conn.closed
    finally:
        await conn.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("later", ["expired", "raises"])
async def test_failed_reauthentication_closes_the_connection_typed_and_logged(
    reauth_kafka: KafkaCluster, later: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="aiokafka.net.failure_log")
    tokens = FirstTokenOnly(later)
    conn = await raw_connection(reauth_kafka, "OAUTHBEARER", tokens)
    errors: list[BaseException] = []
    try:
        until = time.monotonic() + 2 * TOKEN_LIFETIME_S
        await asyncio.gather(*(hammer(conn, until, errors) for _ in range(3)))
        assert conn.closed
        assert tokens.calls == 2
    finally:
        await conn.close()
    error = conn.close_error
    assert isinstance(error, AuthenticationFailedError), repr(error)
    assert "re-authentication to" in str(error) and "OAUTHBEARER" in str(error)
    if later == "raises":
        assert "identity provider unreachable" in str(error)
    else:
        assert "SASL OAUTHBEARER authentication" in str(error)  # the broker's rejection
    assert not error.retriable
    # Requests in flight or held back get a retriable error: they did not fail
    # authentication, and a new connection is where they belong.
    assert len(errors) == 3
    assert all(isinstance(e, KafkaConnectionError) for e in errors), errors
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "AuthenticationFailedError" in warnings[0] and "re-authentication" in warnings[0]
    assert reauth_tasks() == []
