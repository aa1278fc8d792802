"""Run the chaos scenario: a three-broker cluster behind fault proxies, the client workers,
the fault schedule, then the independent check.

Every client connection goes through a :class:`~tests.support.fault_proxy.FaultProxy` in
front of each broker: the brokers advertise the proxies' ports (the rig's
``advertised_ports``), so after bootstrap the clients, and the brokers' replication
traffic, still pass through them. The proxies run on this process's event loop; blocking
rig calls (start, kill, restart, metadata) run in threads so the proxies keep forwarding.

Cluster faults run one at a time on one timeline, each after the cluster has healed from
the previous one (every partition of the data, output and internal topics back to a full
ISR), so the topic (replication factor 3, ``min.insync.replicas=2``) never loses more
than one replica at a time. Client kills run on a second timeline alongside.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.fault_proxy import FaultProxy
from tools.kafka.rig import KafkaCluster

from . import check
from .schedule import Fault, Scenario, is_cluster_fault, make_schedule

WORKER_SCRIPT = Path(__file__).with_name("workers.py")
DATA_TOPIC = "chaos-data"
EOS_OUTPUT = "chaos-eos-out"
GROUP = "chaos-group"
EOS_GROUP = "chaos-eos"
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")

#: Seconds allowed for each bounded step (the machine may be loaded: generous).
CLUSTER_START_TIMEOUT = 240.0
RESTART_TIMEOUT = 180.0
HEAL_TIMEOUT = 120.0
WORKER_STOP_TIMEOUT = 150.0
CATCH_UP_TIMEOUT = 240.0
#: Seconds between the end of one cluster fault and the start of the next, at least: a
#: fault then starts on a cluster that has served for a moment, and the figures say
#: which fault a long wait belongs to.
QUIET = 3.0


@dataclass(frozen=True)
class Client:
    """The client under test: the interpreter that runs the workers, and its name.

    Attributes:
        python: Interpreter of the worker processes (another virtualenv's for another
            aiokafka version).
        name: How the results name it.
        pythonpath: Directory put first on the workers' ``PYTHONPATH`` (a snapshot of
            ``aiokafka/`` at a commit, :mod:`tools.chaos.snapshot`), if any.
    """

    python: str = sys.executable
    name: str = "aiokafka (this repository's working tree)"
    pythonpath: str | None = None

    def env(self) -> dict[str, str] | None:
        if self.pythonpath is None:
            return None
        inherited = os.environ.get("PYTHONPATH")
        path = self.pythonpath if not inherited else f"{self.pythonpath}{os.pathsep}{inherited}"
        return {**os.environ, "PYTHONPATH": path}


@dataclass
class Result:
    """What a run produced: the figures, and enough to describe the run."""

    scenario: Scenario
    schedule: list[Fault]
    figures: check.Figures
    events: list[str] = field(default_factory=list)
    duration: float = 0.0
    client: Client = field(default_factory=Client)
    work_dir: Path | None = None


class Worker:
    """One supervised client process: killed on request, restarted after a hold; an
    exit nobody asked for is counted and the process restarted too."""

    def __init__(
        self, name: str, argv: list[str], client: Client, log_dir: Path, say: Callable[[str], None]
    ) -> None:
        self.name = name
        self.log = log_dir / f"{name}.log"
        self._argv = [client.python, str(WORKER_SCRIPT), *argv, "--log", str(self.log)]
        self._env = client.env()
        self._out = log_dir / f"{name}.out"
        self._cwd = log_dir
        self._say = say
        self._proc: asyncio.subprocess.Process | None = None
        self._monitor: asyncio.Task[None] | None = None
        self._hold: float | None = None
        self._respawned = asyncio.Event()
        self._closing = False
        self.kills = 0
        self.unexpected: list[int] = []

    async def start(self) -> None:
        await self._spawn()
        self._monitor = asyncio.create_task(self._supervise(), name=f"chaos-{self.name}")

    async def _spawn(self) -> None:
        with self._out.open("ab") as out:  # the child keeps its own descriptor
            self._proc = await asyncio.create_subprocess_exec(
                *self._argv,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                stdin=asyncio.subprocess.DEVNULL,
                cwd=self._cwd,
                env=self._env,
            )
        self._respawned.set()

    async def _supervise(self) -> None:
        while True:
            assert self._proc is not None
            code = await self._proc.wait()
            if self._closing:
                return
            if self._hold is not None:
                hold, self._hold = self._hold, None
                await asyncio.sleep(hold)
            else:
                self.unexpected.append(code)
                self._say(f"{self.name} exited unplanned (code {code}); restarting it")
                await asyncio.sleep(2.0)
            await self._spawn()
            self._say(f"{self.name} started again (pid {self._proc.pid})")

    async def kill(self, hold: float) -> None:
        """SIGKILL the process; it is started again ``hold`` seconds later (awaited)."""
        if self._proc is None or self._proc.returncode is not None:
            self._say(f"{self.name} is not running; kill skipped")
            return
        self._hold = hold
        self._respawned.clear()
        self._proc.send_signal(signal.SIGKILL)
        self.kills += 1
        await asyncio.wait_for(self._respawned.wait(), hold + 60.0)

    async def stop(self, timeout: float = WORKER_STOP_TIMEOUT) -> int | None:
        """SIGTERM (a graceful stop), SIGKILL after ``timeout``; returns the exit code."""
        self._closing = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                self._say(f"{self.name} did not stop in {timeout:.0f} s; killing it")
                proc.kill()
                await proc.wait()
        if self._monitor is not None:
            self._monitor.cancel()
            # wait() neither raises the task's CancelledError nor hides our own.
            await asyncio.wait([self._monitor])
        return None if proc is None else proc.returncode

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self._out.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""


class ChaosRun:
    """One run of :class:`~tools.chaos.schedule.Scenario` (see the module docstring)."""

    def __init__(self, scenario: Scenario, client: Client | None = None) -> None:
        self.scenario = scenario
        self.schedule = make_schedule(scenario)
        self.client = client or Client()
        self.cluster: KafkaCluster | None = None
        self.proxies: list[FaultProxy] = []
        self.events: list[str] = []
        self.notes: list[str] = []
        self._t0 = time.monotonic()
        self._wall0 = time.time()

    def say(self, message: str) -> None:
        line = f"[{time.monotonic() - self._t0:7.1f}s] {message}"
        self.events.append(line)
        print(line, flush=True)

    @property
    def bootstrap(self) -> str:
        return ",".join(proxy.address for proxy in self.proxies)

    # ------------------------------------------------------------------ the run

    async def run(self) -> Result:
        """Start everything, apply the schedule, check, tear down; return the figures."""
        began = time.monotonic()
        try:
            await self._start_cluster()
            figures = await self._traffic_and_faults()
        finally:
            await self._teardown()
        figures.notes.extend(self.notes)
        return Result(
            self.scenario,
            self.schedule,
            figures,
            self.events,
            time.monotonic() - began,
            self.client,
            None if self.cluster is None else self.cluster.work_dir,
        )

    async def _start_cluster(self) -> None:
        for _ in range(3):
            proxy = FaultProxy("127.0.0.1", 0)  # the target port is known after start
            await proxy.start()
            self.proxies.append(proxy)
        self.cluster = KafkaCluster(
            3,
            label="chaos",
            advertised_ports={i + 1: proxy.port for i, proxy in enumerate(self.proxies)},
        )
        self.say(f"starting three brokers behind proxies {self.bootstrap}")
        await asyncio.to_thread(self.cluster.start, CLUSTER_START_TIMEOUT)
        for proxy, node in zip(self.proxies, self.cluster.nodes, strict=True):
            proxy.target_port = node.ports["PLAINTEXT"]
        config = {"min.insync.replicas": "2"}
        for topic in (DATA_TOPIC, EOS_OUTPUT):
            await asyncio.to_thread(
                self.cluster.create_topic, topic, self.scenario.partitions, 3, config, 60.0
            )
        self.say(f"cluster up in {self.cluster.start_seconds:.0f} s ({self.cluster.work_dir})")

    async def _traffic_and_faults(self) -> check.Figures:
        assert self.cluster is not None and self.cluster.work_dir is not None
        sc = self.scenario
        log_dir = self.cluster.work_dir / "chaos"
        log_dir.mkdir()
        common = ["--bootstrap", self.bootstrap, "--topic", DATA_TOPIC]
        producer = Worker(
            "producer",
            [
                "producer",
                *common,
                "--partitions",
                str(sc.partitions),
                "--rate",
                str(sc.rate),
                "--duration",
                "3600",
            ],
            self.client,
            log_dir,
            self.say,
        )
        members = [
            Worker(
                f"member-{i}",
                ["member", *common, "--group", GROUP, "--name", f"member-{i}"],
                self.client,
                log_dir,
                self.say,
            )
            for i in range(sc.members)
        ]
        eos = Worker(
            "eos",
            ["transactional", *common, "--group", EOS_GROUP, "--output", EOS_OUTPUT],
            self.client,
            log_dir,
            self.say,
        )
        workers = [producer, *members, eos]
        self._t0 = time.monotonic()
        self._wall0 = time.time()
        self.say(f"traffic starts: {sc.rate:.0f} records/s over {sc.partitions} partitions")
        try:
            for worker in workers:
                await worker.start()
            await asyncio.gather(
                self._cluster_timeline([f for f in self.schedule if is_cluster_fault(f)]),
                self._client_timeline(
                    [f for f in self.schedule if not is_cluster_fault(f)], members, eos
                ),
            )
            self.say(f"all faults done; {sc.cooldown:.0f} s more traffic")
            await asyncio.sleep(sc.cooldown)
            self.say("stopping the producer")
            code = await producer.stop()
            if code != 0:
                self.notes.append(f"producer exited with {code}:\n{producer.tail()}")
            self.say("waiting for both groups to commit the end of the topic")
            lags = await asyncio.to_thread(
                check.wait_caught_up,
                self.bootstrap,
                [GROUP, EOS_GROUP],
                DATA_TOPIC,
                CATCH_UP_TIMEOUT,
            )
            self.say(f"lag left: {lags}")
        finally:
            for worker in reversed(workers):
                await worker.stop()
        carried = [proxy.connections_total for proxy in self.proxies]
        self.say(f"connections through the proxies of nodes 1..3: {carried}")
        self.say("checking (kafka-python, read_committed)")
        figures = check.Figures(gap_bound=sc.max_ack_gap)
        figures.group_lag_at_end = lags[GROUP]
        data = await asyncio.to_thread(
            check.read_topic, self.bootstrap, DATA_TOPIC, "read_committed"
        )
        output = await asyncio.to_thread(
            check.read_topic, self.bootstrap, EOS_OUTPUT, "read_committed"
        )
        check.check_producer(figures, data, producer.log, self._wall0)
        check.check_transactional(figures, data, output, eos.log)
        check.check_group(figures, data, [m.log for m in members])
        if lags[EOS_GROUP]:
            self.notes.append(f"the transactional group still lagged {lags[EOS_GROUP]} records")
        figures.worker_kills = sum(w.kills for w in workers)
        figures.unexpected_exits = sum(len(w.unexpected) for w in workers)
        for worker in workers:
            if worker.unexpected:
                self.notes.append(
                    f"{worker.name} exit codes {worker.unexpected}; last output:\n{worker.tail()}"
                )
        return figures

    async def _sleep_until(self, at: float) -> None:
        await asyncio.sleep(max(0.0, at - (time.monotonic() - self._t0)))

    # ------------------------------------------------------------------ faults

    async def _cluster_timeline(self, faults: list[Fault]) -> None:
        quiet_until = 0.0
        for number, fault in enumerate(faults, 1):
            await self._sleep_until(max(fault.at, quiet_until))
            await self._wait_healed()
            self.say(f"fault {number}/{len(faults)}: {fault.describe()}")
            await self._apply(fault)
            self.say(f"fault {number} over")
            quiet_until = time.monotonic() - self._t0 + QUIET

    async def _client_timeline(
        self, faults: list[Fault], members: list[Worker], eos: Worker
    ) -> None:
        for fault in faults:
            await self._sleep_until(fault.at)
            self.say(f"client fault: {fault.describe()}")
            worker = members[fault.target] if fault.kind == "kill-member" else eos
            await worker.kill(fault.hold)

    async def _apply(self, fault: Fault) -> None:
        cluster = self.cluster
        assert cluster is not None
        if fault.kind == "kill-leader":
            leader = await asyncio.to_thread(self._leader_of, fault.target)
            self.say(f"  SIGKILL node {leader}")
            await asyncio.to_thread(cluster.kill, leader)
            await asyncio.sleep(fault.hold)
            await asyncio.to_thread(cluster.restart, leader, RESTART_TIMEOUT)
            self.say(f"  node {leader} restarted")
        elif fault.kind == "pause":
            cluster.pause(fault.target)
            try:
                await asyncio.sleep(fault.hold)
            finally:
                cluster.resume(fault.target)
        elif fault.kind == "cut":
            proxy = self.proxies[fault.target - 1]
            proxy.refuse = True  # new connections are closed at once while the cut lasts
            proxy.cut()
            try:
                await asyncio.sleep(fault.hold)
            finally:
                proxy.refuse = False
        elif fault.kind == "stall":
            proxy = self.proxies[fault.target - 1]
            proxy.stall()
            try:
                await asyncio.sleep(fault.hold)
            finally:
                proxy.resume()
        else:
            raise ValueError(f"not a cluster fault: {fault.kind}")

    def _leader_of(self, partition: int) -> int:
        assert self.cluster is not None
        topic = self.cluster.metadata([DATA_TOPIC]).topics[DATA_TOPIC]
        leader = next(p.leader for p in topic.partitions if p.partition == partition)
        return leader if leader > 0 else self.cluster.nodes[0].node_id

    def _healed(self) -> bool:
        assert self.cluster is not None
        meta = self.cluster.metadata([DATA_TOPIC, EOS_OUTPUT, *INTERNAL_TOPICS])
        if len(meta.broker_ids) < 3:
            return False
        for topic in meta.topics.values():
            if topic.error_code:  # an internal topic not created yet
                continue
            if any(p.leader < 0 or len(p.isr) < 3 for p in topic.partitions):
                return False
        return True

    async def _wait_healed(self) -> None:
        assert self.cluster is not None
        try:
            await asyncio.to_thread(self.cluster.wait_for, "full ISR", self._healed, HEAL_TIMEOUT)
        except TimeoutError:
            self.notes.append(f"cluster not back to full ISR within {HEAL_TIMEOUT:.0f} s")
            self.say(f"cluster not healed within {HEAL_TIMEOUT:.0f} s; going on")

    async def _teardown(self) -> None:
        if self.cluster is not None:
            for node in self.cluster.nodes:
                self.cluster.resume(node.node_id)  # a SIGSTOPped JVM would ignore SIGTERM
            await asyncio.to_thread(self.cluster.stop, 30.0)
        for proxy in self.proxies:
            await proxy.close()


def report_markdown(result: Result, command: str) -> str:
    """A results file: scenario, schedule, event log, figures and verdict."""
    sc = result.scenario
    figures = result.figures
    violations = figures.violations()
    lines = [
        f"# Chaos run, seed {sc.seed}: {result.client.name}",
        "",
        f"Command: `{command}`. Duration {result.duration:.0f} s"
        " (cluster start and check included).",
        f"Three KRaft brokers on loopback behind fault proxies; `{DATA_TOPIC}` and `{EOS_OUTPUT}`:"
        f" {sc.partitions} partitions, replication factor 3, min.insync.replicas=2.",
        f"Idempotent producer (acks=all) at {sc.rate:.0f} records/s; {sc.members} group members"
        " committing after each batch; one transactional consume-process-produce process.",
        "",
        f"## Verdict: {'PASS' if not violations else 'FAIL'}",
        "",
        *([f"- {v}" for v in violations] or ["No violation."]),
        "",
        "## Figures (independent reader: kafka-python, read_committed)",
        "",
        "```",
        check.table(figures),
        "```",
        "",
        f"## Fault schedule (seed {sc.seed})",
        "",
        "```",
        *(fault.describe() for fault in result.schedule),
        "```",
        "",
        "## Event log",
        "",
        "```",
        *result.events,
        "```",
    ]
    return "\n".join(lines) + "\n"


async def run_scenario(scenario: Scenario, client: Client | None = None) -> Result:
    """Run ``scenario`` once (see :class:`ChaosRun`)."""
    return await ChaosRun(scenario, client).run()
