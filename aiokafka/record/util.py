"""Varint helpers and checksums shared by the record batch readers and builders.

Kafka's record format (magic v2) uses Protobuf-style zigzag varints for every
per-record length and delta. The hot loops in :mod:`aiokafka.record.default_records`
inline the one- and two-byte cases; the functions here are the general (slower)
path and the building blocks of the builders.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Final

# The broker error class is read from the module when raised: aiokafka.errors loads
# its code table on first use (issue 14).
from aiokafka import errors

__all__ = [
    "calc_crc32",
    "calc_crc32c",
    "crc32c_function",
    "decode_varint",
    "encode_varint",
    "size_of_varint",
]

# Largest number of bytes a 64-bit varint can take; a longer run of
# continuation bits is corrupt input, not a bigger number.
MAX_VARINT_BYTES: Final = 10

# Zigzag encodings of -64..63 (the values that fit in one byte), indexed by
# value + 64. The builder uses it to skip the general encoder for small deltas.
ONE_BYTE_VARINTS: Final = tuple(bytes(((v << 1) ^ (v >> 63),)) for v in range(-64, 64))

# Zigzag-decoded value of every single-byte varint, indexed by the byte.
ZIGZAG_ONE_BYTE: Final = tuple((b >> 1) ^ -(b & 1) for b in range(128))


def encode_varint(value: int) -> bytes:
    """Encode a signed 64-bit integer as a zigzag varint.

    Args:
        value: integer in the signed 64-bit range.

    Returns:
        The varint bytes (1 to 10 of them).
    """
    if -64 <= value < 64:
        return ONE_BYTE_VARINTS[value + 64]
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"value {value} does not fit a signed 64-bit varint")
    v = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def size_of_varint(value: int) -> int:
    """Number of bytes :func:`encode_varint` produces for ``value``."""
    v = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    size = 1
    while v > 0x7F:
        v >>= 7
        size += 1
    return size


def decode_varint(data: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Decode the zigzag varint starting at ``data[pos]``.

    Args:
        data: buffer holding the varint.
        pos: index of its first byte.

    Returns:
        ``(value, position just after the varint)``.

    Raises:
        CorruptRecordError: the buffer ends inside the varint, or the varint is
            longer than 10 bytes.
    """
    value = 0
    shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise errors.CorruptRecordError("record data ends inside a varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift >= 7 * MAX_VARINT_BYTES:
            raise errors.CorruptRecordError("varint longer than 10 bytes")


_crc32c: Callable[[bytes | bytearray | memoryview], int] | None = None


def crc32c_function() -> Callable[[bytes | bytearray | memoryview], int]:
    """The CRC-32C function itself (the ``crc32c`` package's), for callers that run
    it once per batch and would rather skip :func:`calc_crc32c`'s extra call."""
    global _crc32c
    if _crc32c is None:
        # Loaded on first use, and if possible without the package's __init__: that
        # imports importlib.metadata, looks up its own version among the installed
        # distributions and imports its command line (argparse): 40-60 ms here, more
        # with long sys.path (0.1-0.6 s in Spark's Python workers), paid by a process's
        # first batch. The function itself is in the package's extension module.
        _crc32c = _extension_crc32c()
        if _crc32c is None:
            from crc32c import crc32c

            _crc32c = crc32c
    return _crc32c


def _extension_crc32c() -> Callable[[bytes | bytearray | memoryview], int] | None:
    """``crc32c._crc32c.crc32c`` loaded from its file without importing the package
    (crc32c 2.4+ layout), or None: the caller then imports the package normally."""
    # Here, not at the top: only the first batch of a process needs them.
    import importlib.machinery
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("crc32c")
        if spec is None or not spec.submodule_search_locations:
            return None
        for directory in spec.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(directory, "_crc32c" + suffix)
                if os.path.exists(path):
                    ext = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                    if ext is None or ext.loader is None:
                        return None
                    module = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                    function: Callable[[bytes | bytearray | memoryview], int] = module.crc32c
                    # A known answer: the standard check value of CRC-32C.
                    return function if function(b"123456789") == 0xE3069283 else None
    except Exception:  # any surprise in another package's layout: import it normally
        return None
    return None


def calc_crc32c(data: bytes | bytearray | memoryview) -> int:
    """CRC-32C (Castagnoli) of ``data``, as stored in a v2 record batch header."""
    return int((_crc32c or crc32c_function())(data))


def calc_crc32(data: bytes | bytearray | memoryview) -> int:
    """CRC-32 (IEEE) of ``data``, as stored in a legacy v0/v1 message."""
    return zlib.crc32(data) & 0xFFFFFFFF
