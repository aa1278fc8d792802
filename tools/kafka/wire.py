"""Just enough of the Kafka wire protocol to probe and administer the test brokers.

The rig must not depend on the client it is there to test, so it speaks three old,
non-flexible request versions by hand with ``socket`` + ``struct``: ApiVersions v0,
Metadata v1 and CreateTopics v4. All three are still accepted by Kafka 4.x (KIP-896
removed only older versions of these APIs).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

_API_VERSIONS = 18
_METADATA = 3
_CREATE_TOPICS = 19
_CLIENT_ID = b"aiokafka-test-rig"


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


class _Reader:
    """Cursor over a response body; every short read becomes a WireError."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def _take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self._pos + size > len(self._data):
            raise WireError("truncated response")
        (value,) = struct.unpack_from(fmt, self._data, self._pos)
        self._pos += size
        return int(value)

    def int8(self) -> int:
        return self._take(">b")

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def string(self) -> str | None:
        length = self.int16()
        if length < 0:
            return None
        if self._pos + length > len(self._data):
            raise WireError("truncated string")
        raw = self._data[self._pos : self._pos + length]
        self._pos += length
        return raw.decode()

    def int32_array(self) -> tuple[int, ...]:
        return tuple(self.int32() for _ in range(max(self.int32(), 0)))


def _string(value: str | None) -> bytes:
    if value is None:
        return struct.pack(">h", -1)
    raw = value.encode()
    return struct.pack(">h", len(raw)) + raw


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise WireError("connection closed by broker")
        chunks += chunk
    return bytes(chunks)


def roundtrip(
    host: str, port: int, api_key: int, version: int, body: bytes, timeout: float = 5.0
) -> bytes:
    """Send one request (header v1) and return the response body (header v0 stripped).

    Args:
        host: Broker address.
        port: Broker port (a PLAINTEXT listener).
        api_key: Kafka API key.
        version: API version; must be a non-flexible one.
        body: Encoded request body.
        timeout: Socket timeout in seconds for connect and each read.

    Raises:
        WireError: on any socket error or a mismatched correlation id.
    """
    correlation_id = 1
    header = struct.pack(">hhih", api_key, version, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    frame = header + body
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            (size,) = struct.unpack(">i", _recv_exact(sock, 4))
            response = _recv_exact(sock, size)
    except OSError as exc:
        raise WireError(f"{host}:{port}: {exc}") from exc
    (got,) = struct.unpack_from(">i", response)
    if got != correlation_id:
        raise WireError(f"correlation id {got} != {correlation_id}")
    return response[4:]


def api_versions(host: str, port: int, timeout: float = 5.0) -> dict[int, tuple[int, int]]:
    """ApiVersions v0: the supported (min, max) version per API key.

    Raises:
        WireError: if the broker is unreachable or answers with an error code.
    """
    reader = _Reader(roundtrip(host, port, _API_VERSIONS, 0, b"", timeout))
    error = reader.int16()
    if error:
        raise WireError(f"ApiVersions error code {error}")
    result: dict[int, tuple[int, int]] = {}
    for _ in range(reader.int32()):
        key = reader.int16()
        result[key] = (reader.int16(), reader.int16())
    return result


def metadata(
    host: str, port: int, topics: list[str] | None = None, timeout: float = 5.0
) -> ClusterMetadata:
    """Metadata v1 for ``topics`` (``None``: all topics).

    Raises:
        WireError: if the broker is unreachable or the response is unreadable.
    """
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics)) + b"".join(_string(t) for t in topics)
    reader = _Reader(roundtrip(host, port, _METADATA, 1, body, timeout))
    brokers = []
    for _ in range(reader.int32()):
        node_id = reader.int32()
        bhost = reader.string() or ""
        bport = reader.int32()
        reader.string()  # rack
        brokers.append(BrokerInfo(node_id, bhost, bport))
    controller_id = reader.int32()
    result: dict[str, TopicInfo] = {}
    for _ in range(reader.int32()):
        terror = reader.int16()
        name = reader.string() or ""
        reader.int8()  # is_internal
        parts = []
        for _ in range(reader.int32()):
            perror = reader.int16()
            index = reader.int32()
            leader = reader.int32()
            replicas = reader.int32_array()
            isr = reader.int32_array()
            parts.append(PartitionInfo(perror, index, leader, replicas, isr))
        result[name] = TopicInfo(terror, name, tuple(sorted(parts, key=lambda p: p.partition)))
    return ClusterMetadata(tuple(brokers), controller_id, result)


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
    entries = sorted((config or {}).items())
    body = (
        struct.pack(">i", 1)
        + _string(name)
        + struct.pack(">ihi", partitions, replication_factor, 0)  # no manual assignment
        + struct.pack(">i", len(entries))
        + b"".join(_string(k) + _string(v) for k, v in entries)
        + struct.pack(">ib", timeout_ms, 0)  # validate_only = false
    )
    reader = _Reader(roundtrip(host, port, _CREATE_TOPICS, 4, body, timeout=timeout_ms / 1000 + 5))
    reader.int32()  # throttle_time_ms
    if reader.int32() != 1:
        raise WireError("CreateTopics answered for an unexpected number of topics")
    return CreateTopicResult(reader.string() or "", reader.int16(), reader.string())
