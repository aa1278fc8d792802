"""Avro values in the Confluent wire format, on fastavro.

Needs the ``avro`` extra (``pip install "aiokafka[avro]"``, which brings fastavro).

Both classes are plain synchronous callables, so they go straight into a producer's
``value_serializer`` (or ``key_serializer``) and a consumer's ``value_deserializer``:
encoding a record never waits for a registry. What needs the registry happens at
set-up, in a coroutine: :meth:`AvroSerializer.register` finds the schema's id, and
:meth:`AvroDeserializer.resolve` fetches the writer schemas of the ids the consumer
will meet. A record carrying an id that was not resolved raises
:class:`~aiokafka.serialization.SchemaNotFoundError`, which names the id; resolve it
and read again (the consumer keeps the record).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from fastavro import parse_schema, schemaless_reader, schemaless_writer
from fastavro.types import Schema
from fastavro.validation import ValidationError, validate

from aiokafka.serialization.errors import SchemaNotFoundError, SchemaSerializationError
from aiokafka.serialization.registry import SchemaRegistry, schema_text
from aiokafka.serialization.wire import frame, unframe

__all__ = ["AvroDeserializer", "AvroSerializer"]

# What fastavro raises for a value that does not fit a schema, for bytes that do not
# decode with one, and for JSON that is not an Avro schema (SchemaParseException and
# SchemaResolutionError are Exception subclasses of its own; it has no common base).
_FASTAVRO_ERRORS = (Exception,)


def _parse(text: str, what: str) -> Schema:
    try:
        return parse_schema(json.loads(text))
    except _FASTAVRO_ERRORS as exc:
        raise SchemaSerializationError(f"{what} is not a valid Avro schema: {exc}") from exc


class AvroSerializer:
    """Encodes values with one Avro schema, registered under one subject.

    Args:
        registry: Where the schema's id comes from (a :class:`SchemaRegistry`:
            :class:`~aiokafka.serialization.StaticSchemas`,
            :class:`~aiokafka.serialization.ConfluentSchemaRegistry`, ...).
        subject: The subject to register the schema under (see
            :func:`~aiokafka.serialization.topic_subject`).
        schema: The Avro schema, as JSON text or as the parsed JSON (a dict).

    Raises:
        SchemaSerializationError: if ``schema`` is not a valid Avro schema.

    Example::

        serializer = AvroSerializer(registry, topic_subject("orders"), ORDER_SCHEMA)
        await serializer.register()
        producer = AIOKafkaProducer(value_serializer=serializer)

    ``None`` stays ``None`` (a tombstone), as the producer calls its serializers for
    ``None`` too.
    """

    def __init__(
        self, registry: SchemaRegistry, subject: str, schema: str | Mapping[str, Any]
    ) -> None:
        self._registry = registry
        self._subject = subject
        self._text = schema_text(schema)
        self._parsed = _parse(self._text, f"the schema for subject {subject!r}")
        self._schema_id: int | None = None

    @property
    def subject(self) -> str:
        """The subject the schema is registered under."""
        return self._subject

    @property
    def schema_id(self) -> int | None:
        """The schema's id, ``None`` until :meth:`register` has run."""
        return self._schema_id

    async def register(self) -> int:
        """Register the schema under the subject (once) and return its id.

        Call it at set-up, before the first record is serialized.

        Raises:
            SchemaRegistryError: if the registry rejects the schema (say, incompatible
                with the subject's earlier versions) or fails.
        """
        if self._schema_id is None:
            self._schema_id = await self._registry.register(self._subject, self._text)
        return self._schema_id

    def __call__(self, value: Any) -> bytes | None:
        """Encode ``value`` framed with the schema's id.

        Raises:
            SchemaSerializationError: if :meth:`register` has not run yet, or ``value`` does
                not match the schema (the message names the field).
        """
        if value is None:
            return None
        schema_id = self._schema_id
        if schema_id is None:
            raise SchemaSerializationError(
                f"subject {self._subject!r}: the schema has no id yet; "
                "await serializer.register() before the first record"
            )
        out = io.BytesIO()
        try:
            schemaless_writer(out, self._parsed, value)
        except _FASTAVRO_ERRORS as exc:
            raise SchemaSerializationError(
                f"subject {self._subject!r} (schema id {schema_id}): the value does not "
                f"match the schema: {_mismatch(self._parsed, value, exc)}"
            ) from exc
        return frame(schema_id, out.getvalue())


class AvroDeserializer:
    """Decodes Confluent-framed Avro bytes with the writer schema their id names.

    Args:
        registry: Where writer schemas are fetched from, by id.
        reader_schema: The schema to decode into (Avro schema resolution: fields the
            writer did not have get their defaults, fields the reader does not know
            are dropped), or ``None`` to decode with each record's writer schema.

    Raises:
        SchemaSerializationError: if ``reader_schema`` is not a valid Avro schema.

    As a consumer's ``value_deserializer``, resolve the ids at set-up; a record with
    another id makes ``getone()``/``getmany()`` raise :class:`SchemaNotFoundError`,
    and the consumer keeps that record for the next read::

        deserializer = AvroDeserializer(registry)
        await deserializer.resolve(*known_ids)
        consumer = AIOKafkaConsumer("orders", value_deserializer=deserializer)
        ...
        while True:
            try:
                record = await consumer.getone()
            except SchemaNotFoundError as exc:
                await deserializer.resolve(exc.schema_id)  # a new schema version
                continue

    Or keep the consumer on bytes and ``await deserializer.deserialize(record.value)``,
    which resolves ids as it meets them.
    """

    def __init__(
        self,
        registry: SchemaRegistry,
        reader_schema: str | Mapping[str, Any] | None = None,
    ) -> None:
        self._registry = registry
        self._reader: Schema | None = None
        if reader_schema is not None:
            self._reader = _parse(schema_text(reader_schema), "the reader schema")
        # Id -> parsed writer schema. An id never changes meaning in a registry, so
        # entries are kept for the deserializer's life.
        self._writers: dict[int, Schema] = {}

    @property
    def resolved_ids(self) -> frozenset[int]:
        """The schema ids this deserializer can decode without the registry."""
        return frozenset(self._writers)

    async def resolve(self, *schema_ids: int) -> None:
        """Fetch and parse the writer schemas of ``schema_ids`` (those not resolved
        yet), so that records carrying them decode synchronously.

        Raises:
            SchemaNotFoundError: if the registry has no schema with one of the ids.
            SchemaRegistryError: if the registry fails.
            SchemaSerializationError: if a fetched schema is not a valid Avro schema.
        """
        for schema_id in schema_ids:
            if schema_id not in self._writers:
                text = await self._registry.get_schema(schema_id)
                self._writers[schema_id] = _parse(text, f"schema id {schema_id}")

    async def deserialize(self, data: bytes | bytearray | memoryview | None) -> Any:
        """Decode one value, resolving its schema id first if needed; ``None`` (a
        tombstone) stays ``None``.

        Raises:
            WireFormatError: if ``data`` is not in the Confluent wire format.
            SchemaNotFoundError: if the registry has no schema with the record's id.
            SchemaRegistryError: if the registry fails.
            SchemaSerializationError: if the payload does not decode with its schema.
        """
        if data is None:
            return None
        schema_id, payload = unframe(data)
        await self.resolve(schema_id)
        return self._decode(schema_id, payload)

    def __call__(self, data: bytes | bytearray | memoryview | None) -> Any:
        """Decode one value with an already resolved schema (for
        ``value_deserializer``); ``None`` stays ``None``.

        Raises:
            WireFormatError: if ``data`` is not in the Confluent wire format.
            SchemaNotFoundError: if the record's schema id has not been resolved
                (``await resolve(exc.schema_id)``, then read again).
            SchemaSerializationError: if the payload does not decode with its schema.
        """
        if data is None:
            return None
        schema_id, payload = unframe(data)
        return self._decode(schema_id, payload)

    def _decode(self, schema_id: int, payload: memoryview) -> Any:
        writer = self._writers.get(schema_id)
        if writer is None:
            raise SchemaNotFoundError(
                schema_id,
                f"schema id {schema_id} is not resolved (resolved: "
                f"{sorted(self._writers)}); await deserializer.resolve({schema_id}) "
                "and read the record again",
            )
        try:
            return schemaless_reader(io.BytesIO(payload), writer, self._reader)
        except _FASTAVRO_ERRORS as exc:
            raise SchemaSerializationError(
                f"schema id {schema_id}: the {len(payload)}-byte Avro payload does not "
                f"decode: {type(exc).__name__}: {exc}"
            ) from exc


def _mismatch(schema: Schema, value: Any, exc: BaseException) -> str:
    """Why ``value`` does not fit ``schema``: fastavro's validator names the field,
    which the writer's own exception usually does not."""
    try:
        validate(value, schema, raise_errors=True)
    except ValidationError as invalid:
        # One line: str() of the exception is a JSON list over several.
        return "; ".join(str(error) for error in invalid.errors) or str(invalid)
    except _FASTAVRO_ERRORS:
        pass
    return f"{type(exc).__name__}: {exc}"
