"""Running one worker process and turning what it reports into comparable numbers.

Nothing here knows about Kafka: a worker is a command line that prints a result line (the
contract in ``benchmark/README.md``). This module starts it in a session of its own, kills
the whole session if it overruns its time limit, reads the process's own rusage when it is
reaped (``os.wait4``), parses the result line and derives msgs/s, MB/s, CPU per message and
latency percentiles.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark.workerlib import EXIT_UNSUPPORTED, RESULT_PREFIX

OK = "ok"
SKIPPED = "skipped"
FAILED = "failed"

#: Latency percentiles reported for scenarios whose workers report per-call latencies.
PERCENTILES = (50.0, 90.0, 99.0, 99.9)

_STDERR_TAIL_LINES = 15
_POLL_INTERVAL = 0.02


class ResultError(ValueError):
    """A worker's output has no usable result line."""


@dataclass
class ProcessRun:
    """How a worker process ended, measured from the outside."""

    returncode: int
    timed_out: bool
    wall_s: float
    cpu_total_s: float
    """User + system CPU of the whole process, start-up and imports included."""
    max_rss_kb: int
    stdout: str
    stderr: str

    def stderr_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last ``lines`` lines of stderr (where a failing worker explains itself)."""
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


def _kill_session(pid: int) -> None:
    # The worker leads its own session (start_new_session), so its process group id is its
    # pid; helpers it started (threads are not processes, but a worker may fork) go too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_process(
    cmd: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> ProcessRun:
    """Run ``cmd`` to completion (or kill it after ``timeout`` seconds) and measure it.

    stdout and stderr go to temporary files rather than pipes, so a chatty worker can never
    block on a full pipe while we poll it.

    Raises:
        ValueError: if ``timeout`` is not positive.
        OSError: if the command cannot be started.
    """
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.monotonic()
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
        timed_out = False
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - began > timeout:
                    timed_out = True
                    _kill_session(proc.pid)
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(_POLL_INTERVAL)
        except BaseException:
            # Ctrl-C (or any error) in the harness must not leave the worker running.
            _kill_session(proc.pid)
            with contextlib.suppress(ChildProcessError):
                os.wait4(proc.pid, 0)
            raise
        wall = time.monotonic() - began
        # Anything the worker left behind in its session is ours to clean up.
        _kill_session(proc.pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            returncode=proc.returncode,
            timed_out=timed_out,
            wall_s=wall,
            cpu_total_s=usage.ru_utime + usage.ru_stime,
            max_rss_kb=usage.ru_maxrss,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
        )


def parse_result(stdout: str) -> dict[str, Any]:
    """The worker's result object: the last stdout line that is one.

    A line counts if it starts with the ``BENCH-RESULT`` prefix or, failing any such line,
    if it is a JSON object. ``count``, ``seconds`` and ``cpu_s`` must be numbers.

    Raises:
        ResultError: if there is no such line or it lacks a required field.
    """
    lines = stdout.splitlines()
    candidates = [ln[len(RESULT_PREFIX) :] for ln in lines if ln.startswith(RESULT_PREFIX)]
    if not candidates:
        candidates = [ln.strip() for ln in lines if ln.strip().startswith("{")]
    for text in reversed(candidates):
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            break
    else:
        raise ResultError("no result line on stdout")
    for key in ("count", "seconds", "cpu_s"):
        item = value.get(key)
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise ResultError(f"result field {key!r} missing or not a number: {item!r}")
    if value["count"] < 0 or value["seconds"] < 0 or value["cpu_s"] < 0:
        raise ResultError("count, seconds and cpu_s must not be negative")
    return value


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile, linearly interpolated between order statistics.

    Same definition as NumPy's default: the value at rank ``(n - 1) * pct / 100``.

    Raises:
        ValueError: if ``values`` is empty or ``pct`` is outside 0..100.
    """
    if not values:
        raise ValueError("values must not be empty")
    if not 0.0 <= pct <= 100.0:
        raise ValueError("pct must be within 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(latencies_us: Sequence[float]) -> dict[str, float]:
    """p50/p90/p99/p99.9, mean and max of per-call latencies (µs)."""
    out = {f"p{pct:g}_us": percentile(latencies_us, pct) for pct in PERCENTILES}
    out["mean_us"] = sum(latencies_us) / len(latencies_us)
    out["max_us"] = max(latencies_us)
    return out


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def system_busy_s() -> float | None:
    """CPU seconds all cores have spent not idle since boot (``/proc/stat``), or None.

    Steal time counts as busy: on a VM it is CPU the benchmark could not have.
    """
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / _TICKS


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a running process (``/proc/<pid>/stat``), or None."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may contain spaces; fields after it are fixed.
            rest = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(rest[11]) + int(rest[12])) / _TICKS


@dataclass
class CpuWindow:
    """CPU used on the machine while one worker ran, split by who used it."""

    system_s: float | None
    watched_s: float | None
    """CPU of the watched process (the broker), if one was given."""

    @classmethod
    def start(cls, watch_pid: int | None) -> CpuWindow:
        """Readings at the start of the window."""
        watched = process_cpu_s(watch_pid) if watch_pid is not None else None
        return cls(system_busy_s(), watched)

    def close(self, watch_pid: int | None) -> CpuWindow:
        """The deltas from this start reading to now."""
        end = CpuWindow.start(watch_pid)
        return CpuWindow(_delta(self.system_s, end.system_s), _delta(self.watched_s, end.watched_s))


def _delta(before: float | None, after: float | None) -> float | None:
    return after - before if before is not None and after is not None else None


def add_cpu_window(metrics: dict[str, Any], window: CpuWindow, run: ProcessRun) -> None:
    """Add the broker's CPU (total and per message) and everybody else's to ``metrics``.

    ``other_cores_busy`` is the average number of cores kept busy by processes other than
    the worker and the broker while the worker ran: with two cores, anything near 1
    means the wall-clock numbers of that run are not comparable with a quiet one.
    """
    count = metrics.get("count") or 0
    if window.watched_s is not None:
        metrics["broker_cpu_s"] = window.watched_s
        if count:
            metrics["broker_cpu_us_per_msg"] = window.watched_s / count * 1e6
    if window.system_s is not None and run.wall_s > 0:
        other = window.system_s - run.cpu_total_s - (window.watched_s or 0.0)
        metrics["other_cpu_s"] = max(0.0, other)
        metrics["other_cores_busy"] = max(0.0, other) / run.wall_s


@dataclass
class Outcome:
    """One (scenario, client) cell of the report."""

    scenario: str
    client: str
    status: str
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    worker: dict[str, Any] = field(default_factory=dict)
    """The worker's result object, minus the per-call latency list."""
    cmd: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form for the result file."""
        return {
            "scenario": self.scenario,
            "client": self.client,
            "status": self.status,
            "reason": self.reason,
            "metrics": self.metrics,
            "worker": self.worker,
            "cmd": self.cmd,
        }


def derive_metrics(result: Mapping[str, Any], run: ProcessRun, size: int) -> dict[str, Any]:
    """Comparable numbers from a worker's result and its process measurement.

    CPU per message uses the worker's in-loop ``cpu_s``; ``cpu_total_s`` (whole process)
    is kept alongside. Peak RSS is the larger of the two views of it.
    """
    count = int(result["count"])
    seconds = float(result["seconds"])
    cpu_s = float(result["cpu_s"])
    nbytes = result.get("bytes")
    if not isinstance(nbytes, (int, float)) or isinstance(nbytes, bool):
        nbytes = count * size
    metrics: dict[str, Any] = {
        "count": count,
        "seconds": seconds,
        "msgs_per_s": count / seconds if seconds > 0 else None,
        "mb_per_s": nbytes / seconds / 1e6 if seconds > 0 else None,
        "cpu_s": cpu_s,
        "cpu_us_per_msg": cpu_s / count * 1e6 if count else None,
        "cpu_total_s": run.cpu_total_s,
        "cpu_total_us_per_msg": run.cpu_total_s / count * 1e6 if count else None,
        "max_rss_kb": max(int(result.get("max_rss_kb") or 0), run.max_rss_kb),
        "process_wall_s": run.wall_s,
    }
    latencies = result.get("latencies_us")
    if isinstance(latencies, list) and latencies:
        metrics.update(latency_summary([float(v) for v in latencies]))
    return metrics


def judge(
    scenario: str,
    client: str,
    run: ProcessRun,
    *,
    expected_count: int,
    size: int,
    timeout: float,
    cmd: Sequence[str] = (),
) -> Outcome:
    """Classify a finished worker as ok, skipped or failed, with numbers when it is ok."""
    cell = Outcome(scenario, client, FAILED, cmd=list(cmd))
    if run.timed_out:
        cell.reason = f"timed out after {timeout:.0f} s; stderr: {run.stderr_tail(5)}"
        return cell
    if run.returncode == EXIT_UNSUPPORTED:
        cell.status = SKIPPED
        cell.reason = run.stderr_tail(3) or "worker does not support this scenario"
        return cell
    if run.returncode != 0:
        cell.reason = f"exit status {run.returncode}: {run.stderr_tail()}"
        return cell
    try:
        result = parse_result(run.stdout)
    except ResultError as exc:
        cell.reason = f"{exc}; stderr: {run.stderr_tail(5)}"
        return cell
    cell.worker = {k: v for k, v in result.items() if k != "latencies_us"}
    errors = result.get("errors") or 0
    if errors:
        cell.reason = f"{errors} records failed"
    elif result["count"] < expected_count:
        cell.reason = f"only {result['count']} of {expected_count} records confirmed"
    elif result["seconds"] <= 0:
        cell.reason = "reported a zero duration"
    else:
        cell.status = OK
    cell.metrics = derive_metrics(result, run, size)
    return cell


def run_worker(
    scenario: str,
    client: str,
    cmd: Sequence[str],
    *,
    expected_count: int,
    size: int,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    log_dir: Path | None = None,
    watch_pid: int | None = None,
) -> Outcome:
    """Run one worker and judge it; never raises for a worker's own failure.

    A worker script that does not exist gives a ``skipped`` outcome. With ``log_dir`` the
    worker's stdout and stderr are kept there as ``<scenario>-<client>.out``/``.err``.
    With ``watch_pid`` (the broker) the CPU that process used meanwhile is reported too.
    """
    script = next((Path(a) for a in cmd if a.endswith(".py")), None)
    if script is not None and not script.exists():
        return Outcome(scenario, client, SKIPPED, f"worker {script.name} does not exist", cmd=[])
    window = CpuWindow.start(watch_pid)
    try:
        run = run_process(cmd, timeout=timeout, env=env, cwd=cwd)
    except OSError as exc:
        return Outcome(scenario, client, FAILED, f"could not start worker: {exc}", cmd=list(cmd))
    window = window.close(watch_pid)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"{scenario}-{client}.out").write_text(run.stdout)
        (log_dir / f"{scenario}-{client}.err").write_text(run.stderr)
    cell = judge(
        scenario,
        client,
        run,
        expected_count=expected_count,
        size=size,
        timeout=timeout,
        cmd=cmd,
    )
    if cell.metrics:
        add_cpu_window(cell.metrics, window, run)
    return cell


def pick_median(cells: Sequence[Outcome]) -> Outcome:
    """One outcome standing for repeated runs of the same (scenario, client).

    If every run is ok: the run with the median msgs/s (the lower middle one for an even
    number), with every run's msgs/s and CPU µs/msg listed in its metrics as ``runs_*``.
    Otherwise the first run that was not ok, so a flaky client is not hidden.

    Raises:
        ValueError: if ``cells`` is empty.
    """
    if not cells:
        raise ValueError("cells must not be empty")
    bad = [c for c in cells if c.status != OK]
    if bad:
        return bad[0]
    if len(cells) == 1:
        return cells[0]
    ordered = sorted(cells, key=lambda c: c.metrics.get("msgs_per_s") or 0.0)
    chosen = ordered[(len(ordered) - 1) // 2]
    chosen.metrics["runs_msgs_per_s"] = [c.metrics.get("msgs_per_s") for c in cells]
    chosen.metrics["runs_cpu_us_per_msg"] = [c.metrics.get("cpu_us_per_msg") for c in cells]
    return chosen
