"""The test rig itself: every listener of the single node, and the three-node cluster."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError as CKafkaError
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from tools.kafka import wire
from tools.kafka.rig import KafkaCluster

SCRAM_AND_PLAIN = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


def _confluent_admin(kafka: KafkaCluster, listener: str, **conf: Any) -> AdminClient:
    base: dict[str, Any] = {"bootstrap.servers": kafka.bootstrap(listener), "log_level": 0}
    if listener.endswith("SSL"):
        base["ssl.ca.location"] = kafka.ca_file
        base["ssl.endpoint.identification.algorithm"] = "https"
    return AdminClient({**base, **conf})


def _sasl_conf(mechanism: str, username: str, password: str) -> dict[str, Any]:
    return {"sasl.mechanism": mechanism, "sasl.username": username, "sasl.password": password}


# ------------------------------------------------------------------ no broker needed


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_nodes"):
        KafkaCluster(0)
    with pytest.raises(ValueError, match="listeners"):
        KafkaCluster(1, listeners=["QUIC"])
    cluster = KafkaCluster(3)
    assert cluster.listeners == ["PLAINTEXT"]
    with pytest.raises(RuntimeError, match="no SSL"):
        _ = cluster.ca_file


# ------------------------------------------------------------------ single node


def test_plaintext_raw_api_versions_and_metadata(kafka: KafkaCluster) -> None:
    node = kafka.nodes[0]
    versions = wire.api_versions(node.host, node.ports["PLAINTEXT"])
    assert versions[18][1] >= 3  # ApiVersions: flexible versions available
    assert versions[0][1] >= 9  # Produce
    meta = wire.metadata(node.host, node.ports["PLAINTEXT"], topics=[])
    assert meta.broker_ids == {1}
    assert meta.controller_id == 1
    assert meta.brokers[0].host == "127.0.0.1"
    assert meta.brokers[0].port == node.ports["PLAINTEXT"]


def test_every_listener_is_loopback_only(kafka: KafkaCluster) -> None:
    assert set(kafka.listeners) == {"PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL"}
    ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for listener in kafka.listeners:
        host, port = kafka.bootstrap(listener).split(":")
        assert host == "127.0.0.1"
        # Below the ephemeral range, so a restarted broker can always rebind its port.
        assert int(port) < ephemeral_low
        socket.create_connection((host, int(port)), timeout=5).close()
    assert "listeners=PLAINTEXT://127.0.0.1:" in kafka.nodes[0].config_file.read_text()


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", SCRAM_AND_PLAIN)
def test_sasl_user_authenticates(kafka: KafkaCluster, listener: str, mechanism: str) -> None:
    username, password = kafka.users[mechanism]
    admin = _confluent_admin(
        kafka,
        listener,
        **{"security.protocol": listener},
        **_sasl_conf(mechanism, username, password),
    )
    meta = admin.list_topics(timeout=15)
    assert meta.cluster_id == kafka.cluster_id
    assert list(meta.brokers) == [1]


@pytest.mark.parametrize("mechanism", SCRAM_AND_PLAIN)
def test_sasl_wrong_password_is_refused(kafka: KafkaCluster, mechanism: str) -> None:
    errors: list[CKafkaError] = []
    username, password = kafka.users[mechanism]
    admin = _confluent_admin(
        kafka,
        "SASL_PLAINTEXT",
        **{"security.protocol": "SASL_PLAINTEXT", "error_cb": errors.append},
        **_sasl_conf(mechanism, username, password + "-wrong"),
    )
    deadline = time.monotonic() + 15
    while not errors and time.monotonic() < deadline:
        admin.poll(0.2)
    assert errors, "no error reported for a wrong password"
    assert errors[0].code() == CKafkaError._AUTHENTICATION
    assert "Authentication failed" in errors[0].str()


def test_sasl_plain_user_is_not_a_scram_user(kafka: KafkaCluster) -> None:
    # PLAIN users live in the JAAS config, SCRAM users in the metadata log: keep them apart.
    errors: list[CKafkaError] = []
    username, password = kafka.users["PLAIN"]
    admin = _confluent_admin(
        kafka,
        "SASL_PLAINTEXT",
        **{"security.protocol": "SASL_PLAINTEXT", "error_cb": errors.append},
        **_sasl_conf("SCRAM-SHA-256", username, password),
    )
    deadline = time.monotonic() + 15
    while not errors and time.monotonic() < deadline:
        admin.poll(0.2)
    assert errors and errors[0].code() == CKafkaError._AUTHENTICATION


def test_sasl_oauthbearer_unsecured_token(kafka: KafkaCluster) -> None:
    admin = _confluent_admin(
        kafka,
        "SASL_PLAINTEXT",
        **{
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=alice",
        },
    )
    assert admin.list_topics(timeout=15).cluster_id == kafka.cluster_id


@pytest.mark.parametrize("server_hostname", ["127.0.0.1", "localhost"])
def test_ssl_certificate_verifies_with_ca_file(kafka: KafkaCluster, server_hostname: str) -> None:
    context = ssl.create_default_context(cafile=kafka.ca_file)
    assert context.check_hostname
    port = kafka.nodes[0].ports["SSL"]
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=server_hostname) as tls,
    ):
        assert tls.version() in {"TLSv1.2", "TLSv1.3"}


def test_ssl_is_refused_without_the_ca(kafka: KafkaCluster) -> None:
    context = ssl.create_default_context()  # system trust store only
    port = kafka.nodes[0].ports["SSL"]
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        context.wrap_socket(raw, server_hostname="127.0.0.1")


def test_ssl_kafka_python_client(kafka: KafkaCluster) -> None:
    admin = KafkaAdminClient(
        bootstrap_servers=kafka.bootstrap("SSL"), security_protocol="SSL", ssl_cafile=kafka.ca_file
    )
    try:
        assert admin.describe_cluster()["cluster_id"] == kafka.cluster_id
    finally:
        admin.close()


def test_new_topic_produce_and_consume(kafka: KafkaCluster, new_topic: Callable[..., str]) -> None:
    topic = new_topic(partitions=3)
    other = new_topic(partitions=3)
    assert topic != other
    meta = kafka.metadata([topic]).topics[topic]
    assert [p.partition for p in meta.partitions] == [0, 1, 2]
    assert all(p.leader == 1 for p in meta.partitions)

    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    try:
        producer.send(topic, b"hello", partition=2).get(timeout=15)
    finally:
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=kafka.bootstrap_servers, consumer_timeout_ms=10000)
    try:
        tp = TopicPartition(topic, 2)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        first = next(iter(consumer), None)  # None after 10 s without a record
        assert first is not None
        assert (first.partition, first.offset, first.value) == (2, 0, b"hello")
    finally:
        consumer.close()


def test_create_topic_errors(kafka: KafkaCluster, new_topic: Callable[..., str]) -> None:
    topic = new_topic()
    with pytest.raises(RuntimeError, match="TOPIC_ALREADY_EXISTS"):
        kafka.create_topic(topic)
    with pytest.raises(ValueError, match="replication_factor"):
        kafka.create_topic("never-created", replication_factor=3)
    with pytest.raises(RuntimeError, match="INVALID_CONFIG"):
        kafka.create_topic("bad-config", config={"cleanup.policy": "nonsense"})


def test_auto_create_is_off(kafka: KafkaCluster) -> None:
    meta = kafka.metadata(["not-auto-created"])
    assert meta.topics["not-auto-created"].error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_log_tail_shows_the_broker_log(kafka: KafkaCluster) -> None:
    assert "Kafka Server started" in kafka.log_tail(1, lines=100_000)


# ------------------------------------------------------------------ three-node cluster


@pytest.mark.cluster
def test_cluster_has_three_brokers(kafka_cluster: KafkaCluster) -> None:
    assert len(kafka_cluster.bootstrap_servers.split(",")) == 3
    for node in kafka_cluster.nodes:
        meta = wire.metadata(node.host, node.ports["PLAINTEXT"], topics=[])
        assert meta.broker_ids == {1, 2, 3}
        assert meta.controller_id in {1, 2, 3}


@pytest.mark.cluster
def test_cluster_create_topic_returns_once_leaders_serve(
    kafka_cluster: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    # Metadata names a leader a moment before that broker serves the partition; a
    # test asking the leader right after create_topic() must not see NOT_LEADER (6).
    for _ in range(3):
        topic = new_topic(partitions=6, replication_factor=3, cluster=kafka_cluster)
        parts = kafka_cluster.metadata([topic]).topics[topic].partitions
        for p in parts:
            node = kafka_cluster.node(p.leader)
            errors = wire.latest_offset_errors(
                node.host, node.ports["PLAINTEXT"], topic, [p.partition]
            )
            assert errors == {p.partition: 0}
        # A broker that does not lead a partition says so: the probe can fail.
        p = parts[0]
        other = next(n for n in kafka_cluster.nodes if n.node_id != p.leader)
        errors = wire.latest_offset_errors(
            other.host, other.ports["PLAINTEXT"], topic, [p.partition]
        )
        assert errors == {p.partition: 6}


@pytest.mark.cluster
def test_cluster_kill_and_restart_moves_leaders(
    kafka_cluster: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=3, replication_factor=3, cluster=kafka_cluster)
    partitions = kafka_cluster.metadata([topic]).topics[topic].partitions
    assert all(sorted(p.replicas) == [1, 2, 3] for p in partitions)
    victim = partitions[0].leader

    def isr_full() -> bool:
        parts = kafka_cluster.metadata([topic]).topics[topic].partitions
        return all(sorted(p.isr) == [1, 2, 3] for p in parts)

    kafka_cluster.wait_for("full ISR", isr_full, timeout=30)

    began = time.monotonic()
    kafka_cluster.kill(victim)
    assert not kafka_cluster.node(victim).alive

    def leaders_moved() -> bool:
        parts = kafka_cluster.metadata([topic]).topics[topic].partitions
        return all(p.leader not in (victim, -1) for p in parts)

    try:
        kafka_cluster.wait_for(f"leaders off node {victim}", leaders_moved, timeout=45)
        survivors = kafka_cluster.metadata([]).broker_ids
        assert victim not in survivors
        assert len(survivors) == 2
        failover = time.monotonic() - began

        began = time.monotonic()
        kafka_cluster.restart(victim, timeout=60)
        assert kafka_cluster.metadata([]).broker_ids == {1, 2, 3}
        kafka_cluster.wait_for("restarted node back in ISR", isr_full, timeout=45)
        rejoin = time.monotonic() - began
    finally:
        if not kafka_cluster.node(victim).alive:
            kafka_cluster.restart(victim)
    print(f"failover {failover:.1f}s, rejoin {rejoin:.1f}s")
    # The restarted node serves again: it answers Metadata knowing all brokers.
    node = kafka_cluster.node(victim)
    assert wire.metadata(node.host, node.ports["PLAINTEXT"], topics=[]).broker_ids == {1, 2, 3}
