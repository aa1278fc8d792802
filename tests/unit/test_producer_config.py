"""ProducerConfig: bounds, names in errors, KIP-679 idempotence rules."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from aiokafka.producer import AIOKafkaProducer, InvalidOptionError, ProducerConfig
from aiokafka.record import CODEC_GZIP, CODEC_NONE


def make(**kw: Any) -> ProducerConfig:
    return ProducerConfig.from_kwargs(**kw)


def test_defaults_follow_java() -> None:
    cfg = make()
    assert cfg.acks == -1
    assert cfg.enable_idempotence is True
    # Not Java's 16 KiB: batches reserve memory as they fill (see accumulator.py).
    assert cfg.max_batch_size == 262144
    assert cfg.linger_ms == 0
    assert cfg.buffer_memory == 32 * 1024 * 1024
    assert cfg.max_block_ms == 60000
    assert cfg.delivery_timeout_ms == 120000
    assert cfg.codec == CODEC_NONE
    assert cfg.client.bootstrap_addresses == (("localhost", 9092),)


def test_unknown_option_is_named() -> None:
    with pytest.raises(TypeError, match="bogus_option"):
        make(bogus_option=1)
    with pytest.raises(TypeError, match="lingerms"):
        AIOKafkaProducer(lingerms=5)


def test_unknown_option_is_a_value_error_and_a_type_error_with_a_suggestion() -> None:
    # The issue asks for ValueError; aiokafka 0.x (and Python) raise TypeError for an
    # unexpected keyword: one class satisfies both kinds of caller.
    with pytest.raises(ValueError, match="unknown option 'lingerms'") as info:
        AIOKafkaProducer(lingerms=5)
    err = info.value
    assert isinstance(err, TypeError)
    assert isinstance(err, InvalidOptionError)
    assert err.option == "lingerms"
    assert err.suggestion == "linger_ms"
    assert "did you mean 'linger_ms'?" in str(err)
    # Nothing close: no suggestion, no "did you mean".
    with pytest.raises(InvalidOptionError) as info:
        make(xyzzy=1)
    assert info.value.suggestion is None
    assert "did you mean" not in str(info.value)
    assert _pickles_intact(info.value)


def _pickles_intact(err: InvalidOptionError) -> bool:
    copy = pickle.loads(pickle.dumps(err))
    return (type(copy), str(copy), copy.option, copy.suggestion) == (
        type(err),
        str(err),
        err.option,
        err.suggestion,
    )


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"linger_ms": 1.5}, "linger_ms"),
        ({"compression_type": 3}, "compression_type"),
        ({"compression_level": "9"}, "compression_level"),
        ({"key_serializer": "json"}, "key_serializer"),
        ({"enable_idempotence": "yes"}, "enable_idempotence"),
        ({"bootstrap_servers": 5}, "bootstrap_servers"),
        ({"client_id": 5}, "client_id"),
        ({"allow_auto_topic_creation": 1}, "allow_auto_topic_creation"),
        ({"request_timeout_ms": "40000"}, "request_timeout_ms"),
    ],
)
def test_wrong_typed_values_are_value_errors_too(kw: dict[str, Any], name: str) -> None:
    with pytest.raises(ValueError, match=name) as info:
        make(**kw)
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, InvalidOptionError)
    assert info.value.option == name


@pytest.mark.parametrize(
    ("codec", "level"),
    [
        ("gzip", 10),
        ("gzip", -2),
        ("lz4", 17),
        ("lz4", -1),
        ("zstd", 23),
        ("zstd", -131073),
        ("snappy", 1),
    ],
)
def test_compression_level_out_of_the_codecs_range(codec: str, level: int) -> None:
    modules = {"gzip": "zlib", "lz4": "lz4", "zstd": "zstandard", "snappy": "cramjam"}
    pytest.importorskip(modules[codec])
    with pytest.raises(ValueError, match=f"compression_level (for|is not supported by) {codec}"):
        AIOKafkaProducer(compression_type=codec, compression_level=level)


@pytest.mark.parametrize(
    ("kw", "exc", "name"),
    [
        ({"acks": 2}, ValueError, "acks"),
        ({"acks": "some"}, ValueError, "acks"),
        ({"acks": True}, ValueError, "acks"),
        ({"linger_ms": -1}, ValueError, "linger_ms"),
        ({"linger_ms": 1.5}, TypeError, "linger_ms"),
        ({"max_batch_size": 0}, ValueError, "max_batch_size"),
        ({"max_request_size": 2**31}, ValueError, "max_request_size"),
        ({"buffer_memory": 0}, ValueError, "buffer_memory"),
        ({"max_block_ms": -5}, ValueError, "max_block_ms"),
        ({"compression_type": "brotli"}, ValueError, "compression_type"),
        ({"compression_type": 3}, TypeError, "compression_type"),
        ({"compression_level": 3}, ValueError, "compression_level"),
        ({"key_serializer": "json"}, TypeError, "key_serializer"),
        ({"value_serializer": 5}, TypeError, "value_serializer"),
        ({"partitioner": 5}, TypeError, "partitioner"),
        ({"enable_idempotence": "yes"}, TypeError, "enable_idempotence"),
        ({"request_timeout_ms": 0}, ValueError, "request_timeout_ms"),
        ({"bootstrap_servers": ""}, ValueError, "bootstrap_servers"),
        ({"delivery_timeout_ms": 1000}, ValueError, "delivery_timeout_ms"),
        ({"transactional_id": ""}, ValueError, "transactional_id"),
        ({"max_in_flight_requests_per_connection": 0}, ValueError, "max_in_flight"),
    ],
)
def test_bad_values_name_the_argument(kw: dict[str, Any], exc: type[Exception], name: str) -> None:
    with pytest.raises(exc, match=name):
        make(**kw)


def test_acks_spellings() -> None:
    assert make(acks="all").acks == -1
    assert make(acks=-1).acks == -1
    assert make(acks=1).acks == 1
    assert make(acks=0).acks == 0


def test_idempotence_quietly_off_with_conflicting_explicit_settings() -> None:
    # KIP-679: unset enable_idempotence turns off instead of failing.
    assert make(acks=1).enable_idempotence is False
    assert make(acks=0).enable_idempotence is False
    assert make(max_in_flight_requests_per_connection=6).enable_idempotence is False
    assert make(acks="all").enable_idempotence is True
    assert make(enable_idempotence=False).enable_idempotence is False
    assert make(enable_idempotence=False).acks == -1


def test_explicit_idempotence_with_conflicts_is_an_error() -> None:
    with pytest.raises(ValueError, match="acks=1"):
        make(enable_idempotence=True, acks=1)
    with pytest.raises(ValueError, match="max_in_flight_requests_per_connection=6"):
        make(enable_idempotence=True, max_in_flight_requests_per_connection=6)


def test_transactional_id_requires_idempotence() -> None:
    assert make(transactional_id="tx").enable_idempotence is True
    with pytest.raises(ValueError, match="transactional_id"):
        make(transactional_id="tx", enable_idempotence=False)
    with pytest.raises(ValueError, match="acks"):
        make(transactional_id="tx", acks=1)


def test_delivery_timeout_default_covers_linger_and_request() -> None:
    cfg = make(linger_ms=100000, request_timeout_ms=40000)
    assert cfg.delivery_timeout_ms == 140000
    assert make(delivery_timeout_ms=50000, request_timeout_ms=30000).delivery_timeout_ms == 50000


def test_compression_and_level() -> None:
    cfg = make(compression_type="gzip", compression_level=5)
    assert cfg.codec == CODEC_GZIP
    assert cfg.compression_level == 5


def test_loop_argument_ignored_with_deprecation_warning() -> None:
    # aiokafka 0.14 accepted loop= with a DeprecationWarning; so do we (and ignore it).
    make(loop=None)
    with pytest.warns(DeprecationWarning, match="loop"):
        make(loop=object())


def test_constructor_starts_nothing() -> None:
    # No running loop is needed and nothing connects.
    producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:1")
    assert producer.config.client.bootstrap_addresses == (("127.0.0.1", 1),)
    assert producer.buffered_bytes == 0
