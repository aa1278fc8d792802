"""What a caller hands the producer: the checks of a record's key, value, headers and
timestamp (after the serializers), and :class:`BatchBuilder` of
``create_batch()``/``send_batch()``.

The checks run on ``send()``'s per-record path only when a value is not already of the
expected exact type (see ``AIOKafkaProducer.send``); each raises ``TypeError`` or
``ValueError`` naming the argument.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aiokafka.errors import IllegalStateError
from aiokafka.record import DefaultRecordBatchBuilder, DefaultRecordMetadata

if TYPE_CHECKING:
    from aiokafka.producer.producer import AIOKafkaProducer

__all__ = ["BatchBuilder", "bad_timestamp", "check_headers", "to_bytes"]


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


class BatchBuilder:
    """Records collected by the caller and sent as one batch with
    :meth:`AIOKafkaProducer.send_batch` (aiokafka's API).

    Create with :meth:`AIOKafkaProducer.create_batch`.
    """

    def __init__(
        self, producer: AIOKafkaProducer[Any, Any], builder: DefaultRecordBatchBuilder
    ) -> None:
        self._producer = producer
        self._builder = builder
        self._closed = False

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
        p = self._producer
        key_bytes, value_bytes, header_list = p._serialize(key, value, headers, timestamp)
        offset = self._builder.record_count
        return self._builder.append(offset, timestamp, key_bytes, value_bytes, header_list)

    def size(self) -> int:
        """Bytes in the batch so far (before compression)."""
        return self._builder.size_in_bytes()

    def record_count(self) -> int:
        """Records in the batch."""
        return self._builder.record_count

    def close(self) -> None:
        """No more records can be added."""
        self._closed = True
