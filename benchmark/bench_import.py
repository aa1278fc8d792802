"""Import cost of ``from aiokafka import AIOKafkaProducer, AIOKafkaConsumer``.

Each measurement is a fresh interpreter. The package is copied to a temporary directory
first, so that "without cached bytecode" (``PYTHONDONTWRITEBYTECODE=1``, no
``__pycache__``) and "with" (``compileall`` first) do not depend on, or touch, the
working tree. The standard library keeps its own cached bytecode in both cases, as on a
machine that sets ``PYTHONDONTWRITEBYTECODE``.

By default aiokafka 0.14 (``benchmark/.venvs/aiokafka014``, if present) is measured in
the same run the same way (its installed package copied, with and without bytecode),
and the cases are interleaved: round ``i`` runs every case once before round ``i + 1``,
so a change in the machine's load falls on all of them alike.

Reported per case: the median and the minimum over ``--repeat`` rounds of the import's
CPU time (``time.process_time``) and wall time; how many modules the import added to
``sys.modules``; and the sum of ``-X importtime`` self times of those modules (the
median over the rounds, measured in separate runs because ``-X importtime`` slows the
import down), also for the package's own modules alone. The module count does not
depend on the load at all and the self-time sums less than the totals do.

    python -m benchmark.bench_import --repeat 9                  # this repository + 0.14
    python -m benchmark.bench_import --src /tmp/old --no-014     # a checkout containing aiokafka/
    python -m benchmark.bench_import --also /tmp/before          # and another one, interleaved
    python -m benchmark.bench_import --python benchmark/.venvs/aiokafka014/bin/python --installed

``--installed`` measures the package as installed for that interpreter (its bytecode is
whatever the installation left: for aiokafka 0.14 from PyPI, cached).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

STATEMENT = "from aiokafka import AIOKafkaProducer, AIOKafkaConsumer"
_MARK = "-- bench_import: statement starts --"
_CODE = (
    "import sys, time\n"
    "n = len(sys.modules)\n"
    f"sys.stderr.write({_MARK!r} + '\\n'); sys.stderr.flush()\n"
    "c, w = time.process_time(), time.perf_counter()\n"
    f"{STATEMENT}\n"
    "c, w = time.process_time() - c, time.perf_counter() - w\n"
    "print(c, w, len(sys.modules) - n)\n"
)
_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")
_REPO = Path(__file__).resolve().parents[1]
_AIOKAFKA014 = _REPO / "benchmark" / ".venvs" / "aiokafka014" / "bin" / "python"


@dataclass
class Case:
    """One thing to import: an interpreter and the directory the import runs in."""

    label: str
    python: str
    cwd: str
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    modules: list[int] = field(default_factory=list)
    self_sum: list[float] = field(default_factory=list)
    own_self_sum: list[float] = field(default_factory=list)


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    return env


def _run(case: Case, importtime: bool) -> None:
    args = [case.python, *(["-X", "importtime"] if importtime else []), "-c", _CODE]
    out = subprocess.run(args, env=_env(), cwd=case.cwd, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{case.label}: {out.stderr.strip()}")
    cpu, wall, modules = out.stdout.split()
    if not importtime:
        case.cpu.append(float(cpu))
        case.wall.append(float(wall))
        case.modules.append(int(modules))
        return
    total = own = 0
    for line in out.stderr.split(_MARK, 1)[1].splitlines():
        m = _IMPORTTIME.match(line)
        if m:
            total += int(m[1])
            if m[2] == "aiokafka" or m[2].startswith("aiokafka."):
                own += int(m[1])
    case.self_sum.append(total / 1e6)
    case.own_self_sum.append(own / 1e6)


def _package_dir(python: str) -> Path:
    # Run from / so that a checkout in the current directory does not shadow it.
    code = "import aiokafka, os; print(os.path.dirname(aiokafka.__file__))"
    out = subprocess.run([python, "-c", code], cwd="/", capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _copies(label: str, python: str, package: Path, tmp: Path) -> list[Case]:
    """A no-bytecode and a compiled copy of ``package`` (an ``aiokafka/`` directory)."""
    cases = []
    for kind in ("no bytecode", "bytecode"):
        root = tmp / f"{label}-{kind}".replace(" ", "_")
        shutil.copytree(package, root / "aiokafka", ignore=shutil.ignore_patterns("__pycache__"))
        if kind == "bytecode":
            subprocess.run([python, "-m", "compileall", "-q", str(root / "aiokafka")], check=True)
        cases.append(Case(f"{label}, {kind}", python, str(root)))
    return cases


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "unknown"


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f}" if values else "-"


def report(cases: list[Case], repeat: int) -> str:
    """The results as a Markdown table (times in ms)."""
    lines = [
        f"{repeat} rounds; times in ms; modules = entries the import added to sys.modules",
        "",
        "| case | CPU median / min | wall median / min | modules "
        "| -X importtime self-time sum: all / aiokafka's |",
        "|---|---|---|---|---|",
    ]
    for c in cases:
        lines.append(
            f"| {c.label} | {_ms(c.cpu)} / {min(c.cpu) * 1e3:.1f} "
            f"| {_ms(c.wall)} / {min(c.wall) * 1e3:.1f} "
            f"| {max(c.modules)} "
            f"| {_ms(c.self_sum)} / {_ms(c.own_self_sum)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--src", type=Path, default=_REPO, help="a directory containing aiokafka/")
    parser.add_argument(
        "--also",
        type=Path,
        action="append",
        default=[],
        help="another directory containing aiokafka/ (e.g. an older commit), same interpreter",
    )
    parser.add_argument("--installed", action="store_true", help="measure the installed package")
    parser.add_argument(
        "--repeat", "--runs", type=int, default=9, help="rounds (fresh interpreters per case)"
    )
    parser.add_argument("--no-014", action="store_true", help="do not measure aiokafka 0.14")
    parser.add_argument("--no-importtime", action="store_true", help="skip -X importtime runs")
    args = parser.parse_args()
    # Absolute: the runs start in temporary directories.
    python = str(Path(args.python).absolute())
    load_before = _load()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.installed:
            cases = [Case("installed", python, str(tmp))]
        else:
            cases = _copies("ours", python, args.src / "aiokafka", tmp)
            for other in args.also:
                cases += _copies(f"ours @ {other.name}", python, other / "aiokafka", tmp)
        if not args.no_014 and not args.installed and _AIOKAFKA014.exists():
            old = str(_AIOKAFKA014)
            cases += _copies("aiokafka 0.14", old, _package_dir(old), tmp)
            cases.append(Case("aiokafka 0.14, as installed", old, str(tmp)))
        for _ in range(args.repeat):
            for case in cases:
                _run(case, importtime=False)
                if not args.no_importtime:
                    _run(case, importtime=True)
    print(f"{STATEMENT}\nPython {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"1/5/15-minute load average: {load_before} at the start, {_load()} at the end\n")
    print(report(cases, args.repeat))


if __name__ == "__main__":
    main()
