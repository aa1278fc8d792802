"""SASL authentication of a new connection (KIP-43 handshake, KIP-152 framing).

``SaslHandshake`` names the mechanism; then each mechanism message travels in a
``SaslAuthenticate`` request and each server message comes back in its response.
The mechanisms themselves are sans-I/O (:mod:`aiokafka.net.sasl`); this module
only moves their bytes and turns broker error codes into exceptions.

The same exchange re-authenticates an open connection (KIP-368): the connection
passes a ``send`` that bypasses its re-authentication gate, and schedules the next
round from the session lifetime :func:`authenticate` returns.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol, TypeVar

from aiokafka.errors import (
    AuthenticationFailedError,
    UnsupportedSaslMechanismError,
    UnsupportedVersionError,
    for_code,
)
from aiokafka.net import sasl  # its mechanism classes load at the first authentication
from aiokafka.net.config import ConnectionConfig
from aiokafka.net.secret import Secret
from aiokafka.protocol import messages as _messages

if TYPE_CHECKING:
    from aiokafka.net.connection import AIOKafkaConnection
    from aiokafka.net.sasl import SaslMechanism
    from aiokafka.protocol.request import Request

__all__ = ["SendFunction", "authenticate", "build_mechanism"]

_R = TypeVar("_R")


class SendFunction(Protocol):
    """Sends one request on the connection being authenticated and returns its
    response (typed by the request class, as ``AIOKafkaConnection.send``)."""

    def __call__(self, request: Request[_R], /) -> Awaitable[_R]: ...


log = logging.getLogger(__name__)


async def build_mechanism(config: ConnectionConfig, host: str) -> SaslMechanism:
    """Create the mechanism object for one authentication.

    Awaits the OAUTHBEARER token provider, so the mechanism stays free of asyncio.
    """
    mech = config.sasl_mechanism
    # The password stays wrapped until the mechanism writes it into its message.
    password = config.sasl_plain_password
    if password is None:  # excluded for PLAIN/SCRAM by ConnectionConfig validation
        password = Secret("")
    if mech == "PLAIN":
        return sasl.PlainMechanism(config.sasl_plain_username or "", password)
    token_auth = config.sasl_scram_token_auth
    if mech == "SCRAM-SHA-256":
        return sasl.ScramSha256Mechanism(
            config.sasl_plain_username or "", password, token_auth=token_auth
        )
    if mech == "SCRAM-SHA-512":
        return sasl.ScramSha512Mechanism(
            config.sasl_plain_username or "", password, token_auth=token_auth
        )
    if mech == "OAUTHBEARER":
        provider = config.sasl_oauth_token_provider
        if provider is None:  # excluded by ConnectionConfig validation
            raise AuthenticationFailedError("OAUTHBEARER needs sasl_oauth_token_provider")
        token = await provider.token()
        if not isinstance(token, str):
            raise AuthenticationFailedError(
                f"the token provider returned {type(token).__name__}, expected str"
            )
        try:
            return sasl.OAuthBearerMechanism(Secret(token), provider.extensions())
        except ValueError as exc:
            raise AuthenticationFailedError(f"OAUTHBEARER: {exc}") from exc
    if mech == "GSSAPI":
        return sasl.GssapiMechanism(
            config.sasl_kerberos_service_name, config.sasl_kerberos_domain_name or host
        )
    raise AuthenticationFailedError(f"unsupported sasl_mechanism {mech!r}")


async def authenticate(
    conn: AIOKafkaConnection,
    config: ConnectionConfig,
    host: str,
    *,
    send: SendFunction | None = None,
) -> int:
    """Run the SASL exchange on a connection that finished its ApiVersions handshake.

    Args:
        conn: The connection (named in errors; its negotiated versions are used).
        config: The SASL options.
        host: The broker host (GSSAPI's default service host).
        send: How to send each request; ``conn.send`` by default.

    Returns:
        The session lifetime the broker set, in milliseconds (KIP-368,
        SaslAuthenticate v1+); 0 when the session does not expire.

    Raises:
        aiokafka.errors.UnsupportedSaslMechanismError: the broker does not enable the
            mechanism (the message lists those it does).
        aiokafka.errors.SaslAuthenticationFailed: the broker rejected the credentials
            (its error message is included).
        aiokafka.errors.AuthenticationFailedError: the client rejected the server
            (e.g. a wrong SCRAM server signature).
    """
    if send is None:
        send = conn.send
    mechanism = await build_mechanism(config, host)
    handshake = await send(_messages.SaslHandshakeRequest(mechanism=mechanism.name))
    if handshake.error_code == UnsupportedSaslMechanismError.errno:
        raise UnsupportedSaslMechanismError(
            f"{conn.peer} does not enable SASL mechanism {mechanism.name}; "
            f"enabled: {', '.join(handshake.mechanisms) or 'none'}"
        )
    if handshake.error_code:
        error_type = for_code(handshake.error_code)
        raise error_type(
            f"SaslHandshake with {conn.peer} failed: {error_type.message} "
            "(is it a SASL listener matching security_protocol?)"
        )
    if conn.api_version(_messages.SaslHandshakeRequest.API_KEY) < 1:
        # v0 sends raw SASL tokens outside Kafka framing (pre-KIP-152, Kafka < 1.0).
        raise UnsupportedVersionError(
            f"{conn.peer} only supports SaslHandshake v0 (Kafka < 1.0); not supported"
        )

    message: bytes | None = mechanism.initial_response()
    lifetime_ms = 0
    while message is not None:
        response = await send(_messages.SaslAuthenticateRequest(auth_bytes=message))
        if response.error_code:
            error_type = for_code(response.error_code)
            detail = response.error_message or error_type.message
            raise error_type(
                f"SASL {mechanism.name} authentication to {conn.peer} failed: {detail}"
            )
        # Set on the last round trip (0 before v1 and on intermediate answers).
        lifetime_ms = response.session_lifetime_ms
        message = mechanism.step(bytes(response.auth_bytes))
    log.debug(
        "Authenticated to %s with SASL %s (session lifetime %s)",
        conn.peer,
        mechanism.name,
        f"{lifetime_ms} ms" if lifetime_ms > 0 else "unlimited",
    )
    return int(lifetime_ms)
