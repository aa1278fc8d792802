"""SASL SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677), client side.

Follows Kafka's Java client: no channel binding (GS2 header ``n,,``), no SASLprep of
the password (Kafka's ``ScramFormatter`` hashes the UTF-8 bytes as given), and at
least 4096 PBKDF2 iterations demanded from the server. The server signature in the
final message is verified, so a server that does not know the password cannot pass
itself off as the broker.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import ClassVar

from aiokafka.errors import AuthenticationFailedError
from aiokafka.net.sasl.base import SaslMechanism
from aiokafka.net.secret import Secret

__all__ = ["ScramMechanism", "ScramSha256Mechanism", "ScramSha512Mechanism"]

# Kafka's ScramMechanism.minIterations(): a server asking for fewer is refused, so a
# hostile server cannot make the client leak a cheaply brute-forced proof.
MIN_ITERATIONS = 4096
# A hostile server could ask for billions of iterations to stall the client's CPU.
MAX_ITERATIONS = 1 << 24

_GS2_HEADER = "n,,"


def _saslname(username: str) -> str:
    # RFC 5802 section 5.1: "=" and "," in a username are escaped as =3D and =2C.
    return username.replace("=", "=3D").replace(",", "=2C")


def _parse_attributes(message: bytes, step: str) -> dict[str, str]:
    try:
        text = message.decode("utf-8")
    except UnicodeDecodeError:
        raise AuthenticationFailedError(f"SCRAM: {step} is not UTF-8") from None
    attrs: dict[str, str] = {}
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise AuthenticationFailedError(f"SCRAM: malformed {step}: {text!r}")
        attrs.setdefault(part[0], part[2:])
    return attrs


class ScramMechanism(SaslMechanism):
    """SCRAM with a configurable hash; use the SHA-256/512 subclasses for Kafka.

    Args:
        username: The SCRAM user name.
        password: The password (a ``str`` or a :class:`~aiokafka.net.secret.Secret`).
        nonce: The client nonce; random by default. Fixed only in tests that replay
            the RFC example exchanges.
        token_auth: The user name is a delegation token's id and the password its
            HMAC: the first message carries Kafka's ``tokenauth=true`` extension, so
            the broker checks them against its tokens, not its users.
    """

    name: ClassVar[str] = "SCRAM"
    hash_name: ClassVar[str] = "sha256"

    def __init__(
        self,
        username: str,
        password: str | Secret,
        *,
        nonce: str | None = None,
        token_auth: bool = False,
    ) -> None:
        super().__init__()
        self._token_auth = token_auth
        self._username = username
        self._password = password if isinstance(password, Secret) else Secret(password)
        self._nonce = nonce if nonce is not None else secrets.token_urlsafe(24)
        if not self._nonce or "," in self._nonce:
            raise ValueError("nonce must be non-empty printable text without ','")
        self._client_first_bare = ""
        self._server_signature: bytes | None = None

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self.hash_name).digest()

    def _first_message(self) -> bytes:
        self._client_first_bare = f"n={_saslname(self._username)},r={self._nonce}"
        if self._token_auth:  # an RFC 5802 extension, after the nonce
            self._client_first_bare += ",tokenauth=true"
        return (_GS2_HEADER + self._client_first_bare).encode("utf-8")

    def _next_message(self, challenge: bytes) -> bytes | None:
        if self._server_signature is None:
            return self._client_final(challenge)
        self._verify_server_final(challenge, self._server_signature)
        self._complete = True
        return None

    def _client_final(self, server_first: bytes) -> bytes:
        attrs = _parse_attributes(server_first, "server-first-message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"SCRAM: server error {attrs['e']!r}")
        try:
            nonce, salt_b64, iter_text = attrs["r"], attrs["s"], attrs["i"]
        except KeyError as exc:
            raise AuthenticationFailedError(
                f"SCRAM: server-first-message lacks attribute {exc.args[0]!r}"
            ) from None
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            # The server must extend our nonce; anything else is a replay or a bug.
            raise AuthenticationFailedError("SCRAM: server nonce does not extend the client nonce")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(iter_text)
        except ValueError:
            raise AuthenticationFailedError("SCRAM: malformed salt or iteration count") from None
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise AuthenticationFailedError(
                f"SCRAM: iteration count {iterations} outside [{MIN_ITERATIONS}, {MAX_ITERATIONS}]"
            )

        password = self._password.get_secret_value().encode("utf-8")
        salted = hashlib.pbkdf2_hmac(self.hash_name, password, salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        channel_binding = base64.b64encode(_GS2_HEADER.encode()).decode()
        without_proof = f"c={channel_binding},r={nonce}"
        auth_message = ",".join(
            (self._client_first_bare, server_first.decode("utf-8"), without_proof)
        ).encode("utf-8")
        client_signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, client_signature, strict=True))
        server_key = self._hmac(salted, b"Server Key")
        self._server_signature = self._hmac(server_key, auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify_server_final(self, server_final: bytes, expected: bytes) -> None:
        attrs = _parse_attributes(server_final, "server-final-message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"SCRAM: server rejected the proof: {attrs['e']}")
        try:
            signature = base64.b64decode(attrs["v"], validate=True)
        except (KeyError, ValueError):
            raise AuthenticationFailedError(
                "SCRAM: server-final-message lacks a valid v="
            ) from None
        if not hmac.compare_digest(signature, expected):
            raise AuthenticationFailedError(
                "SCRAM: the server signature does not match; the server does not know "
                "the password (possible impostor)"
            )


class ScramSha256Mechanism(ScramMechanism):
    """SCRAM-SHA-256 (RFC 7677)."""

    name = "SCRAM-SHA-256"
    hash_name = "sha256"


class ScramSha512Mechanism(ScramMechanism):
    """SCRAM-SHA-512."""

    name = "SCRAM-SHA-512"
    hash_name = "sha512"
