"""AIOKafkaClient against real brokers: bootstrap, metadata, routing, failover, shutdown."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.cluster import AIOKafkaClient, CoordinatorType
from aiokafka.cluster import connections as connections_module
from aiokafka.errors import KafkaConnectionError, for_code
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.protocol.messages import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
    MetadataRequest,
)
from aiokafka.structs import TopicPartition
from tests.support.fault_proxy import FaultProxy
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]


def list_offsets(tp: TopicPartition) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        replica_id=-1,
        topics=[
            ListOffsetsTopic(
                name=tp.topic,
                partitions=[ListOffsetsPartition(partition_index=tp.partition, timestamp=-1)],
            )
        ],
    )


def partition_error(response: Any) -> int:
    return int(response.topics[0].partitions[0].error_code)


# -- single broker ------------------------------------------------------------------


async def test_start_and_close_leave_nothing_behind(
    kafka: KafkaCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="aiokafka")
    before = asyncio.all_tasks()
    client = AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers)
    assert asyncio.all_tasks() == before  # the constructor starts nothing
    await client.start()
    assert client.cluster.cluster_id
    assert set(client.cluster.brokers) == {1}
    assert await client.ready(1)
    await client.close()
    await client.close()  # idempotent
    await asyncio.sleep(0)
    assert asyncio.all_tasks() == before
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_unreachable_bootstrap_fails_clearly(kafka: KafkaCluster) -> None:
    # A refused port and a host that accepts but never answers (stalled proxy).
    host, port = kafka.bootstrap_servers.rsplit(":", 1)
    async with FaultProxy(host, int(port)) as proxy:
        proxy.stall()
        servers = f"127.0.0.1:1,{proxy.address}"
        client = AIOKafkaClient(bootstrap_servers=servers, request_timeout_ms=1000)
        start = time.monotonic()
        with pytest.raises(KafkaConnectionError, match="Unable to bootstrap") as info:
            await client.start()
        assert time.monotonic() - start < 2.0
        assert "127.0.0.1:1" in str(info.value)
        assert proxy.address in str(info.value)
        await client.close()


async def test_bootstrap_tries_every_resolved_address(
    kafka: KafkaCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bootstrap name resolves to four addresses, in this order: one refusing
    # (bound, never listening: the kernel answers RST), the same one again (resolvers
    # repeat an address per socket type; it is tried once), one that accepts and hangs
    # up (EOF during ApiVersions), then the real broker. Every one is on loopback and on
    # the broker's port, since a bootstrap name carries a single port.
    name = "kafka-bootstrap.invalid"
    _, port_text = kafka.bootstrap_servers.rsplit(":", 1)
    port = int(port_text)
    refusing = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    refusing.bind(("127.0.0.2", port))  # held, so nothing else can listen there meanwhile
    accepted: list[str] = []

    def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer.get_extra_info("sockname")[0])
        writer.close()

    hanging_up = await asyncio.start_server(hang_up, "127.0.0.3", port)
    loop = asyncio.get_running_loop()
    real_getaddrinfo = loop.getaddrinfo
    lookups: list[tuple[Any, Any]] = []

    async def fake_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != name:
            return await real_getaddrinfo(host, port, *args, **kwargs)
        lookups.append((host, port))
        stream = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
        addrs = ["127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.1"]
        return [(*stream, (addr, port)) for addr in addrs]

    tried: list[tuple[str, int, object]] = []

    class RecordingConnection(AIOKafkaConnection):
        async def connect(self) -> None:
            tried.append((self.host, self.port, self._server_hostname))
            await super().connect()

    monkeypatch.setattr(loop, "getaddrinfo", fake_getaddrinfo)
    # The pool makes every connection, bootstrap ones included.
    monkeypatch.setattr(connections_module, "AIOKafkaConnection", RecordingConnection)
    try:
        async with AIOKafkaClient(
            bootstrap_servers=f"{name}:{port}", request_timeout_ms=10000
        ) as client:
            assert lookups == [(name, port)]
            assert tried == [
                ("127.0.0.2", port, name),
                ("127.0.0.3", port, name),
                ("127.0.0.1", port, name),
            ]
            assert accepted == ["127.0.0.3"]
            assert client.cluster.cluster_id
            assert set(client.cluster.brokers) == {1}
            response = await client.send(1, MetadataRequest(topics=[]))
            assert response.cluster_id == client.cluster.cluster_id
    finally:
        hanging_up.close()
        await hanging_up.wait_closed()
        refusing.close()


async def test_bootstrap_lists_every_resolved_address_that_failed(
    kafka: KafkaCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "kafka-bootstrap.invalid"
    port = int(kafka.bootstrap_servers.rsplit(":", 1)[1])
    refusing = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(2)]
    for i, sock in enumerate(refusing):
        sock.bind((f"127.0.0.{i + 2}", port))
    loop = asyncio.get_running_loop()

    async def fake_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        assert host == name
        stream = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
        return [(*stream, ("127.0.0.2", port)), (*stream, ("127.0.0.3", port))]

    monkeypatch.setattr(loop, "getaddrinfo", fake_getaddrinfo)
    client = AIOKafkaClient(bootstrap_servers=f"{name}:{port}", request_timeout_ms=5000)
    try:
        start = time.monotonic()
        with pytest.raises(KafkaConnectionError, match="Unable to bootstrap") as info:
            await client.start()
        assert time.monotonic() - start < 5
        message = str(info.value)
        assert f"{name} (127.0.0.2):{port}" in message
        assert f"{name} (127.0.0.3):{port}" in message
    finally:
        await client.close()
        for sock in refusing:
            sock.close()


async def test_metadata_refresh_is_coalesced_and_periodic(kafka: KafkaCluster) -> None:
    async with AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap_servers, metadata_max_age_ms=300
    ) as client:
        gen = client.cluster.generation
        results = await asyncio.gather(*(client.refresh_metadata() for _ in range(10)))
        # One refresh for all ten, also under an eager task factory
        # (AIOKAFKA_TEST_LOOP=eager), where gather runs each call at once and the
        # refresh task starts inside the first: it yields a turn before sending.
        assert client.cluster.generation == gen + 1
        assert all(r is results[0] for r in results)
        # The maintenance task refreshes every metadata_max_age_ms.
        await asyncio.sleep(1.0)
        assert client.cluster.generation >= gen + 3


async def test_topics_and_unknown_topic(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=3)
    async with AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap_servers, allow_auto_topic_creation=False
    ) as client:
        await client.add_topic(topic)
        assert client.cluster.partitions_for_topic(topic) == frozenset({0, 1, 2})
        assert client.cluster.topic_id(topic) is not None
        await client.add_topic("no-such-topic-xyz")
        assert client.cluster.topic_error("no-such-topic-xyz") == 3
        assert client.cluster.partitions_for_topic("no-such-topic-xyz") is None
        assert client.topics == {topic, "no-such-topic-xyz"}


async def test_leader_hint_and_controller_routing(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    tp = TopicPartition(topic, 0)
    async with AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers) as client:
        await client.add_topic(topic)
        epoch = client.cluster.leader_epoch(tp)
        leader = client.leader_for(tp)
        assert not client.apply_leader_hint(tp, leader, epoch)  # not newer
        assert client.apply_leader_hint(tp, leader, epoch + 1)
        assert client.cluster.leader_epoch(tp) == epoch + 1
        response = await client.send_to_controller(MetadataRequest(topics=[]))
        assert response.cluster_id == client.cluster.cluster_id
        response = await client.send_to_leader(tp, list_offsets(tp))
        assert partition_error(response) == 0


async def test_coordinator_lookup(kafka: KafkaCluster) -> None:
    async with AIOKafkaClient(bootstrap_servers=kafka.bootstrap_servers) as client:
        deadline = time.monotonic() + 30  # the offsets topic may still be loading
        key = ("test-group-coord", CoordinatorType.GROUP)
        node = await client.call_with_retry(
            lambda: client.coordinator_for(*key), deadline, coordinator=key
        )
        assert node == 1
        many = await client.call_with_retry(
            lambda: client.coordinators_for(["g1", "g2", "g3"]), deadline
        )
        assert many == {"g1": 1, "g2": 1, "g3": 1}
        txn = await client.call_with_retry(
            lambda: client.coordinator_for("txn-1", CoordinatorType.TRANSACTION), deadline
        )
        assert txn == 1


async def test_idle_connections_are_closed(kafka: KafkaCluster) -> None:
    async with AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap_servers, connections_max_idle_ms=200
    ) as client:
        await client.ready(1)
        assert client._pool.connected(1) is not None
        await asyncio.sleep(1.0)
        assert client._pool.connected(1) is None
        # ... and a new request simply reconnects.
        response = await client.send(1, MetadataRequest(topics=[]))
        assert response.cluster_id


# -- three brokers ------------------------------------------------------------------


@pytest.mark.cluster
async def test_cluster_metadata_and_leader_routing(
    kafka_cluster: KafkaCluster, new_topic: NewTopic
) -> None:
    topic = new_topic(partitions=6, replication_factor=3, cluster=kafka_cluster)
    async with AIOKafkaClient(bootstrap_servers=kafka_cluster.bootstrap_servers) as client:
        await client.add_topic(topic)
        md = client.cluster
        assert set(md.brokers) == {n.node_id for n in kafka_cluster.nodes}
        assert md.controller_id in md.brokers
        leaders = set()
        for p in range(6):
            tp = TopicPartition(topic, p)
            part = md.partition(tp)
            assert part is not None
            assert len(part.replicas) == 3
            assert part.leader in part.replicas
            leaders.add(part.leader)
            # The leader answers; a follower refuses with NOT_LEADER_OR_FOLLOWER.
            assert partition_error(await client.send_to_leader(tp, list_offsets(tp))) == 0
            follower = next(r for r in part.replicas if r != part.leader)
            assert partition_error(await client.send(follower, list_offsets(tp))) == 6
        assert len(leaders) > 1  # leadership is spread over the brokers


@pytest.mark.cluster
async def test_leader_failover(kafka_cluster: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic(partitions=1, replication_factor=3, cluster=kafka_cluster)
    tp = TopicPartition(topic, 0)
    async with AIOKafkaClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        request_timeout_ms=5000,
        retry_backoff_ms=200,
    ) as client:
        await client.add_topic(topic)
        old_leader = client.leader_for(tp)
        used: list[int] = []

        async def attempt() -> Any:
            leader = client.leader_for(tp)
            used.append(leader)
            response = await client.send(leader, list_offsets(tp))
            code = partition_error(response)
            if code:
                raise for_code(code)(f"ListOffsets {tp} on node {leader}")
            return response

        await attempt()
        gen = client.cluster.generation
        kafka_cluster.kill(old_leader)
        try:
            start = time.monotonic()
            await client.call_with_retry(attempt, time.monotonic() + 45)
            elapsed = time.monotonic() - start
            new_leader = client.leader_for(tp)
            assert new_leader != old_leader
            assert used[-1] == new_leader
            assert client.cluster.generation > gen  # found through a metadata refresh
            assert elapsed < 45
        finally:
            await asyncio.to_thread(kafka_cluster.restart, old_leader)
