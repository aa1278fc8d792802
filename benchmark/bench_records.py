"""Record batch encode/decode speed: microseconds per 100-byte record.

Builds batches of 1000 records (10-byte key, 90-byte value, no headers) with
each codec, then reads them back touching every key and value, and prints
µs per record for both directions. Pure Python, single thread.

Usage: ``python -m benchmark.bench_records [--records N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import random
import time

from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    DefaultRecordBatchBuilder,
    MemoryRecords,
    codec_name,
)

CODECS = (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD)


def _payloads(count: int) -> list[tuple[bytes, bytes]]:
    rng = random.Random(42)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"kafka", b"record", b"batch", b"value"]
    out = []
    for i in range(count):
        value = b" ".join(rng.choice(words) for _ in range(20))[:90].ljust(90, b".")
        out.append((b"key-%06d" % i, value))
    return out


def _build(codec: int, payloads: list[tuple[bytes, bytes]], timestamp: int) -> bytearray:
    builder = DefaultRecordBatchBuilder(compression_type=codec, batch_size=1 << 30)
    append = builder.append
    for offset, (key, value) in enumerate(payloads):
        append(offset, timestamp, key, value, None)
    return builder.build()


def _read(blob: bytes) -> int:
    touched = 0
    for batch in MemoryRecords(blob):
        for _offset, _ts, key, value, _headers, _size in batch.record_tuples():
            touched += len(key) + len(value)  # type: ignore[arg-type]
    return touched


def _read_objects(blob: bytes) -> int:
    touched = 0
    for batch in MemoryRecords(blob):
        for record in batch:
            touched += len(record.key) + len(record.value)  # type: ignore[arg-type]
    return touched


def _best(fn: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1000, help="records per batch")
    parser.add_argument("--repeat", type=int, default=30, help="runs; the best is reported")
    args = parser.parse_args()
    n = args.records
    payloads = _payloads(n)
    timestamp = 1_700_000_000_000
    print(f"{n} records of 100 bytes per batch, best of {args.repeat} runs, µs per record")
    print(f"{'codec':8} {'build':>8} {'read':>8} {'read(obj)':>10} {'batch bytes':>12}")
    for codec in CODECS:
        blob = bytes(_build(codec, payloads, timestamp))
        build = _best(lambda codec=codec: _build(codec, payloads, timestamp), args.repeat)
        read = _best(lambda blob=blob: _read(blob), args.repeat)
        read_obj = _best(lambda blob=blob: _read_objects(blob), args.repeat)
        print(
            f"{codec_name(codec):8} {build / n * 1e6:8.3f} {read / n * 1e6:8.3f} "
            f"{read_obj / n * 1e6:10.3f} {len(blob):12d}"
        )


if __name__ == "__main__":
    main()
