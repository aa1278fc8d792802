"""Make Spark's Python processes import the installed PySpark, not ``pyspark.zip``.

Spark starts every Python process of a job (the planner processes of a data source,
a streaming query's source process, the daemons that fork task workers) with a
``PYTHONPATH`` that puts ``$SPARK_HOME/python/lib/pyspark.zip``, the py4j zip and
Spark's core jar ahead of ``site-packages``. With ``pip install pyspark``,
``SPARK_HOME`` is the installed package itself, so each of these processes imports
PySpark from a zip inside the package instead of from the package: ``zipimport`` has
no bytecode for it and compiles PySpark from source in every new process (0.9-1.0 s
for ``import pyspark`` measured here, 1.5-1.7 s for a streaming source process,
against 0.1-0.2 s with the installed bytecode), and each forked task worker compiles
``pyspark.worker`` and what it imports again. The jar and the zips ahead of
``site-packages`` also make every ``importlib.metadata`` look-up (the ``crc32c``
package makes one at import) read their directories first.

:func:`preferred_path` moves those entries to the end of ``sys.path``, only when the
zip is the installed package's own (the same ``pyspark/version.py``; the py4j zip only
when the installed py4j has its version). Every module then comes from the same
release as before, as bytecode; anything else (a Spark distribution's ``SPARK_HOME``,
``--py-files``) stays where Spark put it. Two ways to apply it, both opt-in
(``docs/spark.md``, Tuning):

- ``spark.python.daemon.module=aiokafka.spark.daemon``: the task workers only (Spark
  4.3 reads that setting for them alone);
- ``python -m aiokafka.spark.pyspark_path install``: a ``.pth`` file in this
  environment's ``site-packages`` applies it at start-up to every Python process whose
  ``PYTHONPATH`` names a ``pyspark.zip`` (Spark's), and to no other (``uninstall``
  removes the file, ``status`` tells whether it is there).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import sysconfig
import zipfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["HOOK_FILE", "hook_path", "main", "preferred_path", "use_installed_pyspark"]

_PY4J_ZIP = re.compile(r"py4j-(.+)-src\.zip")

#: The ``.pth`` file ``install`` writes into ``site-packages``.
HOOK_FILE = "aiokafka-spark-pyspark-path.pth"

# One line, run by ``site`` at every interpreter start in the environment: a string
# test on PYTHONPATH (``os`` is already imported then) before importing anything.
_HOOK_LINE = (
    "import os; 'pyspark.zip' in os.environ.get('PYTHONPATH', '') and "
    "__import__('aiokafka.spark.pyspark_path', fromlist=['_']).use_installed_pyspark()\n"
)


def _same_version_file(zip_path: str, installed: str) -> bool:
    """Whether the zip's ``pyspark/version.py`` is the installed package's."""
    try:
        with zipfile.ZipFile(zip_path) as bundle, open(installed, "rb") as file:
            return bundle.read("pyspark/version.py") == file.read()
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def _bundled_entries(path: Sequence[str]) -> set[str]:
    """The entries of ``path`` that hold the installed PySpark's bundled copies."""
    entries = {os.path.normpath(p) for p in path if p}
    demote: set[str] = set()
    for entry in entries:
        if os.path.basename(entry) != "pyspark.zip":
            continue
        # pip's layout: <site>/pyspark/python/lib/pyspark.zip
        package = os.path.dirname(os.path.dirname(os.path.dirname(entry)))
        site = os.path.dirname(package)
        if (
            os.path.basename(package) != "pyspark"
            or site not in entries
            or not _same_version_file(entry, os.path.join(package, "version.py"))
        ):
            continue
        demote.add(entry)
        for other in entries:
            if not other.startswith(package + os.sep):
                continue
            py4j = _PY4J_ZIP.fullmatch(os.path.basename(other))
            if other.endswith(".jar"):
                demote.add(other)  # Spark's core jar: no Python module inside
            elif py4j and os.path.isdir(os.path.join(site, f"py4j-{py4j.group(1)}.dist-info")):
                demote.add(other)
    return demote


def preferred_path(path: Sequence[str]) -> list[str]:
    """``path`` with the installed PySpark's bundled ``pyspark.zip`` (and its py4j zip
    and core jar) moved to the end, when the installed package can be imported from a
    later entry and the zip is that same release; otherwise ``path`` unchanged."""
    demote = _bundled_entries(path)
    if not demote:
        return list(path)
    first = [p for p in path if not p or os.path.normpath(p) not in demote]
    return first + [p for p in path if p and os.path.normpath(p) in demote]


def use_installed_pyspark() -> None:
    """Apply :func:`preferred_path` to ``sys.path`` (call before PySpark is imported:
    a module already imported stays where it came from)."""
    sys.path[:] = preferred_path(sys.path)


def hook_path() -> Path:
    """Where ``install`` writes :data:`HOOK_FILE`: this environment's ``site-packages``."""
    return Path(sysconfig.get_paths()["purelib"]) / HOOK_FILE


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m aiokafka.spark.pyspark_path install|uninstall|status``."""
    parser = argparse.ArgumentParser(
        prog="python -m aiokafka.spark.pyspark_path",
        description="Have Spark's Python processes import the installed PySpark "
        "instead of compiling pyspark.zip (see docs/spark.md, Tuning).",
    )
    parser.add_argument("action", choices=("install", "uninstall", "status"))
    action = parser.parse_args(argv).action
    hook = hook_path()
    if action == "install":
        hook.write_text(_HOOK_LINE)
        print(f"installed {hook}")
    elif action == "uninstall":
        hook.unlink(missing_ok=True)
        print(f"removed {hook}")
    else:
        print(f"{hook}: {'installed' if hook.exists() else 'not installed'}")


if __name__ == "__main__":
    main()
