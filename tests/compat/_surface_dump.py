"""Dump the public surface of the ``aiokafka`` importable by this interpreter as JSON.

Run as a script by ``test_aiokafka014_surface.py`` twice: under aiokafka 0.14's own
virtualenv and under ours. Only the standard library is used, so the same file runs
in both. Output: ``{module: {"missing": bool, "names": {name: entry}}}`` where an
entry describes a class (members, bases, errno), a function (parameters, async) or
another value (its type name).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import sys
import types
from typing import Any

#: The modules of aiokafka 0.14 that user code touches (the issue's list).
MODULES = [
    "aiokafka",
    "aiokafka.abc",
    "aiokafka.admin",
    "aiokafka.admin.client",
    "aiokafka.admin.config_resource",
    "aiokafka.admin.new_partitions",
    "aiokafka.admin.new_topic",
    "aiokafka.admin.records_to_delete",
    "aiokafka.client",
    "aiokafka.cluster",
    "aiokafka.codec",
    "aiokafka.consumer",
    "aiokafka.coordinator.assignors.abstract",
    "aiokafka.coordinator.assignors.range",
    "aiokafka.coordinator.assignors.roundrobin",
    "aiokafka.coordinator.assignors.sticky.sticky_assignor",
    "aiokafka.errors",
    "aiokafka.helpers",
    "aiokafka.partitioner",
    "aiokafka.producer",
    "aiokafka.structs",
]

_MISSING = "<no default>"


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return _MISSING
    if isinstance(value, enum.Enum):
        return int(value.value) if isinstance(value.value, int) else repr(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return f"<{type(value).__name__}>"


def _function(fn: Any) -> dict[str, Any]:
    # A decorator's wrapper decides what a call returns: @asynccontextmanager wraps
    # an async generator in a plain function, functools.wraps over a coroutine
    # function keeps it a coroutine function.
    target = inspect.unwrap(fn)
    try:
        sig = inspect.signature(fn)
        params = [
            {"name": p.name, "kind": p.kind.name, "default": _default(p.default)}
            for p in sig.parameters.values()
        ]
    except (TypeError, ValueError):
        params = None
    is_async = inspect.iscoroutinefunction(fn) or (
        target is not fn and inspect.iscoroutinefunction(target)
    )
    return {"kind": "function", "async": is_async, "params": params}


def _member(cls: type, name: str) -> dict[str, Any] | None:
    for klass in cls.__mro__:
        if klass is object or name not in vars(klass):
            continue
        raw = vars(klass)[name]
        if isinstance(raw, classmethod):
            return {
                **_function(raw.__func__),
                "binding": "classmethod",
                "params": _drop_first(raw.__func__),
            }
        if isinstance(raw, staticmethod):
            return {**_function(raw.__func__), "binding": "staticmethod"}
        if isinstance(raw, property):
            return {"kind": "property"}
        if inspect.isfunction(raw):
            return {**_function(raw), "binding": "method", "params": _drop_first(raw)}
        if inspect.isdatadescriptor(raw) or inspect.ismethoddescriptor(raw):
            return {"kind": "property"}
        return {"kind": "attribute", "type": type(raw).__name__}
    return None


def _drop_first(fn: Any) -> list[dict[str, Any]] | None:
    params = _function(fn)["params"]
    return params[1:] if params else params


def _class(cls: type) -> dict[str, Any]:
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__ in ("builtins", "typing", "abc", "enum"):
            continue
        names.update(n for n in vars(klass) if not n.startswith("_") or n == "__init__")
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        names.update(cls._fields)
    members = {}
    for n in sorted(names):
        entry = _member(cls, n)
        if entry is not None:
            members[n] = entry
    # The constructor as callers see it (__init__ or __new__).
    init = _function(cls)
    if issubclass(cls, enum.Enum):
        # Calling an enum looks a member up by value: EnumType.__call__, not the
        # library's code, whose signature inspect reports per Python version
        # ((value, names=None, *, module=None, ...) up to 3.11, (*values) from 3.12),
        # so the two dumps, run on different interpreters, would differ.
        init["params"] = [{"name": "value", "kind": "POSITIONAL_OR_KEYWORD", "default": _MISSING}]
    return {
        "kind": "class",
        "bases": [k.__name__ for k in cls.__mro__[1:] if k is not object],
        "errno": getattr(cls, "errno", None)
        if isinstance(getattr(cls, "errno", None), int)
        else None,
        "init": init["params"],
        "members": members,
    }


#: Names user code imports from a module although it only imported them there.
EXTRA_NAMES = {"aiokafka.structs": ["KafkaError"]}


def _public_names(module: types.ModuleType) -> list[str]:
    """``__all__`` plus the public names the module defines itself (not those it
    imported from elsewhere, which are another module's surface)."""
    names = dict.fromkeys(getattr(module, "__all__", ()))
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        if getattr(value, "__module__", None) == module.__name__:
            names[name] = None
    names.update(dict.fromkeys(EXTRA_NAMES.get(module.__name__, ())))
    return list(names)


def describe(value: Any) -> dict[str, Any]:
    if inspect.isclass(value):
        return _class(value)
    if callable(value):
        return _function(value)
    return {"kind": "value", "type": type(value).__name__}


def main() -> None:
    """No argument: discover the public names. One argument, the JSON output of a
    discovering run: describe exactly the names listed there (absent ones too)."""
    wanted: dict[str, list[str]] | None = None
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            wanted = {m: list(v["names"]) for m, v in json.load(f).items()}
    out: dict[str, Any] = {}
    for name in wanted if wanted is not None else MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            out[name] = {"missing": True, "error": str(exc), "names": {}}
            continue
        entries = {}
        names = wanted[name] if wanted is not None else _public_names(module)
        for attr in names:
            if not hasattr(module, attr):
                entries[attr] = {"kind": "absent"}
                continue
            entries[attr] = describe(getattr(module, attr))
        out[name] = {"missing": False, "names": entries}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
