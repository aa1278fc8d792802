"""The benchmark harness's measurement code: process runs, result parsing, statistics, ratios.

No broker: workers here are tiny scripts that follow (or break) the worker contract.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from benchmark import report, workerlib
from benchmark.clients import BY_NAME, ROOT, worker_command
from benchmark.harness import (
    FAILED,
    OK,
    SKIPPED,
    CpuWindow,
    Outcome,
    ProcessRun,
    ResultError,
    add_cpu_window,
    derive_metrics,
    judge,
    latency_summary,
    parse_result,
    percentile,
    pick_median,
    process_cpu_s,
    run_process,
    run_worker,
    system_busy_s,
)
from benchmark.run_all import Runner, build_parser, resolve_counts, worker_timeout


def _script(tmp_path: Path, body: str, name: str = "worker.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def _run(**kw: Any) -> ProcessRun:
    base: dict[str, Any] = dict(
        returncode=0,
        timed_out=False,
        wall_s=2.0,
        cpu_total_s=1.5,
        max_rss_kb=1000,
        stdout="",
        stderr="",
    )
    base.update(kw)
    return ProcessRun(**base)


def _line(**fields: Any) -> str:
    return workerlib.RESULT_PREFIX + json.dumps(fields)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# --------------------------------------------------------------------------- statistics


def test_percentile_interpolates_like_numpy_linear() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(list(map(float, range(1, 101))), 99) == pytest.approx(99.01)
    assert percentile([7.0], 99.9) == 7.0


@pytest.mark.parametrize(("values", "pct"), [([], 50), ([1.0], -1), ([1.0], 100.5)])
def test_percentile_rejects_bad_input(values: list[float], pct: float) -> None:
    with pytest.raises(ValueError):
        percentile(values, pct)


def test_latency_summary() -> None:
    summary = latency_summary([float(v) for v in range(1, 1001)])
    assert summary["p50_us"] == pytest.approx(500.5)
    assert summary["p99_us"] == pytest.approx(990.01)
    assert summary["p99.9_us"] == pytest.approx(999.001)
    assert summary["max_us"] == 1000.0
    assert summary["mean_us"] == pytest.approx(500.5)


# --------------------------------------------------------------------------- result lines


def test_parse_result_prefers_the_last_prefixed_line() -> None:
    stdout = "\n".join(
        [
            _line(count=1, seconds=1, cpu_s=1),
            '{"count": 9, "seconds": 9, "cpu_s": 9}',  # a library's JSON log line
            _line(count=2, seconds=0.5, cpu_s=0.25),
            "bye",
        ]
    )
    assert parse_result(stdout)["count"] == 2


def test_parse_result_accepts_a_bare_json_line() -> None:
    stdout = 'log line\n{"count": 5, "seconds": 1.5, "cpu_s": 0.5}\n'
    assert parse_result(stdout) == {"count": 5, "seconds": 1.5, "cpu_s": 0.5}


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        "nothing here\n",
        "{not json\n",
        '{"seconds": 1, "cpu_s": 1}',
        '{"count": "5", "seconds": 1, "cpu_s": 1}',
        '{"count": true, "seconds": 1, "cpu_s": 1}',
        '{"count": 5, "seconds": -1, "cpu_s": 1}',
    ],
)
def test_parse_result_rejects(stdout: str) -> None:
    with pytest.raises(ResultError):
        parse_result(stdout)


def test_workerlib_emit_is_what_the_harness_parses(capsys: pytest.CaptureFixture[str]) -> None:
    with workerlib.Meter() as meter:
        pass
    workerlib.emit(
        meter.result(client="x", client_version="1", count=3, size=10, latencies_us=[1.25, 2.0])
    )
    parsed = parse_result(capsys.readouterr().out)
    assert parsed["count"] == 3
    assert parsed["bytes"] == 30
    assert parsed["latencies_us"] == [1.2, 2.0]
    assert parsed["max_rss_kb"] > 0


def test_meter_counts_cpu_of_the_loop_only() -> None:
    sum(range(3_000_000))  # before the meter: must not count
    with workerlib.Meter() as meter:
        deadline = time.process_time() + 0.15
        while time.process_time() < deadline:
            pass
        time.sleep(0.1)
    assert meter.seconds >= 0.25
    assert 0.1 <= meter.cpu_s < meter.seconds


@pytest.mark.parametrize(
    "argv",
    [["--count", "0"], ["--count", "5", "--partitions", "0"], ["--count", "5", "--size", "-1"]],
)
def test_workerlib_rejects_bad_numbers(argv: list[str]) -> None:
    base = ["--scenario", "produce", "--bootstrap", "h:1", "--topic", "t"]
    with pytest.raises(SystemExit):
        workerlib.parse_args([*base, *argv])


def test_payload_has_the_requested_size() -> None:
    assert len(workerlib.payload(100)) == 100
    assert len(set(workerlib.payload(100))) > 10
    assert workerlib.payload(0) == b""


# --------------------------------------------------------------------------- processes


def test_run_process_measures_the_child(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import sys, time
        deadline = time.process_time() + 0.3
        while time.process_time() < deadline:
            pass
        blob = bytearray(64 * 1024 * 1024)  # touch 64 MiB so peak RSS shows it
        for i in range(0, len(blob), 4096):
            blob[i] = 1
        print("out")
        print("err", file=sys.stderr)
        """,
    )
    run = run_process([sys.executable, str(script)], timeout=30)
    assert run.returncode == 0
    assert not run.timed_out
    assert run.stdout == "out\n"
    assert run.stderr_tail() == "err"
    assert run.cpu_total_s >= 0.3
    assert run.max_rss_kb >= 64 * 1024
    assert run.wall_s >= 0.3


def test_run_process_kills_on_timeout_with_the_whole_session(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    script = _script(
        tmp_path,
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        print("started", file=sys.stderr, flush=True)
        time.sleep(60)
        """,
    )
    began = time.monotonic()
    run = run_process([sys.executable, str(script)], timeout=1.0)
    assert run.timed_out
    assert time.monotonic() - began < 10
    assert run.returncode < 0  # killed by a signal
    assert "started" in run.stderr
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_run_process_reports_exit_status(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys; sys.exit(7)")
    assert run_process([sys.executable, str(script)], timeout=30).returncode == 7
    with pytest.raises(ValueError):
        run_process([sys.executable, str(script)], timeout=0)


def test_run_worker_end_to_end_with_workerlib(tmp_path: Path) -> None:
    # A worker that imports workerlib as a real one does and honours the command line.
    script = _script(
        tmp_path,
        """
        from benchmark import workerlib
        args = workerlib.parse_args()
        with workerlib.Meter() as meter:
            lat = [float(i) for i in range(1, args.count + 1)]
        workerlib.emit(meter.result(client="fake", client_version="0", count=args.count,
                                    size=args.size, latencies_us=lat))
        """,
    )
    cmd = [
        sys.executable,
        str(script),
        *("--scenario", "latency", "--bootstrap", "h:1", "--topic", "t"),
        *("--count", "101", "--size", "10"),
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cell = run_worker(
        "latency",
        "fake",
        cmd,
        expected_count=101,
        size=10,
        timeout=60,
        env=env,
        log_dir=tmp_path / "logs",
    )
    assert cell.status == OK, cell.reason
    assert cell.metrics["count"] == 101
    assert cell.metrics["p50_us"] == pytest.approx(51.0)
    assert "latencies_us" not in cell.worker
    assert (tmp_path / "logs" / "latency-fake.out").read_text().startswith(workerlib.RESULT_PREFIX)


def test_run_worker_skips_a_missing_worker(tmp_path: Path) -> None:
    cmd = [sys.executable, str(tmp_path / "bench_nothing.py"), "--count", "1"]
    cell = run_worker("produce-1p", "ours", cmd, expected_count=1, size=100, timeout=5)
    assert cell.status == SKIPPED
    assert "bench_nothing.py does not exist" in cell.reason


# --------------------------------------------------------------------------- judging


def test_judge_ok_derives_metrics() -> None:
    stdout = _line(count=1000, seconds=0.5, cpu_s=0.25, max_rss_kb=2048, errors=0, notes="n")
    cell = judge("produce-1p", "x", _run(stdout=stdout), expected_count=1000, size=100, timeout=9)
    assert cell.status == OK
    m = cell.metrics
    assert m["msgs_per_s"] == 2000
    assert m["mb_per_s"] == pytest.approx(0.2)
    assert m["cpu_us_per_msg"] == 250
    assert m["cpu_total_us_per_msg"] == 1500
    assert m["max_rss_kb"] == 2048  # the larger of worker and process views
    assert cell.worker["notes"] == "n"


@pytest.mark.parametrize(
    ("run_kw", "status", "reason"),
    [
        ({"returncode": workerlib.EXIT_UNSUPPORTED, "stderr": "no aio"}, SKIPPED, "no aio"),
        ({"returncode": 1, "stderr": "Traceback\nBoom: bad"}, FAILED, "Boom: bad"),
        ({"timed_out": True, "returncode": -9}, FAILED, "timed out after 9 s"),
        ({"stdout": "no result"}, FAILED, "no result line"),
        ({"stdout": _line(count=10, seconds=1, cpu_s=1, errors=2)}, FAILED, "2 records failed"),
        ({"stdout": _line(count=9, seconds=1, cpu_s=1)}, FAILED, "only 9 of 10"),
        ({"stdout": _line(count=10, seconds=0, cpu_s=1)}, FAILED, "zero duration"),
    ],
)
def test_judge_failures(run_kw: dict[str, Any], status: str, reason: str) -> None:
    cell = judge("s", "c", _run(**run_kw), expected_count=10, size=1, timeout=9)
    assert cell.status == status
    assert reason in cell.reason


def test_derive_metrics_defaults_bytes_to_count_times_size() -> None:
    metrics = derive_metrics({"count": 10, "seconds": 2.0, "cpu_s": 0.0}, _run(), size=50)
    assert metrics["mb_per_s"] == pytest.approx(10 * 50 / 2.0 / 1e6)
    assert metrics["max_rss_kb"] == 1000


# --------------------------------------------------------------------------- report


def _ok(scenario: str, client: str, **metrics: float) -> Outcome:
    return Outcome(scenario, client, OK, metrics=dict(metrics))


def test_ratios_vs_ours() -> None:
    outcomes = [
        _ok("p", "ours", msgs_per_s=300.0, cpu_us_per_msg=10.0),
        _ok("p", "peer", msgs_per_s=200.0, cpu_us_per_msg=15.0),
        Outcome("p", "broken", FAILED, "x"),
        _ok("l", "ours", msgs_per_s=1.0, cpu_us_per_msg=1.0, p50_us=100.0, p99_us=200.0),
        _ok("l", "peer", msgs_per_s=2.0, cpu_us_per_msg=4.0, p50_us=150.0, p99_us=100.0),
        _ok("only-peer", "peer", msgs_per_s=1.0, cpu_us_per_msg=1.0),
    ]
    ratios = report.ratios_vs_ours(outcomes)
    assert ratios[("p", "peer")] == {"throughput": 1.5, "cpu": 1.5}
    assert ratios[("l", "peer")] == {"throughput": 0.5, "cpu": 4.0, "p50": 1.5, "p99": 0.5}
    assert ("p", "broken") not in ratios
    assert ("only-peer", "peer") not in ratios  # no result of ours to compare with


def test_tables_show_ratios_and_problems(tmp_path: Path) -> None:
    outcomes = [
        _ok("p", "ours", msgs_per_s=300.0, cpu_us_per_msg=10.0, max_rss_kb=2048.0),
        _ok("p", "peer", msgs_per_s=200.0, cpu_us_per_msg=15.0),
        Outcome("p", "broken", SKIPPED, "worker x.py does not exist"),
    ]
    text = report.text_table(outcomes)
    assert "1.50x" in text
    assert "SKIPPED" in text
    assert "p / broken: skipped: worker x.py does not exist" in text
    path = report.write(outcomes, {"label": "t"}, tmp_path, "t")
    doc = json.loads(path.read_text())
    assert doc["ratios_vs_ours"] == [
        {"scenario": "p", "client": "peer", "throughput": 1.5, "cpu": 1.5}
    ]
    assert [r["status"] for r in doc["results"]] == [OK, OK, SKIPPED]
    md = (tmp_path / "t.md").read_text()
    assert "| client | msgs/s |" in md
    assert "| ours | 300 |" in md


# --------------------------------------------------------------------------- run_all


def test_counts_full_quick_and_explicit() -> None:
    parser = build_parser()
    assert resolve_counts(parser.parse_args([])) == {
        "count": 1_000_000,
        "latency_count": 5_000,
        "concurrent_count": 40_000,
    }
    quick = resolve_counts(parser.parse_args(["--quick", "--latency-count", "7"]))
    assert quick["count"] < 1_000_000
    assert quick["latency_count"] == 7
    assert worker_timeout(parser.parse_args(["--timeout", "5"]), 10**6) == 5.0
    assert worker_timeout(parser.parse_args([]), 10**6) > worker_timeout(
        parser.parse_args([]), 10**3
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["--clients", "nobody"])


def test_worker_commands_and_environments() -> None:
    aio = BY_NAME["confluent-aio"]
    cmd = worker_command(
        aio,
        Path("/py"),
        scenario="consume-iter",
        bootstrap="h:1",
        topic="t",
        count=5,
        size=100,
        partitions=1,
        concurrency=200,
    )
    assert cmd[:2] == ["/py", str(ROOT / "benchmark" / "worker_confluent.py")]
    assert cmd[-2:] == ["--api", "aio"]
    assert BY_NAME["ours"].env()["PYTHONPATH"] == str(ROOT)
    assert "PYTHONPATH" not in BY_NAME["aiokafka-0.14"].env()
    ours = BY_NAME["ours"]
    assert ours.worker(consumer=False).name == "bench_producer_ours.py"
    assert ours.worker(consumer=True).name == "bench_consumer_ours.py"


# --------------------------------------------------------------------------- CPU accounting


def test_process_and_system_cpu_readings(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import sys, time
        deadline = time.process_time() + 0.4
        while time.process_time() < deadline:
            pass
        print("burnt", flush=True)
        time.sleep(30)
        """,
    )
    busy0 = system_busy_s()
    with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "burnt\n"
            used = process_cpu_s(proc.pid)
            busy1 = system_busy_s()
        finally:
            proc.kill()
    assert used is not None and used >= 0.35
    assert busy0 is not None and busy1 is not None and busy1 - busy0 >= 0.35
    assert process_cpu_s(proc.pid) is None  # gone


def test_cpu_window_splits_broker_and_others() -> None:
    metrics: dict[str, Any] = {"count": 1000}
    run = _run(wall_s=2.0, cpu_total_s=1.5)
    add_cpu_window(metrics, CpuWindow(system_s=4.0, watched_s=0.5), run)
    assert metrics["broker_cpu_s"] == 0.5
    assert metrics["broker_cpu_us_per_msg"] == 500
    assert metrics["other_cpu_s"] == 2.0  # 4.0 - worker 1.5 - broker 0.5
    assert metrics["other_cores_busy"] == 1.0
    unknown: dict[str, Any] = {"count": 1}
    add_cpu_window(unknown, CpuWindow(system_s=None, watched_s=None), run)
    assert unknown == {"count": 1}


def test_pick_median_of_repeats() -> None:
    runs = [_ok("p", "c", msgs_per_s=v, cpu_us_per_msg=v / 10) for v in (30.0, 10.0, 20.0)]
    chosen = pick_median(runs)
    assert chosen.metrics["msgs_per_s"] == 20.0
    assert chosen.metrics["runs_msgs_per_s"] == [30.0, 10.0, 20.0]
    assert chosen.metrics["runs_cpu_us_per_msg"] == [3.0, 1.0, 2.0]
    assert pick_median(runs[:2]).metrics["msgs_per_s"] == 10.0  # lower middle
    failed = Outcome("p", "c", FAILED, "boom")
    assert pick_median([runs[0], failed]) is failed
    with pytest.raises(ValueError):
        pick_median([])
    text = report.markdown([chosen], {"label": "x"})
    assert "msgs/s of every run (the median run is shown): c 30 / 10 / 20" in text
    assert "CPU µs/msg of every run, in the same order: c 3.0 / 1.0 / 2.0" in text


class _DeadBroker:
    """A broker that has exited: every topic creation fails."""

    bootstrap = "127.0.0.1:1"
    pid = None

    def failure(self) -> str:
        return "the broker exited: log tail"

    def create_topic(self, name: str, partitions: int) -> str:
        raise RuntimeError("connection refused")


def test_runner_reports_a_dead_broker_for_every_cell(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["--quick", "--clients", "confluent,kafka-python", "--scenarios", "produce-1p,consume-iter"]
    )
    runner = Runner(args, _DeadBroker(), tmp_path)  # type: ignore[arg-type]
    outcomes = runner.run()
    assert [(o.scenario, o.client) for o in outcomes] == [
        ("produce-1p", "confluent"),
        ("produce-1p", "kafka-python"),
        ("consume-iter", "confluent"),
        ("consume-iter", "kafka-python"),
    ]
    assert all(o.status == FAILED and "broker exited" in o.reason for o in outcomes)
    assert runner.outcomes == outcomes


class _LiveBroker:
    """A broker that creates every topic it is asked for."""

    bootstrap = "127.0.0.1:1"
    pid = None

    def failure(self) -> None:
        return None

    def create_topic(self, name: str, partitions: int) -> str:
        return name


class _RecordingRunner(Runner):
    """Runs no worker: records (label, client, scenario, count) and makes up results,
    failing every run of the clients in ``failing``."""

    def __init__(self, *args: Any, failing: frozenset[str] = frozenset()) -> None:
        super().__init__(*args)
        self.calls: list[tuple[str, str, str, int]] = []
        self.failing = failing

    def run_one(self, scenario: Any, client: Any, topic: str, count: int, label: str) -> Outcome:
        self.calls.append((label, client.name, scenario.name, count))
        if client.name in self.failing:
            return Outcome(label, client.name, FAILED, "boom")
        metrics = {"msgs_per_s": float(len(self.calls)), "cpu_us_per_msg": 1.0}
        return Outcome(label, client.name, OK, metrics=metrics)


def test_runner_warms_request_paths_up_and_interleaves_repeats(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["--clients", "ours,kafka-python", "--scenarios", "concurrent", "--repeat", "3"]
    )
    runner = _RecordingRunner(args, _LiveBroker(), tmp_path, failing=frozenset({"kafka-python"}))
    outcomes = runner.run()
    assert runner.calls[:2] == [
        ("warmup", "confluent", "produce-1p", 200_000),
        ("warmup", "confluent", "latency", 20_000),
    ]
    # One unmeasured round of each client, then a, b, a, a: rounds alternate the
    # clients; a client that failed a measured run is not run again.
    assert [(c[0], c[1]) for c in runner.calls[2:]] == [
        ("concurrent-warmup", "ours"),
        ("concurrent-warmup", "kafka-python"),
        ("concurrent", "ours"),
        ("concurrent", "kafka-python"),
        ("concurrent", "ours"),
        ("concurrent", "ours"),
    ]
    assert [(o.client, o.status) for o in outcomes] == [("ours", OK), ("kafka-python", FAILED)]
    assert outcomes[0].metrics["runs_msgs_per_s"] == [5.0, 7.0, 8.0]


def test_runner_skips_the_request_warm_up_for_throughput_only(tmp_path: Path) -> None:
    args = build_parser().parse_args(["--quick", "--clients", "ours", "--scenarios", "produce-1p"])
    runner = _RecordingRunner(args, _LiveBroker(), tmp_path)
    runner.run()
    assert [c[0] for c in runner.calls] == ["warmup", "produce-1p"]


def test_runner_warmup_rounds_option(tmp_path: Path) -> None:
    argv = ["--clients", "ours", "--scenarios", "produce-1p,latency", "--warmup-rounds", "2"]
    runner = _RecordingRunner(build_parser().parse_args(argv), _LiveBroker(), tmp_path)
    runner.run()
    assert [c[0] for c in runner.calls] == [
        "warmup",
        "warmup",
        "produce-1p-warmup",
        "produce-1p-warmup",
        "produce-1p",
        "latency-warmup",
        "latency-warmup",
        "latency",
    ]


# --------------------------------------------------------------------------- --base


def test_ours_base_runs_only_when_a_base_is_given() -> None:
    from benchmark.run_all import default_clients

    parser = build_parser()
    assert "ours-base" not in default_clients(parser.parse_args([]))
    assert "ours" in default_clients(parser.parse_args([]))
    assert "ours-base" in default_clients(parser.parse_args(["--base", "HEAD~1"]))
    assert default_clients(parser.parse_args(["--clients", "ours,ours-base"])) == [
        "ours",
        "ours-base",
    ]


def test_ours_base_runs_the_prepared_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmark.clients import BASE_ENV, ClientUnavailable, interpreter

    base = BY_NAME["ours-base"]
    monkeypatch.delenv(BASE_ENV, raising=False)
    with pytest.raises(ClientUnavailable, match="--base"):
        interpreter(base)
    monkeypatch.setenv(BASE_ENV, str(tmp_path))
    with pytest.raises(ClientUnavailable, match="not a checkout"):
        interpreter(base)
    (tmp_path / "aiokafka").mkdir()
    (tmp_path / "aiokafka" / "__init__.py").write_text("")
    assert interpreter(base) == Path(sys.executable)
    assert base.env()["PYTHONPATH"] == str(tmp_path)
    assert base.worker(consumer=True) == tmp_path / "benchmark" / "bench_consumer_ours.py"
    # The other clients of ours keep this tree.
    assert BY_NAME["ours"].env()["PYTHONPATH"] == str(ROOT)
    assert BY_NAME["ours"].worker(consumer=False) == ROOT / "benchmark" / "bench_producer_ours.py"


def test_prepare_base_refuses_what_is_not_a_commit(tmp_path: Path) -> None:
    from benchmark.base_tree import prepare_base
    from benchmark.clients import ClientUnavailable

    with pytest.raises(ClientUnavailable, match="rev-parse"):
        prepare_base("no-such-revision-anywhere", trees=tmp_path)
    assert list(tmp_path.iterdir()) == []
