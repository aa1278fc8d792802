"""CPU of a lone ``send_and_wait``: one call in flight at a time, against a real broker.

Usage::

    python -m benchmark.bench_lone_send --bootstrap 127.0.0.1:PORT [--count 5000]
        [--warmup 2000] [--size 100] [--profile-count 500] [--callgrind]

A fresh 1-partition topic is created with ``tools.kafka.wire.create_topics`` (``--topic``
names an existing one instead). The producer uses ``linger_ms=0``,
``acks=1``. ``--warmup`` calls are made first and not measured, then ``--count`` measured
calls, then (in separate passes, so their overhead does not touch the timings):

* Python function calls per call: ``sys.setprofile`` counting ``call`` and ``c_call``
  events over ``--profile-count`` calls;
* event-loop iterations per call: the loop's selector ``select()`` is wrapped and counted
  over ``--profile-count`` calls (one iteration of ``BaseEventLoop._run_once`` is one
  ``select()``), with loop handles run per call (``Handle._run`` counted the same way).

Printed: user and sys CPU µs per call (``getrusage(RUSAGE_SELF)``), wall p50/p99 µs,
calls per call, loop iterations and handles per call.

``--callgrind``: only the warm-up and the measured loop run, and the measured loop is
bracketed by ``CALLGRIND_START``-less toggling through ``--toggle-collect``: run as ::

    valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=_lone_measured_marker ... python -m benchmark.bench_lone_send ...

is not possible for a Python function, so instead run the whole script under callgrind
twice with different ``--count`` (e.g. 2000 and 4000, same ``--warmup``) and divide the
difference of the total instruction counts by the difference of the counts: that is the
instructions per call, start-up and warm-up cancelling out. ``--callgrind`` skips the
profiling passes so the two runs differ only in measured calls.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections import Counter
from typing import Any

from aiokafka import AIOKafkaProducer


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _calls(producer: AIOKafkaProducer, topic: str, value: bytes, n: int) -> None:
    for _ in range(n):
        await producer.send_and_wait(topic, value)


async def _run(opts: argparse.Namespace) -> dict[str, Any]:
    topic = opts.topic
    if not topic:
        from tools.kafka.wire import create_topics

        topic = f"lone-{time.time_ns()}"
        host, _, port = opts.bootstrap.rpartition(":")
        create_topics(host, int(port), topic, 1, 1)
    value = b"x" * opts.size
    producer = AIOKafkaProducer(bootstrap_servers=opts.bootstrap, linger_ms=0, acks=1)
    await producer.start()
    try:
        await _calls(producer, topic, value, opts.warmup)
        wall: list[float] = []
        perf = time.perf_counter
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(opts.count):
            t0 = perf()
            await producer.send_and_wait(topic, value)
            wall.append(perf() - t0)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        out: dict[str, Any] = {
            "user_us": (r1.ru_utime - r0.ru_utime) / opts.count * 1e6,
            "sys_us": (r1.ru_stime - r0.ru_stime) / opts.count * 1e6,
            "p50_us": _percentile(wall, 0.5) * 1e6,
            "p99_us": _percentile(wall, 0.99) * 1e6,
        }
        if opts.callgrind:
            return out
        n = opts.profile_count
        counts: Counter[str] = Counter()

        def profiler(frame: Any, event: str, arg: Any) -> None:
            counts[event] += 1

        sys.setprofile(profiler)
        try:
            await _calls(producer, topic, value, n)
        finally:
            sys.setprofile(None)
        out["py_calls"] = counts["call"] / n
        out["c_calls"] = counts["c_call"] / n

        loop = asyncio.get_running_loop()
        selector = loop._selector  # type: ignore[attr-defined]  # measuring only
        handle_run = asyncio.Handle._run
        iterations = handles = 0
        real_select = selector.select

        def select(timeout: float | None = None) -> Any:
            nonlocal iterations
            iterations += 1
            return real_select(timeout)

        def run_handle(self: asyncio.Handle) -> None:
            nonlocal handles
            handles += 1
            handle_run(self)

        selector.select = select
        asyncio.Handle._run = run_handle  # type: ignore[method-assign]
        try:
            await _calls(producer, topic, value, n)
        finally:
            selector.select = real_select
            asyncio.Handle._run = handle_run  # type: ignore[method-assign]
        out["loop_iterations"] = iterations / n
        out["handles"] = handles / n
        return out
    finally:
        await producer.stop()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", default="")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--profile-count", type=int, default=500)
    parser.add_argument("--callgrind", action="store_true")
    opts = parser.parse_args(argv)
    out = asyncio.run(_run(opts))
    print(" ".join(f"{k}={v:.1f}" for k, v in out.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
