"""Kafka for PySpark on this client: the ``aiokafka`` Python data source.

Needs the ``spark`` extra (``pip install 'aiokafka[spark]'``: PySpark 4.x, pandas < 3,
pyarrow). ``import aiokafka`` never imports this package, hence never PySpark.

Example::

    from aiokafka.spark import register
    register(spark)
    df = (spark.read.format("aiokafka")
          .option("kafka.bootstrap.servers", "localhost:9092")
          .option("subscribe", "events").load())

Options, guarantees and tuning: ``docs/spark.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from .kafka_options import OptionError, parse_jaas_config
    from .planning import DataLossError
    from .source import KafkaDataSource

__all__ = ["DataLossError", "KafkaDataSource", "OptionError", "parse_jaas_config", "register"]

# Public names resolved on first use (PEP 562): a Python worker unpickling a reader
# imports this package first, and should then load the read path only, not the writer
# (nor a writer's worker the consumer): each new worker pays its imports.
_LAZY = {
    "DataLossError": "planning",
    "KafkaDataSource": "source",
    "OptionError": "kafka_options",
    "parse_jaas_config": "kafka_options",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def register(spark: SparkSession) -> None:
    """Register the data source with ``spark`` under the short name ``"aiokafka"``."""
    from .source import KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
