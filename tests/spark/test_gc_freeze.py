"""The reused-process garbage collection tuning of :mod:`aiokafka.spark.runtime`:
``freeze_long_lived`` freezes once, at the second call of a role, and only in a
process PySpark reuses (no broker, no Spark)."""

from __future__ import annotations

import pytest

from aiokafka.spark import runtime


@pytest.fixture
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count gc.freeze calls instead of freezing the test process."""
    calls: list[int] = []
    monkeypatch.setattr(runtime.gc, "freeze", lambda: calls.append(1))
    monkeypatch.setattr(runtime, "_CALLS", {})
    return calls


def test_freezes_at_the_second_call_of_each_role_in_a_reused_worker(
    freezes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(runtime.REUSED_WORKER_ENV, "1")
    runtime.freeze_long_lived("read")
    assert freezes == []  # the first call loads what the role needs
    runtime.freeze_long_lived("read")
    assert len(freezes) == 1
    runtime.freeze_long_lived("read")
    runtime.freeze_long_lived("write")
    assert len(freezes) == 1
    runtime.freeze_long_lived("write")
    assert len(freezes) == 2


def test_does_nothing_outside_a_reused_worker(
    freezes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(runtime.REUSED_WORKER_ENV, raising=False)
    for _ in range(3):
        runtime.freeze_long_lived("read")
    assert freezes == []
