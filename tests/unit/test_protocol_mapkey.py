"""``mapKey`` arrays are plain lists: every element is kept, in order, duplicates too.

Kafka's JSON definitions mark some struct-array fields as ``mapKey``; the Java code
generator then makes the array an ``ImplicitLinkedHashMultiCollection``, which keeps
insertion order and, being a *multi* collection, keeps two elements with the same key.
On the wire it is an ordinary array. Our generator ignores ``mapKey`` and emits a list,
so a message that repeats a key (a CreateTopics naming one topic twice, which the broker
answers with INVALID_REQUEST for that topic) is sent exactly as the caller built it.

The mapKey fields are found by reading the JSON definitions here, independently of the
generator, so a definitions update that adds one is covered without touching this file.
"""

from __future__ import annotations

import importlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aiokafka.protocol import messages
from tools.codegen.__main__ import DEFAULT_SPEC
from tools.codegen.messages import load_named
from tools.codegen.spec import FieldSpec, MessageSpec, StructSpec, definition_files

# The files the generator reads: the shared set plus the project's newer definitions.
DEFINITIONS = definition_files(Path(DEFAULT_SPEC))


# -- finding mapKey arrays in the JSON ----------------------------------------------------


def _load_json(path: Path) -> dict[str, Any]:
    # The definitions carry a license header and notes as whole-line // comments.
    lines = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("//")]
    data: dict[str, Any] = json.loads("\n".join(lines))
    return data


def _versions(text: str) -> range:
    """``"3+"``, ``"1-4"``, ``"2"`` or ``"none"`` as a range (open ranges end at 999)."""
    if text == "none":
        return range(0)
    if text.endswith("+"):
        return range(int(text[:-1]), 1000)
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


@dataclass(frozen=True)
class MapKeyArray:
    """A struct array whose elements have ``mapKey`` fields."""

    message: str  # the JSON "name", e.g. "CreateTopicsRequest"
    path: tuple[str, ...]  # JSON field names from the message body to the array
    keys: tuple[str, ...]  # the element's mapKey field names
    versions: frozenset[int]  # where the array (and every field on its path) exists

    def __str__(self) -> str:
        return f"{self.message}.{'.'.join(self.path)}[{'+'.join(self.keys)}]"


def _walk(
    message: str,
    fields: list[dict[str, Any]],
    common: dict[str, list[dict[str, Any]]],
    path: tuple[str, ...],
    versions: frozenset[int],
    out: list[MapKeyArray],
) -> int:
    """Collect mapKey arrays below ``fields``; return how many mapKey flags were seen."""
    seen = 0
    for f in fields:
        here = versions & frozenset(_versions(f.get("versions", "0+")))
        type_name: str = f["type"]
        elem = type_name[2:] if type_name.startswith("[]") else type_name
        children = f.get("fields", common.get(elem))
        if children is None:
            continue  # a primitive or an array of primitives
        keys = tuple(c["name"] for c in children if c.get("mapKey"))
        seen += len(keys)
        if keys:
            assert type_name.startswith("[]"), f"{message}: mapKey outside an array"
            out.append(MapKeyArray(message, (*path, f["name"]), keys, here))
        seen += _walk(message, children, common, (*path, f["name"]), here, out)
    return seen


def find_map_key_arrays() -> tuple[list[MapKeyArray], int, int]:
    """Every mapKey array, the mapKey flags reached by walking, and the flags in the text."""
    found: list[MapKeyArray] = []
    walked = in_text = 0
    for _, path in sorted(DEFINITIONS.items()):
        data = _load_json(path)
        in_text += json.dumps(data).count('"mapKey": true')
        common = {s["name"]: s["fields"] for s in data.get("commonStructs", [])}
        versions = frozenset(_versions(data["validVersions"]))
        walked += _walk(data["name"], data["fields"], common, (), versions, found)
    return found, walked, in_text


MAP_KEY_ARRAYS, _WALKED, _IN_TEXT = find_map_key_arrays()


def test_every_map_key_flag_is_found() -> None:
    # Walking fields and commonStructs reaches every mapKey flag in the files (a flag in
    # a common struct used twice counts twice, hence >=), and there are many of them.
    assert _IN_TEXT > 50
    assert _WALKED >= _IN_TEXT
    assert len(MAP_KEY_ARRAYS) > 40
    names = {str(a) for a in MAP_KEY_ARRAYS}
    assert "CreateTopicsRequest.Topics[Name]" in names
    assert "ProduceRequest.TopicData[Name]" in names
    assert "AlterConfigsRequest.Resources[ResourceType+ResourceName]" in names
    assert "AlterConfigsRequest.Resources.Configs[Name]" in names


# -- building messages with duplicate keys ------------------------------------------------

_SPECS: dict[str, tuple[str, MessageSpec]] = {
    msg.name: (mod, msg) for mod, msgs in load_named(DEFAULT_SPEC) for msg in msgs
}
_KEY_VALUES: dict[str, tuple[Any, Any]] = {
    "string": ("dup", "other"),
    "int8": (1, 2),
    "int16": (1, 2),
    "int32": (7, 8),
    "int64": (7, 8),
    "uuid": (uuid.UUID(int=1), uuid.UUID(int=2)),
}
_MARKERS: dict[str, tuple[Any, Any, Any]] = {
    "string": ("first", "second", "third"),
    "bytes": (b"1", b"22", b"333"),
    "int8": (11, 12, 13),
    "int16": (11, 12, 13),
    "int32": (11, 12, 13),
    "int64": (11, 12, 13),
}


def _class(mod: str, spec: StructSpec) -> Any:
    return getattr(importlib.import_module(f"aiokafka.protocol._gen.{mod}"), spec.class_name)


def _field(spec: StructSpec, json_name: str) -> FieldSpec:
    return next(f for f in spec.fields if f.name == json_name)


@dataclass
class Case:
    array: MapKeyArray
    version: int
    obj: Any  # the whole message, holding three elements: key A, key B, key A again
    key_attrs: tuple[str, ...]  # the mapKey fields' attribute names
    keys: list[tuple[Any, ...]]  # their values in each element
    marker: str | None  # a non-key field whose values tell the elements apart


def _element(
    mod: str, spec: StructSpec, keys: tuple[str, ...], key_index: int
) -> tuple[Any, tuple[Any, ...]]:
    values = {}
    for name in keys:
        f = _field(spec, name)
        values[f.py_name] = _KEY_VALUES[f.elem_type][key_index]
    return _class(mod, spec)(**values), tuple(values.values())


def _marker(
    mod: str, spec: StructSpec, keys: tuple[str, ...], version: int
) -> tuple[str, list[Any]] | None:
    """A non-key field of ``spec`` and three different values for it, if there is one:
    a scalar, else a primitive array, else a struct array of 0, 1 and 2 elements."""
    fields = [f for f in spec.fields if f.name not in keys and f.present(version)]
    for f in fields:
        if f.type in _MARKERS:
            return f.py_name, list(_MARKERS[f.type])
    for f in fields:
        if f.is_array and f.elem_type in _MARKERS:
            return f.py_name, [[v] for v in _MARKERS[f.elem_type]]
    for f in fields:
        if f.is_array and f.struct is not None:
            struct = f.struct
            return f.py_name, [[_default(mod, struct, version) for _ in range(n)] for n in range(3)]
    return None


def _default(mod: str, spec: StructSpec, version: int) -> Any:
    """A struct with default values, encodable at ``version``: a records field defaults
    to ``None``, which a version where it is not nullable (ShareFetchResponse v1+) cannot
    carry, so it gets empty records there."""
    obj = _class(mod, spec)()
    for f in spec.fields:
        if f.type == "records" and f.present(version) and not f.nullable(version):
            setattr(obj, f.py_name, b"")
    return obj


def _build(array: MapKeyArray, version: int) -> Case:
    mod, msg = _SPECS[array.message]
    spec = msg.body
    root = _class(mod, spec)()
    holder = root
    for name in array.path[:-1]:  # one element in each enclosing array
        f = _field(spec, name)
        assert f.struct is not None
        spec = f.struct
        child = _class(mod, spec)()
        setattr(holder, f.py_name, [child] if f.is_array else child)
        holder = child
    f = _field(spec, array.path[-1])
    assert f.struct is not None and f.is_array
    elem_spec = f.struct
    elements, keys = [], []
    for key_index in (0, 1, 0):
        element, key = _element(mod, elem_spec, array.keys, key_index)
        elements.append(element)
        keys.append(key)
    marker = _marker(mod, elem_spec, array.keys, version)
    if marker is not None:
        for element, value in zip(elements, marker[1], strict=True):
            setattr(element, marker[0], value)
    setattr(holder, f.py_name, elements)
    key_attrs = tuple(_field(elem_spec, name).py_name for name in array.keys)
    return Case(array, version, root, key_attrs, keys, marker[0] if marker else None)


def _target(case: Case, obj: Any) -> list[Any]:
    _, msg = _SPECS[case.array.message]
    spec = msg.body
    value = obj
    for name in case.array.path:
        f = _field(spec, name)
        value = getattr(value, f.py_name)
        if name != case.array.path[-1]:
            value = value[0] if f.is_array else value
            assert f.struct is not None
            spec = f.struct
    assert isinstance(value, list)
    return value


def _cases() -> list[Case]:
    out = []
    for array in MAP_KEY_ARRAYS:
        cls = getattr(messages, array.message, None)
        if cls is None or array.message not in _SPECS:
            continue  # broker-internal (controller, KRaft) messages the client does not use
        for v in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
            if v in array.versions:
                out.append(_build(array, v))
    return out


CASES = _cases()


def test_cases_cover_client_messages() -> None:
    covered = {c.array.message for c in CASES}
    assert {"CreateTopicsRequest", "ProduceRequest", "AlterConfigsRequest"} <= covered
    assert {"MetadataResponse", "ApiVersionsResponse", "IncrementalAlterConfigsRequest"} <= covered
    assert len(CASES) > 200  # every version of every client-facing mapKey array
    # Every element struct has a non-key field that tells the duplicates apart.
    assert [str(c.array) for c in CASES if c.marker is None] == []


@pytest.mark.parametrize("case", CASES, ids=[f"{c.array}-v{c.version}" for c in CASES])
def test_duplicate_keys_survive_a_round_trip(case: Case) -> None:
    encoded = case.obj.encode(case.version)
    decoded = type(case.obj).decode(encoded, case.version)
    assert decoded == case.obj
    elements = _target(case, decoded)
    assert len(elements) == 3
    got_keys = [tuple(getattr(e, attr) for attr in case.key_attrs) for e in elements]
    assert got_keys == case.keys
    assert got_keys[0] == got_keys[2] != got_keys[1]
    if case.marker is not None:
        markers = [getattr(e, case.marker) for e in elements]
        # The two same-key elements stayed distinct, each in its place.
        assert markers[0] != markers[1] != markers[2] != markers[0]
        assert markers == [getattr(e, case.marker) for e in _target(case, case.obj)]


# -- the same, spelled out for two messages a client builds itself ------------------------


def test_create_topics_keeps_a_repeated_topic_on_the_wire() -> None:
    request = messages.CreateTopicsRequest(
        topics=[
            messages.CreatableTopic(name="a", num_partitions=1, replication_factor=1),
            messages.CreatableTopic(name="b", num_partitions=2, replication_factor=1),
            messages.CreatableTopic(name="a", num_partitions=3, replication_factor=1),
        ],
        timeout_ms=1000,
    )
    v0 = request.encode(0)
    assert v0[:4] == (3).to_bytes(4, "big")  # int32 array length: all three are sent
    for version in (0, 5, messages.CreateTopicsRequest.MAX_VERSION):
        decoded = messages.CreateTopicsRequest.decode(request.encode(version), version)
        got = [(t.name, t.num_partitions) for t in decoded.topics]
        assert got == [("a", 1), ("b", 2), ("a", 3)]


def test_produce_keeps_a_repeated_topic_on_the_wire() -> None:
    def topic(name: str, partition: int) -> Any:
        data = messages.PartitionProduceData(index=partition, records=b"rec%d" % partition)
        return messages.TopicProduceData(name=name, partition_data=[data])

    request = messages.ProduceRequest(
        acks=-1, timeout_ms=1000, topic_data=[topic("t", 0), topic("u", 0), topic("t", 1)]
    )
    for version in (3, 9, messages.ProduceRequest.MAX_VERSION):
        decoded = messages.ProduceRequest.decode(request.encode(version), version)
        got = [
            (t.name, [(p.index, bytes(p.records)) for p in t.partition_data])
            for t in decoded.topic_data
        ]
        assert got == [("t", [(0, b"rec0")]), ("u", [(0, b"rec0")]), ("t", [(1, b"rec1")])]
