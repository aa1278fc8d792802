"""``Sensor.record`` in C (``_csensor.SensorFields``): the same state as the Python
``record`` it stands in for, the same errors, and the Python one still used without the
extension."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aiokafka._extensions import load_extension
from aiokafka.metrics import stats
from tests.support.extensions import output_without_extensions, run_tests_without_extensions

csensor: Any = load_extension("aiokafka.metrics._csensor")
needs_c = pytest.mark.skipif(csensor is None, reason="C extension not built")
METRICS_TESTS = os.path.join(os.path.dirname(__file__), "test_metrics.py")

FIELDS = stats._PySensorFields.__slots__
py_record = stats._PySensorFields.record


def state(sensor: stats.Sensor) -> dict[str, Any]:
    return {name: getattr(sensor, name) for name in FIELDS}


def pair(start: float = 1000.0) -> tuple[stats.Sensor, stats.Sensor]:
    """Two sensors in the same state: one for the C record, one for the Python one."""
    c, py = stats.Sensor(), stats.Sensor()
    for s in (c, py):
        s._start = s._p_start = start
    return c, py


def assert_same(c: stats.Sensor, py: stats.Sensor) -> None:
    got, want = state(c), state(py)
    assert got == want
    # Counts stay ints and sums floats (the C members are Py_ssize_t and double).
    for name in ("_base_n", "_n", "_p_n"):
        assert type(got[name]) is int
    for name in ("_base_sum", "_sum", "_p_sum"):
        assert type(got[name]) is float is type(want[name])


@needs_c
def test_sensor_is_built_on_the_c_fields() -> None:
    assert stats.Sensor.__mro__[1] is csensor.SensorFields
    assert stats.Sensor.record is csensor.SensorFields.record
    assert csensor.WINDOW == stats.WINDOW
    assert not hasattr(stats.Sensor(), "__dict__")


@needs_c
def test_a_new_sensor_starts_empty() -> None:
    s = stats.Sensor()
    assert (s.count, s.total, s.max(s._start), s.avg(s._start)) == (0, 0.0, 0.0, 0.0)
    assert s._max == s._p_max == float("-inf")


@needs_c
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.integers(-(10**6), 10**6),
                st.floats(-1e9, 1e9, allow_nan=False),
                st.booleans(),
            ),
            # Steps in time, some past one or two windows (rolls).
            st.one_of(st.floats(0, 5), st.sampled_from([0.0, 29.999, 30.0, 45.0, 60.0, 95.5])),
        ),
        max_size=60,
    )
)
def test_c_record_gives_the_python_state(steps: list[tuple[float, float]]) -> None:
    c, py = pair()
    now = 1000.0
    for value, step in steps:
        now += step
        c.record(value, now)
        py_record(py, value, now)
        assert_same(c, py)
        assert (c.count, c.total, c.windowed(now), c.max(now), c.rate(now)) == (
            py.count,
            py.total,
            py.windowed(now),
            py.max(now),
            py.rate(now),
        )


@needs_c
def test_arguments_by_keyword_and_defaults() -> None:
    c, py = pair()
    c.record(now=1001.0)
    py_record(py, now=1001.0)
    c.record(value=3, now=1002.0)
    py_record(py, value=3, now=1002.0)
    c.record(now=1003.0, value=2.5)
    py_record(py, now=1003.0, value=2.5)
    assert_same(c, py)
    assert (c.count, c.total, c._max) == (3, 6.5, 3.0)


@needs_c
def test_without_now_reads_time_monotonic(monkeypatch: pytest.MonkeyPatch) -> None:
    c, py = pair(start=500.0)
    # The module's function as called at each record(), so a patched clock is seen.
    monkeypatch.setattr(stats.time, "monotonic", lambda: 531.0)
    c.record(2)
    py_record(py, 2)
    assert_same(c, py)
    assert c._start == 531.0 and c._p_n == 0 and c._n == 1


@needs_c
def test_the_roll_is_the_python_one() -> None:
    calls: list[float] = []

    class Spy(stats.Sensor):
        __slots__ = ()

        def _roll(self, now: float) -> None:
            calls.append(now)
            super()._roll(now)

    s = Spy()
    start = s._start
    s.record(1, start + 10)
    s.record(1, start + 30)
    assert calls == [start + 30]
    assert (s._p_n, s._n, s.count) == (1, 1, 2)


@needs_c
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("x", 1001.0), {}),
        ((None, 1001.0), {}),
        ((1, "later"), {}),
        ((1, 1001.0, 3), {}),
        ((), {"valeu": 1}),
        ((1,), {"value": 2}),
        ((1, 1001.0), {"now": 1002.0}),
    ],
)
def test_bad_arguments_raise_type_error_and_record_nothing(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    c, py = pair()
    with pytest.raises(TypeError):
        c.record(*args, **kwargs)
    with pytest.raises(TypeError):
        py_record(py, *args, **kwargs)
    assert_same(c, py)
    assert c._n == 0


@needs_c
def test_a_roll_that_raises_propagates() -> None:
    class Broken(stats.Sensor):
        __slots__ = ()

        def _roll(self, now: float) -> None:
            raise RuntimeError("roll")

    s = Broken()
    with pytest.raises(RuntimeError, match="roll"):
        s.record(1, s._start + 31)
    assert s._n == 0


@needs_c
def test_fields_keep_their_slot_types() -> None:
    s = stats.Sensor()
    s._n = 7
    s._sum = 3  # an int set from Python is stored as the float it would add up to
    assert (s._n, s._sum) == (7, 3.0) and type(s._sum) is float
    with pytest.raises(TypeError):
        s._n = 1.5  # type: ignore[assignment]


def test_without_extensions_the_python_record_is_used() -> None:
    check = (
        "import sys; from aiokafka.metrics import stats as s; "
        "print(s.Sensor.__mro__[1] is s._PySensorFields, "
        "'aiokafka.metrics._csensor' in sys.modules)"
    )
    assert output_without_extensions(check) == ["True", "False"]
    run_tests_without_extensions(METRICS_TESTS)


@needs_c
def test_an_int_past_the_float_range_overflows_as_in_python() -> None:
    c, py = pair()
    with pytest.raises(OverflowError):
        c.record(10**400, 1001.0)
    with pytest.raises(OverflowError):
        py_record(py, 10**400, 1001.0)
    assert_same(c, py)
