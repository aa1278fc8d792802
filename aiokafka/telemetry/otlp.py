"""The few OpenTelemetry protobuf messages a KIP-714 push carries, encoded by hand.

A PushTelemetry request's ``metrics`` are an OTLP ``MetricsData`` message
(``opentelemetry/proto/metrics/v1/metrics.proto``). A client needs one resource, one
scope, and number data points in gauges and sums; writing those few fields costs a
page of code instead of a protobuf dependency. Field numbers are the proto's:

* ``MetricsData``: 1 ``resource_metrics``.
* ``ResourceMetrics``: 1 ``resource``, 2 ``scope_metrics``.
* ``Resource``: 1 ``attributes``. ``KeyValue``: 1 ``key``, 2 ``value``;
  ``AnyValue``: 1 ``string_value``.
* ``ScopeMetrics``: 1 ``scope`` (``InstrumentationScope``: 1 ``name``, 2 ``version``),
  2 ``metrics``.
* ``Metric``: 1 ``name``, 5 ``gauge``, 7 ``sum``. ``Gauge``: 1 ``data_points``;
  ``Sum``: 1 ``data_points``, 2 ``aggregation_temporality`` (1 delta, 2 cumulative),
  3 ``is_monotonic``.
* ``NumberDataPoint``: 2 ``start_time_unix_nano`` and 3 ``time_unix_nano``
  (fixed64), 4 ``as_double`` (double), 7 ``attributes``.

No asyncio; bytes out (``tests/unit/test_telemetry_otlp.py`` decodes them back).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from aiokafka.protocol.primitives import encode_unsigned_varint

__all__ = ["CUMULATIVE", "DELTA", "Point", "encode_metrics_data"]

#: ``AggregationTemporality`` values.
DELTA = 1
CUMULATIVE = 2

_LEN = 2  # wire type: length-delimited
_I64 = 1  # wire type: 64-bit
_VARINT = 0
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")


@dataclass(frozen=True, slots=True)
class Point:
    """One metric with one data point.

    Attributes:
        name: The KIP-714 name (``org.apache.kafka.producer.record.send.rate``).
        value: The number.
        time_ns: When it was read, Unix nanoseconds.
        attributes: The data point's attributes (``topic``, ``node_id``, ...).
        temporality: ``None`` for a gauge, else a monotonic sum with
            :data:`DELTA` or :data:`CUMULATIVE` temporality.
        start_ns: A sum's start: when the client began counting (cumulative) or
            the previous push (delta).
    """

    name: str
    value: float
    time_ns: int
    attributes: Mapping[str, str] = field(default_factory=dict)
    temporality: int | None = None
    start_ns: int = 0


def _tag(number: int, wire: int) -> bytes:
    return encode_unsigned_varint(number << 3 | wire)


def _bytes(number: int, payload: bytes) -> bytes:
    return _tag(number, _LEN) + encode_unsigned_varint(len(payload)) + payload


def _string(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


def _attributes(number: int, attributes: Mapping[str, str]) -> bytes:
    return b"".join(
        _bytes(number, _string(1, key) + _bytes(2, _string(1, value)))
        for key, value in attributes.items()
    )


def _point(point: Point) -> bytes:
    body = b""
    if point.temporality is not None:
        body += _tag(2, _I64) + _U64.pack(point.start_ns)
    body += _tag(3, _I64) + _U64.pack(point.time_ns)
    body += _tag(4, _I64) + _F64.pack(point.value)
    return body + _attributes(7, point.attributes)


def _metric(point: Point) -> bytes:
    data = _bytes(1, _point(point))
    if point.temporality is None:
        kind = _bytes(5, data)
    else:
        sum_body = data + _tag(2, _VARINT) + encode_unsigned_varint(point.temporality)
        sum_body += _tag(3, _VARINT) + b"\x01"  # is_monotonic: counts only grow
        kind = _bytes(7, sum_body)
    return _string(1, point.name) + kind


def encode_metrics_data(
    resource: Mapping[str, str],
    points: Iterable[Point],
    scope: tuple[str, str] = ("aiokafka", ""),
) -> bytes:
    """A ``MetricsData`` message: one resource, one scope, one metric per point.

    Args:
        resource: The resource's attributes (``client_instance_id``, ``group_id``, ...).
        points: The metrics.
        scope: The instrumentation scope's name and version.

    Returns:
        The serialized message.
    """
    name, version = scope
    scope_body = _string(1, name) + (_string(2, version) if version else b"")
    scope_metrics = _bytes(1, scope_body) + b"".join(_bytes(2, _metric(p)) for p in points)
    resource_metrics = _bytes(1, _attributes(1, resource)) + _bytes(2, scope_metrics)
    return _bytes(1, resource_metrics)
