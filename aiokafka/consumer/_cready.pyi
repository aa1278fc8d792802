# Stub of the optional C extension (_cready.c); see AIOKafkaConsumer.__anext__.
from collections.abc import Awaitable
from typing import TypeVar

_T = TypeVar("_T")

def ready(value: _T, /) -> Awaitable[_T]: ...
