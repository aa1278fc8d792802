"""Framing helpers: request/response headers around the generated message bodies.

A request frame on the wire is ``int32 size`` + header + body; the size prefix belongs
to the connection layer, so these helpers produce and consume everything after it.

Header versions (Kafka's ``RequestHeader.json``/``ResponseHeader.json``):

* request header v1 (api_key, api_version, correlation_id, nullable client_id) for
  non-flexible request versions, v2 (v1 + tagged fields) for flexible ones; v0 (no
  client_id) only for ControlledShutdown v0, which this client never sends;
* response header v0 (correlation_id) for non-flexible response versions, v1 (+ tagged
  fields) for flexible ones, except ApiVersions responses, which always use v0 so that
  a client can read the broker's answer before it knows which versions the broker speaks.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from aiokafka.protocol import messages as _messages
from aiokafka.protocol.messages import REQUEST_TYPES
from aiokafka.protocol.primitives import (
    Buffer,
    as_view,
    malformed,
    read_tagged_fields,
)

__all__ = [
    "RequestCodec",
    "RequestMessage",
    "decode_response",
    "encode_request",
    "read_correlation_id",
    "request_header_parts",
    "request_header_version",
    "response_decoder",
    "response_header_version",
]

if TYPE_CHECKING:
    from aiokafka.protocol.request import Request

_CONTROLLED_SHUTDOWN = 7
# ApiVersionsRequest.API_KEY, as a literal: importing the generated module here would
# load it with every ``import aiokafka`` (messages load on first use).
_API_VERSIONS = 18
_INT32 = struct.Struct(">i")


class RequestMessage(Protocol):
    """What :func:`encode_request` needs of a request: every generated request class."""

    API_KEY: ClassVar[int]
    FLEXIBLE_MIN: ClassVar[int | None]

    def encode(self, version: int) -> bytes: ...


class _Response(Protocol):
    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> Any: ...


_R = TypeVar("_R")


def _flexible_min(api_key: int) -> int | None:
    try:
        request_type = REQUEST_TYPES[api_key]
    except KeyError:
        raise ValueError(f"api_key: unknown API key {api_key}") from None
    flexible_min: int | None = request_type.FLEXIBLE_MIN
    return flexible_min


def request_header_version(api_key: int, api_version: int) -> int:
    """Return the request header version (0, 1 or 2) for ``api_key`` at ``api_version``.

    Raises:
        ValueError: ``api_key`` is not an API this client knows.
    """
    if api_key == _CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    flexible_min = _flexible_min(api_key)
    return 2 if flexible_min is not None and api_version >= flexible_min else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """Return the response header version (0 or 1) for ``api_key`` at ``api_version``.

    Raises:
        ValueError: ``api_key`` is not an API this client knows.
    """
    if api_key == _API_VERSIONS:
        return 0
    flexible_min = _flexible_min(api_key)
    return 1 if flexible_min is not None and api_version >= flexible_min else 0


def encode_request(
    request: RequestMessage, api_version: int, correlation_id: int, client_id: str | None
) -> bytes:
    """Encode header + body of ``request`` at ``api_version`` (no size prefix).

    Raises:
        aiokafka.errors.UnsupportedVersionError: the request cannot be expressed at
            ``api_version`` (out of range, or a non-ignorable field set that the version
            lacks).
        ValueError: a value does not fit its wire type (e.g. an int32 out of range).
    """
    body = request.encode(api_version)
    header_version = request_header_version(request.API_KEY, api_version)
    header = _messages.RequestHeader(
        request_api_key=request.API_KEY,
        request_api_version=api_version,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    return header.encode(header_version) + body


def request_header_parts(
    api_key: int, api_version: int, client_id: str | None
) -> tuple[bytes, bytes]:
    """The request header of ``api_key`` at ``api_version`` from ``client_id`` as the
    bytes before and after its correlation id (which every header version has at
    offset 4): a connection encodes each kind of header once, then joins the parts
    around each request's id (see :func:`encode_request`)."""
    header = _messages.RequestHeader(
        request_api_key=api_key,
        request_api_version=api_version,
        correlation_id=0,
        client_id=client_id,
    ).encode(request_header_version(api_key, api_version))
    return header[:4], header[8:]


def read_correlation_id(frame: Buffer) -> int:
    """Return the correlation id: the first 4 bytes of every response frame.

    Raises:
        aiokafka.errors.KafkaProtocolError: the frame is shorter than 4 bytes.
    """
    if len(frame) < 4:
        raise malformed(f"response frame of {len(frame)} bytes has no correlation id")
    (correlation_id,) = _INT32.unpack_from(frame, 0)
    return int(correlation_id)


def response_decoder(response_type: type[_R], api_version: int) -> Callable[[Buffer], _R]:
    """:func:`decode_response` for one response type and version, with what depends
    only on them (the header version, the type's ``decode``) looked up once: what a
    connection keeps per kind of request. A frame whose header has no tagged fields
    (Kafka defines none) skips their parsing."""
    api_key: int = getattr(response_type, "API_KEY")  # noqa: B009 - duck-typed generated class
    tagged_header = response_header_version(api_key, api_version) == 1
    decode: Callable[[memoryview, int], _R] = response_type.decode  # type: ignore[attr-defined]

    def decoder(frame: Buffer) -> _R:
        view = as_view(frame)
        size = len(view)
        if size < 4:
            raise malformed(f"response frame of {size} bytes has no correlation id")
        pos = 4
        if tagged_header:
            if size > 4 and view[4] == 0:
                pos = 5  # an empty tagged-field section
            else:
                _, pos = read_tagged_fields(view, pos)
        return decode(view[pos:], api_version)

    return decoder


def decode_response(response_type: type[_R], api_version: int, frame: Buffer) -> _R:
    """Parse a response frame (header + body, no size prefix) into ``response_type``.

    The header's tagged fields (response header v1) are skipped: Kafka defines none.

    Raises:
        aiokafka.errors.KafkaProtocolError: the frame is malformed or has trailing bytes.
        aiokafka.errors.UnsupportedVersionError: ``api_version`` is not a version of
            ``response_type``.
    """
    view = as_view(frame)
    if len(view) < 4:
        raise malformed(f"response frame of {len(view)} bytes has no correlation id")
    api_key: int = getattr(response_type, "API_KEY")  # noqa: B009 - duck-typed generated class
    pos = 4
    if response_header_version(api_key, api_version) == 1:
        _, pos = read_tagged_fields(view, pos)
    decoder: _Response = response_type  # type: ignore[assignment]
    result: _R = decoder.decode(view[pos:], api_version)
    return result


class RequestCodec:
    """A connection's request frames and response decoders. What depends only on the
    kind of request (its header bytes around the correlation id, its response's
    decoder) is made once per (kind, version), not per request.

    Args:
        client_id: The ``client_id`` of every request header.
    """

    __slots__ = ("_client_id", "_decoders", "_headers")

    def __init__(self, client_id: str | None) -> None:
        self._client_id = client_id
        # Request headers by (API key, version): the bytes around the correlation id.
        self._headers: dict[tuple[int, int], tuple[bytes, bytes]] = {}
        # Response decoders by (request class, version).
        self._decoders: dict[tuple[type[Any], int], Callable[[memoryview], Any]] = {}

    def frame(self, request: RequestMessage, version: int, corr: int) -> bytes:
        """``request`` at ``version`` with correlation id ``corr``, size prefix included."""
        body = request.encode(version)
        key = (request.API_KEY, version)
        header = self._headers.get(key)
        if header is None:
            header = self._headers[key] = request_header_parts(
                request.API_KEY, version, self._client_id
            )
        head, tail = header
        size = len(head) + 4 + len(tail) + len(body)
        return b"".join(
            (size.to_bytes(4, "big"), head, corr.to_bytes(4, "big", signed=True), tail, body)
        )

    def decoder(self, request: Request[_R], version: int) -> Callable[[memoryview], _R]:
        """The decoder of the response to ``request`` at ``version``."""
        key = (type(request), version)
        decode = self._decoders.get(key)
        if decode is None:
            response_type: type[_R] = type(request).RESPONSE_TYPE
            decode = self._decoders[key] = response_decoder(response_type, version)
        return decode
