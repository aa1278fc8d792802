"""SCRAM user credential operations (KIP-554; any broker, forwarded to the
controller)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, raise_first
from aiokafka.admin.results import ScramCredentialInfo
from aiokafka.admin.scram import (
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from aiokafka.protocol._gen import alter_user_scram_credentials as _aus
from aiokafka.protocol._gen import describe_user_scram_credentials as _dus

__all__ = ["UsersMixin"]


class UsersMixin(AdminBase):
    """SCRAM credential operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None
    ) -> dict[str, list[ScramCredentialInfo]]:
        """The SCRAM mechanisms and iteration counts of users (never the secrets).

        Args:
            users: User names, or ``None`` for every user with a credential.

        Raises:
            aiokafka.errors.ResourceNotFoundError: a named user has no credential
                (the exception names every such user).
        """
        names = None if users is None else list(dict.fromkeys(users))
        if names is not None and not all(isinstance(u, str) and u for u in names):
            raise ValueError("users must be non-empty str names")
        request = _dus.DescribeUserScramCredentialsRequest(
            users=None if names is None else [_dus.UserName(name=u) for u in names]
        )
        response = await self._send_any(request)
        check(response.error_code, response.error_message, "describe SCRAM credentials")
        out: dict[str, Any] = {}
        for r in response.results:
            out[r.user] = error_for(
                r.error_code, r.error_message, f"SCRAM credentials of {r.user!r}"
            ) or [
                ScramCredentialInfo(_mechanism(c.mechanism), c.iterations)
                for c in r.credential_infos
            ]
        raise_first(out)
        return out

    async def alter_user_scram_credentials(
        self,
        alterations: Sequence[UserScramCredentialUpsertion | UserScramCredentialDeletion],
    ) -> None:
        """Create, replace or delete SCRAM credentials.

        The password of an upsertion is salted and hashed locally; only the salted
        password is sent (still: use an encrypted listener).

        Raises:
            aiokafka.errors.ResourceNotFoundError: deleting a credential that does
                not exist.
            aiokafka.errors.UnacceptableCredentialError: e.g. an empty user name.
                Per user: the others still change; the exception names every failure.
        """
        items = list(alterations)
        upserts: list[_aus.ScramCredentialUpsertion] = []
        deletes: list[_aus.ScramCredentialDeletion] = []
        for a in items:
            if isinstance(a, UserScramCredentialUpsertion):
                upserts.append(
                    _aus.ScramCredentialUpsertion(
                        name=a.user,
                        mechanism=int(a.mechanism),
                        iterations=a.iterations,
                        salt=a.salt,
                        salted_password=a.salted_password(),
                    )
                )
            elif isinstance(a, UserScramCredentialDeletion):
                deletes.append(
                    _aus.ScramCredentialDeletion(name=a.user, mechanism=int(a.mechanism))
                )
            else:
                # The type only: a mistaken item (say a tuple) may hold a password.
                raise TypeError(
                    "alterations must be UserScramCredentialUpsertion or "
                    f"UserScramCredentialDeletion, got {type(a).__name__}"
                )
        request = _aus.AlterUserScramCredentialsRequest(deletions=deletes, upsertions=upserts)
        response = await self._send_any(request)
        raise_first(
            {
                r.user: error_for(
                    r.error_code, r.error_message, f"alter SCRAM credential of {r.user!r}"
                )
                for r in response.results
            }
        )


def _mechanism(code: int) -> ScramMechanism:
    try:
        return ScramMechanism(code)
    except ValueError:
        return ScramMechanism.UNKNOWN
