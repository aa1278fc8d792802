"""Every async test in this directory runs on uvloop's event loop."""

from tests.support.loops import pytest_asyncio_loop_factories  # noqa: F401
