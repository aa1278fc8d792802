"""The CRC-32C function ``record/util.py`` uses: the crc32c package's extension loaded
without the package's ``__init__`` (40-60 ms of importlib.metadata and argparse), or
the package when its layout is not the one expected."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Any

import crc32c
import pytest

from aiokafka.record import util


def test_the_extension_function_gives_the_package_results() -> None:
    function = util._extension_crc32c()
    assert function is not None, "crc32c 2.4+ has crc32c/_crc32c.<abi>.so"
    rng = random.Random(7)
    for size in (0, 1, 7, 8, 9, 63, 64, 65, 1000, 65536):
        data = rng.randbytes(size)
        assert function(data) == crc32c.crc32c(data)
        assert function(memoryview(bytearray(data))) == crc32c.crc32c(data)


def test_another_layout_falls_back_to_importing_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    def no_spec(name: str, package: Any = None) -> None:
        return None

    monkeypatch.setattr(importlib.util, "find_spec", no_spec)
    assert util._extension_crc32c() is None
    monkeypatch.setattr(util, "_crc32c", None)
    assert util.crc32c_function() is crc32c.crc32c
    assert util.calc_crc32c(b"123456789") == 0xE3069283


def test_first_use_does_not_import_the_package() -> None:
    """In a fresh process: checking a batch's CRC imports neither the crc32c package
    nor importlib.metadata."""
    code = (
        "import sys\n"
        "from aiokafka.record.util import calc_crc32c\n"
        "assert calc_crc32c(b'123456789') == 0xE3069283\n"
        "print('crc32c' in sys.modules, 'importlib.metadata' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.split() == ["False", "False"], out
