"""What a caller hands the producer: :class:`RecordSerializer` (the serializers, then
the checks of a record's key, value, headers and timestamp), and :class:`BatchBuilder`
of ``create_batch()``/``send_batch()``.

The checks cost nothing when a value already has the expected exact type (the
per-record path of ``send()``); each raises ``TypeError`` or ``ValueError`` naming
the argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from aiokafka._extensions import load_extension
from aiokafka.errors import IllegalStateError
from aiokafka.record import DefaultRecordBatchBuilder, DefaultRecordMetadata

__all__ = ["BatchBuilder", "RecordSerializer", "bad_timestamp", "check_headers", "to_bytes"]


def to_bytes(data: Any, name: str) -> bytes | None:
    if data is None or type(data) is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(
        f"{name} must be bytes (or bytes after the {name}_serializer), not {type(data).__name__}"
    )


def bad_timestamp(timestamp_ms: Any) -> None:
    if not isinstance(timestamp_ms, int) or isinstance(timestamp_ms, bool):
        raise TypeError(f"timestamp_ms must be an int, not {type(timestamp_ms).__name__}")
    raise ValueError(f"timestamp_ms must be in [0, 2**63), got {timestamp_ms}")


def check_headers(headers: Any) -> list[tuple[str, bytes | None]]:
    out: list[tuple[str, bytes | None]] = []
    try:
        items = list(headers)
    except TypeError:
        raise TypeError("headers must be a list of (str, bytes) pairs") from None
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"headers must be (str, bytes) pairs, got {item!r}")
        key, value = item
        if not isinstance(key, str):
            raise TypeError(f"header key must be str, not {type(key).__name__}")
        out.append((key, to_bytes(value, "header value")))
    return out


#: A record's parts after :meth:`RecordSerializer.serialize`: key, value, headers.
Serialized = tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]


class RecordSerializer:
    """The producer's serializers and record checks, shared by ``send()`` and
    :class:`BatchBuilder`.

    Args:
        key_serializer: Turns a key into bytes, or ``None`` (keys are bytes).
        value_serializer: Turns a value into bytes, or ``None`` (values are bytes).
    """

    __slots__ = ("_key", "_value")

    def __init__(
        self,
        key_serializer: Callable[[Any], Any] | None,
        value_serializer: Callable[[Any], Any] | None,
    ) -> None:
        self._key = key_serializer
        self._value = value_serializer

    @property
    def plain(self) -> bool:
        """No serializers: :meth:`serialize` leaves a key and a value of type
        ``bytes`` (or ``None``) as they are."""
        return self._key is None and self._value is None

    def serialize(self, key: Any, value: Any, headers: Any, timestamp_ms: Any) -> Serialized:
        """Serialize ``key`` and ``value`` and check every part of a record.

        Args:
            key: The key given to ``send()`` (``None`` is kept, unless the key
                serializer turns it into bytes).
            value: The value given to ``send()``.
            headers: ``(str, bytes)`` pairs or ``None``.
            timestamp_ms: ms since the epoch, or ``None``.

        Returns:
            ``(key, value, headers)``: bytes or ``None``; headers as a list of
            pairs, ``None`` when there are none.

        Raises:
            TypeError: a part (after serialization) has the wrong type.
            ValueError: the timestamp is out of range.
        """
        # Runs once per record: the common case (bytes, no headers, no timestamp) is
        # four identity checks.
        if self._key is not None:
            key = self._key(key)
        if self._value is not None:
            value = self._value(value)
        if key is not None and type(key) is not bytes:
            key = to_bytes(key, "key")
        if value is not None and type(value) is not bytes:
            value = to_bytes(value, "value")
        if headers is not None:
            headers = check_headers(headers) or None
        if timestamp_ms is not None and (
            type(timestamp_ms) is not int or not 0 <= timestamp_ms < 2**63
        ):
            bad_timestamp(timestamp_ms)
        return key, value, headers


class BatchBuilder:
    """Records collected by the caller and sent as one batch with
    :meth:`AIOKafkaProducer.send_batch` (aiokafka's API).

    Create with :meth:`AIOKafkaProducer.create_batch`.
    """

    # Slots at fixed offsets for the C append (_cbuilder.bind_batch); "__dict__" keeps
    # aiokafka's plain class behaviour: callers may set attributes of their own.
    __slots__ = ("__dict__", "_append", "_builder", "_closed", "_plain", "_serializer")

    def __init__(self, serializer: RecordSerializer, builder: DefaultRecordBatchBuilder) -> None:
        self._serializer = serializer
        self._builder = builder
        self._closed = False
        self._plain = serializer.plain
        # The builder's append_next, in C when built: one call per record.
        self._append = builder.appender()

    def append(
        self,
        *,
        key: Any = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> DefaultRecordMetadata | None:
        """Add a record (serializers of the producer apply).

        Returns:
            The record's metadata within the batch (offset, size, timestamp), or
            ``None`` if the batch is full.

        Raises:
            TypeError: key, value, headers or timestamp of the wrong type.
            IllegalStateError: the batch was already sent.
        """
        if self._closed:
            raise IllegalStateError("this batch was already passed to send_batch()")
        # The common record (no serializers, bytes, no headers, no timestamp) has
        # nothing to check or convert: straight to the builder. This runs per record.
        if (
            timestamp is None
            and headers is None
            and self._plain
            and (value is None or type(value) is bytes)
            and (key is None or type(key) is bytes)
        ):
            return self._append(None, key, value, None)
        key_bytes, value_bytes, header_list = self._serializer.serialize(
            key, value, headers, timestamp
        )
        # The serializer checked the timestamp (0 <= t < 2**63).
        return self._append(timestamp, key_bytes, value_bytes, header_list)

    def append_values(self, values: Sequence[Any], start: int = 0) -> int:
        """Add ``values[start:]`` as records with no key, timestamp or headers (the
        producer's value serializer applies), until the batch is full.

        One call for a run of records, where :meth:`append` is a call per record: a
        columnar writer's path (the Spark data source). With no value serializer
        and the C extension, a list of ``bytes`` (and ``None``) is encoded in one
        pass, all records stamped with the same time.

        Returns:
            The index of the first value not added (``len(values)``: all were).

        Raises:
            TypeError: a value of the wrong type (those before it are added).
            IllegalStateError: the batch was already sent.
        """
        if self._closed:
            raise IllegalStateError("this batch was already passed to send_batch()")
        if self._plain:
            return self._builder.add_values(values, start)
        for i in range(start, len(values)):
            if self.append(value=values[i]) is None:
                return i
        return len(values)

    def size(self) -> int:
        """Bytes in the batch so far (before compression)."""
        return self._builder.size_in_bytes()

    def record_count(self) -> int:
        """Records in the batch."""
        return self._builder.record_count

    def close(self) -> None:
        """No more records can be added."""
        self._closed = True

    def close_for_send(self) -> DefaultRecordBatchBuilder:
        """:meth:`close`, and hand the records over (``send_batch``)."""
        self._closed = True
        return self._builder


#: :meth:`BatchBuilder.append` as written above: the whole path, to which the C one
#: hands every record but the common one. Tests switch between the two.
python_append = BatchBuilder.append
_cbuilder = load_extension("aiokafka.record._cbuilder")
if _cbuilder is not None:
    # In C, the common record's append() is one call into the builder's C appender,
    # without this module's Python frame (the keyword arguments parsed in C).
    BatchBuilder.append = _cbuilder.bind_batch(  # type: ignore[method-assign]
        BatchBuilder, python_append
    )
