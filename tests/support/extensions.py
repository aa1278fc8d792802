"""Running code and tests in a process where the optional C extensions are switched
off (``AIOKAFKA_NO_EXTENSIONS=1``), for the tests that check a C path's Python
stand-in: the module-level choice between the two is made at import, so the other
one can only be seen from a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["output_without_extensions", "run_tests_without_extensions"]

_ENV = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1")


def output_without_extensions(code: str) -> list[str]:
    """The words ``python -c code`` prints without the extensions (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=_ENV, capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def run_tests_without_extensions(path: str) -> None:
    """Run the test file ``path`` without the extensions; fail with its output unless
    it passes (and runs some test)."""
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path],
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert " passed" in tests.stdout
