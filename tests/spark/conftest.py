"""A local SparkSession (``local[2]``) for the ``aiokafka`` data source tests.

One session for the whole test session: starting the JVM costs seconds. Small on
purpose (the machine has 2 shared cores): shuffle partitions 2, UI off. Skipped when
PySpark (the ``spark`` extra) or Java is missing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed")

if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Java is needed for PySpark", allow_module_level=True)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A SparkSession with the ``aiokafka`` data source registered."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Workers must run this interpreter (the one with aiokafka and pyarrow).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from aiokafka.spark import register
    from tools.kafka.spark_jars import ensure_spark_connector_jars

    # Spark's JVM connector too, for the cross-check; without Maven it is skipped.
    try:
        jars = ",".join(str(p) for p in ensure_spark_connector_jars(quiet=True))
    except RuntimeError:
        jars = ""

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.jars", jars)
        .appName("aiokafka-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
