"""The C half of ``async for`` (``_cready.Anext`` and ``_cready.RecordCursor``): the
same outcomes as the Python ``__anext__`` and ``take_fast`` they stand in for, and
the Python ones still work without the extension."""

from __future__ import annotations

import gc
import os
import weakref
from typing import Any

import pytest

from aiokafka.consumer import fetch_records
from aiokafka.consumer import ready as ready_module
from tests.support.extensions import output_without_extensions, run_tests_without_extensions

cready = ready_module._cready
RECORD_TESTS = os.path.join(os.path.dirname(__file__), "test_consumer_records.py")
needs_c = pytest.mark.skipif(cready is None, reason="C extension not built")


class Buffer:
    def __init__(self, *records: Any) -> None:
        self.records = list(records)
        self.calls = 0

    def next_record_fast(self) -> Any:
        self.calls += 1
        item = self.records.pop(0) if self.records else None
        if isinstance(item, BaseException):
            raise item
        return item


class Subs:
    returnable: frozenset[Any] | None = None


class Membership:
    polls = 0

    def poll_called(self) -> None:
        self.polls += 1


class Consumer:
    """What Anext reads of AIOKafkaConsumer: ``_membership`` and ``_next_via_getone``."""

    def __init__(self) -> None:
        self._membership: Membership | None = None
        self.slow = 0

    async def _next_via_getone(self) -> str:
        self.slow += 1
        return "from getone"


@needs_c
async def test_a_buffered_record_is_ready_and_each_gap_goes_to_getone() -> None:
    consumer, subs = Consumer(), Subs()
    buffer = Buffer("a", "b", None, "c")
    it = cready.Anext(consumer, buffer, subs)
    assert it.__aiter__() is it
    got = [await it.__anext__() for _ in range(4)]
    assert got == ["a", "b", "from getone", "c"] and consumer.slow == 1
    # Partitions held back in a rebalance: every record comes through getone().
    subs.returnable = frozenset()
    assert await it.__anext__() == "from getone" and buffer.calls == 4
    subs.returnable = None
    # In a group every record notes the poll (max_poll_interval_ms), as __anext__ does.
    consumer._membership = Membership()
    buffer.records = ["d", "e"]
    async for rec in it:
        assert rec in ("d", "e", "from getone")
        if rec == "from getone":
            break
    assert consumer._membership.polls == 3


@needs_c
async def test_a_deserializer_error_is_raised_by_the_call() -> None:
    it = cready.Anext(Consumer(), Buffer(ValueError("bad value")), Subs())
    with pytest.raises(ValueError, match="bad value"):
        it.__anext__()  # not by the await: as the Python __anext__ raises it
    with pytest.raises(TypeError):
        cready.Anext(Consumer(), Buffer())  # type: ignore[call-arg]


@needs_c
def test_a_cycle_through_the_iterator_is_collected() -> None:
    consumer = Consumer()
    it = cready.Anext(consumer, Buffer(), Subs())
    consumer.it = it  # type: ignore[attr-defined]
    ref = weakref.ref(consumer)
    del consumer, it
    gc.collect()
    assert ref() is None


@needs_c
def test_the_record_cursor_base_is_the_c_one() -> None:
    assert fetch_records.PartitionRecords.__mro__[1] is cready.RecordCursor
    base = cready.RecordCursor()
    for name in ("_recs", "_recs_idx", "_within_end", "state"):
        with pytest.raises(AttributeError):
            getattr(base, name)  # unset members raise, as unset slots do
    with pytest.raises(AttributeError):
        base.take_fast()  # no PartitionRecords._take_fast_slow to hand the case to
    # Indexes that are not small ints are the Python method's case, not an error here.
    base._recs, base._recs_idx, base._within_end = ["a"], 1 << 70, 1 << 71
    with pytest.raises(AttributeError, match="_take_fast_slow"):
        base.take_fast()


def test_without_extensions_the_python_cursor_and_iterator_serve() -> None:
    """The PartitionRecords tests (take_fast among them) on the pure-Python base, in
    a process where the extensions are switched off."""
    check = (
        "from aiokafka.consumer import fetch_records as f, ready as r; "
        "print(f.PartitionRecords.__mro__[1] is f._PyRecordCursor, r.fast_anext is None)"
    )
    assert output_without_extensions(check) == ["True", "True"]
    run_tests_without_extensions(RECORD_TESTS)
