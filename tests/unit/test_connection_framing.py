"""Connection framing, correlation and failure handling against a scripted server.

A real broker always answers in order and never sends half a frame, an unknown
correlation id or nothing at all; these cases need an in-process server. The happy
path against Kafka is in tests/integration/test_connection.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from aiokafka.errors import (
    CorrelationIdError,
    IllegalStateError,
    KafkaConnectionError,
    KafkaProtocolError,
    RequestTimedOutError,
    UnsupportedVersionError,
)
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.net.versions import api_versions_fallback
from aiokafka.protocol.api import response_header_version
from aiokafka.protocol.messages import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    MetadataRequest,
    MetadataResponse,
)

METADATA = MetadataRequest.API_KEY
API_VERSIONS = ApiVersionsRequest.API_KEY


@dataclass
class Frame:
    api_key: int
    version: int
    corr: int


def encode_response(api_key: int, version: int, corr: int, body: bytes) -> bytes:
    header = corr.to_bytes(4, "big", signed=True)
    if response_header_version(api_key, version) == 1:
        header += b"\x00"  # no tagged fields
    payload = header + body
    return len(payload).to_bytes(4, "big") + payload


def api_versions_body(
    version: int,
    ranges: dict[int, tuple[int, int]],
    error: int = 0,
    finalized: dict[str, int] | None = None,
) -> bytes:
    keys = [ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in ranges.items()]
    features = [
        FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
        for name, level in (finalized or {}).items()
    ]
    return ApiVersionsResponse(error_code=error, api_keys=keys, finalized_features=features).encode(
        version
    )


DEFAULT_RANGES = {API_VERSIONS: (0, 4), METADATA: (0, 9)}


@dataclass
class ScriptedBroker:
    """Answers ApiVersions itself; hands every other request to ``on_request``."""

    ranges: dict[int, tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_RANGES))
    reject_api_versions_above: int | None = None
    #: Ranges the UNSUPPORTED_VERSION answer advertises (default: ApiVersions 0..limit).
    rejection_ranges: dict[int, tuple[int, int]] | None = None
    answer_api_versions: bool = True
    #: Finalized feature levels the ApiVersions answer reports (v3+).
    finalized: dict[str, int] = field(default_factory=dict)
    received: list[Frame] = field(default_factory=list)
    writer: asyncio.StreamWriter | None = None
    on_request: Callable[[ScriptedBroker, Frame], Awaitable[None]] | None = None
    server: asyncio.Server | None = None
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    def respond(self, frame: Frame, body: bytes) -> None:
        assert self.writer is not None
        self.writer.write(encode_response(frame.api_key, frame.version, frame.corr, body))

    def metadata(self, frame: Frame, cluster_id: str = "c") -> None:
        self.respond(frame, MetadataResponse(cluster_id=cluster_id).encode(frame.version))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        self.writer = writer
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(4), "big")
                data = await reader.readexactly(size)
                frame = Frame(
                    int.from_bytes(data[0:2], "big"),
                    int.from_bytes(data[2:4], "big"),
                    int.from_bytes(data[4:8], "big", signed=True),
                )
                self.received.append(frame)
                if frame.api_key == API_VERSIONS:
                    if not self.answer_api_versions:
                        continue
                    limit = self.reject_api_versions_above
                    if limit is not None and frame.version > limit:
                        # What Kafka does: a v0 error response carrying its range.
                        ranges = self.rejection_ranges
                        if ranges is None:
                            ranges = {API_VERSIONS: (0, limit)}
                        body = api_versions_body(0, ranges, error=35)
                        self.respond(Frame(API_VERSIONS, 0, frame.corr), body)
                    else:
                        body = api_versions_body(frame.version, self.ranges, 0, self.finalized)
                        self.respond(frame, body)
                elif self.on_request is not None:
                    await self.on_request(self, frame)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            self.tasks.discard(task)


@pytest.fixture
async def broker() -> AsyncIterator[ScriptedBroker]:
    b = ScriptedBroker()
    b.server = await asyncio.start_server(b.handle, "127.0.0.1", 0)
    yield b
    b.server.close()
    for t in list(b.tasks):
        t.cancel()
    await asyncio.gather(*b.tasks, return_exceptions=True)
    await b.server.wait_closed()


async def connect(
    broker: ScriptedBroker, request_timeout_ms: int = 40000, max_in_flight: int = 5
) -> AIOKafkaConnection:
    config = ConnectionConfig(
        request_timeout_ms=request_timeout_ms, max_in_flight_requests_per_connection=max_in_flight
    )
    conn = AIOKafkaConnection("127.0.0.1", broker.port, config, node_id=7)
    await conn.connect()
    return conn


# -- handshake and versions -----------------------------------------------------------


async def test_finalized_features_are_kept_from_the_handshake(broker: ScriptedBroker) -> None:
    broker.finalized = {"transaction.version": 2, "metadata.version": 30}
    conn = await connect(broker)
    try:
        assert conn.api_versions.finalized_level("transaction.version") == 2
        assert conn.api_versions.finalized_level("group.version") == 0  # not reported
    finally:
        await conn.close()
    assert [f.api_key for f in broker.received] == [API_VERSIONS]  # no second request


async def test_negotiates_highest_common_version(broker: ScriptedBroker) -> None:
    async def answer(b: ScriptedBroker, f: Frame) -> None:
        b.metadata(f, cluster_id=f"v{f.version}")

    broker.on_request = answer
    conn = await connect(broker)
    try:
        assert broker.received[0] == Frame(API_VERSIONS, ApiVersionsRequest.MAX_VERSION, 0)
        assert conn.api_version(METADATA) == 9  # broker max below ours
        assert conn.api_version(METADATA, max_version=4) == 4
        resp = await conn.send(MetadataRequest(topics=None))
        assert resp.cluster_id == "v9"
        resp = await conn.send(MetadataRequest(topics=None), max_version=5)
        assert resp.cluster_id == "v5"
        # An API the broker does not list: typed error, connection stays usable.
        with pytest.raises(UnsupportedVersionError, match="does not support the Produce API"):
            conn.api_version(0)
        with pytest.raises(UnsupportedVersionError, match="client does not implement"):
            conn.api_version(9999)
        assert conn.connected
    finally:
        await conn.close()


async def test_api_versions_unsupported_version_falls_back(broker: ScriptedBroker) -> None:
    broker.reject_api_versions_above = 2
    conn = await connect(broker)
    try:
        assert [f.version for f in broker.received] == [ApiVersionsRequest.MAX_VERSION, 2]
        assert conn.api_version(METADATA) == 9
    finally:
        await conn.close()


@pytest.mark.parametrize(
    "ranges",
    [
        pytest.param({}, id="nothing-advertised"),
        pytest.param({METADATA: (0, 9)}, id="no-api-versions-entry"),
        pytest.param({API_VERSIONS: (0, ApiVersionsRequest.MAX_VERSION)}, id="max-not-below"),
        pytest.param({API_VERSIONS: (0, -1)}, id="negative-max"),
        pytest.param({API_VERSIONS: (3, 1)}, id="min-above-max"),
    ],
)
async def test_api_versions_without_usable_range_retries_at_v0(
    broker: ScriptedBroker, ranges: dict[int, tuple[int, int]]
) -> None:
    # Rejects everything above v0 and advertises nothing usable: the retry must go
    # straight to v0 (one round trip), not walk down or give up.
    broker.reject_api_versions_above = 0
    broker.rejection_ranges = ranges
    conn = await connect(broker)
    try:
        assert [f.version for f in broker.received] == [ApiVersionsRequest.MAX_VERSION, 0]
        assert conn.connected
        assert conn.api_version(METADATA) == 9  # the v0 answer's table is in use
    finally:
        await conn.close()


async def test_api_versions_rejected_at_v0_fails(broker: ScriptedBroker) -> None:
    broker.reject_api_versions_above = -1  # rejects every version, v0 included
    broker.rejection_ranges = {}
    conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(request_timeout_ms=5000))
    with pytest.raises(UnsupportedVersionError, match="rejected every ApiVersions version"):
        await conn.connect()
    assert [f.version for f in broker.received] == [ApiVersionsRequest.MAX_VERSION, 0]
    assert conn.closed


@pytest.mark.parametrize(
    ("rejected", "advertised", "expected"),
    [
        (4, (0, 2), 2),  # Java behaviour: the highest advertised version
        (4, (1, 3), 3),
        (4, None, 0),
        (4, (0, 4), 0),
        (4, (0, 7), 0),
        (4, (0, -1), 0),
        (4, (3, 1), 0),
        (1, None, 0),
        (0, None, -1),  # nothing below v0
        (0, (0, 3), -1),
    ],
)
def test_api_versions_fallback_choice(
    rejected: int, advertised: tuple[int, int] | None, expected: int
) -> None:
    assert api_versions_fallback(rejected, advertised) == expected


async def test_connect_times_out_when_broker_is_silent(broker: ScriptedBroker) -> None:
    broker.answer_api_versions = False
    conn = AIOKafkaConnection("127.0.0.1", broker.port, ConnectionConfig(request_timeout_ms=300))
    start = time.monotonic()
    with pytest.raises(KafkaConnectionError):
        await conn.connect()
    assert time.monotonic() - start < 2
    assert conn.closed


async def test_connect_refused() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    conn = AIOKafkaConnection("127.0.0.1", port)
    with pytest.raises(KafkaConnectionError, match=f"127.0.0.1:{port}") as info:
        await conn.connect()
    assert info.value.retriable
    assert isinstance(info.value.__cause__, OSError)


# -- correlation ----------------------------------------------------------------------


async def test_out_of_order_responses_are_matched_by_correlation_id(
    broker: ScriptedBroker,
) -> None:
    held: list[Frame] = []

    async def answer(b: ScriptedBroker, f: Frame) -> None:
        held.append(f)
        if len(held) == 3:
            for frame in reversed(held):
                b.metadata(frame, cluster_id=f"corr{frame.corr}")

    broker.on_request = answer
    conn = await connect(broker)
    try:
        results = await asyncio.gather(*(conn.send(MetadataRequest(topics=None)) for _ in range(3)))
        assert [r.cluster_id for r in results] == ["corr1", "corr2", "corr3"]
    finally:
        await conn.close()


async def test_unknown_correlation_id_fails_everything(broker: ScriptedBroker) -> None:
    async def answer(b: ScriptedBroker, f: Frame) -> None:
        b.metadata(Frame(f.api_key, f.version, f.corr + 1000))

    broker.on_request = answer
    conn = await connect(broker)
    try:
        with pytest.raises(CorrelationIdError) as info:
            await conn.send(MetadataRequest(topics=None))
        assert info.value.retriable
        assert conn.closed
        with pytest.raises(KafkaConnectionError, match="is closed"):
            await conn.send(MetadataRequest(topics=None))
    finally:
        await conn.close()


async def test_half_a_frame_then_eof_fails_in_flight(broker: ScriptedBroker) -> None:
    async def answer(b: ScriptedBroker, f: Frame) -> None:
        full = encode_response(f.api_key, f.version, f.corr, MetadataResponse().encode(f.version))
        assert b.writer is not None
        b.writer.write(full[: len(full) // 2])
        await b.writer.drain()
        b.writer.close()

    broker.on_request = answer
    conn = await connect(broker)
    try:
        results = await asyncio.gather(
            conn.send(MetadataRequest(topics=None)),
            conn.send(MetadataRequest(topics=None)),
            return_exceptions=True,
        )
        assert all(isinstance(r, KafkaConnectionError) for r in results), results
        assert all(r.retriable for r in results if isinstance(r, KafkaConnectionError))
        assert conn.closed
    finally:
        await conn.close()


async def test_undecodable_response_fails_only_that_request(broker: ScriptedBroker) -> None:
    count = 0

    async def answer(b: ScriptedBroker, f: Frame) -> None:
        nonlocal count
        count += 1
        if count == 1:
            b.respond(f, b"\x01")  # truncated body
        else:
            b.metadata(f, cluster_id="fine")

    broker.on_request = answer
    conn = await connect(broker)
    try:
        with pytest.raises(KafkaProtocolError):
            await conn.send(MetadataRequest(topics=None))
        resp = await conn.send(MetadataRequest(topics=None))
        assert resp.cluster_id == "fine"
    finally:
        await conn.close()


# -- pipelining, timeouts, cancellation -----------------------------------------------


async def test_in_flight_limit_blocks_further_sends(broker: ScriptedBroker) -> None:
    held: list[Frame] = []

    async def hold(b: ScriptedBroker, f: Frame) -> None:
        held.append(f)

    broker.on_request = hold
    conn = await connect(broker, max_in_flight=2)
    try:
        tasks = [asyncio.create_task(conn.send(MetadataRequest(topics=None))) for _ in range(3)]
        await asyncio.sleep(0.2)
        assert len(held) == 2  # the third waits for a slot
        assert conn.in_flight == 2
        broker.metadata(held[0])
        await asyncio.sleep(0.2)
        assert len(held) == 3
        for f in held[1:]:
            broker.metadata(f)
        await asyncio.wait_for(asyncio.gather(*tasks), 2)
        assert conn.in_flight == 0
    finally:
        await conn.close()


async def test_timeout_fails_timed_out_and_other_in_flight(broker: ScriptedBroker) -> None:
    async def ignore(b: ScriptedBroker, f: Frame) -> None:
        return None

    broker.on_request = ignore
    conn = await connect(broker, request_timeout_ms=300)
    try:
        first = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
        await asyncio.sleep(0.1)
        second = asyncio.create_task(conn.send(MetadataRequest(topics=None), timeout_ms=5000))
        start = time.monotonic()
        results = await asyncio.gather(first, second, return_exceptions=True)
        assert time.monotonic() - start < 1.5
        assert isinstance(results[0], RequestTimedOutError)
        assert "no response within 300 ms" in str(results[0])
        assert isinstance(results[1], KafkaConnectionError)
        assert conn.closed
    finally:
        await conn.close()


async def test_cancelled_request_keeps_framing(broker: ScriptedBroker) -> None:
    held: list[Frame] = []

    async def answer(b: ScriptedBroker, f: Frame) -> None:
        held.append(f)
        if len(held) >= 2:
            for frame in held:
                b.metadata(frame, cluster_id=f"corr{frame.corr}")
            held.clear()

    broker.on_request = answer
    conn = await connect(broker)
    try:
        victim = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
        await asyncio.sleep(0.1)
        victim.cancel()
        with pytest.raises(asyncio.CancelledError):
            await victim
        # Its response arrives later (with the next one) and is read and dropped.
        resp = await asyncio.wait_for(conn.send(MetadataRequest(topics=None)), 2)
        assert resp.cluster_id == "corr2"
        assert conn.connected
        assert conn.in_flight == 0
    finally:
        await conn.close()


async def test_request_without_response(broker: ScriptedBroker) -> None:
    async def answer(b: ScriptedBroker, f: Frame) -> None:
        if f.version == 1:
            return  # the "acks=0" request: no answer
        b.metadata(f, cluster_id="after")

    broker.on_request = answer
    conn = await connect(broker)
    try:
        await conn.send_without_response(MetadataRequest(topics=None), version=1)
        assert conn.in_flight == 0
        resp = await conn.send(MetadataRequest(topics=None))
        assert resp.cluster_id == "after"
        assert [f.version for f in broker.received[1:]] == [1, 9]
    finally:
        await conn.close()


async def test_close_fails_in_flight_and_is_idempotent(broker: ScriptedBroker) -> None:
    async def ignore(b: ScriptedBroker, f: Frame) -> None:
        return None

    broker.on_request = ignore
    closed: list[Exception] = []
    conn = AIOKafkaConnection("127.0.0.1", broker.port, on_close=lambda c, e: closed.append(e))
    with pytest.raises(IllegalStateError):
        await conn.send(MetadataRequest(topics=None))
    await conn.connect()
    pending = asyncio.create_task(conn.send(MetadataRequest(topics=None)))
    await asyncio.sleep(0.1)
    await conn.close()
    await conn.close()
    with pytest.raises(KafkaConnectionError):
        await pending
    assert len(closed) == 1
    assert conn.closed
    with pytest.raises(IllegalStateError):
        await conn.connect()
