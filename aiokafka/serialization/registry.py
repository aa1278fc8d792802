"""Where serializers look schemas up: the :class:`SchemaRegistry` protocol and
:class:`StaticSchemas`, ids pinned in the application.

aiokafka ships no HTTP client of a schema registry. With a registry, wrap
confluent-kafka's client in :class:`~aiokafka.serialization.ConfluentSchemaRegistry`;
without one, pin the ids at deploy time with :class:`StaticSchemas`; anything else
that has the two coroutines of :class:`SchemaRegistry` works too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from aiokafka.serialization.errors import SchemaNotFoundError, SchemaRegistryError

__all__ = ["SchemaRegistry", "StaticSchemas", "schema_text", "topic_subject"]


class SchemaRegistry(Protocol):
    """What a serializer needs from a schema registry.

    Both calls are coroutines because a registry is usually a network service; the
    serializers call them at set-up (and on a cache miss), never per record.
    """

    async def register(self, subject: str, schema: str) -> int:
        """Register ``schema`` (its text; for Avro, its JSON) under ``subject`` and
        return its id; registering a schema the subject has returns the same id.

        Raises:
            SchemaRegistryError: if the registry rejects the schema or fails.
        """
        ...

    async def get_schema(self, schema_id: int) -> str:
        """The text of the schema with id ``schema_id``.

        Raises:
            SchemaNotFoundError: if the registry has no schema with that id.
            SchemaRegistryError: if the registry fails.
        """
        ...


def topic_subject(topic: str, *, is_key: bool = False) -> str:
    """The subject of a topic's values (``"<topic>-value"``) or keys
    (``"<topic>-key"``), as the Confluent serializers name it by default
    (``TopicNameStrategy``)."""
    return f"{topic}-{'key' if is_key else 'value'}"


def schema_text(schema: str | Mapping[str, Any]) -> str:
    """A schema as text: a string as is, a mapping (parsed JSON) as compact JSON."""
    if isinstance(schema, str):
        return schema
    return json.dumps(schema, separators=(",", ":"))


def _same_key(text: str) -> object:
    # Two texts of the same JSON (other spacing, other key order) name one schema.
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return text


class StaticSchemas:
    """Schema ids pinned by the application, for deployments without a registry.

    Every producer and consumer of a topic must be given the same ids (ship them with
    the code or its configuration): an id is written into every record, and a
    reader decodes the record with the schema the id names here. Ids are never reused
    for another schema; a new version of a schema gets a new id, and readers must
    know it before the first record carrying it reaches them.

    Args:
        schemas: Schema id to schema (text, or its parsed JSON). Ids are integers from
            0 to 2**31 - 1, as a registry's.

    Example::

        schemas = StaticSchemas({1: ORDER_V1, 2: ORDER_V2})
        serializer = AvroSerializer(schemas, "orders-value", ORDER_V2)
        await serializer.register()  # finds id 2

    :meth:`register` does not register anything: it returns the id pinned for the
    schema and ignores the subject (no compatibility checks happen).
    """

    def __init__(self, schemas: Mapping[int, str | Mapping[str, Any]]) -> None:
        self._by_id: dict[int, str] = {}
        self._ids: dict[object, int] = {}
        for schema_id, schema in schemas.items():
            if not isinstance(schema_id, int) or not 0 <= schema_id <= 2**31 - 1:
                raise ValueError(f"schema ids must be integers 0 to 2**31 - 1, got {schema_id!r}")
            text = schema_text(schema)
            key = _same_key(text)
            if key in self._ids:
                raise ValueError(
                    f"schemas {self._ids[key]} and {schema_id} are the same schema; "
                    "pin each schema once"
                )
            self._by_id[schema_id] = text
            self._ids[key] = schema_id

    @property
    def ids(self) -> tuple[int, ...]:
        """The pinned ids (to resolve them all in a deserializer at set-up)."""
        return tuple(self._by_id)

    async def register(self, subject: str, schema: str) -> int:
        """The id pinned for ``schema`` (the same JSON; spacing and key order aside).

        Raises:
            SchemaRegistryError: if no id is pinned for the schema.
        """
        schema_id = self._ids.get(_same_key(schema))
        if schema_id is None:
            raise SchemaRegistryError(
                f"subject {subject!r}: no id is pinned for this schema in StaticSchemas "
                f"(pinned ids: {sorted(self._by_id)}); add it with a new id"
            )
        return schema_id

    async def get_schema(self, schema_id: int) -> str:
        """The schema pinned under ``schema_id``.

        Raises:
            SchemaNotFoundError: if no schema is pinned under that id.
        """
        try:
            return self._by_id[schema_id]
        except KeyError:
            raise SchemaNotFoundError(
                schema_id,
                f"no schema is pinned under id {schema_id} in StaticSchemas "
                f"(pinned ids: {sorted(self._by_id)})",
            ) from None
