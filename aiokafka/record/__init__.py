"""Record batches: the v2 builder and reader, legacy v0/v1 reading, compression.

Typical use::

    builder = DefaultRecordBatchBuilder(compression_type=CODEC_LZ4, batch_size=16384)
    builder.append(0, timestamp=None, key=b"k", value=b"v", headers=[])
    data = builder.build()

    for batch in MemoryRecords(fetch_records_blob):
        for offset, timestamp, key, value, headers, size in batch.record_tuples():
            ...

No module in this package imports asyncio.
"""

from aiokafka.record.compression import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    check_codec,
    codec_from_name,
    codec_name,
)
from aiokafka.record.default_builder import (
    DefaultRecordBatchBuilder,
    DefaultRecordMetadata,
    build_control_batch,
)
from aiokafka.record.default_records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CREATE_TIME,
    LOG_APPEND_TIME,
    ControlRecord,
    DefaultRecord,
    DefaultRecordBatch,
    Header,
    RecordTuple,
)
from aiokafka.record.legacy_records import (
    NO_TIMESTAMP_TYPE,
    LegacyRecord,
    LegacyRecordBatch,
    LegacyRecordBatchBuilder,
    LegacyRecordMetadata,
)
from aiokafka.record.memory_records import MemoryRecords, RecordBatch

__all__ = [
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "CREATE_TIME",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "LOG_APPEND_TIME",
    "NO_TIMESTAMP_TYPE",
    "ControlRecord",
    "DefaultRecord",
    "DefaultRecordBatch",
    "DefaultRecordBatchBuilder",
    "DefaultRecordMetadata",
    "Header",
    "LegacyRecord",
    "LegacyRecordBatch",
    "LegacyRecordBatchBuilder",
    "LegacyRecordMetadata",
    "MemoryRecords",
    "RecordBatch",
    "RecordTuple",
    "build_control_batch",
    "check_codec",
    "codec_from_name",
    "codec_name",
]
