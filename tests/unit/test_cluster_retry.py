"""The retry policy: the action table and the call_with_retry loop."""

from __future__ import annotations

import asyncio
import time

import pytest

from aiokafka.cluster import AIOKafkaClient, ClusterMetadata, CoordinatorType
from aiokafka.cluster.retry import Action, action_for
from aiokafka.errors import (
    CoordinatorNotAvailableError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NotControllerError,
    NotCoordinatorError,
    NotLeaderForPartitionError,
    RequestTimedOutError,
    SaslAuthenticationFailed,
    TopicAuthorizationFailedError,
    UnsupportedVersionError,
)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (NotLeaderForPartitionError(), Action.RETRY | Action.REFRESH_METADATA),
        (
            KafkaConnectionError(),
            Action.RETRY | Action.REFRESH_METADATA | Action.FIND_COORDINATOR,
        ),
        (RequestTimedOutError(), Action.RETRY | Action.FIND_COORDINATOR),
        (NotCoordinatorError(), Action.RETRY | Action.FIND_COORDINATOR),
        (CoordinatorNotAvailableError(), Action.RETRY | Action.FIND_COORDINATOR),
        (NotControllerError(), Action.RETRY | Action.REFRESH_METADATA),
        (SaslAuthenticationFailed(), Action.FAIL),
        (TopicAuthorizationFailedError(), Action.FAIL),
        (UnsupportedVersionError(), Action.FAIL),
        (ValueError("x"), Action.FAIL),
    ],
)
def test_action_table(exc: BaseException, expected: Action) -> None:
    assert action_for(exc) == expected


class Recorder:
    def __init__(self, client: AIOKafkaClient) -> None:
        self.refreshes = 0
        self.invalidated: list[tuple[str, CoordinatorType]] = []

        def refresh(reason: str) -> asyncio.Future[ClusterMetadata]:
            self.refreshes += 1
            done: asyncio.Future[ClusterMetadata] = asyncio.get_running_loop().create_future()
            done.set_result(client.cluster)
            return done

        def invalidate(key: str, key_type: CoordinatorType = CoordinatorType.GROUP) -> None:
            self.invalidated.append((key, key_type))

        client.request_refresh = refresh  # type: ignore[method-assign]
        client.invalidate_coordinator = invalidate  # type: ignore[method-assign]


class Attempts:
    """An operation that raises the given errors in turn, then returns "ok"."""

    def __init__(self, errors: list[BaseException]) -> None:
        self.errors = errors
        self.calls: list[float] = []

    async def __call__(self) -> str:
        self.calls.append(time.monotonic())
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_retries_retriable_errors_then_succeeds() -> None:
    client = AIOKafkaClient(retry_backoff_ms=50)
    rec = Recorder(client)
    fn = Attempts([NotLeaderForPartitionError(), RequestTimedOutError()])
    start = time.monotonic()
    assert await client.call_with_retry(fn) == "ok"
    assert len(fn.calls) == 3
    assert rec.refreshes == 1  # only the invalid-metadata error refreshes
    # Two back-offs of 50 ms +-20%.
    assert time.monotonic() - start >= 0.079


async def test_coordinator_invalidated() -> None:
    client = AIOKafkaClient(retry_backoff_ms=1)
    rec = Recorder(client)
    fn = Attempts([NotCoordinatorError(), CoordinatorNotAvailableError()])
    key = ("group-a", CoordinatorType.GROUP)
    assert await client.call_with_retry(fn, coordinator=key) == "ok"
    assert rec.invalidated == [key, key]
    assert rec.refreshes == 0


@pytest.mark.parametrize(
    "exc", [SaslAuthenticationFailed("bad password"), UnsupportedVersionError(), ValueError("x")]
)
async def test_non_retriable_raise_at_once(exc: BaseException) -> None:
    client = AIOKafkaClient(retry_backoff_ms=1)
    Recorder(client)
    fn = Attempts([exc])
    with pytest.raises(type(exc)):
        await client.call_with_retry(fn)
    assert len(fn.calls) == 1


async def test_deadline_gives_timeout_with_last_error() -> None:
    client = AIOKafkaClient(retry_backoff_ms=20)
    Recorder(client)
    errors: list[BaseException] = [RequestTimedOutError(f"#{i}") for i in range(1000)]
    fn = Attempts(errors)
    start = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        await client.call_with_retry(fn, time.monotonic() + 0.3)
    elapsed = time.monotonic() - start
    assert 0.3 <= elapsed < 0.6
    assert isinstance(info.value.__cause__, RequestTimedOutError)
    assert not info.value.retriable
    assert 5 <= len(fn.calls) <= 20


async def test_refresh_failure_does_not_abort_retry() -> None:
    client = AIOKafkaClient(retry_backoff_ms=1)

    def broken_refresh(reason: str) -> asyncio.Future[ClusterMetadata]:
        failed: asyncio.Future[ClusterMetadata] = asyncio.get_running_loop().create_future()
        failed.set_exception(KafkaConnectionError("no broker"))
        return failed

    client.request_refresh = broken_refresh  # type: ignore[method-assign]
    errors: list[KafkaError] = [NotLeaderForPartitionError()]
    fn = Attempts(list(errors))
    assert await client.call_with_retry(fn) == "ok"
