"""The optional C record append (``aiokafka/record/_cbuilder.c``) against the pure-Python one.

Every test runs the same appends through both paths of ``DefaultRecordBatchBuilder.add``
(switching ``default_builder._c_append_record``) and compares bytes written, values
returned and exceptions raised.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka.errors import IllegalStateError
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    default_builder,
)
from aiokafka.record.default_builder import DefaultRecordBatchBuilder

try:
    from aiokafka.record import _cbuilder
except ImportError:  # no compiler when the package was installed
    _cbuilder = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(
    _cbuilder is None,
    reason="aiokafka.record._cbuilder was not built (no C compiler at install time); "
    "the pure-Python append is covered by test_record_v2.py",
)

CODECS = [CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD]
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Lengths around the varint byte boundaries (zigzag: 63/64, 8191/8192, ...) and the
# end of the Python path's cached tables.
LENGTHS = [0, 1, 63, 64, 65, 127, 128, 8191, 8192, 8193, (1 << 20) - 1, 1 << 20]
DELTAS = [
    0, 1, -1, 63, 64, -64, -65, 8191, 8192, -8192, -8193, (1 << 31), -(1 << 31),
    (1 << 62), -(1 << 62), INT64_MAX, INT64_MIN,
]  # fmt: skip

# One append: (offset, timestamp, key, value, headers).
Op = tuple[int, int | None, object, object, object]


def _outcome(c_path: bool, ops: list[Op], **builder_args: Any) -> list[object]:
    """Run the appends on a fresh builder with one path; what each returned or raised,
    the buffer after each, and the built batch."""
    saved = default_builder._c_append_record
    default_builder._c_append_record = _cbuilder.append_record if c_path else None
    try:
        builder = DefaultRecordBatchBuilder(**builder_args)
        seen: list[object] = []
        for op in ops:
            try:
                offset, *record = op
                seen.append(builder.add(*record, offset=offset))  # type: ignore[arg-type]
            except Exception as exc:
                # Messages may show an object's repr: the two runs see different objects.
                seen.append((type(exc), re.sub(r" at 0x[0-9a-f]+", "", str(exc))))
            seen.append(bytes(builder._buffer))
        seen.append(bytes(builder.build()))
        return seen
    finally:
        default_builder._c_append_record = saved


def _same_both_ways(ops: list[Op], **builder_args: Any) -> list[object]:
    c = _outcome(True, ops, **builder_args)
    assert c == _outcome(False, ops, **builder_args)
    return c


# ------------------------------------------------------------------- byte for byte


@pytest.mark.parametrize("length", LENGTHS)
def test_key_and_value_lengths(length: int) -> None:
    data = bytes(range(256)) * (length // 256) + bytes(length % 256)
    ops: list[Op] = [
        (0, 1, data, None, None),
        (1, 1, None, data, None),
        (2, 1, data, data, []),
        (3, 1, b"", data, [("h", data)]),
    ]
    _same_both_ways(ops, batch_size=1 << 30)


@pytest.mark.parametrize("first", [0, 1_700_000_000_000, INT64_MIN, INT64_MAX, -1])
def test_timestamp_deltas(first: int) -> None:
    # Deltas beyond int64 (both extremes) must fail the same way too.
    ops: list[Op] = [(0, first, None, b"v", None)]
    ops += [
        (i + 1, first + d, b"k", None, None)
        for i, d in enumerate(DELTAS)
        if INT64_MIN <= first + d <= INT64_MAX
    ]
    results = _same_both_ways(ops, batch_size=1 << 20)
    assert len(results) == 2 * len(ops) + 1


def test_offset_varint_boundaries() -> None:
    offsets = [0, 63, 64, 8191, 8192, 1 << 20, (1 << 31) - 1]
    _same_both_ways([(o, 5, b"k", b"v", None) for o in offsets])


def test_headers_shapes() -> None:
    def pairs() -> Iterator[tuple[str, bytes | None]]:
        yield ("gen", b"x")
        yield ("none", None)

    class Value(bytes):
        pass

    class Tup(tuple):  # type: ignore[type-arg]
        pass

    data = bytes(range(32))
    shapes: list[object] = [
        None,
        [],
        (),
        [("", b"")],
        [("h1", b"x"), ("h2", None), ("ключ", b"\x00\xff"), ("emoji 🎉", b"")],
        [("k" * 200, b"v" * 9000)] * 70,  # headersCount and lengths past one byte
        pairs(),
        iter([]),  # truthy, no headers: headersCount 0
        [["list", b"pair"]],
        [Tup(("subclass", b"v"))],
        [iter(("iterator", b"v"))],
        [("view", memoryview(data)), ("array", bytearray(b"ba")), ("sub", Value(b"s"))],
        [("strided", memoryview(data)[::3]), ("2d", memoryview(data).cast("B", (4, 8)))],
        {"dict-keys": b"x"},  # iterates its keys: strings, not pairs (an error)
    ]
    ops: list[Op] = [(i, 7, b"k", b"v", h) for i, h in enumerate(shapes)]
    # Iterators are spent by the first run: give each run its own.
    ops_again: list[Op] = [(i, 7, b"k", b"v", h) for i, h in enumerate(shapes)]
    ops_again[6] = (6, 7, b"k", b"v", pairs())
    ops_again[7] = (7, 7, b"k", b"v", iter([]))
    ops_again[10] = (10, 7, b"k", b"v", [iter(("iterator", b"v"))])
    assert _outcome(True, ops, batch_size=1 << 24) == _outcome(False, ops_again, batch_size=1 << 24)


def test_bytes_like_keys_and_values() -> None:
    class Payload(bytes):
        pass

    class WithDunder(bytearray):
        def __bytes__(self) -> bytes:
            return b"from __bytes__"

    data = bytes(range(48))
    fields: list[object] = [
        Payload(b"sub"),
        bytearray(b"array"),
        memoryview(data),
        memoryview(data)[5:9],
        memoryview(data)[::2],
        memoryview(data).cast("B", (6, 8)),
        memoryview(bytearray(b"writable")),
        WithDunder(b"ignored?"),
    ]
    ops: list[Op] = [(i, 3, f, f, None) for i, f in enumerate(fields)]
    _same_both_ways(ops)


def test_batch_full_decisions() -> None:
    # Records of 30..80 bytes against limits around the buffer's size: the same
    # records are refused, and the first record always goes in.
    for batch_size in range(0, 400, 7):
        ops: list[Op] = [(i, 1, b"k" * i, b"v" * (20 + i), None) for i in range(12)]
        _same_both_ways(ops, batch_size=batch_size)


@pytest.mark.parametrize("codec", CODECS)
def test_built_batches_identical_for_every_codec(codec: int) -> None:
    ops: list[Op] = [
        (i, 1_700_000_000_000 + (i * 37) % 500 - 200, b"key-%d" % i if i % 3 else None,
         b"value " * (i % 50) if i % 5 else None, [("h", b"%d" % i)] if i % 4 == 0 else None)
        for i in range(500)
    ]  # fmt: skip
    args = {
        "compression_type": codec,
        "is_transactional": True,
        "producer_id": 4321,
        "producer_epoch": 3,
        "base_sequence": 17,
        "batch_size": 1 << 20,
    }
    _same_both_ways(ops, **args)


# --------------------------------------------------------------------- Hypothesis

_fields = st.one_of(
    st.none(),
    st.binary(max_size=100),
    st.sampled_from(LENGTHS[:9]).map(lambda n: b"\xab" * n),
    st.binary(max_size=20).map(bytearray),
    st.binary(max_size=20).map(memoryview),
)
_headers = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(max_size=10), st.one_of(st.none(), st.binary(max_size=70)))),
)


@settings(max_examples=300, deadline=None)
@given(
    first=st.integers(INT64_MIN, INT64_MAX),
    records=st.lists(
        st.tuples(
            st.integers(1, 1 << 24),  # offset step
            st.one_of(st.sampled_from(DELTAS), st.integers(-(1 << 40), 1 << 40)),
            _fields,
            _fields,
            _headers,
        ),
        min_size=1,
        max_size=30,
    ),
    batch_size=st.one_of(st.just(1 << 30), st.integers(0, 2000)),
)
def test_random_records(
    first: int, records: list[tuple[int, int, object, object, object]], batch_size: int
) -> None:
    ops: list[Op] = []
    offset = -1
    for step, delta, key, value, headers in records:
        offset = min(offset + step, (1 << 31) - 1)
        ts = max(INT64_MIN, min(INT64_MAX, first + delta))  # add() takes int64 timestamps
        ops.append((offset, ts, key, value, headers))
    _same_both_ways(ops, batch_size=batch_size)


# ---------------------------------------------------------------------- bad input


def _gen_raising(exc: Exception) -> Callable[[], Iterator[object]]:
    def gen() -> Iterator[object]:
        yield ("fine", b"x")
        raise exc

    return gen


class _Falsy:
    def __bool__(self) -> bool:
        raise ZeroDivisionError("no truth")


def _released() -> memoryview:
    view = memoryview(b"gone")
    view.release()
    return view


@pytest.mark.parametrize(
    ("key", "value", "headers"),
    [
        ("text", b"v", None),
        (b"k", 42, None),
        (1.5, "both bad", None),
        (b"k", b"v", [(b"bytes-key", b"x")]),
        (b"k", b"v", [("h", "text")]),
        (b"k", b"v", [("h", 3)]),
        (b"k", b"v", [("only-key",)]),
        (b"k", b"v", [("a", b"b", b"c")]),
        (b"k", b"v", ["ab"]),  # a 2-character string unpacks, then its value is a str
        (b"k", b"v", "headers as a string"),
        (b"k", b"v", [1]),
        (b"k", b"v", [None]),
        (b"k", b"v", 5),
        (b"k", b"v", [("surrogate \ud800", b"x")]),
        (b"k", b"v", [("ok", b"x"), ("bad", 1)]),
        (b"k", b"v", _Falsy()),
        (_released(), b"v", None),
        (b"k", b"v", [("h", _released())]),
        ("key first", b"v", [("h", 3)]),
    ],
)
def test_bad_input_same_errors_nothing_appended(
    key: object, value: object, headers: object
) -> None:
    ops: list[Op] = [
        (0, 1, b"ok", b"ok", None),
        (1, 1, key, value, headers),
        (2, 1, b"n", b"n", None),
    ]
    results = _same_both_ways(ops)
    assert isinstance(results[2], tuple) and issubclass(results[2][0], Exception)
    assert results[3] == results[1]  # the failed append left the buffer as it was


@pytest.mark.parametrize(
    "exc", [RuntimeError("boom"), ValueError("inner"), TypeError("inner type")]
)
def test_errors_from_header_iterables(exc: Exception) -> None:
    gen = _gen_raising(exc)
    results_c = _outcome(True, [(0, 1, b"k", b"v", gen())])
    results_py = _outcome(False, [(0, 1, b"k", b"v", gen())])
    assert results_c == results_py
    assert results_c[0] == (type(exc), str(exc))

    def pair_raising() -> Iterator[object]:
        yield "key"
        raise exc

    # Inside one pair, TypeError and ValueError become the pair error (Python's
    # unpacking does the same); anything else propagates.
    results_c = _outcome(True, [(0, 1, b"k", b"v", [pair_raising()])])
    results_py = _outcome(False, [(0, 1, b"k", b"v", [pair_raising()])])
    assert results_c == results_py


def test_timestamp_delta_beyond_int64() -> None:
    ops: list[Op] = [(0, INT64_MIN, None, b"v", None), (1, INT64_MAX, None, b"v", None)]
    results = _same_both_ways(ops)
    assert results[2] == (
        ValueError,
        f"value {INT64_MAX - INT64_MIN} does not fit a signed 64-bit varint",
    )


def test_function_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="7 arguments"):
        _cbuilder.append_record(bytearray(), -1, 0, 0, None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bytearray"):
        _cbuilder.append_record(b"", -1, 0, 0, None, None, None)  # type: ignore[arg-type]
    buffer = bytearray(b"xx")
    assert _cbuilder.append_record(buffer, 3, 0, 0, None, None, None) is False
    assert buffer == b"xx"
    assert _cbuilder.append_record(buffer, -1, 0, 0, None, None, None) is True
    assert buffer == b"xx\x0c\x00\x00\x00\x01\x01\x00"  # length 6, zigzag-encoded
    # A batch_size past 64 bits is no limit, as in Python.
    assert _cbuilder.append_record(buffer, 1 << 70, 1, 0, None, None, None) is True


def test_no_extensions_switch_forces_pure_python() -> None:
    code = (
        "from aiokafka.record import default_builder as d; "
        "print(d._c_append_record, d._c_append_next, d._c_add)"
    )
    env = dict(os.environ)
    for setting, expected in (
        ("1", "None None None"),
        ("", "append_record"),
        ("0", "<method 'append_next' of 'DefaultRecordBatchBuilder' objects>"),
        ("0", "<method 'add' of 'DefaultRecordBatchBuilder' objects>"),
    ):
        env["AIOKAFKA_NO_EXTENSIONS"] = setting
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert expected in out


@pytest.mark.parametrize("c_path", [True, False])
def test_append_next_is_append_at_the_next_offset(c_path: bool) -> None:
    saved = default_builder._c_append_record
    default_builder._c_append_record = _cbuilder.append_record if c_path else None
    try:
        a = DefaultRecordBatchBuilder(batch_size=200)
        b = DefaultRecordBatchBuilder(batch_size=200)
        records = [
            (1000 + i, b"k%d" % i, b"v" * 40, [("h", b"x")] if i % 2 else None) for i in range(6)
        ]
        for i, record in enumerate(records):
            expected = a.append(i, *record)
            got = b.append_next(*record)
            assert got == expected
            if got is not None:
                assert (got.offset, got.size, got.timestamp) == (i, expected.size, 1000 + i)
        assert b.record_count == a.record_count < len(records)  # the batch filled up
        assert bytes(b.build()) == bytes(a.build())
    finally:
        default_builder._c_append_record = saved


# ------------------------------------------------- append_next (bind_builder's C method)

# One append_next call: positional and keyword arguments.
Call = tuple[tuple[object, ...], dict[str, object]]


def _next_outcome(
    c_path: bool, calls: list[Call], pure: bool = True, via: str = "appender", **builder_args: Any
) -> list[object]:
    """Run the calls through the builder's appender() (``via="adder"``: adder()) with
    the C method, or through the Python append_next (add) (``pure``: with no
    extension at all); what each returned (with its type) or raised, the builder's
    state after each, and the built batch."""
    c_method = default_builder._c_append_next if via == "appender" else default_builder._c_add
    if c_path and c_method is None:
        # The module imports (the tests call it directly), but AIOKAFKA_NO_EXTENSIONS
        # kept the builder from binding it.
        pytest.skip("AIOKAFKA_NO_EXTENSIONS is set: the builder has no C append_next")
    saved = (
        default_builder._c_append_next,
        default_builder._c_add,
        default_builder._c_append_record,
    )
    if not c_path:
        default_builder._c_append_next = default_builder._c_add = None
        if pure:
            default_builder._c_append_record = None
    try:
        builder = DefaultRecordBatchBuilder(**builder_args)
        append = getattr(builder, via)()
        assert (type(append).__name__ == "builtin_function_or_method") is c_path
        seen: list[object] = []
        for args, kwargs in calls:
            try:
                got = append(*args, **kwargs)
                seen.append((type(got), got))
            except Exception as exc:
                seen.append((type(exc), re.sub(r" at 0x[0-9a-f]+", "", str(exc))))
            seen.append((bytes(builder._buffer), builder.record_count, repr(builder)))
        seen.append(bytes(builder.build()))
        return seen
    finally:
        (
            default_builder._c_append_next,
            default_builder._c_add,
            default_builder._c_append_record,
        ) = saved


def _next_same_both_ways(
    calls: list[Call], pure: bool = True, via: str = "appender", **builder_args: Any
) -> list[object]:
    c = _next_outcome(True, calls, via=via, **builder_args)
    assert c == _next_outcome(False, calls, pure, via=via, **builder_args)
    return c


def test_append_next_c_common_records() -> None:
    value = b"v" * 100
    calls: list[Call] = [((1_700_000_000_000 + i % 7, None, value), {}) for i in range(50)]
    calls += [((5, b"k" * n, b"x" * n, None), {}) for n in LENGTHS[:9]]
    results = _next_same_both_ways(calls, batch_size=1 << 30)
    metadata = results[0][1]  # type: ignore[index]
    assert type(metadata) is default_builder.DefaultRecordMetadata
    assert (metadata.offset, metadata.timestamp, metadata.crc) == (0, 1_700_000_000_000, None)
    assert repr(metadata).startswith("DefaultRecordMetadata(offset=0, size=")


def test_append_next_c_timestamp_now() -> None:
    builder = DefaultRecordBatchBuilder(batch_size=1 << 20)
    append = builder.appender()
    before = time.time_ns() // 1_000_000
    got = [append(None, None, b"v") for _ in range(3)]
    after = time.time_ns() // 1_000_000
    assert all(m is not None and before <= m.timestamp <= after for m in got)
    assert [m.offset for m in got if m is not None] == [0, 1, 2]
    # The same bytes as the Python path given those timestamps.
    calls: list[Call] = [((m.timestamp, None, b"v"), {}) for m in got if m is not None]
    py = _next_outcome(False, calls, batch_size=1 << 20)
    assert bytes(builder.build()) == py[-1]


@pytest.mark.parametrize("via", ["appender", "adder"])
@pytest.mark.parametrize("first", [0, 1_700_000_000_000, INT64_MIN, INT64_MAX, -1])
def test_append_next_c_timestamp_deltas(first: int, via: str) -> None:
    calls: list[Call] = [((first, None, b"v"), {})]
    calls += [((first + d, b"k", None), {}) for d in DELTAS if INT64_MIN <= first + d <= INT64_MAX]
    _next_same_both_ways(calls, via=via, batch_size=1 << 20)


@pytest.mark.parametrize("via", ["appender", "adder"])
def test_append_next_c_batch_full_decisions(via: str) -> None:
    for batch_size in [*range(0, 400, 7), 1 << 70]:
        calls: list[Call] = [((1, b"k" * i, b"v" * (20 + i)), {}) for i in range(12)]
        _next_same_both_ways(calls, via=via, batch_size=batch_size)


def test_add_c_common_records_and_timestamp_now() -> None:
    """The C add (adder()) returns the record's timestamp as add() does, no metadata."""
    value = b"v" * 100
    calls: list[Call] = [((1_700_000_000_000 + i % 7, None, value), {}) for i in range(50)]
    calls += [((5, b"k" * n, b"x" * n, None), {}) for n in LENGTHS[:9]]
    results = _next_same_both_ways(calls, via="adder", batch_size=1 << 30)
    assert results[0] == (int, 1_700_000_000_000)
    builder = DefaultRecordBatchBuilder(batch_size=1 << 20)
    add = builder.adder()
    before = time.time_ns() // 1_000_000
    got = [add(None, None, b"v", None) for _ in range(3)]
    after = time.time_ns() // 1_000_000
    assert all(type(t) is int and before <= t <= after for t in got)
    assert builder.record_count == 3
    py = _next_outcome(False, [((t, None, b"v"), {}) for t in got], via="adder", batch_size=1 << 20)
    assert bytes(builder.build()) == py[-1]


class _Builder(DefaultRecordBatchBuilder):
    __slots__ = ()


def test_append_next_c_hands_the_rest_to_python() -> None:
    # Everything but (int or None, bytes or None, bytes or None[, None]) goes through
    # the Python append_next: same results and errors, nothing appended on error.
    data = bytes(range(40))
    calls: list[Call] = [
        ((1, b"k", b"v"), {}),
        ((2, b"k", b"v", [("h", b"x")]), {}),
        ((3, b"k", b"v"), {"headers": [("h", None)]}),
        ((3, b"k", b"v"), {"headers": None}),
        ((), {"timestamp": 4, "key": None, "value": b"v"}),
        ((5, bytearray(b"ba"), memoryview(data)[::3]), {}),
        ((6, "text", b"v"), {}),
        ((7, b"k", 42), {}),
        ((8, b"k", b"v", [("h", 3)]), {}),
        ((9, b"k", b"v", []), {}),
        ((True, b"bool", b"timestamp"), {}),
        ((1.5, b"float", b"timestamp"), {}),
        ((1 << 64, b"beyond", b"int64"), {}),
        ((INT64_MIN, b"delta", b"beyond int64"), {}),
        ((1,), {}),
        ((1, None, b"v", None, "extra"), {}),
        ((1, None, b"v"), {"nope": 1}),
        ((10, b"last", b"v"), {}),
    ]
    # (Against the Python append_next with the C append_record: a float timestamp,
    # outside append_next's contract, fails differently in the pure-Python add().)
    results = _next_same_both_ways(calls, pure=False, batch_size=1 << 20)
    _next_same_both_ways(calls[:11] + calls[12:], batch_size=1 << 20)
    # The same calls through the C add (adder()) and the Python add.
    _next_same_both_ways(calls, pure=False, via="adder", batch_size=1 << 20)
    # (Without the float timestamp, and the fifth argument: add()'s offset, outside
    # the adder's contract, is checked differently by the C append_record.)
    _next_same_both_ways(calls[:11] + calls[12:15] + calls[16:], via="adder", batch_size=1 << 20)
    assert results[12][0] is TypeError  # type: ignore[index]
    assert results[16][0] is TypeError  # type: ignore[index]
    # A subclass, and a built builder.
    sub = _Builder(batch_size=1 << 20)
    assert sub.appender()(1, None, b"v") == DefaultRecordBatchBuilder().append_next(1, None, b"v")
    assert sub.adder()(2, None, b"v", None) == 2  # the Python add
    sub.build()
    with pytest.raises(IllegalStateError):
        sub.appender()(2, None, b"v")
    with pytest.raises(IllegalStateError):
        sub.adder()(3, None, b"v", None)


def test_bind_rejects_a_class_without_the_slots() -> None:
    # Built-in types included: on Python 3.12+ a static built-in type's tp_dict is
    # NULL, and reading it crashed the interpreter. In a child process, so that such a
    # crash fails this test instead of ending the test run.
    code = """if True:
        from aiokafka.record import _cbuilder

        class Plain:
            _buffer = None

        for cls in (int, tuple, object, type, Plain):
            for bind, args, slot in (
                (_cbuilder.bind_builder, (tuple, len), "_buffer"),
                (_cbuilder.bind_batch, (len,), "_append"),
            ):
                try:
                    bind(cls, *args)
                except TypeError as exc:
                    assert str(exc) == f"{slot} is not a slot of {cls.__name__}", exc
                else:
                    raise AssertionError(f"{bind.__name__}({cls.__name__}) bound")
        print("ok")
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, "ok\n", "")


@settings(max_examples=200, deadline=None)
@given(
    first=st.integers(INT64_MIN, INT64_MAX),
    records=st.lists(
        st.tuples(
            st.one_of(st.sampled_from(DELTAS), st.integers(-(1 << 40), 1 << 40)),
            _fields,
            _fields,
            _headers,
        ),
        min_size=1,
        max_size=30,
    ),
    batch_size=st.one_of(st.just(1 << 30), st.integers(0, 2000)),
    via=st.sampled_from(["appender", "adder"]),
)
def test_append_next_c_random_records(
    first: int, records: list[tuple[int, object, object, object]], batch_size: int, via: str
) -> None:
    calls: list[Call] = [
        ((max(INT64_MIN, min(INT64_MAX, first + delta)), key, value, headers), {})
        for delta, key, value, headers in records
    ]
    _next_same_both_ways(calls, via=via, batch_size=batch_size)


def test_the_buffer_allocation_doubles_when_outgrown() -> None:
    """A batch filled by small appends is reallocated a few times, not ~70 (CPython
    over-allocates a bytearray by 1/8 only): the allocation at least doubles each
    time it grows, and the bytes are what appending one by one gives."""
    buffer = bytearray(61)
    allocations = {buffer.__alloc__()}
    for i in range(2000):
        assert _cbuilder.append_record(buffer, -1, i, 0, None, b"v" * 100, None) is True
        allocations.add(buffer.__alloc__())
    grown = sorted(allocations)
    # (From the second: the first growth is from bytearray(61)'s exact size.)
    assert all(b >= 2 * a for a, b in itertools.pairwise(grown[1:]))
    assert len(grown) <= 16
    expected = bytearray(61)
    for i in range(2000):
        one = bytearray()
        _cbuilder.append_record(one, -1, i, 0, None, b"v" * 100, None)
        expected += one
    assert buffer == expected
