"""The one place where transport exceptions become :mod:`aiokafka.errors` types.

Socket, TLS and stream errors (``OSError``, ``ssl.SSLError``, ``EOFError`` including
``asyncio.IncompleteReadError``, ``TimeoutError``) never leave the connection as
themselves: the connection calls :func:`translate_transport_error` at its I/O
boundary, so callers deal with Kafka error types only.
"""

from __future__ import annotations

import ssl

from aiokafka.errors import AuthenticationFailedError, KafkaConnectionError, KafkaError

__all__ = ["TRANSPORT_ERRORS", "translate_transport_error"]

#: Exceptions the I/O boundary catches and translates.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, ssl.SSLError)

# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH / X509_V_ERR_IP_ADDRESS_MISMATCH.
_HOSTNAME_MISMATCH_CODES = frozenset({62, 64})


def translate_transport_error(
    exc: BaseException, peer: str, *, handshake: bool = False, server_hostname: str | None = None
) -> KafkaError:
    """Return the aiokafka error for a transport exception.

    Args:
        exc: The exception raised by the socket/TLS/stream layer.
        peer: ``"host:port"`` (and node id) for the message.
        handshake: True while connecting; a TLS failure then means the peer could
            not be authenticated, which retrying will not fix.
        server_hostname: The name the certificate was checked against.

    Returns:
        :class:`~aiokafka.errors.AuthenticationFailedError` (not retriable) for TLS
        certificate/handshake failures, else a retriable
        :class:`~aiokafka.errors.KafkaConnectionError`. The original exception is
        attached as ``__cause__`` by the caller (``raise ... from exc``).
    """
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code in _HOSTNAME_MISMATCH_CODES:
            return AuthenticationFailedError(
                f"SSL hostname verification failed for {peer}: the broker's certificate "
                f"is not valid for {server_hostname!r} ({exc.verify_message})"
            )
        return AuthenticationFailedError(
            f"SSL certificate verification failed for {peer}: {exc.verify_message}"
        )
    if isinstance(exc, ssl.SSLError) and handshake:
        return AuthenticationFailedError(
            f"SSL handshake with {peer} failed: {getattr(exc, 'reason', None) or exc} "
            "(is the port a TLS listener, and does the SSL context match the broker?)"
        )
    if isinstance(exc, EOFError):
        return KafkaConnectionError(f"connection to {peer} closed by the peer")
    if isinstance(exc, TimeoutError):
        return KafkaConnectionError(f"connecting to {peer} timed out")
    return KafkaConnectionError(f"connection to {peer} failed: {exc!r}")
