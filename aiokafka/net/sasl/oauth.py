"""SASL OAUTHBEARER (RFC 7628, Kafka KIP-255 and KIP-342 extensions).

The token comes from an :class:`aiokafka.abc.AbstractTokenProvider`, whose
``token()`` is a coroutine. To keep this module free of asyncio the connection awaits
the provider first and hands the resulting token and extensions to
:class:`OAuthBearerMechanism`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from aiokafka.errors import AuthenticationFailedError
from aiokafka.net.sasl.base import SaslMechanism
from aiokafka.net.secret import Secret

__all__ = ["OAuthBearerMechanism"]

_SEP = "\x01"
# RFC 7628 section 3.1: key = 1*(ALPHA), value = *(VCHAR / SP / HTAB / CR / LF).
_KEY_RE = re.compile(r"[A-Za-z]+")
_VALUE_RE = re.compile(r"[\x21-\x7E \t\r\n]*")


class OAuthBearerMechanism(SaslMechanism):
    """OAUTHBEARER with a bearer token and optional SASL extensions.

    On success Kafka's broker answers the initial message with empty bytes. On
    failure it sends a JSON error challenge; RFC 7628 requires the client to answer
    it with a single ``%x01`` so the server can finish with an error, which the
    broker then reports as a SaslAuthenticate error code. If a broker ever accepted
    that dummy answer, the exchange still fails here, with the server's JSON.

    Args:
        token: The bearer token (e.g. a JWT), a ``str`` or a
            :class:`~aiokafka.net.secret.Secret`.
        extensions: SASL extensions (KIP-342) sent along with the token.

    Raises:
        ValueError: a malformed token or extension; the message never quotes the
            token or an extension's value (either may be a credential).
    """

    name = "OAUTHBEARER"

    def __init__(self, token: str | Secret, extensions: Mapping[str, str] | None = None) -> None:
        super().__init__()
        secret = token if isinstance(token, Secret) else Secret(token)
        clear = secret.get_secret_value()
        if not clear or any(c in clear for c in (_SEP, " ")):
            raise ValueError("OAUTHBEARER token must be a non-empty string without spaces")
        ext = dict(extensions or {})
        for key, value in ext.items():
            if key == "auth":
                # "auth" carries the token itself; Kafka reserves the name.
                raise ValueError("SASL extension name 'auth' is reserved")
            if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
                raise ValueError(f"invalid SASL extension name {key!r} (RFC 7628 3.1)")
            if not isinstance(value, str) or not _VALUE_RE.fullmatch(value):
                raise ValueError(
                    f"invalid SASL extension {key!r}: its value is not text RFC 7628 3.1 allows"
                )
        self._token = secret
        self._extensions = ext
        self._server_error: str | None = None

    def _first_message(self) -> bytes:
        parts = [f"auth=Bearer {self._token.get_secret_value()}"]
        parts.extend(f"{k}={v}" for k, v in sorted(self._extensions.items()))
        return ("n,," + _SEP + _SEP.join(parts) + _SEP + _SEP).encode("utf-8")

    def _next_message(self, challenge: bytes) -> bytes | None:
        if self._server_error is not None:
            raise AuthenticationFailedError(
                f"OAUTHBEARER: token rejected by the server: {self._server_error}"
            )
        if challenge:
            self._server_error = challenge.decode("utf-8", errors="replace")
            return _SEP.encode()
        self._complete = True
        return None

    @property
    def server_error(self) -> str | None:
        """The server's JSON error challenge, if it sent one."""
        return self._server_error
