"""Against the real broker: no password or token in any log record (DEBUG included)
or in any exception of a successful or a failed SASL authentication.

Every Python log record of the run is captured at DEBUG and formatted as a handler
would (message with its arguments, traceback text); every exception raised is
formatted with its whole ``__cause__``/``__context__`` chain.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import traceback
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.admin import AIOKafkaAdminClient, UserScramCredentialUpsertion
from aiokafka.cluster import AIOKafkaClient
from aiokafka.errors import KafkaError, SaslAuthenticationFailed
from aiokafka.helpers import create_ssl_context
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster

PROTOCOLS = ["SASL_PLAINTEXT", "SASL_SSL"]
# Generous: two cores shared with other test runs.
DEADLINE_S = 60


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


class DistinctJwt(AbstractTokenProvider):
    """An unsigned JWT (the rig's broker accepts alg "none") with a distinctive id."""

    def __init__(self, lifetime_s: float) -> None:
        super().__init__()
        now = time.time()
        self.jti = "jti-" + uuid.uuid4().hex
        self.claims = _b64(
            {"sub": "oauth-user", "iat": now - 10, "exp": now + lifetime_s, "jti": self.jti}
        )
        self.value = f"{_b64({'alg': 'none'})}.{self.claims}."

    async def token(self) -> str:
        return self.value


def _options(kafka: KafkaCluster, protocol: str, mechanism: str, **extra: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(protocol),
        "security_protocol": protocol,
        "sasl_mechanism": mechanism,
        "request_timeout_ms": 15000,
    }
    if protocol == "SASL_SSL":
        options["ssl_context"] = create_ssl_context(cafile=kafka.ca_file)
    options.update(extra)
    return options


def _exception_texts(exc: BaseException) -> list[str]:
    out = ["".join(traceback.format_exception(exc))]
    seen: list[BaseException] = []
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        out += [str(e), repr(e), repr(e.args)]
        stack += [e.__cause__, e.__context__]
    return out


def assert_not_in_exception(exc: BaseException, secrets: Iterable[str]) -> None:
    for text in _exception_texts(exc):
        for secret in secrets:
            assert secret not in text, text


def assert_not_logged(records: list[logging.LogRecord], secrets: Iterable[str]) -> None:
    formatter = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
    secrets = list(secrets)
    for record in records:
        texts = [formatter.format(record), repr(record.msg), repr(record.args)]
        for secret in secrets:
            for text in texts:
                assert secret not in text, text


def assert_debug_captured(records: list[logging.LogRecord]) -> None:
    # The capture is real: aiokafka's DEBUG lines about the authentication are there.
    assert any(
        r.levelno == logging.DEBUG and r.getMessage().startswith("Authenticated to")
        for r in records
    ), [r.getMessage() for r in records]


async def _fails(start: Callable[[], Any]) -> BaseException:
    with pytest.raises(SaslAuthenticationFailed) as info:
        await asyncio.wait_for(start(), DEADLINE_S)
    return info.value


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_password_in_no_log_or_error(
    kafka: KafkaCluster,
    new_topic: Callable[..., str],
    caplog: pytest.LogCaptureFixture,
    protocol: str,
    mechanism: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    user, password = kafka.users[mechanism]
    wrong = "wrong-" + uuid.uuid4().hex
    topic = new_topic()
    creds = {"sasl_plain_username": user}

    producer = AIOKafkaProducer(
        **_options(kafka, protocol, mechanism, sasl_plain_password=password, **creds)
    )
    await asyncio.wait_for(producer.start(), DEADLINE_S)
    try:
        meta = await asyncio.wait_for(producer.send_and_wait(topic, b"v"), DEADLINE_S)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        **_options(kafka, protocol, mechanism, sasl_plain_password=password, **creds)
    )
    await asyncio.wait_for(consumer.start(), DEADLINE_S)
    try:
        tp = TopicPartition(topic, meta.partition)
        consumer.assign([tp])
        consumer.seek(tp, meta.offset)
        got = await asyncio.wait_for(consumer.getone(), DEADLINE_S)
        assert got.value == b"v"
    finally:
        await consumer.stop()

    errors = []
    bad = _options(kafka, protocol, mechanism, sasl_plain_password=wrong, **creds)
    producer = AIOKafkaProducer(**bad)
    errors.append(await _fails(producer.start))
    await producer.stop()
    client = AIOKafkaClient(**bad)
    errors.append(await _fails(client.start))
    await client.close()
    admin = AIOKafkaAdminClient(**bad)
    errors.append(await _fails(admin.start))
    await admin.close()

    for exc in errors:
        assert mechanism in str(exc)
        assert_not_in_exception(exc, [password, wrong])
    assert_debug_captured(caplog.records)
    assert_not_logged(caplog.records, [password, wrong])


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_oauth_token_in_no_log_or_error(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    caplog.set_level(logging.DEBUG)
    good, expired = DistinctJwt(3600), DistinctJwt(-3600)
    secrets = [good.value, good.claims, expired.value, expired.claims]

    options = _options(kafka, protocol, "OAUTHBEARER", sasl_oauth_token_provider=good)
    async with AIOKafkaAdminClient(**options) as admin:
        assert (await asyncio.wait_for(admin.describe_cluster(), DEADLINE_S)).brokers

    options = _options(kafka, protocol, "OAUTHBEARER", sasl_oauth_token_provider=expired)
    errors = []
    client = AIOKafkaClient(**options)
    errors.append(await _fails(client.start))
    await client.close()
    producer = AIOKafkaProducer(**options)
    errors.append(await _fails(producer.start))
    await producer.stop()

    for exc in errors:
        assert "OAUTHBEARER" in str(exc)
        assert_not_in_exception(exc, secrets)
    assert_debug_captured(caplog.records)
    assert_not_logged(caplog.records, secrets)


async def _login(kafka: KafkaCluster, mechanism: str, user: str, password: str) -> bool:
    options = _options(
        kafka,
        "SASL_SSL",
        mechanism,
        sasl_plain_username=user,
        sasl_plain_password=password,
        request_timeout_ms=5000,
    )
    client = AIOKafkaClient(**options)
    try:
        await asyncio.wait_for(client.start(), DEADLINE_S)
    except SaslAuthenticationFailed as exc:
        assert_not_in_exception(exc, [password])
        return False
    finally:
        await client.close()
    return True


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_admin_scram_upsert_password_in_no_log_or_error(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, mechanism: str
) -> None:
    caplog.set_level(logging.DEBUG)
    admin_user, admin_password = kafka.users["SCRAM-SHA-512"]
    user = f"secret-test-{uuid.uuid4().hex[:8]}"
    password = "new-pw-" + uuid.uuid4().hex
    wrong = "wrong-" + uuid.uuid4().hex
    upsert = UserScramCredentialUpsertion(user, mechanism, password)
    salted = upsert.salted_password()
    secrets = [password, wrong, admin_password, salted.hex(), base64.b64encode(salted).decode()]

    options = _options(
        kafka,
        "SASL_SSL",
        "SCRAM-SHA-512",
        sasl_plain_username=admin_user,
        sasl_plain_password=admin_password,
    )
    async with AIOKafkaAdminClient(**options) as admin:
        await asyncio.wait_for(admin.alter_user_scram_credentials([upsert]), DEADLINE_S)
    # The credential reaches the broker through the metadata log a moment later.
    deadline = time.monotonic() + DEADLINE_S
    while not await _login(kafka, mechanism, user, password):
        assert time.monotonic() < deadline, "the new SCRAM user never authenticated"
        await asyncio.sleep(0.2)
    assert not await _login(kafka, mechanism, user, wrong)

    assert_debug_captured(caplog.records)
    assert_not_logged(caplog.records, secrets)
    # The salted password is not in any record in its raw bytes form either.
    assert not any(repr(salted)[2:-1] in logging.Formatter().format(r) for r in caplog.records)


def test_kafka_error_texts_checked() -> None:
    # The exception walk follows causes and contexts, so a secret deep in the chain is
    # found (the assertions above are not vacuous).
    try:
        try:
            raise ValueError("inner pw-XYZ")
        except ValueError as inner:
            raise KafkaError("outer") from inner
    except KafkaError as exc:
        with pytest.raises(AssertionError):
            assert_not_in_exception(exc, ["pw-XYZ"])
