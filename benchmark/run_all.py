"""Compare our client with its peers against a local Apache Kafka broker (``make bench``).

Starts one broker with ``tools.kafka.rig`` (or uses ``--bootstrap``), runs every selected
client's worker for every selected scenario in a process of its own, each into a fresh
topic, prints a table with ratios against our client and writes
``benchmark/results/<label>.json`` and ``.md``. See ``benchmark/README.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Started as `python benchmark/run_all.py` (make bench): make `benchmark` and `tools`
    # importable. The workers themselves get their own sys.path (see clients.py).
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmark import report
from benchmark.base_tree import prepare_base
from benchmark.clients import (
    BASE_ENV,
    BY_NAME,
    CLIENTS,
    OURS,
    ROOT,
    Client,
    ClientUnavailable,
    interpreter,
    venv_ready,
    worker_command,
)
from benchmark.harness import FAILED, OK, SKIPPED, Outcome, pick_median, run_worker

RESULTS_DIR = ROOT / "benchmark" / "results"
BROKER_RUNS_DIR = ROOT / "benchmark" / ".kafka"
LOGS_DIR = ROOT / "benchmark" / "logs"


@dataclass(frozen=True)
class Scenario:
    """One row group of the report: which worker scenario, how many records, what topic."""

    name: str
    worker_scenario: str
    partitions: int
    count_option: str
    """Which command-line count applies: ``count``, ``latency_count`` or ``concurrent_count``."""
    description: str
    warm_rounds: int = 0
    """Unmeasured rounds (every client once) before the measured ones, unless
    ``--warmup-rounds`` says otherwise."""
    extra: tuple[str, ...] = ()
    """More worker arguments (``--pattern``, ``--linger-ms``)."""
    topic: str = "large"
    """Consumer scenarios: which pre-filled topic they read (see ``TOPIC_FILLS``)."""

    @property
    def consumer(self) -> bool:
        return self.worker_scenario.startswith("consume")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("produce-1p", "produce", 1, "count", "producer throughput, 1 partition, acks=1"),
    Scenario("produce-4p", "produce", 4, "count", "producer throughput, 4 partitions, acks=1"),
    # Small requests: the broker's per-request paths keep getting faster for a while
    # after the warm-up round trips (see Runner.warm_up_broker), so one round of every
    # client is run and thrown away first.
    Scenario("latency", "latency", 1, "latency_count", "sequential send-and-wait round trips", 1),
    Scenario(
        "concurrent", "concurrent", 1, "concurrent_count", "coroutines looping send-and-wait", 1
    ),
    Scenario(
        "concurrent-l5",
        "concurrent",
        1,
        "concurrent_count",
        "coroutines looping send-and-wait, linger_ms=5",
        1,
        ("--linger-ms", "5"),
    ),
    # Every way a caller handles send()'s futures; linger_ms=5 and 256 KiB batches for
    # both asyncio clients (workerlib.PATTERNS).
    *(
        Scenario(
            f"produce-{p}",
            "produce",
            1,
            "count",
            f"producer throughput, 1 partition, futures: {p}",
            0,
            ("--pattern", p),
        )
        for p in ("done", "gather", "callback", "flush", "batch")
    ),
    Scenario("consume-batch", "consume-batch", 1, "count", "consumer, batch API"),
    Scenario("consume-iter", "consume-iter", 1, "count", "consumer, per-message iteration"),
    # Topics written by many small producers (web services) hold batches of a few
    # records: what a consumer pays per batch then counts as much as per record.
    Scenario(
        "consume-batch-small",
        "consume-batch",
        1,
        "count",
        "consumer, batch API, a topic of 5-record batches",
        topic="small",
    ),
    Scenario(
        "consume-iter-small",
        "consume-iter",
        1,
        "count",
        "consumer, per-message iteration, a topic of 5-record batches",
        topic="small",
    ),
)
SCENARIO_BY_NAME = {s.name: s for s in SCENARIOS}

#: Who fills the consumer scenarios' topic, in order of preference (fastest first).
FILLERS = ("confluent", "aiokafka-0.14", "kafka-python", OURS)

#: How each pre-filled consumer topic is written: (producer scenario, extra worker
#: arguments, fillers in order). "large": as fast as a filler can, so full batches;
#: "small": 5 coroutines looping send_and_wait, so every request (and batch) carries
#: the 5 records sent since the last response.
TOPIC_FILLS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "large": ("produce-1p", (), FILLERS),
    "small": ("concurrent", ("--concurrency", "5"), (OURS, "aiokafka-0.14")),
}

#: Records sent to warm the broker up when no consumer topic has to be filled first.
WARM_UP_RECORDS = 200_000

#: Sequential round trips that warm the broker's per-request paths up (see
#: ``warm_up_broker``); fewer with ``--quick``.
WARM_UP_REQUESTS = 20_000
WARM_UP_REQUESTS_QUICK = 2_000

QUICK = {"count": 20_000, "latency_count": 500, "concurrent_count": 4_000}


def _csv(choices: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"choose from {', '.join(choices)}; got {text!r}")
        return names

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    names = [c.name for c in CLIENTS]
    parser.add_argument(
        "--clients",
        type=_csv(names),
        default=None,
        help=f"{','.join(names)} (default: all; ours-base only with --base)",
    )
    parser.add_argument(
        "--scenarios",
        type=_csv([s.name for s in SCENARIOS]),
        default=[s.name for s in SCENARIOS],
        help=",".join(s.name for s in SCENARIOS),
    )
    parser.add_argument("--count", type=int, default=None, help="default 1,000,000")
    parser.add_argument("--latency-count", type=int, default=None, help="default 5,000")
    parser.add_argument("--concurrent-count", type=int, default=None, help="default 40,000")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--size", type=int, default=100, help="value bytes (default 100)")
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per client and scenario; the median is kept"
    )
    parser.add_argument(
        "--warmup-rounds",
        type=int,
        default=None,
        help="unmeasured rounds per scenario (default 1 for latency and concurrent, else 0)",
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per worker")
    parser.add_argument("--bootstrap", default=None, help="use this broker, start none")
    parser.add_argument("--label", default=None, help="result file name (no extension)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="results directory")
    parser.add_argument(
        "--base",
        default=None,
        metavar="REV",
        help="also run ours at commit REV (client ours-base), built under benchmark/.trees/",
    )
    parser.add_argument("--list", action="store_true", help="show clients and scenarios")
    return parser


def default_clients(args: argparse.Namespace) -> list[str]:
    """``--clients``, else every client (``ours-base`` only when ``--base`` names a commit)."""
    if args.clients is not None:
        return list(args.clients)
    return [c.name for c in CLIENTS if args.base is not None or not c.base]


def resolve_counts(args: argparse.Namespace) -> dict[str, int]:
    """Record counts per count option: explicit options, else quick or full defaults."""
    full = {"count": 1_000_000, "latency_count": 5_000, "concurrent_count": 40_000}
    base = QUICK if args.quick else full
    counts = {key: getattr(args, key) or base[key] for key in full}
    for key, value in counts.items():
        if value < 1:
            raise SystemExit(f"--{key.replace('_', '-')} must be at least 1")
    return counts


def worker_timeout(args: argparse.Namespace, count: int) -> float:
    """Per-worker limit: ``--timeout``, else generous for the slowest client we know."""
    if args.timeout is not None:
        return float(args.timeout)
    # kafka-python needs ~25 µs of CPU per produced record here and shares two cores with
    # the broker; 600 µs per record leaves room for a far slower machine or client.
    return 90.0 + count * 600e-6


# --------------------------------------------------------------------------- broker


class Broker:
    """The broker under test: one started with the rig, or one given with ``--bootstrap``."""

    def __init__(self, bootstrap: str | None) -> None:
        self._cluster: Any = None
        self._bootstrap = bootstrap
        self.description = f"external {bootstrap}" if bootstrap else ""

    def __enter__(self) -> Broker:
        if self._bootstrap is None:
            from tools.kafka import rig

            # The rig deletes all but the newest 20 run directories under .kafka/ whenever
            # anyone starts a broker, running ones included; with test suites starting
            # brokers in the same tree, a ten-minute benchmark lost its broker's data
            # directory mid-run. A directory of our own is pruned only by our own runs.
            rig.RUNS_DIR = BROKER_RUNS_DIR
            print("starting Kafka (tools.kafka.rig, PLAINTEXT only)...", flush=True)
            self._cluster = rig.KafkaCluster(1, listeners=["PLAINTEXT"], heap="1g", label="bench")
            self._cluster.start()
            self._bootstrap = self._cluster.bootstrap_servers
            self.description = f"single KRaft node via tools.kafka.rig, heap 1g, {self._bootstrap}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cluster is not None:
            self._cluster.stop()
            # A full run leaves gigabytes of records; the logs stay for diagnosis.
            for node in self._cluster.nodes:
                shutil.rmtree(node.dir / "data", ignore_errors=True)

    @property
    def pid(self) -> int | None:
        """The broker's process id when we started it (its CPU is reported per worker)."""
        if self._cluster is None or not self._cluster.nodes:
            return None
        pid = self._cluster.nodes[0].pid
        return int(pid) if pid is not None else None

    def failure(self) -> str | None:
        """Why the broker we started is gone (with its log tail), or None while it runs."""
        if self._cluster is None or self._cluster.live_nodes():
            return None
        node = self._cluster.nodes[0]
        tail = self._cluster.log_tail(node.node_id, lines=8).replace("\n", " | ")
        return f"the broker exited ({node.dir}): {tail}"

    @property
    def bootstrap(self) -> str:
        assert self._bootstrap is not None, "use the broker inside `with`"
        return self._bootstrap

    def create_topic(self, name: str, partitions: int) -> str:
        """Create ``name`` and wait until its leaders are known.

        Raises:
            RuntimeError: if the broker refuses.
        """
        if self._cluster is not None:
            return str(self._cluster.create_topic(name, partitions=partitions))
        from tools.kafka import wire

        host, _, port = self.bootstrap.split(",")[0].rpartition(":")
        result = wire.create_topics(host, int(port), name, partitions, 1, None, timeout_ms=30000)
        if result.error_code:
            raise RuntimeError(f"CreateTopics {name!r}: error {result.error_code}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            topic = wire.metadata(host, int(port), [name]).topics.get(name)
            if topic and not topic.error_code and all(p.leader >= 0 for p in topic.partitions):
                return name
            time.sleep(0.2)
        raise RuntimeError(f"leaders of {name!r} not known in 30 s")


# --------------------------------------------------------------------------- the run


def _topic_name(scenario: str, client: str) -> str:
    return f"bench-{scenario}-{client}-{uuid.uuid4().hex[:8]}"


def _print_outcome(cell: Outcome) -> None:
    if cell.status == OK:
        m = cell.metrics
        extra = f", p50 {m['p50_us']:,.0f} µs, p99 {m['p99_us']:,.0f} µs" if "p50_us" in m else ""
        print(
            f"  {cell.client:<14} {m['msgs_per_s']:>12,.0f} msgs/s "
            f"{m['cpu_us_per_msg']:>8.1f} CPU µs/msg{extra}",
            flush=True,
        )
    else:
        reason = cell.reason.replace("\n", " | ")
        print(f"  {cell.client:<14} {cell.status.upper()}: {reason[:300]}", flush=True)


class Runner:
    """Runs the selected (scenario, client) pairs against one broker."""

    def __init__(self, args: argparse.Namespace, broker: Broker, log_dir: Path) -> None:
        self.args = args
        self.broker = broker
        self.log_dir = log_dir
        self.counts = resolve_counts(args)
        self.pythons: dict[str, Path | ClientUnavailable] = {}
        #: The pre-filled consumer topics by kind (``Scenario.topic``), and why one
        #: could not be filled.
        self.consume_topics: dict[str, str] = {}
        self.consume_errors: dict[str, str] = {}
        self.outcomes: list[Outcome] = []

    def python_for(self, client: Client) -> Path | ClientUnavailable:
        if client.name not in self.pythons:
            try:
                if client.venv is not None and not venv_ready(client.venv, client.requirement):
                    print(f"creating the virtualenv of {client.name}...", flush=True)
                self.pythons[client.name] = interpreter(client)
            except ClientUnavailable as exc:
                self.pythons[client.name] = exc
        return self.pythons[client.name]

    def run_one(
        self, scenario: Scenario, client: Client, topic: str, count: int, label: str
    ) -> Outcome:
        python = self.python_for(client)
        if isinstance(python, ClientUnavailable):
            return Outcome(label, client.name, SKIPPED, str(python))
        cmd = worker_command(
            client,
            python,
            scenario=scenario.worker_scenario,
            bootstrap=self.broker.bootstrap,
            topic=topic,
            count=count,
            size=self.args.size,
            partitions=scenario.partitions,
            concurrency=self.args.concurrency,
            extra=scenario.extra,
        )
        return run_worker(
            label,
            client.name,
            cmd,
            expected_count=count,
            size=self.args.size,
            timeout=worker_timeout(self.args, count),
            env=client.env(),
            cwd=ROOT,
            log_dir=self.log_dir,
            watch_pid=self.broker.pid,
        )

    def fill_consume_topic(self, kind: str = "large") -> None:
        """Produce the records of consumer topic ``kind`` (see ``TOPIC_FILLS``) once,
        with the first filler that works."""
        count = self.counts["count"]
        try:
            topic = self.broker.create_topic(_topic_name(f"consume-{kind}", "data"), 1)
        except (RuntimeError, TimeoutError, OSError, IndexError) as exc:
            self.consume_errors[kind] = (
                self.broker.failure() or f"could not create a topic: {exc!r}"
            )
            return
        scenario_name, extra, fillers = TOPIC_FILLS[kind]
        scenario = dataclasses.replace(SCENARIO_BY_NAME[scenario_name], extra=extra)
        tried = []
        for name in fillers:
            if name not in BY_NAME:
                continue
            print(f"filling {topic} with {count:,} records using {name}...", flush=True)
            cell = self.run_one(scenario, BY_NAME[name], topic, count, "fill")
            if cell.status == OK:
                self.consume_topics[kind] = topic
                return
            tried.append(f"{name}: {cell.reason}")
        self.consume_errors[kind] = "could not fill the consumer topic: " + "; ".join(tried)

    def warm_up_broker(self) -> None:
        """Give the broker's JIT a first workload, so the first client measured is not
        penalised by a cold broker: fill the consumer topic now if it will be needed,
        else send a throwaway batch of records; then, if a scenario sends small requests
        (``latency``, ``concurrent``), that many sequential round trips too.

        Large batches (the fill) exercise the broker's per-byte paths but make few
        requests; its per-request paths (request decoding, the handler hand-off, the
        response) only get compiled by HotSpot's C2 after some thousands of calls. Without
        this, the first client of the ``concurrent`` scenario ran on a broker spending
        about twice the CPU per record of the one the next client found.
        """
        kinds = {
            SCENARIO_BY_NAME[n].topic for n in self.args.scenarios if SCENARIO_BY_NAME[n].consumer
        }
        for kind in sorted(kinds):
            self.fill_consume_topic(kind)
        if not kinds:
            count = min(self.counts["count"], WARM_UP_RECORDS)
            self._warm_with("produce-1p", "data", count, f"{count:,} records")
        if {"latency", "concurrent", "concurrent-l5"} & set(self.args.scenarios):
            requests = WARM_UP_REQUESTS_QUICK if self.args.quick else WARM_UP_REQUESTS
            self._warm_with("latency", "requests", requests, f"{requests:,} round trips")

    def _warm_with(self, scenario: str, kind: str, count: int, what: str) -> None:
        """Run ``scenario`` unmeasured on a throwaway topic with the first filler that works."""
        topic = self.broker.create_topic(_topic_name("warmup", kind), 1)
        for name in FILLERS:
            print(f"warming the broker up: {what} using {name}...", flush=True)
            cell = self.run_one(SCENARIO_BY_NAME[scenario], BY_NAME[name], topic, count, "warmup")
            if cell.status == OK:
                return

    def _fresh_topic(self, scenario: Scenario, client: str) -> str | Outcome:
        """A new topic for one producer run, or a failed outcome saying why there is none."""
        try:
            return self.broker.create_topic(_topic_name(scenario.name, client), scenario.partitions)
        except (RuntimeError, TimeoutError, OSError, IndexError) as exc:
            reason = self.broker.failure() or f"could not create a topic: {exc!r}"
            return Outcome(scenario.name, client, FAILED, reason)

    def _run_cell(self, scenario: Scenario, client_name: str, count: int, name: str) -> Outcome:
        """One run of ``client_name`` in ``scenario`` (a fresh topic for producers)."""
        dead = self.broker.failure()
        if dead:
            return Outcome(name, client_name, FAILED, dead)
        if scenario.consumer:
            if scenario.topic not in self.consume_topics:
                reason = self.consume_errors.get(scenario.topic, "the topic was not filled")
                return Outcome(name, client_name, FAILED, reason)
            topic: str | Outcome = self.consume_topics[scenario.topic]
        else:
            topic = self._fresh_topic(scenario, client_name)
        if isinstance(topic, Outcome):
            return topic
        return self.run_one(scenario, BY_NAME[client_name], topic, count, name)

    def run(self) -> list[Outcome]:
        """Every selected (scenario, client); results so far stay in ``self.outcomes``."""
        try:
            self.warm_up_broker()
        except (RuntimeError, TimeoutError, OSError, IndexError) as exc:
            reason = self.broker.failure() or f"warm-up failed: {exc!r}"
            self.consume_errors = dict.fromkeys(TOPIC_FILLS, reason)
        outcomes = self.outcomes
        for name in self.args.scenarios:
            scenario = SCENARIO_BY_NAME[name]
            count = self.counts[scenario.count_option]
            print(f"== {name}: {scenario.description}, {count:,} records", flush=True)
            kind = scenario.topic
            if scenario.consumer and kind not in self.consume_topics:
                if kind not in self.consume_errors:
                    self.fill_consume_topic(kind)
            warm = self.args.warmup_rounds
            if warm is None:
                warm = 0 if self.args.quick else scenario.warm_rounds
            for _ in range(warm):
                for client_name in self.args.clients:
                    print(f"  (warm-up round: {client_name})", flush=True)
                    self._run_cell(scenario, client_name, count, f"{name}-warmup")
            # Repeats go round the clients (a, b, a, b, ...) rather than client by
            # client, so a broker that is still warming up, or a noisy minute, does not
            # fall on one client's runs only.
            runs: dict[str, list[Outcome]] = {c: [] for c in self.args.clients}
            for _ in range(self.args.repeat):
                for client_name in self.args.clients:
                    done = runs[client_name]
                    if done and done[-1].status != OK:
                        continue  # a failure is reported as it is; repeating it costs time
                    done.append(self._run_cell(scenario, client_name, count, name))
            for client_name in self.args.clients:
                cell = pick_median(runs[client_name])
                _print_outcome(cell)
                outcomes.append(cell)
        return outcomes


# --------------------------------------------------------------------------- metadata


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _kafka_version() -> str:
    try:
        text = (ROOT / "tools" / "kafka" / "pom.xml").read_text()
    except OSError:
        return "unknown"
    start = text.find("<kafka.version>")
    end = text.find("</kafka.version>")
    return text[start + len("<kafka.version>") : end] if 0 <= start < end else "unknown"


def run_meta(args: argparse.Namespace, counts: dict[str, int], label: str) -> dict[str, Any]:
    """What a reader needs to judge the numbers: machine, versions, settings."""
    return {
        "label": label,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "os": f"{platform.system()} {platform.release()}",
        },
        "python": platform.python_version(),
        "kafka": f"Apache Kafka {_kafka_version()}",
        "settings": {
            **counts,
            "size": args.size,
            "concurrency": args.concurrency,
            "acks": "1",
            "quick": args.quick,
            "repeat": args.repeat,
            "warmup_rounds": args.warmup_rounds,
            "base": args.base,
        },
        "load": {"avg_1m_at_start": round(os.getloadavg()[0], 2)},
    }


def list_clients() -> str:
    lines = ["clients:"]
    for client in CLIENTS:
        workers = {client.producer_worker, client.consumer_worker}
        state = ", ".join(
            f"{w} {'ok' if (ROOT / 'benchmark' / w).exists() else 'MISSING'}"
            for w in sorted(workers)
        )
        lines.append(f"  {client.name:<14} {client.description} [{state}]")
    lines.append("scenarios:")
    lines += [f"  {s.name:<14} {s.description}" for s in SCENARIOS]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status (1 if nothing could be measured)."""
    args = build_parser().parse_args(argv)
    if args.list:
        print(list_clients())
        return 0
    counts = resolve_counts(args)
    if args.warmup_rounds is not None and args.warmup_rounds < 0:
        raise SystemExit("--warmup-rounds must not be negative")
    if args.repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    args.clients = default_clients(args)
    if args.base is not None:
        try:
            os.environ[BASE_ENV] = str(prepare_base(args.base))
        except ClientUnavailable as exc:
            print(f"ours-base will be skipped: {exc}", file=sys.stderr)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    label = args.label or f"{'quick' if args.quick else 'run'}-{stamp}"
    meta = run_meta(args, counts, label)
    with Broker(args.bootstrap) as broker:
        meta["broker"] = broker.description
        runner = Runner(args, broker, LOGS_DIR / label)
        try:
            outcomes = runner.run()
        except BaseException:
            # Keep what was measured before an unexpected error or Ctrl-C.
            if runner.outcomes:
                path = report.write(runner.outcomes, meta, args.out, f"{label}-partial")
                print(f"interrupted; partial results in {path}", file=sys.stderr)
            raise
    meta["load"]["avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    print()
    print(report.text_table(outcomes))
    path = report.write(outcomes, meta, args.out, label)
    print(f"\nwrote {path} and {path.with_suffix('.md')}")
    return 0 if any(o.status == OK for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
