"""Real Apache Kafka brokers (KRaft, combined broker/controller nodes) for tests and demos.

Typical use::

    cluster = KafkaCluster(num_nodes=1).start()   # PLAINTEXT, SASL_PLAINTEXT, SSL, SASL_SSL
    cluster.create_topic("t", partitions=3)
    ...
    cluster.stop()

``KafkaCluster(num_nodes=3)`` gives a three-node quorum (PLAINTEXT only unless asked) where
replication factor 3 works and single brokers can be killed and restarted.

Every run lives in ``.kafka/<run-id>/`` at the repository root (configs, data, ``server.log``
and ``stdout.log`` per node) and is kept afterwards for diagnosis; only the newest
``KEEP_RUNS`` run directories are kept. Brokers listen on free ports of 127.0.0.1 only.
Brokers still running when the interpreter exits are stopped by an ``atexit`` hook, unless
the cluster was started with ``detach=True`` (the CLI's ``start``).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tools.kerberos.broker import GSSAPI_LISTENER, GssapiListener

from . import wire
from .config import DEFAULT_USERS, NodeSpec, log4j2_properties, server_properties
from .fetch import LIBS_DIR, ensure_jars
from .processes import free_ports, pid_alive, stop_pids
from .tls import TlsMaterial, make_tls_material

# pid_alive and stop_pids are the CLI's (tools/kafka/__main__.py), re-exported here.
__all__ = [
    "KafkaCluster",
    "KafkaNode",
    "KafkaStartError",
    "pid_alive",
    "start_cluster",
    "start_single",
    "stop_pids",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNS_DIR = REPO_ROOT / ".kafka"
STATE_FILE = RUNS_DIR / "state.json"
KEEP_RUNS = 20
HOST = "127.0.0.1"
ALL_LISTENERS = ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL")

# CreateTopics codes worth retrying: the controller moved or is still electing.
_RETRIABLE_CREATE = {7: "REQUEST_TIMED_OUT", 41: "NOT_CONTROLLER"}
_CREATE_ERRORS = {
    36: "TOPIC_ALREADY_EXISTS",
    37: "INVALID_PARTITIONS",
    38: "INVALID_REPLICATION_FACTOR",
    17: "INVALID_TOPIC_EXCEPTION",
    40: "INVALID_CONFIG",
    42: "INVALID_REQUEST",
}

_LIVE: list[KafkaCluster] = []


class KafkaStartError(RuntimeError):
    """A broker did not start (or restart) in time; the message carries its log tail."""


@dataclass
class KafkaNode:
    """One combined broker/controller process."""

    node_id: int
    host: str
    ports: dict[str, int]
    """Listener name -> port (includes ``CONTROLLER``)."""
    dir: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def config_file(self) -> Path:
        return self.dir / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.dir / "logs" / "server.log"

    @property
    def stdout_file(self) -> Path:
        return self.dir / "stdout.log"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def address(self, listener: str = "PLAINTEXT") -> str:
        """``host:port`` of one of this node's listeners."""
        if listener not in self.ports or listener == "CONTROLLER":
            raise ValueError(f"listener must be one of {sorted(self.client_listeners)}")
        return f"{self.host}:{self.ports[listener]}"

    @property
    def client_listeners(self) -> list[str]:
        return [name for name in self.ports if name != "CONTROLLER"]


def _cluster_id() -> str:
    # Kafka's Uuid text form: URL-safe base64 without padding; it never starts with '-'.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _tail(path: Path, lines: int) -> str:
    try:
        content = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return f"({path} does not exist)"
    return "\n".join(content[-lines:])


def _live_run_dirs() -> set[Path]:
    """Run directories whose broker JVMs are still running (found in /proc cmdlines)."""
    live: set[Path] = set()
    prefix = str(RUNS_DIR) + os.sep
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        for arg in args:
            text = arg.decode(errors="replace")
            if text.startswith(prefix):
                live.add(RUNS_DIR / Path(text[len(prefix) :]).parts[0])
    return live


def _prune_runs() -> None:
    keep: set[Path] = set()
    with contextlib.suppress(OSError, ValueError, KeyError):
        keep.add(Path(json.loads(STATE_FILE.read_text())["work_dir"]))  # the CLI's brokers
    keep |= _live_run_dirs()  # brokers of another test session or a benchmark still use them
    runs = sorted((p for p in RUNS_DIR.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in runs[:-KEEP_RUNS]:
        if old not in keep:
            shutil.rmtree(old, ignore_errors=True)


def _racks(racks: bool | Sequence[str] | None, num_nodes: int) -> list[str] | None:
    if racks is None:
        racks = num_nodes >= 3
    if racks is True:
        return [f"r{i}" for i in range(num_nodes)]
    if racks is False:
        return None
    if isinstance(racks, str):
        raise TypeError("racks must be a bool or a sequence of str")
    names = list(racks)
    if len(names) != num_nodes or not all(isinstance(r, str) and r for r in names):
        raise ValueError(f"racks must name one non-empty rack per node ({num_nodes})")
    return names


def _wait(what: str, predicate: Callable[[], bool], deadline: float, interval: float = 0.2) -> None:
    while True:
        if predicate():
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(what)
        time.sleep(interval)


class KafkaCluster:
    """A set of KRaft nodes, each a combined broker and controller, on loopback ports.

    The constructor only records the settings; :meth:`start` formats storage, launches the
    JVMs and returns once every broker answers Metadata listing all the others.

    Args:
        num_nodes: Number of nodes; all of them vote in the controller quorum.
        listeners: Client listeners; default all four for a single node, PLAINTEXT for more.
            PLAINTEXT is always present (inter-broker traffic and probes use it).
        auto_create_topics: Value of ``auto.create.topics.enable``.
        users: SASL users by mechanism, default :data:`DEFAULT_USERS`.
        extra_config: Extra ``server.properties`` entries for every node.
        heap: JVM ``-Xmx`` per node.
        label: Part of the run directory name.
        detach: Leave the brokers running at interpreter exit (for the CLI).
        racks: ``broker.rack`` per node, in node order; ``True`` gives ``"r0"``,
            ``"r1"``, ...; ``False`` none. Default: racks for clusters of three or more
            nodes. Racked brokers use ``RackAwareReplicaSelector``, so a consumer with
            ``client_rack`` fetches from the replica in its rack (KIP-392).
        features: Feature levels to format the storage with (KIP-584), e.g.
            ``{"transaction.version": 1}`` for a cluster that runs the older
            transaction protocol; default the release's own levels.
        advertised_ports: Node id -> port to advertise for PLAINTEXT instead of the
            listener's own, e.g. a fault proxy in front of each broker (``tools/chaos``).
            Clients then reach the node only through that port; so does inter-broker
            traffic (replication, transaction markers), which follows the advertised
            address. The rig's own probes still use the real port.
        gssapi: Add the Kerberos listener ``GSSAPI`` (``bootstrap("GSSAPI")``).
        classpath: Extra class path entries of the broker JVMs (plugins named in
            ``extra_config``, e.g. :mod:`tools.kafka.telemetry_plugin`).
    """

    def __init__(
        self,
        num_nodes: int = 1,
        *,
        listeners: Iterable[str] | None = None,
        auto_create_topics: bool = False,
        users: dict[str, tuple[str, str]] | None = None,
        extra_config: dict[str, str] | None = None,
        heap: str = "512m",
        label: str | None = None,
        detach: bool = False,
        racks: bool | Sequence[str] | None = None,
        features: dict[str, int] | None = None,
        advertised_ports: dict[int, int] | None = None,
        gssapi: GssapiListener | None = None,
        classpath: Sequence[Path] = (),
    ) -> None:
        if num_nodes < 1:
            raise ValueError("num_nodes must be at least 1")
        chosen = (
            list(listeners)
            if listeners is not None
            else (list(ALL_LISTENERS) if num_nodes == 1 else ["PLAINTEXT"])
        )
        unknown = set(chosen) - set(ALL_LISTENERS)
        if unknown:
            raise ValueError(f"listeners: unknown {sorted(unknown)}, known {ALL_LISTENERS}")
        self.listeners = ["PLAINTEXT", *(name for name in chosen if name != "PLAINTEXT")]
        self.gssapi = gssapi
        if gssapi is not None:
            self.listeners.append(GSSAPI_LISTENER)
        self.num_nodes = num_nodes
        self.auto_create_topics = auto_create_topics
        self.users = dict(users or DEFAULT_USERS)
        self.extra_config = dict(extra_config or {})
        self.heap = heap
        self.detach = detach
        self.label = label or ("single" if num_nodes == 1 else f"cluster{num_nodes}")
        self.racks: list[str] | None = _racks(racks, num_nodes)
        self.features = dict(features or {})
        self.advertised_ports = dict(advertised_ports or {})
        self.classpath = [Path(p) for p in classpath]
        self.nodes: list[KafkaNode] = []
        self.work_dir: Path | None = None
        self.cluster_id: str | None = None
        self.tls: TlsMaterial | None = None
        self.start_seconds: float | None = None

    # ---------------------------------------------------------------- addresses

    @property
    def bootstrap_servers(self) -> str:
        """Comma-separated PLAINTEXT ``host:port`` of every node."""
        return self.bootstrap("PLAINTEXT")

    def bootstrap(self, listener: str = "PLAINTEXT") -> str:
        """Comma-separated ``host:port`` of ``listener`` on every node.

        Raises:
            ValueError: if the cluster has no such listener.
        """
        if listener not in self.listeners:
            raise ValueError(f"listener {listener!r} not enabled; have {self.listeners}")
        return ",".join(node.address(listener) for node in self.nodes)

    @property
    def ca_file(self) -> str:
        """PEM file of the CA that signed the broker certificate.

        Raises:
            RuntimeError: if the cluster has no SSL listener.
        """
        if self.tls is None:
            raise RuntimeError("this cluster has no SSL/SASL_SSL listener, hence no CA")
        return str(self.tls.ca_file)

    def rack(self, node_id: int) -> str | None:
        """``broker.rack`` of node ``node_id`` (``None`` without racks)."""
        index = self.nodes.index(self.node(node_id))
        return None if self.racks is None else self.racks[index]

    def node(self, node_id: int) -> KafkaNode:
        """The node with id ``node_id``."""
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise ValueError(f"node_id {node_id} not in {[n.node_id for n in self.nodes]}")

    def live_nodes(self) -> list[KafkaNode]:
        """Nodes whose process is running."""
        return [node for node in self.nodes if node.alive]

    # ---------------------------------------------------------------- lifecycle

    def start(self, timeout: float = 90.0) -> KafkaCluster:
        """Format storage, launch every node and wait until all brokers are registered.

        Raises:
            KafkaStartError: if a node exits or the cluster is not ready within ``timeout``
                seconds; the message has each node's log tail. Started processes are stopped.
        """
        if self.nodes:
            raise RuntimeError("cluster already started")
        began = time.monotonic()
        ensure_jars()
        if shutil.which("java") is None:
            raise KafkaStartError("`java` (JDK 17+) is not on PATH")
        RUNS_DIR.mkdir(exist_ok=True)
        _prune_runs()
        run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{self.label}"
        self.work_dir = RUNS_DIR / run_id
        self.work_dir.mkdir()
        if any(name.endswith("SSL") for name in self.listeners):
            self.tls = make_tls_material(self.work_dir / "tls")
        self.cluster_id = _cluster_id()

        names = [*self.listeners, "CONTROLLER"]
        try:
            ports = iter(free_ports(HOST, len(names) * self.num_nodes))
        except OSError as exc:
            raise KafkaStartError(str(exc)) from exc
        for node_id in range(1, self.num_nodes + 1):
            node_ports = {name: next(ports) for name in names}
            node_dir = self.work_dir / f"node-{node_id}"
            (node_dir / "logs").mkdir(parents=True)
            self.nodes.append(KafkaNode(node_id, HOST, node_ports, node_dir))
        specs = [
            NodeSpec(
                n.node_id,
                n.host,
                n.ports,
                n.dir / "data",
                None if self.racks is None else self.racks[i],
            )
            for i, n in enumerate(self.nodes)
        ]
        kerberos = self.gssapi.server_properties() if self.gssapi else {}
        for spec, node in zip(specs, self.nodes, strict=True):
            node.config_file.write_text(
                server_properties(
                    spec,
                    specs,
                    auto_create_topics=self.auto_create_topics,
                    users=self.users,
                    tls=self.tls,
                    extra={**kerberos, **self.extra_config, **self._advertised(node)},
                )
            )
            (node.dir / "log4j2.properties").write_text(log4j2_properties(node.log_file))
        self._format_all()
        _LIVE.append(self)
        try:
            for node in self.nodes:
                self._launch(node)
            self._wait_ready(self.nodes, began + timeout, "start")
        except BaseException:
            self.stop(timeout=10)
            raise
        self.start_seconds = time.monotonic() - began
        (self.work_dir / "rig.json").write_text(json.dumps(self.describe(), indent=2))
        return self

    def _advertised(self, node: KafkaNode) -> dict[str, str]:
        port = self.advertised_ports.get(node.node_id)
        if port is None:
            return {}
        ports = {name: p for name, p in node.ports.items() if name != "CONTROLLER"}
        ports["PLAINTEXT"] = port
        return {
            "advertised.listeners": ",".join(f"{n}://{node.host}:{p}" for n, p in ports.items())
        }

    @staticmethod
    def _java(
        main: str,
        *args: str,
        xmx: str,
        xms: str,
        props: Iterable[str] = (),
        classpath: Iterable[Path] = (),
    ) -> list[str]:
        return [
            "java",
            f"-Xmx{xmx}",
            f"-Xms{xms}",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            *props,
            "-cp",
            os.pathsep.join([str(LIBS_DIR / "*"), *(str(p) for p in classpath)]),
            main,
            *args,
        ]

    # The formatter runs for a second: C1 only and the serial GC start it faster, and with
    # three formatters on two cores the JIT's background compilation is what dominates.
    _SHORT_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

    def _format_all(self) -> None:
        scram = [
            arg
            for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512")
            if mech in self.users
            for arg in (
                "--add-scram",
                f"{mech}=[name={self.users[mech][0]},password={self.users[mech][1]}]",
            )
        ]
        features = [
            arg for name, level in self.features.items() for arg in ("--feature", f"{name}={level}")
        ]
        assert self.cluster_id is not None
        # The formatter is a short JVM of its own; run all nodes' at once to halve the wait.
        procs = []
        for node in self.nodes:
            log = (node.dir / "format.log").open("wb")
            cmd = self._java(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                self.cluster_id,
                "-c",
                str(node.config_file),
                *scram,
                *features,
                xmx="256m",
                xms="64m",
                props=self._SHORT_JVM,
                classpath=self.classpath,
            )
            procs.append((node, log, subprocess.Popen(cmd, stdout=log, stderr=log)))
        failed = []
        for node, log, proc in procs:
            try:
                code = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            log.close()
            if code != 0:
                failed.append(f"node {node.node_id}:\n{_tail(node.dir / 'format.log', 30)}")
        if failed:
            raise KafkaStartError("storage format failed\n" + "\n".join(failed))

    def _launch(self, node: KafkaNode) -> None:
        props = [
            f"-Dlog4j2.configurationFile={node.dir / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={node.dir / 'logs'}",
        ]
        if self.gssapi is not None:
            props.append(f"-Djava.security.krb5.conf={self.gssapi.krb5_conf}")
        cmd = self._java(
            "kafka.Kafka",
            str(node.config_file),
            xmx=self.heap,
            xms="256m",
            props=props,
            classpath=self.classpath,
        )
        with node.stdout_file.open("ab") as out:
            # A new session: Ctrl-C in the terminal must not kill brokers behind our back;
            # they are stopped in order by stop() or the atexit hook.
            node.process = subprocess.Popen(
                cmd,
                cwd=node.dir,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def _node_registered(self, node: KafkaNode, expected: set[int]) -> bool:
        try:
            seen = wire.metadata(node.host, node.ports["PLAINTEXT"], topics=[], timeout=2)
        except wire.WireError:
            return False
        if not expected <= seen.broker_ids:
            return False
        # All listeners bind before the broker registers, so this only fails if one is broken.
        for listener in node.client_listeners:
            try:
                socket.create_connection((node.host, node.ports[listener]), timeout=2).close()
            except OSError:
                return False
        return True

    def _wait_ready(self, nodes: list[KafkaNode], deadline: float, what: str) -> None:
        def ready() -> bool:
            dead = [n for n in nodes if not n.alive]
            if dead:
                raise KafkaStartError(
                    f"{what}: node {dead[0].node_id} exited with code "
                    f"{dead[0].process.poll() if dead[0].process else None}\n"
                    + self._diagnosis(dead)
                )
            expected = {n.node_id for n in self.live_nodes()}
            return all(self._node_registered(n, expected) for n in self.live_nodes())

        try:
            _wait(what, ready, deadline)
        except TimeoutError:
            raise KafkaStartError(
                f"{what}: brokers not ready in time ({self.work_dir})\n" + self._diagnosis(nodes)
            ) from None

    def _diagnosis(self, nodes: Iterable[KafkaNode]) -> str:
        return "\n".join(
            f"--- node {n.node_id} ({n.dir}) ---\n{self.log_tail(n.node_id)}" for n in nodes
        )

    def kill(self, node_id: int) -> None:
        """SIGKILL one node and wait for the process to be gone."""
        node = self.node(node_id)
        if node.process is not None and node.alive:
            node.process.kill()
            node.process.wait(timeout=30)

    def pause(self, node_id: int) -> None:
        """SIGSTOP one node: it keeps its sockets but answers nothing (a hung JVM)."""
        node = self.node(node_id)
        if node.process is not None and node.alive:
            node.process.send_signal(signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        """SIGCONT a node stopped by :meth:`pause`."""
        node = self.node(node_id)
        if node.process is not None and node.alive:
            node.process.send_signal(signal.SIGCONT)

    def restart(self, node_id: int, timeout: float = 60.0) -> None:
        """Start a stopped/killed node again with the same ports and data directory.

        Returns once every live broker (the restarted one included) lists it.

        Raises:
            KafkaStartError: if the node does not rejoin within ``timeout`` seconds.
        """
        node = self.node(node_id)
        if node.alive:
            raise RuntimeError(f"node {node_id} is still running; kill() it first")
        deadline = time.monotonic() + timeout
        self._launch(node)
        self._wait_ready([node], deadline, f"restart of node {node_id}")

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM every node, SIGKILL the ones still running after ``timeout`` seconds."""
        running = [n for n in self.nodes if n.process is not None and n.alive]
        for node in running:
            assert node.process is not None
            with contextlib.suppress(ProcessLookupError):
                node.process.terminate()
        deadline = time.monotonic() + timeout
        for node in running:
            assert node.process is not None
            try:
                node.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait(timeout=10)
        if self in _LIVE:
            _LIVE.remove(self)

    def __enter__(self) -> KafkaCluster:
        return self if self.nodes else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---------------------------------------------------------------- inspection

    def log_tail(self, node_id: int, lines: int = 60) -> str:
        """Last ``lines`` of the node's ``server.log`` and ``stdout.log`` (JVM errors)."""
        node = self.node(node_id)
        return (
            f"[server.log]\n{_tail(node.log_file, lines)}\n"
            f"[stdout.log]\n{_tail(node.stdout_file, 20)}"
        )

    def metadata(self, topics: list[str] | None = None) -> wire.ClusterMetadata:
        """Metadata v1 from the first live node that answers.

        Raises:
            wire.WireError: if no live node answers.
        """
        errors = []
        for node in self.live_nodes():
            try:
                return wire.metadata(node.host, node.ports["PLAINTEXT"], topics)
            except wire.WireError as exc:
                errors.append(str(exc))
        raise wire.WireError(f"no live broker answered: {errors}")

    def wait_for(self, what: str, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        """Poll ``predicate`` until it is true (``wire.WireError`` counts as false).

        Raises:
            TimeoutError: naming ``what`` if it stays false for ``timeout`` seconds.
        """

        def guarded() -> bool:
            try:
                return predicate()
            except wire.WireError:
                return False

        _wait(what, guarded, time.monotonic() + timeout)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> str:
        """Create a topic and wait until every live broker knows all its partition leaders.

        Returns:
            ``name``.

        Raises:
            ValueError: on bad arguments.
            RuntimeError: if the broker refuses (e.g. TOPIC_ALREADY_EXISTS).
            TimeoutError: if leaders are not known everywhere within ``timeout`` seconds.
        """
        if not name:
            raise ValueError("name must not be empty")
        if partitions < 1:
            raise ValueError("partitions must be at least 1")
        if not 1 <= replication_factor <= self.num_nodes:
            raise ValueError(f"replication_factor must be in 1..{self.num_nodes}")
        deadline = time.monotonic() + timeout
        while True:
            node = self.live_nodes()[0]
            result = wire.create_topics(
                node.host,
                node.ports["PLAINTEXT"],
                name,
                partitions,
                replication_factor,
                config,
                timeout_ms=int(timeout * 1000),
            )
            if result.error_code in _RETRIABLE_CREATE and time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            if result.error_code != 0:
                code = _CREATE_ERRORS.get(
                    result.error_code, _RETRIABLE_CREATE.get(result.error_code, "error")
                )
                raise RuntimeError(
                    f"CreateTopics {name!r}: {code} ({result.error_code}) {result.error_message}"
                )
            break

        self.wait_topic(name, partitions, max(1.0, deadline - time.monotonic()))
        return name

    def wait_topic(self, name: str, partitions: int | None = None, timeout: float = 30.0) -> None:
        """Wait until every live broker's metadata has ``name`` with a leader for each
        partition, and each leader serves its partitions.

        A topic created through any client (CreateTopics is answered once the controller
        committed it) reaches each broker's metadata cache a little later; a client asking
        another broker in between gets UNKNOWN_TOPIC_OR_PARTITION. Call this after creating
        a topic on a multi-node cluster by other means than :meth:`create_topic`.

        Args:
            name: The topic.
            partitions: Expected partition count; ``None`` accepts any (at least one).
            timeout: Seconds to wait.

        Raises:
            TimeoutError: if some broker does not know the topic and its leaders in time.
        """

        def known() -> bool:
            live = {node.node_id: node for node in self.live_nodes()}
            topic = None
            for node in live.values():
                topic = wire.metadata(node.host, node.ports["PLAINTEXT"], [name]).topics.get(name)
                if topic is None or topic.error_code or not topic.partitions:
                    return False
                if partitions is not None and len(topic.partitions) != partitions:
                    return False
                if any(p.leader < 0 for p in topic.partitions):
                    return False
            # A broker named leader in the metadata may not have taken leadership yet
            # (it answers NOT_LEADER_OR_FOLLOWER for a moment): ask each leader itself.
            leaders: dict[int, list[int]] = {}
            for p in topic.partitions if topic is not None else ():
                leaders.setdefault(p.leader, []).append(p.partition)
            for leader, owned in leaders.items():
                server = live.get(leader)
                if server is None:
                    return False
                port = server.ports["PLAINTEXT"]
                errors = wire.latest_offset_errors(server.host, port, name, owned)
                if any(errors.get(p, -1) for p in owned):
                    return False
            return True

        self.wait_for(f"leaders of {name!r} on every broker", known, timeout)

    def describe(self) -> dict[str, Any]:
        """JSON-able summary: addresses, PIDs, paths (the CLI's state file)."""
        return {
            "work_dir": str(self.work_dir),
            "cluster_id": self.cluster_id,
            "bootstrap": {name: self.bootstrap(name) for name in self.listeners},
            "ca_file": str(self.tls.ca_file) if self.tls else None,
            "users": {mech: list(cred) for mech, cred in self.users.items()},
            "nodes": [
                {
                    "node_id": n.node_id,
                    "pid": n.pid,
                    "ports": n.ports,
                    "dir": str(n.dir),
                    "config": str(n.config_file),
                    "rack": self.rack(n.node_id),
                }
                for n in self.nodes
            ],
        }


def start_single(**kwargs: Any) -> KafkaCluster:
    """Start one combined node with every listener (see :class:`KafkaCluster`)."""
    return KafkaCluster(1, **kwargs).start()


def start_cluster(num_nodes: int = 3, **kwargs: Any) -> KafkaCluster:
    """Start a ``num_nodes`` quorum, PLAINTEXT only by default (see :class:`KafkaCluster`)."""
    return KafkaCluster(num_nodes, **kwargs).start()


@atexit.register
def _stop_everything() -> None:
    for cluster in list(_LIVE):
        if not cluster.detach:
            cluster.stop(timeout=10)
