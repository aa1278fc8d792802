"""The interface every SASL mechanism implements.

Mechanisms are sans-I/O state machines: the connection feeds them the server's
bytes and sends what they return, framed in SaslAuthenticate requests (KIP-152).
Nothing here imports asyncio, so the exchanges can be tested bytes in, bytes out.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from aiokafka.errors import AuthenticationFailedError, IllegalStateError

__all__ = ["SaslMechanism"]


class SaslMechanism(abc.ABC):
    """One SASL authentication exchange, seen from the client.

    Usage by a transport::

        out = mech.initial_response()
        while True:
            challenge = send_and_receive(out)   # a SaslAuthenticate round trip
            out = mech.step(challenge)
            if out is None:
                break                           # mech.complete is True

    A mechanism object is good for exactly one exchange.
    """

    #: The mechanism name sent in SaslHandshake, e.g. ``"SCRAM-SHA-256"``.
    name: ClassVar[str]

    def __init__(self) -> None:
        self._complete = False
        self._started = False

    @property
    def complete(self) -> bool:
        """True once the server's last message was accepted."""
        return self._complete

    def initial_response(self) -> bytes:
        """Return the first client message (sent before any server challenge).

        Raises:
            aiokafka.errors.IllegalStateError: if called twice.
        """
        if self._started:
            raise IllegalStateError("SASL exchange already started")
        self._started = True
        return self._first_message()

    def step(self, challenge: bytes) -> bytes | None:
        """Feed the server's answer to the last client message.

        Args:
            challenge: The server's bytes (SaslAuthenticateResponse ``auth_bytes``).

        Returns:
            The next client message, or ``None`` when the exchange is complete.

        Raises:
            aiokafka.errors.AuthenticationFailedError: the server's answer is
                malformed, reports an error, or fails verification (e.g. a SCRAM
                server signature that does not match).
        """
        if not self._started:
            raise IllegalStateError("initial_response() must be called first")
        if self._complete:
            raise AuthenticationFailedError(
                f"{self.name}: unexpected server message after the exchange completed"
            )
        return self._next_message(bytes(challenge))

    @abc.abstractmethod
    def _first_message(self) -> bytes:
        """Build the first client message."""

    @abc.abstractmethod
    def _next_message(self, challenge: bytes) -> bytes | None:
        """Handle ``challenge``; set ``self._complete`` when done."""
