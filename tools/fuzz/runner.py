"""The fuzz driver: deterministic chunks of inputs, run in worker processes, one summary.

Input ``i`` belongs to chunk ``i // CHUNK``; each chunk draws its targets and mutations
from ``random.Random(f"{seed}/{chunk}")``, so a run gives the same inputs whatever the
number of workers. Per input the driver records the outcome (a result or the typed
error's name) and the time; an input slower than 2 ms is timed three more times and
only the fastest of those counts, for the limit and for the slowest input reported (a
loaded machine stalls single runs). Workers cap their address space at their size after
warm-up plus the growth limit, so a decoder that allocates a huge buffer from a length
field fails with ``MemoryError`` instead of swapping, and report their peak RSS.

A failure is an exception outside the target's typed errors (or a failed round trip),
an input over the time limit, a hang (10 s), memory growth over the limit, or a crash:
a worker killed by a signal (a C decoder's segfault) or stuck in C code past a
watchdog, whose input :mod:`.crash` finds. Each
failing input is saved as JSON (target, checksum flag, hex bytes, traceback) for
``python -m tools.fuzz --replay FILE``.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import functools
import hashlib
import json
import multiprocessing
import random
import resource
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from .crash import Trace, confirm_crash, read_suspects
from .mutate import mutate
from .targets import Target, build_targets

__all__ = ["CHUNK", "Failure", "Report", "replay", "run_fuzz"]

CHUNK = 2000
LIMIT_MS = 100.0
GROWTH_LIMIT_BYTES = 100 * 1024 * 1024
HANG_SECONDS = 10.0
CHUNK_WATCHDOG_SECONDS = 600.0
# Inputs slower than this are timed three more times and their best time counts
# (for the limit and for the reported slowest input): scheduler noise, not decoding.
_RETIME_MS = 2.0
MAX_KEPT_FAILURES = 50
_INNER_SHARE = 0.4  # of inputs to targets with a records section: mutate that section


class _Hang(BaseException):
    """Raised by SIGALRM inside a decoder; a BaseException so decoders cannot eat it."""


@dataclass
class Failure:
    """One input that broke a rule."""

    kind: str
    """``untyped``, ``roundtrip``, ``slow``, ``hang``, ``crash`` or ``memory``."""
    target: str
    checked: bool
    data_hex: str
    error: str
    trace: str = ""

    def save(self, out_dir: Path) -> Path:
        """Write the reproducer as JSON into ``out_dir``; return its path."""
        out_dir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha1(f"{self.target}/{self.data_hex}".encode()).hexdigest()[:12]
        safe = self.target.replace(" ", "-").replace("/", "-")
        path = out_dir / f"{self.kind}-{safe}-{digest}.json"
        path.write_text(json.dumps(self.__dict__, indent=2) + "\n")
        return path


@dataclass
class Report:
    """Totals of a run (merged over chunks and workers)."""

    inputs: int = 0
    per_target: collections.Counter[str] = field(default_factory=collections.Counter)
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    slowest_ms: float = 0.0
    slowest_input: str = ""
    raw_max_ms: float = 0.0
    peak_rss_bytes: int = 0
    growth_bytes: int = 0
    failures: list[Failure] = field(default_factory=list)
    failure_count: int = 0
    saved: list[Path] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    def merge(self, other: Report) -> None:
        self.inputs += other.inputs
        self.per_target.update(other.per_target)
        self.outcomes.update(other.outcomes)
        if other.slowest_ms > self.slowest_ms:
            self.slowest_ms, self.slowest_input = other.slowest_ms, other.slowest_input
        self.raw_max_ms = max(self.raw_max_ms, other.raw_max_ms)
        self.peak_rss_bytes = max(self.peak_rss_bytes, other.peak_rss_bytes)
        self.growth_bytes = max(self.growth_bytes, other.growth_bytes)
        self.failure_count += other.failure_count
        room = MAX_KEPT_FAILURES - len(self.failures)
        self.failures += other.failures[: max(0, room)]


# --------------------------------------------------------------------------- per process


@dataclass
class _Worker:
    targets: list[Target]
    protocol: list[int]
    records: list[int]
    limit_ms: float
    hang_guard: bool
    rss_base: int
    trace: Trace | None


_WORKER: _Worker | None = None


def _status_bytes(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def _max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _on_alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _Hang()


def _init(
    make_targets: Callable[[], list[Target]],
    limit_ms: float,
    cap_memory: bool,
    hang_guard: bool,
    trace_dir: Path | None = None,
) -> None:
    """Build the targets, decode every seed once (warm caches, codec imports), cap memory."""
    global _WORKER
    targets = make_targets()
    for target in targets:
        for seed in target.seeds:
            # Only to warm caches and imports: a worker whose initializer raised would be
            # respawned by the pool forever (seed validity is a unit test's business).
            with contextlib.suppress(Exception):
                target.run(seed.data, True)
    if cap_memory:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _status_bytes("VmSize:") + GROWTH_LIMIT_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    if hang_guard:
        signal.signal(signal.SIGALRM, _on_alarm)
    _WORKER = _Worker(
        targets=targets,
        protocol=[i for i, t in enumerate(targets) if t.group != "records"],
        records=[i for i, t in enumerate(targets) if t.group == "records"],
        limit_ms=limit_ms,
        hang_guard=hang_guard,
        rss_base=_max_rss_bytes(),
        trace=Trace(trace_dir) if trace_dir is not None else None,
    )


def _pick(worker: _Worker, rnd: random.Random) -> Target:
    # Half the inputs to each family: 590 protocol targets must not drown 25 record ones.
    pool = worker.protocol if worker.protocol else worker.records
    if worker.records and worker.protocol and rnd.random() < 0.5:
        pool = worker.records
    return worker.targets[rnd.choice(pool)]


def _make_input(target: Target, rnd: random.Random) -> tuple[bytes, bool]:
    if target.inner and target.rebuild is not None and rnd.random() < _INNER_SHARE:
        index = rnd.randrange(len(target.seeds))
        section = mutate(target.inner[index], target.inner, rnd)
        return target.rebuild(target.seeds[index].data, section), True
    seed = rnd.choice(target.seeds)
    return mutate(seed, target.seeds, rnd), False


@contextlib.contextmanager
def _alarm(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _execute(worker: _Worker, target: Target, data: bytes, checked: bool) -> str | Failure:
    """Outcome name, or a Failure."""
    try:
        with _alarm(worker.hang_guard):
            target.run(data, checked)
    except target.allowed as exc:
        return type(exc).__name__
    except _Hang:
        return Failure("hang", target.name, checked, data.hex(), f"over {HANG_SECONDS} s")
    except AssertionError as exc:
        trace = traceback.format_exc()
        return Failure("roundtrip", target.name, checked, data.hex(), str(exc), trace)
    except Exception as exc:
        trace = traceback.format_exc()
        error = f"{type(exc).__name__}: {exc}"
        return Failure("untyped", target.name, checked, data.hex(), error, trace)
    return "ok"


def _timed(worker: _Worker, target: Target, data: bytes, checked: bool) -> float:
    start = time.perf_counter()
    _execute(worker, target, data, checked)
    return (time.perf_counter() - start) * 1000


def _run_chunk(args: tuple[int, int, int]) -> Report:
    worker = _WORKER
    assert worker is not None, "_init() first"
    if not worker.hang_guard:
        return _chunk(worker, *args)
    # SIGALRM's handler cannot interrupt a loop inside C code; faulthandler's watchdog
    # thread can: it ends the worker, and the pool's crash search finds the input.
    faulthandler.dump_traceback_later(CHUNK_WATCHDOG_SECONDS, exit=True)
    try:
        return _chunk(worker, *args)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _chunk(worker: _Worker, seed: int, chunk: int, count: int) -> Report:
    rnd = random.Random(f"{seed}/{chunk}")
    report = Report()
    for _ in range(count):
        target = _pick(worker, rnd)
        data, checked = _make_input(target, rnd)
        if worker.trace is not None:
            worker.trace.begin(chunk, target.name, checked, data)
        start = time.perf_counter()
        outcome = _execute(worker, target, data, checked)
        took = (time.perf_counter() - start) * 1000
        report.inputs += 1
        report.per_target[target.name] += 1
        report.raw_max_ms = max(report.raw_max_ms, took)
        if took > _RETIME_MS and not isinstance(outcome, Failure):
            # A single slow run on a shared machine proves little: retime it.
            took = min(_timed(worker, target, data, checked) for _ in range(3))
            if took > worker.limit_ms:
                outcome = Failure(
                    "slow", target.name, checked, data.hex(), f"{took:.1f} ms at best of 3"
                )
        if worker.trace is not None:
            worker.trace.end()
        if took > report.slowest_ms:
            report.slowest_ms = took
            report.slowest_input = f"{target.name}, {len(data)} bytes"
        if isinstance(outcome, Failure):
            report.failure_count += 1
            if len(report.failures) < MAX_KEPT_FAILURES:
                report.failures.append(outcome)
            report.outcomes["FAILED"] += 1
        else:
            report.outcomes[outcome] += 1
    report.peak_rss_bytes = _max_rss_bytes()
    report.growth_bytes = report.peak_rss_bytes - worker.rss_base
    if report.growth_bytes > GROWTH_LIMIT_BYTES:
        report.failure_count += 1
        report.failures.append(
            Failure("memory", f"chunk {chunk}", False, "", f"RSS grew {report.growth_bytes} B")
        )
    return report


# ---------------------------------------------------------------------------- the driver


def run_fuzz(
    total: int,
    *,
    workers: int = 2,
    seed: int = 0,
    groups: str = "all",
    out_dir: Path | None = None,
    limit_ms: float = LIMIT_MS,
    progress: bool = False,
    targets: Callable[[], list[Target]] | None = None,
) -> Report:
    """Fuzz ``total`` inputs and return the merged report.

    Args:
        total: Number of inputs.
        workers: Worker processes; ``0`` runs in this process (no address-space cap and
            no hang alarm, which would clash with pytest-timeout's).
        seed: Selects the inputs; the same seed gives the same inputs.
        groups: ``"all"``, ``"protocol"`` or ``"records"``.
        out_dir: Where failing inputs are saved (nothing saved when ``None``).
        limit_ms: Time limit per input.
        progress: Print a line about every 10% of the run.
        targets: Builds the targets instead of ``build_targets(groups)`` (the harness's
            own tests use decoders that fail on purpose). Workers are forked, so it
            need not be picklable.
    """
    make_targets = targets if targets is not None else functools.partial(build_targets, groups)
    began = time.monotonic()
    jobs = [(seed, c, min(CHUNK, total - c * CHUNK)) for c in range((total + CHUNK - 1) // CHUNK)]
    report = Report(workers=workers)
    step = max(1, len(jobs) // 10)

    def take(part: Report) -> None:
        report.merge(part)
        done = report.inputs // CHUNK
        if progress and (done % step == 0 or report.inputs == total):
            print(
                f"  {report.inputs:>9,} inputs  {time.monotonic() - began:7.1f} s  "
                f"failures={report.failure_count}",
                flush=True,
            )

    if workers <= 0:
        _init(make_targets, limit_ms, cap_memory=False, hang_guard=False)
        for job in jobs:
            take(_run_chunk(job))
    else:
        for crash in _run_pool(jobs, workers, make_targets, limit_ms, take):
            report.failure_count += 1
            report.failures.append(crash)
    report.seconds = time.monotonic() - began
    if out_dir is not None:
        report.saved = [f.save(out_dir) for f in report.failures if f.data_hex]
    return report


def _run_pool(
    jobs: list[tuple[int, int, int]],
    workers: int,
    make_targets: Callable[[], list[Target]],
    limit_ms: float,
    take: Callable[[Report], None],
) -> list[Failure]:
    """Run ``jobs`` on ``workers`` processes; return the crashes (a worker killed by a
    signal), whose chunks are given up while the others are run again."""
    remaining = {job[1]: job for job in jobs}
    crashes: list[Failure] = []
    ctx = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="aiokafka-fuzz-") as tmp:
        trace_dir = Path(tmp)
        init_args = (make_targets, limit_ms, True, True, trace_dir)
        while remaining:
            try:
                with ProcessPoolExecutor(
                    workers, mp_context=ctx, initializer=_init, initargs=init_args
                ) as pool:
                    futures = {pool.submit(_run_chunk, job): c for c, job in remaining.items()}
                    for future in as_completed(futures):
                        take(future.result())
                        del remaining[futures[future]]
            except BrokenProcessPool:
                suspects = read_suspects(trace_dir)
                found = False
                for suspect in suspects:
                    how = confirm_crash(make_targets, suspect)
                    if how is None:
                        continue  # stopped by the executor, not the culprit
                    found = True
                    remaining.pop(suspect.chunk, None)
                    data = suspect.data.hex()
                    crashes.append(Failure("crash", suspect.target, suspect.checked, data, how))
                if not found:
                    raise RuntimeError(
                        "a fuzz worker died and no single input reproduces it "
                        f"(suspects: {[s.target for s in suspects]})"
                    ) from None
    return crashes


def replay(path: Path) -> Failure | str:
    """Run a saved reproducer again: the outcome name, or the Failure it still causes."""
    saved = json.loads(path.read_text())
    groups = "records" if "/" in saved["target"] else "protocol"
    _init(functools.partial(build_targets, groups), LIMIT_MS, cap_memory=False, hang_guard=False)
    worker = _WORKER
    assert worker is not None
    target = next(t for t in worker.targets if t.name == saved["target"])
    return _execute(worker, target, bytes.fromhex(saved["data_hex"]), saved["checked"])
