"""The examples run as users run them: as programs, against a real broker."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import ModuleType

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.producer.partitioner import murmur2_partition
from tools.kafka.rig import KafkaCluster

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(200)


def run_example(name: str, *args: str, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_transactional_consume_process_produce_example(kafka: KafkaCluster) -> None:
    """The program processes its 1,000 input records in transactions and finds each
    output exactly once for read_committed readers (it uses fixed topic names, which
    no other test uses)."""
    out = run_example(
        "transactional_consume_process_produce.py", "--bootstrap", kafka.bootstrap_servers
    )
    assert "wrote 1000 input records" in out
    assert "committed a transaction" in out
    match = re.search(r"eos-output holds (\d+) committed records", out)
    assert match is not None, out
    assert int(match.group(1)) == 1000


# -- the examples of the user guide (docs/guide/*.rst include them) ---------------------


def _topic(kafka: KafkaCluster, prefix: str, partitions: int = 1) -> str:
    return kafka.create_topic(f"{prefix}-{uuid.uuid4().hex[:8]}", partitions=partitions)


def _load(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _end_offsets(kafka: KafkaCluster, topic: str, partitions: int) -> dict[int, int]:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers) as consumer:
        ends = await consumer.end_offsets(tps)
    return {tp.partition: offset for tp, offset in ends.items()}


def test_getting_started_example(kafka: KafkaCluster) -> None:
    topic = _topic(kafka, "ex-start")
    out = run_example(
        "getting_started.py",
        "--bootstrap",
        kafka.bootstrap_servers,
        "--topic",
        topic,
        "--group",
        f"g-{topic}",
    )
    assert out.count("produced ") == 3
    consumed = re.findall(r"consumed (b'\w+') from partition 0 at offset (\d)", out)
    assert consumed == [("b'hello'", "0"), ("b'hallo'", "1"), ("b'bonjour'", "2")], out


def test_tracing_example(kafka: KafkaCluster) -> None:
    """One trace from the producing request to the consumer's work, through the
    records' traceparent headers (docs/tracing.md includes this program)."""
    topic = _topic(kafka, "ex-tracing")
    out = run_example(
        "tracing.py",
        "--bootstrap",
        kafka.bootstrap_servers,
        "--topic",
        topic,
        "--group",
        f"g-{topic}",
    )
    spans = re.findall(r"span '([^']+)' kind=(\w+) trace=\w+ parent='([^']*)'", out)
    assert spans.count((f"send {topic}", "PRODUCER", "POST /checkout")) == 2, out
    assert spans.count((f"process {topic}", "CONSUMER", f"send {topic}")) == 2, out
    assert spans.count(("bill", "INTERNAL", f"process {topic}")) == 2, out
    assert (f"commit {topic}", "CLIENT", "-") in spans, out
    assert "one trace from checkout to billing: True" in out


def test_json_serialization_example(kafka: KafkaCluster) -> None:
    topic = _topic(kafka, "ex-json")
    out = run_example(
        "json_serialization.py", "--bootstrap", kafka.bootstrap_servers, "--topic", topic
    )
    assert "customer-1: {'order': 1, 'items': ['tea', 'scone'], 'total': 7.5}" in out
    assert "customer-1: None" in out  # the tombstone stayed one
    assert "read back 3 records as sent" in out


async def test_avro_serialization_example(kafka: KafkaCluster) -> None:
    """Avro with pinned schema ids: a v1 writer, then a v2 writer, one v2 reader
    (docs/guide/serialization.rst includes this program)."""
    topic = _topic(kafka, "ex-avro")
    out = run_example(
        "avro_serialization.py", "--bootstrap", kafka.bootstrap_servers, "--topic", topic
    )
    assert (
        "customer-1: {'order': 1, 'items': ['tea', 'scone'], 'total': 7.5, 'currency': 'EUR'}"
        in out
    ), out
    assert "'currency': 'GBP'}" in out
    assert "customer-1: None" in out  # the tombstone stayed one
    assert "read back 3 records; the v1 record got v2's default currency" in out
    # On the wire: magic byte 0 and the pinned ids 1 and 2, then Avro; the tombstone bare.
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(bootstrap_servers=kafka.bootstrap_servers) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        raw = [(await asyncio.wait_for(consumer.getone(), 30)).value for _ in range(3)]
    assert [v[:5] if v else v for v in raw] == [b"\0\0\0\0\x01", b"\0\0\0\0\x02", None]


async def test_batch_producer_example(kafka: KafkaCluster) -> None:
    topic = _topic(kafka, "ex-batch", partitions=3)
    out = run_example(
        "batch_producer.py",
        "--bootstrap",
        kafka.bootstrap_servers,
        "--topic",
        topic,
        "--records",
        "20000",
    )
    match = re.search(r"sent 20000 records in (\d+) batches", out)
    assert match is not None, out
    batches = int(match.group(1))
    assert batches > 3  # 64 KiB batches: the records do not fit in a few
    ends = await _end_offsets(kafka, topic, 3)
    assert sum(ends.values()) == 20000
    assert all(offset > 0 for offset in ends.values())  # round-robin over partitions


def test_guide_snippets(kafka: KafkaCluster) -> None:
    prefix = f"ex-snip-{uuid.uuid4().hex[:8]}"
    out = run_example(
        "guide_snippets.py", "--bootstrap", kafka.bootstrap_servers, "--prefix", prefix
    )
    assert f"send_one: {prefix}-events[0] offset 0" in out
    assert "deliver small: delivered" in out
    assert "deliver huge: rejected: MessageSizeTooLargeError" in out
    assert f"three_ways_to_read: offsets {list(range(11))}" in out
    assert "cooperative_consumer: offset 0, assigned" in out
    assert "write_atomically: [b'order 17 accepted', b'order 17: 2 x tea']" in out


def test_admin_example(kafka: KafkaCluster) -> None:
    topic = f"ex-admin-{uuid.uuid4().hex[:8]}"
    out = run_example("admin_topics.py", "--bootstrap", kafka.bootstrap_servers, "--topic", topic)
    assert len(re.findall(rf"{topic}\[\d\] leader \d+", out)) == 3, out
    assert "cleanup.policy = compact" in out
    assert f"deleted {topic}" in out


def test_secure_clients_ssl_example(kafka: KafkaCluster) -> None:
    topic = _topic(kafka, "ex-ssl")
    out = run_example(
        "secure_clients.py",
        "ssl",
        "--bootstrap",
        kafka.bootstrap("SSL"),
        "--cafile",
        kafka.ca_file,
        "--topic",
        topic,
    )
    assert f"SSL : wrote and read back {topic}[0] offset 0" in out


@pytest.mark.parametrize(
    ("protocol", "mechanism"),
    [("SASL_SSL", "SCRAM-SHA-512"), ("SASL_SSL", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256")],
)
def test_secure_clients_sasl_example(kafka: KafkaCluster, protocol: str, mechanism: str) -> None:
    topic = _topic(kafka, "ex-sasl")
    user, password = kafka.users[mechanism]
    tls = ["--cafile", kafka.ca_file] if protocol == "SASL_SSL" else []
    out = run_example(
        "secure_clients.py",
        "sasl",
        "--bootstrap",
        kafka.bootstrap(protocol),
        "--mechanism",
        mechanism,
        "--username",
        user,
        "--topic",
        topic,
        *tls,
        env={"KAFKA_PASSWORD": password},
    )
    assert f"{protocol} {mechanism}: wrote and read back {topic}[0] offset 0" in out
    assert password not in out


def test_secure_clients_oauth_example(kafka: KafkaCluster, tmp_path: Path) -> None:
    def b64(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    # An unsigned JWT, which the rig's broker accepts (never do this in production).
    now = time.time()
    claims = {"sub": "example-user", "iat": now - 10, "exp": now + 600}
    token_file = tmp_path / "token.jwt"
    token_file.write_text(f"{b64({'alg': 'none'})}.{b64(claims)}.\n")
    topic = _topic(kafka, "ex-oauth")
    out = run_example(
        "secure_clients.py",
        "oauth",
        "--bootstrap",
        kafka.bootstrap("SASL_SSL"),
        "--cafile",
        kafka.ca_file,
        "--token-file",
        str(token_file),
        "--topic",
        topic,
    )
    assert f"SASL_SSL OAUTHBEARER: wrote and read back {topic}[0] offset 0" in out


def test_secure_clients_gssapi_options_are_valid(kafka: KafkaCluster) -> None:
    """The GSSAPI settings (no KDC here: tests/integration/test_gssapi.py has one) are
    options every client accepts."""
    from aiokafka.cluster.config import ClientConfig

    options = _load("secure_clients").gssapi_options("broker:9094", kafka.ca_file)
    assert options["sasl_mechanism"] == "GSSAPI"
    if importlib.util.find_spec("gssapi") is not None:
        assert ClientConfig(**options).security_protocol == "SASL_SSL"


async def test_web_service_example(kafka: KafkaCluster) -> None:
    """201 with the offset once Kafka has the event; the producer lives and dies with
    the app; 503 with Retry-After once buffer_memory stays full for max_block_ms."""
    from aiohttp.test_utils import TestClient, TestServer

    web_service = _load("web_service")
    topic = _topic(kafka, "ex-web", partitions=2)
    app = web_service.make_app(kafka.bootstrap_servers, topic)
    async with TestClient(TestServer(app)) as client:
        offsets = []
        for i in range(5):
            response = await client.post("/events?key=user-1", json={"n": i})
            assert response.status == 201, await response.text()
            offsets.append((await response.json())["offset"])
        assert offsets == sorted(offsets) and len(set(offsets)) == 5
        bad = await client.post("/events", data=b"not json")
        assert bad.status == 400
    assert sum((await _end_offsets(kafka, topic, 2)).values()) == 5

    # A hung broker (SIGSTOP): the first large event holds 16 KiB of the 20,000-byte
    # buffer while its request waits for an answer; an event for the other partition
    # needs a batch of its own, finds no room within max_block_ms and is refused.
    keys = {murmur2_partition(k.encode(), 2): k for k in ("a", "b", "c", "d", "e", "f")}
    assert set(keys) == {0, 1}
    app = web_service.make_app(
        kafka.bootstrap_servers, topic, max_block_ms=500, buffer_memory=20000
    )
    node = kafka.nodes[0].node_id
    async with TestClient(TestServer(app)) as client:
        warm = await client.post(f"/events?key={keys[0]}", json={})  # metadata known
        assert warm.status == 201
        kafka.pause(node)
        try:
            first = asyncio.create_task(
                client.post(f"/events?key={keys[0]}", json={"x": "y" * 12000})
            )
            deadline = time.monotonic() + 30
            while (await (await client.get("/health")).json())["buffered_bytes"] == 0:
                if first.done():  # answered (refused?) without ever being buffered
                    answer = first.result()
                    pytest.fail(f"first event answered {answer.status}: {await answer.text()}")
                assert time.monotonic() < deadline, "the first event was never buffered"
                await asyncio.sleep(0.05)
            refused = await client.post(f"/events?key={keys[1]}", json={"x": "z" * 12000})
            assert refused.status == 503, await refused.text()
            assert refused.headers["Retry-After"] == "1"
        finally:
            kafka.resume(node)
        accepted = await asyncio.wait_for(first, 60)
        assert accepted.status == 201, await accepted.text()
    assert sum((await _end_offsets(kafka, topic, 2)).values()) == 7


class _Worker:
    """examples/group_worker.py as a child process, its output read line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(
        cls, kafka: KafkaCluster, topic: str, group: str, protocol: str = "classic"
    ) -> _Worker:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(ROOT / "examples" / "group_worker.py"),
            "--bootstrap",
            kafka.bootstrap_servers,
            "--topic",
            topic,
            "--group",
            group,
            "--commit-every",
            "1000",
            "--group-protocol",
            protocol,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        return cls(proc)

    async def wait_for(self, text: str, timeout: float = 90) -> None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in time:\n" + "".join(self.lines)
            line = await asyncio.wait_for(self.proc.stdout.readline(), left)
            assert line, f"exited before {text!r}:\n" + "".join(self.lines)
            self.lines.append(line.decode())

    async def terminate(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.stdout is not None
        rest = await asyncio.wait_for(self.proc.stdout.read(), 60)
        self.lines.extend(rest.decode().splitlines(keepends=True))
        return await asyncio.wait_for(self.proc.wait(), 10)

    async def kill(self) -> None:
        """After a failure: no worker outlives the test."""
        if self.proc.returncode is None:
            self.proc.kill()
            await asyncio.wait_for(self.proc.wait(), 30)


async def _committed(kafka: KafkaCluster, group: str) -> int:
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        offsets = await admin.list_consumer_group_offsets(group)
    return sum(om.offset for om in offsets.values())


async def _produce(kafka: KafkaCluster, topic: str, count: int) -> None:
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(count):
            await producer.send(topic, f"job {i}".encode(), key=str(i).encode())


async def _committed_becomes(kafka: KafkaCluster, group: str, total: int, why: str) -> None:
    deadline = time.monotonic() + 60
    while (committed := await _committed(kafka, group)) != total:
        assert time.monotonic() < deadline, f"{why}: committed {committed}, not {total}"
        await asyncio.sleep(0.2)


async def _committed_exceeds(kafka: KafkaCluster, group: str, total: int, why: str) -> None:
    deadline = time.monotonic() + 60
    while (committed := await _committed(kafka, group)) <= total:
        assert time.monotonic() < deadline, f"{why}: committed {committed}, not above {total}"
        await asyncio.sleep(0.2)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_group_worker_example(kafka: KafkaCluster, protocol: str) -> None:
    """--commit-every is larger than anything here, so only the two other commit
    points commit: SIGTERM (the worker commits, leaves and exits 0) and
    on_partitions_revoked (another worker joins and takes a partition). With the
    classic protocol's eager rebalance every partition is revoked, so everything
    processed is committed then; with KIP-848 only the partition that moves."""
    topic = _topic(kafka, "ex-worker", partitions=2)
    group = f"g-{topic}"
    workers: list[_Worker] = []
    try:
        await _produce(kafka, topic, 300)
        workers.append(first := await _Worker.start(kafka, topic, group, protocol))
        await first.wait_for("processed 300")
        assert await _committed(kafka, group) == 0
        assert await first.terminate() == 0, "".join(first.lines)
        assert "stopped cleanly" in first.lines[-1]
        await _committed_becomes(kafka, group, 300, "SIGTERM's commit")

        # The same group again: it goes on from the committed offsets.
        await _produce(kafka, topic, 100)
        workers.append(second := await _Worker.start(kafka, topic, group, protocol))
        await second.wait_for("processed 100")
        assert await _committed(kafka, group) == 300
        workers.append(third := await _Worker.start(kafka, topic, group, protocol))
        await second.wait_for("revoked [TopicPartition")
        await third.wait_for("assigned [TopicPartition")
        if protocol == "classic":
            await _committed_becomes(kafka, group, 400, "on_partitions_revoked's commit")
        else:
            await _committed_exceeds(kafka, group, 300, "on_partitions_revoked's commit")
        for worker in (second, third):
            assert await worker.terminate() == 0, "".join(worker.lines)
            assert "stopped cleanly" in worker.lines[-1]
        await _committed_becomes(kafka, group, 400, "every worker's commits")
    finally:
        for worker in workers:
            await worker.kill()
