"""``aiokafka.codec`` (aiokafka 0.14's helpers) round-trips, and the ``snappy`` extra's
python-snappy reads what we write and writes what we read."""

from __future__ import annotations

import pytest

from aiokafka import codec

DATA = b"".join(i.to_bytes(4, "big") * 3 for i in range(30000))  # 360 KB, compressible


@pytest.mark.parametrize("name", ["gzip", "snappy", "lz4", "zstd"])
def test_round_trip(name: str) -> None:
    assert getattr(codec, f"has_{name}")()
    encoded = getattr(codec, f"{name}_encode")(DATA)
    assert len(encoded) < len(DATA)
    assert getattr(codec, f"{name}_decode")(encoded) == DATA


def test_snappy_xerial_framing_and_raw_block() -> None:
    framed = codec.snappy_encode(DATA, xerial_compatible=True, xerial_blocksize=32 * 1024)
    assert framed.startswith(b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01")
    raw = codec.snappy_encode(DATA, xerial_compatible=False)
    assert not raw.startswith(b"\x82SNAPPY")
    assert codec.snappy_decode(framed) == codec.snappy_decode(raw) == DATA


def test_python_snappy_interoperates() -> None:
    snappy = pytest.importorskip("snappy", reason="the snappy extra installs python-snappy")
    assert snappy.decompress(codec.snappy_encode(DATA, xerial_compatible=False)) == DATA
    assert codec.snappy_decode(snappy.compress(DATA)) == DATA


def test_missing_library_raises_not_implemented(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "has_zstd", lambda: False)
    with pytest.raises(NotImplementedError, match="Zstd"):
        codec.zstd_encode(b"x")
