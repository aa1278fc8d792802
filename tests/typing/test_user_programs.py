"""User programs type-check under ``mypy --strict``.

Each file in ``programs/`` is code a user would write (producer with and without
serializers, consumer with and without deserializers, ``async for``, admin, a
transactional loop); ``assert_type`` lines pin the types the clients' generics must
give (``bytes`` by default, the deserializers' and serializers' types otherwise).
``wrong_types.py`` holds mistakes mypy must report, proving the check can fail.

The package is imported as an installed one would be (``--follow-imports=silent``):
the programs are checked against its types, but its own modules are the package
mypy run's business (``make lint``), not this test's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).with_name("programs")
ROOT = Path(__file__).resolve().parents[2]
FAILING = "wrong_types.py"


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """One mypy --strict run over every program: its error lines by file name."""
    files = sorted(PROGRAMS.glob("*.py"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path_factory.mktemp("mypy-cache")),
            *(str(f.relative_to(ROOT)) for f in files),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    by_file: dict[str, list[str]] = {f.name: [] for f in files}
    for line in done.stdout.splitlines():
        name = Path(line.split(":", 1)[0]).name
        if name in by_file:
            by_file[name].append(line)
        else:
            assert line.startswith(("Found ", "Success")), line
    return by_file


@pytest.mark.parametrize(
    "program",
    sorted(p.name for p in PROGRAMS.glob("*.py") if p.name != FAILING),
)
def test_program_is_clean_under_mypy_strict(
    mypy_output: dict[str, list[str]], program: str
) -> None:
    assert mypy_output[program] == []


def test_the_check_can_fail(mypy_output: dict[str, list[str]]) -> None:
    errors = "\n".join(mypy_output[FAILING])
    # A str where the producer (no value_serializer) takes bytes.
    assert ':10: error: Argument 2 to "send" of "AIOKafkaProducer" has incompatible type' in errors
    assert 'expected "bytes | None"' in errors
    # An unknown option: no such parameter.
    assert ':11: error: Argument "lingerms" to "AIOKafkaConsumer"' in errors
    # A record's attributes keep their types.
    assert ':14: error: Incompatible types in assignment (expression has type "int"' in errors
    assert len(mypy_output[FAILING]) == 3, errors
