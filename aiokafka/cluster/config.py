"""The validated configuration shared by every client (producer, consumer, admin).

All bounds and cross-field rules for the shared options live here;
:class:`ClientConfig` raises ``ValueError``/``TypeError`` naming the offending
argument at construction, before anything connects.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from aiokafka.net.config import ConnectionConfig
from aiokafka.option_checks import InvalidOptionError, check_int

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
class ClientConfig(ConnectionConfig):
    """Options shared by all clients, with aiokafka's names and defaults.

    The options of one broker connection (``client_id``, ``request_timeout_ms``,
    ``max_in_flight_requests_per_connection``, ``security_protocol``,
    ``ssl_context``, the ``sasl_*`` options and ``max_response_size``) are those of
    :class:`~aiokafka.net.config.ConnectionConfig`, which this config extends and
    which checks them; every connection the client makes is given this config.

    Attributes:
        bootstrap_servers: ``"host:port[,host:port]"`` or a list; every address a
            name resolves to is tried.
        metadata_max_age_ms: Refresh metadata at least this often, even without
            errors (so new partitions/brokers are seen).
        retry_backoff_ms: Pause between retries of a failed request.
        reconnect_backoff_ms: First pause before reconnecting to a broker.
        reconnect_backoff_max_ms: Upper bound of the exponentially growing
            reconnect pause.
        connections_max_idle_ms: Close connections idle for longer than this.
        api_version: ``"auto"`` (negotiate with ApiVersions). ``None`` and version
            strings (``"2.8"``, ``"4.0"``, ``"2.0.0"``) are accepted for
            compatibility with aiokafka and ignored:
            each request's version is negotiated per broker, which is never less
            correct than a pinned one. Pass ``max_version`` to a request to cap it.
        client_rack: The client's rack (KIP-392 fetch-from-follower), or ``None``.
        allow_auto_topic_creation: Let Metadata requests create missing topics (if
            the broker allows it).
        enable_metrics_push: Push the client's metrics to the cluster when the
            cluster subscribes to them (KIP-714, the Java client's
            ``enable.metrics.push``): a broker with a client-telemetry plugin and a
            matching client-metrics subscription is sent the selected metrics every
            push interval, and once more at ``stop()``; with no plugin the broker
            does not offer the API and nothing is sent. ``False``: the client never
            asks (``docs/metrics.md``).
    """

    bootstrap_servers: str | Sequence[str] = "localhost"
    metadata_max_age_ms: int = 300000
    retry_backoff_ms: int = 100
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1000
    connections_max_idle_ms: int = 540000
    api_version: str | None = "auto"
    client_rack: str | None = None
    allow_auto_topic_creation: bool = True
    enable_metrics_push: bool = True
    bootstrap_addresses: tuple[tuple[str, int], ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "bootstrap_addresses", parse_bootstrap_servers(self.bootstrap_servers)
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
        # Timeout, pipelining, security and SASL rules (and the password's Secret).
        # Explicit, not super(): slots=True makes a new class that super()'s cell
        # does not know.
        ConnectionConfig.__post_init__(self)

    @property
    def connection(self) -> ConnectionConfig:
        """The options each broker connection is made with: this config itself."""
        return self
