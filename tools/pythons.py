"""Test the package on the other Python versions it supports (``make test-pythons``).

Development and ``make test`` run on one interpreter (the ``.venv``'s); the package
says ``requires-python >= 3.10`` and its C extensions use version-dependent C APIs.
Two bugs lived only on Python 3.12+ (a produce path asyncio refused a generator for,
a segfault in ``_cbuilder``). For each version asked for, this script:

1. finds its interpreter (``python3.X`` on ``PATH``, else pyenv's newest ``3.X.*``),
   and skips the version, saying so, when there is none;
2. makes ``.venvs/py3.X`` with the package installed editable (its C extensions are
   built in place, next to the main interpreter's, under their own ABI tag) and the
   test dependencies taken from the ``dev`` extra, again only when ``pyproject.toml``,
   ``setup.py`` or a C source changed;
3. fails when one of the three C extensions did not build (the build itself is
   optional and would otherwise fall back to pure Python without a word);
4. runs a set of tests: the full set (``--full``) or a short one for ``make test``;
   on 3.12+ the producer's integration tests again with the eager task factory.

Usage: ``python -m tools.pythons [--versions 3.10,3.13] [--full]``; exit status 1 when
a build or a test failed.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
VERSIONS = ("3.10", "3.12", "3.13")

# The test dependencies taken from the dev extra (by distribution name, with their
# extras): what the selected tests and tests/conftest.py import (confluent-kafka and
# kafka-python as peers the producer's results are compared with). tests/unit imports
# fastavro, the OpenTelemetry SDK and confluent-kafka's schema registry (its
# [schemaregistry] extra) at collection: without them --full stopped at collection.
_TEST_DEPS = {
    "confluent-kafka",
    "fastavro",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "prometheus-client",
    "python-snappy",
    "kafka-python",
    "xxhash",
    "pytest",
    "pytest-asyncio",
    "pytest-timeout",
    "hypothesis",
    "uvloop",
    "cramjam",
    "lz4",
    "zstandard",
}
# Inputs of an install (with the test requirements): a change to any of them makes the
# venv be installed again.
_INPUTS = ("pyproject.toml", "setup.py", "aiokafka/**/*.c", "aiokafka/*.h")
_EXTENSIONS = (
    "aiokafka.record._cbuilder",
    "aiokafka.record._cdecode",
    "aiokafka.producer._cfuture",
    "aiokafka.consumer._cready",
)

# Tests close to what differs between versions: the C extensions against their
# Python paths, the record futures with asyncio's gather/wait_for/cancel, the
# producer's task paths, timeouts, uvloop, and a real broker round trip.
_SHORT = (
    "tests/unit/test_record_cbuilder.py",
    "tests/unit/test_record_cdecode.py",
    "tests/unit/test_producer_future_methods.py",
    "tests/unit/test_consumer_ready.py",
    "tests/unit/test_producer_eager.py",
    "tests/unit/test_eager_tasks.py",
    "tests/unit/test_timeout.py",
    "tests/uvloop",
    "tests/integration/test_producer_basic.py",
)
_FULL = (
    "tests/unit",
    "tests/uvloop",
    "tests/integration/test_producer_basic.py",
    "tests/integration/test_producer_errors.py",
    "tests/integration/test_producer_transactions.py",
    "tests/integration/test_consumer_flow.py",
    "tests/integration/test_consumer_group.py",
    "tests/integration/test_connection.py",
    "tests/integration/test_auth.py",
    # The surface comparison with aiokafka 0.14 (whose venv runs 3.11): an enum's
    # signature differs from 3.12 on, which only a run on another version shows.
    "tests/compat/test_aiokafka014_surface.py",
)
_EAGER = ("tests/integration/test_producer_basic.py", "tests/unit/test_producer_eager.py")


def find_interpreter(version: str) -> Path | None:
    """The interpreter of ``version`` (``"3.12"``), or None."""
    found = shutil.which(f"python{version}")
    candidates = [found] if found else []
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    pattern = str(pyenv / "versions" / f"{version}.*" / "bin" / f"python{version}")

    def patch_level(path: str) -> int:
        match = re.search(rf"/{re.escape(version)}\.(\d+)/", path)
        return int(match.group(1)) if match else -1

    candidates += sorted(glob.glob(pattern), key=patch_level, reverse=True)
    for candidate in candidates:
        # A pyenv shim on PATH for a version pyenv does not have fails here.
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return Path(candidate)
    return None


def _fingerprint() -> str:
    digest = hashlib.sha256(" ".join(_test_requirements()).encode())
    for pattern in _INPUTS:
        for path in sorted(ROOT.glob(pattern)):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _test_requirements() -> list[str]:
    """The dev extra's pins of :data:`_TEST_DEPS`, as this environment's install of the
    package lists them (``make install`` put it there)."""
    out = []
    for line in importlib.metadata.requires("aiokafka") or []:
        requirement, _, marker = line.partition(";")
        name = re.split(r"[\[<>=!~ (]", requirement.strip(), maxsplit=1)[0]
        if 'extra == "dev"' in marker and name in _TEST_DEPS:
            out.append(requirement.strip())
    return out


def _run(cmd: Sequence[str | Path], env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env).returncode


def ensure_venv(version: str, interpreter: Path) -> Path | None:
    """The venv's python with the package installed, or None if that failed."""
    home = VENVS / f"py{version}"
    python = home / "bin" / "python"
    stamp = home / ".installed"
    fingerprint = _fingerprint()
    if python.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return python
    pip: list[str | Path] = [python, "-m", "pip", "install", "--quiet"]
    pip.append("--disable-pip-version-check")
    steps: list[list[str | Path]] = [
        [interpreter, "-m", "venv", "--clear", home],
        [*pip, "--upgrade", "pip"],
        [*pip, "-e", ".", *_test_requirements()],
    ]
    for step in steps:
        if _run(step) != 0:
            return None
    stamp.write_text(fingerprint)
    return python


def check_extensions(python: Path) -> bool:
    """Whether every C extension imports (was built) for this interpreter."""
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("AIOKAFKA_NO_EXTENSIONS", None)
    return _run([python, "-c", code, *_EXTENSIONS], env=env) == 0


def run_tests(python: Path, version: str, full: bool) -> bool:
    """Run the selected tests (and the eager-task ones on 3.12+); True if they passed."""
    env = {k: v for k, v in os.environ.items() if k not in ("AIOKAFKA_TEST_LOOP", "PYTHONPATH")}
    pytest: list[str | Path] = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    ok = _run([*pytest, *(_FULL if full else _SHORT)], env=env) == 0
    if tuple(int(p) for p in version.split(".")) >= (3, 12):
        ok = _run([*pytest, *_EAGER], env={**env, "AIOKAFKA_TEST_LOOP": "eager"}) == 0 and ok
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default=",".join(VERSIONS), help="comma-separated 3.X")
    parser.add_argument("--full", action="store_true", help="the full set of tests")
    args = parser.parse_args(argv)
    failed: list[str] = []
    for version in args.versions.split(","):
        interpreter = find_interpreter(version)
        if interpreter is None:
            print(f"tools.pythons: no Python {version} here; skipped", flush=True)
            continue
        print(f"tools.pythons: Python {version} at {interpreter}", flush=True)
        python = ensure_venv(version, interpreter)
        if python is None:
            failed.append(f"{version}: install failed")
        elif not check_extensions(python):
            failed.append(f"{version}: a C extension did not build")
        elif not run_tests(python, version, args.full):
            failed.append(f"{version}: tests failed")
    for line in failed:
        print(f"tools.pythons: FAILED {line}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
