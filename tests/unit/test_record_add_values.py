"""``DefaultRecordBatchBuilder.add_values`` and ``BatchBuilder.append_values``: a run of
values appended in one call gives the batch that one ``add`` per value gives (same
bytes, same stopping point when the batch fills), with the C ``append_values`` and
without it, and reports bad values as ``add`` does.
"""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka.errors import IllegalStateError
from aiokafka.producer.records import BatchBuilder, RecordSerializer
from aiokafka.record import default_builder
from aiokafka.record.default_builder import DefaultRecordBatchBuilder

TS = 1_700_000_000_000


@pytest.fixture(params=["c", "python"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(default_builder, "_c_append_values", None)
    elif default_builder._c_append_values is None:
        pytest.skip("aiokafka.record._cbuilder was not built")
    return str(request.param)


def one_by_one(builder: DefaultRecordBatchBuilder, values: list[Any], start: int = 0) -> int:
    for i in range(start, len(values)):
        if builder.add(TS, None, values[i]) is None:
            return i
    return len(values)


VALUES = [None if i % 5 == 0 else bytes([i % 251]) * (i % 300) for i in range(400)]


@pytest.mark.parametrize("batch_size", [1 << 20, 5000, 200, 10])
@pytest.mark.parametrize("already", [0, 3])
def test_same_batch_as_one_add_per_value(path: str, batch_size: int, already: int) -> None:
    a = DefaultRecordBatchBuilder(batch_size=batch_size)
    b = DefaultRecordBatchBuilder(batch_size=batch_size)
    for builder in (a, b):  # records already in the batch, earlier timestamps
        for n in range(already):
            builder.add(TS - 5 + n, b"k", b"v" * n)
    stop = one_by_one(a, VALUES, 7)
    assert b.add_values(VALUES, 7, TS) == stop
    assert stop > 7 or already  # an empty batch takes its first record, whatever its size
    assert bytes(a.build()) == bytes(b.build())
    assert (a.record_count, a.size_in_bytes()) == (b.record_count, b.size_in_bytes())


def test_continues_where_it_stopped_in_a_new_batch(path: str) -> None:
    batches, i = [], 0
    while i < len(VALUES):
        builder = DefaultRecordBatchBuilder(batch_size=3000)
        i = builder.add_values(VALUES, i, TS)
        batches.append(builder.record_count)
    assert sum(batches) == len(VALUES) and len(batches) > 3


def test_bytes_like_values_go_through_add_and_bad_ones_raise_after_the_good(path: str) -> None:
    values: list[Any] = [b"a", bytearray(b"bb"), memoryview(b"ccc"), b"d", "text", b"e"]
    a = DefaultRecordBatchBuilder()
    b = DefaultRecordBatchBuilder()
    with pytest.raises(TypeError, match="record value must be bytes"):
        one_by_one(a, values)
    with pytest.raises(TypeError, match="record value must be bytes"):
        b.add_values(values, 0, TS)
    assert a.record_count == b.record_count == 4
    assert bytes(a.build()) == bytes(b.build())


def test_timestamp_defaults_to_now_and_built_batches_refuse(path: str) -> None:
    builder = DefaultRecordBatchBuilder()
    assert builder.add_values([b"x", b"y"]) == 2
    builder.build()
    with pytest.raises(IllegalStateError):
        builder.add_values([b"z"])


@pytest.mark.parametrize("serializer", [None, lambda v: v.encode()], ids=["plain", "serializer"])
def test_batch_builder_append_values(path: str, serializer: Any) -> None:
    values: list[Any] = ["v1", "v2"] if serializer else [b"v1", b"v2"]
    batch = BatchBuilder(RecordSerializer(None, serializer), DefaultRecordBatchBuilder())
    assert batch.append_values(values) == 2
    assert batch.append_values(values, 1) == 2
    assert batch.record_count() == 3
    batch.close()
    with pytest.raises(IllegalStateError):
        batch.append_values(values)
