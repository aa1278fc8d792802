"""Another commit of ours, unpacked and built, for the ``ours-base`` client.

A change's speed is best judged against its base in the same run: the same broker, the
same minute of a shared machine, the clients taking turns (``--repeat``). Timings taken an
hour apart on this machine moved by a third with no change to the code. ``run_all.py
--base REV`` unpacks ``REV`` (``git archive``, so the working tree and its uncommitted
changes are left alone) under ``benchmark/.trees/<commit>/``, builds its C extensions in
place with the harness's interpreter, and runs the ``ours-base`` client's workers from
that tree, with it on ``PYTHONPATH`` (``clients.BASE_ENV`` names it to the client). A
tree is built once per commit and reused.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from benchmark.clients import BENCH_DIR, ROOT, ClientUnavailable

__all__ = ["TREES_DIR", "prepare_base"]

#: Where unpacked commits live (git-ignored).
TREES_DIR = BENCH_DIR / ".trees"
#: Seconds allowed for unpacking and for building the extensions.
BUILD_TIMEOUT = 600.0
_BUILT = ".bench-built"
# Builds the extensions a tree's setup.py declares, into that tree, without reading its
# pyproject.toml: the setuptools installed here may be older than the one pip's isolated
# build uses for ``pip install -e`` and refuse newer metadata (it did: project.license).
# setup() is captured rather than run, and the build runs from a scratch directory.
_BUILD = """
import os, runpy, sys, tempfile
import setuptools
from setuptools.dist import Distribution
tree = sys.argv[1]
found = {}
setuptools.setup = lambda **kw: found.update(kw)
os.chdir(tree)
runpy.run_path("setup.py")
exts = found["ext_modules"]
for ext in exts:
    ext.sources = [os.path.join(tree, src) for src in ext.sources]
    ext.optional = False
with tempfile.TemporaryDirectory() as scratch:
    os.chdir(scratch)
    dist = Distribution({"name": "aiokafka-base", "ext_modules": exts})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = tree
    cmd.build_temp = os.path.join(scratch, "tmp")
    dist.run_command("build_ext")
"""


def _run(cmd: list[str], cwd: Path, what: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, timeout=BUILD_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClientUnavailable(f"--base: {what}: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join(done.stderr.decode(errors="replace").strip().splitlines()[-5:])
        raise ClientUnavailable(f"--base: {what} failed: {tail}")
    return done.stdout


def prepare_base(rev: str, trees: Path = TREES_DIR) -> Path:
    """Unpack commit ``rev`` of this repository and build its C extensions, once.

    Returns:
        The tree (``trees/<first 12 hex digits of the commit>``).

    Raises:
        ClientUnavailable: ``rev`` names no commit, or unpacking or building failed.
    """
    commit = _run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], ROOT, f"git rev-parse {rev}"
    )
    sha = commit.decode().strip()
    tree = trees / sha[:12]
    marker = tree / _BUILT
    if marker.is_file() and marker.read_text() == sha:
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = _run(["git", "archive", "--format=tar", sha], ROOT, f"git archive {sha[:12]}")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: refuse links out of the tree
            tar.extractall(tree, filter="data")
        else:  # pragma: no cover - our own commit's archive, on an older 3.10/3.11
            tar.extractall(tree)
    # The extensions are optional: a build that silently fell back to pure Python would
    # compare our C paths with the base's Python ones, so a failed build is an error.
    _run([sys.executable, "-c", _BUILD, str(tree)], tree, "building its C extensions")
    if not list((tree / "aiokafka").rglob("*.so")):
        raise ClientUnavailable(f"--base: {sha[:12]} built no C extension")
    (tree / _BUILT).write_text(sha)
    return tree
