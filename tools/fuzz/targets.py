"""What is fuzzed: each decoder of wire bytes, its valid seeds and the errors it may raise.

Protocol targets are every response type of ``aiokafka.protocol.messages.RESPONSE_TYPES``
at every version, decoded from a whole response frame by
:func:`aiokafka.protocol.api.decode_response` (correlation id and, for flexible
versions, the header's tagged fields in front of the body). Their seeds come from
``tests/unit/_fuzz_inputs.py`` (a default object and objects filled with random values
drawn from the JSON definitions). A frame that decodes must also round-trip: what the
decoder lets in, the encoder must be able to write back.

Record targets are the v2 reader in every codec (record tuples and record objects),
the consumer's ``decode_batch`` fast path, legacy v0/v1 message sets in every codec
they support, ``MemoryRecords`` over several batches of mixed formats, and the
consumer's ``PartitionRecords`` over runs of uncompressed v2 batches (its header scan
and whole-batch decoding). Compressed
targets also carry their decompressed records section: a mutation of that section is
compressed again and the batch's lengths and checksum fixed, so the mutated records
reach the record decoder behind the codec.
"""

from __future__ import annotations

import importlib
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.consumer.fetch_records import PartitionRecords
from aiokafka.consumer.record_decode import decode_batch
from aiokafka.consumer.subscription import PartitionState
from aiokafka.errors import CorruptRecordError, KafkaProtocolError, UnsupportedCodecError
from aiokafka.protocol import api, messages
from aiokafka.record import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    CONTROL_ABORT,
    CONTROL_COMMIT,
    DefaultRecordBatch,
    DefaultRecordBatchBuilder,
    LegacyRecordBatch,
    LegacyRecordBatchBuilder,
    MemoryRecords,
    build_control_batch,
    codec_name,
)
from aiokafka.record.compression import compress, decompress
from aiokafka.record.util import calc_crc32, calc_crc32c
from aiokafka.structs import TopicPartition

from .mutate import Seed

__all__ = ["MAX_DECOMPRESSED", "Target", "build_targets"]

# Small enough that a decompression bomb is refused long before the 100 MB bound.
MAX_DECOMPRESSED = 4 << 20

_V2_HEADER = 61
_FUZZ_TP = TopicPartition("topic", 0)
_V2_CRC_START = 21
_LEGACY_VALUE_AFTER_HEADER = {0: 18, 1: 26}  # offset+size+crc+magic+attrs(+timestamp)


@dataclass(frozen=True)
class Target:
    """One decoder under test.

    Attributes:
        name: Unique, e.g. ``"FetchResponse v12"`` or ``"v2/zstd"``.
        group: What the summary counts by, e.g. ``"FetchResponse"`` or ``"records"``.
        seeds: Valid inputs the mutations start from.
        run: Decode one input; raises on malformed input. The flag says whether the
            input's checksums are known to be right (so the reader verifies them).
        allowed: The only exception types a malformed input may raise.
        inner: Decompressed records sections of the seeds, when mutating those and
            rebuilding the batch (``rebuild``) is meaningful.
        rebuild: ``(seed, records_section) -> batch`` with lengths and checksum fixed.
    """

    name: str
    group: str
    seeds: tuple[Seed, ...]
    run: Callable[[bytes, bool], object]
    allowed: tuple[type[BaseException], ...]
    inner: tuple[Seed, ...] = ()
    rebuild: Callable[[bytes, bytes], bytes] | None = field(default=None, repr=False)


# ------------------------------------------------------------------------------ protocol


def _fuzz_inputs() -> Any:
    # The test suite's seed builder, imported at run time: tools/ must not depend on
    # tests/ for type checking, only for seeds when run from the repository root.
    return importlib.import_module("tests.unit._fuzz_inputs")


def _response_header(cls: Any, version: int) -> bytes:
    correlation = struct.pack(">i", 0x1234)
    if api.response_header_version(cls.API_KEY, version) == 1:
        return correlation + b"\x00"  # no tagged fields
    return correlation


def _message_runner(cls: Any, version: int, framed: bool) -> Callable[[bytes, bool], object]:
    def run(data: bytes, _checked: bool) -> object:
        if framed:
            obj = api.decode_response(cls, version, data)
        else:
            obj = cls.decode(data, version)
        again = obj.encode(version)
        if cls.decode(again, version).encode(version) != again:
            raise AssertionError(f"{cls.__name__} v{version}: decoded value does not round-trip")
        return obj

    return run


def protocol_targets() -> list[Target]:
    """Every response type at every version it has, and the consumer-protocol data.

    ``ConsumerProtocolSubscription``/``Assignment`` travel inside JoinGroup and
    SyncGroup responses, written by other group members: bytes from the wire too.
    """
    inputs = _fuzz_inputs()
    out = []
    responses = sorted(messages.RESPONSE_TYPES.values(), key=lambda c: c.__name__)
    data_messages = [getattr(messages, name) for name in inputs.DATA_MESSAGES]
    for cls in [*responses, *data_messages]:
        framed = cls in responses
        for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
            header = _response_header(cls, version) if framed else b""
            seeds = tuple(Seed(header + body) for body in inputs.seeds(cls, version))
            out.append(
                Target(
                    name=f"{cls.__name__} v{version}",
                    group=cls.__name__,
                    seeds=seeds,
                    run=_message_runner(cls, version, framed),
                    allowed=(KafkaProtocolError,),
                )
            )
    return out


# ------------------------------------------------------------------------------- records

_CODECS = (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD)
_LEGACY_CODECS = (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4)


def _v2_batches(codec: int, rnd: random.Random) -> list[bytes]:
    out = []
    for variant in range(3):
        transactional = variant == 2
        builder = DefaultRecordBatchBuilder(
            compression_type=codec,
            producer_id=7 if variant else -1,
            producer_epoch=2 if variant else -1,
            base_sequence=10 if variant else -1,
            is_transactional=transactional,
        )
        for i in range(1 + variant * 4):
            headers = [("h", rnd.randbytes(3)), ("null", None)] if i % 2 else []
            key = None if i % 3 == 2 else rnd.randbytes(rnd.randrange(0, 12))
            value = None if i == 4 else rnd.randbytes(rnd.choice((0, 5, 70, 200)))
            builder.append(i, 1_700_000_000_000 + i * 250, key, value, headers)
        out.append(bytes(builder.build()))
    return out


def _legacy_sets(magic: int, codec: int, rnd: random.Random) -> list[bytes]:
    out = []
    for count in (1, 4):
        builder = LegacyRecordBatchBuilder(magic, codec)
        for i in range(count):
            key = None if i == 2 else b"key%d" % i
            builder.append(i, 1_700_000_000_000 + i, key, rnd.randbytes(rnd.choice((0, 9, 60))))
        out.append(bytes(builder.build()))
    return out


def _consume_v2(data: bytes, checked: bool) -> object:
    batch = DefaultRecordBatch(data, check_crc=checked, max_decompressed_size=MAX_DECOMPRESSED)
    tuples = batch.record_tuples()
    for record in batch:
        _ = (record.offset, record.timestamp, record.key, record.value, record.headers)
    return tuples


def _consume_fast(data: bytes, checked: bool) -> object:
    batch = DefaultRecordBatch(data, check_crc=checked, max_decompressed_size=MAX_DECOMPRESSED)
    return decode_batch(batch, "topic", 0)


def _consume_legacy(data: bytes, checked: bool) -> object:
    batch = LegacyRecordBatch(data, check_crc=checked, max_decompressed_size=MAX_DECOMPRESSED)
    tuples = batch.record_tuples()
    for record in batch:
        _ = (record.offset, record.timestamp, record.key, record.value, record.checksum)
    return tuples


def _consume_memory(data: bytes, checked: bool) -> object:
    count = 0
    records = MemoryRecords(data, check_crc=checked, max_decompressed_size=MAX_DECOMPRESSED)
    while records.has_next():
        batch = records.next_batch()
        if batch is None:
            break
        for record in batch:
            count += 1
            _ = (record.offset, record.timestamp, record.key, record.value, record.headers)
    return count


def _consume_partition(data: bytes, checked: bool) -> object:
    """The consumer's own path over a fetched blob: ``PartitionRecords`` (the header
    scan of all-v2 blobs, batches decoded from their bytes) taken to the end."""
    state = PartitionState()
    state.seek(0)
    chunk = PartitionRecords(_FUZZ_TP, state, 0, data, check_crcs=checked)
    count = 0
    while chunk.has_records:
        count += len(chunk.take(3))
    if chunk.error is not None:
        raise chunk.error
    return count


def _v2_records_section(batch: bytes) -> bytes:
    return DefaultRecordBatch(batch, max_decompressed_size=MAX_DECOMPRESSED).records_data()


def _v2_rebuild(seed: bytes, records: bytes) -> bytes:
    codec = seed[22] & 0x07  # low bits of the attributes' second byte
    body = records if codec == CODEC_NONE else compress(codec, records)
    out = bytearray(seed[:_V2_HEADER] + body)
    struct.pack_into(">i", out, 8, len(out) - 12)
    struct.pack_into(">I", out, 17, calc_crc32c(memoryview(out)[_V2_CRC_START:]))
    return bytes(out)


def _legacy_inner(wrapper: bytes) -> bytes:
    magic = wrapper[16]
    pos = _LEGACY_VALUE_AFTER_HEADER[magic] + 4  # skip the null key's length
    (length,) = struct.unpack_from(">i", wrapper, pos)
    codec = wrapper[17] & 0x07
    return decompress(codec, wrapper[pos + 4 : pos + 4 + length], legacy_lz4=magic == 0)


def _legacy_rebuild(seed: bytes, inner: bytes) -> bytes:
    magic, codec = seed[16], seed[17] & 0x07
    head = seed[16 : _LEGACY_VALUE_AFTER_HEADER[magic]]  # magic, attributes, timestamp
    value = compress(codec, inner)
    body = head + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return seed[:8] + struct.pack(">iI", len(body) + 4, calc_crc32(body)) + body


def record_targets() -> list[Target]:
    """v2 in every codec (plain and fast path), legacy v0/v1, mixed MemoryRecords."""
    rnd = random.Random("records")
    # UnsupportedCodecError: a corrupted attributes field naming codec id 5, 6 or 7 (every
    # codec library is installed for the run, so it means nothing else).
    typed = (CorruptRecordError, UnsupportedCodecError)
    out: list[Target] = []
    all_blobs: list[bytes] = []
    for codec in _CODECS:
        name = codec_name(codec)
        batches = _v2_batches(codec, rnd)
        if codec == CODEC_NONE:
            for control in (CONTROL_COMMIT, CONTROL_ABORT):
                batches.append(
                    bytes(
                        build_control_batch(
                            control,
                            producer_id=7,
                            producer_epoch=2,
                            coordinator_epoch=3,
                            timestamp=1_700_000_000_000,  # not "now": seeds must not vary
                        )
                    )
                )
        all_blobs += batches
        seeds = tuple(Seed(b) for b in batches)
        inner = tuple(Seed(_v2_records_section(b)) for b in batches)
        for prefix, run in (("v2", _consume_v2), ("fast", _consume_fast)):
            out.append(Target(f"{prefix}/{name}", "records", seeds, run, typed, inner, _v2_rebuild))
    for magic in (0, 1):
        for codec in _LEGACY_CODECS:
            sets = _legacy_sets(magic, codec, rnd)
            all_blobs += sets
            seeds = tuple(Seed(s) for s in sets)
            compressed = codec != CODEC_NONE
            out.append(
                Target(
                    f"legacy-v{magic}/{codec_name(codec)}",
                    "records",
                    seeds,
                    _consume_legacy,
                    typed,
                    tuple(Seed(_legacy_inner(s)) for s in sets) if compressed else (),
                    _legacy_rebuild if compressed else None,
                )
            )
    mixed = tuple(Seed(b"".join(rnd.sample(all_blobs, k=rnd.randint(2, 4)))) for _ in range(12))
    out.append(Target("memory/mixed", "records", mixed, _consume_memory, typed))
    # Uncompressed only: PartitionRecords decompresses up to the consumer's own cap
    # (256 MiB), past this harness's memory limit; compressed batches are fuzzed above
    # with a small cap, through the same DefaultRecordBatch the consumer falls back to.
    v2_only = [b for b in all_blobs if len(b) > 22 and b[16] == 2 and not b[22] & 0x07]
    runs = tuple(Seed(b"".join(rnd.sample(v2_only, k=rnd.randint(2, 5)))) for _ in range(12))
    out.append(Target("consumer/v2-runs", "records", runs, _consume_partition, typed))
    return out


def build_targets(groups: str = "all") -> list[Target]:
    """Targets of ``groups``: ``"all"``, ``"protocol"`` or ``"records"``."""
    if groups not in ("all", "protocol", "records"):
        raise ValueError(f"groups must be all, protocol or records, not {groups!r}")
    out: list[Target] = []
    if groups in ("all", "protocol"):
        out += protocol_targets()
    if groups in ("all", "records"):
        out += record_targets()
    return out
