"""PySpark on Kafka: the ``aiokafka`` data source against Spark's JVM connector.

Same broker, same SparkSession (``local[2]``), same jobs, taking turns (ours, JVM,
ours, JVM, ...) so that a machine getting busier or a broker still warming up does
not favour one side:

- ``batch-read``: ``spark.read`` of the whole topic into the ``noop`` sink (records/s)
- ``batch-write``: ``spark.range(n)`` as 100-byte values written to a new topic
- ``stream-copy``: ``readStream`` -> ``writeStream`` to a new topic with
  ``trigger(availableNow=True)``, end to end (records/s)
- ``latency``: records produced at a steady rate while a ``trigger(processingTime=0)``
  query copies them to another topic; per record, the time from its produce
  timestamp to when a consumer of the output received it (p50/p99 of the records
  produced after ``--latency-warmup`` seconds at the rate: the steady state;
  ``cold_p50``/``cold_p99`` of all of them, including the query's first
  micro-batches, which start Python workers on our side and load classes on the JVM's)

Two ways to run them (``--mode``), both by default, both reported:

- ``session`` (warm for the JVM, not always for us): every job in one SparkSession,
  after ``--warmup-rounds`` unmeasured rounds, our four jobs then the JVM's four, round
  after round. The JVM connector stays warm in the session's JVM. Our jobs run in
  PySpark's Python workers, and PySpark ends every idle Python worker once its worker
  factory has been idle for one minute (``PythonWorkerFactory.IDLE_WORKER_TIMEOUT_NS``,
  hard-coded, checked every 10 s; PySpark 4.3.0): the JVM's turn lasts longer than
  that, so each of our turns starts by forking workers, importing PySpark, pyarrow and
  this client and starting new clients. ``workers_before_turn`` in the results counts
  the live Python workers of the session when each turn starts (0: a cold turn).
- ``cold``: each job in a fresh Python process with a fresh SparkSession (a new JVM),
  as a ``spark-submit`` job runs: cold for both sides (new JVM, JIT and class loading
  for the connector; new Python workers, imports and clients for us). Only the job is
  timed, not the session start. ``--repeat`` rounds; the side that goes first
  alternates between rounds.

Run it on this client as installed (with bytecode): with ``PYTHONDONTWRITEBYTECODE``
set and no ``__pycache__`` (an editable install here), every new Python worker compiles
the client's modules from source (90 modules for a read task; tenths of a second per
worker), which an installed package never does: ``python -m compileall -q aiokafka``
first.

Run: ``python -m benchmark.bench_spark [--mode both|session|cold] [--records 1000000]
[--partitions 6] [--repeat 2] [--warmup-rounds 1] [--rate 5000 --latency-seconds 20
--latency-warmup 10] [--cold-scenarios ...] [--bootstrap host:port]
[--python-daemon aiokafka.spark.daemon|pyspark.daemon]``. Where the Python processes
import PySpark from (``--python-daemon``, and whether ``python -m
aiokafka.spark.pyspark_path install`` was run) is recorded with the results.
Results: ``benchmark/results/spark-<label>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.spark.pyspark_path import hook_path
from tools.kafka.rig import KafkaCluster, start_single
from tools.kafka.spark_jars import ensure_spark_connector_jars

RESULTS = Path(__file__).resolve().parent / "results"
_START_LOAD = os.getloadavg()


def _fmt_load(load: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.1f}" for x in load)


FORMATS = ("aiokafka", "kafka")


def _topic(cluster: KafkaCluster | None, admin_bs: str, name: str, partitions: int) -> str:
    if cluster is not None:
        return cluster.create_topic(name, partitions, 1, None)
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=admin_bs) as admin:
            await admin.create_topics([NewTopic(name, partitions, 1)], raise_errors=True)

    asyncio.run(go())
    return name


async def _fill(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> None:
    value = b"x" * size
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20
    ) as producer:
        for i in range(records):
            await producer.send(topic, value, partition=i % partitions)
        await producer.flush()


def _timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def batch_read(spark: Any, fmt: str, bs: str, topic: str) -> None:
    (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bs)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )


def batch_write(spark: Any, fmt: str, bs: str, topic: str, records: int, size: int) -> None:
    df = spark.range(records, numPartitions=2).selectExpr(
        f"cast(repeat('x', {size}) as binary) as value"
    )
    writer = df.write.format(fmt).option("kafka.bootstrap.servers", bs).option("topic", topic)
    if fmt == "aiokafka":
        writer = writer.mode("append")
    writer.save()


def stream_copy(spark: Any, fmt: str, bs: str, src: str, dst: str, checkpoint: Path) -> None:
    query = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", bs)
        .option("subscribe", src)
        .option("startingOffsets", "earliest")
        .load()
        .select("key", "value")
        .writeStream.format(fmt)
        .option("kafka.bootstrap.servers", bs)
        .option("topic", dst)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))


def _quantiles(delays: list[float]) -> dict[str, float]:
    delays = sorted(delays)
    if not delays:
        return {"p50": float("nan"), "p99": float("nan"), "n": 0}
    return {
        "p50": delays[len(delays) // 2],
        "p99": delays[min(len(delays) - 1, int(len(delays) * 0.99))],
        "n": len(delays),
    }


def latency(
    spark: Any,
    fmt: str,
    bs: str,
    src: str,
    dst: str,
    checkpoint: Path,
    rate: int,
    seconds: float,
    warmup: float = 0.0,
) -> dict[str, float]:
    """p50/p99 seconds from produce to the output consumer, at ``rate`` records/s.

    Records are produced for ``warmup + seconds``; p50/p99 count only those produced
    after the first ``warmup`` seconds (the steady state, once both sides have their
    workers, connections and JIT warm); ``cold_p50``/``cold_p99`` count them all.
    """
    query = (
        spark.readStream.format(fmt)
        .option("kafka.bootstrap.servers", bs)
        .option("subscribe", src)
        .option("startingOffsets", "latest")
        .load()
        .selectExpr("key", "cast(cast(timestamp as double) * 1000 as string) as value")
        .writeStream.format(fmt)
        .option("kafka.bootstrap.servers", bs)
        .option("topic", dst)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="0 seconds")
        .start()
    )
    # Wait until the query runs micro-batches before producing.
    deadline = time.monotonic() + 120
    while query.lastProgress is None and time.monotonic() < deadline:
        time.sleep(0.2)
    samples: list[tuple[float, float]] = []  # (produced at, ms since the epoch; delay s)
    done = threading.Event()
    measure_from = time.time() * 1000 + warmup * 1000

    async def consume() -> None:
        async with AIOKafkaConsumer(bootstrap_servers=bs, auto_offset_reset="latest") as c:
            c.subscribe([dst])
            while not done.is_set():
                got = await c.getmany(timeout_ms=200)
                now = time.time() * 1000
                for records in got.values():
                    for r in records:
                        if r.value:
                            sent = float(r.value)
                            samples.append((sent, (now - sent) / 1000))

    async def produce() -> None:
        async with AIOKafkaProducer(bootstrap_servers=bs) as producer:
            start = time.monotonic()
            sent = 0
            while time.monotonic() - start < warmup + seconds:
                due = int((time.monotonic() - start) * rate)
                while sent < due:
                    await producer.send(src, b"v")
                    sent += 1
                await asyncio.sleep(0.005)
        await asyncio.sleep(5)  # let the tail arrive
        done.set()

    async def both() -> None:
        await asyncio.gather(consume(), produce())

    asyncio.run(both())
    query.stop()
    steady = _quantiles([d for sent, d in samples if sent >= measure_from])
    cold = _quantiles([d for _, d in samples])
    return {**steady, "cold_p50": cold["p50"], "cold_p99": cold["p99"], "cold_n": cold["n"]}


SCENARIOS = ("batch-read", "batch-write", "stream-copy", "latency")


def _session(app: str, daemon_module: str) -> Any:
    """A ``local[2]`` SparkSession with both data sources (same settings for both)."""
    from pyspark.sql import SparkSession

    from aiokafka.spark import register

    jars = ",".join(str(p) for p in ensure_spark_connector_jars())
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.python.daemon.module", daemon_module)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def _job(
    spark: Any,
    scenario: str,
    fmt: str,
    cluster: KafkaCluster | None,
    bs: str,
    src: str,
    args: argparse.Namespace,
    tmp: Path,
    tag: str,
) -> Any:
    """Run one measured job: records/s, or the latency quantiles."""
    run = src.rsplit("-", 1)[-1]
    if scenario == "batch-read":
        return args.records / _timed(lambda: batch_read(spark, fmt, bs, src))
    if scenario == "batch-write":
        out = _topic(cluster, bs, f"spark-bench-w-{run}-{tag}", args.partitions)
        return args.records / _timed(
            lambda: batch_write(spark, fmt, bs, out, args.records, args.size)
        )
    if scenario == "stream-copy":
        out = _topic(cluster, bs, f"spark-bench-s-{run}-{tag}", args.partitions)
        return args.records / _timed(
            lambda: stream_copy(spark, fmt, bs, src, out, tmp / f"copy-{tag}")
        )
    lsrc = _topic(cluster, bs, f"spark-bench-ls-{run}-{tag}", args.partitions)
    ldst = _topic(cluster, bs, f"spark-bench-ld-{run}-{tag}", args.partitions)
    return latency(
        spark,
        fmt,
        bs,
        lsrc,
        ldst,
        tmp / f"lat-{tag}",
        args.rate,
        args.latency_seconds,
        args.latency_warmup,
    )


def python_workers() -> int:
    """Live PySpark Python workers under this process (forked by a ``pyspark.daemon``
    process from another one; the daemons themselves are not counted)."""
    parents: dict[int, int] = {}
    daemon: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        if b"pyspark.daemon" in cmdline:
            daemon.add(pid)

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parents.get(pid, 0)
        return False

    return sum(1 for pid in daemon if parents.get(pid) in daemon and ours(pid))


def _run_session(
    args: argparse.Namespace, cluster: KafkaCluster | None, bs: str, src: str, tmp: Path
) -> tuple[dict[str, dict[str, list[Any]]], dict[str, list[int]]]:
    """Every job in one session, taking turns by round (see the module docstring)."""
    scenarios = args.scenarios.split(",")
    spark = _session("bench-spark", args.python_daemon)
    results: dict[str, dict[str, list[Any]]] = {s: {f: [] for f in FORMATS} for s in scenarios}
    workers: dict[str, list[int]] = {f: [] for f in FORMATS}
    try:
        for round_ in range(args.warmup_rounds + args.repeat):
            if round_ == args.warmup_rounds:  # warm-up done
                results = {s: {f: [] for f in FORMATS} for s in scenarios}
                workers = {f: [] for f in FORMATS}
            for fmt in FORMATS:
                workers[fmt].append(python_workers())
                for scenario in scenarios:
                    results[scenario][fmt].append(
                        _job(spark, scenario, fmt, cluster, bs, src, args, tmp, f"{fmt}-{round_}")
                    )
                print(
                    f"session round {round_} {fmt} (workers before: {workers[fmt][-1]}): "
                    + json.dumps({s: results[s][fmt][-1:] for s in scenarios}),
                    flush=True,
                )
    finally:
        spark.stop()
    return results, workers


def _run_cold(
    args: argparse.Namespace, bs: str, src: str, tmp: Path
) -> dict[str, dict[str, list[Any]]]:
    """Each job in a new process with a new SparkSession (see the module docstring)."""
    scenarios = args.cold_scenarios.split(",")
    results: dict[str, dict[str, list[Any]]] = {s: {f: [] for f in FORMATS} for s in scenarios}
    for round_ in range(args.repeat):
        order = FORMATS if round_ % 2 == 0 else FORMATS[::-1]
        for scenario in scenarios:
            for fmt in order:
                command = [
                    sys.executable,
                    "-m",
                    "benchmark.bench_spark",
                    "--child-job",
                    scenario,
                    "--child-format",
                    fmt,
                    "--child-src",
                    src,
                    "--child-tag",
                    f"cold-{fmt}-{round_}",
                    "--bootstrap",
                    bs,
                    "--tmp",
                    str(tmp),
                ]
                for name in ("records", "size", "partitions", "rate"):
                    command += [f"--{name}", str(getattr(args, name))]
                command += ["--latency-seconds", str(args.latency_seconds)]
                command += ["--latency-warmup", str(args.latency_warmup)]
                command += ["--python-daemon", args.python_daemon]
                done = subprocess.run(
                    command,
                    cwd=Path(__file__).resolve().parents[1],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
                if done.returncode or not lines:
                    raise RuntimeError(f"cold {scenario} {fmt} failed:\n{done.stderr[-3000:]}")
                results[scenario][fmt].append(json.loads(lines[-1][len("RESULT ") :]))
                print(
                    f"cold round {round_} {scenario} {fmt}: {results[scenario][fmt][-1]}",
                    flush=True,
                )
    return results


def _child(args: argparse.Namespace) -> None:
    """One cold job: a new session, the job, its result on stdout."""
    spark = _session(f"bench-spark-{args.child_tag}", args.python_daemon)
    try:
        result = _job(
            spark,
            args.child_job,
            args.child_format,
            None,
            args.bootstrap,
            args.child_src,
            args,
            Path(args.tmp),
            args.child_tag,
        )
    finally:
        spark.stop()
    print("RESULT " + json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("both", "session", "cold"), default="both")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=2)
    # The first jobs of a session pay for Python worker start-up and the JVM's JIT on
    # both sides (round one measured 3-13x slower than round two here): not measured.
    parser.add_argument("--warmup-rounds", type=int, default=1)
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--latency-seconds", type=float, default=20)
    # Produced at the rate but not counted in p50/p99 (still in cold_p50/cold_p99).
    parser.add_argument("--latency-warmup", type=float, default=10)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--cold-scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--bootstrap")
    # spark.python.daemon.module for both sides' sessions (the JVM connector's jobs
    # start Python processes too: the data source look-up). "pyspark.daemon" is
    # PySpark's default; aiokafka.spark.daemon: see docs/spark.md, Tuning.
    parser.add_argument("--python-daemon", default="aiokafka.spark.daemon")
    parser.add_argument("--label", default=time.strftime("%Y-%m-%d"))
    # Internal: one job of --mode cold, in its own process.
    parser.add_argument("--child-job", help=argparse.SUPPRESS)
    parser.add_argument("--child-format", help=argparse.SUPPRESS)
    parser.add_argument("--child-src", help=argparse.SUPPRESS)
    parser.add_argument("--child-tag", help=argparse.SUPPRESS)
    parser.add_argument("--tmp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if args.child_job:
        _child(args)
        return

    cluster = None if args.bootstrap else start_single()
    bs = args.bootstrap or (cluster.bootstrap_servers if cluster else "")
    session: dict[str, dict[str, list[Any]]] = {}
    workers: dict[str, list[int]] = {}
    cold: dict[str, dict[str, list[Any]]] = {}
    try:
        run = uuid.uuid4().hex[:6]
        src = _topic(cluster, bs, f"spark-bench-src-{run}", args.partitions)
        started = time.perf_counter()
        asyncio.run(_fill(bs, src, args.records, args.size, args.partitions))
        print(
            f"filled {src}: {args.records} x {args.size} B in {time.perf_counter() - started:.1f} s"
        )
        tmp = Path(f"/tmp/bench-spark-{run}")
        if args.mode in ("both", "session"):
            session, workers = _run_session(args, cluster, bs, src, tmp)
        if args.mode in ("both", "cold"):
            cold = _run_cold(args, bs, src, tmp)
    finally:
        if cluster is not None:
            cluster.stop()
    _report(args, session, workers, cold)


def _table(results: dict[str, dict[str, list[Any]]], args: argparse.Namespace) -> list[str]:
    lines = ["| scenario | aiokafka | JVM connector | ratio |", "|---|---|---|---|"]
    for scenario, by_fmt in results.items():
        if scenario == "latency":
            for q in ("p50", "p99", "cold_p50", "cold_p99"):
                ours = statistics.median(r[q] for r in by_fmt["aiokafka"])
                theirs = statistics.median(r[q] for r in by_fmt["kafka"])
                name = q.replace("cold_", "") + (
                    f" incl. first {args.latency_warmup:g} s" if q.startswith("cold") else ""
                )
                lines.append(
                    f"| latency {name} (s, {args.rate}/s) | {ours:.2f} | {theirs:.2f} | "
                    f"{theirs / ours:.2f}x |"
                )
            continue
        ours = statistics.median(by_fmt["aiokafka"])
        theirs = statistics.median(by_fmt["kafka"])
        lines.append(
            f"| {scenario} (records/s) | {ours:,.0f} | {theirs:,.0f} | {ours / theirs:.2f}x |"
        )
    return lines


def _report(
    args: argparse.Namespace,
    session: dict[str, dict[str, list[Any]]],
    workers: dict[str, list[int]],
    cold: dict[str, dict[str, list[Any]]],
) -> None:
    RESULTS.mkdir(exist_ok=True)
    base = RESULTS / f"spark-{args.label}"
    meta = {
        "mode": args.mode,
        "records": args.records,
        "size": args.size,
        "partitions": args.partitions,
        "repeat": args.repeat,
        "warmup_rounds": args.warmup_rounds,
        "rate": args.rate,
        "latency_seconds": args.latency_seconds,
        "latency_warmup": args.latency_warmup,
        "python_daemon": args.python_daemon,
        "pyspark_path_hook": hook_path().exists(),
        "loadavg_start": _START_LOAD,
        "loadavg_end": os.getloadavg(),
    }
    data = {"meta": meta, "results": session, "workers_before_turn": workers, "cold": cold}
    base.with_suffix(".json").write_text(json.dumps(data, indent=2))
    lines = [
        f"# PySpark on Kafka: aiokafka data source vs JVM connector ({args.label})",
        "",
        f"{args.records:,} x {args.size} B, {args.partitions} partitions, local[2], medians "
        "(all runs listed). Latency p50/p99 count the records produced "
        f"after the first {args.latency_warmup:g} s at the rate; the 'incl.' rows count all. "
        f"Load average (1, 5, 15 min) at start {_fmt_load(_START_LOAD)}, at end "
        f"{_fmt_load(os.getloadavg())}: the 2-core machine is shared with other work.",
        "",
        f"Both sides' sessions: `spark.python.daemon.module={args.python_daemon}`; the "
        "`python -m aiokafka.spark.pyspark_path` hook "
        f"{'installed' if meta['pyspark_path_hook'] else 'not installed'} "
        "(docs/spark.md, Tuning: where Spark's Python processes import PySpark from).",
        "",
    ]
    if cold:
        lines += [
            f"## Cold: each job in a new process and SparkSession ({args.repeat} rounds)",
            "",
            "As a `spark-submit` job runs: a new JVM for the connector, new Python workers "
            "for us. Only the job is timed.",
            "",
            *_table(cold, args),
            "",
        ]
    if session:
        lines += [
            f"## Session: one SparkSession, {args.warmup_rounds} unmeasured warm-up "
            f"round(s), then {args.repeat} rounds taking turns",
            "",
            "The JVM connector stays warm; PySpark ends our idle Python workers after a "
            "minute, so our turns can start cold. Live Python workers when each measured "
            f"turn started: {json.dumps(workers)}.",
            "",
            *_table(session, args),
            "",
        ]
    lines += ["All runs:", "", "```", json.dumps({"cold": cold, "session": session}, indent=1)]
    lines += ["```", ""]
    base.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines[: lines.index("All runs:")]))


if __name__ == "__main__":
    main()
