"""Just enough Kafka requests to probe and administer the test brokers.

The rig must keep working when the asyncio client it tests is broken, so it does not
use ``AIOKafkaClient``: it sends one request per blocking ``socket`` connection. The
bytes come from the project's generated codec (``aiokafka.protocol``), which has no
asyncio in it and is verified on its own (golden bytes against kafka-python, round
trips of every version). Fixed, old request versions keep the rig independent of
version negotiation: ApiVersions v0, Metadata v1, ListOffsets v1 and CreateTopics v4, all
still accepted by Kafka 4.x (KIP-896 removed only older versions of these APIs).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field
from typing import Any

from aiokafka.errors import KafkaError
from aiokafka.protocol import api
from aiokafka.protocol.messages import (
    ApiVersionsRequest,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
    MetadataRequest,
    MetadataRequestTopic,
)

_CLIENT_ID = "aiokafka-test-rig"


class WireError(Exception):
    """The broker could not be reached or answered something we cannot read."""


@dataclass(frozen=True)
class BrokerInfo:
    """One broker as listed in a Metadata response."""

    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as listed in a Metadata response."""

    error_code: int
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    """One topic as listed in a Metadata response."""

    error_code: int
    name: str
    partitions: tuple[PartitionInfo, ...]


@dataclass(frozen=True)
class ClusterMetadata:
    """The parts of a Metadata v1 response the rig looks at."""

    brokers: tuple[BrokerInfo, ...]
    controller_id: int
    topics: dict[str, TopicInfo] = field(default_factory=dict)

    @property
    def broker_ids(self) -> set[int]:
        """Ids of the (unfenced) brokers this broker knows about."""
        return {b.node_id for b in self.brokers}


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise WireError("connection closed by broker")
        chunks += chunk
    return bytes(chunks)


def roundtrip(host: str, port: int, request: Any, version: int, timeout: float = 5.0) -> Any:
    """Send one request on a fresh connection and return the decoded response.

    Args:
        host: Broker address.
        port: Broker port (a PLAINTEXT listener).
        request: A generated request object (``aiokafka.protocol.messages``).
        version: API version to send it at.
        timeout: Socket timeout in seconds for connect and each read.

    Raises:
        WireError: on any socket error, a mismatched correlation id or an undecodable
            response.
    """
    correlation_id = 1
    frame = api.encode_request(request, version, correlation_id, _CLIENT_ID)
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            (size,) = struct.unpack(">i", _recv_exact(sock, 4))
            response = _recv_exact(sock, size)
    except OSError as exc:
        raise WireError(f"{host}:{port}: {exc}") from exc
    got = api.read_correlation_id(response)
    if got != correlation_id:
        raise WireError(f"correlation id {got} != {correlation_id}")
    try:
        return api.decode_response(request.RESPONSE_TYPE, version, response)
    except KafkaError as exc:
        raise WireError(f"{host}:{port}: undecodable response: {exc}") from exc


def api_versions(host: str, port: int, timeout: float = 5.0) -> dict[int, tuple[int, int]]:
    """ApiVersions v0: the supported (min, max) version per API key.

    Raises:
        WireError: if the broker is unreachable or answers with an error code.
    """
    response = roundtrip(host, port, ApiVersionsRequest(), 0, timeout)
    if response.error_code:
        raise WireError(f"ApiVersions error code {response.error_code}")
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def metadata(
    host: str, port: int, topics: list[str] | None = None, timeout: float = 5.0
) -> ClusterMetadata:
    """Metadata v1 for ``topics`` (``None``: all topics).

    Raises:
        WireError: if the broker is unreachable or the response is unreadable.
    """
    request = MetadataRequest(
        topics=None if topics is None else [MetadataRequestTopic(name=t) for t in topics]
    )
    response = roundtrip(host, port, request, 1, timeout)
    brokers = tuple(BrokerInfo(b.node_id, b.host, b.port) for b in response.brokers)
    result: dict[str, TopicInfo] = {}
    for t in response.topics:
        parts = sorted(
            (
                PartitionInfo(
                    p.error_code,
                    p.partition_index,
                    p.leader_id,
                    tuple(p.replica_nodes),
                    tuple(p.isr_nodes),
                )
                for p in t.partitions
            ),
            key=lambda p: p.partition,
        )
        name = t.name or ""
        result[name] = TopicInfo(t.error_code, name, tuple(parts))
    return ClusterMetadata(brokers, response.controller_id, result)


@dataclass(frozen=True)
class CreateTopicResult:
    """Outcome of one topic in a CreateTopics response."""

    name: str
    error_code: int
    error_message: str | None


def create_topics(
    host: str,
    port: int,
    name: str,
    partitions: int,
    replication_factor: int,
    config: dict[str, str] | None = None,
    timeout_ms: int = 30000,
) -> CreateTopicResult:
    """CreateTopics v4 for a single topic; the broker forwards it to the controller.

    Raises:
        WireError: if the broker is unreachable or the response is unreadable.
    """
    topic = CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication_factor,
        configs=[CreatableTopicConfig(name=k, value=v) for k, v in sorted((config or {}).items())],
    )
    request = CreateTopicsRequest(topics=[topic], timeout_ms=timeout_ms, validate_only=False)
    response = roundtrip(host, port, request, 4, timeout=timeout_ms / 1000 + 5)
    if len(response.topics) != 1:
        raise WireError("CreateTopics answered for an unexpected number of topics")
    result = response.topics[0]
    return CreateTopicResult(result.name, result.error_code, result.error_message)


def latest_offset_errors(
    host: str, port: int, topic: str, partitions: list[int], timeout: float = 5.0
) -> dict[int, int]:
    """ListOffsets v1 (latest) for ``partitions`` of ``topic`` on this broker: the error
    code of each (0 where this broker serves the partition as its leader).

    Raises:
        WireError: if the broker is unreachable or the response is unreadable.
    """
    latest = [ListOffsetsPartition(partition_index=p, timestamp=-1) for p in partitions]
    request = ListOffsetsRequest(
        replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=latest)]
    )
    response = roundtrip(host, port, request, 1, timeout)
    return {p.partition_index: p.error_code for t in response.topics for p in t.partitions}
