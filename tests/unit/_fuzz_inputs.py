"""Inputs for the codec fuzz tests: which message types and versions, and valid seeds.

Every seed is a valid encoding made by our own encoder, from a default-constructed object
and from objects populated with random values drawn straight from the JSON definitions
(``_golden_spec.random_value``), so the mutations start from realistic byte layouts with
lists, nested structs, nulls and tagged fields in them.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from aiokafka.errors import KafkaError, KafkaProtocolError
from aiokafka.protocol import messages

from ._golden_spec import build_ours, random_value

HOT_REQUESTS = (
    "ProduceRequest",
    "FetchRequest",
    "ListOffsetsRequest",
    "MetadataRequest",
    "OffsetCommitRequest",
    "OffsetFetchRequest",
    "FindCoordinatorRequest",
    "JoinGroupRequest",
    "SyncGroupRequest",
    "HeartbeatRequest",
    "ApiVersionsRequest",
    "InitProducerIdRequest",
)
# Carried inside JoinGroup/SyncGroup bytes fields, written by other group members.
DATA_MESSAGES = ("ConsumerProtocolSubscription", "ConsumerProtocolAssignment")


def fuzz_types() -> list[type]:
    """Every response type, the hot requests and the consumer-protocol data messages."""
    out: list[type] = sorted(messages.RESPONSE_TYPES.values(), key=lambda c: c.__name__)
    out += [getattr(messages, n) for n in HOT_REQUESTS + DATA_MESSAGES]
    return out


def fuzz_versions(cls: Any) -> list[int]:
    """Min, middle and max version, plus both sides of the flexible boundary."""
    lo, hi = cls.MIN_VERSION, cls.MAX_VERSION
    picks = {lo, (lo + hi) // 2, hi}
    flex = getattr(cls, "FLEXIBLE_MIN", None)
    if flex is not None:
        picks |= {flex - 1, flex}
    return sorted(v for v in picks if lo <= v <= hi)


@functools.cache
def seeds(cls: Any, version: int, populated: int = 3) -> tuple[bytes, ...]:
    """Valid encodings of ``cls`` at ``version``: a default object and random ones."""
    rnd = random.Random(f"{cls.__name__}/{version}")
    out = [cls().encode(version)]
    for _ in range(populated):
        value = random_value(cls.__name__, version, rnd)
        out.append(build_ours(cls, value).encode(version))
    return tuple(out)


def check_decode(cls: Any, data: bytes, version: int) -> Any:
    """Decode ``data``; only success or a KafkaError is acceptable.

    On success the value must also survive a round trip: re-encoding it works, and the
    re-encoded bytes decode and encode to themselves (values the decoder lets in must be
    values the encoder can write, or the decoder is too lenient).

    Returns the decoded object, or the KafkaError raised.
    """
    try:
        obj = cls.decode(data, version)
    except KafkaError as exc:
        return exc
    except Exception as exc:
        raise AssertionError(
            f"{cls.__name__}.decode(bytes.fromhex({data.hex()!r}), {version}) raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    try:
        again = obj.encode(version)
        assert cls.decode(again, version).encode(version) == again
    except Exception as exc:
        raise AssertionError(
            f"{cls.__name__} v{version}: decoding bytes.fromhex({data.hex()!r}) succeeded "
            f"but the result does not round-trip: {type(exc).__name__}: {exc}"
        ) from exc
    return obj


def check_malformed(cls: Any, data: bytes, version: int) -> None:
    """``data`` is certainly malformed: decoding must raise KafkaProtocolError."""
    result = check_decode(cls, data, version)
    assert isinstance(result, KafkaProtocolError), (
        f"{cls.__name__}.decode(bytes.fromhex({data.hex()!r}), {version}) gave {result!r}, "
        "expected KafkaProtocolError"
    )
