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
        token: The bearer token (e.g. a JWT).
        extensions: SASL extensions (KIP-342) sent along with the token.
    """

    name = "OAUTHBEARER"

    def __init__(self, token: str, extensions: Mapping[str, str] | None = None) -> None:
        super().__init__()
        if not token or any(c in token for c in (_SEP, " ")):
            raise ValueError("OAUTHBEARER token must be a non-empty string without spaces")
        ext = dict(extensions or {})
        for key, value in ext.items():
            if key == "auth":
                # "auth" carries the token itself; Kafka reserves the name.
                raise ValueError("SASL extension name 'auth' is reserved")
            if not _KEY_RE.fullmatch(key) or not _VALUE_RE.fullmatch(value):
                raise ValueError(f"invalid SASL extension {key!r}={value!r} (RFC 7628 3.1)")
        self._token = token
        self._extensions = ext
        self._server_error: str | None = None

    def _first_message(self) -> bytes:
        parts = [f"auth=Bearer {self._token}"]
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
