# Stub of the optional C extension (_cdecode.c); see consumer/record_decode.py.
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
