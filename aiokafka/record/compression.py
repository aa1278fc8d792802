"""Compression codecs with Kafka's framing: gzip, snappy, lz4 and zstd.

Codec ids are the values of the compression bits (0-2) of a batch's attributes.

Framing notes:

* gzip: RFC 1952 gzip members (what Java's ``GZIPOutputStream`` writes).
* snappy: we write a plain snappy block; on read we accept both a plain block
  and the xerial framing (``\\x82SNAPPY\\x00`` + version + compat +
  ``[int32 length + block]*``) that Java's snappy-java stream writes.
* lz4: the LZ4 frame format with independent 64 KiB blocks and neither block
  checksums nor content size, which every Kafka client reads. Magic v0
  messages were written by ``KafkaLZ4BlockOutputStream``, whose frame header
  checksum wrongly covered the 4 magic bytes too; Java ignores that checksum
  for magic v0, so :func:`decompress` rewrites it before decoding
  (``legacy_lz4=True``).
* zstd: one zstd frame; the frame may not record its content size, so reading
  streams.

Each library is imported when a codec is first used, so a missing optional
dependency fails with :class:`~aiokafka.errors.UnsupportedCodecError` naming
the extra to install instead of failing at import time.

Every decompression is capped at ``max_size`` bytes of output: a few kilobytes
of crafted input must not make the client allocate gigabytes.
"""

from __future__ import annotations

import importlib
import struct
import zlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

# The broker error classes are read from the module when raised: aiokafka.errors loads
# its code table on first use (issue 14).
from aiokafka import errors
from aiokafka.errors import UnsupportedCodecError

if TYPE_CHECKING:
    from aiokafka.errors import CorruptRecordError

__all__ = [
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_MASK",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "check_codec",
    "codec_from_name",
    "codec_name",
    "compress",
    "decompress",
]

CODEC_MASK: Final = 0x07
CODEC_NONE: Final = 0
CODEC_GZIP: Final = 1
CODEC_SNAPPY: Final = 2
CODEC_LZ4: Final = 3
CODEC_ZSTD: Final = 4

_NAMES: Final = {
    CODEC_NONE: "none",
    CODEC_GZIP: "gzip",
    CODEC_SNAPPY: "snappy",
    CODEC_LZ4: "lz4",
    CODEC_ZSTD: "zstd",
}
_BY_NAME: Final = {name: codec for codec, name in _NAMES.items()}

# A v2 batch is limited by the broker's message.max.bytes (1 MiB by default,
# rarely above a few tens of MiB); even at very high compression ratios a real
# batch stays far below this. It exists to stop decompression bombs.
DEFAULT_MAX_DECOMPRESSED_SIZE: Final = 256 * 1024 * 1024

# codec -> (module to import, package the user must install, pip extra)
_REQUIREMENTS: Final = {
    CODEC_SNAPPY: ("cramjam", "cramjam", "snappy"),
    CODEC_LZ4: ("lz4.frame", "lz4", "lz4"),
    CODEC_ZSTD: ("zstandard", "zstandard", "zstd"),
}

_XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE: Final = 16  # magic (8) + version (4) + compatible version (4)
_GZIP_WBITS: Final = 16 + zlib.MAX_WBITS
_ZSTD_CHUNK: Final = 256 * 1024


def codec_name(codec: int) -> str:
    """Human name (``"gzip"``, ...) of a codec id; ``"unknown(N)"`` otherwise."""
    return _NAMES.get(codec, f"unknown({codec})")


def codec_from_name(name: str | None) -> int:
    """Codec id for a ``compression_type`` setting.

    Args:
        name: ``None``, ``"none"``, ``"gzip"``, ``"snappy"``, ``"lz4"`` or
            ``"zstd"`` (case-insensitive).

    Raises:
        ValueError: unknown name.
    """
    if name is None:
        return CODEC_NONE
    try:
        return _BY_NAME[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(
            f"compression_type must be one of {sorted(_BY_NAME)} or None, got {name!r}"
        ) from None


def _load(codec: int) -> ModuleType:
    """Import the library behind ``codec``, or explain how to install it.

    Importing on each use (a dict lookup once loaded) keeps no cached module
    around, so tests can hide a library by monkeypatching ``sys.modules``.
    """
    module, package, extra = _REQUIREMENTS[codec]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UnsupportedCodecError(
            f"{_NAMES[codec]} compression needs the {package!r} package: "
            f"pip install 'aiokafka[{extra}]'"
        ) from None


def check_codec(codec: int) -> None:
    """Fail early if ``codec`` is unknown or its library is not installed.

    Raises:
        UnsupportedCodecError: unknown codec id or missing library.
    """
    if codec not in _NAMES:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}")
    if codec in _REQUIREMENTS:
        _load(codec)


# --------------------------------------------------------------------------- compress


def compress(codec: int, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """Compress ``data`` with Kafka's framing for ``codec``.

    Args:
        codec: one of the ``CODEC_*`` ids other than ``CODEC_NONE``.
        data: the uncompressed records.
        level: codec-specific compression level, ``None`` for the library
            default (gzip 6, lz4 0 i.e. fast mode, zstd 3). Snappy has no
            levels and rejects any value.

    Raises:
        UnsupportedCodecError: unknown codec or missing library.
        ValueError: ``level`` is not valid for the codec.
    """
    if codec == CODEC_GZIP:
        if level is None:
            level = 6
        if not -1 <= level <= 9:
            raise ValueError(f"compression_level for gzip must be in -1..9, got {level}")
        deflate = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
        return deflate.compress(data) + deflate.flush()
    if codec == CODEC_SNAPPY:
        if level is not None:
            raise ValueError("compression_level is not supported by snappy")
        cramjam = _load(codec)
        return bytes(cramjam.snappy.compress_raw(bytes(data)))
    if codec == CODEC_LZ4:
        lz4_frame = _load(codec)
        if level is None:
            level = 0
        if not 0 <= level <= 16:
            raise ValueError(f"compression_level for lz4 must be in 0..16, got {level}")
        result: bytes = lz4_frame.compress(
            data,
            compression_level=level,
            block_size=lz4_frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            block_checksum=False,
            store_size=False,
        )
        return result
    if codec == CODEC_ZSTD:
        zstandard = _load(codec)
        if level is None:
            level = 3
        if not -131072 <= level <= 22:
            raise ValueError(f"compression_level for zstd must be in -131072..22, got {level}")
        out: bytes = zstandard.ZstdCompressor(level=level).compress(data)
        return out
    raise UnsupportedCodecError(f"cannot compress with codec id {codec}")


# ------------------------------------------------------------------------- decompress


def decompress(
    codec: int,
    data: bytes | bytearray | memoryview,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    legacy_lz4: bool = False,
) -> bytes:
    """Decompress a batch's record data.

    Args:
        codec: ``CODEC_GZIP``, ``CODEC_SNAPPY``, ``CODEC_LZ4`` or ``CODEC_ZSTD``.
        data: compressed bytes.
        max_size: refuse to produce more than this many bytes.
        legacy_lz4: the data comes from a magic v0 message, whose lz4 frame
            header checksum was computed the broken way.

    Raises:
        CorruptRecordError: the data is not valid for the codec, is truncated,
            or expands beyond ``max_size``.
        UnsupportedCodecError: unknown codec or missing library.
    """
    if codec == CODEC_GZIP:
        return _gunzip(data, max_size)
    if codec == CODEC_SNAPPY:
        return _unsnappy(_load(codec), data, max_size)
    if codec == CODEC_LZ4:
        return _unlz4(_load(codec), data, max_size, legacy_lz4)
    if codec == CODEC_ZSTD:
        return _unzstd(_load(codec), data, max_size)
    raise UnsupportedCodecError(f"unknown compression codec id {codec}")


def _too_big(max_size: int) -> CorruptRecordError:
    return errors.CorruptRecordError(
        f"decompressed batch exceeds the {max_size}-byte limit (decompression bomb guard)"
    )


def _gunzip(data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    remaining = bytes(data)
    try:
        # Java's GZIPInputStream reads concatenated members, so we do too.
        while True:
            inflate = zlib.decompressobj(_GZIP_WBITS)
            chunk = inflate.decompress(remaining, max_size - total + 1)
            total += len(chunk)
            if total > max_size:
                raise _too_big(max_size)
            parts.append(chunk)
            if not inflate.eof:
                raise errors.CorruptRecordError("gzip data is truncated")
            remaining = inflate.unused_data
            if not remaining:
                break
    except zlib.error as exc:
        raise errors.CorruptRecordError(f"invalid gzip data: {exc}") from None
    return b"".join(parts)


def _raw_snappy_length(block: bytes | memoryview) -> int:
    """Uncompressed length announced at the start of a raw snappy block."""
    value = 0
    for i in range(min(len(block), 5)):
        b = block[i]
        value |= (b & 0x7F) << (7 * i)
        if b < 0x80:
            return value
    raise errors.CorruptRecordError("invalid snappy block header")


def _unsnappy_block(cramjam: Any, block: bytes | memoryview, budget: int, max_size: int) -> bytes:
    if _raw_snappy_length(block) > budget:
        raise _too_big(max_size)
    try:
        return bytes(cramjam.snappy.decompress_raw(bytes(block)))
    except Exception as exc:  # cramjam raises its own DecompressionError
        raise errors.CorruptRecordError(f"invalid snappy data: {exc}") from None


def _unsnappy(cramjam: Any, data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    view = memoryview(data)
    if bytes(view[: len(_XERIAL_MAGIC)]) != _XERIAL_MAGIC:
        return _unsnappy_block(cramjam, view, max_size, max_size)
    if len(view) < _XERIAL_HEADER_SIZE:
        raise errors.CorruptRecordError("truncated xerial snappy header")
    parts: list[bytes] = []
    total = 0
    pos = _XERIAL_HEADER_SIZE
    end = len(view)
    while pos < end:
        if pos + 4 > end:
            raise errors.CorruptRecordError("truncated xerial snappy block length")
        (length,) = struct.unpack_from(">i", view, pos)
        pos += 4
        if length < 0 or pos + length > end:
            raise errors.CorruptRecordError(f"invalid xerial snappy block length {length}")
        block = _unsnappy_block(cramjam, view[pos : pos + length], max_size - total, max_size)
        pos += length
        total += len(block)
        parts.append(block)
    return b"".join(parts)


# xxHash32 constants (from the xxHash specification).
_P1: Final = 2654435761
_P2: Final = 2246822519
_P3: Final = 3266489917
_P4: Final = 668265263
_P5: Final = 374761393
_M32: Final = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes | memoryview, seed: int = 0) -> int:
    """xxHash32 of ``data``; the lz4 frame header checksum is its second byte."""
    n = len(data)
    pos = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        while pos + 16 <= n:
            a, b, c, d = struct.unpack_from("<4I", data, pos)
            v1 = (_rotl((v1 + a * _P2) & _M32, 13) * _P1) & _M32
            v2 = (_rotl((v2 + b * _P2) & _M32, 13) * _P1) & _M32
            v3 = (_rotl((v3 + c * _P2) & _M32, 13) * _P1) & _M32
            v4 = (_rotl((v4 + d * _P2) & _M32, 13) * _P1) & _M32
            pos += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        (word,) = struct.unpack_from("<I", data, pos)
        h = (_rotl((h + word * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def _fix_legacy_lz4_header(data: bytes) -> bytes:
    """Replace the frame header checksum with the correct one.

    ``KafkaLZ4BlockOutputStream`` (magic v0) hashed the magic number together
    with the frame descriptor; the standard hashes only the descriptor.
    """
    if len(data) < 7 or data[:4] != b"\x04\x22\x4d\x18":
        return data  # not an lz4 frame; let the decoder report it
    flags = data[4]
    descriptor_end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    if len(data) <= descriptor_end:
        return data
    checksum = (xxh32(data[4:descriptor_end]) >> 8) & 0xFF
    return data[:descriptor_end] + bytes((checksum,)) + data[descriptor_end + 1 :]


def _unlz4(
    lz4_frame: Any, data: bytes | bytearray | memoryview, max_size: int, legacy: bool
) -> bytes:
    raw = bytes(data)
    if legacy:
        raw = _fix_legacy_lz4_header(raw)
    try:
        decoder = lz4_frame.LZ4FrameDecompressor()
        out: bytes = decoder.decompress(raw, max_length=max_size + 1)
        eof = decoder.eof
    except Exception as exc:  # lz4 raises RuntimeError for any bad frame
        raise errors.CorruptRecordError(f"invalid lz4 data: {exc}") from None
    if len(out) > max_size:
        raise _too_big(max_size)
    if not eof:
        raise errors.CorruptRecordError("lz4 data is truncated")
    return out


def _unzstd(zstandard: Any, data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    raw = bytes(data)
    try:
        dctx = zstandard.ZstdDecompressor()
        try:
            declared = zstandard.frame_content_size(raw)
        except zstandard.ZstdError:
            declared = -1
        if 0 <= declared <= max_size:
            # Fast path: the frame says how big it is, one call decodes it.
            out: bytes = dctx.decompress(raw)
            if len(out) != declared:
                raise errors.CorruptRecordError("zstd data does not match its content size")
            return out
        if declared > max_size:
            raise _too_big(max_size)
        # Java's zstd-jni stream leaves the content size out, so this is the
        # common path. read_to_iter yields bounded chunks, which lets the
        # size check run before anything big is allocated. It does not report
        # a frame cut short; the record parser catches that (record count and
        # lengths must match exactly), and the batch CRC covers the input.
        parts: list[bytes] = []
        total = 0
        for chunk in dctx.read_to_iter(raw, write_size=_ZSTD_CHUNK):
            total += len(chunk)
            if total > max_size:
                raise _too_big(max_size)
            parts.append(chunk)
        return b"".join(parts)
    except zstandard.ZstdError as exc:
        raise errors.CorruptRecordError(f"invalid zstd data: {exc}") from None
