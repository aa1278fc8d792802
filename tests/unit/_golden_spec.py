"""Test-only helpers shared by the golden-bytes and fuzz tests of the protocol codec.

The helpers read Kafka's JSON message definitions themselves (instead of reusing the
code generator's parser) so that the version gating the tests rely on is an independent
reading of the spec, not the same code that produced the classes under test.

Values are described as plain nested dicts keyed by the snake_case field names of the
contract (``ThrottleTimeMs`` -> ``throttle_time_ms``). From one such dict the helpers build
both an aiokafka message and a kafka-python message, so the two encoders see identical
input.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import keyword
import random
import re
import sys
import typing
import uuid
from pathlib import Path
from typing import Any

from tools.codegen.spec import definition_files

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO.parent / "shared" / "kafka-protocol" / "message"
# The shared set with the project's newer definitions (tools/codegen/definitions/)
# replacing or adding files, as the generator reads them.
DEFINITIONS = definition_files(SPEC_DIR.parent)

_OPEN = 1 << 15
_SNAKE_1 = re.compile(r"([a-z0-9])([A-Z])")
_SNAKE_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")


def snake(name: str) -> str:
    """The contract's snake_case of a JSON field name."""
    out = _SNAKE_2.sub(r"\1_\2", name)
    out = _SNAKE_1.sub(r"\1_\2", out).lower()
    if keyword.iskeyword(out):
        out += "_"
    return out


def parse_versions(text: str | None) -> tuple[int, int]:
    """``"3+"`` -> (3, 32768); ``"1-4"`` -> (1, 4); ``"none"``/None -> empty (1, 0)."""
    if text is None or text.strip() == "none":
        return (1, 0)
    text = text.strip()
    if text.endswith("+"):
        return (int(text[:-1]), _OPEN)
    if "-" in text:
        lo, hi = text.split("-", 1)
        return (int(lo), int(hi))
    return (int(text), int(text))


def _in(rng: tuple[int, int], version: int) -> bool:
    return rng[0] <= version <= rng[1]


@functools.cache
def load_spec(name: str) -> dict[str, Any]:
    """One JSON definition with comment lines stripped and common structs inlined."""
    text = DEFINITIONS[f"{name}.json"].read_text(encoding="utf-8")
    raw: dict[str, Any] = json.loads(
        "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    )
    common = {cs["name"]: cs["fields"] for cs in raw.get("commonStructs", [])}

    def inline(fields: list[dict[str, Any]]) -> None:
        for f in fields:
            elem = f["type"][2:] if f["type"].startswith("[]") else f["type"]
            if "fields" not in f and elem in common:
                f["fields"] = common[elem]
            if "fields" in f:
                inline(f["fields"])

    inline(raw["fields"])
    return raw


def valid_versions(name: str) -> tuple[int, int]:
    """The message's validVersions."""
    return parse_versions(load_spec(name)["validVersions"])


def is_flexible(name: str, version: int) -> bool:
    """Whether ``version`` of the message uses the flexible encoding."""
    return _in(parse_versions(load_spec(name)["flexibleVersions"]), version)


# ---------------------------------------------------------------------------
# Version filtering of value dicts
# ---------------------------------------------------------------------------


def for_version(name: str, value: dict[str, Any], version: int) -> dict[str, Any]:
    """Keep only the fields of ``value`` that exist at ``version`` (recursively).

    Raises KeyError on a key that is no field of the message at all, so a typo in a test
    value cannot silently drop a field.
    """
    spec = load_spec(name)
    lo, hi = valid_versions(name)
    assert lo <= version <= hi, (name, version)
    return _filter(spec["fields"], value, version, name)


def _filter(
    fields: list[dict[str, Any]], value: dict[str, Any], version: int, where: str
) -> dict[str, Any]:
    by_name = {snake(f["name"]): f for f in fields}
    unknown = set(value) - set(by_name)
    if unknown:
        raise KeyError(f"{where}: no such field(s) {sorted(unknown)}")
    out: dict[str, Any] = {}
    for key, v in value.items():
        f = by_name[key]
        if not _in(parse_versions(f["versions"]), version):
            continue
        if "fields" in f and v is not None:
            sub = f"{where}.{key}"
            if f["type"].startswith("[]"):
                v = [_filter(f["fields"], item, version, sub) for item in v]
            else:
                v = _filter(f["fields"], v, version, sub)
        out[key] = v
    return out


# ---------------------------------------------------------------------------
# Building aiokafka objects from value dicts, and back
# ---------------------------------------------------------------------------


def _is_struct_class(tp: object) -> bool:
    return isinstance(tp, type) and tp.__module__.startswith("aiokafka.protocol")


def _struct_class_in(hint: object) -> type | None:
    """The aiokafka struct class mentioned in a field's type hint, if any."""
    if _is_struct_class(hint):
        assert isinstance(hint, type)
        return hint
    for arg in typing.get_args(hint):
        found = _struct_class_in(arg)
        if found is not None:
            return found
    return None


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    module = sys.modules[cls.__module__]
    return typing.get_type_hints(cls, globalns=vars(module))


def field_names(cls: type) -> list[str]:
    """Names of the data fields of an aiokafka message or struct class."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    slots: tuple[str, ...] = getattr(cls, "__slots__", ())
    return [s for s in slots if not s.startswith("__")]


def build_ours(cls: type, value: dict[str, Any]) -> Any:
    """Construct an aiokafka message/struct of ``cls`` from a value dict."""
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for key, v in value.items():
        sub = _struct_class_in(hints.get(key))
        if sub is not None and v is not None:
            if isinstance(v, list):
                v = [build_ours(sub, item) for item in v]
            else:
                v = build_ours(sub, v)
        kwargs[key] = v
    return cls(**kwargs)


def to_tree(obj: Any) -> Any:
    """A plain comparable tree of an aiokafka object (memoryview -> bytes)."""
    if isinstance(obj, (memoryview, bytearray)):
        return bytes(obj)
    if isinstance(obj, (list, tuple)):
        return [to_tree(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_tree(v) for k, v in obj.items()}
    if isinstance(obj, (str, bytes, int, float, uuid.UUID, type(None))):
        return obj
    names = field_names(type(obj))
    if names:
        return {"__type__": type(obj).__name__} | {n: to_tree(getattr(obj, n)) for n in names}
    return obj


# ---------------------------------------------------------------------------
# Building kafka-python objects from the same value dicts
# ---------------------------------------------------------------------------

# kafka-python renames a few fields with its json_patch hooks: (message, kp name) -> ours.
KP_RENAMES: dict[tuple[str, str], str] = {
    ("MetadataResponse", "authorized_operations"): "cluster_authorized_operations",
    ("MetadataResponse.topics", "authorized_operations"): "topic_authorized_operations",
}


def build_kp(kp_cls: Any, value: dict[str, Any], version: int) -> Any:
    """Construct a kafka-python 3.0.12 message of ``kp_cls`` from a value dict."""
    kwargs = _kp_kwargs(kp_cls._struct, value, kp_cls.__name__)
    return kp_cls(version=version, **kwargs)


def _kp_kwargs(struct: Any, value: dict[str, Any], where: str) -> dict[str, Any]:
    from kafka.protocol.schemas.fields.codecs import BitField  # test-only peer

    kwargs: dict[str, Any] = {}
    used: set[str] = set()
    for field in struct.fields.values():
        ours = KP_RENAMES.get((where, field.name), snake(field._name))
        if ours not in value:
            continue
        used.add(ours)
        v = value[ours]
        if field.type_str == "bitfield" and v is not None:
            v = BitField.from_32_bit_field(v & 0xFFFFFFFF)
            v = None if v == {31} else v
        elif (field.is_struct() or field.is_struct_array()) and v is not None:
            sub_where = f"{where}.{field.name}"
            if field.is_struct_array():
                v = [field.data_class(**_kp_kwargs(field, item, sub_where)) for item in v]
            else:
                v = field.data_class(**_kp_kwargs(field, v, sub_where))
        kwargs[field.name] = v
    missing = set(value) - used
    assert not missing, f"kafka-python {where} has no field for {sorted(missing)}"
    return kwargs


# ---------------------------------------------------------------------------
# kafka-python's legacy hand-written classes (``kafka.protocol.old``)
# ---------------------------------------------------------------------------

_LEGACY_MODULES = (
    "produce",
    "fetch",
    "list_offsets",
    "metadata",
    "commit",
    "find_coordinator",
    "group",
    "api_versions",
    "init_producer_id",
)


def legacy_kp_class(name: str, version: int) -> Any | None:
    """kafka-python's hand-written ``<name>_v<version>`` class, if it has one.

    These predate its JSON-driven classes and were written from the protocol guide by
    hand: a third, independent encoder for the non-flexible versions.
    """
    import importlib

    for mod in _LEGACY_MODULES:
        module = importlib.import_module(f"kafka.protocol.old.{mod}")
        found = getattr(module, f"{name}_v{version}", None)
        if found is not None:
            return found
    return None


def build_legacy_kp(legacy_cls: Any, name: str, value: dict[str, Any], version: int) -> Any:
    """A legacy kafka-python object from a value dict, matched by wire position.

    The legacy schemas name some fields differently, so fields are matched by their
    position among the JSON fields present at ``version`` (the wire order).
    """
    fields = load_spec(name)["fields"]
    return legacy_cls(*_legacy_tuple(fields, value, version, legacy_cls.SCHEMA))


def _legacy_tuple(
    fields: list[dict[str, Any]], value: dict[str, Any], version: int, schema: Any
) -> tuple[Any, ...]:
    from kafka.protocol.old.types import BitField, Schema  # test-only peer

    present = [f for f in fields if _in(parse_versions(f["versions"]), version)]
    assert len(present) == len(schema.fields), (present, schema.names)
    out: list[Any] = []
    for f, wire_type in zip(present, schema.fields, strict=True):
        v = value[snake(f["name"])]
        if wire_type is BitField or isinstance(wire_type, BitField):
            v = BitField.from_32_bit_field(v & 0xFFFFFFFF)
        elif "fields" in f and v is not None:
            inner = wire_type.array_of if f["type"].startswith("[]") else wire_type
            if isinstance(inner, Schema):
                make: Any = functools.partial(
                    _legacy_tuple, f["fields"], version=version, schema=inner
                )
            else:
                # A one-field struct written as its bare value (MetadataRequest v0-9 topics).
                (only,) = [g for g in f["fields"] if _in(parse_versions(g["versions"]), version)]

                def make(item: dict[str, Any], key: str = snake(only["name"])) -> Any:
                    return item[key]

            v = [make(item) for item in v] if f["type"].startswith("[]") else make(v)
        out.append(v)
    return tuple(out)


# ---------------------------------------------------------------------------
# Random values straight from the JSON definitions (for the fuzz tests)
# ---------------------------------------------------------------------------

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_TEXT = "abcXYZ019-_.é☃"


def random_value(name: str, version: int, rnd: random.Random, max_items: int = 2) -> dict[str, Any]:
    """A random value dict for message ``name`` at ``version``, every present field set.

    Nullable fields are sometimes None; arrays hold 0..max_items elements (struct arrays
    at least one, so nested structs are exercised).
    """
    return _random_struct(load_spec(name)["fields"], version, rnd, max_items)


def _random_struct(
    fields: list[dict[str, Any]], version: int, rnd: random.Random, max_items: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if not _in(parse_versions(f["versions"]), version):
            continue
        out[snake(f["name"])] = _random_field(f, version, rnd, max_items)
    return out


def _random_field(f: dict[str, Any], version: int, rnd: random.Random, max_items: int) -> Any:
    nullable = _in(parse_versions(f.get("nullableVersions")), version)
    if nullable and rnd.random() < 0.2:
        return None
    ftype: str = f["type"]
    if ftype.startswith("[]"):
        elem = ftype[2:]
        if "fields" in f:
            n = rnd.randint(1, max_items)
            return [_random_struct(f["fields"], version, rnd, max_items) for _ in range(n)]
        return [_random_scalar(elem, rnd) for _ in range(rnd.randint(0, max_items))]
    if "fields" in f:
        return _random_struct(f["fields"], version, rnd, max_items)
    return _random_scalar(ftype, rnd)


def _random_scalar(ftype: str, rnd: random.Random) -> Any:
    if ftype in _INT_RANGES:
        lo, hi = _INT_RANGES[ftype]
        return rnd.choice([lo, hi, 0, -1 if lo < 0 else 1, rnd.randint(lo, hi)])
    if ftype == "bool":
        return rnd.random() < 0.5
    if ftype == "float64":
        return rnd.choice([0.0, -1.5, 1e300, rnd.random()])
    if ftype == "string":
        return "".join(rnd.choice(_TEXT) for _ in range(rnd.randint(0, 6)))
    if ftype in ("bytes", "records"):
        return rnd.randbytes(rnd.randint(0, 12))
    if ftype == "uuid":
        return uuid.UUID(int=rnd.getrandbits(128))
    raise AssertionError(f"unknown primitive type {ftype!r}")
