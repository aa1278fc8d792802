"""The generated message classes behave as ``@dataclass(slots=True)`` classes.

The generator writes ``__init__``, ``__repr__`` and ``__eq__`` out instead of letting
``@dataclass`` build them at import (that was most of a protocol module's import cost).
For every generated class this checks them against what ``dataclasses`` would make from
the same fields: constructor parameters and defaults (fresh mutable defaults, an explicit
``None`` kept), ``repr``, equality, unhashability, and ``fields`` / ``replace`` /
``asdict``.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from aiokafka.protocol._gen import _all

CLASSES = sorted(
    {getattr(_all, name) for name in _all.__all__},
    key=lambda c: (c.__module__, c.__qualname__),
)


def _reference_repr(obj: Any) -> str:
    fields = dataclasses.fields(obj)
    inner = ", ".join(f"{f.name}={getattr(obj, f.name)!r}" for f in fields)
    return f"{type(obj).__qualname__}({inner})"


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


@pytest.mark.parametrize(
    "cls", CLASSES, ids=lambda c: f"{c.__module__.rsplit('.', 1)[1]}.{c.__qualname__}"
)
def test_behaves_as_a_dataclass(cls: type[Any]) -> None:
    assert dataclasses.is_dataclass(cls)
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == names
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    assert cls.__slots__ == tuple(names)
    assert cls.__hash__ is None

    a, b = cls(), cls()
    for f in fields:
        assert getattr(a, f.name) == _default(f), f.name
        if f.default_factory is not dataclasses.MISSING:
            assert getattr(a, f.name) is not getattr(b, f.name), f"{f.name} shared"
    assert a == b and not (a != b)
    assert repr(a) == _reference_repr(a)
    assert a.__eq__(object()) is NotImplemented
    with pytest.raises(TypeError):
        hash(a)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert dataclasses.replace(a) == a

    # Positional arguments in field order, an explicit None kept (not replaced by the
    # default factory), and every field taking part in equality.
    if names:
        values = [_default(f) for f in fields]
        assert cls(*values) == a
        for i, f in enumerate(fields):
            changed = dataclasses.replace(a, **{f.name: None})
            assert getattr(changed, f.name) is None
            assert (changed == a) is (values[i] is None)
            assert repr(changed) == _reference_repr(changed)
