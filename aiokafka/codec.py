"""aiokafka 0.14's ``aiokafka.codec``: one-shot compression helpers (compatibility).

The producer and consumer use :mod:`aiokafka.record.compression` (Kafka's framing,
bounded decompression). These functions keep aiokafka's names, arguments and
errors for code that called them directly: ``NotImplementedError`` when the
codec's library is not installed (``pip install 'aiokafka[snappy]'``, ``[lz4]``,
``[zstd]``).
"""

from __future__ import annotations

import importlib.util
import struct

from aiokafka.record.compression import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    compress,
    decompress,
)

__all__ = [
    "gzip_decode",
    "gzip_encode",
    "has_gzip",
    "has_lz4",
    "has_snappy",
    "has_zstd",
    "lz4_decode",
    "lz4_encode",
    "snappy_decode",
    "snappy_encode",
    "zstd_decode",
    "zstd_encode",
]

# Java's snappy-java stream header: marker, "SNAPPY", NUL, version 1, compatible 1.
_XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack("!ii", 1, 1)
# These helpers decompress whole payloads the caller already holds; the cap only
# stops a crafted payload from expanding without bound.
_MAX_SIZE = 1 << 31


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package is missing
        return False


def has_gzip() -> bool:
    """Always ``True`` (gzip is in the standard library)."""
    return True


def has_snappy() -> bool:
    """Whether snappy is available (the ``snappy`` extra)."""
    return _installed("cramjam")


def has_lz4() -> bool:
    """Whether lz4 is available (the ``lz4`` extra)."""
    return _installed("lz4.frame")


def has_zstd() -> bool:
    """Whether zstd is available (the ``zstd`` extra)."""
    return _installed("zstandard")


def _require(available: bool, name: str) -> None:
    if not available:
        raise NotImplementedError(f"{name} codec is not available")


def gzip_encode(payload: bytes | bytearray | memoryview, compresslevel: int | None = None) -> bytes:
    """Gzip ``payload`` (level 9 unless ``compresslevel`` is given, as in aiokafka)."""
    return compress(CODEC_GZIP, payload, level=compresslevel or 9)


def gzip_decode(payload: bytes | bytearray | memoryview) -> bytes:
    """Gunzip ``payload``."""
    return decompress(CODEC_GZIP, payload, max_size=_MAX_SIZE)


def snappy_encode(
    payload: bytes | bytearray | memoryview,
    xerial_compatible: bool = True,
    xerial_blocksize: int = 32 * 1024,
) -> bytes:
    """Snappy-compress ``payload``; by default in the xerial block framing that Java's
    snappy-java writes (header, then ``int32 length + block`` per
    ``xerial_blocksize`` bytes of input), else one raw block.

    Raises:
        NotImplementedError: snappy is not installed.
    """
    _require(has_snappy(), "Snappy")
    if not xerial_compatible:
        return compress(CODEC_SNAPPY, payload)
    view = memoryview(payload)
    out = [_XERIAL_HEADER]
    for start in range(0, len(view), xerial_blocksize):
        block = compress(CODEC_SNAPPY, view[start : start + xerial_blocksize])
        out.append(struct.pack("!i", len(block)))
        out.append(block)
    return b"".join(out)


def snappy_decode(payload: bytes | bytearray | memoryview) -> bytes:
    """Decompress a raw snappy block or a xerial-framed stream.

    Raises:
        NotImplementedError: snappy is not installed.
    """
    _require(has_snappy(), "Snappy")
    return decompress(CODEC_SNAPPY, payload, max_size=_MAX_SIZE)


def lz4_encode(payload: bytes | bytearray | memoryview, level: int = 9) -> bytes:
    """LZ4-frame ``payload`` with independent blocks (KIP-57), level 9 by default.

    Raises:
        NotImplementedError: lz4 is not installed.
    """
    _require(has_lz4(), "LZ4")
    return compress(CODEC_LZ4, payload, level=level)


def lz4_decode(payload: bytes | bytearray | memoryview) -> bytes:
    """Decompress an LZ4 frame.

    Raises:
        NotImplementedError: lz4 is not installed.
    """
    _require(has_lz4(), "LZ4")
    return decompress(CODEC_LZ4, payload, max_size=_MAX_SIZE)


def zstd_encode(payload: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """Zstd-compress ``payload`` (level 3, the broker's default, unless given).

    Raises:
        NotImplementedError: zstd is not installed.
    """
    _require(has_zstd(), "Zstd")
    return compress(CODEC_ZSTD, payload, level=3 if level is None else level)


def zstd_decode(payload: bytes | bytearray | memoryview) -> bytes:
    """Decompress a zstd frame.

    Raises:
        NotImplementedError: zstd is not installed.
    """
    _require(has_zstd(), "Zstd")
    return decompress(CODEC_ZSTD, payload, max_size=_MAX_SIZE)
