"""``create_batch()``'s :class:`BatchBuilder`: its shortcut for the common record (no
serializers, bytes, no headers, no timestamp) gives what the full path gives
(``RecordSerializer.serialize`` then the builder's ``append_next``), errors included,
with the C ``append_next`` and without it.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.errors import IllegalStateError
from aiokafka.producer import records
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


def _append_of(batch: BatchBuilder, c_batch: bool) -> Callable[..., Any]:
    """``batch.append``: the C one (when built) or the Python one."""
    return batch.append if c_batch else functools.partial(records.python_append, batch)


# Which C parts run: BatchBuilder.append and the builder's append_next, the latter
# only, none.
MODES = [(True, True), (False, True), (False, False)]


@pytest.mark.parametrize(("c_batch", "c_builder"), MODES)
@pytest.mark.parametrize(
    "serializers",
    [(None, None), (None, lambda v: v), (lambda k: k, None)],
    ids=["plain", "value-serializer", "key-serializer"],
)
def test_shortcut_same_as_full_path(
    c_batch: bool,
    c_builder: bool,
    serializers: tuple[Any, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not c_builder:
        monkeypatch.setattr(default_builder, "_c_append_next", None)
    serializer = RecordSerializer(*serializers)
    assert serializer.plain is (serializers == (None, None))
    a = DefaultRecordBatchBuilder(batch_size=2000)
    b = DefaultRecordBatchBuilder(batch_size=2000)
    batch = BatchBuilder(serializer, b)
    assert _outcomes(_full_path(serializer, a), a) == _outcomes(_append_of(batch, c_batch), b)
    assert batch.record_count() == a.record_count and batch.size() == a.size_in_bytes()
    # Timestamps given: the same bytes.
    a = DefaultRecordBatchBuilder(batch_size=1 << 20)
    b = DefaultRecordBatchBuilder(batch_size=1 << 20)
    batch = BatchBuilder(serializer, b)
    full = _full_path(serializer, a)
    append = _append_of(batch, c_batch)
    for i in range(20):
        assert append(value=b"v" * i, timestamp=TS + i) == full(value=b"v" * i, timestamp=TS + i)
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


class _Batch(BatchBuilder):
    __slots__ = ()


def _shape_outcome(call: Callable[[Any], object], c_batch: bool, cls: type[BatchBuilder]) -> object:
    batch = cls(RecordSerializer(None, None), DefaultRecordBatchBuilder())
    try:
        got = call(_append_of(batch, c_batch))
        return type(got), None if got is None else got[:2]  # type: ignore[index]
    except Exception as exc:
        return type(exc), str(exc)


def test_call_shapes() -> None:
    # What the C append leaves to Python fails or works as the Python append does,
    # for BatchBuilder and a subclass.
    calls: list[Callable[[Any], object]] = [
        lambda a: a(b"positional"),
        lambda a: a(value=b"v", nope=1),
        lambda a: a(**{"value": b"v", "key": b"k"}),
        lambda a: a(**{"".join(["val", "ue"]): b"a name not interned"}),
        lambda a: a(),
        lambda a: a(value=b"v", headers=None, timestamp=None, key=None),
    ]
    for call in calls:
        expected = _shape_outcome(call, False, BatchBuilder)
        assert _shape_outcome(call, True, BatchBuilder) == expected
        assert _shape_outcome(call, True, _Batch) == expected
    assert _shape_outcome(calls[0], True, BatchBuilder)[0] is TypeError  # type: ignore[index]
    assert _shape_outcome(calls[1], True, BatchBuilder)[0] is TypeError  # type: ignore[index]


def test_c_append_documented_as_the_python_one() -> None:
    assert BatchBuilder.append.__doc__ == records.python_append.__doc__ or (
        records._cbuilder is not None
        and (records.python_append.__doc__ or "") in (BatchBuilder.append.__doc__ or "")
    )


def test_no_extensions_keeps_the_python_append() -> None:
    code = (
        "from aiokafka.producer import records as r; "
        "print(r.BatchBuilder.append is r.python_append, r._cbuilder)"
    )
    env = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True", "None"]


def test_callers_may_set_their_own_attributes_as_with_aiokafka() -> None:
    """aiokafka 0.14's BatchBuilder is a plain class; ours keeps a ``__dict__`` beside
    the slots the C append uses, so code that tags a batch keeps working."""
    batch = BatchBuilder(RecordSerializer(None, None), DefaultRecordBatchBuilder(batch_size=1024))
    batch.tag = "retry-2"  # type: ignore[attr-defined]
    assert batch.tag == "retry-2"  # type: ignore[attr-defined]
    assert batch.append(value=b"v") is not None
    assert batch.record_count() == 1
