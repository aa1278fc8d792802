"""ClientConfig / ConnectionConfig validation: errors name the argument."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from aiokafka.abc import AbstractTokenProvider
from aiokafka.cluster import AIOKafkaClient, ClientConfig
from aiokafka.cluster.config import parse_bootstrap_servers
from aiokafka.helpers import create_ssl_context


class Tokens(AbstractTokenProvider):
    async def token(self) -> str:
        return "t"


def test_defaults_match_aiokafka() -> None:
    cfg = ClientConfig()
    assert cfg.bootstrap_addresses == (("localhost", 9092),)
    assert cfg.client_id is not None and cfg.client_id.startswith("aiokafka-")
    assert (cfg.metadata_max_age_ms, cfg.request_timeout_ms, cfg.retry_backoff_ms) == (
        300000,
        40000,
        100,
    )
    assert (cfg.reconnect_backoff_ms, cfg.reconnect_backoff_max_ms) == (50, 1000)
    assert cfg.connections_max_idle_ms == 540000
    assert cfg.max_in_flight_requests_per_connection == 5
    assert cfg.api_version == "auto"
    assert cfg.connection.request_timeout_ms == 40000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("h1:1,h2:2", (("h1", 1), ("h2", 2))),
        (["h1:1", " h2 "], (("h1", 1), ("h2", 9092))),
        ("[::1]:9093", (("::1", 9093),)),
        ("[::1]", (("::1", 9092),)),
        ("h:1,", (("h", 1),)),
    ],
)
def test_parse_bootstrap_servers(value: Any, expected: tuple[tuple[str, int], ...]) -> None:
    assert parse_bootstrap_servers(value) == expected


@pytest.mark.parametrize(
    "value", ["", ",", "h:notaport", "h:0", "h:70000", "::1:9092", "[::1", ":9092", "[::1]x"]
)
def test_bad_bootstrap_servers(value: str) -> None:
    with pytest.raises(ValueError, match="bootstrap_servers"):
        ClientConfig(bootstrap_servers=value)


def test_bootstrap_servers_type() -> None:
    with pytest.raises(TypeError, match="bootstrap_servers"):
        ClientConfig(bootstrap_servers=[1, 2])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("kwargs", "name", "exc"),
    [
        ({"request_timeout_ms": 0}, "request_timeout_ms", ValueError),
        ({"request_timeout_ms": 1.5}, "request_timeout_ms", TypeError),
        ({"request_timeout_ms": True}, "request_timeout_ms", TypeError),
        ({"metadata_max_age_ms": -1}, "metadata_max_age_ms", ValueError),
        ({"retry_backoff_ms": -1}, "retry_backoff_ms", ValueError),
        ({"reconnect_backoff_ms": -5}, "reconnect_backoff_ms", ValueError),
        (
            {"reconnect_backoff_ms": 500, "reconnect_backoff_max_ms": 100},
            "reconnect_backoff_max_ms",
            ValueError,
        ),
        ({"connections_max_idle_ms": 0}, "connections_max_idle_ms", ValueError),
        (
            {"max_in_flight_requests_per_connection": 0},
            "max_in_flight_requests_per_connection",
            ValueError,
        ),
        ({"api_version": "latest"}, "api_version", ValueError),
        ({"security_protocol": "TLS"}, "security_protocol", ValueError),
        ({"security_protocol": "SSL"}, "ssl_context", ValueError),
        ({"ssl_context": "ctx"}, "ssl_context", TypeError),
        ({"client_id": 5}, "client_id", TypeError),
        ({"client_rack": 5}, "client_rack", TypeError),
        ({"allow_auto_topic_creation": "yes"}, "allow_auto_topic_creation", TypeError),
        ({"security_protocol": "SASL_PLAINTEXT"}, "sasl_plain_username", ValueError),
        (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_plain_username": "u"},
            "sasl_plain_password",
            ValueError,
        ),
        (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "DIGEST-MD5"},
            "sasl_mechanism",
            ValueError,
        ),
        (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "OAUTHBEARER"},
            "sasl_oauth_token_provider",
            ValueError,
        ),
        (
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "PLAIN",
                "sasl_plain_username": "u",
                "sasl_plain_password": "p",
                "sasl_scram_token_auth": True,
            },
            "sasl_scram_token_auth needs a SCRAM",
            ValueError,
        ),
        (
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "SCRAM-SHA-256",
                "sasl_plain_username": "u",
                "sasl_plain_password": "p",
                "sasl_scram_token_auth": "yes",
            },
            "sasl_scram_token_auth must be a bool",
            TypeError,
        ),
    ],
)
def test_invalid_options_name_the_argument(
    kwargs: dict[str, Any], name: str, exc: type[Exception]
) -> None:
    with pytest.raises(exc, match=name):
        ClientConfig(**kwargs)
    # The client constructor validates the same way, and starts nothing.
    with pytest.raises(exc, match=name):
        AIOKafkaClient(**kwargs)


def test_gssapi_without_package_names_the_extra() -> None:
    try:
        import gssapi  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match=r"pip install aiokafka\[gssapi\]"):
            ClientConfig(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI")
    else:  # pragma: no cover - only where gssapi is installed
        ClientConfig(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI")


def test_valid_security_combinations() -> None:
    ctx = create_ssl_context()
    assert ClientConfig(security_protocol="SSL", ssl_context=ctx).connection.uses_ssl
    cfg = ClientConfig(
        security_protocol="SASL_SSL",
        ssl_context=ctx,
        sasl_mechanism="SCRAM-SHA-512",
        sasl_plain_username="u",
        sasl_plain_password="p",
    )
    assert cfg.connection.uses_sasl and cfg.connection.uses_ssl
    oauth = ClientConfig(
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=Tokens(),
    )
    assert oauth.connection.sasl_mechanism == "OAUTHBEARER"
    assert ClientConfig(api_version="2.8").api_version == "2.8"  # accepted, ignored
    for version in (None, "2.0.0", "3.9", "4.0", "9.9"):  # aiokafka 0.13+ ignore it too
        assert ClientConfig(api_version=version).api_version == version


def test_client_rejects_config_and_options_together() -> None:
    with pytest.raises(TypeError, match="either config or keyword options"):
        AIOKafkaClient(ClientConfig(), request_timeout_ms=5)


def test_create_ssl_context() -> None:
    ctx = create_ssl_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname
    with pytest.raises(ValueError, match="certfile"):
        create_ssl_context(keyfile="k.pem")
    with pytest.raises(FileNotFoundError):
        create_ssl_context(cafile="/nonexistent/ca.pem")
