"""How large a response frame from a broker may be, and the error when it is not.

Every response starts with an ``int32`` length. A connection must check it before it
reads the body: a peer that is not a Kafka broker (an HTTP server's ``"HTTP"`` reads as
1,213,486,160) or a broken one (``2,000,000,000`` followed by a stream of bytes) would
otherwise make the reader buffer gigabytes, once per retry.

The limit follows librdkafka's ``receive.message.max.bytes``: a fixed default
(:data:`DEFAULT_MAX_RESPONSE_SIZE`, the ``max_response_size`` option) that is raised
for a connection, never lowered, by the requests that legitimately ask for more: a
Fetch request's own ``max_bytes`` (the consumer's ``fetch_max_bytes``) plus headroom
(:func:`response_allowance`). So a consumer configured with a large
``fetch_max_bytes`` never needs to know about this option.

No asyncio here.
"""

from __future__ import annotations

from typing import Any

from aiokafka.errors import KafkaProtocolError

__all__ = [
    "DEFAULT_MAX_RESPONSE_SIZE",
    "MAX_RESPONSE_SIZE_RANGE",
    "MIN_FRAME_SIZE",
    "frame_size_error",
    "response_allowance",
]

#: Default of ``max_response_size``: 100 MiB, about librdkafka's
#: ``receive.message.max.bytes`` (100,000,000). Twice the consumer's default
#: ``fetch_max_bytes`` (50 MiB); far above any other response a client reads.
DEFAULT_MAX_RESPONSE_SIZE = 100 * 1024 * 1024

#: Bounds of ``max_response_size``. Below 1 MiB a Metadata answer for a large
#: cluster would not fit; frame sizes are int32 on the wire.
MAX_RESPONSE_SIZE_RANGE = (1024 * 1024, 2**31 - 1)

# Room for what a Fetch response carries besides record data (topic and partition
# headers, aborted-transaction lists, KIP-74's first batch over the limit).
_FETCH_HEADROOM = 1024 * 1024

# Fetch's API key, compared by number: naming FetchRequest would load the generated
# Fetch module (large, loaded on first use) in every producer and admin client.
_FETCH_API_KEY = 1

#: The smallest frame: a v0 response header (the correlation id).
MIN_FRAME_SIZE = 4


def response_allowance(request: Any, version: int) -> int:
    """The largest response ``request`` (sent at ``version``) may legitimately get,
    beyond which the connection's default limit must be raised; 0 for requests
    whose responses the default always covers.

    Only Fetch has a caller-chosen response size: ``max_bytes`` from v3 (KIP-74),
    the sum of the partitions' ``partition_max_bytes`` before (v0-v2 have no fetch
    sessions, so every partition is listed).
    """
    if getattr(request, "API_KEY", None) != _FETCH_API_KEY:
        return 0
    if version >= 3:
        wanted = int(request.max_bytes)
    else:
        wanted = sum(int(p.partition_max_bytes) for t in request.topics for p in t.partitions)
    # An eighth more for the per-partition overhead of responses with many partitions.
    allowance = wanted + wanted // 8 + _FETCH_HEADROOM
    return min(allowance, MAX_RESPONSE_SIZE_RANGE[1])


def frame_size_error(size: int, limit: int, peer: str, prefix: bytes) -> KafkaProtocolError:
    """The error for a response length prefix ``size`` outside ``[4, limit]``.

    Args:
        size: The length the peer announced (signed int32).
        limit: The connection's limit at the time.
        peer: ``"host:port (node id)"``.
        prefix: The four bytes read, shown when they are text (a peer speaking
            another protocol).

    Returns:
        A retriable :class:`~aiokafka.errors.KafkaProtocolError` naming the broker, the
        size and the limit, and asking whether the peer is a Kafka broker.
    """
    text = ""
    if all(32 <= b < 127 for b in prefix):
        text = f" (the bytes read as text: {prefix.decode('ascii')!r})"
    hint = f"; is {peer} a Kafka broker, on the port of a Kafka listener?"
    if size < MIN_FRAME_SIZE:
        return KafkaProtocolError(
            f"invalid response frame size {size} from {peer}: a response is at least "
            f"{MIN_FRAME_SIZE} bytes{text}{hint}"
        )
    return KafkaProtocolError(
        f"response frame of {size} bytes from {peer} exceeds the limit of {limit} bytes "
        f"(max_response_size){text}{hint}"
    )
