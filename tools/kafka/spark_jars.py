"""Spark's JVM Kafka connector from Maven Central, for comparisons with ``aiokafka.spark``.

``python -m tools.kafka.spark_jars`` (or :func:`ensure_spark_connector_jars`) copies
``spark-sql-kafka-0-10`` and what it adds to PySpark's own jars (``kafka-clients``,
``commons-pool2``, the token provider) into ``tools/kafka/spark-libs/`` (git-ignored)
once per version of ``spark-connector-pom.xml``. Used by the cross-check test and the
Spark benchmark only; the data source itself needs no JVM jar.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from .fetch import KAFKA_DIR

SPARK_POM = KAFKA_DIR / "spark-connector-pom.xml"
SPARK_LIBS = KAFKA_DIR / "spark-libs"
_MARKER = SPARK_LIBS / ".complete"


def _marker_text() -> str:
    return f"pom {hashlib.sha256(SPARK_POM.read_bytes()).hexdigest()[:16]}\n"


def ensure_spark_connector_jars(quiet: bool = False) -> list[Path]:
    """The connector's jars (fetched with Maven on first use).

    Returns:
        The jar paths, for ``spark.jars``.

    Raises:
        RuntimeError: Maven is missing or fails (its output is in the message).
    """
    if not (_MARKER.is_file() and _MARKER.read_text() == _marker_text()):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise RuntimeError("Maven (`mvn`) is needed to fetch Spark's Kafka connector")
        if SPARK_LIBS.exists():
            shutil.rmtree(SPARK_LIBS)
        SPARK_LIBS.mkdir(parents=True)
        if not quiet:
            print(f"fetching Spark's Kafka connector into {SPARK_LIBS} ...", file=sys.stderr)
        cmd = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(SPARK_POM),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={SPARK_LIBS}",
            "-DincludeScope=runtime",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not any(SPARK_LIBS.glob("spark-sql-kafka-*.jar")):
            raise RuntimeError(f"mvn failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        _MARKER.write_text(_marker_text())
    return sorted(SPARK_LIBS.glob("*.jar"))


if __name__ == "__main__":
    for jar in ensure_spark_connector_jars():
        print(jar)
