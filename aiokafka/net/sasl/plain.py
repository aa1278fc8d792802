"""SASL PLAIN (RFC 4616)."""

from __future__ import annotations

from aiokafka.errors import AuthenticationFailedError
from aiokafka.net.sasl.base import SaslMechanism
from aiokafka.net.secret import Secret

__all__ = ["PlainMechanism"]


class PlainMechanism(SaslMechanism):
    """PLAIN: one message ``authzid NUL authcid NUL passwd``.

    Kafka's broker answers a successful PLAIN message with empty bytes; a wrong
    password is reported as a SaslAuthenticate error code, not a challenge.

    Args:
        username: The authentication identity.
        password: The password (a ``str`` or a :class:`~aiokafka.net.secret.Secret`),
            sent in clear text (use SASL_SSL outside tests).
    """

    name = "PLAIN"

    def __init__(self, username: str, password: str | Secret) -> None:
        super().__init__()
        secret = password if isinstance(password, Secret) else Secret(password)
        if "\x00" in username or "\x00" in secret.get_secret_value():
            # NUL separates the fields; one inside a field would shift them.
            raise ValueError("sasl_plain_username/sasl_plain_password must not contain NUL")
        self._username = username
        self._password = secret

    def _first_message(self) -> bytes:
        # Empty authzid: act as the authenticated user (what Kafka's Java client sends).
        password = self._password.get_secret_value().encode("utf-8")
        return b"\x00" + self._username.encode("utf-8") + b"\x00" + password

    def _next_message(self, challenge: bytes) -> bytes | None:
        if challenge:
            raise AuthenticationFailedError(
                f"PLAIN: unexpected server challenge of {len(challenge)} bytes"
            )
        self._complete = True
        return None
