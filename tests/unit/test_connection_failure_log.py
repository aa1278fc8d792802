"""The logging policy for broker failures (net/failure_log.py) and who reports to it.

The policy itself is pure (a fake clock); the connection's reporting is checked
against scripted peers on loopback for what a real broker never does. The same policy
against the real broker, through framing faults, is in
tests/integration/test_connection_faults_logging.py.
"""

from __future__ import annotations

import asyncio
import logging
import ssl

import pytest

from aiokafka.cluster.connections import ConnectionPool
from aiokafka.errors import (
    CorrelationIdError,
    KafkaConnectionError,
    KafkaProtocolError,
    RequestTimedOutError,
)
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.net.failure_log import FailureLog
from aiokafka.net.secret import Secret
from aiokafka.protocol.messages import MetadataRequest, MetadataResponse
from tests.support.fake_broker import FakeBroker, response_frame

LOGGER = "aiokafka.net.failure_log"
BROKER = "10.0.0.1:9092 (node 1)"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]


def test_first_failure_warns_repeats_are_debug_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, LOGGER)
    clock = Clock()
    flog = FailureLog(interval_s=60, clock=clock)
    flog.failure(BROKER, KafkaConnectionError("connection to x closed by the peer"))
    for _ in range(29):
        clock.now += 1
        flog.failure(BROKER, KafkaConnectionError("connection to x closed by the peer"))
    [warning] = records(caplog, logging.WARNING)
    assert BROKER in warning and "KafkaConnectionError: connection to x closed" in warning
    assert len(records(caplog, logging.DEBUG)) == 29
    # Another kind on the same broker, and the same kind on another broker: new WARNINGs.
    flog.failure(BROKER, CorrelationIdError("sent correlation id 9"))
    flog.failure("10.0.0.2:9092 (node 2)", KafkaConnectionError("refused"))
    assert len(records(caplog, logging.WARNING)) == 3
    # After the interval, the next one warns again and says how many were held back.
    clock.now += 31
    flog.failure(BROKER, KafkaConnectionError("connection to x closed by the peer"))
    last = records(caplog, logging.WARNING)[-1]
    assert "29 more in the last 60 s" in last
    assert flog.failures(BROKER) == 32


def test_recovery_is_info_once_per_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, LOGGER)
    clock = Clock()
    flog = FailureLog(interval_s=60, clock=clock)
    flog.success(BROKER)  # nothing failed: nothing to say
    assert not caplog.records
    for _ in range(3):
        flog.failure(BROKER, RequestTimedOutError("no response within 1000 ms"))
    flog.success(BROKER)
    assert records(caplog, logging.INFO) == [
        f"Connection to broker {BROKER} recovered after 3 failures"
    ]
    assert flog.failures(BROKER) == 0
    # Flapping within the interval: the repeat is DEBUG, and so is its recovery.
    caplog.clear()
    clock.now += 5
    flog.failure(BROKER, RequestTimedOutError("no response within 1000 ms"))
    flog.success(BROKER)
    assert not records(caplog, logging.WARNING) and not records(caplog, logging.INFO)
    assert "recovered after 1 failure" in records(caplog, logging.DEBUG)[-1]


async def test_connection_reports_protocol_failure_and_later_success(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "aiokafka")
    answers = ["negative", "negative", "good"]

    async def answer(writer: asyncio.StreamWriter, api_key: int, version: int, corr: int) -> None:
        if answers.pop(0) == "negative":
            writer.write((-1).to_bytes(4, "big", signed=True))
        else:
            body = MetadataResponse().encode(version)
            writer.write(response_frame(api_key, version, corr, body))

    flog = FailureLog()
    async with FakeBroker(answer) as broker:
        for _ in range(3):
            conn = AIOKafkaConnection(
                "127.0.0.1", broker.port, ConnectionConfig(), node_id=5, failure_log=flog
            )
            await conn.connect()
            try:
                await conn.send(MetadataRequest(topics=None))
            except KafkaProtocolError:
                pass
            await conn.close()
    peer = f"127.0.0.1:{broker.port} (node 5)"
    [warning] = records(caplog, logging.WARNING)
    assert peer in warning and "invalid response frame size -1" in warning
    assert records(caplog, logging.INFO) == [
        f"Connection to broker {peer} recovered after 2 failures"
    ]


async def test_idle_close_by_the_broker_and_requested_close_are_not_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "aiokafka")

    async def unused(*_: object) -> None:
        raise AssertionError("no request expected")

    async with FakeBroker(unused) as broker:
        flog = FailureLog()
        conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(), failure_log=flog)
        await conn.connect()
        await conn.close()
        conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(), failure_log=flog)
        await conn.connect()
        broker.close_connections()
        for _ in range(100):
            if conn.closed:
                break
            await asyncio.sleep(0.05)
        assert conn.closed
        await conn.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("closed by the broker" in m for m in records(caplog, logging.INFO))


def test_sasl_plain_over_plaintext_warns_once_per_pool(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "aiokafka")

    def pool(protocol: str, mechanism: str = "PLAIN") -> ConnectionPool:
        config = ConnectionConfig(
            security_protocol=protocol,
            sasl_mechanism=mechanism,
            sasl_plain_username="u",
            sasl_plain_password=Secret("p"),
            ssl_context=ssl.create_default_context() if protocol.endswith("SSL") else None,
        )
        return ConnectionPool(
            config, reconnect_backoff_ms=0, reconnect_backoff_max_ms=0, connections_max_idle_ms=1
        )

    plain = pool("SASL_PLAINTEXT")
    for node in range(3):
        plain.connection("127.0.0.1", 1, node_id=node)
    [warning] = records(caplog, logging.WARNING)
    assert "unencrypted" in warning and "SASL_SSL" in warning and "'p'" not in warning
    pool("SASL_PLAINTEXT").connection("127.0.0.1", 1, node_id=0)  # another client
    assert len(records(caplog, logging.WARNING)) == 2
    for quiet in (pool("SASL_SSL"), pool("SASL_PLAINTEXT", "SCRAM-SHA-256")):
        quiet.connection("127.0.0.1", 1, node_id=0)
    assert len(records(caplog, logging.WARNING)) == 2
