"""Delegation tokens (KIP-48): create, renew, expire and describe them.

A token is a short-lived credential a trusted process (a Spark driver, a job
scheduler) gets for the workers it starts, so they authenticate over SCRAM without the
owner's password or keytab: pass :meth:`DelegationToken.credentials` to any client.
Brokers accept token requests only over authenticated channels that did not
themselves authenticate with a token.

The controller applies a new token from the metadata log a moment after
``create_delegation_token`` returns (measured: up to about 0.2 s on one node); until
then renewing or expiring it answers ``DelegationTokenNotFound`` and logging in with
it fails, as with Kafka's Java client. Nothing here retries that, so a token that
really is unknown is reported at once.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka.admin._base import AdminBase, check
from aiokafka.net.secret import Secret
from aiokafka.protocol._gen import create_delegation_token as _cdt
from aiokafka.protocol._gen import describe_delegation_token as _ddt
from aiokafka.protocol._gen import expire_delegation_token as _edt
from aiokafka.protocol._gen import renew_delegation_token as _rdt

__all__ = ["DelegationToken"]

_SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def _principal(arg: str, value: object) -> tuple[str, str]:
    """``"User:alice"`` as its type and name."""
    if not isinstance(value, str):
        raise TypeError(f"{arg} must be a principal str like 'User:alice', got {value!r}")
    kind, sep, name = value.partition(":")
    if not sep or not kind or not name:
        raise ValueError(f"{arg} must be a principal like 'User:alice', got {value!r}")
    return kind, name


def _principals(arg: str, values: object) -> list[tuple[str, str]]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{arg} must be a list of principals like ['User:alice']")
    return [_principal(arg, v) for v in values]


@dataclass(frozen=True)
class DelegationToken:
    """A delegation token: its id, its HMAC (the secret) and what the brokers know of it.

    Attributes:
        hmac: The token's HMAC, base64-encoded (the SCRAM password), kept in a
            :class:`~aiokafka.net.secret.Secret` so it never reaches ``repr`` or logs.
        owner: The principal the token acts for, e.g. ``"User:alice"``.
        requester: The principal that created it.
        renewers: Principals that may renew it (the owner always may).
        expiry_timestamp_ms: When it expires unless renewed (ms since the epoch).
        max_timestamp_ms: The end of its life, renewals included.
    """

    token_id: str
    hmac: Secret
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp_ms: int
    expiry_timestamp_ms: int
    max_timestamp_ms: int

    def hmac_bytes(self) -> bytes:
        """The HMAC itself, as renew and expire requests carry it."""
        return base64.b64decode(self.hmac.get_secret_value())

    def credentials(self, sasl_mechanism: str = "SCRAM-SHA-256") -> dict[str, Any]:
        """Client options that authenticate with this token, e.g.
        ``AIOKafkaProducer(bootstrap_servers=..., security_protocol="SASL_SSL",
        **token.credentials())``.

        Raises:
            ValueError: ``sasl_mechanism`` is not a SCRAM mechanism (tokens use SCRAM).
        """
        if sasl_mechanism not in _SCRAM:
            raise ValueError(f"sasl_mechanism must be one of {_SCRAM}, got {sasl_mechanism!r}")
        return {
            "sasl_mechanism": sasl_mechanism,
            "sasl_plain_username": self.token_id,
            "sasl_plain_password": self.hmac,
            "sasl_scram_token_auth": True,
        }


def _hmac_of(token: DelegationToken | bytes) -> bytes:
    if isinstance(token, DelegationToken):
        return token.hmac_bytes()
    if isinstance(token, (bytes, bytearray)):
        return bytes(token)
    raise TypeError(
        f"token must be a DelegationToken or its HMAC bytes, got {type(token).__name__}"
    )


def _period(arg: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{arg} must be an int (ms; -1 for the broker's default)")
    return value


class TokensMixin(AdminBase):
    """Delegation token calls of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def create_delegation_token(
        self,
        renewers: Sequence[str] = (),
        *,
        owner: str | None = None,
        max_lifetime_ms: int = -1,
    ) -> DelegationToken:
        """Create a delegation token for the caller (or for ``owner``).

        Args:
            renewers: Principals that may renew it, e.g. ``["User:scheduler"]``.
            owner: The principal it acts for (CreateDelegationToken v3+); default
                the caller. Creating one for another principal needs the CREATE_TOKENS
                ACL on that user.
            max_lifetime_ms: Its longest life; -1 (or more than the broker's
                ``delegation.token.max.lifetime.ms``) for the broker's maximum.

        Raises:
            aiokafka.errors.DelegationTokenRequestNotAllowed: the connection is not
                authenticated, or authenticated with a token itself.
            aiokafka.errors.DelegationTokenAuthDisabled: the brokers have no
                ``delegation.token.secret.key``.
        """
        # No owner: the fields keep their empty defaults, which every version reads
        # as "the caller" (and which versions before 3, without them, can encode).
        request = _cdt.CreateDelegationTokenRequest(
            renewers=[
                _cdt.CreatableRenewers(principal_type=kind, principal_name=name)
                for kind, name in _principals("renewers", renewers)
            ],
            max_lifetime_ms=_period("max_lifetime_ms", max_lifetime_ms),
        )
        if owner is not None:
            request.owner_principal_type, request.owner_principal_name = _principal("owner", owner)
        response = await self._send_any(request)
        check(response.error_code, None, "create a delegation token")
        times = (
            response.issue_timestamp_ms,
            response.expiry_timestamp_ms,
            response.max_timestamp_ms,
        )
        return _token(response, request.renewers, times)

    async def renew_delegation_token(
        self, token: DelegationToken | bytes, renew_period_ms: int = -1
    ) -> int:
        """Push a token's expiry out by ``renew_period_ms`` (-1: the broker's
        ``delegation.token.expiry.time.ms``), never past its maximum; returns the new
        expiry (ms since the epoch).

        Raises:
            aiokafka.errors.DelegationTokenOwnerMismatch: the caller is neither its
                owner nor a renewer.
            aiokafka.errors.DelegationTokenExpired: it has expired already.
            aiokafka.errors.DelegationTokenNotFound: no such token.
        """
        request = _rdt.RenewDelegationTokenRequest(
            hmac=_hmac_of(token), renew_period_ms=_period("renew_period_ms", renew_period_ms)
        )
        response = await self._send_any(request)
        check(response.error_code, None, "renew a delegation token")
        expiry: int = response.expiry_timestamp_ms
        return expiry

    async def expire_delegation_token(
        self, token: DelegationToken | bytes, expiry_time_period_ms: int = -1
    ) -> int:
        """Make a token expire ``expiry_time_period_ms`` from now; a negative period
        (the default) expires it at once, and clients can no longer authenticate
        with it. Returns the new expiry (ms since the epoch).

        Raises:
            aiokafka.errors.DelegationTokenOwnerMismatch: the caller is neither its
                owner nor a renewer.
            aiokafka.errors.DelegationTokenNotFound: no such token.
        """
        request = _edt.ExpireDelegationTokenRequest(
            hmac=_hmac_of(token),
            expiry_time_period_ms=_period("expiry_time_period_ms", expiry_time_period_ms),
        )
        response = await self._send_any(request)
        check(response.error_code, None, "expire a delegation token")
        expiry: int = response.expiry_timestamp_ms
        return expiry

    async def describe_delegation_token(
        self, owners: Sequence[str] | None = None
    ) -> list[DelegationToken]:
        """The tokens of these owners (default: every token the caller may describe:
        its own, those it may renew, those it has DESCRIBE on)."""
        request = _ddt.DescribeDelegationTokenRequest(
            owners=None
            if owners is None
            else [
                _ddt.DescribeDelegationTokenOwner(principal_type=kind, principal_name=name)
                for kind, name in _principals("owners", owners)
            ]
        )
        response = await self._send_any(request)
        check(response.error_code, None, "describe delegation tokens")
        return [
            _token(t, t.renewers, (t.issue_timestamp, t.expiry_timestamp, t.max_timestamp))
            for t in response.tokens
        ]


def _token(answer: Any, renewers: Sequence[Any], times: tuple[int, int, int]) -> DelegationToken:
    """A token from a CreateDelegationToken response or a described token: both name
    the id, HMAC, owner and requester alike (their timestamps do not)."""
    owner = f"{answer.principal_type}:{answer.principal_name}"
    # v3+ names the requester; before, the requester is the owner.
    kind = answer.token_requester_principal_type
    name = answer.token_requester_principal_name
    return DelegationToken(
        answer.token_id,
        Secret(base64.b64encode(answer.hmac).decode("ascii")),
        owner,
        f"{kind}:{name}" if kind and name else owner,
        tuple(f"{r.principal_type}:{r.principal_name}" for r in renewers),
        *times,
    )
