"""``create_batch()``'s :class:`BatchBuilder`: its shortcut for the common record (no
serializers, bytes, no headers, no timestamp) gives what the full path gives
(``RecordSerializer.serialize`` then the builder's ``append_next``), errors included,
with the C ``append_next`` and without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.errors import IllegalStateError
from aiokafka.producer.records import BatchBuilder, RecordSerializer
from aiokafka.record import default_builder
from aiokafka.record.default_builder import DefaultRecordBatchBuilder

TS = 1_700_000_000_000


class _Bytes(bytes):
    pass


# append() keyword arguments; no timestamp=None (now) where bytes are compared.
RECORDS: list[dict[str, Any]] = [
    {"value": b"v" * 100},
    {"key": b"k", "value": b"v"},
    {"key": None, "value": None},
    {"key": b"", "value": b""},
    {"value": b"v", "timestamp": TS},
    {"value": b"v", "timestamp": TS + 5, "headers": [("h", b"x"), ("n", None)]},
    {"value": b"v", "headers": []},
    {"key": bytearray(b"ba"), "value": memoryview(b"mv")},
    {"key": _Bytes(b"sub"), "value": b"v"},
    {"key": "text", "value": b"v"},
    {"value": 42},
    {"value": b"v", "headers": [("h", 3)]},
    {"value": b"v", "headers": "not pairs"},
    {"value": b"v", "timestamp": -1},
    {"value": b"v", "timestamp": 1.5},
    {"value": b"v", "timestamp": True},
    {"value": b"v" * 3000},  # past batch_size: refused (None)
    {"value": b"last"},
]


def _full_path(
    serializer: RecordSerializer, builder: DefaultRecordBatchBuilder
) -> Callable[..., Any]:
    """What BatchBuilder.append did before its shortcut."""

    def append(
        *, key: Any = None, value: Any = None, timestamp: Any = None, headers: Any = None
    ) -> Any:
        key, value, headers = serializer.serialize(key, value, headers, timestamp)
        return builder.append_next(timestamp, key, value, headers)

    return append


def _outcomes(append: Callable[..., Any], builder: DefaultRecordBatchBuilder) -> list[object]:
    seen: list[object] = []
    for record in RECORDS:
        try:
            got = append(**record)
            # timestamp=None means now: compare all but the timestamp of such records.
            seen.append((type(got), None if got is None else got[:2]))
        except Exception as exc:
            seen.append((type(exc), re.sub(r" at 0x[0-9a-f]+", "", str(exc))))
        seen.append(builder.record_count)
    return seen


@pytest.mark.parametrize("c_path", [True, False])
@pytest.mark.parametrize(
    "serializers",
    [(None, None), (None, lambda v: v), (lambda k: k, None)],
    ids=["plain", "value-serializer", "key-serializer"],
)
def test_shortcut_same_as_full_path(
    c_path: bool, serializers: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not c_path:
        monkeypatch.setattr(default_builder, "_c_append_next", None)
    serializer = RecordSerializer(*serializers)
    assert serializer.plain is (serializers == (None, None))
    a = DefaultRecordBatchBuilder(batch_size=2000)
    b = DefaultRecordBatchBuilder(batch_size=2000)
    batch = BatchBuilder(serializer, b)
    assert _outcomes(_full_path(serializer, a), a) == _outcomes(batch.append, b)
    assert batch.record_count() == a.record_count and batch.size() == a.size_in_bytes()
    # Timestamps given: the same bytes.
    a = DefaultRecordBatchBuilder(batch_size=1 << 20)
    b = DefaultRecordBatchBuilder(batch_size=1 << 20)
    batch = BatchBuilder(serializer, b)
    full = _full_path(serializer, a)
    for i in range(20):
        assert batch.append(value=b"v" * i, timestamp=TS + i) == full(
            value=b"v" * i, timestamp=TS + i
        )
    assert bytes(batch.close_for_send().build()) == bytes(a.build())


def test_serializers_apply_to_bytes_too() -> None:
    serializer = RecordSerializer(lambda k: b"K" + k, lambda v: b"V" + v)
    builder = DefaultRecordBatchBuilder()
    batch = BatchBuilder(serializer, builder)
    md = batch.append(key=b"k", value=b"v")
    assert md is not None and md.offset == 0
    expected = DefaultRecordBatchBuilder()
    expected.append(0, md.timestamp, b"Kk", b"Vv")
    assert bytes(builder.build()) == bytes(expected.build())


@pytest.mark.parametrize("how", ["close", "close_for_send"])
def test_append_after_close(how: str) -> None:
    batch = BatchBuilder(RecordSerializer(None, None), DefaultRecordBatchBuilder())
    assert batch.append(value=b"v") is not None
    getattr(batch, how)()
    with pytest.raises(IllegalStateError, match="send_batch"):
        batch.append(value=b"late")
    assert batch.record_count() == 1
