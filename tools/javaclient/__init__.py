"""The Apache Kafka Java client as an interop peer: compile ``Interop.java`` once, run it.

``Interop.java`` is compiled with ``javac`` against the jars the broker rig fetched into
``tools/kafka/libs`` (kafka-clients and its codec libraries) into ``tools/javaclient/build``
(ignored by git); it is recompiled only when the source or the jars change. Each call
starts one JVM for a whole batch of jobs, because JVM start-up is the slow part::

    sent = produce(bootstrap, [ProduceJob("t", "zstd", records=[JavaRecord(b"k", b"v")])])
    records = consume(bootstrap, [ConsumeJob("t", partitions=1, count=1)])

Keys, values and header values cross the process boundary base64-encoded.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.kafka.fetch import LIBS_DIR, ensure_jars

__all__ = [
    "BUILD_DIR",
    "ConsumeJob",
    "JavaClientError",
    "JavaRecord",
    "ProduceJob",
    "SentRecord",
    "compile_interop",
    "consume",
    "produce",
]

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "Interop.java"
BUILD_DIR = HERE / "build"
# Only what the client needs: a smaller class path starts faster, and leaving out the
# log4j binding keeps the client's INFO logging off stderr (slf4j prints one line instead).
_JAR_PREFIXES = (
    "kafka-clients-",
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
    "slf4j-api-",
    "jackson-",
)
# Client-side JVM flags for a short run: C1 only and the serial collector start fastest.
_JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xss1m")


class JavaClientError(RuntimeError):
    """javac/java missing, compilation failed, or the Java run failed (stderr attached)."""


@dataclass(frozen=True)
class JavaRecord:
    """One record for the Java producer; ``None`` partition/timestamp: Java chooses."""

    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    partition: int | None = None
    timestamp: int | None = None


@dataclass(frozen=True)
class ProduceJob:
    """Records for one topic, sent by one Java producer with ``compression``."""

    topic: str
    compression: str = "none"
    records: list[JavaRecord] = field(default_factory=list)
    idempotent: bool = False


@dataclass(frozen=True)
class ConsumeJob:
    """Read ``count`` records from partitions ``0..partitions-1`` of ``topic``."""

    topic: str
    partitions: int
    count: int


@dataclass(frozen=True)
class SentRecord:
    """What the Java producer's ``RecordMetadata`` reported, or what its consumer read."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None = None
    value: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp_type: int | None = None


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _classpath() -> str:
    libs = ensure_jars(quiet=True)
    jars = sorted(str(p) for p in libs.glob("*.jar") if p.name.startswith(_JAR_PREFIXES))
    if not any(Path(j).name.startswith("kafka-clients-") for j in jars):
        raise JavaClientError(f"no kafka-clients jar in {LIBS_DIR}")
    return ":".join(jars)


def compile_interop() -> Path:
    """Compile ``Interop.java`` into :data:`BUILD_DIR` unless it is up to date.

    Returns:
        The build directory (the class path entry for ``Interop``).

    Raises:
        JavaClientError: no ``javac``, or compilation failed.
    """
    javac = shutil.which("javac")
    if javac is None:
        raise JavaClientError("javac not found on PATH (a JDK 17+ is needed)")
    classpath = _classpath()
    target = BUILD_DIR / "Interop.class"
    stamp = BUILD_DIR / "classpath.txt"
    # Recompile when the source is newer or the jars changed (a new Kafka version).
    if (
        target.exists()
        and target.stat().st_mtime >= SOURCE.stat().st_mtime
        and stamp.exists()
        and stamp.read_text() == classpath
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
        raise JavaClientError(f"javac failed ({proc.returncode}):\n{proc.stderr}")
    stamp.write_text(classpath)
    return BUILD_DIR


def _run(command: str, spec: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    java = shutil.which("java")
    if java is None:
        raise JavaClientError("java not found on PATH")
    classpath = f"{compile_interop()}:{_classpath()}"
    try:
        proc = subprocess.run(
            [java, *_JVM_FLAGS, "-cp", classpath, "Interop", command],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise JavaClientError(
            f"Java {command} did not finish in {timeout}s:\n{exc.stderr!r}"
        ) from exc
    if proc.returncode != 0:
        raise JavaClientError(f"Java {command} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def produce(bootstrap: str, jobs: list[ProduceJob], timeout: float = 120.0) -> list[SentRecord]:
    """Send every job's records with the Java producer (one producer per job, one JVM).

    Returns:
        The metadata of every record, in the order of the jobs and their records.

    Raises:
        JavaClientError: the JVM failed (a send error fails the whole run).
    """
    spec = {
        "bootstrap": bootstrap,
        "jobs": [
            {
                "topic": job.topic,
                "compression": job.compression,
                "idempotent": job.idempotent,
                "records": [
                    {
                        "partition": r.partition,
                        "timestamp": r.timestamp,
                        "key": _b64(r.key),
                        "value": _b64(r.value),
                        "headers": [[k, _b64(v)] for k, v in r.headers],
                    }
                    for r in job.records
                ],
            }
            for job in jobs
        ],
    }
    return [
        SentRecord(d["topic"], d["partition"], d["offset"], d["timestamp"])
        for d in _run("produce", spec, timeout)
    ]


def consume(
    bootstrap: str, jobs: list[ConsumeJob], timeout_ms: int = 30000, timeout: float = 120.0
) -> list[SentRecord]:
    """Read every job's records from the beginning with the Java consumer (one JVM).

    Stops once each topic yielded its ``count`` records or after ``timeout_ms``; the
    caller compares what it got with what it expected.
    """
    spec = {
        "bootstrap": bootstrap,
        "timeout_ms": timeout_ms,
        "jobs": [{"topic": j.topic, "partitions": j.partitions, "count": j.count} for j in jobs],
    }
    return [
        SentRecord(
            topic=d["topic"],
            partition=d["partition"],
            offset=d["offset"],
            timestamp=d["timestamp"],
            key=_unb64(d["key"]),
            value=_unb64(d["value"]),
            headers=[(k, _unb64(v)) for k, v in d["headers"]],
            timestamp_type=d["timestamp_type"],
        )
        for d in _run("consume", spec, timeout)
    ]
