"""The examples run as users run them: as programs, against a real broker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.kafka.rig import KafkaCluster

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(200)


def run_example(name: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_transactional_consume_process_produce_example(kafka: KafkaCluster) -> None:
    """The program processes its 1,000 input records in transactions and finds each
    output exactly once for read_committed readers (it uses fixed topic names, which
    no other test uses)."""
    out = run_example(
        "transactional_consume_process_produce.py", "--bootstrap", kafka.bootstrap_servers
    )
    assert "wrote 1000 input records" in out
    assert "committed a transaction" in out
    match = re.search(r"eos-output holds (\d+) committed records", out)
    assert match is not None, out
    assert int(match.group(1)) == 1000
