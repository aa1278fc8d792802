"""Shared fixtures: real Kafka brokers (logic in tools/kafka/rig.py, see its docstring)."""

from __future__ import annotations

import importlib
import itertools
import os
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
from hypothesis import settings

from aiokafka.admin import AIOKafkaAdminClient
from tests.support.kafka_python import close_sockets_on_failed_connect
from tests.support.loops import LoopFactory, loop_factories
from tools.kafka.fetch import ensure_jars
from tools.kafka.rig import KafkaCluster, KafkaStartError

# kafka-python (a test-only peer) loads its JSON schemas with importlib.resources' deprecated
# open_text() at import time; the warning is attributed to importlib, so pyproject's
# "ignore::DeprecationWarning:kafka.*" filter misses it and filterwarnings=error would turn
# the first `import kafka` into a collection error. Import it once here, quietly.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        importlib.import_module("kafka")
    except ImportError:  # only the interop/rig tests need it
        pass
close_sockets_on_failed_connect()

# Hypothesis fails an example that once took over 200 ms; on a 2-core machine shared with
# JVM brokers a pure-function example can stall that long. Correctness is what is tested.
settings.register_profile("aiokafka", deadline=None)
settings.load_profile("aiokafka")

# AIOKAFKA_TEST_LOOP=uvloop (`make test-uvloop`) or =eager runs every async test on that
# event loop (tests/support/loops.py); tests/uvloop/ always runs on uvloop. pytest-asyncio
# wants a loop factory from this hook for every test once the hook exists, so it exists
# only then.
_TEST_LOOP = os.environ.get("AIOKAFKA_TEST_LOOP", "asyncio")
_TEST_LOOP_FACTORIES = loop_factories(_TEST_LOOP)  # checks the name first
if _TEST_LOOP != "asyncio":

    def pytest_asyncio_loop_factories(
        config: pytest.Config, item: pytest.Item
    ) -> dict[str, LoopFactory]:
        """pytest-asyncio's hook: the event loop every async test runs on."""
        return _TEST_LOOP_FACTORIES


START_TIMEOUT = float(os.environ.get("AIOKAFKA_RIG_START_TIMEOUT", "90"))


def _start(num_nodes: int) -> KafkaCluster:
    try:
        ensure_jars()
    except RuntimeError as exc:
        pytest.fail(f"Kafka jars are missing and could not be fetched; run `make kafka`.\n{exc}")
    try:
        return KafkaCluster(num_nodes).start(timeout=START_TIMEOUT)
    except KafkaStartError as exc:
        pytest.fail(f"Kafka did not start:\n{exc}", pytrace=False)


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaCluster]:
    """One combined broker/controller with PLAINTEXT, SASL_PLAINTEXT, SSL and SASL_SSL."""
    cluster = _start(1)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaCluster]:
    """Three combined nodes (KRaft quorum of three), PLAINTEXT; started only when requested."""
    cluster = _start(3)
    yield cluster
    cluster.stop()


@pytest.fixture
async def admin(kafka: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    """An admin client of the single node (modules that need another cluster or
    settings define their own ``admin``)."""
    async with AIOKafkaAdminClient(
        bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=15000
    ) as client:
        yield client


_topic_counter = itertools.count()


@pytest.fixture
def new_topic(
    request: pytest.FixtureRequest,
) -> Callable[..., str]:
    """Factory creating a uniquely-named topic; ``cluster=None`` means the single node."""

    def create(
        partitions: int = 1,
        replication_factor: int = 1,
        cluster: KafkaCluster | None = None,
        config: dict[str, str] | None = None,
    ) -> str:
        target = cluster if cluster is not None else request.getfixturevalue("kafka")
        base = request.node.name.replace("[", "-").replace("]", "")
        safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:150]
        name = f"{safe}-{next(_topic_counter)}-{uuid.uuid4().hex[:8]}"
        return target.create_topic(name, partitions, replication_factor, config)

    return create
