"""aiokafka.otel.common: how a raised operation ends its span, and the attributes
that describe a record (shared by the producer's and the consumer's spans)."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, StatusCode

from aiokafka.errors import KafkaTimeoutError
from aiokafka.otel.common import (
    DESTINATION,
    ERROR_TYPE,
    KEY,
    PARTITION,
    TOMBSTONE,
    end_raised,
    record_attributes,
)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def _span(exporter: InMemorySpanExporter) -> Span:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test").start_span("op")


def test_an_exception_ends_the_span_as_failed(exporter: InMemorySpanExporter) -> None:
    end_raised(_span(exporter), KafkaTimeoutError("late"))
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes[ERROR_TYPE] == "KafkaTimeoutError"


def test_a_cancellation_ends_the_span_without_an_error(exporter: InMemorySpanExporter) -> None:
    end_raised(_span(exporter), asyncio.CancelledError())
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes is not None
    assert ERROR_TYPE not in span.attributes


def test_record_attributes() -> None:
    assert record_attributes("t", 3, "k", b"v") == {DESTINATION: "t", PARTITION: "3", KEY: "k"}
    # Unknown partition, a bytes key (not text) and a tombstone.
    assert record_attributes("t", None, b"k", None) == {DESTINATION: "t", TOMBSTONE: True}
