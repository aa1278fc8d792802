"""RecordAccumulator.append_to_open: the C one (``_cfuture.c``) against the Python one,
record for record, and what it hands to the Python one."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from aiokafka.producer import accumulator
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.futures import RecordFuture
from aiokafka.record import CODEC_NONE, default_builder
from aiokafka.structs import TopicPartition

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
C_BUILT = accumulator.python_append_to_open is not RecordAccumulator.append_to_open
needs_c = pytest.mark.skipif(not C_BUILT, reason="the _cfuture extension is not built")


def options() -> dict[str, Any]:
    return {
        "batch_size": 40_000,
        "buffer_memory": 1_000_000,
        "linger_ms": 0,
        "delivery_timeout_ms": 60000,
        "retry_backoff_ms": 100,
        "codec": CODEC_NONE,
        "wakeup": lambda: None,
        "on_batch_closed": lambda tp: None,
    }


def make(**kw: Any) -> RecordAccumulator:
    return RecordAccumulator(**{**options(), **kw})


def records(n: int) -> list[tuple[Any, ...]]:
    """(tp, timestamp, key, value, headers): every kind of record, fixed timestamps."""
    out: list[tuple[Any, ...]] = []
    for i in range(n):
        tp = T1 if i % 7 == 3 else T0
        key = None if i % 3 else b"k%d" % i
        value = None if i % 11 == 5 else (b"v" * (i % 400))
        if i % 13 == 4:
            value = bytearray(value or b"")  # the builder's Python path converts it
        headers = [("h", b"x"), ("n", None)] if i % 17 == 2 else None
        out.append((tp, 1_700_000_000_000 + (i * 37) % 1000, key, value, headers))
    return out


def run(acc: RecordAccumulator, recs: list[tuple[Any, ...]]) -> list[Any]:
    """What each append gives, then each queued batch's encoding and the memory used."""
    seen: list[Any] = []
    batches: list[Any] = []
    for rec in recs:
        fut = acc.append(*rec)
        if fut is None:
            seen.append(None)
            continue
        results = fut._results
        if not any(results is b for b in batches):
            batches.append(results)
        number = next(i for i, b in enumerate(batches) if b is results)
        seen.append((number, fut._index, results.timestamps[fut._index]))
    built = [(b.tp, bytes(b.builder.build()), b.reserved) for b in acc.all_queued()]
    return [seen, built, acc.used_memory]


@needs_c
@pytest.mark.parametrize("buffer_memory", [1_000_000, 60_000], ids=["room", "tight"])
async def test_c_same_as_python_record_for_record(
    buffer_memory: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2,000 records of 0-400 bytes: batches that grow (16 KiB, 32 KiB, 40 KB), fill
    # up and roll over; with a tight buffer_memory, appends that find no room.
    recs = records(2000)
    c_run = run(make(buffer_memory=buffer_memory), recs)
    monkeypatch.setattr(RecordAccumulator, "append_to_open", accumulator.python_append_to_open)
    # The builder's add in Python too (its encoding stays C's append_record: the
    # record-level comparison of the two is test_record_cbuilder's).
    monkeypatch.setattr(default_builder, "_c_add", None)
    py_run = run(make(buffer_memory=buffer_memory), recs)
    assert c_run == py_run
    seen = c_run[0]
    batches = len({s[0] for s in seen if s is not None})
    if buffer_memory < 1_000_000:
        assert None in seen and batches >= 2
    else:
        assert None not in seen and batches > 3


@needs_c
async def test_c_future_is_untracked_with_its_index_and_timestamp() -> None:
    acc = make()
    first = acc.append(T0, None, None, b"a", None)  # a new batch: the Python path
    before = time.time_ns() // 1_000_000
    fut = acc.append_to_open(T0, None, b"k", b"b", None)
    after = time.time_ns() // 1_000_000
    assert type(fut) is RecordFuture and first is not None
    assert fut._results is first._results and fut._index == 1
    assert not gc.is_tracked(fut)
    assert before <= fut._results.timestamps[1] <= after
    assert fut._results.timestamps == [fut._results.timestamps[0], fut._results.timestamps[1]]
    assert acc.append_to_open(T1, None, None, b"c", None) is None  # no open batch of T1


@pytest.mark.parametrize("c", [True, False], ids=["c", "python"])
async def test_wrong_type_raises_and_appends_nothing(c: bool) -> None:
    acc = make()
    append_to_open = (
        acc.append_to_open if c else (lambda *a: accumulator.python_append_to_open(acc, *a))
    )
    fut = acc.append(T0, 5, None, b"a", None)
    assert fut is not None
    with pytest.raises(TypeError, match="value"):
        append_to_open(T0, 6, None, "text", None)
    with pytest.raises(TypeError, match="key"):
        append_to_open(T0, 6, 7, b"v", None)
    assert fut._results.timestamps == [5]
    builder = acc.all_queued()[0].builder
    assert builder.record_count == 1


@needs_c
async def test_c_hands_other_calls_to_python() -> None:
    class Sub(RecordAccumulator):
        pass

    sub = Sub(**options())
    assert sub.append(T0, 1, None, b"a", None) is not None
    fut = sub.append_to_open(T0, 2, None, b"b", None)  # a subclass: the Python path
    assert fut is not None and fut._index == 1 and gc.is_tracked(fut) is False
    acc = make()
    assert acc.append(T0, 1, None, b"a", None) is not None
    by_keyword = acc.append_to_open(T0, 2, None, value=b"b", headers=None)
    assert by_keyword is not None and by_keyword._index == 1
    with_headers = acc.append_to_open(T0, 3, None, b"c", [("h", b"x")])
    assert with_headers is not None and with_headers._index == 2
    with pytest.raises(TypeError):
        acc.append_to_open(T0, 4, None)  # too few arguments: Python's error
    assert RecordAccumulator.append_to_open.__doc__ == accumulator.python_append_to_open.__doc__


def test_no_extensions_keeps_the_python_append_to_open() -> None:
    code = (
        "from aiokafka.producer import accumulator as a; "
        "print(a.RecordAccumulator.append_to_open is a.python_append_to_open)"
    )
    env = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True"]
