"""The Confluent wire format: what schema-aware serializers put in a record's bytes.

A value is framed as::

    byte 0      magic byte, always 0
    bytes 1-4   schema id, a big-endian 32-bit integer assigned by the schema registry
    bytes 5-    the payload, encoded with that schema (Avro binary, for Avro)

Every client that speaks to a Confluent-compatible schema registry (the Java and
librdkafka serializers, Kafka Connect converters, ksqlDB) reads and writes this frame,
so records written here are read there and the other way round. Pure functions on
bytes, no I/O.
"""

from __future__ import annotations

import struct

from aiokafka.serialization.errors import WireFormatError

__all__ = ["HEADER_SIZE", "MAGIC_BYTE", "frame", "unframe"]

MAGIC_BYTE = 0
_HEADER = struct.Struct(">BI")
HEADER_SIZE = _HEADER.size  # 5
# The registry's ids are Java ints: positive and at most 2**31 - 1.
_MAX_ID = 2**31 - 1


def frame(schema_id: int, payload: bytes) -> bytes:
    """Prefix ``payload`` with the magic byte and ``schema_id``.

    Raises:
        ValueError: if ``schema_id`` is not a registry id (0 to 2**31 - 1).
    """
    if not 0 <= schema_id <= _MAX_ID:
        raise ValueError(f"schema_id must be between 0 and {_MAX_ID}, got {schema_id}")
    return _HEADER.pack(MAGIC_BYTE, schema_id) + payload


def unframe(data: bytes | bytearray | memoryview) -> tuple[int, memoryview]:
    """Split framed bytes into the schema id and the payload (a view, not a copy).

    Raises:
        WireFormatError: if ``data`` is shorter than the 5-byte header or does not
            start with the magic byte 0.
    """
    view = memoryview(data)
    if len(view) < HEADER_SIZE:
        raise WireFormatError(
            f"{len(view)} bytes, shorter than the {HEADER_SIZE}-byte header "
            "(magic byte 0 and a 4-byte schema id)"
        )
    magic, schema_id = _HEADER.unpack_from(view)
    if magic != MAGIC_BYTE:
        raise WireFormatError(
            f"first byte is {magic:#04x}, not the magic byte {MAGIC_BYTE:#04x} "
            f"(bytes start {bytes(view[:8])!r})"
        )
    return schema_id, view[HEADER_SIZE:]
