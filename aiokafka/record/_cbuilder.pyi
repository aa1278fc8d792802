# Stub of the optional C extension (_cbuilder.c); see default_builder.add(),
# DefaultRecordBatchBuilder.add_values() and DefaultRecordBatchBuilder.appender().

from collections.abc import Callable
from typing import Any

def append_record(
    buffer: bytearray,
    limit: int,
    offset: int,
    timestamp_delta: int,
    key: object,
    value: object,
    headers: object,
    /,
) -> bool: ...
def append_values(
    buffer: bytearray,
    limit: int,
    offset: int,
    timestamp_delta: int,
    values: list[Any],
    start: int,
    /,
) -> int: ...
def bind_builder(
    builder_class: type,
    metadata_class: type[tuple[int, int, int]],
    python_append_next: Callable[..., object],
    /,
) -> Any: ...
def bind_batch(batch_class: type, python_append: Callable[..., object], /) -> Any: ...
def bind_adder(python_add: Callable[..., object], /) -> Any: ...
