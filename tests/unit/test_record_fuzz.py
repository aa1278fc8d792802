"""Fuzzing the readers: any input gives records or a typed KafkaError, quickly.

Never IndexError, struct.error, UnicodeDecodeError, zlib.error, lz4/zstd
exceptions, hangs or huge allocations.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka.errors import CorruptRecordError, KafkaError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CONTROL_COMMIT,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    LegacyRecordBatch,
    LegacyRecordBatchBuilder,
    MemoryRecords,
    build_control_batch,
)

# Each fuzz input is small; anything slower than this is a bug (e.g. a loop
# that does not consume input, or a decompression that is not capped).
TIME_LIMIT_S = 1.0
MAX_DECOMPRESSED = 1 << 20

FUZZ_SETTINGS = settings(
    max_examples=300,
    deadline=None,  # the explicit TIME_LIMIT_S check below is the time bound
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


def _corpus() -> list[bytes]:
    """Valid blobs of every shape the reader supports."""
    blobs = []
    rng = random.Random(7)
    for codec in (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD):
        builder = DefaultRecordBatchBuilder(
            compression_type=codec, producer_id=3, producer_epoch=1, base_sequence=0
        )
        for i in range(6):
            headers = [("h", b"x"), ("n", None)] if i % 2 else []
            key = None if i == 3 else rng.randbytes(rng.randrange(0, 20))
            builder.append(i, 1000 + i * 100, key, rng.randbytes(rng.randrange(0, 150)), headers)
        blobs.append(bytes(builder.build()))
    for magic in (0, 1):
        for codec in (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4):
            legacy = LegacyRecordBatchBuilder(magic, codec)
            for i in range(4):
                legacy.append(i, 5000 + i, b"key", rng.randbytes(30))
            blobs.append(bytes(legacy.build()))
    blobs.append(
        bytes(
            build_control_batch(
                CONTROL_COMMIT, producer_id=3, producer_epoch=1, coordinator_epoch=2
            )
        )
    )
    return blobs


CORPUS = _corpus()
MIXED = b"".join(CORPUS)


def _consume(data: bytes, check_crc: bool) -> int:
    """Read everything in ``data``; return the number of records decoded."""
    count = 0
    records = MemoryRecords(data, check_crc=check_crc, max_decompressed_size=MAX_DECOMPRESSED)
    for batch in records:
        for record in batch:
            count += 1
            _ = (record.offset, record.timestamp, record.key, record.value, record.headers)
    return count


def _read_safely(data: bytes, check_crc: bool = True) -> int | None:
    """Records decoded, or None on a typed error; anything else fails the test."""
    start = time.perf_counter()
    try:
        return _consume(data, check_crc)
    except KafkaError:
        return None
    finally:
        assert time.perf_counter() - start < TIME_LIMIT_S


def _read_batch_directly(data: bytes) -> None:
    """Batch constructors on arbitrary bytes must fail cleanly too."""
    for cls in (DefaultRecordBatch, LegacyRecordBatch):
        try:
            batch = cls(data, check_crc=False, max_decompressed_size=MAX_DECOMPRESSED)
            batch.record_tuples()
            list(batch)
        except KafkaError:
            pass


def test_corpus_is_valid() -> None:
    assert _read_safely(MIXED) == 6 * 5 + 4 * 2 + 4 * 6 + 1


@FUZZ_SETTINGS
@given(st.binary(max_size=600))
def test_random_bytes(data: bytes) -> None:
    _read_safely(data, check_crc=False)
    _read_safely(data, check_crc=True)
    _read_batch_directly(data)


@FUZZ_SETTINGS
@given(st.sampled_from(CORPUS), st.binary(min_size=1, max_size=300))
def test_valid_header_random_body(blob: bytes, tail: bytes) -> None:
    # Keep a plausible header so the fuzzing reaches the record decoders.
    for head in (61, 26, 34):
        data = bytearray(blob[:head] + tail)
        if len(data) >= 12:
            data[8:12] = (len(data) - 12).to_bytes(4, "big", signed=True)
        _read_safely(bytes(data), check_crc=False)
        _read_batch_directly(bytes(data))


@FUZZ_SETTINGS
@given(
    st.sampled_from(CORPUS),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 7)), min_size=1, max_size=4),
)
def test_bit_flips(blob: bytes, flips: list[tuple[int, int]]) -> None:
    data = bytearray(blob)
    for position, bit in flips:
        data[position % len(data)] ^= 1 << bit
    flipped = bytes(data)
    _read_safely(flipped, check_crc=False)
    _read_safely(flipped, check_crc=True)
    _read_batch_directly(flipped)


@FUZZ_SETTINGS
@given(st.sampled_from(CORPUS), st.integers(0, 10_000), st.integers(0, 255))
def test_crc_catches_single_byte_changes_in_v2_records(
    blob: bytes, position: int, value: int
) -> None:
    if blob[16] != 2:
        return
    data = bytearray(blob)
    position = 21 + position % (len(data) - 21)  # inside the CRC's coverage
    if data[position] == value:
        return
    data[position] = value
    assert _read_safely(bytes(data), check_crc=True) is None


def test_every_truncation_is_a_clean_prefix() -> None:
    # A Fetch response may cut the last batch anywhere: the reader returns
    # the complete batches before the cut, identical to the originals, and
    # never raises.
    batches = list(MemoryRecords(MIXED))
    expected = [[(r.offset, r.key, r.value) for r in batch] for batch in batches]
    ends = [0]
    for batch in batches:
        ends.append(ends[-1] + batch.size_in_bytes)
    for cut in range(len(MIXED) + 1):
        got = [[(r.offset, r.key, r.value) for r in batch] for batch in MemoryRecords(MIXED[:cut])]
        assert got == expected[: len(got)], cut
        # exactly the batches that end at or before the cut
        assert len(got) == max(i for i, end in enumerate(ends) if end <= cut), cut


def test_truncated_single_batches_are_typed_errors() -> None:
    for blob in CORPUS:
        for cut in range(len(blob)):
            _read_batch_directly(blob[:cut])


@pytest.mark.parametrize("seed", range(3))
def test_seeded_random_mutations(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        data = bytearray(rng.choice(CORPUS))
        for _ in range(rng.randrange(1, 6)):
            action = rng.randrange(3)
            pos = rng.randrange(len(data))
            if action == 0:
                data[pos] = rng.randrange(256)
            elif action == 1:
                del data[pos : pos + rng.randrange(1, 8)]
            else:
                data[pos:pos] = os.urandom(rng.randrange(1, 8))
            if not data:
                break
        _read_safely(bytes(data), check_crc=False)
        _read_batch_directly(bytes(data))


@pytest.mark.timeout(120)
def test_short_fuzz_run_of_every_record_reader() -> None:
    """10,000 inputs of `make fuzz`'s record half (v2, fast path and legacy in every
    codec, MemoryRecords): only typed errors, every reader reached."""
    from tools.fuzz.runner import run_fuzz

    report = run_fuzz(10_000, workers=0, seed=13, groups="records", limit_ms=1000.0)
    details = "\n".join(f"{f.kind} {f.target}: {f.error}\n{f.trace}" for f in report.failures)
    assert report.failure_count == 0, details
    assert report.inputs == 10_000
    assert {"CorruptRecordError", "ok"} <= set(report.outcomes)
    codecs = ("none", "gzip", "snappy", "lz4", "zstd")
    readers = {f"{kind}/{codec}" for kind in ("v2", "fast") for codec in codecs}
    readers |= {f"legacy-v{magic}/{c}" for magic in (0, 1) for c in codecs[:4]}
    assert readers | {"memory/mixed"} <= set(report.per_target)


# -- The fuzz harness itself catches what it must (else a clean run proves nothing) --------


def _broken_targets(run: Any) -> Any:
    from tools.fuzz.mutate import Seed
    from tools.fuzz.targets import Target

    def make() -> list[Any]:
        seeds = (Seed(bytes(range(40))), Seed(b"\x00" * 40))
        return [Target("broken/reader", "records", seeds, run, (CorruptRecordError,))]

    return make


def _index_error_on_ff(data: bytes, checked: bool) -> None:
    if b"\xff" in data:
        raise IndexError("decoder bug")
    if len(data) < 40:
        raise CorruptRecordError("short")


@pytest.mark.timeout(60)
def test_fuzz_harness_reports_untyped_errors_with_reproducers(tmp_path: Any) -> None:
    from tools.fuzz.runner import run_fuzz

    report = run_fuzz(
        2000, workers=0, seed=1, out_dir=tmp_path, targets=_broken_targets(_index_error_on_ff)
    )
    assert report.failure_count > 0
    assert {f.kind for f in report.failures} == {"untyped"}
    assert "CorruptRecordError" in report.outcomes and "ok" in report.outcomes
    saved = json.loads(report.saved[0].read_text())
    assert saved["target"] == "broken/reader"
    assert "IndexError: decoder bug" in saved["error"]
    with pytest.raises(IndexError):
        _index_error_on_ff(bytes.fromhex(saved["data_hex"]), saved["checked"])


def _allocate_from_length(data: bytes, checked: bool) -> None:
    # A decoder that trusts a length field: 2 GiB, lazily zeroed, so RSS alone would
    # not show it; the workers' address-space cap turns it into MemoryError.
    if data and data[0] == 0xFF:
        bytearray(2**31)
    raise CorruptRecordError("typed")


def _slow_on_ff(data: bytes, checked: bool) -> None:
    if data and data[0] == 0xFF:
        time.sleep(0.15)
    raise CorruptRecordError("typed")


@pytest.mark.timeout(120)
def test_fuzz_harness_workers_catch_huge_allocations_and_slow_inputs() -> None:
    from tools.fuzz.runner import run_fuzz

    big = run_fuzz(300, workers=1, seed=2, targets=_broken_targets(_allocate_from_length))
    assert big.failure_count > 0
    assert all("MemoryError" in f.error for f in big.failures)
    assert big.growth_bytes < 100 * 1024 * 1024
    slow = run_fuzz(300, workers=1, seed=2, targets=_broken_targets(_slow_on_ff))
    assert slow.failure_count > 0
    assert {f.kind for f in slow.failures} == {"slow"}
    assert slow.slowest_ms >= 100


def _segfault_on_ff(data: bytes, checked: bool) -> None:
    # What a C decoder's out-of-bounds read does to the process.
    if data and data[0] == 0xFF:
        os.kill(os.getpid(), signal.SIGSEGV)
    raise CorruptRecordError("typed")


@pytest.mark.timeout(120)
def test_fuzz_harness_finds_the_input_that_crashed_a_worker() -> None:
    from tools.fuzz.runner import CHUNK, run_fuzz

    report = run_fuzz(2 * CHUNK, workers=1, seed=3, targets=_broken_targets(_segfault_on_ff))
    crashes = [f for f in report.failures if f.kind == "crash"]
    assert crashes and len(crashes) == report.failure_count
    assert all(f.data_hex.startswith("ff") for f in crashes)
    assert all(f"signal {int(signal.SIGSEGV)}" in f.error for f in crashes)


@pytest.mark.timeout(60)
def test_fuzz_runs_are_deterministic() -> None:
    # Seeds built anew for each run (a seed stamped with "now" once made runs differ).
    from tools.fuzz.runner import run_fuzz

    first, second = (run_fuzz(4000, workers=0, seed=5, groups="records") for _ in range(2))
    assert first.outcomes == second.outcomes
    assert first.per_target == second.per_target
