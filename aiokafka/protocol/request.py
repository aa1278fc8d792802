"""The base class of every generated request: it names the request's response type.

``class FetchRequest(Request[FetchResponse])`` (generated) lets a type checker follow a
request to its response, so ``AIOKafkaConnection.send(request: Request[R]) -> R`` and
the cluster client's ``send`` methods are typed end to end and ``mypy --strict`` checks
every response field a caller reads (franz-go's ``kmsg.Request.ResponseKind``).

At run time the base adds nothing to an instance (empty ``__slots__``); the generated
class's ``RESPONSE_TYPE`` is the response class the connection decodes into.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["Request", "ResponseT_co"]

ResponseT_co = TypeVar("ResponseT_co", covariant=True)


class Request(Generic[ResponseT_co]):
    """Base of the generated request classes; the type argument is the response class.

    Attributes:
        API_KEY: Kafka's API key of the request.
        MIN_VERSION: Oldest version the generated class encodes.
        MAX_VERSION: Newest version the generated class encodes.
        FLEXIBLE_MIN: First flexible (tagged-field) version, ``None`` if none.
        RESPONSE_TYPE: The generated response class (``ResponseT_co`` at run time).
    """

    __slots__ = ()

    API_KEY: ClassVar[int]
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]
    FLEXIBLE_MIN: ClassVar[int | None]
    RESPONSE_TYPE: ClassVar[type[Any]]

    def encode(self, version: int) -> bytes:
        """Encode the body (no header) at ``version`` (each generated class has its own)."""
        raise NotImplementedError
