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

from pyspark.sql import SparkSession

from .kafka_options import OptionError, parse_jaas_config
from .planning import DataLossError
from .source import KafkaDataSource

__all__ = ["DataLossError", "KafkaDataSource", "OptionError", "parse_jaas_config", "register"]


def register(spark: SparkSession) -> None:
    """Register the data source with ``spark`` under the short name ``"aiokafka"``."""
    spark.dataSource.register(KafkaDataSource)
