# Stub of the optional C extension (_cdecode.c); see consumer/record_decode.py.
from collections.abc import Callable
from typing import Any

def decode_records(
    data: bytes,
    count: int,
    base_offset: int,
    base_timestamp: int,
    append_time: int | None,
    topic: str | None,
    partition: int | None,
    timestamp_type: int | None,
    leader_epoch: int | None,
    record_type: type[Any] | None,
    untracked: bool,
    /,
) -> list[Any] | None: ...
def deserialize(
    records: list[Any],
    key_deserializer: Callable[[bytes], object] | None,
    value_deserializer: Callable[[bytes], object] | None,
    record_type: type[Any],
    /,
) -> bool: ...
def decode_batch(
    batch: bytes | bytearray | memoryview,
    crc32c: Callable[[memoryview], int] | None,
    record_type: type[Any] | None,
    topic: str | None,
    partition: int | None,
    untracked: bool,
    /,
) -> list[Any] | None: ...
