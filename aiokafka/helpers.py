"""Helpers for configuring clients (same names and arguments as aiokafka's)."""

from __future__ import annotations

import ssl
from collections.abc import Callable

from aiokafka.net.secret import Secret

__all__ = ["create_ssl_context"]

_Password = str | bytes | bytearray | Secret | Callable[[], str | bytes | bytearray]


def create_ssl_context(
    *,
    cafile: str | None = None,
    capath: str | None = None,
    cadata: str | bytes | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: _Password | None = None,
    crlfile: str | None = None,
) -> ssl.SSLContext:
    """Create a client-side SSL context for ``security_protocol="SSL"``/``"SASL_SSL"``.

    The context verifies the broker certificate and host name (``CERT_REQUIRED``,
    ``check_hostname=True``). Without ``cafile``/``capath``/``cadata`` the system's
    default CA certificates are trusted.

    Args:
        cafile: PEM file of CA certificates to trust.
        capath: Directory of hashed CA certificates.
        cadata: CA certificates as PEM text or DER bytes.
        certfile: Client certificate chain (PEM) for mutual TLS.
        keyfile: The client certificate's private key (default: inside ``certfile``).
        password: Password of ``keyfile``: text, bytes, a
            :class:`~aiokafka.net.secret.Secret`, or a callable returning it. Used
            once to load the key and not kept; no error message quotes it.
        crlfile: PEM certificate revocation list; enables leaf CRL checking.

    Returns:
        A configured :class:`ssl.SSLContext`.

    Raises:
        ValueError: ``keyfile``/``password`` given without ``certfile``.
        OSError, ssl.SSLError: a file cannot be read or parsed.
    """
    if certfile is None and (keyfile is not None or password is not None):
        raise ValueError("keyfile/password need certfile (the client certificate)")
    context = ssl.create_default_context(
        purpose=ssl.Purpose.SERVER_AUTH, cafile=cafile, capath=capath, cadata=cadata
    )
    if crlfile is not None:
        context.load_verify_locations(crlfile)
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    if certfile is not None:
        clear = password.get_secret_value() if isinstance(password, Secret) else password
        context.load_cert_chain(certfile, keyfile, clear)
    return context
