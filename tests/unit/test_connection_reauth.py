"""When a connection re-authenticates (KIP-368): the schedule, on a fake clock."""

from __future__ import annotations

import random

import pytest

from aiokafka.net.reauth import MIN_INTERVAL_S, ReauthSchedule


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_no_lifetime_no_reauthentication() -> None:
    schedule = ReauthSchedule(clock=FakeClock())
    assert schedule.due is None and schedule.delay() is None
    schedule.session_started(1000.0, 0)
    assert schedule.due is None and schedule.expires is None and schedule.delay() is None


@pytest.mark.parametrize(("draw", "fraction"), [(0.0, 0.85), (0.5, 0.90), (0.999999, 0.95)])
def test_due_between_85_and_95_percent_of_the_lifetime(draw: float, fraction: float) -> None:
    clock = FakeClock(1000.0)
    schedule = ReauthSchedule(clock=clock, rng=lambda: draw)
    schedule.session_started(1000.0, 3_600_000)
    assert schedule.expires == 1000.0 + 3600
    assert schedule.due == pytest.approx(1000.0 + 3600 * fraction, abs=0.01)
    assert schedule.delay() == pytest.approx(3600 * fraction, abs=0.01)


def test_delay_counts_from_the_start_of_the_exchange_and_follows_the_clock() -> None:
    clock = FakeClock(1000.0)
    schedule = ReauthSchedule(clock=clock, rng=lambda: 0.0)
    # The exchange began 2 s ago (a slow token provider): the session is counted from
    # then, so the client errs early rather than late.
    schedule.session_started(998.0, 10_000)
    assert schedule.delay() == pytest.approx(6.5)
    clock.now += 6.0
    assert schedule.delay() == pytest.approx(0.5)
    clock.now += 60.0
    assert schedule.delay() == 0.0  # overdue: at once, never negative


def test_jitter_spreads_over_the_whole_window() -> None:
    rng = random.Random(368)
    schedule = ReauthSchedule(clock=FakeClock(0.0), rng=rng.random)
    fractions = []
    for _ in range(2000):
        schedule.session_started(0.0, 100_000)
        assert schedule.due is not None
        fractions.append(schedule.due / 100)
    assert all(0.85 <= f < 0.95 for f in fractions)
    assert min(fractions) < 0.855 and max(fractions) > 0.945
    # Roughly uniform: each tenth of the window gets its share.
    counts = [0] * 10
    for f in fractions:
        counts[min(9, int((f - 0.85) * 100))] += 1
    assert min(counts) > 120


def test_each_new_session_replaces_the_last() -> None:
    clock = FakeClock(0.0)
    schedule = ReauthSchedule(clock=clock, rng=lambda: 0.0)
    schedule.session_started(0.0, 10_000)
    clock.now = 8.5
    # Re-authenticated: the broker granted a shorter session (a token expiring sooner).
    schedule.session_started(8.5, 4_000)
    assert schedule.expires == 12.5
    assert schedule.delay() == pytest.approx(3.4)
    # ... then one without a lifetime: nothing more to do.
    schedule.session_started(12.0, 0)
    assert schedule.delay() is None


def test_short_lifetimes_respect_the_brokers_one_second_minimum() -> None:
    schedule = ReauthSchedule(clock=FakeClock(0.0), rng=lambda: 0.0)
    # 85% of 1.1 s is 0.935 s, but brokers refuse re-authenticating within 1 s.
    schedule.session_started(0.0, 1_100)
    assert schedule.due == MIN_INTERVAL_S
    # A session that ends before a re-authentication is allowed lapses: the broker
    # closes the connection at its next request and a new one is opened.
    schedule.session_started(0.0, 1_000)
    assert schedule.due is None and schedule.delay() is None
    assert schedule.expires == 1.0
