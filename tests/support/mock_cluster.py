"""librdkafka's mock Kafka cluster, driven through ctypes, as a second peer for tests.

The confluent-kafka wheel bundles librdkafka, and librdkafka carries a mock cluster: a
set of in-process fake brokers speaking the Kafka protocol on loopback ports, started
when a client is configured with ``test.mock.num.brokers``. Its ``rd_kafka_mock_*`` C
functions inject request errors, take brokers down and move partition leaders. This
module finds that shared library inside the wheel, recovers the ``rd_kafka_t *`` of a
confluent-kafka ``Producer`` and exposes the few functions the peer tests need::

    with MockCluster(num_brokers=3) as mock:
        mock.create_topic("t", partitions=2, replication_factor=3)
        producer = AIOKafkaProducer(bootstrap_servers=mock.bootstrap_servers)
        mock.push_request_errors(ApiKey.PRODUCE, [6, 7])

The mock is not Kafka: it implements a subset of the APIs and versions and has its own
defaults. Kafka decides what is correct; tests skip, naming the deviation, where the
mock differs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import enum
import functools
import glob
import os
import struct
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from tests.support.kafka_frames import framed, pump_until_either_ends, read_frame

__all__ = [
    "ApiKey",
    "CoordType",
    "MockCluster",
    "MockClusterError",
    "MockRelay",
    "librdkafka_path",
]


class MockClusterError(RuntimeError):
    """The mock cluster could not be created or a mock call failed."""


class ApiKey(enum.IntEnum):
    """Kafka API keys used with :meth:`MockCluster.push_request_errors`."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    INIT_PRODUCER_ID = 22


class CoordType(enum.IntEnum):
    """``rd_kafka_coordtype_t``: which kind of coordinator to move."""

    GROUP = 0
    TXN = 1


def librdkafka_path() -> str:
    """Path of the librdkafka shared library bundled in the confluent-kafka wheel.

    Raises:
        MockClusterError: confluent-kafka is not installed or bundles no librdkafka
            (a build against a system librdkafka, for instance).
    """
    try:
        import confluent_kafka
    except ImportError as exc:
        raise MockClusterError("confluent-kafka is not installed") from exc
    site = os.path.dirname(os.path.dirname(os.path.abspath(confluent_kafka.__file__)))
    # auditwheel puts vendored libraries in "<package>.libs" beside the package, with a
    # hash in the file name.
    found = sorted(glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*")))
    if not found:
        raise MockClusterError(f"no librdkafka*.so in {site}/confluent_kafka.libs")
    return found[0]


def _bind(lib: ctypes.CDLL, name: str, restype: Any, *argtypes: Any) -> Any:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


class _Lib:
    """The typed subset of librdkafka's C API that the mock tests call."""

    def __init__(self, path: str) -> None:
        # dlopen of the path cimpl already loaded returns the same library, so the
        # rd_kafka_t we get from confluent-kafka and these functions share one copy.
        lib = ctypes.CDLL(path)
        vp, i32, cp = ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p
        self.name = _bind(lib, "rd_kafka_name", cp, vp)
        self.handle_mock_cluster = _bind(lib, "rd_kafka_handle_mock_cluster", vp, vp)
        self.bootstraps = _bind(lib, "rd_kafka_mock_cluster_bootstraps", cp, vp)
        self.topic_create = _bind(
            lib, "rd_kafka_mock_topic_create", ctypes.c_int, vp, cp, ctypes.c_int, ctypes.c_int
        )
        self.push_request_errors_array = _bind(
            lib,
            "rd_kafka_mock_push_request_errors_array",
            None,
            vp,
            ctypes.c_int16,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int),
        )
        self.clear_request_errors = _bind(
            lib, "rd_kafka_mock_clear_request_errors", None, vp, ctypes.c_int16
        )
        self.broker_set_down = _bind(lib, "rd_kafka_mock_broker_set_down", ctypes.c_int, vp, i32)
        self.broker_set_up = _bind(lib, "rd_kafka_mock_broker_set_up", ctypes.c_int, vp, i32)
        self.partition_set_leader = _bind(
            lib, "rd_kafka_mock_partition_set_leader", ctypes.c_int, vp, cp, i32, i32
        )
        self.coordinator_set = _bind(
            lib, "rd_kafka_mock_coordinator_set", ctypes.c_int, vp, cp, cp, i32
        )
        self.broker_set_host_port = _bind(
            lib, "rd_kafka_mock_broker_set_host_port", ctypes.c_int, vp, i32, cp, ctypes.c_int
        )
        self.set_apiversion = _bind(
            lib,
            "rd_kafka_mock_set_apiversion",
            ctypes.c_int,
            vp,
            ctypes.c_int16,
            ctypes.c_int16,
            ctypes.c_int16,
        )
        # Variadic (pairs of error code and RTT): no argtypes, each call passes ctypes values.
        self.broker_push_request_error_rtts = lib.rd_kafka_mock_broker_push_request_error_rtts
        self.broker_push_request_error_rtts.restype = ctypes.c_int
        self.err2name = _bind(lib, "rd_kafka_err2name", cp, ctypes.c_int)


class MockCluster:
    """A librdkafka mock cluster of ``num_brokers`` brokers (ids 1..num_brokers).

    The cluster lives as long as the confluent-kafka ``Producer`` that owns it; call
    :meth:`close` (or use ``with``) to tear both down. All methods are thread-safe on the
    librdkafka side (the mock runs on its own thread), so they may be called while our
    asyncio client talks to it.

    Args:
        num_brokers: How many mock brokers to start.
    """

    def __init__(self, num_brokers: int = 3) -> None:
        if num_brokers < 1:
            raise ValueError(f"num_brokers must be >= 1, got {num_brokers}")
        from confluent_kafka import Producer

        self.num_brokers = num_brokers
        self._lib = _Lib(librdkafka_path())
        # The mock logs its start-up line at NOTICE on stderr; keep test output quiet.
        self._owner: Any = Producer({"test.mock.num.brokers": num_brokers, "log_level": 3})
        rk = self._rd_kafka_t(self._owner)
        mcluster = self._lib.handle_mock_cluster(rk)
        if not mcluster:
            raise MockClusterError("rd_kafka_handle_mock_cluster() returned NULL")
        self._mcluster: int = mcluster
        self.bootstrap_servers: str = self._lib.bootstraps(mcluster).decode()

    def _rd_kafka_t(self, handle: Any) -> int:
        """The ``rd_kafka_t *`` inside a confluent-kafka client object.

        confluent-kafka's ``Handle`` C struct starts with ``PyObject_HEAD`` followed by
        ``rd_kafka_t *rk``; CPython's object header is two pointers wide. The pointer is
        checked by asking librdkafka for the handle's name, which must be the
        ``rdkafka#producer-N`` name confluent-kafka reports.
        """
        header = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
        rk = ctypes.c_void_p.from_address(id(handle) + header).value
        if not rk:
            raise MockClusterError("confluent-kafka handle holds no rd_kafka_t")
        name = self._lib.name(rk)
        if not name or not name.startswith(b"rdkafka#"):
            raise MockClusterError(f"unexpected confluent-kafka Handle layout (name={name!r})")
        return rk

    def _check(self, what: str, err: int) -> None:
        if err != 0:
            raise MockClusterError(f"{what}: {self._lib.err2name(err).decode()} ({err})")

    @property
    def broker_ids(self) -> list[int]:
        """Ids of the mock brokers."""
        return list(range(1, self.num_brokers + 1))

    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 3) -> None:
        """Create ``topic`` in the mock (no CreateTopics request involved)."""
        self._check(
            f"topic_create({topic})",
            self._lib.topic_create(self._mcluster, topic.encode(), partitions, replication_factor),
        )

    def push_request_errors(self, api_key: int, errors: Sequence[int]) -> None:
        """Fail the next ``len(errors)`` requests of ``api_key`` (to any broker) in turn.

        Each error code is returned once, in order, as the request's top-level (or, for
        Produce/Fetch, per-partition) error; ``0`` lets one request through.
        """
        arr = (ctypes.c_int * len(errors))(*errors)
        self._lib.push_request_errors_array(self._mcluster, api_key, len(errors), arr)

    def broker_push_request_error_rtts(
        self, broker_id: int, api_key: int, errors: Sequence[tuple[int, int]]
    ) -> None:
        """Answer the next requests of ``api_key`` to one broker late and/or with an error.

        Each ``(error_code, rtt_ms)`` pair applies to one request in turn: the mock
        handles it (``error_code`` 0: normally, so a Produce is appended) and holds the
        answer back for ``rtt_ms``, which lets a test outlast the client's request timeout.
        """
        args: list[Any] = []
        for err, rtt_ms in errors:
            args += [ctypes.c_int(err), ctypes.c_int(rtt_ms)]
        self._check(
            f"broker_push_request_error_rtts({broker_id}, {api_key})",
            self._lib.broker_push_request_error_rtts(
                ctypes.c_void_p(self._mcluster),
                ctypes.c_int32(broker_id),
                ctypes.c_int16(api_key),
                ctypes.c_size_t(len(errors)),
                *args,
            ),
        )

    def clear_request_errors(self, api_key: int) -> None:
        """Drop any errors still queued for ``api_key``."""
        self._lib.clear_request_errors(self._mcluster, api_key)

    def broker_set_down(self, broker_id: int) -> None:
        """Close the broker's connections and refuse new ones until :meth:`broker_set_up`."""
        self._check(
            f"broker_set_down({broker_id})", self._lib.broker_set_down(self._mcluster, broker_id)
        )

    def broker_set_up(self, broker_id: int) -> None:
        """Let a downed broker accept connections again."""
        self._check(
            f"broker_set_up({broker_id})", self._lib.broker_set_up(self._mcluster, broker_id)
        )

    def partition_set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move a partition's leadership; the old leader answers NOT_LEADER_OR_FOLLOWER."""
        self._check(
            f"partition_set_leader({topic}, {partition}, {broker_id})",
            self._lib.partition_set_leader(self._mcluster, topic.encode(), partition, broker_id),
        )

    def coordinator_set(self, coord_type: CoordType, key: str, broker_id: int) -> None:
        """Make ``broker_id`` the group (or transaction) coordinator for ``key``."""
        kind = b"group" if coord_type is CoordType.GROUP else b"transaction"
        self._check(
            f"coordinator_set({kind.decode()}, {key}, {broker_id})",
            self._lib.coordinator_set(self._mcluster, kind, key.encode(), broker_id),
        )

    def set_apiversion(self, api_key: int, min_version: int, max_version: int) -> None:
        """Change the version range the mock advertises for ``api_key`` (-1, -1: disable)."""
        self._check(
            f"set_apiversion({api_key})",
            self._lib.set_apiversion(self._mcluster, api_key, min_version, max_version),
        )

    def advertise(self, broker_id: int, host: str, port: int) -> None:
        """Advertise ``host:port`` for the broker in Metadata/FindCoordinator answers.

        The broker keeps listening where it was; this only changes what clients are told
        (so a relay in front of it sees every connection).
        """
        self._check(
            f"broker_set_host_port({broker_id})",
            self._lib.broker_set_host_port(self._mcluster, broker_id, host.encode(), port),
        )

    def close(self) -> None:
        """Destroy the owning client, which stops the mock brokers."""
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.flush(5)
            del owner

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# -- the conforming relay ------------------------------------------------------------------

_REQ_HEAD = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id length
_API_VERSIONS = 18
# The newest ApiVersions version whose answer the mock encodes the way Kafka does.
_MOCK_API_VERSIONS_MAX = 2


class MockRelay:
    """Loopback relays in front of every mock broker that undo two wire deviations.

    librdkafka's mock (2.16) differs from Kafka's encoding in two places that a strict
    decoder such as ours rejects (librdkafka's own parser happens to tolerate both):

    1. ApiVersions: it advertises 0-2 only and answers a v3/v4 request (Kafka 2.4+
       accepts v3, 3.7+ v4) with UNSUPPORTED_VERSION in a body that is neither Kafka's
       v0 layout (int32 array count) nor the flexible one (a raw one-byte count, no
       tagged fields). Raised to 0-4 with ``rd_kafka_mock_set_apiversion`` it keeps
       that layout for successful answers. So a client that starts at v4 and falls
       back on a proper v0 UNSUPPORTED_VERSION answer, as Kafka's contract says, never
       gets a usable answer.
    2. Flexible-version responses (Metadata v9+, ...) end with one extra empty
       tagged-field byte after the body's own.

    Each relay forwards bytes unchanged except: ApiVersions requests above v2 go to the
    mock as v2 and their v2 answers are re-encoded at the version the client asked for
    (the same fields; the flexible-only ones stay empty); a flexible response that only
    decodes once one trailing zero byte is dropped has that byte dropped. Every fix is
    counted in :attr:`fixes` so tests can show the deviation is still there. The mock
    is told to advertise the relays' ports, so every connection goes through them.
    Runs on the caller's event loop; :meth:`close` cancels and awaits what it started.
    """

    def __init__(self, mock: MockCluster, host: str = "127.0.0.1") -> None:
        self._mock = mock
        self._host = host
        self._servers: dict[int, asyncio.Server] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.bootstrap_servers = ""
        self.fixes: dict[str, int] = {}

    async def start(self) -> MockRelay:
        """Listen in front of every mock broker and make the mock advertise the relays."""
        upstream = self._mock.bootstrap_servers.split(",")
        addresses = []
        for broker_id, target in zip(self._mock.broker_ids, upstream, strict=True):
            t_host, t_port = target.rsplit(":", 1)
            server = await asyncio.start_server(
                functools.partial(self._accept, host=t_host, port=int(t_port)), self._host, 0
            )
            port = server.sockets[0].getsockname()[1]
            self._servers[broker_id] = server
            self._mock.advertise(broker_id, self._host, port)
            addresses.append(f"{self._host}:{port}")
        self.bootstrap_servers = ",".join(addresses)
        return self

    def _accept(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        task = asyncio.create_task(self._serve(reader, writer, host, port))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        self._writers.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        # correlation id -> (api key, version the client used, version sent to the mock)
        pending: dict[int, tuple[int, int, int]] = {}
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(host, port)
            except OSError:
                return  # a downed mock broker refuses: so does its relay
            self._writers.add(up_writer)
            await pump_until_either_ends(
                self._requests(reader, up_writer, pending),
                self._responses(up_reader, writer, pending),
            )
        finally:
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    w.transport.abort()

    def _count(self, what: str) -> None:
        self.fixes[what] = self.fixes.get(what, 0) + 1

    async def _requests(
        self,
        reader: asyncio.StreamReader,
        up: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, int]],
    ) -> None:
        while (frame := await read_frame(reader)) is not None:
            api_key, version, correlation_id, client_len = _REQ_HEAD.unpack_from(frame)
            sent = version
            if api_key == _API_VERSIONS and version > _MOCK_API_VERSIONS_MAX:
                # Header v2 -> v1: keep key, correlation id and client id; drop the
                # header's tagged fields and the (v3+ only) body.
                sent = _MOCK_API_VERSIONS_MAX
                end = _REQ_HEAD.size + max(client_len, 0)
                head = _REQ_HEAD.pack(api_key, sent, correlation_id, client_len)
                frame = head + frame[_REQ_HEAD.size : end]
            pending[correlation_id] = (api_key, version, sent)
            up.write(framed(frame))
            await up.drain()

    def _conform(self, frame: bytes, api_key: int, version: int, sent: int) -> bytes:
        from aiokafka.errors import KafkaProtocolError
        from aiokafka.protocol import messages as m
        from aiokafka.protocol.api import response_header_version

        response_type = m.RESPONSE_TYPES.get(api_key)
        if response_type is None:
            return frame
        if api_key == _API_VERSIONS and sent != version:
            self._count("ApiVersions re-encoded")
            body = m.ApiVersionsResponse.decode(frame[4:], sent)
            return frame[:4] + body.encode(version)
        if response_header_version(api_key, version) != 1 or frame[4:5] != b"\x00":
            return frame
        try:
            response_type.decode(frame[5:], version)
        except KafkaProtocolError:
            if frame.endswith(b"\x00"):
                try:
                    response_type.decode(frame[5:-1], version)
                except KafkaProtocolError:
                    return frame  # something else is wrong: let the client see it
                self._count(f"{response_type.__name__} trailing byte")
                return frame[:-1]
        return frame

    async def _responses(
        self,
        up: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        pending: dict[int, tuple[int, int, int]],
    ) -> None:
        while (frame := await read_frame(up)) is not None:
            (correlation_id,) = struct.unpack_from(">i", frame)
            request = pending.pop(correlation_id, None)
            if request is not None:
                frame = self._conform(frame, *request)
            writer.write(framed(frame))
            await writer.drain()

    def cut(self) -> None:
        """Abort every relayed connection (both sides), as a broker failure would."""
        for w in list(self._writers):
            w.transport.abort()

    async def close(self) -> None:
        """Stop listening, abort every connection and await every relay task."""
        for server in self._servers.values():
            server.close()
        self.cut()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for server in self._servers.values():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), 5)

    async def __aenter__(self) -> MockRelay:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
