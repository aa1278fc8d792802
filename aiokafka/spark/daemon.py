"""A PySpark daemon module for the task workers: the installed PySpark, the client
loaded before the fork.

Opt in with ``spark.python.daemon.module=aiokafka.spark.daemon`` (set when the
session is built; ``docs/spark.md``, Tuning). Spark starts the daemon that forks its
task workers as ``python -m <daemon module> pyspark.worker``; :func:`main`:

- imports PySpark from the installed package instead of ``pyspark.zip``
  (:func:`aiokafka.spark.pyspark_path.preferred_path`: no compiling PySpark from
  source in the daemon, nor ``pyspark.worker`` and what it imports in each worker);
- imports :data:`PRELOAD` before the daemon forks any worker, so that each worker
  starts with the producer and the consumer loaded (shared, copy-on-write) instead of
  importing them, and freezes what the daemon holds (``gc.freeze``), so that the
  collection PySpark runs after each task skips it;
- then runs PySpark's own daemon (``pyspark.daemon.manager``), unchanged.

Spark 4.3 reads ``spark.python.daemon.module`` for the task workers only: the planner
processes of a data source keep ``pyspark.daemon``, and a streaming query's source
process has no daemon (``python -m aiokafka.spark.pyspark_path install`` covers them).
"""

from __future__ import annotations

import gc
import importlib
import sys

from .pyspark_path import use_installed_pyspark

__all__ = ["PRELOAD", "TASK_WORKER_MODULE", "main", "preload"]

#: Imported by the task workers' daemon before it forks them: what a task's producer
#: or consumer imports when it is made and started (measured: the modules a cold
#: worker imported after the fork, each the root of its own imports; 0.2-0.5 s per
#: worker on a loaded machine), the ``crc32c`` package (whose import reads installed
#: package metadata) and the data source's planner-side modules. Only modules that
#: start no thread when imported (a thread does not survive the fork): not pyarrow,
#: which does, hence not the task modules (``reading``, ``writing``), which import it.
#: A name that no longer imports is skipped (tests/spark/test_pyspark_path.py checks
#: that every one does).
PRELOAD = (
    "crc32c",
    "encodings.idna",
    "aiokafka.cluster.client",
    "aiokafka.telemetry",
    "aiokafka.producer.producer",
    "aiokafka.producer.config",
    "aiokafka.producer.accumulator",
    "aiokafka.producer.sender",
    "aiokafka.consumer.consumer",
    "aiokafka.consumer.config",
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.commits",
    "aiokafka.consumer.no_group",
    "aiokafka.protocol._gen.header",
    "aiokafka.protocol._gen.metadata",
    "aiokafka.protocol._gen.get_telemetry_subscriptions",
    "aiokafka.protocol._gen.init_producer_id",
    "aiokafka.protocol._gen.produce",
    "aiokafka.protocol._gen.fetch",
    "aiokafka.spark.source",
    "aiokafka.spark.reader",
    "aiokafka.spark.writer",
    "aiokafka.spark.runtime",
)

#: The worker module Spark passes to the daemon of its task workers.
TASK_WORKER_MODULE = "pyspark.worker"


def preload() -> None:
    """Import :data:`PRELOAD` (each one that can be imported), then freeze what this
    process holds (``gc.freeze``: the forked workers inherit it frozen)."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            continue  # the worker that needs it reports it
    gc.freeze()


def main() -> None:
    """Run PySpark's daemon with the installed PySpark, after :func:`preload` in the
    daemon of the task workers."""
    use_installed_pyspark()
    if sys.argv[1:2] in ([], [TASK_WORKER_MODULE]):
        preload()
    from pyspark import daemon

    daemon.manager()


if __name__ == "__main__":
    main()
