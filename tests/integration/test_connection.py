"""One connection against the real single-node broker (and through the fault proxy)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.cluster.connections import ConnectionPool
from aiokafka.errors import (
    AuthenticationFailedError,
    KafkaConnectionError,
    RequestTimedOutError,
    UnsupportedVersionError,
)
from aiokafka.helpers import create_ssl_context
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.protocol.messages import (
    REQUEST_TYPES,
    ApiVersionsRequest,
    MetadataRequest,
    MetadataRequestTopic,
)
from tests.support.fault_proxy import FaultProxy
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def split(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host, int(port)


async def test_api_versions_negotiation_logged(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="aiokafka.net.connection")
    conn = AIOKafkaConnection(*split(kafka.bootstrap_servers), node_id=1)
    await conn.connect()
    try:
        table = conn.api_versions
        # Kafka 4.x answers the newest ApiVersions version the codec knows.
        assert table.broker_range(ApiVersionsRequest.API_KEY) is not None
        for api_key, request_type in REQUEST_TYPES.items():
            broker = table.broker_range(api_key)
            if broker is None or broker[0] > request_type.MAX_VERSION:
                continue
            expected = min(request_type.MAX_VERSION, broker[1])
            assert conn.api_version(api_key) == expected
        metadata_version = conn.api_version(MetadataRequest.API_KEY)
        messages = [
            r.getMessage() for r in caplog.records if "Negotiated API versions" in r.message
        ]
        assert len(messages) == 1
        assert f"Metadata=v{metadata_version}" in messages[0]
        assert f"ApiVersions v{ApiVersionsRequest.MAX_VERSION}" in messages[0]
        response = await conn.send(MetadataRequest(topics=None))
        assert response.cluster_id
        assert [b.node_id for b in response.brokers] == [1]
        # A cap below the broker's minimum is a typed error; the connection survives.
        with pytest.raises(UnsupportedVersionError):
            await conn.send(MetadataRequest(topics=None), max_version=-1)
        assert conn.connected
    finally:
        await conn.close()


async def test_pipelined_requests(kafka: KafkaCluster) -> None:
    conn = AIOKafkaConnection(
        *split(kafka.bootstrap_servers),
        ConnectionConfig(max_in_flight_requests_per_connection=3),
    )
    await conn.connect()
    try:
        responses = await asyncio.wait_for(
            asyncio.gather(*(conn.send(MetadataRequest(topics=[])) for _ in range(20))), 10
        )
        assert len({r.cluster_id for r in responses}) == 1
        assert conn.in_flight == 0
    finally:
        await conn.close()


async def test_a_fetch_answered_while_the_loop_stalled_keeps_the_connection(
    kafka: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    # A consumer whose event loop stops for longer than request_timeout_ms with a Fetch
    # in flight (a Spark worker's pooled consumer between tasks, a paused process):
    # the broker answered after fetch_max_wait_ms, so the request did not time out.
    topic = new_topic()
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"first")
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        request_timeout_ms=1000,
        fetch_max_wait_ms=100,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, 0)])
        first = await consumer.getmany(timeout_ms=5000)
        assert [r.value for records in first.values() for r in records] == [b"first"]
        await asyncio.sleep(0.05)  # the next Fetch is out, waiting at the broker
        caplog.set_level(logging.WARNING, logger="aiokafka")
        time.sleep(2.5)  # noqa: ASYNC251 - the stall itself
        assert await consumer.getmany(timeout_ms=500) == {}
        assert not [r for r in caplog.records if "RequestTimedOutError" in r.getMessage()]
    finally:
        await consumer.stop()


async def test_cut_during_pipelined_requests_fails_all_then_reconnects(
    kafka: KafkaCluster,
) -> None:
    host, port = split(kafka.bootstrap_servers)
    pool = ConnectionPool(
        ConnectionConfig(request_timeout_ms=10000),
        reconnect_backoff_ms=50,
        reconnect_backoff_max_ms=200,
        connections_max_idle_ms=60000,
    )
    async with FaultProxy(host, port) as proxy:
        try:
            conn = await pool.get(1, proxy.host, proxy.port)
            proxy.stall()  # keep the requests in flight
            request = MetadataRequest(topics=[MetadataRequestTopic(name="__nothing")])
            tasks = [asyncio.create_task(conn.send(request)) for _ in range(4)]
            await asyncio.sleep(0.3)
            assert conn.in_flight == 4
            proxy.cut()
            start = time.monotonic()
            results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
            assert time.monotonic() - start < 2
            assert all(isinstance(r, KafkaConnectionError) for r in results), results
            assert all(r.retriable for r in results if isinstance(r, KafkaConnectionError))
            assert conn.closed
            proxy.resume()
            # The next request gets a new connection.
            conn2 = await pool.get(1, proxy.host, proxy.port)
            assert conn2 is not conn
            response = await asyncio.wait_for(conn2.send(MetadataRequest(topics=[])), 5)
            assert response.cluster_id
            assert proxy.connections_total == 2
        finally:
            await pool.close()


async def test_stalled_broker_times_out(kafka: KafkaCluster) -> None:
    host, port = split(kafka.bootstrap_servers)
    async with FaultProxy(host, port) as proxy:
        conn = AIOKafkaConnection(proxy.host, proxy.port, ConnectionConfig(request_timeout_ms=500))
        await conn.connect()
        try:
            proxy.stall()
            first = asyncio.create_task(conn.send(MetadataRequest(topics=[])))
            await asyncio.sleep(0.1)
            second = asyncio.create_task(conn.send(MetadataRequest(topics=[])))
            start = time.monotonic()
            results = await asyncio.gather(first, second, return_exceptions=True)
            assert time.monotonic() - start < 1.5
            assert isinstance(results[0], RequestTimedOutError)
            assert isinstance(results[1], KafkaConnectionError)
        finally:
            await conn.close()


async def test_ssl_with_rig_ca(kafka: KafkaCluster) -> None:
    ctx = create_ssl_context(cafile=kafka.ca_file)
    config = ConnectionConfig(security_protocol="SSL", ssl_context=ctx)
    conn = AIOKafkaConnection(*split(kafka.bootstrap("SSL")), config)
    await conn.connect()
    try:
        response = await conn.send(MetadataRequest(topics=[]))
        assert response.cluster_id
    finally:
        await conn.close()


async def test_ssl_hostname_mismatch_is_reported(kafka: KafkaCluster) -> None:
    ctx = create_ssl_context(cafile=kafka.ca_file)
    config = ConnectionConfig(security_protocol="SSL", ssl_context=ctx, request_timeout_ms=5000)
    conn = AIOKafkaConnection(
        *split(kafka.bootstrap("SSL")), config, server_hostname="broker.invalid"
    )
    with pytest.raises(AuthenticationFailedError, match="hostname verification failed") as info:
        await conn.connect()
    assert "broker.invalid" in str(info.value)
    assert not info.value.retriable
    assert conn.closed


async def test_ssl_unknown_ca_is_reported(kafka: KafkaCluster) -> None:
    config = ConnectionConfig(
        security_protocol="SSL", ssl_context=create_ssl_context(), request_timeout_ms=5000
    )
    conn = AIOKafkaConnection(*split(kafka.bootstrap("SSL")), config)
    with pytest.raises(AuthenticationFailedError, match="certificate verification failed"):
        await conn.connect()


async def test_ssl_against_plaintext_port(kafka: KafkaCluster) -> None:
    ctx = create_ssl_context(cafile=kafka.ca_file)
    config = ConnectionConfig(security_protocol="SSL", ssl_context=ctx, request_timeout_ms=3000)
    conn = AIOKafkaConnection(*split(kafka.bootstrap_servers), config)
    start = time.monotonic()
    with pytest.raises((AuthenticationFailedError, KafkaConnectionError)):
        await conn.connect()
    assert time.monotonic() - start < 5
