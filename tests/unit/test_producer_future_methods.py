"""RecordFuture's per-record methods: the C versions (``_cfuture.c``) give what the
Python ones (``futures._PyFutureMethods``) give, in every state a batch's records can
be in. Without the C extension both sides are the Python methods."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka.errors import KafkaError, RequestTimedOutError
from aiokafka.producer import futures
from aiokafka.producer.futures import BatchResults, RecordFuture
from aiokafka.structs import TopicPartition

TP = TopicPartition("t", 3)
COUNT = 4


if futures._cfuture is None:
    PurePythonFuture = RecordFuture  # its methods are the Python ones already
else:

    class PurePythonFuture(futures._PyFutureMethods, RecordFuture):  # type: ignore[no-redef]
        """A RecordFuture whose per-record methods are the Python ones."""

        __slots__ = ()


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("value", call())
    except BaseException as exc:  # the outcome is what the tests compare
        return ("raised", (type(exc), exc.args))


def describe(fut: RecordFuture) -> list[Any]:
    return [
        fut.done(),
        fut.cancelled(),
        outcome(fut.result),
        outcome(lambda: (lambda e: None if e is None else (type(e), e.args))(fut.exception())),
        fut.get_loop(),
    ]


# Each case moves a fresh batch of COUNT records to one state.
CASES: dict[str, Callable[[BatchResults, list[RecordFuture]], None]] = {
    "pending": lambda r, fs: None,
    "acknowledged": lambda r, fs: r.resolve(0, COUNT, 100, -1, 7),
    "log-append-time": lambda r, fs: r.resolve(0, COUNT, 100, 1_700_000_000_000, -1),
    "duplicate-no-offset": lambda r, fs: r.resolve(0, COUNT, -1, -1, -1),
    "acks-0": lambda r, fs: r.resolve_unacknowledged(0, COUNT),
    "failed": lambda r, fs: r.fail(0, COUNT, RequestTimedOutError("slow")),
    "split": lambda r, fs: (r.resolve(0, 2, 50, -1, -1), r.fail(2, 3, KafkaError("x"))),
    "cancelled": lambda r, fs: (fs[1].cancel(), r.resolve(0, COUNT, 10, -1, -1)),
    "cancelled-pending": lambda r, fs: fs[2].cancel(),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_c_methods_answer_as_the_python_ones(case: str) -> None:
    loop = asyncio.get_running_loop()
    seen = []
    for cls in (RecordFuture, PurePythonFuture):
        results = BatchResults(loop, TP)
        results.timestamps.extend(range(1000, 1000 + COUNT))
        fs = [futures.new_record_future(cls, results, i) for i in range(COUNT)]
        CASES[case](results, fs)
        seen.append([describe(f) for f in fs])
    assert seen[0] == seen[1]


async def test_acknowledged_metadata_fields() -> None:
    loop = asyncio.get_running_loop()
    results = BatchResults(loop, TP)
    results.timestamps.extend([5, 6])
    fs = [futures.new_record_future(RecordFuture, results, i) for i in range(2)]
    results.resolve(0, 2, 100, -1, 7)
    md = fs[1].result()
    assert type(md).__name__ == "RecordMetadata"
    assert md == ("t", 3, TP, 101, 6, 0, 7)
    assert (md.topic, md.offset, md.timestamp_type, md.log_start_offset) == ("t", 101, 0, 7)
    assert await asyncio.gather(*fs) == [fs[0].result(), md]


async def test_add_done_callback_runs_in_order_with_the_given_or_copied_context() -> None:
    loop = asyncio.get_running_loop()
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    results = BatchResults(loop, TP)
    results.timestamps.extend(range(3))
    fs = [futures.new_record_future(RecordFuture, results, i) for i in range(3)]
    ran: list[tuple[int, str]] = []

    def record(fut: RecordFuture) -> None:
        ran.append((fut.result().offset, var.get()))

    var.set("copied")
    fs[2].add_done_callback(record)
    given = contextvars.copy_context()
    given.run(var.set, "given")
    fs[0].add_done_callback(record, context=given)
    var.set("later")  # the copy was taken when the callback was added
    results.resolve(0, 3, 0, -1, -1)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert ran == [(2, "copied"), (0, "given")]


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.add_done_callback(),
        lambda f: f.add_done_callback(print, print),
        lambda f: f.add_done_callback(print, ctx=None),
    ],
)
async def test_add_done_callback_bad_arguments_raise_type_error(
    call: Callable[[Any], Any],
) -> None:
    results = BatchResults(asyncio.get_running_loop(), TP)
    results.timestamps.append(0)
    fut = futures.new_record_future(RecordFuture, results, 0)
    with pytest.raises(TypeError):
        call(fut)
