"""The admin client's per-item retry and error aggregation (no broker)."""

from __future__ import annotations

import asyncio
import time

import pytest

from aiokafka.admin._base import AdminBase, gather_all, raise_first
from aiokafka.cluster import AIOKafkaClient
from aiokafka.errors import (
    KafkaTimeoutError,
    NotControllerError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)


class _Admin(AdminBase):
    def __init__(self) -> None:
        self._client = AIOKafkaClient(retry_backoff_ms=1, request_timeout_ms=300)


async def test_only_retriable_items_are_sent_again() -> None:
    admin = _Admin()
    calls: list[list[str]] = []

    async def attempt(pending: list[str]) -> dict[str, object]:
        calls.append(pending)
        if len(calls) == 1:
            return {"a": "A", "b": NotControllerError("moved"), "c": TopicAlreadyExistsError("c")}
        return {k: k.upper() for k in pending}

    result = await admin._retry_items(["a", "b", "c"], attempt)
    assert calls == [["a", "b", "c"], ["b"]]
    assert result["a"] == "A" and result["b"] == "B"
    assert isinstance(result["c"], TopicAlreadyExistsError)
    assert list(result) == ["a", "b", "c"]


async def test_final_classes_are_not_retried() -> None:
    admin = _Admin()
    calls = 0

    async def attempt(pending: list[str]) -> dict[str, object]:
        nonlocal calls
        calls += 1
        return {"t": UnknownTopicOrPartitionError("t")}

    result = await admin._retry_items(["t"], attempt, final=(UnknownTopicOrPartitionError,))
    assert calls == 1 and isinstance(result["t"], UnknownTopicOrPartitionError)


async def test_deadline_gives_pending_items_their_last_error() -> None:
    admin = _Admin()

    async def attempt(pending: list[str]) -> dict[str, object]:
        return {"x": NotControllerError("still moving"), "y": 1}

    start = time.monotonic()
    result = await admin._retry_items(["x", "y"], attempt, deadline=time.monotonic() + 0.2)
    assert time.monotonic() - start < 2
    assert isinstance(result["x"], NotControllerError) and result["y"] == 1


async def test_non_retriable_exception_of_an_attempt_propagates() -> None:
    admin = _Admin()

    async def attempt(pending: list[str]) -> dict[str, object]:
        raise TopicAuthorizationFailedError("denied")

    with pytest.raises(TopicAuthorizationFailedError):
        await admin._retry_items(["x"], attempt)


async def test_retriable_exception_of_every_attempt_times_out() -> None:
    admin = _Admin()

    async def attempt(pending: list[str]) -> dict[str, object]:
        raise NotControllerError("no controller")

    result = await admin._retry_items(["x"], attempt, deadline=time.monotonic() + 0.1)
    assert isinstance(result["x"], NotControllerError)


def test_raise_first_names_every_failure() -> None:
    raise_first({"a": None, "b": 1})
    with pytest.raises(TopicAlreadyExistsError) as info:
        raise_first(
            {
                "a": TopicAlreadyExistsError("a exists"),
                "b": None,
                "c": UnknownTopicOrPartitionError("c unknown"),
            }
        )
    assert "2 of 3 failed" in str(info.value)
    assert "a exists" in str(info.value) and "c unknown" in str(info.value)
    single = TopicAlreadyExistsError("only")
    with pytest.raises(TopicAlreadyExistsError) as one:
        raise_first({"a": single})
    assert one.value is single


def test_timeout_error_class_is_not_retriable() -> None:
    # _retry_items relies on the client raising a non-retriable timeout at the deadline.
    assert not KafkaTimeoutError.retriable


async def test_gather_all_waits_for_every_call_and_raises_the_first_error() -> None:
    finished: list[str] = []

    async def call(name: str, delay: float, fail: bool = False) -> str:
        await asyncio.sleep(delay)
        finished.append(name)
        if fail:
            raise KafkaTimeoutError(name)
        return name

    assert await gather_all(call("a", 0.02), call("b", 0)) == ["a", "b"]
    finished.clear()
    with pytest.raises(KafkaTimeoutError, match="first"):
        await gather_all(call("first", 0, fail=True), call("slow", 0.05), call("x", 0.01, True))
    # The slower calls ran to their end before the error came out: nothing outlives it.
    assert sorted(finished) == ["first", "slow", "x"]
