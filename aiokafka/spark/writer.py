"""Batch and streaming writers of the ``aiokafka`` data source.

Every Spark task writes its rows with a producer of its own: a plain producer comes
from the Python worker's pool and goes back to it once every record is acknowledged
(closed if the task fails), a transactional one is started and closed by the task
(see :mod:`aiokafka.spark.runtime`). Rows arrive as Arrow batches with a ``value``
column and optional ``key``, ``topic``, ``partition`` and ``headers`` columns; the
``topic`` option, when set, overrides the column (as in Spark's connector).

At-least-once (the default): the task succeeds only after every record is
acknowledged (``acks=all``, idempotent producer); a task or batch Spark runs again
writes its records again.

Exactly-once (``exactlyOnce=true``, streaming only): each task writes in one Kafka
transaction whose ``transactional_id`` is ``<prefix>-<query id>-<task partition id>``
(stable across restarts of the query and attempts of the task, so a new attempt fences
the old one). The transaction also commits, to the consumer group named like the
transactional id, an offset equal to the Spark batch id: a marker that becomes visible
atomically with the records. Before writing, the task reads that group's committed
offset (``require_stable``, after ``init_transactions`` has finished any transaction
left open by an earlier attempt); if it is at or past this batch id, the batch's
records are already committed and the task writes nothing. ``docs/spark.md`` states
the guarantee and its limits.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from .commit import KafkaCommitMessage
from .options import WriteOptions

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

# The task side (pyarrow, the producer, the event loop) lives in .writing, imported by
# write() in the worker that runs a task: the planner processes that make this writer
# and commit the job only unpickle this module. Its public names stay importable here.
_TASK_SIDE = {"TaskIdentity", "transactional_id", "write_exactly_once"}


def __getattr__(name: str) -> Any:
    if name not in _TASK_SIDE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import writing

    return getattr(writing, name)


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("aiokafka")``: at-least-once, one producer per task."""

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """Write one task's rows (runs in a Python worker)."""
        from .writing import run_task

        return run_task(self._options, iterator, exactly_once=False)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("aiokafka")``: at-least-once, or exactly-once with
    ``exactlyOnce=true`` (see the module docstring)."""

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        """Write one task's rows of a micro-batch (runs in a Python worker)."""
        from .writing import run_task

        return run_task(self._options, iterator, self._options.exactly_once)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Log what the micro-batch wrote (each task already committed its records)."""
        from .runtime import freeze_long_lived

        freeze_long_lived("commit")  # a reused planner process, at every micro-batch
        written = sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))
        log.debug("micro-batch %d: %d records written", batchId, written)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo here: a failed exactly-once task aborted its own transaction
        (or the next attempt's ``init_transactions`` does); at-least-once writes stay."""
        log.warning("micro-batch %d aborted", batchId)
