"""Record batches: the v2 builder and reader, legacy v0/v1 reading, compression.

Typical use::

    builder = DefaultRecordBatchBuilder(compression_type=CODEC_LZ4, batch_size=16384)
    builder.append(0, timestamp=None, key=b"k", value=b"v", headers=[])
    data = builder.build()

    for batch in MemoryRecords(fetch_records_blob):
        for offset, timestamp, key, value, headers, size in batch.record_tuples():
            ...

No module in this package imports asyncio.

The names are imported on first use (PEP 562), so that a module needing one
codec helper or the v2 builder does not also load the legacy v0/v1 format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports

if TYPE_CHECKING:
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
    from aiokafka.record.v2_layout import (
        CONTROL_ABORT,
        CONTROL_COMMIT,
        CREATE_TIME,
        LOG_APPEND_TIME,
    )

# Public name -> submodule that defines it.
_LAZY = {
    "CODEC_GZIP": "compression",
    "CODEC_LZ4": "compression",
    "CODEC_NONE": "compression",
    "CODEC_SNAPPY": "compression",
    "CODEC_ZSTD": "compression",
    "CONTROL_ABORT": "v2_layout",
    "CONTROL_COMMIT": "v2_layout",
    "CREATE_TIME": "v2_layout",
    "ControlRecord": "default_records",
    "DEFAULT_MAX_DECOMPRESSED_SIZE": "compression",
    "DefaultRecord": "default_records",
    "DefaultRecordBatch": "default_records",
    "DefaultRecordBatchBuilder": "default_builder",
    "DefaultRecordMetadata": "default_builder",
    "Header": "default_records",
    "LOG_APPEND_TIME": "v2_layout",
    "LegacyRecord": "legacy_records",
    "LegacyRecordBatch": "legacy_records",
    "LegacyRecordBatchBuilder": "legacy_records",
    "LegacyRecordMetadata": "legacy_records",
    "MemoryRecords": "memory_records",
    "NO_TIMESTAMP_TYPE": "legacy_records",
    "RecordBatch": "memory_records",
    "RecordTuple": "default_records",
    "build_control_batch": "default_builder",
    "check_codec": "compression",
    "codec_from_name": "compression",
    "codec_name": "compression",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
