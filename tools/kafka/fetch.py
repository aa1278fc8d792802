"""Fetch the pinned Apache Kafka jars from Maven Central into ``tools/kafka/libs/`` once."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

KAFKA_DIR = Path(__file__).resolve().parent
POM = KAFKA_DIR / "pom.xml"
LIBS_DIR = KAFKA_DIR / "libs"
MARKER = LIBS_DIR / ".complete"


def pinned_version() -> str:
    """The Kafka version pinned in ``pom.xml``."""
    match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", POM.read_text())
    if match is None:
        raise RuntimeError(f"no <kafka.version> in {POM}")
    return match.group(1).strip()


def _marker_text() -> str:
    # The pom digest catches any edit (log4j bump, added module), not just a version change.
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:16]
    return f"kafka {pinned_version()} pom {digest}\n"


def jars_present() -> bool:
    """True when ``libs/`` holds a complete copy for the current ``pom.xml``."""
    return MARKER.is_file() and MARKER.read_text() == _marker_text()


def ensure_jars(quiet: bool = False) -> Path:
    """Run Maven to copy the broker's runtime jars into ``libs/`` unless already done.

    Args:
        quiet: Do not print progress.

    Returns:
        The ``libs`` directory.

    Raises:
        RuntimeError: if Maven is missing or fails (its output is in the message).
    """
    if jars_present():
        return LIBS_DIR
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("Maven (`mvn`) is needed to fetch the Kafka jars (apt install maven)")
    if not quiet:
        print(f"fetching Apache Kafka {pinned_version()} jars into {LIBS_DIR} ...", file=sys.stderr)
    # Start from an empty directory so jars of a previous pin cannot linger on the classpath.
    if LIBS_DIR.exists():
        shutil.rmtree(LIBS_DIR)
    LIBS_DIR.mkdir(parents=True)
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(POM),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={LIBS_DIR}",
        "-DincludeScope=runtime",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not any(LIBS_DIR.glob("kafka_2.13-*.jar")):
        raise RuntimeError(f"mvn failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    MARKER.write_text(_marker_text())
    if not quiet:
        print(f"{len(list(LIBS_DIR.glob('*.jar')))} jars in {LIBS_DIR}", file=sys.stderr)
    return LIBS_DIR
