"""The ``aiokafka`` PySpark data source: schema, and which reader or writer to use."""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from .kafka_options import OptionError
from .options import parse_read_options, parse_write_options

# The reader and writer modules are imported by the method that makes one: a planner
# process or worker unpickling this source for a read never imports the write path
# (pyarrow.compute, the producer side), nor one for a write the consumer side.

HEADERS_TYPE = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def read_schema(include_headers: bool) -> StructType:
    """The schema of what the source reads (that of Spark's Kafka source)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


_WRITE_COLUMNS: dict[str, tuple[type[DataType], ...]] = {
    "value": (BinaryType, StringType),
    "key": (BinaryType, StringType),
    "topic": (StringType,),
    "partition": (IntegerType,),
}


def check_write_schema(schema: StructType, topic_option: str | None) -> None:
    """Check the columns to write (other columns are ignored, as in Spark's connector).

    Raises:
        OptionError: no ``value`` column, no topic at all, or a column of a wrong type.
    """
    by_name = {f.name.lower(): f for f in schema.fields}
    if "value" not in by_name:
        raise OptionError("the data to write needs a 'value' column (binary or string)")
    if topic_option is None and "topic" not in by_name:
        raise OptionError("set the 'topic' option or provide a 'topic' column")
    for name, types in _WRITE_COLUMNS.items():
        column = by_name.get(name)
        if column is not None and not isinstance(column.dataType, types):
            raise OptionError(
                f"column {name!r} must be of type {' or '.join(t.typeName() for t in types)}, "
                f"got {column.dataType.simpleString()}"
            )
    headers = by_name.get("headers")
    if headers is not None and headers.dataType.simpleString() not in (
        "array<struct<key:string,value:binary>>",
        "array<struct<key:string,value:string>>",
    ):
        raise OptionError(
            "column 'headers' must be array<struct<key:string,value:binary>>, got "
            f"{headers.dataType.simpleString()}"
        )


class KafkaDataSource(DataSource):
    """Kafka as a PySpark data source (short name ``aiokafka``), batch and streaming,
    read and write, on this client. Options: ``docs/spark.md``."""

    @classmethod
    def name(cls) -> str:
        """The short name used in ``format("aiokafka")``."""
        return "aiokafka"

    def schema(self) -> StructType:
        """Fixed: ``key``, ``value``, ``topic``, ``partition``, ``offset``,
        ``timestamp``, ``timestampType`` (+ ``headers`` with ``includeHeaders``)."""
        value = {k.lower(): v for k, v in self.options.items()}.get("includeheaders", "false")
        return read_schema(value.strip().lower() == "true")

    def reader(self, schema: StructType) -> DataSourceReader:
        """A batch reader; options are validated here, at planning.

        Raises:
            OptionError: an unknown or malformed option (named in the message).
        """
        from .reader import KafkaBatchReader

        return KafkaBatchReader(parse_read_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A stream reader; options are validated here, at planning.

        Raises:
            OptionError: an unknown or malformed option (named in the message).
        """
        from .reader import KafkaStreamReader

        return KafkaStreamReader(parse_read_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """A batch writer (at-least-once).

        Raises:
            OptionError: an unknown or malformed option, or unusable columns.
        """
        from .writer import KafkaBatchWriter

        options = parse_write_options(self.options)
        if options.exactly_once:
            raise OptionError("option 'exactlyOnce' applies to streaming writes only")
        check_write_schema(schema, options.topic)
        return KafkaBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """A streaming writer (at-least-once, or exactly-once with ``exactlyOnce``).

        Raises:
            OptionError: an unknown or malformed option, or unusable columns.
        """
        from .runtime import freeze_long_lived
        from .writer import KafkaStreamWriter

        # PySpark asks a reused planner process for the writer at every micro-batch.
        freeze_long_lived("plan-write")
        options = parse_write_options(self.options)
        check_write_schema(schema, options.topic)
        return KafkaStreamWriter(options)
