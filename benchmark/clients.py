"""The clients the harness compares: which worker, which interpreter, which environment.

Peers run under the harness's own interpreter, except aiokafka 0.14, which has our import
name and so gets a virtualenv of its own (``benchmark/.venvs/aiokafka014``, created on first
use). Our own workers run with the repository root on ``PYTHONPATH``; peers run without it,
so that nothing of ours can shadow what they import.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
VENVS_DIR = BENCH_DIR / ".venvs"

#: Seconds allowed for creating a peer's virtualenv and installing it from PyPI.
VENV_TIMEOUT = 600.0


class ClientUnavailable(Exception):
    """The client cannot run here (its environment could not be made); the message says why."""


@dataclass(frozen=True)
class Client:
    """One benchmarked client and how to start its workers."""

    name: str
    description: str
    producer_worker: str
    """File name under ``benchmark/`` of the worker for the producer scenarios."""
    consumer_worker: str
    """File name under ``benchmark/`` of the worker for the consumer scenarios."""
    api: str | None = None
    """Passed as ``--api`` (one worker serving two APIs of the same library)."""
    venv: str | None = None
    """Name under ``benchmark/.venvs/`` of the client's own virtualenv, if it needs one."""
    requirement: str | None = None
    """What to ``pip install`` into that virtualenv (requirements separated by spaces)."""
    ours: bool = False
    no_extensions: bool = False
    """Run ours with ``AIOKAFKA_NO_EXTENSIONS=1`` (the pure-Python paths)."""
    loop: str | None = None
    """``"uvloop"``: the worker's event loop is uvloop's (``workerlib.run``), not asyncio's."""
    base: bool = False
    """Ours from the tree of another commit (``run_all.py --base REV``, see
    ``benchmark/base_tree.py``): its package and its own workers."""

    def root(self) -> Path:
        """The tree whose workers (and, for ours, package) this client runs.

        Raises:
            ClientUnavailable: a base client with no base tree prepared.
        """
        return base_tree() if self.base else ROOT

    def worker(self, consumer: bool) -> Path:
        """Path of the worker script for a consumer or a producer scenario."""
        name = self.consumer_worker if consumer else self.producer_worker
        return self.root() / "benchmark" / name

    def env(self) -> dict[str, str]:
        """Environment for this client's workers."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        if self.ours:
            env["PYTHONPATH"] = str(self.root())
            if self.no_extensions:
                env["AIOKAFKA_NO_EXTENSIONS"] = "1"
        else:
            # aiokafka 0.14 reads the same switch for its Cython extensions: a run of ours
            # with AIOKAFKA_NO_EXTENSIONS=1 must still measure the peer as installed.
            env.pop("AIOKAFKA_NO_EXTENSIONS", None)
        if self.loop is not None:
            env["AIOKAFKA_BENCH_LOOP"] = self.loop
        # Worker output is read after it exits; unbuffered stderr keeps the last words of a
        # worker that is killed on timeout.
        env["PYTHONUNBUFFERED"] = "1"
        return env


OURS = "ours"
#: The environment variable naming the tree the ``ours-base`` client runs (set by
#: ``run_all.py --base``).
BASE_ENV = "AIOKAFKA_BENCH_BASE"


def base_tree() -> Path:
    """The tree ``run_all.py --base`` prepared for the ``ours-base`` client.

    Raises:
        ClientUnavailable: none was prepared, or it is not a checkout of this package.
    """
    name = os.environ.get(BASE_ENV)
    if not name:
        raise ClientUnavailable(f"ours-base runs another commit: give --base REV (or {BASE_ENV})")
    tree = Path(name)
    if not (tree / "aiokafka" / "__init__.py").is_file():
        raise ClientUnavailable(f"{BASE_ENV}={name} is not a checkout of this package")
    return tree


#: aiokafka 0.14's virtualenv, ``benchmark/.venvs/aiokafka014`` (uvloop too, for its
#: *-uvloop client). tests/compat and ``make compat-env`` install the same: a virtualenv
#: whose marker names another requirement is made again from scratch, so two
#: requirements for one virtualenv reinstalled it at every switch between the suite
#: and the benchmark.
AIOKAFKA014_VENV = "aiokafka014"
AIOKAFKA014_REQUIREMENT = "aiokafka==0.14.0 uvloop==0.23.0"

CLIENTS: tuple[Client, ...] = (
    Client(
        OURS,
        "this repository's aiokafka",
        producer_worker="bench_producer_ours.py",
        consumer_worker="bench_consumer_ours.py",
        ours=True,
    ),
    Client(
        "ours-pure",
        "this repository's aiokafka without its C extensions (AIOKAFKA_NO_EXTENSIONS=1)",
        producer_worker="bench_producer_ours.py",
        consumer_worker="bench_consumer_ours.py",
        ours=True,
        no_extensions=True,
    ),
    Client(
        "ours-batch",
        "this repository's aiokafka, create_batch()/send_batch() (producer throughput only)",
        producer_worker="bench_producer_ours.py",
        consumer_worker="bench_consumer_ours.py",
        api="batch",
        ours=True,
    ),
    Client(
        "ours-base",
        "this repository's aiokafka at another commit (--base REV), for A/B in one run",
        producer_worker="bench_producer_ours.py",
        consumer_worker="bench_consumer_ours.py",
        ours=True,
        base=True,
    ),
    Client(
        "ours-uvloop",
        "this repository's aiokafka on uvloop's event loop",
        producer_worker="bench_producer_ours.py",
        consumer_worker="bench_consumer_ours.py",
        ours=True,
        loop="uvloop",
    ),
    Client(
        "confluent",
        "confluent-kafka Producer/Consumer (librdkafka)",
        producer_worker="worker_confluent.py",
        consumer_worker="worker_confluent.py",
        api="sync",
    ),
    Client(
        "confluent-aio",
        "confluent-kafka confluent_kafka.aio AIOProducer/AIOConsumer",
        producer_worker="worker_confluent.py",
        consumer_worker="worker_confluent.py",
        api="aio",
    ),
    Client(
        "kafka-python",
        "kafka-python (threads for concurrency)",
        producer_worker="worker_kafka_python.py",
        consumer_worker="worker_kafka_python.py",
    ),
    Client(
        "aiokafka-0.14",
        "aiokafka 0.14.0 from PyPI, own virtualenv",
        producer_worker="worker_aiokafka014.py",
        consumer_worker="worker_aiokafka014.py",
        venv=AIOKAFKA014_VENV,
        requirement=AIOKAFKA014_REQUIREMENT,
    ),
    Client(
        "aiokafka-0.14-uvloop",
        "aiokafka 0.14.0 from PyPI on uvloop's event loop, own virtualenv",
        producer_worker="worker_aiokafka014.py",
        consumer_worker="worker_aiokafka014.py",
        venv=AIOKAFKA014_VENV,
        requirement=AIOKAFKA014_REQUIREMENT,
        loop="uvloop",
    ),
)

BY_NAME = {client.name: client for client in CLIENTS}


def venv_python(venv: str) -> Path:
    """Interpreter path of ``benchmark/.venvs/<venv>``."""
    return VENVS_DIR / venv / "bin" / "python"


_MARKER = ".bench-installed"


def venv_ready(venv: str, requirement: str | None) -> bool:
    """Whether ``benchmark/.venvs/<venv>`` exists with ``requirement`` installed."""
    marker = VENVS_DIR / venv / _MARKER
    try:
        return marker.read_text() == requirement and venv_python(venv).exists()
    except OSError:
        return False


def ensure_venv(venv: str, requirement: str, timeout: float = VENV_TIMEOUT) -> Path:
    """Create ``benchmark/.venvs/<venv>`` with ``requirement`` installed, once.

    A marker file records the installed requirement; a virtualenv without it (a previous
    attempt was interrupted) or with another requirement is reinstalled.

    Returns:
        The virtualenv's interpreter.

    Raises:
        ClientUnavailable: if creating it or installing into it fails or takes too long.
    """
    home = VENVS_DIR / venv
    python = venv_python(venv)
    if venv_ready(venv, requirement):
        return python
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(home)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *requirement.split(),
        ],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClientUnavailable(f"virtualenv {venv}: {' '.join(step[:4])}: {exc}") from exc
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise ClientUnavailable(f"virtualenv {venv}: `{' '.join(step)}` failed: {tail}")
    (home / _MARKER).write_text(requirement)
    return python


def interpreter(client: Client) -> Path:
    """The Python that runs ``client``'s workers, creating its virtualenv if needed.

    Raises:
        ClientUnavailable: if the client's virtualenv cannot be made.
    """
    if client.base:
        base_tree()  # raises ClientUnavailable when --base was not given
    if client.venv is None:
        return Path(sys.executable)
    assert client.requirement is not None, "a client with a venv names its requirement"
    return ensure_venv(client.venv, client.requirement)


def worker_command(
    client: Client,
    python: Path,
    *,
    scenario: str,
    bootstrap: str,
    topic: str,
    count: int,
    size: int,
    partitions: int,
    concurrency: int,
    acks: str = "1",
    extra: Sequence[str] = (),
) -> list[str]:
    """The command line of the worker contract for one run."""
    consumer = scenario.startswith("consume")
    cmd = [
        str(python),
        str(client.worker(consumer)),
        "--scenario",
        scenario,
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--count",
        str(count),
        "--size",
        str(size),
        "--partitions",
        str(partitions),
        "--acks",
        acks,
        "--concurrency",
        str(concurrency),
    ]
    if client.api is not None:
        cmd += ["--api", client.api]
    return [*cmd, *extra]
