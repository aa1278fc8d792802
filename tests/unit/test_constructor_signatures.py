"""The client constructors' explicit parameters agree with the config classes.

The constructors declare every option (names, types, defaults) for
``inspect.signature()``, IDEs and mypy; the config dataclasses validate and resolve
them. These tests keep the two from drifting: the same option set, the same defaults,
and every parameter documented in the constructor's ``Args:`` section.
"""

from __future__ import annotations

import dataclasses
import inspect
import ssl
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.cluster import AIOKafkaClient, ClientConfig
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.net.config import InvalidOptionError
from aiokafka.options import RESOLVED
from aiokafka.producer.config import ProducerConfig

CLIENTS: dict[str, Callable[..., Any]] = {
    "producer": AIOKafkaProducer,
    "consumer": AIOKafkaConsumer,
    "admin": AIOKafkaAdminClient,
    "client": AIOKafkaClient,
}


#: Where a client's default differs from the shared ClientConfig's on purpose: the
#: Java admin client does not push metrics (KIP-714) unless asked.
OWN_DEFAULTS: dict[str, dict[str, Any]] = {"admin": {"enable_metrics_push": False}}


def _field_default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    assert field.default_factory is not dataclasses.MISSING, field.name
    return field.default_factory()


def _config_fields(client: str) -> dict[str, dataclasses.Field[Any]]:
    """The option fields the constructor's config is built from (``loop`` apart)."""
    shared = {f.name: f for f in dataclasses.fields(ClientConfig) if f.init}
    if client == "producer":
        own = {f.name: f for f in dataclasses.fields(ProducerConfig) if f.init}
        own.pop("loop")
        return own
    if client == "consumer":
        own = {f.name: f for f in dataclasses.fields(ConsumerConfig) if f.name != "client"}
        return {**shared, **own}
    return shared


def _options(client: str) -> dict[str, inspect.Parameter]:
    params = inspect.signature(CLIENTS[client]).parameters
    return {n: p for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_constructor_parameters_are_the_config_options(client: str) -> None:
    params = _options(client)
    assert set(params) == set(_config_fields(client)) | {"loop"}
    assert params["loop"].default is None
    kinds = {p.kind for p in inspect.signature(CLIENTS[client]).parameters.values()}
    # Only keyword options, the catch-all that rejects, and the consumer's topics
    # (AIOKafkaClient's internal ``config`` aside).
    assert inspect.Parameter.VAR_KEYWORD in kinds
    for name, p in params.items():
        assert p.annotation is not inspect.Parameter.empty, f"{client}({name}) untyped"


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_constructor_defaults_are_the_config_defaults(client: str) -> None:
    params = _options(client)
    for name, field in _config_fields(client).items():
        default = params[name].default
        expected = OWN_DEFAULTS.get(client, {}).get(name, _field_default(field))
        if default is RESOLVED:
            # Left for the config to derive from the other options: its own sentinel.
            assert type(expected) is object, f"{client}({name}) RESOLVED, config {expected!r}"
        else:
            assert default == expected, f"{client}({name}): {default!r} != config {expected!r}"


def test_consumer_built_with_no_argument_gets_the_signature_defaults() -> None:
    built = ConsumerConfig.from_options()
    for name, p in _options("consumer").items():
        if name == "loop":
            continue
        holder = built if hasattr(built, name) else built.client
        assert getattr(holder, name) == p.default, name


def test_producer_resolved_defaults() -> None:
    params = _options("producer")
    resolved = {n for n, p in params.items() if p.default is RESOLVED}
    assert resolved == {"acks", "enable_idempotence", "delivery_timeout_ms"}
    producer = AIOKafkaProducer()
    assert producer.config.acks == -1
    assert producer.config.enable_idempotence is True
    assert producer.config.delivery_timeout_ms == 120000
    # Explicit values still resolve as before: acks=1 turns idempotence off quietly.
    assert AIOKafkaProducer(acks=1).config.enable_idempotence is False


@pytest.mark.parametrize(
    ("client", "typo", "closest"),
    [
        ("producer", "lingerms", "linger_ms"),
        ("consumer", "group_idd", "group_id"),
        ("admin", "request_timeout", "request_timeout_ms"),
        ("client", "metadata_max_age", "metadata_max_age_ms"),
    ],
)
def test_unknown_option_raises_with_the_closest_name(client: str, typo: str, closest: str) -> None:
    with pytest.raises(InvalidOptionError) as err:
        CLIENTS[client](**{typo: 1})
    assert err.value.option == typo
    assert closest in str(err.value)
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_loop_and_api_version_accepted_and_ignored(client: str) -> None:
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        with pytest.warns(DeprecationWarning, match="loop"):
            CLIENTS[client](loop=loop)
    finally:
        loop.close()
    for version in (None, "auto", "2.0.0", "3.9", "4.0"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            CLIENTS[client](api_version=version)


def test_aiokafka_client_takes_a_config_or_options_not_both() -> None:
    config = ClientConfig(request_timeout_ms=5000)
    assert AIOKafkaClient(config).config is config
    assert AIOKafkaClient(request_timeout_ms=5000).config.request_timeout_ms == 5000
    with pytest.raises(TypeError, match="not both"):
        AIOKafkaClient(config, request_timeout_ms=6000)


def test_consumer_topics_and_options() -> None:
    consumer: AIOKafkaConsumer = AIOKafkaConsumer("a", "b", group_id="g")
    assert consumer.subscription() == frozenset({"a", "b"})
    assert consumer.config.group_id == "g"
    ctx = ssl.create_default_context()
    assert AIOKafkaAdminClient(ssl_context=ctx).config.ssl_context is ctx


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_every_parameter_is_documented(client: str) -> None:
    cls = CLIENTS[client]
    doc = inspect.getdoc(cls.__init__) or ""
    assert "Args:" in doc
    args = doc.split("Args:", 1)[1].split("Raises:", 1)[0]
    for name in inspect.signature(cls).parameters:
        assert (
            f"\n    {name}:" in args or f"\n    *{name}:" in args or (f"\n    **{name}:" in args)
        ), f"{client}: {name} missing from Args"


def test_admin_does_not_push_metrics_unless_asked() -> None:
    assert AIOKafkaAdminClient().config.enable_metrics_push is False
    assert AIOKafkaAdminClient(enable_metrics_push=True).config.enable_metrics_push is True
    assert AIOKafkaClient().config.enable_metrics_push is True
