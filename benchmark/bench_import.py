"""Import cost of ``from aiokafka import AIOKafkaProducer, AIOKafkaConsumer``.

Each measurement is a fresh interpreter; the best of ``--runs`` is kept (CPU time of the
import, from ``time.process_time``, and wall time). The package is copied to a temporary
directory first, so that "without cached bytecode" (``PYTHONDONTWRITEBYTECODE=1``, no
``__pycache__``) and "with" (``compileall`` first) do not depend on, or touch, the
working tree. The standard library keeps its own cached bytecode in both cases, as on a
machine that sets ``PYTHONDONTWRITEBYTECODE``.

    python -m benchmark.bench_import                       # this repository
    python -m benchmark.bench_import --src /tmp/old        # a checkout containing aiokafka/
    python -m benchmark.bench_import --python benchmark/.venvs/aiokafka014/bin/python --installed

``--installed`` measures the package as installed for that interpreter (its bytecode is
whatever the installation left: for aiokafka 0.14 from PyPI, cached).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

STATEMENT = "from aiokafka import AIOKafkaProducer, AIOKafkaConsumer"
_CODE = (
    "import time\n"
    "c, w = time.process_time(), time.perf_counter()\n"
    f"{STATEMENT}\n"
    "print(time.process_time() - c, time.perf_counter() - w)\n"
)


def _best(python: str, cwd: str, runs: int) -> tuple[float, float]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    cpu, wall = [], []
    for _ in range(runs):
        out = subprocess.run(
            [python, "-c", _CODE], env=env, cwd=cwd, capture_output=True, text=True, check=True
        )
        c, w = map(float, out.stdout.split())
        cpu.append(c)
        wall.append(w)
    return min(cpu), min(wall)


def measure(python: str, src: Path | None, runs: int) -> dict[str, tuple[float, float]]:
    """``{"no bytecode": (cpu, wall), "bytecode": (cpu, wall)}`` in seconds, or one
    ``"installed"`` entry when ``src`` is None."""
    with tempfile.TemporaryDirectory() as tmp:
        if src is None:
            return {"installed": _best(python, tmp, runs)}
        shutil.copytree(
            src / "aiokafka", Path(tmp) / "aiokafka", ignore=shutil.ignore_patterns("__pycache__")
        )
        cold = _best(python, tmp, runs)
        subprocess.run([python, "-m", "compileall", "-q", str(Path(tmp) / "aiokafka")], check=True)
        return {"no bytecode": cold, "bytecode": _best(python, tmp, runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--installed", action="store_true", help="measure the installed package")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    # Absolute: the runs start in a temporary directory.
    python = str(Path(args.python).absolute())
    results = measure(python, None if args.installed else args.src, args.runs)
    for label, (cpu, wall) in results.items():
        best = f"(best of {args.runs})"
        print(f"{label:12} CPU {cpu * 1000:6.1f} ms   wall {wall * 1000:6.1f} ms  {best}")


if __name__ == "__main__":
    main()
