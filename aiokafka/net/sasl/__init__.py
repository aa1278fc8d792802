"""SASL mechanisms as sans-I/O state machines (no asyncio here).

:func:`mechanism_names` lists what is supported; the connection builds one
mechanism object per authentication and drives it with SaslAuthenticate frames.
The mechanism classes are imported on first use (PEP 562): a client that does not
authenticate with SASL never loads them (SCRAM alone pulls in ``hashlib``, ``hmac`` and
``secrets``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports

if TYPE_CHECKING:
    from aiokafka.net.sasl.base import SaslMechanism
    from aiokafka.net.sasl.gssapi import GssapiMechanism
    from aiokafka.net.sasl.oauth import OAuthBearerMechanism
    from aiokafka.net.sasl.plain import PlainMechanism
    from aiokafka.net.sasl.scram import (
        ScramMechanism,
        ScramSha256Mechanism,
        ScramSha512Mechanism,
    )

# Public name -> submodule that defines it.
_LAZY = {
    "SaslMechanism": "base",
    "GssapiMechanism": "gssapi",
    "OAuthBearerMechanism": "oauth",
    "PlainMechanism": "plain",
    "ScramMechanism": "scram",
    "ScramSha256Mechanism": "scram",
    "ScramSha512Mechanism": "scram",
}

__all__ = [
    "SUPPORTED_MECHANISMS",
    "GssapiMechanism",
    "OAuthBearerMechanism",
    "PlainMechanism",
    "SaslMechanism",
    "ScramMechanism",
    "ScramSha256Mechanism",
    "ScramSha512Mechanism",
]

#: Values accepted for ``sasl_mechanism``.
SUPPORTED_MECHANISMS: frozenset[str] = frozenset(
    {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI"}
)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
