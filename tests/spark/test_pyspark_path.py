"""Where Spark's Python processes import PySpark from: aiokafka.spark.pyspark_path
(the path order and the .pth hook) and the aiokafka.spark.daemon daemon module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from aiokafka.spark import pyspark_path
from aiokafka.spark.pyspark_path import preferred_path
from tools.kafka.rig import KafkaCluster

from .helpers import consume_all

VERSION = '__version__: str = "4.3.0"\n'


def _pip_layout(root: Path, zip_version: str = VERSION, py4j: str = "0.10.9.9") -> dict[str, str]:
    """A fake ``pip install pyspark``: the package, its bundled zips and core jar."""
    site = root / "site-packages"
    package = site / "pyspark"
    lib = package / "python" / "lib"
    lib.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "version.py").write_text(VERSION)
    with zipfile.ZipFile(lib / "pyspark.zip", "w") as bundle:
        bundle.writestr("pyspark/version.py", zip_version)
    with zipfile.ZipFile(lib / "py4j-0.10.9.9-src.zip", "w") as bundle:
        bundle.writestr("py4j/__init__.py", "")
    (package / "jars").mkdir()
    (package / "jars" / "spark-core_2.13-4.3.0.jar").write_bytes(b"")
    (site / f"py4j-{py4j}.dist-info").mkdir()
    return {
        "site": str(site),
        "zip": str(lib / "pyspark.zip"),
        "py4j": str(lib / "py4j-0.10.9.9-src.zip"),
        "jar": str(package / "jars" / "spark-core_2.13-4.3.0.jar"),
    }


def test_the_bundled_copies_go_after_site_packages(tmp_path: Path) -> None:
    p = _pip_layout(tmp_path)
    path = ["", p["zip"], p["py4j"], p["jar"], "/extra.zip", "/usr/lib/python3.11", p["site"]]
    assert preferred_path(path) == [
        "",
        "/extra.zip",
        "/usr/lib/python3.11",
        p["site"],
        p["zip"],
        p["py4j"],
        p["jar"],
    ]
    # Spark may list the same entries twice: every copy moves.
    twice = [p["zip"], p["py4j"], p["zip"], p["site"]]
    assert preferred_path(twice) == [p["site"], p["zip"], p["py4j"], p["zip"]]


def test_a_zip_of_another_release_stays_first(tmp_path: Path) -> None:
    p = _pip_layout(tmp_path, zip_version='__version__: str = "4.2.0"\n')
    path = [p["zip"], p["py4j"], p["jar"], p["site"]]
    assert preferred_path(path) == path


def test_the_py4j_zip_stays_when_the_installed_py4j_differs(tmp_path: Path) -> None:
    p = _pip_layout(tmp_path, py4j="0.10.9.7")
    path = [p["zip"], p["py4j"], p["jar"], p["site"]]
    assert preferred_path(path) == [p["py4j"], p["site"], p["zip"], p["jar"]]


def test_nothing_moves_without_the_installed_package_on_the_path(tmp_path: Path) -> None:
    p = _pip_layout(tmp_path)
    path = [p["zip"], p["py4j"], "/usr/lib/python3.11"]
    assert preferred_path(path) == path


def test_a_spark_distribution_is_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "spark-4.3.0-bin"
    lib = home / "python" / "lib"
    lib.mkdir(parents=True)
    with zipfile.ZipFile(lib / "pyspark.zip", "w") as bundle:
        bundle.writestr("pyspark/version.py", VERSION)
    path = [str(lib / "pyspark.zip"), str(tmp_path)]
    assert preferred_path(path) == path


def _installed_zip() -> Path:
    import pyspark

    bundled = Path(pyspark.__file__).parent / "python" / "lib" / "pyspark.zip"
    if not bundled.exists():
        pytest.skip("this PySpark has no bundled pyspark.zip")
    return bundled


def _run(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,  # the session test starts a JVM: minutes on a loaded machine
    )
    return done.stdout.strip()


def test_the_hook_line_makes_pyspark_come_from_the_package() -> None:
    bundled = _installed_zip()
    line = pyspark_path._HOOK_LINE.strip()
    show = "import pyspark; print(pyspark.__file__)"
    if not pyspark_path.hook_path().exists():  # installed, it applies to every run
        assert ".zip" in _run(show, PYTHONPATH=str(bundled))
    assert ".zip" not in _run(f"{line}\n{show}", PYTHONPATH=str(bundled))
    # Without Spark's PYTHONPATH the line imports nothing.
    assert _run(f"{line}\nimport sys; print('aiokafka' in sys.modules)", PYTHONPATH="") == "False"


def test_install_status_uninstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = tmp_path / pyspark_path.HOOK_FILE
    monkeypatch.setattr(pyspark_path, "hook_path", lambda: hook)
    pyspark_path.main(["install"])
    assert hook.read_text() == pyspark_path._HOOK_LINE
    pyspark_path.main(["status"])
    pyspark_path.main(["uninstall"])
    assert not hook.exists()
    pyspark_path.main(["uninstall"])  # nothing to remove: no error
    out = capsys.readouterr().out
    assert "installed" in out and f"{hook}: installed" in out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_preload_starts_no_thread_and_skips_pyarrow() -> None:
    # Spark sets OMP_NUM_THREADS for its Python workers (spark.task.cpus).
    code = (
        "import os, sys; from aiokafka.spark.daemon import PRELOAD, preload; preload(); "
        "print(len(os.listdir('/proc/self/task')), 'pyarrow' in sys.modules, "
        "all(name in sys.modules for name in PRELOAD))"
    )
    assert _run(code, OMP_NUM_THREADS="1") == "1 False True"


_SESSION_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    from aiokafka.spark import register

    bootstrap, topic = sys.argv[1:3]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.python.daemon.module", "aiokafka.spark.daemon")
        .getOrCreate()
    )
    register(spark)

    def where(_):
        import pyspark
        return (pyspark.__file__, "aiokafka.producer.producer" in sys.modules)

    workers = spark.sparkContext.parallelize(range(2), 2).map(where).collect()
    df = spark.range(500, numPartitions=2).selectExpr("cast(id as string) as value")
    (df.write.format("aiokafka").mode("append")
        .option("kafka.bootstrap.servers", bootstrap).option("topic", topic).save())
    read = (spark.read.format("aiokafka").option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic).load().count())
    spark.stop()
    print("RESULT " + json.dumps({"workers": workers, "read": read}))
    """
)


def test_a_session_with_the_daemon_module_writes_and_reads(
    kafka: KafkaCluster, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    """A new SparkSession (its own JVM: the setting is read at start) whose task
    workers run aiokafka.spark.daemon: they import the installed PySpark and start
    with the producer loaded; the data source writes and reads as with PySpark's."""
    _installed_zip()
    topic = new_topic(partitions=2)
    script = tmp_path / "session.py"
    script.write_text(_SESSION_SCRIPT)
    out = _run(
        f"import runpy, sys; sys.argv = ['s', {kafka.bootstrap_servers!r}, {topic!r}]; "
        f"runpy.run_path({str(script)!r}, run_name='__main__')",
        PYSPARK_PYTHON=sys.executable,
        SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
    )
    import json

    result = json.loads(out.splitlines()[-1].removeprefix("RESULT "))
    assert result["read"] == 500
    for file, preloaded in result["workers"]:
        assert ".zip" not in file and preloaded
    assert sorted(v for _, _, v in consume_all(kafka.bootstrap_servers, topic)) == sorted(
        str(i).encode() for i in range(500)
    )
