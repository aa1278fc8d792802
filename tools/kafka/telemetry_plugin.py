"""The broker-side client-telemetry plugin for the KIP-714 tests, compiled on demand.

``telemetry-plugin/src/aiokafka/test/FileTelemetryExporter.java`` is a metrics reporter
implementing Kafka's ``ClientTelemetryExporterProvider``: a broker offers
GetTelemetrySubscriptions/PushTelemetry only with such a reporter, and this one writes
every pushed payload to a file (``tests/integration/test_telemetry.py`` reads them).
``javac`` compiles it against the rig's jars (``tools/kafka/libs``) into
``telemetry-plugin/build/``, which :func:`broker_config` puts on a broker's class path
(``KafkaCluster(classpath=...)``). ``make telemetry-plugin`` (part of ``make test``) and
the test fixture both call :func:`build`; it recompiles only when the source or the jars
changed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .fetch import LIBS_DIR, ensure_jars

__all__ = ["BUILD_DIR", "CLASS_NAME", "DIR_CONFIG", "PluginBuildError", "broker_config", "build"]

PLUGIN_DIR = Path(__file__).resolve().parent / "telemetry-plugin"
SOURCE = PLUGIN_DIR / "src" / "aiokafka" / "test" / "FileTelemetryExporter.java"
BUILD_DIR = PLUGIN_DIR / "build"
#: The reporter's class, for ``metric.reporters``.
CLASS_NAME = "aiokafka.test.FileTelemetryExporter"
#: The broker setting naming the directory payloads are written to.
DIR_CONFIG = "aiokafka.telemetry.dir"


class PluginBuildError(RuntimeError):
    """No ``javac``, or compiling failed (its output is in the message)."""


def build() -> Path:
    """Compile the plugin into :data:`BUILD_DIR` unless it is up to date.

    Returns:
        The class path entry holding the plugin.

    Raises:
        PluginBuildError: no ``javac`` or a compile error.
        RuntimeError: the Kafka jars could not be fetched.
    """
    javac = shutil.which("javac")
    if javac is None:
        raise PluginBuildError("javac not found on PATH (a JDK 17+ is needed)")
    ensure_jars(quiet=True)
    classpath = str(LIBS_DIR / "*")
    target = BUILD_DIR / "aiokafka" / "test" / "FileTelemetryExporter.class"
    stamp = BUILD_DIR / "jars.txt"
    jars = "\n".join(sorted(p.name for p in LIBS_DIR.glob("*.jar")))
    if (
        target.exists()
        and target.stat().st_mtime >= SOURCE.stat().st_mtime
        and stamp.exists()
        and stamp.read_text() == jars
    ):
        return BUILD_DIR
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [javac, "-nowarn", "-d", str(BUILD_DIR), "-cp", classpath, str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if proc.returncode != 0:
        raise PluginBuildError(f"javac failed ({proc.returncode}):\n{proc.stderr}")
    stamp.write_text(jars)
    return BUILD_DIR


def broker_config(payload_dir: Path) -> dict[str, str]:
    """``server.properties`` entries enabling the plugin, writing to ``payload_dir``."""
    return {"metric.reporters": CLASS_NAME, DIR_CONFIG: str(payload_dir)}
