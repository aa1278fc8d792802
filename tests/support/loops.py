"""pytest-asyncio's loop-factory hook for running tests on uvloop's event loop.

A conftest that imports :func:`pytest_asyncio_loop_factories` runs the async tests
under it on uvloop: ``tests/uvloop/conftest.py`` always, ``tests/conftest.py`` when
``AIOKAFKA_TEST_LOOP=uvloop``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """The event loop every async test runs on: uvloop's."""
    import uvloop

    return {"uvloop": uvloop.new_event_loop}
