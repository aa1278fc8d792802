"""The generated configuration reference (docs/_ext/config_reference.py) is complete:
every keyword each client's constructor accepts appears with a meaning, and nothing
else does."""

from __future__ import annotations

import dataclasses
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config import ADMIN_OPTIONS
from aiokafka.cluster.config import ClientConfig
from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.net.config import InvalidOptionError
from aiokafka.producer import AIOKafkaProducer
from aiokafka.producer.config import ProducerConfig

EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    sys.path.insert(0, str(EXT))
    try:
        import config_reference

        yield config_reference
    finally:
        sys.path.remove(str(EXT))


def _init_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


# What each constructor accepts, read from the config classes the constructors
# validate with (the reference is built from them too, but by its own code).
ACCEPTED: dict[str, set[str]] = {
    "producer": _init_fields(ProducerConfig),
    "consumer": (_init_fields(ConsumerConfig) - {"client"}) | _init_fields(ClientConfig) | {"loop"},
    "admin": set(ADMIN_OPTIONS) | {"loop"},
}

CONSTRUCTORS: dict[str, Callable[..., object]] = {
    "producer": AIOKafkaProducer,
    "consumer": AIOKafkaConsumer,
    "admin": AIOKafkaAdminClient,
}


def _is_unknown_option(name: str, value: object, constructor: Callable[..., object]) -> bool:
    """Whether ``constructor`` rejects keyword ``name`` as unknown (a wrong value for a
    known option raises too, but not this)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loop= warns that it is deprecated
        try:
            constructor(**{name: value})
        except InvalidOptionError as exc:
            return exc.option == name and "unknown option" in str(exc)
        except (TypeError, ValueError):
            return False
    return False


@pytest.mark.parametrize("client", sorted(ACCEPTED))
def test_every_constructor_keyword_is_documented(reference: Any, client: str) -> None:
    documented = {option.name for option in reference.client_options(client)}
    assert documented == ACCEPTED[client]
    rendered = reference.render_options(client)
    for name in ACCEPTED[client]:
        assert f".. _config-{client}-{name}:" in rendered
        assert f"``{name}``" in rendered


@pytest.mark.parametrize("client", sorted(ACCEPTED))
def test_documented_options_are_the_constructors_own(reference: Any, client: str) -> None:
    """Every documented name is accepted by the real constructor, and a name that is
    not documented is refused, so the two lists describe the same thing."""
    constructor = CONSTRUCTORS[client]
    for option in reference.client_options(client):
        assert not _is_unknown_option(option.name, object(), constructor), option.name
    assert _is_unknown_option("linger", 5, constructor)


def test_every_option_has_type_default_and_meaning(reference: Any) -> None:
    assert reference.problems() == []
    for client in reference.CLIENTS:
        for option in reference.client_options(client):
            assert option.type and option.default and option.meaning, option


def test_defaults_are_what_a_client_gets(reference: Any) -> None:
    producer = {o.name: o for o in reference.client_options("producer")}
    assert producer["linger_ms"].default == "``0``"
    assert producer["max_batch_size"].default == "``262144`` (256 KiB)"
    assert producer["client_id"].default == "``'aiokafka-producer'``"
    assert "all" in producer["acks"].default
    consumer = {o.name: o for o in reference.client_options("consumer")}
    assert consumer["auto_offset_reset"].default == "``'latest'``"
    assert consumer["session_timeout_ms"].default == "``10000`` (10 s)"
    assert consumer["partition_assignment_strategy"].default == (
        "``(RoundRobinPartitionAssignor,)``"
    )


def test_meanings_come_from_the_docstrings_first(reference: Any) -> None:
    producer = {o.name: o for o in reference.client_options("producer")}
    docs = reference.attribute_docs(ProducerConfig)
    assert producer["linger_ms"].meaning == docs["linger_ms"]
    assert docs["buffer_memory"].startswith("Bytes the producer may hold")


def test_error_tables_list_every_code(reference: Any) -> None:
    from aiokafka.errors import ERROR_CLASSES

    table = reference.render_broker_errors()
    for code, cls in ERROR_CLASSES.items():
        assert f"   * - {code}\n     - ``{cls.__name__}``" in table
    assert "``KafkaConnectionError``" in reference.render_client_errors()


def test_kafka_python_page_lists_every_option_we_lack(reference: Any) -> None:
    """docs/guide/migration-kafka-python.rst says what to write for each kafka-python
    option this package does not take under the same name."""
    kafka = pytest.importorskip("kafka")
    page = (EXT.parent / "guide" / "migration-kafka-python.rst").read_text()
    table = page.split("Options that differ")[1].split("Behaviour that differs")[0]
    rows = table.split("   * - ")[2:]  # past the directive and the header row
    listed = {name for row in rows for name in re.findall(r"``(\w+)``", row.split("\n     - ")[0])}
    listed |= {name for name in kafka.KafkaProducer.DEFAULT_CONFIG if name.startswith("metric")} | {
        name for name in kafka.KafkaConsumer.DEFAULT_CONFIG if name.startswith("metric")
    }
    ours = {o.name for c in ("producer", "consumer") for o in reference.client_options(c)}
    theirs = set(kafka.KafkaProducer.DEFAULT_CONFIG) | set(kafka.KafkaConsumer.DEFAULT_CONFIG)
    assert theirs - ours <= listed, sorted(theirs - ours - listed)
    # consumer_timeout_ms is shared by name but not by meaning: the page says so.
    assert "consumer_timeout_ms" in listed
