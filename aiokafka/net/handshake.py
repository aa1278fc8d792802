"""The ApiVersions exchange a connection starts with (KIP-35, KIP-511).

The connection sends ApiVersions at its highest version; a broker that does not know
that version answers UNSUPPORTED_VERSION in v0, normally with the ApiVersions range it
does support, and the exchange goes again at the version that range allows
(:func:`~aiokafka.net.versions.api_versions_fallback`). The result is the
connection's :class:`~aiokafka.net.versions.ApiVersionTable`.

The requests go through the connection's own send (``answered``): this module only
decides what to ask and how to read the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiokafka import __version__
from aiokafka.errors import UnsupportedVersionError, for_code
from aiokafka.net.frames import MIN_FRAME_SIZE
from aiokafka.net.versions import ApiVersionTable, api_versions_fallback
from aiokafka.protocol import api as _api
from aiokafka.protocol import messages as _messages

__all__ = ["negotiate_versions"]

log = logging.getLogger("aiokafka.net.connection")

_HEADER_V0_LEN = MIN_FRAME_SIZE
_Decode = Callable[[memoryview], _messages.ApiVersionsResponse]
#: ``answered(request, version, decode)``: send ``request`` at ``version``, return
#: its response read with ``decode``.
Answered = Callable[
    [_messages.ApiVersionsRequest, int, _Decode], Awaitable[_messages.ApiVersionsResponse]
]


async def negotiate_versions(answered: Answered, peer: str) -> ApiVersionTable:
    """Ask ``peer`` which versions of each API it supports.

    Raises:
        aiokafka.errors.UnsupportedVersionError: the broker rejected every
            ApiVersions version tried.
        aiokafka.errors.KafkaError: the broker answered with another error code.
    """
    request_type = _messages.ApiVersionsRequest
    unsupported = UnsupportedVersionError.errno
    version: int = request_type.MAX_VERSION
    tried: set[int] = set()
    while True:
        tried.add(version)
        if version >= 3:
            # KIP-511: lets brokers report client software in their metrics.
            request = request_type(
                client_software_name="aiokafka", client_software_version=__version__
            )
        else:
            request = request_type()
        response = await answered(request, version, _decoder(version))
        if response.error_code == unsupported:
            # The broker answered in v0, normally with its ApiVersions range.
            advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            fallback = api_versions_fallback(version, advertised.get(request_type.API_KEY))
            if fallback in tried or fallback < 0:
                raise UnsupportedVersionError(
                    f"{peer} rejected every ApiVersions version tried ({sorted(tried)})"
                )
            log.debug("%s: ApiVersions v%d unsupported, retrying v%d", peer, version, fallback)
            version = fallback
            continue
        if response.error_code:
            raise for_code(response.error_code)(f"ApiVersions to {peer} failed")
        table = ApiVersionTable.from_response(response.api_keys, response.finalized_features)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "Negotiated API versions with %s (ApiVersions v%d): %s",
                peer,
                version,
                table.summary(_messages.REQUEST_TYPES.values()),
            )
        return table


def _decoder(version: int) -> _Decode:
    response_type = _messages.ApiVersionsResponse
    unsupported = UnsupportedVersionError.errno

    def decode(frame: memoryview) -> _messages.ApiVersionsResponse:
        # The error code is the first body field in every version, right after the
        # v0 response header; an UNSUPPORTED_VERSION answer is encoded as v0.
        code = int.from_bytes(frame[_HEADER_V0_LEN : _HEADER_V0_LEN + 2], "big", signed=True)
        used = 0 if code == unsupported else version
        return _api.decode_response(response_type, used, frame)

    return decode
