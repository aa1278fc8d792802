"""The magic v2 record batch layout, shared by the builder and the reader, and the
log header that starts a batch of every magic.

Byte offsets and the header struct of a batch, its attribute bits, the special
values of its fields and the control records' key and value, both ways (see
:mod:`aiokafka.record.default_records` for the whole layout).
Kept apart so that the producer's builder (:mod:`aiokafka.record.default_builder`) does
not load the reader. No asyncio.
"""

from __future__ import annotations

import struct
from typing import Final

__all__ = [
    "ATTRIBUTES_OFFSET",
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "CONTROL_KEY_STRUCT",
    "CONTROL_MASK",
    "CONTROL_VALUE_STRUCT",
    "CRC_OFFSET",
    "CREATE_TIME",
    "DELETE_HORIZON_MASK",
    "HEADER_SIZE",
    "HEADER_STRUCT",
    "LOG_APPEND_TIME",
    "LOG_HEADER_STRUCT",
    "LOG_OVERHEAD",
    "MAGIC_OFFSET",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_MASK",
    "check_producer_state",
    "marker_key_value",
    "parse_control_key",
    "parse_marker_epoch",
]

# Every magic's batch (v0/v1: message set entry) starts with offset int64 | length
# int32; the length counts what follows it. The magic byte is at the same offset in all.
LOG_HEADER_STRUCT: Final = struct.Struct(">qi")
LOG_OVERHEAD: Final = LOG_HEADER_STRUCT.size  # 12
MAGIC_OFFSET: Final = 16

HEADER_STRUCT: Final = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE: Final = HEADER_STRUCT.size  # 61
CRC_OFFSET: Final = 17
ATTRIBUTES_OFFSET: Final = 21

TIMESTAMP_TYPE_MASK: Final = 0x08
TRANSACTIONAL_MASK: Final = 0x10
CONTROL_MASK: Final = 0x20
DELETE_HORIZON_MASK: Final = 0x40

CREATE_TIME: Final = 0
LOG_APPEND_TIME: Final = 1

NO_PRODUCER_ID: Final = -1
NO_SEQUENCE: Final = -1

# Control record types (ControlRecordType in Kafka).
CONTROL_ABORT: Final = 0
CONTROL_COMMIT: Final = 1
# A control record's key: version int16 | type int16; a COMMIT/ABORT marker's value:
# version int16 | coordinator_epoch int32.
CONTROL_KEY_STRUCT: Final = struct.Struct(">hh")
CONTROL_VALUE_STRUCT: Final = struct.Struct(">hi")


def check_producer_state(producer_id: int, producer_epoch: int, base_sequence: int) -> None:
    """Refuse a producer id, epoch or base sequence that does not fit the header's
    int64 / int16 / int32 fields: a named ValueError, not a struct.error at build()."""
    if not -(1 << 63) <= producer_id < (1 << 63):
        raise ValueError(f"producer_id must fit in int64, got {producer_id}")
    if not -(1 << 15) <= producer_epoch < (1 << 15):
        raise ValueError(f"producer_epoch must fit in int16, got {producer_epoch}")
    if not -(1 << 31) <= base_sequence < (1 << 31):
        raise ValueError(f"base_sequence must fit in int32, got {base_sequence}")


def marker_key_value(control_type: int, coordinator_epoch: int) -> tuple[bytes, bytes]:
    """The key and value of a transaction marker (COMMIT/ABORT) record, version 0."""
    return CONTROL_KEY_STRUCT.pack(0, control_type), CONTROL_VALUE_STRUCT.pack(0, coordinator_epoch)


def parse_control_key(key: bytes | None) -> tuple[int, int] | None:
    """``(version, type)`` from a control record's key, ``None`` if the key is missing
    or too short to hold them (each caller decides whether that is an error)."""
    if key is None or len(key) < CONTROL_KEY_STRUCT.size:
        return None
    version, type_ = CONTROL_KEY_STRUCT.unpack_from(key)
    return int(version), int(type_)


def parse_marker_epoch(value: bytes | None) -> int | None:
    """The coordinator epoch from a transaction marker's value, ``None`` if the value is
    missing or too short to hold it (each caller decides whether that is an error)."""
    if value is None or len(value) < CONTROL_VALUE_STRUCT.size:
        return None
    return int(CONTROL_VALUE_STRUCT.unpack_from(value)[1])
