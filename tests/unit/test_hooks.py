"""The clients' instrumentation hook (aiokafka.hooks): per-instance wrappers, nothing
on the class, nothing left after removal."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


def test_wrappers_replace_methods_of_one_instance_only() -> None:
    calls: list[tuple[Any, ...]] = []

    def wrapper(operation: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append((operation, args, kwargs))
        return "wrapped"

    producer = AIOKafkaProducer()
    other = AIOKafkaProducer()
    producer.set_instrumentation({"send": wrapper, "partitions_for": wrapper})
    assert producer.instrumented and not other.instrumented
    assert producer.send("t", b"v", partition=1) == "wrapped"
    ((operation, args, kwargs),) = calls
    # The original bound method comes first.
    assert operation.__func__ is AIOKafkaProducer.send and operation.__self__ is producer
    assert args == ("t", b"v") and kwargs == {"partition": 1}
    assert "send" not in vars(other)

    producer.set_instrumentation({"flush": wrapper})  # replaces, does not add
    assert "send" not in vars(producer) and "flush" in vars(producer)
    producer.set_instrumentation(None)
    assert not producer.instrumented
    assert not {"send", "flush", "partitions_for"} & set(vars(producer))


@pytest.mark.parametrize("name", ["_setup", "config", "no_such_method"])
def test_only_public_methods_can_be_wrapped(name: str) -> None:
    producer = AIOKafkaProducer()
    with pytest.raises(ValueError, match=name):
        producer.set_instrumentation({name: lambda op, *a, **k: None})
    assert not producer.instrumented


def test_iteration_wrapper_is_what_async_for_gets() -> None:
    consumer = AIOKafkaConsumer()

    async def iterate(inner: AsyncIterator[Any]) -> AsyncIterator[Any]:
        yield inner

    assert consumer.__aiter__() is consumer
    consumer.set_instrumentation(None, iterate)
    assert consumer.instrumented
    wrapped = consumer.__aiter__()
    assert wrapped is not consumer and hasattr(wrapped, "__anext__")
    consumer.set_instrumentation(None)
    assert consumer.__aiter__() is consumer and not consumer.instrumented
    with pytest.raises(ValueError, match="iterable"):
        AIOKafkaProducer().set_instrumentation(None, iterate)


@pytest.mark.parametrize("kind", [AIOKafkaProducer, AIOKafkaConsumer])
def test_an_instrumented_client_is_freed_by_reference_counting(kind: type[Any]) -> None:
    """Wrappers hold their client weakly: no reference cycle, so a client dropped
    without stop() reaches its __del__ (which releases what it left running) at once."""
    pytest.importorskip("opentelemetry")
    from aiokafka.otel import instrument

    gc.disable()
    try:
        client = kind()
        instrument(client)
        assert client.instrumented
        probe = weakref.ref(client)
        del client
        assert probe() is None
    finally:
        gc.enable()
