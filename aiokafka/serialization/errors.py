"""Errors of :mod:`aiokafka.serialization`.

::

    ValueError
    `-- SchemaSerializationError               a value does not encode, or bytes do not decode
        +-- WireFormatError              bytes are not in the Confluent wire format
        +-- SchemaNotFoundError          no schema for this id (unknown or not resolved)
        `-- SchemaRegistryError          the registry failed or rejected a request

They derive from :class:`ValueError`, not from :class:`aiokafka.errors.KafkaError`, on
purpose: a consumer treats a ``KafkaError`` raised while decoding a batch as a broken
batch and raises it until the application seeks past it, while any other exception
from a deserializer leaves the batch in place so that the next read decodes it again.
That is what lets an application resolve a schema id it had not met
(:class:`SchemaNotFoundError` names it) and read on without losing the record. It is
also what ``json.loads`` raises for bytes that are not JSON. For the same reason the
base is not :class:`aiokafka.errors.SerializationError` (aiokafka 0.14's name, a
``KafkaError`` that aiokafka itself never raises), and has a name of its own so that
the two are not confused.
"""

from __future__ import annotations

__all__ = [
    "SchemaNotFoundError",
    "SchemaRegistryError",
    "SchemaSerializationError",
    "WireFormatError",
]


class SchemaSerializationError(ValueError):
    """A value could not be serialized or deserialized (base of this package's errors).

    Raised as is when a value does not match its Avro schema, when a payload does not
    decode with the schema its id names, or when a serializer is used before its
    schema is registered.
    """


class WireFormatError(SchemaSerializationError):
    """The bytes are not in the Confluent wire format: shorter than its 5-byte header,
    or a first byte other than the magic byte 0 (say, a record written as plain JSON)."""


class SchemaNotFoundError(SchemaSerializationError):
    """No schema is known for a schema id.

    Raised by a registry that does not know the id, and by a deserializer called
    synchronously (as a consumer's ``value_deserializer``) for an id it has not
    resolved yet: ``await deserializer.resolve(exc.schema_id)`` and read again.

    Attributes:
        schema_id: The id that was looked up.
    """

    def __init__(self, schema_id: int, text: str | None = None) -> None:
        super().__init__(text or f"no schema with id {schema_id}")
        self.schema_id = schema_id


class SchemaRegistryError(SchemaSerializationError):
    """The schema registry failed or rejected a request (the registry's own error is
    the ``__cause__``).

    Attributes:
        status: The HTTP status of the registry's answer, or ``None`` (no answer, or
            not an HTTP registry).
        error_code: The registry's error code (e.g. ``409`` for a schema incompatible
            with the subject's earlier versions, ``42201`` for an invalid one), or
            ``None``.
    """

    def __init__(
        self, text: str, *, status: int | None = None, error_code: int | None = None
    ) -> None:
        super().__init__(text)
        self.status = status
        self.error_code = error_code
