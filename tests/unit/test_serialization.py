"""aiokafka.serialization without a broker: the wire format's bytes, StaticSchemas,
the Avro serializer pair's round trips and errors, and what imports what."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aiokafka.serialization import (
    HEADER_SIZE,
    AvroDeserializer,
    AvroSerializer,
    SchemaNotFoundError,
    SchemaRegistryError,
    SchemaSerializationError,
    StaticSchemas,
    WireFormatError,
    frame,
    topic_subject,
    unframe,
)

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
    ],
}
# v2 adds a field with a default: a reader on v2 reads v1 records (schema resolution).
ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "quantity", "type": "int", "default": 1},
    ],
}


# -- wire format ----------------------------------------------------------------------


def test_frame_is_magic_byte_big_endian_id_then_payload() -> None:
    assert frame(1, b"abc") == b"\x00\x00\x00\x00\x01abc"
    assert frame(0x01020304, b"") == b"\x00\x01\x02\x03\x04"
    assert frame(2**31 - 1, b"x")[:HEADER_SIZE] == b"\x00\x7f\xff\xff\xff"


@given(st.integers(0, 2**31 - 1), st.binary(max_size=64))
def test_unframe_inverts_frame(schema_id: int, payload: bytes) -> None:
    got_id, got = unframe(frame(schema_id, payload))
    assert (got_id, bytes(got)) == (schema_id, payload)
    # bytearray and memoryview input too (a consumer hands bytes; callers may not).
    assert unframe(bytearray(frame(schema_id, payload)))[0] == schema_id
    assert unframe(memoryview(frame(schema_id, payload)))[0] == schema_id


@pytest.mark.parametrize("schema_id", [-1, 2**31, 2**32])
def test_frame_rejects_ids_a_registry_cannot_have(schema_id: int) -> None:
    with pytest.raises(ValueError, match="schema_id must be between 0 and 2147483647"):
        frame(schema_id, b"")


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x00\x00\x01"])
def test_unframe_short_data_is_a_wire_format_error(data: bytes) -> None:
    with pytest.raises(WireFormatError, match=f"{len(data)} bytes, shorter than the 5-byte"):
        unframe(data)


def test_unframe_wrong_magic_byte_names_the_byte() -> None:
    # A plain JSON value read by a schema-aware deserializer.
    with pytest.raises(WireFormatError, match=r"first byte is 0x7b, not the magic byte 0x00"):
        unframe(b'{"id": 1}')
    with pytest.raises(WireFormatError, match="first byte is 0x01"):
        unframe(struct.pack(">BI", 1, 7) + b"payload")


def test_error_tree() -> None:
    for cls in (WireFormatError, SchemaNotFoundError, SchemaRegistryError):
        assert issubclass(cls, SchemaSerializationError)
    # ValueError, not KafkaError: the consumer keeps the record for the next read
    # (see aiokafka/serialization/errors.py).
    assert issubclass(SchemaSerializationError, ValueError)
    exc = SchemaNotFoundError(42)
    assert exc.schema_id == 42 and str(exc) == "no schema with id 42"
    rejected = SchemaRegistryError("incompatible", status=409, error_code=409)
    assert (rejected.status, rejected.error_code) == (409, 409)


def test_topic_subject_is_confluents_topic_name_strategy() -> None:
    assert topic_subject("orders") == "orders-value"
    assert topic_subject("orders", is_key=True) == "orders-key"


# -- StaticSchemas ----------------------------------------------------------------------


async def test_static_schemas_register_finds_the_pinned_id_whatever_the_spacing() -> None:
    schemas = StaticSchemas({1: ORDER_V1, 2: json.dumps(ORDER_V2, indent=2)})
    assert schemas.ids == (1, 2)
    # The same JSON with other spacing and key order is the same schema.
    reordered = json.dumps(dict(reversed(list(ORDER_V2.items()))))
    assert await schemas.register("orders-value", reordered) == 2
    assert await schemas.register("other-value", json.dumps(ORDER_V1)) == 1
    assert json.loads(await schemas.get_schema(1)) == ORDER_V1


async def test_static_schemas_unknown_schema_and_unknown_id() -> None:
    schemas = StaticSchemas({5: ORDER_V1})
    with pytest.raises(SchemaRegistryError, match=r"subject 'orders-value': no id is pinned"):
        await schemas.register("orders-value", json.dumps(ORDER_V2))
    with pytest.raises(SchemaNotFoundError, match=r"no schema is pinned under id 6") as info:
        await schemas.get_schema(6)
    assert info.value.schema_id == 6
    assert "pinned ids: [5]" in str(info.value)


@pytest.mark.parametrize("bad", [-1, 2**31, "1"])
def test_static_schemas_rejects_bad_ids(bad: object) -> None:
    with pytest.raises(ValueError, match="schema ids must be integers"):
        StaticSchemas({bad: ORDER_V1})  # type: ignore[dict-item]


def test_static_schemas_rejects_one_schema_under_two_ids() -> None:
    with pytest.raises(ValueError, match="schemas 1 and 2 are the same schema"):
        StaticSchemas({1: ORDER_V1, 2: json.dumps(ORDER_V1, indent=4)})


# -- Avro -----------------------------------------------------------------------------


async def test_avro_round_trip_through_the_sync_callables() -> None:
    schemas = StaticSchemas({7: ORDER_V1})
    serializer = AvroSerializer(schemas, topic_subject("orders"), ORDER_V1)
    assert serializer.schema_id is None
    assert await serializer.register() == 7
    assert serializer.schema_id == 7 and serializer.subject == "orders-value"
    data = serializer({"id": 1, "item": "tea"})
    assert data is not None
    # Header, then Avro binary: zig-zag long 1 -> 0x02, string "tea" -> len 3 (0x06).
    assert data == b"\x00\x00\x00\x00\x07" + b"\x02\x06tea"
    deserializer = AvroDeserializer(schemas)
    await deserializer.resolve(*schemas.ids)
    assert deserializer.resolved_ids == {7}
    assert deserializer(data) == {"id": 1, "item": "tea"}
    # Tombstones stay tombstones on both sides.
    assert serializer(None) is None
    assert deserializer(None) is None


async def test_serializer_before_register_says_what_to_do() -> None:
    serializer = AvroSerializer(StaticSchemas({1: ORDER_V1}), "orders-value", ORDER_V1)
    with pytest.raises(SchemaSerializationError, match=r"await serializer.register\(\)"):
        serializer({"id": 1, "item": "tea"})


async def test_serializer_value_mismatch_names_the_field() -> None:
    serializer = AvroSerializer(StaticSchemas({1: ORDER_V1}), "orders-value", ORDER_V1)
    await serializer.register()
    with pytest.raises(
        SchemaSerializationError,
        match=r"schema id 1\): the value does not match the schema: "
        r"shop\.Order\.id is <not a number>",
    ) as info:
        serializer({"id": "not a number", "item": "tea"})
    assert info.value.__cause__ is not None
    with pytest.raises(
        SchemaSerializationError, match=r"Field\(shop\.Order\.item\) is None expected string"
    ):
        serializer({"id": 1})


async def test_register_failure_leaves_the_serializer_unregistered() -> None:
    serializer = AvroSerializer(StaticSchemas({1: ORDER_V1}), "orders-value", ORDER_V2)
    with pytest.raises(SchemaRegistryError):
        await serializer.register()
    assert serializer.schema_id is None


def test_invalid_schemas_are_serialization_errors() -> None:
    with pytest.raises(SchemaSerializationError, match="subject 'x-value' is not a valid Avro"):
        AvroSerializer(StaticSchemas({}), "x-value", {"type": "no-such-type"})
    with pytest.raises(SchemaSerializationError, match="the reader schema is not a valid Avro"):
        AvroDeserializer(StaticSchemas({}), reader_schema="not json")


async def test_sync_deserializer_fails_clearly_for_an_unresolved_id() -> None:
    schemas = StaticSchemas({1: ORDER_V1, 2: ORDER_V2})
    writer = AvroSerializer(schemas, "orders-value", ORDER_V2)
    await writer.register()
    data = writer({"id": 3, "item": "jam", "quantity": 2})
    deserializer = AvroDeserializer(schemas)
    await deserializer.resolve(1)
    with pytest.raises(SchemaNotFoundError, match=r"schema id 2 is not resolved") as info:
        deserializer(data)
    assert info.value.schema_id == 2
    assert "resolve(2)" in str(info.value)
    # What the message says to do works.
    await deserializer.resolve(info.value.schema_id)
    assert deserializer(data) == {"id": 3, "item": "jam", "quantity": 2}


async def test_async_deserialize_resolves_on_the_way() -> None:
    schemas = StaticSchemas({1: ORDER_V1})
    writer = AvroSerializer(schemas, "orders-value", ORDER_V1)
    await writer.register()
    deserializer = AvroDeserializer(schemas)
    assert await deserializer.deserialize(writer({"id": 1, "item": "tea"})) == {
        "id": 1,
        "item": "tea",
    }
    assert deserializer.resolved_ids == {1}
    assert await deserializer.deserialize(None) is None
    with pytest.raises(SchemaNotFoundError, match="no schema is pinned under id 9"):
        await deserializer.deserialize(frame(9, b"\x02"))
    with pytest.raises(SchemaNotFoundError):
        await deserializer.resolve(9)


async def test_reader_schema_resolves_old_records() -> None:
    schemas = StaticSchemas({1: ORDER_V1, 2: ORDER_V2})
    v1 = AvroSerializer(schemas, "orders-value", ORDER_V1)
    v2 = AvroSerializer(schemas, "orders-value", ORDER_V2)
    await v1.register()
    await v2.register()
    reader = AvroDeserializer(schemas, reader_schema=ORDER_V2)
    await reader.resolve(1, 2)
    # The v1 record gets v2's default; the v2 record reads as written.
    assert reader(v1({"id": 1, "item": "tea"})) == {"id": 1, "item": "tea", "quantity": 1}
    assert reader(v2({"id": 2, "item": "jam", "quantity": 5})) == {
        "id": 2,
        "item": "jam",
        "quantity": 5,
    }
    # A reader on v1 drops the field it does not know.
    old_reader = AvroDeserializer(schemas, reader_schema=json.dumps(ORDER_V1))
    await old_reader.resolve(2)
    assert old_reader(v2({"id": 2, "item": "jam", "quantity": 5})) == {"id": 2, "item": "jam"}


async def test_payload_that_does_not_decode() -> None:
    schemas = StaticSchemas({1: ORDER_V1})
    deserializer = AvroDeserializer(schemas)
    await deserializer.resolve(1)
    with pytest.raises(SchemaSerializationError, match=r"schema id 1: the 2-byte Avro payload"):
        deserializer(frame(1, b"\x02\x10"))  # the string says 8 bytes, none follow
    with pytest.raises(WireFormatError):
        deserializer(b'{"id": 1, "item": "tea"}')


async def test_registry_schema_that_is_not_avro() -> None:
    deserializer = AvroDeserializer(StaticSchemas({1: '{"type": "object"}'}))
    with pytest.raises(SchemaSerializationError, match="schema id 1 is not a valid Avro schema"):
        await deserializer.resolve(1)
    assert deserializer.resolved_ids == frozenset()


# -- imports --------------------------------------------------------------------------


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout))


def _has(modules: set[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_import_aiokafka_imports_no_serialization_nor_fastavro() -> None:
    loaded = _loaded_after("import aiokafka")
    for name in ("aiokafka.serialization", "fastavro", "confluent_kafka"):
        assert not _has(loaded, name), name


def test_serialization_package_defers_its_optional_dependencies() -> None:
    loaded = _loaded_after(
        "from aiokafka.serialization import StaticSchemas, frame, unframe, topic_subject"
    )
    assert not _has(loaded, "fastavro")
    assert not _has(loaded, "confluent_kafka")
    loaded = _loaded_after("from aiokafka.serialization import AvroSerializer")
    assert _has(loaded, "fastavro") and not _has(loaded, "confluent_kafka")


def test_missing_fastavro_names_the_extra() -> None:
    # A meta-path finder that refuses fastavro stands in for an install without it.
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'fastavro':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import aiokafka.serialization as s\n"
        "try:\n"
        "    s.AvroDeserializer\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert 'needs fastavro: pip install "aiokafka[avro]"' in done.stdout, done.stdout


def test_unknown_attribute() -> None:
    import aiokafka.serialization as serialization

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = serialization.Nope  # type: ignore[attr-defined]
