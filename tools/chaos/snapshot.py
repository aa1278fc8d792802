"""Run the workers on a committed version of ``aiokafka/`` rather than the working tree.

Several people may edit the working tree while a long chaos run goes on; a run recorded
in ``benchmark/results/`` should name the code it tested. :func:`export` writes
``aiokafka/`` as of a commit to a directory that the workers get first on ``PYTHONPATH``.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, timeout=60)


def export(rev: str, dest: Path) -> str:
    """Write ``aiokafka/`` at ``rev`` under ``dest``; return the full commit id.

    The C extensions built in the working tree are copied along when their source is the
    same at ``rev`` (otherwise the exported package runs its pure-Python paths).

    Raises:
        RuntimeError: if ``rev`` names no commit or the export fails.
    """
    parsed = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    if parsed.returncode != 0:
        raise RuntimeError(f"not a commit: {rev!r}: {parsed.stderr.decode().strip()}")
    commit = parsed.stdout.decode().strip()
    archive = _git("archive", commit, "aiokafka")
    if archive.returncode != 0:
        raise RuntimeError(f"git archive {commit} failed: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    for built in (REPO_ROOT / "aiokafka").rglob("*.so"):
        source = built.with_name(built.name.split(".")[0] + ".c").relative_to(REPO_ROOT)
        if _git("diff", "--quiet", commit, "--", str(source)).returncode == 0:
            shutil.copy2(built, dest / built.relative_to(REPO_ROOT))
    return commit
