# Stub of the optional C extension (_cbuilder.c); see default_builder.add().

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
