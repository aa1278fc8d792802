"""Byte mutations of valid encodings, driven by one ``random.Random`` (deterministic).

The mutations aim at what breaks decoders: flipped bits, inserted and deleted bytes,
length fields set to huge or negative values (int16, int32 and varint widths),
truncation anywhere, and splices of two valid encodings of the same type.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

__all__ = ["MUTATORS", "Seed", "mutate"]

_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")

# Values a corrupted length field takes: maxima, sign bits, -1 (null) and -2.
_HUGE_INT32 = (0x7FFFFFFF, -0x80000000, -1, -2, 0x10000000, 0x00FFFFFF, 0x7FFFFFF0)
_HUGE_INT16 = (0x7FFF, -0x8000, -1, -2, 0x4000)
_HUGE_VARINTS = (
    bytes.fromhex("ffffffff07"),  # 2**31-1
    bytes.fromhex("8080808008"),  # 2**31
    bytes.fromhex("ffffffff0f"),  # 2**32-1
    bytes.fromhex("feffffff0f"),  # zigzag: 2**31-1
    bytes.fromhex("ffffffffffffffffff01"),  # 2**64-1, too long for 32 bits
    bytes.fromhex("01"),  # zigzag -1 (null)
    bytes.fromhex("03"),  # zigzag -2
    bytes.fromhex("7f"),  # zigzag -64 / unsigned 127
    b"\x80" * 12,  # never-ending varint
)
_SPECIAL_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)


@dataclass(frozen=True)
class Seed:
    """One valid encoding and the positions in it that look like length fields."""

    data: bytes

    @cached_property
    def int32_lengths(self) -> tuple[int, ...]:
        """Offsets of int32 values that fit in the bytes after them (likely lengths)."""
        data = self.data
        return tuple(
            pos
            for pos in range(len(data) - 3)
            if 0 <= _INT32.unpack_from(data, pos)[0] <= len(data) - pos - 4
        )

    @cached_property
    def int16_lengths(self) -> tuple[int, ...]:
        """Offsets of int16 values that fit in the bytes after them."""
        data = self.data
        return tuple(
            pos
            for pos in range(len(data) - 1)
            if 0 <= _INT16.unpack_from(data, pos)[0] <= len(data) - pos - 2
        )


Mutator = Callable[[bytearray, random.Random, Seed, Sequence[Seed]], bytearray]


def _pos(data: bytearray, rnd: random.Random) -> int:
    return rnd.randrange(len(data) + 1)


def bit_flips(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    if data:
        for _ in range(rnd.choice((1, 1, 2, 3, 4))):
            bit = rnd.randrange(len(data) * 8)
            data[bit // 8] ^= 1 << (bit % 8)
    return data


def overwrite(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    if data:
        for _ in range(rnd.choice((1, 1, 2))):
            pos = rnd.randrange(len(data))
            data[pos] = rnd.choice(_SPECIAL_BYTES) if rnd.random() < 0.7 else rnd.randrange(256)
    return data


def insert(data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]) -> bytearray:
    pos = _pos(data, rnd)
    data[pos:pos] = rnd.randbytes(rnd.choice((1, 1, 2, 4, 8)))
    return data


def delete(data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]) -> bytearray:
    if data:
        pos = rnd.randrange(len(data))
        del data[pos : pos + rnd.choice((1, 1, 2, 4, 8))]
    return data


def duplicate(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    if data:
        start = rnd.randrange(len(data))
        chunk = data[start : start + rnd.randint(1, 32)]
        pos = _pos(data, rnd)
        data[pos:pos] = chunk
    return data


def int32_length(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    # Prefer the seed's plausible length fields while the data still lines up with it.
    candidates = seed.int32_lengths if data == seed.data else ()
    if candidates and rnd.random() < 0.8:
        pos = rnd.choice(candidates)
    elif len(data) >= 4:
        pos = rnd.randrange(len(data) - 3)
    else:
        return data
    old = _INT32.unpack_from(data, pos)[0]
    new = rnd.choice((*_HUGE_INT32, old + 1, old - 1, old * 2 + 7))
    data[pos : pos + 4] = _INT32.pack(max(-(2**31), min(2**31 - 1, new)))
    return data


def int16_length(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    candidates = seed.int16_lengths if data == seed.data else ()
    if candidates and rnd.random() < 0.8:
        pos = rnd.choice(candidates)
    elif len(data) >= 2:
        pos = rnd.randrange(len(data) - 1)
    else:
        return data
    data[pos : pos + 2] = _INT16.pack(rnd.choice(_HUGE_INT16))
    return data


def varint_length(
    data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]
) -> bytearray:
    if data:
        pos = rnd.randrange(len(data))
        # Replace one byte (a one-byte varint, the common case) or insert before it.
        width = 1 if rnd.random() < 0.7 else 0
        data[pos : pos + width] = rnd.choice(_HUGE_VARINTS)
    return data


def truncate(data: bytearray, rnd: random.Random, seed: Seed, _others: Sequence[Seed]) -> bytearray:
    if data:
        del data[rnd.randrange(len(data)) :]
    return data


def splice(data: bytearray, rnd: random.Random, seed: Seed, others: Sequence[Seed]) -> bytearray:
    other = rnd.choice(others).data
    head = rnd.randrange(len(data) + 1)
    tail = rnd.randrange(len(other) + 1)
    return data[:head] + bytearray(other[tail:])


MUTATORS: tuple[tuple[str, Mutator, int], ...] = (
    # name, function, weight
    ("bitflip", bit_flips, 5),
    ("overwrite", overwrite, 3),
    ("insert", insert, 2),
    ("delete", delete, 2),
    ("duplicate", duplicate, 1),
    ("int32", int32_length, 3),
    ("int16", int16_length, 1),
    ("varint", varint_length, 3),
    ("truncate", truncate, 2),
    ("splice", splice, 1),
)
_FUNCS = [fn for _, fn, weight in MUTATORS for _ in range(weight)]


def mutate(seed: Seed, others: Sequence[Seed], rnd: random.Random) -> bytes:
    """One to three stacked mutations of ``seed`` (``others``: splice partners).

    One input in fifty is random bytes instead, of about the seed's size.
    """
    if rnd.random() < 0.02:
        return rnd.randbytes(rnd.randint(0, max(8, 2 * len(seed.data))))
    data = bytearray(seed.data)
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        data = rnd.choice(_FUNCS)(data, rnd, seed, others)
    return bytes(data)
