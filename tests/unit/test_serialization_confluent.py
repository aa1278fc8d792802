"""ConfluentSchemaRegistry: our protocol over confluent-kafka's registry client.

Behind it is confluent-kafka's own in-process registry (``mock://`` URLs), the one its
serializers are tested with; a closed port shows what happens when nothing answers.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from aiokafka.serialization import (
    AvroDeserializer,
    AvroSerializer,
    ConfluentSchemaRegistry,
    SchemaNotFoundError,
    SchemaRegistry,
    SchemaRegistryError,
)

ORDER = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}],
    }
)


def _mock_client(name: str) -> SchemaRegistryClient:
    return SchemaRegistryClient.new_client({"url": f"mock://{name}"})


async def test_register_and_get_schema_through_the_client() -> None:
    client = _mock_client("register")
    registry: SchemaRegistry = ConfluentSchemaRegistry(client)
    schema_id = await registry.register("orders-value", ORDER)
    # The client saw the registration: its own lookup finds the same id.
    assert client.lookup_schema("orders-value", Schema(ORDER, "AVRO")).schema_id == schema_id
    assert await registry.register("orders-value", ORDER) == schema_id
    assert json.loads(await registry.get_schema(schema_id)) == json.loads(ORDER)


async def test_a_schema_registered_by_someone_else_is_found_by_id() -> None:
    client = _mock_client("someone-else")
    schema_id = client.register_schema("orders-value", Schema(ORDER, "AVRO"))
    deserializer = AvroDeserializer(ConfluentSchemaRegistry(client))
    await deserializer.resolve(schema_id)
    assert deserializer.resolved_ids == {schema_id}


async def test_unknown_id_is_schema_not_found_with_the_registry_error_as_cause() -> None:
    registry = ConfluentSchemaRegistry(_mock_client("unknown"))
    with pytest.raises(SchemaNotFoundError, match="has no schema with id 4242") as info:
        await registry.get_schema(4242)
    assert info.value.schema_id == 4242
    assert type(info.value.__cause__).__name__ == "SchemaRegistryError"
    assert info.value.__cause__.http_status_code == 404  # type: ignore[attr-defined]


async def test_schema_of_another_type_is_refused() -> None:
    client = _mock_client("other-type")
    json_schema = '{"type": "object", "properties": {"id": {"type": "integer"}}}'
    schema_id = client.register_schema("orders-value", Schema(json_schema, "JSON"))
    with pytest.raises(SchemaRegistryError, match=f"schema id {schema_id} is a JSON schema"):
        await ConfluentSchemaRegistry(client).get_schema(schema_id)
    assert (
        await ConfluentSchemaRegistry(client, schema_type="JSON").get_schema(schema_id)
        == json_schema
    )


async def test_no_answer_is_a_schema_registry_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port now: the client's connection is refused.
    client = SchemaRegistryClient({"url": f"http://127.0.0.1:{port}", "max.retries": 0})
    serializer = AvroSerializer(ConfluentSchemaRegistry(client), "orders-value", ORDER)
    with pytest.raises(SchemaRegistryError, match="registering a schema under subject") as info:
        await serializer.register()
    assert info.value.status is None
    assert info.value.__cause__ is not None
    assert serializer.schema_id is None


async def test_calls_run_off_the_event_loop_thread() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []
    client = _mock_client("threads")

    class Recording:
        # Records the thread of each blocking call, then delegates to the client.
        def register_schema(self, subject: str, schema: Schema) -> int:
            seen.append(threading.get_ident())
            return int(client.register_schema(subject, schema))

        def get_schema(self, schema_id: int) -> Schema:
            seen.append(threading.get_ident())
            return client.get_schema(schema_id)

    registry = ConfluentSchemaRegistry(Recording())
    assert registry.client is not client
    schema_id = await registry.register("orders-value", ORDER)
    await registry.get_schema(schema_id)
    assert len(seen) == 2 and loop_thread not in seen
