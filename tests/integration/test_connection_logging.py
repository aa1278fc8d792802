"""What operators see in the logs when a broker's answers break, and when SASL PLAIN
sends a password without TLS: the policy of ``aiokafka/net/failure_log.py`` and the
pool's cleartext warning, against the real broker.

Framing faults come from :class:`tests.support.framing_relay.FramingFaultRelay`, which
breaks the real broker's answers (a healthy broker never sends them); recovery is the
real broker answering again through the same relay.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.cluster import AIOKafkaClient
from aiokafka.errors import KafkaError
from aiokafka.helpers import create_ssl_context
from aiokafka.protocol.messages import MetadataRequest
from aiokafka.structs import TopicPartition
from tests.support.framing_relay import FramingFaultRelay
from tests.support.wait import wait_until
from tools.kafka.rig import KafkaCluster

# What the WARNING must say about each fault's cause.
CAUSES = {
    "truncated": "malformed protocol data: MetadataResponse",
    "close_mid_response": "closed by the peer",
    "wrong_correlation_id": "correlation id",
    "negative_length": "invalid response frame size -1",
    "huge_length": "exceeds the limit",
    "garbage": "a Kafka broker",
    "silence": "no response within",
}

ATTEMPTS = 4


def aiokafka_records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("aiokafka") and r.levelno == level]


@pytest.mark.parametrize("fault", sorted(CAUSES))
async def test_burst_of_framing_faults_warns_once_then_recovery_is_info(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, fault: str
) -> None:
    node = kafka.nodes[0]
    async with FramingFaultRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        client = AIOKafkaClient(
            bootstrap_servers=relay.bootstrap_servers,
            request_timeout_ms=1500,  # bounds "silence"
            reconnect_backoff_ms=20,
            reconnect_backoff_max_ms=50,
        )
        await client.start()
        try:
            await client.send(node.node_id, MetadataRequest(topics=[]))  # healthy
            caplog.clear()
            caplog.set_level(logging.DEBUG, "aiokafka")
            relay.fault = fault
            failures = 0
            start = time.monotonic()
            for _ in range(ATTEMPTS):
                try:
                    await client.send(node.node_id, MetadataRequest(topics=[]))
                except KafkaError:
                    failures += 1
            assert failures == ATTEMPTS, "every attempt during the fault fails"
            assert time.monotonic() - start < 60
            assert relay.faulted >= ATTEMPTS

            broker = f"{relay.bootstrap_servers} (node {node.node_id})"
            [warning] = aiokafka_records(caplog, logging.WARNING)
            text = warning.getMessage()
            assert warning.name == "aiokafka.net.failure_log"
            assert broker in text and CAUSES[fault] in text, text
            assert not aiokafka_records(caplog, logging.ERROR)
            # The repeats are there, at DEBUG.
            repeats = [
                r
                for r in aiokafka_records(caplog, logging.DEBUG)
                if r.getMessage().startswith(f"Connection to broker {broker} failed again")
            ]
            assert len(repeats) == ATTEMPTS - 1

            relay.fault = None
            await client.send(node.node_id, MetadataRequest(topics=[]))
            infos = [r.getMessage() for r in aiokafka_records(caplog, logging.INFO)]
            assert f"Connection to broker {broker} recovered after {ATTEMPTS} failures" in infos
            assert len(aiokafka_records(caplog, logging.WARNING)) == 1
        finally:
            await client.close()


def sasl_client(kafka: KafkaCluster, protocol: str) -> AIOKafkaClient:
    user, password = kafka.users["PLAIN"]
    options: dict[str, Any] = {
        "bootstrap_servers": kafka.bootstrap(protocol),
        "security_protocol": protocol,
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        "request_timeout_ms": 10000,
    }
    if protocol == "SASL_SSL":
        options["ssl_context"] = create_ssl_context(cafile=kafka.ca_file)
    return AIOKafkaClient(**options)


def cleartext_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in aiokafka_records(caplog, logging.WARNING)
        if "unencrypted" in r.getMessage()
    ]


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
async def test_sasl_plain_without_tls_warns_once_per_client(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    caplog.set_level(logging.WARNING, "aiokafka")
    node = kafka.nodes[0].node_id
    async with sasl_client(kafka, protocol) as client:
        # Two authenticated connections: bootstrap, then the broker's.
        await client.send(node, MetadataRequest(topics=[]))
        await client.fetch_all_metadata()
        assert client.is_connected(node)
    expected = 1 if protocol == "SASL_PLAINTEXT" else 0
    warnings = cleartext_warnings(caplog)
    assert len(warnings) == expected
    if warnings:
        assert "SASL_SSL" in warnings[0] and kafka.users["PLAIN"][1] not in warnings[0]
    # Once per client: a second client warns again, once.
    async with sasl_client(kafka, protocol) as client:
        await client.send(node, MetadataRequest(topics=[]))
    assert len(cleartext_warnings(caplog)) == 2 * expected


def failure_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in aiokafka_records(caplog, logging.WARNING)
        if r.name == "aiokafka.net.failure_log"
    ]


def recovered(caplog: pytest.LogCaptureFixture, broker: str) -> bool:
    return any(
        r.getMessage().startswith(f"Connection to broker {broker}")
        and " recovered after " in r.getMessage()
        for r in aiokafka_records(caplog, logging.INFO)
    )


async def test_producer_retrying_through_a_fault_warns_once_then_recovers(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    node = kafka.nodes[0]
    async with FramingFaultRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        producer = AIOKafkaProducer(
            bootstrap_servers=relay.bootstrap_servers,
            request_timeout_ms=5000,
            retry_backoff_ms=20,
            reconnect_backoff_ms=20,
            reconnect_backoff_max_ms=50,
        )
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"healthy")
            caplog.clear()
            caplog.set_level(logging.DEBUG, "aiokafka")
            relay.fault = "close_mid_response"
            sent = asyncio.ensure_future(producer.send_and_wait(topic, b"through the fault"))
            await wait_until("the relay faulted 5 times", lambda: relay.faulted >= 5)
            assert not sent.done()
            # The client may reach the same address as node 1 or as bootstrap-0 (its
            # fallback for metadata); the failure log keeps one state per address.
            broker = f"{relay.bootstrap_servers} (node "
            [warning] = failure_warnings(caplog)
            assert broker in warning and "closed by the peer" in warning
            relay.fault = None
            metadata = await asyncio.wait_for(sent, 30)
            assert metadata.topic == topic
            assert recovered(caplog, broker)
            assert len(failure_warnings(caplog)) == 1
        finally:
            await producer.stop()


async def test_consumer_retrying_through_a_fault_warns_once_then_recovers(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    node = kafka.nodes[0]
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"first")
    async with FramingFaultRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            bootstrap_servers=relay.bootstrap_servers,
            auto_offset_reset="earliest",
            request_timeout_ms=5000,
            retry_backoff_ms=20,
            reconnect_backoff_ms=20,
            reconnect_backoff_max_ms=50,
        )
        consumer.assign([TopicPartition(topic, 0)])
        await consumer.start()
        try:
            batch = await consumer.getmany(timeout_ms=10000)
            assert [r.value for rs in batch.values() for r in rs] == [b"first"]
            caplog.clear()
            caplog.set_level(logging.DEBUG, "aiokafka")
            relay.fault = "huge_length"
            await wait_until("the relay faulted 5 times", lambda: relay.faulted >= 5)
            # The client may reach the same address as node 1 or as bootstrap-0 (its
            # fallback for metadata); the failure log keeps one state per address.
            broker = f"{relay.bootstrap_servers} (node "
            [warning] = failure_warnings(caplog)
            assert broker in warning and "exceeds the limit" in warning
            relay.fault = None
            async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
                await producer.send_and_wait(topic, b"second")
            got: list[bytes | None] = []
            deadline = time.monotonic() + 30
            while not got and time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=1000)
                got = [r.value for rs in batch.values() for r in rs]
            assert got == [b"second"]
            assert recovered(caplog, broker)
            assert len(failure_warnings(caplog)) == 1
        finally:
            await consumer.stop()
