"""Primitive types of the Kafka wire protocol.

Readers take a buffer and a position and return ``(value, new_position)``; writers
append to a ``bytearray``. The generated codecs in :mod:`aiokafka.protocol._gen`
inline the common fixed-width cases and call these helpers only for the rarer paths
(multi-byte varints, tagged-field sections), so the helpers favour clarity.

Malformed input raises :class:`aiokafka.errors.KafkaProtocolError`.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping

from aiokafka.errors import KafkaProtocolError, UnsupportedVersionError

__all__ = [
    "ZERO_UUID",
    "Buffer",
    "as_view",
    "decode_varint",
    "decode_varlong",
    "encode_unsigned_varint",
    "encode_varint",
    "encode_varlong",
    "malformed",
    "read_bytes",
    "read_string",
    "read_tagged_fields",
    "read_unsigned_varint",
    "read_uuid",
    "read_varint",
    "read_varlong",
    "unsupported",
    "uvarint_at",
    "write_bytes",
    "write_string",
    "write_tagged_fields",
    "write_unsigned_varint",
    "write_uuid",
]

Buffer = bytes | bytearray | memoryview

#: Kafka's "no topic id" value (``Uuid.ZERO_UUID`` in the Java client).
ZERO_UUID = uuid.UUID(int=0)

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def malformed(what: str) -> KafkaProtocolError:
    """Build the error for undecodable bytes (the caller raises it)."""
    return KafkaProtocolError(f"malformed protocol data: {what}")


def unsupported(what: str) -> UnsupportedVersionError:
    """Build the error for a value that the chosen version cannot carry."""
    return UnsupportedVersionError(what)


# -- varints -----------------------------------------------------------------------------


def write_unsigned_varint(w: bytearray, value: int) -> None:
    """Append ``value`` (0 <= value < 2**64) as an unsigned LEB128 varint."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot be negative: {value}")
    while value >= 0x80:
        w.append((value & 0x7F) | 0x80)
        value >>= 7
    w.append(value)


def encode_unsigned_varint(value: int) -> bytes:
    """Return ``value`` as an unsigned varint."""
    w = bytearray()
    write_unsigned_varint(w, value)
    return bytes(w)


def read_unsigned_varint(buf: Buffer, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    """Read an unsigned varint of at most ``max_bytes`` bytes (5 for 32-bit, 10 for 64)."""
    result = 0
    shift = 0
    end = len(buf)
    for _ in range(max_bytes):
        if pos >= end:
            raise malformed("varint runs past the end of the data")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise malformed(f"varint longer than {max_bytes} bytes")


def encode_varint(value: int) -> bytes:
    """Return a signed 32-bit ``value`` zigzag-encoded as a varint."""
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint out of int32 range: {value}")
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """Return a signed 64-bit ``value`` zigzag-encoded as a varint."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {value}")
    return encode_unsigned_varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def read_varint(buf: Buffer, pos: int) -> tuple[int, int]:
    """Read a zigzag-encoded signed 32-bit varint."""
    raw, pos = read_unsigned_varint(buf, pos, 5)
    if raw > 0xFFFFFFFF:
        raise malformed("varint out of int32 range")
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: Buffer, pos: int) -> tuple[int, int]:
    """Read a zigzag-encoded signed 64-bit varint."""
    raw, pos = read_unsigned_varint(buf, pos, 10)
    if raw > 0xFFFFFFFFFFFFFFFF:
        raise malformed("varlong out of int64 range")
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varint(data: Buffer) -> int:
    """Decode a whole buffer holding exactly one zigzag varint."""
    value, pos = read_varint(data, 0)
    if pos != len(data):
        raise malformed("trailing bytes after varint")
    return value


def decode_varlong(data: Buffer) -> int:
    """Decode a whole buffer holding exactly one zigzag varlong."""
    value, pos = read_varlong(data, 0)
    if pos != len(data):
        raise malformed("trailing bytes after varlong")
    return value


# -- strings and bytes -------------------------------------------------------------------


def _read_length(buf: Buffer, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    # Returns -1 for null. Compact lengths are stored plus one so that 0 can mean null.
    if compact:
        n, pos = read_unsigned_varint(buf, pos)
        return n - 1, pos
    fmt = _INT32 if wide else _INT16
    if pos + fmt.size > len(buf):
        raise malformed("length runs past the end of the data")
    (n,) = fmt.unpack_from(buf, pos)
    return int(n), pos + fmt.size


def _read_span(
    buf: Buffer, pos: int, compact: bool, nullable: bool, wide: bool, what: str
) -> tuple[int, int]:
    # (start, end) of a length-prefixed value in buf; start is -1 for null.
    n, pos = _read_length(buf, pos, compact, wide)
    if n < 0:
        if n == -1 and nullable:
            return -1, pos
        raise malformed(f"bad {what} length {n}")
    end = pos + n
    if end > len(buf):
        raise malformed(f"{what} runs past the end of the data")
    return pos, end


def read_string(buf: Buffer, pos: int, *, compact: bool, nullable: bool) -> tuple[str | None, int]:
    """Read a (compact) (nullable) string."""
    start, end = _read_span(buf, pos, compact, nullable, wide=False, what="string")
    if start < 0:
        return None, end
    try:
        return bytes(buf[start:end]).decode("utf-8"), end
    except UnicodeDecodeError as exc:
        raise malformed(f"string is not UTF-8: {exc}") from None


def _write_length(
    w: bytearray, n: int | None, compact: bool, nullable: bool, wide: bool, what: str
) -> None:
    # The length prefix of an n-byte value, or of null (None): -1, or 0 when compact
    # (compact lengths are stored plus one).
    if n is None:
        if not nullable:
            raise ValueError(f"{what} is not nullable here")
        n = -1
    if compact:
        write_unsigned_varint(w, n + 1)
    elif wide:
        w += _INT32.pack(n)
    else:
        if n > 0x7FFF:
            raise ValueError(f"{what} of {n} bytes exceeds the int16 length limit")
        w += _INT16.pack(n)


def write_string(w: bytearray, value: str | None, *, compact: bool, nullable: bool) -> None:
    """Append a (compact) (nullable) string."""
    data = None if value is None else value.encode("utf-8")
    _write_length(
        w, None if data is None else len(data), compact, nullable, wide=False, what="string"
    )
    if data is not None:
        w += data


def read_bytes(buf: Buffer, pos: int, *, compact: bool, nullable: bool) -> tuple[bytes | None, int]:
    """Read (compact) (nullable) bytes."""
    start, end = _read_span(buf, pos, compact, nullable, wide=True, what="bytes value")
    if start < 0:
        return None, end
    return bytes(buf[start:end]), end


def write_bytes(w: bytearray, value: Buffer | None, *, compact: bool, nullable: bool) -> None:
    """Append (compact) (nullable) bytes."""
    n = None if value is None else memoryview(value).nbytes
    _write_length(w, n, compact, nullable, wide=True, what="bytes value")
    if value is not None:
        w += value


def read_uuid(buf: Buffer, pos: int) -> tuple[uuid.UUID, int]:
    """Read a 16-byte UUID."""
    end = pos + 16
    if end > len(buf):
        raise malformed("uuid runs past the end of the data")
    return uuid.UUID(bytes=bytes(buf[pos:end])), end


def write_uuid(w: bytearray, value: uuid.UUID) -> None:
    """Append a 16-byte UUID."""
    w += value.bytes


# -- tagged fields (KIP-482) -------------------------------------------------------------


def read_tagged_fields(buf: Buffer, pos: int) -> tuple[dict[int, bytes], int]:
    """Read a tagged-field section into ``{tag: raw bytes}``."""
    count, pos = read_unsigned_varint(buf, pos)
    fields: dict[int, bytes] = {}
    for _ in range(count):
        tag, pos = read_unsigned_varint(buf, pos)
        size, pos = read_unsigned_varint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise malformed("tagged field runs past the end of the data")
        fields[tag] = bytes(buf[pos:end])
        pos = end
    return fields, pos


def write_tagged_fields(w: bytearray, fields: Mapping[int, Buffer]) -> None:
    """Append a tagged-field section, tags in ascending order as Kafka requires."""
    write_unsigned_varint(w, len(fields))
    for tag in sorted(fields):
        data = fields[tag]
        write_unsigned_varint(w, tag)
        write_unsigned_varint(w, memoryview(data).nbytes)
        w += data


def as_view(data: Buffer) -> memoryview:
    """A flat byte view of ``data`` without copying (decoders index it bytewise)."""
    view = data if isinstance(data, memoryview) else memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def uvarint_at(buf: memoryview, pos: int) -> tuple[int, int]:
    """Read an unsigned 32-bit varint, unrolled for the generated decoders' slow path.

    Unlike :func:`read_unsigned_varint` it does no bounds checks of its own: running
    past the end raises ``IndexError``, which the generated ``decode`` methods turn
    into :class:`~aiokafka.errors.KafkaProtocolError`. Unrolling makes a 3-byte length
    (a record batch of 16 KiB-2 MiB) about twice as fast as the loop.
    """
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    b = buf[pos + 1]
    if b < 0x80:
        return result | (b << 7), pos + 2
    result |= (b & 0x7F) << 7
    b = buf[pos + 2]
    if b < 0x80:
        return result | (b << 14), pos + 3
    result |= (b & 0x7F) << 14
    b = buf[pos + 3]
    if b < 0x80:
        return result | (b << 21), pos + 4
    result |= (b & 0x7F) << 21
    b = buf[pos + 4]
    if b < 0x10:
        return result | (b << 28), pos + 5
    raise malformed("unsigned varint longer than 32 bits")
