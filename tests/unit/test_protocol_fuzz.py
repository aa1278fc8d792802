"""Fuzzing of the protocol decoders with truncated, bit-flipped and random input.

Decoders read bytes sent by brokers (and, for the consumer-protocol data messages, by
other group members), so every input must end in a decoded object or a KafkaError —
never another exception, never a hang, never a huge allocation driven by a length field.

Seeds and versions come from ``_fuzz_inputs``; mutations use seeded ``random.Random``
and Hypothesis with ``derandomize=True``, so a failure reproduces on every run.
"""

from __future__ import annotations

import contextlib
import random
import resource
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka.errors import KafkaProtocolError
from aiokafka.protocol import api, messages

from ._fuzz_inputs import (
    DATA_MESSAGES,
    HOT_REQUESTS,
    check_decode,
    check_malformed,
    fuzz_types,
    fuzz_versions,
    seeds,
)
from ._golden_spec import build_ours, random_value, to_tree

TYPES = fuzz_types()
TYPE_IDS = [cls.__name__ for cls in TYPES]

BIT_FLIPS_PER_SEED = 150
RANDOM_INPUTS_PER_VERSION = 100


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_seeds_are_valid(cls: Any) -> None:
    """The starting points decode back to what was encoded (else the fuzzing is moot)."""
    for version in fuzz_versions(cls):
        for data in seeds(cls, version):
            assert cls.decode(data, version).encode(version) == data


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_random_values_round_trip(cls: Any) -> None:
    """Values (not only bytes) survive encode + decode: catches a field the encoder
    drops and the decoder silently fills with its default."""
    rnd = random.Random(f"values/{cls.__name__}")
    for version in fuzz_versions(cls):
        for _ in range(3):
            obj = build_ours(cls, random_value(cls.__name__, version, rnd))
            assert to_tree(cls.decode(obj.encode(version), version)) == to_tree(obj)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_every_truncation_is_malformed(cls: Any) -> None:
    for version in fuzz_versions(cls):
        for data in seeds(cls, version):
            for end in range(len(data)):
                check_malformed(cls, data[:end], version)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_trailing_garbage_is_malformed(cls: Any) -> None:
    if cls.__name__ in DATA_MESSAGES:
        # By design these accept trailing bytes: a member on a newer version appends
        # fields an older reader must skip (Kafka's ConsumerProtocol does the same).
        assert cls.decode(seeds(cls, 0)[0] + b"\x00", 0) == cls.decode(seeds(cls, 0)[0], 0)
        return
    for version in fuzz_versions(cls):
        for data in seeds(cls, version):
            check_malformed(cls, data + b"\x00", version)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_bit_flips(cls: Any) -> None:
    rnd = random.Random(f"flip/{cls.__name__}")
    for version in fuzz_versions(cls):
        for data in seeds(cls, version):
            if not data:
                continue
            for _ in range(BIT_FLIPS_PER_SEED):
                mutated = bytearray(data)
                for _ in range(rnd.choice((1, 1, 2, 3))):
                    bit = rnd.randrange(len(mutated) * 8)
                    mutated[bit // 8] ^= 1 << (bit % 8)
                check_decode(cls, bytes(mutated), version)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_byte_overwrites(cls: Any) -> None:
    """Bytes set to the values that matter for lengths: -1, 0, sign bit, varint flag."""
    rnd = random.Random(f"overwrite/{cls.__name__}")
    special = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
    for version in fuzz_versions(cls):
        for data in seeds(cls, version):
            for pos in range(len(data)):
                mutated = bytearray(data)
                mutated[pos] = rnd.choice(special)
                check_decode(cls, bytes(mutated), version)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cls", TYPES, ids=TYPE_IDS)
def test_random_bytes(cls: Any) -> None:
    rnd = random.Random(f"random/{cls.__name__}")
    for version in fuzz_versions(cls):
        for _ in range(RANDOM_INPUTS_PER_VERSION):
            check_decode(cls, rnd.randbytes(rnd.randint(0, 64)), version)


# ---------------------------------------------------------------------------
# Huge length fields with tiny buffers
# ---------------------------------------------------------------------------

# Length prefixes of every width the protocol uses, at or near their maxima.
HUGE_LENGTHS = (
    bytes.fromhex("7fffffff"),  # int32 array/bytes length 2**31-1
    bytes.fromhex("7fff"),  # int16 string length 32767
    bytes.fromhex("ffffffff07"),  # unsigned varint 2**31-1 (compact length 2**31-2)
    bytes.fromhex("8080808008"),  # unsigned varint 2**31
    bytes.fromhex("ffffffff0f"),  # unsigned varint 2**32-1
    bytes.fromhex("ffffffffffffffffff01"),  # unsigned varint 2**64-1 (too long for 32 bits)
)
MAX_SECONDS_PER_DECODE = 0.5
MAX_GROWTH_BYTES = 100 * 1024 * 1024


def _huge_length_inputs(data: bytes) -> list[bytes]:
    """``data`` with each huge length written at each position, full and cut short."""
    out = []
    for pattern in HUGE_LENGTHS:
        for pos in range(len(data) + 1):
            mutated = data[:pos] + pattern + data[pos + len(pattern) :]
            out.append(mutated)
            out.append(mutated[: pos + len(pattern) + 3])
    return out


def _vm_size_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@contextlib.contextmanager
def _address_space_headroom(extra: int) -> Iterator[None]:
    """Cap the process's address space at its current size + ``extra`` while inside.

    Unlike RSS, the address space also counts calloc'ed buffers the kernel has not
    backed yet, so ``bytearray(2**31)`` fails here with MemoryError, which
    ``check_decode`` reports as a non-Kafka error.
    """
    vm = _vm_size_bytes()
    if vm is None:
        pytest.skip("needs /proc/self/status to size the address-space limit")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_address_space_guard_catches_big_allocations() -> None:
    """The guard used below really stops a 2 GiB allocation (so it is not vacuous)."""
    with _address_space_headroom(MAX_GROWTH_BYTES), pytest.raises(MemoryError):
        bytearray(2**31)


def _sweep(types: list[Any]) -> tuple[float, str]:
    """Decode every huge-length input of ``types``; return the slowest decode."""
    slowest = (0.0, "")
    for cls in types:
        versions = fuzz_versions(cls)
        for version in (versions[0], versions[-1]):
            for data in seeds(cls, version)[:2]:
                for mutated in _huge_length_inputs(data):
                    start = time.perf_counter()
                    check_decode(cls, mutated, version)
                    took = time.perf_counter() - start
                    if took > slowest[0]:
                        slowest = (took, f"{cls.__name__} v{version} {mutated.hex()}")
    return slowest


@pytest.mark.timeout(60)
def test_huge_lengths_fail_fast_within_address_space_cap() -> None:
    """Every type: huge lengths never allocate past 100 MB, never take 0.5 s."""
    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with _address_space_headroom(MAX_GROWTH_BYTES):
        slowest = _sweep(TYPES)
    assert slowest[0] < MAX_SECONDS_PER_DECODE, f"slow decode {slowest}"
    rss_after_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert (rss_after_kib - rss_before_kib) * 1024 < MAX_GROWTH_BYTES


@pytest.mark.timeout(60)
def test_huge_lengths_traced_allocations_of_hot_apis() -> None:
    """The hot APIs again under tracemalloc, which sees every Python allocation's size."""
    hot = [*HOT_RESPONSES, *(getattr(messages, n) for n in HOT_REQUESTS)]
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        _sweep(hot)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - base < MAX_GROWTH_BYTES, f"peak traced allocation {peak - base} bytes"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("cls", "version", "body"),
    [
        # MetadataResponse v0: brokers ARRAY with 2**31-1 elements announced, none sent.
        (messages.MetadataResponse, 0, bytes.fromhex("7fffffff")),
        # FetchResponse v4: throttle, then responses ARRAY of 2**31-1.
        (messages.FetchResponse, 4, bytes.fromhex("00000000 7fffffff")),
        # FetchResponse v4: one partition whose records BYTES claim 2**31-1 bytes.
        (
            messages.FetchResponse,
            4,
            bytes.fromhex(
                "00000000 00000001 0001 74 00000001"
                "00000000 0000 0000000000000000 0000000000000000 00000000"
                "7fffffff 00"
            ),
        ),
        # ApiVersionsResponse v3: api_keys COMPACT_ARRAY length varint 2**31-2.
        (messages.ApiVersionsResponse, 3, bytes.fromhex("0000 ffffffff07 00")),
        # JoinGroupResponse v0: member metadata BYTES of 2**31-1.
        (
            messages.JoinGroupResponse,
            0,
            bytes.fromhex("0000 00000001 0000 0000 0000 00000001 0001 6d 7fffffff"),
        ),
        # A tagged field claiming 2**31-1 bytes (HeartbeatResponse v4).
        (messages.HeartbeatResponse, 4, bytes.fromhex("00000000 0000 01 00 ffffffff07 00")),
    ],
    ids=["metadata-brokers", "fetch-topics", "fetch-records", "apiversions", "join", "tag"],
)
def test_known_huge_length_shapes(cls: Any, version: int, body: bytes) -> None:
    start = time.perf_counter()
    with pytest.raises(KafkaProtocolError):
        cls.decode(body, version)
    assert time.perf_counter() - start < MAX_SECONDS_PER_DECODE


# ---------------------------------------------------------------------------
# Hypothesis: random bytes and structured mutations of valid encodings
# ---------------------------------------------------------------------------

HOT_RESPONSES = [messages.RESPONSE_TYPES[key] for key in (0, 1, 2, 3, 8, 9, 10, 11, 12, 14, 18, 22)]
_TARGETS = [(cls, v) for cls in HOT_RESPONSES for v in fuzz_versions(cls)]
_HYPOTHESIS = settings(
    max_examples=2500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.timeout(60)
@_HYPOTHESIS
@given(target=st.sampled_from(_TARGETS), data=st.binary(max_size=256))
def test_hypothesis_random_bytes(target: tuple[Any, int], data: bytes) -> None:
    cls, version = target
    check_decode(cls, data, version)


@pytest.mark.timeout(60)
@_HYPOTHESIS
@given(
    target=st.sampled_from(_TARGETS),
    seed_index=st.integers(0, 3),
    edits=st.lists(
        st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.binary(min_size=1, max_size=5)),
        min_size=1,
        max_size=4,
    ),
)
def test_hypothesis_mutated_seeds(
    target: tuple[Any, int], seed_index: int, edits: list[tuple[int, int, bytes]]
) -> None:
    """Overwrite, insert or delete short runs inside a valid encoding."""
    cls, version = target
    data = bytearray(seeds(cls, version)[seed_index])
    for where, op, chunk in edits:
        pos = where % (len(data) + 1)
        if op == 0:
            data[pos : pos + len(chunk)] = chunk
        elif op == 1:
            data[pos:pos] = chunk
        elif op == 2:
            del data[pos : pos + len(chunk)]
        else:
            data = data[:pos]
    check_decode(cls, bytes(data), version)


# ---------------------------------------------------------------------------
# Framing helpers on hostile frames
# ---------------------------------------------------------------------------


@pytest.mark.timeout(60)
@_HYPOTHESIS
@given(target=st.sampled_from(_TARGETS), frame=st.binary(max_size=64))
def test_decode_response_random_frames(target: tuple[Any, int], frame: bytes) -> None:
    cls, version = target
    try:
        api.decode_response(cls, version, frame)
    except KafkaProtocolError:
        pass
    if len(frame) >= 4:
        assert api.read_correlation_id(frame) == int.from_bytes(frame[:4], "big", signed=True)
    else:
        with pytest.raises(KafkaProtocolError):
            api.read_correlation_id(frame)


# ---------------------------------------------------------------------------
# Hand-made malformed shapes
# ---------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_overlong_varint_is_rejected_fast() -> None:
    # 100k continuation bytes as the tag count: a varint is at most 5 bytes for 32 bits.
    body = bytes.fromhex("00000000 0000") + b"\x80" * 100_000 + b"\x00"
    start = time.perf_counter()
    with pytest.raises(KafkaProtocolError):
        messages.HeartbeatResponse.decode(body, 4)
    assert time.perf_counter() - start < MAX_SECONDS_PER_DECODE


@pytest.mark.parametrize(
    "tags",
    [
        "01 01 02 0000000000000005",  # int64 tag 1 declared 2 bytes long, 8 follow
        "01 01 0a 0000000000000005 0000",  # declared longer than the int64 inside
        "01 03 02 0100",  # bool tag 3 declared 2 bytes long
    ],
)
def test_known_tagged_field_with_wrong_size_is_malformed(tags: str) -> None:
    body = bytes.fromhex("0000 01 00000000" + tags)  # ApiVersionsResponse v3, no api keys
    with pytest.raises(KafkaProtocolError):
        messages.ApiVersionsResponse.decode(body, 3)


def test_unknown_tags_are_kept_and_written_back() -> None:
    body = bytes.fromhex("00000000 0000 02 05 02 abcd 09 00")  # tags 5 and 9, unknown
    resp = messages.HeartbeatResponse.decode(body, 4)
    assert resp.unknown_tagged_fields == {5: b"\xab\xcd", 9: b""}
    assert resp.encode(4) == body


@pytest.mark.parametrize(
    ("cls", "version", "body"),
    [
        # NULLABLE_STRING length -2 (only -1 means null).
        (messages.HeartbeatRequest, 3, "0001 67 00000001 0001 6d fffe"),
        # Nullable ARRAY length -2.
        (messages.MetadataRequest, 1, "fffffffe"),
        # Non-nullable STRING length -1 (HeartbeatResponse has none; JoinGroup leader).
        (messages.JoinGroupResponse, 0, "0000 00000001 0000 ffff 0000 00000000"),
        # Non-nullable COMPACT_STRING null (varint 0): FindCoordinator v4 coordinator key.
        (messages.FindCoordinatorResponse, 4, "00000000 02 00 00000001 01 00000000 0000 00 00 00"),
        # Invalid UTF-8 in a string.
        (messages.HeartbeatRequest, 0, "0002 c328 00000001 0001 6d"),
    ],
    ids=["string-len-2", "array-len-2", "null-string", "null-compact-string", "bad-utf8"],
)
def test_bad_lengths_and_text_are_malformed(cls: Any, version: int, body: str) -> None:
    with pytest.raises(KafkaProtocolError):
        cls.decode(bytes.fromhex(body), version)


# ---------------------------------------------------------------------------
# The long fuzzer (tools/fuzz, `make fuzz`), briefly, on every response type
# ---------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_short_fuzz_run_of_every_response_decoder() -> None:
    """10,000 inputs of `make fuzz`'s protocol half: only KafkaProtocolError, and every
    response type at every version is reached."""
    from tools.fuzz.runner import run_fuzz

    # In-process, with a generous time limit: the machine running the suite is loaded.
    report = run_fuzz(10_000, workers=0, seed=13, groups="protocol", limit_ms=1000.0)
    details = "\n".join(f"{f.kind} {f.target}: {f.error}\n{f.trace}" for f in report.failures)
    assert report.failure_count == 0, details
    assert report.inputs == 10_000
    assert {"KafkaProtocolError", "ok"} <= set(report.outcomes)
    reached = {name.split(" v")[0] for name in report.per_target}
    assert {cls.__name__ for cls in messages.RESPONSE_TYPES.values()} <= reached
