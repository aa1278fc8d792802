"""SASL GSSAPI (Kerberos V5, RFC 4752) through the optional ``gssapi`` package.

The package is imported only when a GSSAPI mechanism is built, so installations
without Kerberos never need it. The exchange has three phases:

1. context establishment: GSS tokens are passed back and forth until the security
   context is complete (the client sends an empty message if its last step
   produced no token);
2. security layer negotiation: the server sends a wrapped 4-byte message (a bit
   mask of the layers it offers and its maximum buffer size); the client answers,
   wrapped, choosing "no security layer" (Kafka protects the channel with TLS,
   not with SASL wrapping);
3. the server acknowledges with an empty message.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiokafka.errors import AuthenticationFailedError
from aiokafka.net.sasl.base import SaslMechanism

__all__ = ["GssContext", "GssapiMechanism", "create_gssapi_context"]

# RFC 4752 section 3.3: bit 1 = "no security layer".
_LAYER_NONE = 0x01


class _Wrapped(Protocol):
    message: bytes


class GssContext(Protocol):
    """The part of ``gssapi.SecurityContext`` the mechanism uses."""

    @property
    def complete(self) -> bool: ...

    def step(self, token: bytes | None = None) -> bytes | None: ...

    def wrap(self, message: bytes, encrypt: bool) -> Any: ...

    def unwrap(self, message: bytes) -> Any: ...


def create_gssapi_context(service_name: str, hostname: str) -> GssContext:
    """Create an initiating Kerberos security context for ``service_name@hostname``.

    Raises:
        ImportError: the ``gssapi`` package is missing; the message says how to
            install it.
    """
    try:
        import gssapi
    except ImportError as exc:
        raise ImportError(
            "sasl_mechanism='GSSAPI' needs the 'gssapi' package: pip install aiokafka[gssapi]"
        ) from exc
    target = gssapi.Name(f"{service_name}@{hostname}", name_type=gssapi.NameType.hostbased_service)
    context: GssContext = gssapi.SecurityContext(name=target, usage="initiate")
    return context


class GssapiMechanism(SaslMechanism):
    """GSSAPI/Kerberos client mechanism.

    Args:
        service_name: The broker's Kerberos service name (``sasl_kerberos_service_name``,
            usually ``"kafka"``).
        hostname: The broker's host name as known to the KDC
            (``sasl_kerberos_domain_name``, default the host connected to).
        context: An initiating GSS security context; built with
            :func:`create_gssapi_context` when omitted (tests inject a fake).
    """

    name = "GSSAPI"

    def __init__(
        self, service_name: str, hostname: str, *, context: GssContext | None = None
    ) -> None:
        super().__init__()
        self._ctx = (
            context if context is not None else create_gssapi_context(service_name, hostname)
        )
        self._target = f"{service_name}@{hostname}"
        self._phase = "context"

    def _step(self, token: bytes | None) -> bytes:
        try:
            out = self._ctx.step(token)
        except Exception as exc:  # gssapi raises its own GSSError tree
            # No ticket, no keytab, an unknown service principal, a KDC that cannot be
            # reached: Kerberos's own message says which, so it goes into the error.
            raise AuthenticationFailedError(
                f"GSSAPI: cannot authenticate to Kerberos service {self._target}: {exc}"
            ) from exc
        if self._ctx.complete:
            self._phase = "layer"
        return out or b""

    def _first_message(self) -> bytes:
        return self._step(None)

    def _next_message(self, challenge: bytes) -> bytes | None:
        if self._phase == "context":
            return self._step(challenge)
        if self._phase == "layer":
            return self._choose_layer(challenge)
        if challenge:
            raise AuthenticationFailedError("GSSAPI: unexpected server message after negotiation")
        self._complete = True
        return None

    def _choose_layer(self, challenge: bytes) -> bytes:
        try:
            offer: bytes = self._ctx.unwrap(challenge).message
        except Exception as exc:  # gssapi raises its own GSSError tree
            raise AuthenticationFailedError(
                f"GSSAPI: cannot unwrap the server's offer: {exc}"
            ) from exc
        if len(offer) != 4:
            raise AuthenticationFailedError(
                f"GSSAPI: security layer offer must be 4 bytes, got {len(offer)}"
            )
        if not offer[0] & _LAYER_NONE:
            raise AuthenticationFailedError(
                "GSSAPI: the server requires a SASL security layer, which Kafka clients do not use"
            )
        # Chosen layer "none", max buffer 0 (no wrapping follows), empty authzid: act as
        # the authenticated principal, as Kafka's Java client does.
        reply = bytes([_LAYER_NONE, 0, 0, 0])
        self._phase = "final"
        wrapped: bytes = self._ctx.wrap(reply, False).message
        return wrapped
