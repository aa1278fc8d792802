"""SCRAM credential alterations (KIP-554).

The client salts and hashes the password itself (RFC 5802 ``Hi()``, i.e.
PBKDF2-HMAC) so the clear password never travels to the broker. The password is kept
as a :class:`~aiokafka.net.secret.Secret` (never in ``repr``, ``str`` or
:func:`dataclasses.asdict`) and read only to hash it. No I/O here.
"""

from __future__ import annotations

import enum
import hashlib
import os
from dataclasses import dataclass, field

from aiokafka.admin.types import check_count, check_name
from aiokafka.net.secret import Secret

__all__ = [
    "ScramMechanism",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
]

# Kafka's bounds (ScramMechanism.minIterations / maxIterations).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


class ScramMechanism(enum.IntEnum):
    """SCRAM mechanisms by Kafka's wire code."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def hash_name(self) -> str:
        """The hashlib name of the mechanism's hash."""
        return {1: "sha256", 2: "sha512"}[int(self)]

    @property
    def mechanism_name(self) -> str:
        """The SASL name, e.g. ``SCRAM-SHA-256``."""
        return self.name.replace("_", "-")


def _mechanism(value: ScramMechanism | str | int) -> ScramMechanism:
    try:
        if isinstance(value, str):
            mech = ScramMechanism[value.upper().replace("-", "_")]
        else:
            mech = ScramMechanism(value)
    except (KeyError, ValueError):
        mech = ScramMechanism.UNKNOWN
    if mech is ScramMechanism.UNKNOWN:
        raise ValueError(f"mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got {value!r}")
    return mech


def salted_password(
    mechanism: ScramMechanism, password: str | Secret, salt: bytes, iterations: int
) -> bytes:
    """RFC 5802 ``SaltedPassword := Hi(Normalize(password), salt, i)``.

    Kafka does not apply SASLprep; the password is used as UTF-8.
    """
    clear = password.get_secret_value() if isinstance(password, Secret) else password
    return hashlib.pbkdf2_hmac(mechanism.hash_name, clear.encode(), salt, iterations)


@dataclass(frozen=True, init=False)
class UserScramCredentialUpsertion:
    """Create or replace ``user``'s credential for ``mechanism``.

    Args:
        user: The user name.
        mechanism: ``ScramMechanism`` or ``"SCRAM-SHA-256"``/``"SCRAM-SHA-512"``.
        password: The clear password (hashed locally, never sent), a ``str`` or a
            :class:`~aiokafka.net.secret.Secret`; kept as a ``Secret``.
        iterations: PBKDF2 iterations, 4096..16384 (Kafka's bounds).
        salt: Random salt; default 32 random bytes.

    Raises:
        ValueError, TypeError: an argument is invalid (the message names it).
    """

    user: str
    mechanism: ScramMechanism
    password: Secret = field(repr=False)
    iterations: int = MIN_ITERATIONS
    salt: bytes = field(repr=False, default=b"")

    def __init__(
        self,
        user: str,
        mechanism: ScramMechanism | str | int,
        password: str | Secret,
        iterations: int = MIN_ITERATIONS,
        salt: bytes | None = None,
    ) -> None:
        check_name("user", user)
        if isinstance(password, Secret):
            secret = password
            check_name("password", secret.get_secret_value())
        else:
            # check_name's messages give the type, never the value.
            secret = Secret(check_name("password", password))
        check_count("iterations", iterations, MIN_ITERATIONS)
        if iterations > MAX_ITERATIONS:
            raise ValueError(f"iterations must be <= {MAX_ITERATIONS}, got {iterations}")
        if salt is None:
            salt = os.urandom(32)
        if not isinstance(salt, bytes) or not salt:
            raise ValueError("salt must be non-empty bytes")
        object.__setattr__(self, "user", user)
        object.__setattr__(self, "mechanism", _mechanism(mechanism))
        object.__setattr__(self, "password", secret)
        object.__setattr__(self, "iterations", iterations)
        object.__setattr__(self, "salt", salt)

    def salted_password(self) -> bytes:
        """The salted password sent to the broker."""
        return salted_password(self.mechanism, self.password, self.salt, self.iterations)


@dataclass(frozen=True, init=False)
class UserScramCredentialDeletion:
    """Delete ``user``'s credential for ``mechanism`` (a ``ScramMechanism`` or its
    SASL name)."""

    user: str
    mechanism: ScramMechanism

    def __init__(self, user: str, mechanism: ScramMechanism | str | int) -> None:
        object.__setattr__(self, "user", check_name("user", user))
        object.__setattr__(self, "mechanism", _mechanism(mechanism))
