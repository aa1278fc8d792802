"""SASL mechanisms as sans-I/O state machines (no asyncio here).

:func:`mechanism_names` lists what is supported; the connection builds one
mechanism object per authentication and drives it with SaslAuthenticate frames.
"""

from __future__ import annotations

from aiokafka.net.sasl.base import SaslMechanism
from aiokafka.net.sasl.gssapi import GssapiMechanism
from aiokafka.net.sasl.oauth import OAuthBearerMechanism
from aiokafka.net.sasl.plain import PlainMechanism
from aiokafka.net.sasl.scram import ScramMechanism, ScramSha256Mechanism, ScramSha512Mechanism

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
