"""Validated options of one broker connection.

:class:`ConnectionConfig` holds what a single connection needs (timeouts, pipelining,
security, SASL). The cluster client's config extends it, so each rule is checked in
one place and the error names the user-facing argument.
"""

from __future__ import annotations

import importlib.util
import ssl
from dataclasses import dataclass, field

from aiokafka.abc import AbstractTokenProvider
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE, MAX_RESPONSE_SIZE_RANGE
from aiokafka.net.sasl import SUPPORTED_MECHANISMS
from aiokafka.net.secret import Secret
from aiokafka.option_checks import (
    DEFAULT_CLIENT_ID,
    InvalidOptionError,
    check_int,
    secret_option,
    unknown_option,
)

__all__ = [
    "DEFAULT_CLIENT_ID",
    "SECURITY_PROTOCOLS",
    "ConnectionConfig",
    "InvalidOptionError",
    "check_int",
    "secret_option",
    "unknown_option",
]

SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    """Options of a broker connection (aiokafka's keyword names); the clients'
    :class:`~aiokafka.cluster.config.ClientConfig` extends it.

    Attributes:
        client_id: Sent in every request header; ``None`` sends a null client id.
        request_timeout_ms: How long a request may wait for its response; also bounds
            connecting (TCP, TLS and SASL).
        max_in_flight_requests_per_connection: Requests sent but not yet answered;
            further sends wait for a slot.
        security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
        ssl_context: Required for ``SSL``/``SASL_SSL``
            (see :func:`aiokafka.helpers.create_ssl_context`).
        sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``,
            ``OAUTHBEARER`` or ``GSSAPI`` (used with the SASL protocols).
        sasl_plain_username: User for PLAIN and SCRAM.
        sasl_plain_password: Password for PLAIN and SCRAM. A ``str`` is accepted and
            kept as a :class:`~aiokafka.net.secret.Secret`, so it never shows in
            ``repr``, ``str`` or :func:`dataclasses.asdict`; read it with
            ``get_secret_value()``.
        sasl_kerberos_service_name: Kerberos service name of the brokers.
        sasl_kerberos_domain_name: Host name used in the Kerberos service principal;
            defaults to the host connected to.
        sasl_oauth_token_provider: Token source for OAUTHBEARER (left out of
            ``repr``: a provider may hold credentials).
        sasl_scram_token_auth: Authenticate with a delegation token over SCRAM
            (``tokenauth=true``): ``sasl_plain_username`` is the token id and
            ``sasl_plain_password`` its HMAC in base64
            (:meth:`aiokafka.admin.DelegationToken.credentials` gives all three).
        max_response_size: Largest response frame read from a broker, in bytes
            (default 100 MiB, in [1 MiB, 2**31 - 1]). The length prefix is checked
            before the body is read (see :mod:`aiokafka.net.frames`): a larger one (a
            peer that is not Kafka, or a broken one) fails the connection with a
            retriable :class:`~aiokafka.errors.KafkaProtocolError` naming the broker,
            the size and the limit. A consumer's Fetch raises its connection's limit
            to its own ``max_bytes`` (``fetch_max_bytes``) plus headroom, so this
            only needs setting to accept other unusually large responses.
    """

    client_id: str | None = DEFAULT_CLIENT_ID
    request_timeout_ms: int = 40000
    max_in_flight_requests_per_connection: int = 5
    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: Secret | None = None
    sasl_kerberos_service_name: str = "kafka"
    sasl_kerberos_domain_name: str | None = None
    sasl_oauth_token_provider: AbstractTokenProvider | None = field(default=None, repr=False)
    sasl_scram_token_auth: bool = False
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "sasl_plain_password",
            secret_option("sasl_plain_password", self.sasl_plain_password),
        )
        if self.client_id is not None and not isinstance(self.client_id, str):
            raise InvalidOptionError("client_id must be a str or None", "client_id")
        # int32 milliseconds on the wire elsewhere; more than ~24 days is a typo.
        check_int("request_timeout_ms", self.request_timeout_ms, 1, 2**31 - 1)
        check_int(
            "max_in_flight_requests_per_connection",
            self.max_in_flight_requests_per_connection,
            1,
        )
        check_int("max_response_size", self.max_response_size, *MAX_RESPONSE_SIZE_RANGE)
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ValueError(
                f"security_protocol must be one of {sorted(SECURITY_PROTOCOLS)}, "
                f"got {self.security_protocol!r}"
            )
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise InvalidOptionError("ssl_context must be an ssl.SSLContext", "ssl_context")
        if self.uses_ssl and self.ssl_context is None:
            raise ValueError(
                f"ssl_context is required with security_protocol={self.security_protocol!r}; "
                "see aiokafka.helpers.create_ssl_context()"
            )
        if self.uses_sasl:
            self._validate_sasl()

    def _validate_sasl(self) -> None:
        mech = self.sasl_mechanism
        if mech not in SUPPORTED_MECHANISMS:
            raise ValueError(
                f"sasl_mechanism must be one of {sorted(SUPPORTED_MECHANISMS)}, got {mech!r}"
            )
        if not isinstance(self.sasl_scram_token_auth, bool):
            raise InvalidOptionError(
                "sasl_scram_token_auth must be a bool", "sasl_scram_token_auth"
            )
        if self.sasl_scram_token_auth and not mech.startswith("SCRAM-"):
            raise ValueError(f"sasl_scram_token_auth needs a SCRAM sasl_mechanism, not {mech!r}")
        if mech in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            if not self.sasl_plain_username:
                raise ValueError(f"sasl_plain_username is required for sasl_mechanism={mech!r}")
            if self.sasl_plain_password is None:
                raise ValueError(f"sasl_plain_password is required for sasl_mechanism={mech!r}")
        elif mech == "OAUTHBEARER":
            if not isinstance(self.sasl_oauth_token_provider, AbstractTokenProvider):
                raise ValueError(
                    "sasl_oauth_token_provider must be an aiokafka.abc.AbstractTokenProvider "
                    "for sasl_mechanism='OAUTHBEARER'"
                )
        elif mech == "GSSAPI":
            if not self.sasl_kerberos_service_name:
                raise ValueError("sasl_kerberos_service_name must be non-empty for GSSAPI")
            if importlib.util.find_spec("gssapi") is None:
                raise ValueError(
                    "sasl_mechanism='GSSAPI' needs the 'gssapi' package: "
                    "pip install aiokafka[gssapi]"
                )

    @property
    def uses_ssl(self) -> bool:
        """True for ``SSL`` and ``SASL_SSL``."""
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        """True for ``SASL_PLAINTEXT`` and ``SASL_SSL``."""
        return self.security_protocol.startswith("SASL_")
