"""An adapter of confluent-kafka's schema registry client to :class:`SchemaRegistry`.

confluent-kafka's ``SchemaRegistryClient`` (``pip install
"confluent-kafka[schemaregistry]"``) is the Python client of Confluent Schema Registry's
REST API, which Karapace, Redpanda's registry and Apicurio Registry's compatibility
API (``/apis/ccompat/v7``) also serve. It is blocking, so each call runs in a worker
thread; it caches what it has registered and fetched, and the serializers call it only
at set-up and on a cache miss.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.error import SchemaRegistryError as _ConfluentError

from aiokafka.serialization.errors import SchemaNotFoundError, SchemaRegistryError

__all__ = ["ConfluentSchemaRegistry"]

_T = TypeVar("_T")


class ConfluentSchemaRegistry:
    """A :class:`SchemaRegistry` backed by confluent-kafka's ``SchemaRegistryClient``.

    Args:
        client: A ``confluent_kafka.schema_registry.SchemaRegistryClient`` (it owns the
            URL, authentication and TLS settings).
        schema_type: The type of the schemas registered and expected: ``"AVRO"`` (the
            default), ``"JSON"`` or ``"PROTOBUF"``.

    Example::

        from confluent_kafka.schema_registry import SchemaRegistryClient

        registry = ConfluentSchemaRegistry(
            SchemaRegistryClient({"url": "http://registry:8081"})
        )
        serializer = AvroSerializer(registry, topic_subject("orders"), ORDER_SCHEMA)
        await serializer.register()

    A call that is cancelled stops waiting at once; its worker thread finishes the
    HTTP request (bounded by the client's own timeout) in the background.
    """

    def __init__(self, client: Any, *, schema_type: str = "AVRO") -> None:
        self._client = client
        self._schema_type = schema_type

    @property
    def client(self) -> Any:
        """The wrapped confluent-kafka client."""
        return self._client

    async def register(self, subject: str, schema: str) -> int:
        """Register ``schema`` under ``subject`` and return its id.

        Raises:
            SchemaRegistryError: if the registry rejects the schema (``error_code``
                409: incompatible with the subject's earlier versions; 42201: invalid)
                or does not answer.
        """
        what = f"registering a schema under subject {subject!r}"
        schema_id = await self._call(
            what, self._client.register_schema, subject, Schema(schema, self._schema_type)
        )
        return int(schema_id)

    async def get_schema(self, schema_id: int) -> str:
        """The text of the schema with id ``schema_id``.

        Raises:
            SchemaNotFoundError: if the registry has no schema with that id.
            SchemaRegistryError: if the schema is not of this adapter's
                ``schema_type``, or the registry does not answer.
        """
        try:
            found = await self._call(
                f"fetching schema id {schema_id}", self._client.get_schema, schema_id
            )
        except SchemaRegistryError as exc:
            if exc.status == 404:
                raise SchemaNotFoundError(
                    schema_id, f"the schema registry has no schema with id {schema_id}"
                ) from exc.__cause__
            raise
        found_type = found.schema_type or "AVRO"  # the REST API omits it for Avro
        if found_type != self._schema_type:
            raise SchemaRegistryError(
                f"schema id {schema_id} is a {found_type} schema, not {self._schema_type}"
            )
        return str(found.schema_str)

    async def _call(self, what: str, fn: Callable[..., _T], *args: Any) -> _T:
        # One boundary for the client's failures: its own error (an HTTP answer) and
        # whatever its HTTP stack raises when there is no answer (refused, timed out).
        try:
            return await asyncio.to_thread(fn, *args)
        except _ConfluentError as exc:
            raise SchemaRegistryError(
                f"{what}: {exc}",
                status=exc.http_status_code,
                error_code=exc.error_code,
            ) from exc
        except Exception as exc:
            raise SchemaRegistryError(f"{what}: {type(exc).__name__}: {exc}") from exc
