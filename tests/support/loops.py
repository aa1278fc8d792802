"""The event loops the async tests can run on, for pytest-asyncio's loop-factory hook.

- ``uvloop``: uvloop's loop, whose transports, handles and TLS layer are its own
  classes (web services commonly run on it). ``tests/uvloop/`` always runs on it.
- ``eager``: asyncio's loop with Python 3.12's ``asyncio.eager_task_factory``, which
  applications set for speed: a new task runs at once, up to its first suspension,
  inside ``create_task()``.

``AIOKAFKA_TEST_LOOP=uvloop`` or ``=eager`` runs every async test on that loop
(``tests/conftest.py``; ``make test-uvloop``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest

LoopFactory = Callable[[], asyncio.AbstractEventLoop]

LOOPS = ("asyncio", "uvloop", "eager")


def _eager_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    loop.set_task_factory(asyncio.eager_task_factory)  # type: ignore[attr-defined,unused-ignore]
    return loop


def loop_factories(name: str) -> dict[str, LoopFactory]:
    """The hook's answer for the loop called ``name`` (one of :data:`LOOPS`).

    Raises:
        RuntimeError: an unknown name, or ``eager`` before Python 3.12.
    """
    if name == "uvloop":
        import uvloop

        return {"uvloop": uvloop.new_event_loop}
    if name == "eager":
        if sys.version_info < (3, 12):
            raise RuntimeError("the eager task factory needs Python 3.12+")
        return {"eager": _eager_loop}
    if name == "asyncio":
        return {"asyncio": asyncio.new_event_loop}
    raise RuntimeError(f"the test loop must be one of {', '.join(LOOPS)}, not {name!r}")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, LoopFactory]:
    """The event loop every async test under the importing conftest runs on: uvloop's."""
    return loop_factories("uvloop")
