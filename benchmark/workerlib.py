"""What every benchmark worker shares: its command line, its meter and its one JSON line.

A worker is a script that the harness (``benchmark/run_all.py``) starts in a process of its
own, once per (client, scenario). The contract is written up in ``benchmark/README.md``;
this module is the reference implementation of the worker's side of it. It uses only the
standard library because it is imported by workers running in other virtualenvs (aiokafka
0.14 lives in ``benchmark/.venvs/``), where neither our package nor the repository root is
on ``sys.path``.

A worker typically does::

    args = workerlib.parse_args()
    ...connect, warm up...
    with workerlib.Meter() as meter:
        ...the measured loop...
    workerlib.emit(meter.result(client="x", client_version="1.2", count=n, size=args.size))
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
from collections.abc import Coroutine, Sequence
from types import TracebackType
from typing import Any, NoReturn, TypeVar

#: Scenario names a worker may be asked to run (``--scenario``).
PRODUCE = "produce"
LATENCY = "latency"
CONCURRENT = "concurrent"
CONSUME_BATCH = "consume-batch"
CONSUME_ITER = "consume-iter"
SCENARIOS = (PRODUCE, LATENCY, CONCURRENT, CONSUME_BATCH, CONSUME_ITER)

#: Ways a caller handles ``send()``'s futures (``--pattern``, produce scenario):
#: ``done`` checks ``done()`` in bulk, ``gather`` awaits ``asyncio.gather`` of every
#: 10,000, ``callback`` adds a done callback to each, ``flush`` awaits ``send()`` and
#: then ``flush()`` (outcomes read after the flush), ``batch`` uses
#: ``create_batch()``/``send_batch()``.
PATTERNS = ("done", "gather", "callback", "flush", "batch")
#: Futures per ``asyncio.gather`` in the ``gather`` pattern.
GATHER_EVERY = 10_000

#: Exit status of a worker asked for a scenario (or ``--api``) it does not implement; the
#: harness reports the pair as skipped rather than failed.
EXIT_UNSUPPORTED = 3

#: The event loop a worker runs on, from the harness (``Client.loop``): ``asyncio`` or
#: ``uvloop``.
LOOP_ENV = "AIOKAFKA_BENCH_LOOP"

#: Prefix of the result line, so that a library printing to stdout cannot be mistaken for it.
RESULT_PREFIX = "BENCH-RESULT "


def build_parser(description: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the worker contract (see ``benchmark/README.md``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", required=True, choices=SCENARIOS)
    parser.add_argument("--bootstrap", required=True, help="host:port[,host:port...]")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, required=True, help="records to send or read")
    parser.add_argument("--size", type=int, default=100, help="value size in bytes")
    parser.add_argument("--partitions", type=int, default=1, help="partitions of --topic")
    parser.add_argument("--acks", default="1", choices=("0", "1", "all"))
    parser.add_argument(
        "--concurrency", type=int, default=200, help="concurrent senders (concurrent)"
    )
    parser.add_argument("--api", default=None, help="variant of the client, e.g. sync or aio")
    parser.add_argument(
        "--pattern",
        default=None,
        choices=PATTERNS,
        help="produce: how the caller handles send()'s futures (workers of libraries "
        "without futures run their one way and say so in the notes)",
    )
    parser.add_argument(
        "--linger-ms", type=int, default=None, help="latency/concurrent: linger (default 0)"
    )
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the worker command line and check the numbers are usable.

    Raises:
        SystemExit: (via argparse) on a bad command line.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    if args.size < 0:
        parser.error("--size must not be negative")
    if args.partitions < 1:
        parser.error("--partitions must be at least 1")
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    return args


def acks_value(acks: str) -> int | str:
    """``"0"``/``"1"`` as ints, ``"all"`` unchanged: the form most client configs take."""
    return acks if acks == "all" else int(acks)


def payload(size: int) -> bytes:
    """The value every client sends: ``size`` bytes, not all the same (no free compression)."""
    pattern = b"0123456789abcdefghijklmnopqrstuvwxyz"
    return (pattern * (size // len(pattern) + 1))[:size]


def unsupported(reason: str) -> NoReturn:
    """Tell the harness this worker does not do what it was asked, and exit."""
    print(reason, file=sys.stderr)
    raise SystemExit(EXIT_UNSUPPORTED)


def _cpu_seconds(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


class Meter:
    """Wall time and CPU time (user + system, all threads) of the measured loop.

    CPU comes from ``getrusage(RUSAGE_SELF)``, so background threads (librdkafka's, an
    executor's) are counted too, while interpreter start-up, imports and connecting before
    the loop are not.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_s = 0.0
        self._t0 = 0.0
        self._cpu0 = 0.0

    def __enter__(self) -> Meter:
        self._cpu0 = _cpu_seconds(resource.getrusage(resource.RUSAGE_SELF))
        self._t0 = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.seconds = time.perf_counter() - self._t0
        self.cpu_s = _cpu_seconds(resource.getrusage(resource.RUSAGE_SELF)) - self._cpu0

    def result(
        self,
        *,
        client: str,
        client_version: str,
        count: int,
        size: int,
        latencies_us: Sequence[float] | None = None,
        errors: int = 0,
        notes: str = "",
    ) -> dict[str, Any]:
        """The result object of the contract, from this meter and the caller's counts."""
        out: dict[str, Any] = {
            "client": client,
            "client_version": client_version,
            "count": count,
            "bytes": count * size,
            "seconds": self.seconds,
            "cpu_s": self.cpu_s,
            # Linux reports ru_maxrss in KiB.
            "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "errors": errors,
            "notes": notes,
        }
        if latencies_us is not None:
            out["latencies_us"] = [round(v, 1) for v in latencies_us]
        return out


_T = TypeVar("_T")


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(main)``, on uvloop's event loop when the harness asks for it
    (``AIOKAFKA_BENCH_LOOP=uvloop``: web services commonly run on uvloop)."""
    loop = os.environ.get(LOOP_ENV, "asyncio")
    if loop == "uvloop":
        import uvloop  # only in the workers of the *-uvloop clients

        return uvloop.run(main)
    if loop != "asyncio":
        main.close()
        raise ValueError(f"{LOOP_ENV} must be asyncio or uvloop, not {loop!r}")
    return asyncio.run(main)


def emit(result: dict[str, Any]) -> None:
    """Print the result line (the harness reads the last line carrying the prefix)."""
    sys.stdout.write(RESULT_PREFIX + json.dumps(result, separators=(",", ":")) + "\n")
    sys.stdout.flush()
