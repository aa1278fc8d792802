"""BatchResults.add_callback: the C one (``_cfuture.c``) against the Python one, for
registrations before an outcome, after one, around cancellation and through awaits."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import pytest

from aiokafka.producer import futures as futures_module
from aiokafka.producer.futures import BatchResults, RecordFuture, new_record_future
from aiokafka.structs import TopicPartition

C_BUILT = futures_module.python_add_callback is not BatchResults.add_callback
needs_c = pytest.mark.skipif(not C_BUILT, reason="the _cfuture extension is not built")


async def scenario() -> list[Any]:
    """Callbacks and awaits on a batch of 6 records, split in two outcomes, one record
    cancelled; what ran, in which order, with which outcome."""
    results = BatchResults(asyncio.get_running_loop(), TopicPartition("t", 0))
    futs = []
    for i in range(6):
        results.timestamps.append(1000 + i)
        futs.append(new_record_future(RecordFuture, results, i))
    seen: list[Any] = []

    def outcome(fut: RecordFuture) -> Any:
        if fut.cancelled():
            return "cancelled"
        error = fut.exception()
        return repr(error) if error is not None else fut.result().offset

    def note(tag: str) -> Any:
        return lambda fut: seen.append((tag, fut._index, outcome(fut)))

    for i, fut in enumerate(futs):
        fut.add_done_callback(note(f"before-{i}"))
    futs[1].add_done_callback(note("second"))
    waiter = asyncio.ensure_future(asyncio.gather(*futs[:3], return_exceptions=True))
    await asyncio.sleep(0)
    assert futs[4].cancel()
    futs[4].add_done_callback(note("after-cancel"))
    results.resolve(0, 3, 100, -1, 0)
    futs[0].add_done_callback(note("after-outcome"))
    futs[5].add_done_callback(note("before-fail"))
    await asyncio.sleep(0)
    results.fail(3, 6, ValueError("refused"))
    futs[3].add_done_callback(note("after-fail"))
    gathered = await waiter
    await asyncio.sleep(0)
    seen.append(("gathered", [getattr(r, "offset", r) for r in gathered]))
    # A batch with one outcome: callbacks of its done futures share a loop callback.
    done = BatchResults(asyncio.get_running_loop(), TopicPartition("t", 1))
    done_futs = []
    for i in range(4):
        done.timestamps.append(2000 + i)
        done_futs.append(new_record_future(RecordFuture, done, i))
    done.resolve(0, 4, 200, -1, 0)
    for i, fut in enumerate(done_futs):
        fut.add_done_callback(note(f"done-{i}"))
    again = await asyncio.gather(*done_futs, *futs[:2])
    seen.append(("gathered-done", [r.offset for r in again]))
    await asyncio.sleep(0)
    return seen


@needs_c
async def test_c_same_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    c_seen = await scenario()
    monkeypatch.setattr(BatchResults, "add_callback", futures_module.python_add_callback)
    py_seen = await scenario()
    assert c_seen == py_seen
    assert ("before-0", 0, 100) in c_seen and ("after-fail", 3, "ValueError('refused')") in c_seen
    assert ("after-cancel", 4, "cancelled") in c_seen
    assert ("gathered", [100, 101, 102]) in c_seen
    assert [e for e in c_seen if e[0].startswith("done-")] == [
        (f"done-{i}", i, 200 + i) for i in range(4)
    ]
    assert c_seen[-1] == ("gathered-done", [200, 201, 202, 203, 100, 101])


@needs_c
async def test_c_registers_as_python_does() -> None:
    results = BatchResults(asyncio.get_running_loop(), TopicPartition("t", 0))
    results.timestamps.append(1)
    fut = new_record_future(RecordFuture, results, 0)
    results.add_callback(fut, 0, print, None)
    results.add_callback(fut, 0, len, None)
    assert fut.remove_done_callback(print) == 1
    assert fut.remove_done_callback(len) == 1
    assert fut.remove_done_callback(len) == 0
    with pytest.raises(TypeError):
        results.add_callback(fut, 0, print)  # type: ignore[call-arg]  # Python's error
    assert BatchResults.add_callback.__doc__ == futures_module.python_add_callback.__doc__


def test_no_extensions_keeps_the_python_add_callback() -> None:
    code = (
        "from aiokafka.producer import futures as f; "
        "print(f.BatchResults.add_callback is f.python_add_callback)"
    )
    env = dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True"]
