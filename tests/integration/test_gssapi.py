"""SASL GSSAPI for real: an MIT Kerberos KDC on 127.0.0.1 and a broker listener that
accepts only Kerberos.

The realm (``tools/kerberos``) lives in a temporary directory: a KDC from Debian's
``krb5-kdc`` package, the broker's ``kafka/localhost`` keytab and a client keytab. The
broker is a separate rig cluster with the extra ``GSSAPI`` listener (SASL_PLAINTEXT,
Java's ``Krb5LoginModule`` from the keytab). The client is aiokafka with the ``gssapi``
package, which takes its initial credentials from the client keytab
(``KRB5_CLIENT_KTNAME``) into a per-test credential cache (``KRB5CCNAME``).

Skipped, with the reason, only where the KDC programs or the ``gssapi`` package are
not installed (``make install-kerberos`` installs them where it can).
"""

from __future__ import annotations

import importlib.util
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import AuthenticationFailedError, UnsupportedSaslMechanismError
from aiokafka.structs import TopicPartition
from tools.kafka.rig import KafkaCluster, KafkaStartError
from tools.kerberos import GSSAPI_LISTENER, GssapiListener, MiniKdc, kdc_missing_reason

START_TIMEOUT = float(os.environ.get("AIOKAFKA_RIG_START_TIMEOUT", "90"))
SERVICE = "kafka/localhost"
CLIENT = "aiokafka-client"
# Failures must be reported at once, not after retries up to a request timeout.
FAIL_FAST_S = 10.0


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniKdc]:
    reason = kdc_missing_reason()
    if reason is not None:
        pytest.skip(reason)
    if importlib.util.find_spec("gssapi") is None:
        pytest.skip(
            "the gssapi package is not installed (`make install-kerberos`, or "
            "pip install 'aiokafka[gssapi]' with libkrb5-dev present)"
        )
    realm = MiniKdc(tmp_path_factory.mktemp("kdc")).start()
    yield realm
    realm.stop()


@pytest.fixture(scope="module")
def client_keytab(kdc: MiniKdc) -> Path:
    return kdc.add_principal(CLIENT)


@pytest.fixture(scope="module")
def kerberized(kdc: MiniKdc) -> Iterator[KafkaCluster]:
    """One broker with PLAINTEXT (for the rig) and the Kerberos-only GSSAPI listener."""
    keytab = kdc.add_principal(SERVICE)
    listener = GssapiListener(keytab, kdc.principal(SERVICE), kdc.krb5_conf)
    cluster = KafkaCluster(1, listeners=["PLAINTEXT"], gssapi=listener, label="gssapi")
    try:
        cluster.start(timeout=START_TIMEOUT)
    except KafkaStartError as exc:
        pytest.fail(f"Kafka with a GSSAPI listener did not start:\n{exc}", pytrace=False)
    yield cluster
    cluster.stop()


def _use_credentials(
    monkeypatch: pytest.MonkeyPatch, kdc: MiniKdc, keytab: Path | None, tmp_path: Path
) -> None:
    for name, value in kdc.client_env(keytab, tmp_path / "ccache").items():
        monkeypatch.setenv(name, value)


def _options(cluster: KafkaCluster, **extra: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap(GSSAPI_LISTENER),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_service_name": "kafka",
        # The broker listens on 127.0.0.1; its principal's host part is "localhost".
        "sasl_kerberos_domain_name": "localhost",
        "request_timeout_ms": 15000,
    }
    options.update(extra)
    return options


@pytest.mark.timeout(120)
async def test_produce_and_consume_through_the_kerberos_listener(
    kdc: MiniKdc,
    kerberized: KafkaCluster,
    client_keytab: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _use_credentials(monkeypatch, kdc, client_keytab, tmp_path)
    topic = kerberized.create_topic(f"gssapi-{uuid.uuid4().hex[:8]}")
    values = [b"kerberos-%d" % i for i in range(20)]

    producer = AIOKafkaProducer(**_options(kerberized), acks="all")
    await producer.start()
    try:
        for value in values:
            await producer.send(topic, value, key=b"k")
        await producer.flush()
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(**_options(kerberized), auto_offset_reset="earliest")
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < len(values) and time.monotonic() < deadline:
            batches = await consumer.getmany(tp, timeout_ms=1000)
            got += [record.value for record in batches.get(tp, [])]
    finally:
        await consumer.stop()
    assert got == values
    # The KDC really issued our client a ticket for the broker's service principal.
    log = kdc.log_file.read_text(errors="replace")
    issued = f"{kdc.principal(CLIENT)} for {kdc.principal(SERVICE)}"
    assert any(
        "TGS_REQ" in line and "ISSUE" in line and issued in line for line in log.splitlines()
    )


@pytest.mark.timeout(60)
async def test_unknown_service_principal_fails_fast_and_typed(
    kdc: MiniKdc,
    kerberized: KafkaCluster,
    client_keytab: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _use_credentials(monkeypatch, kdc, client_keytab, tmp_path)
    producer = AIOKafkaProducer(**_options(kerberized, sasl_kerberos_service_name="nosuch"))
    start = time.monotonic()
    try:
        with pytest.raises(AuthenticationFailedError) as info:
            await producer.start()
    finally:
        await producer.stop()
    assert time.monotonic() - start < FAIL_FAST_S
    message = str(info.value)
    assert "GSSAPI" in message
    assert f"nosuch/localhost@{kdc.realm} not found in Kerberos database" in message
    assert not info.value.retriable


@pytest.mark.timeout(60)
async def test_missing_ticket_fails_fast_and_typed(
    kdc: MiniKdc, kerberized: KafkaCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_credentials(monkeypatch, kdc, None, tmp_path)  # no keytab, empty cache
    consumer = AIOKafkaConsumer(**_options(kerberized))
    start = time.monotonic()
    try:
        with pytest.raises(AuthenticationFailedError, match="No Kerberos credentials") as info:
            await consumer.start()
    finally:
        await consumer.stop()
    assert time.monotonic() - start < FAIL_FAST_S
    assert "GSSAPI" in str(info.value)
    assert not info.value.retriable


@pytest.mark.timeout(60)
async def test_the_kerberos_listener_offers_only_gssapi(
    kerberized: KafkaCluster, client_keytab: Path
) -> None:
    # client_keytab: the realm exists; the client does not even reach Kerberos here.
    producer = AIOKafkaProducer(
        **_options(
            kerberized,
            sasl_mechanism="PLAIN",
            sasl_plain_username="plain-user",
            sasl_plain_password="plain-secret",
        )
    )
    try:
        with pytest.raises(UnsupportedSaslMechanismError, match="enabled: GSSAPI"):
            await producer.start()
    finally:
        await producer.stop()
