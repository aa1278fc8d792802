"""Schema-aware serialization: the Confluent wire format and Avro on fastavro.

Records are framed as the Confluent serializers frame them (magic byte 0, a 4-byte
big-endian schema id, then the encoded value), so the Java and librdkafka clients,
Kafka Connect and ksqlDB read what these write and the other way round.

Schemas are looked up through a :class:`SchemaRegistry`: confluent-kafka's registry
client wrapped in :class:`ConfluentSchemaRegistry`, or ids pinned in the application
with :class:`StaticSchemas`. aiokafka ships no registry client of its own.

Nothing here is imported by ``import aiokafka``. The wire format, the errors and
:class:`StaticSchemas` need only the standard library; the Avro classes need the
``avro`` extra (``pip install "aiokafka[avro]"``, fastavro), and
:class:`ConfluentSchemaRegistry` needs ``confluent-kafka[schemaregistry]``. Those
import on first use, with a message naming what to install when it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from aiokafka.serialization.errors import (
    SchemaNotFoundError,
    SchemaRegistryError,
    SchemaSerializationError,
    WireFormatError,
)
from aiokafka.serialization.registry import SchemaRegistry, StaticSchemas, topic_subject
from aiokafka.serialization.wire import HEADER_SIZE, MAGIC_BYTE, frame, unframe

if TYPE_CHECKING:
    from aiokafka.serialization.avro import AvroDeserializer, AvroSerializer
    from aiokafka.serialization.confluent import ConfluentSchemaRegistry

__all__ = [
    "HEADER_SIZE",
    "MAGIC_BYTE",
    "AvroDeserializer",
    "AvroSerializer",
    "ConfluentSchemaRegistry",
    "SchemaNotFoundError",
    "SchemaRegistry",
    "SchemaRegistryError",
    "SchemaSerializationError",
    "StaticSchemas",
    "WireFormatError",
    "frame",
    "topic_subject",
    "unframe",
]

# Name -> (module, the top-level packages it needs, what to install). confluent-kafka
# installs without its registry dependencies (authlib, httpx2, attrs, cachetools).
_LAZY = {
    "AvroDeserializer": ("avro", ("fastavro",), '"aiokafka[avro]"'),
    "AvroSerializer": ("avro", ("fastavro",), '"aiokafka[avro]"'),
    "ConfluentSchemaRegistry": (
        "confluent",
        ("confluent_kafka", "authlib", "httpx2", "httpx", "attrs", "cachetools", "certifi"),
        '"confluent-kafka[schemaregistry]"',
    ),
}


def __getattr__(name: str) -> Any:
    # These names import optional packages; deferring them keeps the rest usable
    # without them and turns a missing package into a message naming the install.
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, needs, install = entry
    try:
        module = importlib.import_module(f"aiokafka.serialization.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in needs:
            raise
        raise ImportError(
            f"aiokafka.serialization.{name} needs {exc.name}: pip install {install}"
        ) from exc
    value = getattr(module, name)
    globals()[name] = value
    return value
