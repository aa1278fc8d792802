"""Reads an OTLP ``MetricsData`` protobuf message back, for the KIP-714 tests.

Independent of ``aiokafka/telemetry/otlp.py`` (a generic protobuf wire reader plus
the field numbers of ``opentelemetry/proto/metrics/v1/metrics.proto``), so a test
decoding what the encoder wrote checks the encoding, not the encoder against itself.
Only what a client push carries: resource attributes, gauges and sums of number data
points (``as_double`` or ``as_int``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class DataPoint:
    name: str
    kind: str  # "gauge" or "sum"
    value: float
    attributes: dict[str, str]
    time_ns: int
    start_ns: int = 0
    temporality: int = 0  # sums: 1 delta, 2 cumulative
    monotonic: bool = False


@dataclass
class Metrics:
    resource: dict[str, str] = field(default_factory=dict)
    points: list[DataPoint] = field(default_factory=list)

    def by_name(self) -> dict[str, list[DataPoint]]:
        out: dict[str, list[DataPoint]] = {}
        for point in self.points:
            out.setdefault(point.name, []).append(point)
        return out

    def value(self, name: str, **attributes: str) -> float:
        """The value of the one point named ``name`` with exactly ``attributes``."""
        found = [p for p in self.points if p.name == name and p.attributes == attributes]
        assert len(found) == 1, (name, attributes, found)
        return found[0].value


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of every field of one message."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value = int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value = data[pos : pos + length]
            pos += length
        elif wire == 5:
            value = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def _bytes(value: int | bytes) -> bytes:
    assert isinstance(value, bytes)
    return value


def _int(value: int | bytes) -> int:
    assert isinstance(value, int)
    return value


def _key_value(data: bytes) -> tuple[str, str]:
    key, text = "", ""
    for number, _, value in fields(data):
        if number == 1:
            key = _bytes(value).decode()
        elif number == 2:
            for inner, _, v in fields(_bytes(value)):
                if inner == 1:
                    text = _bytes(v).decode()
    return key, text


def _data_point(name: str, kind: str, data: bytes) -> DataPoint:
    point = DataPoint(name, kind, 0.0, {}, 0)
    for number, _, value in fields(data):
        if number == 2:
            point.start_ns = _int(value)
        elif number == 3:
            point.time_ns = _int(value)
        elif number == 4:
            point.value = struct.unpack("<d", _int(value).to_bytes(8, "little"))[0]
        elif number == 6:
            point.value = float(struct.unpack("<q", _int(value).to_bytes(8, "little"))[0])
        elif number == 7:
            key, text = _key_value(_bytes(value))
            point.attributes[key] = text
    return point


def _metric(data: bytes) -> list[DataPoint]:
    name = ""
    points: list[DataPoint] = []
    for number, _, value in fields(data):
        if number == 1:
            name = _bytes(value).decode()
        elif number in (5, 7):
            kind = "gauge" if number == 5 else "sum"
            temporality, monotonic = 0, False
            raw: list[bytes] = []
            for inner, _, v in fields(_bytes(value)):
                if inner == 1:
                    raw.append(_bytes(v))
                elif inner == 2 and kind == "sum":
                    temporality = _int(v)
                elif inner == 3 and kind == "sum":
                    monotonic = bool(_int(v))
            for body in raw:
                point = _data_point(name, kind, body)
                point.temporality, point.monotonic = temporality, monotonic
                points.append(point)
    return points


def decode_metrics_data(data: bytes) -> Metrics:
    """Every resource attribute and data point of a ``MetricsData`` message."""
    out = Metrics()
    for number, _, resource_metrics in fields(data):
        if number != 1:
            continue
        for inner, _, value in fields(_bytes(resource_metrics)):
            if inner == 1:  # Resource
                for attr_no, _, kv in fields(_bytes(value)):
                    if attr_no == 1:
                        key, text = _key_value(_bytes(kv))
                        out.resource[key] = text
            elif inner == 2:  # ScopeMetrics
                for scope_no, _, metric in fields(_bytes(value)):
                    if scope_no == 2:
                        out.points.extend(_metric(_bytes(metric)))
    return out
