"""What a write task reports to the driver (:class:`KafkaCommitMessage`).

Its own module because both sides use it: the writers (:mod:`aiokafka.spark.writer`,
unpickled in PySpark's planner and commit processes) read it in ``commit()``, and the
task side (:mod:`aiokafka.spark.writing`, in the worker that runs a task) makes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.datasource import WriterCommitMessage

__all__ = ["KafkaCommitMessage"]


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one task wrote: ``records`` sent, ``skipped`` when exactly-once found the
    batch already committed by an earlier attempt."""

    partition_id: int
    records: int
    skipped: bool = False
