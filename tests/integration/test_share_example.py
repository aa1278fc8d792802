"""examples/share_work_queue.py runs as a program against the rig's broker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.kafka.rig import KafkaCluster

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(200)
def test_share_work_queue_example(kafka: KafkaCluster) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "share_work_queue.py"),
            "--bootstrap",
            kafka.bootstrap_servers,
            "--jobs",
            "60",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # 60 jobs: 59 accepted once each; multiples of 7 (0, 7, ..., 56: 9 jobs) released
    # once first; job 13 rejected.
    assert "accepted 59, released 9 (redelivered later), rejected 1" in done.stdout, done.stdout
