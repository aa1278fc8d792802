"""Compression codecs: Kafka framing, missing libraries, bad input, bomb guard."""

from __future__ import annotations

import gzip
import os
import struct
import sys
import warnings

import cramjam
import lz4.frame
import pytest
import zstandard

from aiokafka.errors import CorruptRecordError, UnsupportedCodecError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    check_codec,
    codec_from_name,
    codec_name,
)
from aiokafka.record.compression import compress, decompress, xxh32
from aiokafka.record.default_records import HEADER_SIZE

with warnings.catch_warnings():
    # kafka-python's package import trips a stdlib DeprecationWarning
    # (importlib.resources.open_text) that pytest would turn into an error.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.codec import lz4_encode_old_kafka, snappy_encode

CODECS = [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD]
PAYLOADS = [b"", b"a", b"hello kafka " * 1000, os.urandom(70_000)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=["empty", "one", "text", "random"])
def test_round_trip(codec: int, payload: bytes) -> None:
    assert decompress(codec, compress(codec, payload)) == payload
    assert decompress(codec, memoryview(compress(codec, payload))) == payload


@pytest.mark.parametrize(
    ("codec", "level"),
    [(CODEC_GZIP, 1), (CODEC_GZIP, 9), (CODEC_LZ4, 9), (CODEC_ZSTD, 1), (CODEC_ZSTD, 19)],
)
def test_compression_levels(codec: int, level: int) -> None:
    payload = b"level test " * 500
    assert decompress(codec, compress(codec, payload, level)) == payload


def test_levels_change_output() -> None:
    payload = bytes(range(256)) * 50 + b"abc" * 3000
    assert compress(CODEC_ZSTD, payload, 1) != compress(CODEC_ZSTD, payload, 19)
    assert compress(CODEC_GZIP, payload, 1) != compress(CODEC_GZIP, payload, 9)


@pytest.mark.parametrize(
    ("codec", "level"),
    [(CODEC_GZIP, 10), (CODEC_LZ4, -1), (CODEC_ZSTD, 23), (CODEC_SNAPPY, 1)],
)
def test_bad_levels(codec: int, level: int) -> None:
    with pytest.raises(ValueError, match="compression_level"):
        compress(codec, b"data", level)


def test_builder_passes_compression_level() -> None:
    payload = bytes(range(256)) * 40
    sizes = []
    for level in (1, 19):
        builder = DefaultRecordBatchBuilder(compression_type=CODEC_ZSTD, compression_level=level)
        builder.append(0, 0, None, payload)
        data = builder.build()
        sizes.append(len(data))
        assert [r.value for r in DefaultRecordBatch(data)] == [payload]
    assert len(set(sizes)) == 2 or sizes[0] >= sizes[1]


def test_gzip_is_gzip_format() -> None:
    payload = b"interop " * 100
    assert gzip.decompress(compress(CODEC_GZIP, payload)) == payload
    # Concatenated members are read as Java's GZIPInputStream does.
    two = gzip.compress(b"first ") + gzip.compress(b"second")
    assert decompress(CODEC_GZIP, two) == b"first second"


def test_snappy_writes_a_plain_block() -> None:
    payload = b"snappy " * 100
    assert bytes(cramjam.snappy.decompress_raw(compress(CODEC_SNAPPY, payload))) == payload


def _xerial(blocks: list[bytes]) -> bytes:
    out = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    for block in blocks:
        raw = bytes(cramjam.snappy.compress_raw(block))
        out += struct.pack(">i", len(raw)) + raw
    return out


def test_snappy_reads_xerial_framing() -> None:
    assert decompress(CODEC_SNAPPY, _xerial([b"abc" * 100, b"", b"xyz" * 5000])) == (
        b"abc" * 100 + b"xyz" * 5000
    )
    assert decompress(CODEC_SNAPPY, _xerial([])) == b""


def test_snappy_reads_kafka_python_xerial() -> None:
    payload = os.urandom(100) * 2000  # several 32 KiB xerial blocks
    framed = snappy_encode(payload, xerial_compatible=True, xerial_blocksize=32 * 1024)
    assert framed.startswith(b"\x82SNAPPY\x00")
    assert decompress(CODEC_SNAPPY, framed) == payload


@pytest.mark.parametrize(
    "data",
    [
        b"\x82SNAPPY\x00\x00\x00",  # header cut short
        b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"\x00\x00",  # length cut short
        b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, 50) + b"short",  # block cut short
        b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, -5),  # negative block length
        b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, 3) + b"\xff\xff\xff",  # bad block
    ],
)
def test_bad_xerial_frames(data: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        decompress(CODEC_SNAPPY, data)


def test_lz4_frame_settings() -> None:
    frame = compress(CODEC_LZ4, b"x" * 100_000)
    info = lz4.frame.get_frame_info(frame)
    # What KafkaLZ4BlockInputStream accepts: independent 64 KiB blocks, no content size.
    assert info["block_size"] == 64 * 1024
    assert not info["block_linked"]
    assert info["content_size"] == 0
    assert lz4.frame.decompress(frame) == b"x" * 100_000


def test_xxh32_known_values() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"abc") == 0x32D153FF
    # The lz4 content checksum is xxh32 of the content: covers the >=16-byte path.
    for size in (15, 16, 17, 100, 1001):
        content = os.urandom(size)
        frame = lz4.frame.compress(content, content_checksum=True)
        assert xxh32(content) == struct.unpack("<I", frame[-4:])[0]
    # The frame header checksum is the second byte of xxh32 of the descriptor.
    frame = lz4.frame.compress(b"abc", store_size=True)
    assert (xxh32(frame[4:14]) >> 8) & 0xFF == frame[14]


def _broken_header_checksum(frame: bytes) -> bytes:
    """KafkaLZ4BlockOutputStream's bug: the header checksum also hashed the magic."""
    assert frame[4] & 0x08 == 0  # no content size: the descriptor is FLG + BD
    return frame[:6] + bytes(((xxh32(frame[:6]) >> 8) & 0xFF,)) + frame[7:]


def test_legacy_lz4_broken_header_checksum() -> None:
    payload = b"old kafka " * 300
    broken = _broken_header_checksum(compress(CODEC_LZ4, payload))
    with pytest.raises(CorruptRecordError):
        decompress(CODEC_LZ4, broken)
    assert decompress(CODEC_LZ4, broken, legacy_lz4=True) == payload
    # A correct header is also accepted in legacy mode.
    assert decompress(CODEC_LZ4, compress(CODEC_LZ4, payload), legacy_lz4=True) == payload


def test_legacy_lz4_from_kafka_python() -> None:
    pytest.importorskip("xxhash")  # kafka-python needs it to write the old framing
    payload = b"old kafka " * 300
    broken = lz4_encode_old_kafka(payload)
    with pytest.raises(CorruptRecordError):
        decompress(CODEC_LZ4, broken)
    assert decompress(CODEC_LZ4, broken, legacy_lz4=True) == payload


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_raises_corrupt(codec: int) -> None:
    for data in (b"\xff" * 64, b"\x82SNAPPY", b"\x04\x22\x4d\x18" + b"\xff" * 20):
        with pytest.raises(CorruptRecordError):
            decompress(codec, data)


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4])
def test_truncated_raises_corrupt(codec: int) -> None:
    data = compress(codec, os.urandom(5000))
    for cut in (1, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(CorruptRecordError):
            decompress(codec, data[:cut])


def test_truncated_zstd_batch_is_caught_by_the_record_parser() -> None:
    builder = DefaultRecordBatchBuilder(compression_type=CODEC_ZSTD)
    for i in range(50):
        builder.append(i, 0, None, os.urandom(100))
    data = builder.build()
    truncated = data[: HEADER_SIZE + (len(data) - HEADER_SIZE) // 2]
    struct.pack_into(">i", truncated, 8, len(truncated) - 12)
    with pytest.raises(CorruptRecordError):
        DefaultRecordBatch(truncated, check_crc=False).record_tuples()


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_bomb_guard(codec: int) -> None:
    bomb = compress(codec, bytes(4 * 1024 * 1024))
    assert len(bomb) < 1024 * 1024
    with pytest.raises(CorruptRecordError, match="limit"):
        decompress(codec, bomb, max_size=1024 * 1024)
    assert len(decompress(codec, bomb, max_size=4 * 1024 * 1024)) == 4 * 1024 * 1024


def test_zstd_bomb_without_content_size() -> None:
    # Java's zstd-jni streams frames without a content size: the bounded path.
    stream = zstandard.ZstdCompressor().compressobj()
    bomb = stream.compress(bytes(8 * 1024 * 1024)) + stream.flush()
    assert zstandard.frame_content_size(bomb) == -1
    with pytest.raises(CorruptRecordError, match="limit"):
        decompress(CODEC_ZSTD, bomb, max_size=1024 * 1024)
    assert decompress(CODEC_ZSTD, bomb) == bytes(8 * 1024 * 1024)


def test_batch_reader_applies_the_guard() -> None:
    builder = DefaultRecordBatchBuilder(compression_type=CODEC_GZIP, batch_size=1 << 30)
    builder.append(0, 0, None, bytes(2 * 1024 * 1024))
    data = builder.build()
    with pytest.raises(CorruptRecordError, match="limit"):
        DefaultRecordBatch(data, max_decompressed_size=1024 * 1024).record_tuples()
    assert len(DefaultRecordBatch(data).record_tuples()) == 1


@pytest.mark.parametrize(
    ("codec", "module", "extra"),
    [
        (CODEC_SNAPPY, "cramjam", "snappy"),
        (CODEC_LZ4, "lz4.frame", "lz4"),
        (CODEC_ZSTD, "zstandard", "zstd"),
    ],
)
def test_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, codec: int, module: str, extra: str
) -> None:
    data = compress(codec, b"payload")
    builder = DefaultRecordBatchBuilder(compression_type=codec)
    builder.append(0, 0, None, b"payload")
    batch_data = builder.build()
    monkeypatch.setitem(sys.modules, module, None)  # makes "import module" fail
    for call in (
        lambda: compress(codec, b"payload"),
        lambda: decompress(codec, data),
        lambda: check_codec(codec),
        lambda: DefaultRecordBatchBuilder(compression_type=codec),
        lambda: DefaultRecordBatch(batch_data).record_tuples(),
    ):
        with pytest.raises(UnsupportedCodecError, match=rf"pip install 'aiokafka\[{extra}\]'"):
            call()
    # gzip (stdlib) and uncompressed batches are unaffected.
    assert decompress(CODEC_GZIP, compress(CODEC_GZIP, b"x")) == b"x"


def test_unknown_codec() -> None:
    with pytest.raises(UnsupportedCodecError):
        check_codec(6)
    with pytest.raises(UnsupportedCodecError):
        decompress(6, b"x")
    with pytest.raises(UnsupportedCodecError):
        compress(CODEC_NONE, b"x")
    builder = DefaultRecordBatchBuilder()
    builder.append(0, 0, None, b"x")
    data = builder.build()
    struct.pack_into(">h", data, 21, 6)  # attributes: codec 6 does not exist
    with pytest.raises(UnsupportedCodecError):
        DefaultRecordBatch(data, check_crc=False).record_tuples()


def test_codec_names() -> None:
    assert [codec_from_name(n) for n in (None, "none", "gzip", "SNAPPY", "lz4", "zstd")] == [
        0,
        0,
        1,
        2,
        3,
        4,
    ]
    assert codec_name(CODEC_ZSTD) == "zstd"
    assert codec_name(9) == "unknown(9)"
    with pytest.raises(ValueError, match="compression_type"):
        codec_from_name("brotli")
    with pytest.raises(ValueError, match="compression_type"):
        codec_from_name(3)  # type: ignore[arg-type]
