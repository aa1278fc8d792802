"""Reconnect/retry back-off bounds."""

from __future__ import annotations

import pytest

from aiokafka.net.backoff import ExponentialBackoff


def test_grows_exponentially_without_jitter_and_caps() -> None:
    b = ExponentialBackoff(50, 1000, jitter=0)
    assert [b.delay_ms(n) for n in range(7)] == [50, 100, 200, 400, 800, 1000, 1000]
    assert b.delay(1) == pytest.approx(0.1)
    # Thousands of failures must not overflow.
    assert b.delay_ms(10_000) == 1000


def test_jitter_bounds_sampled() -> None:
    b = ExponentialBackoff(100, 1000, jitter=0.2)
    for attempt in range(6):
        base = min(100 * 2**attempt, 1000)
        samples = [b.delay_ms(attempt) for _ in range(300)]
        assert all(base * 0.8 <= s <= min(base * 1.2, 1000) for s in samples)
        # Jitter actually spreads the values (except where the cap flattens them).
        if base * 1.2 < 1000:
            assert max(samples) - min(samples) > base * 0.1


def test_jitter_extremes_with_injected_random() -> None:
    low = ExponentialBackoff(100, 1000, rand=lambda a, b: a)
    high = ExponentialBackoff(100, 1000, rand=lambda a, b: b)
    assert low.delay_ms(0) == pytest.approx(80)
    assert high.delay_ms(0) == pytest.approx(120)
    assert high.delay_ms(4) == 1000  # 1600 * 1.2 capped


def test_constant_when_max_not_above_initial() -> None:
    b = ExponentialBackoff(100, 100, jitter=0)
    assert {b.delay_ms(n) for n in range(5)} == {100}
    b2 = ExponentialBackoff(100, 10, jitter=0)  # max below initial: constant initial
    assert b2.delay_ms(3) == 100


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"initial_ms": -1, "max_ms": 1}, "initial_ms"),
        ({"initial_ms": 1, "max_ms": -1}, "max_ms"),
        ({"initial_ms": 1, "max_ms": 2, "multiplier": 0.5}, "multiplier"),
        ({"initial_ms": 1, "max_ms": 2, "jitter": 1.0}, "jitter"),
    ],
)
def test_rejects_bad_arguments(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ExponentialBackoff(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="attempts"):
        ExponentialBackoff(1, 2).delay_ms(-1)
