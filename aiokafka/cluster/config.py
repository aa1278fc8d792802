"""The validated configuration shared by every client (producer, consumer, admin).

All bounds and cross-field rules for the shared options live here;
:class:`ClientConfig` raises ``ValueError``/``TypeError`` naming the offending
argument at construction, before anything connects.
"""

from __future__ import annotations

import re
import ssl
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from aiokafka.abc import AbstractTokenProvider
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE
from aiokafka.net.secret import Secret
from aiokafka.option_checks import DEFAULT_CLIENT_ID, InvalidOptionError, check_int, secret_option

__all__ = ["ClientConfig", "check_loop", "parse_bootstrap_servers"]

DEFAULT_PORT = 9092

# aiokafka accepted "auto" or a broker version string such as "2.8.1" to pin the
# protocol (0.13+ ignore it, and default to None). Version negotiation (KIP-35) made
# pinning unnecessary: None, "auto" and any dotted version ("2.0.0", "3.9", "4.0")
# are accepted and ignored; anything else is a typo worth reporting.
_API_VERSION_PATTERN = re.compile(r"auto|\d+(\.\d+){0,3}")


def check_loop(loop: object, owner: str, stacklevel: int = 2) -> None:
    """aiokafka's ``loop=`` argument: ``None`` is accepted silently; an event loop
    is ignored with a ``DeprecationWarning`` (aiokafka 0.14 warned too). The client
    runs on the loop that is running when it starts.

    Args:
        loop: The value passed.
        owner: The class named in the warning.
        stacklevel: Frames above the caller of this function that the warning
            points at (2: the caller's caller).
    """
    if loop is not None:
        warnings.warn(
            f"{owner}: the loop argument is deprecated and ignored; the client uses "
            "the event loop running when it starts",
            DeprecationWarning,
            stacklevel=stacklevel + 1,
        )


def parse_bootstrap_servers(value: str | Sequence[str]) -> tuple[tuple[str, int], ...]:
    """Parse ``"host:port,host2"`` or a list of ``"host:port"`` into ``(host, port)``.

    IPv6 literals are written in brackets (``"[::1]:9092"``); a missing port means
    9092.

    Raises:
        ValueError: empty, or an entry is malformed (message names
            ``bootstrap_servers``).
        InvalidOptionError: not a str or a sequence of str (a ``TypeError`` and a
            ``ValueError``).
    """
    if isinstance(value, str):
        entries = [e.strip() for e in value.split(",")]
    elif isinstance(value, Sequence) and all(isinstance(e, str) for e in value):
        entries = [e.strip() for e in value]
    else:
        raise InvalidOptionError(
            "bootstrap_servers must be a str or a list of 'host:port' strings", "bootstrap_servers"
        )
    result: list[tuple[str, int]] = []
    for entry in entries:
        if not entry:
            continue
        host, port_text = entry, ""
        if entry.startswith("["):
            close = entry.find("]")
            if close < 0:
                raise ValueError(f"bootstrap_servers: unbalanced '[' in {entry!r}")
            host, rest = entry[1:close], entry[close + 1 :]
            if rest and not rest.startswith(":"):
                raise ValueError(f"bootstrap_servers: malformed entry {entry!r}")
            port_text = rest[1:]
        elif entry.count(":") == 1:
            host, port_text = entry.split(":")
        elif entry.count(":") > 1:
            raise ValueError(f"bootstrap_servers: write IPv6 addresses as '[addr]:port': {entry!r}")
        if not host:
            raise ValueError(f"bootstrap_servers: missing host in {entry!r}")
        try:
            port = int(port_text) if port_text else DEFAULT_PORT
        except ValueError:
            raise ValueError(f"bootstrap_servers: bad port in {entry!r}") from None
        if not 0 < port < 65536:
            raise ValueError(f"bootstrap_servers: port out of range in {entry!r}")
        result.append((host, port))
    if not result:
        raise ValueError("bootstrap_servers must name at least one 'host:port'")
    return tuple(result)


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Options shared by all clients, with aiokafka's names and defaults.

    Attributes:
        bootstrap_servers: ``"host:port[,host:port]"`` or a list; every address a
            name resolves to is tried.
        client_id: Sent in request headers, shown in broker logs and quotas.
        metadata_max_age_ms: Refresh metadata at least this often, even without
            errors (so new partitions/brokers are seen).
        request_timeout_ms: Deadline of a single request, and of connecting.
        retry_backoff_ms: Pause between retries of a failed request.
        reconnect_backoff_ms: First pause before reconnecting to a broker.
        reconnect_backoff_max_ms: Upper bound of the exponentially growing
            reconnect pause.
        connections_max_idle_ms: Close connections idle for longer than this.
        max_in_flight_requests_per_connection: Pipelining depth per connection.
        api_version: ``"auto"`` (negotiate with ApiVersions). ``None`` and version
            strings (``"2.8"``, ``"4.0"``, ``"2.0.0"``) are accepted for
            compatibility with aiokafka and ignored:
            each request's version is negotiated per broker, which is never less
            correct than a pinned one. Pass ``max_version`` to a request to cap it.
        security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``.
        ssl_context: Required for the SSL protocols.
        sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``,
            ``OAUTHBEARER`` or ``GSSAPI``.
        sasl_plain_username: User for PLAIN/SCRAM.
        sasl_plain_password: Password for PLAIN/SCRAM: a ``str`` (or a
            :class:`~aiokafka.net.secret.Secret`), kept as a ``Secret`` so that it
            never shows in ``repr``, ``str`` or :func:`dataclasses.asdict`.
        sasl_kerberos_service_name: Kerberos service name (GSSAPI).
        sasl_kerberos_domain_name: Kerberos host name override (GSSAPI).
        sasl_oauth_token_provider: Token provider (OAUTHBEARER); not in ``repr``.
        client_rack: The client's rack (KIP-392 fetch-from-follower), or ``None``.
        allow_auto_topic_creation: Let Metadata requests create missing topics (if
            the broker allows it).
        max_response_size: Largest response frame accepted from a broker, in bytes
            (default 100 MiB, in [1 MiB, 2**31 - 1]). The length prefix is checked
            before the body is read: a larger one (a peer that is not Kafka, or a
            broken one) fails the connection with a retriable
            :class:`~aiokafka.errors.KafkaProtocolError` naming the broker, the size
            and the limit. A consumer's Fetch raises its connection's limit to its
            own ``max_bytes`` (``fetch_max_bytes``) plus headroom, so this only
            needs setting to accept other unusually large responses.
        enable_metrics_push: Push the client's metrics to the cluster when the
            cluster subscribes to them (KIP-714, the Java client's
            ``enable.metrics.push``): a broker with a client-telemetry plugin and a
            matching client-metrics subscription is sent the selected metrics every
            push interval, and once more at ``stop()``; with no plugin the broker
            does not offer the API and nothing is sent. ``False``: the client never
            asks (``docs/metrics.md``).
    """

    bootstrap_servers: str | Sequence[str] = "localhost"
    client_id: str | None = DEFAULT_CLIENT_ID
    metadata_max_age_ms: int = 300000
    request_timeout_ms: int = 40000
    retry_backoff_ms: int = 100
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    connections_max_idle_ms: int = 540000
    max_in_flight_requests_per_connection: int = 5
    api_version: str | None = "auto"
    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: Secret | None = None
    sasl_kerberos_service_name: str = "kafka"
    sasl_kerberos_domain_name: str | None = None
    sasl_oauth_token_provider: AbstractTokenProvider | None = field(default=None, repr=False)
    client_rack: str | None = None
    allow_auto_topic_creation: bool = True
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE
    enable_metrics_push: bool = True
    bootstrap_addresses: tuple[tuple[str, int], ...] = field(init=False, default=())
    connection: ConnectionConfig = field(init=False, default_factory=ConnectionConfig)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "bootstrap_addresses", parse_bootstrap_servers(self.bootstrap_servers)
        )
        object.__setattr__(
            self,
            "sasl_plain_password",
            secret_option("sasl_plain_password", self.sasl_plain_password),
        )
        check_int("metadata_max_age_ms", self.metadata_max_age_ms, 0)
        check_int("retry_backoff_ms", self.retry_backoff_ms, 0)
        check_int("reconnect_backoff_ms", self.reconnect_backoff_ms, 0)
        check_int("reconnect_backoff_max_ms", self.reconnect_backoff_max_ms, 0)
        # A max below the initial value would make the back-off shrink; Kafka then
        # uses the initial value, but it is almost certainly a typo here.
        if self.reconnect_backoff_max_ms < self.reconnect_backoff_ms:
            raise ValueError(
                "reconnect_backoff_max_ms must be >= reconnect_backoff_ms "
                f"({self.reconnect_backoff_max_ms} < {self.reconnect_backoff_ms})"
            )
        check_int("connections_max_idle_ms", self.connections_max_idle_ms, 1)
        if self.api_version is not None and (
            not isinstance(self.api_version, str)
            or not _API_VERSION_PATTERN.fullmatch(self.api_version)
        ):
            raise ValueError(
                "api_version must be None, 'auto' or a version string such as '2.8.1' "
                f"(accepted and ignored), got {self.api_version!r}"
            )
        if self.client_rack is not None and not isinstance(self.client_rack, str):
            raise InvalidOptionError("client_rack must be a str or None", "client_rack")
        if not isinstance(self.allow_auto_topic_creation, bool):
            raise InvalidOptionError(
                "allow_auto_topic_creation must be a bool", "allow_auto_topic_creation"
            )
        if not isinstance(self.enable_metrics_push, bool):
            raise InvalidOptionError("enable_metrics_push must be a bool", "enable_metrics_push")
        # Timeout, pipelining, security and SASL rules live in ConnectionConfig.
        object.__setattr__(
            self,
            "connection",
            ConnectionConfig(
                client_id=self.client_id,
                request_timeout_ms=self.request_timeout_ms,
                max_in_flight_requests_per_connection=self.max_in_flight_requests_per_connection,
                security_protocol=self.security_protocol,
                ssl_context=self.ssl_context,
                sasl_mechanism=self.sasl_mechanism,
                sasl_plain_username=self.sasl_plain_username,
                sasl_plain_password=self.sasl_plain_password,
                sasl_kerberos_service_name=self.sasl_kerberos_service_name,
                sasl_kerberos_domain_name=self.sasl_kerberos_domain_name,
                sasl_oauth_token_provider=self.sasl_oauth_token_provider,
                max_response_size=self.max_response_size,
            ),
        )
