"""A read task's Arrow columns (``to_batch``) without a broker: nulls among values
(validity bitmap), null and empty keys, offsets with gaps (markers, compaction), both
timestamp types, headers; checked row by row against the records."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka.spark.reading import arrow_schema, to_batch
from aiokafka.structs import ConsumerRecord


def _record(
    offset: int, key: bytes | None, value: bytes | None, headers: Any = ()
) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(
        "topic-a", 3, offset, 1_700_000_000_000 + offset, offset % 2, key, value, None,
        -1 if key is None else len(key), -1 if value is None else len(value), headers,
    )  # fmt: skip


CASES = {
    "values only, contiguous": [_record(100 + i, None, b"v%d" % i) for i in range(50)],
    "keys, empty bytes, gaps": [
        _record(i * 3, b"k" * (i % 3), b"" if i % 4 else b"x") for i in range(50)
    ],
    "null values among values": [
        _record(i, b"k", None if i % 3 == 0 else b"v" * i) for i in range(50)
    ],
    "every value null": [_record(i, None, None) for i in range(7)],
    "one record": [_record(9, b"k", b"v")],
    "headers": [_record(i, None, b"v", (("h", b"x"),) if i % 2 else ()) for i in range(6)],
}


@pytest.mark.parametrize("records", CASES.values(), ids=list(CASES))
def test_columns_hold_the_records(records: list[ConsumerRecord[bytes, bytes]]) -> None:
    include_headers = any(r.headers for r in records)
    batch = to_batch(records, arrow_schema(include_headers))
    batch.validate(full=True)
    rows = batch.to_pylist()
    assert len(rows) == len(records)
    for row, r in zip(rows, records, strict=True):
        assert (row["key"], row["value"], row["topic"], row["partition"], row["offset"]) == (
            r.key, r.value, r.topic, r.partition, r.offset,
        )  # fmt: skip
        assert row["timestamp"].timestamp() * 1000 == pytest.approx(r.timestamp)
        assert row["timestampType"] == r.timestamp_type
        if include_headers:
            assert row["headers"] == [{"key": k, "value": v} for k, v in r.headers]
