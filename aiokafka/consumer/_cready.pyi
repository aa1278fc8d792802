# Stub of the optional C extension (_cready.c): the C half of `async for`.
from collections.abc import Awaitable
from typing import Any, TypeVar

_T = TypeVar("_T")

def ready(value: _T, /) -> Awaitable[_T]: ...

class RecordCursor:
    _recs: list[Any]
    _recs_idx: int
    _within_end: int
    state: Any
    def take_fast(self) -> Any: ...

class Anext:
    def __init__(self, consumer: Any, buffer: Any, subscriptions: Any) -> None: ...
    def __aiter__(self) -> Anext: ...
    def __anext__(self) -> Awaitable[Any]: ...
